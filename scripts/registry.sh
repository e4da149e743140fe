#!/usr/bin/env bash
# Make sure a container registry server is installed (Debian packages one as `docker-registry`)
# and print its path.
#
# The pull tests start their own registry on 127.0.0.1 with this binary, push a fixture image to
# it, remove the image from the engine and grade through a pull; then stop it and grade again.
# Idempotent: when the binary is already there nothing is installed.
#
# Usage: scripts/registry.sh
#
# Environment:
#   BEYONDSWE_REGISTRY   use this registry binary instead (nothing is installed)
#
# Progress goes to stderr; stdout carries only the binary's path.
set -euo pipefail

log() { printf '[registry] %s\n' "$*" >&2; }
die() { printf '[registry] error: %s\n' "$*" >&2; exit 1; }

if [[ -n "${BEYONDSWE_REGISTRY:-}" ]]; then
    [[ -x "$BEYONDSWE_REGISTRY" ]] || die "BEYONDSWE_REGISTRY=$BEYONDSWE_REGISTRY is not an executable"
    echo "$BEYONDSWE_REGISTRY"
    exit 0
fi

if path=$(command -v docker-registry); then
    log "$path already installed"
    echo "$path"
    exit 0
fi

# shellcheck source=scripts/apt-install.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"
# The package's own service is not wanted: the tests start theirs on a port of their own.
apt_install docker-registry "run 'apt-get install docker-registry' as root, or set BEYONDSWE_REGISTRY" \
    docker-registry
path=$(command -v docker-registry) || die "docker-registry was installed but is not on PATH"
log "installed $path"
echo "$path"
