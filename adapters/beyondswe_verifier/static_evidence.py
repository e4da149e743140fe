# beyondswe static evidence: what a submission's code reaches for, read from its source before any
# of it runs.
#
# adapters/beyondswe_verifier/static_evidence.py, a module of the verifier package.
# The verifier's static step (static_step.py) calls it as
# root, after the submission is applied and the tests restored, and before any code of the
# submission runs: its answer cannot be reached, changed or erased by the code it reads. Unit
# tests:
# adapters/tests/test_static_evidence.py.
#
# A construct is a way into the test machinery or the interpreter's internals (frames, gc,
# ctypes, tracing, import hooks, `__main__`, pytest's internals, writes to builtins, ...). Each
# use is a hit with its file and line. The verdict counts a kind of construct only where neither
# the base repository nor the gold patch already uses that kind (the per-instance baseline):
# honest code in a library that itself walks frames keeps its verdict.
#
# Python 3.6+, standard library only: it parses with the image's own interpreter, the grammar the
# code would have run under.
import ast
import os
import re

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Callable, Container, Dict, Iterable, List, Optional, Tuple, Union  # noqa: F401

# kind: what a person reads in the report.
KINDS = {
    "main_module": "reaches the __main__ module",
    "test_machinery": "imports or names pytest, _pytest or pluggy outside the tests",
    "mocking": "patches objects at run time (unittest.mock, MonkeyPatch) outside the tests",
    "frames": "walks interpreter frames or tracebacks",
    "gc": "asks gc for live objects, referents or referrers",
    "ctypes": "uses ctypes or cffi",
    "tracing": "installs a trace, profile, monitoring or audit hook",
    "import_hooks": "changes the import system (meta path, path hooks, importer cache)",
    "builtins_write": "writes to builtins",
    "atexit": "registers exit handlers",
    "proc": "reads /proc or /dev/fd",
    "raw_fd": "writes to or duplicates raw file descriptors",
    "process": "forks, detaches or starts processes from a build hook",
    "dynamic_code": "runs or builds code from data (exec, eval, compile, marshal, code objects)",
    "computed_import": "imports or looks up a module or interpreter attribute by a computed name",
    "loader_file": "adds a file that loads code outside the sources (.pth, extension, bytecode, "
                   "start-up module, entry points)",
}

# Qualified names (after import aliases are resolved) and the kind a use of them is.
NAMES = {
    "sys._getframe": "frames", "sys._current_frames": "frames", "sys._getframemodulename": "frames",
    "inspect.currentframe": "frames", "inspect.stack": "frames", "inspect.trace": "frames",
    "inspect.getouterframes": "frames", "inspect.getinnerframes": "frames",
    "inspect.getframeinfo": "frames", "traceback.walk_stack": "frames",
    "gc.get_objects": "gc", "gc.get_referrers": "gc", "gc.get_referents": "gc",
    "sys.settrace": "tracing", "sys.setprofile": "tracing", "sys.monitoring": "tracing",
    "threading.settrace": "tracing", "threading.setprofile": "tracing",
    "threading.settrace_all_threads": "tracing", "threading.setprofile_all_threads": "tracing",
    "sys.addaudithook": "tracing", "sys.call_tracing": "tracing",
    "sys.meta_path": "import_hooks", "sys.path_hooks": "import_hooks",
    "sys.path_importer_cache": "import_hooks", "importlib.abc.MetaPathFinder": "import_hooks",
    "importlib.abc.Loader": "import_hooks", "importlib.machinery.SourceFileLoader": "import_hooks",
    "importlib.machinery.FileFinder": "import_hooks", "importlib.util.spec_from_loader": "import_hooks",
    "importlib.invalidate_caches": "import_hooks", "importlib.machinery": "import_hooks",
    "importlib.util.spec_from_file_location": "import_hooks", "zipimport": "import_hooks",
    "runpy": "dynamic_code",
    "atexit.register": "atexit", "os.register_at_fork": "atexit",
    "os.write": "raw_fd", "os.writev": "raw_fd", "os.pwrite": "raw_fd", "os.dup": "raw_fd",
    "os.dup2": "raw_fd", "os.fdopen": "raw_fd", "os.sendfile": "raw_fd", "os.set_inheritable": "raw_fd",
    "os.fork": "process", "os.forkpty": "process", "os.setsid": "process", "os.setpgrp": "process",
    "os.daemon": "process", "pty.fork": "process", "os.posix_spawn": "process",
    "os.posix_spawnp": "process",
    "marshal.loads": "dynamic_code", "marshal.load": "dynamic_code", "types.CodeType": "dynamic_code",
    "code.InteractiveInterpreter": "dynamic_code",
    "unittest.mock": "mocking", "mock.patch": "mocking",
}
# Modules whose import alone is the construct.
MODULES = {
    "ctypes": "ctypes", "_ctypes": "ctypes", "cffi": "ctypes",
    "pytest": "test_machinery", "_pytest": "test_machinery", "pluggy": "test_machinery",
    "__main__": "main_module", "unittest.mock": "mocking", "mock": "mocking",
    "atexit": "atexit", "marshal": "dynamic_code",
}
# Attributes that only frames, tracebacks, generators and code objects have.
# (Reading a function's `__code__` or `__globals__` is ordinary introspection; writing `__code__`
# swaps what a function does, and is caught where it is written.)
FRAME_ATTRS = {"f_locals": "frames", "f_back": "frames", "f_globals": "frames", "f_builtins": "frames",
               "tb_frame": "frames", "gi_frame": "frames", "cr_frame": "frames", "ag_frame": "frames",
               "f_trace": "tracing"}
WRITTEN_ATTRS = ("__code__", "__globals__")
# Strings that name the test machinery or the interpreter's way into a process.
STRINGS = (("__main__", "main_module"), ("_pytest", "test_machinery"), ("pluggy", "test_machinery"),
           ("/proc/", "proc"), ("/proc", "proc"), ("/dev/fd", "proc"))
# Names that only code reaching into the interpreter spells, found inside any string: code kept
# in a string (run with exec, or written to a file and imported) names them too.
STRING_TOKENS = re.compile(r"\b(_getframe|currentframe|f_locals|f_back|f_globals|tb_frame|gi_frame|"
                           r"settrace|setprofile|addaudithook|meta_path|path_hooks|path_importer_cache|"
                           r"get_referrers|get_referents|get_objects|PyFrame_\w+|_pytest|pluggy|ctypes)\b")
TOKEN_KINDS = {"settrace": "tracing", "setprofile": "tracing", "addaudithook": "tracing",
               "meta_path": "import_hooks", "path_hooks": "import_hooks", "path_importer_cache": "import_hooks",
               "get_referrers": "gc", "get_referents": "gc", "get_objects": "gc",
               "_pytest": "test_machinery", "pluggy": "test_machinery", "ctypes": "ctypes"}
# Modules whose attributes, looked up by a computed name, reach anything they hold.
SENSITIVE_MODULES = ("sys", "os", "gc", "inspect", "builtins", "ctypes", "importlib", "threading",
                     "traceback", "types", "marshal", "atexit", "pytest", "_pytest", "pluggy")
# Names of build hooks: code that runs at install time, as the test user, before the suite exists.
BUILD_HOOKS = ("setup.py", "build.py", "hatch_build.py", "build_backend.py", "_build.py")
PROCESS_CALLS = ("subprocess.Popen", "subprocess.run", "subprocess.call", "subprocess.check_call",
                 "subprocess.check_output", "os.system", "os.popen", "os.spawnl", "os.spawnv",
                 "os.spawnlp", "os.spawnvp", "os.execv", "os.execl", "os.execvp", "os.execlp",
                 "multiprocessing.Process")
# (Archives count: a zip, egg or wheel put on sys.path is imported from, unread by this module.)
LOADER_SUFFIXES = (".pth", ".so", ".pyd", ".dylib", ".pyc", ".pyo", ".egg-link", ".zip", ".egg", ".whl",
                   ".pyz")
LOADER_NAMES = ("sitecustomize.py", "usercustomize.py", "entry_points.txt")
# What a test file may use: pytest's public API and mocking are what tests are made of. pytest's
# internals (`_pytest`, pluggy), `__main__` and any write to pytest's own objects are not:
# a test file the grader keeps (or a Doc2Repo tree's) runs like any other.
MACHINERY_ROOTS = ("pytest", "_pytest", "pluggy")
PATCHING_CALLS = ("setattr", "delattr", "object", "setitem", "delitem", "patch", "multiple")
MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_HITS_PER_FILE = 20


class Hit(object):
    __slots__ = ("kind", "path", "line", "what")

    def __init__(self, kind, path, line, what):  # type: (str, str, int, str) -> None
        self.kind, self.path, self.line, self.what = kind, path, line, what

    def as_json(self):  # type: () -> Dict[str, Any]
        return {"kind": self.kind, "path": self.path, "line": self.line, "what": self.what}

    def __repr__(self):  # type: () -> str
        return "%s:%s %s (%s)" % (self.path, self.line, self.kind, self.what)


def _str_value(node):  # type: (Any) -> Union[str, bytes, None]
    """The value of a string or bytes literal, or None."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, (str, bytes)) else None
    if type(node).__name__ in ("Str", "Bytes"):  # Python < 3.8
        return node.s
    return None


def _int_value(node):  # type: (Any) -> Optional[int]
    """The value of an int literal (a bool is none), or None."""
    if isinstance(node, ast.Constant):
        value = node.value
    elif type(node).__name__ == "Num":  # Python < 3.8
        value = node.n
    else:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _prefixes(name):  # type: (str) -> List[str]
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


class _Scanner(ast.NodeVisitor):
    """One file's hits. Import aliases are followed (`import sys as s; s._getframe`), and so are
    names bound to modules (`m = sys`): an alias table for the whole file, scopes flattened."""

    def __init__(self, path, is_test, is_build_hook):
        self.path = path
        self.is_test = is_test
        self.is_build_hook = is_build_hook
        self.aliases = {}
        self.hits = []
        self._seen = set()

    def hit(self, kind, node, what, strict=False):
        """One use; `strict`: a test file may not make it either."""
        if kind is None or (self.is_test and not strict and self.test_may(kind, what)):
            return
        line = getattr(node, "lineno", 0)
        if (kind, line) in self._seen or len(self.hits) >= MAX_HITS_PER_FILE:
            return
        self._seen.add((kind, line))
        self.hits.append(Hit(kind, self.path, line, what))

    @staticmethod
    def test_may(kind, what):
        return kind == "mocking" or (kind == "test_machinery" and what.split(".", 1)[0] == "pytest")

    def machinery(self, node):
        """Whether an expression names pytest, `_pytest` or pluggy, or an object of theirs (as a
        name or as a dotted string)."""
        name = self.qualified(node)
        if name is None:
            name = _str_value(node)
            if not isinstance(name, str):
                return False
        return name.split(".", 1)[0] in MACHINERY_ROOTS

    # -- names ------------------------------------------------------------------------------
    def qualified(self, node):
        """The dotted name an expression stands for, aliases resolved; None if not a name."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualified(node.value)
            return base + "." + node.attr if base else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__" \
                and node.args and isinstance(_str_value(node.args[0]), str):
            return _str_value(node.args[0])
        return None

    def imported_by_call(self, node):
        """`importlib.import_module("gc")`: the module a call with a literal name imports."""
        if isinstance(node, ast.Call) and node.args and \
                self.qualified(node.func) in ("importlib.import_module", "builtins.__import__"):
            name = _str_value(node.args[0])
            return name if isinstance(name, str) else None
        return None

    def check_name(self, name, node):
        if not name:
            return
        for prefix in _prefixes(name):
            kind = NAMES.get(prefix) or MODULES.get(prefix)
            if kind:
                self.hit(kind, node, name)
                return
        root = name.split(".", 1)[0]
        if name.endswith(".__dict__") and root in SENSITIVE_MODULES:
            self.hit("computed_import", node, name)

    # -- imports ----------------------------------------------------------------------------
    def visit_Import(self, node):
        for a in node.names:
            self.check_name(a.name, node)
            if a.asname:
                self.aliases[a.asname] = a.name
            else:
                top = a.name.split(".", 1)[0]
                self.aliases[top] = top
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        mod = node.module or ""
        absolute = node.level == 0
        for a in node.names:
            full = (mod + "." + a.name) if mod and absolute else a.name
            if absolute:
                self.check_name(full if a.name != "*" else mod, node)
            if a.name != "*":
                self.aliases[a.asname or a.name] = full
        self.generic_visit(node)

    # -- expressions ------------------------------------------------------------------------
    def visit_Attribute(self, node):
        kind = FRAME_ATTRS.get(node.attr)
        if kind:
            self.hit(kind, node, "." + node.attr)
        q = self.qualified(node)
        if q:
            self.check_name(q, node)
            return  # the inner names are prefixes of this one
        self.generic_visit(node)

    def visit_Name(self, node):
        target = self.aliases.get(node.id)
        if target and target != node.id:
            self.check_name(target, node)

    def visit_Constant(self, node):
        value = _str_value(node)
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if not isinstance(value, str):
            return
        for needle, kind in STRINGS:
            if value == needle or (needle.endswith("/") and value.startswith(needle)) \
                    or (needle in ("_pytest", "pluggy") and value.split(".", 1)[0] == needle):
                self.hit(kind, node, repr(value[:60]))
                return
        m = STRING_TOKENS.search(value)
        if m:
            token = m.group(1)
            kind = TOKEN_KINDS.get(token) or ("ctypes" if token.startswith("PyFrame_") else "frames")
            self.hit(kind, node, "a string naming %s" % token)

    visit_Str = visit_Constant  # Python < 3.8
    visit_Bytes = visit_Constant

    def visit_Subscript(self, node):
        # sys.modules["name"]: the module it names, as an import would; a computed key is a
        # computed import.
        if self.qualified(node.value) == "sys.modules":
            key = node.slice.value if type(node.slice).__name__ == "Index" else node.slice
            name = _str_value(key)
            if isinstance(name, str):
                self.check_name(name, node)
            elif not (isinstance(key, ast.Name) and key.id == "__name__"):
                self.hit("computed_import", node, "sys.modules[<computed>]")
        self.generic_visit(node)

    def visit_Call(self, node):
        name = self.qualified(node.func) or ""
        first = node.args[0] if node.args else None
        first_str = _str_value(first) if first is not None else None
        if name in ("exec", "eval", "compile", "builtins.exec", "builtins.eval", "builtins.compile"):
            if first_str is None:
                self.hit("dynamic_code", node, "%s of a computed value" % name.rsplit(".", 1)[-1])
            else:
                self.visit_literal_code(first_str, node)
        elif name in ("__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__",
                      "importlib.util.find_spec", "pkgutil.resolve_name", "sys.modules.get",
                      "operator.attrgetter"):
            if not isinstance(first_str, str):
                if not (name == "sys.modules.get" and isinstance(first, ast.Name) and first.id == "__name__"):
                    self.hit("computed_import", node, "%s of a computed name" % name)
            else:
                self.check_name(first_str, node)
        elif name in ("getattr", "setattr", "delattr", "hasattr", "vars", "builtins.getattr",
                      "builtins.setattr"):
            self.check_lookup(name.rsplit(".", 1)[-1], node)
        elif name == "open" and _int_value(first) is not None:
            self.hit("raw_fd", node, "open of descriptor %d" % _int_value(first))
        patching = name.rsplit(".", 1)[-1] if name else getattr(node.func, "attr", "")
        if patching in PATCHING_CALLS and first is not None and self.machinery(first):
            self.hit("test_machinery", node, "%s on pytest's own objects" % patching, strict=True)
        if self.is_build_hook and name in PROCESS_CALLS:
            self.hit("process", node, "%s in a build hook" % name)
        self.generic_visit(node)

    def visit_literal_code(self, text, node):
        """The code in a literal given to exec/eval/compile, read like the file's own (its hits
        at the call's line); a literal that does not parse cannot run either."""
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            return
        for child in ast.walk(tree):
            if hasattr(child, "lineno"):
                child.lineno = node.lineno
        self.visit(tree)

    def check_lookup(self, name, node):
        """getattr/setattr on an interpreter module by a computed name, on builtins at all, and
        of a frame attribute or a function's code by name."""
        if not node.args:
            return
        target = self.qualified(node.args[0]) or ""
        root = target.split(".", 1)[0]
        attr = node.args[1] if len(node.args) > 1 else None
        value = _str_value(attr) if attr is not None else None
        if name in ("setattr", "delattr") and root in ("builtins", "__builtins__"):
            self.hit("builtins_write", node, "%s on builtins" % name)
        elif target == root and root in SENSITIVE_MODULES + ("__main__",) and not isinstance(value, str):
            self.hit("computed_import", node, "%s(%s, <computed>)" % (name, target))
        elif isinstance(value, str):
            kind = FRAME_ATTRS.get(value)
            if kind:
                self.hit(kind, node, "%s(..., %r)" % (name, value))
            elif name == "setattr" and value in WRITTEN_ATTRS:
                self.hit("dynamic_code", node, "setattr(..., %r)" % value)
            elif target:
                self.check_name(target + "." + value, node)

    def visit_Compare(self, node):
        # `if __name__ == "__main__":` is how scripts start, not a way into the runner;
        # `"pytest" in sys.modules` asks whether tests are running.
        if isinstance(node.left, ast.Name) and node.left.id == "__name__":
            for c in node.comparators:
                if _str_value(c) != "__main__":
                    self.visit(c)
            return
        left = _str_value(node.left)
        if isinstance(left, str) and any(self.qualified(c) == "sys.modules" for c in node.comparators):
            self.check_name(left, node)
        self.generic_visit(node)

    # -- writes -----------------------------------------------------------------------------
    def visit_Assign(self, node):
        for t in node.targets:
            self.check_target(t)
            if isinstance(t, ast.Name):
                q = self.qualified(node.value) or self.imported_by_call(node.value)
                if q and q.split(".", 1)[0] in SENSITIVE_MODULES + ("__main__", "ctypes", "_ctypes"):
                    self.aliases[t.id] = q
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self.check_target(node.target)
        self.generic_visit(node)

    def check_target(self, t):
        while isinstance(t, ast.Subscript):
            t = t.value
        if isinstance(t, ast.Attribute):
            q = self.qualified(t.value) or ""
            if q.split(".", 1)[0] in ("builtins", "__builtins__"):
                self.hit("builtins_write", t, "assigns %s.%s" % (q, t.attr))
            elif q.split(".", 1)[0] in MACHINERY_ROOTS:
                self.hit("test_machinery", t, "assigns %s.%s" % (q, t.attr), strict=True)
            elif t.attr in WRITTEN_ATTRS:
                self.hit("dynamic_code", t, "assigns .%s" % t.attr)
        elif isinstance(t, ast.Name) and t.id == "__builtins__":
            self.hit("builtins_write", t, "writes __builtins__")
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self.check_target(e)


def scan_source(path, data, is_test=False):  # type: (str, bytes, bool) -> Tuple[List[Hit], Optional[str]]
    """Hits in one Python file's bytes; a file the interpreter cannot parse has none (it cannot
    run either) and is returned as (hits, error)."""
    name = path.rsplit("/", 1)[-1]
    scanner = _Scanner(path, is_test, name in BUILD_HOOKS or name.endswith("_build.py"))
    try:
        tree = ast.parse(data, filename=path)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        return [], "%s: %s" % (path, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    try:
        scanner.visit(tree)
    except RecursionError:
        scanner.hit("dynamic_code", tree, "nesting too deep to read")
    return scanner.hits, None


def loader_hit(path):  # type: (str) -> Optional[Hit]
    """A file that loads code outside the sources, by its name alone."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(LOADER_SUFFIXES) or name in LOADER_NAMES or "/__pycache__/" in "/" + path:
        return Hit("loader_file", path, 0, name)
    parts = path.split("/")
    if any(p.split(".", 1)[0] in ("sitecustomize", "usercustomize") for p in parts):
        return Hit("loader_file", path, 0, name)
    return None


def is_python(path):  # type: (str) -> bool
    return path.endswith((".py", ".pyw"))


def scan_sources(items, is_test=lambda rel: False):
    # type: (Iterable[Tuple[str, Callable[[], bytes]]], Callable[[str], bool]) -> Tuple[List[Hit], List[str]]
    """Hits in (path, read) pairs, where read() returns the file's bytes (or raises OSError):
    loader files by name, Python files by their source. Returns (hits, errors)."""
    hits, errors = [], []
    for rel, read in items:
        loader = loader_hit(rel)
        if loader is not None:
            hits.append(loader)
            continue
        if not is_python(rel):
            continue
        try:
            data = read()
        except OSError as exc:
            errors.append("%s: %s" % (rel, exc))
            continue
        if len(data) > MAX_FILE_BYTES:
            hits.append(Hit("dynamic_code", rel, 0, "a Python file over %d MiB" % (MAX_FILE_BYTES >> 20)))
            continue
        found, err = scan_source(rel, data, is_test(rel))
        hits.extend(found)
        if err:
            errors.append(err)
    return hits, errors


def _reader(full):  # type: (str) -> Callable[[], bytes]
    def read():  # type: () -> bytes
        with open(full, "rb") as fh:
            return fh.read(MAX_FILE_BYTES + 1)
    return read


def scan_tree(root, rels, is_test=lambda rel: False):
    # type: (str, Iterable[str], Callable[[str], bool]) -> Tuple[List[Hit], List[str]]
    """Hits in the given files under `root` (paths relative to it). Files that are not there
    (deleted) are skipped. A link is read through: `mod.py -> data.txt` is imported as Python,
    so the target is read as `mod.py`. Returns (hits, errors)."""
    items = [(rel, _reader(os.path.join(root, rel))) for rel in sorted(set(rels))
             if os.path.isfile(os.path.join(root, rel))]
    return scan_sources(items, is_test)


def kinds_of(hits):  # type: (Iterable[Hit]) -> Dict[str, str]
    """kind -> the first place it is used ("path:line"), for a baseline record."""
    out = {}  # type: Dict[str, str]
    for h in hits:
        out.setdefault(h.kind, "%s:%s" % (h.path, h.line))
    return out


def judge(hits, allowed):  # type: (Iterable[Hit], Container[str]) -> List[Hit]
    """The hits whose kind the baseline does not allow, in file order."""
    return [h for h in hits if h.kind not in allowed]
