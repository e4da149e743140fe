#!/usr/bin/env bash
# What pytest's capture files cost where they live: plain pytest on 400 passing tests in a
# fixture image, /tmp on the container's own file system against /tmp on a tmpfs (as grader
# 0.7.2 mounts one for the capture files), and with capture off. Prints milliseconds per run.
#
#   scripts/bench-capture.sh [IMAGE] [ROUNDS]     (default beyondswe-fixture/calc:1, 4)
set -euo pipefail
IMAGE="${1:-beyondswe-fixture/calc:1}"
ROUNDS="${2:-4}"
read -r -d '' PROBE <<'SH' || true
mkdir -p /tmp/x && cd /tmp/x
printf 'import pytest\n@pytest.mark.parametrize("i", range(400))\ndef test_n(i):\n    assert i * 2 == i + i\n' > test_a.py
python3 -m pytest -q -p no:cacheprovider test_a.py >/dev/null 2>&1   # warm: bytecode, caches
for i in $(seq "$ROUNDS"); do
  for mode in capture nocapture; do
    flag=""; [ "$mode" = nocapture ] && flag="-s"
    s=$(date +%s%N); python3 -m pytest -q -p no:cacheprovider $flag test_a.py >/dev/null 2>&1; e=$(date +%s%N)
    echo "$LABEL $mode $(( (e - s) / 1000000 ))"
  done
done
SH
docker run --rm -e ROUNDS="$ROUNDS" -e LABEL=overlay --entrypoint sh "$IMAGE" -c "$PROBE"
docker run --rm -e ROUNDS="$ROUNDS" -e LABEL=tmpfs --tmpfs /tmp --entrypoint sh "$IMAGE" -c "$PROBE"
