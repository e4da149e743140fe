#!/usr/bin/env bash
# The whole test suite, as CI runs it (README: "Run the tests").
#
# Builds what the tests need on a machine with a Docker engine and no registry: the offline base
# image and the fixture images (cached by tag), a headless Chromium and a registry server for the
# pull tests (installed from the Debian packages when missing), the Harbor client image with the
# real Harbor CLI at 0.26.0 and 0.1.45 (cached by tag), Harbor's task-loader environments and a JUnit consumer (cached under target/).
# Then checks the generated schemas and runs every test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Each stage line says how long the run has taken so far.
log() { printf '[test] %4ds %s\n' "$SECONDS" "$*" >&2; }

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
cargo test -- --include-ignored
log "done"
