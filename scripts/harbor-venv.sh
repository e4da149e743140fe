#!/usr/bin/env bash
# Create (if missing) a virtual env holding Harbor's own task loader
# (`harbor.models.task.task.Task`) at a given Harbor version, for checking
# generated task directories with Harbor itself.
#
# Usage: scripts/harbor-venv.sh VERSION      (e.g. 0.1.45, or `latest`)
#
# Venv location: ${BEYONDSWE_HARBOR_VENV_DIR:-target/harbor-venvs}/RESOLVED_VERSION
# (a relative BEYONDSWE_HARBOR_VENV_DIR is taken relative to the repo root).
#
# stdout: two lines -- the resolved Harbor version, then the venv's python
#         path (always the LAST line).  Progress goes to stderr.
#
# Harbor declares Requires-Python >= 3.12, but its task-model import chain
# works on CPython 3.11 when Harbor is installed WITHOUT its (huge) dependency
# set, plus the few pure-Python helpers pinned below, and with
# typing.override / typing.TypedDict taken from typing_extensions before the
# import (scripts/harbor_load_tasks.py applies that shim).
#
# Python: ${BEYONDSWE_HARBOR_PYTHON:-python3} (must be >= 3.11 for tomllib).
# Idempotent: a marker file, written last, records a finished venv; an
# unfinished one (no/mismatching marker) is rebuilt.  Concurrent callers are
# serialised with flock.
set -euo pipefail

usage() {
    echo "usage: $0 VERSION   (a Harbor version such as 0.1.45, or 'latest')" >&2
    exit 2
}

[[ $# -eq 1 && -n "$1" ]] || usage
REQUESTED="$1"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
PYTHON="${BEYONDSWE_HARBOR_PYTHON:-python3}"

VENV_BASE="${BEYONDSWE_HARBOR_VENV_DIR:-target/harbor-venvs}"
case "$VENV_BASE" in
    /*) ;;
    *) VENV_BASE="$REPO_ROOT/$VENV_BASE" ;;
esac

# Helper packages for the task-model import chain, with their dependency
# closure pinned (verified with harbor 0.1.45 and 0.26.0 on CPython 3.11.7).
#   0.1.45 imports: pydantic, toml, dirhash (-> scantree -> attrs, pathspec)
#   0.26.x imports: pydantic, toml, pathspec (dirhash/scantree for .checksum)
#   shortuuid: harbor.models.task.id
#   requests (+ urllib3, idna, certifi, charset-normalizer), packaging: the job and trial
#   result/config models (release round trip)
HELPER_PINS=(
    "pydantic==2.14.4"
    "pydantic-core==2.50.5"
    "annotated-types==0.8.0"
    "typing-inspection==0.4.5"
    "typing-extensions==4.16.0"
    "shortuuid==1.0.13"
    "dirhash==0.5.0"
    "scantree==0.0.4"
    "attrs==26.1.0"
    "pathspec==1.1.1"
    "toml==0.10.2"
    "requests==2.34.2"
    "urllib3==2.8.0"
    "idna==3.20"
    "certifi==2026.10.19.post1"
    "charset-normalizer==3.5.3"
    "packaging==26.4"
)

log() { echo "harbor-venv: $*" >&2; }

"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || {
    log "$PYTHON is $("$PYTHON" -V 2>&1); need CPython >= 3.11"
    exit 1
}

# pip filters candidates by Requires-Python (harbor: >=3.12), so the lookups
# below pretend to be 3.12 / ignore Requires-Python; nothing is run under 3.12.
resolve_latest() {
    local out ver
    if out="$("$PYTHON" -m pip index versions harbor --python-version 3.12 \
            --disable-pip-version-check 2>/dev/null)"; then
        ver="$(printf '%s\n' "$out" | sed -n 's/^harbor (\([^)]*\)).*/\1/p' | head -n1)"
        if [[ -n "$ver" ]]; then
            printf '%s\n' "$ver"
            return 0
        fi
    fi
    # Fallback: download the newest wheel's metadata-bearing file name.
    local tmp
    tmp="$(mktemp -d)"
    if "$PYTHON" -m pip download --no-deps --ignore-requires-python \
            --disable-pip-version-check -q -d "$tmp" harbor >&2; then
        ver="$(find "$tmp" -maxdepth 1 -name 'harbor-*' -printf '%f\n' \
            | sed -n 's/^harbor-\([^-]*\)-.*/\1/p; s/^harbor-\(.*\)\.tar\.gz$/\1/p' | head -n1)"
    fi
    rm -rf "$tmp"
    [[ -n "${ver:-}" ]] || return 1
    printf '%s\n' "$ver"
}

if [[ "$REQUESTED" == "latest" ]]; then
    log "resolving latest harbor version on PyPI"
    if VERSION="$(resolve_latest)"; then
        log "latest harbor is $VERSION"
        mkdir -p "$VENV_BASE"
        printf '%s\n' "$VERSION" >"$VENV_BASE/latest.resolved"
    elif [[ -s "$VENV_BASE/latest.resolved" ]]; then
        VERSION="$(cat "$VENV_BASE/latest.resolved")"
        log "could not reach PyPI; using last resolved latest: $VERSION"
    else
        log "could not resolve the latest harbor version"
        exit 1
    fi
else
    VERSION="$REQUESTED"
fi

if [[ ! "$VERSION" =~ ^[0-9A-Za-z][0-9A-Za-z.+!_-]*$ ]]; then
    log "bad version string: $VERSION"
    exit 2
fi

VENV="$VENV_BASE/$VERSION"
MARKER="$VENV/.harbor-venv-ready"
PY="$VENV/bin/python"
EXPECTED_MARKER="harbor==$VERSION ${HELPER_PINS[*]} python=$("$PYTHON" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')"

is_ready() { [[ -x "$PY" && -f "$MARKER" && "$(cat "$MARKER")" == "$EXPECTED_MARKER" ]]; }

mkdir -p "$VENV_BASE"
if command -v flock >/dev/null 2>&1; then
    exec 9>"$VENV_BASE/.$VERSION.lock"
    flock 9
fi

if is_ready; then
    log "using cached venv $VENV"
else
    start=$SECONDS
    log "creating venv $VENV (harbor==$VERSION, no deps) with $("$PYTHON" -V 2>&1)"
    rm -rf "$VENV"
    # Do not leave a half-built venv behind on failure.
    trap 'rm -rf "$VENV"' EXIT
    "$PYTHON" -m venv "$VENV"
    PIP=("$PY" -m pip --disable-pip-version-check --no-input -q)
    log "installing helper packages: ${HELPER_PINS[*]}"
    "${PIP[@]}" install "${HELPER_PINS[@]}" >&2
    log "installing harbor==$VERSION --no-deps"
    "${PIP[@]}" install --no-deps --ignore-requires-python "harbor==$VERSION" >&2
    "$PY" - "$VERSION" >&2 <<'EOF'
import importlib.metadata, sys, typing
import typing_extensions
for _name in ("override", "TypedDict"):
    setattr(typing, _name, getattr(typing_extensions, _name))
from harbor.models.task.task import Task  # noqa: F401
got = importlib.metadata.version("harbor")
if got != sys.argv[1]:
    sys.exit(f"installed harbor {got}, wanted {sys.argv[1]}")
print(f"harbor-venv: harbor {got} task loader imports OK")
EOF
    printf '%s\n' "$EXPECTED_MARKER" >"$MARKER"
    trap - EXIT
    log "venv ready in $((SECONDS - start))s"
fi

printf '%s\n' "$VERSION"
printf '%s\n' "$PY"
