# beyondswe canary groups: a test module read for them: which of its tests can be a group's
# template (one whose clones behave like it), and which literal of each can be its site (the
# value an assertion expects; a helper's expected argument where Module.helpers says so).
#
# adapters/beyondswe_verifier/canary_reading.py; used by canaries.py (the
# plan) and helper_sites.py. Works on source text only; unit tests:
# adapters/tests/test_canary_reading.py. Python 3.6+ (before 3.8 the tree's end positions are
# end_positions.py's).
import ast
import re

from . import canary_classes, end_positions

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple, TypeGuard, Union  # noqa: F401
    Def = Union[ast.FunctionDef, ast.AsyncFunctionDef]  # a test's def
    Value = Union[int, float, str, bytes]  # the value of a site's literal


# Arguments through which a test depends on its own name: a clone of it would not behave alike.
NAME_BOUND_ARGS = frozenset(["request", "snapshot", "data_regression", "file_regression", "num_regression",
                             "image_regression", "ndarrays_regression", "dataframe_regression",
                             "original_datadir", "datadir", "shared_datadir", "record_property",
                             "record_testsuite_property", "record_xml_attribute", "benchmark"])
NAME_BOUND_ATTRS = frozenset(["_testMethodName", "_outcome", "__name__", "__qualname__"])
# Words of tools that key a test's expectations by its name (snapshot, approval, golden-file and
# recorded-HTTP libraries) or read it: a module that mentions one gets no group, since a variant
# under another name finds no recording and fails where its template passes.
NAME_BOUND_WORDS = re.compile(rb"snapshot|approvaltests|approvals|golden|regtest|_regression\b|cassette|vcr"
                              rb"|betamax|PYTEST_CURRENT_TEST|nodeid|node\.name|_testMethodName|pytest_dependency"
                              rb"|mark\.dependency|depends\s*=", re.I)
# Decorators that make a test's outcome something other than its body's (expected failures,
# reruns and retries would turn one failing mutant into a pass or a rerun).
OUTCOME_DECORATORS = re.compile(rb"xfail|flaky|rerun|retry|repeat|expectedFailure", re.I)


# ---------------------------------------------------------------------------------------------
# Reading a module

class Module(object):
    """A test module's source, its tree and the byte offsets of its lines (ast columns are UTF-8
    byte offsets)."""

    def __init__(self, source):  # type: (Union[str, bytes]) -> None
        self.data = source.encode("utf-8") if isinstance(source, str) else source
        self.tree = ast.parse(self.data)
        self.lines = self.data.splitlines(True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.taken = set(re.findall(rb"[A-Za-z_][A-Za-z0-9_]*", self.data))
        # What says which arguments of a helper call are expected values (helper_sites.Helpers,
        # or ANY_CALL), or None: only top-level assertions are sites.
        self.helpers = None  # type: Any

    @property
    def gold_checked(self):  # type: () -> bool
        """Whether a gold check proves each site (the check itself, and a grading that has one:
        their helpers take wrapped literals): only then is an expected exception class a site."""
        return bool(getattr(self.helpers, "wrappers", False))

    def offset(self, lineno, col):  # type: (int, int) -> int
        return self.starts[lineno - 1] + col

    def text(self, node):  # type: (Any) -> bytes
        return self.data[self.offset(node.lineno, node.col_offset):self.offset(node.end_lineno, node.end_col_offset)]


def parse(source, helpers=None):  # type: (Union[str, bytes], Any) -> Optional[Module]
    """A Module, or None when the source is not UTF-8 (the columns would not match its bytes) or
    cannot be parsed, or, before Python 3.8, when its tokens cannot be laid over its tree (they
    give the end positions that 3.8 gives: end_positions.py). `helpers`: see Module.helpers."""
    try:
        if not isinstance(source, str):
            source.decode("utf-8")
        module = Module(source)
        if module.tree.body and not hasattr(module.tree.body[0], "end_lineno"):
            module.tree = end_positions.fill(module.tree, module.data, module.lines)
    except (SyntaxError, ValueError, UnicodeError, MemoryError, RecursionError, end_positions.Unreadable):
        return None
    module.helpers = helpers
    return module


def is_test_def(node, prefix="test"):  # type: (ast.AST, str) -> TypeGuard[Def]
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(prefix)


def scopes(tree):  # type: (ast.Module) -> List[Tuple[Tuple[str, ...], List[ast.stmt]]]
    """(class path, body) of the module and of every class in it, nested ones included: each
    place whose test functions pytest collects by name."""
    out = [((), tree.body)]  # type: List[Tuple[Tuple[str, ...], List[ast.stmt]]]

    def visit(path, body):
        for node in body:
            if isinstance(node, ast.ClassDef):
                out.append((path + (node.name,), node.body))
                visit(path + (node.name,), node.body)
    visit((), tree.body)
    return out


def classes(tree):  # type: (ast.Module) -> Dict[Tuple[str, ...], ast.ClassDef]
    """{class path: ClassDef} of every class of the module."""
    out = {}  # type: Dict[Tuple[str, ...], ast.ClassDef]

    def visit(path, body):
        for node in body:
            if isinstance(node, ast.ClassDef):
                out[path + (node.name,)] = node
                visit(path + (node.name,), node.body)
    visit((), tree.body)
    return out


def own_nodes(node):  # type: (Def) -> Iterator[ast.AST]
    """The nodes of a function's own scope: nested functions, lambdas and classes not entered
    (from its last statement up, as the names drawn from them always were)."""
    for stmt in reversed(node.body):
        for sub in nodes_of(stmt):
            yield sub


def nodes_of(stmt):  # type: (ast.AST) -> Iterator[ast.AST]
    """A statement and the nodes inside it, nested functions, lambdas and classes not entered."""
    stack = [stmt]
    while stack:
        sub = stack.pop()
        yield sub
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(sub))


def block_lines(node):  # type: (Any) -> Tuple[int, int]
    """The 0-based line range of a def, its decorators included."""
    return min([d.lineno for d in node.decorator_list] + [node.lineno]) - 1, node.end_lineno


def named_elsewhere(module, node):  # type: (Module, Def) -> bool
    """Whether the module names `node`'s name anywhere but at its def (a caller, a marker's
    argument, a string), or defines it again in its own scope or in a class related to its
    own by inheritance (an override, an overridden one). A method of the same name in an
    unrelated class is its own test: more-itertools' test module has eight `test_negative`s,
    one per function's class, and none of them could carry a group."""
    count = names_in(module, node.name)
    if count == 1:
        return False
    defs = [(path, n) for path, body in scopes(module.tree) for n in body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == node.name]
    if count != len(defs):
        return True
    own = [path for path, n in defs if n is node]
    if len(own) != 1 or len(own[0]) > 1:
        return True
    related = set.union(*relatives(module.tree, own[0][0])) if own[0] else set()
    for path, n in defs:
        if n is node:
            continue
        # Another def at the same level as a module function, any nested class, or a class
        # related to the template's own.
        if len(path) != 1 or not own[0] or path[0] in related:
            return True
    return False


def collected_by(module, def_path, node):  # type: (Module, Sequence[str], Def) -> Optional[List[List[str]]]
    """The class paths under which pytest collects the def (its own class and the module's
    classes inheriting from it; `[[]]` for a module function), or None where its name is the
    module's only use of it and any id of that name is the def's. A group's record keeps it so
    that another class's test of the same name (named_elsewhere) is not taken for its own."""
    if names_in(module, node.name) == 1:
        return None
    if not def_path:
        return [[]]
    return [[c] for c in sorted(relatives(module.tree, def_path[-1])[1])]


def relatives(tree, name):  # type: (ast.Module, str) -> Tuple[Set[str], Set[str]]
    """(ancestors, descendants) of the module-level class `name`, itself in both: the
    module-level classes it inherits from or that inherit from it (by name, transitively); a
    base that is no module-level class is left out, and a nested class is nobody's relative
    here (named_elsewhere refuses them)."""
    bases = {}  # type: Dict[str, Set[str]]
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found = bases.setdefault(node.name, set())
            for b in node.bases:
                found.add(b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "")
    up, todo = set(), [name]
    while todo:
        c = todo.pop()
        if c not in up:
            up.add(c)
            todo.extend(bases.get(c, ()))
    down, todo = set(), [name]
    while todo:
        c = todo.pop()
        if c not in down:
            down.add(c)
            todo.extend(k for k, v in bases.items() if c in v)
    return up, down


def names_in(module, name):  # type: (Module, str) -> int
    """How often `name` appears as a whole word in the module."""
    return len(re.findall(rb"(?<![A-Za-z0-9_])" + re.escape(name.encode("ascii", "replace")) + rb"(?![A-Za-z0-9_])",
                          module.data))


def template_ok(node, module):  # type: (Def, Module) -> bool
    """A test whose variants behave like it: its body starts on a line of its own, nothing in
    its own scope can end it early (return, yield) or rebind outer names (global, nonlocal), it
    is no fixture, no decorator turns its failures into something else (xfail, reruns), it does
    not depend on its own name (`request`, snapshot and regression fixtures, `self.id()`), and
    nothing else in the module names it (a caller, a subclass's override, a marker's argument)."""
    if not node.body or node.body[0].lineno == node.lineno:
        return False
    if named_elsewhere(module, node):
        return False
    for deco in node.decorator_list:
        text = module.text(deco)
        if b"fixture" in text or OUTCOME_DECORATORS.search(text):
            return False
    args = node.args
    names = [a.arg for a in args.args + args.kwonlyargs + getattr(args, "posonlyargs", [])]
    if any(n in NAME_BOUND_ARGS or "snapshot" in n or "regression" in n for n in names):
        return False
    for sub in own_nodes(node):
        if isinstance(sub, (ast.Return, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)):
            return False
        if isinstance(sub, ast.Attribute) and (sub.attr in NAME_BOUND_ATTRS or (
                sub.attr == "id" and isinstance(sub.value, ast.Name) and sub.value.id == "self")):
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Sites: an assertion's expected literal

def literal_value(node):  # type: (ast.AST) -> Optional[Value]
    """The value of an int, float, str or bytes literal (a negative number included), else None.
    Booleans are left out: they have one other value, and `True == 1`."""
    neg = False
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        neg, node = True, node.operand
    if not isinstance(node, ast.Constant):
        return None
    v = node.value
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return -v if neg else v
    if isinstance(v, (str, bytes)) and not neg and v:
        return v
    return None


class ClassName(str):
    """The value of a site that names an exception class (canary_classes): written bare."""


def site_value(node):  # type: (ast.AST) -> Optional[Any]
    """The value a site holds: its literal's, or the dotted name of the class it expects."""
    v = literal_value(node)
    if v is not None:
        return v
    name = canary_classes.dotted(node)
    return None if name is None else ClassName(name)


def is_literalish(node):  # type: (ast.AST) -> bool
    return isinstance(node, (ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict)) or literal_value(node) is not None


def alone_on_lines(body, i, module):  # type: (List[Any], int, Module) -> bool
    """Statement i of a body starts its line and shares no line with its neighbours."""
    stmt = body[i]
    line = module.lines[stmt.lineno - 1]
    if len(line) - len(line.lstrip()) != stmt.col_offset:
        return False
    if i > 0 and body[i - 1].end_lineno >= stmt.lineno:
        return False
    return i + 1 >= len(body) or body[i + 1].lineno > stmt.end_lineno


def site_of(stmt):  # type: (ast.stmt) -> Optional[ast.expr]
    """The literal node an assertion statement expects, or None: `assert X == LIT` (or
    `LIT == X`), `self.assertEqual(X, LIT)` (or `(LIT, X)`), where X is no literal; where LIT
    is a list, tuple or dict of literals, one of its members (member_site)."""
    pair = None
    if isinstance(stmt, ast.Assert) and stmt.msg is None:
        t = stmt.test
        if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq):
            pair = (t.left, t.comparators[0])
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call, func = stmt.value, stmt.value.func
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
                and func.attr in ("assertEqual", "assertEquals") and len(call.args) == 2 and not call.keywords):
            pair = (call.args[0], call.args[1])
    if pair is None:
        return None
    a, b = pair
    for lit, other in ((b, a), (a, b)):
        if not is_literalish(other):
            site = lit if literal_value(lit) is not None else member_site(lit)
            if site is not None:
                return site
    return None


def member_site(node):  # type: (ast.expr) -> Optional[ast.expr]
    """The member of an expected list, tuple or dict literal that a group can stand on: its
    first number (its grid leaves nothing to weigh), else its first string, reached through
    lists, tuples and dict values; None when the literal holds anything but literals. Never a
    member of a set or a dict's key: two mutants of `{1, 2, 3}` (1 made 2, 1 made 3) are one
    set, where "the real value passes" must mean each mutant fails, and no two mutants alike.
    A list or tuple with one member changed is another value under ordinary equality, whatever
    the other members are."""
    leaves = []  # type: List[Any]

    def walk(n):
        """Collects the members a group can stand on; False when `n` holds anything computed."""
        if isinstance(n, (ast.List, ast.Tuple)):
            return all([walk(e) for e in n.elts])
        if isinstance(n, ast.Dict):
            return all(key is not None and is_plain_literal(key) for key in n.keys) \
                and all([walk(value) for value in n.values])
        if literal_value(n) is not None:
            leaves.append(n)
            return True
        return is_plain_literal(n)
    if not isinstance(node, (ast.List, ast.Tuple, ast.Dict)) or not walk(node):
        return None
    numbers = [n for n in leaves if isinstance(literal_value(n), (int, float))]
    return (numbers or leaves or [None])[0]


def is_plain_literal(node):  # type: (ast.AST) -> bool
    """A literal with nothing computed in it (a constant, a negative number, or a collection
    of them): what an expected value's other members may be."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(is_plain_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and is_plain_literal(k) for k in node.keys) \
            and all(is_plain_literal(v) for v in node.values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float))
    return isinstance(node, ast.Constant)


def expected_literal(node, wrappers):  # type: (ast.expr, bool) -> Optional[ast.expr]
    """The literal an expected argument is: itself, or with `wrappers` the one argument of a
    call on a name or an attribute (`self.dedent("...")`, `textwrap.dedent("...")`)."""
    if literal_value(node) is not None:
        return node
    if wrappers and isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords \
            and isinstance(node.func, (ast.Name, ast.Attribute)) and literal_value(node.args[0]) is not None:
        return node.args[0]
    return None


class AnyCall(object):
    """Module.helpers at a grading that has a gold check: every literal argument of a top-level
    call, wrapped or not, is a candidate, and only those the check proved carry a group. The
    helper is not read again: it is the submission's code by then."""
    wrappers = True

    def expected_args(self, module, def_path, call):  # type: (Module, Tuple[str, ...], ast.Call) -> List[ast.expr]
        return list(call.args) + [k.value for k in call.keywords]


ANY_CALL = AnyCall()


def call_sites(stmt, module, def_path):  # type: (ast.stmt, Module, Tuple[str, ...]) -> List[ast.expr]
    """The expected literals of a top-level helper call (see Module.helpers)."""
    if module.helpers is None or not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return []
    out = []
    for arg in module.helpers.expected_args(module, def_path, stmt.value):
        lit = expected_literal(arg, module.helpers.wrappers)
        if lit is not None:
            out.append(lit)
    return out


def sites(node, module, def_path=()):  # type: (Def, Module, Tuple[str, ...]) -> List[ast.expr]
    """The literal nodes of a test's top-level assertions (and helper calls) that can carry a
    group, in order, then, where a gold check proves them, the exception classes it expects
    (canary_classes.class_sites). `def_path`: the class path where the test is defined."""
    out = []
    for i, stmt in enumerate(node.body):
        if alone_on_lines(node.body, i, module):
            lit = site_of(stmt)
            out.extend([lit] if lit is not None else call_sites(stmt, module, def_path))
    if module.gold_checked:
        out.extend(canary_classes.class_sites(node, module, alone_on_lines))
    return out


# ---------------------------------------------------------------------------------------------
# Finding a test by its id's names

def find_def(module, path, name):
    # type: (Module, Tuple[str, ...], str) -> Optional[Tuple[Tuple[str, ...], List[ast.stmt], int]]
    """(class path where the def is, its scope body, its index) of test `name` as collected
    under class path `path`: in that class, else in a base class of the same module that it
    inherits from (a mixin). None when the module does not define it there."""
    if not path:
        for i, node in enumerate(module.tree.body):
            if is_test_def(node, "") and node.name == name:
                return (), module.tree.body, i
        return None
    known = classes(module.tree)
    todo, seen = [tuple(path)], set()
    while todo:
        p = todo.pop(0)
        if p in seen or p not in known:
            continue
        seen.add(p)
        cls = known[p]
        for i, node in enumerate(cls.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return p, cls.body, i
        for base in cls.bases:
            if isinstance(base, ast.Name):
                # A base defined in the module: at the same nesting or at its top level.
                for cand in (p[:-1] + (base.id,), (base.id,)):
                    if cand in known:
                        todo.append(cand)
    return None


def shape_of(module, path, node):  # type: (Module, Tuple[str, ...], Def) -> str
    """What kind of test the template is, for the record: `function`, `method` (of a `Test*`
    class), `unittest` (of a TestCase), `class` (of a class named otherwise), with `+async` and
    `+parametrised` where they apply."""
    kind = "function"
    if path:
        cls = classes(module.tree).get(tuple(path))
        if cls is not None and any(b"TestCase" in module.text(b) for b in cls.bases):
            kind = "unittest"
        else:
            kind = "method" if path[-1].startswith("Test") else "class"
    if isinstance(node, ast.AsyncFunctionDef):
        kind += "+async"
    if any(b"parametrize" in module.text(d) for d in node.decorator_list):
        kind += "+parametrised"
    return kind


def eligible(module):  # type: (Optional[Module]) -> bool
    """A parsed module whose tests may carry groups: none of it keys expectations by a test's
    name or turns the failures of tests other than the one it decorates into something else."""
    return module is not None and not NAME_BOUND_WORDS.search(module.data) and not alters_outcomes(module)


# What turns a failure into an expected one wherever it is named, called or applied: `pytest.xfail()`
# in a test or a fixture, `unittest.expectedFailure` applied by hand.
OUTCOME_CALLS = frozenset(["xfail", "expectedFailure"])


def alters_outcomes(module):  # type: (Module) -> bool
    """Whether something in the module can change the outcome of tests it does not decorate
    itself: a class decorator or a `pytestmark` naming xfail, flaky, reruns, retries or repeats
    (they reach every test of the class or module, inherited ones too), or `xfail` or
    `expectedFailure` named outside a def's decorators. A def's own decorators are its own
    (template_ok). The words count in code only: `itertools.repeat` or `repeat_each()` in a
    test is no decorator (more-itertools' and toolz's modules carried no group for it)."""
    in_def_decorators = set()  # type: Set[int]
    for node in ast.walk(module.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                in_def_decorators.update(id(n) for n in ast.walk(deco))
        elif isinstance(node, ast.ClassDef):
            if any(OUTCOME_DECORATORS.search(module.text(deco)) for deco in node.decorator_list):
                return True
    for node in ast.walk(module.tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets) \
                    and node.value is not None and OUTCOME_DECORATORS.search(module.text(node.value)):
                return True
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name in OUTCOME_CALLS and id(node) not in in_def_decorators:
            return True
    return False


def carries(module, path, name):  # type: (Module, Sequence[str], str) -> bool
    """Whether test `name`, as collected under class path `path`, can carry a group."""
    found = find_def(module, tuple(path), name)
    if found is None:
        return False
    def_path, body, index = found
    node = body[index]
    return is_test_def(node) and template_ok(node, module) and bool(sites(node, module, def_path))


def candidates(module):  # type: (Module) -> List[Tuple[Tuple[str, ...], List[ast.stmt], int]]
    """(class path, body, index) of every test def of the module that can carry a group."""
    out = []
    for path, body in scopes(module.tree):
        for i, node in enumerate(body):
            if is_test_def(node) and template_ok(node, module) and sites(node, module, path):
                out.append((path, body, i))
    return out
