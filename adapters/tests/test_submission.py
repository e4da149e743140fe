"""Unit tests of the submission module (adapters/submission.py): a diff captured in one copy of a
repository (the agent's container) applies in a fresh copy (the separate verifier's), a file the
image had untracked and the agent changed included. Needs git on PATH. Standard library only."""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import files  # noqa: E402
from beyondswe_verifier import gitobjects  # noqa: E402
from beyondswe_verifier import submission  # noqa: E402

HAS_GIT = shutil.which("git") is not None


class Ctx(object):
    """What capture_submission and step_apply read of the verifier's context."""

    def __init__(self, workdir, spec, state):
        self.workdir = workdir
        self.spec = dict(spec, workdir=workdir)
        self.state = state
        self.git = gitobjects.Git(workdir)
        self.facts = {"flags": {}, "timings": {}}
        self.base_listing = None
        self.algo_len = 40
        self.applied_paths = []

    @property
    def flags(self):
        return self.facts["flags"]

    def timed(self, name, since):
        self.facts["timings"][name] = time.time() - since


def write(root, rel, data):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)


@unittest.skipUnless(HAS_GIT, "no git")
class CollectedDiff(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.image = os.path.join(self.tmp, "image")
        os.makedirs(self.image)
        write(self.image, "pkg/core.py", b"def f():\n    return 1\n")
        write(self.image, ".gitignore", b"*.egg-info/\n")
        self.git("init", "-q")
        self.git("add", "-A")
        self.git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base")
        self.base = self.git("rev-parse", "HEAD").strip()
        # What the image's own install left, untracked and ignored; the prepare step's record.
        write(self.image, "pkg.egg-info/SOURCES.txt", b"pkg/core.py\n")
        self.state = {"baseline_untracked": {
            "pkg.egg-info/SOURCES.txt": files.file_sha256(os.path.join(self.image, "pkg.egg-info/SOURCES.txt"))}}

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def git(self, *args):
        return subprocess.run(["git"] + list(args), cwd=self.image, check=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE).stdout.decode()

    def copy(self, name):
        dest = os.path.join(self.tmp, name)
        shutil.copytree(self.image, dest, symlinks=True)
        return dest

    def agent_diff(self):
        """The agent changes a tracked file, adds one, and rebuilds the image's egg-info."""
        agent = self.copy("agent")
        write(agent, "pkg/core.py", b"def f():\n    return 2\n")
        write(agent, "pkg/new.py", b"X = 1\n")
        write(agent, "pkg.egg-info/SOURCES.txt", b"pkg/core.py\npkg/new.py\n")
        diff = os.path.join(self.tmp, "submission.diff")
        ctx = Ctx(agent, {"base_commit": self.base}, self.state)
        self.assertGreater(submission.capture_submission(ctx, diff), 0)
        return diff

    def test_the_agents_work_applies_in_a_fresh_copy(self):
        diff = self.agent_diff()
        fresh = self.copy("fresh")
        ctx = Ctx(fresh, {"base_commit": self.base, "patch": diff, "collected": True}, self.state)
        self.assertTrue(submission.step_apply(ctx), ctx.facts)
        with open(os.path.join(fresh, "pkg/core.py"), "rb") as fh:
            self.assertEqual(fh.read(), b"def f():\n    return 2\n")
        with open(os.path.join(fresh, "pkg.egg-info/SOURCES.txt"), "rb") as fh:
            self.assertEqual(fh.read(), b"pkg/core.py\npkg/new.py\n")
        self.assertEqual(ctx.flags["image_files_replaced"], ["pkg.egg-info/SOURCES.txt"])

    def test_a_patch_not_collected_is_applied_as_it_is(self):
        # The offline grader's rule for a submitted patch: `git apply` alone, as the official
        # evaluator applies it; the image's file stays and the patch does not apply.
        diff = self.agent_diff()
        fresh = self.copy("fresh")
        ctx = Ctx(fresh, {"base_commit": self.base, "patch": diff}, self.state)
        self.assertFalse(submission.step_apply(ctx))
        self.assertNotIn("image_files_replaced", ctx.flags)

    def test_only_the_images_own_unchanged_copy_makes_way(self):
        diff = self.agent_diff()
        fresh = self.copy("fresh")
        write(fresh, "pkg.egg-info/SOURCES.txt", b"not what the image had\n")
        ctx = Ctx(fresh, {"base_commit": self.base, "patch": diff, "collected": True}, self.state)
        self.assertFalse(submission.step_apply(ctx))
        with open(os.path.join(fresh, "pkg.egg-info/SOURCES.txt"), "rb") as fh:
            self.assertEqual(fh.read(), b"not what the image had\n")


if __name__ == "__main__":
    unittest.main()
