#!/usr/bin/env python3
"""Writes the calibration fixtures: fixtures/dataset/calibration.jsonl and
fixtures/test_suites/minidoc_calibration_suite.zip.

New rows on the existing fixture repositories (no new image): each is acme_calc_pr7 or the
minidoc Doc2Repo instance with one thing changed so that `beyondswe calibrate` has something to
find.

- acme_calc_pr7: unchanged (ok).
- acme_calc_pr7broken: the f2p patch adds a test the gold patch does not satisfy (a decimal
  comma), listed in FAIL_TO_PASS: the gold patch never resolves it (broken).
- acme_calc_pr7flaky: the f2p patch adds a test that passes about half the time, whatever the
  code: on a random draw, the engine's random name for each new container (flaky).
- acme_calc_pr7trivial: FAIL_TO_PASS names a test that already passes at the base (trivial:
  the empty patch resolves it).
- minidoccal_…: the minidoc suite plus one test the reference solution fails (broken, and the
  failing suite test named).

Run from the repository root: python3 scripts/make-calibration-fixtures.py
"""

import json
import os
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATASET = os.path.join(ROOT, "fixtures", "dataset")
SUITES = os.path.join(ROOT, "fixtures", "test_suites")


def new_file_diff(path, text):
    lines = text.splitlines(True)
    body = "".join("+" + line for line in lines)
    return ("diff --git a/{p} b/{p}\nnew file mode 100644\n--- /dev/null\n+++ b/{p}\n"
            "@@ -0,0 +1,{n} @@\n{body}").format(p=path, n=len(lines), body=body)


BROKEN_TEST = '''"""Added by the calibration fixtures: asks for what the issue never did."""

from calc import add


def test_add_decimal_comma():
    assert add("1,5", "1") == 2.5
'''

FLAKY_TEST = '''"""Added by the calibration fixtures: flaky on purpose."""

import socket


def test_lucky_draw():
    # Passes on about half the runs, whatever the code under test does: the engine names each
    # new container at random, and the test passes when the last hex digit of its name is even.
    assert int(socket.gethostname()[-1], 16) % 2 == 0
'''

SUITE_EXTRA = '''"""Added by the calibration fixtures: a suite test the reference solution fails."""

from minidoc import slugify


def test_slugify_keeps_unicode_letters():
    assert slugify("Caf\\u00e9 cr\\u00e8me") == "caf\\u00e9-cr\\u00e8me"
'''


def main():
    records = {}
    with open(os.path.join(DATASET, "fixtures.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            records[r["instance_id"]] = r
    calc = records["acme_calc_pr7"]
    f2p = json.loads(calc["FAIL_TO_PASS"]) if isinstance(calc["FAIL_TO_PASS"], str) else calc["FAIL_TO_PASS"]
    p2p = json.loads(calc["PASS_TO_PASS"]) if isinstance(calc["PASS_TO_PASS"], str) else calc["PASS_TO_PASS"]
    out = [calc]

    broken = dict(calc)
    broken["instance_id"] = "acme_calc_pr7broken"
    broken["f2p_patch"] = calc["f2p_patch"] + new_file_diff("tests/test_locale.py", BROKEN_TEST)
    broken["FAIL_TO_PASS"] = f2p + ["tests/test_locale.py::test_add_decimal_comma"]
    broken["PASS_TO_PASS"] = p2p
    out.append(broken)

    flaky = dict(calc)
    flaky["instance_id"] = "acme_calc_pr7flaky"
    flaky["f2p_patch"] = calc["f2p_patch"] + new_file_diff("tests/test_draw.py", FLAKY_TEST)
    flaky["FAIL_TO_PASS"] = f2p + ["tests/test_draw.py::test_lucky_draw"]
    flaky["PASS_TO_PASS"] = p2p
    out.append(flaky)

    trivial = dict(calc)
    trivial["instance_id"] = "acme_calc_pr7trivial"
    trivial["FAIL_TO_PASS"] = ["tests/test_calc.py::test_add_ints"]
    trivial["PASS_TO_PASS"] = ["tests/test_calc.py::test_sub"]
    out.append(trivial)

    doc = next(r for r in records.values() if r["instance_id"].startswith("minidoc_"))
    cal = dict(doc)
    cal["instance_id"] = doc["instance_id"].replace("minidoc_", "minidoccal_", 1)
    cal["test_suite"] = "minidoc_calibration_suite.zip"
    cal["test_suite_num"] = (doc.get("test_suite_num") or 10) + 1
    out.append(cal)

    with open(os.path.join(DATASET, "calibration.jsonl"), "w", encoding="utf-8") as fh:
        for r in out:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")

    src = os.path.join(SUITES, doc["test_suite"])
    dest = os.path.join(SUITES, cal["test_suite"])
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info, zin.read(info))
        extra = zipfile.ZipInfo("tests/test_minidoc_calibration.py", date_time=(1980, 1, 1, 0, 0, 0))
        extra.external_attr = 0o644 << 16
        extra.compress_type = zipfile.ZIP_DEFLATED
        zout.writestr(extra, SUITE_EXTRA)
    print("wrote %d records and %s" % (len(out), os.path.relpath(dest, ROOT)))


if __name__ == "__main__":
    main()
