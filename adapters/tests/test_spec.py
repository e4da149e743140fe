"""The verifier's spec (adapters/spec.py): what it accepts, its defaults, a Harbor task's spec."""
import hashlib
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from beyondswe_verifier import common  # noqa: E402
from beyondswe_verifier import spec  # noqa: E402


class CheckTest(unittest.TestCase):
    def test_a_whole_offline_spec_is_accepted(self):
        s = {"instance_id": "a_b_pr1", "family": "CrossRepo", "workdir": "/w", "base_commit": "c",
             "fail_to_pass": ["t.py::a"], "pass_to_pass": [], "test_suite_num": None,
             "f2p_paths": [], "keep_paths": ["conftest.py"], "test_timeout_sec": 60,
             "setup_timeout_sec": 30, "canaries": True, "max_file_bytes": None, "state_dir": "/s",
             "private_paths": ["/tmp/p", "/s"], "result": "-", "patch": "/tmp/p/submission.patch"}
        self.assertIs(spec.check(s), s)
        self.assertEqual(spec.test_timeout(s), 60)
        self.assertEqual(spec.setup_timeout(s), 30)

    def test_missing_timeouts_take_the_defaults(self):
        s = {"state_dir": "/s"}
        self.assertEqual(spec.test_timeout(s), spec.DEFAULT_TEST_TIMEOUT_SEC)
        self.assertEqual(spec.setup_timeout(s), spec.DEFAULT_SETUP_TIMEOUT_SEC)

    def test_unknown_keys_wrong_types_and_no_state_dir_are_refused_by_name(self):
        for bad, named in (({"state_dir": "/s", "timeout": 5}, "timeout"),
                           ({"state_dir": "/s", "test_timeout_sec": True}, "test_timeout_sec"),
                           ({"state_dir": "/s", "pass_to_pass": ["a", 1]}, "pass_to_pass"),
                           ({"state_dir": "/s", "shared_container": None}, "shared_container"),
                           ({"workdir": "/w"}, "state_dir"),
                           ([], "JSON object")):
            with self.assertRaises(common.VerifyError) as caught:
                spec.check(bad)
            self.assertIn(named, caught.exception.message)
            self.assertEqual(caught.exception.reason, "verifier_failed")


class FromTestConfigTest(unittest.TestCase):
    def test_the_instance_part_and_the_tasks_own_files(self):
        with tempfile.TemporaryDirectory() as tests:
            with open(os.path.join(tests, "f2p_patch.diff"), "w") as fh:
                fh.write("diff --git a/t b/t\n")
            open(os.path.join(tests, "gold_patch.diff"), "w").close()  # empty: not given
            cfg = {"fail_to_pass": ["t.py::a"], "pass_to_pass": ["t.py::b"], "instance_id": "x",
                   "test_timeout_sec": 9, "keep_paths": None, "other_tools_key": 1}
            s = spec.from_test_config(cfg, tests, "/logs/verifier", "/var/lib/beyondswe", "submission.diff")
            spec.check(s)
            self.assertEqual(s["fail_to_pass"], ["t.py::a"])
            self.assertEqual(s["workdir"], "/workspace")
            self.assertEqual(spec.test_timeout(s), 9)
            self.assertNotIn("other_tools_key", s)
            self.assertNotIn("keep_paths", s)
            self.assertEqual(s["f2p_patch"], os.path.join(tests, "f2p_patch.diff"))
            self.assertNotIn("gold_patch", s)
            self.assertTrue(s["shared_container"] and s["canaries"])
            self.assertEqual(s["private_paths"], [tests, "/var/lib/beyondswe"])
            self.assertEqual(s["capture"], "/logs/verifier/submission.diff")
            self.assertNotIn("strict", s)
            json.dumps(s)

    def test_a_task_made_strict_gives_a_strict_spec_and_only_then(self):
        with tempfile.TemporaryDirectory() as tests:
            for value, strict in ((True, True), (False, False), ("yes", False), (None, False)):
                cfg = {"fail_to_pass": ["t.py::a"], "strict": value}
                s = spec.from_test_config(cfg, tests, "/logs/verifier", "/var/lib/beyondswe", "d")
                spec.check(s)
                self.assertEqual(bool(s.get("strict")), strict, value)

    def test_a_tasks_gold_check_reaches_the_spec_and_nothing_else_does(self):
        with tempfile.TemporaryDirectory() as tests:
            cfg = {"fail_to_pass": ["t.py::a"]}
            s = spec.from_test_config(cfg, tests, "/logs/verifier", "/var/lib/beyondswe", "d")
            self.assertNotIn("canary_check", s)
            check = {"seed": "5eed", "tests": {"t.py::test_a": [[3, 11]]}, "finished": True}
            data = json.dumps(check).encode("utf-8")
            with open(os.path.join(tests, spec.GOLD_CHECK), "wb") as fh:
                fh.write(data)
            # A file the task's config does not name is not the task's (an agent's, planted in
            # /tests before the task's files came): ignored.
            s = spec.from_test_config(cfg, tests, "/logs/verifier", "/var/lib/beyondswe", "d")
            self.assertNotIn("canary_check", s)
            named = dict(cfg, gold_check_sha256=hashlib.sha256(data).hexdigest())
            s = spec.from_test_config(named, tests, "/logs/verifier", "/var/lib/beyondswe", "d")
            spec.check(s)
            self.assertEqual(s["canary_check"], check)
            # Replaced after the task was made (no sites: no group anywhere): not the named one.
            with open(os.path.join(tests, spec.GOLD_CHECK), "w") as fh:
                json.dump({"seed": "5eed", "tests": {}}, fh)
            s = spec.from_test_config(named, tests, "/logs/verifier", "/var/lib/beyondswe", "d")
            self.assertNotIn("canary_check", s)
            # A link in its place is not read.
            os.remove(os.path.join(tests, spec.GOLD_CHECK))
            other = os.path.join(tests, "elsewhere.json")
            with open(other, "wb") as fh:
                fh.write(data)
            os.symlink(other, os.path.join(tests, spec.GOLD_CHECK))
            s = spec.from_test_config(named, tests, "/logs/verifier", "/var/lib/beyondswe", "d")
            self.assertNotIn("canary_check", s)


if __name__ == "__main__":
    unittest.main()
