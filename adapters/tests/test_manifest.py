"""Unit tests of the Doc2Repo suite manifest (adapters/manifest.py)."""
import os
import sys
import tempfile
import unittest
import zipfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import manifest as mf  # noqa: E402

SUITE = {
    "tests/test_api.py": (
        "import pytest\n\n"
        "@pytest.mark.parametrize('x', [1, 2])\n"
        "def test_param(x):\n    pass\n\n"
        "class TestThing(Base):\n    def test_own(self):\n        pass\n\n"
        "try:\n    import numpy\nexcept ImportError:\n    numpy = None\nelse:\n"
        "    def test_numpy():\n        pass\n\n"
        "test_made = make_test()\n"
    ),
    "tests/helpers.py": "def test_not_a_module():\n    pass\n",
    "tests/broken_test.py": "def (:\n",
    "realswe_eval_script.py": "def test_x():\n    pass\n",
}


class Manifest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.zip = os.path.join(self.dir.name, "suite.zip")
        with zipfile.ZipFile(self.zip, "w") as zf:
            for name, text in SUITE.items():
                zf.writestr(name, text)
        self.m = mf.manifest_of_zip(self.zip)

    def tearDown(self):
        self.dir.cleanup()

    def test_modules_and_names(self):
        self.assertEqual(sorted(self.m), ["tests/broken_test.py", "tests/test_api.py"])
        self.assertTrue({"test_param", "TestThing", "test_numpy", "test_made"} <= self.m["tests/test_api.py"])
        self.assertIsNone(self.m["tests/broken_test.py"])

    def test_real_ids_are_kept_and_invented_ones_are_extra(self):
        ids = ["tests/test_api.py::test_param[1]", "tests/test_api.py::test_param[2]",
               "tests/test_api.py::TestThing::test_inherited_from_base",
               "tests/test_api.py::test_invented", "tests/test_planted.py::test_a",
               "tests/helpers.py::test_not_a_module", "tests/broken_test.py::test_any"]
        kept, extra, over = mf.judge(self.m, ids, expected=4)
        self.assertEqual(kept, ids[:3] + ids[-1:])
        self.assertEqual(extra, ids[3:6])
        self.assertEqual(over, 0)

    def test_more_kept_ids_than_the_suite_has(self):
        ids = ["tests/test_api.py::test_param[%d]" % i for i in range(7)]
        self.assertEqual(mf.judge(self.m, ids, expected=4)[2], 3)
        self.assertEqual(mf.judge(self.m, ids, expected=0)[2], 0)


if __name__ == "__main__":
    unittest.main()
