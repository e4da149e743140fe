#!/usr/bin/env python3
"""Per evaluation, side by side in one run: the official BeyondSWE evaluator's own code, this
grader, and the floor, on the gold patches of a dataset's issue instances.

    scripts/bench-official-evaluator.py --aweagent PATH [--dataset FILE] [--rounds N] [--bin PATH]
                                        [--copies N]

- **official**: AweAgent's `BeyondSWEEvaluator.evaluate(instance, gold patch, DockerRuntime)`,
  unmodified, from a checkout of AweAI-Team/AweAgent at PATH (nothing of it is kept here). Its
  dependencies are installed from the package index into `target/official-venv` (Python 3.11+,
  as its pyproject asks) the first time; the checkout goes on that venv's path. Its containers get
  1 CPU, as this grader's do.
- **beyondswe**: `beyondswe grade --gold` of the one instance, a new run each time (the gold check
  and the prepared image are made once, before the first timed round), timed from the command's
  start to its exit.
- **floor**: one fresh container of the instance image (1 CPU), the gold patch and the f2p patch
  applied with `git apply`, the f2p script written, plain `python -m pytest` on the same ids,
  the container removed; nothing checked.

With `--copies N`, also a whole run: N copies of each instance (each a record of its own) graded
gold at `--jobs 2`, timed whole against the sum of their floors.

Rounds are interleaved (the order of the three rotates each round) and the disk is synced,
untimed, before each timed run. Prints a Markdown table of medians (seconds) and the ratios the
speed issue names (official/beyondswe, beyondswe/floor), with the instances' medians of each
ratio; progress on stderr. Doc2Repo records are left out (they need the official test-suite
zips). Needs the Docker engine and this repository's release binary (`cargo build --release`).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "target", "official-venv")
# AweAgent's runtime dependencies (its pyproject.toml's `dependencies`).
DEPS = ["pydantic>=2.0,<3.0", "openai>=1.10.0,<2.0.0", "aiohttp>=3.9", "pyyaml>=6.0", "tenacity>=8.2,<10",
        "tiktoken>=0.7.0", "structlog>=24.0", "docker>=7.0"]

# Run inside the venv: the official evaluator on one record with its gold patch.
OFFICIAL = r'''
import asyncio, json, sys, time
sys.path.insert(0, sys.argv[1])
from awe_agent.core.runtime.config import ResourceLimits, RuntimeConfig
from awe_agent.core.runtime.docker import DockerRuntime
from awe_agent.tasks.beyond_swe.evaluator import BeyondSWEEvaluator
from awe_agent.tasks.beyond_swe.task import BeyondSWETask

raw = json.loads(sys.stdin.read())
instance = BeyondSWETask(instances=[raw])._to_instance(raw)
runtime = DockerRuntime(RuntimeConfig(image=instance.image, workdir=instance.workdir,
                                      resource_limits=ResourceLimits(cpu="1", memory="4Gi")))
start = time.monotonic()
result = asyncio.run(BeyondSWEEvaluator(timeout=1800).evaluate(instance, raw["patch"], runtime))
print(json.dumps({"seconds": time.monotonic() - start, "accepted": result.accepted,
                  "details": {k: str(v)[:300] for k, v in (result.details or {}).items()}}))
'''


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def venv_python():
    py = os.path.join(VENV, "bin", "python")
    marker = os.path.join(VENV, ".deps-ready")
    if not os.path.exists(marker):
        base = interpreter()
        log("official-venv: creating %s with %s" % (VENV, " ".join(DEPS)))
        run([base, "-m", "venv", VENV])
        run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check"] + DEPS)
        run([py, "-c", "import docker, pydantic, structlog, tenacity, yaml"])
        open(marker, "w").close()
    return py


def interpreter():
    """A Python 3.11 or later that runs (AweAgent's pyproject asks for it)."""
    for cand in [sys.executable, "python3.13", "python3.12", "python3.11", "python3"]:
        try:
            ok = subprocess.run([cand, "-c", "import sys; sys.exit(sys.version_info < (3, 11))"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        except OSError:
            ok = False
        if ok:
            return cand
    raise SystemExit("no Python 3.11 or later to run the official evaluator")


def with_python(raw, tmp):
    """The record on an image that has `python` (the official evaluator runs `python`, and real
    BeyondSWE images have it; the fixture images have only `python3`): the image itself, or one
    built FROM it with that link, the same image for all three paths."""
    image = raw["image"]
    has = subprocess.run(["docker", "run", "--rm", "--entrypoint", "sh", image, "-c", "command -v python"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    if has:
        return raw
    tag = "beyondswe-bench-official/%s:1" % "".join(c if c.isalnum() else "-" for c in raw["instance_id"].lower())
    ctx = os.path.join(tmp, "ctx-" + raw["instance_id"])
    os.makedirs(ctx, exist_ok=True)
    with open(os.path.join(ctx, "Dockerfile"), "w") as fh:
        fh.write("FROM %s\nRUN ln -s \"$(command -v python3)\" /usr/local/bin/python\n" % image)
    log("%s: %s has no `python`; building %s with the link" % (raw["instance_id"], image, tag))
    run(["docker", "build", "-q", "-t", tag, ctx], stdout=subprocess.DEVNULL)
    return dict(raw, image=tag)


def ids_of(raw, key):
    v = raw.get(key) or "[]"
    return json.loads(v) if isinstance(v, str) else list(v)


def official(py, aweagent, raw):
    out = run([py, "-c", OFFICIAL, aweagent], input=json.dumps(raw).encode(), stdout=subprocess.PIPE,
              stderr=subprocess.DEVNULL).stdout.decode()
    res = json.loads(out.strip().splitlines()[-1])
    if not res["accepted"]:
        raise SystemExit("the official evaluator did not accept the gold patch of %s: %s"
                         % (raw["instance_id"], res["details"]))
    return res["seconds"]


def ours(binary, raw, tmp, n):
    dataset = os.path.join(tmp, "one.jsonl")
    with open(dataset, "w") as fh:
        fh.write(json.dumps(raw) + "\n")
    start = time.monotonic()
    run([binary, "grade", "--dataset", dataset, "--gold", "--jobs", "1", "--run-id", "r%d" % n,
         "--results-dir", os.path.join(tmp, "runs"), "-q"], stdout=subprocess.DEVNULL)
    took = time.monotonic() - start
    with open(os.path.join(tmp, "runs", "r%d" % n, "results.jsonl")) as fh:
        verdict = json.loads(fh.readline())
    if verdict.get("verdict") != "resolved":
        raise SystemExit("beyondswe did not resolve the gold patch of %s: %s" % (raw["instance_id"], verdict))
    return took


def floor(raw, tmp):
    ids = ids_of(raw, "FAIL_TO_PASS") + ids_of(raw, "PASS_TO_PASS")
    wd = raw.get("workdir") or "/workspace"
    for name, text in (("gold.diff", raw["patch"]), ("f2p.diff", raw.get("f2p_patch") or ""),
                       ("test_fail_to_pass.py", raw.get("f2p_script") or "")):
        with open(os.path.join(tmp, name), "w") as fh:
            fh.write(text)
    start = time.monotonic()
    cid = run(["docker", "run", "-d", "--cpus", "1", "-w", wd, raw["image"], "sleep", "infinity"],
              stdout=subprocess.PIPE).stdout.decode().strip()
    try:
        for name in ("gold.diff", "f2p.diff", "test_fail_to_pass.py"):
            run(["docker", "cp", "-q", os.path.join(tmp, name), "%s:/tmp/%s" % (cid, name)], stdout=subprocess.DEVNULL)
        script = "set -e; git checkout -q %s; git apply /tmp/gold.diff; " % raw["base_commit"]
        if raw.get("f2p_patch"):
            script += "git apply /tmp/f2p.diff; "
        if raw.get("f2p_script"):
            script += "cp /tmp/test_fail_to_pass.py ./test_fail_to_pass.py; "
        script += "python -m pytest -q -p no:cacheprovider " + " ".join("'%s'" % i.replace("'", "'\\''") for i in ids)
        res = subprocess.run(["docker", "exec", cid, "sh", "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
    finally:
        subprocess.run(["docker", "rm", "-f", cid], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    took = time.monotonic() - start
    if res.returncode != 0:
        raise SystemExit("the floor's pytest failed on the gold patch of %s:\n%s"
                         % (raw["instance_id"], res.stdout.decode()[-2000:]))
    return took


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aweagent", required=True, help="a checkout of AweAI-Team/AweAgent")
    ap.add_argument("--dataset", default=os.path.join(ROOT, "fixtures", "dataset", "fixtures.jsonl"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "beyondswe"))
    ap.add_argument("--copies", type=int, default=0,
                    help="also time a whole run of this many copies of each instance at --jobs 2 (the issue: 8)")
    args = ap.parse_args()
    if not os.path.isfile(os.path.join(args.aweagent, "awe_agent", "tasks", "beyond_swe", "evaluator.py")):
        raise SystemExit("%s: no awe_agent/tasks/beyond_swe/evaluator.py (a checkout of AweAgent?)" % args.aweagent)
    if not os.access(args.bin, os.X_OK):
        raise SystemExit("%s: no binary (cargo build --release)" % args.bin)
    with open(args.dataset) as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    records = [r for r in records if str(r.get("task", "")).lower().replace("_", "") != "doc2repo" and r.get("patch")]
    py = venv_python()
    times = dict((r["instance_id"], {"official": [], "beyondswe": [], "floor": []}) for r in records)
    n = 0
    with tempfile.TemporaryDirectory(prefix="bsw-bench-official-") as tmp:
        records = [with_python(r, tmp) for r in records]
        for r in records:  # warm: the gold check and the prepared image, and each path once
            log("%s: warming up" % r["instance_id"])
            ours(args.bin, r, tmp, n)
            n += 1
            official(py, args.aweagent, r)
            floor(r, tmp)
        kinds = ["official", "beyondswe", "floor"]
        for rnd in range(args.rounds):
            for r in records:
                order = kinds[rnd % 3:] + kinds[:rnd % 3]
                for kind in order:
                    run(["sync"])
                    if kind == "official":
                        t = official(py, args.aweagent, r)
                    elif kind == "beyondswe":
                        t = ours(args.bin, r, tmp, n)
                        n += 1
                    else:
                        t = floor(r, tmp)
                    times[r["instance_id"]][kind].append(t)
                    log("round %d %s %s: %.2f s" % (rnd + 1, r["instance_id"], kind, t))
    print("## Per evaluation: the official evaluator, beyondswe and the floor (%d interleaved rounds, "
          "medians in seconds)\n" % args.rounds)
    print("| instance | official | beyondswe | floor | **official / beyondswe** | **beyondswe / floor** |")
    print("|---|---:|---:|---:|---:|---:|")
    ratios_a, ratios_b = [], []
    for r in records:
        t = times[r["instance_id"]]
        o, b, f = (statistics.median(t[k]) for k in ("official", "beyondswe", "floor"))
        ratios_a.append(o / b)
        ratios_b.append(b / f)
        print("| %s | %.2f | %.2f | %.2f | **%.2f×** | **%.2f×** |" % (r["instance_id"], o, b, f, o / b, b / f))
    print("\nMedian over the instances: official/beyondswe **%.2f×** (goal: at least 6), beyondswe/floor "
          "**%.2f×** (goal: at most 1.15)." % (statistics.median(ratios_a), statistics.median(ratios_b)))
    if args.copies:
        whole_run(args, records, times)


def whole_run(args, records, times):
    """A run of `copies` gradings of each instance (each copy a record of its own) at --jobs 2,
    timed whole, against the sum of their floors (each instance's median floor per copy)."""
    with tempfile.TemporaryDirectory(prefix="bsw-bench-run-") as tmp:
        dataset = os.path.join(tmp, "copies.jsonl")
        with open(dataset, "w") as fh:
            for r in records:
                for c in range(args.copies):
                    fh.write(json.dumps(dict(r, instance_id="%s__copy%d" % (r["instance_id"], c + 1))) + "\n")
        # The copies' gold checks are made first, untimed: a whole run of a dataset has them cached.
        run([args.bin, "grade", "--dataset", dataset, "--gold", "--jobs", "2", "--run-id", "warm",
             "--results-dir", os.path.join(tmp, "runs"), "-q"], stdout=subprocess.DEVNULL)
        run(["sync"])
        start = time.monotonic()
        run([args.bin, "grade", "--dataset", dataset, "--gold", "--jobs", "2", "--run-id", "timed",
             "--results-dir", os.path.join(tmp, "runs"), "-q"], stdout=subprocess.DEVNULL)
        took = time.monotonic() - start
    floors = sum(statistics.median(times[r["instance_id"]]["floor"]) * args.copies for r in records)
    n = len(records) * args.copies
    print("\nA run of %d gold gradings (%d copies of each instance) at `--jobs 2`: **%.1f s**, against the sum "
          "of their floors %.1f s: **%.2f×** (goal: at most 0.5)." % (n, args.copies, took, floors, took / floors))


if __name__ == "__main__":
    main()
