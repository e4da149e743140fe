# beyondswe verifier: the image's environment and interpreter: recorded once by the prepare
# step, given back to every process of the test user; the pytest plugins and sys.path of the
# clean interpreter.
#
# adapters/beyondswe_verifier/environment.py (see verify.py). Used
# by the entry point's grade and prepare, the Doc2Repo install and the test run.
import json
import os
import subprocess
import sys

from . import files
from . import processes

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Dict, List, Optional, Tuple  # noqa: F401


# Names a shell or `docker exec` sets for its own process: never part of the image's record.
SHELL_ONLY_VARS = frozenset(["PWD", "OLDPWD", "SHLVL", "_", "HOSTNAME", "TERM"])


# Variables that load code or change how an interpreter or pytest starts. From the prepare
# record they are the image's own configuration and kept; a verifier without that record cannot
# tell whose they are, and drops them (PYTHONPATH aside: the runner adds its entries only after
# pytest and the plugins are imported).
CODE_LOADING_PREFIXES = ("PYTHON", "PYTEST", "LD_PRELOAD", "LD_AUDIT")


def image_env_now():  # type: () -> Dict[str, str]
    """This process's environment as the image's record: under `prepare` that is the image's
    configured `ENV` plus what the setup commands exported (the caller sourced the chain)."""
    return dict((k, v) for k, v in os.environ.items()
                if k not in SHELL_ONLY_VARS and not k.startswith("BEYONDSWE"))


def fallback_env():  # type: () -> Dict[str, str]
    """Without a prepare record (a Harbor image used as it is): this process's environment, less
    every variable that loads code, since nothing says the image set it."""
    return dict((k, v) for k, v in image_env_now().items()
                if not k.startswith(CODE_LOADING_PREFIXES) or k == "PYTHONPATH")


def pick_python(env):  # type: (Dict[str, str]) -> Tuple[Optional[str], Optional[str]]
    """The interpreter the image's PATH picks, as the official evaluator's `python` would find
    it: the first PATH directory holding `python` or `python3` (a venv or conda prefix first on
    PATH wins over /usr/bin). Not resolved through links: a venv's `bin/python` is what makes
    it that venv. (path, version), or (None, None) when PATH holds neither."""
    for d in (env.get("PATH") or "/usr/local/bin:/usr/bin:/bin").split(os.pathsep):
        if not d or not os.path.isabs(d):
            continue
        for name in ("python", "python3"):
            path = os.path.join(d, name)
            version = os.path.isfile(path) and os.access(path, os.X_OK) and python_version(path)
            if version:
                return path, version
    return None, None


def python_version(path):  # type: (str) -> Optional[str]
    """"3.11" for a Python 3.6+ interpreter, else None (a `python` that is Python 2, or broken)."""
    try:
        proc = subprocess.run([path, "-I", "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={"PATH": "/usr/bin:/bin"}, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    out = proc.stdout.decode("ascii", "replace").strip()
    parts = out.split(".")
    if proc.returncode != 0 or len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return out if (int(parts[0]), int(parts[1])) >= (3, 6) else None


def python_record(env):  # type: (Dict[str, str]) -> Optional[Dict[str, Any]]
    """The prepare step's record of the test interpreter: path, version, hash of its binary."""
    path, version = pick_python(env)
    if path is None:
        return None
    return {"path": path, "version": version, "sha256": files.file_sha256(os.path.realpath(path))}


def image_pythonpath(env, workdir):  # type: (Dict[str, str], str) -> List[str]
    """The image's PYTHONPATH entries, absolute (relative ones are taken from the workdir, where
    the tests run), in order, each once."""
    out = []
    for p in (env.get("PYTHONPATH") or "").split(os.pathsep):
        if not p:
            continue
        p = os.path.normpath(os.path.join(workdir, p))
        if p not in out:
            out.append(p)
    return out


def settle_environment(ctx):  # type: (Any) -> None
    """The tests' environment and interpreter: the prepare step's record of the image (never
    the agent's shell, never a file in the workdir); without one, this process's environment
    less what loads code, and the interpreter its PATH picks."""
    recorded = ctx.state.get("env")
    ctx.image_env = dict(recorded) if isinstance(recorded, dict) else fallback_env()
    py = ctx.state.get("python") or {}
    path = py.get("path")
    if path and os.path.isfile(path):
        # Offline the container is fresh from the prepared image: only where someone had the
        # container before (Harbor's agent) is the interpreter's binary hashed again.
        if (ctx.shared_container and py.get("sha256")
                and files.file_sha256(os.path.realpath(path)) != py["sha256"]):
            ctx.suspicious("the test interpreter %s is not the one the prepare step recorded" % path)
        ctx.python = path
        ctx.python_version = py.get("version")
    else:
        picked, version = pick_python(ctx.image_env)
        ctx.python = picked or sys.executable
        ctx.python_version = version if picked else "%d.%d" % sys.version_info[:2]
    ctx.image_paths = image_pythonpath(ctx.image_env, ctx.workdir)
    ctx.facts["environment"] = {"recorded": isinstance(recorded, dict), "python": ctx.python,
                                "pythonpath": ctx.image_paths}


def child_env(ctx, home, extra=None):  # type: (Any, str, Optional[Dict[str, str]]) -> Dict[str, str]
    """The environment of every process the submission's code runs in: the image's (its `ENV`
    and what the setup commands exported, as the prepare step recorded it), with the test user's
    own HOME, and plugin autoloading off (the runner loads the image's plugins itself)."""
    env = dict(ctx.image_env)
    for k in ("HOSTNAME", "TERM"):
        if k in os.environ:
            env.setdefault(k, os.environ[k])
    env.update({"HOME": home, "USER": processes.TEST_USER, "LOGNAME": processes.TEST_USER,
                "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PIP_NO_INPUT": "1",
                "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(extra or {})
    return env


LIST_PLUGINS = r"""
import json, sys
out = []
try:
    from importlib import metadata
    eps = metadata.entry_points()
    group = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
    for ep in group:
        out.append({"name": ep.name, "module": ep.value.split(":", 1)[0].strip()})
except Exception:
    try:
        import pkg_resources
        for ep in pkg_resources.iter_entry_points("pytest11"):
            out.append({"name": ep.name, "module": ep.module_name})
    except Exception:
        pass
seen = set()
uniq = []
for p in out:
    if p["module"] not in seen:
        seen.add(p["module"])
        uniq.append(p)
print(json.dumps({"plugins": uniq, "sys_path": sys.path}))
"""


def clean_interpreter_facts(python):  # type: (str) -> Dict[str, Any]
    """Plugins and sys.path as the image's interpreter sees them from outside the repository."""
    proc = subprocess.run([python, "-I", "-c", LIST_PLUGINS], cwd="/", stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, timeout=120)
    try:
        data = json.loads(proc.stdout.decode("utf-8").strip().splitlines()[-1])
    except Exception:  # noqa: BLE001
        data = {"plugins": [], "sys_path": []}
    return data


def load_clean_facts(ctx):  # type: (Any) -> None
    """The plugins and sys.path of the clean image: recorded by the prepare step; without it
    (a Harbor image used as it is) asked now, after the scrub, from outside the repository."""
    if "plugins" not in ctx.state:
        clean = clean_interpreter_facts(ctx.python)
        ctx.state["plugins"] = clean.get("plugins", [])
        ctx.state["clean_sys_path"] = clean.get("sys_path", [])
    ctx.plugins = ctx.state["plugins"]
