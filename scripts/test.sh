#!/usr/bin/env bash
# The whole test suite, as CI runs it (README: "Run the tests").
#
# Builds what the tests need on a machine with a Docker engine and no registry: the offline base
# image and the fixture images (cached by tag), a headless Chromium and a registry server for the
# pull tests (installed from the Debian packages when missing), the Harbor client image with the
# real Harbor CLI at 0.26.0 and 0.1.45 (cached by tag), Harbor's task-loader environments and a JUnit consumer (cached under target/).
# Then checks the generated schemas, runs every test and runs every bench once, small.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage() {
    cat <<'EOF'
Usage: scripts/test.sh [--fast] [-- CARGO_TEST_ARGS...]

  (no option)  the whole suite, as CI runs it: builds the images, the registry, the browser and
               the Harbor clients it needs, then every test (--include-ignored), then every
               bench once at its smallest size (scripts/bench-short.sh; not with a filter).
  --fast       a developer's loop: no engine, no browser, no Harbor (the tests that need them
               are the #[ignore]d ones, left out by name, never skipped in silence); checks the
               schemas and runs every other test. A few minutes at most on a warm build.
  -h, --help   this text.

Arguments after `--` go to the test binaries (a test name filter, `--nocapture`).
EOF
}

fast=0
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --fast) fast=1 ;;
        -h|--help) usage; exit 0 ;;
        --) shift; extra=("$@"); break ;;
        *) printf 'scripts/test.sh: unknown option %s\n\n' "$1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

# Each stage line says how long the run has taken so far.
log() { printf '[test] %4ds %s\n' "$SECONDS" "$*" >&2; }

if [ "$fast" = 1 ]; then
    log "schemas"
    cargo run --quiet -- schemas check schemas
    log "tests (fast: nothing that needs the engine, a browser or Harbor)"
    cargo test -- "${extra[@]}"
    log "done"
    exit 0
fi

log "images (offline base + fixtures)"
bash scripts/build-fixture-images.sh >/dev/null
log "registry server for the pull tests (docker-registry from the Debian packages)"
bash scripts/registry.sh >/dev/null
log "headless browser for the HTML report tests (Chromium from the Debian packages)"
bash scripts/browser.sh >/dev/null
log "Harbor client image (harbor 0.26.0 and 0.1.45, Compose v2)"
bash scripts/build-harbor-client-image.sh >/dev/null
log "Harbor task loaders (0.1.45 and latest)"
bash scripts/harbor-venv.sh 0.1.45 >/dev/null
bash scripts/harbor-venv.sh latest >/dev/null
log "JUnit consumer (junitparser)"
bash scripts/junit-venv.sh >/dev/null
log "schemas"
cargo run --quiet -- schemas check schemas
log "tests"
# Every line of the tests' output carries the run's seconds when it came out, so a slow test
# shows in the log (libtest prints no durations): `[ 812s] test x ... ok`.
stamp() {
    local lane=$1 line
    while IFS= read -r line; do
        printf '[%4ds]%s %s\n' "$SECONDS" "$lane" "$line"
    done
}
# The Harbor tests are about half of the suite's time and mostly wait on Harbor's own jobs
# (image builds, compose, one job at a time), while libtest hands tests out in name order: in
# one process both threads sat in the Harbor modules for half an hour at a load of about 1.
# So without a filter they run in a second test process beside the rest, after one build.
HARBOR=(harbor_run:: harbor_docker:: harbor_loader::)
set +e
if [ ${#extra[@]} -eq 0 ]; then
    cargo test --no-run --quiet
    skips=()
    for m in "${HARBOR[@]}"; do skips+=(--skip "$m"); done
    (
        cargo test --test it -- --include-ignored "${HARBOR[@]}" 2>&1 | stamp " [harbor]"
        exit "${PIPESTATUS[0]}"
    ) &
    harbor=$!
    cargo test -- --include-ignored "${skips[@]}" 2>&1 | stamp ""
    status=${PIPESTATUS[0]}
    # The benches run while the Harbor tests go on: they need a run of each only, not a quiet
    # machine (their figures are recorded from runs of their own, BENCHMARKS.md).
    bench_status=0
    if [ "$status" -eq 0 ]; then
        log "benches (short: each once at its smallest size; fails only when one cannot run), beside the Harbor tests"
        bash scripts/bench-short.sh || bench_status=$?
    fi
    log "waiting for the Harbor tests"
    wait "$harbor"
    harbor_status=$?
    [ "$harbor_status" -eq 0 ] || log "Harbor tests failed (exit $harbor_status)"
    [ "$status" -ne 0 ] || status=$harbor_status
    [ "$status" -ne 0 ] || status=$bench_status
else
    cargo test -- --include-ignored "${extra[@]}" 2>&1 | stamp ""
    status=${PIPESTATUS[0]}
fi
set -e
[ "$status" -eq 0 ] || { log "tests or benches failed (exit $status)"; exit "$status"; }
log "done"
