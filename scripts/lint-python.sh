#!/usr/bin/env bash
# Lint and type-check the verifier (adapters/): ruff with adapters/ruff.toml, and mypy over its
# modules and their unit tests. Both come from PyPI, pinned, into a cached venv.
#
# Usage: scripts/lint-python.sh
#
# Venv: target/lint-venv (cached: a marker written last records a finished one).
# Exit status: non-zero on any finding. Progress goes to stderr.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${BEYONDSWE_HARBOR_PYTHON:-python3}"
PINS="ruff==0.17.6 mypy==2.4.1"
VENV="$REPO_ROOT/target/lint-venv"
MARKER="$VENV/.ready"

log() { echo "lint-python: $*" >&2; }

mkdir -p "$REPO_ROOT/target"
exec 9>"$REPO_ROOT/target/.lint-venv.lock"
flock 9

if [[ -x "$VENV/bin/python" && -f "$MARKER" && "$(cat "$MARKER")" == "$PINS" ]]; then
    log "using cached venv $VENV"
else
    log "creating $VENV with $PINS"
    rm -rf "$VENV"
    trap 'rm -rf "$VENV"' EXIT
    "$PYTHON" -m venv "$VENV"
    # shellcheck disable=SC2086 # the pins are words
    "$VENV/bin/python" -m pip --disable-pip-version-check --no-input -q install $PINS >&2
    printf '%s\n' "$PINS" >"$MARKER"
    trap - EXIT
fi

cd "$REPO_ROOT/adapters"
log "ruff"
"$VENV/bin/ruff" check --no-cache .
log "mypy"
# The modules import each other by their names in adapters/ (their installed names differ), so
# mypy reads them from here, with the unit tests beside them.
"$VENV/bin/mypy" --ignore-missing-imports --no-incremental --cache-dir=/dev/null ./*.py tests/*.py
