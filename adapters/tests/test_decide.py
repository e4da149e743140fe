"""Unit tests of the verdict (adapters/decide.py): the order of its rules. The full table of
fact sets, checked against the Rust verdict's reasons, is tests/it/verifier.rs."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier.decide import decide  # noqa: E402

PASSING = {"flags": {}, "apply": {"ok": True}, "run": {"started": True, "exit": 0},
           "fail_to_pass": {"t::a": "passed"}, "pass_to_pass": {"t::b": "passed"}}


def facts(**changes):
    f = dict(PASSING)
    f.update(changes)
    return f


class Decide(unittest.TestCase):
    def test_passing_tests_resolve(self):
        self.assertEqual(decide(facts()), ("resolved", "all_tests_passed", 1.0))

    def test_proof_of_forgery_outranks_passing_tests(self):
        self.assertEqual(decide(facts(flags={"forgery": ["x"]})), ("unresolved", "forgery_detected", 0.0))

    def test_evidence_changes_no_verdict_unless_strict(self):
        static = {"hits": [{"kind": "frames", "path": "p.py", "line": 1}]}
        self.assertEqual(decide(facts(static=static)), ("resolved", "all_tests_passed", 1.0))
        self.assertEqual(decide(facts(flags={"suspicious": ["frames: y"]})), ("resolved", "all_tests_passed", 1.0))
        self.assertEqual(decide(facts(static=static, strict=True)), ("unresolved", "forgery_suspected", 0.0))
        self.assertEqual(decide(facts(flags={"suspicious": ["frames: y"]}, strict=True))[1], "forgery_suspected")
        self.assertEqual(decide(facts(static=static, strict=True, flags={"forgery": ["x"]}))[1], "forgery_detected")
        allowed = facts(static={"hits": [], "allowed": [{"kind": "ctypes"}]}, strict=True)
        self.assertEqual(decide(allowed)[0], "resolved")

    def test_a_patch_that_did_not_apply_outranks_everything_but_errors(self):
        self.assertEqual(decide(facts(apply={"ok": False}, flags={"forgery": ["x"]}))[1], "patch_failed")
        self.assertEqual(decide(facts(error={"reason": "sandbox_failed"}))[0], "error")

    def test_a_pytest_that_did_not_finish_does_not_resolve(self):
        self.assertEqual(decide(facts(run={"started": True, "exit": 2}))[1], "tests_failed")
        self.assertEqual(decide(facts(run={"started": False}))[1], "no_results")

    def test_doc2repo_scores_the_manifests_passes_even_when_it_stops_early(self):
        suite = {"expected": 10, "collected": 10, "passed": 4}
        self.assertEqual(decide(facts(family="Doc2Repo", suite=dict(suite))), ("unresolved", "tests_failed", 0.4))
        self.assertEqual(decide(facts(family="Doc2Repo", suite=dict(suite), run={"started": True, "timed_out": True})),
                         ("unresolved", "timeout", 0.4))
        self.assertEqual(decide(facts(family="Doc2Repo", suite=dict(suite, passed=10)))[0], "resolved")


if __name__ == "__main__":
    unittest.main()
