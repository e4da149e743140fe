# beyondswe canary groups: the exception class a test expects, as a site.
#
# adapters/beyondswe_verifier/canary_classes.py; used by canary_reading.py (the sites) and
# canaries.py (the values). Works on source text only; unit tests:
# adapters/tests/test_canary_classes.py.
#
# Many FAIL_TO_PASS tests expect an exception and compare no literal: `with
# pytest.raises(SignatureExpired):`, `self.assertRaisesRegex(ValueError, ...)`, toolz's `assert
# raises(LookupError, f)`. The class such a call names is a site: its variants name other
# classes. "The real variant passes" implies "each mutant fails" for any implementation whose
# raised exception is not an instance of both classes, so a mutant is kept only where no class
# known to exist derives from both (neither an ancestor nor a descendant of the real class, and
# no class of the project's tree, of the interpreter's builtins, or of KNOWN_BOTH has both among
# its ancestors). That reading of the hierarchy is the gold tree's, at the gold check, which also
# proves that every kept mutant fails under the gold patch; a grading takes the check's names and
# reads nothing of the submission's classes. Only a gold check's sites carry such groups: with
# no reference, a class can be made to inherit from any two.
#
# The mutants are of the real class's kind, so that none reads as the odd one: for a builtin,
# other builtins; for an attribute (`m.UndefinedName`, `exc.BadSignature`), other attributes of
# the same object that the module names; for a name the module imports or defines, other such
# names. A name from the text can still point at the real one; the chance printed is
# that of a forger who does not read the issue.
import ast
import builtins
import re

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Dict, List, Optional, Set, Tuple  # noqa: F401

# The calls whose first argument is the exception class a test expects.
RAISES = frozenset(["raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp"])

# The builtins a builtin's mutants are drawn from: what code commonly raises (no BaseException
# outside Exception: a KeyboardInterrupt or SystemExit expected by a variant would end the run).
# The first 22 are what code most often raises; the rest (3.6's builtins, no warning, none the
# interpreter raises on its own for a test, such as MemoryError) widen the blocks, so that a
# group on ValueError, TypeError, KeyError, ZeroDivisionError and their kin reaches twenty
# classes: a blind forger's 1 in 20.
BUILTIN_POOL = ("ValueError", "TypeError", "KeyError", "IndexError", "AttributeError", "RuntimeError",
                "ZeroDivisionError", "OverflowError", "NotImplementedError", "LookupError", "ArithmeticError",
                "OSError", "FileNotFoundError", "PermissionError", "UnicodeDecodeError", "StopIteration",
                "AssertionError", "NameError", "RecursionError", "TimeoutError", "EOFError", "ImportError",
                "BufferError", "ReferenceError", "SystemError", "FloatingPointError", "IsADirectoryError",
                "NotADirectoryError", "FileExistsError", "ConnectionError", "ChildProcessError",
                "ProcessLookupError", "BlockingIOError", "InterruptedError", "IndentationError",
                "StopAsyncIteration", "UnboundLocalError", "ModuleNotFoundError", "UnicodeEncodeError",
                "SyntaxError", "BrokenPipeError", "ConnectionResetError", "ConnectionRefusedError",
                "UnicodeError")


# Classes outside the project's tree known to derive from two builtins, which honest code may
# raise through a library: numpy's AxisError, io.UnsupportedOperation and ssl's
# CertificateError, requests' InvalidURL and its kin, decimal's FloatOperation, python-box's
# BoxKeyError, werkzeug's BadRequestKeyError (with its HTTP base, an Exception).
KNOWN_BOTH = (("ValueError", "IndexError"), ("OSError", "ValueError"), ("ArithmeticError", "TypeError"),
              ("KeyError", "AttributeError"), ("ZeroDivisionError", "ArithmeticError"))

# `class X(bases):`, found by its keyword (ten times as fast over a library tree as a pattern
# anchored at a line's start; add_source checks that only blanks come before it on its line).
CLASS_LINE = re.compile(rb"class[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(([^)]*)\)[ \t]*:")
MAX_SOURCE = 2 * 1024 * 1024


def dotted(node):  # type: (Any) -> Optional[str]
    """`a.b.C` of a name or a chain of attributes on a name, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return None if head is None else head + "." + node.attr
    return None


def expected_class(expr):  # type: (Any) -> Optional[ast.expr]
    """The class node a raises-call expects (`pytest.raises(X, ...)`, `self.assertRaises(X,
    ...)`, `raises(X, f)`), when it names one class; else None."""
    if not isinstance(expr, ast.Call) or not expr.args:
        return None
    func = expr.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name not in RAISES or dotted(expr.args[0]) is None:
        return None
    return expr.args[0]


def class_sites(node, module, alone):  # type: (Any, Any, Any) -> List[ast.expr]
    """The expected classes of a test's raises-calls, in order: a statement alone on its lines
    (`alone(body, i, module)`) at the top of the test or in the body of a `with` there (an
    expectation inside `with freeze_time(...):` is as certain to run)."""
    out = []  # type: List[ast.expr]

    def visit(body):  # type: (List[Any]) -> None
        for i, stmt in enumerate(body):
            if not alone(body, i, module):
                continue
            exprs = []  # type: List[Any]
            if isinstance(stmt, ast.Expr):
                exprs = [stmt.value]
            elif isinstance(stmt, ast.Assert) and stmt.msg is None:
                exprs = [stmt.test]
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                exprs = [item.context_expr for item in stmt.items]
            for e in exprs:
                found = expected_class(e)
                if found is not None:
                    out.append(found)
            if isinstance(stmt, (ast.With, ast.AsyncWith)):
                visit(stmt.body)
    visit(node.body)
    return out


class Hierarchy(object):
    """Which classes derive from which, by name (the last part of a dotted name): the builtins
    as the interpreter has them, KNOWN_BOTH, and every `class X(...)` of the sources added (the
    gold tree). A name defined twice takes the bases of both, which only ever keeps more mutants
    out."""

    def __init__(self):  # type: () -> None
        self.bases = {}  # type: Dict[str, Set[str]]
        self.memo = {}  # type: Dict[str, Optional[Set[str]]]
        self.known_memo = {}  # type: Dict[str, Set[str]]
        # {class: the ancestries (every known class's) that hold it}, made when first asked
        self.lines = None  # type: Optional[Dict[str, List[Set[str]]]]
        for name in dir(builtins):
            cls = getattr(builtins, name)
            if isinstance(cls, type) and issubclass(cls, BaseException):
                self.bases.setdefault(name, set()).update(b.__name__ for b in cls.__bases__)
        for i, pair in enumerate(KNOWN_BOTH):
            self.bases[" known %d" % i] = set(pair)

    def add_source(self, data):  # type: (bytes) -> None
        if len(data) > MAX_SOURCE:
            return
        for m in CLASS_LINE.finditer(data):
            if data[data.rfind(b"\n", 0, m.start()) + 1:m.start()].strip(b" \t"):
                continue
            found = self.bases.setdefault(m.group(1).decode("ascii"), set())
            for part in m.group(2).split(b","):
                part = part.split(b"[")[0].strip()
                if not part or b"=" in part or part.startswith(b"*"):
                    continue
                found.add(part.rsplit(b".", 1)[-1].decode("ascii", "replace"))
        self.memo.clear()
        self.known_memo.clear()
        self.lines = None

    def ancestors(self, name):  # type: (str) -> Optional[Set[str]]
        """`name` and every class it derives from; None where one of them is not known (a
        library's class outside the tree: what it derives from cannot be ruled out)."""
        if name in self.memo:
            return self.memo[name]
        self.memo[name] = None  # unknown, and so is a cycle through it
        if name not in self.bases:
            return None
        out = set([name])  # type: Set[str]
        for base in self.bases[name]:
            up = set() if base == "object" else self.ancestors(base)
            if up is None:
                return None
            out |= up
        self.memo[name] = out
        return out

    def known_ancestors(self, name, seen=None):  # type: (str, Optional[Set[str]]) -> Set[str]
        """`name` and every class it derives from that is known here: what ancestors() gives,
        less the unknown part (`class Odd(CBase, ValueError, TypeError)` relates ValueError and
        TypeError whatever CBase is)."""
        if name in self.known_memo:
            return self.known_memo[name]
        seen = set() if seen is None else seen
        if name in seen:
            return set()
        seen.add(name)
        out = set([name])
        for base in self.bases.get(name, ()):
            if base != "object":
                out |= self.known_ancestors(base, seen)
        self.known_memo[name] = out
        return out

    def related(self, a, b):  # type: (str, str) -> bool
        """Whether a class known here derives from both (either of them included), counting
        what is known of a class whose ancestry is known only in part."""
        if self.lines is None:
            self.lines = {}
            for name in list(self.bases):
                up = self.ancestors(name) or self.known_ancestors(name)
                for member in up:
                    self.lines.setdefault(member, []).append(up)
        return any(b in up for up in self.lines.get(a, ()))


def module_bindings(tree):  # type: (ast.Module) -> Dict[str, str]
    """{name bound at the module's top: the class name it stands for}: `from x import A as B`
    binds B to A, `class C(...)` binds C."""
    out = {}  # type: Dict[str, str]
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                out[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ClassDef):
            out[node.name] = node.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                out[(alias.asname or alias.name).split(".")[0]] = ""
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(t, ast.Name):
                    out[t.id] = ""
    return out


def universe(tree, real, hierarchy):  # type: (ast.Module, str, Hierarchy) -> List[Tuple[str, str]]
    """[(text a variant writes, class it stands for)] of the real class's kind, the real one
    among them, each an Exception with its whole ancestry known, in a fixed order (builtins in
    BUILTIN_POOL's, the rest the most derived first: what a test expects is most often a
    project's most specific class); [] where the
    real one is not of them. The same set whichever of them is real, so that no variant is the
    odd one out: for a name the module binds (an import, a class), every such name; for an
    attribute, every attribute of the same object the module names; for a builtin, the builtins
    of BUILTIN_POOL (a builtin outside it gets no group: it would be the one not of the pool)."""
    prefix, _, last = real.rpartition(".")
    found = set()  # type: Set[Tuple[str, str]]
    bound = module_bindings(tree)
    if prefix:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr[:1].isupper() and dotted(node.value) == prefix:
                found.add((prefix + "." + node.attr, node.attr))
    elif real in bound:
        found = set((name, cls) for name, cls in bound.items() if cls[:1].isupper())
    elif real in BUILTIN_POOL:
        found = set((name, name) for name in BUILTIN_POOL if name not in bound)
    known = []  # type: List[Tuple[str, str, Set[str]]]
    for text, cls in found:
        up = hierarchy.ancestors(cls)
        if up is not None and "Exception" in up:
            known.append((text, cls, up))
    order = dict((name, i) for i, name in enumerate(BUILTIN_POOL))
    known.sort(key=lambda x: (order.get(x[0], len(order)), -len(x[2]), x[0]))
    out = [(text, cls) for text, cls, _ in known]
    return out if any(text == real for text, _ in out) else []


def apart(real, names, own):  # type: (str, List[str], Hierarchy) -> bool
    """Whether no class of the submission's tree (`own`: the builtins and that tree, read
    before any of its code runs) derives from two of the classes a group at a site expecting
    `real` is drawn from (`names`, the others the gold check kept there): then nothing can
    excuse two passing variants (the judge's excuse is such a class), and a blind forger's
    chance is 1 in k+1; else 2 in k+1, an honest two-class error being excused (group_chance).
    The group itself is drawn as it would be either way."""
    last = lambda text: text.rsplit(".", 1)[-1]  # noqa: E731
    universe = sorted(set(last(n) for n in names) | set([last(real)]))
    for i, a in enumerate(universe):
        for b in universe[i + 1:]:
            if own.related(a, b):
                return False
    return True


def blocks_of(items, hierarchy):  # type: (List[Tuple[str, str]], Hierarchy) -> List[List[Tuple[str, str]]]
    """`items` cut into blocks of mutually unrelated classes, in their order: each class joins
    the first block it is unrelated to all of. The order is universe()'s, fixed (BUILTIN_POOL's
    puts ValueError in the large first block), so the blocks depend on the universe only."""
    blocks = []  # type: List[List[Tuple[str, str]]]
    for text, cls in items:
        for block in blocks:
            if not any(hierarchy.related(cls, other) for _, other in block):
                block.append((text, cls))
                break
        else:
            blocks.append([(text, cls)])
    return blocks


def pool(tree, real, hierarchy, rng):  # type: (ast.Module, str, Hierarchy, Any) -> List[str]
    """The texts a variant of the site expecting `real` may write instead, in `rng`'s order (a
    prefix of it is a uniform draw). The universe is cut into blocks in which no two classes are
    related (no class known to exist derives from both, see Hierarchy.related), the same blocks
    whichever class is real (they depend on the universe only), and the pool is the rest of the
    real one's block. So every variant is unrelated to every other, and a group
    drawn from the block is as likely under each of its members being the real one: what the
    classes are says nothing of which is."""
    for block in blocks_of(universe(tree, real, hierarchy), hierarchy):
        texts = [text for text, _ in block]
        if real in texts:
            others = [t for t in texts if t != real]
            rng.shuffle(others)
            return others
    return []
