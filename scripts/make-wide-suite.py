#!/usr/bin/env python3
"""A Doc2Repo hidden suite of N tests for the minidoc fixture, and a dataset holding its record.

The benches' fixture suites are a dozen tests; what the canary groups cost on a suite of
hundreds (where a suite of more than 240 that can carry a group draws one in forty of them)
needs one. Each test compares one of minidoc's functions on an input drawn from a fixed word
list (seeded, so the suite is the same on every machine) with the value the reference tree
(fixtures/submissions/minidoc_gold) gives, so that the reference passes every test:

    scripts/make-wide-suite.py 400 target/bench-wide
    BEYONDSWE_BENCH_DATASET=target/bench-wide/dataset.jsonl \\
        BEYONDSWE_BENCH_SUITES=target/bench-wide cargo bench --bench canaries -- 5

writes target/bench-wide/minidoc_wide_400.zip and target/bench-wide/dataset.jsonl (minidoc's
record, naming that suite and its N tests).
"""

import argparse
import json
import os
import random
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ["parse", "header", "value", "split", "table", "render", "quote", "escape", "number", "list",
         "nested", "empty", "title", "link", "image", "code", "block", "inline", "strip", "count",
         "Rust", "Python", "Hello,", "World!", "  ", "v2.0", "C++", "Ünïcode", "tabs\t", "dots..."]


def module(n, rng, gold):
    """The test module: n tests, each one assertion on the reference tree's value."""
    out = ['"""A wide hidden suite for minidoc, made by scripts/make-wide-suite.py."""\n',
           "from minidoc import headings, slugify, toc, word_count\n"]
    for i in range(n):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))
        kind = i % 4
        if kind == 0:
            arg, fn = words, "slugify"
        elif kind == 1:
            arg, fn = "# %s\n\n%s\n" % (words, words), "word_count"
        elif kind == 2:
            arg, fn = "# %s\n## %s\n" % (words, words.upper()), "headings"
        else:
            arg, fn = "# %s\n### %s\n" % (words, words[::-1]), "toc"
        want = getattr(gold, fn)(arg)
        out.append("\n\ndef test_%s_%s_%d():\n    assert %s(%r) == %r\n" % (fn, WORDS[i % 20], i, fn, arg, want))
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int, help="how many tests")
    ap.add_argument("out", help="the folder to write the suite and the dataset into")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "fixtures", "submissions", "minidoc_gold"))
    import minidoc  # noqa: E402 - the reference tree, for the expected values
    os.makedirs(args.out, exist_ok=True)
    name = "minidoc_wide_%d.zip" % args.n
    with zipfile.ZipFile(os.path.join(args.out, name), "w") as z:
        z.writestr("tests/test_wide_%d.py" % args.n, module(args.n, random.Random(7), minidoc))
    with open(os.path.join(ROOT, "fixtures", "dataset", "fixtures.jsonl"), encoding="utf-8") as fh:
        record = next(json.loads(line) for line in fh if json.loads(line).get("task") == "Doc2Repo")
    record["test_suite"], record["test_suite_num"] = name, args.n
    with open(os.path.join(args.out, "dataset.jsonl"), "w", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    print(os.path.join(args.out, name))


if __name__ == "__main__":
    main()
