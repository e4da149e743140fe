"""Unit tests of the static step (adapters/static_step.py) on a real git repository: the base's
baseline is read from its hash-checked objects, never from the workdir (a workdir file changed
after the base commit lends the baseline nothing), and its tests are left out of it."""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import gitobjects  # noqa: E402
from beyondswe_verifier import static_step  # noqa: E402


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


class Ctx(object):
    def __init__(self, repo, base):
        self.workdir = repo
        self.git = gitobjects.Git(repo)
        self.spec = {"base_commit": base}
        self.base_listing = None


class StaticBaseline(unittest.TestCase):
    def setUp(self):
        self.repo = tempfile.mkdtemp(prefix="bsw-static-")
        write(os.path.join(self.repo, "pkg", "native.py"), "import ctypes\nlib = ctypes.CDLL(None)\n")
        write(os.path.join(self.repo, "pkg", "plain.py"), "def f():\n    return 1\n")
        write(os.path.join(self.repo, "tests", "test_frames.py"), "import sys\n\ndef test_x():\n    sys._getframe(0)\n")

        # The machine's own git configuration (signing, hooks) stays out of it.
        env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")

        def git(*args):
            return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com"] + list(args),
                                  cwd=self.repo, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env).stdout.decode().strip()
        git("init", "-q")
        git("add", "-A")
        git("commit", "-q", "-m", "base")
        self.base = git("rev-parse", "HEAD")

    def test_the_baseline_comes_from_the_bases_objects_and_leaves_tests_out(self):
        # Changed in the workdir after the base (as an agent would): not the base's code.
        write(os.path.join(self.repo, "pkg", "plain.py"), "import gc\ngc.get_objects()\n")
        baseline = static_step.static_baseline(Ctx(self.repo, self.base))
        # The workdir's plain.py uses gc; the base's does not, and the test's frames are a test's.
        self.assertEqual(baseline, {"ctypes": "pkg/native.py:1"})

    def test_a_missing_base_gives_no_baseline(self):
        self.assertEqual(static_step.static_baseline(Ctx(self.repo, None)), {})


if __name__ == "__main__":
    unittest.main()
