#!/usr/bin/env bash
# Build the Docker images of the fixture instances (fixtures/images/<name>/),
# tagged beyondswe-fixture/<name>:1 and labelled beyondswe.fixture=1.
#
# Builds the base image first (scripts/build-base-image.sh). No registry is
# needed: every image is FROM beyondswe/base:2 and builds its git repository
# from files in its own context, with fixed commit dates, so the commit SHAs
# recorded in fixtures/dataset/fixtures.jsonl are reproducible. A context with a `stage-python`
# file is built from a copy into which scripts/stage-python.sh first puts a CPython from the
# machine's pyenv and the wheels it pins (shape-py37: no registry serves an old Python here).
#
# Usage: scripts/build-fixture-images.sh [--force] [NAME...]
#
#   --force   rebuild images whose tag already exists (the base image is
#             not rebuilt; run scripts/build-base-image.sh --force for that)
#   NAME      build only these fixtures (default: every fixtures/images/*/)
#
# Progress goes to stderr; stdout carries only the tags, one per line.
set -euo pipefail

FIXTURE_VERSION=1
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IMAGES_DIR="$REPO_ROOT/fixtures/images"

log() { printf '[build-fixture-images] %s\n' "$*" >&2; }
die() { printf '[build-fixture-images] error: %s\n' "$*" >&2; exit 1; }

FORCE=0
names=()
for arg in "$@"; do
    case "$arg" in
        --force) FORCE=1 ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
        -*) die "unknown option: $arg (try --help)" ;;
        *) names+=("$arg") ;;
    esac
done

if [[ ${#names[@]} -eq 0 ]]; then
    for dir in "$IMAGES_DIR"/*/; do
        [[ -f "$dir/Dockerfile" ]] && names+=("$(basename "$dir")")
    done
    [[ ${#names[@]} -gt 0 ]] || die "no fixture build contexts under $IMAGES_DIR"
fi
for name in "${names[@]}"; do
    [[ -f "$IMAGES_DIR/$name/Dockerfile" ]] || die "no such fixture: $name ($IMAGES_DIR/$name/Dockerfile)"
done

log "base image"
"$REPO_ROOT/scripts/build-base-image.sh" >/dev/null

# The beyondswe binary: $BEYONDSWE_BIN, else built and run from this checkout.
if [[ -n "${BEYONDSWE_BIN:-}" ]]; then
    BEYONDSWE=("$BEYONDSWE_BIN")
else
    BEYONDSWE=(cargo run --quiet --manifest-path "$REPO_ROOT/Cargo.toml" --)
fi

# Staged copies of contexts, removed at exit.
staged=()
cleanup() { [[ ${#staged[@]} -eq 0 ]] || rm -rf "${staged[@]}"; }
trap cleanup EXIT

start=$SECONDS
built=0
for name in "${names[@]}"; do
    tag="beyondswe-fixture/${name}:${FIXTURE_VERSION}"
    if [[ $FORCE -eq 0 ]] && docker image inspect "$tag" >/dev/null 2>&1; then
        log "$tag already present (cached); use --force to rebuild"
        echo "$tag"
        continue
    fi
    log "building $tag from fixtures/images/$name"
    t0=$SECONDS
    context=$IMAGES_DIR/$name
    if [[ -f $context/stage-python ]]; then
        copy=$(mktemp -d "${TMPDIR:-/tmp}/beyondswe-stage.XXXXXX")
        staged+=("$copy")
        cp -R "$context/." "$copy/"
        bash "$REPO_ROOT/scripts/stage-python.sh" "$copy" || die "staging fixtures/images/$name failed"
        context=$copy
    fi
    # Built by the tool itself, through the engine API (bollard).
    if ! out=$("${BEYONDSWE[@]}" image build "$context" --tag "$tag" \
            --label beyondswe.fixture=1 2>&1); then
        printf '%s\n' "$out" >&2
        die "image build failed for $tag"
    fi
    size=$(docker image inspect -f '{{.Size}}' "$tag")
    log "$tag ready in $((SECONDS - t0))s, size $size bytes"
    built=$((built + 1))
    echo "$tag"
done
log "done: $built built, $((${#names[@]} - built)) cached, $((SECONDS - start))s"
