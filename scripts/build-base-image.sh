#!/usr/bin/env bash
# Build the Docker base image used to grade Python repositories.
#
# Two ways, the first that works:
#   1. From a Debian image pulled from a registry (BEYONDSWE_BASE_FROM, debian:bookworm-slim by
#      default), with the packages installed by `docker build`: no root needed, any machine whose
#      engine reaches a registry (Docker Desktop on macOS, Fedora, a user in the docker group).
#   2. Offline, when no registry answers: a Debian rootfs built with debootstrap through the
#      machine's own apt mirror and loaded with `docker import` (needs root and Debian's apt).
# A rootfs tarball cached by an earlier offline build is used first, with no network at all.
#
# Usage: scripts/build-base-image.sh [--force]
#
#   --force   rebuild from scratch: ignore both the existing image and the
#             cached rootfs tarball.
#
# Environment:
#   BEYONDSWE_BASE_FROM      the registry image to build from (default debian:bookworm-slim;
#                            "none" for the offline build only)
#   BEYONDSWE_BASE_TAG       the tag to build (default beyondswe/base:VERSION)
#   BEYONDSWE_BASE_PACKAGES  the Debian packages, space-separated (default: the list below)
#   BEYONDSWE_DEBIAN_MIRROR  mirror URL (default: read from the apt config)
#   BEYONDSWE_DEBIAN_SUITE   suite (default: read from the apt config)
#   BEYONDSWE_CACHE_DIR      where the rootfs tarball is kept
#                            (default: $HOME/.cache/beyondswe)
#
# Progress goes to stderr; stdout carries only the image tag.
set -euo pipefail

# Bump when the package list or the rootfs tweaks below change.
BASE_VERSION=2
TAG="${BEYONDSWE_BASE_TAG:-beyondswe/base:${BASE_VERSION}}"
BASE_FROM="${BEYONDSWE_BASE_FROM:-debian:bookworm-slim}"

# The fixture images' shapes need, beyond Python, pytest and git: the pytest plugins real images
# carry (mock, asyncio, timeout), and a C compiler with Python's headers for an extension built
# in place.
PACKAGES=(
    python3 python3-pytest python3-pip python3-venv python3-setuptools
    git patch ca-certificates procps coreutils unzip
    python3-pytest-mock python3-pytest-asyncio python3-pytest-timeout
    gcc libc6-dev python3-dev
)
if [[ -n "${BEYONDSWE_BASE_PACKAGES:-}" ]]; then
    read -r -a PACKAGES <<<"$BEYONDSWE_BASE_PACKAGES"
fi

log() { printf '[build-base-image] %s\n' "$*" >&2; }
die() { printf '[build-base-image] error: %s\n' "$*" >&2; exit 1; }

FORCE=0
for arg in "$@"; do
    case "$arg" in
        --force) FORCE=1 ;;
        -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
        *) die "unknown argument: $arg (try --help)" ;;
    esac
done

# --- Docker -----------------------------------------------------------------
command -v docker >/dev/null 2>&1 || die "docker CLI not found in PATH"
if ! docker_err=$(docker version --format '{{.Server.Version}}' 2>&1 >/dev/null); then
    die "cannot reach the Docker engine${DOCKER_HOST:+ at DOCKER_HOST=$DOCKER_HOST}: ${docker_err}
hint: start dockerd, or point DOCKER_HOST at a running engine (e.g. unix:///var/run/docker.sock)"
fi

image_exists() { docker image inspect "$TAG" >/dev/null 2>&1; }

if [[ $FORCE -eq 0 ]] && image_exists; then
    log "image $TAG already present (cached); use --force to rebuild"
    echo "$TAG"
    exit 0
fi

# --- Cache dir and lock ---------------------------------------------------------
CACHE_DIR="${BEYONDSWE_CACHE_DIR:-${HOME:?HOME is unset; set BEYONDSWE_CACHE_DIR}/.cache/beyondswe}"
mkdir -p "$CACHE_DIR"
CACHE_TAR="$CACHE_DIR/base-${BASE_VERSION}.tar"

# Serialise concurrent builds of the same version.
exec 9>"$CACHE_DIR/base-${BASE_VERSION}.lock"
if command -v flock >/dev/null 2>&1; then
    flock 9
    if [[ $FORCE -eq 0 ]] && image_exists; then
        log "image $TAG was built by a concurrent run (cached)"
        echo "$TAG"
        exit 0
    fi
fi

import_tar() {
    local tarball=$1 old_id
    old_id=$(docker image inspect -f '{{.Id}}' "$TAG" 2>/dev/null || true)
    log "importing $tarball as $TAG"
    docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'LABEL beyondswe.base=1' \
        --change 'CMD ["/bin/bash"]' \
        - "$TAG" <"$tarball" >/dev/null
    # With --force, drop the image the tag used to name (if nothing else uses it).
    if [[ -n $old_id && $old_id != "$(docker image inspect -f '{{.Id}}' "$TAG")" ]]; then
        docker rmi "$old_id" >/dev/null 2>&1 || true
    fi
    local size
    size=$(docker image inspect -f '{{.Size}}' "$TAG")
    log "image $TAG ready, size $((size / 1024 / 1024)) MiB ($size bytes)"
    echo "$TAG"
}

if [[ $FORCE -eq 0 && -s "$CACHE_TAR" ]]; then
    log "using cached rootfs tarball (no network needed)"
    import_tar "$CACHE_TAR"
    exit 0
fi

# The system git configuration of the base, both ways: any repository is safe, and commits
# made while grading have an author.
write_gitconfig() {
    cat >"$1" <<'EOF'
[safe]
	directory = *
[user]
	email = grader@beyondswe.invalid
	name = beyondswe
[init]
	defaultBranch = main
EOF
}

# --- From a registry image ------------------------------------------------------
# The same configuration as the offline rootfs below, applied in a `docker build`.
build_from_registry() {
    local from=$1 context
    context=$(mktemp -d "$CACHE_DIR/context-${BASE_VERSION}.XXXXXX")
    write_gitconfig "$context/gitconfig"
    cat >"$context/Dockerfile" <<EOF
FROM $from
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
RUN apt-get update -q \\
    && apt-get install -y -q --no-install-recommends ${PACKAGES[*]} \\
    && rm -f /usr/lib/python3*/EXTERNALLY-MANAGED \\
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /usr/share/man/* /usr/share/info/*
COPY gitconfig /etc/gitconfig
LABEL beyondswe.base=1
CMD ["/bin/bash"]
EOF
    log "building $TAG FROM $from (packages from Debian's mirrors, inside the build)"
    if docker build -q -t "$TAG" "$context" >&2; then
        rm -rf "$context"
        local size
        size=$(docker image inspect -f '{{.Size}}' "$TAG")
        log "image $TAG ready, size $((size / 1024 / 1024)) MiB ($size bytes), built FROM $from"
        echo "$TAG"
        return 0
    fi
    rm -rf "$context"
    return 1
}

if [[ $BASE_FROM != none ]]; then
    if docker image inspect "$BASE_FROM" >/dev/null 2>&1 \
        || { log "pulling $BASE_FROM"; docker pull -q "$BASE_FROM" >/dev/null 2>&1; }; then
        build_from_registry "$BASE_FROM" && exit 0
        log "the build FROM $BASE_FROM failed; trying the offline build"
    else
        log "no registry answered for $BASE_FROM; building offline from Debian packages"
    fi
fi

# --- Build the rootfs -----------------------------------------------------------
[[ $(id -u) -eq 0 ]] || die "no registry answered, and the offline build (debootstrap) needs root
hint: let the Docker engine reach a registry (docker pull $BASE_FROM), or rerun as root on a Debian machine"

# shellcheck source=scripts/debian-mirror.sh
. "$(dirname "${BASH_SOURCE[0]}")/debian-mirror.sh"
find_debian_mirror
log "mirror $mirror, suite $suite"

if ! command -v debootstrap >/dev/null 2>&1; then
    log "installing debootstrap"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q --no-install-recommends debootstrap >&2; then
        apt-get update -q >&2
        apt-get install -y -q --no-install-recommends debootstrap >&2
    fi
fi

WORK=$(mktemp -d "$CACHE_DIR/build-${BASE_VERSION}.XXXXXX")
ROOTFS="$WORK/rootfs"
cleanup() {
    # debootstrap may leave /proc, /sys or bind-mounted /dev entries behind if
    # it fails: unmount them before deleting anything, and never cross
    # filesystems while deleting.
    local m
    if [[ -d $ROOTFS ]]; then
        while read -r m; do
            umount -l "$m" 2>/dev/null || true
        done < <(awk -v r="$ROOTFS" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r)
    fi
    rm -rf --one-file-system "$WORK"
}
trap cleanup EXIT

include=$(IFS=,; echo "${PACKAGES[*]}")
log "debootstrap --variant=minbase $suite (this takes a few minutes)"
debootstrap --variant=minbase --components=main --include="$include" \
    "$suite" "$ROOTFS" "$mirror" >&2

log "configuring rootfs"
write_gitconfig "$ROOTFS/etc/gitconfig"

# Keep later dpkg installs (if any) small too.
mkdir -p "$ROOTFS/etc/dpkg/dpkg.cfg.d"
cat >"$ROOTFS/etc/dpkg/dpkg.cfg.d/01-beyondswe-nodoc" <<'EOF'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-exclude=/usr/share/lintian/*
EOF

# Throwaway grading containers: let `pip install` work without
# --break-system-packages (pip installs into /usr/local, not over dpkg files).
rm -f "$ROOTFS"/usr/lib/python3*/EXTERNALLY-MANAGED

# Slim down.
rm -rf "$ROOTFS"/var/cache/apt/*.bin "$ROOTFS"/var/cache/apt/archives/*.deb \
    "$ROOTFS"/var/cache/apt/archives/partial/* \
    "$ROOTFS"/var/lib/apt/lists/* \
    "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/* \
    "$ROOTFS"/usr/share/locale/* "$ROOTFS"/usr/share/lintian \
    "$ROOTFS"/var/log/*.log "$ROOTFS"/var/log/apt/* \
    "$ROOTFS"/var/cache/debconf/*-old "$ROOTFS"/var/lib/dpkg/*-old \
    "$ROOTFS"/debootstrap
find "$ROOTFS/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
find "$ROOTFS/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
# Docker provides these at run time; do not bake in the host's.
: >"$ROOTFS/etc/resolv.conf"
: >"$ROOTFS/etc/hostname"

log "writing rootfs tarball $CACHE_TAR"
# Written inside $WORK (same filesystem as the cache) and renamed: atomic.
tar -C "$ROOTFS" --numeric-owner -cf "$WORK/rootfs.tar" .
mv -f "$WORK/rootfs.tar" "$CACHE_TAR"

import_tar "$CACHE_TAR"
