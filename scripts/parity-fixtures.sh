#!/usr/bin/env bash
# The parity experiment of harbor/adapters/beyondswe/, from real runs: converts the fixture
# dataset (one instance each of CrossRepo, DepMigrate and Doc2Repo), runs Harbor 0.26.0's oracle
# and nop agents twice each on it (scripts/harbor-run.sh, the Harbor client image), then
# `beyondswe parity` regrades every trial offline and writes parity_experiment.json and
# adapter_metadata.json into the adapter's directory (or into $1).
#
#   scripts/parity-fixtures.sh [OUT_DIR]
#
# Needs the engine, the fixture images (scripts/build-fixture-images.sh) and the Harbor client
# image (scripts/build-harbor-client-image.sh). About ten minutes on two cores.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd -P)
OUT=${1:-$ROOT/harbor/adapters/beyondswe}
log() { printf '[parity-fixtures] %s\n' "$*" >&2; }

cargo build --quiet
BIN=$ROOT/target/debug/beyondswe
WORK=$ROOT/target/parity-work
rm -rf "$WORK"
mkdir -p "$WORK/solutions"
cp -r fixtures/submissions/minidoc_gold "$WORK/solutions/minidoc_ac79166631ba81556e3f40c05aa8d00fe9178ca6"
DATASET=$ROOT/fixtures/dataset/fixtures.jsonl
"$BIN" convert to-harbor "$DATASET" "$WORK/tasks" --test-suites fixtures/test_suites \
    --solutions "$WORK/solutions" >&2
cd "$WORK"
jobs=()
for agent in oracle nop; do
    for n in 1 2; do
        log "harbor 0.26.0 run -a $agent ($agent-$n)"
        bash "$ROOT/scripts/harbor-run.sh" 0.26.0 run -p tasks -a "$agent" -n 2 -o jobs \
            --job-name "$agent-$n" -y >&2
        jobs+=("jobs/$agent-$n")
    done
done
"$BIN" parity "${jobs[@]}" --dataset "$DATASET" --test-suites "$ROOT/fixtures/test_suites" \
    --results-dir "$WORK/runs" --jobs 2 -o "$OUT"
