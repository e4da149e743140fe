"""Unit tests of the `prepare` command (adapters/prepare.py) that need no container: on a
workdir without git, the record holds the image's environment, its interpreter and the clean
interpreter's facts, the interpreter that runs the verifier is written as "SHA256 PATH" beside
it, the state directory is root's only, and the verifier's files given are compiled ahead. The
places anyone can write are a stand-in here (a walk of the whole machine's filesystem: its own
tests are tests/test_disk.py)."""
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import files  # noqa: E402
from beyondswe_verifier import prepare  # noqa: E402


class Git(object):
    def available(self):
        return False


class Ctx(object):
    def __init__(self):
        self.git = Git()


class Args(object):
    def __init__(self, workdir, state_dir):
        self.workdir, self.base, self.state_dir, self.own_workdir = workdir, None, state_dir, "no"


class Prepare(unittest.TestCase):
    def test_the_record_the_interpreter_and_the_compiled_verifier(self):
        saved = prepare.disk.writable_roots
        prepare.disk.writable_roots = lambda: ["/tmp"]
        out = io.StringIO()
        saved_out, sys.stdout = sys.stdout, out
        try:
            root = tempfile.mkdtemp(prefix="bsw-prepare-")
            workdir, state = os.path.join(root, "w"), os.path.join(root, "state")
            os.mkdir(workdir)
            module = os.path.join(root, "beyondswe_x.py")
            with open(module, "w") as fh:
                fh.write("X = 1\n")
            code = prepare.prepare(Ctx(), Args(workdir, state), [module])
        finally:
            sys.stdout = saved_out
            prepare.disk.writable_roots = saved
        self.assertEqual(code, 0)
        with open(os.path.join(state, "prepare.json")) as fh:
            record = json.load(fh)
        self.assertEqual(record["writable_roots"], ["/tmp"])
        self.assertEqual(record["baseline_untracked"], {})
        self.assertIn("sys_path", record["clean"])
        self.assertEqual(record["plugins"], record["clean"]["plugins"])
        self.assertEqual(os.stat(state).st_mode & 0o777, 0o700)
        with open(os.path.join(state, prepare.VERIFIER_PYTHON)) as fh:
            sha, path = fh.read().split()
        me = os.path.realpath(sys.executable)
        self.assertEqual((sha, path), (files.file_sha256(me), me))
        self.assertTrue(os.listdir(os.path.join(root, "__pycache__")))
        self.assertIn("python", json.loads(out.getvalue()))


if __name__ == "__main__":
    unittest.main()
