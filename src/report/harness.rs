//! The SWE-bench harness's per-instance layout, written beside this grader's own: for each issue
//! grading, `<run>/<model>/<instance>/` holds `report.json` (the harness's keys:
//! `patch_is_None`, `patch_exists`, `patch_successfully_applied`, `resolved` and `tests_status`
//! with `FAIL_TO_PASS`, `PASS_TO_PASS`, `FAIL_TO_FAIL`, `PASS_TO_FAIL`, each split into `success`
//! and `failure`), `patch.diff` (the patch as submitted), `test_output.txt` and
//! `run_instance.log`. The model directory is the model's name with `/` as `__`, as the harness
//! names it. Doc2Repo gradings have no counterpart in the harness and are not written here.

use super::store::{StoreError, Stored, write_atomic};
use crate::grade::{Reason, TestOutcome};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The harness's `report.json` of one grading: `{instance_id: {…}}`.
pub fn harness_report(stored: &Stored) -> Value {
    let v = &stored.verdict;
    let split = |tests: &BTreeMap<String, TestOutcome>| {
        let (mut success, mut failure) = (Vec::new(), Vec::new());
        for (id, outcome) in tests {
            if *outcome == TestOutcome::Passed {
                success.push(id);
            } else {
                failure.push(id);
            }
        }
        json!({"success": success, "failure": failure})
    };
    let empty = json!({"success": [], "failure": []});
    let patch_exists = v.reason != Reason::EmptyPatch;
    let applied = patch_exists
        && !matches!(
            v.reason,
            Reason::PatchFailed
                | Reason::ImageMissing
                | Reason::EngineUnreachable
                | Reason::F2pPatchFailed
                | Reason::PrepareFailed
                | Reason::SandboxFailed
                | Reason::HistoryLeak
                | Reason::NoTestIds
                | Reason::GraderFailed
        );
    let mut body = json!({
        // An empty submission (a null or empty patch) is the harness's `None`.
        "patch_is_None": !patch_exists,
        "patch_exists": patch_exists,
        "patch_successfully_applied": applied,
        "resolved": v.verdict == crate::grade::Outcome::Resolved,
    });
    if applied {
        body["tests_status"] = json!({
            "FAIL_TO_PASS": split(&v.fail_to_pass),
            "PASS_TO_PASS": split(&v.pass_to_pass),
            "FAIL_TO_FAIL": empty.clone(),
            "PASS_TO_FAIL": empty,
        });
    }
    json!({ v.instance_id.clone(): body })
}

/// Whether the grading ran as the harness's evaluations run: not an error, and not an empty
/// patch refused before any test ran.
fn evaluation_completed(stored: &Stored) -> bool {
    let v = &stored.verdict;
    v.verdict != crate::grade::Outcome::Error
        && !(v.reason == Reason::EmptyPatch
            && v.fail_to_pass.is_empty()
            && v.pass_to_pass.is_empty())
}

/// The names a run directory holds of its own, which a model's directory must not take.
const RUN_DIR_NAMES: [&str; 11] = [
    "instances",
    "patches",
    "gold",
    "empty",
    "run.json",
    "results.jsonl",
    "report.json",
    "swebench_report.json",
    "report.html",
    "lock.json",
    super::ACCEPTED_FILE,
];

/// The harness's directory name of a model: `/` as `__`, made one safe path component; a name
/// the run directory uses itself (`instances`, `report.json`, …) gets `__model` after it.
pub fn model_dir_name(model: &str) -> String {
    let name = crate::files::safe_name(&model.replace('/', "__"));
    if name.is_empty() {
        return "unknown_model".to_owned();
    }
    if RUN_DIR_NAMES.contains(&name.as_str()) {
        return format!("{name}__model");
    }
    name
}

/// Writes one grading's harness files under `run_dir`; `patch` is the submitted patch (`None`
/// for a submission that was not a patch). Nothing for Doc2Repo. Returns the directory written.
pub fn write_harness_files(
    run_dir: &Path,
    stored: &Stored,
    patch: Option<&[u8]>,
) -> Result<Option<PathBuf>, StoreError> {
    if !stored.verdict.family.is_issue_task() {
        return Ok(None);
    }
    let dir = run_dir
        .join(model_dir_name(&stored.model_name_or_path))
        .join(crate::files::safe_name(&stored.label()));
    fs_err::create_dir_all(&dir)
        .map_err(|source| StoreError::Io(crate::errors::PathError::new(dir.clone(), source)))?;
    // The harness counts a present report.json as a completed evaluation: none for an error
    // (the infrastructure's failure, graded again on a resume) or for an empty patch that no
    // test ran for (its `empty_patch_ids`). The logs are written either way.
    let report_path = dir.join("report.json");
    if evaluation_completed(stored) {
        let report = serde_json::to_vec_pretty(&harness_report(stored)).unwrap_or_default();
        write_atomic(&report_path, &report)?;
    } else {
        let _ = fs_err::remove_file(&report_path);
    }
    let logs = &stored.verdict.logs;
    let run_log = [&logs.prepare, &logs.apply, &logs.error]
        .iter()
        .filter(|t| !t.is_empty())
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    for (name, bytes) in [
        ("patch.diff", patch),
        ("test_output.txt", Some(logs.test_output.as_bytes())),
        ("run_instance.log", Some(run_log.as_bytes())),
    ] {
        let p = dir.join(name);
        match bytes {
            Some(b) => write_atomic(&p, b)?,
            None => {
                let _ = fs_err::remove_file(&p);
            }
        }
    }
    Ok(Some(dir))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::grade::{Outcome, Verdict};
    use crate::record::Family;

    fn stored(reason: Reason, outcome: Outcome, family: Family) -> Stored {
        let mut v = Verdict::new("acme_calc_pr7", family);
        v.verdict = outcome;
        v.reason = reason;
        v.fail_to_pass = [("t.py::a".to_owned(), TestOutcome::Passed)].into();
        v.pass_to_pass = [
            ("t.py::b".to_owned(), TestOutcome::Failed),
            ("t.py::c".to_owned(), TestOutcome::Passed),
        ]
        .into();
        v.logs.test_output = "1 failed".into();
        v.logs.prepare = "checked out".into();
        Stored {
            grader_version: String::new(),
            key: "k".into(),
            attempt: 1,
            model_name_or_path: "org/model-4.1".into(),
            claimed_reward: None,
            verdict: v,
        }
    }

    #[test]
    fn the_report_has_the_harness_keys() {
        let r = harness_report(&stored(
            Reason::TestsFailed,
            Outcome::Unresolved,
            Family::CrossRepo,
        ));
        assert_eq!(
            r,
            json!({"acme_calc_pr7": {
            "patch_is_None": false, "patch_exists": true, "patch_successfully_applied": true,
            "resolved": false,
            "tests_status": {
                "FAIL_TO_PASS": {"success": ["t.py::a"], "failure": []},
                "PASS_TO_PASS": {"success": ["t.py::c"], "failure": ["t.py::b"]},
                "FAIL_TO_FAIL": {"success": [], "failure": []},
                "PASS_TO_FAIL": {"success": [], "failure": []},
            }}})
        );
        let r = harness_report(&stored(
            Reason::PatchFailed,
            Outcome::Unresolved,
            Family::CrossRepo,
        ));
        assert_eq!(r["acme_calc_pr7"]["patch_successfully_applied"], false);
        assert!(r["acme_calc_pr7"].get("tests_status").is_none());
        let r = harness_report(&stored(
            Reason::EmptyPatch,
            Outcome::Unresolved,
            Family::DomainFix,
        ));
        assert_eq!(r["acme_calc_pr7"]["patch_exists"], false);
        assert_eq!(r["acme_calc_pr7"]["patch_is_None"], true);
    }

    /// SWE-bench's tools count a present report.json as a completed evaluation: an error and an
    /// empty patch no test ran for get none (and lose one an earlier grading left), but their
    /// logs.
    #[test]
    fn only_a_completed_evaluation_has_a_report() {
        let tmp = tempfile::tempdir().unwrap();
        let done = stored(Reason::TestsFailed, Outcome::Unresolved, Family::CrossRepo);
        let dir = write_harness_files(tmp.path(), &done, Some(b"x"))
            .unwrap()
            .unwrap();
        assert!(dir.join("report.json").is_file());
        for (reason, outcome) in [
            (Reason::SandboxFailed, Outcome::Error),
            (Reason::EmptyPatch, Outcome::Unresolved),
        ] {
            let mut s = stored(reason, outcome, Family::CrossRepo);
            s.verdict.fail_to_pass.clear();
            s.verdict.pass_to_pass.clear();
            write_harness_files(tmp.path(), &s, None).unwrap();
            assert!(!dir.join("report.json").exists(), "{reason:?}");
            assert!(dir.join("run_instance.log").is_file());
            write_harness_files(tmp.path(), &done, Some(b"x")).unwrap();
        }
    }

    #[test]
    fn files_go_under_the_model_and_instance() {
        let tmp = tempfile::tempdir().unwrap();
        let s = stored(
            Reason::AllTestsPassed,
            Outcome::Resolved,
            Family::DepMigrate,
        );
        let dir = write_harness_files(tmp.path(), &s, Some(b"diff --git a/x b/x\n"))
            .unwrap()
            .unwrap();
        assert_eq!(dir, tmp.path().join("org__model-4.1/acme_calc_pr7"));
        assert_eq!(
            fs_err::read(dir.join("patch.diff")).unwrap(),
            b"diff --git a/x b/x\n"
        );
        assert_eq!(
            fs_err::read_to_string(dir.join("test_output.txt")).unwrap(),
            "1 failed"
        );
        assert_eq!(
            fs_err::read_to_string(dir.join("run_instance.log")).unwrap(),
            "checked out"
        );
        let r: Value =
            serde_json::from_slice(&fs_err::read(dir.join("report.json")).unwrap()).unwrap();
        assert_eq!(r["acme_calc_pr7"]["resolved"], true);
        // Doc2Repo has no harness counterpart.
        let d = stored(Reason::AllTestsPassed, Outcome::Resolved, Family::Doc2Repo);
        assert_eq!(write_harness_files(tmp.path(), &d, None).unwrap(), None);
    }

    #[test]
    fn a_model_never_takes_a_name_of_the_run_directory() {
        assert_eq!(model_dir_name("instances"), "instances__model");
        assert_eq!(model_dir_name("report.json"), "report.json__model");
        assert!(model_dir_name("../../etc").starts_with("__..__etc-"));
        assert_eq!(model_dir_name(".."), "unknown_model");
        assert_eq!(model_dir_name(""), "unknown_model");
        assert_eq!(model_dir_name("org/model"), "org__model");
    }
}
