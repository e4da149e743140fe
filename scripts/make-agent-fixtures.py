#!/usr/bin/env python3
"""Writes the third-party agent output fixtures under fixtures/agents/.

    python3 scripts/make-agent-fixtures.py

Deterministic and stdlib only: running it twice writes byte-identical files.
Every file is written by this script to match the documented output schema of
the agent harness it imitates; nothing is copied from real runs. See
fixtures/agents/README.md for what each fixture represents.

Inputs (read, never written):
  fixtures/dataset/fixtures.jsonl     gold ``patch`` of acme_calc_pr7 and
                                      acme_textkit_pr12
  fixtures/predictions/demo.jsonl     the ``acme_calc_pr72`` "half fix" patch
                                      (applies to calc's base, does not resolve)
"""

import hashlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fixtures", "agents")

CALC = "acme_calc_pr7"
TEXTKIT = "acme_textkit_pr12"
MODEL = "acme-model"


# --------------------------------------------------------------------------- io


def load_jsonl(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
        return {r["instance_id"]: r for r in (json.loads(line) for line in fh if line.strip())}


def path_of(rel):
    path = os.path.join(OUT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


def write_bytes(rel, data):
    with open(path_of(rel), "wb") as fh:
        fh.write(data)


def write_text(rel, text):
    write_bytes(rel, text.encode("utf-8"))


def write_json(rel, obj, ascii_only=True):
    write_text(rel, json.dumps(obj, indent=2, ensure_ascii=ascii_only) + "\n")


def write_jsonl(rel, objs, ascii_only=True, tail=""):
    """One compact JSON object per line; ``tail`` is appended verbatim."""
    lines = "".join(json.dumps(o, ensure_ascii=ascii_only) + "\n" for o in objs)
    write_text(rel, lines + tail)


# ------------------------------------------------------------------------ inputs

DATASET = load_jsonl("fixtures/dataset/fixtures.jsonl")
DEMO = load_jsonl("fixtures/predictions/demo.jsonl")

GOLD = {CALC: DATASET[CALC]["patch"], TEXTKIT: DATASET[TEXTKIT]["patch"]}
HALF_FIX = DEMO["acme_calc_pr72"]["model_patch"]
RECORD = {CALC: DATASET[CALC], TEXTKIT: DATASET[TEXTKIT]}
TASK = {CALC: "crossrepo", TEXTKIT: "depmigrate"}
REPO_DIR = {CALC: "calc", TEXTKIT: "textkit"}

for iid, patch in GOLD.items():
    assert patch.startswith("diff --git ") and patch.endswith("\n"), iid
assert HALF_FIX.startswith("diff --git a/calc/ops.py ") and HALF_FIX.endswith("\n")
assert "\r" not in GOLD[CALC]


def pred(iid, patch):
    return {"model_name_or_path": MODEL, "instance_id": iid, "model_patch": patch}


def problem(iid):
    return RECORD[iid]["problem_statement"]


# ------------------------------------------------------------- 1. predictions


def make_predictions():
    rows = [pred(CALC, GOLD[CALC]), pred(TEXTKIT, GOLD[TEXTKIT])]
    # preds.jsonl keeps non-ASCII (the U+2212 in calc's patch) as raw UTF-8.
    write_jsonl("predictions/preds.jsonl", rows, ascii_only=False)
    write_json("predictions/preds_list.json", rows)
    write_json("predictions/preds_dict.json", {r["instance_id"]: r for r in rows})


# --------------------------------------------------------------- 2. SWE-agent


def swe_agent_traj(iid, exit_status, cost, steps):
    system = (
        "SETTING: You are an autonomous programmer, and you're working directly in "
        "the command line with a special interface."
    )
    task = f"<uploaded_files>\n/{REPO_DIR[iid]}\n</uploaded_files>\n{problem(iid)}"
    history = [
        {"role": "system", "content": system, "agent": "primary", "message_type": "system_prompt"},
        {"role": "user", "content": task, "agent": "primary", "message_type": "observation"},
    ]
    trajectory = []
    for thought, action, observation in steps:
        response = f"DISCUSSION\n{thought}\n\n```\n{action}\n```"
        query = list(history)
        history.append(
            {"role": "assistant", "content": response, "thought": thought, "action": action,
             "agent": "primary", "message_type": "action"}
        )
        history.append(
            {"role": "user", "content": observation, "agent": "primary", "message_type": "observation"}
        )
        trajectory.append(
            {
                "response": response,
                "thought": thought,
                "action": action,
                "observation": observation,
                "state": json.dumps({"open_file": "n/a", "working_dir": f"/{REPO_DIR[iid]}"}),
                "query": query,
                "execution_time": 0.42,
            }
        )
    return {
        "environment": "swe_main",
        "trajectory": trajectory,
        "history": history,
        "info": {
            "swe_agent_version": "0.7.0",
            "submission": GOLD[iid],
            "exit_status": exit_status,
            "model_stats": {
                "instance_cost": cost,
                "tokens_sent": 1000,
                "tokens_received": 200,
                "api_calls": 5,
            },
        },
    }


def make_swe_agent():
    write_json("swe-agent/preds.json", {iid: pred(iid, GOLD[iid]) for iid in (CALC, TEXTKIT)})
    calc = swe_agent_traj(
        CALC,
        "submitted",
        0.12,
        [
            ("Let me look at how operands are coerced.", "open calc/ops.py",
             '[File: /calc/calc/ops.py (31 lines total)]\n1:"""The four operations. Operands may be numbers or numeric strings."""\n'),
            ("_coerce calls float() directly; I will normalise minus signs and strip currency symbols.",
             "edit 6:9\n    if isinstance(value, str):\n        ...\nend_of_edit",
             "File updated. Please review the changes and make sure they are correct."),
            ("Run the tests.", "python -m pytest -q", "11 passed in 0.03s"),
            ("The fix works; submitting.", "submit", GOLD[CALC]),
        ],
    )
    textkit = swe_agent_traj(
        TEXTKIT,
        # Cost limit hit after the fix was made: SWE-agent auto-submits the diff.
        "submitted (exit_cost)",
        2.0,
        [
            ("Find the textdep 1.x calls.", "grep -rn 'textdep\\.' textkit",
             "textkit/io/reader.py:9:        return textdep.normalize_newlines(fh.read())\n"
             "textkit/text/slug.py:8:    return textdep.slugify(title, separator)\n"
             "textkit/text/wrap.py:8:    return textdep.fill(text, width)\n"),
            ("Port the three call sites to the 2.0 names.", "edit 8:8\n    return textdep.make_slug(title, separator=separator)\nend_of_edit",
             "File updated. Please review the changes and make sure they are correct."),
            ("Run the tests.", "python -m pytest -q", "9 passed in 0.05s"),
        ],
    )
    write_json(f"swe-agent/{CALC}/{CALC}.traj", calc)
    write_json(f"swe-agent/{TEXTKIT}/{TEXTKIT}.traj", textkit)


# ----------------------------------------------------------- 3. mini-swe-agent


def mini_info(iid, version, cost, calls):
    return {
        "exit_status": "Submitted",
        "submission": GOLD[iid],
        "model_stats": {"instance_cost": cost, "api_calls": calls},
        "mini_version": version,
        "config": {
            "agent": {"step_limit": 250, "cost_limit": 3.0},
            "agent_type": "minisweagent.agents.default.DefaultAgent",
            "model": {"model_name": f"openai/{MODEL}", "model_kwargs": {"temperature": 0.0}},
            "model_type": "minisweagent.models.litellm_model.LitellmModel",
            "environment": {"image": RECORD[iid]["image"], "cwd": RECORD[iid]["workdir"], "timeout": 60},
            "environment_type": "minisweagent.environments.docker.DockerEnvironment",
        },
    }


def obs(output, rc=0):
    return f"<returncode>{rc}</returncode>\n<output>\n{output}</output>"


def make_mini_swe_agent():
    write_json("mini-swe-agent/preds.json", {iid: pred(iid, GOLD[iid]) for iid in (CALC, TEXTKIT)})
    system = "You are a helpful assistant that can interact multiple times with a computer shell to solve programming tasks."
    submit = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"

    calc = {
        "info": mini_info(CALC, "1.9.0", 0.05, 7),
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": f"<pr_description>\n{problem(CALC)}</pr_description>"},
            {"role": "assistant", "content": "THOUGHT: Let me read how operands are parsed.\n\n```bash\ncat calc/ops.py\n```"},
            {"role": "user", "content": obs('"""The four operations. Operands may be numbers or numeric strings."""\n')},
            {"role": "assistant", "content": "THOUGHT: Reproduce the failure first.\n\n```bash\npython -c 'from calc import add; print(add(\"\\u22122\", \"5\"))'\n```"},
            {"role": "user", "content": obs("ValueError: could not convert string to float: '\u22122'\n", 1)},
            {"role": "assistant", "content": "THOUGHT: I rewrote _coerce; run the tests.\n\n```bash\npython -m pytest -q\n```"},
            {"role": "user", "content": obs("11 passed in 0.03s\n")},
            {"role": "assistant", "content": f"THOUGHT: Done, submitting.\n\n```bash\n{submit}\n```"},
            {"role": "user", "content": GOLD[CALC]},
        ],
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": CALC,
    }

    grep = "grep -rn 'textdep\\.' textkit"
    textkit = {
        "info": mini_info(TEXTKIT, "2.0.0", 0.08, 4),
        "messages": [
            {"role": "system", "content": system, "extra": {"timestamp": 1774432800.0}},
            {"role": "user", "content": f"<pr_description>\n{problem(TEXTKIT)}</pr_description>",
             "extra": {"timestamp": 1774432800.1}},
            # Tool-calling model: the action is in tool_calls (and mirrored in extra.actions).
            {
                "role": "assistant",
                "content": "Let me find the textdep 1.x call sites.",
                "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "bash", "arguments": json.dumps({"command": grep})}}
                ],
                "extra": {"actions": [{"command": grep, "tool_call_id": "call_1"}], "cost": 0.02},
            },
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "content": obs("textkit/io/reader.py:9:        return textdep.normalize_newlines(fh.read())\n"
                               "textkit/text/slug.py:8:    return textdep.slugify(title, separator)\n"
                               "textkit/text/wrap.py:8:    return textdep.fill(text, width)\n"),
                "extra": {"returncode": 0},
            },
            # Text-based action: only extra.actions carries the parsed command.
            {
                "role": "assistant",
                "content": "THOUGHT: All three ported; run the tests.\n\n```mswea_bash_command\npython -m pytest -q\n```",
                "extra": {"actions": [{"command": "python -m pytest -q"}], "cost": 0.02},
            },
            {"role": "user", "content": obs("9 passed in 0.05s\n"), "extra": {"returncode": 0}},
            {
                "role": "assistant",
                "content": "Submitting.",
                "tool_calls": [
                    {"id": "call_3", "type": "function",
                     "function": {"name": "bash", "arguments": json.dumps({"command": submit})}}
                ],
                "extra": {"actions": [{"command": submit, "tool_call_id": "call_3"}], "cost": 0.04},
            },
            {"role": "exit", "content": GOLD[TEXTKIT],
             "extra": {"exit_status": "Submitted", "submission": GOLD[TEXTKIT]}},
        ],
        "trajectory_format": "mini-swe-agent-1.1",
        "instance_id": TEXTKIT,
    }
    write_json(f"mini-swe-agent/{CALC}/{CALC}.traj.json", calc)
    write_json(f"mini-swe-agent/{TEXTKIT}/{TEXTKIT}.traj.json", textkit, ascii_only=False)


# ---------------------------------------------------------------- 4. OpenHands


def openhands_line(iid, git_patch, error, cost, like=None):
    """``like``: the dataset record to borrow fields from (default: ``iid``'s own)."""
    r = RECORD[like or iid]
    instruction = f"<uploaded_files>\n{r['workdir']}\n</uploaded_files>\n{r['problem_statement']}"
    return {
        "instance_id": iid,
        "test_result": {"git_patch": git_patch},
        "instruction": instruction,
        "metadata": {
            "agent_class": "CodeActAgent",
            "llm_config": {"model": f"openai/{MODEL}", "temperature": 0.0},
            "max_iterations": 100,
            "eval_output_dir": "evaluation/evaluation_outputs/outputs/beyondswe/CodeActAgent/acme-model_maxiter_100",
            "start_time": "2026-03-21 09:00:00",
        },
        "history": [
            {"id": 0, "timestamp": "2026-03-21T09:00:01.000000", "source": "user",
             "action": "message", "message": instruction[:60], "args": {"content": instruction}},
            {"id": 1, "timestamp": "2026-03-21T09:00:09.000000", "source": "agent",
             "action": "run", "message": "Running command: pytest -q",
             "args": {"command": "pytest -q", "thought": "Reproduce first."}},
            {"id": 2, "timestamp": "2026-03-21T09:00:11.000000", "source": "agent",
             "observation": "run", "cause": 1, "message": "Command `pytest -q` executed with exit code 1.",
             "content": "4 failed, 7 passed in 0.06s", "extras": {"command": "pytest -q", "exit_code": 1}},
        ],
        "metrics": {"accumulated_cost": cost},
        "error": error,
        "instance": {
            "instance_id": iid,
            "repo": r["repo"],
            "base_commit": r["base_commit"],
            "problem_statement": r["problem_statement"],
        },
    }


def make_openhands():
    crlf = GOLD[CALC].replace("\n", "\r\n")
    assert crlf.count("\r\n") == GOLD[CALC].count("\n")
    a = openhands_line(CALC, crlf, None, 0.3)
    b = openhands_line(TEXTKIT, "", "Agent got stuck in a loop", 0.3)
    # acme_calc_pr8 is not a dataset instance; its line borrows calc's fields.
    c = json.dumps(openhands_line("acme_calc_pr8", GOLD[CALC], None, 0.3, like=CALC))
    # Truncated mid-object (inside the git_patch string), no closing brace, no newline.
    cut = c.index('"git_patch": "') + len('"git_patch": "') + 40
    write_jsonl("openhands/output.jsonl", [a, b], tail=c[:cut])


# ------------------------------------------------------------------ 5. AweAgent


def make_aweagent():
    ids = [CALC, TEXTKIT]
    write_json(
        "aweagent/run_config.json",
        {
            "run_id": "beyond_swe-acme-model-20260320-100000",
            "start_time": "2026-03-20T10:00:00",
            "config": {
                "agent": "search_swe",
                "dataset_id": "beyond_swe",
                "llm": {"model": MODEL, "temperature": 0.0, "max_tokens": 8192},
                "max_steps": 50,
                "max_concurrency": 2,
                "output_dir": "outputs/beyond_swe-acme-model-20260320-100000",
            },
            "instance_count": 2,
            "instance_ids": ids,
        },
    )
    results, trajs = [], []
    for n, iid in enumerate(ids):
        results.append(
            {"instance_id": iid, "dataset_id": "beyond_swe", "task": TASK[iid], "success": True,
             "score": 1.0, "error": None, "finish_reason": "finish"}
        )
        trajs.append(
            {
                "instance_id": iid,
                "success": True,
                "score": 1.0,
                "finish_reason": "finish",
                "error": None,
                "duration": 12.5 + n,
                "patch": GOLD[iid],
                "stats": {
                    "total_time": 12.5 + n,
                    "llm_time": 9.25,
                    "tool_time": 3.0,
                    "steps": 9,
                    "llm_calls": 9,
                    "tool_usage": {"execute_bash": 5, "str_replace_editor": 3, "finish": 1},
                    "total_prompt_tokens": 1000,
                    "total_completion_tokens": 100,
                },
                "trajectory": [
                    {
                        "step": 1,
                        "action": {
                            "type": "tool_call",
                            "content": None,
                            "tool_calls": [
                                {"id": "c1", "type": "function",
                                 "function": {"name": "execute_bash", "arguments": json.dumps({"command": "ls"})}}
                            ],
                        },
                        "observations": [f"README.md\n{REPO_DIR[iid]}\npyproject.toml\ntests\n"],
                    },
                    {
                        "step": 2,
                        "action": {
                            "type": "tool_call",
                            "content": "Tests pass; finishing.",
                            "tool_calls": [
                                {"id": "c9", "type": "function",
                                 "function": {"name": "finish", "arguments": "{}"}}
                            ],
                        },
                        "observations": ["Task finished."],
                    },
                ],
                "eval_result": None,
            }
        )
    write_jsonl("aweagent/results.jsonl", results)
    write_jsonl("aweagent/trajectories.jsonl", trajs)


# --------------------------------------------------------------- 6. Claude Code


def make_claude_code():
    sid_calc = "0b6c5a1e-7d2f-4c3a-9e8b-1f2a3b4c5d6e"
    sid_tk = "5e4d3c2b-1a09-4f8e-8d7c-6b5a49382716"
    write_json(
        f"claude-code/{CALC}.json",
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": "I fixed `_coerce` in calc/ops.py so typeset minus signs (U+2212, U+2012, U+2013) "
                      "are read as `-` and a leading currency symbol is ignored. All tests pass.",
            "session_id": sid_calc,
            "num_turns": 12,
            "duration_ms": 93000,
            "duration_api_ms": 71000,
            "total_cost_usd": 0.42,
            "usage": {"input_tokens": 100, "output_tokens": 50,
                      "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 30000},
            "permission_denials": [],
        },
    )
    cwd = RECORD[TEXTKIT]["workdir"]
    events = [
        {"type": "system", "subtype": "init", "session_id": sid_tk, "model": "claude-x",
         "tools": ["Bash", "Edit", "Read", "Write", "Grep", "Glob"], "cwd": cwd,
         "permissionMode": "bypassPermissions"},
        {"type": "assistant", "session_id": sid_tk,
         "message": {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-x",
                     "content": [{"type": "text", "text": "Let me run the tests to see what breaks with textdep 2.0."},
                                 {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}}]}},
        {"type": "user", "session_id": sid_tk,
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1",
              "content": "FAILED tests/test_reader.py::test_read_text_normalizes_newlines - AttributeError: "
                         "module 'textdep' has no attribute 'normalize_newlines'\n3 failed, 4 passed in 0.07s"}]}},
        {"type": "assistant", "session_id": sid_tk,
         "message": {"id": "msg_02", "type": "message", "role": "assistant", "model": "claude-x",
                     "content": [{"type": "tool_use", "id": "t2", "name": "Edit",
                                  "input": {"file_path": f"{cwd}/textkit/text/slug.py",
                                            "old_string": "textdep.slugify(title, separator)",
                                            "new_string": "textdep.make_slug(title, separator=separator)"}}]}},
        {"type": "user", "session_id": sid_tk,
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t2", "content": "The file has been updated."}]}},
        {"type": "result", "subtype": "success", "is_error": False,
         "result": "Ported textkit to the textdep 2.0 API (make_slug, wrap_text, normalize).",
         "session_id": sid_tk, "num_turns": 9, "duration_ms": 64000, "total_cost_usd": 0.31,
         "usage": {"input_tokens": 80, "output_tokens": 40}},
    ]
    write_jsonl(f"claude-code/{TEXTKIT}.jsonl", events)
    # Captured workspace diff; deliberately none for textkit.
    write_bytes(f"claude-code/patches/{CALC}.diff", GOLD[CALC].encode("utf-8"))


# --------------------------------------------------------------------- 7. Codex


def make_codex():
    events = [
        {"type": "thread.started", "thread_id": "0199a3b2-c4d5-7e6f-8a9b-0c1d2e3f4a5b"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "reasoning",
                                            "text": "**Reproducing the failure**\n\nRun the tests to see which operands are rejected."}},
        {"type": "item.completed", "item": {"id": "item_1", "type": "command_execution",
                                            "command": "bash -lc 'pytest -q'",
                                            "aggregated_output": "FFFF.......\n4 failed, 7 passed in 0.06s\n",
                                            "exit_code": 1, "status": "completed"}},
        {"type": "item.completed", "item": {"id": "item_2", "type": "file_change",
                                            "changes": [{"path": "calc/ops.py", "kind": "update"}],
                                            "status": "completed"}},
        {"type": "item.completed", "item": {"id": "item_3", "type": "agent_message", "text": "Done."}},
        {"type": "turn.completed", "usage": {"input_tokens": 1000, "cached_input_tokens": 500, "output_tokens": 100}},
    ]
    write_jsonl(f"codex/{CALC}.jsonl", events)
    write_bytes(f"codex/patches/{CALC}.diff", GOLD[CALC].encode("utf-8"))


# -------------------------------------------------------------------- 8. Harbor

JOB = "2026-03-25__10-00-00"
JOB_ID = "3f1c2b9a-6d4e-4a8b-9c7d-2e5f1a0b3c4d"
AGENT = {"name": "claude-code", "model_name": "anthropic/claude-x", "kwargs": {}}


def latin1_notes_hunk():
    content = b"caf\xe9\n"
    blob = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()[:7]
    return (
        b"diff --git a/calc/notes_latin1.txt b/calc/notes_latin1.txt\n"
        b"new file mode 100644\n"
        b"index 0000000.." + blob.encode() + b"\n"
        b"--- /dev/null\n"
        b"+++ b/calc/notes_latin1.txt\n"
        b"@@ -0,0 +1 @@\n"
        b"+" + content
    )


def atif(task_line):
    return {
        "schema_version": "ATIF-v1.6",
        "session_id": "s-1",
        "agent": {"name": "claude-code", "version": "2.1.0", "model_name": "claude-x"},
        "steps": [
            {"step_id": 1, "source": "user", "message": task_line},
            {
                "step_id": 2,
                "source": "agent",
                "message": "",
                "tool_calls": [{"tool_call_id": "c1", "function_name": "Bash", "arguments": {"command": "pytest -q"}}],
                "observation": {"results": [{"source_call_id": "c1", "content": "4 failed"}]},
                "metrics": {"prompt_tokens": 900, "completion_tokens": 40, "cached_tokens": 500},
            },
        ],
        "final_metrics": {"total_prompt_tokens": 900, "total_completion_tokens": 40, "total_steps": 2},
    }


def timing(start, end):
    return {"started_at": start, "finished_at": end}


def harbor_trial(trial, task, uid, times, reward=None, patch=None, exception=None):
    """times: (started, env_end, agent_end, verifier_end); env_end also starts the agent."""
    base = f"harbor-job/{JOB}/{trial}"
    config = {
        "task": {"path": f"data/beyondswe/{task}"},
        "trial_name": trial,
        "trials_dir": f"jobs/{JOB}",
        "timeout_multiplier": 1.0,
        "agent": AGENT,
        "environment": {"type": "docker", "force_build": False, "delete": True},
        "verifier": {"disable": False},
        "job_id": JOB_ID,
    }
    started, env_end, agent_end, finished = times
    result = {
        "id": uid,
        "task_name": task,
        "trial_name": trial,
        "trial_uri": f"file:///jobs/{JOB}/{trial}",
        "task_id": {"path": f"data/beyondswe/{task}"},
        "source": "beyondswe",
        "task_checksum": hashlib.sha256(f"beyondswe/{task}".encode()).hexdigest(),
        "config": config,
        "agent_info": {"name": "claude-code", "version": "2.1.0",
                       "model_info": {"name": "claude-x", "provider": "anthropic"}},
        "agent_result": None if exception else {
            "n_input_tokens": 120000, "n_cache_tokens": 90000, "n_output_tokens": 8000,
            "cost_usd": 1.23, "rollout_details": None, "metadata": None,
        },
        "verifier_result": None if exception else {"rewards": {"reward": float(reward)}},
        "exception_info": exception,
        "started_at": started,
        "finished_at": finished,
        "environment_setup": timing(started, env_end),
        "agent_setup": None,
        "agent_execution": timing(env_end, agent_end),
        "verifier": None if exception else timing(agent_end, finished),
    }
    write_json(f"{base}/config.json", config)
    write_json(f"{base}/result.json", result)
    if exception:
        write_text(f"{base}/exception.txt", exception["exception_traceback"])
        return
    write_json(f"{base}/agent/trajectory.json", atif("Fix the bug."))
    write_text(f"{base}/verifier/reward.txt", str(int(reward)))
    write_bytes(f"{base}/artifacts/patch.diff", patch)
    write_json(
        f"{base}/artifacts/manifest.json",
        [{"source": "/logs/artifacts/patch.diff", "destination": "artifacts/patch.diff", "type": "file", "status": "ok"}],
    )


def make_harbor():
    job = f"harbor-job/{JOB}"
    write_json(
        f"{job}/config.json",
        {
            "job_name": JOB,
            "jobs_dir": "jobs",
            "n_attempts": 2,
            "timeout_multiplier": 1.0,
            "orchestrator": {"type": "local", "n_concurrent_trials": 4, "quiet": False},
            "agents": [{"name": "claude-code", "model_name": "anthropic/claude-x"}],
            "datasets": [{"path": "data/beyondswe"}],
        },
    )
    t_ok, t_half, t_err, t_weird = (
        f"{CALC}__a8Kp2Qz", f"{CALC}__Xq3mN7v", f"{TEXTKIT}__Pw9sLk2", "weird_dir_name__Zz1Yy2x",
    )
    write_json(
        f"{job}/result.json",
        {
            "id": JOB_ID,
            "started_at": "2026-03-25T10:00:00",
            "finished_at": "2026-03-25T12:00:00",
            "n_total_trials": 4,
            "stats": {
                "n_trials": 4,
                "n_errors": 1,
                "evals": {
                    "claude-code__claude-x__beyondswe": {
                        "n_trials": 4,
                        "n_errors": 1,
                        "metrics": [{"mean": 0.5}],
                        "reward_stats": {"reward": {"1.0": [t_ok, t_weird], "0.0": [t_half]}},
                        "exception_stats": {"AgentTimeoutError": [t_err]},
                    }
                },
            },
        },
    )
    harbor_trial(
        t_ok, CALC, "7c9e6679-7425-40de-944b-e07fc1f90ae7",
        ("2026-03-25T10:00:01.5Z", "2026-03-25T10:01:30Z", "2026-03-25T10:38:00Z", "2026-03-25T10:40:02Z"),
        reward=1, patch=GOLD[CALC].encode("utf-8"),
    )
    harbor_trial(
        t_half, CALC, "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
        ("2026-03-25T10:00:02.250000", "2026-03-25T10:01:40.000000",
         "2026-03-25T10:45:10.000000", "2026-03-25T10:47:00.000000"),
        reward=0, patch=latin1_notes_hunk() + HALF_FIX.encode("utf-8"),
    )
    harbor_trial(
        t_err, TEXTKIT, "d4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70",
        ("2026-03-25T10:00:03", "2026-03-25T10:00:59", "2026-03-25T11:00:00", "2026-03-25T11:00:01"),
        exception={
            "exception_type": "AgentTimeoutError",
            "exception_message": "Agent execution timed out after 3600 seconds",
            "exception_traceback": "Traceback (most recent call last):\n"
                                   '  File "harbor/trial/trial.py", line 212, in _execute_agent\n'
                                   "    await asyncio.wait_for(self._agent.run(...), timeout=3600)\n"
                                   "harbor.trial.trial.AgentTimeoutError: Agent execution timed out after 3600 seconds\n",
            "occurred_at": "2026-03-25T11:00:00",
        },
    )
    harbor_trial(
        t_weird, TEXTKIT, "f0e1d2c3-b4a5-4968-8776-655443322110",
        ("2026-03-25T11:00:05", "2026-03-25T11:01:00", "2026-03-25T11:40:00", "2026-03-25T11:42:30"),
        reward=1, patch=GOLD[TEXTKIT].encode("utf-8"),
    )


# --------------------------------------------------------------------------- main


def main():
    make_predictions()
    make_swe_agent()
    make_mini_swe_agent()
    make_openhands()
    make_aweagent()
    make_claude_code()
    make_codex()
    make_harbor()
    print(f"wrote fixtures under {os.path.relpath(OUT, ROOT)}/", file=sys.stderr)


if __name__ == "__main__":
    main()
