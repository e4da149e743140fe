//! Calibration wall time against N separate gold runs: `beyondswe calibrate --repeat N` on the
//! demo dataset, and N runs of `beyondswe grade --gold` (each into a new results directory, so
//! nothing resumes), after one warm-up gold run that makes the prepared images both reuse.
//!
//! Run with `cargo bench --bench calibrate [-- N [JOBS]]` (default N = 5, JOBS = 2; needs the
//! Docker engine; builds the fixture images if missing). Calibration also grades the empty patch
//! once per instance with its tests run, which N gold runs do not: the table gives that share.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(cmd: &mut Command) -> f64 {
    let t = Instant::now();
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    t.elapsed().as_secs_f64()
}

fn base(sub: &str, results: &Path, jobs: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_beyondswe"));
    c.args([
        sub,
        "--quiet",
        "--jobs",
        jobs,
        "--timeout",
        "300",
        "--dataset",
    ])
    .arg(root().join("fixtures/dataset/demo.jsonl"))
    .arg("--test-suites")
    .arg(root().join("fixtures/test_suites"))
    .arg("--results-dir")
    .arg(results);
    c
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(5);
    let jobs = args.get(1).cloned().unwrap_or_else(|| "2".into());
    let images = Command::new("bash")
        .arg(root().join("scripts/build-fixture-images.sh"))
        .env("BEYONDSWE_BIN", env!("CARGO_BIN_EXE_beyondswe"))
        .output()
        .unwrap();
    assert!(images.status.success(), "fixture images");
    let dir = tempfile::tempdir().unwrap();
    eprintln!("warm-up: one gold run (makes the prepared images)");
    run(base("grade", &dir.path().join("warm"), &jobs).args(["--gold", "--run-id", "w"]));
    let mut gold = Vec::new();
    for i in 0..n {
        eprintln!("gold run {}/{n}", i + 1);
        gold.push(run(base("grade", &dir.path().join(format!("g{i}")), &jobs)
            .args(["--gold", "--run-id", "g"])));
    }
    eprintln!("calibrate --repeat {n}");
    let cal = run(base("calibrate", &dir.path().join("cal"), &jobs)
        .args(["--repeat", &n.to_string(), "-o"])
        .arg(dir.path().join("calibration.json")));
    let gold_total: f64 = gold.iter().sum();
    let empty_share = {
        // The empty gradings' own time, from their verdicts.
        let text =
            fs_err::read_to_string(dir.path().join("cal/calibration/empty/results.jsonl")).unwrap();
        text.lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["timings"]["total"]
                    .as_f64()
                    .unwrap_or(0.0)
            })
            .sum::<f64>()
    };
    println!(
        "| N | jobs | one gold run s (median) | N × gold runs s | calibrate s | ratio | empty gradings' summed time s |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let mut sorted = gold.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "| {n} | {jobs} | {:.1} | {gold_total:.1} | {cal:.1} | {:.2}× | {empty_share:.1} |",
        sorted[sorted.len() / 2],
        cal / gold_total
    );
}
