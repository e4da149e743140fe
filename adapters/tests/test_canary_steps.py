"""Unit tests of the canary steps (adapters/canary_steps.py) on a tree of files, without pytest: a
dataset id split into its parts; why an interpreter before 3.8 plants no group; an issue instance's
groups planned and planted where its tests are (the FAIL_TO_PASS test with a site grouped, the one
without listed, a PASS_TO_PASS test left alone while a FAIL_TO_PASS group stands); the run's ids
with the grouped test's id replaced by its variants'; and a Doc2Repo suite's groups drawn among the
tests that can carry one. The planning of a single module is tests/test_canaries.py."""
import os
import random
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import canary_steps as cs  # noqa: E402

MODULE = '''from calc import add


def test_add():
    assert add(2, 3) == 5


def test_nothing():
    add(1, 1)


def test_other():
    assert add(1, 1) == 2
'''


class Ctx(object):
    def __init__(self, root):
        self.canary_root = root
        self.notes = []

    def suspicious(self, message):
        self.notes.append(message)

    def forgery(self, message):
        self.notes.append(message)


def tree():
    root = tempfile.mkdtemp(prefix="bsw-canary-steps-")
    os.makedirs(os.path.join(root, "tests"))
    with open(os.path.join(root, "tests", "test_calc.py"), "w") as fh:
        fh.write(MODULE)
    return root


def read(root):
    with open(os.path.join(root, "tests", "test_calc.py")) as fh:
        return fh.read()


F2P = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_nothing"]
P2P = ["tests/test_calc.py::test_other"]


class SplitId(unittest.TestCase):
    def test_module_class_name_and_parameters(self):
        self.assertEqual(cs.split_id("t/test_a.py::TestX::test_y[1-2]"), ("t/test_a.py", ("TestX",), "test_y", "[1-2]"))
        self.assertEqual(cs.split_id("t/test_a.py::test_y"), ("t/test_a.py", (), "test_y", ""))

    def test_ids_that_name_no_function_of_a_module(self):
        self.assertIsNone(cs.split_id("t/test_a.txt::test_y"))
        self.assertIsNone(cs.split_id("t/test_a.py"))


class PlanIssue(unittest.TestCase):
    def test_the_fail_to_pass_test_with_a_site_is_grouped_and_planted(self):
        root = tree()
        plan = cs.plan_issue(Ctx(root), F2P, P2P, random.Random(1))
        self.assertEqual(plan.facts["f2p_sizes"], [20])
        self.assertEqual(plan.facts["forge_chance"], 0.05)
        self.assertEqual(plan.facts["f2p_ungrouped"], ["tests/test_calc.py::test_nothing"])
        [record] = plan.records
        self.assertEqual((record["module"], record["template"], record["tier"]),
                         ("tests/test_calc.py", "test_add", "f2p"))
        text = read(root)
        # The public name is gone; every variant is in the file, the real one among them.
        self.assertNotIn("def test_add():", text)
        self.assertEqual(text.count("assert add(2, 3) == "), 20)
        self.assertIn("assert add(2, 3) == 5\n", text)
        self.assertIn("def test_other():", text)
        self.assertIn("def test_nothing():", text)

    def test_counted_but_not_planted(self):
        # The grading without groups (a bench's baseline): the groups are counted, nothing is
        # written and nothing is left to judge.
        root = tree()
        plan = cs.plan_issue(Ctx(root), F2P, P2P, random.Random(1), plant=False)
        self.assertEqual((plan.facts["planted"], plan.facts["sizes"], plan.records), (False, [20], []))
        self.assertEqual(read(root), MODULE)

    def test_pass_to_pass_tests_carry_groups_where_no_fail_to_pass_test_can(self):
        root = tree()
        plan = cs.plan_issue(Ctx(root), ["tests/test_calc.py::test_nothing"], P2P, random.Random(1))
        self.assertEqual(plan.facts["f2p_sizes"], [])
        self.assertEqual([r["tier"] for r in plan.records], ["p2p"])
        self.assertEqual(plan.facts["forge_chance"], 1.0)

    def test_the_runs_ids_stand_the_variants_in_for_the_grouped_test(self):
        root = tree()
        plan = cs.plan_issue(Ctx(root), F2P, P2P, random.Random(1))
        ids = cs.run_ids(random.Random(2), F2P + P2P, plan)
        self.assertNotIn("tests/test_calc.py::test_add", ids)
        self.assertIn("tests/test_calc.py::test_nothing", ids)
        self.assertIn("tests/test_calc.py::test_other", ids)
        self.assertEqual(len(ids), 2 + 20)
        self.assertEqual(sorted(ids), sorted(set(ids)))


class TooOld(unittest.TestCase):
    def test_an_interpreter_before_3_6_says_why_no_group_stands(self):
        self.assertIsNone(cs.too_old())
        with mock.patch.object(cs.sys, "version_info", (3, 7, 16, "final", 0)):
            self.assertIsNone(cs.too_old())
        with mock.patch.object(cs.sys, "version_info", (3, 5, 10, "final", 0)):
            why = cs.too_old()
        self.assertIn("Python (3.5)", why or "")
        self.assertIn("no group can be planted", why or "")


class PlanSuite(unittest.TestCase):
    def test_groups_are_drawn_among_the_tests_that_can_carry_one(self):
        root = tree()
        plan = cs.plan_suite(Ctx(root), root, ["tests/test_calc.py"], random.Random(3))
        templates = sorted(r["template"] for r in plan.records)
        self.assertEqual(templates, ["test_add", "test_other"])
        self.assertTrue(all(r["tier"] == "suite" and r["k"] == cs.DOC_K for r in plan.records))
        self.assertIn("def test_nothing():", read(root))


if __name__ == "__main__":
    unittest.main()
