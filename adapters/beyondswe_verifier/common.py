# beyondswe verifier: what every module of the verifier shares: where it is installed, the log,
# the error a step raises, a JSON file written whole.
#
# The verifier is one package, beyondswe_verifier/ (adapters/beyondswe_verifier/, whose
# verify.py lists every module), installed as one directory beside its entry point
# beyondswe_verify.py (adapters/beyondswe_verify.py) and the restore rules. Its modules import
# each other with relative imports; the entry point puts its own directory, root's only, first on
# sys.path before it imports the package: the verifier imports nothing of its own from anywhere
# else. Python 3.6+, standard library only.
import json
import os
import sys
import time

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Optional, Union  # noqa: F401


# The package's directory, and the one it is installed in (the entry point's and the restore
# rules'; adapters/ in the repository).
PACKAGE = os.path.dirname(os.path.abspath(__file__))
HERE = os.path.dirname(PACKAGE)


MAX_LOG = 20000


def log(msg):  # type: (str) -> None
    sys.stderr.write("beyondswe-verify: %s\n" % msg)
    sys.stderr.flush()


def tail(text, n=MAX_LOG):  # type: (Optional[Union[str, bytes]], int) -> str
    if text is None:
        return ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return text if len(text) <= n else "[... %d chars cut]\n%s" % (len(text) - n, text[-n:])


class VerifyError(Exception):
    """A step could not be done; `reason` names it for the verdict."""

    def __init__(self, reason, message, infrastructure=True):  # type: (str, str, bool) -> None
        Exception.__init__(self, message)
        self.reason = reason
        self.message = message
        self.infrastructure = infrastructure


def write_json(path, data):  # type: (str, Any) -> None
    """`data` as JSON at `path`, whole or not at all (written beside it, then renamed)."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False)
    os.replace(tmp, path)


def process_started_at(pid="self"):  # type: (Union[int, str]) -> Optional[float]
    """When a process of this container started (wall clock), from /proc; None where /proc
    cannot tell."""
    try:
        with open("/proc/%s/stat" % pid, encoding="ascii") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        return time.time() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None
