//! Whole-run throughput: `beyondswe grade` on 33 submissions at `--jobs` 1, 2 and 4, with the
//! prepared images already made (a warm-up run), then at 1 and 2 from a cold cache (every
//! prepared image removed first), to show where grading stops scaling on this machine and why.
//!
//! Run with `cargo bench --bench run` (needs the Docker engine; builds the images if missing),
//! or `cargo bench --bench run -- N` for N submissions.
//! The dataset is the bundled demo dataset's records copied under new ids (the copies share the
//! fixture images, and so their prepared images), with the demo predictions for each copy.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::unwrap_used)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The binary cargo built for this bench (`target/release/beyondswe` under `cargo bench`).
fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_beyondswe"))
}

fn read_jsonl(p: &Path) -> Vec<Value> {
    fs_err::read_to_string(p)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Copies of the demo dataset and predictions until there are `n` submissions (the last copy
/// cut short).
fn make_run(dir: &Path, n: usize) -> (PathBuf, PathBuf) {
    let records = read_jsonl(&root().join("fixtures/dataset/demo.jsonl"));
    let preds = read_jsonl(&root().join("fixtures/predictions/demo.jsonl"));
    let (mut data, mut out) = (String::new(), String::new());
    let mut copy = 0;
    while out.lines().count() < n {
        for (r, p) in records.iter().zip(&preds).take(n - out.lines().count()) {
            let mut r = r.clone();
            let mut p = p.clone();
            let id = format!("{}{copy}", r["instance_id"].as_str().unwrap());
            let id = if id.starts_with("minidoc") {
                format!("c{copy}{}", r["instance_id"].as_str().unwrap())
            } else {
                id
            };
            r["instance_id"] = id.clone().into();
            p["instance_id"] = id.into();
            if let Some(repo) = p["model_repo"].as_str() {
                p["model_repo"] = root()
                    .join("fixtures/predictions")
                    .join(repo)
                    .display()
                    .to_string()
                    .into();
            }
            data.push_str(&format!("{r}\n"));
            out.push_str(&format!("{p}\n"));
        }
        copy += 1;
    }
    let d = dir.join("data.jsonl");
    let p = dir.join("preds.jsonl");
    fs_err::write(&d, data).unwrap();
    fs_err::write(&p, out).unwrap();
    (d, p)
}

fn grade(data: &Path, preds: &Path, results: &Path, jobs: usize) -> f64 {
    let t = Instant::now();
    let out = Command::new(bin())
        .args([
            "grade",
            "--quiet",
            "--run-id",
            "bench",
            "--timeout",
            "120",
            "--jobs",
            &jobs.to_string(),
            "--dataset",
        ])
        .arg(data)
        .arg("--predictions")
        .arg(preds)
        .arg("--test-suites")
        .arg(root().join("fixtures/test_suites"))
        .arg("--results-dir")
        .arg(results)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    t.elapsed().as_secs_f64()
}

fn main() {
    let status = Command::new("bash")
        .arg(root().join("scripts/build-fixture-images.sh"))
        .env("BEYONDSWE_BIN", bin())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let dir = tempfile::tempdir().unwrap();
    // The number of submissions: the first number among the arguments (`-- N`), else 33.
    let wanted = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(33);
    let (data, preds) = make_run(dir.path(), wanted);
    let n = read_jsonl(&preds).len();
    eprintln!("warm-up: prepared images for {n} submissions…");
    grade(&data, &preds, &dir.path().join("warm"), 2);
    println!("## Whole-run throughput ({n} submissions, prepared images cached)\n");
    println!("| --jobs | wall s | submissions/min | s per submission | speed-up vs 1 |");
    println!("|---:|---:|---:|---:|---:|");
    let mut base = 0.0;
    for jobs in [1usize, 2, 4] {
        let wall = grade(&data, &preds, &dir.path().join(format!("j{jobs}")), jobs);
        if jobs == 1 {
            base = wall;
        }
        println!(
            "| {jobs} | {wall:.1} | {:.1} | {:.2} | {:.2}× |",
            n as f64 * 60.0 / wall,
            wall / n as f64,
            base / wall
        );
    }
    // From a cold cache: every prepared image removed first, so preparing overlaps with other
    // gradings' tests (one preparation per image, the others wait for it).
    println!("\n| cold, --jobs | wall s | submissions/min | speed-up vs 1 |");
    println!("|---:|---:|---:|---:|");
    let mut cold_base = 0.0;
    for jobs in [1usize, 2] {
        let pruned = Command::new(bin())
            .args(["image", "prune", "--max-prepared-gb", "0"])
            .output()
            .unwrap();
        assert!(pruned.status.success());
        let wall = grade(&data, &preds, &dir.path().join(format!("cold{jobs}")), jobs);
        if jobs == 1 {
            cold_base = wall;
        }
        println!(
            "| {jobs} | {wall:.1} | {:.1} | {:.2}× |",
            n as f64 * 60.0 / wall,
            cold_base / wall
        );
    }
    println!(
        "\nCores on this machine: {}",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    );
}
