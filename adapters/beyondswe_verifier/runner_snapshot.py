# beyondswe pytest runner, its second file: the snapshot of the functions the tests' outcomes
# depend on and the checks against it, after collection, between tests and at the end; and the
# finder that has the tests' modules compiled from their source.
#
# adapters/beyondswe_verifier/runner_snapshot.py: never imported by the verifier, which copies it
# into each run's directory beside the runner as beyondswe_runner_snapshot.py (testrun.py). The
# runner (pytest_runner.py) loads it from there by its absolute path, never through sys.path,
# before any path of the repository is taken off sys.path and before anything of the repository
# runs, as the module beyondswe_runner_snapshot; from then on it guards this module as it guards
# itself (its functions in the snapshot and the fingerprint, its file in the audit hook). It reads
# none of the runner's globals: what it needs (the modules to guard, the set of guarded ids the
# audit hook reads, how to report a finding, which files are the tests) is passed in. It imports
# only modules built in or loaded by then, and importlib.machinery from importlib's own directory:
# none is looked up on sys.path.
#   snapshot(names, ids)   (identity, function, code) of every function and class of the modules
#   compare(snap, keys)    what changed since, by name (pytest's own configure-time patch is not)
#   Fingerprint            what the check between tests reads, in C loops only
#   Checks                 the runner's checks: after collection, between tests, at the end
#   TestSourceFinder       a test directory's module compiled from its source, never a cache
# Python 3.6+, standard library only. Unit tests: adapters/tests/test_runner_snapshot.py.
import gc
import importlib.machinery
import itertools
import operator
import sys
import types

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple  # noqa: F401
    Id = Tuple[int, int, int]  # (id of the value, of its function, of its code)
    Snap = Dict[Tuple[str, str], Optional[Id]]  # (module, "" or name or "Class.attr") -> Id
    Impls = Tuple[Tuple[str, Tuple[Tuple[str, int], ...]], ...]  # hook -> (plugin, id of function)


def func_of(value):  # type: (Any) -> Any
    """The function behind a method, staticmethod or classmethod; else the value itself. Read
    by type, never through getattr: an object with a dynamic __getattr__ (unittest.mock's
    `call`) would answer with a new object at every look."""
    if isinstance(value, (types.MethodType, staticmethod, classmethod)):
        return value.__func__
    return value


def code_id(value):  # type: (Any) -> Id
    f = func_of(value)
    code = f.__code__ if isinstance(f, types.FunctionType) else None
    return (id(value), id(f), id(code) if code is not None else 0)


def guarded_module_names(roots, own):  # type: (Sequence[str], Sequence[str]) -> List[str]
    """The loaded modules whose functions are guarded: every module under the top-level names
    `roots` (pytest, pluggy, unittest) and the runner's own modules `own`."""
    names = []
    for name in list(sys.modules):
        root = name.split(".", 1)[0]
        if root in roots or name in own:
            names.append(name)
    return names


def snapshot(names, guarded_ids):  # type: (List[str], Set[int]) -> Snap
    """Every callable (function, class, method, property) of the modules `names` and of their
    own classes, by identity and code; the ids of those objects go into `guarded_ids`."""
    snap = {}  # type: Snap
    for name in names:
        mod = sys.modules.get(name)
        if mod is None:
            continue
        snap[(name, "")] = (id(mod), 0, 0)
        for key, value in list(getattr(mod, "__dict__", {}).items()):
            if callable(value) or isinstance(value, (staticmethod, classmethod, property)):
                snap[(name, key)] = code_id(value)
                guarded_ids.add(id(value))
                if isinstance(value, type) and getattr(value, "__module__", None) == name:
                    for akey, avalue in list(vars(value).items()):
                        if callable(avalue) or isinstance(avalue, (staticmethod, classmethod, property)):
                            snap[(name, key + "." + akey)] = code_id(avalue)
                            f = func_of(avalue)
                            guarded_ids.add(id(f))
                            if isinstance(avalue, property):
                                for acc in (avalue.fget, avalue.fset, avalue.fdel):
                                    if acc is not None:
                                        guarded_ids.add(id(acc))
    return snap


def current(name, key):  # type: (str, str) -> Optional[Id]
    """What the snapshot's entry (name, key) would hold now; None when it is gone."""
    mod = sys.modules.get(name)
    if not key:
        return (id(mod), 0, 0) if mod is not None else None
    if mod is None:
        return None
    d = getattr(mod, "__dict__", {})
    if "." in key:
        cls_name, attr = key.split(".", 1)
        cls = d.get(cls_name)
        if cls is None:
            return None
        value = vars(cls).get(attr)
    else:
        value = d.get(key)
    return None if value is None else code_id(value)


class Fingerprint(object):
    """What the check between tests reads, in C loops only (a Python loop over a few thousand
    names per test, each with id() calls, doubled a real suite's time): which module each
    critical name holds, the identity of every value of those modules' and their classes'
    namespaces (live views, taken once), their names, and what every function among them refers
    to (its code among them). Any difference sends the check to the full comparison with the
    snapshot, which names what changed."""

    def __init__(self, names):  # type: (List[str]) -> None
        self.names = names
        self.refresh()

    def refresh(self):  # type: () -> None
        spaces, funcs = [], []  # type: (List[Any], List[Any])
        for name in self.names:
            d = getattr(sys.modules.get(name), "__dict__", None)
            if not isinstance(d, dict):
                continue
            spaces.append(d)
            for value in list(d.values()):
                funcs.extend(self._functions(value))
                if isinstance(value, type) and getattr(value, "__module__", None) == name:
                    ns = vars(value)
                    spaces.append(ns)
                    for avalue in list(ns.values()):
                        funcs.extend(self._functions(avalue))
        self.values = [s.values() for s in spaces]
        self.keys = [s.keys() for s in spaces]
        self.funcs = funcs
        self.saved = self.read()

    @staticmethod
    def _functions(value):
        if isinstance(value, property):
            return [a for a in (value.fget, value.fset, value.fdel) if isinstance(a, types.FunctionType)]
        f = func_of(value)
        return [f] if isinstance(f, types.FunctionType) else []

    # Bound now, before any repository code runs: a module attribute or a builtin replaced later
    # does not change what the check calls.
    _modules, _chain, _referents = sys.modules, itertools.chain.from_iterable, gc.get_referents  # type: Any, Any, Any
    _is, _all, _map = operator.is_, all, map  # type: Any, Any, Any

    def read(self):  # type: () -> Tuple[Tuple[Any, ...], ...]
        return (tuple(self._map(self._modules.get, self.names)),
                tuple(self._chain(self.values)),
                tuple(self._chain(self.keys)),
                tuple(self._referents(*self.funcs)))

    def moved(self):  # type: () -> bool
        # By identity (never ==, which a replacement could answer), and neither id() nor
        # __code__ per object: each is an audit event, and would run the audit hook thousands of
        # times a test. The functions' referents (code, defaults, globals, ...) come from one
        # gc.get_referents call, one event.
        for now, saved in zip(self.read(), self.saved):
            if len(now) != len(saved) or not self._all(self._map(self._is, now, saved)):
                return True
        return False


def pytest_own_patch(name, key):  # type: (str, str) -> bool
    """pytest's legacypath plugin replaces a few methods at configure time with module functions
    named `<Class>_<attr>`: that change is pytest's own, nobody else's."""
    if "." not in key:
        return False
    cls_name, attr = key.split(".", 1)
    cls = getattr(sys.modules.get(name), cls_name, None)
    value = vars(cls).get(attr) if cls is not None else None
    f = getattr(value, "fget", None) or getattr(value, "__func__", value)
    mod = getattr(f, "__module__", "") or ""
    fname = getattr(f, "__name__", "")
    return (mod.startswith("_pytest.") and fname == cls_name + "_" + attr
            and getattr(sys.modules.get(mod), fname, None) is f)


def compare(snap, keys):  # type: (Snap, Iterable[Tuple[str, str]]) -> List[str]
    """The entries `keys` of `snap` that changed, as `module.name`; pytest's own patch is taken
    into `snap` instead."""
    changed = []
    for key in keys:
        now = current(*key)
        if now != snap[key]:
            if pytest_own_patch(*key):
                snap[key] = now
                continue
            changed.append("%s.%s" % key if key[1] else key[0])
    return changed


# The hooks whose implementations are compared at every check.
HOOKS = ("pytest_runtest_makereport", "pytest_runtest_protocol", "pytest_runtest_call",
         "pytest_pyfunc_call", "pytest_runtest_logreport", "pytest_report_teststatus",
         "pytest_runtest_setup", "pytest_runtest_teardown", "pytest_collection_modifyitems",
         "pytest_sessionfinish", "pytest_terminal_summary", "pytest_deselected")


def hook_impls(config, hooks):  # type: (Any, Sequence[str]) -> Impls
    """(hook, ((plugin name, id of its function), ...)) for each of `hooks` pytest knows."""
    out = []
    pm = config.pluginmanager
    for name in hooks:
        caller = getattr(pm.hook, name, None)
        if caller is None:
            continue
        try:
            impls = caller.get_hookimpls()
        except Exception:  # noqa: BLE001
            impls = []
        out.append((name, tuple((i.plugin_name, id(i.function)) for i in impls)))
    return tuple(out)


class Checks(object):
    """The runner's checks against the snapshot `snap`, each reported once through `finding(kind,
    detail, proof)`: after collection and at the end every entry; between tests the entries of
    `critical_modules` when their fingerprint moved; each time, the implementations of `hooks`
    against those at the end of collection."""

    def __init__(self, snap, critical_modules, finding, hooks=HOOKS):
        # type: (Snap, Sequence[str], Callable[[str, str, bool], None], Sequence[str]) -> None
        self.snap = snap
        self.critical = [k for k in snap if k[0] in critical_modules]
        self.critical_names = sorted(set(k[0] for k in self.critical))  # those the snapshot holds
        self.finding = finding
        self.hooks = hooks
        self.seen = set()  # type: Set[str]
        self.config = None  # type: Any
        self.hookimpls = None  # type: Optional[Impls]
        self.fingerprint = None  # type: Optional[Fingerprint]

    def take_hooks(self, config):  # type: (Any) -> None
        """The hook implementations as collection ends: what every later check compares with."""
        self.config = config
        self.hookimpls = hook_impls(config, self.hooks)

    def after_collection(self):  # type: () -> None
        self.check(list(self.snap), "after collection")
        self.fingerprint = Fingerprint(self.critical_names)

    def between_tests(self, when):  # type: (str) -> None
        if self.fingerprint is None or self.fingerprint.moved():
            self.check(self.critical, when)
            if self.fingerprint is not None:
                self.fingerprint.refresh()
        else:
            self.check_hooks(when)

    def at_end(self):  # type: () -> None
        self.check(list(self.snap), "at session end")

    def check(self, keys, when):  # type: (Iterable[Tuple[str, str]], str) -> None
        changed = [c for c in compare(self.snap, keys) if c not in self.seen]
        self.seen.update(changed)
        if changed:
            self.finding("integrity", "%s: changed %s" % (when, ", ".join(sorted(changed)[:20])), True)
        self.check_hooks(when)

    def check_hooks(self, when):  # type: (str) -> None
        if self.hookimpls is not None and self.config is not None:
            now = hook_impls(self.config, self.hooks)
            if now != self.hookimpls:
                before = dict(self.hookimpls)
                moved = [n for n, impls in now if before.get(n) != impls]
                self.finding("hooks", "%s: implementations of %s changed" % (when, ", ".join(moved)), True)
                self.hookimpls = now


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """A test directory's module compiled from its source, never from a cache."""

    def get_code(self, fullname):  # type: (str) -> Any
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


class TestSourceFinder(object):
    """Python's path finder, but a module whose file (resolved by `real`) is `under_tests` gets
    the loader above: no bytecode of the tests is read, from any cache."""

    def __init__(self, real, under_tests):  # type: (Callable[[str], str], Callable[[str], bool]) -> None
        self.real = real
        self.under_tests = under_tests

    def find_spec(self, name, path=None, target=None):  # type: (str, Any, Any) -> Any
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)  # type: Any
        loader = getattr(spec, "loader", None)
        if (type(loader) is importlib.machinery.SourceFileLoader and spec.origin
                and self.under_tests(self.real(spec.origin))):
            spec.loader = SourceOnlyLoader(loader.name, loader.path)
        return spec

    def invalidate_caches(self):  # type: () -> None
        importlib.machinery.PathFinder.invalidate_caches()
