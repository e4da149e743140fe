#!/usr/bin/env python3
"""Peak memory of every reader against the size of its input (BENCHMARKS.md: "Memory of the
readers"). For each reader, inputs of three sizes (x1, x4, x16) are made from the fixtures, the
binary reads each once under /usr/bin/time, and the table gives the peak RSS, the RSS above the
process's floor per byte of input, and how the floor-corrected RSS grows from x1 to x16 (16 means
linear, 1 flat).

    scripts/reader-memory.py [--base-mb N] [--bin target/release/beyondswe]

Inputs go to a temporary directory; nothing is kept. Standard library only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "fixtures")


def peak_kb(cmd):
    """Peak RSS in KiB of one run, from GNU time's %M."""
    proc = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=dict(os.environ, BEYONDSWE_LOG="off"))
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return int(lines[-1])


def records(n):
    """n dataset records: the fixtures' CrossRepo record with a new id each."""
    with open(os.path.join(FIX, "dataset/fixtures.jsonl"), encoding="utf-8") as fh:
        rec = json.loads(fh.readline())
    for i in range(n):
        rec["instance_id"] = "acme_calc_pr%d" % (i + 1000)
        yield json.dumps(rec)


def write_dataset(path, target):
    size = 0
    with open(path, "w", encoding="utf-8") as fh:
        for line in records(10 ** 9):
            fh.write(line + "\n")
            size += len(line) + 1
            if size >= target:
                break


def write_predictions(path, target):
    patch = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n" * 40
    size, i = 0, 0
    with open(path, "w", encoding="utf-8") as fh:
        while size < target:
            line = json.dumps({"instance_id": "acme_calc_pr%d" % i, "model_name_or_path": "m",
                               "model_patch": patch})
            fh.write(line + "\n")
            size += len(line) + 1
            i += 1


def write_trajectory(path, target):
    steps, size, i = [], 0, 1
    while size < target:
        step = {"step_id": i, "source": "agent" if i % 2 == 0 else "user",
                "message": "x" * 2000}
        if i % 2 == 0:
            step["tool_calls"] = [{"tool_call_id": "c%d" % i, "function_name": "bash",
                                   "arguments": {"command": "ls -la && cat setup.py"}}]
            step["observation"] = {"results": [{"source_call_id": "c%d" % i, "content": "y" * 2000}]}
        steps.append(step)
        size += 4200
        i += 1
    doc = {"schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1"},
           "steps": steps}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)


def write_release(path, target):
    """Release lines of an audited shape: a trajectory per line."""
    size, i = 0, 0
    with open(path, "w", encoding="utf-8") as fh:
        while size < target:
            steps = [{"step_id": 1, "source": "user", "message": "Fix it."}]
            for k in range(2, 40):
                steps.append({"step_id": k, "source": "agent", "message": "m" * 200,
                              "tool_calls": [{"tool_call_id": "c%d" % k, "function_name": "bash",
                                              "arguments": {"command": "grep -rn foo . | head"}}],
                              "observation": {"results": [{"source_call_id": "c%d" % k, "content": "o" * 400}]}})
            line = json.dumps({"task_name": "acme_calc_pr%d" % i, "trial_name": "t%d" % i, "reward": 0,
                               "trajectory": {"schema_version": "ATIF-v1.6", "session_id": "s%d" % i,
                                              "agent": {"name": "a", "version": "1"}, "steps": steps}})
            fh.write(line + "\n")
            size += len(line) + 1
            i += 1


READERS = [
    # (name, input maker, file name, command after the binary)
    ("validate (dataset JSONL)", write_dataset, "d.jsonl", lambda p, d: ["validate", p]),
    ("convert to-harbor (dataset JSONL)", write_dataset, "d.jsonl",
     lambda p, d: ["convert", "to-harbor", p, os.path.join(d, "tasks"), "--force"]),
    ("ingest (predictions JSONL)", write_predictions, "p.jsonl",
     lambda p, d: ["ingest", p, "-o", os.path.join(d, "out.jsonl")]),
    ("audit (release JSONL)", write_release, "r.jsonl", lambda p, d: ["audit", p]),
    ("trajectory validate (ATIF JSON)", write_trajectory, "t.json", lambda p, d: ["trajectory", "validate", p]),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base-mb", type=float, default=4.0)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/beyondswe"))
    args = ap.parse_args()
    floor = peak_kb([args.bin, "--version"])
    print("| reader | input x1 | peak RSS x1, x4, x16 (MiB) | (RSS - floor) / input at x16 | growth x1 -> x16 |")
    print("|---|---:|---:|---:|---:|")
    for name, make, fname, cmd in READERS:
        peaks, sizes = [], []
        for mult in (1, 4, 16):
            with tempfile.TemporaryDirectory() as d:
                p = os.path.join(d, fname)
                make(p, int(args.base_mb * mult * (1 << 20)))
                sizes.append(os.path.getsize(p))
                peaks.append(peak_kb([args.bin] + cmd(p, d)))
        above = [max(1, k - floor) for k in peaks]
        per_byte = above[2] * 1024 / sizes[2]
        print("| %s | %.1f MiB | %s | %.2f | %.1f |" % (
            name, sizes[0] / (1 << 20), ", ".join("%.0f" % (k / 1024) for k in peaks), per_byte,
            above[2] / above[0]))
    print("\nfloor (`--version`): %.1f MiB" % (floor / 1024))
    return 0


if __name__ == "__main__":
    sys.exit(main())
