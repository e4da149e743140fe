#!/usr/bin/env bash
# Wall time of `harbor run -a oracle` over the fixture tasks against `beyondswe grade --gold` over
# the same dataset, in one run on one machine (BENCHMARKS.md "Harbor against the offline grader").
#
# Usage: scripts/bench-harbor.sh [ROUNDS]     (default 2; the first round of each builds images)
#
# Needs the Docker engine, the fixture images and the Harbor client image
# (scripts/build-fixture-images.sh, scripts/build-harbor-client-image.sh). Both sides run two at a
# time (-n 2 / --jobs 2). Prints one line per timed run on stderr and a Markdown table on stdout.
set -euo pipefail
ROUNDS=${1:-2}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
cargo build --release --quiet
BIN="$REPO/target/release/beyondswe"
bash scripts/build-fixture-images.sh >/dev/null
bash scripts/build-harbor-client-image.sh >/dev/null
mkdir -p target
WORK=$(mktemp -d "$REPO/target/bench-harbor.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
DATA="$REPO/fixtures/dataset/fixtures.jsonl"
SUITES="$REPO/fixtures/test_suites"
mkdir -p solutions
cp -r "$REPO/fixtures/submissions/minidoc_gold" solutions/minidoc_ac79166631ba81556e3f40c05aa8d00fe9178ca6
"$BIN" convert to-harbor "$DATA" tasks --test-suites "$SUITES" --solutions solutions >/dev/null
N=$(ls tasks | wc -l)

now() { echo "$EPOCHREALTIME"; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
# Trials of a job whose reward is 1.0, over all its trials.
solved() { python3 - "$1" <<'PY'
import json, pathlib, sys
rs = [json.loads(p.read_text()) for p in pathlib.Path(sys.argv[1]).glob("*/result.json")]
ok = sum(1 for r in rs if ((r.get("verifier_result") or {}).get("rewards") or {}).get("reward") == 1.0)
print(f"{ok}/{len(rs)} reward 1.0")
PY
}
declare -A T
for r in $(seq 1 "$ROUNDS"); do
    for v in 0.26.0 0.1.45; do
        yes=(); [[ $v == 0.1.45 ]] || yes=(-y)
        t0=$(now)
        bash "$REPO/scripts/harbor-run.sh" "$v" run -p tasks -a oracle -n 2 -o jobs \
            --job-name "oracle-$v-$r" "${yes[@]}" >/dev/null 2>&1
        t=$(since "$t0")
        T[$v,$r]=$t
        printf 'round %d harbor %-7s oracle: %6.1f s (%s)\n' "$r" "$v" "$t" "$(solved "jobs/oracle-$v-$r")" >&2
    done
    t0=$(now)
    "$BIN" grade --dataset "$DATA" --gold --test-suites "$SUITES" --jobs 2 --quiet \
        --run-id "gold-$r" --results-dir runs >/dev/null 2>&1
    t=$(since "$t0")
    T[grade,$r]=$t
    printf 'round %d beyondswe grade --gold: %6.1f s\n' "$r" "$t" >&2
done
echo "| round | tasks | harbor 0.26.0 s | harbor 0.1.45 s | grade --gold s | 0.26.0 / grade | 0.1.45 / grade |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for r in $(seq 1 "$ROUNDS"); do
    python3 - "$r" "$N" "${T[0.26.0,$r]}" "${T[0.1.45,$r]}" "${T[grade,$r]}" <<'PY'
import sys
r, n, a, b, g = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
print(f"| {r} | {n} | {a:.1f} | {b:.1f} | {g:.1f} | {a / g:.1f}× | {b / g:.1f}× |")
PY
done
