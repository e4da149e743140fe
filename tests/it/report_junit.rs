//! `report --format junit` read by a real JUnit consumer: junitparser (the venv of
//! `scripts/junit-venv.sh`), which CI systems' report tooling is built on. What it reads back is
//! compared with the run: a suite per family, a case per attempt, failures, errors and skips where
//! the verdicts put them, and the counts the consumer recomputes equal to the ones written.

use super::report_html::{HOSTILE, line, synthetic_run};
use super::support::repo_root;
use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::{Value, json};
use std::process::Command;

/// The consumer's Python: the venv is made (or found cached) by its script.
fn consumer() -> String {
    let out = Command::new("bash")
        .arg(repo_root().join("scripts/junit-venv.sh"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "this test needs the JUnit consumer: scripts/junit-venv.sh failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap()
        .to_owned()
}

/// What junitparser reads from the file: per suite its attributes, the counts it recomputes,
/// its properties and each case's name, class and result.
const READ: &str = r#"
import json, sys
from junitparser import JUnitXml, TestSuite, Failure, Error, Skipped
xml = JUnitXml.fromfile(sys.argv[1])
out = {"name": xml.name, "tests": xml.tests, "failures": xml.failures, "errors": xml.errors, "suites": []}
for suite in xml:
    written = {k: getattr(suite, k) for k in ("tests", "failures", "errors", "skipped")}
    suite.update_statistics()
    recounted = {k: getattr(suite, k) for k in ("tests", "failures", "errors", "skipped")}
    cases = []
    for case in suite:
        results = [{"kind": type(r).__name__, "message": r.message, "type": r.type, "text": r.text}
                   for r in case.result]
        cases.append({"name": case.name, "classname": case.classname, "time": case.time,
                      "results": results})
    out["suites"].append({"name": suite.name, "written": written, "recounted": recounted,
                          "properties": {p.name: p.value for p in suite.properties()},
                          "cases": cases})
print(json.dumps(out))
"#;

#[test]
#[ignore = "needs the JUnit consumer (scripts/test.sh makes it)"]
fn a_junit_consumer_reads_the_run_as_graded() {
    let python = consumer();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let hostile_id = format!("acme_x_pr9{HOSTILE}\u{1b}[2J\u{7}");
    let mut error = line(
        "acme_y_pr2",
        "DepMigrate",
        "error",
        "image_missing",
        0.0,
        json!({}),
    );
    error["timings"] = json!({"total": 2.5});
    let mut doc = line(
        "minidoc_abc",
        "Doc2Repo",
        "unresolved",
        "tests_failed",
        0.5,
        json!({}),
    );
    doc["suite"] = json!({"passed": 1, "collected": 2, "expected": 2, "all_passed": false,
                          "tests": {"tests/test_a.py::test_one": "passed", "tests/test_a.py::test_two": "failed"}});
    let lines = vec![
        line(
            "acme_x_pr1",
            "CrossRepo",
            "resolved",
            "all_tests_passed",
            1.0,
            json!({"t.py::a": "passed"}),
        ),
        line(
            &hostile_id,
            "CrossRepo",
            "unresolved",
            "tests_failed",
            0.0,
            json!({"t.py::a": "passed", format!("t.py::b{HOSTILE}"): "failed"}),
        ),
        error,
        doc,
    ];
    synthetic_run(&dir, "r1", &lines);
    let out = cargo_bin_cmd!("beyondswe")
        .args(["report", "--format", "junit"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    if std::env::var_os("BEYONDSWE_SHOW_JUNIT").is_some() {
        eprintln!("{}", String::from_utf8_lossy(&out.stdout));
    }
    let xml = tmp.path().join("junit.xml");
    std::fs::write(&xml, &out.stdout).unwrap();

    let read = Command::new(&python)
        .args(["-c", READ])
        .arg(&xml)
        .output()
        .unwrap();
    assert!(
        read.status.success(),
        "junitparser could not read the report:\n{}\n{}",
        String::from_utf8_lossy(&read.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let got: Value = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!(got["name"], "beyondswe run r1");
    assert_eq!(got["tests"], 4);
    assert_eq!(got["failures"], 2);
    assert_eq!(got["errors"], 1);

    let suites = got["suites"].as_array().unwrap();
    let names: Vec<&str> = suites.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["CrossRepo", "DepMigrate", "Doc2Repo"], "{got:#}");
    for s in suites {
        assert_eq!(s["written"], s["recounted"], "{s:#}");
        assert_eq!(s["properties"]["dataset_hash"], "abc123", "{s:#}");
    }

    let cross = &suites[0]["cases"];
    assert_eq!(cross[0]["name"], "acme_x_pr1");
    assert_eq!(cross[0]["classname"], "beyondswe.CrossRepo");
    assert_eq!(cross[0]["results"], json!([]), "resolved passes");
    // The hostile id comes back as text: markup intact, control characters replaced.
    let name = cross[1]["name"].as_str().unwrap();
    assert!(name.starts_with("acme_x_pr9<script>"), "{name}");
    assert!(name.ends_with("\u{fffd}[2J\u{fffd}"), "{name:?}");
    let failure = &cross[1]["results"][0];
    assert_eq!(failure["kind"], "Failure");
    assert_eq!(failure["message"], "tests_failed");
    let text = failure["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("FAIL_TO_PASS t.py::b{HOSTILE}: failed")),
        "{text}"
    );
    assert!(
        !text.contains("t.py::a:"),
        "a passed test is not listed: {text}"
    );

    let dep = &suites[1]["cases"][0];
    assert_eq!(dep["results"][0]["kind"], "Error");
    assert_eq!(dep["results"][0]["message"], "image_missing");
    assert_eq!(dep["time"], 2.5);

    let d2r = &suites[2]["cases"][0]["results"][0];
    assert_eq!(d2r["kind"], "Failure");
    assert_eq!(
        d2r["message"], "tests_failed: pass rate 0.5000 (1 of 2 tests)",
        "{d2r:#}"
    );
    assert!(
        d2r["text"]
            .as_str()
            .unwrap()
            .contains("suite tests/test_a.py::test_two: failed")
    );
}
