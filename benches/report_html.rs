//! `report.html` for a generated 5,000-instance run: its size, and how long headless Chromium
//! takes to load and render it (the page's script included), against the browser's own floor
//! (a one-line page loaded the same way).
//!
//! Run with `cargo bench --bench report_html [-- INSTANCES]` (needs Chromium: `scripts/browser.sh`
//! installs it from the Debian packages). The run has the paper's family mix (200 CrossRepo, 72
//! DomainFix, 178 DepMigrate, 50 Doc2Repo per 500), about 12 test ids per issue instance with
//! names as long as real pytest ids, flags on one instance in ten, and errors on one in fifty.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::unwrap_used)]

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A deterministic stream of numbers (xorshift), so every run of the bench has the same data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn make_run(dir: &Path, n: usize) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut lines = String::new();
    for i in 0..n {
        let family = match i % 500 {
            0..200 => "CrossRepo",
            200..272 => "DomainFix",
            272..450 => "DepMigrate",
            _ => "Doc2Repo",
        };
        let id = format!("owner{}_project-{}_pr{}", i % 246, i % 97, 1000 + i);
        let error = rng.below(50) == 0;
        let mut f2p = serde_json::Map::new();
        let mut p2p = serde_json::Map::new();
        let mut suite = Value::Null;
        let (verdict, reason, score) = if family == "Doc2Repo" {
            let total = 40 + rng.below(80);
            let passed = rng.below(total + 1);
            let tests: serde_json::Map<String, Value> = (0..total)
                .map(|t| {
                    (
                        format!("tests/test_module_{}.py::test_behaviour_{t}", t % 7),
                        Value::from(if t < passed { "passed" } else { "failed" }),
                    )
                })
                .collect();
            suite = json!({"passed": passed, "collected": total, "expected": total,
                           "all_passed": passed == total, "tests": tests});
            let s = passed as f64 / total as f64;
            if passed == total {
                ("resolved", "all_tests_passed", s)
            } else {
                ("unresolved", "tests_failed", s)
            }
        } else if error {
            ("error", "sandbox_failed", 0.0)
        } else {
            let resolved = rng.below(2) == 0;
            for t in 0..(4 + rng.below(4)) {
                f2p.insert(
                    format!(
                        "tests/unit/test_feature_{}.py::TestBehaviour::test_case_{t}[param-{}]",
                        i % 13,
                        t * 3
                    ),
                    Value::from(if resolved || t > 0 {
                        "passed"
                    } else {
                        "failed"
                    }),
                );
            }
            for t in 0..(4 + rng.below(8)) {
                p2p.insert(
                    format!(
                        "tests/integration/test_existing_{}.py::test_regression_{t}",
                        i % 11
                    ),
                    Value::from("passed"),
                );
            }
            if resolved {
                ("resolved", "all_tests_passed", 1.0)
            } else {
                ("unresolved", "tests_failed", 0.0)
            }
        };
        let flags = if rng.below(10) == 0 {
            json!({"tests_restored": ["tests/conftest.py"], "files_removed": ["sitecustomize.py"]})
        } else {
            json!({"applied_with": "git apply"})
        };
        let mut v = json!({
            "key": format!("{:016x}", rng.next()), "attempt": 1, "model_name_or_path": "bench-agent",
            "instance_id": id, "family": family, "verdict": verdict, "score": score, "reason": reason,
            "fail_to_pass": f2p, "pass_to_pass": p2p, "flags": flags,
            "timings": {"start": 0.09, "prepare": 0.01, "apply": 0.1, "tests": 1.2, "collect": 0.04,
                        "remove": 0.05, "total": 1.7},
            "logs": {}
        });
        if !suite.is_null() {
            v["suite"] = suite;
        }
        lines.push_str(&format!("{v}\n"));
        if error {
            let d = dir.join("instances").join(&id);
            fs_err::create_dir_all(&d).unwrap();
            fs_err::write(
                d.join("error.log"),
                "engine: container start failed: no space left on device\n",
            )
            .unwrap();
        }
    }
    fs_err::create_dir_all(dir.join("instances")).unwrap();
    fs_err::write(dir.join("results.jsonl"), lines).unwrap();
    fs_err::write(
        dir.join("run.json"),
        json!({"run_id": "bench-5000", "grader_version": "beyondswe bench", "dataset": "bench.jsonl",
               "dataset_hash": "0", "predictions": "bench", "predictions_hash": "0",
               "created_at": "2025-01-01T00:00:00Z"})
        .to_string(),
    )
    .unwrap();
}

/// Loads a page with `--dump-dom`; (seconds, DOM, console messages).
fn load(browser: &str, page: &Path) -> (f64, String, Vec<String>) {
    let profile = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    assert!(out.status.success());
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect();
    (
        secs,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        console,
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(5000);
    let browser = Command::new("bash")
        .arg(root().join("scripts/browser.sh"))
        .output()
        .unwrap();
    assert!(browser.status.success(), "scripts/browser.sh failed");
    let browser = String::from_utf8(browser.stdout).unwrap().trim().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    make_run(&run, n);
    let bin = env!("CARGO_BIN_EXE_beyondswe");
    let t = Instant::now();
    let out = Command::new(bin)
        .args(["report", "--format", "html"])
        .arg(&run)
        .output()
        .unwrap();
    let render_secs = t.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = dir.path().join("report.html");
    fs_err::write(&page, &out.stdout).unwrap();
    let floor_page = dir.path().join("floor.html");
    fs_err::write(
        &floor_page,
        "<!DOCTYPE html><html><body><p>1</p></body></html>",
    )
    .unwrap();
    // One warm-up load of each, then 3 timed loads.
    load(&browser, &floor_page);
    let (_, dom, console) = load(&browser, &page);
    assert!(console.is_empty(), "console: {console:?}");
    assert!(
        dom.contains(&format!("{n} of {n} shown")),
        "the page's script did not finish"
    );
    let floor = median((0..3).map(|_| load(&browser, &floor_page).0).collect());
    let full = median((0..3).map(|_| load(&browser, &page).0).collect());
    let mb = out.stdout.len() as f64 / (1024.0 * 1024.0);
    println!(
        "| instances | report.html MB | report --format html s | browser load s | floor s | render (load − floor) s |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {n} | {mb:.2} | {render_secs:.2} | {full:.2} | {floor:.2} | {:.2} |",
        full - floor
    );
}
