"""Unit tests of the test user's processes (adapters/processes.py) that need no root: this
process's ancestors and the processes of a uid read from /proc, the range a test user's uid is
drawn from (an image's own users and groups are never it), and what the disk watch counts as
written by a uid after a moment (files it owns that changed since, nobody else's)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import processes  # noqa: E402

HAS_PROC = os.path.isdir("/proc/self")


class Processes(unittest.TestCase):
    @unittest.skipUnless(HAS_PROC, "reads /proc")
    def test_ancestors_and_a_uids_processes(self):
        up = processes.ancestors()
        self.assertIn(os.getpid(), up)
        self.assertIn(os.getppid(), up)
        self.assertIn(1, up)
        mine = processes.pids_of(os.getuid())
        self.assertIn(os.getpid(), mine)
        self.assertNotIn(os.getpid(), processes.pids_of(processes.TEST_UIDS[1]))

    def test_a_test_uid_is_in_its_range_and_no_one_elses(self):
        lo, hi = processes.TEST_UIDS
        used_u, used_g = {lo + 5}, {lo + 6}
        self.assertTrue(processes.usable_uid(lo + 7, used_u, used_g))
        for bad in (lo + 5, lo + 6, lo - 1, hi + 1, 0, True, "300000", None):
            self.assertFalse(processes.usable_uid(bad, used_u, used_g), bad)
        uid = processes.fresh_test_uid()
        self.assertTrue(lo <= uid <= hi)
        self.assertNotIn(uid, processes.used_ids()[0])


if __name__ == "__main__":
    unittest.main()
