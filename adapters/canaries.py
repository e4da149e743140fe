# beyondswe canary groups: each test that matters hidden among mutants of itself, under a key the
# tested process never sees.
#
# In the repository this is adapters/canaries.py; beside the verifier it is installed as
# beyondswe_canaries.py. The verifier (adapters/canary_steps.py) plans the groups as root before
# the tests run, keeps the key in its own memory, and judges the groups from the outcomes after.
# Everything here works on source text and outcome maps, with no file or process of its own;
# unit tests: adapters/tests/test_canaries.py.
#
# A group is built from one test (the template) and one of its assertions (the site): a
# top-level assertion, alone on its lines, that compares the value under test with a literal
# (`assert f(x) == 5`, `assert "a" == g()`, `self.assertEqual(f(x), 5)`), or the expected
# literal of a top-level call to the project's own assertion helper (`self.assertRenders(src,
# "<p>a</p>")`; adapters/helper_sites.py says when an argument is one). The group's k+1
# variants are the template with that literal replaced by k+1 distinct values of its type: the
# real value and k mutants. For code whose results are deterministic and whose equality is
# ordinary, "the real variant passes" implies "each mutant fails", for any implementation.
#
# Every variant, the real one included, is presented the same way: a fresh name made of the
# module's own words (the public name is gone), the literal written by the same renderer, the
# template's decorators and signature, all of the group written in shuffled order where the
# template was, in one write. Which variant is real (the key) is drawn by the caller's random
# source at every grading and lives only in the records this module returns.
#
# The verdict rule (judge): two or more variants of a group passing, or a variant with no result
# while the run finished and its group ran, is proof, once it holds again when the group runs
# alone (`solo`); a passing mutant beside a failing real variant is what wrong honest code does,
# and no flag. The real variant's outcome is the template's, mapped back to its public id.
# Python 3.8+ (end positions in the ast); on an older interpreter nothing is planted.
import ast
import hashlib
import hmac
import keyword
import random
import re

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
WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
PASSED = ("passed", "xpassed")
SOLO_ROUNDS = 2
SOLO_RNG = random.SystemRandom()
MAX_K = 19
LOWER, UPPER, DIGITS = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789"


# ---------------------------------------------------------------------------------------------
# How many mutants a group gets

def k_for(groups):
    """Mutants per group for `groups` FAIL_TO_PASS groups, so that a forger choosing blindly
    passes all of them undetected with a chance of at most 1 in 20 for one group and at most 1
    in 100 from two up: 19 for one; else the smallest k with (k+1)**groups >= 100."""
    if groups <= 1:
        return MAX_K
    k = 1
    while (k + 1) ** groups < 100:
        k += 1
    return k


def forge_chance(sizes):
    """The chance that a forger who cannot tell the variants apart picks the real one in every
    group: the product of 1/(k+1) over the groups' sizes (k+1). 1.0 with no group."""
    p = 1.0
    for n in sizes:
        p /= max(1, n)
    return p


# ---------------------------------------------------------------------------------------------
# Reading a module

class Module(object):
    """A test module's source, its tree and the byte offsets of its lines (ast columns are UTF-8
    byte offsets)."""

    def __init__(self, source):
        self.data = source.encode("utf-8") if isinstance(source, str) else source
        self.tree = ast.parse(self.data)
        self.lines = self.data.splitlines(True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.taken = set(re.findall(rb"[A-Za-z_][A-Za-z0-9_]*", self.data))
        # What says which arguments of a helper call are expected values (helper_sites.Helpers,
        # or ANY_CALL), or None: only top-level assertions are sites.
        self.helpers = None

    def offset(self, lineno, col):
        return self.starts[lineno - 1] + col

    def text(self, node):
        return self.data[self.offset(node.lineno, node.col_offset):self.offset(node.end_lineno, node.end_col_offset)]


def parse(source, helpers=None):
    """A Module, or None when the source is not UTF-8 (the columns would not match its bytes),
    cannot be parsed, or this Python gives no end lines. `helpers`: see Module.helpers."""
    try:
        if not isinstance(source, str):
            source.decode("utf-8")
        module = Module(source)
    except (SyntaxError, ValueError, UnicodeError, MemoryError, RecursionError):
        return None
    if module.tree.body and not hasattr(module.tree.body[0], "end_lineno"):
        return None
    module.helpers = helpers
    return module


def is_test_def(node, prefix="test"):
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(prefix)


def scopes(tree):
    """(class path, body) of the module and of every class in it, nested ones included: each
    place whose test functions pytest collects by name."""
    out = [((), tree.body)]

    def visit(path, body):
        for node in body:
            if isinstance(node, ast.ClassDef):
                out.append((path + (node.name,), node.body))
                visit(path + (node.name,), node.body)
    visit((), tree.body)
    return out


def classes(tree):
    """{class path: ClassDef} of every class of the module."""
    out = {}

    def visit(path, body):
        for node in body:
            if isinstance(node, ast.ClassDef):
                out[path + (node.name,)] = node
                visit(path + (node.name,), node.body)
    visit((), tree.body)
    return out


def own_nodes(node):
    """The nodes of a function's own scope: nested functions, lambdas and classes not entered."""
    stack = list(node.body)
    while stack:
        sub = stack.pop()
        yield sub
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(sub))


def block_lines(node):
    """The 0-based line range of a def, its decorators included."""
    return min([d.lineno for d in node.decorator_list] + [node.lineno]) - 1, node.end_lineno


def names_in(module, name):
    """How often `name` appears as a whole word in the module."""
    return len(re.findall(rb"(?<![A-Za-z0-9_])" + re.escape(name.encode("ascii", "replace")) + rb"(?![A-Za-z0-9_])",
                          module.data))


def template_ok(node, module):
    """A test whose variants behave like it: its body starts on a line of its own, nothing in
    its own scope can end it early (return, yield) or rebind outer names (global, nonlocal), it
    is no fixture, no decorator turns its failures into something else (xfail, reruns), it does
    not depend on its own name (`request`, snapshot and regression fixtures, `self.id()`), and
    nothing else in the module names it (a caller, a subclass's override, a marker's argument)."""
    if not node.body or node.body[0].lineno == node.lineno:
        return False
    if names_in(module, node.name) != 1:
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

def literal_value(node):
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


def is_literalish(node):
    return isinstance(node, (ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict)) or literal_value(node) is not None


def alone_on_lines(body, i, module):
    """Statement i of a body starts its line and shares no line with its neighbours."""
    stmt = body[i]
    line = module.lines[stmt.lineno - 1]
    if len(line) - len(line.lstrip()) != stmt.col_offset:
        return False
    if i > 0 and body[i - 1].end_lineno >= stmt.lineno:
        return False
    return i + 1 >= len(body) or body[i + 1].lineno > stmt.end_lineno


def site_of(stmt):
    """The literal node an assertion statement expects, or None: `assert X == LIT` (or
    `LIT == X`), `self.assertEqual(X, LIT)` (or `(LIT, X)`), where X is no literal."""
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
    if literal_value(b) is not None and not is_literalish(a):
        return b
    if literal_value(a) is not None and not is_literalish(b):
        return a
    return None


def expected_literal(node, wrappers):
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

    def expected_args(self, module, def_path, call):
        return list(call.args) + [k.value for k in call.keywords]


ANY_CALL = AnyCall()


def call_sites(stmt, module, def_path):
    """The expected literals of a top-level helper call (see Module.helpers)."""
    if module.helpers is None or not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return []
    out = []
    for arg in module.helpers.expected_args(module, def_path, stmt.value):
        lit = expected_literal(arg, module.helpers.wrappers)
        if lit is not None:
            out.append(lit)
    return out


def sites(node, module, def_path=()):
    """The literal nodes of a test's top-level assertions (and helper calls) that can carry a
    group, in order. `def_path`: the class path where the test is defined."""
    out = []
    for i, stmt in enumerate(node.body):
        if alone_on_lines(node.body, i, module):
            lit = site_of(stmt)
            out.extend([lit] if lit is not None else call_sites(stmt, module, def_path))
    return out


# ---------------------------------------------------------------------------------------------
# Values: the real one among k others of its type and size, and how every one is written

def decimals(v):
    text = repr(v)
    if "e" in text or "E" in text or "inf" in text or "nan" in text:
        return None
    return len(text.split(".", 1)[1].rstrip("0")) if "." in text else 0


def number_values(v, k, rng):
    """The k+1 numbers of v's type and sign on v's own grid (its step; a count stays a count)
    among which v is: the grid's values of v's sign, taken in order of magnitude, are cut into
    fixed blocks of k+1, and the group is v's block. The blocks do not depend on v, so the group
    is the same set whichever of its members is real: its size, its ends and its place on the
    grid tell nothing (a block that ended at zero, or a size set by how far v is from zero, would
    name the real value). A float's grid holds only numbers written with as many decimals as v
    (one at least): a shorter one has a grid of its own. None where no grid fits (a float with an
    exponent, more than six decimals or over 1e12). `rng` is unused: the group is v's block."""
    del rng
    n = k + 1
    if isinstance(v, float):
        d = decimals(v)
        if d is None or d > 6 or abs(v) > 1e12:
            return None
        d = max(d, 1)
        step = 10.0 ** -d
        m = int(round(abs(v) / step))
        skip_tens = d > 1
    else:
        d, step, m, skip_tens = None, 1, abs(v), False
    negative = v < 0
    # Magnitudes on the grid in order: from 0 for v >= 0, from 1 below zero; with more than one
    # decimal, none whose last decimal is 0 (it is written shorter, on another grid).
    if skip_tens:
        if m % 10 == 0:
            return None
        index = (m - 1) - (m - 1) // 10
        magnitude = lambda i: i + i // 9 + 1  # noqa: E731
    else:
        first = 1 if negative else 0
        index = m - first
        magnitude = lambda i: i + first  # noqa: E731
    lo = index - index % n
    out = []
    for i in range(lo, lo + n):
        x = magnitude(i) * step
        x = round(x, d) if d is not None else x
        out.append(-x if negative else x)
    if v not in out or len(set(out)) != n:
        return None
    return out


def other_chars(c):
    for alphabet in (LOWER, UPPER, DIGITS):
        if c in alphabet:
            return [a for a in alphabet if a != c]
    return []


def string_values(v, k, rng):
    """Up to k+1 distinct strings (or bytes) that differ from each other at one place only, a
    letter or digit of v changed to others of its kind (never in case alone): every two
    variants differ alike, so none is the one the others were made from. None when v has no
    such place."""
    is_bytes = isinstance(v, bytes)
    text = v.decode("latin-1") if is_bytes else v
    spots = [i for i, c in enumerate(text) if c.isascii() and c.isalnum()]
    if not spots:
        return None

    def others_at(i):
        return [c for c in other_chars(text[i]) if c.lower() != text[i].lower()]
    # A letter where there is one: 25 others, where a digit has 9 (a group of 10 at most, too
    # few for one FAIL_TO_PASS group's 1 in 20). The same places whatever k is.
    room = max(len(others_at(i)) for i in spots)
    i = rng.choice([j for j in spots if len(others_at(j)) == room])
    others = others_at(i)
    # Shuffled and cut: from one seed (a gold check's, see GoldCheck), a smaller k's values are
    # the first of a larger k's, so the check's values hold every group a grading can draw.
    rng.shuffle(others)
    chosen = others[:k]
    out = [text] + [text[:i] + c + text[i + 1:] for c in chosen]
    if len(out) < 2:
        return None
    return [x.encode("latin-1") for x in out] if is_bytes else out


def group_values(v, k, rng):
    """The values of a group (v among them; at most k+1, at least two), or None."""
    if isinstance(v, (str, bytes)):
        return string_values(v, k, rng)
    return number_values(v, k, rng)


def check_values(v, ks, rng_of):
    """Every value other than v that a group of v built with one of the `ks` can hold (each
    draw from a fresh `rng_of()`), or None where no group can be built on v."""
    out, any_group = [], False
    for k in sorted(set(ks)):
        vals = group_values(v, k, rng_of())
        if vals is None:
            continue
        any_group = True
        out.extend(x for x in vals if x != v and x not in out)
    return out if any_group else None


class GoldCheck(object):
    """What the gold check of an instance found (canary_steps.plan_check; the offline grader
    runs it once per instance before grading any submission): the tests it checked, each with
    the sites (the literal's line and column) where the real test passed under the gold patch
    and every value a group of that site can hold instead failed. A grading builds groups on
    those sites only, so no honest code that passes like the gold patch makes two variants pass.
    `seed` draws a string site's values, the same at the check and at every grading; it is the
    grader's, never in a file of the container. `tests`: {"module::def path::name": [[line,
    col], ...]}."""

    def __init__(self, seed, tests):
        self.seed, self.tests = seed, tests

    def sites(self, module_path, def_path, name):
        """The checked sites of a test as a set of (line, col), or None: the test was not checked."""
        found = self.tests.get("::".join([module_path] + list(def_path) + [name]))
        return None if found is None else set(tuple(x) for x in found)

    def rng(self, module_path, def_path, name, lit):
        msg = "\0".join([module_path, "::".join(def_path), name, str(lit.lineno), str(lit.col_offset)])
        digest = hmac.new(self.seed.encode("ascii"), msg.encode("utf-8"), hashlib.sha256).hexdigest()
        return random.Random(digest)


def render(v, quote):
    """One literal as every variant writes it: numbers plainly, strings and bytes with the
    site's quote character, printable characters as they are and the rest escaped."""
    if isinstance(v, (int, float)):
        return repr(v)
    out = []
    is_bytes = isinstance(v, bytes)
    for c in (v.decode("latin-1") if is_bytes else v):
        o = ord(c)
        if c == "\\":
            out.append("\\\\")
        elif c == quote:
            out.append("\\" + quote)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif o < 32 or o == 127 or (is_bytes and o > 127):
            out.append("\\x%02x" % o)
        elif not c.isprintable():
            out.append("\\u%04x" % o if o < 0x10000 else "\\U%08x" % o)
        else:
            out.append(c)
    return ("b" if is_bytes else "") + quote + "".join(out) + quote


def quote_of(module, lit):
    text = module.text(lit).lstrip(b"bBrRuU")
    return "'" if text[:1] == b"'" else '"'


# ---------------------------------------------------------------------------------------------
# Names made of the module's own words

def words_of(name):
    return [w.lower() for w in (name.split("_") if "_" in name else WORD.findall(name)) if w]


def vocabulary(module):
    """The module's words, in the order names are made from them: those of its test names, then
    those of the identifiers its tests use, then every other word of the module. Returns the
    word list and where each of the first two parts ends."""
    parts = ([], [], [])
    for node in ast.walk(module.tree):
        if is_test_def(node):
            parts[0].extend(words_of(node.name)[1:])
            for sub in own_nodes(node):
                if isinstance(sub, ast.Name):
                    parts[1].extend(words_of(sub.id))
                elif isinstance(sub, ast.Attribute):
                    parts[1].extend(words_of(sub.attr))
        elif isinstance(node, ast.Name):
            parts[2].extend(words_of(node.id))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            parts[2].extend(words_of(node.name))
        elif isinstance(node, ast.alias):
            parts[2].extend(w for n in (node.name, node.asname or "") for w in words_of(n.replace(".", "_")))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 80:
            parts[2].extend(re.findall(r"[a-z]+", node.value.lower()))
    def good(w):
        return 1 < len(w) < 16 and w.isalpha() and not keyword.iskeyword(w) and w not in ("self", "cls")
    seen, out, ends = set(), [], []
    for part in parts:
        for w in part:
            if good(w) and w not in seen:
                seen.add(w)
                out.append(w)
        ends.append(len(out))
    return out, ends


def make_name(template, lengths, vocab, rng, avoid):
    """A new test name in the template's style (snake or camel case) and with its prefix, made
    of the module's own words (its test names' first; then of what its tests use; then any,
    with a number as tests are sometimes numbered); None when no name is left untaken.
    `avoid(name)` says whether a name is taken."""
    vocab, ends = vocab
    snake = "_" in template
    first = WORD.findall(template)
    prefix = template.split("_", 1)[0] if snake else (first[0] if first else "")
    if not prefix or not template.startswith(prefix):
        return None
    words = [w for w in vocab if w != prefix.lower()]
    for attempt in range(160):
        stage = attempt // 40
        pool = words[:ends[min(stage, 2)]] if stage < 3 else words
        if not pool:
            continue
        k = rng.choice(lengths) if stage < 2 else rng.randint(1, 3)
        chosen = rng.sample(pool, max(1, min(len(pool), k)))
        if stage == 3:
            chosen.append(str(rng.randint(2, 99)))
        name = prefix + "_" + "_".join(chosen) if snake else prefix + "".join(w.capitalize() for w in chosen)
        if name != template and name.isidentifier() and not avoid(name):
            return name
    return None


# ---------------------------------------------------------------------------------------------
# Finding a test by its id's names

def find_def(module, path, name):
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


def shape_of(module, path, node):
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


def eligible(module):
    """A parsed module whose tests may carry groups: none of it keys expectations by a test's
    name or turns a failure into something else (xfail, reruns)."""
    return module is not None and not NAME_BOUND_WORDS.search(module.data) \
        and not OUTCOME_DECORATORS.search(module.data)


def carries(module, path, name):
    """Whether test `name`, as collected under class path `path`, can carry a group."""
    found = find_def(module, tuple(path), name)
    if found is None:
        return False
    def_path, body, index = found
    node = body[index]
    return is_test_def(node) and template_ok(node, module) and bool(sites(node, module, def_path))


def candidates(module):
    """(class path, body, index) of every test def of the module that can carry a group."""
    out = []
    for path, body in scopes(module.tree):
        for i, node in enumerate(body):
            if is_test_def(node) and template_ok(node, module) and sites(node, module, path):
                out.append((path, body, i))
    return out


# ---------------------------------------------------------------------------------------------
# A plan

def blank_lines_before(module, start, path):
    n = 0
    while start - n - 1 >= 0 and not module.lines[start - n - 1].strip():
        n += 1
    return max(1, min(n, 2)) if n else (1 if path else 2)


def variant_text(module, node, lit, value, quote, name):
    """The def's text (decorators included) under `name`, its site's literal written as
    `value`. The site's literal is always rewritten, the real value's too, so that every
    variant is written alike."""
    start, end = block_lines(node)
    lo, hi = module.starts[start], module.starts[end]
    a = module.offset(lit.lineno, lit.col_offset) - lo
    b = module.offset(lit.end_lineno, lit.end_col_offset) - lo
    data = module.data[lo:hi]
    data = data[:a] + render(value, quote).encode("utf-8") + data[b:]
    text = data.decode("utf-8")
    if not text.endswith("\n"):
        text += "\n"
    pat = re.compile(r"^(\s*(?:async\s+)?def\s+)%s(\s*\()" % re.escape(node.name), re.M)
    out, n = pat.subn(lambda m: m.group(1) + name + m.group(2), text, count=1)
    return out if n == 1 else None


def plan(source, targets, rng, avoid=None, check=None, module_path=None, helpers=None):
    """Replaces each target test of a module by its group. `targets`: [(class path as
    collected, name, k)]; `avoid(name)`: names taken elsewhere (other modules of the suite);
    `check`: a GoldCheck (with the module's path in its suite): only its sites carry groups, and
    a test it did not check carries none. Returns (new source bytes, records), or None when no
    target could carry a group; a target that cannot (no literal site, bound to its name, too
    few values) is left as it is and has no record. Each record names the group's variants and,
    as `real`, the index of the real one: the key, which must stay in the caller's memory.
    `helpers`: see Module.helpers (with a check, every call's literal is a candidate)."""
    module, names = start(source, rng, avoid, ANY_CALL if check is not None else helpers)
    if module is None:
        return None
    edits, records = [], []
    for def_path, body, node, k in each_target(module, names, targets):
        lits = sites(node, module, def_path)
        values_rng = lambda lit: rng  # noqa: E731
        if check is not None:
            allowed = check.sites(module_path, def_path, node.name) or set()
            lits = [lit for lit in lits if (lit.lineno, lit.col_offset) in allowed]
            values_rng = lambda lit, d=def_path, n=node.name: check.rng(module_path, d, n, lit)  # noqa: E731
        # The site that gives the largest group; numbers before strings at a tie (their values
        # leave a reader nothing to weigh, where a changed letter may read less like a word).
        best = None
        for lit in sorted(lits, key=lambda x: rng.random()):
            vals = group_values(literal_value(lit), k, values_rng(lit))
            if vals is None:
                continue
            rank = (len(vals), isinstance(literal_value(lit), (int, float)))
            if best is None or rank > best[0]:
                best = (rank, lit, vals)
        if best is None:
            continue
        _, lit, values = best
        real_value = literal_value(lit)
        # Stored in a random order: nothing that follows the record's order (a solo run's ids,
        # the facts) follows the values'.
        rng.shuffle(values)
        real = values.index(real_value)
        new_names = names.draw(node, body, len(values))
        if new_names is None:
            continue
        quote = quote_of(module, lit)
        texts = [variant_text(module, node, lit, v, quote, n) for v, n in zip(values, new_names)]
        if any(t is None for t in texts):
            continue
        names.take(def_path, node, new_names)
        order = list(range(len(values)))
        rng.shuffle(order)
        edits.append(edit(module, def_path, node, [texts[i] for i in order]))
        records.append({"path": list(def_path), "template": node.name, "variants": new_names, "real": real,
                        "line": lit.lineno, "k": len(values) - 1, "shape": shape_of(module, def_path, node)})
    return finish(module, edits, records)


def plan_check(source, targets, check, module_path, rng, sites_per_test, avoid=None, helpers=None):
    """The gold check's variants of each target test (`targets`: [(class path, name, ks)]): the
    test itself once, renamed, and for up to `sites_per_test` of its sites every value a group
    built there with one of the `ks` can hold instead (check_values, drawn as a grading draws
    them under `check`). Returns (new source bytes, records) or None; a record names the
    variants (the real test first, `real` 0) and, under `sites`, each site's [line, col] with
    the indexes of its variants. `helpers`: see Module.helpers."""
    module, names = start(source, rng, avoid, helpers)
    if module is None:
        return None
    edits, records = [], []
    for def_path, body, node, ks in each_target(module, names, targets):
        checked = []
        for lit in sorted(sites(node, module, def_path), key=lambda x: rng.random()):
            v = literal_value(lit)
            others = check_values(v, ks, lambda d=def_path, n=node.name, x=lit: check.rng(module_path, d, n, x))
            if others:
                checked.append((lit, v, others))
            if len(checked) >= sites_per_test:
                break
        if not checked:
            continue
        count = 1 + sum(len(others) for _, _, others in checked)
        new_names = names.draw(node, body, count)
        if new_names is None:
            continue
        first, v0, _ = checked[0]
        texts = [variant_text(module, node, first, v0, quote_of(module, first), new_names[0])]
        site_records = []
        for lit, _, others in checked:
            quote, idx = quote_of(module, lit), []
            for other in others:
                idx.append(len(texts))
                texts.append(variant_text(module, node, lit, other, quote, new_names[len(texts)]))
            site_records.append({"site": [lit.lineno, lit.col_offset], "variants": idx})
        if any(t is None for t in texts):
            continue
        names.take(def_path, node, new_names)
        edits.append(edit(module, def_path, node, texts))
        records.append({"path": list(def_path), "template": node.name, "variants": new_names, "real": 0,
                        "line": first.lineno, "k": len(texts) - 1, "shape": shape_of(module, def_path, node),
                        "sites": site_records})
    return finish(module, edits, records)


def checked_sites(record, outcomes):
    """The [line, col] of each site of a gold-check record whose every other value failed in
    every collected item of the test while the real test passed there; [] when the real test
    did not pass in each (a test the gold patch fails, or a flaky one, carries no group)."""
    found = items(record, outcomes)
    if not found:
        return []
    for by_variant in found.values():
        if by_variant.get(record["real"], (None, "no result"))[1] not in PASSED:
            return []
    return [s["site"] for s in record["sites"]
            if all(by_variant.get(i, (None, "no result"))[1] in ("failed", "error")
                   for by_variant in found.values() for i in s["variants"])]


class Names(object):
    """The fresh names of a module's variants: drawn in each template's style from the module's
    own words, never a name the module (or `avoid`) has taken."""

    def __init__(self, module, rng, avoid):
        self.module, self.rng, self.avoid = module, rng, avoid
        self.vocab = vocabulary(module)
        self.taken = set(module.taken)
        self.done = set()

    def draw(self, node, body, count):
        lengths = [max(1, len(words_of(n.name)) - 1) for n in body if is_test_def(n)] or [2]
        out = []
        for _ in range(count):
            new = make_name(node.name, lengths, self.vocab, self.rng,
                            lambda x: x.encode("ascii") in self.taken or x in out
                            or (self.avoid is not None and self.avoid(x)))
            if new is None:
                return None
            out.append(new)
        return out

    def take(self, def_path, node, names):
        for n in names:
            self.taken.add(n.encode("ascii"))
        self.done.add((def_path, node.name))


def start(source, rng, avoid, helpers=None):
    """(the module parsed, its Names), or (None, None) when it cannot carry groups."""
    module = parse(source, helpers)
    if not eligible(module):
        return None, None
    return module, Names(module, rng, avoid)


def each_target(module, names, targets):
    """Each target (class path as collected, name, extra) that can carry a group, as (def path,
    scope body, def node, extra): found when its turn comes, after the ones before took theirs."""
    for path, name, extra in targets:
        found = find_def(module, tuple(path), name)
        if found is None:
            continue
        def_path, body, index = found
        node = body[index]
        if (def_path, node.name) in names.done or not is_test_def(node) or not template_ok(node, module):
            continue
        yield def_path, body, node, extra


def edit(module, def_path, node, texts):
    """(first line, end line, new text) putting `texts` where the def is, spaced as it was."""
    start, end = block_lines(node)
    blanks = "\n" * blank_lines_before(module, start, def_path)
    return start, end, blanks.join(texts)


def finish(module, edits, records):
    """The module with every edit made, as (bytes, records); None with no record or when the
    result does not parse."""
    if not records:
        return None
    lines = [ln.decode("utf-8") for ln in module.lines]
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    for start, end, block in sorted(edits, reverse=True):
        lines[start:end] = [block]
    out = "".join(lines).encode("utf-8")
    try:
        ast.parse(out)
    except (SyntaxError, ValueError):
        return None
    return out, records


def module_candidates(source, helpers=None):
    """(class path, name) of every test of a module that can carry a group (for a Doc2Repo
    suite, where any test may be drawn)."""
    module = parse(source, helpers)
    if not eligible(module):
        return []
    return [(path, body[i].name) for path, body, i in candidates(module)]


# ---------------------------------------------------------------------------------------------
# Judging the outcomes

def split_key(key):
    """(module, class path, name, parameters) of a node id."""
    base, bracket, params = key.partition("[")
    parts = base.split("::")
    return parts[0], tuple(parts[1:-1]), parts[-1] if len(parts) > 1 else "", bracket + params


def items(record, outcomes, anywhere=False):
    """{(class path, parameters): {variant index: (node id, outcome)}} of a group's variants in
    `outcomes`: each collected item of the group (a class inheriting the template, a parameter
    set) is one group of its own. `anywhere`: variants collected in any module count (a suite's
    other modules may inherit the template's class)."""
    index = dict((n, i) for i, n in enumerate(record["variants"]))
    out = {}
    for key, outcome in outcomes.items():
        module, path, name, params = split_key(key)
        if name in index and (anywhere or module == record["module"]):
            out.setdefault((module, path, params), {})[index[name]] = (key, outcome)
    return out


def public_id(record, item):
    module, path, params = item
    return "::".join([module] + list(path) + [record["template"]]) + params


def variant_ids(record, item):
    module, path, params = item
    return ["::".join([module] + list(path) + [n]) + params for n in record["variants"]]


def contradiction(by_variant, size, finished):
    """What is wrong with one item's outcomes, or None: two or more variants passed, or (when
    the run finished) a variant has no result while others of its item have one."""
    passed = sorted(i for i, (_, o) in by_variant.items() if o in PASSED)
    if len(passed) >= 2:
        return "%d of its %d variants passed" % (len(passed), size)
    if finished and by_variant and len(by_variant) < size:
        return "%d of its %d variants have no result" % (size - len(by_variant), size)
    return None


def judge(record, outcomes, finished, solo=None, doubled=(), anywhere=False):
    """Facts about one group. Proof of forged outcomes, each confirmed by running the item's
    variants alone (`solo(ids) -> (outcomes, finished)`, SOLO_ROUNDS times; None: no rerun is
    possible and the first run stands): two or more variants of an item passed; a variant has
    no result where its item ran and the run finished; a variant was reported twice with
    different outcomes (`doubled`). A contradiction that does not hold alone is flakiness; the
    real variant's outcome is then the worst it had. Returns the facts with `real_outcomes`:
    {public id: (the real variant's node id, its outcome)}."""
    size = len(record["variants"])
    fact = {"module": record["module"], "template": "::".join([record["module"]] + record["path"] +
                                                              [record["template"]]),
            "variants": len(record["variants"]), "k": record["k"], "line": record.get("line"),
            "shape": record.get("shape"), "real": record["variants"][record["real"]],
            "items": {}, "proof": [], "flaky": [], "real_outcomes": {}}
    doubled = set(doubled)
    for item, by_variant in sorted(items(record, outcomes, anywhere).items()):
        pid = public_id(record, item)
        ids = variant_ids(record, item)
        real_id = ids[record["real"]]
        real_outcome = by_variant.get(record["real"], (real_id, "not_run"))[1]
        fact["items"][pid] = [by_variant.get(i, (None, "no result"))[1] for i in range(size)]
        problem = contradiction(by_variant, size, finished)
        twice = [i for i in ids if i in doubled]
        if twice:
            fact["proof"].append("%s: variant %s was reported twice with different outcomes" % (pid, twice[0]))
        if problem is not None:
            claim = "%s: %s" % (pid, problem)
            if solo is None:
                fact["proof"].append(claim)
            else:
                held, worst = True, real_outcome
                for _ in range(SOLO_ROUNDS):
                    # In an order drawn afresh: the variants' order in the record says nothing.
                    now, done = solo(SOLO_RNG.sample(ids, len(ids)))
                    again = dict((i, (x, now[x])) for i, x in enumerate(ids) if x in now)
                    r = now.get(real_id, "not_run")
                    if r not in PASSED:
                        worst = r
                    if contradiction(again, size, done) is None:
                        held = False
                if held:
                    fact["proof"].append(claim + " (and again in each of %d runs of the group alone)" % SOLO_ROUNDS)
                else:
                    fact["flaky"].append(claim + ", but not when the group ran alone: flaky, not proof")
                    real_outcome = worst
        fact["real_outcomes"][pid] = (real_id, real_outcome)
    return fact


def all_variant_keys(records, outcomes, anywhere=False):
    """Every key of `outcomes` that is a variant of one of the groups."""
    out = set()
    for r in records:
        for by_variant in items(r, outcomes, anywhere).values():
            out.update(k for k, _ in by_variant.values())
    return out
