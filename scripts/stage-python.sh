#!/usr/bin/env bash
# Put into a fixture image's build context what a checkout cannot hold: a CPython copied from
# the building machine's pyenv, and the wheels the context's requirements.txt pins. No registry
# serves an image of an old Python here, so an image whose only Python is an old one is built
# FROM the offline base with the interpreter copied in. scripts/build-fixture-images.sh runs
# this on a copy of every context that has a `stage-python` file (its last line: the version,
# e.g. 3.7).
#
# Usage: scripts/stage-python.sh CONTEXT
#
#   CONTEXT/python/   the interpreter as a /usr/local tree: bin/python3.X (python3 and python
#                     link to it), lib/libpython3.X*.so* (found through ldconfig, as in the
#                     official python images), lib/python3.X/ (the standard library without its
#                     tests, IDLE, tkinter, build configuration and site-packages; the image's
#                     Dockerfile runs ensurepip)
#   CONTEXT/wheels/   the wheels CONTEXT/requirements.txt (if any) pins with their hashes,
#                     downloaded for that interpreter, kept in the cache for the next build
#
# Environment:
#   PYENV_ROOT           where pyenv keeps its versions (default ~/.pyenv); the newest
#                        $PYENV_ROOT/versions/X.Y.* is copied, and none is an error
#   BEYONDSWE_CACHE_DIR  the wheel cache's parent (default $HOME/.cache/beyondswe)
#
# Progress goes to stderr.
set -euo pipefail

log() { printf '[stage-python] %s\n' "$*" >&2; }
die() { printf '[stage-python] error: %s\n' "$*" >&2; exit 1; }

[[ $# -eq 1 ]] || die "usage: scripts/stage-python.sh CONTEXT"
context=$(cd "$1" && pwd)
[[ -f $context/stage-python ]] || die "no stage-python file in $context"
version=$(grep -v '^[[:space:]]*\(#\|$\)' "$context/stage-python" | tail -n 1 | tr -d '[:space:]')
[[ $version =~ ^3\.[0-9]+$ ]] || die "stage-python names no Python version (3.X): '$version'"

root=${PYENV_ROOT:-${HOME:?HOME is unset; set PYENV_ROOT}/.pyenv}
prefix=$(find "$root/versions" -mindepth 1 -maxdepth 1 -name "$version.*" 2>/dev/null \
    | grep -E "/$version\.[0-9]+$" | sort -V | tail -n 1 || true)
[[ -n $prefix && -x $prefix/bin/python$version ]] \
    || die "no Python $version under $root/versions, which this image copies its interpreter from
hint: pyenv install $version (or set PYENV_ROOT to where pyenv keeps it)"
py=$prefix/bin/python$version
log "copying $py ($("$py" -c 'import sys; print(sys.version.split()[0])'))"

out=$context/python
rm -rf "$out" "$context/wheels"
mkdir -p "$out/bin" "$out/lib"
cp -p "$py" "$out/bin/"
ln -s "python$version" "$out/bin/python3"
ln -s "python$version" "$out/bin/python"
shopt -s nullglob
libs=("$prefix"/lib/libpython"$version"*.so* "$prefix"/lib/libpython3.so)
shopt -u nullglob
[[ ${#libs[@]} -eq 0 ]] || cp -P -p "${libs[@]}" "$out/lib/"
tar -C "$prefix/lib" -cf - \
    --exclude="python$version/test" --exclude="python$version/config-*" \
    --exclude="python$version/idlelib" --exclude="python$version/tkinter" \
    --exclude="python$version/turtledemo" --exclude="python$version/lib2to3/tests" \
    --exclude="python$version/site-packages/*" \
    "python$version" | tar -C "$out/lib" -xf -

# The wheels: from the cache when it holds them all, else from the index (and then cached).
mkdir -p "$context/wheels"
if [[ -f $context/requirements.txt ]]; then
    cache=${BEYONDSWE_CACHE_DIR:-${HOME:?HOME is unset; set BEYONDSWE_CACHE_DIR}/.cache/beyondswe}/wheels
    mkdir -p "$cache"
    download() {
        "$py" -m pip download --disable-pip-version-check --no-input -q --no-deps --only-binary :all: \
            --require-hashes -r "$context/requirements.txt" -d "$context/wheels" "$@"
    }
    if download --no-index --find-links "$cache" 2>/dev/null; then
        log "wheels from the cache ($cache)"
    else
        log "downloading the wheels requirements.txt pins"
        download || die "pip could not download the wheels $context/requirements.txt pins"
        cp -p "$context"/wheels/*.whl "$cache/"
    fi
fi
log "staged: python/ $(du -sh "$out" | cut -f1), wheels/ $(find "$context/wheels" -name '*.whl' | wc -l) wheels"
