//! Harbor itself is the judge: its own task loader (`harbor.models.task.task.Task`), at 0.1.45
//! (the version BeyondSWE-harbor was made for) and at the latest release, loads every task
//! directory we generate and reads back the image, timeouts and resources we wrote.
//!
//! The loader environments come from `scripts/harbor-venv.sh` (CPython 3.11 with Harbor installed
//! without its dependency set; see the script). The tests are `#[ignore]`d (a plain `cargo test`
//! leaves them out); run, they fail without access to the package index.

use super::support::{fixtures, repo_root};
use beyondswe::convert::{self, ToHarborOptions};
use beyondswe::record::RecordReader;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn harbor_python(version: &str) -> PathBuf {
    let out = Command::new("bash")
        .arg(repo_root().join("scripts/harbor-venv.sh"))
        .arg(version)
        .output()
        .expect("bash runs");
    if !out.status.success() {
        let msg = format!(
            "scripts/harbor-venv.sh {version} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        panic!("this test needs Harbor's loader: {msg}");
    }
    let stdout = String::from_utf8(out.stdout).unwrap();
    PathBuf::from(stdout.lines().last().unwrap().trim())
}

fn convert_all(out: &Path) -> usize {
    let mut n = 0;
    for name in ["fixtures.jsonl", "variants.jsonl"] {
        let path = fixtures().join("dataset").join(name);
        if !path.is_file() {
            continue;
        }
        for item in RecordReader::open(&path).unwrap() {
            let (_, record) = item.unwrap();
            let opts = ToHarborOptions {
                test_suites: Some(fixtures().join("test_suites")),
                ..ToHarborOptions::default()
            };
            convert::write_task(&record, out, &opts).unwrap();
            n += 1;
        }
    }
    n
}

fn load_with(version: &str) {
    let python = harbor_python(version);
    let dir = tempfile::tempdir().unwrap();
    let n = convert_all(dir.path());
    let out = Command::new(&python)
        .arg(repo_root().join("scripts/harbor_load_tasks.py"))
        .arg("--require-valid")
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "Harbor {version} rejected a task:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), n);
    for row in &rows {
        let dir_name = row["dir"].as_str().unwrap();
        let task = convert::read_task(&dir.path().join(dir_name))
            .unwrap()
            .record;
        assert_eq!(row["ok"], true, "{row}");
        assert_eq!(row["valid"], true, "{row}");
        // Named so that Harbor 0.1.x can tag the image it builds after it (lower case); current
        // Harbor names it by its package, `[task] name`: the organisation, then that name.
        let dir_name = beyondswe::harbor::task_dir_name(task.instance_id());
        let expected = if version == "0.1.45" {
            dir_name
        } else {
            format!("{}/{dir_name}", convert::DEFAULT_ORG)
        };
        assert_eq!(row["name"].as_str(), Some(expected.as_str()));
        // No prebuilt image by default: Harbor builds environment/ and its history strip.
        assert!(row["docker_image"].is_null(), "{row}");
        assert_eq!(row["verifier_timeout_sec"], 3600.0);
        assert_eq!(row["agent_timeout_sec"], 14400.0);
        assert_eq!(row["build_timeout_sec"], 1800.0);
        assert_eq!(row["cpus"], 2);
        assert_eq!(row["memory_mb"], 8192);
        assert_eq!(row["storage_mb"], 20480);
        assert_eq!(
            row["metadata"]["instance_id"].as_str(),
            Some(task.instance_id())
        );
        assert_eq!(
            row["metadata"]["family"].as_str(),
            Some(task.family().as_str())
        );
        assert!(
            row["instruction_len"].as_u64().unwrap() > 0
                || task.problem_statement().is_none_or(str::is_empty)
        );
    }
}

#[test]
#[ignore = "needs Harbor's own loader (scripts/test.sh runs it)"]
fn harbor_0_1_45_loads_every_generated_task() {
    load_with("0.1.45");
}

#[test]
#[ignore = "needs Harbor's own loader (scripts/test.sh runs it)"]
fn latest_harbor_loads_every_generated_task() {
    load_with("latest");
}

/// Our ATIF validator agrees with Harbor's own (`harbor.utils.trajectory_validator`, newest
/// release) on every valid, invalid and leniently-accepted sample.
#[test]
#[ignore = "needs Harbor's own loader (scripts/test.sh runs it)"]
fn atif_validation_agrees_with_harbors_validator() {
    let python = harbor_python("latest");
    let samples = fixtures().join("atif");
    let theirs = Command::new(&python)
        .arg(repo_root().join("scripts/harbor_validate_trajectories.py"))
        .arg(&samples)
        .output()
        .unwrap();
    let ours = assert_cmd::cargo::cargo_bin_cmd!("beyondswe")
        .args(["trajectory", "validate", "--json"])
        .arg(&samples)
        .output()
        .unwrap();
    let parse = |bytes: &[u8]| -> std::collections::BTreeMap<String, bool> {
        String::from_utf8_lossy(bytes)
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                let file = v["file"].as_str().unwrap();
                let rel = file.split("fixtures/atif/").last().unwrap().to_owned();
                (rel, v["ok"].as_bool().unwrap())
            })
            .collect()
    };
    let (theirs, ours) = (parse(&theirs.stdout), parse(&ours.stdout));
    assert!(theirs.len() >= 40, "{theirs:?}");
    assert_eq!(ours, theirs);
    assert!(
        theirs
            .iter()
            .any(|(f, ok)| f.starts_with("invalid/") && !ok)
    );
    assert!(
        theirs
            .iter()
            .filter(|(f, _)| f.starts_with("valid/"))
            .all(|(_, ok)| *ok)
    );
}

/// Harbor job → release → Harbor job keeps every file, and Harbor's own models (TrialResult,
/// JobResult, Trajectory, the config models where they import) load the rebuilt job.
#[test]
#[ignore = "needs Harbor's own loader (scripts/test.sh runs it)"]
fn release_round_trip_is_loaded_by_harbors_models() {
    let job = fixtures().join("agents/harbor-job");
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("release.jsonl");
    assert_cmd::cargo::cargo_bin_cmd!("beyondswe")
        .args(["release", "from-harbor"])
        .arg(&job)
        .arg("-o")
        .arg(&release)
        .arg("--dataset")
        .arg(fixtures().join("dataset/fixtures.jsonl"))
        .assert()
        .success();
    let lines: Vec<Value> = std::fs::read_to_string(&release)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    let first = lines
        .iter()
        .find(|l| l["trial_name"] == "acme_calc_pr7__a8Kp2Qz")
        .unwrap();
    assert_eq!(first["family"], "CrossRepo");
    assert_eq!(first["reward"], 1.0);
    assert_eq!(first["model"], "anthropic/claude-x");
    assert_eq!(first["n_input_tokens"], 120000);
    assert!(first["trajectory"]["steps"].is_array() && first["patch"].is_string());
    assert!(
        lines.iter().any(|l| l.get("patch_base64").is_some()),
        "the non-UTF-8 patch"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["exception"]["exception_type"] == "AgentTimeoutError")
    );

    let rebuilt = dir.path().join("jobs");
    assert_cmd::cargo::cargo_bin_cmd!("beyondswe")
        .args(["release", "to-harbor"])
        .arg(&release)
        .arg(&rebuilt)
        .assert()
        .success();
    let (a, b) = (super::support::tree(&job), super::support::tree(&rebuilt));
    assert_eq!(a, b);
    for rel in &a {
        let (x, y) = (
            std::fs::read(job.join(rel)).unwrap(),
            std::fs::read(rebuilt.join(rel)).unwrap(),
        );
        if rel.ends_with(".json") {
            assert_eq!(
                serde_json::from_slice::<Value>(&x).unwrap(),
                serde_json::from_slice::<Value>(&y).unwrap(),
                "{rel}"
            );
        } else {
            assert_eq!(x, y, "{rel}");
        }
    }
    for version in ["0.1.45", "latest"] {
        let python = harbor_python(version);
        let out = Command::new(&python)
            .arg(repo_root().join("scripts/harbor_load_job.py"))
            .arg(rebuilt.join("2026-03-25__10-00-00"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "Harbor {version} could not load the rebuilt job:\n{stdout}"
        );
        assert!(
            stdout.contains("\"TrialResult\"")
                && stdout.contains("\"JobResult\"")
                && stdout.contains("\"Trajectory\""),
            "{stdout}"
        );
    }
}
