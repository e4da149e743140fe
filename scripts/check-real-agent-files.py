#!/usr/bin/env python3
"""Checks `beyondswe ingest` and `audit` against real agent outputs (fixtures/agents/real-files.json).

The files are other people's and are not committed here. Fetch each at the commit the manifest
names, lay them out under DIR as its `local` field says, and run:

    scripts/check-real-agent-files.py DIR [--bin target/debug/beyondswe]

Each present file is ingested and audited; the counts of tool calls, commands and file edits,
the shape, the class and the model name are compared with the manifest. Missing files are named
and skipped. Exit 1 on any difference (or when no file is present).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INSTANCE = "demo__demo-1"
COUNTS = re.compile(r"(\d+) tool calls, (\d+) commands, (\d+) file edits")


def run(args):
    return subprocess.run(args, capture_output=True, text=True, check=False)


def check_unsupported(binary, path, agent):
    """An unsupported agent's file: ingest refuses it and the audit reads nothing, both saying
    `unsupported` and naming the agent."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        ing = run([binary, "ingest", path, "-o", os.path.join(tmp, "p.jsonl")])
    aud = run([binary, "audit", path, "--json", "--instance", INSTANCE])
    for what, r in (("ingest", ing), ("audit", aud)):
        if "unsupported" not in r.stderr or agent.lower() not in r.stderr.lower():
            problems.append(f"{what} does not name it unsupported: {r.stderr.strip()[:300]}")
    if ing.returncode == 0:
        problems.append("ingest succeeded")
    if aud.stdout.strip():
        problems.append("the audit printed a trajectory")
    return problems


def check(binary, path, expect):
    """The differences between what beyondswe reports for `path` and `expect`."""
    if "unsupported" in expect:
        return check_unsupported(binary, path, expect["unsupported"])
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "p.jsonl")
        one = "tool_calls" in expect
        args = [binary, "ingest", path, "-o", out] + (["--instance", INSTANCE] if one else [])
        ing = run(args)
        if "tool_calls" in expect:
            # The counts are in ingest's account of a submission without a patch (stderr), and
            # in the written submission's `note` when it has one.
            notes = ""
            if os.path.exists(out):
                with open(out, encoding="utf-8") as fh:
                    notes = "\n".join(str(json.loads(l).get("note") or "") for l in fh if l.strip())
            m = COUNTS.search(ing.stderr) or COUNTS.search(notes)
            got = tuple(int(x) for x in m.groups()) if m else None
            want = (expect["tool_calls"], expect["commands"], expect["file_edits"])
            if got != want:
                problems.append(f"counts {got} (tool calls, commands, edits), expected {want}")
        if "model" in expect:
            models = set()
            if os.path.exists(out):
                with open(out, encoding="utf-8") as fh:
                    models = {json.loads(l)["model_name_or_path"] for l in fh if l.strip()}
            if models != {expect["model"]}:
                problems.append(f"model {sorted(models)}, expected {expect['model']!r}")
    aud = run([binary, "audit", path, "--json", "--instance", INSTANCE])
    lines = [json.loads(l) for l in aud.stdout.splitlines() if l.strip()]
    want_n = expect.get("trajectories", 1)
    if len(lines) != want_n:
        problems.append(f"{len(lines)} trajectories audited, expected {want_n}: {aud.stderr.strip()[:300]}")
    for v in lines:
        if v["shape"] != expect["shape"]:
            problems.append(f"shape {v['shape']}, expected {expect['shape']}")
        if v["class"] != expect["class"]:
            problems.append(f"class {v['class']}, expected {expect['class']} (unread: {v.get('unread')})")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="where the real files are laid out")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/debug/beyondswe"))
    a = ap.parse_args()
    with open(os.path.join(ROOT, "fixtures/agents/real-files.json"), encoding="utf-8") as fh:
        manifest = json.load(fh)
    checked, failed = 0, 0
    for f in manifest["files"]:
        path = os.path.join(a.dir, f["local"])
        origin = f"{f['repo']}:{f['path']}@{f['commit'][:10]}"
        if not os.path.exists(path):
            print(f"missing  {f['local']} ({origin})")
            continue
        checked += 1
        problems = check(a.bin, path, f["expect"])
        failed += bool(problems)
        print(f"{'FAIL' if problems else 'ok  '}     {f['local']} ({f['kind']})")
        for p in problems:
            print(f"           {p}")
    print(f"{checked} file(s) checked, {failed} with differences")
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
