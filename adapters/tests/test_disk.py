"""Unit tests of the disk limit's measure (adapters/disk.py): the watch counts the blocks a uid
wrote after a moment under its roots, and nothing of another uid's; the world-writable places
found are directories of the root file system that anyone may write to."""
import os
import stat
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import disk  # noqa: E402
from beyondswe_verifier import processes  # noqa: E402


def watch(uid, roots, since):
    return disk.DiskWatch(uid, 1, roots, since, processes.pids_of, processes.demote)


class Disk(unittest.TestCase):
    def test_the_disk_watch_counts_what_the_uid_wrote_since(self):
        root = tempfile.mkdtemp(prefix="bsw-disk-")
        with open(os.path.join(root, "before"), "wb") as fh:
            fh.write(b"x" * 100000)
        since = time.time() + 0.01
        time.sleep(0.05)
        w = watch(os.getuid(), [root], since)
        # The watch also counts files the uid deleted and keeps open anywhere (other processes
        # of this uid may hold some): the file written after `since` is what the count grows by.
        at_start = w.written()
        with open(os.path.join(root, "after"), "wb") as fh:
            fh.write(os.urandom(300000))
            fh.flush()
            os.fsync(fh.fileno())
        grew = w.written() - at_start
        self.assertGreaterEqual(grew, 300000)
        self.assertLess(grew, 400000)
        self.assertEqual(watch(os.getuid() + 1, [root], since).written(), 0)
        # No limit: never over.
        self.assertIsNone(disk.DiskWatch(os.getuid(), 0, [root], since, processes.pids_of, processes.demote).over())

    def test_the_writable_roots_are_world_writable_directories_of_the_root_file_system(self):
        root_dev = os.lstat("/").st_dev
        for path in disk.writable_roots():
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                # Gone since it was listed: on a machine whose engine adds and drops layers.
                continue
            self.assertTrue(stat.S_ISDIR(st.st_mode), path)
            self.assertTrue(st.st_mode & stat.S_IWOTH, path)
            self.assertEqual(st.st_dev, root_dev, path)
            self.assertFalse(path.startswith(("/proc", "/sys", "/dev")), path)


if __name__ == "__main__":
    unittest.main()
