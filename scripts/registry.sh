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

command -v apt-get >/dev/null 2>&1 || die "no docker-registry on PATH and no apt-get to install one
hint: install a registry server (Debian: docker-registry), or set BEYONDSWE_REGISTRY to its binary"
if [[ $(id -u) -ne 0 ]]; then
    die "no docker-registry on PATH, and installing one needs root
hint: run 'apt-get install docker-registry' as root, or set BEYONDSWE_REGISTRY"
fi

log "installing docker-registry from the Debian packages"
export DEBIAN_FRONTEND=noninteractive
# The package's own service is not wanted (the tests start theirs on a port of their own).
if ! apt-get install -y -q --no-install-recommends docker-registry >&2; then
    log "install failed; refreshing the package lists and trying again"
    apt-get update -q >&2
    apt-get install -y -q --no-install-recommends docker-registry >&2
fi
path=$(command -v docker-registry) || die "docker-registry was installed but is not on PATH"
log "installed $path"
echo "$path"
