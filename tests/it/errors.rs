//! What a person sees when a command fails: the stderr and exit code of the main error paths,
//! snapshotted (insta, temporary and repository paths redacted), so that no cause is printed
//! twice and every failure keeps its exit code (1 bad input, 2 usage, 3 infrastructure).

use super::support::{fixtures, repo_root};
use std::path::Path;
use std::process::Command;

/// Runs the binary in `dir` and returns `exit: N` and its stderr, paths redacted.
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_beyondswe"));
    cmd.args(args).current_dir(dir).env_remove("BEYONDSWE_LOG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr)
        .replace(&dir.display().to_string(), "[TMP]")
        .replace(&repo_root().display().to_string(), "[REPO]");
    format!("exit: {}\n{stderr}", out.status.code().unwrap_or(-1))
}

fn snapshot(name: &str, text: String) {
    insta::with_settings!({prepend_module_to_snapshot => true, omit_expression => true}, {
        insta::assert_snapshot!(name, text);
    });
}

/// A snapshot name, the arguments, and environment variables to set.
type Case<'a> = (&'a str, Vec<&'a str>, Vec<(&'a str, &'a str)>);

/// An engine that is not there: the socket does not exist.
const NO_ENGINE: (&str, &str) = ("DOCKER_HOST", "unix:///nonexistent/docker.sock");

#[test]
fn error_paths_print_each_cause_once_with_their_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bad.jsonl"), "{\"instance_id\": 5}\n").unwrap();
    std::fs::write(d.join("notes.txt"), "I fixed it\n").unwrap();
    std::fs::write(d.join("empty.diff"), "").unwrap();
    std::fs::create_dir_all(d.join("ctx")).unwrap();
    std::fs::write(d.join("ctx/Dockerfile"), "FROM scratch\n").unwrap();
    let variants = fixtures().join("dataset/variants.jsonl");
    let variants = variants.to_str().unwrap();
    let fixtures_jsonl = fixtures().join("dataset/fixtures.jsonl");
    let fixtures_jsonl = fixtures_jsonl.to_str().unwrap();
    let cases: Vec<Case> = vec![
        (
            "grade_one_instance_in_the_wrong_case",
            vec![
                "grade-one",
                "--dataset",
                fixtures_jsonl,
                "--instance",
                "ACME_CALC_PR7",
                "--patch",
                "empty.diff",
            ],
            vec![],
        ),
        (
            "grade_run_id_outside_results_dir",
            vec![
                "grade",
                "--dataset",
                variants,
                "--gold",
                "--run-id",
                "../elsewhere",
            ],
            vec![],
        ),
        (
            "release_from_a_missing_jobs_dir",
            vec!["release", "from-harbor", "missing-jobs", "-o", "r.jsonl"],
            vec![],
        ),
        (
            "validate_missing_dataset",
            vec!["validate", "missing.jsonl"],
            vec![],
        ),
        (
            "to_harbor_missing_dataset",
            vec!["convert", "to-harbor", "missing.jsonl", "out"],
            vec![],
        ),
        (
            "to_harbor_bad_field",
            vec!["convert", "to-harbor", "bad.jsonl", "out"],
            vec![],
        ),
        (
            "from_harbor_missing_dir",
            vec!["convert", "from-harbor", "missing", "back.jsonl"],
            vec![],
        ),
        (
            "grade_one_missing_dataset",
            vec![
                "grade-one",
                "--dataset",
                "missing.jsonl",
                "--instance",
                "x",
                "--patch",
                "notes.txt",
            ],
            vec![],
        ),
        (
            "grade_one_unknown_instance",
            vec![
                "grade-one",
                "--dataset",
                variants,
                "--instance",
                "nope_nope_pr1",
                "--patch",
                "notes.txt",
            ],
            vec![],
        ),
        (
            "grade_one_not_a_diff",
            vec![
                "grade-one",
                "--dataset",
                variants,
                "--instance",
                "acme_widget_pr12",
                "--patch",
                "notes.txt",
            ],
            vec![],
        ),
        (
            "grade_one_no_engine",
            vec![
                "grade-one",
                "--dataset",
                variants,
                "--instance",
                "acme_widget_pr12",
                "--patch",
                "empty.diff",
            ],
            vec![NO_ENGINE],
        ),
        (
            "grade_one_patch_not_a_file",
            vec![
                "grade-one",
                "--dataset",
                variants,
                "--instance",
                "acme_widget_pr12",
                "--patch",
                "/dev/zero",
            ],
            vec![],
        ),
        (
            "grade_no_engine",
            vec![
                "grade",
                "--dataset",
                variants,
                "--empty",
                "--run-id",
                "r",
                "--results-dir",
                "runs",
            ],
            vec![NO_ENGINE],
        ),
        (
            "image_build_no_engine",
            vec!["image", "build", "ctx", "--tag", "beyondswe-test/never:1"],
            vec![NO_ENGINE],
        ),
        (
            "image_build_bad_label",
            vec![
                "image", "build", "ctx", "--tag", "x:1", "--label", "novalue",
            ],
            vec![],
        ),
        ("report_missing_run", vec!["report", "missing-run"], vec![]),
        (
            "audit_missing_release",
            vec!["audit", "missing.jsonl"],
            vec![],
        ),
        (
            "trajectory_validate_no_files",
            vec!["trajectory", "validate"],
            vec![],
        ),
        ("unknown_flag", vec!["validate", "--no-such-flag"], vec![]),
    ];
    for (name, args, env) in cases {
        snapshot(name, run(d, &args, &env));
    }
}

/// `-v` prints the tracing events it promises on stderr (here: reading the dataset, and, with
/// `-vv`, the records), before the missing engine ends the run.
#[test]
fn verbose_prints_tracing_events() {
    let dir = tempfile::tempdir().unwrap();
    let variants = fixtures().join("dataset/variants.jsonl");
    let args = |v: &str| {
        vec![
            v.to_owned(),
            "grade".into(),
            "--dataset".into(),
            variants.display().to_string(),
            "--empty".into(),
            "--run-id".into(),
            "r".into(),
            "--results-dir".into(),
            "runs".into(),
        ]
    };
    let run = |v: &str| {
        Command::new(env!("CARGO_BIN_EXE_beyondswe"))
            .args(args(v))
            .current_dir(dir.path())
            .env_remove("BEYONDSWE_LOG")
            .env(NO_ENGINE.0, NO_ENGINE.1)
            .output()
            .unwrap()
    };
    let quiet = run("-q");
    let quiet_err = String::from_utf8_lossy(&quiet.stderr);
    assert!(!quiet_err.contains("INFO"), "{quiet_err}");
    // -q: the error and its hint, nothing else (no notes, no progress, no warnings).
    assert!(quiet_err.starts_with("error:"), "{quiet_err}");
    for line in quiet_err.lines().filter(|l| !l.starts_with(' ')) {
        assert!(
            line.starts_with("error") || line.starts_with("hint:"),
            "{quiet_err}"
        );
    }
    let info = run("-v");
    let info_err = String::from_utf8_lossy(&info.stderr);
    assert_eq!(info.status.code(), Some(3), "{info_err}");
    assert!(
        info_err.contains("INFO")
            && info_err.contains("dataset read")
            && info_err.contains("instances=6"),
        "{info_err}"
    );
    // The engine is down: the run stops before its store (and its directory) is made.
    assert!(!info_err.contains("results store opened"), "{info_err}");
    assert!(!info_err.contains("DEBUG"), "{info_err}");
    let debug = run("-vv");
    let debug_err = String::from_utf8_lossy(&debug.stderr);
    assert!(
        debug_err.contains("DEBUG") && debug_err.contains("reading records"),
        "{debug_err}"
    );
    // Not a terminal: no colour codes.
    assert!(!debug_err.contains('\u{1b}'), "{debug_err}");
}
