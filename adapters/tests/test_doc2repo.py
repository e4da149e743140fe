"""Unit tests of the Doc2Repo family (adapters/doc2repo.py) that need no container: the hidden
suite is unpacked member by member, refusing an absolute path, a `..`, a backslash or a name
given twice (each a way to write outside the suite or to swap a test after it was read), and
leaving out the official evaluator's own script; the test modules are the suite's test files."""
import os
import sys
import tempfile
import unittest
import warnings
import zipfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import common  # noqa: E402
from beyondswe_verifier import doc2repo  # noqa: E402


def suite(members):
    path = os.path.join(tempfile.mkdtemp(prefix="bsw-d2r-"), "suite.zip")
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members:
            zf.writestr(name, data)
    return path


class ExtractSuite(unittest.TestCase):
    def test_the_suite_is_unpacked_without_the_evaluators_script(self):
        dest = tempfile.mkdtemp(prefix="bsw-d2r-out-")
        doc2repo.extract_suite(suite([("tests/", ""), ("tests/test_a.py", "def test_a():\n    pass\n"),
                                      ("realswe_eval_script.py", "print('<pytest>true</pytest>')\n")]), dest)
        self.assertTrue(os.path.isfile(os.path.join(dest, "tests", "test_a.py")))
        self.assertFalse(os.path.exists(os.path.join(dest, "realswe_eval_script.py")))

    def test_members_that_would_land_elsewhere_or_twice_are_refused(self):
        for bad in (["/etc/cron.d/x"], ["tests/../../x.py"], ["tests\\x.py"], ["tests/a.py", "tests/a.py"]):
            dest = tempfile.mkdtemp(prefix="bsw-d2r-out-")
            members = [(name, "x = 1\n") for name in bad]
            with self.assertRaises(common.VerifyError) as caught:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # zipfile warns of the duplicate name
                    doc2repo.extract_suite(suite(members), dest)
            self.assertEqual(caught.exception.reason, "test_suite_unreadable", bad)
            self.assertEqual(os.listdir(dest), [], bad)


if __name__ == "__main__":
    unittest.main()
