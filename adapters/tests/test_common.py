"""Unit tests of what the verifier's modules share (adapters/common.py): a log's tail keeps its
end and says how much was cut; a step's error carries its reason; the modules import each other
only relatively, and the entry point runs the package from its own directory whatever else is on
sys.path; and a process's start time is read from /proc."""
import ast
import glob
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import common  # noqa: E402


class Common(unittest.TestCase):
    def test_a_tail_keeps_the_end_and_says_what_was_cut(self):
        self.assertEqual(common.tail(None), "")
        self.assertEqual(common.tail(b"ok \xff"), "ok \ufffd")
        cut = common.tail("a" * 10 + "END", n=3)
        self.assertEqual(cut, "[... 10 chars cut]\nEND")

    def test_a_step_error_names_its_reason(self):
        err = common.VerifyError("patch_failed", "did not apply", infrastructure=False)
        self.assertEqual((err.reason, err.message, err.infrastructure, str(err)),
                         ("patch_failed", "did not apply", False, "did not apply"))
        self.assertTrue(common.VerifyError("x", "y").infrastructure)

    def test_the_modules_import_each_other_relatively(self):
        package = common.PACKAGE
        names = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(package, "*.py"))}
        self.assertIn("verify", names)
        for path in sorted(glob.glob(os.path.join(package, "*.py"))):
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    bare = [a.name for a in node.names if a.name.split(".")[0] in names | {"beyondswe_verifier"}]
                    self.assertEqual(bare, [], "%s:%d" % (path, node.lineno))
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    self.assertNotIn((node.module or "").split(".")[0], names | {"beyondswe_verifier"},
                                     "%s:%d" % (path, node.lineno))
                elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module":
                    arg = node.args[0] if node.args else None
                    named = arg.value if isinstance(arg, ast.Constant) else None
                    self.assertNotIn(named, names, "%s:%d" % (path, node.lineno))

    def test_the_entry_point_runs_its_own_package(self):
        """Installed as one directory: under -I (as every caller runs it; the script's directory
        is then off sys.path) the package beside the entry point is found, and without -I a
        package of the same name in the working directory and PYTHONPATH is not the one
        imported."""
        with tempfile.TemporaryDirectory() as tmp:
            shadow = os.path.join(tmp, "beyondswe_verifier")
            os.mkdir(shadow)
            with open(os.path.join(shadow, "__init__.py"), "w") as fh:
                fh.write("raise SystemExit('the shadow package was imported')\n")
            entry = os.path.join(common.HERE, "beyondswe_verify.py")
            for flags in ([], ["-I"]):
                out = subprocess.run([sys.executable] + flags + [entry], cwd=tmp,
                                     env=dict(os.environ, PYTHONPATH=tmp),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
                self.assertEqual(out.returncode, 2, (flags, out.stderr))
                self.assertIn(b"usage: beyondswe_verify.py", out.stderr)

    def test_this_process_started_a_moment_ago(self):
        started = common.process_started_at()
        if not os.path.isdir("/proc/self"):
            self.assertIsNone(started)
            return
        self.assertLess(abs(time.time() - started), 3600)
        self.assertIsNone(common.process_started_at("no-such-pid"))


if __name__ == "__main__":
    unittest.main()
