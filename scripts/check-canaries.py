#!/usr/bin/env python3
"""Plants canaries (adapters/beyondswe_verifier/canaries.py) in real unittest modules and runs them, to check on
code nobody wrote for this project that a clone behaves like its template: wherever the template
passes alone, its twin must pass alone and its poison must fail alone.

    python3 scripts/check-canaries.py [--limit N] [--seed S] [DIR]

DIR defaults to this interpreter's own test package (Lib/test), whose modules import their
helpers by absolute names, so a planted copy runs from a scratch directory. Each test runs in a
fresh interpreter (`python -m unittest MODULE.CLASS.TEST`, 60 s at most). Prints the tally and
every case that broke the rule; exits 1 if any did. Standard library only.
"""
import argparse
import collections
import glob
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "adapters"))
from beyondswe_verifier import canaries as cm  # noqa: E402


def run(scratch, module, path, name):
    """passed, failed, skipped or timeout: one test alone in a fresh interpreter."""
    target = ".".join([module] + list(path) + [name])
    try:
        proc = subprocess.run([sys.executable, "-m", "unittest", target], cwd=scratch,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    except subprocess.TimeoutExpired:
        return "timeout"
    last = (proc.stdout.decode("utf-8", "replace").strip().splitlines() or [""])[-1]
    if proc.returncode != 0:
        return "failed"
    return "skipped" if "skipped" in last else "passed"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", nargs="?", default=os.path.join(os.path.dirname(os.__file__), "test"))
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    files = sorted(glob.glob(os.path.join(args.dir, "test_*.py")))
    random.Random(args.seed).shuffle(files)
    tally, broken = collections.Counter(), []
    with tempfile.TemporaryDirectory() as scratch:
        for path in files[:args.limit]:
            with open(path, "rb") as fh:
                planned = cm.plan(fh.read(), random.Random(args.seed))
            if planned is None:
                tally["no template"] += 1
                continue
            data, rec = planned
            module = "planted_" + os.path.basename(path)[:-3]
            with open(os.path.join(scratch, module + ".py"), "wb") as fh:
                fh.write(data)
            template = run(scratch, module, rec["path"], rec["template"])
            if template != "passed":
                tally["template " + template + " alone (not judged)"] += 1
                continue
            twin = run(scratch, module, rec["path"], rec["twin"])
            poison = run(scratch, module, rec["path"], rec["poison"])
            tally["template passed: twin %s, poison %s" % (twin, poison)] += 1
            if twin != "passed" or poison != "failed":
                broken.append((path, rec, twin, poison))
    for key, n in sorted(tally.items()):
        print("%5d  %s" % (n, key))
    for path, rec, twin, poison in broken:
        print("BROKEN %s %s: twin %s, poison %s" % (path, rec, twin, poison))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
