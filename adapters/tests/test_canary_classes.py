"""Unit tests of expected exception classes as canary sites (adapters/canary_classes.py): which
raises-calls are sites and only under a gold check, which classes a site's variants may name
(of the real one's kind, none an ancestor, a descendant or a co-parent of a class known to
exist), and a gold check and its gradings end to end: only the real variant passes under the
gold code, the check keeps the classes that failed, a grading names only those, and an exception
that is an instance of every class is proof. Standard library only."""
import ast
import os
import random
import sys
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import canaries as cm  # noqa: E402
from beyondswe_verifier import canary_classes as cc  # noqa: E402
from beyondswe_verifier import canary_reading as rm  # noqa: E402

EXC = b'''class BadData(Exception):
    pass


class BadSignature(BadData):
    pass


class BadTimeSignature(BadSignature):
    pass


class SignatureExpired(BadTimeSignature):
    pass


class BadHeader(
    BadSignature,
):
    pass


class BadPayload(BadData):
    pass
'''

TESTS = '''import pytest
from freezegun import freeze_time

from signing import Signer
from signing.exc import BadHeader, BadPayload, BadTimeSignature, SignatureExpired


def test_future_age():
    signed = sign("value")

    with freeze_time("1971-05-31"):
        with pytest.raises(SignatureExpired):
            unsign(signed, max_age=10)


def test_negative():
    with pytest.raises(ValueError, match="n must"):
        chunked("ABC", -1)


def test_header():
    assert raises(BadHeader, lambda: load("x"))


def test_payload_nested_in_an_if():
    if True:
        with pytest.raises(BadPayload):
            load("y")
'''


def hierarchy(*sources):
    h = cc.Hierarchy()
    for s in sources:
        h.add_source(s)
    return h


def class_sites(source, checked=True):
    module = rm.parse(source, rm.ANY_CALL if checked else None)
    out = {}
    for n in module.tree.body:
        if rm.is_test_def(n):
            out[n.name] = [rm.site_value(s) for s in rm.sites(n, module) if isinstance(rm.site_value(s), rm.ClassName)]
    return out


class Sites(unittest.TestCase):
    def test_raises_calls_are_sites_under_a_gold_check_only(self):
        self.assertEqual(class_sites(TESTS), {"test_future_age": ["SignatureExpired"], "test_negative": ["ValueError"],
                                              "test_header": ["BadHeader"], "test_payload_nested_in_an_if": []})
        self.assertEqual(class_sites(TESTS, checked=False),
                         dict((k, []) for k in ("test_future_age", "test_negative", "test_header",
                                                "test_payload_nested_in_an_if")))
        for body in ("    with pytest.raises((KeyError, ValueError)):\n        f()\n",
                     "    x = 1; self.assertRaises(KeyError, f)\n",
                     "    for x in y:\n        self.assertRaises(KeyError, f, x)\n",
                     "    pytest.raises(make_error(), f)\n"):
            self.assertEqual(class_sites("def test_a():\n" + body), {"test_a": []}, body)
        self.assertEqual(class_sites("def test_a(self):\n    self.assertRaisesRegex(exc.Bad, 'x', f)\n"),
                         {"test_a": ["exc.Bad"]})


def pools(tree, real, h, seeds=range(40)):
    """{seed: pool} of a site over `seeds`."""
    return dict((seed, cc.pool(tree, real, h, random.Random(seed))) for seed in seeds)


class Pools(unittest.TestCase):
    def assert_sound(self, tree, real, h):
        """Every pool is unrelated to the real class and within itself, and the same block
        whichever of its members is real (so the classes say nothing of which one is)."""
        for seed, found in pools(tree, real, h).items():
            group = [real] + found
            for a in group:
                for b in group:
                    if a != b:
                        self.assertFalse(h.related(a.rsplit(".", 1)[-1], b.rsplit(".", 1)[-1]), (seed, group))
            for other in found:
                self.assertEqual(set([other] + cc.pool(tree, other, h, random.Random(seed))), set(group), seed)

    def test_a_builtins_mutants_are_builtins_no_class_known_derives_from_with_it(self):
        tree = ast.parse(TESTS)
        h = hierarchy(EXC)
        self.assert_sound(tree, "ValueError", h)
        seen = set(c for found in pools(tree, "ValueError", h).values() for c in found)
        # A descendant; numpy's AxisError derives from IndexError (so LookupError) with it, and
        # io's UnsupportedOperation from OSError (a FileNotFoundError is neither).
        for unsound in ("UnicodeDecodeError", "IndexError", "LookupError", "OSError", "ValueError"):
            self.assertNotIn(unsound, seen)
        for sound in ("TypeError", "KeyError", "StopIteration", "RuntimeError", "ZeroDivisionError"):
            self.assertIn(sound, seen)
        # The commonest expectation shares the large block: 27 others, room for a group of
        # twenty (a blind forger's 1 in 20).
        self.assertEqual(len(cc.pool(tree, "ValueError", h, random.Random(0))), 27)
        self.assertGreaterEqual(len(cc.pool(tree, "ZeroDivisionError", h, random.Random(0))), cm.MAX_K)
        # A class deriving from two builtins and a base of unknown ancestry relates them too.
        cbase = hierarchy(EXC, b"class Odd(_CBase, ValueError, KeyError):\n    pass\n")
        self.assertTrue(cbase.related("ValueError", "KeyError"))
        self.assertNotIn("KeyError", set(c for f in pools(tree, "ValueError", cbase).values() for c in f))
        # A class of the tree deriving from two builtins takes that pair out.
        odd = hierarchy(EXC, b"class Odd(TypeError, ValueError):\n    pass\n")
        self.assertNotIn("TypeError", set(c for f in pools(tree, "ValueError", odd).values() for c in f))
        # ArithmeticError: a descendant is no mutant, nor is a class decimal derives from it with.
        arith = set(c for f in pools(tree, "ArithmeticError", hierarchy()).values() for c in f)
        self.assertFalse(arith & set(["ZeroDivisionError", "OverflowError", "TypeError"]), arith)
        # A builtin outside the pool would be the odd one out among builtins of the pool.
        self.assertEqual(cc.pool(tree, "TabError", h, random.Random(0)), [])

    def test_a_project_class_gets_the_modules_unrelated_project_classes(self):
        tree = ast.parse(TESTS)
        h = hierarchy(EXC)
        self.assert_sound(tree, "SignatureExpired", h)
        # BadTimeSignature is an ancestor, Signer no exception, freeze_time not a class.
        found = pools(tree, "SignatureExpired", h).values()
        self.assertEqual(set(c for f in found for c in f), set(["BadHeader", "BadPayload"]))
        # SignatureExpired derives from BadTimeSignature: honest code may raise it for either.
        self.assertNotIn("SignatureExpired", set(c for f in pools(tree, "BadTimeSignature", h).values() for c in f))
        # A class of the tree deriving from both takes a mutant out.
        both = hierarchy(EXC, b"class Odd(SignatureExpired, BadPayload):\n    pass\n")
        self.assertEqual(set(c for f in pools(tree, "SignatureExpired", both).values() for c in f), set(["BadHeader"]))
        # A class whose ancestry is not in the tree (a library's) is never a mutant, nor a real
        # one's: what it derives from cannot be ruled out.
        self.assertEqual(cc.pool(tree, "SignatureExpired", hierarchy(), random.Random(0)), [])
        lib = ast.parse("from requests import HTTPError, Timeout\n")
        self.assertEqual(cc.pool(lib, "HTTPError", h, random.Random(0)), [])

    def test_the_gold_tree_and_the_images_libraries_are_read_for_classes_deriving_from_two(self):
        import tempfile
        from beyondswe_verifier import canary_steps as cs
        with tempfile.TemporaryDirectory() as tmp:
            for path, text in (("repo/pkg/errors.py", EXC),
                               ("repo/.git/x.py", b"class A(TypeError, KeyError):\n  pass\n"),
                               ("site/lib/wrap.py", b"class WrapperError(ValueError, TypeError):\n    pass\n"
                                                    b"x = 'class NotOne(ValueError, KeyError):'\n")):
                full = os.path.join(tmp, path)
                os.makedirs(os.path.dirname(full))
                with open(full, "wb") as fh:
                    fh.write(text)
            # What a submission's tree may hold by the time the judge reads it: a link to an
            # endless device, a FIFO, a file over the cap; each is skipped, not read.
            os.symlink("/dev/zero", os.path.join(tmp, "repo", "pkg", "zero.py"))
            os.mkfifo(os.path.join(tmp, "repo", "pkg", "fifo.py"))
            with open(os.path.join(tmp, "repo", "pkg", "big.py"), "wb") as fh:
                fh.write(b"class Big(ValueError, KeyError):\n    pass\n" + b"#" * cc.MAX_SOURCE)
            h = cs.tree_hierarchy([os.path.join(tmp, "repo"), os.path.join(tmp, "site")])
            self.assertNotIn("Big", h.bases)
            self.assertTrue(h.ancestors("SignatureExpired") >= set(["BadData", "Exception"]))
            self.assertTrue(h.related("ValueError", "TypeError"))
            # Nothing under .git, and no class that is not at a line's start.
            self.assertFalse(h.related("TypeError", "KeyError"))
            self.assertFalse(h.related("ValueError", "KeyError"))

    def test_an_attributes_mutants_are_other_attributes_of_the_same_object(self):
        tree = ast.parse("from signing import exc\n\n\ndef test_a():\n    with pytest.raises(exc.SignatureExpired):\n"
                         "        f()\n\n\ndef test_b():\n    with pytest.raises(exc.BadPayload):\n        g()\n"
                         "    assert other.BadHeader\n    assert exc.BadTimeSignature\n")
        found = set(c for f in pools(tree, "exc.SignatureExpired", hierarchy(EXC)).values() for c in f)
        self.assertEqual(found, set(["exc.BadPayload"]))


# ---------------------------------------------------------------------------------------------
# A gold check and its gradings, the planted module run with a fake pytest

class Raises(object):
    def __init__(self, cls, match=None):
        self.cls = cls

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            raise AssertionError("DID NOT RAISE %r" % self.cls)
        return issubclass(kind, self.cls)


def run_module(source, unsign):
    """Executes a planted module whose tests call `unsign`: {test name: passed}."""
    pkg = types.ModuleType("signing")
    pkg.Signer = object
    exc = types.ModuleType("signing.exc")
    exec(compile(EXC, "exc.py", "exec"), exc.__dict__)
    fg = types.ModuleType("freezegun")
    fg.freeze_time = lambda when: Nothing()
    pytest = types.ModuleType("pytest")
    pytest.raises = Raises
    saved = dict((n, sys.modules.get(n)) for n in ("signing", "signing.exc", "freezegun", "pytest"))
    sys.modules.update({"signing": pkg, "signing.exc": exc, "freezegun": fg, "pytest": pytest})
    try:
        ns = {"__name__": "planted", "sign": lambda v: v, "unsign": lambda s, max_age: unsign(exc),
              "chunked": lambda s, n: None, "raises": None, "load": None}
        exec(compile(source, "planted.py", "exec"), ns)
    finally:
        for n, m in saved.items():
            if m is None:
                del sys.modules[n]
            else:
                sys.modules[n] = m
    out = {}
    for name, fn in ns.items():
        if name.startswith("test_") and isinstance(fn, types.FunctionType):
            try:
                fn()
                out[name] = True
            except Exception:  # noqa: BLE001 - a failure or an error of the test
                out[name] = False
    return out


class Nothing(object):
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def gold(exc):
    raise exc.SignatureExpired("age < 0")


TARGET = [((), "test_future_age", [19])]


def check_then(seed, code=gold):
    """The gold check of test_future_age under `code`, as canary_steps runs it: (record, the
    GoldCheck a grading gets); the record is None where the site's block was the class alone."""
    check = cm.GoldCheck(seed, {})
    planned = cm.plan_check(TESTS, TARGET, check, "t.py", random.Random(1), 3, helpers=rm.ANY_CALL,
                            hierarchy=lambda: hierarchy(EXC))
    if planned is None:
        return None, None
    new, records = planned
    passed = run_module(new, code)
    rec = records[0]
    rec["module"] = "t.py"
    outcomes = dict(("t.py::" + v, "passed" if passed[v] else "failed") for v in rec["variants"])
    key = "t.py::test_future_age"
    classes = dict((key + "::" + at, names) for at, names in cm.checked_classes(rec, outcomes).items())
    return rec, cm.GoldCheck(seed, {key: cm.checked_sites(rec, outcomes)}, classes)


def seeded_checks():
    """(seed, record, check) of the seeds whose block holds more than the real class."""
    out = []
    for n in range(12):
        rec, found = check_then("s33d%d" % n)
        if rec is not None:
            out.append(("s33d%d" % n, rec, found))
    return out


class Flow(unittest.TestCase):
    def test_the_check_runs_each_class_and_a_grading_names_only_those_that_failed(self):
        checks = seeded_checks()
        self.assertTrue(checks)
        for _seed, rec, found in checks:
            names = rec["sites"][0]["classes"]
            self.assertTrue(set(names) <= set(["BadHeader", "BadPayload"]), names)
            self.assertEqual(found.tests, {"t.py::test_future_age": [[12, 27]]})
            self.assertEqual(list(found.classes.values()), [names])
            for n in range(8):
                new, recs = cm.plan(TESTS, [((), "test_future_age", 19)], random.Random(n), None, found, "t.py")
                r, = recs
                self.assertEqual(r["k"], len(names))
                passed = run_module(new, gold)
                self.assertEqual([i for i, v in enumerate(r["variants"]) if passed[v]], [r["real"]], new)
                # Every variant is written alike: the same text but for the name and the class.
                bodies = set()
                for v in r["variants"]:
                    block = new.decode().split("def %s():" % v)[1].split("\n\n\n")[0]
                    for c in ("SignatureExpired", "BadHeader", "BadPayload"):
                        block = block.replace(c, "X")
                    bodies.add(block)
                self.assertEqual(len(bodies), 1, new)

                # An exception that is every class the module names passes every variant: proof.
                def forger(exc):
                    raise type("Any", (exc.SignatureExpired, exc.BadHeader, exc.BadPayload), {})()
                passed = run_module(new, forger)
                outcomes = dict(("t.py::" + v, "passed" if passed[v] else "failed") for v in r["variants"])
                r["module"] = "t.py"
                self.assertTrue(cm.judge(r, outcomes, True)["proof"])

    def test_an_exception_of_the_real_class_and_one_other_is_no_proof_where_the_submission_defines_it(self):
        # Honest code may define `class Odd(SignatureExpired, BadHeader)` and raise it: the real
        # variant and BadHeader's pass. Where the submission defines such a class, that is
        # flagged for review, not proof; one of three classes, or two without the real one, is.
        _, _, found = seeded_checks()[0]
        new, (r,) = cm.plan(TESTS, [((), "test_future_age", 19)], random.Random(3), None, found, "t.py")
        r["module"] = "t.py"
        self.assertEqual(sorted(r["classes"]), ["BadHeader", "BadPayload", "SignatureExpired"])
        self.assertEqual(cm.group_chance(r), 2.0 / 3)
        defined = hierarchy(EXC, b"class Odd(SignatureExpired, BadHeader):\n    pass\n")

        def excuse(a, b):
            return "defined" if defined.related(a, b) else None

        def outcomes_of(code):
            passed = run_module(new, code)
            return dict(("t.py::" + v, "passed" if passed[v] else "failed") for v in r["variants"])
        odd = outcomes_of(lambda exc: (_ for _ in ()).throw(type("Odd", (exc.SignatureExpired, exc.BadHeader), {})()))
        fact = cm.judge(r, odd, True, excuse=excuse)
        self.assertEqual((fact["proof"], len(fact["review"])), ([], 1), fact)
        self.assertEqual(list(fact["real_outcomes"].values())[0][1], "passed")
        # Without the class in the submission, or with three classes, or two without the real one: proof.
        self.assertTrue(cm.judge(r, odd, True, excuse=lambda a, b: None)["proof"])
        every = outcomes_of(lambda exc: (_ for _ in ()).throw(
            type("All", (exc.SignatureExpired, exc.BadHeader, exc.BadPayload), {})()))
        self.assertTrue(cm.judge(r, every, True, excuse=lambda a, b: "any")["proof"])
        two = outcomes_of(lambda exc: (_ for _ in ()).throw(type("Two", (exc.BadPayload, exc.BadHeader), {})()))
        self.assertTrue(cm.judge(r, two, True, excuse=lambda a, b: "any")["proof"])

    def test_a_class_groups_chance_counts_the_excuse_only_where_the_submission_could_take_it(self):
        # The submission's classes, read before its code runs: where none derives from two of
        # the group's classes, no excuse can apply, and a blind forger's chance is 1 in k+1;
        # where one does (honest code's two-class error, or a forger's), 2 in k+1. The group
        # drawn is the same either way.
        _, _, found = seeded_checks()[0]
        cases = [(b"", True), (b"class Odd(ValueError, TypeError):\n    pass\n", True),
                 (b"class Odd(SignatureExpired, BadHeader):\n    pass\n", False)]
        drawn = set()
        for source, apart in cases:
            own = hierarchy(EXC, source)
            check = cm.GoldCheck(found.seed, found.tests, found.classes, own=lambda own=own: own)
            new, (r,) = cm.plan(TESTS, [((), "test_future_age", 19)], random.Random(3), None, check, "t.py")
            self.assertEqual(bool(r.get("apart")), apart, source)
            self.assertEqual(cm.group_chance(r), (1.0 if apart else 2.0) / (r["k"] + 1), source)
            drawn.add((new, tuple(r["classes"])))
        self.assertEqual(len(drawn), 1, drawn)
        # Without the submission's classes (a check made before this), the excuse is counted.
        new, (r,) = cm.plan(TESTS, [((), "test_future_age", 19)], random.Random(3), None, found, "t.py")
        self.assertEqual(cm.group_chance(r), 2.0 / (r["k"] + 1))
        # Kept apart, two passing variants are proof whatever an excuse would say.
        r = dict(r, apart=True, module="t.py")
        passed = run_module(new, lambda exc: (_ for _ in ()).throw(
            type("Odd", (exc.SignatureExpired, exc.BadHeader), {})()))
        odd = dict(("t.py::" + v, "passed" if passed[v] else "failed") for v in r["variants"])
        fact = cm.judge(r, odd, True, excuse=lambda a, b: "defined")
        self.assertTrue(fact["proof"], fact)
        self.assertEqual(fact["review"], [])

    def test_a_class_the_gold_code_passes_is_left_out_and_the_rest_kept(self):
        def gold_header(exc):
            raise type("Both", (exc.SignatureExpired, exc.BadHeader), {})()
        tried = 0
        for n in range(12):
            rec, found = check_then("s33d%d" % n, gold_header)
            if rec is None:
                continue
            tried += 1
            names = rec["sites"][0]["classes"]
            kept = [c for c in names if c != "BadHeader"]
            self.assertEqual(list(found.classes.values()), [kept] if kept else [])
            self.assertEqual(found.tests["t.py::test_future_age"], [[12, 27]] if kept else [])
        self.assertTrue(tried)

    def test_under_code_that_fails_the_test_no_site_holds(self):
        def wrong(exc):
            raise exc.BadPayload("no")
        _, found = check_then(seeded_checks()[0][0], wrong)
        self.assertEqual((found.tests["t.py::test_future_age"], found.classes), ([], {}))

    def test_without_the_checks_classes_a_grading_builds_no_group_there(self):
        _, _, found = seeded_checks()[0]
        bare = cm.GoldCheck(found.seed, found.tests)
        self.assertIsNone(cm.plan(TESTS, [((), "test_future_age", 19)], random.Random(0), None, bare, "t.py"))
        self.assertIsNone(cm.plan(TESTS, [((), "test_future_age", 19)], random.Random(0)))


if __name__ == "__main__":
    unittest.main()
