"""Unit tests of the verifier's entry point (adapters/verify.py) that need no container: its
command line (an unknown command, an unknown option, a missing required option are usage
errors, exit 2, naming what is wrong), and the two commands the Rust tests drive it through
(`classify` and `decide`, JSON on stdin)."""
import io
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import verify  # noqa: E402


def run(argv, stdin=""):
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), io.StringIO(), io.StringIO()
    try:
        code = verify.main(["beyondswe_verify.py"] + argv)
        return code, sys.stdout.getvalue(), sys.stderr.getvalue()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


class CommandLine(unittest.TestCase):
    def test_usage_errors(self):
        code, _, err = run([])
        self.assertEqual(code, 2)
        self.assertIn("usage:", err)
        code, _, err = run(["explode"])
        self.assertEqual(code, 2)
        code, _, err = run(["grade", "--nope", "x"])
        self.assertEqual(code, 2)
        self.assertIn("bad option '--nope'", err)
        code, _, err = run(["grade", "--spec"])
        self.assertEqual(code, 2)
        code, _, err = run(["capture", "--workdir", "/w"])
        self.assertEqual(code, 2)
        self.assertIn("--out is required", err)

    def test_classify_and_decide_read_json_on_stdin(self):
        code, out, _ = run(["classify"], "tests/test_a.py\nsrc/a.py\n")
        self.assertEqual(code, 0)
        classes = json.loads(out)
        self.assertEqual(sorted(classes), ["src/a.py", "tests/test_a.py"])
        self.assertEqual(classes["tests/test_a.py"], "test")
        facts = {"flags": {}, "apply": {"ok": True}, "run": {"started": True, "exit": 0},
                 "fail_to_pass": {"t::a": "passed"}, "pass_to_pass": {}}
        code, out, _ = run(["decide"], json.dumps([facts]))
        self.assertEqual((code, json.loads(out)), (0, [["resolved", "all_tests_passed", 1.0]]))


if __name__ == "__main__":
    unittest.main()
