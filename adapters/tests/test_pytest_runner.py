"""Unit tests of the runner (adapters/beyondswe_verifier/pytest_runner.py and its second file,
runner_snapshot.py) without pytest: both are copied into a run directory under the names the
verifier gives them (testrun.RUNNER_FILES) and the runner is started as the verifier starts it
(configuration on stdin, events on an inherited pipe), with a stand-in pytest package whose `main`
drives the runner's plugin as pytest would and imports a module of the repository. What that
module does from inside the tested process is what the runner sees: opening the grader's private
path, rewriting the code of pytest's or the runner's own functions and compiling code in the
runner's files' names are refused by the audit hook (3.8+) and reported on the pipe; functions of
pytest and of both runner files replaced, and hook implementations changed, are found by the
checks against the snapshot (any Python); and the run's start and end (with pytest's exit code)
are reported around them. The runner loads its second file from beside itself only."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)
from beyondswe_verifier import testrun  # noqa: E402

PACKAGE = os.path.join(HERE, "beyondswe_verifier")

STAND_IN = '''
__version__ = "0.0-stand-in"


def helper():
    return 1


class Impl(object):
    def __init__(self, plugin_name, function):
        self.plugin_name, self.function = plugin_name, function


class Caller(object):
    impls = [Impl("builtin", helper)]

    def get_hookimpls(self):
        return list(self.impls)


class Hook(object):
    pytest_runtest_call = Caller()


class PluginManager(object):
    hook = Hook()

    def __init__(self, plugins):
        self.plugins = plugins

    def get_plugins(self):
        return self.plugins


class Config(object):
    def __init__(self, plugins):
        self.pluginmanager = PluginManager(plugins)


class Session(object):
    items = []


class Report(object):
    def __init__(self, nodeid, when):
        self.nodeid, self.when, self.outcome, self.failed, self.longrepr = nodeid, when, "passed", False, None


def main(args, plugins=None):
    import importlib
    recorder = plugins[0]
    recorder.pytest_configure(Config(plugins))
    recorder.pytest_collection_finish(Session())
    importlib.import_module("repo_code")
    for when in ("setup", "call", "teardown"):
        recorder.pytest_runtest_logreport(Report("t.py::t", when))
    recorder.pytest_sessionfinish(Session(), 0)
    return 0
'''

# Refused by the audit hook (3.8+).
FORGING = '''
import sys
import pytest

try:
    open(%(secret)r).read()
    print("READ THE SECRET")
except PermissionError:
    pass
for target in (pytest.main, sys.modules["beyondswe_runner_snapshot"].compare,
               sys.modules["beyondswe_runner_snapshot"].Fingerprint.moved):
    try:
        target.__code__ = (lambda *a, **k: []).__code__
        print("REWROTE", target.__name__)
    except RuntimeError:
        pass
for own in (sys.modules["__main__"].__file__, sys.modules["beyondswe_runner_snapshot"].__file__):
    try:
        compile("x = 1", own, "exec")
        print("FORGED", own)
    except RuntimeError:
        pass
'''

# Seen by the checks against the snapshot (any Python): a module's function replaced is no code
# write the audit hook sees. The replacements behave as the originals do.
REPLACING = '''
import sys
import pytest

snapshot = sys.modules["beyondswe_runner_snapshot"]
runner = sys.modules["__main__"]
snapshot.func_of = (lambda f: lambda value: f(value))(snapshot.func_of)
runner._describe = (lambda f: lambda obj: f(obj))(runner._describe)
runner._short = (lambda f: lambda report: f(report))(runner._short)
pytest.helper = lambda: 2
pytest.Caller.impls.append(pytest.Impl("repo", print))
'''


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


class Runner(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="bsw-runner-test-")
        self.addCleanup(shutil.rmtree, self.root, True)

    def run_runner(self, repo_code, files=testrun.RUNNER_FILES, config_extra=None, stubs=None):
        """The runner started from a run directory holding `files` (name there, file of the
        package), as testrun.run_tests lays them out; `config_extra` added to its configuration,
        `stubs` ({path under the stand-in's directory: text}) added to the stand-in pytest."""
        stub, repo, private, run = (os.path.join(self.root, d) for d in ("stub", "repo", "private", "run"))
        write(os.path.join(stub, "pytest", "__init__.py"), STAND_IN)
        write(os.path.join(stub, "_pytest", "__init__.py"), "")
        write(os.path.join(stub, "pluggy", "__init__.py"), "")
        for rel, text in (stubs or {}).items():
            write(os.path.join(stub, rel), text)
        # A module of the second file's name on sys.path: never the one the runner loads.
        write(os.path.join(stub, "beyondswe_runner_snapshot.py"), "raise SystemExit('loaded through sys.path')\n")
        secret = os.path.join(private, "key")
        write(secret, "s3cret")
        write(os.path.join(repo, "repo_code.py"), repo_code % {"secret": secret})
        os.mkdir(run)
        for name, source in files:
            shutil.copyfile(os.path.join(PACKAGE, source), os.path.join(run, name))
            os.chmod(os.path.join(run, name), 0o644)
        config = {"args": [], "ids": [], "repo_paths": [repo], "private_paths": [private],
                  "test_paths": [], "protected_modules": ["pytest", "_pytest", "pluggy"]}
        config.update(config_extra or {})
        r, w = os.pipe()
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join([stub, repo])}
        proc = subprocess.Popen([sys.executable, os.path.join(run, testrun.RUNNER_NAME), str(w)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                pass_fds=(w,), cwd=self.root, env=env)
        os.close(w)
        out, err = proc.communicate(json.dumps(config).encode(), timeout=60)
        with os.fdopen(r, "rb") as fh:
            events = [json.loads(line) for line in fh.read().splitlines() if line.strip()]
        return proc.returncode, out.decode(), err.decode(), events

    def assert_started_and_ended(self, code, err, events):
        self.assertEqual(code, 0, err)
        self.assertEqual(events[0]["e"], "start", events)
        self.assertEqual(events[0]["audit_hook"], sys.version_info >= (3, 8), events[0])
        self.assertEqual(events[-1], {"e": "end", "exit": 0, "elapsed_s": events[-1]["elapsed_s"]})

    @unittest.skipIf(sys.version_info < (3, 8), "audit hooks need Python 3.8")
    def test_the_run_is_reported_and_forging_from_the_repository_refused(self):
        code, out, err, events = self.run_runner(FORGING)
        self.assert_started_and_ended(code, err, events)
        findings = {}
        for e in events:
            if e["e"] == "finding":
                findings.setdefault(e["kind"], []).append(e)
        self.assertIn("private_open", findings, events)
        self.assertNotIn("READ THE SECRET", out)
        # pytest's function and the second file's, a module function and a class's method.
        self.assertEqual(len(findings.get("code_write", [])), 3, events)
        self.assertNotIn("REWROTE", out)
        for f in findings["code_write"]:
            self.assertTrue(f["proof"], f)
            self.assertIn("repo_code.py", f["detail"])
        forged = " ".join(f["detail"] for f in findings.get("forged_code", []))
        self.assertIn(testrun.RUNNER_NAME, forged, events)
        self.assertIn("beyondswe_runner_snapshot.py", forged, events)
        self.assertNotIn("FORGED", out)
        # Nothing the runner does itself is a finding.
        self.assertEqual(sorted(findings), ["code_write", "forged_code", "private_open"], events)

    def test_replaced_functions_of_pytest_and_of_both_runner_files_are_found(self):
        code, out, err, events = self.run_runner(REPLACING)
        self.assert_started_and_ended(code, err, events)
        details = [(e["kind"], e["detail"], e["proof"]) for e in events if e["e"] == "finding"]
        self.assertEqual(details, [
            # Between tests: the critical modules' fingerprint moved (both runner files are among
            # them), and the hooks are compared at every check.
            # _short is defined before the snapshot too, with the recorder and main.
            ("integrity", "after t.py::t: changed __main__._describe, __main__._short, "
                          "beyondswe_runner_snapshot.func_of", True),
            ("hooks", "after t.py::t: implementations of pytest_runtest_call changed", True),
            # At the end every module of the snapshot; what was reported is not again.
            ("integrity", "at session end: changed pytest.helper", True),
        ], events)
        kinds = [e["e"] for e in events]
        self.assertEqual(kinds.count("collected"), 1, events)
        self.assertEqual(kinds.count("report"), 3, events)

    def test_an_honest_run_has_no_finding(self):
        code, out, err, events = self.run_runner("import pytest\n")
        self.assert_started_and_ended(code, err, events)
        self.assertEqual([e for e in events if e["e"] == "finding"], [])

    def test_capture_files_go_where_the_verifier_says_a_memory_file_system_is(self):
        """With `capture_dir` given (the verifier saw the grader's tmpfs mounted), pytest's
        capture files are made there; without it, pytest's own function is left as it is."""
        stubs = {os.path.join("_pytest", "assertion", "__init__.py"): "",
                 os.path.join("_pytest", "assertion", "rewrite.py"): "def _read_pyc(*a):\n    return 'cache'\n",
                 os.path.join("_pytest", "capture.py"): "from tempfile import TemporaryFile\n"}
        probe = ("import os, _pytest.capture\n"
                 "f = _pytest.capture.TemporaryFile()\n"
                 "where = os.readlink('/proc/self/fd/' + str(f.fileno()))\n"
                 "print('CAPTURE', _pytest.capture.TemporaryFile.__name__, where)\n")
        where = os.path.join(self.root, "mem")
        os.mkdir(where)
        code, out, err, events = self.run_runner(probe, config_extra={"capture_dir": where}, stubs=stubs)
        self.assert_started_and_ended(code, err, events)
        self.assertTrue(events[0]["capture_in_memory"], events[0])
        self.assertIn("CAPTURE _capture_file " + where + "/", out)
        self.assertEqual([e for e in events if e["e"] == "finding"], [], "the write is no finding")
        self.setUp()
        code, out, err, events = self.run_runner(probe, stubs=stubs)
        self.assert_started_and_ended(code, err, events)
        self.assertFalse(events[0]["capture_in_memory"], events[0])
        self.assertIn("CAPTURE TemporaryFile ", out)
        self.assertNotIn(where, out)

    def test_the_second_file_is_loaded_from_beside_the_runner_only(self):
        """Without it in the run directory the runner does not start, though a module of its
        name is on sys.path."""
        code, out, err, events = self.run_runner("import pytest\n", files=testrun.RUNNER_FILES[:1])
        self.assertNotEqual(code, 0)
        self.assertEqual(events, [])
        self.assertIn("beyondswe_runner_snapshot.py", err)
        self.assertNotIn("loaded through sys.path", err)


if __name__ == "__main__":
    unittest.main()
