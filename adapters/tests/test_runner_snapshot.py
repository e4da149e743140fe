"""Unit tests of the runner's second file (adapters/beyondswe_verifier/runner_snapshot.py) on small
modules of their own: the snapshot holds every function, class, method and property by identity
and code, and their ids for the audit hook; the comparison names what was replaced, rewritten or
removed, and takes pytest's own configure-time patch in; the fingerprint between tests moves
whenever a value, a name or a function's code of a guarded namespace changes, and not otherwise;
the checks report each change once and a changed hook implementation; and a module under the test
directories is compiled from its source even where a cache says otherwise. Standard library
only; the runner itself is tested in test_pytest_runner.py."""
import importlib.machinery
import importlib.util
import os
import py_compile
import shutil
import sys
import tempfile
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import runner_snapshot as rs  # noqa: E402

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, List  # noqa: F401

SOURCE = '''
LIMIT = 3


def f(x):
    return x + 1


class C(object):
    def m(self):
        return 1

    @staticmethod
    def s():
        return 2

    @classmethod
    def k(cls):
        return 3

    @property
    def p(self):
        return 4

    LABEL = "c"


Imported = dict  # a class of another module: itself only, not its attributes
'''


class Module(unittest.TestCase):
    """A module of SOURCE, registered under a name of its own for the test's length."""

    def setUp(self):
        self.name = "bsw_snap_%s_%d" % (self._testMethodName, id(self))
        self.mod = self.make(self.name)
        self.addCleanup(sys.modules.pop, self.name, None)

    def make(self, name):  # type: (str) -> Any
        mod = types.ModuleType(name)
        exec(compile(SOURCE, "<%s>" % name, "exec"), mod.__dict__)
        sys.modules[name] = mod
        return mod


class Snapshot(Module):
    def test_the_function_behind_each_kind_of_method(self):
        c = self.mod.C
        self.assertIs(rs.func_of(vars(c)["s"]), c.s)
        self.assertIs(rs.func_of(vars(c)["k"]), vars(c)["k"].__func__)
        self.assertIs(rs.func_of(c().m), vars(c)["m"])
        self.assertIs(rs.func_of(self.mod.f), self.mod.f)
        f = self.mod.f
        self.assertEqual(rs.code_id(f), (id(f), id(f), id(f.__code__)))
        self.assertEqual(rs.code_id(dict), (id(dict), id(dict), 0))

    def test_guarded_modules_are_those_under_the_roots_and_the_runners_own(self):
        sub = self.name + ".sub"
        self.make(sub)
        self.addCleanup(sys.modules.pop, sub, None)
        names = rs.guarded_module_names((self.name,), ())
        self.assertIn(self.name, names)
        self.assertIn(sub, names)
        self.assertNotIn("os", names)
        self.assertEqual(rs.guarded_module_names((), ("os",)), ["os"])

    def test_the_snapshot_holds_every_callable_and_gives_their_ids_to_the_hook(self):
        ids = set()
        snap = rs.snapshot([self.name, "bsw_not_loaded"], ids)
        keys = set(k for n, k in snap if n == self.name)
        self.assertEqual(keys, set(["", "f", "C", "C.m", "C.s", "C.k", "C.p", "Imported"]))
        self.assertNotIn(("bsw_not_loaded", ""), snap)
        self.assertEqual(snap[(self.name, "")], (id(self.mod), 0, 0))
        c = vars(self.mod.C)
        for obj in (self.mod.f, self.mod.C, c["m"], c["s"].__func__, c["k"].__func__, c["p"], c["p"].fget):
            self.assertIn(id(obj), ids)
        self.assertNotIn(id(self.mod.LIMIT), ids)

    def test_what_the_snapshot_holds_is_what_is_current_until_it_changes(self):
        snap = rs.snapshot([self.name], set())
        for (name, key), value in snap.items():
            self.assertEqual(rs.current(name, key), value, key)
        self.assertIsNone(rs.current(self.name, "missing"))
        self.assertIsNone(rs.current(self.name, "Missing.attr"))
        self.assertIsNone(rs.current("bsw_not_loaded", "f"))


class Compare(Module):
    def test_nothing_changed_is_nothing_named(self):
        snap = rs.snapshot([self.name], set())
        self.assertEqual(rs.compare(snap, list(snap)), [])

    def test_a_replaced_rewritten_or_removed_function_is_named(self):
        snap = rs.snapshot([self.name], set())
        keys = list(snap)
        self.mod.f = lambda x: x + 1
        vars(self.mod.C)["m"].__code__ = (lambda self: 2).__code__
        self.mod.C.s = staticmethod(lambda: 2)
        del self.mod.C.p
        n = self.name
        self.assertEqual(sorted(rs.compare(snap, keys)), sorted([n + ".f", n + ".C.m", n + ".C.s", n + ".C.p"]))
        # Only the keys asked about.
        self.assertEqual(rs.compare(snap, [(n, "f")]), [n + ".f"])

    def test_a_module_replaced_in_sys_modules_is_named(self):
        snap = rs.snapshot([self.name], set())
        sys.modules[self.name] = types.ModuleType(self.name)
        self.assertIn(self.name, rs.compare(snap, [(self.name, "")]))
        del sys.modules[self.name]
        self.assertEqual(rs.compare(snap, [(self.name, ""), (self.name, "f")]), [self.name, self.name + ".f"])

    def test_pytests_own_configure_time_patch_is_taken_in(self):
        """A method replaced by a module function `<Class>_<attr>` of a `_pytest.` module that
        holds it (pytest's legacypath plugin) is no change; any other function is."""
        plugin = types.ModuleType("_pytest.bsw_legacy")
        sys.modules[plugin.__name__] = plugin
        self.addCleanup(sys.modules.pop, plugin.__name__, None)

        def C_m(self):  # noqa: N802 - pytest's own naming
            return 1
        C_m.__module__ = plugin.__name__
        plugin.C_m = C_m  # type: ignore[attr-defined]
        snap = rs.snapshot([self.name], set())
        key = (self.name, "C.m")
        self.mod.C.m = C_m
        self.assertTrue(rs.pytest_own_patch(*key))
        self.assertEqual(rs.compare(snap, [key]), [])
        self.assertEqual(snap[key], rs.code_id(C_m))  # the patched method is guarded from now on

        def other(self):
            return 1
        self.mod.C.m = other
        self.assertFalse(rs.pytest_own_patch(*key))
        self.assertEqual(rs.compare(snap, [key]), [self.name + ".C.m"])
        self.assertFalse(rs.pytest_own_patch(self.name, "f"))


class Fingerprint(Module):
    def fingerprint(self):  # type: () -> rs.Fingerprint
        fp = rs.Fingerprint([self.name, "bsw_not_loaded"])
        self.assertFalse(fp.moved())
        return fp

    def test_a_replaced_function_moves_it_until_refreshed(self):
        fp = self.fingerprint()
        self.mod.f = lambda x: x + 1
        self.assertTrue(fp.moved())
        fp.refresh()
        self.assertFalse(fp.moved())

    def test_a_rewritten_code_or_default_moves_it(self):
        fp = self.fingerprint()
        vars(self.mod.C)["m"].__code__ = (lambda self: 2).__code__
        self.assertTrue(fp.moved())
        fp = self.fingerprint()
        self.mod.f.__defaults__ = (1,)
        self.assertTrue(fp.moved())
        fp = self.fingerprint()
        vars(self.mod.C)["p"].fget.__code__ = (lambda self: 5).__code__
        self.assertTrue(fp.moved())

    def test_a_class_attribute_or_a_new_name_moves_it(self):
        fp = self.fingerprint()
        self.mod.C.s = staticmethod(lambda: 2)
        self.assertTrue(fp.moved())
        fp = self.fingerprint()
        self.mod.g = len
        self.assertTrue(fp.moved())
        fp = self.fingerprint()
        self.mod.LIMIT = 4
        self.assertTrue(fp.moved())

    def test_a_module_replaced_or_loaded_moves_it(self):
        fp = self.fingerprint()
        sys.modules[self.name] = types.ModuleType(self.name)
        self.assertTrue(fp.moved())
        fp = self.fingerprint()
        sys.modules["bsw_not_loaded"] = types.ModuleType("bsw_not_loaded")
        self.addCleanup(sys.modules.pop, "bsw_not_loaded", None)
        self.assertTrue(fp.moved())

    def test_calls_and_instances_do_not_move_it(self):
        fp = self.fingerprint()
        self.assertEqual((self.mod.f(1), self.mod.C().m(), self.mod.C.k(), self.mod.C().p), (2, 1, 3, 4))
        self.assertFalse(fp.moved())


class Impl(object):
    def __init__(self, plugin_name, function):  # type: (str, Any) -> None
        self.plugin_name, self.function = plugin_name, function


class Caller(object):
    def __init__(self, impls):  # type: (List[Impl]) -> None
        self.impls = impls

    def get_hookimpls(self):  # type: () -> List[Impl]
        return list(self.impls)


class Broken(object):
    def get_hookimpls(self):  # type: () -> List[Impl]
        raise RuntimeError("no")


class Config(object):
    def __init__(self):  # type: () -> None
        self.pluginmanager = types.SimpleNamespace(hook=types.SimpleNamespace(
            pytest_runtest_call=Caller([Impl("python", len)]), pytest_runtest_setup=Broken()))


class Checks(Module):
    def setUp(self):
        super(Checks, self).setUp()
        self.findings = []
        self.other = self.name + "_other"
        self.make(self.other)
        self.addCleanup(sys.modules.pop, self.other, None)
        self.snap = rs.snapshot([self.name, self.other], set())
        self.checks = rs.Checks(self.snap, (self.name,), lambda *f: self.findings.append(f))
        self.config = Config()
        self.checks.take_hooks(self.config)
        self.checks.after_collection()

    def test_the_hooks_pytest_knows_are_read(self):
        impls = rs.hook_impls(self.config, ("pytest_runtest_call", "pytest_runtest_setup", "pytest_unknown"))
        self.assertEqual(impls, (("pytest_runtest_call", (("python", id(len)),)), ("pytest_runtest_setup", ())))
        self.assertIn("pytest_runtest_call", rs.HOOKS)

    def test_the_critical_modules_are_those_the_snapshot_holds(self):
        self.assertEqual(self.checks.critical_names, [self.name])
        self.assertTrue(self.checks.critical)
        self.assertTrue(all(k[0] == self.name for k in self.checks.critical))
        self.assertEqual(self.findings, [])

    def test_a_change_between_tests_is_reported_once(self):
        self.checks.between_tests("after t1")
        self.assertEqual(self.findings, [])
        self.mod.f = lambda x: x
        self.checks.between_tests("after t2")
        self.checks.between_tests("after t3")
        self.checks.at_end()
        self.assertEqual(self.findings, [("integrity", "after t2: changed %s.f" % self.name, True)])

    def test_a_change_outside_the_critical_modules_waits_for_the_end(self):
        sys.modules[self.other].f = lambda x: x
        self.checks.between_tests("after t1")
        self.assertEqual(self.findings, [])
        self.checks.at_end()
        self.assertEqual(self.findings, [("integrity", "at session end: changed %s.f" % self.other, True)])

    def test_a_changed_hook_implementation_is_reported_at_the_next_check(self):
        self.config.pluginmanager.hook.pytest_runtest_call.impls.append(Impl("repo", print))
        self.checks.between_tests("after t1")
        self.checks.between_tests("after t2")
        self.assertEqual(self.findings, [("hooks", "after t1: implementations of pytest_runtest_call changed", True)])

    def test_before_collection_ends_there_is_no_hook_to_compare(self):
        checks = rs.Checks(self.snap, (self.name,), lambda *f: self.findings.append(f))
        self.mod.f = lambda x: x
        checks.between_tests("after t1")
        self.assertEqual(self.findings, [("integrity", "after t1: changed %s.f" % self.name, True)])


class TestSources(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="bsw-snap-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.name = "bsw_cached_%d" % id(self)
        path = os.path.join(self.dir, self.name + ".py")
        with open(path, "w") as fh:
            fh.write("VALUE = 1\n")
        py_compile.compile(path)
        stat = os.stat(path)
        # The same size and time: the cache is taken for the source by any loader that reads it.
        with open(path, "w") as fh:
            fh.write("VALUE = 2\n")
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    def load(self, spec):  # type: (Any) -> Any
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    def test_a_test_directorys_module_is_compiled_from_its_source(self):
        real = []
        finder = rs.TestSourceFinder(lambda p: real.append(p) or p, lambda p: p.startswith(self.dir + os.sep))
        spec = finder.find_spec(self.name, [self.dir])
        self.assertIs(type(spec.loader), rs.SourceOnlyLoader)
        self.assertEqual(real, [spec.origin])
        self.assertEqual(self.load(spec).VALUE, 2)
        # Python's own loader reads the cache.
        plain = importlib.machinery.PathFinder.find_spec(self.name, [self.dir])
        self.assertEqual(self.load(plain).VALUE, 1)

    def test_any_other_module_is_left_to_pythons_loader(self):
        finder = rs.TestSourceFinder(lambda p: p, lambda p: False)
        spec = finder.find_spec(self.name, [self.dir])
        self.assertIs(type(spec.loader), importlib.machinery.SourceFileLoader)
        self.assertIsNone(finder.find_spec("bsw_no_such_module", [self.dir]))
        finder.invalidate_caches()


if __name__ == "__main__":
    unittest.main()
