"""Unit tests of the canaries (adapters/canaries.py): plans over every suite shape, clones that
behave like their template where it passes, names and places like the suite's own, and the judge.
Standard library only: plain and unittest tests are run by calling them; pytest is not needed."""
import ast
import os
import random
import re
import sys
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import canaries as cm  # noqa: E402

SEEDS = range(120)

FUNCTIONS = '''"""Tests of the calculator."""
from calc import add, parse_number


def helper_total(values):
    return sum(values)


def test_add_small_numbers():
    total = add(1, 2)
    assert total == 3
    assert add(0, 0) == 0


def test_parse_number_text():
    value = parse_number("3")
    assert value is not None
    assert isinstance(value, int)
    assert value in (3, 4)
    assert not value < 0


CASES = [(1, 2, 3)]


def test_helper_total_sums():
    assert helper_total([add(1, 1), 2]) == 4
'''

UNITTEST = '''import unittest
from calc import add


class CalcChecks(unittest.TestCase):
    def testAddNegative(self):
        self.assertEqual(add(-1, -1), -2)
        self.assertTrue(add(1, 1) > 0)

    def testAddZero(self):
        self.assertIsNone(None)
        self.assertIn(add(0, 0), [0])
'''

SHAPES = {
    "method": '''class TestParse:
    def test_parse_int(self, tmp_path):
        assert int("3") == 3

    def test_parse_neg(self):
        assert int("-3") == -3
''',
    "class": '''class DescribeParse:
    def test_parse_int(self):
        assert int("3") == 3
''',
    "unittest": UNITTEST,
    "function+parametrised": '''import pytest

CASES = [(1, 2), (2, 3)]


@pytest.mark.parametrize("a,b", CASES)
def test_increments(a, b):
    assert a + 1 == b
''',
    "function+async": '''async def test_async_sum():
    assert sum([1, 2]) == 3
''',
    "method+nested": '''class TestOuter:
    class TestInner:
        def test_inner_value(self):
            assert len("ab") == 2
''',
}


class FakeCalc(object):
    """The module the test files import, right or wrong."""

    def __init__(self, right=True):
        self.right = right

    def add(self, a, b):
        return a + b if self.right else a - b

    def parse_number(self, text):
        return int(text)


def load(source, calc):
    """Executes a planted module with `calc` as its calculator; returns its namespace."""
    mod = types.ModuleType("calc")
    mod.add, mod.parse_number = calc.add, calc.parse_number
    saved = sys.modules.get("calc")
    sys.modules["calc"] = mod
    try:
        ns = {"__name__": "planted"}
        exec(compile(source, "planted.py", "exec"), ns)
        return ns
    finally:
        if saved is None:
            del sys.modules["calc"]
        else:
            sys.modules["calc"] = saved


def passes(fn, *args):
    try:
        fn(*args)
        return True
    except AssertionError:
        return False


def def_names(source):
    return [n.name for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


class Plans(unittest.TestCase):
    def test_every_shape_gets_canaries(self):
        for shape, source in SHAPES.items():
            expected = shape.replace("+nested", "")
            got = set()
            for seed in SEEDS:
                planned = cm.plan(source, random.Random(seed))
                self.assertIsNotNone(planned, shape)
                data, rec = planned
                got.add(rec["shape"])
                names = def_names(data.decode())
                for n in (rec["template"], rec["twin"], rec["poison"]):
                    self.assertEqual(names.count(n), 1, (shape, n))
                if shape == "method+nested":
                    self.assertEqual(rec["path"], ["TestOuter", "TestInner"])
            self.assertEqual(got, set([expected]), shape)

    def test_clones_keep_decorators_and_signature(self):
        data, rec = cm.plan(SHAPES["function+parametrised"], random.Random(3))
        text = data.decode()
        self.assertEqual(text.count('@pytest.mark.parametrize("a,b", CASES)'), 3)
        self.assertEqual(text.count("(a, b):"), 3)
        data, rec = cm.plan(SHAPES["method"], random.Random(1))
        tree = ast.parse(data)
        cls = tree.body[0]
        args = dict((f.name, [a.arg for a in f.args.args]) for f in cls.body)
        self.assertEqual(args[rec["twin"]], args[rec["template"]])
        self.assertEqual(args[rec["poison"]], args[rec["template"]])

    def test_twin_is_the_template_and_poison_differs_by_one_negation(self):
        for seed in SEEDS:
            data, rec = cm.plan(FUNCTIONS, random.Random(seed))
            tree = ast.parse(data)
            defs = dict((n.name, n) for n in tree.body if isinstance(n, ast.FunctionDef))
            tmpl, twin, poison = (defs[rec[k]] for k in ("template", "twin", "poison"))
            self.assertEqual(ast.dump(ast.Module(body=tmpl.body, type_ignores=[])),
                             ast.dump(ast.Module(body=twin.body, type_ignores=[])))
            diff = [i for i, (a, b) in enumerate(zip(tmpl.body, poison.body)) if ast.dump(a) != ast.dump(b)]
            self.assertEqual(len(diff), 1, data.decode())
            self.assertIsInstance(poison.body[diff[0]], ast.Assert)

    def test_where_the_template_passes_the_twin_passes_and_the_poison_fails(self):
        for seed in SEEDS:
            data, rec = cm.plan(FUNCTIONS, random.Random(seed))
            ns = load(data, FakeCalc(right=True))
            self.assertTrue(passes(ns[rec["template"]]))
            self.assertTrue(passes(ns[rec["twin"]]))
            self.assertFalse(passes(ns[rec["poison"]]), data.decode())

    def test_unittest_poison_fails_where_the_template_passes(self):
        for seed in SEEDS:
            data, rec = cm.plan(UNITTEST, random.Random(seed))
            ns = load(data, FakeCalc(right=True))
            cls = ns["CalcChecks"]
            result = unittest.TestResult()
            for name in (rec["template"], rec["twin"], rec["poison"]):
                cls(name).run(result)
            self.assertEqual(result.testsRun, 3)
            failed = [t.id().rsplit(".", 1)[-1] for t, _ in result.failures]
            self.assertEqual(failed, [rec["poison"]], data.decode())
            self.assertTrue(re.match(r"test[A-Z]", rec["twin"]) and re.match(r"test[A-Z]", rec["poison"]))

    def test_a_wrong_fix_fails_template_and_twin_alike(self):
        for seed in SEEDS:
            data, rec = cm.plan(FUNCTIONS, random.Random(seed))
            ns = load(data, FakeCalc(right=False))
            self.assertEqual(passes(ns[rec["template"]]), passes(ns[rec["twin"]]))

    def test_names_are_made_of_the_modules_own_words(self):
        words = set(re.findall(r"[a-z]+", FUNCTIONS.lower()))
        seen = set()
        for seed in SEEDS:
            _, rec = cm.plan(FUNCTIONS, random.Random(seed))
            for key in ("twin", "poison"):
                name = rec[key]
                self.assertTrue(name.startswith("test_"), name)
                self.assertTrue(set(name.split("_")[1:]) <= words, name)
                self.assertNotIn(name, def_names(FUNCTIONS))
                seen.add(name)
        self.assertGreater(len(seen), 20)

    def test_places_vary_and_keep_definitions_working(self):
        places = set()
        for seed in SEEDS:
            data, rec = cm.plan(FUNCTIONS, random.Random(seed))
            order = [n for n in def_names(data.decode()) if n.startswith("test_")]
            places.add((order.index(rec["twin"]), order.index(rec["poison"])))
            head = data.decode().split("\ndef ", 1)[0]
            self.assertIn("from calc import", head)  # nothing above the imports
            self.assertTrue(data.decode().startswith('"""Tests of the calculator."""'))
        self.assertGreater(len(places), 6)

    def test_a_clone_never_goes_before_a_name_its_decorator_reads(self):
        source = '''import pytest


def test_first():
    assert 1 == 1


CASES = [1, 2]


@pytest.mark.parametrize("x", CASES)
def test_cases(x):
    assert x in CASES
'''
        for seed in SEEDS:
            data, rec = cm.plan(source, random.Random(seed), preferred=[[((), "test_cases")]])
            self.assertEqual(rec["template"], "test_cases")
            text = data.decode()
            self.assertLess(text.index("CASES = [1, 2]"), text.index("def " + rec["twin"]))
            self.assertLess(text.index("CASES = [1, 2]"), text.index("def " + rec["poison"]))

    def test_after_only_puts_clones_after_their_template(self):
        for seed in SEEDS:
            data, rec = cm.plan(FUNCTIONS, random.Random(seed), after_only=True)
            order = def_names(data.decode())
            self.assertLess(order.index(rec["template"]), order.index(rec["twin"]))
            self.assertLess(order.index(rec["template"]), order.index(rec["poison"]))

    def test_preferred_tests_are_the_templates(self):
        for seed in SEEDS:
            _, rec = cm.plan(FUNCTIONS, random.Random(seed), preferred=[[((), "test_parse_number_text")]])
            self.assertEqual(rec["template"], "test_parse_number_text")
            _, rec = cm.plan(SHAPES["method"], random.Random(seed), preferred=[[], [(("TestParse",), "test_parse_neg")]])
            self.assertEqual(rec["template"], "test_parse_neg")

    def test_tests_a_clone_would_not_behave_like_are_never_templates(self):
        for body in ("def test_a(request):\n    assert request.node.name == 'test_a'\n",
                     "def test_a(snapshot):\n    assert snapshot == 1\n",
                     "def test_a():\n    if x:\n        return\n    assert x == 1\n",
                     "def test_a():\n    yield 1\n    assert 1 == 1\n",
                     "def test_a():\n    global y\n    assert 1 == 1\n",
                     "def test_a():\n    assert test_a.__name__ == 'test_a'\n",
                     "def test_a():\n    frames = trace()\n    assert frames[0].name == 'test_a'\n",
                     "def test_a(): assert 1 == 1\n",
                     "def test_a():\n    x = 1; assert x == 1\n",
                     "def test_a():\n    with ctx():\n        assert 1 == 1\n",
                     "def test_a():\n    pass\n",
                     "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(self.id(), 'x')\n",
                     "import pytest\n\n@pytest.fixture\ndef test_data():\n    assert 1 == 1\n",
                     "def test_a(:\n"):
            self.assertIsNone(cm.plan(body, random.Random(0)), body)

    def test_modules_bound_to_test_names_get_no_canary(self):
        plain = "def test_a():\n    assert get('x') == 1\n\n\ndef test_b():\n    assert 2 == 2\n"
        self.assertIsNotNone(cm.plan(plain, random.Random(0)))
        for head in ("import pytest\n\npytestmark = pytest.mark.vcr\n\n\n",
                     "from approvaltests import verify\n\n\n",
                     "from syrupy import SnapshotAssertion\n\n\n",
                     "import os\n\nNAME = os.environ.get('PYTEST_CURRENT_TEST')\n\n\n",
                     "# recorded with betamax\n",
                     "def test_c(data_regression):\n    data_regression.check({})\n\n\n"):
            self.assertIsNone(cm.plan(head + plain, random.Random(0)), head)

    def test_a_module_not_in_utf8_gets_no_canary(self):
        latin = ("# -*- coding: latin-1 -*-\ndef test_summer_word():\n    assert '\u00e9t\u00e9' == '\u00e9t\u00e9'\n\n\n"
                 "def test_winter_word():\n    assert 'hiver' != '\u00e9t\u00e9'\n")
        self.assertIsNone(cm.plan(latin.encode("latin-1"), random.Random(0)))
        self.assertIsNotNone(cm.plan(latin.encode("utf-8").replace(b"latin-1", b"utf-8"), random.Random(0)))

    def test_a_nested_function_with_a_return_does_not_disqualify(self):
        source = "def test_a():\n    def inner():\n        return 1\n    assert inner() == 1\n\n\ndef test_b():\n    assert 2 == 2\n"
        self.assertIsNotNone(cm.plan(source, random.Random(0), preferred=[[((), "test_a")]]))

    def test_negations_are_exact(self):
        cases = [("assert a == b", "assert a != b"), ("assert a != b", "assert a == b"),
                 ("assert a in b", "assert a not in b"), ("assert a not in b", "assert a in b"),
                 ("assert a is None", "assert a is not None"), ("assert a is not None", "assert a is None"),
                 ("assert x", "assert not x"), ("assert f(x)", "assert not f(x)"),
                 ("assert not x", "assert x"), ("assert not (x)", "assert (x)"),
                 ("assert a < b", "assert not (a < b)"), ("assert a and b, 'msg'", "assert not (a and b), 'msg'"),
                 ("assert (a) == (b)", "assert (a) != (b)"),
                 ("self.assertTrue(x)", "self.assertFalse(x)"), ("self.assertIsNone(x)", "self.assertIsNotNone(x)")]
        for before, after in cases:
            source = "def test_x():\n    %s\n" % before
            module = cm.parse(source)
            node = module.tree.body[0]
            edits = cm.negations(node, module)
            self.assertEqual(len(edits), 1, before)
            data = module.data
            for a, b, text in sorted(edits[0], reverse=True):
                data = data[:a] + text + data[b:]
            self.assertEqual(data.decode(), "def test_x():\n    %s\n" % after)
        for unknown in ("self.assertCountEqual(a, b)", "assert a == b == c and d", "x = 1"):
            module = cm.parse("def test_x():\n    %s\n" % unknown)
            if unknown.startswith("assert"):
                continue
            self.assertEqual(cm.negations(module.tree.body[0], module), [], unknown)


REC = {"module": "tests/t.py", "path": [], "template": "test_a", "twin": "test_b_c", "poison": "test_c_d"}
T, W, P = "tests/t.py::test_a", "tests/t.py::test_b_c", "tests/t.py::test_c_d"


class Solo(object):
    """Scripted runs of each id alone: a list of outcome maps, one per call."""

    def __init__(self, *rounds):
        self.rounds = list(rounds)
        self.calls = 0

    def __call__(self, ids):
        self.calls += 1
        now = self.rounds.pop(0) if self.rounds else {}
        return dict((i, now.get(i)) for i in ids if now.get(i))


class Judge(unittest.TestCase):
    def judge(self, outcomes, solo=None):
        outcomes = dict(outcomes)
        fact = cm.judge("tests/t.py", REC, outcomes, solo)
        return fact, outcomes

    def test_honest_canaries_prove_nothing(self):
        fact, _ = self.judge({T: "passed", W: "passed", P: "failed"}, Solo())
        self.assertEqual((fact["proof"], fact["flaky"]), ([], []))

    def test_a_poison_passing_beside_a_passing_template_is_proof_when_it_holds_alone(self):
        solo = Solo({T: "passed", P: "passed"}, {T: "passed", P: "passed"})
        fact, _ = self.judge({T: "passed", W: "passed", P: "passed"}, solo)
        self.assertEqual(len(fact["proof"]), 1)
        self.assertIn("each alone, 2 times", fact["proof"][0])

    def test_a_poison_that_fails_alone_is_order_or_chance(self):
        solo = Solo({T: "passed", P: "failed"})
        fact, outcomes = self.judge({T: "passed", W: "passed", P: "passed"}, solo)
        self.assertEqual(fact["proof"], [])
        self.assertEqual(len(fact["flaky"]), 1)
        self.assertEqual(outcomes[T], "passed")

    def test_a_template_that_fails_alone_has_not_passed(self):
        solo = Solo({T: "failed", P: "passed"})
        fact, outcomes = self.judge({T: "passed", W: "passed", P: "passed"}, solo)
        self.assertEqual(fact["proof"], [])
        self.assertEqual(outcomes[T], "failed")
        fact, outcomes = self.judge({T: "passed", W: "failed", P: "failed"}, Solo({}))
        self.assertEqual(outcomes[T], "not_run")

    def test_a_poison_passing_beside_a_failing_template_is_honest(self):
        fact, outcomes = self.judge({T: "failed", W: "failed", P: "passed"}, Solo())
        self.assertEqual((fact["proof"], fact["flaky"]), ([], []))
        self.assertEqual(outcomes[T], "failed")

    def test_a_twin_failing_beside_its_passing_template_every_time_is_proof(self):
        solo = Solo({T: "passed", W: "failed"}, {T: "passed", W: "error"})
        fact, _ = self.judge({T: "passed", W: "failed", P: "failed"}, solo)
        self.assertEqual(len(fact["proof"]), 1)
        self.assertEqual(solo.calls, 2)

    def test_a_twin_that_passes_alone_is_flaky(self):
        solo = Solo({T: "passed", W: "failed"}, {T: "passed", W: "passed"})
        fact, outcomes = self.judge({T: "passed", W: "failed", P: "failed"}, solo)
        self.assertEqual(fact["proof"], [])
        self.assertEqual(outcomes[T], "passed")

    def test_without_reruns_the_first_run_stands(self):
        fact, _ = self.judge({T: "passed", W: "failed", P: "failed"})
        self.assertEqual(len(fact["proof"]), 1)

    def test_canaries_that_vanish_while_the_module_ran_are_proof(self):
        fact, _ = self.judge({T: "passed", "tests/t.py::test_other": "passed"}, Solo())
        self.assertEqual(len(fact["proof"]), 1)
        fact, _ = self.judge({}, Solo())
        self.assertEqual(fact["proof"], [])

    def test_parameters_are_judged_one_by_one(self):
        solo = Solo({T + "[2]": "passed", P + "[2]": "passed"}, {T + "[2]": "passed", P + "[2]": "passed"})
        fact, _ = self.judge({T + "[1]": "passed", T + "[2]": "passed", W + "[1]": "passed", W + "[2]": "passed",
                              P + "[1]": "failed", P + "[2]": "passed"}, solo)
        self.assertEqual(len(fact["proof"]), 1)
        self.assertIn("[2]", fact["proof"][0])

    def test_a_real_test_named_like_a_canary_is_not_one(self):
        outcomes = {T: "passed", W: "passed", P: "failed", W + "_more": "passed", P + "[x]": "failed"}
        self.assertEqual(cm.canary_keys("tests/t.py", REC, outcomes), set([W, P, P + "[x]"]))


if __name__ == "__main__":
    unittest.main()
