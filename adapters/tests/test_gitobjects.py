"""Unit tests of git, safely (adapters/gitobjects.py): blob ids of working-tree entries as git
computes them, objects read with their hashes checked, and a repository's configuration
replaced by a minimal one (the last two when git is on PATH). Standard library only."""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import common  # noqa: E402
from beyondswe_verifier import gitobjects  # noqa: E402

HAS_GIT = shutil.which("git") is not None


class BlobSha(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def path(self, name, data=None, mode=0o644):
        p = os.path.join(self.dir, name)
        if data is not None:
            with open(p, "wb") as fh:
                fh.write(data)
            os.chmod(p, mode)
        return p

    def test_well_known_ids(self):
        self.assertEqual(gitobjects.blob_sha(self.path("empty", b""), 40),
                         ("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", "100644"))
        self.assertEqual(gitobjects.blob_sha(self.path("hello", b"hello\n"), 40),
                         ("ce013625030ba8dba906f756967f9e9ca394464a", "100644"))
        self.assertEqual(gitobjects.blob_sha(self.path("empty"), 64)[0],
                         "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813")

    def test_the_mode_follows_the_owners_execute_bit(self):
        self.assertEqual(gitobjects.blob_sha(self.path("run", b"#!/bin/sh\n", 0o755), 40)[1], "100755")
        self.assertEqual(gitobjects.blob_sha(self.path("grp", b"#!/bin/sh\n", 0o654), 40)[1], "100644")

    def test_a_link_is_the_blob_of_its_target_name(self):
        os.symlink("../somewhere/else", self.path("link"))
        want = hashlib.sha1(b"blob 17\0../somewhere/else").hexdigest()
        self.assertEqual(gitobjects.blob_sha(self.path("link"), 40), (want, "120000"))

    def test_no_id_for_what_is_not_a_file_or_link(self):
        self.assertEqual(gitobjects.blob_sha(self.dir, 40), (None, None))
        self.assertEqual(gitobjects.blob_sha(self.path("missing"), 40), (None, None))

    @unittest.skipUnless(HAS_GIT, "no git")
    def test_the_same_id_as_git(self):
        data = bytes(range(256)) * 3
        p = self.path("bin", data)
        out = subprocess.run(["git", "hash-object", "--no-filters", p], stdout=subprocess.PIPE, check=True)
        self.assertEqual(gitobjects.blob_sha(p, 40)[0], out.stdout.decode().strip())


@unittest.skipUnless(HAS_GIT, "no git")
class Repository(unittest.TestCase):
    def setUp(self):
        self.repo = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.repo, "tests"))
        for rel, data in (("a.py", b"x = 1\n"), ("tests/test_a.py", b"def test_a():\n    pass\n")):
            with open(os.path.join(self.repo, rel), "wb") as fh:
                fh.write(data)
        os.symlink("a.py", os.path.join(self.repo, "b.py"))
        self.run_git("init", "-q")
        self.run_git("add", "-A")
        self.run_git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base")
        self.head = self.run_git("rev-parse", "HEAD").strip()
        self.git = gitobjects.Git(self.repo)

    def tearDown(self):
        shutil.rmtree(self.repo)

    def run_git(self, *args):
        return subprocess.run(["git"] + list(args), cwd=self.repo, check=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE).stdout.decode()

    def test_the_listing_is_git_s_own_and_blobs_are_the_files(self):
        objects = gitobjects.Objects(self.git)
        try:
            listing = objects.listing(self.head)
            want = {}
            for line in self.run_git("ls-tree", "-r", "HEAD").splitlines():
                meta, path = line.split("\t", 1)
                mode, _, sha = meta.split()
                want[path] = (mode, sha)
            self.assertEqual(listing, want)
            self.assertEqual(listing["b.py"][0], "120000")
            self.assertEqual(objects.blob(listing["a.py"][1]), b"x = 1\n")
            for rel in ("a.py", "b.py", "tests/test_a.py"):
                sha, mode = gitobjects.blob_sha(os.path.join(self.repo, rel), 40)
                self.assertEqual((mode, sha), listing[rel], rel)
        finally:
            objects.close()

    def test_an_object_of_another_kind_or_none_is_refused(self):
        objects = gitobjects.Objects(self.git)
        try:
            with self.assertRaises(common.VerifyError) as caught:
                objects.blob(self.head)
            self.assertEqual(caught.exception.reason, "base_object_forged")
            with self.assertRaises(common.VerifyError) as caught:
                objects.read("0" * 40)
            self.assertEqual(caught.exception.reason, "base_object_missing")
        finally:
            objects.close()

    def test_the_configuration_is_replaced_by_a_minimal_one(self):
        config = os.path.join(self.repo, ".git", "config")
        with open(config, "a") as fh:
            fh.write("[core]\n\thooksPath = /tmp/x\n\tfsmonitor = /tmp/evil\n[alias]\n\tst = !sh -c evil\n"
                     "[include]\n\tpath = /etc/evil\n")
        with open(config, "rb") as fh:
            before = hashlib.sha256(fh.read()).hexdigest()
        os.makedirs(os.path.join(self.repo, ".git", "info"), exist_ok=True)
        with open(os.path.join(self.repo, ".git", "info", "attributes"), "w") as fh:
            fh.write("* filter=evil\n")
        self.assertEqual(self.git.sanitize_config(), before)
        with open(config) as fh:
            self.assertEqual(fh.read(), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
        self.assertFalse(os.path.lexists(os.path.join(self.repo, ".git", "hooks")))
        self.assertFalse(os.path.lexists(os.path.join(self.repo, ".git", "info", "attributes")))
        # git still reads the repository.
        self.assertEqual(self.git.run(["rev-parse", "HEAD"]).stdout.decode().strip(), self.head)

    def test_the_object_format_extension_is_kept_and_nothing_else_of_it(self):
        config = os.path.join(self.repo, ".git", "config")
        with open(config, "a") as fh:
            fh.write("[extensions]\n\tobjectformat = sha256\n\tworktreeconfig = true\n"
                     "[core]\n\trepositoryformatversion = 1\n")
        self.git.sanitize_config()
        with open(config) as fh:
            text = fh.read()
        self.assertIn("repositoryformatversion = 1", text)
        self.assertIn("[extensions]\n\tobjectformat = sha256\n", text)
        self.assertNotIn("worktreeconfig", text)


if __name__ == "__main__":
    unittest.main()
