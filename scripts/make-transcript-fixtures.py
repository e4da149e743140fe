#!/usr/bin/env python3
"""Writes the Claude Code and Codex transcript fixtures under fixtures/agents/transcripts/.

    python3 scripts/make-transcript-fixtures.py

Deterministic and stdlib only: running it twice writes byte-identical files. Each file is
written here in the shape the agent itself writes (field names, nesting, line types, one
compact JSON object per line); where each shape was taken from is recorded in
fixtures/agents/README.md. The values (ids, timings, outputs) are made up; the file edits
are exact, so replaying them on the fixture instances' base commits gives:

  claude-code-stream   acme_textkit_pr12   the gold patch   (Edit, a failed Edit, MultiEdit, Write)
  claude-code-session  acme_calc_pr7       the gold patch   (three Edits, a subagent's Bash)
  codex-exec-legacy    acme_textkit_pr12   the gold patch   (patch_apply_begin unified diffs)
  codex-rollout        acme_calc_pr7       the gold patch   (apply_patch envelope)
  harbor-raw           textkit gold (Claude Code), calc half fix (Codex rollout)

and claude-code-result (no tool calls at all) and codex-exec (file_change items record paths
only) cannot be replayed.

Inputs (read, never written): fixtures/dataset/fixtures.jsonl (gold patches, workdirs),
fixtures/predictions/demo.jsonl (the half fix), fixtures/images/*/stages/02-base (base files).
"""

import difflib
import json
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fixtures", "agents", "transcripts")

CALC = "acme_calc_pr7"
TEXTKIT = "acme_textkit_pr12"


def load_jsonl(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
        return {r["instance_id"]: r for r in (json.loads(l) for l in fh if l.strip())}


DATASET = load_jsonl("fixtures/dataset/fixtures.jsonl")
DEMO = load_jsonl("fixtures/predictions/demo.jsonl")
WORKDIR = {CALC: DATASET[CALC]["workdir"], TEXTKIT: DATASET[TEXTKIT]["workdir"]}
STAGE = {CALC: "fixtures/images/calc/stages/02-base", TEXTKIT: "fixtures/images/textkit/stages/02-base"}


def base_file(iid, rel):
    with open(os.path.join(ROOT, STAGE[iid], rel), encoding="utf-8", newline="") as fh:
        return fh.read()


def apply_unified(text, patch, rel):
    """Applies the hunks of `rel` in a git diff to `text` (exact context)."""
    lines = text.split("\n")
    blocks = re.split(r"(?m)^diff --git ", patch)
    body = next(b for b in blocks if b.startswith(f"a/{rel} "))
    out, pos = [], 0
    for m in re.finditer(r"(?ms)^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@[^\n]*\n(.*?)(?=^@@|\Z)", body):
        start = int(m.group(1)) - 1
        out.extend(lines[pos:start])
        pos = start
        for l in m.group(2).split("\n"):
            if not l or l.startswith("\\"):
                continue
            if l[0] == " ":
                assert lines[pos] == l[1:], (rel, pos, l)
                out.append(l[1:])
                pos += 1
            elif l[0] == "-":
                assert lines[pos] == l[1:], (rel, pos, l)
                pos += 1
            elif l[0] == "+":
                out.append(l[1:])
    out.extend(lines[pos:])
    return "\n".join(out)


GOLD_FILES = {
    CALC: ["calc/ops.py"],
    TEXTKIT: ["textkit/io/reader.py", "textkit/text/slug.py", "textkit/text/wrap.py"],
}
BASE = {(i, f): base_file(i, f) for i, fs in GOLD_FILES.items() for f in fs}
GOLD = {(i, f): apply_unified(BASE[(i, f)], DATASET[i]["patch"], f) for (i, f) in BASE}
HALF = apply_unified(BASE[(CALC, "calc/ops.py")], DEMO["acme_calc_pr72"]["model_patch"], "calc/ops.py")


def replace_once(text, old, new):
    assert text.count(old) == 1, old
    return text.replace(old, new)


# --------------------------------------------------------------------------- io


def path_of(rel):
    path = os.path.join(OUT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


def compact(obj):
    # Both agents write compact JSON with raw UTF-8.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def write_jsonl(rel, objs, head=""):
    with open(path_of(rel), "w", encoding="utf-8", newline="\n") as fh:
        fh.write(head)
        for o in objs:
            fh.write((o if isinstance(o, str) else compact(o)) + "\n")


def write_json(rel, obj, pretty=False):
    with open(path_of(rel), "w", encoding="utf-8", newline="\n") as fh:
        fh.write((json.dumps(obj, indent=2, ensure_ascii=False) if pretty else compact(obj)) + "\n")


def uid(n, tag="0"):
    """A stable UUID-shaped id."""
    h = f"{tag}{n:031x}"[-32:]
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


def numbered(text, start=1):
    """What Claude Code's Read and Edit results show: `cat -n` with an arrow."""
    return "\n".join(f"{i:6}\u2192{l}" for i, l in enumerate(text.split("\n"), start))


def structured(old, new):
    """Claude Code's `structuredPatch`: the hunks of a 3-line-context diff."""
    diff = list(difflib.unified_diff(old.split("\n"), new.split("\n"), n=3, lineterm=""))[2:]
    hunks, cur = [], None
    for l in diff:
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", l)
        if m:
            cur = {"oldStart": int(m.group(1)), "oldLines": int(m.group(2) or 1),
                   "newStart": int(m.group(3)), "newLines": int(m.group(4) or 1), "lines": []}
            hunks.append(cur)
        else:
            cur["lines"].append(l)
    return hunks


def codex_hunks(old, new):
    """Codex's unified diff of one file (context 1, hunk headers only)."""
    diff = list(difflib.unified_diff(old.split("\n")[:-1], new.split("\n")[:-1], n=1, lineterm=""))[2:]
    return "\n".join(diff) + "\n"


def envelope(rel, old, new):
    """An apply_patch envelope updating `rel`: one chunk per hunk, one line of context."""
    out = ["*** Begin Patch", f"*** Update File: {rel}"]
    for l in list(difflib.unified_diff(old.split("\n")[:-1], new.split("\n")[:-1], n=1, lineterm=""))[2:]:
        out.append("@@" if l.startswith("@@") else l)
    out.append("*** End Patch")
    return "\n".join(out)


# ------------------------------------------------------- Claude Code stream-json

TEXTKIT_PROMPT = DATASET[TEXTKIT]["problem_statement"]
CALC_PROMPT = DATASET[CALC]["problem_statement"]
SONNET = "claude-sonnet-4-5-20250929"
TOOLS = ["Task", "Bash", "Glob", "Grep", "ExitPlanMode", "Read", "Edit", "MultiEdit", "Write",
         "NotebookEdit", "WebFetch", "TodoWrite", "WebSearch", "BashOutput", "KillShell",
         "SlashCommand"]


def usage(inp, out, read=0, create=0):
    return {"input_tokens": inp, "cache_creation_input_tokens": create, "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": create, "ephemeral_1h_input_tokens": 0},
            "output_tokens": out, "service_tier": "standard"}


def claude_stream(sid, cwd):
    """textkit, Claude Code 2.0: hooks, init, one block per assistant line, rate limits, result."""
    reader, slug, wrap = (f"{cwd}/textkit/io/reader.py", f"{cwd}/textkit/text/slug.py",
                          f"{cwd}/textkit/text/wrap.py")
    n = iter(range(1, 1000))
    lines = []

    def line(obj):
        obj.setdefault("session_id", sid)
        obj.setdefault("uuid", uid(next(n), "5"))
        lines.append(obj)

    def assistant(msg_id, block, out_tokens=12):
        line({"type": "assistant", "message": {
            "model": SONNET, "id": msg_id, "type": "message", "role": "assistant", "content": [block],
            "stop_reason": None, "stop_sequence": None,
            "usage": usage(6, out_tokens, read=18342, create=412)},
            "parent_tool_use_id": None})

    def result(tool_id, content, tool_use_result, is_error=False):
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        line({"type": "user", "message": {"role": "user", "content": [block]},
              "parent_tool_use_id": None, "tool_use_result": tool_use_result})

    hook = uid(900, "h")
    line({"type": "system", "subtype": "hook_started", "hook_id": hook, "hook_name": "SessionStart:startup",
          "hook_event": "SessionStart"})
    line({"type": "system", "subtype": "hook_response", "hook_id": hook, "hook_name": "SessionStart:startup",
          "hook_event": "SessionStart", "output": "", "stdout": "", "stderr": "", "exit_code": 0,
          "outcome": "success"})
    line({"type": "system", "subtype": "init", "cwd": cwd, "tools": TOOLS, "mcp_servers": [],
          "model": SONNET, "permissionMode": "bypassPermissions",
          "slash_commands": ["compact", "context", "cost", "init", "pr-comments", "release-notes", "review"],
          "apiKeySource": "ANTHROPIC_API_KEY", "claude_code_version": "2.0.76", "output_style": "default",
          "agents": ["general-purpose", "statusline-setup", "Explore", "Plan"], "skills": [], "plugins": []})
    assistant("msg_01TkA1", {"type": "thinking", "thinking": "textdep 2.0 renamed its helpers; run the tests first to see which calls break.",
                             "signature": "EqQBCkYIBxgCKkCf3mR0"})
    assistant("msg_01TkA1", {"type": "tool_use", "id": "toolu_01TkB1", "name": "Bash",
                             "input": {"command": "python -m pytest -q", "description": "Run the test suite"}})
    fail_out = ("FFF.... [100%]\nFAILED tests/test_reader.py::test_read_text_normalizes_newlines - AttributeError: "
                "module 'textdep' has no attribute 'normalize_newlines'\n3 failed, 4 passed in 0.07s")
    result("toolu_01TkB1", fail_out, {"stdout": fail_out, "stderr": "", "interrupted": False, "isImage": False})
    line({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed", "resetsAt": 1775131200,
          "rateLimitType": "five_hour", "overageStatus": "rejected", "isUsingOverage": False}})
    assistant("msg_01TkA2", {"type": "tool_use", "id": "toolu_01TkB2", "name": "Bash",
                             "input": {"command": "grep -rn 'textdep\\.' textkit", "description": "Find textdep calls"}})
    grep_out = ("textkit/io/reader.py:9:        return textdep.normalize_newlines(fh.read())\n"
                "textkit/text/slug.py:8:    return textdep.slugify(title, separator)\n"
                "textkit/text/wrap.py:8:    return textdep.fill(text, width)")
    result("toolu_01TkB2", grep_out, {"stdout": grep_out, "stderr": "", "interrupted": False, "isImage": False})
    # Edit
    old_r, new_r = "textdep.normalize_newlines(fh.read())", "textdep.normalize(fh.read(), newlines=True)"
    before = BASE[(TEXTKIT, "textkit/io/reader.py")]
    after = replace_once(before, old_r, new_r)
    assert after == GOLD[(TEXTKIT, "textkit/io/reader.py")]
    assistant("msg_01TkA3", {"type": "tool_use", "id": "toolu_01TkB3", "name": "Edit",
                             "input": {"file_path": reader, "old_string": old_r, "new_string": new_r}})
    result("toolu_01TkB3",
           f"The file {reader} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n"
           + numbered("\n".join(after.split("\n")[5:10]), 6),
           {"filePath": reader, "oldString": old_r, "newString": new_r, "originalFile": before,
            "structuredPatch": structured(before, after), "userModified": False, "replaceAll": False})
    # A failed Edit (the string is not in the file): nothing changes.
    wrong = "textdep.slugify(title, sep)"
    assistant("msg_01TkA4", {"type": "tool_use", "id": "toolu_01TkB4", "name": "Edit",
                             "input": {"file_path": slug, "old_string": wrong,
                                       "new_string": "textdep.make_slug(title, separator=sep)"}})
    result("toolu_01TkB4", f"<tool_use_error>String to replace not found in file.\nString: {wrong}</tool_use_error>",
           f"Error: String to replace not found in file.\nString: {wrong}", is_error=True)
    # MultiEdit
    old_s, new_s = "textdep.slugify(title, separator)", "textdep.make_slug(title, separator=separator)"
    before = BASE[(TEXTKIT, "textkit/text/slug.py")]
    after = replace_once(before, old_s, new_s)
    assert after == GOLD[(TEXTKIT, "textkit/text/slug.py")]
    edits = [{"old_string": old_s, "new_string": new_s, "replace_all": False}]
    assistant("msg_01TkA5", {"type": "tool_use", "id": "toolu_01TkB5", "name": "MultiEdit",
                             "input": {"file_path": slug, "edits": edits}})
    result("toolu_01TkB5",
           f"Applied 1 edit to {slug}:\n1. Replaced \"{old_s}\" with \"{new_s}\"",
           {"filePath": slug, "edits": edits, "originalFileContents": before,
            "structuredPatch": structured(before, after), "userModified": False})
    # Write (the whole file)
    before = BASE[(TEXTKIT, "textkit/text/wrap.py")]
    after = GOLD[(TEXTKIT, "textkit/text/wrap.py")]
    assistant("msg_01TkA6", {"type": "tool_use", "id": "toolu_01TkB6", "name": "Write",
                             "input": {"file_path": wrap, "content": after}})
    result("toolu_01TkB6",
           f"The file {wrap} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n"
           + numbered(after.rstrip("\n")),
           {"type": "update", "filePath": wrap, "content": after, "structuredPatch": structured(before, after),
            "originalFile": before})
    assistant("msg_01TkA7", {"type": "tool_use", "id": "toolu_01TkB7", "name": "Bash",
                             "input": {"command": "python -m pytest -q 2>&1 | tail -3", "description": "Run the tests again"}})
    ok = "....... [100%]\n7 passed in 0.05s"
    result("toolu_01TkB7", ok, {"stdout": ok, "stderr": "", "interrupted": False, "isImage": False})
    answer = "Ported textkit to the textdep 2.0 API: `normalize(..., newlines=True)`, `make_slug` and `wrap_text`. All 7 tests pass."
    assistant("msg_01TkA8", {"type": "text", "text": answer}, 48)
    line({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 41877,
          "duration_api_ms": 38211, "num_turns": 15, "result": answer, "total_cost_usd": 0.1289154,
          "usage": {"input_tokens": 54, "cache_creation_input_tokens": 4120, "cache_read_input_tokens": 146736,
                    "output_tokens": 1203, "server_tool_use": {"web_search_requests": 0},
                    "service_tier": "standard",
                    "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 4120}},
          "modelUsage": {SONNET: {"inputTokens": 54, "outputTokens": 1203, "cacheReadInputTokens": 146736,
                                  "cacheCreationInputTokens": 4120, "webSearchRequests": 0,
                                  "costUSD": 0.1289154, "contextWindow": 200000}},
          "permission_denials": []})
    return lines


# -------------------------------------------------- Claude Code result object


def claude_result():
    return {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 93412,
            "duration_api_ms": 71208, "num_turns": 12,
            "result": "Fixed `_coerce` in calc/ops.py: typeset minus signs (U+2212, U+2012, U+2013) are read as `-` "
                      "and a leading currency symbol is ignored. All 11 tests pass.",
            "session_id": "0b6c5a1e-7d2f-4c3a-9e8b-1f2a3b4c5d6e", "total_cost_usd": 0.4217,
            "usage": {"input_tokens": 31, "cache_creation_input_tokens": 9120, "cache_read_input_tokens": 201877,
                      "output_tokens": 2210, "server_tool_use": {"web_search_requests": 0},
                      "service_tier": "standard",
                      "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 9120}},
            "modelUsage": {
                "claude-haiku-4-5-20251001": {"inputTokens": 1893, "outputTokens": 96, "cacheReadInputTokens": 0,
                                              "cacheCreationInputTokens": 0, "webSearchRequests": 0,
                                              "costUSD": 0.002373, "contextWindow": 200000},
                "claude-opus-4-5-20251101": {"inputTokens": 31, "outputTokens": 2210, "cacheReadInputTokens": 201877,
                                             "cacheCreationInputTokens": 9120, "webSearchRequests": 0,
                                             "costUSD": 0.4193, "contextWindow": 200000}},
            "permission_denials": [], "uuid": "9d2f4b1c-3e5a-4c7d-8b9e-0a1b2c3d4e5f"}


# ---------------------------------------------------- Claude Code session file

OPUS = "claude-opus-4-1-20250805"


def claude_session(sid, cwd):
    """calc, a Claude Code 2.0 session file: summary, file-history-snapshot, a prompt, a subagent
    (sidechain) that greps, three Edits with their toolUseResult, a test run."""
    ops = f"{cwd}/calc/ops.py"
    base = BASE[(CALC, "calc/ops.py")]
    gold = GOLD[(CALC, "calc/ops.py")]
    e1 = ('numeric strings."""\n\n\ndef _coerce(value):',
          'numeric strings."""\n\n' + "\n".join(gold.split("\n")[2:5]) + '\n\n\ndef _coerce(value):')
    doc_old = 'numbers pass through."""'
    doc_new = gold[gold.index("numbers pass through.\n"):gold.index('    """\n    if isinstance') + len('    """')]
    e2 = (doc_old, doc_new)
    body_old = "        return float(value)"
    body_new = gold[gold.index("        text = value.strip()"):gold.index("        return -number if negative else number")
                    + len("        return -number if negative else number")]
    e3 = (body_old, body_new)
    states = [base]
    for old, new in (e1, e2, e3):
        states.append(replace_once(states[-1], old, new))
    assert states[-1] == gold, "the three Edits must give the gold file"

    n = iter(range(1, 1000))
    last = [None]
    lines = []
    t = iter(range(0, 10000, 3))

    def stamp():
        s = next(t)
        return f"2025-10-14T09:{12 + s // 60:02d}:{s % 60:02d}.{(s * 37) % 1000:03d}Z"

    def common(side=False, parent=None):
        u = uid(next(n), "c")
        d = {"parentUuid": parent if side else last[0], "isSidechain": side, "userType": "external", "cwd": cwd,
             "sessionId": sid, "version": "2.0.14", "gitBranch": "HEAD"}
        return u, d

    def user(content, tool_result=None, side=False, parent=None, keep=True):
        u, d = common(side, parent)
        d.update({"type": "user", "message": {"role": "user", "content": content}, "uuid": u, "timestamp": stamp()})
        if tool_result is not None:
            d["toolUseResult"] = tool_result
        lines.append(d)
        if keep:
            last[0] = u
        return u

    def assistant(msg_id, block, side=False, parent=None, keep=True, model=OPUS):
        u, d = common(side, parent)
        d.update({"message": {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                              "content": [block], "stop_reason": None, "stop_sequence": None,
                              "usage": usage(4, 30, read=15319, create=108)},
                  "requestId": "req_011CT" + msg_id[-6:], "type": "assistant", "uuid": u, "timestamp": stamp()})
        lines.append(d)
        if keep:
            last[0] = u
        return u

    first = uid(500, "c")
    lines.append({"type": "summary", "summary": "Typeset minus signs and currency symbols in calc operands",
                  "leafUuid": uid(499, "c")})
    lines.append({"type": "file-history-snapshot", "messageId": first,
                  "snapshot": {"messageId": first, "trackedFileBackups": {}, "timestamp": "2025-10-14T09:12:00.000Z"},
                  "isSnapshotUpdate": False})
    user(CALC_PROMPT)
    assistant("msg_01CcA1", {"type": "text", "text": "I'll find where operands are coerced, then fix `_coerce`."})
    task_id = "toolu_01CcT1"
    sub_prompt = "Find every place in this repository where string operands are turned into numbers. Report file and line."
    assistant("msg_01CcA1", {"type": "tool_use", "id": task_id, "name": "Task",
                             "input": {"description": "Find operand coercion", "prompt": sub_prompt,
                                       "subagent_type": "Explore"}})
    task_parent = last[0]
    # The subagent's own steps: a sidechain starting from no parent.
    s1 = user(sub_prompt, side=True, parent=None, keep=False)
    grep = "grep -rn '_coerce\\|float(' calc tests | head -20"
    s2 = assistant("msg_01CcS1", {"type": "tool_use", "id": "toolu_01CcS1", "name": "Bash",
                                  "input": {"command": grep, "description": "Find coercion sites"}},
                   side=True, parent=s1, keep=False, model="claude-haiku-4-5-20251001")
    grep_out = ("calc/ops.py:4:def _coerce(value):\ncalc/ops.py:7:        return float(value)\n"
                "calc/ops.py:12:    return _coerce(a) + _coerce(b)")
    s3 = user([{"tool_use_id": "toolu_01CcS1", "type": "tool_result", "content": grep_out, "is_error": False}],
              {"stdout": grep_out, "stderr": "", "interrupted": False, "isImage": False}, side=True, parent=s2,
              keep=False)
    found = "All coercion goes through `_coerce` in calc/ops.py (line 4); it calls `float(value)` on strings."
    assistant("msg_01CcS2", {"type": "text", "text": found}, side=True, parent=s3, keep=False,
              model="claude-haiku-4-5-20251001")
    last[0] = task_parent
    user([{"tool_use_id": task_id, "type": "tool_result", "content": [{"type": "text", "text": found}]}],
         {"status": "completed", "prompt": sub_prompt, "agentId": "a1b2c3d", "content": [{"type": "text", "text": found}],
          "totalDurationMs": 8123, "totalTokens": 19121, "totalToolUseCount": 1})
    assistant("msg_01CcA2", {"type": "tool_use", "id": "toolu_01CcR1", "name": "Read", "input": {"file_path": ops}})
    user([{"tool_use_id": "toolu_01CcR1", "type": "tool_result", "content": numbered(base.rstrip("\n")) + "\n"}],
         {"type": "text", "file": {"filePath": ops, "content": base, "numLines": base.count("\n") + 1,
                                   "startLine": 1, "totalLines": base.count("\n") + 1}})
    for k, (old, new) in enumerate((e1, e2, e3)):
        tid = f"toolu_01CcE{k + 1}"
        assistant(f"msg_01CcB{k + 1}", {"type": "tool_use", "id": tid, "name": "Edit",
                                        "input": {"file_path": ops, "old_string": old, "new_string": new}})
        user([{"tool_use_id": tid, "type": "tool_result",
               "content": f"The file {ops} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n"
                          + numbered("\n".join(states[k + 1].split("\n")[:12]))}],
             {"filePath": ops, "oldString": old, "newString": new, "originalFile": states[k],
              "structuredPatch": structured(states[k], states[k + 1]), "userModified": False, "replaceAll": False})
    assistant("msg_01CcA3", {"type": "tool_use", "id": "toolu_01CcB9", "name": "Bash",
                             "input": {"command": "python -m pytest -q tests", "description": "Run the tests"}})
    ok = "........... [100%]\n11 passed in 0.06s"
    user([{"tool_use_id": "toolu_01CcB9", "type": "tool_result", "content": ok, "is_error": False}],
         {"stdout": ok, "stderr": "", "interrupted": False, "isImage": False})
    assistant("msg_01CcA4", {"type": "text", "text": "`_coerce` now reads typeset minus signs and ignores a leading currency symbol; all tests pass."})
    return lines


# --------------------------------------------------------- Codex exec --json


def codex_exec():
    """calc, `codex exec --json` 0.46+: items; file_change lists paths only."""
    out1 = "FFFF....... [100%]\n4 failed, 7 passed in 0.06s\n"
    return [
        {"type": "thread.started", "thread_id": "0199a3b2-c4d5-7e6f-8a9b-0c1d2e3f4a5b"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "reasoning",
                                            "text": "**Reproducing the failure**\n\nRun the tests to see which operands are rejected."}},
        {"type": "item.started", "item": {"id": "item_1", "type": "command_execution",
                                          "command": "bash -lc 'python -m pytest -q'", "aggregated_output": "",
                                          "exit_code": None, "status": "in_progress"}},
        {"type": "item.completed", "item": {"id": "item_1", "type": "command_execution",
                                            "command": "bash -lc 'python -m pytest -q'", "aggregated_output": out1,
                                            "exit_code": 1, "status": "failed"}},
        {"type": "item.started", "item": {"id": "item_2", "type": "command_execution",
                                          "command": "bash -lc \"sed -n '1,20p' calc/ops.py\"", "aggregated_output": "",
                                          "exit_code": None, "status": "in_progress"}},
        {"type": "item.completed", "item": {"id": "item_2", "type": "command_execution",
                                            "command": "bash -lc \"sed -n '1,20p' calc/ops.py\"",
                                            "aggregated_output": BASE[(CALC, "calc/ops.py")], "exit_code": 0,
                                            "status": "completed"}},
        {"type": "item.completed", "item": {"id": "item_3", "type": "file_change",
                                            "changes": [{"path": "/workspace/calc/calc/ops.py", "kind": "update"}],
                                            "status": "completed"}},
        {"type": "item.completed", "item": {"id": "item_4", "type": "command_execution",
                                            "command": "bash -lc 'python -m pytest -q'",
                                            "aggregated_output": "........... [100%]\n11 passed in 0.05s\n",
                                            "exit_code": 0, "status": "completed"}},
        {"type": "item.completed", "item": {"id": "item_5", "type": "agent_message",
                                            "text": "`_coerce` now accepts typeset minus signs and a leading currency symbol."}},
        {"type": "turn.completed", "usage": {"input_tokens": 48213, "cached_input_tokens": 40192, "output_tokens": 1874}},
    ]


# ------------------------------------------------- Codex exec --json (older)


def codex_legacy():
    """textkit, the older `codex exec --json`: config and prompt lines, then {"id","msg"} events."""
    cwd = WORKDIR[TEXTKIT]
    changes = {}
    for rel in GOLD_FILES[TEXTKIT]:
        changes[f"{cwd}/{rel}"] = {"update": {"unified_diff": codex_hunks(BASE[(TEXTKIT, rel)], GOLD[(TEXTKIT, rel)]),
                                              "move_path": None}}
    fail = ("FFF....                                                                  [100%]\n"
            "3 failed, 4 passed in 0.07s\n")

    def dur(s, ns):
        return {"secs": s, "nanos": ns}

    ev = [
        {"workdir": cwd, "model": "gpt-5", "provider": "openai", "approval": "never",
         "sandbox": "danger-full-access", "reasoning effort": "medium", "reasoning summaries": "auto"},
        {"prompt": TEXTKIT_PROMPT},
        {"id": "0", "msg": {"type": "task_started", "model_context_window": 272000}},
        {"id": "0", "msg": {"type": "agent_reasoning", "text": "**Running the test suite**"}},
        {"id": "0", "msg": {"type": "exec_command_begin", "call_id": "call_Xq1Rt8m2Lk0aP3sV", "command": ["bash", "-lc", "python -m pytest -q"],
                            "cwd": cwd, "parsed_cmd": [{"type": "unknown", "cmd": "python -m pytest -q"}]}},
        {"id": "0", "msg": {"type": "exec_command_end", "call_id": "call_Xq1Rt8m2Lk0aP3sV", "stdout": fail, "stderr": "",
                            "aggregated_output": fail, "exit_code": 1, "duration": dur(0, 712044318),
                            "formatted_output": fail}},
        {"id": "0", "msg": {"type": "exec_command_begin", "call_id": "call_9bNw2Yc4Hd7eQ1uZ",
                            "command": ["bash", "-lc", "rg -n 'textdep\\.' textkit"], "cwd": cwd,
                            "parsed_cmd": [{"type": "search", "cmd": "rg -n 'textdep\\.' textkit", "query": "textdep\\.",
                                            "path": "textkit"}]}},
        {"id": "0", "msg": {"type": "exec_command_end", "call_id": "call_9bNw2Yc4Hd7eQ1uZ",
                            "stdout": "textkit/io/reader.py:9:        return textdep.normalize_newlines(fh.read())\n",
                            "stderr": "", "aggregated_output": "", "exit_code": 0, "duration": dur(0, 21544931),
                            "formatted_output": ""}},
        {"id": "0", "msg": {"type": "agent_reasoning", "text": "**Porting to the textdep 2.0 names**"}},
        {"id": "0", "msg": {"type": "patch_apply_begin", "call_id": "call_Lm3Zp6Wq8Ty1Rn5K", "auto_approved": True,
                            "changes": changes}},
        {"id": "0", "msg": {"type": "patch_apply_end", "call_id": "call_Lm3Zp6Wq8Ty1Rn5K",
                            "stdout": "Success. Updated the following files:\nM textkit/io/reader.py\nM textkit/text/slug.py\nM textkit/text/wrap.py\n",
                            "stderr": "", "success": True}},
        {"id": "0", "msg": {"type": "turn_diff", "unified_diff": DATASET[TEXTKIT]["patch"]}},
        {"id": "0", "msg": {"type": "exec_command_begin", "call_id": "call_Ht5Ux2Ko9Vb3Mq7D", "command": ["bash", "-lc", "python -m pytest -q"],
                            "cwd": cwd, "parsed_cmd": [{"type": "unknown", "cmd": "python -m pytest -q"}]}},
        {"id": "0", "msg": {"type": "exec_command_end", "call_id": "call_Ht5Ux2Ko9Vb3Mq7D", "stdout": "7 passed in 0.05s\n",
                            "stderr": "", "aggregated_output": "7 passed in 0.05s\n", "exit_code": 0,
                            "duration": dur(0, 655203117), "formatted_output": "7 passed in 0.05s\n"}},
        {"id": "0", "msg": {"type": "agent_message",
                            "message": "Ported textkit to textdep 2.0 (`normalize`, `make_slug`, `wrap_text`); the tests pass."}},
        {"id": "0", "msg": {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 31877,
                            "cached_input_tokens": 26880, "output_tokens": 1422, "reasoning_output_tokens": 896,
                            "total_tokens": 33299}}}},
        {"id": "0", "msg": {"type": "task_complete",
                            "last_agent_message": "Ported textkit to textdep 2.0 (`normalize`, `make_slug`, `wrap_text`); the tests pass."}},
    ]
    return ev


# ------------------------------------------------------------- Codex rollout


def codex_rollout(sid, target, when="2025-10-29T00:59", model="gpt-5-codex"):
    """calc, a Codex 0.46 session rollout: shell calls with argument lists, a freeform apply_patch."""
    cwd = WORKDIR[CALC]
    t = iter(range(38, 10000, 2))

    def stamp():
        s = next(t)
        return f"{when}:{s % 60:02d}.{(s * 53) % 1000:03d}Z"

    def row(ty, payload):
        return {"timestamp": stamp(), "type": ty, "payload": payload}

    def shell(call_id, script):
        return row("response_item", {"type": "function_call", "name": "shell",
                                     "arguments": json.dumps({"command": ["bash", "-lc", script], "workdir": cwd,
                                                              "timeout_ms": 120000}, separators=(",", ":")),
                                     "call_id": call_id})

    def output(call_id, text, code, secs):
        return row("response_item", {"type": "function_call_output", "call_id": call_id,
                                     "output": json.dumps({"output": text, "metadata": {"exit_code": code,
                                                                                        "duration_seconds": secs}},
                                                          separators=(",", ":"))})

    env = (f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <approval_policy>never</approval_policy>\n"
           "  <sandbox_mode>danger-full-access</sandbox_mode>\n  <network_access>enabled</network_access>\n"
           "  <shell>bash</shell>\n</environment_context>")
    base = BASE[(CALC, "calc/ops.py")]
    patch = envelope("calc/ops.py", base, target)
    tokens = {"input_tokens": 41235, "cached_input_tokens": 34816, "output_tokens": 2210,
              "reasoning_output_tokens": 1344, "total_tokens": 43445}
    return [
        row("session_meta", {"id": sid, "timestamp": f"{when}:38.308Z", "cwd": cwd, "originator": "codex_exec",
                             "cli_version": "0.46.0", "instructions": None, "source": "exec",
                             "git": {"commit_hash": DATASET[CALC]["base_commit"]}}),
        row("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": env}]}),
        row("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": CALC_PROMPT}]}),
        row("event_msg", {"type": "user_message", "message": CALC_PROMPT, "kind": "plain"}),
        row("turn_context", {"cwd": cwd, "approval_policy": "never",
                             "sandbox_policy": {"mode": "danger-full-access"}, "model": model,
                             "effort": "high", "summary": "auto"}),
        row("event_msg", {"type": "token_count", "info": None, "rate_limits": None}),
        row("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Reproducing the failure**"}],
                              "content": None, "encrypted_content": "gAAAAABpAXl3c2VjcmV0LXJlYXNvbmluZw=="}),
        row("event_msg", {"type": "agent_reasoning", "text": "**Reproducing the failure**"}),
        shell("call_Qw8Er5Ty2Ui9Op1A", "python -m pytest -q"),
        output("call_Qw8Er5Ty2Ui9Op1A", "FFFF....... [100%]\n4 failed, 7 passed in 0.06s\n", 1, 0.6),
        shell("call_As3Df6Gh9Jk2Lz5X", "sed -n '1,40p' calc/ops.py"),
        output("call_As3Df6Gh9Jk2Lz5X", base, 0, 0.0),
        row("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": "call_Zx7Cv4Bn1Mq8We3R",
                              "name": "apply_patch", "input": patch}),
        row("response_item", {"type": "custom_tool_call_output", "call_id": "call_Zx7Cv4Bn1Mq8We3R",
                              "output": json.dumps({"output": "Success. Updated the following files:\nM calc/ops.py\n",
                                                    "metadata": {"exit_code": 0, "duration_seconds": 0.0}},
                                                   separators=(",", ":"))}),
        shell("call_Rt6Yu3Io0Pa7Sd4F", "python -m pytest -q"),
        output("call_Rt6Yu3Io0Pa7Sd4F", "........... [100%]\n11 passed in 0.05s\n", 0, 0.5),
        row("event_msg", {"type": "token_count", "info": {"total_token_usage": tokens, "last_token_usage": tokens,
                                                          "model_context_window": 272000}, "rate_limits": None}),
        row("response_item", {"type": "message", "role": "assistant",
                              "content": [{"type": "output_text", "text": "Updated `_coerce` in calc/ops.py; the tests pass."}]}),
        row("event_msg", {"type": "agent_message", "message": "Updated `_coerce` in calc/ops.py; the tests pass."}),
    ]


# ------------------------------------------------------------- Harbor job


JOB = "2026-04-02__09-00-00"


def harbor_result(trial, task, agent, version, model, provider):
    return {
        "id": uid(len(trial), "d"), "task_name": task, "trial_name": trial,
        "trial_uri": f"file:///jobs/{JOB}/{trial}", "task_id": {"path": f"data/beyondswe/{task}"},
        "source": "beyondswe",
        "config": {"task": {"path": f"data/beyondswe/{task}"}, "trial_name": trial, "trials_dir": f"jobs/{JOB}",
                   "timeout_multiplier": 1.0, "agent": {"name": agent, "model_name": f"{provider}/{model}", "kwargs": {}},
                   "environment": {"type": "docker", "force_build": False, "delete": True},
                   "verifier": {"disable": False}},
        "agent_info": {"name": agent, "version": version, "model_info": {"name": model, "provider": provider}},
        "agent_result": {"n_input_tokens": 150000, "n_cache_tokens": 120000, "n_output_tokens": 3000,
                         "cost_usd": None, "rollout_details": None, "metadata": None},
        "verifier_result": {"rewards": {"reward": 0.0}},
        "exception_info": None,
        "started_at": "2026-04-02T09:00:01.000000", "finished_at": "2026-04-02T09:06:30.000000",
        "environment_setup": {"started_at": "2026-04-02T09:00:01.000000", "finished_at": "2026-04-02T09:00:20.000000"},
        "agent_setup": {"started_at": "2026-04-02T09:00:20.000000", "finished_at": "2026-04-02T09:01:10.000000"},
        "agent_execution": {"started_at": "2026-04-02T09:01:10.000000", "finished_at": "2026-04-02T09:05:50.000000"},
        "verifier": {"started_at": "2026-04-02T09:05:50.000000", "finished_at": "2026-04-02T09:06:30.000000"},
    }


def make_harbor():
    job = f"harbor-raw/{JOB}"
    write_json(f"{job}/config.json", {"job_name": JOB, "jobs_dir": "jobs", "n_attempts": 1,
                                      "agents": [{"name": "claude-code", "model_name": f"anthropic/{SONNET}"},
                                                 {"name": "codex", "model_name": "openai/gpt-5-codex"}]}, pretty=True)
    # Claude Code: the stream Harbor tees to agent/claude-code.txt and the session under
    # agent/sessions (CLAUDE_CONFIG_DIR); no artifacts/patch.diff.
    tk = "acme_textkit_pr12__Rk7tQ2m"
    write_json(f"{job}/{tk}/result.json", harbor_result(tk, TEXTKIT, "claude-code", "2.0.76", SONNET, "anthropic"), pretty=True)
    sid = "7c1e9a4b-2d3f-4a5b-8c6d-9e0f1a2b3c4d"
    write_jsonl(f"{job}/{tk}/agent/claude-code.txt", claude_stream(sid, WORKDIR[TEXTKIT]))
    # Codex: stdout (with the stderr line Harbor's `2>&1` mixes in) and the rollout.
    cx = "acme_calc_pr7__Hc4vB8n"
    write_json(f"{job}/{cx}/result.json", harbor_result(cx, CALC, "codex", "0.46.0", "gpt-5-codex", "openai"), pretty=True)
    rid = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd6"
    write_jsonl(f"{job}/{cx}/agent/codex.txt", codex_exec(), head="Reading prompt from stdin...\n")
    write_jsonl(f"{job}/{cx}/agent/sessions/2026/04/02/rollout-2026-04-02T09-01-12-{rid}.jsonl",
                codex_rollout(rid, HALF, when="2026-04-02T09:01"))


def main():
    write_jsonl(f"claude-code-stream/{TEXTKIT}.jsonl", claude_stream("7c1e9a4b-2d3f-4a5b-8c6d-9e0f1a2b3c4d", WORKDIR[TEXTKIT]))
    write_json(f"claude-code-result/{CALC}.json", claude_result())
    sid = "3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9"
    write_jsonl(f"claude-code-session/{sid}.jsonl", claude_session(sid, WORKDIR[CALC]))
    write_jsonl(f"codex-exec/{CALC}.jsonl", codex_exec())
    write_jsonl(f"codex-exec-legacy/{TEXTKIT}.jsonl", codex_legacy())
    rid = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
    write_jsonl(f"codex-rollout/rollout-2025-10-29T00-59-38-{rid}.jsonl", codex_rollout(rid, GOLD[(CALC, "calc/ops.py")]))
    make_harbor()


if __name__ == "__main__":
    main()
