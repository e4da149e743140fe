//! Claude Code, Codex, Gemini CLI and Aider transcripts in every shape they are written in (fixtures/agents/
//! transcripts): ingest detection, a forced format checked against the content, the model kept,
//! every command extracted (counted against the file independently), the audit with the commands
//! swapped for blocklisted ones and for the task's own PR diff, and calls that cannot be read.

use super::support::fixtures;
use assert_cmd::cargo::cargo_bin_cmd;
use beyondswe::audit::split_commands;
use beyondswe::submission::{ActionKind, EditOp, EditOutcome, TrajectoryShape, read_transcript};
use predicates::str::contains;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

pub fn transcripts(rel: &str) -> PathBuf {
    fixtures().join("agents/transcripts").join(rel)
}

/// The one file of a fixture directory.
pub fn only_file(rel: &str) -> PathBuf {
    let mut files: Vec<PathBuf> = std::fs::read_dir(transcripts(rel))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    assert_eq!(files.len(), 1, "{rel}");
    files.remove(0)
}

/// Every variant: its directory, the shape, the instance (`None`: the file is named by the
/// agent's session, so `--instance` says it), the model ingest must report.
pub const VARIANTS: [(&str, TrajectoryShape, &str, bool, &str); 8] = [
    (
        "claude-code-stream",
        TrajectoryShape::ClaudeStreamJson,
        "acme_textkit_pr12",
        true,
        "claude-code/claude-sonnet-4-5-20250929",
    ),
    (
        "claude-code-result",
        TrajectoryShape::ClaudeResult,
        "acme_calc_pr7",
        true,
        "claude-code/claude-opus-4-5-20251101",
    ),
    (
        "claude-code-session",
        TrajectoryShape::ClaudeSession,
        "acme_calc_pr7",
        false,
        "claude-code/claude-opus-4-1-20250805",
    ),
    (
        "codex-exec",
        TrajectoryShape::CodexExec,
        "acme_calc_pr7",
        true,
        "codex",
    ),
    (
        "codex-exec-legacy",
        TrajectoryShape::CodexExecLegacy,
        "acme_textkit_pr12",
        true,
        "codex/gpt-5",
    ),
    (
        "codex-rollout",
        TrajectoryShape::CodexRollout,
        "acme_calc_pr7",
        false,
        "codex/gpt-5-codex",
    ),
    (
        "gemini-chat",
        TrajectoryShape::GeminiChat,
        "acme_calc_pr7",
        true,
        "gemini-cli/gemini-2.5-pro",
    ),
    (
        "aider-history",
        TrajectoryShape::AiderHistory,
        "acme_calc_pr7",
        false,
        "aider/anthropic/claude-sonnet-4-20250514",
    ),
];

fn records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    if lines.is_empty() {
        // One pretty-printed document (a Gemini CLI recording).
        return serde_json::from_str(&text).into_iter().collect();
    }
    lines
}

/// The shell commands in a transcript file, read straight from the JSON without the tool's
/// parser: the scripts the agent asked a shell to run, each tool call once.
fn commands_in_file(path: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if path.extension().is_some_and(|e| e == "md") {
        // Aider: what it says it runs.
        let text = std::fs::read_to_string(path).unwrap();
        return text
            .lines()
            .filter_map(|l| l.strip_prefix("> Running "))
            .map(|c| c.trim_end().to_owned())
            .collect();
    }
    let mut seen = HashSet::new();
    for v in records(path) {
        // Claude Code: Bash tool_use blocks.
        for block in v["message"]["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_use"
                && block["name"] == "Bash"
                && seen.insert(block["id"].to_string())
            {
                out.push(block["input"]["command"].as_str().unwrap().to_owned());
            }
        }
        // Codex exec items, once per item id.
        if v["item"]["type"] == "command_execution" && seen.insert(v["item"]["id"].to_string()) {
            out.push(v["item"]["command"].as_str().unwrap().to_owned());
        }
        // Older exec events: the argument list's script.
        if v["msg"]["type"] == "exec_command_begin" {
            out.push(v["msg"]["command"][2].as_str().unwrap().to_owned());
        }
        // Gemini CLI: `run_shell_command` tool calls of `gemini` messages.
        for m in v["messages"].as_array().into_iter().flatten() {
            for call in m["toolCalls"].as_array().into_iter().flatten() {
                if call["name"] == "run_shell_command" {
                    out.push(call["args"]["command"].as_str().unwrap().to_owned());
                }
            }
        }
        // Rollouts: `shell` calls, arguments a JSON string.
        if v["payload"]["type"] == "function_call" && v["payload"]["name"] == "shell" {
            let args: Value =
                serde_json::from_str(v["payload"]["arguments"].as_str().unwrap()).unwrap();
            out.push(args["command"][2].as_str().unwrap().to_owned());
        }
    }
    out
}

fn ingest(path: &Path, extra: &[&str]) -> (Vec<Value>, String, i32) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.jsonl");
    let o = cargo_bin_cmd!("beyondswe")
        .arg("ingest")
        .arg(path)
        .args(extra)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let lines = std::fs::read_to_string(&out)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (
        lines,
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

#[test]
fn every_variant_is_detected_and_its_commands_extracted() {
    for (rel, shape, id, named, model) in VARIANTS {
        let file = only_file(rel);
        let t = read_transcript(&file).unwrap();
        assert_eq!(t.shape, shape, "{rel}");
        assert_eq!(t.model_name(), model, "{rel}");
        let expected = commands_in_file(&file);
        let got: Vec<&str> = t.commands().map(|a| a.text.as_str()).collect();
        assert_eq!(got.len(), expected.len(), "{rel}: {got:?} vs {expected:?}");
        for (g, e) in got.iter().zip(&expected) {
            // What a shell would run: the file's script is among the extracted command's.
            let ran = split_commands(g);
            for c in split_commands(e) {
                assert!(ran.contains(&c), "{rel}: `{g}` does not run `{e}`");
            }
        }
        assert!(t.unread.is_empty(), "{rel}: {:?}", t.unread);

        // Detected without --format, from the file and from its directory.
        let instance: Vec<&str> = if named {
            vec![]
        } else {
            vec!["--instance", id]
        };
        let (lines, stderr, _) = ingest(&file, &instance);
        assert!(
            stderr.contains(&format!(": {}:", shape.agent().name())),
            "{rel}: {stderr}"
        );
        assert!(
            lines.is_empty(),
            "{rel}: a transcript alone is not a prediction"
        );
        assert!(stderr.contains(id), "{rel}: {stderr}");
        if named {
            let (_, stderr, _) = ingest(&transcripts(rel), &[]);
            assert!(stderr.contains(id), "{rel} (directory): {stderr}");
        }
    }
    // The stream's six tool calls (two Bash, four edits, one failed) are all counted.
    let t = read_transcript(&only_file("claude-code-stream")).unwrap();
    assert_eq!((t.tool_calls, t.edits.len()), (7, 4));
    // The Gemini CLI recording's eight calls: two shell commands, a file read, a search, a
    // fetch, two replacements (one failed) and a new file; its prompt and thoughts are read.
    let t = read_transcript(&only_file("gemini-chat")).unwrap();
    assert_eq!((t.tool_calls, t.edits.len()), (8, 3));
    let kinds = |k: ActionKind| t.actions.iter().filter(|a| a.kind == k).count();
    assert_eq!((kinds(ActionKind::Url), kinds(ActionKind::Search)), (1, 1));
    assert!(t.prompt.as_deref().unwrap().starts_with("Operands"));
    let outcomes: Vec<EditOutcome> = t.edits.iter().map(|e| e.outcome).collect();
    assert_eq!(
        outcomes,
        [
            EditOutcome::Applied,
            EditOutcome::Failed,
            EditOutcome::Applied
        ]
    );
    // The Aider history: the two-line request is the prompt; `/run` and the command it echoes
    // are one command; two SEARCH/REPLACE blocks (one creating a file) applied; the `/web` page.
    let t = read_transcript(&only_file("aider-history")).unwrap();
    assert!(
        t.prompt.as_deref().unwrap().starts_with("Operands")
            && t.prompt.as_deref().unwrap().ends_with("run the tests."),
        "{:?}",
        t.prompt
    );
    assert_eq!((t.commands().count(), t.edits.len()), (2, 2));
    assert!(t.edits.iter().all(|e| e.outcome == EditOutcome::Applied));
    match &t.edits[1].ops[0] {
        EditOp::Replace { path, old, new, .. } => {
            assert_eq!(path, "tests/test_signs.py");
            assert!(old.is_empty() && new.starts_with("from calc.ops import add"));
        }
        other => panic!("{other:?}"),
    }
    let urls: Vec<&str> = t
        .actions
        .iter()
        .filter(|a| a.kind == ActionKind::Url)
        .map(|a| a.text.as_str())
        .collect();
    assert_eq!(
        urls,
        ["https://docs.python.org/3/library/functions.html#float"]
    );
}

/// The model is kept beside the agent in the predictions, for transcripts paired with a diff.
#[test]
fn predictions_name_agent_and_model() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("patches")).unwrap();
    for (rel, _, id, named, model) in VARIANTS {
        let file = only_file(rel);
        let patches = dir.path().join("patches");
        std::fs::write(patches.join(format!("{id}.diff")), "diff --git a/x b/x\n").unwrap();
        let mut extra = vec!["--patches".to_owned(), patches.display().to_string()];
        if !named {
            extra.extend(["--instance".to_owned(), id.to_owned()]);
        }
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let (lines, stderr, _) = ingest(&file, &extra);
        assert_eq!(lines.len(), 1, "{rel}: {stderr}");
        assert_eq!(lines[0]["instance_id"], id, "{rel}");
        assert_eq!(lines[0]["model_name_or_path"], model, "{rel}");
    }
}

/// A forced format must match the content: a Claude Code session is not Codex output.
#[test]
fn a_forced_format_is_checked_against_the_content() {
    let session = only_file("claude-code-session");
    let (lines, stderr, code) = ingest(
        &session,
        &["--format", "codex", "--instance", "acme_calc_pr7"],
    );
    assert_eq!(code, 1);
    assert!(lines.is_empty());
    assert!(
        stderr.contains("expected a Codex transcript")
            && stderr.contains("found a Claude Code session file"),
        "{stderr}"
    );
    let (_, stderr, code) = ingest(&transcripts("codex-rollout"), &["--format", "claude-code"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("expected a Claude Code transcript") && stderr.contains("codex"),
        "{stderr}"
    );
    // A Gemini CLI recording is not Claude Code's, though both say `sessionId`.
    let (_, stderr, code) = ingest(&only_file("gemini-chat"), &["--format", "claude-code"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("expected a Claude Code transcript")
            && stderr.contains("found a Gemini CLI chat recording"),
        "{stderr}"
    );
    // A transcript is not a predictions file either.
    let (_, stderr, code) = ingest(
        &only_file("claude-code-stream"),
        &["--format", "predictions"],
    );
    assert_eq!(code, 1);
    assert!(
        stderr.contains("expected predictions output") && stderr.contains("stream-json"),
        "{stderr}"
    );
    // The right format is accepted for every shape, the legacy stream and rollouts included.
    for (rel, shape, id, named, _) in VARIANTS {
        let mut extra = vec!["--format", shape.agent().name()];
        if !named {
            extra.extend(["--instance", id]);
        }
        let (_, stderr, _) = ingest(&only_file(rel), &extra);
        assert!(!stderr.contains("expected"), "{rel}: {stderr}");
    }
}

/// A session or rollout named by the agent's session says which instance it is about only when
/// told; without `--instance` it is reported, not guessed.
#[test]
fn a_session_file_needs_its_instance() {
    let (lines, stderr, code) = ingest(&only_file("codex-rollout"), &[]);
    assert_eq!(code, 1);
    assert!(lines.is_empty());
    assert!(
        stderr.contains("does not say which instance") && stderr.contains("--instance"),
        "{stderr}"
    );
}

/// Copies a fixture file with every shell command replaced by `to` (the rest byte-identical in
/// meaning): Claude Code `input.command`, exec items' `command`, the older events' argument
/// lists, and rollouts' `arguments` (a JSON string inside the JSON).
pub fn swap_commands(from: &Path, to: &str, dest: &Path) {
    fn swap(v: &mut Value, to: &str) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    match (k.as_str(), &mut *x) {
                        ("command" | "cmd", Value::String(s)) => *s = to.to_owned(),
                        ("command", Value::Array(words)) if words.len() == 3 => {
                            words[2] = json!(to);
                        }
                        ("arguments", Value::String(s)) => {
                            if let Ok(mut inner) = serde_json::from_str::<Value>(s) {
                                swap(&mut inner, to);
                                *s = inner.to_string();
                            }
                        }
                        _ => swap(x, to),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|x| swap(x, to)),
            _ => {}
        }
    }
    let text = std::fs::read_to_string(from).unwrap();
    let mut out = String::new();
    if from.extension().is_some_and(|e| e == "md") {
        // Aider: the commands it runs, and the `/run` inputs they echo.
        for line in text.lines() {
            if line.starts_with("> Running ") {
                out.push_str(&format!("> Running {to}  "));
            } else if line.starts_with("#### /run ") {
                out.push_str(&format!("#### /run {to}"));
            } else {
                out.push_str(line);
            }
            out.push('\n');
        }
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::write(dest, out).unwrap();
        return;
    }
    if text
        .lines()
        .all(|l| serde_json::from_str::<Value>(l).is_err())
        && let Ok(mut doc) = serde_json::from_str::<Value>(&text)
    {
        // One pretty-printed document, written back the same way.
        swap(&mut doc, to);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::write(dest, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        return;
    }
    for line in text.lines() {
        match serde_json::from_str::<Value>(line) {
            Ok(mut v) => {
                swap(&mut v, to);
                out.push_str(&v.to_string());
            }
            Err(_) => out.push_str(line),
        }
        out.push('\n');
    }
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::write(dest, out).unwrap();
}

fn audit(path: &Path, extra: &[&str]) -> (Vec<Value>, String, i32) {
    let o = cargo_bin_cmd!("beyondswe")
        .arg("audit")
        .arg(path)
        .arg("--json")
        .args(extra)
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (
        lines,
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

#[test]
fn every_variant_is_audited_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    for (rel, shape, id, named, _) in VARIANTS {
        let file = only_file(rel);
        let n = commands_in_file(&file).len();
        let instance: Vec<&str> = if named {
            vec![]
        } else {
            vec!["--instance", id]
        };
        let (got, stderr, code) = audit(&file, &instance);
        if shape == TrajectoryShape::ClaudeResult {
            // The result object carries the final answer only: reported, never called clean.
            assert_eq!(code, 1, "{rel}");
            assert!(got.is_empty(), "{rel}: {got:?}");
            assert!(stderr.contains("no tool calls"), "{rel}: {stderr}");
            continue;
        }
        assert_eq!(code, 0, "{rel}: {stderr}");
        assert_eq!(
            got.len(),
            1,
            "{rel}: one transcript, one trajectory: {stderr}"
        );
        assert_eq!(got[0]["task_name"], id, "{rel}");
        assert_eq!(got[0]["class"], "clean", "{rel}: {}", got[0]);
        assert!(
            got[0]["blocklist_hits"].as_array().unwrap().is_empty(),
            "{rel}"
        );

        // Every command swapped for a blocklisted one: every one is found.
        let swapped = dir.path().join(rel).join(file.file_name().unwrap());
        swap_commands(&file, "git log --all --oneline", &swapped);
        let (got, stderr, _) = audit(&swapped, &instance);
        assert_eq!(got.len(), 1, "{rel}: {stderr}");
        assert_eq!(got[0]["blocklist_hits"], json!(["git log --all"]), "{rel}");
        let hits = got[0]["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["finding"] == "blocklist")
            .count();
        assert_eq!(hits, n, "{rel}: {}", got[0]);

        // And swapped for the task's own PR diff: tier A.
        let pr = if id == "acme_calc_pr7" {
            "curl -sL https://github.com/acme/calc/pull/7.diff"
        } else {
            "curl -sL https://github.com/acme/textkit/pull/12.diff"
        };
        swap_commands(&file, pr, &swapped);
        let (got, _, _) = audit(&swapped, &instance);
        assert_eq!(got[0]["class"], "tier_a", "{rel}: {}", got[0]);
    }
}

/// A directory of transcripts is audited file by file; one named by its session needs
/// `--instance` and is reported without it.
#[test]
fn a_directory_of_transcripts_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    for (rel, ..) in VARIANTS {
        let f = only_file(rel);
        std::fs::copy(&f, dir.path().join(f.file_name().unwrap())).unwrap();
    }
    let (got, stderr, code) = audit(dir.path(), &[]);
    let tasks: Vec<&str> = got
        .iter()
        .map(|v| v["task_name"].as_str().unwrap())
        .collect();
    assert!(tasks.contains(&"acme_textkit_pr12"), "{stderr}");
    assert!(stderr.contains("does not say which instance"), "{stderr}");
    assert_eq!(code, 1);
}

/// In a rollout whose every command is blocklisted, every one is found (they were missed when an
/// argument list was joined with bare spaces), and a call that cannot be read keeps the
/// trajectory from being called clean.
#[test]
fn rollouts_are_never_called_clean_unread() {
    let dir = tempfile::tempdir().unwrap();
    let file = only_file("codex-rollout");
    let swapped = dir.path().join("rollout-x.jsonl");
    swap_commands(&file, "git fetch origin", &swapped);
    let (got, _, _) = audit(&swapped, &["--instance", "acme_calc_pr7"]);
    assert_eq!(got[0]["blocklist_hits"], json!(["git fetch"]));

    // Code mode: a program's plain call is read as the command it runs; one whose command is
    // built at run time is unread, and the trajectory is not clean.
    let with_program = |program: &str, name: &str| {
        let mut text = std::fs::read_to_string(&file).unwrap();
        text.push_str(&json!({"timestamp": "2025-10-29T01:00:00.000Z", "type": "response_item", "payload": {"type": "custom_tool_call", "status": "completed", "call_id": "call_code1", "name": "exec", "input": program}}).to_string());
        text.push('\n');
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let plain = with_program(
        "const r = await tools.exec_command({cmd: 'git fetch'});",
        "rollout-y.jsonl",
    );
    let (got, _, _) = audit(&plain, &["--instance", "acme_calc_pr7"]);
    assert_eq!(got[0]["blocklist_hits"], json!(["git fetch"]), "{}", got[0]);
    let computed = with_program(
        "const c = ['git', 'fetch'].join(' '); await tools.exec_command({cmd: c});",
        "rollout-z.jsonl",
    );
    let (got, _, code) = audit(&computed, &["--instance", "acme_calc_pr7"]);
    assert_eq!(code, 0);
    assert_eq!(got[0]["class"], "incomplete", "{}", got[0]);
    assert_eq!(got[0]["unread"][0]["tool"], "exec");
}

/// A release line may carry the raw transcript under `trajectory`: as the list of records or as
/// the file's text.
#[test]
fn a_release_line_with_the_transcript_inline_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    let file = only_file("claude-code-stream");
    let text = std::fs::read_to_string(&file).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let release = dir.path().join("release.jsonl");
    std::fs::write(
        &release,
        format!(
            "{}\n{}\n",
            json!({"task_name": "acme_textkit_pr12", "trajectory": records, "reward": 1.0}),
            json!({"task_name": "acme_textkit_pr12", "trajectory": text.replace("python -m pytest -q", "git pull"), "reward": 1.0})
        ),
    )
    .unwrap();
    let (got, stderr, code) = audit(&release, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(got.len(), 2);
    assert_eq!(got[0]["class"], "clean");
    assert_eq!(got[0]["shape"], "claude-stream-json");
    assert_eq!(got[1]["blocklist_hits"], json!(["git pull"]));
}

/// A Harbor job whose trials carry only the agents' raw logs (agent/claude-code.txt, the Codex
/// rollout under agent/sessions) is audited from them.
#[test]
fn a_harbor_job_with_raw_agent_logs_is_audited() {
    let (got, stderr, code) = audit(&transcripts("harbor-raw"), &[]);
    assert_eq!(code, 0, "{stderr}");
    let mut shapes: Vec<(String, String)> = got
        .iter()
        .map(|v| {
            (
                v["task_name"].as_str().unwrap().to_owned(),
                v["shape"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    shapes.sort();
    assert_eq!(
        shapes,
        [
            ("acme_calc_pr7".to_owned(), "codex-rollout".to_owned()),
            (
                "acme_textkit_pr12".to_owned(),
                "claude-stream-json".to_owned()
            )
        ]
    );
}

#[test]
fn ingest_reports_a_harbor_trial_without_a_patch_and_its_log() {
    cargo_bin_cmd!("beyondswe")
        .arg("ingest")
        .arg(transcripts("harbor-raw"))
        .arg("-o")
        .arg(tempfile::tempdir().unwrap().path().join("p.jsonl"))
        .assert()
        .stderr(contains("2 instance(s) have a transcript but no patch"));
}

/// `ingest --reconstruct`: the edits of every transcript that shows them exactly are replayed on
/// the base commit in a container, and the patches grade to the verdicts their edits deserve; the
/// transcripts that cannot be replayed exactly get no patch and are not graded.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn reconstructed_patches_grade_to_the_expected_verdicts() {
    use super::support::{fixture_images, require_docker};
    require_docker();
    fixture_images();
    let dir = tempfile::tempdir().unwrap();
    let dataset = fixtures().join("dataset/fixtures.jsonl");
    let reconstruct = |path: &Path, extra: &[&str]| -> (Vec<Value>, String) {
        let mut args = vec!["--reconstruct", "--dataset"];
        let d = dataset.display().to_string();
        args.push(&d);
        args.extend(extra);
        let (lines, stderr, _) = ingest(path, &args);
        (lines, stderr)
    };
    let grade = |preds: &[Value], run: &str| -> Vec<(String, String, String)> {
        let file = dir.path().join(format!("{run}.jsonl"));
        std::fs::write(
            &file,
            preds.iter().map(|p| format!("{p}\n")).collect::<String>(),
        )
        .unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_beyondswe"))
            .args(["grade", "--jobs", "1", "--run-id", run, "--dataset"])
            .arg(&dataset)
            .arg("--results-dir")
            .arg(dir.path().join("runs"))
            .arg("--predictions")
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{run}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut r: Vec<(String, String, String)> =
            std::fs::read_to_string(dir.path().join("runs").join(run).join("results.jsonl"))
                .unwrap()
                .lines()
                .map(|l| {
                    let v: Value = serde_json::from_str(l).unwrap();
                    (
                        v["instance_id"].as_str().unwrap().to_owned(),
                        v["verdict"].as_str().unwrap().to_owned(),
                        v["reason"].as_str().unwrap().to_owned(),
                    )
                })
                .collect();
        r.sort();
        r
    };
    let resolved = |id: &str| {
        vec![(
            id.to_owned(),
            "resolved".to_owned(),
            "all_tests_passed".to_owned(),
        )]
    };

    for (rel, id, named) in [
        ("claude-code-stream", "acme_textkit_pr12", true),
        ("claude-code-session", "acme_calc_pr7", false),
        ("codex-exec-legacy", "acme_textkit_pr12", true),
        ("codex-rollout", "acme_calc_pr7", false),
    ] {
        let extra: Vec<&str> = if named {
            vec![]
        } else {
            vec!["--instance", id]
        };
        let (preds, stderr) = reconstruct(&only_file(rel), &extra);
        assert_eq!(preds.len(), 1, "{rel}: {stderr}");
        assert_eq!(preds[0]["reconstructed"], true, "{rel}");
        assert!(
            preds[0]["note"].as_str().unwrap().contains("reconstructed"),
            "{rel}"
        );
        assert_eq!(grade(&preds, rel), resolved(id), "{rel}");
    }

    // Aider's SEARCH/REPLACE blocks replay into a patch that applies: the history's fix is
    // partial (the sign characters only), so the tests fail rather than the patch.
    let (preds, stderr) = reconstruct(
        &transcripts("aider-history").join(".aider.chat.history.md"),
        &["--instance", "acme_calc_pr7"],
    );
    assert_eq!(preds.len(), 1, "{stderr}");
    assert_eq!(preds[0]["reconstructed"], true);
    let patch = preds[0]["model_patch"].as_str().unwrap();
    assert!(
        patch.contains("+_MINUS_SIGNS") && patch.contains("b/tests/test_signs.py"),
        "{patch}"
    );
    assert_eq!(
        grade(&preds, "aider"),
        [(
            "acme_calc_pr7".to_owned(),
            "unresolved".to_owned(),
            "tests_failed".to_owned()
        )]
    );

    // A Harbor job with raw logs only: the Claude Code trial's edits fix textkit, the Codex
    // trial's rollout holds a half fix of calc.
    let (preds, stderr) = reconstruct(&transcripts("harbor-raw"), &[]);
    assert_eq!(preds.len(), 2, "{stderr}");
    assert!(preds.iter().all(|p| p["reconstructed"] == true));
    assert_eq!(
        grade(&preds, "harbor-raw"),
        [
            (
                "acme_calc_pr7".to_owned(),
                "unresolved".to_owned(),
                "tests_failed".to_owned()
            ),
            (
                "acme_textkit_pr12".to_owned(),
                "resolved".to_owned(),
                "all_tests_passed".to_owned()
            )
        ]
    );

    // Not exact, so not reconstructed and not graded: exec --json file_change items (paths only),
    // a result object (no tool calls), a Bash command that edited a file, and a file that was not
    // what the Edit saw before it (changed by something the transcript does not show).
    let sed = dir.path().join("sed/acme_textkit_pr12.jsonl");
    let stream = std::fs::read_to_string(only_file("claude-code-stream")).unwrap();
    std::fs::create_dir_all(sed.parent().unwrap()).unwrap();
    std::fs::write(
        &sed,
        stream.replacen(
            "grep -rn 'textdep\\\\.' textkit",
            "sed -i 's/textdep.fill/textdep.wrap_text/' textkit/text/wrap.py",
            1,
        ),
    )
    .unwrap();
    let session = std::fs::read_to_string(only_file("claude-code-session")).unwrap();
    let behind = dir
        .path()
        .join("behind/3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9.jsonl");
    std::fs::create_dir_all(behind.parent().unwrap()).unwrap();
    // The second Edit's `originalFile` now holds a line the replay never wrote.
    let changed: String = session
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if let Some(o) = v["toolUseResult"]["originalFile"].as_str()
                && o.contains("_MINUS_SIGNS")
                && !o.contains("Strings may use")
            {
                v["toolUseResult"]["originalFile"] = json!(format!("{o}# reformatted\n"));
            }
            format!("{v}\n")
        })
        .collect();
    std::fs::write(&behind, changed).unwrap();
    for (path, extra, why) in [
        (only_file("codex-exec"), vec![], "without their content"),
        (
            only_file("claude-code-result"),
            vec![],
            "records no tool calls",
        ),
        (sed.clone(), vec![], "shell command changed files"),
        (
            behind.clone(),
            vec!["--instance", "acme_calc_pr7"],
            "not what the Edit saw",
        ),
    ] {
        let (preds, stderr) = reconstruct(&path, &extra);
        assert!(preds.is_empty(), "{}: {preds:?}", path.display());
        assert!(
            stderr.contains("not reconstructed") && stderr.contains(why),
            "{}: {stderr}",
            path.display()
        );
    }
}

/// Aider's whole-file formats (`whole`, and `editor-whole` behind an architect, with `<source>`
/// or backtick fences) write each file whole after its path line; an applied edit whose text the
/// reader cannot find (a `udiff` session) is an unread step, so the audit cannot call it clean.
#[test]
fn aider_whole_file_edits_are_read_and_an_unknown_format_is_unread() {
    let file = fixtures().join("agents/transcripts/aider-whole/.aider.chat.history.md");
    let t = read_transcript(&file).unwrap();
    let written: Vec<(&str, &str)> = t
        .edits
        .iter()
        .map(|e| match &e.ops[0] {
            EditOp::Write { path, content } => (path.as_str(), content.as_str()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        written.iter().map(|w| w.0).collect::<Vec<_>>(),
        ["calc/ops.py", "tests/test_signs.py", "README.md"]
    );
    assert!(
        written[0].1.starts_with("\"\"\"The four operations.")
            && written[0].1.ends_with("return float(value)\n")
    );
    assert!(written[1].1.starts_with("from calc.ops import add\n"));
    assert!(t.edits.iter().all(|e| e.outcome == EditOutcome::Applied));
    assert_eq!(t.unread.len(), 1, "{:?}", t.unread);
    assert!(t.unread[0].why.contains("README.md"), "{:?}", t.unread);
    let out = cargo_bin_cmd!("beyondswe")
        .args(["audit", "--json", "--instance", "acme_calc_pr7"])
        .arg(&file)
        .output()
        .unwrap();
    let v: Value =
        serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(v["class"], "incomplete", "{v}");
}

/// A Claude Code session whose sub-agent's steps live in `<session>/subagents/agent-*.jsonl`
/// (the layout Claude Code 2.x writes): read with the session, so a forbidden command the
/// sub-agent ran is found and nothing is unread; in a folder the sub-agent's file is no item of
/// its own.
#[test]
fn a_sessions_sub_agent_files_are_read_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let id = "acme_calc_pr7";
    let main = [
        json!({"type": "user", "sessionId": "s", "uuid": "u1", "parentUuid": null, "cwd": "/app", "message": {"role": "user", "content": "Fix the bug"}}),
        json!({"type": "assistant", "sessionId": "s", "uuid": "a1", "parentUuid": "u1", "message": {"id": "m1", "model": "claude-opus-4-5", "content": [{"type": "tool_use", "id": "t1", "name": "Task", "input": {"description": "look around", "prompt": "find it"}}]}}),
        json!({"type": "user", "sessionId": "s", "uuid": "u2", "parentUuid": "a1", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "found"}]}]}, "toolUseResult": {"status": "completed", "agentId": "5f3e", "totalToolUseCount": 2, "totalDurationMs": 900}}),
    ];
    let lines = |v: &[Value]| v.iter().map(|l| format!("{l}\n")).collect::<String>();
    std::fs::write(dir.path().join(format!("{id}.jsonl")), lines(&main)).unwrap();
    let audit = |path: &Path| -> Vec<Value> {
        let out = cargo_bin_cmd!("beyondswe")
            .args(["audit", "--json"])
            .arg(path)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let session = dir.path().join(format!("{id}.jsonl"));
    assert_eq!(audit(&session)[0]["class"], "incomplete");
    let sub = dir.path().join(id).join("subagents");
    std::fs::create_dir_all(&sub).unwrap();
    let calls: Vec<Value> = ["ls", "git pull"]
        .iter()
        .enumerate()
        .map(|(i, cmd)| json!({"type": "assistant", "sessionId": "s", "agentId": "5f3e", "isSidechain": true, "uuid": format!("s{i}"), "parentUuid": null, "message": {"id": format!("sm{i}"), "content": [{"type": "tool_use", "id": format!("st{i}"), "name": "Bash", "input": {"command": cmd}}]}}))
        .collect();
    std::fs::write(sub.join("agent-5f3e.jsonl"), lines(&calls)).unwrap();
    for path in [session.as_path(), dir.path()] {
        let got = audit(path);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0]["class"], "blocklist", "{}", got[0]);
        assert_eq!(got[0]["blocklist_hits"], json!(["git pull"]));
        assert!(got[0].get("unread").is_none(), "{}", got[0]);
    }
    // Ingest hands a replay every file it read the session from: read again from them (as
    // `ingest --reconstruct` does), the sub-agent's steps are there and nothing is unread, where
    // the session's file alone leaves its Task call unread and no replay can be exact.
    let ing = beyondswe::submission::ingest(&session, None, None).unwrap();
    let files = &ing.items[0].transcript;
    assert_eq!(files.len(), 2, "{files:?}");
    let again = beyondswe::submission::read_transcripts(files).unwrap();
    assert!(again.unread.is_empty(), "{:?}", again.unread);
    assert!(again.commands().any(|c| c.text == "git pull"));
    let alone = beyondswe::submission::read_transcripts(&files[..1]).unwrap();
    assert!(!alone.unread.is_empty());
}

/// Aider as a real history shows it (`aider-edges`, made like AndrewJacop/Simple-Calulator's):
/// the SEARCH block aider echoes back in its "failed to match" message is no edit, and marks
/// the block it names not made and the others made; in a whole-file session every fence at a
/// line's start is a file, named on the line before it as aider strips it (bold, a heading's
/// `#`, a colon), an indented fence is text, and a `####` heading of the reply is no input;
/// a file the user declined to create, and an edit aider never reported before the model
/// replied again, were not made, and a later report of the same file is the later edit's. The
/// echo ends at aider's own closing words (not at a `####` comment or a trailing space in the
/// echoed block), a quoted line inside a reply does not end its edits' wait for aider's report,
/// and an architect's advice makes no edit (its editor's reply does).
#[test]
fn aider_edits_are_counted_as_aider_made_them() {
    let file = fixtures().join("agents/transcripts/aider-edges/.aider.chat.history.md");
    let t = read_transcript(&file).unwrap();
    let got: Vec<(&str, EditOutcome)> = t
        .edits
        .iter()
        .map(|e| (e.ops[0].paths()[0], e.outcome))
        .collect();
    assert_eq!(
        got,
        [
            ("calc/ops.py", EditOutcome::Applied),
            ("README.md", EditOutcome::Failed),
            ("README.md", EditOutcome::Applied),
            ("tests/test_signs.py", EditOutcome::Applied),
            ("If you're using **npm**", EditOutcome::Failed),
            ("If you're using **pip**", EditOutcome::Failed),
            ("calc/ops.py", EditOutcome::Failed),
            ("calc/ops.py", EditOutcome::Applied),
            // A bold file name, `####` comments and a trailing space in the failed block, a
            // quoted line of the reply between its two blocks.
            ("calc/banner.py", EditOutcome::Failed),
            ("docs/usage.md", EditOutcome::Applied),
            ("calc/banner.py", EditOutcome::Applied),
            // An architect's advice holds a fenced block: only its editor's reply is an edit.
            ("calc/__init__.py", EditOutcome::Applied),
        ]
    );
    assert!(t.unread.is_empty(), "{:?}", t.unread);
    match &t.edits[3].ops[0] {
        EditOp::Write { content, .. } => {
            assert!(
                content.starts_with("from calc.ops import add\n"),
                "{content}"
            );
            assert!(!content.contains("pytest"), "{content}");
        }
        other => panic!("{other:?}"),
    }
    let prompts: Vec<&str> = t
        .actions
        .iter()
        .filter(|a| {
            matches!(a.kind, ActionKind::Prompt | ActionKind::Message) && a.tool != "message"
        })
        .map(|a| a.text.as_str())
        .collect();
    assert!(
        !prompts.iter().any(|p| p.contains("If you're using")),
        "a heading of the reply read as the user's input: {prompts:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = cargo_bin_cmd!("beyondswe")
        .args(["ingest", "--instance", "acme_calc_pr7", "-o"])
        .arg(dir.path().join("p.jsonl"))
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("12 tool calls, 0 commands, 12 file edits (5 not made)"),
        "{stderr}"
    );
}
