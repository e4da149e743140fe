#!/usr/bin/env python3
"""A Harbor job of N trials for the ingest and audit benches: the fixture job's first trial
(fixtures/agents/harbor-job) copied N times under new trial names and start times, each with a
Claude Code log (agent/claude-code.txt, the fixture session acme_textkit_pr12.jsonl), so that a
reader of the job reads N raw logs:

    scripts/make-big-harbor-job.py 300 target/bench-big-job
    beyondswe ingest target/bench-big-job -q -o /dev/null
"""

import argparse
import json
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOB = os.path.join(ROOT, "fixtures/agents/harbor-job/2026-03-25__10-00-00")
TRIAL = "acme_calc_pr7__Xq3mN7v"
LOG = os.path.join(ROOT, "fixtures/agents/claude-code/acme_textkit_pr12.jsonl")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trials", type=int)
    ap.add_argument("out")
    args = ap.parse_args(argv)
    dst = os.path.join(args.out, os.path.basename(JOB))
    if os.path.exists(args.out):
        sys.exit("%s exists; remove it first" % args.out)
    os.makedirs(dst)
    for name in ("result.json", "config.json"):
        shutil.copy(os.path.join(JOB, name), dst)
    with open(LOG) as fh:
        log = fh.read()
    for i in range(args.trials):
        name = "%s__T%05d" % (TRIAL.split("__")[0], i)
        trial = os.path.join(dst, name)
        shutil.copytree(os.path.join(JOB, TRIAL), trial)
        with open(os.path.join(trial, "result.json")) as fh:
            result = json.load(fh)
        result["trial_name"] = name
        result["started_at"] = "2026-03-25T10:%02d:%02d" % (i // 60 % 60, i % 60)
        with open(os.path.join(trial, "result.json"), "w") as fh:
            json.dump(result, fh)
        with open(os.path.join(trial, "agent", "claude-code.txt"), "w") as fh:
            fh.write(log)
    print("%s: %d trials" % (dst, args.trials))


if __name__ == "__main__":
    main(sys.argv[1:])
