//! Harbor itself is the judge: its own task loader (`harbor.models.task.task.Task`), at 0.1.45
//! (the version BeyondSWE-harbor was made for) and at the latest release, loads every task
//! directory we generate and reads back the image, timeouts and resources we wrote.
//!
//! The loader environments come from `scripts/harbor-venv.sh` (CPython 3.11 with Harbor installed
//! without its dependency set; see the script). Without network access to the package index the
//! test skips locally, and fails in CI or with BEYONDSWE_REQUIRE_HARBOR=1.

use super::support::{fixtures, repo_root, required};
use beyondswe::convert::{self, ToHarborOptions};
use beyondswe::record::RecordReader;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn harbor_python(version: &str) -> Option<PathBuf> {
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
        assert!(!required("BEYONDSWE_REQUIRE_HARBOR"), "{msg}");
        eprintln!("skipping: {msg}");
        return None;
    }
    let stdout = String::from_utf8(out.stdout).unwrap();
    Some(PathBuf::from(stdout.lines().last().unwrap().trim()))
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
    let Some(python) = harbor_python(version) else {
        return;
    };
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
        assert_eq!(row["name"].as_str(), Some(task.instance_id()));
        assert_eq!(row["docker_image"].as_str(), task.image(), "{row}");
        assert_eq!(row["verifier_timeout_sec"], 3600.0);
        assert_eq!(row["agent_timeout_sec"], 14400.0);
        assert_eq!(row["build_timeout_sec"], 1800.0);
        assert_eq!(row["cpus"], 4);
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
fn harbor_0_1_45_loads_every_generated_task() {
    load_with("0.1.45");
}

#[test]
fn latest_harbor_loads_every_generated_task() {
    load_with("latest");
}
