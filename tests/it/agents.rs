//! Agent outputs: every format from file to graded verdict on the fixture instances, and the odd
//! cases (CRLF and non-UTF-8 patches, an empty patch, a truncated line, an errored trial, a
//! misleading trial directory name, a transcript without a patch, an unknown format).

use super::support::{copy_dir, fixture_images, fixtures, require_docker};
use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn agents(rel: &str) -> std::path::PathBuf {
    fixtures().join("agents").join(rel)
}

fn ingest(path: &Path) -> (Vec<Value>, String, i32) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.jsonl");
    let assert = cargo_bin_cmd!("beyondswe")
        .arg("ingest")
        .arg(path)
        .arg("--dataset")
        .arg(fixtures().join("dataset/fixtures.jsonl"))
        .arg("-o")
        .arg(&out)
        .assert();
    let output = assert.get_output();
    let lines = std::fs::read_to_string(&out)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (
        lines,
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.code().unwrap_or(-1),
    )
}

#[test]
fn every_format_is_read_into_predictions() {
    let gold: BTreeMap<String, String> =
        std::fs::read_to_string(fixtures().join("dataset/fixtures.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter_map(|v| {
                Some((
                    v["instance_id"].as_str()?.to_owned(),
                    v["patch"].as_str()?.to_owned(),
                ))
            })
            .collect();
    for (rel, format, n) in [
        ("predictions/preds.jsonl", "predictions", 2),
        ("predictions/preds_list.json", "predictions", 2),
        ("predictions/preds_dict.json", "predictions", 2),
        ("swe-agent", "swe-agent", 2),
        ("swe-agent/acme_calc_pr7/acme_calc_pr7.traj", "swe-agent", 1),
        ("mini-swe-agent", "mini-swe-agent", 2),
        ("aweagent", "aweagent", 2),
        ("openhands", "openhands", 2),
        ("codex", "codex", 1),
        ("claude-code", "claude-code", 1),
        ("harbor-job", "harbor-job", 3),
    ] {
        let (lines, stderr, _) = ingest(&agents(rel));
        assert_eq!(lines.len(), n, "{rel}: {stderr}");
        for l in &lines {
            assert_eq!(l["source_format"], format, "{rel}");
            let id = l["instance_id"].as_str().unwrap();
            if let Some(p) = l["model_patch"].as_str()
                && format != "harbor-job"
                && !p.is_empty()
            {
                assert_eq!(p.replace("\r\n", "\n"), gold[id], "{rel}: {id}");
            }
        }
    }
}

#[test]
fn odd_cases_are_reported_and_the_good_records_kept() {
    // A truncated last line: reported with its line number, the other lines ingested.
    let (lines, stderr, code) = ingest(&agents("openhands"));
    assert_eq!(code, 1);
    assert!(stderr.contains("output.jsonl:3: skipped"), "{stderr}");
    assert_eq!(lines.len(), 2);
    assert!(
        lines
            .iter()
            .any(|l| l["model_patch"] == "" && l["note"].as_str().unwrap().contains("stuck"))
    );
    assert!(
        lines
            .iter()
            .any(|l| l["note"].as_str().is_some_and(|n| n.contains("CRLF")))
    );

    // Claude Code: a transcript without a captured diff is named.
    let (_, stderr, _) = ingest(&agents("claude-code"));
    assert!(
        stderr.contains("transcript but no patch") && stderr.contains("acme_textkit_pr12"),
        "{stderr}"
    );

    // Harbor: the task comes from result.json, not the directory name; attempts are numbered;
    // the errored trial is named; a non-UTF-8 patch travels as base64; rewards are kept.
    let (lines, stderr, _) = ingest(&agents("harbor-job"));
    assert!(stderr.contains("AgentTimeoutError"), "{stderr}");
    let weird = lines
        .iter()
        .find(|l| {
            l["source_path"]
                .as_str()
                .unwrap()
                .ends_with("weird_dir_name__Zz1Yy2x")
        })
        .unwrap();
    assert_eq!(weird["instance_id"], "acme_textkit_pr12");
    let second = lines
        .iter()
        .find(|l| l["instance_id"] == "acme_calc_pr7" && l["attempt"] == 2)
        .unwrap();
    assert!(
        second.get("model_patch_base64").is_some() && second["reward"] == 0.0,
        "{second}"
    );
    let first = lines
        .iter()
        .find(|l| l["instance_id"] == "acme_calc_pr7" && l["attempt"] == 1)
        .unwrap();
    assert_eq!(first["reward"], 1.0);
    assert_eq!(
        first["model_name_or_path"],
        "claude-code/anthropic/claude-x"
    );

    // Unknown or ambiguous input: every format tried, and why it did not match.
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("notes.json");
    std::fs::write(&junk, "{\"hello\": \"world\"}").unwrap();
    cargo_bin_cmd!("beyondswe")
        .arg("ingest")
        .arg(&junk)
        .arg("-o")
        .arg(dir.path().join("o.jsonl"))
        .assert()
        .code(1)
        .stderr(contains("not a format beyondswe reads"))
        .stderr(contains("openhands: first record has no `test_result`"))
        .stderr(contains("predictions:"));
    // Ids not in the dataset are warned about.
    let preds = dir.path().join("p.jsonl");
    std::fs::write(
        &preds,
        "{\"instance_id\":\"ghost_repo_pr1\",\"model_patch\":\"\"}\n",
    )
    .unwrap();
    let (_, stderr, _) = ingest(&preds);
    assert!(
        stderr.contains("not in the dataset: ghost_repo_pr1"),
        "{stderr}"
    );
}

/// From each format's files to graded verdicts, through `grade --predictions` (auto-detected).
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn every_format_grades_to_the_expected_verdicts() {
    require_docker();
    fixture_images();
    let dir = tempfile::tempdir().unwrap();
    // The OpenHands fixture holds a cut line: named, the rest graded, and exit 1 for it.
    let grade = |rel: &str, run: &str| -> BTreeMap<(String, u64), (String, String)> {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_beyondswe"))
            .args(["grade", "--jobs", "2", "--run-id", run, "--dataset"])
            .arg(fixtures().join("dataset/fixtures.jsonl"))
            .arg("--results-dir")
            .arg(dir.path())
            .arg("--predictions")
            .arg(agents(rel))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if rel == "openhands" {
            assert_eq!(out.status.code(), Some(1), "{rel}: {stderr}");
            assert!(stderr.contains("output.jsonl:3"), "{rel}: {stderr}");
        } else {
            assert!(out.status.success(), "{rel}: {stderr}");
        }
        std::fs::read_to_string(dir.path().join(run).join("results.jsonl"))
            .unwrap()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (
                    (
                        v["instance_id"].as_str().unwrap().to_owned(),
                        v["attempt"].as_u64().unwrap(),
                    ),
                    (
                        v["verdict"].as_str().unwrap().to_owned(),
                        v["reason"].as_str().unwrap().to_owned(),
                    ),
                )
            })
            .collect()
    };
    let both_gold = |r: &BTreeMap<(String, u64), (String, String)>| {
        r.get(&("acme_calc_pr7".into(), 1)).map(|v| v.0.as_str()) == Some("resolved")
            && r.get(&("acme_textkit_pr12".into(), 1))
                .map(|v| v.0.as_str())
                == Some("resolved")
    };
    for (rel, run) in [
        ("predictions/preds_list.json", "preds"),
        ("swe-agent", "swe"),
        ("mini-swe-agent", "mini"),
        ("aweagent", "awe"),
    ] {
        let r = grade(rel, run);
        assert!(both_gold(&r), "{rel}: {r:?}");
    }
    let r = grade("openhands", "oh");
    assert_eq!(
        r[&("acme_calc_pr7".into(), 1)].0,
        "resolved",
        "a CRLF patch: {r:?}"
    );
    assert_eq!(r[&("acme_textkit_pr12".into(), 1)].1, "empty_patch");
    for (rel, run) in [("claude-code", "cc"), ("codex", "cx")] {
        let r = grade(rel, run);
        assert_eq!(r.len(), 1, "{rel}");
        assert_eq!(r[&("acme_calc_pr7".into(), 1)].0, "resolved", "{rel}");
    }
    let r = grade("harbor-job", "hb");
    assert_eq!(r[&("acme_calc_pr7".into(), 1)].0, "resolved");
    assert_eq!(
        r[&("acme_calc_pr7".into(), 2)],
        ("unresolved".into(), "tests_failed".into()),
        "non-UTF-8 half fix"
    );
    assert_eq!(r[&("acme_textkit_pr12".into(), 2)].0, "resolved");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("hb/report.json")).unwrap())
            .unwrap();
    let cross = report["families"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["family"] == "CrossRepo")
        .unwrap();
    assert_eq!(
        (
            cross["score"].as_f64(),
            cross["pass_at_k"].as_f64(),
            cross["attempts"].as_u64()
        ),
        (Some(50.0), Some(100.0), Some(2))
    );
}

/// A path that is not there is named as missing, not as an unknown format.
#[test]
fn a_missing_path_is_named_as_missing() {
    let dir = tempfile::tempdir().unwrap();
    cargo_bin_cmd!("beyondswe")
        .arg("ingest")
        .arg(dir.path().join("no-such-run.jsonl"))
        .arg("-o")
        .arg(dir.path().join("o.jsonl"))
        .assert()
        .code(1)
        .stderr(contains("no-such-run.jsonl: no such file or directory"))
        .stderr(contains("not a format").not());
}

/// A trial whose `artifacts/patch.diff` is a link to a file outside the job: the host file never
/// reaches the predictions (nor a release), and the link is reported. A link that stays inside
/// the trial is still followed.
#[test]
fn links_out_of_a_harbor_job_are_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("jobs");
    copy_dir(&agents("harbor-job"), &job);
    let host = dir.path().join("host-secret.txt");
    std::fs::write(&host, "HOST SECRET: not an agent's patch\n").unwrap();
    let trial = job.join("2026-03-25__10-00-00/acme_calc_pr7__a8Kp2Qz/artifacts");
    std::fs::remove_file(trial.join("patch.diff")).unwrap();
    std::os::unix::fs::symlink(&host, trial.join("patch.diff")).unwrap();
    // Inside the trial: followed.
    let weird = job.join("2026-03-25__10-00-00/weird_dir_name__Zz1Yy2x/artifacts");
    std::fs::rename(weird.join("patch.diff"), weird.join("real.txt")).unwrap();
    std::os::unix::fs::symlink("real.txt", weird.join("patch.diff")).unwrap();

    let (lines, stderr, _) = ingest(&job);
    let text = lines
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!text.contains("HOST SECRET"), "{text}");
    assert!(
        stderr.contains("patch.diff: leads out of the trial directory"),
        "{stderr}"
    );
    let textkit = lines
        .iter()
        .find(|l| l["instance_id"] == "acme_textkit_pr12" && l.get("model_patch").is_some())
        .expect("the link inside the trial is followed");
    assert!(
        textkit["model_patch"]
            .as_str()
            .unwrap()
            .contains("make_slug")
    );

    let release = dir.path().join("release.jsonl");
    cargo_bin_cmd!("beyondswe")
        .args(["release", "from-harbor"])
        .arg(&job)
        .arg("-o")
        .arg(&release)
        .assert()
        .success()
        .stdout(contains("HOST SECRET").not());
    assert!(
        !std::fs::read_to_string(&release)
            .unwrap()
            .contains("HOST SECRET")
    );
}

/// `release from-harbor` reads a trial's patch within `--max-patch-mb`, as the grading commands
/// do: a patch over the limit stops it with an error naming the file; a raised limit reads it.
#[test]
fn release_and_ingest_read_patches_within_max_patch_mb() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("jobs");
    copy_dir(&agents("harbor-job"), &job);
    let patch = job.join("2026-03-25__10-00-00/acme_calc_pr7__a8Kp2Qz/artifacts/patch.diff");
    let mut text = String::from("--- a/x\n+++ b/x\n@@ -1 +1,30000 @@\n-x\n");
    text.push_str(&"+yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n".repeat(30_000));
    std::fs::write(&patch, &text).unwrap();
    let release = dir.path().join("release.jsonl");
    let from_harbor = |mb: &str| {
        let mut cmd = cargo_bin_cmd!("beyondswe");
        cmd.args(["release", "from-harbor", "--max-patch-mb", mb])
            .arg(&job)
            .arg("-o")
            .arg(&release);
        cmd
    };
    from_harbor("1")
        .assert()
        .code(1)
        .stderr(contains(patch.display().to_string()))
        .stderr(contains("larger than the limit of 1 MiB"))
        .stderr(contains("--max-patch-mb"));
    from_harbor("2").assert().success();
    let carried = std::fs::read_to_string(&release)
        .unwrap()
        .lines()
        .any(|l| serde_json::from_str::<Value>(l).unwrap()["patch"] == text.as_str());
    assert!(
        carried,
        "the patch under the raised limit is in the release"
    );
    // `ingest` reads the same trial's patch within the same option.
    let preds = dir.path().join("preds.jsonl");
    let ingest = |mb: &str| {
        let mut cmd = cargo_bin_cmd!("beyondswe");
        cmd.args(["ingest", "--max-patch-mb", mb])
            .arg(&job)
            .arg("-o")
            .arg(&preds);
        cmd
    };
    let refused = ingest("1").assert();
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        stderr.contains(&patch.display().to_string()) && stderr.contains("--max-patch-mb"),
        "{stderr}"
    );
    ingest("2").assert().success();
    let ingested = std::fs::read_to_string(&preds)
        .unwrap()
        .lines()
        .any(|l| serde_json::from_str::<Value>(l).unwrap()["model_patch"] == text.as_str());
    assert!(ingested, "the patch under the raised limit is ingested");
}

#[test]
fn ingest_reads_patch_files_up_to_the_cap_it_is_given() {
    use beyondswe::submission::{IngestOptions, ingest_with};
    // Captured diffs beside transcripts, and Harbor trials' artifacts: the cap is set at the
    // largest patch file there, then one byte under it.
    for dir in [agents("claude-code"), agents("harbor-job")] {
        let size = walkdir::WalkDir::new(&dir)
            .into_iter()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".diff"))
            .map(|e| e.metadata().unwrap().len())
            .max()
            .unwrap();
        let opts = |max| IngestOptions {
            max_patch_bytes: Some(max),
            ..IngestOptions::default()
        };
        let err = ingest_with(&dir, &opts(size - 1)).expect_err("one byte over the cap");
        let text = err.to_string();
        assert!(text.contains(".diff"), "{text}");
        assert!(
            text.contains(&format!("the limit of {} bytes", size - 1)),
            "{text}"
        );
        // At the cap: read, and the same as with the default cap, which these files are far under.
        let patches = |ing: beyondswe::submission::Ingest| {
            ing.items
                .iter()
                .map(|i| i.patch().map(<[u8]>::to_vec))
                .collect::<Vec<_>>()
        };
        let at_cap = patches(ingest_with(&dir, &opts(size)).expect("exactly the cap is read"));
        assert!(at_cap.iter().any(Option::is_some));
        assert_eq!(
            at_cap,
            patches(ingest_with(&dir, &IngestOptions::default()).unwrap())
        );
    }
}

/// Every prediction carries a model name: a SWE-agent or mini-swe-agent trajectory without a
/// `preds.json` beside it names its model in its own configuration (SWE-agent 1.x's
/// `replay_config`, mini-swe-agent's `info.config.model.model_name`); one that names none is
/// recorded as `<agent>/unknown`, with a warning.
#[test]
fn every_prediction_carries_a_model_name() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = |from: &str, to: &str, edit: &dyn Fn(&mut Value)| {
        let mut v: Value =
            serde_json::from_str(&std::fs::read_to_string(agents(from)).unwrap()).unwrap();
        edit(&mut v);
        let p = tmp.path().join(to);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, v.to_string()).unwrap();
        p
    };
    let swe = copy(
        "swe-agent/acme_calc_pr7/acme_calc_pr7.traj",
        "swe/acme_calc_pr7.traj",
        &|v| {
            v["replay_config"] = Value::String(
                serde_json::json!({"agent": {"model": {"name": "claude-sonnet-4"}}}).to_string(),
            );
        },
    );
    let (lines, stderr, _) = ingest(&swe);
    assert_eq!(
        lines[0]["model_name_or_path"], "claude-sonnet-4",
        "{stderr}"
    );
    assert!(!stderr.contains("no model name"), "{stderr}");

    let mini = copy(
        "mini-swe-agent/acme_calc_pr7/acme_calc_pr7.traj.json",
        "mini/acme_calc_pr7.traj.json",
        &|v| v["info"]["config"] = serde_json::json!({"model": {"model_name": "openai/gpt-5"}}),
    );
    let (lines, stderr, _) = ingest(&mini);
    assert_eq!(lines[0]["model_name_or_path"], "openai/gpt-5", "{stderr}");

    let bare = copy(
        "swe-agent/acme_calc_pr7/acme_calc_pr7.traj",
        "bare/acme_calc_pr7.traj",
        &|_| {},
    );
    let (lines, stderr, code) = ingest(&bare);
    assert_eq!(
        lines[0]["model_name_or_path"], "swe-agent/unknown",
        "{stderr}"
    );
    assert_eq!(
        code, 0,
        "a missing model name is a warning, not a fault: {stderr}"
    );
    assert!(
        stderr.contains("acme_calc_pr7: no model name in the output or its preds.json; recorded as `swe-agent/unknown`"),
        "{stderr}"
    );

    // SWE-agent 0.x wrote `all_preds.jsonl` beside its trajectories, naming the run there.
    let old = copy(
        "swe-agent/acme_calc_pr7/acme_calc_pr7.traj",
        "old/gpt4__dev__default/acme_calc_pr7.traj",
        &|_| {},
    );
    std::fs::write(
        old.parent().unwrap().join("all_preds.jsonl"),
        "{\"model_name_or_path\": \"gpt4__dev__default\", \"instance_id\": \"acme_calc_pr7\", \"model_patch\": \"\"}\n",
    )
    .unwrap();
    let (lines, stderr, _) = ingest(old.parent().unwrap());
    assert_eq!(
        lines[0]["model_name_or_path"], "gpt4__dev__default",
        "{stderr}"
    );
}

/// A folder holding several agents' output is read whole, each part in its own format, and
/// says so; no part is a problem of another's.
#[test]
fn a_folder_of_mixed_agents_is_read_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mixed");
    std::fs::create_dir_all(dir.join("acme_calc_pr7")).unwrap();
    std::fs::copy(
        agents("swe-agent/acme_calc_pr7/acme_calc_pr7.traj"),
        dir.join("acme_calc_pr7/acme_calc_pr7.traj"),
    )
    .unwrap();
    std::fs::copy(
        fixtures().join("agents/transcripts/claude-code-stream/acme_textkit_pr12.jsonl"),
        dir.join("acme_textkit_pr12.jsonl"),
    )
    .unwrap();
    let (lines, stderr, code) = ingest(&dir);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines.len(), 1, "{stderr}");
    assert_eq!(lines[0]["instance_id"], "acme_calc_pr7");
    assert_eq!(lines[0]["source_format"], "swe-agent");
    assert!(
        stderr.contains("each part is read in its own format: swe-agent, claude-code"),
        "{stderr}"
    );
    // The transcript was read too: it has no patch, and is listed as such.
    assert!(
        stderr.contains("acme_textkit_pr12") && stderr.contains("transcript but no patch"),
        "{stderr}"
    );
    assert!(!stderr.contains("skipped"), "{stderr}");
}

/// An ATIF trajectory beside another agent's transcript is read as ATIF, not taken for a
/// transcript of the other agent that failed to read (which was a problem, and exit 1): the
/// pairing of formats and agents is one mapping, whose names differ (`atif`, `harbor`).
#[test]
fn an_atif_trajectory_beside_another_agents_transcript_is_read_in_its_own_format() {
    let atif = fixtures().join("atif/valid/v1_2-system-step-observation.json");
    let others = [
        (
            "claude-code",
            "agents/transcripts/claude-code-stream/acme_textkit_pr12.jsonl",
            "acme_textkit_pr12.jsonl",
        ),
        (
            "gemini-cli",
            "agents/transcripts/gemini-chat/acme_calc_pr7.json",
            "acme_calc_pr7.json",
        ),
    ];
    for (agent, other, name) in others {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("mixed");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(fixtures().join(other), dir.join(name)).unwrap();
        let atif_name = if name.starts_with("acme_calc") {
            "acme_textkit_pr12.json"
        } else {
            "acme_calc_pr7.json"
        };
        std::fs::copy(&atif, dir.join(atif_name)).unwrap();
        let (_, stderr, code) = ingest(&dir);
        assert_eq!(code, 0, "{agent}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "each part is read in its own format: {agent}, atif"
            )) || stderr.contains(&format!(
                "each part is read in its own format: atif, {agent}"
            )),
            "{agent}: {stderr}"
        );
        assert!(!stderr.contains("skipped"), "{agent}: {stderr}");
        assert!(
            stderr.contains(&format!("{atif_name}): an ATIF trajectory")),
            "{agent}: {stderr}"
        );
    }
}

/// A run that ended without submitting (`info.submission` empty: a timeout, an API error) is
/// kept as an empty patch, graded as `empty_patch`, and counted apart from the patches.
#[test]
fn an_empty_submission_is_counted_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let mut v: Value = serde_json::from_str(
        &std::fs::read_to_string(agents(
            "mini-swe-agent/acme_calc_pr7/acme_calc_pr7.traj.json",
        ))
        .unwrap(),
    )
    .unwrap();
    v["info"]["submission"] = "".into();
    v["info"]["exit_status"] = "TimeoutError".into();
    let p = tmp.path().join("acme_calc_pr7.traj.json");
    std::fs::write(&p, v.to_string()).unwrap();
    let (lines, stderr, _) = ingest(&p);
    assert!(
        stderr.contains("1 submission(s), 0 with a patch, 1 with an empty one"),
        "{stderr}"
    );
    assert_eq!(lines[0]["model_patch"], "", "{stderr}");
}
