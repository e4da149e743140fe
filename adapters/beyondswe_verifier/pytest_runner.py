# beyondswe pytest runner: the only code of the grader that runs as the unprivileged test user.
#
# adapters/beyondswe_verifier/pytest_runner.py: never imported by the verifier, which copies it
# into each run's directory as beyondswe_pytest_runner.py (testrun.py) and starts it as
# `python -I beyondswe_pytest_runner.py FD` with its uid dropped; it imports nothing of the package.
# Its second file, runner_snapshot.py (the snapshot, the checks against it, the tests' source-only
# finder), is copied beside it as beyondswe_runner_snapshot.py and loaded by its path (step 2).
# It reads its configuration from stdin (never from a file the tests could find), and writes one
# JSON event per line to the inherited pipe FD, which only the root verifier reads:
#   {"e": "start"}, {"e": "collected", ...}, {"e": "collect_error", ...}, {"e": "report", ...},
#   {"e": "finding", "kind": ..., "detail": ..., "proof": bool}, {"e": "end", "exit": N}
# Order of work, so the repository cannot get in first:
#   1. an audit hook (sys.addaudithook, cannot be removed) that refuses and reports code writes on
#      pytest, pluggy, unittest and the test modules, forged code for trusted files, and opens of
#      the grader's private paths, and reports gc / ctypes / tracing / marshal use by repository code;
#   2. the second file is loaded by its path in this file's directory (never through sys.path)
#      as the module beyondswe_runner_snapshot, guarded from here on as this file is;
#   3. every path of the repository is taken off sys.path, then pytest, pluggy, pytest's built-in
#      plugins and the allowed third-party plugins are imported from the clean interpreter;
#   4. a snapshot of every function and class of those modules and of the runner's own two
#      modules (identity and code);
#   5. the repository paths are put back explicitly, then the image's PYTHONPATH (from the prepare
#      step's record, never from the submission), and pytest runs with plugin autoloading off;
#   6. after collection and at the end the snapshot is compared: a changed function is proof;
#      between, after a test's teardown at most every 20 ms, a fingerprint of the critical
#      modules (read in C loops, no audit event per object) sends it to the same comparison.
# Reports leave in one write per test, with its call's report (passed setups and teardowns wait).
# Python 3.6+, standard library plus pytest. Audit hooks need 3.8+ (without them, step 1 is skipped
# and reported).
import json
import os
import sys
import time

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any  # noqa: F401

_T0 = time.time()
_FD = int(sys.argv[1])
os.set_inheritable(_FD, False)
_CONFIG = json.loads(sys.stdin.read())
sys.stdin.close()
_REPO = [os.path.realpath(p) for p in _CONFIG.get("repo_paths", [])]
_PRIVATE = [os.path.realpath(p) for p in _CONFIG.get("private_paths", [])]
# Resolved by the verifier (root) before this process started: nothing of the test user ran in
# between, and resolving thousands of them here, cold, costs more than the runner's start-up.
_TESTS = [os.path.normpath(p) for p in _CONFIG.get("test_paths", []) if p]
_PROTECTED = tuple(_CONFIG.get("protected_modules", ["pytest", "_pytest", "pluggy"]))
_SELF = os.path.realpath(__file__)
# The second file: one fixed module name, loaded from this file's own directory only.
_SNAPSHOT_NAME = "beyondswe_runner_snapshot"
_SNAPSHOT_FILE = os.path.realpath(os.path.join(os.path.dirname(_SELF), _SNAPSHOT_NAME + ".py"))
_OWN_FILES = (_SELF, _SNAPSHOT_FILE)
_MAX_EVENT = 64 * 1024


def _encode(event):
    data = (json.dumps(event, ensure_ascii=True) + "\n").encode("ascii")
    if len(data) > _MAX_EVENT:
        event = dict((k, (v[:4000] if isinstance(v, str) else v)) for k, v in event.items())
        data = (json.dumps(event, ensure_ascii=True) + "\n").encode("ascii")
    return data


def _write(data):
    view = memoryview(data)
    while view:
        try:
            n = os.write(_FD, view)
        except InterruptedError:
            continue
        except OSError:
            return
        view = view[n:]


# Passed setup and teardown reports wait here for the next report that is sent at once (a call's,
# a failure's, a finding, the end): one write per test instead of three, each of which woke the
# verifier's reader. A crash can lose only passed setups and teardowns, which decide nothing:
# a test's outcome is its call's unless a setup or teardown did not pass.
_pending = []  # type: list
_PENDING_MAX = 32 * 1024


def _flush():
    if _pending:
        data = b"".join(_pending)
        del _pending[:]
        _write(data)


def _send(event, hold=False):
    _pending.append(_encode(event))
    if hold and sum(map(len, _pending)) < _PENDING_MAX:
        return
    _flush()


_reported = set()  # type: set


def _finding(kind, detail, proof):
    key = (kind, detail)
    if key in _reported or len(_reported) > 500:
        return
    _reported.add(key)
    _send({"e": "finding", "kind": kind, "detail": str(detail)[:2000], "proof": bool(proof)})


def _under(path, roots):
    if not path:
        return False
    for r in roots:
        if path == r or path.startswith(r + os.sep):
            return True
    return False


_TESTS_SET = frozenset(_TESTS)
_TESTS_PREFIXES = tuple(p + os.sep for p in _TESTS)


def _under_tests(path):
    """_under(path, _TESTS) for thousands of test files: a set and one C-level prefix check."""
    return bool(path) and (path in _TESTS_SET or path.startswith(_TESTS_PREFIXES))


# Files and directories that belong to the clean interpreter: the standard library and every
# sys.path entry outside the repository at start-up. Code from anywhere else is "repository code".
_TRUSTED = []
for _p in sys.path:
    if not _p:
        continue
    _rp = os.path.realpath(_p)
    if not _under(_rp, _REPO) and not _under_tests(_rp):
        _TRUSTED.append(_rp)
_TRUSTED.append(os.path.dirname(_SELF))
_TRUSTED_PREFIXES = tuple(p.rstrip(os.sep) + os.sep for p in _TRUSTED if p != os.sep and
                          not any(_under(q, [p]) for q in _PRIVATE))
_real_cache = {}  # type: dict


def _real(filename):
    r = _real_cache.get(filename)
    if r is None:
        if filename.startswith("<"):
            r = filename
        else:
            try:
                r = os.path.realpath(filename)
            except Exception:  # noqa: BLE001
                r = filename
        if len(_real_cache) < 100000:
            _real_cache[filename] = r
    return r


def _is_trusted_file(filename):
    """Code from the clean interpreter or from the restored tests; not from the repository."""
    if filename.startswith("<frozen"):
        return True
    real = _real(filename)
    return _under_tests(real) or (not _under(real, _REPO) and _under(real, _TRUSTED))


def _untrusted_caller(depth=2):
    """The file of the first frame above the hook that is not trusted, or None."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return None
    fn = frame.f_code.co_filename
    return None if _is_trusted_file(fn) else fn


# Objects whose code the tests' outcomes depend on; filled in by the snapshot (step 4).
_guarded_ids = set()  # type: set
_in_hook = [False]
_WATCH = frozenset([
    "object.__setattr__", "object.__delattr__", "code.__new__", "compile", "open",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.settrace", "sys.setprofile",
    "ctypes.cdata", "ctypes.string_at", "ctypes.wstring_at", "ctypes.addressof",
    "ctypes.dlsym", "marshal.loads", "marshal.load", "sys.addaudithook",
])
# Files of pytest, pluggy and the like (filled in once they are imported).
_GUARDED_ROOTS = []


def _guarded_file(filename):
    """The grader's, pytest's and the tests' own files: nobody may mint code in their name."""
    real = _real(filename)
    return real in _OWN_FILES or _under_tests(real) or _under(real, _GUARDED_ROOTS)


def _audit(event, args):
    if event not in _WATCH or _in_hook[0]:
        return
    _in_hook[0] = True
    try:
        _check(event, args)
    finally:
        _in_hook[0] = False


class _Refused(RuntimeError):
    pass


# Events that make code in a file's name: what the finding says, what the refusal says.
_FORGING = {
    "code.__new__": ("%s made a code object claiming to be %s",
                     "beyondswe: code objects may not claim the grader's or the tests' files"),
    "compile": ("%s compiled code as %s",
                "beyondswe: code may not be compiled as the grader's or the tests' files"),
}


def _check(event, args):
    if event == "open":
        path = args[0]
        if isinstance(path, bytes):
            path = path.decode("utf-8", "replace")
        # The interpreter's own directories are root's: no link to the grader's files can be
        # planted there, so the common case (imports) skips resolving the path.
        if not isinstance(path, str) or path.startswith(_TRUSTED_PREFIXES):
            return
        if _under(_real(path), _PRIVATE):
            caller = _untrusted_caller(3)
            _finding("private_open", "%s opened the grader's private path %s" % (caller or "code", path), False)
            raise PermissionError("beyondswe: the grader's files are private")
        return
    if event in ("object.__setattr__", "object.__delattr__"):
        obj = args[0]
        if id(obj) in _guarded_ids or _code_of_guarded(obj):
            caller = _untrusted_caller(3)
            if caller is not None:
                _finding("code_write", "%s changed %s.%s" % (caller, _describe(obj), args[1]), True)
                raise _Refused("beyondswe: the grader's and the tests' code is read-only")
        return
    if event in _FORGING:
        # Both events carry the file name second. A "<...>" name is never a guarded file (those
        # are absolute paths), so it is not resolved.
        filename = args[1] if len(args) > 1 else ""
        if isinstance(filename, bytes):
            filename = filename.decode("utf-8", "replace")
        if isinstance(filename, str) and not filename.startswith("<") and _guarded_file(filename):
            caller = _untrusted_caller(3)
            if caller is not None:
                what, refusal = _FORGING[event]
                _finding("forged_code", what % (caller, filename), True)
                raise _Refused(refusal)
        return
    if event == "sys.addaudithook":
        caller = _untrusted_caller(3)
        if caller is not None:
            _finding("audit_hook", "%s added an audit hook" % caller, False)
        return
    # gc, ctypes, tracing, marshal: evidence for a person, not proof.
    caller = _untrusted_caller(3)
    if caller is not None:
        _finding(event.replace(".", "_"), "%s called %s" % (caller, event), False)


def _describe(obj):
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    mod = getattr(obj, "__module__", "") or ""
    return "%s.%s" % (mod, name) if mod else str(name)


def _code_of_guarded(obj):
    code = getattr(obj, "__code__", None)
    if code is None or not isinstance(getattr(code, "co_filename", None), str):
        return False
    return _guarded_file(code.co_filename)


_AUDIT = hasattr(sys, "addaudithook")
if _AUDIT:
    sys.addaudithook(_audit)

# Step 2: the second file, by its absolute path; registered before it runs, as an import would.
# What it imports is built in, or loaded by now, or importlib.machinery (from importlib's directory).
import importlib.util  # noqa: E402

_rs_spec = importlib.util.spec_from_file_location(_SNAPSHOT_NAME, _SNAPSHOT_FILE)
if _rs_spec is None or _rs_spec.loader is None:
    raise ImportError("beyondswe: no %s" % _SNAPSHOT_FILE)
_rs = importlib.util.module_from_spec(_rs_spec)
sys.modules[_SNAPSHOT_NAME] = _rs
_rs_spec.loader.exec_module(_rs)

# Step 3: no repository path while pytest and its plugins are imported.
_removed = []
for _i, _p in enumerate(list(sys.path)):
    if not _p or _under(os.path.realpath(_p), _REPO) or _under_tests(os.path.realpath(_p)):
        _removed.append((_i, _p))
for _i, _p in reversed(_removed):
    del sys.path[_i]
for _name in list(sys.modules):
    _m = sys.modules.get(_name)
    _f = getattr(_m, "__file__", None)
    if _f and (_under(os.path.realpath(_f), _REPO) or _under_tests(os.path.realpath(_f))):
        # Imported during start-up from the repository (a .pth of the image's editable install).
        del sys.modules[_name]

sys.argv = ["pytest"]
import pytest  # noqa: E402
import _pytest  # noqa: E402,F401 - imported before any repository path, for the snapshot
import pluggy  # noqa: E402,F401

try:
    from _pytest.config import default_plugins as _DEFAULT_PLUGINS
except Exception:  # noqa: BLE001
    _DEFAULT_PLUGINS = ()
for _name in _DEFAULT_PLUGINS:
    try:
        importlib.import_module("_pytest." + _name)
    except Exception:  # noqa: BLE001 - an optional built-in plugin may be missing in old pytest
        pass
# Standard-library modules pytest imports late (the rest it imports itself by now).
for _name in ("unittest", "unittest.case", "unittest.result", "unittest.suite", "doctest", "pdb",
              "inspect", "traceback", "ast", "tokenize", "xml.etree.ElementTree", "difflib", "pprint"):
    try:
        importlib.import_module(_name)
    except Exception:  # noqa: BLE001
        pass

# No bytecode for the tests: a test module, a conftest or a helper under the test directories is
# compiled from its locked source every time it is imported. pytest's rewrite cache and Python's
# own are both looked for where `sys.pycache_prefix` points, which code of the submission can set
# at run time to a directory of its own; neither is read now. And pytest's capture files go to
# the memory file system the grader mounted, when it did (testrun.py). Both writes are pytest's
# functions before the snapshot, so undoing either is a change the snapshot sees.
sys.dont_write_bytecode = True
_CAPTURE_IN_MEMORY = False
try:
    import tempfile  # noqa: E402
    from _pytest.assertion import rewrite as _rewrite

    def _read_pyc(*_args, **_kwargs):
        """pytest's rewrite cache, never read: the module is rewritten from its source."""
        return None

    def _capture_file(*args, **kwargs):  # type: (Any, Any) -> Any
        kwargs.setdefault("dir", _CONFIG["capture_dir"])
        return tempfile.TemporaryFile(*args, **kwargs)

    _rewrite._read_pyc = _read_pyc
    if _CONFIG.get("capture_dir") and os.access(_CONFIG["capture_dir"], os.W_OK):
        from _pytest import capture as _capture
        _capture.TemporaryFile, _CAPTURE_IN_MEMORY = _capture_file, True
except Exception:  # noqa: BLE001 - a pytest without assertion rewriting reads no cache of its own
    pass
import importlib.machinery  # noqa: E402

# Python's path finder, but a module found under the test directories is compiled from its source.
sys.meta_path.insert(sys.meta_path.index(importlib.machinery.PathFinder)
                     if importlib.machinery.PathFinder in sys.meta_path else len(sys.meta_path),
                     _rs.TestSourceFinder(_real, _under_tests))

# Allowed third-party plugins: those the clean image had before the submission (computed by the
# verifier). Those living outside the repository are imported now; the rest after the paths return.
_late_plugins = []
_plugins = []
for _spec in _CONFIG.get("plugins", []):
    _mod = _spec.get("module")
    if not _mod:
        continue
    try:
        _plugins.append((_spec.get("name") or _mod, importlib.import_module(_mod)))
    except Exception:  # noqa: BLE001 - may live in the repository
        _late_plugins.append(_spec)


# The recorder and main are defined before the snapshot, so that it holds them too: a test that
# replaced one of them (the report's message, the plugin's hooks) would be found like any change
# to pytest. They run only after the repository's paths are back.
_CHECK_EVERY_S = 0.02


class Recorder(object):
    """Sends every report as it happens; keeps nothing the verifier trusts."""

    def __init__(self):
        self.config = None
        self.checked_at = 0.0

    def pytest_configure(self, config):  # type: (Any) -> None
        self.config = config

    def pytest_collectreport(self, report):  # type: (Any) -> None
        if report.failed:
            _send({"e": "collect_error", "nodeid": report.nodeid, "message": _short(report)})

    def pytest_collection_finish(self, session):  # type: (Any) -> None
        _CHECKS.take_hooks(self.config)
        plugins = []
        for plugin in self.config.pluginmanager.get_plugins():
            f = getattr(plugin, "__file__", None) or getattr(type(plugin), "__module__", "")
            plugins.append(str(f))
        _send({"e": "collected", "count": len(session.items), "plugins": sorted(plugins)[:200]})
        _CHECKS.after_collection()

    def pytest_runtest_logreport(self, report):  # type: (Any) -> None
        xfail = getattr(report, "wasxfail", None) is not None
        # A passed setup or teardown waits for the next call's report, which goes out at once
        # with it, as does any report of something that did not pass.
        _send({"e": "report", "nodeid": report.nodeid, "when": report.when,
               "outcome": report.outcome, "xfail": xfail,
               "message": _short(report) if report.outcome == "failed" else ""},
              hold=report.when != "call" and report.outcome == "passed")
        if report.when == "teardown":
            # A change made and undone within one test is past by its teardown whenever the
            # check runs; what it can find is a change held across tests, which it finds just as
            # well every CHECK_EVERY_S. Collection's end and the session's end check everything.
            now = time.monotonic()
            if now - self.checked_at < _CHECK_EVERY_S:
                return
            self.checked_at = now
            _CHECKS.between_tests("after " + report.nodeid)

    def pytest_sessionfinish(self, session, exitstatus):  # type: (Any, Any) -> None
        _CHECKS.at_end()


def _short(report):
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    if crash is not None and _CONFIG.get("short_messages"):
        return str(getattr(crash, "message", ""))[-2000:]
    try:
        text = str(report.longrepr)
    except Exception:  # noqa: BLE001 - a broken repr must not stop recording
        text = "<unprintable failure>"
    if _CONFIG.get("short_messages"):
        return text.strip().splitlines()[-1][-500:] if text.strip() else ""
    return text[-2000:]


def main():  # type: () -> None
    _send({"e": "start", "audit_hook": _AUDIT, "python": sys.version.split()[0],
           "ready_s": round(time.time() - _T0, 3), "capture_in_memory": _CAPTURE_IN_MEMORY,
           "pytest": getattr(pytest, "__version__", "?"), "removed_paths": [p for _, p in _removed]})
    recorder = Recorder()
    args = list(_CONFIG.get("args", [])) + list(_CONFIG.get("ids", []))
    if any(getattr(m, "__name__", "").split(".", 1)[0] == "pytest_mock" for _, m in _plugins):
        # pytest-mock would wrap unittest.mock's assert methods for nicer messages: the snapshot
        # keeps unittest.mock as it was, so it is told not to (the assertions still assert).
        args = ["-o", "mock_traceback_monkeypatch=false"] + args
    code = 3
    try:
        code = int(pytest.main(args, plugins=[recorder] + [m for _, m in _plugins]))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # noqa: BLE001
        _finding("runner_crashed", repr(exc), False)
    _send({"e": "end", "exit": code, "elapsed_s": round(time.time() - _T0, 3)})
    # End now: no atexit handler or finalizer of the code under test runs after the last event.
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001
        pass
    os._exit(code & 0xFF)


for _name in _PROTECTED:
    _f = getattr(sys.modules.get(_name), "__file__", None)
    if _f:
        _f = os.path.realpath(_f)
        _GUARDED_ROOTS.append(os.path.dirname(_f) if os.path.basename(_f) == "__init__.py" else _f)
# Step 4: the snapshot, of pytest, pluggy, unittest and the runner's own two modules.
_SNAP = _rs.snapshot(_rs.guarded_module_names(_PROTECTED + ("unittest",), ("__main__", _SNAPSHOT_NAME)),
                     _guarded_ids)
_CRITICAL_MODULES = ("_pytest.python", "_pytest.runner", "_pytest.reports", "_pytest.unittest",
                     "_pytest.main", "_pytest.nodes", "_pytest.skipping", "_pytest.outcomes",
                     "_pytest.junitxml", "pluggy._hooks", "pluggy._callers", "pluggy._manager",
                     "pluggy._result", "pluggy.callers", "pluggy.hooks", "pluggy.manager",
                     "unittest.case", "unittest.result", "__main__", _SNAPSHOT_NAME)
_CHECKS = _rs.Checks(_SNAP, _CRITICAL_MODULES, _finding)

# Step 5: the repository's paths back, explicitly.
for _i, _p in _removed:
    sys.path.insert(min(_i, len(sys.path)), _p)
# The image's own PYTHONPATH, where `python` would have put it at start-up: after the run's
# first paths (the workdir, as the official runner puts it first), before the standard library.
# Only now: `-I` kept it away from pytest's and the plugins' imports.
for _p in reversed(_CONFIG.get("prepend_paths", []) + _CONFIG.get("image_paths", [])):
    if _p in sys.path:
        sys.path.remove(_p)
    sys.path.insert(0, _p)


def _loads_from_repository(name):  # type: (str) -> bool
    """Whether `import name`, with the repository's paths back, would load it from the
    repository: the first finder of sys.meta_path that finds it finds it there."""
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        try:
            spec = find(name, None) if find is not None else None
        except Exception:  # noqa: BLE001 - a finder that fails finds nothing
            spec = None
        if spec is not None:
            where = [spec.origin or ""] + list(spec.submodule_search_locations or [])
            return any(_under(os.path.realpath(w), _REPO) for w in where if w and os.path.isabs(w))
    return False


# Step 5b: the project under test may be one of pytest's own dependencies (attrs for pytest 7,
# packaging, iniconfig): pytest imported the image's copy above, where plain pytest would have
# imported the repository's. Such a package is taken off sys.modules, so the tests and the
# plugins loaded below import the repository's, as they would under plain pytest; pytest keeps
# the copy it already holds and was snapshotted with. Only third-party packages (from a site
# directory) that the repository itself provides (the verifier's scrub removed every untracked
# module that would shadow one), never pytest, pluggy or the runner's own.
_SITE_MARKS = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)
_CORE = ("pytest", "_pytest", "pluggy", "py", "unittest", _SNAPSHOT_NAME, "beyondswe_pytest_runner")
_shadowed = set()
for _name, _m in list(sys.modules.items()):
    _top = _name.partition(".")[0]
    _f = getattr(_m, "__file__", None) or ""
    if _top in _CORE or not any(k in _f for k in _SITE_MARKS):
        continue
    _shadowed.add(_top)
for _top in sorted(_shadowed):
    if _loads_from_repository(_top):
        for _name in [n for n in sys.modules if n == _top or n.startswith(_top + ".")]:
            del sys.modules[_name]
        # Not the image's copy that the snapshot holds any more: the repository's, as any of its code.
        for _key in [k for k in _SNAP if k[0] == _top or k[0].startswith(_top + ".")]:
            del _SNAP[_key]
for _spec in _late_plugins:
    try:
        _plugins.append((_spec.get("name") or _spec["module"], importlib.import_module(_spec["module"])))
    except Exception as exc:  # noqa: BLE001
        _finding("plugin_unavailable", "%s: %r" % (_spec.get("module"), exc), False)

if __name__ == "__main__":
    main()
