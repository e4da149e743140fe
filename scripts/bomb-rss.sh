#!/usr/bin/env bash
# Peak memory of the grader on a Doc2Repo zip bomb: a 1 MB archive whose one extra file expands
# to SIZE_MIB (default 1000) MiB, beside the fixture's gold repository. Prints one line per binary:
#   BINARY  archive_bytes  expanded_mib  peak_rss_mib  verdict  reason  seconds
#
# Usage: scripts/bomb-rss.sh BINARY [BINARY...]   (needs the Docker engine and the fixture images)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SIZE_MIB="${SIZE_MIB:-1000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$work/bomb.zip" "$SIZE_MIB" fixtures/submissions/minidoc_gold <<'PY'
import os, sys, zipfile
out, mib, gold = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    for top, _dirs, files in os.walk(gold):
        for f in files:
            p = os.path.join(top, f)
            z.write(p, os.path.relpath(p, gold))
    with z.open("data/zeros.bin", "w", force_zip64=True) as fh:
        block = bytes(1 << 20)
        for _ in range(mib):
            fh.write(block)
PY
instance="$(python3 -c 'import json,sys
for l in open("fixtures/dataset/fixtures.jsonl"):
    r = json.loads(l)
    if r["task"] == "Doc2Repo": print(r["instance_id"]); break')"
for bin in "$@"; do
    cap=(--disk-mb $((SIZE_MIB * 3)))  # a grader from before --max-repo-mb had a fixed 1024 MiB cap
    if "$bin" grade-one --help | grep -q -- --max-repo-mb; then cap+=(--max-repo-mb $((SIZE_MIB + 100))); fi
    "$bin" grade-one --help | grep -q -- --disk-mb || cap=()
    start=$(date +%s.%N)
    /usr/bin/time -f "%M" -o "$work/rss" "$bin" grade-one --dataset fixtures/dataset/fixtures.jsonl \
        --instance "$instance" --repo "$work/bomb.zip" --test-suites fixtures/test_suites \
        "${cap[@]}" --json >"$work/v.json" 2>"$work/err" || true
    end=$(date +%s.%N)
    verdict=$(python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); print(v["verdict"], v["reason"])' "$work/v.json" 2>/dev/null || echo "no verdict: $(tail -1 "$work/err")")
    printf '%s  %s  %s  %.1f  %s  %.1f\n' "$bin" "$(stat -c %s "$work/bomb.zip")" "$SIZE_MIB" \
        "$(echo "$(cat "$work/rss") / 1024" | bc -l)" "$verdict" "$(echo "$end - $start" | bc -l)"
done
