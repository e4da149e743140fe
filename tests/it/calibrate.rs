//! `beyondswe calibrate` on real containers, over fixture instances that are deliberately ok,
//! broken (the gold patch fails an added test), flaky (a test that passes when the engine's
//! random container name ends in an even digit), trivial (the empty patch resolves it) and a
//! Doc2Repo suite with a test the reference solution fails; then `grade --calibration`.

use super::support::{fixture_images, fixtures, require_docker, run_ok};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Enough gold gradings that the flaky test (a fair coin per container) both passes and fails
/// with probability 1 − 2/2¹⁰; the test calibrates again when it did not.
const REPEAT: &str = "10";
const DOC: &str = "minidoccal_ac79166631ba81556e3f40c05aa8d00fe9178ca6";

fn calibrate(results: &Path, out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_beyondswe"))
        .args([
            "calibrate",
            "--repeat",
            REPEAT,
            "--jobs",
            "2",
            "--timeout",
            "120",
        ])
        .arg("--dataset")
        .arg(fixtures().join("dataset/calibration.jsonl"))
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .arg("--results-dir")
        .arg(results)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap()
}

fn grade_gold(results: &Path, run: &str, cal: &Path, flags: &[&str]) -> (Value, String) {
    let stdout = run_ok(
        Command::new(env!("CARGO_BIN_EXE_beyondswe"))
            .args([
                "grade",
                "--gold",
                "--jobs",
                "2",
                "--timeout",
                "120",
                "--run-id",
                run,
            ])
            .arg("--dataset")
            .arg(fixtures().join("dataset/calibration.jsonl"))
            .arg("--test-suites")
            .arg(fixtures().join("test_suites"))
            .arg("--results-dir")
            .arg(results)
            .arg("--calibration")
            .arg(cal)
            .args(flags),
    );
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(results.join(run).join("report.json")).unwrap(),
    )
    .unwrap();
    (report, stdout)
}

fn by_id(cal: &Value) -> std::collections::BTreeMap<String, Value> {
    cal["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["instance_id"].as_str().unwrap().to_owned(), i.clone()))
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

fn family<'a>(report: &'a Value, name: &str) -> Option<&'a Value> {
    report["families"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["family"] == name)
}

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn calibration_finds_broken_flaky_and_trivial_instances_and_grade_uses_it() {
    require_docker();
    fixture_images();
    // The flaky fixture is a fair coin per container: its ten draws agree in 1 of 512
    // calibrations. Then the class must say so (ok or broken, from the same counts), and the
    // calibration is done again from nothing; two unanimous calibrations in a row (1 in 262,144)
    // fail the test.
    let mut attempt = 0;
    let (dir, cal_path, out, cal) = loop {
        attempt += 1;
        let dir = tempfile::tempdir().unwrap();
        let cal_path = dir.path().join("calibration.json");
        let out = calibrate(dir.path(), &cal_path);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let cal: Value = serde_json::from_slice(&std::fs::read(&cal_path).unwrap()).unwrap();
        let flaky = &by_id(&cal)["acme_calc_pr7flaky"];
        let draw = &flaky["tests"]["tests/test_draw.py::test_lucky_draw"];
        let passed = draw["gold_passed"].as_u64().unwrap();
        let unanimous = match passed {
            0 => Some("broken"),
            10 => Some("ok"),
            _ => None,
        };
        match unanimous {
            None => break (dir, cal_path, out, cal),
            Some(class) => {
                assert_eq!(flaky["class"], class, "{flaky:#}");
                assert!(
                    attempt < 2,
                    "the coin agreed with itself in two calibrations"
                );
                eprintln!("the flaky fixture's ten draws agreed ({passed}/10): calibrating again");
            }
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let table = String::from_utf8(out.stdout).unwrap();
    assert_eq!(cal["format"], "beyondswe-calibration-1");
    assert_eq!(cal["repeat"], 10);
    let inst = by_id(&cal);
    let class = |id: &str| inst[id]["class"].as_str().unwrap().to_owned();

    // ok: gold resolves every time, empty never; per-test counts under both.
    let ok = &inst["acme_calc_pr7"];
    assert_eq!(class("acme_calc_pr7"), "ok", "{ok:#}");
    assert_eq!(
        (ok["gold"]["runs"].clone(), ok["gold"]["resolved"].clone()),
        (10.into(), 10.into())
    );
    assert_eq!(ok["empty"]["resolved"], 0);
    let f2p = &ok["tests"]["tests/test_calc.py::TestOps::test_sub_currency"];
    assert_eq!(
        (f2p["gold_passed"].clone(), f2p["empty_failed"].clone()),
        (10.into(), 1.into())
    );
    let p2p = &ok["tests"]["tests/test_calc.py::test_sub"];
    assert_eq!(
        (p2p["gold_passed"].clone(), p2p["empty_passed"].clone()),
        (10.into(), 1.into())
    );

    // broken: the gold patch never resolves it, and the failing id is named.
    let broken = &inst["acme_calc_pr7broken"];
    assert_eq!(class("acme_calc_pr7broken"), "broken", "{broken:#}");
    assert_eq!(broken["gold"]["resolved"], 0);
    assert_eq!(
        strings(&broken["failing_tests"]),
        ["tests/test_locale.py::test_add_decimal_comma"]
    );

    // flaky: the gold patch resolves it sometimes; the flaky id is named.
    let flaky = &inst["acme_calc_pr7flaky"];
    assert_eq!(class("acme_calc_pr7flaky"), "flaky", "{flaky:#}");
    let k = flaky["gold"]["resolved"].as_u64().unwrap();
    assert!((1..10).contains(&k), "{k}");
    assert_eq!(
        strings(&flaky["flaky_tests"]),
        ["tests/test_draw.py::test_lucky_draw"]
    );
    let draw = &flaky["tests"]["tests/test_draw.py::test_lucky_draw"];
    assert_eq!(draw["gold_passed"].as_u64().unwrap(), k);
    assert_eq!(draw["gold_failed"].as_u64().unwrap(), 10 - k);

    // trivial: the empty patch resolves it.
    let trivial = &inst["acme_calc_pr7trivial"];
    assert_eq!(class("acme_calc_pr7trivial"), "trivial", "{trivial:#}");
    assert_eq!(trivial["empty"]["resolved"], 1);
    assert_eq!(
        strings(&trivial["passing_without_fix"]),
        ["tests/test_calc.py::test_add_ints"]
    );

    // Doc2Repo: the suite test the reference solution fails is named.
    let doc = &inst[DOC];
    assert_eq!(class(DOC), "broken", "{doc:#}");
    assert_eq!(
        strings(&doc["failing_tests"]),
        ["tests/test_minidoc_calibration.py::test_slugify_keeps_unicode_letters"]
    );
    assert_eq!(doc["gold"]["max_score"].as_f64().unwrap(), 10.0 / 11.0);
    assert_eq!(doc["tests"].as_object().unwrap().len(), 11);

    assert_eq!(
        cal["summary"],
        serde_json::json!({"ok": 1, "broken": 2, "flaky": 1, "trivial": 1, "error": 0, "no_reference": 0})
    );
    for needle in ["acme_calc_pr7broken", "broken", "flaky", "trivial", "10/10"] {
        assert!(table.contains(needle), "{needle}: {table}");
    }
    assert!(stderr.contains("calibration written to"), "{stderr}");

    // Resumable: the same command grades nothing again.
    let t = Instant::now();
    let again = calibrate(dir.path(), &cal_path);
    assert!(again.status.success());
    assert!(
        t.elapsed() < Duration::from_secs(15),
        "resume took {:?}",
        t.elapsed()
    );
    let cal2: Value = serde_json::from_slice(&std::fs::read(&cal_path).unwrap()).unwrap();
    assert_eq!(cal2["instances"], cal["instances"]);

    // grade --calibration: flaky ids reported apart, broken listed and (asked) excluded, hash.
    let bytes = std::fs::read(&cal_path).unwrap();
    let hash = hex::encode(Sha256::digest(&bytes));
    let (plain, stdout) = grade_gold(dir.path(), "plain", &cal_path, &[]);
    let c = &plain["calibration"];
    assert_eq!(c["hash"], hash.as_str());
    assert_eq!(strings(&c["broken"]), ["acme_calc_pr7broken", DOC]);
    assert!(strings(&c["excluded"]).is_empty());
    assert_eq!(
        strings(&c["flaky_tests"]["acme_calc_pr7flaky"]),
        ["tests/test_draw.py::test_lucky_draw"]
    );
    assert_eq!(strings(&c["trivial"]), ["acme_calc_pr7trivial"]);
    assert_eq!(family(&plain, "CrossRepo").unwrap()["instances"], 4);
    assert!(stdout.contains("broken (2, counted"), "{stdout}");
    assert!(stdout.contains("flaky test ids (1, required"), "{stdout}");

    let (excl, stdout) = grade_gold(
        dir.path(),
        "excluded",
        &cal_path,
        &["--exclude-flaky", "--exclude-broken"],
    );
    let c = &excl["calibration"];
    assert_eq!(c["hash"], hash.as_str());
    assert_eq!(strings(&c["excluded"]), ["acme_calc_pr7broken", DOC]);
    // Broken instances are left out of the denominators, and still listed.
    let cross = family(&excl, "CrossRepo").unwrap();
    assert_eq!(
        (cross["instances"].clone(), cross["resolved"].clone()),
        (3.into(), 3.into())
    );
    assert!(family(&excl, "Doc2Repo").is_none());
    let rows = excl["instances"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    let row = |id: &str| rows.iter().find(|r| r["instance_id"] == id).unwrap();
    assert_eq!(row("acme_calc_pr7broken")["excluded"], true);
    assert_eq!(row("acme_calc_pr7broken")["calibration"], "broken");
    // Without the flaky id the flaky instance resolves every time, and its id is gone.
    let fl = row("acme_calc_pr7flaky");
    assert_eq!(fl["verdict"], "resolved");
    assert!(
        fl["fail_to_pass"]
            .get("tests/test_draw.py::test_lucky_draw")
            .is_none()
    );
    assert!(stdout.contains("excluded from the figures"), "{stdout}");
    let html = std::fs::read_to_string(dir.path().join("excluded/report.html")).unwrap();
    assert!(
        html.contains(&hash),
        "the page names the calibration's hash"
    );
}

#[test]
fn a_bad_calibration_file_is_refused_with_its_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("cal.json");
    std::fs::write(
        &bad,
        "{\"format\": \"beyondswe-calibration-1\",\n \"grader_version\": 3}",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_beyondswe"))
        .args(["grade", "--gold", "--run-id", "x", "--dataset"])
        .arg(fixtures().join("dataset/calibration.jsonl"))
        .arg("--results-dir")
        .arg(dir.path())
        .arg("--calibration")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cal.json:2:") && stderr.contains("`grader_version`"),
        "{stderr}"
    );
    // --exclude-flaky without a calibration is a usage error.
    let out = Command::new(env!("CARGO_BIN_EXE_beyondswe"))
        .args([
            "grade",
            "--gold",
            "--run-id",
            "x",
            "--exclude-flaky",
            "--dataset",
        ])
        .arg(fixtures().join("dataset/calibration.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A dataset in `dir` of the calc instance whose f2p patch adds `path` holding `module`, with
/// `f2p` (and `p2p`) its only test ids.
fn calc_with_test_module(
    dir: &Path,
    path: &str,
    module: &str,
    f2p: &str,
    p2p: Option<&str>,
) -> std::path::PathBuf {
    let line = std::fs::read_to_string(fixtures().join("dataset/fixtures.jsonl"))
        .unwrap()
        .lines()
        .find(|l| l.contains("\"acme_calc_pr7\""))
        .unwrap()
        .to_owned();
    let mut rec: Value = serde_json::from_str(&line).unwrap();
    let mut diff = format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{} @@\n",
        module.lines().count()
    );
    for l in module.lines() {
        diff.push_str(&format!("+{l}\n"));
    }
    rec["f2p_patch"] = diff.into();
    rec["FAIL_TO_PASS"] = serde_json::json!([format!("{path}::{f2p}")]);
    rec["PASS_TO_PASS"] = serde_json::json!(
        p2p.map(|p| vec![format!("{path}::{p}")])
            .unwrap_or_default()
    );
    let dataset = dir.join("dataset.jsonl");
    std::fs::write(&dataset, format!("{rec}\n")).unwrap();
    dataset
}

/// `calibrate --json` of `dataset`, the gold patch `repeat` times, its gradings in `dir/r`.
fn calibrate_json(dataset: &Path, dir: &Path, repeat: &str) -> Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_beyondswe"));
    cmd.args([
        "calibrate",
        "--repeat",
        repeat,
        "--timeout",
        "120",
        "--json",
    ])
    .arg("--dataset")
    .arg(dataset)
    .arg("--results-dir")
    .arg(dir.join("r"))
    .arg("-o")
    .arg(dir.join("cal.json"));
    serde_json::from_str(&run_ok(&mut cmd)).unwrap()
}

/// An instance whose FAIL_TO_PASS tests offer nothing to build a canary group on (no top-level
/// assertion compares with a literal) gets no group: `calibrate` says so, in its JSON and in its
/// table, and still calls it ok. The instances of the shapes dataset all get groups (`shapes.rs`).
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn an_instance_with_nothing_to_clone_is_a_calibrate_warning() {
    require_docker();
    fixture_images();
    let tmp = tempfile::tempdir().unwrap();
    let module = "import calc\n\n\ndef test_imports():\n    calc.add(1, 2)\n\n\ndef test_sub_runs():\n    calc.sub(3, 1)\n";
    let dataset = calc_with_test_module(
        tmp.path(),
        "tests/test_plain.py",
        module,
        "test_imports",
        Some("test_sub_runs"),
    );
    let run = |json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_beyondswe"));
        cmd.args(["calibrate", "--repeat", "1", "--timeout", "120"])
            .arg("--dataset")
            .arg(&dataset)
            .arg("--results-dir")
            .arg(tmp.path().join(if json { "r1" } else { "r2" }))
            .arg("-o")
            .arg(tmp.path().join("cal.json"));
        if json {
            cmd.arg("--json");
        }
        run_ok(&mut cmd)
    };
    let cal: Value = serde_json::from_str(&run(true)).unwrap();
    let i = &cal["instances"][0];
    let warnings = strings(&i["warnings"]);
    assert_eq!(warnings.len(), 1, "{i:#}");
    assert!(
        warnings[0].starts_with("no canary: no FAIL_TO_PASS test"),
        "{i:#}"
    );
    assert_eq!(i["gold"]["resolved"], 1, "{i:#}");
    let table = run(false);
    assert!(table.contains("(warning: no canary: "), "{table}");
}

/// A site whose assertion compares with something whose equality is not ordinary (here
/// `mock.ANY`) passes under the gold patch whatever value it holds: the gold check finds it
/// before any grading, so no group is built there and the gold patch is never proof against
/// itself. The same test's ordinary site carries the group in every grading; a test with only
/// the unsound site carries none, and says so.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn a_site_the_gold_patch_contradicts_carries_no_group() {
    require_docker();
    fixture_images();
    let tmp = tempfile::tempdir().unwrap();
    let module = "from unittest import mock\n\nimport calc\n\n\ndef test_any_sum():\n    total = calc.add(\"\u{20ac}1\", 2)\n    assert mock.ANY == 3\n    assert total == 3\n\n\ndef test_any_only():\n    assert calc.add(1, 2)\n    assert mock.ANY == 4\n";
    let dataset = calc_with_test_module(
        tmp.path(),
        "tests/test_any.py",
        module,
        "test_any_sum",
        Some("test_any_only"),
    );
    let cal = calibrate_json(&dataset, tmp.path(), "4");
    let i = &cal["instances"][0];
    assert!(strings(&i["warnings"]).is_empty(), "{i:#}");
    assert_eq!(i["class"], "ok", "{i:#}");
    assert_eq!(i["gold"]["resolved"], 4, "{i:#}");
    let results =
        std::fs::read_to_string(tmp.path().join("r/calibration/gold/results.jsonl")).unwrap();
    let verdicts: Vec<Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(verdicts.len(), 4);
    for v in &verdicts {
        let plan = &v["canary_plan"];
        assert_eq!(plan["gold_check"], "checked under the gold patch", "{v:#}");
        assert_eq!(plan["f2p_groups"], 1, "{v:#}");
        let groups = v["canaries"].as_array().expect("groups");
        assert_eq!(groups.len(), 1, "{v:#}");
        // Line 9: `assert total == 3`, never line 8's `mock.ANY == 3`.
        assert_eq!(groups[0]["line"], 9, "{v:#}");
        assert!(groups[0].get("proof").is_none(), "{v:#}");
    }
}

/// A FAIL_TO_PASS test that expects an exception and compares no literal carries a group on the
/// class it expects (here inside a `with` block; the adversarial suite's calc instance
/// `acme_calc_pr8`): calibrated, gold resolves twice with one group of twenty builtins (a blind
/// forger's chance 1 in 20: the gold tree defines no class deriving from two of them) and no
/// flag, and the empty patch fails. The forgers of
/// that instance (an exception of many classes, one raised as the caller's line expects, a
/// static class deriving from nine) are in the adversarial suite. Its control, a submission
/// defining an error deriving from the real class and TypeError, passes the real variant and
/// that one: resolved, flagged for review, no proof, its chance 2 in 20.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn an_expected_exception_class_carries_a_group_and_an_honest_two_class_error_is_no_proof() {
    require_docker();
    fixture_images();
    let tmp = tempfile::tempdir().unwrap();
    let dataset = fixtures().join("adversarial/dataset.jsonl");
    let cal = calibrate_json(&dataset, tmp.path(), "2");
    let i = &cal["instances"][0];
    assert_eq!(i["instance_id"], "acme_calc_pr8", "{i:#}");
    assert_eq!(i["class"], "ok", "{i:#}");
    assert!(strings(&i["warnings"]).is_empty(), "{i:#}");
    assert_eq!(i["gold"]["resolved"], 2, "{i:#}");
    let results =
        std::fs::read_to_string(tmp.path().join("r/calibration/gold/results.jsonl")).unwrap();
    for line in results.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let plan = &v["canary_plan"];
        assert_eq!(plan["f2p_groups"], 1, "{v:#}");
        // A group of twenty builtins: the gold tree defines no class deriving from two of
        // them, so no excuse can apply and a blind forger's chance is 1/(k+1).
        let size = plan["sizes"][0].as_f64().unwrap();
        assert_eq!(size, 20.0, "{v:#}");
        assert!(
            (plan["forge_chance"].as_f64().unwrap() - 1.0 / size).abs() < 1e-9,
            "{v:#}"
        );
        let groups = v["canaries"].as_array().expect("groups");
        // Line 10: `with pytest.raises(ZeroDivisionError):`.
        assert_eq!(groups[0]["line"], 10, "{v:#}");
        assert!(groups[0].get("proof").is_none(), "{v:#}");
        assert!(v["flags"].get("forgery").is_none(), "{v:#}");
    }
    let patch = fixtures().join("adversarial/patches/control-gold-class-deriving-from-two.patch");
    let line = serde_json::json!({"instance_id": "acme_calc_pr8", "model_name_or_path": "both",
                                  "model_patch": std::fs::read_to_string(patch).unwrap()});
    let preds = tmp.path().join("both.jsonl");
    std::fs::write(&preds, format!("{line}\n")).unwrap();
    run_ok(
        Command::new(env!("CARGO_BIN_EXE_beyondswe"))
            .args(["grade", "--timeout", "120", "--run-id", "both"])
            .arg("--dataset")
            .arg(&dataset)
            .arg("--predictions")
            .arg(&preds)
            .arg("--results-dir")
            .arg(tmp.path()),
    );
    let results = std::fs::read_to_string(tmp.path().join("both/results.jsonl")).unwrap();
    let v: Value = serde_json::from_str(results.lines().next().unwrap()).unwrap();
    assert_eq!(v["verdict"], "resolved", "{v:#}");
    assert!(v["flags"].get("forgery").is_none(), "{v:#}");
    // It defines a class deriving from two of the group's: the excuse counts in its chance.
    let size = v["canary_plan"]["sizes"][0].as_f64().unwrap();
    assert!(
        (v["canary_plan"]["forge_chance"].as_f64().unwrap() - 2.0 / size).abs() < 1e-9,
        "{v:#}"
    );
    // Twenty of the block's twenty-six are drawn: where TypeError is among them, its variant
    // passes beside the real one, which is flagged for review; else the real one passes alone.
    let group = &v["canaries"][0];
    let passed = group["items"]
        .as_object()
        .and_then(|items| items.values().next())
        .and_then(Value::as_array)
        .map(|o| o.iter().filter(|x| *x == "passed").count());
    let review = group["review"].as_array().map_or(0, Vec::len);
    let flagged = v["flags"]["suspicious"].to_string();
    match passed {
        Some(2) => {
            assert_eq!(review, 1, "{v:#}");
            assert!(flagged.contains("flagged for review"), "{v:#}");
        }
        Some(1) => assert_eq!(review, 0, "{v:#}"),
        other => panic!("{other:?} variants passed: {v:#}"),
    }
}
