//! The in-container verifier (the package `adapters/beyondswe_verifier/` and its entry point) against its Rust
//! counterparts, without a container: the restore rules classify every path the same on both
//! sides, `decide` gives the expected verdict for a table of fact sets, the verifier starts from
//! the modules a Harbor environment holds, and its own Python unit tests pass.

use super::support::repo_root;
use beyondswe::restore_rules::{PathClass, classify};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The verifier's own Python unit tests (`adapters/tests/`, one file per module): the static
/// evidence's constructs, evasions and honest code; the canaries' plans over every suite shape
/// and their judge, and the canary steps on a tree; the manifest; `decide`; the restore rules
/// and pytest configuration sections; the scrub's decisions; the result channel and the
/// outcomes; git blob ids; the runner's events and refusals under a stand-in pytest; the
/// environment, the test user's processes, the Doc2Repo suite's unpacking, the static baseline
/// and the entry point's command line. They need no pytest and no container, so the host's
/// interpreter runs them.
#[test]
fn the_verifiers_python_unit_tests_pass() {
    let text = unit_tests_under(Path::new("python3"), &[]);
    assert!(text.contains(" ok"), "no test ran:\n{text}");
}

/// The verifier's unit tests run by `python` (those of `modules`, else every one): their report
/// (the run must pass).
fn unit_tests_under(python: &Path, modules: &[&str]) -> String {
    let mut cmd = Command::new(python);
    if modules.is_empty() {
        cmd.args(["-I", "-m", "unittest", "discover", "-s"])
            .arg(repo_root().join("adapters/tests"))
            .arg("-v");
    } else {
        // By name, from the tests' folder (each test file puts the package on its path).
        cmd.args(["-E", "-s", "-m", "unittest", "-v"])
            .args(modules)
            .current_dir(repo_root().join("adapters/tests"));
    }
    let out = cmd.output().expect("the interpreter runs");
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{}:\n{text}", python.display());
    text
}

/// The canary groups' unit tests (and the static evidence's) on the oldest interpreters the
/// verifier claims, where images of older projects have nothing newer: 3.6 and 3.7, whose
/// syntax trees lack the end positions the groups are planted by (end_positions.py gives them
/// from the tokens). Every pyenv interpreter of those versions found runs them; CI must have
/// one.
#[test]
fn the_canary_groups_unit_tests_pass_on_python_3_6_and_3_7() {
    let root = std::env::var_os("PYENV_ROOT")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".pyenv")));
    let mut found: Vec<std::path::PathBuf> = root
        .and_then(|r| std::fs::read_dir(r.join("versions")).ok())
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("3.6.") || name.starts_with("3.7.")
        })
        .map(|e| e.path().join("bin/python"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    if found.is_empty() {
        assert!(
            std::env::var_os("CI").is_none(),
            "no Python 3.6 or 3.7 under $PYENV_ROOT/versions or ~/.pyenv/versions: CI runs the verifier's tests on one"
        );
        eprintln!("no Python 3.6 or 3.7 found: the verifier's tests ran on python3 only");
        return;
    }
    for python in found {
        // The canary groups' modules and their neighbours (the whole suite, with its timing
        // tests of processes, runs on python3 above).
        let text = unit_tests_under(
            &python,
            &[
                "test_canaries",
                "test_canary_reading",
                "test_canary_steps",
                "test_canary_writing",
                "test_end_positions",
                "test_helper_sites",
                "test_static_evidence",
                "test_suite_split",
            ],
        );
        // The canary tests ran (none skipped there): groups are planted on this interpreter.
        assert!(text.contains("(test_canaries.Groups)"), "{text}");
        let skipped: Vec<&str> = text
            .lines()
            .filter(|l| {
                l.contains("skipped")
                    && (l.contains("(test_canar") || l.contains("(test_helper_sites"))
            })
            .collect();
        assert!(skipped.is_empty(), "{}: {skipped:?}", python.display());
    }
}

/// Every module of the verifier's package has a unit test file of its own
/// (`adapters/tests/test_NAME.py`); the entry point's are in `test_common.py` and `test_verify.py`.
#[test]
fn every_verifier_module_has_its_test_file() {
    let adapters = repo_root().join("adapters");
    let mut missing = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(adapters.join("beyondswe_verifier")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "py") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            if stem == "__init__" {
                continue;
            }
            seen += 1;
            if !adapters.join(format!("tests/test_{stem}.py")).is_file() {
                missing.push(stem);
            }
        }
    }
    missing.sort();
    assert!(seen >= 25, "{seen} modules");
    assert!(
        missing.is_empty(),
        "modules without a test file: {missing:?}"
    );
}

/// A directory holding `modules` and the rules table, under their in-container names.
fn installed(modules: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in modules {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::copy(
        repo_root().join("adapters/restore_rules.json"),
        dir.path().join("beyondswe_restore_rules.json"),
    )
    .unwrap();
    dir
}

/// A Harbor environment's image holds only `PREPARE_MODULES`: the verifier starts from them
/// alone (it imports every step module as it starts), the static evidence among them.
#[test]
fn the_verifier_starts_from_the_modules_prepare_needs() {
    let dir = installed(&beyondswe::adapters::PREPARE_MODULES);
    let out = Command::new("python3")
        .args(["-I", "-S", "-c"])
        .arg(
            "import sys; sys.path.insert(0, sys.argv[1]); import beyondswe_verify; from beyondswe_verifier import verify as v; \
             m = v.static_step.static_module(); assert m.__name__ == 'beyondswe_verifier.static_evidence'; \
             assert all(x.__name__.startswith('beyondswe_verifier.') for x in v.MODULES), v.MODULES; \
             assert all(x.__file__.startswith(sys.argv[1]) for x in v.MODULES), v.MODULES",
        )
        .arg(dir.path())
        .current_dir("/")
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn verify_py(args: &[&str], stdin: &str) -> serde_json::Value {
    // The verifier finds its modules and rules table beside itself under the in-container names.
    let dir = installed(&beyondswe::adapters::VERIFIER_MODULES);
    let mut child = Command::new("python3")
        .arg("-I")
        .arg(dir.path().join("beyondswe_verify.py"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "verify.py {args:?} failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn restore_rules_cannot_drift_between_rust_and_the_verifier() {
    let table: serde_json::Value =
        serde_json::from_str(beyondswe::adapters::RESTORE_RULES_JSON).unwrap();
    let mut paths: Vec<String> = table["classify_examples"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|v| {
            v.as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_owned())
        })
        .collect();
    for extra in [
        "Tests/Unit/helper.py",
        "a/b/c/test_x.py",
        "x_test.py",
        "x_tests.py",
        "setup.cfg.bak",
        "pkg/sitecustomize_helper.py",
        "usercustomize.py",
        "calc.egg-info",
        "lib/x.abi3.so",
        "docs/conf.py",
        "tests",
        "testing/conftest.py",
        "a.pth.txt",
        "__pycache__/x.py",
        "src/pkg/__init__.py",
        "pytest.ini/x",
        "tox.ini",
        ".coveragerc",
        "pyproject.toml",
    ] {
        paths.push(extra.to_owned());
    }
    let py = verify_py(&["classify"], &paths.join("\n"));
    for p in &paths {
        let rust = classify(p).map(PathClass::as_str);
        assert_eq!(py[p].as_str(), rust, "{p}");
    }
}

#[test]
fn decide_over_a_table_of_facts() {
    let flags = |forgery: &[&str]| serde_json::json!({"forgery": forgery});
    let run = |exit: i64| serde_json::json!({"exit": exit, "started": true});
    let cases = serde_json::json!([
        {"family": "CrossRepo", "flags": flags(&[]), "run": run(1),
         "fail_to_pass": {"a": "passed"}, "pass_to_pass": {"b": "passed"}},
        {"family": "CrossRepo", "flags": flags(&[]), "run": run(1),
         "fail_to_pass": {"a": "passed"}, "pass_to_pass": {"b": "failed"}},
        {"family": "CrossRepo", "flags": flags(&["canary group t.py::a: 2 of its 10 variants passed"]), "run": run(0),
         "fail_to_pass": {"a": "passed"}},
        {"family": "CrossRepo", "flags": flags(&[]), "run": run(0), "fail_to_pass": {"a": "disputed"}},
        {"family": "CrossRepo", "flags": flags(&[]), "apply": {"ok": false}},
        {"family": "CrossRepo", "flags": flags(&[]), "run": {"timed_out": true, "started": true}},
        {"family": "CrossRepo", "flags": flags(&[]), "run": {"oom": true}},
        {"family": "CrossRepo", "flags": flags(&[]), "run": {"exit": 2, "started": false}},
        {"family": "CrossRepo", "flags": flags(&[]), "run": run(2), "fail_to_pass": {"a": "passed"}},
        {"family": "CrossRepo", "flags": flags(&[]), "error": {"reason": "f2p_patch_failed"}},
        {"family": "Doc2Repo", "flags": flags(&[]), "run": run(1),
         "suite": {"passed": 6, "collected": 9, "expected": 10}},
        {"family": "Doc2Repo", "flags": flags(&[]), "run": run(0),
         "suite": {"passed": 10, "collected": 10, "expected": 10}},
        {"family": "Doc2Repo", "flags": flags(&[]), "run": {"timed_out": true, "started": true},
         "suite": {"passed": 3, "collected": 3, "expected": 10}},
        {"family": "Doc2Repo", "flags": flags(&["a conftest appeared"]), "run": run(0),
         "suite": {"passed": 10, "collected": 10, "expected": 10}},
        {"family": "CrossRepo", "flags": flags(&[]), "run": run(1),
         "disk_limit": {"limit_bytes": 1, "written_bytes": 2}, "fail_to_pass": {"a": "passed"}},
        {"family": "Doc2Repo", "flags": flags(&[]), "run": run(1),
         "disk_limit": {"limit_bytes": 1, "written_bytes": 2},
         "suite": {"passed": 4, "collected": 4, "expected": 10}},
        {"family": "CrossRepo", "flags": flags(&[]), "run": run(1),
         "static": {"hits": [{"kind": "frames", "path": "pkg/__init__.py", "line": 3, "what": ".f_locals"}]},
         "fail_to_pass": {"a": "passed"}},
        {"family": "Doc2Repo", "flags": flags(&[]), "run": run(0),
         "static": {"hits": [{"kind": "gc", "path": "stub/__init__.py", "line": 1, "what": "gc.get_objects"}]},
         "suite": {"passed": 10, "collected": 10, "expected": 10}},
        {"family": "CrossRepo", "flags": flags(&[]), "run": run(1),
         "static": {"hits": [], "allowed": [{"kind": "ctypes", "path": "pkg/c.py", "line": 1, "what": "ctypes"}]},
         "fail_to_pass": {"a": "passed"}},
        {"family": "CrossRepo", "flags": flags(&[]), "run": run(1), "strict": true,
         "static": {"hits": [{"kind": "frames", "path": "pkg/__init__.py", "line": 3, "what": ".f_locals"}]},
         "fail_to_pass": {"a": "passed"}},
        {"family": "Doc2Repo", "flags": flags(&[]), "run": run(0), "strict": true,
         "static": {"hits": [{"kind": "gc", "path": "stub/__init__.py", "line": 1, "what": "gc.get_objects"}]},
         "suite": {"passed": 10, "collected": 10, "expected": 10}},
        {"family": "CrossRepo", "flags": flags(&["canary group t.py::a: 2 of its 10 variants passed"]), "run": run(0),
         "static": {"hits": [{"kind": "frames", "path": "pkg/a.py", "line": 1, "what": "sys._getframe"}]},
         "fail_to_pass": {"a": "passed"}},
    ]);
    let expected = serde_json::json!([
        ["resolved", "all_tests_passed", 1.0],
        ["unresolved", "tests_failed", 0.0],
        ["unresolved", "forgery_detected", 0.0],
        ["unresolved", "results_disagree", 0.0],
        ["unresolved", "patch_failed", 0.0],
        ["unresolved", "timeout", 0.0],
        ["unresolved", "out_of_memory", 0.0],
        ["unresolved", "no_results", 0.0],
        ["unresolved", "tests_failed", 0.0],
        ["error", "f2p_patch_failed", 0.0],
        ["unresolved", "tests_failed", 0.6],
        ["resolved", "all_tests_passed", 1.0],
        ["unresolved", "timeout", 0.3],
        ["unresolved", "forgery_detected", 0.0],
        ["unresolved", "disk_limit", 0.0],
        ["unresolved", "disk_limit", 0.4],
        // Static evidence changes no verdict, unless `strict` asks for it.
        ["resolved", "all_tests_passed", 1.0],
        ["resolved", "all_tests_passed", 1.0],
        ["resolved", "all_tests_passed", 1.0],
        ["unresolved", "forgery_suspected", 0.0],
        ["unresolved", "forgery_suspected", 0.0],
        ["unresolved", "forgery_detected", 0.0],
    ]);
    let got = verify_py(&["decide"], &cases.to_string());
    assert_eq!(got, expected);
    // Every reason the verifier can give is one the Rust verdict knows.
    for row in got.as_array().unwrap() {
        let r: Result<beyondswe::grade::Reason, _> = serde_json::from_value(row[1].clone());
        assert!(r.is_ok(), "{row}");
    }
}

/// The verifier accepts exactly the keys of the spec's schema, with the schema's types, and its
/// defaults are the Rust side's: one name, one type and one default per option on both sides.
#[test]
fn the_verifiers_spec_keys_and_defaults_are_the_schemas() {
    let out = Command::new("python3")
        .args(["-I", "-c"])
        .arg(
            "import json, sys; sys.path.insert(0, sys.argv[1]); from beyondswe_verifier import spec; print(json.dumps({\
             'keys': spec.KEYS, 'instance': sorted(spec.INSTANCE_KEYS), \
             'test': spec.DEFAULT_TEST_TIMEOUT_SEC, 'setup': spec.DEFAULT_SETUP_TIMEOUT_SEC}))",
        )
        .arg(repo_root().join("adapters"))
        .output()
        .expect("python3 runs");
    let py = stdout_json(&out);
    let kind = |schema: &serde_json::Value| -> String {
        let types: Vec<&str> = match &schema["type"] {
            serde_json::Value::String(t) => vec![t.as_str()],
            serde_json::Value::Array(ts) => ts.iter().filter_map(|t| t.as_str()).collect(),
            _ => Vec::new(),
        };
        if schema.get("$ref").is_some()
            || schema["anyOf"]
                .as_array()
                .is_some_and(|a| a.iter().any(|s| s.get("$ref").is_some()))
        {
            return "object".to_owned();
        }
        match types.iter().find(|t| **t != "null") {
            Some(&"array") => format!("{}_list", schema["items"]["type"].as_str().unwrap_or("?")),
            Some(t) => (*t).to_owned(),
            None => "?".to_owned(),
        }
    };
    let schema = serde_json::to_value(schemars::schema_for!(
        beyondswe::verifier_spec::VerifierSpec
    ))
    .unwrap();
    let from_schema: serde_json::Map<String, serde_json::Value> = schema["properties"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), kind(v).into()))
        .collect();
    let from_python = py["keys"].as_object().unwrap();
    let mut a: Vec<_> = from_schema.iter().collect();
    let mut b: Vec<_> = from_python.iter().collect();
    a.sort_by_key(|(k, _)| k.as_str());
    b.sort_by_key(|(k, _)| k.as_str());
    assert_eq!(
        a, b,
        "schema (left) and the verifier's spec.KEYS (right) differ"
    );
    let config =
        serde_json::to_value(schemars::schema_for!(beyondswe::harbor::TestConfig)).unwrap();
    let mut instance: Vec<&str> = config["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    instance.sort_unstable();
    assert_eq!(py["instance"], serde_json::json!(instance));
    assert_eq!(py["test"], beyondswe::DEFAULT_TIMEOUT_SECS);
    assert_eq!(
        py["setup"],
        beyondswe::verifier_spec::DEFAULT_SETUP_TIMEOUT.as_secs()
    );
}

/// A spec with a key no grader writes, or a value of the wrong type, is the verifier's failure
/// with the key named: never a verdict on the submission.
#[test]
fn a_spec_that_is_not_one_is_refused_by_name() {
    let dir = installed(&beyondswe::adapters::VERIFIER_MODULES);
    let spec = dir.path().join("spec.json");
    for (text, named) in [
        (r#"{"state_dir": "/s", "timeout": 5}"#, "timeout"),
        (
            r#"{"state_dir": "/s", "fail_to_pass": "t.py::a"}"#,
            "fail_to_pass",
        ),
        (r#"{"state_dir": "/s", "canaries": "yes"}"#, "canaries"),
    ] {
        std::fs::write(&spec, text).unwrap();
        let out = Command::new("python3")
            .arg("-I")
            .arg(dir.path().join("beyondswe_verify.py"))
            .args(["grade", "--spec"])
            .arg(&spec)
            .output()
            .expect("python3 runs");
        let result = stdout_json(&out);
        assert_eq!(result["verdict"], "error", "{text}: {result}");
        assert_eq!(result["reason"], "verifier_failed", "{text}: {result}");
        let said = result["logs"]["error"].as_str().unwrap_or_default();
        assert!(said.contains(named), "{text}: {said}");
    }
}

/// The JSON a Python process printed, once it exited 0 (else its stderr is the failure).
fn stdout_json(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
