"""Unit tests of the verifier's files module (adapters/files.py): the restore rules' classify
against the table's own examples, and file handling that never follows a link out of the tree.
Standard library only."""
import hashlib
import os
import shutil
import sys
import tempfile
import types
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import files  # noqa: E402


def write(path, data=b"x\n"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)


class Classify(unittest.TestCase):
    def test_every_example_of_the_table(self):
        examples = files.RULES["classify_examples"]
        self.assertTrue(examples)
        for kind, paths in examples.items():
            for path in paths:
                self.assertEqual(files.classify(path), None if kind == "none" else kind, path)

    def test_start_up_hooks_and_loaders_outrank_tests(self):
        self.assertEqual(files.classify("tests/sitecustomize.py"), "startup")
        self.assertEqual(files.classify("tests/usercustomize/__init__.py"), "startup")
        self.assertEqual(files.classify("tests/__pycache__/test_a.cpython-311.pyc"), "loader")
        self.assertEqual(files.classify("tests/helpers.abi3.so"), "loader")

    def test_is_test_path(self):
        for path in ("tests/helpers/util.py", "pkg/conftest.py", "pkg/test_core.py", "pkg/core_test.py",
                     "Tests/Unit/data.json"):
            self.assertTrue(files.is_test_path(path), path)
        for path in ("pkg/core.py", "pytest.ini", "setup.cfg", "testdata.py", "tests/__pycache__/x.pyc"):
            self.assertFalse(files.is_test_path(path), path)

    def test_module_name_of(self):
        self.assertEqual(files.module_name_of("pytest.py"), "pytest")
        self.assertEqual(files.module_name_of("_pytest"), "_pytest")
        self.assertEqual(files.module_name_of("pluggy.cpython-311-x86_64-linux-gnu.so"), "pluggy")

    def test_the_standard_library_is_known(self):
        names = files.stdlib_names()
        for name in ("os", "json", "unittest"):
            self.assertIn(name, names)
        self.assertNotIn("calc", names)

    def test_before_3_10_only_modules_of_the_standard_librarys_folders_are_its_names(self):
        # An interpreter without sys.stdlib_module_names (3.6 to 3.9): the names are read from
        # the standard library's folders, whose bytecode cache and site-packages are no modules.
        older = types.SimpleNamespace(builtin_module_names=sys.builtin_module_names)
        with mock.patch.object(files, "sys", older):
            names = files.stdlib_names()
        for name in ("os", "json", "unittest", "collections", "math"):
            self.assertIn(name, names)
        for name in ("__pycache__", "site-packages", "lib-dynload", "calc"):
            self.assertNotIn(name, names)
        self.assertFalse([n for n in names if n.startswith("config-")])


class NoLinkFollowed(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.outside = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.root)
        shutil.rmtree(self.outside)

    def test_a_linked_directory_is_replaced_not_written_through(self):
        os.symlink(self.outside, os.path.join(self.root, "tests"))
        files.safe_write(self.root, "tests/test_a.py", b"x = 1\n", "100644")
        self.assertEqual(os.listdir(self.outside), [])
        self.assertFalse(os.path.islink(os.path.join(self.root, "tests")))
        with open(os.path.join(self.root, "tests", "test_a.py"), "rb") as fh:
            self.assertEqual(fh.read(), b"x = 1\n")

    def test_a_linked_file_is_replaced_and_its_target_kept(self):
        victim = os.path.join(self.outside, "victim")
        write(victim, b"keep")
        os.symlink(victim, os.path.join(self.root, "run.sh"))
        files.safe_write(self.root, "run.sh", b"new", "100755")
        with open(victim, "rb") as fh:
            self.assertEqual(fh.read(), b"keep")
        st = os.lstat(os.path.join(self.root, "run.sh"))
        self.assertEqual(oct(st.st_mode & 0o777), oct(0o755))
        self.assertFalse(os.path.islink(os.path.join(self.root, "run.sh")))

    def test_a_link_is_written_as_a_link(self):
        files.safe_write(self.root, "d/link", b"../target", "120000")
        self.assertEqual(os.readlink(os.path.join(self.root, "d", "link")), "../target")

    def test_walk_tree_names_kinds_and_leaves_git_out(self):
        write(os.path.join(self.root, ".git", "HEAD"))
        write(os.path.join(self.root, "d", "f.py"))
        os.symlink(self.outside, os.path.join(self.root, "d", "out"))
        write(os.path.join(self.outside, "secret"))
        self.assertEqual(files.walk_tree(self.root), {"d": "dir", "d/f.py": "file", "d/out": "link"})
        self.assertEqual(files.walk_tree(self.root, skip_git=False)[".git/HEAD"], "file")

    def test_file_sha256_hashes_a_link_by_its_target(self):
        path = os.path.join(self.root, "f")
        write(path, b"data")
        self.assertEqual(files.file_sha256(path), hashlib.sha256(b"data").hexdigest())
        link = os.path.join(self.root, "l")
        os.symlink(path, link)
        self.assertEqual(files.file_sha256(link), hashlib.sha256(b"link:" + path.encode()).hexdigest())

    def test_in_listing_and_parent_is_link(self):
        listing = {"a/b.py": ("100644", "0" * 40)}
        self.assertTrue(files.in_listing(listing, "a"))
        self.assertTrue(files.in_listing(listing, "a/b.py"))
        self.assertFalse(files.in_listing(listing, "a/b"))
        self.assertFalse(files.in_listing(listing, "ab"))
        os.mkdir(os.path.join(self.root, "real"))
        os.symlink(self.outside, os.path.join(self.root, "lnk"))
        self.assertFalse(files.parent_is_link(self.root, "real/x.py"))
        self.assertTrue(files.parent_is_link(self.root, "lnk/x.py"))
        self.assertTrue(files.parent_is_link(self.root, "missing/x.py"))



class ReadRegular(unittest.TestCase):
    """The collected diff is the agent's data: read only as a regular file, never through a link."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_a_file_is_read(self):
        path = os.path.join(self.tmp, "submission.diff")
        write(path, b"diff --git a/x b/x\n")
        self.assertEqual(files.read_regular(path), b"diff --git a/x b/x\n")

    def test_a_link_a_directory_and_a_fifo_are_refused(self):
        target = os.path.join(self.tmp, "secret")
        write(target, b"s")
        link = os.path.join(self.tmp, "link.diff")
        os.symlink(target, link)
        with self.assertRaises(OSError):
            files.read_regular(link)
        with self.assertRaises((OSError, ValueError)):
            files.read_regular(self.tmp)
        fifo = os.path.join(self.tmp, "fifo.diff")
        os.mkfifo(fifo)
        with self.assertRaises(ValueError):
            files.read_regular(fifo)

class ChownTree(unittest.TestCase):
    """The hand-over to the test user changes only what is not theirs yet (each change copies a
    file up into the container's layer), never inside the top-level .git, and follows no link."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        write(os.path.join(self.tmp, "pkg", "a.py"))
        write(os.path.join(self.tmp, "pkg", "sub", "b.py"))
        write(os.path.join(self.tmp, ".git", "HEAD"))
        os.symlink("/etc", os.path.join(self.tmp, "link"))
        self.calls = []
        real = os.lchown
        os.lchown = lambda path, uid, gid: self.calls.append(os.path.relpath(path, self.tmp))
        self.addCleanup(setattr, os, "lchown", real)

    def test_what_is_theirs_already_is_left(self):
        st = os.lstat(self.tmp)
        files.chown_tree(self.tmp, st.st_uid, st.st_gid)
        self.assertEqual(self.calls, [])

    def test_everything_else_but_git_is_handed_over(self):
        st = os.lstat(self.tmp)
        files.chown_tree(self.tmp, st.st_uid + 1, st.st_gid)
        self.assertEqual(sorted(self.calls), [".", "link", "pkg", "pkg/a.py", "pkg/sub", "pkg/sub/b.py"])


class LockedOnce(unittest.TestCase):
    """A prepared image locks the base's test files once; a grading then changes nothing that is
    locked already, and the hand-over passes over what is to stay root's."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        write(os.path.join(self.tmp, "tests", "unit", "test_a.py"))
        write(os.path.join(self.tmp, "pkg", "a.py"))

    def test_lock_set_names_the_files_their_directories_and_caches(self):
        self.assertEqual(files.lock_set(["tests/unit/test_a.py"]),
                         {"tests/unit/test_a.py", "tests/unit", "tests", "", "tests/unit/__pycache__",
                          "tests/__pycache__", "__pycache__"})

    def test_the_hand_over_passes_over_the_lock_set(self):
        calls = []
        real = os.lchown
        os.lchown = lambda path, uid, gid: calls.append(os.path.relpath(path, self.tmp))
        self.addCleanup(setattr, os, "lchown", real)
        st = os.lstat(self.tmp)
        files.chown_tree(self.tmp, st.st_uid + 1, st.st_gid, keep=files.lock_set(["tests/unit/test_a.py"]))
        self.assertEqual(sorted(calls), ["pkg", "pkg/a.py"])

    @unittest.skipUnless(os.geteuid() == 0, "changes owners: root only")
    def test_a_second_lock_changes_nothing_and_a_cache_with_content_is_remade(self):
        rels = ["tests/unit/test_a.py"]
        files.lock_paths(self.tmp, rels)
        cache = os.path.join(self.tmp, "tests", "unit", "__pycache__")
        self.assertTrue(files.empty_root_dir(cache))
        before = {p: os.lstat(os.path.join(self.tmp, p)).st_ctime_ns for p in rels + ["tests/unit/__pycache__"]}
        files.lock_paths(self.tmp, rels)
        after = {p: os.lstat(os.path.join(self.tmp, p)).st_ctime_ns for p in rels + ["tests/unit/__pycache__"]}
        self.assertEqual(before, after)
        # Bytecode planted in a cache, or a cache others may write, is not taken as locked.
        write(os.path.join(cache, "test_a.cpython-311.pyc"))
        self.assertFalse(files.empty_root_dir(cache))
        files.lock_paths(self.tmp, rels)
        self.assertEqual(os.listdir(cache), [])
        os.chmod(cache, 0o777)
        self.assertFalse(files.empty_root_dir(cache))
        files.lock_paths(self.tmp, rels)
        self.assertTrue(files.empty_root_dir(cache))
        st = os.lstat(os.path.join(self.tmp, "tests", "unit", "test_a.py"))
        self.assertEqual((st.st_uid, st.st_mode & 0o777), (0, 0o644))
        # Test directories are closed to the test user for the whole run (nothing can be
        # added beside a test); the root keeps the sticky bit, for what tests write there.
        self.assertEqual(os.lstat(os.path.join(self.tmp, "tests")).st_mode & 0o7777, 0o755)
        self.assertEqual(os.lstat(os.path.join(self.tmp, "tests", "unit")).st_mode & 0o7777, 0o755)
        self.assertEqual(os.lstat(self.tmp).st_mode & 0o7777, 0o1777)

    def test_a_link_or_a_file_is_no_empty_root_dir(self):
        os.symlink(self.tmp, os.path.join(self.tmp, "ln"))
        self.assertFalse(files.empty_root_dir(os.path.join(self.tmp, "ln")))
        self.assertFalse(files.empty_root_dir(os.path.join(self.tmp, "pkg", "a.py")))
        self.assertFalse(files.empty_root_dir(os.path.join(self.tmp, "missing")))


class PreparedTestUser(unittest.TestCase):
    def test_the_prepare_records_uid_is_used_only_when_it_is_free_and_in_range(self):
        from beyondswe_verifier import processes
        lo, hi = processes.TEST_UIDS
        self.assertTrue(processes.usable_uid(lo + 5, {0, 1000}, {0}))
        for bad in (None, 0, 1000, lo - 1, hi + 1, True, "300000", 300000.0):
            self.assertFalse(processes.usable_uid(bad, {0, 1000}, {0}), bad)
        # An entry an agent wrote for it, as a user or a group.
        self.assertFalse(processes.usable_uid(lo + 5, {lo + 5}, set()))
        self.assertFalse(processes.usable_uid(lo + 5, set(), {lo + 5}))


if __name__ == "__main__":
    unittest.main()
