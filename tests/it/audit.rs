//! The audit on a release written to cover every class, every trajectory shape and every
//! blocklist evasion, with clean controls and bad lines (fixtures/audit, expected.json).

use super::support::fixtures;
use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;
use std::collections::BTreeMap;

fn audit(extra: &[&str]) -> (BTreeMap<u64, Value>, String, String, i32) {
    let mut cmd = cargo_bin_cmd!("beyondswe");
    cmd.arg("audit")
        .arg(fixtures().join("audit/release.jsonl"))
        .arg("--dataset")
        .arg(fixtures().join("audit/dataset.jsonl"))
        .args(extra);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let by_line = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| (v["line"].as_u64().unwrap(), v))
        .collect();
    (
        by_line,
        stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn sorted(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(str::to_owned))
        .collect();
    out.sort();
    out
}

#[test]
fn every_line_gets_its_expected_class_and_blocklist_hits() {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("audit/expected.json")).unwrap(),
    )
    .unwrap();
    let (ours, _, stderr, code) = audit(&["--json"]);
    let (no_search, _, _, _) = audit(&["--json", "--search-disallowed"]);
    assert_eq!(code, 1, "bad lines must make the exit code non-zero");
    let lines = expected["lines"].as_array().unwrap();
    assert!(lines.len() >= 25);
    for l in lines {
        let n = l["line"].as_u64().unwrap();
        if l.get("error").is_some() {
            assert!(
                !ours.contains_key(&n),
                "line {n} should be reported, not audited"
            );
            assert!(
                stderr.contains(&format!("release.jsonl:{n}:")),
                "line {n} not reported: {stderr}"
            );
            continue;
        }
        let got = &ours[&n];
        assert_eq!(got["task_name"], l["task_name"], "line {n}");
        assert_eq!(got["class"], l["class"], "line {n}: {got:#}");
        // A blocklist hit outranks a milder PR finding, which stays in the evidence.
        if let Some(pr) = l["pr_class"].as_str() {
            let finding = if pr == "prompt_supplied" {
                "tier_b_candidate"
            } else {
                pr
            };
            assert!(
                got["evidence"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|e| e["finding"] == finding),
                "line {n}: no {finding} evidence: {got:#}"
            );
        }
        assert_eq!(got["shape"], l["shape"], "line {n}");
        assert_eq!(
            sorted(&got["blocklist_hits"]),
            sorted(&l["blocklist"]),
            "line {n}: {got:#}"
        );
        // Web access the setting forbids: each rule once, each URL or command in the evidence.
        let evidence = got["evidence"].as_array().unwrap();
        let mut rules: Vec<String> = l["web_hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["rule"].as_str().unwrap().to_owned())
            .collect();
        rules.sort();
        rules.dedup();
        assert_eq!(sorted(&got["web_hits"]), rules, "line {n}: {got:#}");
        for w in l["web_hits"].as_array().unwrap() {
            assert!(
                evidence.iter().any(|e| e["finding"] == "web_blocklist"
                    && e["excerpt"] == w["rule"]
                    && e["what"]
                        .as_str()
                        .unwrap()
                        .contains(w["value"].as_str().unwrap())),
                "line {n}: no web hit for {w}: {got:#}"
            );
        }
        // Allowed pages of the repository are listed, never hits.
        for u in l["same_repo_urls"].as_array().unwrap() {
            assert!(
                evidence
                    .iter()
                    .any(|e| e["finding"] == "same_repo" && e["what"] == *u),
                "line {n}: {u} not listed: {got:#}"
            );
        }
        let mut with_ns = sorted(&l["blocklist"]);
        with_ns.extend(sorted(&l["blocklist_if_no_search"]));
        with_ns.sort();
        assert_eq!(
            sorted(&no_search[&n]["blocklist_hits"]),
            with_ns,
            "line {n} (search disallowed)"
        );
    }
    // Tier B candidates come with the reasoning that follows the page, for a person to judge.
    let b = ours.values().find(|v| {
        v["class"] == "tier_b_candidate"
            && v["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| !e["excerpt"].as_str().unwrap_or("").is_empty())
    });
    assert!(b.is_some(), "no tier B excerpt");
    // A web search is network use too, listed with its query.
    assert!(
        ours[&18]["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["finding"] == "network"
                && e["what"] == "tinydb query api insert search update remove"),
        "{:#}",
        ours[&18]
    );
    // Allowed pages of the repository and other network use are listed, not flagged.
    for finding in ["same_repo", "network"] {
        assert!(
            ours.values().any(|v| {
                v["class"] == "clean"
                    && v["evidence"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|e| e["finding"] == finding)
            }),
            "no clean line lists {finding}"
        );
    }
}

#[test]
fn the_table_rescores_families_with_tier_a_successes_as_failures() {
    let (_, stdout, stderr, _) = audit(&[]);
    assert!(
        stdout.contains("FAMILY") && stdout.contains("CORRECTED"),
        "{stdout}"
    );
    let cross = stdout
        .lines()
        .find(|l| l.starts_with("CrossRepo "))
        .unwrap();
    let nums: Vec<f64> = cross
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    assert!(
        nums[2] < nums[1],
        "corrected must drop below published: {cross}"
    );
    assert!(stderr.contains("could not be audited"));
}

/// A Harbor jobs directory is audited like a release: the release's ATIF trajectories written as
/// a job (`release to-harbor`) get the same classes.
#[test]
fn a_harbor_job_directory_is_audited_like_the_release() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixtures().join("audit/release.jsonl")).unwrap();
    let atif: Vec<(u64, Value)> = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| {
            serde_json::from_str::<Value>(l)
                .ok()
                .map(|v| (i as u64 + 1, v))
        })
        .filter(|(_, v)| {
            v["trajectory"]["steps"]
                .as_array()
                .is_some_and(|s| !s.is_empty())
        })
        .collect();
    assert!(atif.len() >= 4);
    let release = dir.path().join("atif.jsonl");
    std::fs::write(
        &release,
        atif.iter()
            .map(|(_, v)| format!("{v}\n"))
            .collect::<String>(),
    )
    .unwrap();
    cargo_bin_cmd!("beyondswe")
        .args(["release", "to-harbor"])
        .arg(&release)
        .arg(dir.path().join("jobs"))
        .assert()
        .success();
    let out = cargo_bin_cmd!("beyondswe")
        .arg("audit")
        .arg(dir.path().join("jobs"))
        .arg("--dataset")
        .arg(fixtures().join("audit/dataset.jsonl"))
        .arg("--json")
        .assert()
        .success();
    let mut got: Vec<(String, String)> = String::from_utf8_lossy(&out.get_output().stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["task_name"].as_str().unwrap().to_owned(),
                v["class"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let (expected_by_line, _, _, _) = audit(&["--json"]);
    let mut want: Vec<(String, String)> = atif
        .iter()
        .map(|(n, _)| {
            let v = &expected_by_line[n];
            (
                v["task_name"].as_str().unwrap().to_owned(),
                v["class"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
}

/// One ATIF release line for task `o_r_pr1`: the prompt, one shell command, then agent messages.
fn atif_line(task: &str, command: &str, after: &[&str]) -> Value {
    let mut steps = vec![
        serde_json::json!({"step_id": 1, "source": "user", "message": "Fix it"}),
        serde_json::json!({"step_id": 2, "source": "agent", "message": "", "tool_calls": [
            {"tool_call_id": "c", "function_name": "Bash", "arguments": {"command": command}}]}),
    ];
    for (i, m) in after.iter().enumerate() {
        steps.push(serde_json::json!({"step_id": i + 3, "source": "agent", "message": m}));
    }
    serde_json::json!({"task_name": task, "task_type": "CrossRepo", "reward": 1.0, "trajectory": {
        "schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1"},
        "steps": steps}})
}

/// Audits release lines written to a temporary file; the JSON line per trajectory, stderr, code.
fn audit_lines(lines: &[Value]) -> (Vec<Value>, String, i32) {
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("release.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&release, text).unwrap();
    let (stdout, stderr, code) = audit_path(&release, &["--json"]);
    let audits = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    (audits, stderr, code.unwrap_or(-1))
}

/// `beyondswe audit PATH ARGS…`: its stdout, stderr and exit code.
fn audit_path(path: &std::path::Path, args: &[&str]) -> (String, String, Option<i32>) {
    let out = cargo_bin_cmd!("beyondswe")
        .arg("audit")
        .arg(path)
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

/// The excerpt kept for a tier B candidate is cut to a size in bytes: never inside a character.
#[test]
fn excerpts_of_multi_byte_reasoning_are_cut_at_a_character() {
    let long = format!("a{}", "é".repeat(400));
    let line = atif_line(
        "o_r_pr1",
        "curl -s https://github.com/o/r/pull/1",
        &[&long, "日本語のテキスト".repeat(50).as_str()],
    );
    let (audits, stderr, code) = audit_lines(&[line]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(audits[0]["class"], "tier_b_candidate", "{:#}", audits[0]);
    let excerpt = audits[0]["evidence"][0]["excerpt"].as_str().unwrap();
    assert!(!excerpt.is_empty() && excerpt.len() <= 600, "{excerpt}");
}

/// Commands a shell would run that plain splitting misses: `eval`, scripts piped or fed to a
/// shell, variables, substitutions inside `bash -c`, and Python that shells out.
#[test]
fn commands_run_through_eval_pipes_variables_and_python_are_hits() {
    let cases = [
        ("eval 'git log --all'", "git log --all"),
        ("echo 'git log --all' | sh", "git log --all"),
        ("echo 'git log --all' | bash", "git log --all"),
        ("echo 'git fetch origin' | bash -s", "git fetch"),
        ("x=git; $x log --all", "git log --all"),
        ("bash -c \"$(echo git log --all)\"", "git log --all"),
        (
            "python -c \"import os; os.system('git log --all')\"",
            "git log --all",
        ),
        (
            "python3 -c 'import subprocess; subprocess.run(\"git log --all\", shell=True)'",
            "git log --all",
        ),
        (
            "python3 -c 'import subprocess; subprocess.Popen([\"bash\",\"-c\",\"git log --all\"])'",
            "git log --all",
        ),
        (
            "python3 - <<'EOF'\nimport os\nos.system('git fsck --lost-found')\nEOF",
            "git fsck",
        ),
        (
            "cat <<EOF | python3\nimport subprocess\nsubprocess.call('git pull', shell=True)\nEOF",
            "git pull",
        ),
    ];
    let lines: Vec<Value> = cases
        .iter()
        .map(|(cmd, _)| atif_line("o_r_pr1", cmd, &[]))
        .collect();
    let (audits, stderr, code) = audit_lines(&lines);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(audits.len(), cases.len());
    for (a, (cmd, hit)) in audits.iter().zip(cases) {
        assert_eq!(sorted(&a["blocklist_hits"]), [hit], "{cmd}: {a:#}");
    }
    // Text that mentions a command without running it stays clean.
    let clean = [
        "echo 'git log --all' > notes.txt",
        "x=git log; $x --all",
        "python3 -c \"print('os.system(git fetch)')\"",
        "python3 -c 'subprocess.run(\"git log --all\")'",
    ];
    let lines: Vec<Value> = clean
        .iter()
        .map(|cmd| atif_line("o_r_pr1", cmd, &[]))
        .collect();
    let (audits, _, _) = audit_lines(&lines);
    for (a, cmd) in audits.iter().zip(clean) {
        assert!(sorted(&a["blocklist_hits"]).is_empty(), "{cmd}: {a:#}");
    }
}

/// A command of a hundred thousand unclosed `$(` is audited in linear time and memory.
#[test]
fn unclosed_substitution_chains_are_read_in_linear_time() {
    let line = atif_line(
        "o_r_pr1",
        &format!("{}git fetch", "$(".repeat(100_000)),
        &[],
    );
    let t = std::time::Instant::now();
    let (audits, stderr, code) = audit_lines(&[line]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(audits.len(), 1);
    // A debug build on a busy machine: generous, yet far below the minutes it took before.
    assert!(t.elapsed().as_secs_f64() < 10.0, "{:?}", t.elapsed());
}

/// A job of Harbor's own agents (oracle, nop) has no trajectory to audit: that is said and is not
/// a failure; a model agent's trial without one still is.
#[test]
fn trials_of_harbors_own_agents_are_not_failures() {
    let dir = tempfile::tempdir().unwrap();
    let trial = |name: &str, agent: &str| {
        let t = dir
            .path()
            .join("job")
            .join(format!("acme_calc_pr7__{name}"));
        std::fs::create_dir_all(t.join("agent")).unwrap();
        let result = serde_json::json!({
            "task_name": "acme_calc_pr7", "trial_name": format!("acme_calc_pr7__{name}"),
            "agent_info": {"name": agent}, "verifier_result": {"rewards": {"reward": 1.0}},
        });
        std::fs::write(t.join("result.json"), result.to_string()).unwrap();
    };
    trial("Ora1", "oracle");
    trial("Nop1", "nop");
    let run = || {
        let out = cargo_bin_cmd!("beyondswe")
            .arg("audit")
            .arg(dir.path().join("job"))
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = run();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("2 item(s) not audited"), "{stderr}");
    assert!(
        stderr.contains("Ora1") && stderr.contains("not audited"),
        "{stderr}"
    );
    trial("Cc1", "claude-code");
    let (code, stderr) = run();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("no agent/trajectory.json"), "{stderr}");
    std::fs::remove_dir_all(dir.path().join("job/acme_calc_pr7__Cc1")).unwrap();
    // A model agent's trial whose trajectory was removed and whose agent was renamed `oracle`
    // in one field of result.json (or that names a model) is not taken for the oracle.
    for (name, result) in [
        (
            "Ren1",
            serde_json::json!({"agent_info": {"name": "oracle"},
                "config": {"agent": {"name": "claude-code", "model_name": "anthropic/x"}}}),
        ),
        (
            "Ren2",
            serde_json::json!({"agent_info": {"name": "oracle", "model_info": {"name": "x"}}}),
        ),
    ] {
        let t = dir
            .path()
            .join("job")
            .join(format!("acme_calc_pr7__{name}"));
        std::fs::create_dir_all(t.join("agent")).unwrap();
        let mut r = result;
        r["task_name"] = "acme_calc_pr7".into();
        r["trial_name"] = format!("acme_calc_pr7__{name}").into();
        std::fs::write(t.join("result.json"), r.to_string()).unwrap();
        let (code, stderr) = run();
        assert_eq!(code, Some(1), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("acme_calc_pr7__{name}: no agent log")),
            "{name}: {stderr}"
        );
        std::fs::remove_dir_all(&t).unwrap();
    }
}

/// `audit` reads what `ingest` reads: SWE-agent `.traj` and mini-swe-agent `.traj.json` files
/// (one JSON document each, never reported line by line), and a folder of mixed agents' output
/// whole, naming every file it does not audit.
#[test]
fn audit_reads_swe_agent_and_mini_swe_agent_files_and_mixed_folders() {
    let agents = fixtures().join("agents");
    let tmp = tempfile::tempdir().unwrap();
    let edit = |from: &str, to: &str, f: &dyn Fn(&mut Value)| {
        let mut v: Value =
            serde_json::from_str(&std::fs::read_to_string(agents.join(from)).unwrap()).unwrap();
        f(&mut v);
        let p = tmp.path().join(to);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        p
    };
    let run = |p: &std::path::Path| {
        let out = cargo_bin_cmd!("beyondswe")
            .arg("audit")
            .arg(p)
            .arg("--json")
            .output()
            .unwrap();
        let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (
            lines,
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.code(),
        )
    };
    // A SWE-agent step that runs a forbidden command is a hit; an `edit` whose text holds the
    // same words writes a file and runs nothing.
    let swe = edit(
        "swe-agent/acme_calc_pr7/acme_calc_pr7.traj",
        "mixed/swe/acme_calc_pr7.traj",
        &|v| {
            let steps = v["trajectory"].as_array_mut().unwrap();
            steps[0]["action"] = "cd /calc && git log --all --oneline".into();
            steps[1]["action"] = "edit 1:1\n# run git pull first\nend_of_edit".into();
        },
    );
    let (lines, stderr, code) = run(&swe);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(lines.len(), 1, "{stderr}");
    assert_eq!(lines[0]["shape"], "swe-agent-traj");
    assert_eq!(lines[0]["class"], "blocklist");
    assert_eq!(
        lines[0]["blocklist_hits"],
        serde_json::json!(["git log --all"])
    );
    // A mini-swe-agent trajectory saved as its messages alone (a JSON list) is read too.
    let msgs = tmp.path().join("bare/acme_calc_pr7.traj.json");
    std::fs::create_dir_all(msgs.parent().unwrap()).unwrap();
    std::fs::write(
        &msgs,
        serde_json::json!([
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Fix the bug in calc."},
            {"role": "assistant", "content": "THOUGHT: look at history.\n\n```mswea_bash_command\ngit log --all --oneline\n```"},
            {"role": "user", "content": "<returncode>0</returncode>"}
        ])
        .to_string(),
    )
    .unwrap();
    let (lines, stderr, code) = run(&msgs);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(lines[0]["shape"], "mini-swe-agent", "{stderr}");
    assert_eq!(
        lines[0]["blocklist_hits"],
        serde_json::json!(["git log --all"])
    );
    // A trajectory that names its instance keeps it, as ingest reads it, whatever --instance
    // says.
    let named = edit(
        "mini-swe-agent/acme_calc_pr7/acme_calc_pr7.traj.json",
        "named/run.traj.json",
        &|v| v["instance_id"] = "acme_calc_pr7".into(),
    );
    let out = cargo_bin_cmd!("beyondswe")
        .args(["audit", "--json", "--instance", "other_repo_pr1"])
        .arg(&named)
        .output()
        .unwrap();
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["task_name"], "acme_calc_pr7");
    // SWE-agent's tools are shell functions: a forbidden command chained after one runs, and
    // after an edit block's `end_of_edit` too. Both are found.
    for action in [
        "open calc/ops.py && git pull",
        "edit 1:1\nx = 1\nend_of_edit\ngit pull",
    ] {
        let hidden = edit(
            "swe-agent/acme_calc_pr7/acme_calc_pr7.traj",
            "hidden/acme_calc_pr7.traj",
            &|v| {
                v["trajectory"][0]["action"] = action.into();
            },
        );
        let (lines, stderr, _) = run(&hidden);
        assert_eq!(lines[0]["class"], "blocklist", "{action}: {stderr}");
        assert_eq!(
            lines[0]["blocklist_hits"],
            serde_json::json!(["git pull"]),
            "{action}"
        );
    }

    // mini-swe-agent: commands in code blocks and in tool calls.
    let mini = edit(
        "mini-swe-agent/acme_textkit_pr12/acme_textkit_pr12.traj.json",
        "mixed/mini/acme_textkit_pr12.traj.json",
        &|v| {
            let msgs = v["messages"].as_array_mut().unwrap();
            let i = msgs
                .iter()
                .position(|m| {
                    m["role"] == "assistant"
                        && m["content"]
                            .as_str()
                            .unwrap_or("")
                            .contains("mswea_bash_command")
                })
                .unwrap();
            msgs[i]["content"] =
                "THOUGHT: look at the history.\n\n```mswea_bash_command\ngit fetch origin\n```"
                    .into();
            // A text-mode reply written without its parsed actions: the block is what ran.
            msgs[i].as_object_mut().unwrap().remove("extra");
        },
    );
    let (lines, stderr, _) = run(&mini);
    assert_eq!(lines[0]["shape"], "mini-swe-agent", "{stderr}");
    assert_eq!(
        lines[0]["blocklist_hits"],
        serde_json::json!(["git fetch"]),
        "{stderr}"
    );

    // A JSON document of no known shape is one error, not one per line.
    let other = tmp.path().join("other.json");
    std::fs::write(&other, "{\n  \"foo\": 1,\n  \"bar\": 2\n}\n").unwrap();
    let (_, stderr, code) = run(&other);
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr.matches("not a trajectory this audit reads").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("keys found: foo, bar"), "{stderr}");

    // A mixed folder: both files audited, in their own shapes; the rest named.
    std::fs::copy(
        agents.join("codex/acme_calc_pr7.jsonl"),
        tmp.path().join("mixed/acme_calc_pr7.jsonl"),
    )
    .unwrap();
    std::fs::write(tmp.path().join("mixed/NOTES.md"), "run notes\n").unwrap();
    let (lines, stderr, code) = run(&tmp.path().join("mixed"));
    assert_eq!(code, Some(0), "{stderr}");
    let shapes: Vec<&str> = lines.iter().map(|l| l["shape"].as_str().unwrap()).collect();
    assert_eq!(
        shapes,
        ["codex-exec", "mini-swe-agent", "swe-agent-traj"],
        "{stderr}"
    );
    assert!(
        stderr.contains("NOTES.md: skipped: not a transcript or trajectory"),
        "{stderr}"
    );
}

/// An OpenHands event stream (a JSON list of actions and observations, as its history is) is
/// audited whole, pretty-printed or on one line, alone or in a folder.
#[test]
fn an_openhands_event_stream_is_audited() {
    let output = std::fs::read_to_string(fixtures().join("agents/openhands/output.jsonl")).unwrap();
    let first: Value = serde_json::from_str(output.lines().next().unwrap()).unwrap();
    let mut events = first["history"].as_array().unwrap().clone();
    let run = events
        .iter()
        .position(|e| e["action"] == "run")
        .expect("a run action in the fixture's history");
    events[run]["args"]["command"] = "git log --all --oneline".into();
    let tmp = tempfile::tempdir().unwrap();
    let pretty = tmp.path().join("dir/acme_calc_pr7.json");
    std::fs::create_dir_all(pretty.parent().unwrap()).unwrap();
    std::fs::write(&pretty, serde_json::to_string_pretty(&events).unwrap()).unwrap();
    let compact = tmp.path().join("acme_calc_pr7.json");
    std::fs::write(&compact, Value::Array(events).to_string()).unwrap();
    for path in [&pretty, &compact, &pretty.parent().unwrap().to_path_buf()] {
        let out = cargo_bin_cmd!("beyondswe")
            .arg("audit")
            .arg(path)
            .arg("--json")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{}: {stderr}", path.display());
        let got: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(got["task_name"], "acme_calc_pr7");
        assert_eq!(got["shape"], "openhands-history");
        assert_eq!(got["class"], "blocklist", "{got}");
    }
    // ingest reads it too, alone or in a folder: a submission with no patch, said so, and not a
    // fault of the input.
    for path in [&compact, &pretty.parent().unwrap().to_path_buf()] {
        let out = cargo_bin_cmd!("beyondswe")
            .arg("ingest")
            .arg(path)
            .arg("-o")
            .arg(tmp.path().join("p.jsonl"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{}: {stderr}", path.display());
        assert!(
            stderr.contains("openhands: 1 submission(s), 0 with a patch"),
            "{stderr}"
        );
        assert!(stderr.contains("an OpenHands event stream ("), "{stderr}");
    }
}

/// A file the agent wrote is read where a later command runs it, in raw transcripts as their
/// agents write them: a script written with Claude Code's `Write` and run with `bash` is a
/// blocklist hit at the step that ran it; a Codex `file_change` shows no text, so running the
/// file it changed leaves the trajectory `incomplete`, and running the project's own files
/// (never written) leaves it clean.
#[test]
fn files_the_agent_wrote_are_read_where_they_run() {
    let dir = tempfile::tempdir().unwrap();
    let sid = r#""session_id": "5e4d3c2b-1a09-4f8e-8d7c-6b5a49382716""#;
    let assistant = |id: &str, tool: &str, input: Value| {
        serde_json::json!({"type": "assistant", "message": {"id": format!("msg_{id}"), "type": "message",
            "role": "assistant", "model": "claude-x",
            "content": [{"type": "tool_use", "id": id, "name": tool, "input": input}]}})
        .to_string()
        .replacen('{', &format!("{{{sid}, "), 1)
    };
    let result = |id: &str, text: &str| {
        serde_json::json!({"type": "user", "message": {"role": "user",
            "content": [{"type": "tool_result", "tool_use_id": id, "content": text}]}})
        .to_string()
        .replacen('{', &format!("{{{sid}, "), 1)
    };
    let claude = [
        format!(
            r#"{{"type": "system", "subtype": "init", {sid}, "model": "claude-x", "cwd": "/workspace/r"}}"#
        ),
        assistant(
            "t1",
            "Write",
            serde_json::json!({"file_path": "/workspace/r/look.sh",
            "content": "#!/bin/sh\ngit log --all --oneline -- src/ | head -20\n"}),
        ),
        result("t1", "File created successfully at: /workspace/r/look.sh"),
        assistant(
            "t2",
            "Bash",
            serde_json::json!({"command": "chmod +x look.sh && ./look.sh"}),
        ),
        result("t2", "abc123 fix"),
        assistant(
            "t3",
            "Bash",
            serde_json::json!({"command": "bash scripts/ci.sh && pytest -q"}),
        ),
        result("t3", "ok"),
    ];
    std::fs::write(dir.path().join("o_r_pr1.jsonl"), claude.join("\n") + "\n").unwrap();
    let codex = [
        r#"{"type": "thread.started", "thread_id": "0199a3b2-c4d5-7e6f-8a9b-0c1d2e3f4a5b"}"#,
        r#"{"type": "item.completed", "item": {"id": "item_0", "type": "file_change", "changes": [{"path": "tools/fetch.sh", "kind": "add"}], "status": "completed"}}"#,
        r#"{"type": "item.completed", "item": {"id": "item_1", "type": "command_execution", "command": "bash -lc 'sh tools/fetch.sh && pytest -q'", "aggregated_output": "", "exit_code": 0, "status": "completed"}}"#,
    ];
    std::fs::write(dir.path().join("o_r_pr2.jsonl"), codex.join("\n") + "\n").unwrap();
    for (file, class) in [
        ("o_r_pr1.jsonl", "blocklist"),
        ("o_r_pr2.jsonl", "incomplete"),
    ] {
        let out = cargo_bin_cmd!("beyondswe")
            .arg("audit")
            .arg(dir.path().join(file))
            .arg("--json")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let a: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{file}: {e}: {stderr}"));
        assert_eq!(a["class"], class, "{file}: {a:#}");
        if class == "blocklist" {
            assert_eq!(
                a["blocklist_hits"],
                serde_json::json!(["git log --all"]),
                "{a:#}"
            );
            assert_eq!(
                a["evidence"][0]["what"], "chmod +x look.sh && ./look.sh",
                "{a:#}"
            );
        } else {
            let why = a["unread"][0]["why"].as_str().unwrap_or_default();
            assert!(why.contains("`tools/fetch.sh`"), "{a:#}");
        }
    }
}

/// A predictions file holds patches, not trajectories: `audit` says so once, naming the file,
/// and fails (it erred once per line); in a folder beside a trajectory it is named as skipped,
/// and a folder of predictions only is the same one error.
#[test]
fn a_predictions_file_is_named_once_not_audited_line_by_line() {
    let preds = fixtures().join("predictions/demo.jsonl");
    let lines = std::fs::read_to_string(&preds).unwrap().lines().count();
    assert!(lines > 1);
    let run = |path: &std::path::Path| {
        let (stdout, stderr, code) = audit_path(path, &[]);
        (code, stdout, stderr)
    };
    let (code, _, stderr) = run(&preds);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.matches("a predictions file").count(), 1, "{stderr}");
    assert!(stderr.contains("demo.jsonl"), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&preds, dir.path().join("preds.jsonl")).unwrap();
    let (code, _, stderr) = run(dir.path());
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("its only files of an agent are predictions files (1)"),
        "{stderr}"
    );

    let line = atif_line("acme_calc_pr7", "pytest -q", &[]);
    std::fs::write(dir.path().join("release.jsonl"), format!("{line}\n")).unwrap();
    let (code, stdout, stderr) = run(dir.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("acme_calc_pr7"), "{stdout}");
    assert!(
        stderr.contains("preds.jsonl: skipped: a predictions file, patches with no trajectory")
            && stderr.contains("1 item(s) not audited"),
        "{stderr}"
    );

    // A trajectory after a prediction is audited, alone and in a folder: a first line shaped
    // as a prediction hides nothing.
    let mixed = dir.path().join("mixed.jsonl");
    let first = std::fs::read_to_string(&preds)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    let cheat = atif_line(
        "acme_calc_pr7",
        "curl https://github.com/acme/calc/pull/7.diff",
        &[],
    );
    std::fs::write(&mixed, format!("{first}\n{cheat}\n")).unwrap();
    std::fs::remove_file(dir.path().join("release.jsonl")).unwrap();
    std::fs::remove_file(dir.path().join("preds.jsonl")).unwrap();
    for path in [mixed.clone(), dir.path().to_owned()] {
        let (code, stdout, stderr) = run(&path);
        assert_eq!(code, Some(0), "{}: {stderr}", path.display());
        assert!(stdout.contains("acme_calc_pr7"), "{stdout}");
        assert!(!stdout.contains(" clean "), "{stdout}");
        assert!(
            stderr
                .contains("mixed.jsonl: 1 prediction line(s), patches with no trajectory: skipped"),
            "{stderr}"
        );
    }
}

/// JSON lines that are neither a release nor any agent's output are refused once, naming the
/// file (the audit erred once per line, after printing an empty table); a release whose first
/// line is broken is still read on, its bad line named.
#[test]
fn a_file_of_no_known_shape_is_refused_once() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.jsonl");
    std::fs::write(&junk, "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3}\n").unwrap();
    let (stdout, stderr, code) = audit_path(&junk, &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.matches("junk.jsonl").count(), 1, "{stderr}");
    assert!(stderr.contains("not a release"), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");

    let release = dir.path().join("release.jsonl");
    let line = atif_line("acme_calc_pr7", "pytest -q", &[]);
    std::fs::write(&release, format!("{{\"task_name\": \n{line}\n")).unwrap();
    let (audits, stderr, code) = audit_path(&release, &["--json"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("release.jsonl:1:"), "{stderr}");
    assert!(audits.contains("acme_calc_pr7"), "{audits}");

    // A first line of no known shape hides no trajectory after it, alone or in a folder: the
    // trajectory is audited and the line named.
    std::fs::remove_file(&release).unwrap();
    std::fs::write(&junk, format!("{{\"a\": 1}}\n{line}\n")).unwrap();
    for path in [junk.clone(), dir.path().to_owned()] {
        let (stdout, stderr, code) = audit_path(&path, &["--json"]);
        assert_eq!(code, Some(1), "{}: {stderr}", path.display());
        assert!(
            stdout.contains("acme_calc_pr7"),
            "{}: {stdout}",
            path.display()
        );
        assert!(stderr.contains("no task_name or instance_id"), "{stderr}");
    }
}
