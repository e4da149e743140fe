"""Unit tests of what the verifier's modules share (adapters/common.py): a log's tail keeps its
end and says how much was cut; a step's error carries its reason; a sibling module is found by
its name here, by its installed name where that file is beside common; and a process's start
time is read from /proc."""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402


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

    def test_a_sibling_is_found_by_its_name_here(self):
        self.assertEqual(common.sibling("decide").__name__, "decide")

    def test_this_process_started_a_moment_ago(self):
        started = common.process_started_at()
        if not os.path.isdir("/proc/self"):
            self.assertIsNone(started)
            return
        self.assertLess(abs(time.time() - started), 3600)
        self.assertIsNone(common.process_started_at("no-such-pid"))


if __name__ == "__main__":
    unittest.main()
