"""Unit tests of the runner (adapters/pytest_runner.py) without pytest: it is started as the
verifier starts it (configuration on stdin, events on an inherited pipe), with a stand-in pytest
package whose `main` imports a module of the repository. What that module does from inside the
tested process is what the runner's audit hook sees: opening the grader's private path and
rewriting the code of pytest's functions are refused and reported on the pipe, and the run's start and end (with
pytest's exit code) are reported around them."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = os.path.join(HERE, "beyondswe_verifier", "pytest_runner.py")

STAND_IN = '''
__version__ = "0.0-stand-in"


def main(args, plugins=None):
    import importlib
    importlib.import_module("repo_code")
    return 0
'''

REPO_CODE = '''
import pytest

try:
    open(%(secret)r).read()
    print("READ THE SECRET")
except PermissionError:
    pass
try:
    pytest.main.__code__ = (lambda *a, **k: 0).__code__
    print("REWROTE PYTEST")
except RuntimeError:
    pass
'''


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


@unittest.skipIf(sys.version_info < (3, 8), "audit hooks need Python 3.8")
class Runner(unittest.TestCase):
    def run_runner(self):
        root = tempfile.mkdtemp(prefix="bsw-runner-test-")
        stub, repo, private = (os.path.join(root, d) for d in ("stub", "repo", "private"))
        write(os.path.join(stub, "pytest", "__init__.py"), STAND_IN)
        write(os.path.join(stub, "_pytest", "__init__.py"), "")
        write(os.path.join(stub, "pluggy", "__init__.py"), "")
        secret = os.path.join(private, "key")
        write(secret, "s3cret")
        write(os.path.join(repo, "repo_code.py"), REPO_CODE % {"secret": secret})
        config = {"args": [], "ids": [], "repo_paths": [repo], "private_paths": [private],
                  "test_paths": [], "protected_modules": ["pytest", "_pytest", "pluggy"]}
        r, w = os.pipe()
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join([stub, repo])}
        proc = subprocess.Popen([sys.executable, RUNNER, str(w)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(w,),
                                cwd=root, env=env)
        os.close(w)
        out, err = proc.communicate(json.dumps(config).encode(), timeout=60)
        with os.fdopen(r, "rb") as fh:
            events = [json.loads(line) for line in fh.read().splitlines() if line.strip()]
        return proc.returncode, out.decode(), err.decode(), events

    def test_the_run_is_reported_and_forging_from_the_repository_refused(self):
        code, out, err, events = self.run_runner()
        self.assertEqual(code, 0, err)
        kinds = [e["e"] for e in events]
        self.assertEqual(kinds[0], "start", events)
        self.assertEqual(events[-1], {"e": "end", "exit": 0, "elapsed_s": events[-1]["elapsed_s"]})
        findings = dict((e["kind"], e) for e in events if e["e"] == "finding")
        self.assertIn("private_open", findings, events)
        self.assertNotIn("READ THE SECRET", out)
        self.assertIn("code_write", findings, events)
        self.assertNotIn("REWROTE PYTEST", out)
        self.assertTrue(findings["code_write"]["proof"], findings)
        self.assertIn("repo_code.py", findings["code_write"]["detail"])


if __name__ == "__main__":
    unittest.main()
