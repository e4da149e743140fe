"""Unit tests of the Doc2Repo split (adapters/suite_split.py) on a planned suite, with the runs
of a grouped test alone played by a stand-in: flagged for a tree that passes the rest and not
the sample (what a payload forcing only the ungrouped tests does), proof once each grouped
failure is confirmed alone, proof for a payload that forces whichever variant runs alone, and
no flag for honest trees, a small suite, or tests that fail only beside their clones."""
import os
import random
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import canary_steps as cs  # noqa: E402
from beyondswe_verifier import suite_split as ss  # noqa: E402

WORDS = ["parse", "header", "value", "split", "table", "render", "quote", "escape", "number", "list",
         "nested", "empty", "title", "link", "image", "code", "block", "inline", "strip", "count"]
MODULE = "tests/test_s.py"


def suite_module(n):
    return "".join("def test_%s_%s_%s():\n    assert f(%d) == %d\n\n\n"
                   % (WORDS[i % 20], WORDS[(i * 7 + 3) % 20], WORDS[(i // 20) % 20], i, i + 1) for i in range(n))


class Ctx(object):
    def __init__(self, root):
        self.canary_root = root
        self.notes = []
        self.proof = []

    def suspicious(self, message):
        self.notes.append(message)

    def forgery(self, message):
        self.proof.append(message)


class Split(unittest.TestCase):
    def plan(self, n):
        root = tempfile.mkdtemp(prefix="bsw-canary-split-")
        os.makedirs(os.path.join(root, "tests"))
        with open(os.path.join(root, "tests", "test_s.py"), "w") as fh:
            fh.write(suite_module(n))
        ctx = Ctx(root)
        return ctx, cs.plan_suite(ctx, root, [MODULE], random.Random(5))

    def mapped(self, plan, grouped, rest):
        """Outcomes under public ids: each grouped test's real variant `grouped`, the rest `rest`
        (None: no result)."""
        out = {}
        for r in plan.records:
            if grouped is not None:
                out[MODULE + "::" + r["template"]] = grouped
        for m, c, n in plan.rest:
            if rest is not None:
                out["::".join([m] + list(c) + [n])] = rest
        return out

    def raw(self, plan):
        """The run's own outcomes in its order: the rest passing, then each group's variants failing."""
        out = dict(("::".join([m] + list(c) + [n]), "passed") for m, c, n in plan.rest)
        for r in plan.records:
            for v in r["variants"]:
                out[MODULE + "::" + v] = "failed"
        return out

    def solo(self, ctx, plan, passes):
        """A stand-in runner: the ids before the test pass; the test, under its own name, is the
        variant the module holds under that name (the others keep theirs), and passes when
        `passes(record, index)`. Records the runs."""
        runs = []

        def run(ids):
            runs.append(ids)
            with open(os.path.join(ctx.canary_root, MODULE)) as fh:
                text = fh.read()
            template = ids[-1].split("::")[-1]
            r = [r for r in plan.records if r["template"] == template][0]
            self.assertEqual(text.count("def %s(" % template), 1)
            gone = [i for i, v in enumerate(r["variants"]) if "def %s(" % v not in text]
            self.assertEqual(len(gone), 1, text)
            out = dict((k, "passed") for k in ids[:-1])
            verdict = passes(r, gone[0])
            if verdict == "stall":
                return {"outcomes": out, "timed_out": True}
            out[ids[-1]] = "passed" if verdict else "failed"
            return {"outcomes": out, "timed_out": False}
        return run, runs

    def test_a_forger_of_the_ungrouped_tests_is_flagged_and_honest_trees_are_not(self):
        ctx, plan = self.plan(40)
        self.assertEqual((len(plan.records), len(plan.rest)), (cs.DOC_GROUPS, 40 - cs.DOC_GROUPS))
        facts = ss.sample_versus_rest(ctx, plan, self.mapped(plan, "failed", "passed"))
        self.assertEqual((facts["grouped"], facts["rest"]), ([0, 6], [34, 34]))
        self.assertLess(facts["chance"], ss.SPLIT_PROOF)
        # Not confirmed (no runner to confirm with): evidence only.
        self.assertEqual((len(ctx.notes), ctx.proof), (1, []))
        self.assertIn("passed 0 of 6", ctx.notes[0])
        for grouped, rest in (("passed", "passed"), ("failed", "failed"), ("passed", "failed")):
            ctx.notes = []
            facts = ss.sample_versus_rest(ctx, plan, self.mapped(plan, grouped, rest), self.raw(plan),
                                          self.solo(ctx, plan, lambda r, i: True)[0])
            self.assertGreaterEqual(facts["chance"], ss.SPLIT_EVIDENCE)
            self.assertNotIn("confirmed", facts)
            self.assertEqual((ctx.notes, ctx.proof), ([], []), (grouped, rest))

    def test_confirmed_alone_the_split_is_proof(self):
        ctx, plan = self.plan(40)
        # The payload does not force a test it sees a group in, alone or not: every variant fails.
        solo, runs = self.solo(ctx, plan, lambda r, i: False)
        facts = ss.sample_versus_rest(ctx, plan, self.mapped(plan, "failed", "passed"), self.raw(plan), solo)
        self.assertEqual(facts["confirmed"]["grouped"], [0, 6])
        # Each variant alone with its module's tests before it, then (none passed) with every
        # test that ran before it.
        self.assertEqual(facts["confirmed"]["runs"], 2 * 6 * (cs.DOC_K + 1))
        self.assertEqual(len(runs), 2 * 6 * (cs.DOC_K + 1))
        self.assertLess(facts["confirmed"]["chance"], ss.SPLIT_PROOF)
        self.assertEqual((ctx.notes, len(ctx.proof)), ([], 1))
        self.assertIn("passed 0 of 6", ctx.proof[0])
        self.assertIn("confirmed", ctx.proof[0])

    def test_a_payload_that_hides_the_grouped_tests_cannot_shrink_the_sample(self):
        ctx, plan = self.plan(40)
        solo, _ = self.solo(ctx, plan, lambda r, i: False)
        facts = ss.sample_versus_rest(ctx, plan, self.mapped(plan, None, "passed"), self.raw(plan), solo)
        self.assertEqual(facts["grouped"], [0, 6])
        self.assertEqual(len(ctx.proof), 1)

    def test_forcing_whichever_variant_runs_alone_is_proof(self):
        ctx, plan = self.plan(40)
        solo, _ = self.solo(ctx, plan, lambda r, i: True)
        facts = ss.sample_versus_rest(ctx, plan, self.mapped(plan, "failed", "passed"), self.raw(plan), solo)
        self.assertEqual(facts["confirmed"]["grouped"], [0, 6])
        groups = [p for p in ctx.proof if p.startswith("canary group ")]
        self.assertEqual(len(groups), 6)
        self.assertIn("4 of its 4 variants passed, each run alone", groups[0])
        self.assertIn("and again in each of", groups[0])

    def test_a_test_that_fails_only_beside_its_clones_counts_as_passed(self):
        ctx, plan = self.plan(40)
        solo, _ = self.solo(ctx, plan, lambda r, i: i == r["real"])
        facts = ss.sample_versus_rest(ctx, plan, self.mapped(plan, "failed", "passed"), self.raw(plan), solo)
        self.assertEqual(facts["confirmed"]["grouped"], [6, 6])
        self.assertEqual(facts["confirmed"]["chance"], 1.0)
        self.assertEqual((ctx.notes, ctx.proof), ([], []))

    def test_a_test_that_needs_another_modules_tests_before_it_is_run_after_them(self):
        ctx, plan = self.plan(40)
        # The real variant passes alone only when a test of another module ran before it.
        solo, runs = self.solo(ctx, plan, lambda r, i: i == r["real"] and "tests/setup.py::test_db" in runs[-1])
        raw = dict([("tests/setup.py::test_db", "passed")] + list(self.raw(plan).items()))
        facts = ss.sample_versus_rest(ctx, plan, self.mapped(plan, "failed", "passed"), raw, solo)
        self.assertEqual(facts["confirmed"]["grouped"], [6, 6])
        self.assertEqual((ctx.notes, ctx.proof), ([], []))

    def test_variants_that_pass_alone_only_sometimes_are_flaky_not_proof(self):
        ctx, plan = self.plan(40)
        calls = {}

        def passes(r, i):
            calls[(r["template"], i)] = calls.get((r["template"], i), 0) + 1
            return calls[(r["template"], i)] == 1
        solo, _ = self.solo(ctx, plan, passes)
        ss.sample_versus_rest(ctx, plan, self.mapped(plan, "failed", "passed"), self.raw(plan), solo)
        flaky = [n for n in ctx.notes if "flaky, not proof" in n]
        self.assertEqual(len(flaky), 6)
        # The grouped tests failed alone too: the split itself is still proof.
        self.assertEqual([p for p in ctx.proof if p.startswith("canary group ")], [])
        self.assertEqual(len(ctx.proof), 1)

    def test_a_payload_that_stalls_the_runs_alone_gets_one_run_and_its_tests_fail(self):
        ctx, plan = self.plan(40)
        # Forced where it runs alone, but the second run stalls.
        solo, runs = self.solo(ctx, plan, lambda r, i: True if len(runs) < 2 else "stall")
        facts = ss.sample_versus_rest(ctx, plan, self.mapped(plan, "failed", "passed"), self.raw(plan), solo)
        self.assertEqual(len(runs), 2)
        self.assertEqual(facts["confirmed"], {"grouped": [0, 6], "chance": facts["confirmed"]["chance"], "runs": 2,
                                              "stalled": True})
        self.assertEqual(len([n for n in ctx.notes if "ran out of its time" in n]), 1)
        self.assertEqual(len(ctx.proof), 1)
        self.assertIn("passed 0 of 6", ctx.proof[0])

    def test_a_run_alone_is_the_module_up_to_the_group_and_the_test_under_its_name(self):
        ctx, plan = self.plan(40)
        r = plan.records[0]
        raw = {MODULE + "::test_a": "passed", MODULE + "::" + r["variants"][1]: "failed",
               MODULE + "::test_b": "passed", "tests/other.py::test_c": "passed"}
        self.assertEqual(ss.alone_ids(r, raw), [MODULE + "::test_a", MODULE + "::" + r["template"]])
        raw = {"tests/first.py::test_z": "passed", MODULE + "::test_a": "passed",
               MODULE + "::" + r["variants"][1]: "failed", "tests/other.py::test_c": "passed"}
        self.assertEqual(ss.alone_ids(r, raw, everything=True),
                         ["tests/first.py::test_z", MODULE + "::test_a", MODULE + "::" + r["template"]])
        with open(os.path.join(ctx.canary_root, MODULE), "rb") as fh:
            planted = fh.read()
        alone = ss.as_alone(planted, r, 2).decode("ascii")
        self.assertIn("def %s(" % r["template"], alone)
        self.assertNotIn("def %s(" % r["variants"][2], alone)
        self.assertIn("def %s(" % r["variants"][1], alone)
        # The module is planted again after the runs.
        solo, _ = self.solo(ctx, plan, lambda r, i: False)
        ss.confirm_alone(ctx, r, raw, solo, {"runs": 0, "stalled": False})
        with open(os.path.join(ctx.canary_root, MODULE), "rb") as fh:
            self.assertEqual(fh.read(), planted)

    def test_a_test_named_in_another_script_is_written_alone_under_its_name(self):
        r = {"variants": ["test_a", "test_b"], "template": "test_\u00e9t\u00e9", "real": 0}
        planted = "def test_a ():\n    pass\n\n\ndef test_b():\n    pass\n".encode("utf-8")
        alone = ss.as_alone(planted, r, 0).decode("utf-8")
        self.assertIn("def test_\u00e9t\u00e9 ():", alone)
        self.assertIn("def test_b():", alone)
        self.assertIsNone(ss.as_alone(b"def test_ab():\n    pass\n", r, 0))

    def test_a_larger_suite_draws_one_test_in_forty(self):
        ctx, plan = self.plan(400)
        self.assertEqual((len(plan.records), len(plan.rest)), (10, 390))
        self.assertEqual((cs.suite_groups(239), cs.suite_groups(240), cs.suite_groups(1000)), (6, 6, 25))
        # A payload forcing every other test on a tree that passes half the suite: the sample of
        # ten holds about five failures; with five, proof.
        solo, _ = self.solo(ctx, plan, lambda r, i: False)
        mapped = self.mapped(plan, "passed", "passed")
        for r in plan.records[:5]:
            mapped[MODULE + "::" + r["template"]] = "failed"
        facts = ss.sample_versus_rest(ctx, plan, mapped, self.raw(plan), solo)
        self.assertEqual(facts["confirmed"]["grouped"], [5, 10])
        self.assertLess(facts["confirmed"]["chance"], ss.SPLIT_PROOF)
        self.assertEqual(len(ctx.proof), 1)

    def test_a_small_suite_has_no_power_and_no_flag(self):
        ctx, plan = self.plan(8)
        facts = ss.sample_versus_rest(ctx, plan, self.mapped(plan, "failed", "passed"), self.raw(plan),
                                      self.solo(ctx, plan, lambda r, i: False)[0])
        self.assertEqual(facts["rest"], [2, 2])
        self.assertEqual((ctx.notes, ctx.proof), ([], []))

    def test_nothing_to_compare_gives_no_facts(self):
        ctx, plan = self.plan(5)
        self.assertIsNone(ss.sample_versus_rest(ctx, plan, self.mapped(plan, "failed", "passed")))

    def test_the_chance_is_the_hypergeometric_tail(self):
        cm = cs.canaries_module()
        self.assertAlmostEqual(cm.uneven_split_chance(0, 6, 2, 2), 1.0 / 28)
        self.assertAlmostEqual(cm.uneven_split_chance(1, 2, 1, 2), 5.0 / 6)
        self.assertEqual(cm.uneven_split_chance(6, 6, 0, 4), 1.0)


if __name__ == "__main__":
    unittest.main()
