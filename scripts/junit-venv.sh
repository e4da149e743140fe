#!/usr/bin/env bash
# A virtual env holding a real JUnit XML consumer (junitparser, pure Python, no dependencies),
# which the tests give `report --format junit`'s output to (tests/it/report_junit.rs).
#
# Usage: scripts/junit-venv.sh
#
# Venv: target/junit-venv (cached: a marker written last records a finished one).
# stdout: the venv's python path. Progress goes to stderr.
set -euo pipefail

# shellcheck source=scripts/pinned-venv.sh
. "$(dirname "${BASH_SOURCE[0]}")/pinned-venv.sh"
pinned_venv junit-venv junitparser "junitparser==5.0.3"
printf '%s\n' "$VENV/bin/python"
