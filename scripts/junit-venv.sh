#!/usr/bin/env bash
# A virtual env holding a real JUnit XML consumer (junitparser, pure Python, no dependencies),
# which the tests give `report --format junit`'s output to (tests/it/report_junit.rs).
#
# Usage: scripts/junit-venv.sh
#
# Venv: target/junit-venv (cached: a marker written last records a finished one).
# stdout: the venv's python path. Progress goes to stderr.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${BEYONDSWE_HARBOR_PYTHON:-python3}"
PIN="junitparser==5.0.3"
VENV="$REPO_ROOT/target/junit-venv"
MARKER="$VENV/.ready"

log() { echo "junit-venv: $*" >&2; }

mkdir -p "$REPO_ROOT/target"
exec 9>"$REPO_ROOT/target/.junit-venv.lock"
flock 9

if [[ -x "$VENV/bin/python" && -f "$MARKER" && "$(cat "$MARKER")" == "$PIN" ]]; then
    log "using cached venv $VENV"
else
    log "creating $VENV with $PIN"
    rm -rf "$VENV"
    trap 'rm -rf "$VENV"' EXIT
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip --disable-pip-version-check --no-input -q install "$PIN" >&2
    "$VENV/bin/python" -c 'import junitparser' >&2
    printf '%s\n' "$PIN" >"$MARKER"
    trap - EXIT
fi
printf '%s\n' "$VENV/bin/python"
