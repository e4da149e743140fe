#!/usr/bin/env bash
# Make sure a headless Chromium is installed (from the Debian packages) and print its path.
#
# The HTML report tests load report.html in a real browser. There is no browser download here:
# Chromium comes from the machine's own apt sources, like the base image's packages. Idempotent:
# when a Chromium is already on PATH nothing is installed.
#
# Usage: scripts/browser.sh
#
# Environment:
#   BEYONDSWE_CHROMIUM   use this browser binary instead (nothing is installed)
#
# Progress goes to stderr; stdout carries only the browser's path.
set -euo pipefail

log() { printf '[browser] %s\n' "$*" >&2; }
die() { printf '[browser] error: %s\n' "$*" >&2; exit 1; }

if [[ -n "${BEYONDSWE_CHROMIUM:-}" ]]; then
    [[ -x "$BEYONDSWE_CHROMIUM" ]] || die "BEYONDSWE_CHROMIUM=$BEYONDSWE_CHROMIUM is not an executable"
    echo "$BEYONDSWE_CHROMIUM"
    exit 0
fi

find_browser() {
    local name
    for name in chromium chromium-browser google-chrome; do
        if command -v "$name" >/dev/null 2>&1; then
            command -v "$name"
            return 0
        fi
    done
    return 1
}

if path=$(find_browser); then
    log "$path already installed"
    echo "$path"
    exit 0
fi

# shellcheck source=scripts/apt-install.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"
apt_install Chromium "run 'apt-get install chromium' as root, or set BEYONDSWE_CHROMIUM" \
    chromium fonts-dejavu-core
path=$(find_browser) || die "chromium was installed but is not on PATH"
log "installed $path ($("$path" --version 2>/dev/null || echo 'version unknown'))"
echo "$path"
