#!/usr/bin/env python3
"""Make a bench instance from a real Python project's git repository: an image and a record.

The fixture instances are tiny, so they cannot show what grading costs on a real project (a real
history for the future-history strip, a real `pip install -e .` among the setup commands, a real
suite). This script turns any git repository you have into an issue instance shaped as
BeyondSWE's are, for `cargo bench --bench official` (`BEYONDSWE_BENCH_DATASET=<out>/dataset.jsonl`).

    scripts/make-bench-project.py --git PATH --commit SHA --name NAME \
        [--deps "packaging simplejson"] [--build-deps flit_core] [--tests tests] [--out DIR]

- The instance is the commit SHA: base = its parent; gold patch = its changes outside the test
  directory; f2p patch = its changes under it; F2P = the tests of the files it touches that pass
  with the fix and not at the base with its tests in place (else the first test of a file it
  touches), P2P = every other test of those files that passes at both (with --all-tests: of the
  whole test directory). Ids the collection makes differently
  each time (a timestamp in a parameter) are left out.
- The image is `beyondswe-bench/NAME:1`, FROM the base image: the whole repository (every branch
  and tag of a clone, so there is future history to strip) at /workspace/NAME, checked out at the
  base, its dependencies installed from wheels downloaded on this machine, and the project
  installed editable, as an image of the benchmark would have it.
- The record's setup command is `pip install -e .` (offline spelling: no build isolation, no
  dependencies), which the official evaluator re-runs at every evaluation.

Nothing of the project is kept in this repository: the image and the record live in --out
(default target/bench-projects/NAME) and in the local engine.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, **kw):
    print("+ " + " ".join(cmd), file=sys.stderr)
    return subprocess.run(cmd, check=True, **kw)


def out(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, **kw).stdout.decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--git", required=True, help="a git repository (bare or not)")
    ap.add_argument("--commit", required=True, help="the fix commit; its parent is the base")
    ap.add_argument("--name", required=True)
    ap.add_argument("--deps", default="", help="runtime and test dependencies, from wheels")
    ap.add_argument("--build-deps", default="", help="the build backend, for pip install -e .")
    ap.add_argument("--tests", default="tests", help="the test directory")
    ap.add_argument("--all-tests", action="store_true",
                    help="P2P = every test under the test directory (default: every test of the "
                         "test files the commit touches, as SWE-bench-style datasets run them)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    outdir = os.path.abspath(args.out or os.path.join(ROOT, "target", "bench-projects", args.name))
    ctx = os.path.join(outdir, "context")
    shutil.rmtree(ctx, ignore_errors=True)
    os.makedirs(ctx)
    git = ["git", "-C", args.git]
    commit = out(git + ["rev-parse", args.commit + "^{commit}"]).strip()
    base = out(git + ["rev-parse", commit + "^"]).strip()
    t = args.tests.rstrip("/") + "/"
    gold = out(git + ["diff", "--binary", base, commit, "--", ".", ":(exclude)" + t])
    f2p = out(git + ["diff", "--binary", base, commit, "--", t])
    if not gold.strip():
        sys.exit("commit %s changes nothing outside %s" % (commit, t))
    run(["git", "clone", "-q", "--bare", "--no-local", args.git, os.path.join(ctx, "repo.git")])
    wheels = os.path.join(ctx, "wheels")
    os.makedirs(wheels)
    deps = (args.deps + " " + args.build_deps).split()
    if deps:
        run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:",
             "--python-version", "3.11", "-d", wheels] + deps)
    workdir = "/workspace/" + args.name
    image = "beyondswe-bench/%s:1" % args.name
    setup = "pip install --no-build-isolation --no-deps -q -e ."
    with open(os.path.join(ctx, "Dockerfile"), "w") as f:
        f.write(
            "FROM beyondswe/base:2\n"
            "LABEL beyondswe.bench=1\n"
            "COPY . /tmp/ctx/\n"
            "RUN git clone -q /tmp/ctx/repo.git %(w)s && cd %(w)s \\\n"
            " && for b in $(git -C /tmp/ctx/repo.git for-each-ref --format='%%(refname:short)' refs/heads); do"
            " git branch -q --track \"$b\" \"origin/$b\" 2>/dev/null || true; done \\\n"
            " && git checkout -q %(base)s \\\n"
            " && if ls /tmp/ctx/wheels/*.whl >/dev/null 2>&1; then pip install --no-cache-dir --no-index"
            " --break-system-packages -q /tmp/ctx/wheels/*.whl; fi \\\n"
            " && pip install --break-system-packages --no-build-isolation --no-deps -q -e . \\\n"
            " && rm -rf /tmp/ctx\n"
            "WORKDIR %(w)s\n" % {"w": workdir, "base": base})
    run(["docker", "build", "-q", "-t", image, ctx], stdout=subprocess.DEVNULL)
    with open(os.path.join(outdir, "gold.patch"), "w") as f:
        f.write(gold)
    with open(os.path.join(outdir, "f2p.patch"), "w") as f:
        f.write(f2p)
    # Run the tests with the fix and its tests in place, in a throwaway container of the image,
    # then collect them again a second later. Only tests that passed are kept, as a dataset
    # lists them (a skipped test is no PASS_TO_PASS), and only ids the second collection finds
    # too: one made at collection time (a timestamp in a parameter) names no test a later run
    # can find.
    pytest = "python3 -m pytest -o addopts= -p no:cacheprovider "
    collected = out(["docker", "run", "--rm", "--network", "none", "-v", outdir + ":/bench:ro", image,
                     "bash", "-c", "git apply /bench/gold.patch && (test ! -s /bench/f2p.patch || "
                     "git apply /bench/f2p.patch) && { %s -v -p no:randomly %s || true; } && echo @@@ "
                     "&& sleep 1.1 && %s --collect-only -q %s" % (pytest, t, pytest, t)])
    first, second = collected.split("@@@", 1)
    passed = re.findall(r"^(\S+::\S+) PASSED", first, re.M)
    again = set(line.strip() for line in second.splitlines() if "::" in line and not line.startswith(" "))
    ids = [i for i in passed if i in again]
    if not ids:
        sys.exit("the collection found no tests under %s:\n%s" % (t, collected[-2000:]))
    touched = set(re.findall(r"^\+\+\+ b/(\S+)", f2p, re.M))
    # FAIL_TO_PASS as a dataset defines it: passes with the fix, and not at the base with the
    # commit's tests in place (failed, errored, or not collected there).
    before = out(["docker", "run", "--rm", "--network", "none", "-v", outdir + ":/bench:ro", image,
                  "bash", "-c", "(test ! -s /bench/f2p.patch || git apply /bench/f2p.patch) && "
                  "{ %s -v -p no:randomly %s || true; }" % (pytest, t)])
    passed_before = set(re.findall(r"^(\S+::\S+) PASSED", before, re.M))
    f2p_ids = [i for i in ids if i.split("::")[0] in touched and i not in passed_before]
    if not f2p_ids:
        f2p_ids = [i for i in ids if i.split("::")[0] in touched][:1] or ids[:1]
    p2p_ids = [i for i in ids if i not in f2p_ids and i in passed_before
               and (args.all_tests or i.split("::")[0] in touched)]
    record = {
        "instance_id": "%s_%s%s" % (args.name, commit[:8], "_all" if args.all_tests else ""), "task": "CrossRepo",
        "repo": args.name, "base_commit": base, "workdir": workdir, "image": image,
        "language": "python", "problem_statement": out(git + ["log", "-1", "--format=%B", commit]),
        "patch": gold, "FAIL_TO_PASS": json.dumps(f2p_ids), "PASS_TO_PASS": json.dumps(p2p_ids),
        "f2p_patch": f2p, "f2p_script": "", "pre_commands": setup,
    }
    with open(os.path.join(outdir, "dataset.jsonl"), "w") as f:
        f.write(json.dumps(record) + "\n")
    print(os.path.join(outdir, "dataset.jsonl"))
    print("%s: %d F2P, %d P2P, image %s" % (record["instance_id"], len(f2p_ids), len(p2p_ids), image),
          file=sys.stderr)


if __name__ == "__main__":
    main()
