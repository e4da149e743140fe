//! The agent output shapes ingest and the audit used to read differently, each on a file made
//! the way the real one is (origins in fixtures/agents/README.md): a SWE-agent 1.x `.traj` that
//! holds only its `history`, one-line trajectory files, EnIGMA's flag submissions, Codex
//! rollouts that start sub-agents, and Cline's task exports.

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Runs the binary; stdout, stderr and the exit code.
fn run(args: &[&str], path: &Path) -> (String, String, i32) {
    let out = cargo_bin_cmd!("beyondswe")
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// `audit --json` on `path` (with `extra` arguments): its lines.
fn audit(path: &Path, extra: &[&str]) -> (Vec<Value>, String, i32) {
    let mut args = vec!["audit", "--json"];
    args.extend_from_slice(extra);
    let (stdout, stderr, code) = run(&args, path);
    let lines = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (lines, stderr, code)
}

/// `ingest` on `path` into predictions: the lines written, stderr and the exit code.
fn ingest(path: &Path, extra: &[&str]) -> (Vec<Value>, String, i32) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.jsonl");
    let o = out.to_string_lossy().into_owned();
    let mut args = vec!["ingest", "-o", o.as_str()];
    args.extend_from_slice(extra);
    let (_, stderr, code) = run(&args, path);
    let lines = std::fs::read_to_string(&out)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (lines, stderr, code)
}

fn write(path: PathBuf, text: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

const GOLD: &str = "diff --git a/calc/ops.py b/calc/ops.py\n--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n";

/// A SWE-agent 1.x trajectory as `save_trajectory` writes it when only the history is kept
/// (the project's demonstrations are written so): chat messages whose assistant turns carry the
/// command in `action`, beside `info` and a `replay_config` JSON string.
fn swe_agent_history_traj() -> Value {
    json!({
        "history": [
            {"role": "system", "content": "SETTING: You are an autonomous programmer.", "agent": "main", "message_type": "system_prompt"},
            {"role": "user", "content": [{"type": "text", "text": "<uploaded_files>/calc</uploaded_files> Fix the overflow in calc."}], "agent": "main", "message_type": "observation"},
            {"role": "assistant", "content": "Let me look at the history first.", "thought": "Let me look at the history first.", "action": "cd /calc && git log --all --oneline", "agent": "main", "message_type": "action",
             "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"cd /calc && git log --all --oneline\"}"}}]},
            {"role": "tool", "content": [{"type": "text", "text": "OBSERVATION:\nabc123 fix"}], "agent": "main", "message_type": "observation", "tool_call_ids": ["call_1"]},
            {"role": "assistant", "content": "", "thought": "Submit.", "action": "submit", "agent": "main", "message_type": "action"}
        ],
        "info": {"submission": GOLD, "exit_status": "submitted", "swe_agent_version": "1.1.0"},
        "replay_config": "{\"agent\": {\"model\": {\"name\": \"claude-sonnet-4\"}}}"
    })
}

#[test]
fn a_swe_agent_traj_holding_only_its_history_is_read_as_swe_agent_by_both() {
    let tmp = tempfile::tempdir().unwrap();
    let traj = write(
        tmp.path().join("run/acme_calc_pr7/acme_calc_pr7.traj"),
        &serde_json::to_string_pretty(&swe_agent_history_traj()).unwrap(),
    );
    let (lines, stderr, code) = audit(&traj, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines.len(), 1, "{stderr}");
    assert_eq!(lines[0]["shape"], "swe-agent-history", "{:#}", lines[0]);
    assert_eq!(lines[0]["class"], "blocklist", "{:#}", lines[0]);
    assert_eq!(lines[0]["blocklist_hits"], json!(["git log --all"]));
    let (preds, stderr, code) = ingest(&tmp.path().join("run"), &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(preds.len(), 1, "{stderr}");
    assert_eq!(preds[0]["instance_id"], "acme_calc_pr7");
    assert_eq!(preds[0]["model_patch"], GOLD);
    assert_eq!(preds[0]["model_name_or_path"], "claude-sonnet-4");
}

#[test]
fn one_line_trajectory_files_are_documents_and_take_the_instance_given() {
    let tmp = tempfile::tempdir().unwrap();
    // SWE-agent writes `.traj` files pretty-printed; a copy compacted to one line is the same
    // trajectory, not a release line.
    let traj = write(
        tmp.path().join("one/run.traj"),
        &serde_json::to_string(&swe_agent_history_traj()).unwrap(),
    );
    let (lines, stderr, code) = audit(&traj, &["--instance", "acme_calc_pr7"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines[0]["task_name"], "acme_calc_pr7", "{stderr}");
    assert_eq!(lines[0]["shape"], "swe-agent-history");
    // Ingest takes the same instance for the same file, and counts the steps it read alike.
    ingested_as_calc_with_two_commands(&traj);
    // Harbor's `agent/trajectory.json` on one line, with its instance given: terminus-2 types its
    // commands (`keystrokes`, nothing else), and they are read as commands.
    let atif = json!({
        "schema_version": "ATIF-v1.2", "session_id": "s1",
        "agent": {"name": "terminus-2", "version": "2.0", "model_name": "acme-model"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "Fix calc."},
            {"step_id": 2, "source": "agent", "message": "Looking.", "tool_calls": [
                {"tool_call_id": "c1", "function_name": "bash_command", "arguments": {"keystrokes": "ls\n", "duration": 0.1}}
            ]},
            {"step_id": 3, "source": "agent", "message": "History.", "tool_calls": [
                {"tool_call_id": "c2", "function_name": "bash_command", "arguments": {"keystrokes": "git log --all --oneline\n", "duration": 1.0}}
            ]}
        ]
    });
    let file = write(
        tmp.path().join("trial/agent/trajectory.json"),
        &serde_json::to_string(&atif).unwrap(),
    );
    let (lines, stderr, code) = audit(&file, &["--instance", "acme_calc_pr7"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines[0]["task_name"], "acme_calc_pr7", "{stderr}");
    assert_eq!(lines[0]["shape"], "atif");
    assert_eq!(lines[0]["class"], "blocklist", "{:#}", lines[0]);
    // Ingest reads the same file the same way, with the diff captured beside it; and so it
    // does the file written as people write JSON, its steps one a line (the last of which
    // parses alone).
    let steps: Vec<String> = atif["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("  {s}"))
        .collect();
    let mut head = atif.clone();
    head.as_object_mut().unwrap().remove("steps");
    let text = serde_json::to_string(&head).unwrap();
    let pretty = write(
        tmp.path().join("pretty/agent/trajectory.json"),
        &format!(
            "{},\n\"steps\": [\n{}\n]}}\n",
            text.strip_suffix('}').unwrap(),
            steps.join(",\n")
        ),
    );
    for f in [&file, &pretty] {
        write(
            f.parent().unwrap().join("patches/acme_calc_pr7.diff"),
            "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-a\n+b\n",
        );
        let preds = ingested_as_calc_with_two_commands(f);
        assert_eq!(
            preds[0]["model_name_or_path"], "harbor/acme-model",
            "{:#}",
            preds[0]
        );
        let (lines, stderr, code) = audit(f, &["--instance", "acme_calc_pr7"]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(lines[0]["class"], "blocklist", "{:#}", lines[0]);
    }
    // Without the instance it says so, naming the file.
    let (_, stderr, code) = audit(&file, &[]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("trajectory.json") && stderr.contains("--instance"),
        "{stderr}"
    );
}

/// `ingest FILE --instance acme_calc_pr7`: one submission of that instance whose note counts two
/// tool calls, both commands, and no edit; its lines.
fn ingested_as_calc_with_two_commands(file: &Path) -> Vec<Value> {
    let (preds, stderr, code) = ingest(file, &["--instance", "acme_calc_pr7"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(preds[0]["instance_id"], "acme_calc_pr7", "{stderr}");
    assert!(
        preds[0]["note"]
            .as_str()
            .is_some_and(|n| n.contains("2 tool calls, 2 commands, 0 file edits")),
        "{:#}",
        preds[0]
    );
    preds
}

#[test]
fn an_enigma_flag_is_named_and_never_graded_as_a_patch() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("ctf");
    // EnIGMA's `submit '<flag>'` leaves the flag in info.submission, and run.py copies it into
    // all_preds.jsonl's model_patch with the challenge's fields.
    let traj = json!({
        "environment": "swe_main",
        "trajectory": [
            {"action": "connect_start localhost 1337", "thought": "Connect to the service.", "observation": "", "response": "", "state": "{}"},
            {"action": "submit 'flag{b3l0w_th3_r4dar}'", "thought": "Submit the flag.", "observation": "", "response": "", "state": "{}"}
        ],
        "history": [{"role": "user", "content": "Solve the challenge.", "agent": "primary"}],
        "info": {"submission": "flag{b3l0w_th3_r4dar}", "exit_status": "submitted"}
    });
    write(
        run_dir.join("pwn_warmup/pwn_warmup.traj"),
        &serde_json::to_string_pretty(&traj).unwrap(),
    );
    write(
        run_dir.join("all_preds.jsonl"),
        &format!(
            "{}\n{}\n",
            json!({"model_name_or_path": "gpt4", "instance_id": "pwn_warmup", "model_patch": "flag{b3l0w_th3_r4dar}", "challenge_name": "warmup", "challenge_category": "pwn"}),
            json!({"model_name_or_path": "gpt4", "instance_id": "rev_baby", "model_patch": "\nFLAG{LET_US_BEGIN}\n", "challenge_name": "baby", "challenge_category": "rev"})
        ),
    );
    let (preds, stderr, _) = ingest(&run_dir, &[]);
    assert!(
        preds.is_empty(),
        "a flag is no patch to grade: {preds:?}\n{stderr}"
    );
    assert!(
        stderr.contains("pwn_warmup.traj")
            && stderr.contains("not a patch")
            && stderr.contains("EnIGMA"),
        "{stderr}"
    );
    assert!(
        stderr.contains("rev_baby") && stderr.contains("all_preds.jsonl"),
        "{stderr}"
    );
}

/// A Codex session rollout line.
fn line(ty: &str, payload: Value) -> String {
    json!({"timestamp": "2026-11-02T10:00:00Z", "type": ty, "payload": payload}).to_string()
}

/// A parent rollout that spawns one sub-agent (Codex's multi-agent tools: `spawn_agent`
/// returns the child's thread id; `wait_agent` waits on it), and the child's own rollout,
/// whose `session_meta` names the thread that spawned it.
fn codex_family(dir: &Path, child_command: &str) -> (PathBuf, PathBuf) {
    let parent_id = "019a0000-0000-7000-8000-000000000001";
    let child_id = "019a0000-0000-7000-8000-000000000002";
    let parent = [
        line("session_meta", json!({"id": parent_id, "cwd": "/calc", "cli_version": "0.155.0", "source": "exec"})),
        line("turn_context", json!({"model": "gpt-5.2-codex", "cwd": "/calc"})),
        line("event_msg", json!({"type": "user_message", "message": "Fix the overflow in calc."})),
        line("response_item", json!({"type": "function_call", "name": "spawn_agent", "call_id": "call_s",
            "arguments": json!({"message": "Find where the overflow is tested.", "agent_type": "explorer"}).to_string()})),
        line("response_item", json!({"type": "function_call_output", "call_id": "call_s",
            "output": json!({"agent_id": child_id, "nickname": "Dalton"}).to_string()})),
        line("response_item", json!({"type": "function_call", "name": "wait_agent", "call_id": "call_w",
            "arguments": json!({"targets": [child_id], "timeout_ms": 60000}).to_string()})),
        line("response_item", json!({"type": "function_call", "name": "exec_command", "call_id": "call_e",
            "arguments": json!({"cmd": "pytest -q tests/test_ops.py"}).to_string()})),
    ]
    .join("\n");
    let child = [
        line("session_meta", json!({"id": child_id, "cwd": "/calc", "cli_version": "0.155.0",
            "source": {"subagent": {"thread_spawn": {"parent_thread_id": parent_id, "depth": 1, "agent_nickname": "Dalton", "agent_role": "explorer"}}}})),
        line("response_item", json!({"type": "function_call", "name": "exec_command", "call_id": "call_c",
            "arguments": json!({"cmd": child_command}).to_string()})),
    ]
    .join("\n");
    let day = dir.join("sessions/2026/11/02");
    let p = write(
        day.join(format!("rollout-2026-11-02T10-00-00-{parent_id}.jsonl")),
        &parent,
    );
    let c = write(
        day.join(format!("rollout-2026-11-02T10-00-05-{child_id}.jsonl")),
        &child,
    );
    (p, c)
}

#[test]
fn a_codex_sub_agent_is_read_with_its_parent_or_named_as_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let (parent, child) = codex_family(tmp.path(), "git log --all --oneline");
    // The child's forbidden command is found through the parent.
    let (lines, stderr, code) = audit(&parent, &["--instance", "acme_calc_pr7"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines.len(), 1, "{stderr}");
    assert_eq!(lines[0]["class"], "blocklist", "{:#}", lines[0]);
    assert_eq!(lines[0]["blocklist_hits"], json!(["git log --all"]));
    // A folder of sessions audits the parent once, its child with it.
    let (lines, stderr, _) = audit(
        &tmp.path().join("sessions"),
        &["--instance", "acme_calc_pr7"],
    );
    assert_eq!(
        lines.iter().filter(|l| l.get("class").is_some()).count(),
        1,
        "{lines:?}\n{stderr}"
    );
    // Without the child's rollout the trajectory is incomplete, naming the sub-agent.
    std::fs::remove_file(&child).unwrap();
    let (lines, stderr, _) = audit(&parent, &["--instance", "acme_calc_pr7"]);
    assert_eq!(lines[0]["class"], "incomplete", "{:#}\n{stderr}", lines[0]);
    let unread = lines[0]["unread"].to_string();
    assert!(
        unread.contains("spawn_agent") && unread.contains("019a0000-0000-7000-8000-000000000002"),
        "{unread}"
    );
    // Ingest reads the same file the same way: the missing sub-agent is a problem it names.
    let (_, stderr, _) = ingest(&parent, &["--instance", "acme_calc_pr7"]);
    assert!(
        stderr.contains("spawn_agent") && stderr.contains("019a0000-0000-7000-8000-000000000002"),
        "{stderr}"
    );
}

/// Audit evasion: a rollout that claims to be a sub-agent's (its `session_meta` says a thread
/// spawned it) while no rollout spawned it. The claim is the file's own: the folder reads it on
/// its own, and its forbidden command is found, alone or beside a parent that never started it;
/// ingest names it rather than counting it read.
#[test]
fn a_rollout_claiming_to_be_a_sub_agent_is_not_hidden_by_the_claim() {
    let tmp = tempfile::tempdir().unwrap();
    let (parent, child) = codex_family(tmp.path(), "git log --all --oneline");
    // The parent no longer starts it: only the child's own claim remains.
    let text = std::fs::read_to_string(&parent).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            !l.contains("spawn_agent") && !l.contains("wait_agent") && !l.contains("call_s")
        })
        .collect();
    std::fs::write(&parent, kept.join("\n")).unwrap();
    let sessions = tmp.path().join("sessions");
    let hits = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| l["blocklist_hits"] == json!(["git log --all"]))
            .cloned()
            .collect()
    };
    let (lines, stderr, _) = audit(&sessions, &["--instance", "acme_calc_pr7"]);
    assert_eq!(hits(&lines).len(), 1, "{lines:?}\n{stderr}");
    // Alone in its folder, it is audited all the same.
    std::fs::remove_file(&parent).unwrap();
    let (lines, stderr, _) = audit(&sessions, &["--instance", "acme_calc_pr7"]);
    assert_eq!(hits(&lines).len(), 1, "{lines:?}\n{stderr}");
    // Ingest does not count it as read with a parent: it is named.
    let (_, stderr, _) = ingest(&sessions, &[]);
    assert!(
        stderr.contains(&child.file_name().unwrap().to_string_lossy().to_string()),
        "{stderr}"
    );
}

#[test]
fn cline_task_exports_are_named_unsupported() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("tasks/1733400000000");
    write(
        task.join("api_conversation_history.json"),
        &json!([
            {"role": "user", "content": [{"type": "text", "text": "<task>Fix calc</task>"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "<execute_command><command>git log --all</command></execute_command>"}]}
        ])
        .to_string(),
    );
    let ui = write(
        task.join("ui_messages.json"),
        &json!([
            {"ts": 1733400000000u64, "type": "say", "say": "task", "text": "Fix calc"},
            {"ts": 1733400001000u64, "type": "ask", "ask": "command", "text": "git log --all"}
        ])
        .to_string(),
    );
    // The same UI messages under another name are still Cline's.
    let renamed = tmp.path().join("acme_calc_pr7.json");
    std::fs::copy(&ui, &renamed).unwrap();
    for path in [task.clone(), ui, renamed] {
        let (lines, stderr, code) = audit(&path, &[]);
        assert_ne!(code, 0, "{}: {lines:?}", path.display());
        assert!(
            stderr.contains("Cline") && stderr.contains("unsupported"),
            "{}: {stderr}",
            path.display()
        );
        assert!(lines.iter().all(|l| l["class"] != "clean"), "{lines:?}");
        let (preds, stderr, code) = ingest(&path, &[]);
        assert_ne!(code, 0, "{}", path.display());
        assert!(preds.is_empty());
        assert!(
            stderr.contains("Cline") && stderr.contains("unsupported"),
            "{}: {stderr}",
            path.display()
        );
    }
}

/// Fixture files copied into `dir/to`.
fn copy_fixture(from: &str, to: &Path) {
    let src = super::support::fixtures().join("agents").join(from);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(src, to).unwrap();
}

#[test]
fn a_folder_is_read_whole_and_every_file_is_accounted_for() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("mixed");
    // Claude Code transcripts with their captured diffs, beside a predictions file of another
    // run, an OpenHands evaluation folder (deep) beside an event stream, a leaderboard
    // submission, and a SWE-agent run one folder down (its model in its own preds.json).
    copy_fixture(
        "claude-code/acme_calc_pr7.json",
        &root.join("claude/acme_calc_pr7.json"),
    );
    for entry in
        std::fs::read_dir(super::support::fixtures().join("agents/claude-code/patches")).unwrap()
    {
        let e = entry.unwrap();
        copy_fixture(
            &format!("claude-code/patches/{}", e.file_name().to_string_lossy()),
            &root.join("claude/patches").join(e.file_name()),
        );
    }
    write(
        root.join("claude/preds.jsonl"),
        &format!(
            "{}\n",
            json!({"instance_id": "acme_textkit_pr12", "model_name_or_path": "other-run", "model_patch": GOLD})
        ),
    );
    copy_fixture(
        "openhands/output.jsonl",
        &root.join("oh/outputs/swe/CodeActAgent/acme-model_maxiter_50/output.jsonl"),
    );
    write(
        root.join("oh/acme_calc_pr7.json"),
        &json!([
            {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls"}},
            {"id": 2, "source": "environment", "observation": "run", "content": "calc"}
        ])
        .to_string(),
    );
    let board = root.join("board/20261101_acme");
    write(
        board.join("all_preds.jsonl"),
        &format!(
            "{}\n",
            json!({"instance_id": "acme_calc_pr7", "model_name_or_path": "20261101_acme", "model_patch": GOLD})
        ),
    );
    write(board.join("metadata.yaml"), "info:\n  name: acme\n");
    write(board.join("logs/acme_calc_pr7/test_output.txt"), "ok\n");
    copy_fixture(
        "swe-agent/acme_calc_pr7/acme_calc_pr7.traj",
        &root.join("runs/run1/acme_calc_pr7/acme_calc_pr7.traj"),
    );
    copy_fixture("swe-agent/preds.json", &root.join("runs/run1/preds.json"));
    let (preds, stderr, _) = ingest(&root, &[]);
    let from = |part: &str| -> Vec<(String, String)> {
        preds
            .iter()
            .filter(|p| p["source_path"].as_str().unwrap().contains(part))
            .map(|p| {
                (
                    p["instance_id"].as_str().unwrap().to_owned(),
                    p["model_name_or_path"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    // The predictions beside the transcripts and the leaderboard's are read, not dropped.
    assert_eq!(
        from("claude/preds.jsonl"),
        [("acme_textkit_pr12".to_owned(), "other-run".to_owned())],
        "{stderr}"
    );
    assert_eq!(
        from("board/20261101_acme/all_preds.jsonl"),
        [("acme_calc_pr7".to_owned(), "20261101_acme".to_owned())],
        "{stderr}"
    );
    // The SWE-agent run is read as SWE-agent's, through the parent folder, with its model.
    let swe: Vec<&Value> = preds
        .iter()
        .filter(|p| p["source_format"] == "swe-agent")
        .collect();
    assert_eq!(swe.len(), 2, "{stderr}");
    assert!(
        swe.iter().all(|p| p["model_name_or_path"] == "acme-model"),
        "{swe:?}"
    );
    // The deep OpenHands output is read beside the event stream.
    assert_eq!(
        from("acme-model_maxiter_50/output.jsonl").len(),
        2,
        "{stderr}"
    );
    // The transcript takes the diff captured beside it, in its own folder's patches/.
    let claude: Vec<&Value> = preds
        .iter()
        .filter(|p| p["source_format"] == "claude-code")
        .collect();
    assert_eq!(claude.len(), 1, "{stderr}");
    assert!(
        claude[0]["model_patch"]
            .as_str()
            .is_some_and(|p| p.contains("diff --git"))
    );
    // Two transcripts without a patch are two runs: neither is dropped as a repeat.
    assert!(!stderr.contains("dropped"), "{stderr}");
    // Every file is counted, and each one not read is named with why.
    let head = stderr.lines().next().unwrap();
    assert!(head.contains("10 file(s): 8 read, 2 not read"), "{head}");
    for (f, why) in [
        ("metadata.yaml", "not an agent's output"),
        ("test_output.txt", "not an agent's output"),
    ] {
        assert!(
            stderr
                .lines()
                .any(|l| l.contains(f) && l.contains("not read:") && l.contains(why)),
            "{f} not named: {stderr}"
        );
    }
}

/// What ingest makes of a path: each submission's (agent, instance), or `None` when it refuses.
fn ingest_view(path: &Path) -> Option<Vec<(String, String)>> {
    let ing = beyondswe::submission::ingest(path, None, None).ok()?;
    let mut out: Vec<(String, String)> = ing
        .items
        .iter()
        .map(|i| (i.format.name().to_owned(), i.instance_id.clone()))
        .collect();
    out.sort();
    out.dedup();
    Some(out)
}

/// What the audit makes of a path: each trajectory's (agent, instance) it reads steps of.
fn audit_view(path: &Path) -> Vec<(String, String)> {
    use beyondswe::audit::{Item, for_each_item};
    let mut out = Vec::new();
    let _ = for_each_item(path, None, |_, item| {
        let got = match item {
            Ok(Item::Trajectory { about, transcript }) => {
                Some((transcript.agent().name().to_owned(), about.task_name))
            }
            _ => None,
        };
        out.extend(got);
    });
    out.sort();
    out.dedup();
    out
}

/// The agent fixtures' files, in path order: every file under `agents` but the Harbor jobs'
/// (compared as jobs), the README and the real-file list.
fn agent_fixture_files(agents: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = walkdir::WalkDir::new(agents)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(walkdir::DirEntry::into_path)
        .filter(|p| {
            let s = p.to_string_lossy();
            !s.contains("harbor-job")
                && !s.contains("harbor-raw")
                && !s.ends_with("README.md")
                && !s.ends_with("real-files.json")
        })
        .collect();
    paths.sort();
    paths
}

/// Every agent fixture goes through ingest and the audit, which must agree on whose it is and
/// which instance it is about: the audit reads the steps of every trajectory ingest takes a
/// submission from (predictions carry no steps, and Harbor jobs are compared by their tasks),
/// and reads nothing ingest refuses.
#[test]
fn ingest_and_audit_read_every_agent_fixture_alike() {
    let agents = super::support::fixtures().join("agents");
    let mut paths = agent_fixture_files(&agents);
    paths.push(agents.join("harbor-job/2026-03-25__10-00-00"));
    paths.push(agents.join("transcripts/harbor-raw"));
    let mut compared = 0;
    let mut disagree = Vec::new();
    for p in &paths {
        let ing = ingest_view(p);
        let aud = audit_view(p);
        let agrees = match &ing {
            None => aud.is_empty(),
            Some(items) if items.iter().all(|(f, _)| f == "predictions") => aud.is_empty(),
            Some(items) if items.iter().all(|(f, _)| f == "harbor-job") => {
                let mut a: Vec<&String> = aud.iter().map(|(_, t)| t).collect();
                let mut i: Vec<&String> = items.iter().map(|(_, t)| t).collect();
                a.sort();
                i.sort();
                a == i
            }
            Some(items) => {
                compared += 1;
                *items == aud
            }
        };
        if !agrees {
            disagree.push(format!("{}: ingest {ing:?}, audit {aud:?}", p.display()));
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
    assert!(compared >= 12, "only {compared} trajectories compared");
}

/// A trajectory release is read by ingest, one submission a line (the patch it published, the
/// reward it claims, a task's lines as its attempts), and by the audit, the steps of each line,
/// under the same instances line for line: the release `release from-harbor` writes of the job
/// fixture (its tasks name their instance ids), and a published set whose lines carry no patch.
/// Ingest refused a release ("not a format beyondswe reads"), and named one in a folder "not an
/// agent's output".
#[test]
fn ingest_and_audit_read_a_release_line_for_line() {
    let fixtures = super::support::fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let made = tmp.path().join("release.jsonl");
    cargo_bin_cmd!("beyondswe")
        .args(["release", "from-harbor"])
        .arg(fixtures.join("agents/harbor-job"))
        .arg("-o")
        .arg(&made)
        .assert()
        .success();
    let published = fixtures.join("audit/release.jsonl");
    for (path, with_patches) in [(made.clone(), 3), (published, 0)] {
        let ing = beyondswe::submission::ingest(&path, None, None).unwrap();
        assert_eq!(
            ing.format,
            Some(beyondswe::submission::AgentFormat::Release)
        );
        let mut ingested: Vec<String> = ing.items.iter().map(|i| i.instance_id.clone()).collect();
        let mut audited = Vec::new();
        // A line whose trial left no steps, or whose trajectory is in no known shape, is an
        // error naming its instance.
        let _ = beyondswe::audit::for_each_item(&path, None, |_, item| match item {
            Ok(beyondswe::audit::Item::Trajectory { about, .. }) => audited.push(about.task_name),
            Ok(_) => {}
            Err(e)
                if e.contains("the trial left no steps")
                    || e.contains("no trajectory in a known shape") =>
            {
                audited.extend(e.split(": ").next().map(str::to_owned))
            }
            Err(_) => {}
        });
        ingested.sort();
        audited.sort();
        assert!(!ingested.is_empty(), "{}", path.display());
        assert_eq!(ingested, audited, "{}", path.display());
        let patched = ing.items.iter().filter(|i| i.patch().is_some()).count();
        assert_eq!(
            patched,
            with_patches,
            "{}: {:?}",
            path.display(),
            ing.problems
        );
    }
    // The job's release: a task's trials are its attempts, numbered as ingest numbers the
    // job's own trials (by start time, which is not the release's line order here), each with
    // the reward and the patch the job gives it.
    let ing = beyondswe::submission::ingest(&made, None, None).unwrap();
    assert!(ing.problems.is_empty(), "{:?}", ing.problems);
    let job =
        beyondswe::submission::ingest(&fixtures.join("agents/harbor-job"), None, None).unwrap();
    let view = |items: &[beyondswe::submission::Ingested]| {
        let mut v: Vec<(String, u32, String, Option<Vec<u8>>)> = items
            .iter()
            .map(|i| {
                let reward = format!("{:?}", i.reward);
                (
                    i.instance_id.clone(),
                    i.attempt,
                    reward,
                    i.patch().map(<[u8]>::to_vec),
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(view(&ing.items), view(&job.items));
    let calc: Vec<(u32, Option<f64>)> = ing
        .items
        .iter()
        .filter(|i| i.instance_id == "acme_calc_pr7")
        .map(|i| (i.attempt, i.reward))
        .collect();
    assert!(
        calc.contains(&(1, Some(1.0))) && calc.contains(&(2, Some(0.0))),
        "{calc:?}"
    );
    // The trial that left no steps is named so by the audit, as in the job's own directory.
    let audit = cargo_bin_cmd!("beyondswe")
        .arg("audit")
        .arg(&made)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&audit.stderr);
    assert!(stderr.contains("the trial left no steps"), "{stderr}");
    // In a folder beside another agent's output, the release is read, not named as unread.
    let dir = tmp.path().join("folder");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&made, dir.join("trials.jsonl")).unwrap();
    std::fs::copy(
        fixtures.join("agents/claude-code/acme_calc_pr7.json"),
        dir.join("acme_calc_pr7.json"),
    )
    .unwrap();
    let ing = beyondswe::submission::ingest(&dir, None, None).unwrap();
    assert_eq!(ing.files_counted, Some((2, 0)), "{:?}", ing.warnings);
    assert_eq!(
        ing.items
            .iter()
            .filter(|i| i.format == beyondswe::submission::AgentFormat::Release)
            .count(),
        4
    );
}

/// Each trajectory's steps, counted, under its instance: as ingest read them (its submissions
/// that carry steps), and as the audit read them.
fn step_views(path: &Path) -> Option<(Vec<String>, Vec<String>)> {
    use beyondswe::audit::{Item, for_each_item};
    let ing = beyondswe::submission::ingest(path, None, None).ok()?;
    let mut ingested: Vec<String> = ing
        .items
        .iter()
        .filter_map(|i| Some(format!("{} {:?}", i.instance_id, i.steps?)))
        .collect();
    let mut audited = Vec::new();
    let _ = for_each_item(path, None, |_, item| {
        let got = match item {
            Ok(Item::Trajectory { about, transcript }) => {
                Some(format!("{} {:?}", about.task_name, transcript.counts()))
            }
            _ => None,
        };
        audited.extend(got);
    });
    ingested.sort();
    audited.sort();
    Some((ingested, audited))
}

/// Ingest and the audit read every agent fixture's steps alike: each submission ingest read a
/// trajectory for carries the counts of its steps (tool calls, commands, pages and searches,
/// edits, calls not read, sub-agents not read), and they are the audit's for that trajectory,
/// file by file and folder by folder, Harbor jobs included. Ingest read no steps of OpenHands
/// `output.jsonl`, AweAgent, release lines or Harbor trials before.
#[test]
fn ingest_and_audit_count_the_same_steps_of_every_agent_fixture() {
    let agents = super::support::fixtures().join("agents");
    let mut paths = agent_fixture_files(&agents);
    paths.push(agents.join("harbor-job/2026-03-25__10-00-00"));
    paths.push(agents.join("transcripts/harbor-raw"));
    paths.extend(
        walkdir::WalkDir::new(&agents)
            .min_depth(1)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_dir() && !e.path().ends_with("patches"))
            .map(walkdir::DirEntry::into_path),
    );
    let mut compared = 0;
    let mut disagree = Vec::new();
    for p in &paths {
        let Some((ing, aud)) = step_views(p) else {
            continue;
        };
        compared += ing.len();
        if ing != aud {
            disagree.push(format!(
                "{}:\n  ingest {ing:#?}\n  audit  {aud:#?}",
                p.display()
            ));
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
    eprintln!("{compared} trajectories compared");
    assert!(compared >= 40, "only {compared} trajectories compared");
}

/// Every folder of agent fixtures, read whole, goes through ingest and the audit alike: the
/// trajectories the audit reads steps of are those ingest takes submissions from (its
/// predictions and Harbor trials aside, compared as above).
#[test]
fn ingest_and_audit_read_every_fixture_folder_alike() {
    let agents = super::support::fixtures().join("agents");
    let mut disagree = Vec::new();
    for e in walkdir::WalkDir::new(&agents)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_dir())
    {
        let p = e.path();
        let s = p.to_string_lossy();
        if s.contains("harbor-job") || s.contains("harbor-raw") || s.ends_with("patches") {
            continue;
        }
        let ing: Vec<(String, String)> = ingest_view(p)
            .unwrap_or_default()
            .into_iter()
            .filter(|(f, _)| f != "predictions")
            .collect();
        let aud = audit_view(p);
        // A folder holding a Harbor job is read as that job: compared by its tasks.
        let tasks = |v: &[(String, String)]| {
            let mut t: Vec<String> = v.iter().map(|(_, t)| t.clone()).collect();
            t.sort();
            t
        };
        let harbor = !ing.is_empty() && ing.iter().all(|(f, _)| f == "harbor-job");
        if (harbor && tasks(&ing) != tasks(&aud)) || (!harbor && ing != aud) {
            disagree.push(format!(
                "{}:\n  ingest {ing:?}\n  audit  {aud:?}",
                p.display()
            ));
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

/// A transcript a CLI's output was sent to as `<instance>.log` is read by both commands, in a
/// folder and alone, under that instance (ingest left it out of a folder, and the audit named
/// its instance `acme_textkit_pr12.log`).
#[test]
fn a_transcript_saved_as_a_log_file_is_read_alike() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(
        super::support::fixtures().join("agents/claude-code/acme_textkit_pr12.jsonl"),
        tmp.path().join("acme_textkit_pr12.log"),
    )
    .unwrap();
    let want = vec![("claude-code".to_owned(), "acme_textkit_pr12".to_owned())];
    for p in [
        tmp.path().to_owned(),
        tmp.path().join("acme_textkit_pr12.log"),
    ] {
        assert_eq!(ingest_view(&p), Some(want.clone()), "{}", p.display());
        assert_eq!(audit_view(&p), want, "{}", p.display());
    }
}

/// A Harbor trial's instance is its task's `instance_id` where the task directory is still where
/// the trial says, for the audit as for ingest: Harbor's task name is the lower-cased directory
/// name, and the audit named the trial by it where ingest named the instance.
#[test]
fn a_harbor_trial_is_named_by_its_tasks_instance_id_in_both_commands() {
    let (tmp, job) = job_copy("agents/transcripts/harbor-raw/2026-04-02__09-00-00");
    let task = tmp.path().join("tasks/acme_calc_pr7");
    std::fs::create_dir_all(&task).unwrap();
    std::fs::write(
        task.join("task.toml"),
        "version = \"1.0\"\n\n[metadata]\ninstance_id = \"Acme_Calc_PR7\"\n",
    )
    .unwrap();
    for trial in std::fs::read_dir(&job).unwrap() {
        let result = trial.unwrap().path().join("result.json");
        if !result.is_file() {
            continue;
        }
        let mut v: Value =
            serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
        if v["task_name"] == "acme_calc_pr7" {
            v["task_id"] = json!({"path": task.display().to_string()});
            std::fs::write(&result, v.to_string()).unwrap();
        }
    }
    let names = |v: Vec<(String, String)>| {
        let mut t: Vec<String> = v.into_iter().map(|(_, t)| t).collect();
        t.sort();
        t
    };
    let want = vec!["Acme_Calc_PR7".to_owned(), "acme_textkit_pr12".to_owned()];
    assert_eq!(names(ingest_view(&job).unwrap()), want);
    assert_eq!(names(audit_view(&job)), want);
}

/// `beyondswe audit --format json PATH`: one row per trajectory.
fn audit_rows(path: &Path) -> Vec<Value> {
    let out = cargo_bin_cmd!("beyondswe")
        .args(["audit", "--format", "json"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// AweAgent's reward is its line's `score`, for the audit as for ingest (the audit had none).
#[test]
fn an_aweagent_score_is_the_reward_in_both_commands() {
    let path = super::support::fixtures().join("agents/aweagent/trajectories.jsonl");
    let ing = beyondswe::submission::ingest(&path, None, None).unwrap();
    let audits = audit_rows(&path);
    assert_eq!(audits.len(), 2);
    for (i, a) in ing.items.iter().zip(&audits) {
        assert_eq!(a["task_name"], i.instance_id.as_str());
        assert_eq!(i.reward, Some(1.0));
        assert_eq!(a["reward"], 1.0, "{a}");
    }
}

/// A Harbor job's trials come in one order from both commands, by instance and then by start
/// time: the audit's line n is ingest's n-th submission, and says its attempt (the audit went in
/// directory order, and its line 1 was a failed attempt where ingest's attempt 1 had passed).
#[test]
fn a_harbor_jobs_trials_come_in_ingests_order_from_the_audit() {
    let job = super::support::fixtures().join("agents/harbor-job/2026-03-25__10-00-00");
    let ing = beyondswe::submission::ingest(&job, None, None).unwrap();
    let mut audited = Vec::new();
    beyondswe::audit::for_each_item(&job, None, |n, item| {
        let seen = match item {
            Ok(beyondswe::audit::Item::Trajectory { about, .. }) => {
                Some((about.task_name, about.reward))
            }
            _ => None,
        };
        audited.push((n, seen));
    })
    .unwrap();
    assert_eq!(audited.len(), ing.items.len());
    let mut compared = 0;
    for ((n, seen), i) in audited.iter().zip(&ing.items) {
        if let Some((task, reward)) = seen {
            assert_eq!((task, *reward), (&i.instance_id, i.reward), "line {n}");
            compared += 1;
        }
    }
    assert!(compared >= 3, "{audited:?}");
    // And each audited trial says its attempt, as ingest numbers its submission.
    let rows = audit_rows(&job);
    assert!(rows.len() >= 3, "{rows:?}");
    for row in &rows {
        let n = row["line"].as_u64().unwrap() as usize;
        let i = &ing.items[n - 1];
        assert_eq!(
            (row["task_name"].as_str(), row["attempt"].as_u64()),
            (Some(i.instance_id.as_str()), Some(u64::from(i.attempt))),
            "{row}"
        );
    }
}

/// `--instance` names a folder's one transcript for ingest as for the audit (a Claude Code
/// project folder holds its session under the session's id): ingest skipped it. Beside a
/// second transcript, of another agent, it names neither.
#[test]
fn instance_names_a_folders_one_transcript_in_both_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let session = "3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9.jsonl";
    std::fs::copy(
        super::support::fixtures()
            .join("agents/transcripts/claude-code-session")
            .join(session),
        tmp.path().join(session),
    )
    .unwrap();
    let ing = beyondswe::submission::ingest_with(
        tmp.path(),
        &beyondswe::submission::IngestOptions {
            instance: Some("acme_calc_pr7".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let ids: Vec<&str> = ing.items.iter().map(|i| i.instance_id.as_str()).collect();
    assert_eq!(ids, ["acme_calc_pr7"]);
    let mut audited = Vec::new();
    beyondswe::audit::for_each_item(tmp.path(), Some("acme_calc_pr7"), |_, item| {
        if let Ok(beyondswe::audit::Item::Trajectory { about, .. }) = item {
            audited.push(about.task_name);
        }
    })
    .unwrap();
    assert_eq!(audited, ["acme_calc_pr7"]);
    // Beside another agent's transcript it names neither, in both commands.
    let rollout =
        std::fs::read_dir(super::support::fixtures().join("agents/transcripts/codex-rollout"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with(".jsonl"))
            .unwrap();
    std::fs::copy(&rollout, tmp.path().join(rollout.file_name().unwrap())).unwrap();
    let ing = beyondswe::submission::ingest_with(
        tmp.path(),
        &beyondswe::submission::IngestOptions {
            instance: Some("acme_calc_pr7".into()),
            ..Default::default()
        },
    );
    assert!(
        ing.as_ref().map_or(true, |i| i.items.is_empty()),
        "{:?}",
        ing.map(|i| i.items.len())
    );
    let mut audited = Vec::new();
    beyondswe::audit::for_each_item(tmp.path(), Some("acme_calc_pr7"), |_, item| {
        if let Ok(beyondswe::audit::Item::Trajectory { about, .. }) = item {
            audited.push(about.task_name);
        }
    })
    .unwrap();
    assert!(audited.is_empty(), "{audited:?}");
}

/// Both commands look as deep into a folder: an OpenHands event stream four levels down and a
/// SWE-agent trajectory six down are read by ingest as by the audit (ingest looked three and
/// five levels down).
#[test]
fn both_commands_look_as_deep_into_a_folder() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path().join("oh/a/b/acme_textkit_pr12.json"),
        &json!([
            {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls"}},
            {"id": 2, "source": "environment", "observation": "run", "content": "calc"}
        ])
        .to_string(),
    );
    let want = vec![("openhands".to_owned(), "acme_textkit_pr12".to_owned())];
    assert_eq!(ingest_view(tmp.path()), Some(want.clone()));
    assert_eq!(audit_view(tmp.path()), want);
    let tmp = tempfile::tempdir().unwrap();
    copy_fixture(
        "swe-agent/acme_calc_pr7/acme_calc_pr7.traj",
        &tmp.path().join("r/s/t/u/acme_calc_pr7/acme_calc_pr7.traj"),
    );
    let want = vec![("swe-agent".to_owned(), "acme_calc_pr7".to_owned())];
    assert_eq!(ingest_view(tmp.path()), Some(want.clone()));
    assert_eq!(audit_view(tmp.path()), want);
}

/// OpenHands' software-agent SDK (v1) writes its history as typed events (`kind`), as its
/// benchmarks' `output.jsonl` files hold them: a terminal action's command is read, and an
/// action of a kind not read makes the trajectory incomplete, never clean.
#[test]
fn an_openhands_sdk_history_is_read_and_what_is_not_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let action = |kind: &str, tool: &str, extra: Value| {
        let mut a = json!({"kind": kind});
        a.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"kind": "ActionEvent", "source": "agent", "thought": [{"type": "text", "text": "Look first."}],
               "action": a, "tool_name": tool, "tool_call_id": "c", "llm_response": {"model": "gpt-4o"}})
    };
    let line = |history: Vec<Value>| {
        json!({"instance_id": "acme_calc_pr7", "instruction": "Fix calc.",
               "metadata": {"llm": {"model": "litellm_proxy/gpt-4o"}},
               "test_result": {"git_patch": GOLD}, "history": history})
        .to_string()
    };
    let observation = json!({"kind": "ObservationEvent", "source": "environment", "observation": {"kind": "ExecuteBashObservation", "output": "ok"}});
    let file = write(
        tmp.path().join("sdk/output.jsonl"),
        &format!(
            "{}\n",
            line(vec![
                json!({"kind": "MessageEvent", "source": "user", "llm_message": {"role": "user", "content": [{"type": "text", "text": "Fix calc."}]}}),
                action(
                    "ExecuteBashAction",
                    "execute_bash",
                    json!({"command": "cd /calc && git log --all"})
                ),
                observation.clone(),
                action(
                    "FileEditorAction",
                    "file_editor",
                    json!({"command": "str_replace", "path": "/calc/ops.py", "old_str": "git pull", "new_str": "x"})
                ),
                action("FinishAction", "finish", json!({"message": "Done."})),
            ])
        ),
    );
    let (lines, stderr, code) = audit(&file, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines[0]["shape"], "openhands-history");
    assert_eq!(lines[0]["class"], "blocklist", "{:#}", lines[0]);
    // The editor's sub-command and text are no shell command.
    assert_eq!(lines[0]["blocklist_hits"], json!(["git log --all"]));
    let (preds, stderr, _) = ingest(&file, &[]);
    assert_eq!(
        preds[0]["model_name_or_path"], "litellm_proxy/gpt-4o",
        "{stderr}"
    );
    let unknown = write(
        tmp.path().join("sdk2/output.jsonl"),
        &format!(
            "{}\n",
            line(vec![action(
                "MCPToolAction",
                "fetch",
                json!({"data": {"url": "x"}})
            )])
        ),
    );
    let (lines, stderr, _) = audit(&unknown, &[]);
    assert_eq!(lines[0]["class"], "incomplete", "{:#}\n{stderr}", lines[0]);
    assert!(lines[0]["unread"].to_string().contains("MCPToolAction"));
}

/// A Gemini CLI chat recording saved with a byte-order mark is read as without it; one nested
/// 100,000 levels deep is refused with that cause named, by ingest and the audit alike.
#[test]
fn a_chat_with_a_bom_is_read_and_one_nested_too_deep_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let chat = std::fs::read_to_string(
        super::support::fixtures().join("agents/transcripts/gemini-chat/acme_calc_pr7.json"),
    )
    .unwrap();
    let bom = write(
        tmp.path().join("bom/acme_calc_pr7.json"),
        &format!("\u{feff}{chat}"),
    );
    let (lines, stderr, code) = audit(&bom, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines[0]["shape"], "gemini-chat", "{stderr}");
    let (_, stderr, _) = ingest(&bom, &[]);
    assert!(stderr.contains("gemini-cli: 1 submission"), "{stderr}");
    let deep = write(
        tmp.path().join("deep/acme_calc_pr7.json"),
        &format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
    );
    for (what, stderr) in [
        ("ingest", ingest(&deep, &[]).1),
        ("audit", audit(&deep, &[]).1),
    ] {
        // The parser's limit, by name (serde_json reads 128 levels).
        assert!(stderr.contains("recursion limit"), "{what}: {stderr}");
    }
}

/// One trajectory of a run ingested alone takes its model and patch from the run's predictions
/// file in its folder or one above it (`<run>/<id>/<id>.traj` beside `<run>/preds.json`; a
/// leaderboard's `trajs/<id>.traj` beside `all_preds.jsonl`), also with `--instance`, and
/// yields that one submission, not the run's others.
#[test]
fn one_trajectory_of_a_run_takes_the_run_s_predictions_and_only_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    for f in [
        "preds.json",
        "acme_calc_pr7/acme_calc_pr7.traj",
        "acme_textkit_pr12/acme_textkit_pr12.traj",
    ] {
        copy_fixture(&format!("swe-agent/{f}"), &run.join(f));
    }
    let traj = run.join("acme_calc_pr7/acme_calc_pr7.traj");
    for extra in [&[][..], &["--instance", "acme_calc_pr7"][..]] {
        let (lines, stderr, code) = ingest(&traj, extra);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(lines.len(), 1, "{stderr}");
        assert_eq!(lines[0]["instance_id"], "acme_calc_pr7");
        assert_eq!(lines[0]["model_name_or_path"], "acme-model", "{stderr}");
    }
}

/// A Harbor trial's steps are read from one place for ingest (the files a replay reads) and the
/// audit: its raw agent log when it left one, else its ATIF trajectory (ingest kept no file for
/// a trial with only `agent/trajectory.json`, so `--reconstruct` had nothing to replay); a
/// trajectory that is a link is neither's; a trial with neither says so in both.
#[test]
fn a_harbor_trials_steps_are_read_from_the_same_file_by_both_commands() {
    use beyondswe::audit::{Item, for_each_item};
    let (tmp, job) = job_copy("agents/harbor-job/2026-03-25__10-00-00");
    let trial = job.join("acme_calc_pr7__a8Kp2Qz");
    let audited = |job: &Path| {
        let mut out = Vec::new();
        for_each_item(job, None, |_, item| {
            out.push(match item {
                Ok(Item::Trajectory { about, .. }) => format!("read {}", about.source),
                Ok(_) => "other".to_owned(),
                Err(e) => format!("error {e}"),
            })
        })
        .unwrap();
        out
    };
    // What ingest makes of the trial.
    let ingested = || {
        beyondswe::submission::ingest(&job, None, None)
            .unwrap()
            .items
            .into_iter()
            .find(|i| i.source == trial.display().to_string())
            .unwrap()
    };
    let item = ingested();
    assert_eq!(item.transcript, vec![trial.join("agent/trajectory.json")]);

    // A link in its place leads out of the trial: neither command reads it.
    let outside = tmp.path().join("elsewhere.json");
    std::fs::rename(trial.join("agent/trajectory.json"), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, trial.join("agent/trajectory.json")).unwrap();
    let item = ingested();
    assert!(item.transcript.is_empty(), "{:?}", item.transcript);
    assert!(
        item.note
            .as_deref()
            .unwrap_or_default()
            .contains("no agent/trajectory.json"),
        "{:?}",
        item.note
    );
    let lines = audited(&job);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("error") && l.contains("acme_calc_pr7__a8Kp2Qz: no agent log")),
        "{lines:?}"
    );
}

/// A fixture's Harbor job (`rel` under `fixtures/`) copied to `job/` in a new temporary folder.
fn job_copy(rel: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let job = tmp.path().join("job");
    super::support::copy_dir(&super::support::fixtures().join(rel), &job);
    (tmp, job)
}

/// The instances ingest takes a submission from, each with its patch.
fn submissions(path: &Path) -> Vec<(String, String)> {
    let ing = beyondswe::submission::ingest(path, None, None)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out: Vec<(String, String)> = ing
        .items
        .iter()
        .map(|i| {
            let patch = match &i.submitted {
                Some(beyondswe::submission::Submitted::Patch(p)) => {
                    String::from_utf8_lossy(p).into_owned()
                }
                other => format!("{other:?}"),
            };
            (i.instance_id.clone(), patch)
        })
        .collect();
    out.sort();
    out
}

/// A file of one submission a line (OpenHands output, AweAgent trajectories) is read by its
/// records, not by its name or its first line: behind a log line or a header object, renamed in
/// a folder, or one folder down, ingest takes the same submissions from it as from the file
/// itself, and the audit reads the same trajectories. Ingest read such a file behind a header
/// line as predictions with empty patches, and left a renamed one (or AweAgent's run one folder
/// down) unread, while the audit read them; a folder's `predictions.jsonl` of such lines was read
/// twice, as the agent's and as predictions with empty patches.
#[test]
fn a_file_of_submission_lines_is_read_alike_whatever_its_name_or_first_line() {
    let agents = super::support::fixtures().join("agents");
    for (fixture, format) in [
        ("openhands/output.jsonl", "openhands"),
        ("aweagent/trajectories.jsonl", "aweagent"),
    ] {
        let original = agents.join(fixture);
        let want = submissions(&original);
        assert!(
            want.iter().any(|(_, p)| !p.is_empty()),
            "{fixture}: {want:?}"
        );
        let text = std::fs::read_to_string(&original).unwrap();
        for (case, head) in [
            ("as it is", ""),
            (
                "behind a header object",
                "{\"run\": \"eval-3\", \"started\": 1733}\n",
            ),
            ("behind a log line", "Starting evaluation of 2 instances\n"),
            ("after a byte order mark", "\u{feff}"),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let file = tmp.path().join("run-3.jsonl");
            std::fs::write(&file, format!("{head}{text}")).unwrap();
            let deep = tmp.path().join("folder/outputs/model");
            std::fs::create_dir_all(&deep).unwrap();
            std::fs::write(deep.join("results-a.jsonl"), format!("{head}{text}")).unwrap();
            // Under a predictions name it is still the agent's output, read once as that agent's.
            let named = tmp.path().join("named");
            std::fs::create_dir_all(&named).unwrap();
            std::fs::write(named.join("predictions.jsonl"), format!("{head}{text}")).unwrap();
            for path in [file.clone(), tmp.path().join("folder"), named] {
                let what = format!("{fixture} {case}, {}", path.display());
                assert_eq!(submissions(&path), want, "{what}");
                let ing = ingest_view(&path).unwrap_or_default();
                assert!(ing.iter().all(|(f, _)| f == format), "{what}: {ing:?}");
                assert_eq!(ing, audit_view(&path), "{what}");
            }
        }
    }
}

/// Every agent fixture file, moved three folders down, renamed in a folder, and (JSON lines)
/// behind a header object or a log line, alone or in a folder, is read alike by ingest and the
/// audit: the same agents and instances (predictions aside, which carry no steps).
#[test]
fn every_agent_fixture_is_read_alike_moved_renamed_or_behind_a_header() {
    let agents = super::support::fixtures().join("agents");
    let paths = agent_fixture_files(&agents);
    let mut out = Vec::new();
    let mut compared = 0;
    for p in &paths {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read(p).unwrap();
        let mut cases: Vec<(String, PathBuf)> = Vec::new();
        let tmp = tempfile::tempdir().unwrap();
        let deep = tmp.path().join("f/a/b");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join(&name), &text).unwrap();
        cases.push(("deep".into(), tmp.path().join("f")));
        let r = tmp.path().join("r");
        std::fs::create_dir_all(&r).unwrap();
        std::fs::write(r.join(format!("run-{name}")), &text).unwrap();
        cases.push(("renamed".into(), r.clone()));
        if name.ends_with(".jsonl") {
            let mut t = b"{\"header\": 1}\n".to_vec();
            t.extend_from_slice(&text);
            let j = tmp.path().join(format!("h-{name}"));
            std::fs::write(&j, &t).unwrap();
            cases.push(("header".into(), j));
            let mut t = b"Starting the run\n".to_vec();
            t.extend_from_slice(&text);
            let j = tmp.path().join(format!("t-{name}"));
            std::fs::write(&j, &t).unwrap();
            cases.push(("text".into(), j));
            let hd = tmp.path().join("hd");
            std::fs::create_dir_all(&hd).unwrap();
            std::fs::write(hd.join(&name), &t).unwrap();
            cases.push(("text-in-folder".into(), hd));
        }
        compared += cases.len();
        for (case, path) in cases {
            let ing = ingest_view(&path);
            let aud = audit_view(&path);
            let ing2: Vec<(String, String)> = ing
                .clone()
                .unwrap_or_default()
                .into_iter()
                .filter(|(f, _)| f != "predictions")
                .collect();
            if ing2 != aud {
                out.push(format!(
                    "{} [{case}]\n   ingest {ing:?}\n   audit  {aud:?}",
                    p.strip_prefix(&agents).unwrap().display()
                ));
            }
        }
    }
    assert!(out.is_empty(), "{}", out.join("\n"));
    assert!(compared >= 60, "only {compared} layouts compared");
}
