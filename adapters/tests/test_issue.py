"""Unit tests of the issue families' steps (adapters/issue.py) that need no container: the steps
run in their order (apply, scrub, the clean interpreter's facts, restore, static), a patch that
does not apply stops the grading before anything else touches the tree, and an instance with no
test ids is refused before any canary or test run. Each step is a stand-in that records its
call; the steps themselves have their own tests, and tests/it/ grades in real containers."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import common  # noqa: E402
from beyondswe_verifier import issue  # noqa: E402


class Ctx(object):
    def __init__(self, spec):
        self.spec = spec
        self.workdir = "/nonexistent"
        self.facts = {}


class Steps(unittest.TestCase):
    def setUp(self):
        self.calls = []
        self.saved = []
        self.applies = True

        def stub(module, name, result=None):
            self.saved.append((module, name, getattr(module, name)))

            def fake(*args, **kwargs):
                self.calls.append(name)
                return self.applies if name == "step_apply" else result
            setattr(module, name, fake)
        stub(issue.static_step, "gold_static_kinds", set())
        stub(issue.restore, "note_prepared_clean")
        stub(issue.submission, "step_apply")
        stub(issue.scrub, "step_scrub")
        stub(issue.environment, "load_clean_facts")
        stub(issue.restore, "step_restore")
        stub(issue.static_step, "step_static")
        stub(issue.canary_steps, "plan_issue")

    def tearDown(self):
        for module, name, value in reversed(self.saved):
            setattr(module, name, value)

    def test_the_steps_run_in_order_and_an_instance_without_ids_is_refused(self):
        with self.assertRaises(common.VerifyError) as caught:
            issue.grade_issue(Ctx({"fail_to_pass": [], "pass_to_pass": []}))
        self.assertEqual(caught.exception.reason, "no_test_ids")
        self.assertEqual(self.calls, ["gold_static_kinds", "note_prepared_clean", "step_apply", "step_scrub",
                                      "load_clean_facts", "step_restore", "step_static"])

    def test_a_patch_that_does_not_apply_stops_the_grading(self):
        self.applies = False
        issue.grade_issue(Ctx({"fail_to_pass": ["t.py::test_a"]}))
        self.assertEqual(self.calls, ["gold_static_kinds", "note_prepared_clean", "step_apply"])


if __name__ == "__main__":
    unittest.main()
