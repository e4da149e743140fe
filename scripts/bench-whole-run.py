#!/usr/bin/env python3
"""A whole run's wall time against the sum of its gradings' floors, side by side with a baseline
binary in one run.

    scripts/bench-whole-run.py [--bin PATH] [--baseline-bin PATH] [--dataset FILE] [--copies N]
                               [--jobs J] [--rounds N]

N copies of each issue instance of the dataset (each copy a record of its own) are graded gold
at `--jobs J` as one run, timed whole; the floor of each instance (one fresh container, `git
apply`, plain pytest on the same ids, removed: `bench-official-evaluator.py`'s) is measured three
times and its median counted once per copy. With `--baseline-bin`, that binary's run of the same
dataset is timed in each round too, the order of the two alternating. The copies' gold checks and
prepared images are made first, untimed, by each binary (a whole run of a dataset has them
cached). Prints each run's medians, its ratio to the sum of the floors (the speed issue's goal: at
most 0.5 at `--jobs 2`), and new/baseline; progress on stderr. Needs the Docker engine and this
repository's release binary (`cargo build --release`).
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def official_bench():
    """The floor and the `python` link of `bench-official-evaluator.py` (one definition)."""
    spec = importlib.util.spec_from_file_location(
        "bench_official", os.path.join(ROOT, "scripts", "bench-official-evaluator.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def grade(binary, dataset, jobs, run_id, results):
    start = time.monotonic()
    subprocess.run([binary, "grade", "--dataset", dataset, "--gold", "--jobs", str(jobs), "--run-id", run_id,
                    "--results-dir", results, "-q"], stdout=subprocess.DEVNULL, check=True)
    took = time.monotonic() - start
    with open(os.path.join(results, run_id, "results.jsonl")) as fh:
        bad = [v["instance_id"] for v in map(json.loads, fh) if v.get("verdict") != "resolved"]
    if bad:
        raise SystemExit("%s did not resolve the gold patches of %s" % (binary, ", ".join(bad)))
    return took


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "beyondswe"))
    ap.add_argument("--baseline-bin", help="another build of beyondswe to time beside it")
    ap.add_argument("--dataset", default=os.path.join(ROOT, "fixtures", "dataset", "fixtures.jsonl"))
    ap.add_argument("--copies", type=int, default=12)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    bins = [("new", args.bin)] + ([("baseline", args.baseline_bin)] if args.baseline_bin else [])
    for _, b in bins:
        if not os.access(b, os.X_OK):
            raise SystemExit("%s: no binary (cargo build --release)" % b)
    bench = official_bench()
    with open(args.dataset) as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    records = [r for r in records if str(r.get("task", "")).lower().replace("_", "") != "doc2repo" and r.get("patch")]
    if not records:
        raise SystemExit("%s: no issue instance with a gold patch" % args.dataset)
    times = dict((name, []) for name, _ in bins)
    with tempfile.TemporaryDirectory(prefix="bsw-bench-run-") as tmp:
        records = [bench.with_python(r, tmp) for r in records]
        floors = {}
        for r in records:
            floors[r["instance_id"]] = statistics.median(bench.floor(r, tmp) for _ in range(3))
            log("%s: floor %.2f s" % (r["instance_id"], floors[r["instance_id"]]))
        dataset = os.path.join(tmp, "copies.jsonl")
        with open(dataset, "w") as fh:
            for r in records:
                for c in range(args.copies):
                    fh.write(json.dumps(dict(r, instance_id="%s__copy%d" % (r["instance_id"], c + 1))) + "\n")
        results = os.path.join(tmp, "runs")
        for name, b in bins:
            grade(b, dataset, args.jobs, "warm-" + name, results)
        for rnd in range(args.rounds):
            order = bins if rnd % 2 == 0 else bins[::-1]
            for name, b in order:
                subprocess.run(["sync"])
                t = grade(b, dataset, args.jobs, "r%d-%s" % (rnd, name), results)
                times[name].append(t)
                log("round %d %s: %.1f s" % (rnd + 1, name, t))
    total = sum(floors[r["instance_id"]] * args.copies for r in records)
    n = len(records) * args.copies
    print("## A run of %d gold gradings (%d copies of %d instances) at `--jobs %d`, %d interleaved rounds\n"
          % (n, args.copies, len(records), args.jobs, args.rounds))
    print("Sum of the floors: %.1f s.\n" % total)
    print("| binary | median run (s) | runs (s) | **run / sum of floors** |")
    print("|---|---:|---|---:|")
    for name, _ in bins:
        m = statistics.median(times[name])
        print("| %s | %.1f | %s | **%.2f×** |" % (name, m, ", ".join("%.1f" % t for t in times[name]), m / total))
    if args.baseline_bin:
        ratios = [a / b for a, b in zip(times["new"], times["baseline"])]
        print("\nnew / baseline, per round: %s; median **%.2f×**." % (
            ", ".join("%.2f" % x for x in ratios), statistics.median(ratios)))


if __name__ == "__main__":
    main()
