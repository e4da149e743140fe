# beyondswe verifier: sites in the arguments of a project's own assertion helpers.
#
# adapters/beyondswe_verifier/helper_sites.py; used by canary_steps.py when
# it plans a gold check or a Doc2Repo suite's groups, and read by canary_reading.sites() through
# the object it hands a parsed module (Module.helpers).
#
# Many projects test through a helper of their own, `self.assertMarkdownRenders(source,
# expected)` or `check(source, expected)`, with no `assert ... == literal` in the test itself. A
# literal argument of such a call carries a group only where the helper compares that argument,
# unchanged and used nowhere else, with a value made without it, in an equality assertion every
# call reaches: then, as for a top-level assertion, "the real variant passes" implies "each
# mutant fails" for any implementation. An input argument never carries one: wrong honest code
# may map two inputs to one output.
#
# The helper is found as Python would find it, as far as source can say: a method through the
# test's class and its bases (in the module, or in a module of the tree it imports), or a
# function of the module or imported into it. The tree read is a trusted one: the gold tree at
# the gold check (a grading then builds groups only on the check's sites, whatever the
# submission made of the helper), the hidden suite of a Doc2Repo instance. Unit tests:
# adapters/tests/test_helper_sites.py.
import ast
import os
import posixpath

from . import canary_reading as reading

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Type, Union  # noqa: F401

# unittest's equality assertions (the helper's comparison) and how deep helpers may call helpers.
EQUALITY = frozenset(["assertEqual", "assertEquals", "assertMultiLineEqual", "assertListEqual",
                      "assertTupleEqual", "assertDictEqual", "assertSequenceEqual", "assertSetEqual"])
MAX_DEPTH = 3
MAX_CLASSES = 16
MAX_SOURCE = 2 * 1024 * 1024


class Helpers(object):
    """The helpers a test module reaches. `load(path)` reads a file of the tree by its path
    relative to the tree's root (bytes, or None); `module_path` is the test module's.
    `wrappers`: an expected argument may also be a literal wrapped in a one-argument call
    (`self.dedent("...")`); only where a gold check then shows that the wrapped values
    differ (the check's values all failed under the gold patch)."""

    def __init__(self,
                 load,  # type: Callable[[str], Optional[bytes]]
                 module_path,  # type: str
                 wrappers,  # type: bool
                 parsed=None,  # type: Optional[Dict[str, Any]]
                 ):
        # type: (...) -> None
        """`parsed`: the tree's modules parsed so far, shared by the Helpers of one tree's test
        modules so that a helper module they all import is read and parsed once."""
        self.load, self.module_path, self.wrappers = load, module_path, wrappers
        self.parsed = {} if parsed is None else parsed

    # -- reading the tree ---------------------------------------------------------------------

    def module_at(self, path):  # type: (str) -> Any
        path = posixpath.normpath(path)
        if path.startswith("../") or path == ".." or posixpath.isabs(path):
            return None
        if path not in self.parsed:
            data = self.load(path)
            self.parsed[path] = reading.parse(data) if data is not None and len(data) <= MAX_SOURCE else None
        return self.parsed[path]

    def resolve(self, from_path, name, level):  # type: (str, Optional[str], int) -> Optional[Tuple[str, Any]]
        """(path, Module) of the module `from ... import` or `import` names, from the module at
        `from_path`: relative to it with a level, else from the tree's root, its `src/`, or a
        folder above the module (where pytest puts a test's folder on sys.path)."""
        rel = (name or "").replace(".", "/")
        if level:
            parts = from_path.split("/")[:-1]
            if level - 1 > len(parts):
                return None
            roots = ["/".join(parts[:len(parts) - (level - 1)])]
        else:
            roots, d = ["", "src"], posixpath.dirname(from_path)
            while d:
                roots.append(d)
                d = posixpath.dirname(d)
        for root in roots:
            stem = posixpath.join(root, rel) if rel else root
            for path in (stem + ".py", posixpath.join(stem, "__init__.py")):
                module = self.module_at(path)
                if module is not None:
                    return path, module
        return None

    def imported(self, path, module, name):  # type: (str, Any, str) -> Optional[Tuple[str, Any, str]]
        """(path, Module, original name) of a name a module imports with `from X import name`."""
        for node in module.tree.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        found = self.resolve(path, node.module, node.level or 0)
                        return None if found is None else (found[0], found[1], alias.name)
        return None

    def top_level(self, module, name, kinds):  # type: (Any, str, Type[Union[ast.ClassDef, ast.FunctionDef]]) -> Any
        for node in module.tree.body:
            if isinstance(node, kinds) and node.name == name:
                return node
        return None

    # -- finding the helper -------------------------------------------------------------------

    def base_classes(self,
                     path,  # type: str
                     module,  # type: Any
                     cls,  # type: ast.ClassDef
                     ):
        # type: (...) -> Iterator[Tuple[str, Any, ast.ClassDef]]
        """(path, Module, ClassDef) of each base of a class that the tree defines."""
        for base in cls.bases:
            found = None
            if isinstance(base, ast.Name):
                local = self.top_level(module, base.id, ast.ClassDef)
                if local is not None:
                    found = (path, module, local)
                else:
                    where = self.imported(path, module, base.id)  # type: Optional[Tuple[Any, ...]]
                    if where is not None:
                        node = self.top_level(where[1], where[2], ast.ClassDef)
                        found = None if node is None else (where[0], where[1], node)
            elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
                where = self.module_alias(path, module, base.value.id)
                if where is not None:
                    node = self.top_level(where[1], base.attr, ast.ClassDef)
                    found = None if node is None else (where[0], where[1], node)
            if found is not None:
                yield found

    def module_alias(self, path, module, name):  # type: (str, Any, str) -> Optional[Tuple[str, Any]]
        """(path, Module) a name stands for through `import a.b as name`, `import name` or
        `from pkg import name` (a module)."""
        for node in module.tree.body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        return self.resolve(path, alias.name, 0)
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        return self.resolve(path, ((node.module or "") + "." + alias.name).lstrip("."),
                                            node.level or 0)
        return None

    def method(self,
               path,  # type: str
               module,  # type: Any
               def_path,  # type: Tuple[str, ...]
               name,  # type: str
               ):
        # type: (...) -> Optional[Tuple[str, Any, Union[ast.FunctionDef, ast.AsyncFunctionDef]]]
        """(path, Module, FunctionDef) of method `name` as the class at `def_path` of the module
        finds it: in itself, else in its bases, in order, depth first."""
        cls = reading.classes(module.tree).get(tuple(def_path))
        if cls is None:
            return None
        todo, seen = [(path, module, cls)], 0
        while todo and seen < MAX_CLASSES:
            p, m, c = todo.pop(0)
            seen += 1
            for node in c.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                    return p, m, node
            todo[0:0] = list(self.base_classes(p, m, c))
        return None

    def function(self, path, module, name):  # type: (str, Any, str) -> Optional[Tuple[str, Any, ast.FunctionDef]]
        """(path, Module, FunctionDef) of a module-level function, or one imported by name."""
        node = self.top_level(module, name, ast.FunctionDef)
        if node is not None:
            return path, module, node
        where = self.imported(path, module, name)
        if where is None:
            return None
        node = self.top_level(where[1], where[2], ast.FunctionDef)
        return None if node is None else (where[0], where[1], node)

    def definition(self,
                   path,  # type: str
                   module,  # type: Any
                   def_path,  # type: Tuple[str, ...]
                   call,  # type: ast.Call
                   ):
        # type: (...) -> Optional[Tuple[str, Any, Union[ast.FunctionDef, ast.AsyncFunctionDef], bool]]
        """(path, Module, FunctionDef, is a method) of the helper a call reaches, or None."""
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            found = self.method(path, module, def_path, func.attr) if def_path else None
            return None if found is None else found + (True,)
        if isinstance(func, ast.Name):
            found = self.function(path, module, func.id)
            return None if found is None else found + (False,)
        return None

    # -- what the helper does with its arguments ----------------------------------------------

    def expected_args(self,
                      module,  # type: Any
                      def_path,  # type: Tuple[str, ...]
                      call,  # type: ast.Call
                      depth=0,  # type: int
                      ):
        # type: (...) -> List[ast.expr]
        """The argument nodes of a call that the helper it reaches compares, unchanged, as one
        side of an equality assertion (see the module's header). A helper this reading cannot
        follow (a tree it cannot parse, nesting past Python's limit) gives none: a test without
        a site is graded as one, where an error here would fail the whole check."""
        try:
            return self.expected_in(self.module_path, module, def_path, call, depth)
        except (RecursionError, MemoryError, ValueError, TypeError, AttributeError):
            return []

    def expected_in(self,
                    path,  # type: str
                    module,  # type: Any
                    def_path,  # type: Tuple[str, ...]
                    call,  # type: ast.Call
                    depth,  # type: int
                    ):
        # type: (...) -> List[ast.expr]
        if depth > MAX_DEPTH or any(isinstance(a, ast.Starred) for a in call.args) \
                or any(k.arg is None for k in call.keywords):
            return []
        found = self.definition(path, module, def_path, call)
        if found is None:
            return []
        hpath, hmodule, fn, is_method = found
        if fn.decorator_list or isinstance(fn, ast.AsyncFunctionDef):
            return []
        params = [a.arg for a in getattr(fn.args, "posonlyargs", []) + fn.args.args]
        if is_method:
            params = params[1:]
        hdef_path = self.class_path_of(hmodule, fn) if is_method else ()
        out = []
        for i, param in enumerate(params):
            if i < len(call.args):
                arg = call.args[i]  # type: Optional[ast.expr]
            else:
                arg = next((k.value for k in call.keywords if k.arg == param), None)
            if arg is not None and self.compared(hpath, hmodule, hdef_path, fn, param, depth):
                out.append(arg)
        for k in call.keywords:
            if k.arg in [a.arg for a in fn.args.kwonlyargs] \
                    and self.compared(hpath, hmodule, hdef_path, fn, k.arg, depth):
                out.append(k.value)
        return out

    def class_path_of(self, module, fn):  # type: (Any, ast.FunctionDef) -> Tuple[str, ...]
        for path, cls in reading.classes(module.tree).items():
            if fn in cls.body:
                return path
        return ()

    def compared(self,
                 path,  # type: str
                 module,  # type: Any
                 def_path,  # type: Tuple[str, ...]
                 fn,  # type: ast.FunctionDef
                 param,  # type: Optional[str]
                 depth,  # type: int
                 ):
        # type: (...) -> bool
        """Whether a helper's parameter is one side of an equality assertion that is a statement
        of the helper's own body (reached by every call that gets there), with a value on the
        other side made without it; the parameter named nowhere else, the helper no generator
        and nothing before that statement returning. A parameter handed on, alone, to another
        helper that compares it counts too."""
        uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == param]
        if len(uses) != 1 or not isinstance(uses[0].ctx, ast.Load):
            return False
        use = uses[0]
        at = None
        for i, stmt in enumerate(fn.body):
            if any(n is use for n in ast.walk(stmt)):
                at = i
                break
        if at is None:
            return False
        for i, stmt in enumerate(fn.body):
            for n in reading.nodes_of(stmt):
                if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)):
                    return False
                if isinstance(n, ast.Return) and i <= at:
                    return False
        stmt = fn.body[at]
        if isinstance(stmt, ast.Assert):
            t = stmt.test
            return isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq) \
                and (t.left is use or t.comparators[0] is use) \
                and not reading.is_literalish(t.comparators[0] if t.left is use else t.left)
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            return False
        call = stmt.value
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
                and func.attr in EQUALITY:
            if len(call.args) != 2 or any(k.arg != "msg" for k in call.keywords):
                return False
            a, b = call.args
            return (a is use and not reading.is_literalish(b)) or (b is use and not reading.is_literalish(a))
        # Handed on to another helper, as one of its arguments.
        if any(a is use for a in call.args) or any(k.value is use for k in call.keywords):
            return any(a is use for a in self.expected_in(path, module, def_path, call, depth + 1))
        return False


def for_tree(root, module_path, wrappers, read, parsed=None):
    # type: (str, str, bool, Callable[[str, str], Tuple[Optional[bytes], Any]], Optional[Dict[str, Any]]) -> Helpers
    """Helpers over the tree at `root` (read through `read(root, path)`, which returns (bytes,
    stat) or (None, None)); `parsed` as Helpers takes it."""
    def load(path):  # type: (str) -> Optional[bytes]
        if not os.path.isfile(os.path.join(root, path)):
            return None
        return read(root, path)[0]
    return Helpers(load, module_path, wrappers, parsed)
