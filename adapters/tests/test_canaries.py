"""Unit tests of the canary groups (adapters/canaries.py): groups built over every test shape,
variants written alike and differing only in the site's value, exactly the real variant passing
under a right implementation, the judge's proof and its solo confirmation, and a blind forger
caught at the printed rate. Standard library only: the planted tests are run by calling them."""
import ast
import asyncio
import os
import random
import re
import sys
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import canaries as cm  # noqa: E402
from beyondswe_verifier import canary_reading as rm  # noqa: E402

SEEDS = range(60)

FUNCTIONS = '''"""Tests of the calculator."""
from calc import add, label


def helper_total(values):
    return sum(values)


def test_add_small_numbers():
    total = add(1, 2)
    assert total == 3
    assert add(0, 0) == 0


def test_label_text():
    assert label(3) == "three items"


def test_add_floats():
    assert add(1.25, 2) == 3.25


def test_helper_total_sums():
    assert helper_total([add(1, 1), 2]) == 4
'''

SHAPES = {
    "method": '''from calc import add


class TestParse:
    def test_add_int(self, tmp_path):
        assert add(1, 2) == 3

    def test_add_neg(self):
        assert add(-1, -2) == -3
''',
    "class": '''from calc import add


class DescribeAdd:
    def test_add_int(self):
        assert add(2, 2) == 4
''',
    "unittest": '''import unittest
from calc import add


class CalcChecks(unittest.TestCase):
    def testAddNegative(self):
        self.assertEqual(add(-1, -1), -2)
        self.assertTrue(add(1, 1) > 0)
''',
    "function+parametrised": '''import pytest
from calc import add

CASES = [(1, 2), (2, 3)]


@pytest.mark.parametrize("a,b", CASES)
def test_increments(a, b):
    assert add(a, 1) - b + 40 == 40
''',
    "function+async": '''from calc import add


async def test_async_sum():
    assert add(1, 2) == 3
''',
    "method+nested": '''from calc import add


class TestOuter:
    class TestInner:
        def test_inner_value(self):
            assert add(1, 1) == 2
''',
}


class FakeCalc(object):
    """The module the test files import, right or wrong."""

    def __init__(self, right=True):
        self.right = right

    def add(self, a, b):
        return a + b if self.right else a - b

    def label(self, n):
        return "%s items" % {3: "three"}.get(n, n) if self.right else "items"


def load(source, calc):
    """Executes a planted module with `calc` as its calculator; returns its namespace."""
    mod = types.ModuleType("calc")
    mod.add, mod.label = calc.add, calc.label
    pytest = types.ModuleType("pytest")
    pytest.mark = types.SimpleNamespace(parametrize=lambda *a, **k: (lambda f: f))
    saved = dict((n, sys.modules.get(n)) for n in ("calc", "pytest"))
    sys.modules["calc"], sys.modules["pytest"] = mod, pytest
    try:
        ns = {"__name__": "planted"}
        exec(compile(source, "planted.py", "exec"), ns)
        return ns
    finally:
        for n, m in saved.items():
            if m is None:
                del sys.modules[n]
            else:
                sys.modules[n] = m


def call(ns, path, name):
    """Runs one test of a loaded module: True when it passed."""
    obj = ns[path[0]] if path else None
    for p in path[1:]:
        obj = getattr(obj, p)
    try:
        if obj is None:
            fn = ns[name]
            args = [None] * fn.__code__.co_argcount
            res = fn(*args)
        elif isinstance(obj, type) and issubclass(obj, unittest.TestCase):
            res = getattr(obj(name), name)()
        else:
            fn = getattr(obj(), name)
            res = fn(*([None] * (fn.__code__.co_argcount - 1)))
        if asyncio.iscoroutine(res):
            loop = asyncio.new_event_loop()  # asyncio.run is 3.7+
            try:
                loop.run_until_complete(res)
            finally:
                loop.close()
        return True
    except AssertionError:
        return False


def plan(source, targets, seed, avoid=None):
    return cm.plan(source, targets, random.Random(seed), avoid)


def def_names(source):
    return [n.name for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def shape_target(source):
    module = rm.parse(source)
    (path, body, i), = [c for c in rm.candidates(module) if c[1][c[2]].name != "test_add_neg"][:1]
    return path, body[i].name


class Groups(unittest.TestCase):
    def test_every_shape_gets_a_group_where_only_the_real_variant_passes(self):
        for shape, source in SHAPES.items():
            path, name = shape_target(source)
            for seed in range(10):
                out = plan(source, [(path, name, 5)], seed)
                self.assertIsNotNone(out, shape)
                new, (rec,) = out
                self.assertEqual(rec["shape"], shape.replace("+nested", ""))
                # As many values as the site's room allows, up to k+1.
                self.assertTrue(2 <= len(rec["variants"]) <= 6, rec)
                self.assertEqual(len(rec["variants"]), rec["k"] + 1)
                self.assertNotIn(name, def_names(new), "the public name is gone")
                if shape == "function+parametrised":
                    continue  # its case values come from the decorator, not run here
                ns = load(new, FakeCalc(True))
                passing = [i for i, v in enumerate(rec["variants"]) if call(ns, rec["path"], v)]
                self.assertEqual(passing, [rec["real"]], (shape, seed, new.decode()))
                ns = load(new, FakeCalc(False))
                self.assertLessEqual(sum(call(ns, rec["path"], v) for v in rec["variants"]), 1)

    def test_variants_are_written_alike_and_differ_only_in_the_value(self):
        for seed in SEEDS:
            new, recs = plan(FUNCTIONS, [((), "test_add_small_numbers", 9), ((), "test_label_text", 4)], seed)
            text = new.decode()
            for rec in recs:
                blocks = []
                for v in rec["variants"]:
                    m = re.search(r"\ndef %s\(\):\n(    .*\n)+" % v, text)
                    self.assertIsNotNone(m)
                    blocks.append(m.group(0).replace(v, "NAME"))
                shapes = set(re.sub(r"== (-?[0-9.]+|\"[^\"]*\")$", "== LIT", b.rstrip("\n"), flags=re.M)
                             for b in blocks)
                self.assertEqual(len(shapes), 1, "only the literal differs")
                self.assertEqual(len(set(blocks)), len(blocks), "every value differs")
            # The group stands where its template stood, among the module's own definitions.
            self.assertLess(text.index("def helper_total"), text.index(recs[0]["variants"][0]))

    def test_names_are_new_and_made_of_the_modules_words(self):
        words = set(re.findall(r"[a-z]+", FUNCTIONS))
        for seed in SEEDS:
            new, recs = plan(FUNCTIONS, [((), "test_add_floats", 9)], seed)
            for v in recs[0]["variants"]:
                self.assertTrue(v.startswith("test_"))
                self.assertNotIn(v, re.findall(r"\w+", FUNCTIONS))
                self.assertTrue(set(w for w in v.split("_") if not w.isdigit()) <= words, v)

    def test_the_record_order_says_nothing_of_the_real_one(self):
        reals = set()
        for seed in range(100):
            _, (rec,) = plan(FUNCTIONS, [((), "test_label_text", 3)], seed)
            reals.add(rec["real"])
        self.assertEqual(reals, set(range(4)))

    def test_the_real_variant_is_at_every_place_among_its_group(self):
        places = set()
        for seed in range(200):
            _, (rec,) = plan(FUNCTIONS, [((), "test_label_text", 3)], seed)
            new = _.decode()
            order = sorted(rec["variants"], key=new.index)
            places.add(order.index(rec["variants"][rec["real"]]))
        self.assertEqual(places, set(range(4)))

    def test_a_test_that_cannot_carry_a_group_is_left_alone(self):
        cases = {
            "no literal": "def test_a():\n    assert f() == g()\n",
            "named elsewhere": "def test_a():\n    assert f() == 1\n\n\nCHECKS = [test_a]\n",
            "returns early": "def test_a():\n    if f():\n        return\n    assert f() == 1\n",
            "xfail": "import pytest\n\n\n@pytest.mark.xfail\ndef test_a():\n    assert f() == 1\n",
            "bound to its name": "def test_a(request):\n    assert f(request) == 1\n",
            "snapshot": "def test_a(snapshot):\n    assert f() == 1\n",
            "a message": "def test_a():\n    assert f() == 1, 'why'\n",
            "only a bool": "def test_a():\n    assert f() == True\n",
        }
        for why, source in cases.items():
            self.assertIsNone(plan(source, [((), "test_a", 3)], 1), why)

    def test_a_group_stands_for_its_own_classs_test_only_where_another_class_has_one_of_its_name(self):
        # more-itertools: a test_negative per function's class. Each id goes to its own group,
        # and an ungrouped class's id stays as it is.
        from beyondswe_verifier import canary_steps as cs
        source = ("class ChunkedTests:\n    def test_negative(self):\n        assert f(-1) == 1\n\n\n"
                  "class FastChunkedTests(ChunkedTests):\n    pass\n\n\n"
                  "class SlicedTests:\n    def test_negative(self):\n        assert g(-1) == 2\n\n\n"
                  "class TailTests:\n    def test_negative(self):\n        assert h(-1) == 3\n")
        targets = [(("ChunkedTests",), "test_negative", 3), (("SlicedTests",), "test_negative", 3)]
        _, records = cm.plan(source, targets, random.Random(0))
        chunked, sliced = records
        self.assertEqual(chunked["collected"], [["ChunkedTests"], ["FastChunkedTests"]])
        self.assertTrue(cm.stands_for(chunked, ["FastChunkedTests"], "test_negative"))
        self.assertFalse(cm.stands_for(chunked, ["SlicedTests"], "test_negative"))
        plan = cs.Plan()
        for r in records:
            r["module"] = "t.py"
        plan.records = records
        ids = ["t.py::%s::test_negative" % c for c in ("ChunkedTests", "FastChunkedTests", "SlicedTests", "TailTests")]
        out = cs.run_ids(random.Random(0), ids, plan)
        self.assertEqual(sorted(out), sorted(["t.py::ChunkedTests::" + v for v in chunked["variants"]]
                                             + ["t.py::FastChunkedTests::" + v for v in chunked["variants"]]
                                             + ["t.py::SlicedTests::" + v for v in sliced["variants"]]
                                             + ["t.py::TailTests::test_negative"]))
        # A name the module uses once: any id of it is the group's, as before.
        _, (only,) = cm.plan(source.replace("test_negative", "test_other", 1), [(("ChunkedTests",), "test_other", 3)],
                             random.Random(0))
        self.assertIsNone(only["collected"])

    def test_a_mixin_test_is_found_through_the_class_that_collects_it(self):
        source = '''from calc import add


class Checks:
    def test_add_pair(self):
        assert add(2, 3) == 5


class TestFast(Checks):
    pass


class TestSlow(Checks):
    pass
'''
        new, (rec,) = plan(source, [(("TestFast",), "test_add_pair", 3)], 3)
        self.assertEqual(rec["path"], ["Checks"])
        rec["module"] = "t.py"
        outcomes = {}
        for cls in ("TestFast", "TestSlow"):
            for i, v in enumerate(rec["variants"]):
                outcomes["t.py::%s::%s" % (cls, v)] = "passed" if i == rec["real"] else "failed"
        fact = cm.judge(rec, outcomes, True)
        self.assertEqual(fact["proof"], [])
        self.assertEqual(sorted(fact["real_outcomes"]),
                         ["t.py::TestFast::test_add_pair", "t.py::TestSlow::test_add_pair"])

    def test_k_and_the_chance_of_a_blind_forger(self):
        self.assertEqual(cm.k_for(1), 19)
        self.assertEqual(cm.k_for(2), 9)
        self.assertEqual(cm.ks_for(0), [])
        self.assertEqual(cm.ks_for(1), [19])
        self.assertEqual(cm.ks_for(2), [9, 9])
        self.assertEqual(cm.ks_for(3), [4, 4, 3])
        self.assertEqual(cm.ks_for(5), [2, 2, 2, 1, 1])
        self.assertEqual(cm.ks_for(7), [1] * 7)
        for g in range(2, 12):
            ks = cm.ks_for(g)
            self.assertEqual(len(ks), g)
            self.assertLessEqual(cm.forge_chance([k + 1 for k in ks]), 0.01)
            self.assertEqual(max(ks), cm.k_for(g))
            # No fewer mutants in all keep the bound: one less anywhere breaks it.
            for i in range(g):
                fewer = [k + 1 - (j == i) for j, k in enumerate(ks)]
                if min(fewer) >= 2:
                    self.assertGreater(cm.forge_chance(fewer), 0.01, (g, ks, i))
            # Never more mutants than one k for all.
            self.assertLessEqual(sum(ks), g * cm.k_for(g))
        self.assertAlmostEqual(cm.forge_chance([20]), 0.05)
        self.assertEqual(cm.forge_chance([]), 1.0)


def record(k=3, real=1, module="t.py"):
    return {"module": module, "path": [], "template": "test_real", "real": real, "k": k, "line": 3,
            "variants": ["test_v%d" % i for i in range(k + 1)], "shape": "function"}


def outcomes_for(rec, passing, params=("",)):
    return dict(("%s::%s%s" % (rec["module"], v, p), "passed" if i in passing else "failed")
                for i, v in enumerate(rec["variants"]) for p in params)


class Judge(unittest.TestCase):
    def test_honest_outcomes_are_no_proof_and_map_back(self):
        rec = record()
        for passing in ([1], [], [0], [2]):  # the real passes, nothing does, a mutant beside a failing real
            fact = cm.judge(rec, outcomes_for(rec, passing), True)
            self.assertEqual(fact["proof"], [], passing)
            want = "passed" if passing == [1] else "failed"
            self.assertEqual(fact["real_outcomes"], {"t.py::test_real": ("t.py::test_v1", want)})

    def test_two_passing_variants_are_proof_once_they_hold_alone(self):
        rec = record()
        out = outcomes_for(rec, [0, 1])
        self.assertTrue(cm.judge(rec, out, True)["proof"])
        calls = []

        def solo(ids):
            calls.append(ids)
            return dict((i, out[i]) for i in ids), True
        fact = cm.judge(rec, out, True, solo)
        self.assertEqual(len(calls), cm.SOLO_ROUNDS)
        self.assertIn("again", fact["proof"][0])

    def test_a_contradiction_that_does_not_hold_alone_is_flaky_and_the_real_keeps_its_worst(self):
        rec = record()
        fact = cm.judge(rec, outcomes_for(rec, [0, 1]), True,
                        lambda ids: (dict((i, "failed") for i in ids), True))
        self.assertEqual(fact["proof"], [])
        self.assertTrue(fact["flaky"])
        self.assertEqual(fact["real_outcomes"]["t.py::test_real"][1], "failed")

    def test_a_missing_variant_is_proof_only_when_the_run_finished(self):
        rec = record()
        out = outcomes_for(rec, [1])
        del out["t.py::test_v3"]
        self.assertTrue(cm.judge(rec, out, True)["proof"])
        self.assertEqual(cm.judge(rec, out, False)["proof"], [])

    def test_a_variant_reported_twice_is_proof(self):
        rec = record()
        fact = cm.judge(rec, outcomes_for(rec, [1]), True, doubled=["t.py::test_v2"])
        self.assertTrue(fact["proof"])

    def test_parameters_are_items_of_their_own(self):
        rec = record()
        out = outcomes_for(rec, [1], params=("[a]", "[b]"))
        out["t.py::test_v2[b]"] = "passed"
        fact = cm.judge(rec, out, True)
        self.assertEqual(len(fact["proof"]), 1)
        self.assertIn("[b]", fact["proof"][0])

    def test_a_forger_that_passes_the_first_test_of_a_group_run_alone_gains_nothing(self):
        # Written against the judge: forge every variant in the full run (a contradiction, so
        # the group runs alone), then, alone, pass only the test run first. Were a group run
        # alone in the record's order, and that order the values' (the real one first for a
        # string), this would be resolved every time.
        planted = 0
        fooled = 0
        for seed in range(300):
            new, (rec,) = plan(FUNCTIONS, [((), "test_label_text", 9)], seed)
            rec["module"] = "t.py"
            out = outcomes_for(rec, range(len(rec["variants"])))

            def solo(ids):
                return dict((x, "passed" if i == 0 else "failed") for i, x in enumerate(ids)), True
            fact = cm.judge(rec, out, True, solo)
            planted += 1
            real = fact["real_outcomes"]["t.py::" + rec["template"]][1]
            fooled += not fact["proof"] and real == "passed"
        self.assertLess(fooled / float(planted), 0.2, (fooled, planted))

    def test_a_blind_forger_is_caught_at_the_printed_rate(self):
        # Two FAIL_TO_PASS groups (k from k_for): a forger that makes one variant of each pass,
        # drawn at random, passes undetected only when it drew both real ones.
        rng = random.Random(7)
        k = cm.k_for(2)
        bound = cm.forge_chance([k + 1, k + 1])
        trials, undetected = 4000, 0
        for _ in range(trials):
            ok = True
            for _g in range(2):
                rec = record(k=k, real=rng.randrange(k + 1))
                guess = rng.randrange(k + 1)
                fact = cm.judge(rec, outcomes_for(rec, [guess]), True)
                ok = ok and not fact["proof"] and fact["real_outcomes"]["t.py::test_real"][1] == "passed"
            undetected += ok
        self.assertLessEqual(undetected / float(trials), bound * 2)
        # And a forger that makes everything pass is caught every time.
        rec = record(k=k)
        self.assertTrue(cm.judge(rec, outcomes_for(rec, range(k + 1)), True)["proof"])

    def test_a_blind_forger_gains_nothing_from_groups_of_unequal_sizes(self):
        # Five FAIL_TO_PASS groups of 3, 3, 3, 2 and 2 (ks_for): a forger that knows the sizes and
        # makes one variant of each pass still picks blindly within each group, so it passes
        # undetected at about the printed product, not more; one that forces a small group whole
        # is proof there.
        rng = random.Random(11)
        ks = cm.ks_for(5)
        bound = cm.forge_chance([k + 1 for k in ks])
        self.assertLessEqual(bound, 0.01)
        trials, undetected = 20000, 0
        for _ in range(trials):
            ok = True
            for k in ks:
                rec = record(k=k, real=rng.randrange(k + 1))
                fact = cm.judge(rec, outcomes_for(rec, [rng.randrange(k + 1)]), True)
                ok = ok and not fact["proof"] and fact["real_outcomes"]["t.py::test_real"][1] == "passed"
            undetected += ok
        self.assertLessEqual(undetected / float(trials), bound * 2)
        rec = record(k=min(ks))
        self.assertTrue(cm.judge(rec, outcomes_for(rec, range(min(ks) + 1)), True)["proof"])


LOOSE = '''"""Tests whose second assertion compares with an object equal to anything."""
from unittest import mock

from calc import add, label


def test_add_loose():
    total = add(1, 2)
    assert mock.ANY == 7
    assert total == 3


def test_label_three():
    assert label(3) == "three items"
'''


def run_check(source, targets, seed):
    """plan_check, then every variant called under a right calculator: (records, outcomes)."""
    check = cm.GoldCheck(seed, {})
    new, records = cm.plan_check(source, targets, check, "t.py", random.Random(1), 3)
    ns = load(new, FakeCalc(True))
    outcomes = {}
    for r in records:
        r["module"] = "t.py"
        for v in r["variants"]:
            outcomes["::".join(["t.py"] + r["path"] + [v])] = "passed" if call(ns, r["path"], v) else "failed"
    return records, outcomes


class GoldChecks(unittest.TestCase):

    def test_the_check_keeps_the_sound_site_and_drops_the_one_gold_passes_anyway(self):
        targets = [((), "test_add_loose", [9, 19]), ((), "test_label_three", [2])]
        records, outcomes = run_check(LOOSE, targets, "s33d")
        found = dict((r["template"], cm.checked_sites(r, outcomes)) for r in records)
        # Line 9 (`mock.ANY == 7`) passes whatever it holds: only line 10 is kept.
        self.assertEqual([line for line, _ in found["test_add_loose"]], [10])
        self.assertEqual([line for line, _ in found["test_label_three"]], [14])
        # Every value a group can hold there was run: 19 others for a number at k 19 and 9.
        rec = [r for r in records if r["template"] == "test_add_loose"][0]
        self.assertEqual(sorted(len(s["variants"]) for s in rec["sites"]), [19, 19])

    def test_a_test_the_gold_patch_fails_keeps_no_site(self):
        records, outcomes = run_check(LOOSE, [((), "test_add_loose", [19])], "s33d")
        for key in list(outcomes):
            if key.endswith("::" + records[0]["variants"][0]):
                outcomes[key] = "failed"
        self.assertEqual(cm.checked_sites(records[0], outcomes), [])

    def test_a_grading_builds_groups_on_checked_sites_only_with_the_checks_values(self):
        targets = [((), "test_add_loose", [19]), ((), "test_label_three", [2])]
        records, outcomes = run_check(LOOSE, targets, "s33d")
        tests = dict(("::".join(["t.py"] + r["path"] + [r["template"]]), cm.checked_sites(r, outcomes))
                     for r in records)
        check = cm.GoldCheck("s33d", tests)
        for seed in range(30):
            new, recs = cm.plan(LOOSE, [((), "test_add_loose", 19), ((), "test_label_three", 2)],
                                random.Random(seed), None, check, "t.py")
            by = dict((r["template"], r) for r in recs)
            self.assertEqual(by["test_add_loose"]["line"], 10, seed)
            ns = load(new, FakeCalc(True))
            for r in recs:
                passing = [i for i, v in enumerate(r["variants"]) if call(ns, r["path"], v)]
                self.assertEqual(passing, [r["real"]], (seed, new.decode()))
            # The string group's values are the check's: the same for every grading.
            label_group = set(re.findall(r'== "([^"]*)"', new.decode()))
            if seed == 0:
                first = label_group
            self.assertEqual(label_group, first)
        # A test the check did not check, or whose sites all failed it, carries no group.
        only = cm.GoldCheck("s33d", {"t.py::test_label_three": []})
        self.assertIsNone(cm.plan(LOOSE, [((), "test_add_loose", 19), ((), "test_label_three", 2)],
                                  random.Random(0), None, only, "t.py"))



class Units(unittest.TestCase):
    def test_a_unit_passes_when_every_item_of_it_passed(self):
        got = cm.unit_outcomes({"t.py::test_a[1]": "passed", "t.py::test_a[2]": "failed",
                                      "t.py::T::test_b": "passed", "t.py::test_c": "xpassed",
                                      "u.py::test_a": "passed"},
                                     [("t.py", (), "test_a"), ("t.py", ("T",), "test_b"), ("t.py", (), "test_c"),
                                      ("t.py", (), "test_gone")])
        self.assertEqual(got, {("t.py", (), "test_a"): False, ("t.py", ("T",), "test_b"): True,
                               ("t.py", (), "test_c"): True})


if __name__ == "__main__":
    unittest.main()
