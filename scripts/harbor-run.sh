#!/usr/bin/env bash
# Run the real Harbor CLI from the Harbor client image (scripts/build-harbor-client-image.sh)
# against this machine's Docker engine.
#
# Usage: scripts/harbor-run.sh VERSION HARBOR_ARGS...     e.g. 0.26.0 run -p tasks -a oracle
#
# The current directory is mounted at the same path inside the client, and must hold the tasks and
# the jobs directory: Harbor's Docker backend bind-mounts each trial's agent/, verifier/ and
# artifacts/ directories into the task container by their host paths. The engine's socket
# (DOCKER_HOST=unix://..., else /var/run/docker.sock) is mounted too; Harbor runs as the calling
# user. Set BEYONDSWE_HARBOR_CLIENT to use another image tag.
set -euo pipefail

[[ $# -ge 1 ]] || { echo "usage: $0 VERSION HARBOR_ARGS..." >&2; exit 2; }
VERSION=$1
shift
IMAGE=${BEYONDSWE_HARBOR_CLIENT:-beyondswe/harbor-client:1}
SOCK=/var/run/docker.sock
if [[ ${DOCKER_HOST:-} == unix://* ]]; then
    SOCK=${DOCKER_HOST#unix://}
elif [[ -n ${DOCKER_HOST:-} ]]; then
    echo "harbor-run: DOCKER_HOST=$DOCKER_HOST is not a unix socket; only a local engine is supported" >&2
    exit 2
fi
[[ -S $SOCK ]] || { echo "harbor-run: no Docker socket at $SOCK" >&2; exit 2; }
docker image inspect "$IMAGE" >/dev/null 2>&1 ||
    { echo "harbor-run: image $IMAGE missing; run scripts/build-harbor-client-image.sh" >&2; exit 2; }
HERE=$(pwd -P)
exec docker run --rm -i \
    --user "$(id -u):$(id -g)" --group-add "$(stat -c %g "$SOCK")" \
    -e HOME=/tmp -e LITELLM_LOCAL_MODEL_COST_MAP=True -e COMPOSE_BAKE=false \
    -v "$SOCK:/var/run/docker.sock" -v "$HERE:$HERE" -w "$HERE" \
    --label beyondswe.harbor-client=1 \
    "$IMAGE" "/opt/harbor/$VERSION/bin/harbor" "$@"
