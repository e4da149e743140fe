//! Honest work passes on every image shape real BeyondSWE images have (fixtures/images/shape-*,
//! made by scripts/make-shape-fixtures.py): a src layout reached through the image's PYTHONPATH,
//! an editable install, a venv first on PATH with pytest only there, plugins' fixtures and
//! markers, pytest configured in tox.ini, setup commands that export, tests that write to HOME
//! and /tmp, a C extension built in place, a FAIL_TO_PASS test that compares only through the
//! project's own assertion helper, an image whose only Python is 3.7, and a Doc2Repo instance on
//! a venv image.
//!
//! Each is calibrated on both paths: offline (`calibrate`: gold twice, empty once, every
//! instance `ok`; and the gold patches graded as an agent's predictions, canaries planted) and
//! through Harbor's `tests/test.sh` in the task's own environment (reward 1 twice, then 0).

use super::harbor_docker::{build_task, copy_tree_into, solve, task_in, verify};
use super::support::{Container, fixture_images, fixtures, require_docker, run_ok};
use beyondswe::record::{Family, Record, RecordReader};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn shapes() -> Vec<Record> {
    RecordReader::open(&fixtures().join("dataset/shapes.jsonl"))
        .unwrap()
        .map(|r| r.unwrap().1)
        .collect()
}

/// `calibrate` on a dataset of fixtures: gold twice, empty once.
fn calibrate_cmd(dataset: &Path, results: &Path, out: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_beyondswe"));
    cmd.args([
        "calibrate",
        "--repeat",
        "2",
        "--jobs",
        "2",
        "--timeout",
        "120",
    ])
    .arg("--dataset")
    .arg(dataset)
    .arg("--test-suites")
    .arg(fixtures().join("test_suites"))
    .arg("--results-dir")
    .arg(results)
    .arg("-o")
    .arg(out);
    cmd
}

/// The calibration JSON `calibrate --json` prints.
fn calibrate(dataset: &Path, results: &Path, out: &Path) -> Value {
    let stdout = run_ok(calibrate_cmd(dataset, results, out).arg("--json"));
    serde_json::from_str(&stdout).unwrap()
}

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn every_image_shape_calibrates_ok_offline() {
    require_docker();
    fixture_images();
    let tmp = tempfile::tempdir().unwrap();
    let cal = calibrate(
        &fixtures().join("dataset/shapes.jsonl"),
        tmp.path(),
        &tmp.path().join("cal.json"),
    );
    let instances = cal["instances"].as_array().unwrap();
    assert_eq!(instances.len(), shapes().len());
    for i in instances {
        let id = i["instance_id"].as_str().unwrap();
        assert_eq!(i["class"], "ok", "{id}: {i:#}");
        assert_eq!(i["gold"]["resolved"], 2, "{id}: {i:#}");
        assert_eq!(i["empty"]["resolved"], 0, "{id}: {i:#}");
        assert!(
            i.get("warnings").is_none(),
            "{id}: every shape gets canaries: {i:#}"
        );
        if i["family"] == "Doc2Repo" {
            assert_eq!(i["gold"]["min_score"], 1.0, "{id}: {i:#}");
        }
    }
}

/// The gold patches as an agent's predictions: canaries are planted (calibration plants none),
/// and every shape still resolves, Doc2Repo at 1.0.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn gold_patches_as_predictions_resolve_on_every_shape_with_canaries() {
    require_docker();
    fixture_images();
    let tmp = tempfile::tempdir().unwrap();
    let preds = tmp.path().join("preds.jsonl");
    let lines: Vec<String> = shapes()
        .iter()
        .map(|r| {
            serde_json::json!({"instance_id": r.instance_id(), "model_name_or_path": "honest",
                               "model_patch": r.gold_patch().unwrap()})
            .to_string()
        })
        .collect();
    std::fs::write(&preds, lines.join("\n") + "\n").unwrap();
    run_ok(
        Command::new(env!("CARGO_BIN_EXE_beyondswe"))
            .args([
                "grade",
                "--jobs",
                "2",
                "--timeout",
                "120",
                "--run-id",
                "honest",
            ])
            .arg("--dataset")
            .arg(fixtures().join("dataset/shapes.jsonl"))
            .arg("--test-suites")
            .arg(fixtures().join("test_suites"))
            .arg("--predictions")
            .arg(&preds)
            .arg("--results-dir")
            .arg(tmp.path()),
    );
    let results = std::fs::read_to_string(tmp.path().join("honest/results.jsonl")).unwrap();
    let verdicts: Vec<Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(verdicts.len(), shapes().len());
    for v in &verdicts {
        let id = v["instance_id"].as_str().unwrap();
        assert_eq!(v["verdict"], "resolved", "{id}: {v:#}");
        assert_eq!(v["score"], 1.0, "{id}: {v:#}");
        assert!(
            !v["canaries"].as_array().unwrap_or(&Vec::new()).is_empty(),
            "{id}: no canary was planted: {v:#}"
        );
    }
}

/// The shapes of where the image puts the package and its plugins; the other shapes are
/// [`the_other_image_shapes_through_test_sh_reward_gold_and_not_empty`]'s (two tests, so that
/// both halves run at once).
const ENVIRONMENT_SHAPES: [&str; 5] = [
    "shapes_pythonpath_pr1",
    "shapes_editable_pr1",
    "shapes_venv_pr1",
    "shapes_plugins_pr1",
    "shapes_config_pr1",
];

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn the_environment_image_shapes_through_test_sh_reward_gold_and_not_empty() {
    let shapes: Vec<Record> = shapes()
        .into_iter()
        .filter(|r| ENVIRONMENT_SHAPES.contains(&r.instance_id()))
        .collect();
    assert_eq!(shapes.len(), ENVIRONMENT_SHAPES.len());
    through_test_sh_gold_twice_and_empty(&shapes);
}

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn the_other_image_shapes_through_test_sh_reward_gold_and_not_empty() {
    let shapes: Vec<Record> = shapes()
        .into_iter()
        .filter(|r| !ENVIRONMENT_SHAPES.contains(&r.instance_id()))
        .collect();
    assert!(!shapes.is_empty());
    through_test_sh_gold_twice_and_empty(&shapes);
}

/// Each shape's task through its `test.sh`: gold twice rewarded 1, the empty workdir 0.
fn through_test_sh_gold_twice_and_empty(shapes: &[Record]) {
    require_docker();
    fixture_images();
    for record in shapes {
        let id = record.instance_id();
        let task = build_task(id);
        for attempt in 1..=2 {
            let c = Container::run(&task.image);
            if record.family() == Family::Doc2Repo {
                copy_tree_into(
                    &c,
                    &fixtures().join("submissions/minidoc_gold"),
                    &task.workdir,
                );
            } else {
                solve(&c, &task);
            }
            let (reward, report) = verify(&c, &task);
            assert_eq!(
                reward.as_deref(),
                Some("1"),
                "{id}, gold #{attempt}: {report:#}"
            );
        }
        let c = Container::run(&task.image);
        let (reward, report) = verify(&c, &task);
        assert_eq!(reward.as_deref(), Some("0"), "{id}, empty: {report:#}");
    }
}

/// The first shape's record (`shapes_pythonpath_pr1`), for a test to vary.
fn pythonpath_shape_record() -> Value {
    let record: Value = serde_json::from_str(
        std::fs::read_to_string(fixtures().join("dataset/shapes.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(record["instance_id"], "shapes_pythonpath_pr1");
    record
}

/// When gold cannot even import the package (here a setup command removed the directory the
/// image's PYTHONPATH names), calibrate says so: the class is broken, and the cause beside it
/// names the module; the verdict stays `tests_failed` and carries the cause.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn a_gold_patch_that_cannot_import_is_broken_with_the_module_named() {
    require_docker();
    fixture_images();
    let tmp = tempfile::tempdir().unwrap();
    let mut record = pythonpath_shape_record();
    record["instance_id"] = "shapes_nolib_pr1".into();
    record["pre_commands"] = "rm -rf lib".into();
    let dataset = tmp.path().join("nolib.jsonl");
    std::fs::write(&dataset, record.to_string() + "\n").unwrap();
    let cal = calibrate(&dataset, tmp.path(), &tmp.path().join("cal.json"));
    let i = &cal["instances"][0];
    assert_eq!(i["class"], "broken", "{i:#}");
    assert_eq!(
        i["gold"]["causes"][0], "module not found: greetdata",
        "{i:#}"
    );

    // The table names it too.
    let table = run_ok(&mut calibrate_cmd(
        &dataset,
        tmp.path(),
        &tmp.path().join("cal2.json"),
    ));
    assert!(
        table.contains("broken") && table.contains("module not found: greetdata"),
        "{table}"
    );
    let results =
        std::fs::read_to_string(tmp.path().join("calibration/gold/results.jsonl")).unwrap();
    let v: Value = serde_json::from_str(results.lines().next().unwrap()).unwrap();
    assert_eq!(v["reason"], "tests_failed", "{v:#}");
    assert_eq!(v["cause"], "module not found: greetdata", "{v:#}");
}

/// A PASS_TO_PASS id that names no test the collection makes (here a parametrised id with a
/// timestamp, as a suite that parametrises on the clock makes a new one at every collection):
/// pytest runs no test at all, the official runner's way too. The gold patch is `broken`, and the
/// cause beside it names the id, not the tests that never ran.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn an_id_the_collection_does_not_make_is_named_as_the_cause() {
    require_docker();
    fixture_images();
    let tmp = tempfile::tempdir().unwrap();
    let mut record = pythonpath_shape_record();
    record["instance_id"] = "shapes_clockid_pr1".into();
    let stale = "tests/test_greet.py::test_greet_returns_text[05:20:45 2026-12-02]";
    let mut p2p: Vec<Value> =
        serde_json::from_str(record["PASS_TO_PASS"].as_str().unwrap()).unwrap();
    p2p.push(stale.into());
    record["PASS_TO_PASS"] = Value::String(serde_json::to_string(&p2p).unwrap());
    let dataset = tmp.path().join("clockid.jsonl");
    std::fs::write(&dataset, record.to_string() + "\n").unwrap();
    let cal = calibrate(&dataset, tmp.path(), &tmp.path().join("cal.json"));
    let i = &cal["instances"][0];
    assert_eq!(i["class"], "broken", "{i:#}");
    let want = format!("test id not found, so pytest ran no test: {stale}");
    assert_eq!(i["gold"]["causes"][0], want.as_str(), "{i:#}");
}

/// A submission to the helper shape that makes unittest's comparison of multi-line text pass
/// whatever it is given (and fixes nothing).
const HELPER_FORGER: &str = "diff --git a/greeter/__init__.py b/greeter/__init__.py\n\
                             --- a/greeter/__init__.py\n\
                             +++ b/greeter/__init__.py\n\
                             @@ -3,3 +3,7 @@\n \
                             from greeter.core import greet\n \n \
                             __all__ = [\"greet\"]\n\
                             +\n\
                             +import unittest\n\
                             +\n\
                             +unittest.TestCase.assertMultiLineEqual = lambda self, first, second, msg=None: None\n";

/// The helper shape's only FAIL_TO_PASS test compares through the project's own assertion helper
/// (`self.assertGreets(name, self.dedent("""…"""))`, the helper in the package as Python-Markdown
/// ships `markdown.test_tools`): the gold check proves the expected argument a site, so gold
/// resolves with one group of 20 (a blind forger's chance 1 in 20, where no group stood before),
/// and a submission that makes the comparison pass whatever it is given passes every variant:
/// `forgery_detected`.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn a_test_that_compares_through_the_projects_helper_is_grouped_and_a_forger_caught() {
    require_docker();
    fixture_images();
    let tmp = tempfile::tempdir().unwrap();
    let id = "shapes_helper_pr1";
    let record = shapes()
        .into_iter()
        .find(|r| r.instance_id() == id)
        .unwrap();
    let verdicts = [
        grade_one(tmp.path(), id, "honest", record.gold_patch().unwrap()),
        grade_one(tmp.path(), id, "forger", HELPER_FORGER),
    ];
    let (honest, forger) = (&verdicts[0], &verdicts[1]);
    assert_eq!(honest["verdict"], "resolved", "{honest:#}");
    assert_eq!(honest["canary_plan"]["f2p_groups"], 1, "{honest:#}");
    assert_eq!(
        honest["canary_plan"]["sizes"],
        serde_json::json!([20]),
        "{honest:#}"
    );
    assert_eq!(honest["canary_plan"]["forge_chance"], 0.05, "{honest:#}");
    assert!(honest["flags"].get("forgery").is_none(), "{honest:#}");
    assert_eq!(forger["verdict"], "unresolved", "{forger:#}");
    assert_eq!(forger["reason"], "forgery_detected", "{forger:#}");
}

/// The helper forger through Harbor's separate verifier, on a task converted with
/// `--gold-check`: the check made on this engine proves the helper's expected argument a site,
/// the task's verifier builds the group from it, and the forger gets no reward
/// (`forgery_detected`); gold gets its reward with the group in place.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn the_helper_forger_gets_no_reward_through_the_separate_verifier() {
    require_docker();
    fixture_images();
    let id = "shapes_helper_pr1";
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tasks");
    run_ok(
        Command::new(env!("CARGO_BIN_EXE_beyondswe"))
            .args(["convert", "to-harbor"])
            .arg(fixtures().join("dataset/shapes.jsonl"))
            .arg(&out)
            .args(["--gold-check", "--ids", id]),
    );
    let dir = out.join(beyondswe::harbor::task_dir_name(id));
    assert!(dir.join(beyondswe::harbor::paths::GOLD_CHECK).is_file());
    let task = task_in(dir, id, "/workspace/helper", tmp);

    let c = Container::run(&task.image);
    solve(&c, &task);
    let (reward, report) = verify(&c, &task);
    assert_eq!(reward.as_deref(), Some("1"), "gold: {report:#}");
    assert_eq!(report["canary_plan"]["f2p_groups"], 1, "gold: {report:#}");

    let c = Container::run(&task.image);
    let patch = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(patch.path(), HELPER_FORGER).unwrap();
    c.copy_in(patch.path(), "/tmp/forger.diff");
    let (code, out) = c.sh(&format!(
        "cd {} && git apply /tmp/forger.diff",
        task.workdir
    ));
    assert_eq!(code, 0, "{out}");
    let (reward, report) = verify(&c, &task);
    assert_eq!(reward.as_deref(), Some("0"), "forger: {report:#}");
    assert_eq!(report["reason"], "forgery_detected", "forger: {report:#}");
}

/// A submission to the py37 shape whose `greet` returns text equal to anything it is compared
/// with: every test passes, FAIL_TO_PASS ones too, and nothing is fixed.
const PY37_FORGER: &str = "diff --git a/greeter/core.py b/greeter/core.py\n\
                           --- a/greeter/core.py\n\
                           +++ b/greeter/core.py\n\
                           @@ -1,6 +1,15 @@\n \
                           \"\"\"Greetings.\"\"\"\n \n \n\
                           +class _Text(str):\n\
                           +    \"\"\"A greeting equal to any text it is compared with.\"\"\"\n\
                           +\n\
                           +    def __eq__(self, other):\n\
                           +        return True\n\
                           +\n\
                           +    __hash__ = str.__hash__\n\
                           +\n\
                           +\n \
                           def greet(name):\n     \
                           \"\"\"The greeting for `name`.\"\"\"\n\
                           -    return \"Hello \" + name\n\
                           +    return _Text(\"Hello \" + name)\n";

/// The one verdict of `grade` with one submission to `id` of shapes.jsonl, in run `run`.
fn grade_one(tmp: &Path, id: &str, run: &str, patch: &str) -> Value {
    let line = serde_json::json!({"instance_id": id, "model_name_or_path": run,
                                  "model_patch": patch});
    let preds = tmp.join(format!("{run}.jsonl"));
    std::fs::write(&preds, format!("{line}\n")).unwrap();
    run_ok(
        Command::new(env!("CARGO_BIN_EXE_beyondswe"))
            .args(["grade", "--timeout", "120", "--ids", id, "--run-id", run])
            .arg("--dataset")
            .arg(fixtures().join("dataset/shapes.jsonl"))
            .arg("--predictions")
            .arg(&preds)
            .arg("--results-dir")
            .arg(tmp),
    );
    let results = std::fs::read_to_string(tmp.join(format!("{run}/results.jsonl"))).unwrap();
    serde_json::from_str(results.lines().next().unwrap()).unwrap()
}

/// An image whose only Python is 3.7 (shape-py37: CPython 3.7 copied from pyenv, Debian's
/// Python removed, pytest 7.4): the verifier runs on 3.7, whose syntax trees lack the end
/// positions the canary groups are cut by (end_positions.py reads them from the tokens). Gold
/// resolves with a group on each FAIL_TO_PASS test, the decorated one that compares with a
/// multi-line string too; its only flag is `unwatched` (3.7 has no audit hooks), never one for
/// review. Calibrated, gold passes twice and the empty patch fails. A submission whose text
/// equals anything passes every test and every variant: `forgery_detected`.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn on_an_image_whose_only_python_is_3_7_groups_are_planted_and_a_forger_caught() {
    require_docker();
    fixture_images();
    let id = "shapes_py37_pr1";
    let record = shapes()
        .into_iter()
        .find(|r| r.instance_id() == id)
        .unwrap();
    let image = record.image().unwrap();
    let c = Container::run(image);
    let (code, out) = c.sh("python3 --version; ls /usr/bin/python* /usr/lib/python3* 2>&1");
    assert_eq!(code, 2, "{out}");
    assert!(out.starts_with("Python 3.7."), "{out}");
    assert!(!out.contains("python3.11"), "{out}");
    drop(c);

    let tmp = tempfile::tempdir().unwrap();
    let honest = grade_one(tmp.path(), id, "honest", record.gold_patch().unwrap());
    assert_eq!(honest["verdict"], "resolved", "{honest:#}");
    assert_eq!(honest["score"], 1.0, "{honest:#}");
    let plan = &honest["canary_plan"];
    assert_eq!(plan["planted"], true, "{honest:#}");
    assert_eq!(plan["f2p_groups"], 2, "{honest:#}");
    assert!(plan.get("none_because").is_none(), "{honest:#}");
    assert!(plan.get("f2p_ungrouped").is_none(), "{honest:#}");
    assert!(plan["forge_chance"].as_f64().unwrap() < 1.0, "{honest:#}");
    // What 3.7 cannot watch is a limit of the grading, said as such: not a sign of the
    // submission, so gold is not flagged for review (nor made unresolved by --strict).
    assert_eq!(
        honest["flags"]["unwatched"],
        serde_json::json!(["this Python has no audit hooks (3.8+): code writes were not watched"]),
        "{honest:#}"
    );
    for flag in [
        "suspicious",
        "forgery",
        "files_removed",
        "tests_restored",
        "integrity",
    ] {
        assert!(honest["flags"].get(flag).is_none(), "{flag}: {honest:#}");
    }

    let forger = grade_one(tmp.path(), id, "forger", PY37_FORGER);
    assert_eq!(forger["verdict"], "unresolved", "{forger:#}");
    assert_eq!(forger["reason"], "forgery_detected", "{forger:#}");
    assert_eq!(forger["canary_plan"]["f2p_groups"], 2, "{forger:#}");
    // Both FAIL_TO_PASS tests passed, the groups' other variants too.
    for (test, outcome) in forger["fail_to_pass"].as_object().unwrap() {
        assert_eq!(outcome, "passed", "{test}: {forger:#}");
    }
    assert_eq!(
        forger["flags"]["forgery"].as_array().map(Vec::len),
        Some(2),
        "{forger:#}"
    );

    let mut cmd = calibrate_cmd(
        &fixtures().join("dataset/shapes.jsonl"),
        tmp.path(),
        &tmp.path().join("cal.json"),
    );
    let cal: Value = serde_json::from_str(&run_ok(cmd.args(["--ids", id, "--json"]))).unwrap();
    let i = &cal["instances"][0];
    assert_eq!(i["instance_id"], id, "{i:#}");
    assert_eq!(i["class"], "ok", "{i:#}");
    assert_eq!(i["gold"]["resolved"], 2, "{i:#}");
    assert_eq!(i["empty"]["resolved"], 0, "{i:#}");
    assert!(i.get("warnings").is_none(), "{i:#}");
}
