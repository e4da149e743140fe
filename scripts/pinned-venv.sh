# Sourced by the scripts that need Python packages from PyPI in a venv of their own
# (scripts/junit-venv.sh, scripts/lint-python.sh): `pinned_venv NAME MODULE PINS...` makes
# target/NAME holding exactly PINS, once (a marker written last, after MODULE imported in it,
# records a finished venv, and a lock serialises two makers), and sets VENV to it. Progress goes
# to stderr.

pinned_venv() {
    local name=$1 module=$2 root
    shift 2
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    local pins="$*" python="${BEYONDSWE_HARBOR_PYTHON:-python3}"
    VENV="$root/target/$name"
    local marker="$VENV/.ready"
    mkdir -p "$root/target"
    exec 9>"$root/target/.$name.lock"
    flock 9
    if [[ -x "$VENV/bin/python" && -f "$marker" && "$(cat "$marker")" == "$pins" ]]; then
        echo "$name: using cached venv $VENV" >&2
    else
        echo "$name: creating $VENV with $pins" >&2
        rm -rf "$VENV"
        trap 'rm -rf "$VENV"' EXIT
        "$python" -m venv "$VENV"
        "$VENV/bin/python" -m pip --disable-pip-version-check --no-input -q install "$@" >&2
        "$VENV/bin/python" -c "import $module" >&2
        printf '%s\n' "$pins" >"$marker"
        trap - EXIT
    fi
    exec 9>&-
}
