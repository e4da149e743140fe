#!/usr/bin/env bash
# Every bench in benches/, once, at its smallest size, on the test build: a check that each one
# still runs, not a measurement (the figures of BENCHMARKS.md come from `cargo bench`, in release,
# at full size). A bench fails this only when it cannot run (a panic, a missing tool, an engine
# error); a goal it reports as not met does not. Needs what the benches need: the Docker engine,
# the fixture images (built if missing), the headless browser. Each bench's output goes to
# target/bench-short/NAME.log; its time is printed on stderr.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

case "${1:-}" in
    -h|--help)
        sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
esac

out=target/bench-short
mkdir -p "$out"
# name and the arguments that make it small: records, MiB, rows, rounds, runs and jobs, submissions.
benches=(
    "convert 10"
    "audit 1"
    "report_html 20"
    "grade 1"
    "canaries 1"
    "official 1"
    "calibrate 1 2"
    "run 2"
)
cargo test --quiet --no-run --benches 2>&1 | tail -n 3 >&2
failed=0
for entry in "${benches[@]}"; do
    read -r name args <<<"$entry"
    t=$SECONDS
    # shellcheck disable=SC2086 # the arguments are words on purpose
    if cargo test --quiet --bench "$name" -- $args >"$out/$name.log" 2>&1; then
        printf '[bench-short] %-12s %4ds ok\n' "$name" $((SECONDS - t)) >&2
    else
        printf '[bench-short] %-12s %4ds FAILED (the end of %s/%s.log):\n' "$name" $((SECONDS - t)) "$out" "$name" >&2
        tail -n 30 "$out/$name.log" >&2
        failed=1
    fi
done
exit "$failed"
