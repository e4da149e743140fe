"""Unit tests of the scrub step's decisions (adapters/scrub.py) on a temporary tree: start-up
hooks always go; loaders go unless the image had them unchanged; without the image's record
only what cannot be the image's own goes; top-level names shadowing protected modules go.
Standard library only."""
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import files  # noqa: E402
from beyondswe_verifier import scrub  # noqa: E402


class Scrub(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.root)

    def write(self, rel, data=b"x"):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
        return path

    def digest(self, rel):
        return files.file_sha256(os.path.join(self.root, rel))

    def test_start_up_hooks_always_go(self):
        for rel in ("sitecustomize.py", "pkg/evil.pth"):
            self.write(rel)
            baseline = {rel: self.digest(rel)}
            for loaders in (True, False):
                self.assertTrue(scrub.scrubs_file(self.root, rel, baseline, False, loaders), (rel, loaders))

    def test_loaders_go_unless_the_image_had_them_unchanged(self):
        rel = "pkg/__pycache__/core.cpython-311.pyc"
        self.write(rel, b"bytecode")
        self.assertTrue(scrub.scrubs_file(self.root, rel, {}, False, True))
        self.assertFalse(scrub.scrubs_file(self.root, rel, {rel: self.digest(rel)}, False, True))
        self.assertTrue(scrub.scrubs_file(self.root, rel, {rel: "0" * 64}, False, True))
        self.assertFalse(scrub.scrubs_file(self.root, rel, {}, False, False))

    def test_without_the_images_record_extension_modules_stay(self):
        self.write("pkg/_speedups.so")
        self.assertTrue(scrub.scrubs_file(self.root, "pkg/_speedups.so", {}, False, True))
        self.assertFalse(scrub.scrubs_file(self.root, "pkg/_speedups.so", {}, True, True))

    def test_sources_stay(self):
        self.write("pkg/core.py")
        self.assertFalse(scrub.scrubs_file(self.root, "pkg/core.py", {}, False, True))

    def test_metadata_directories(self):
        self.write("calc.egg-info/PKG-INFO")
        self.assertTrue(scrub.scrubs_dir(self.root, "calc.egg-info", {}, False, True))
        # After a Doc2Repo install: the metadata pip made from the submission's own sources.
        self.assertFalse(scrub.scrubs_dir(self.root, "calc.egg-info", {}, False, False))
        # The image's own, unchanged, stays; one more file in it and it goes.
        baseline = {"calc.egg-info/PKG-INFO": self.digest("calc.egg-info/PKG-INFO")}
        self.assertFalse(scrub.scrubs_dir(self.root, "calc.egg-info", baseline, False, True))
        self.write("calc.egg-info/entry_points.txt", b"[console_scripts]\n")
        self.assertTrue(scrub.scrubs_dir(self.root, "calc.egg-info", baseline, False, True))

    def test_without_the_images_record_only_metadata_with_a_pytest_plugin_goes(self):
        self.write("calc.egg-info/entry_points.txt", b"[console_scripts]\ncalc = calc:main\n")
        self.assertFalse(scrub.scrubs_dir(self.root, "calc.egg-info", {}, True, True))
        self.write("calc.egg-info/entry_points.txt", b"[pytest11]\nevil = calc.evil\n")
        self.assertTrue(scrub.scrubs_dir(self.root, "calc.egg-info", {}, True, True))

    def test_an_unreadable_entry_points_file_counts_as_a_plugin(self):
        os.makedirs(os.path.join(self.root, "x.dist-info"))
        os.symlink("/nonexistent", os.path.join(self.root, "x.dist-info", "entry_points.txt"))
        self.assertTrue(scrub.declares_pytest_plugin(os.path.join(self.root, "x.dist-info")))
        self.assertTrue(scrub.scrubs_dir(self.root, "x.dist-info", {}, True, True))

    def test_a_start_up_hook_as_a_directory_goes_even_after_an_install(self):
        self.write("sitecustomize/__init__.py")
        self.assertTrue(scrub.scrubs_dir(self.root, "sitecustomize", {}, False, False))
        self.write("pkg/__init__.py")
        self.assertFalse(scrub.scrubs_dir(self.root, "pkg", {}, False, True))

    def test_names_that_shadow_protected_modules_go(self):
        for rel in ("pytest.py", "json/__init__.py", "os.py", "calc.py", "pluggy.txt", "data/x.py"):
            self.write(rel)
        tree = files.walk_tree(self.root)
        listing = {"os.py": ("100644", "0" * 40)}  # tracked by the base: the repository's own
        gone, removed = set(), []
        scrub.remove_shadowing_names(self.root, [""], tree, listing, {}, gone, removed)
        self.assertEqual(sorted(removed), ["json/", "pytest.py"])
        self.assertEqual(gone, {"json", "pytest.py"})
        self.assertEqual(sorted(os.listdir(self.root)), ["calc.py", "data", "os.py", "pluggy.txt"])

    def test_a_bytecode_cache_at_the_top_shadows_nothing(self):
        # The empty one the lock leaves beside top-level test modules, and one with bytecode
        # (the scrub's loader rules, not this one, decide on that): on every interpreter,
        # 3.6 to 3.9 too, whose standard library's names are read from its folders.
        os.makedirs(os.path.join(self.root, "__pycache__"))
        self.write("site-packages/x.py")
        removed = []
        scrub.remove_shadowing_names(self.root, [""], files.walk_tree(self.root), {}, {}, set(), removed)
        self.assertEqual(removed, [])

    def test_a_shadowing_name_the_image_had_stays(self):
        self.write("pytest.py")
        removed = []
        scrub.remove_shadowing_names(self.root, [""], files.walk_tree(self.root), {}, {"pytest.py": "h"}, set(),
                                     removed)
        self.assertEqual(removed, [])


if __name__ == "__main__":
    unittest.main()
