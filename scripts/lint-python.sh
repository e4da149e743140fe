#!/usr/bin/env bash
# Lint and type-check the verifier (adapters/): ruff with ruff.toml, and mypy over its
# modules and their unit tests. Both come from PyPI, pinned, into a cached venv.
#
# Usage: scripts/lint-python.sh
#
# Venv: target/lint-venv (cached: a marker written last records a finished one).
# Exit status: non-zero on any finding. Progress goes to stderr.
set -euo pipefail

# shellcheck source=scripts/pinned-venv.sh
. "$(dirname "${BASH_SOURCE[0]}")/pinned-venv.sh"
pinned_venv lint-venv mypy "ruff==0.17.6" "mypy==2.4.1"

cd "$(dirname "${BASH_SOURCE[0]}")/../adapters"
echo "lint-python: ruff" >&2
"$VENV/bin/ruff" check --no-cache .
echo "lint-python: mypy" >&2
# The modules import each other by their names in adapters/ (their installed names differ), so
# mypy reads them from here, with the unit tests beside them.
"$VENV/bin/mypy" --ignore-missing-imports --no-incremental --cache-dir=/dev/null beyondswe_verifier ./*.py tests/*.py
