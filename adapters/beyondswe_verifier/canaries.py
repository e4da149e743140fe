# beyondswe canary groups: each test that matters hidden among mutants of itself, under a key the
# tested process never sees.
#
# adapters/beyondswe_verifier/canaries.py, a module of the verifier package.
# The verifier (canary_steps.py) plans the groups as root before
# the tests run, keeps the key in its own memory, and judges the groups from the outcomes after.
# Everything here works on source text and outcome maps, with no file or process of its own:
# canary_reading.py finds the templates and their sites, canary_writing.py the values and the
# words of names; this module plans the groups and judges them. Unit tests:
# adapters/tests/test_canaries.py.
#
# A group is built from one test (the template) and one of its assertions (the site): a
# top-level assertion, alone on its lines, that compares the value under test with a literal
# (`assert f(x) == 5`, `assert "a" == g()`, `self.assertEqual(f(x), 5)`), or the expected
# literal of a top-level call to the project's own assertion helper (`self.assertRenders(src,
# "<p>a</p>")`; helper_sites.py says when an argument is one). The group's k+1
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
import random
import re

from . import canary_classes as classes
from . import canary_reading as reading
from . import canary_writing as writing

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union  # noqa: F401
    from .canary_reading import Def, Module, Value  # noqa: F401
    Record = Dict[str, Any]  # a group's record (plan, plan_check)
    Item = Tuple[str, Tuple[str, ...], str]  # a group's collected item: (module, class path, parameters)
    Unit = Tuple[str, Tuple[str, ...], str]  # a test: (module, class path, name)
    Solo = Callable[[List[str]], Tuple[Dict[str, str], bool]]  # run ids alone: (outcomes, finished)

PASSED = ("passed", "xpassed")
SOLO_ROUNDS = 2
SOLO_RNG = random.SystemRandom()
MAX_K = 19


# ---------------------------------------------------------------------------------------------
# How many mutants a group gets

def ks_for(groups):  # type: (int) -> List[int]
    """Mutants of each of `groups` FAIL_TO_PASS groups, as few in all as keep a blind forger's
    chance at most 1 in 20 with one group and 1 in 100 from two up: 19 for one; else the smallest
    group grows until the sizes' product reaches 100 (five groups: 3, 3, 3, 2, 2). Largest first."""
    if groups <= 1:
        return [MAX_K] * groups
    sizes = [2] * groups
    while forge_chance(sizes) > 0.01:
        sizes[sizes.index(min(sizes))] += 1
    return sorted((n - 1 for n in sizes), reverse=True)


def k_for(groups):  # type: (int) -> int
    """The most mutants any of `groups` FAIL_TO_PASS groups gets (ks_for)."""
    return max(ks_for(groups) or [MAX_K])


def forge_chance(sizes):  # type: (Iterable[int]) -> float
    """The chance that a forger who cannot tell the variants apart picks the real one in every
    group: the product of 1/(k+1) over the groups' sizes (k+1). 1.0 with no group."""
    p = 1.0
    for n in sizes:
        p /= max(1, n)
    return p


def group_chance(record):  # type: (Record) -> float
    """A blind forger's chance of passing one group undetected: 1/(k+1); 2/(k+1) for a group
    on an expected exception class where the submission defines a class deriving from two of
    its classes, or where its classes were not read (no `apart`, GoldCheck.class_values): an
    exception of the real class and one other is then no proof (judge's `excuse`)."""
    two = record.get("classes") and not record.get("apart")
    return min(1.0, (2.0 if two else 1.0) / (record["k"] + 1))


def forge_chance_of(records):  # type: (Iterable[Record]) -> float
    """forge_chance over the groups as built (group_chance each)."""
    p = 1.0
    for r in records:
        p *= group_chance(r)
    return p


class GoldCheck(object):
    """What the gold check of an instance found (canary_steps.plan_check; the offline grader
    runs it once per instance before grading any submission): the tests it checked, each with
    the sites (the literal's line and column) where the real test passed under the gold patch
    and every value a group of that site can hold instead failed. A grading builds groups on
    those sites only, so no honest code that passes like the gold patch makes two variants pass.
    `seed` draws a string site's values, the same at the check and at every grading; it is the
    grader's, never in a file of the container. `tests`: {"module::def path::name": [[line,
    col], ...]}."""

    def __init__(self, seed, tests, classes=None, own=None):
        # type: (str, Dict[str, Any], Optional[Dict[str, Any]], Optional[Callable[[], Any]]) -> None
        self.seed, self.tests = seed, tests
        # {"module::def path::name::line:col": [names]}: at a site expecting an exception
        # class, the other classes the check ran there and saw fail (canary_classes).
        self.classes = classes or {}
        # () -> the classes of the submission's tree (canary_classes.Hierarchy), read when a
        # class site first asks, before any of its code runs; None: not read, and a class
        # group's chance counts the judge's excuse of an honest two-class error (group_chance).
        self.own = own
        # {site key: whether no class of the submission relates two of its group's classes}
        self.apart = {}  # type: Dict[str, bool]

    def class_values(self, module_path, def_path, name, lit, real, k):
        # type: (str, Sequence[str], str, ast.expr, Any, int) -> Optional[List[Any]]
        """The values of a group at a site expecting the class `real`: it and up to k of the
        classes the check saw fail there, the same ones at every grading; None with none."""
        key = self.site_key(module_path, def_path, name, lit)
        names = [n for n in self.classes.get(key) or [] if isinstance(n, str) and n != real]
        if self.own is not None and names:
            self.apart[key] = classes.apart(real, names, self.own())
        if not names:
            return None
        self.rng(module_path, def_path, name, lit).shuffle(names)
        return [real] + [reading.ClassName(n) for n in names[:k]]

    @staticmethod
    def site_key(module_path, def_path, name, lit):  # type: (str, Sequence[str], str, ast.expr) -> str
        return "::".join([module_path] + list(def_path) + [name, "%d:%d" % (lit.lineno, lit.col_offset)])

    def kept_apart(self, module_path, def_path, name, lit):  # type: (str, Sequence[str], str, ast.expr) -> bool
        """Whether no class of the submission relates two of this class site's classes
        (canary_classes.apart): no excuse can then apply to its group."""
        return self.apart.get(self.site_key(module_path, def_path, name, lit), False)

    def sites(self, module_path, def_path, name):  # type: (str, Sequence[str], str) -> Optional[Set[Tuple[int, int]]]
        """The checked sites of a test as a set of (line, col), or None: the test was not checked."""
        found = self.tests.get("::".join([module_path] + list(def_path) + [name]))
        return None if found is None else set(tuple(x) for x in found)

    def rng(self, module_path, def_path, name, lit):  # type: (str, Sequence[str], str, ast.expr) -> random.Random
        msg = "\0".join([module_path, "::".join(def_path), name, str(lit.lineno), str(lit.col_offset)])
        digest = hmac.new(self.seed.encode("ascii"), msg.encode("utf-8"), hashlib.sha256).hexdigest()
        return random.Random(digest)


# ---------------------------------------------------------------------------------------------
# A plan

def blank_lines_before(module, start, path):  # type: (Module, int, Sequence[str]) -> int
    n = 0
    while start - n - 1 >= 0 and not module.lines[start - n - 1].strip():
        n += 1
    return max(1, min(n, 2)) if n else (1 if path else 2)


def variant_text(module, node, lit, value, quote, name):  # type: (Module, Def, Any, Value, str, str) -> Optional[str]
    """The def's text (decorators included) under `name`, its site's literal written as
    `value`. The site's literal is always rewritten, the real value's too, so that every
    variant is written alike."""
    start, end = reading.block_lines(node)
    lo, hi = module.starts[start], module.starts[end]
    a = module.offset(lit.lineno, lit.col_offset) - lo
    b = module.offset(lit.end_lineno, lit.end_col_offset) - lo
    data = module.data[lo:hi]
    data = data[:a] + writing.render(value, quote).encode("utf-8") + data[b:]
    text = data.decode("utf-8")
    if not text.endswith("\n"):
        text += "\n"
    pat = re.compile(r"^(\s*(?:async\s+)?def\s+)%s(\s*\()" % re.escape(node.name), re.M)
    out, n = pat.subn(lambda m: m.group(1) + name + m.group(2), text, count=1)
    return out if n == 1 else None


def plan(source,  # type: Union[str, bytes]
         targets,  # type: Iterable[Tuple[Sequence[str], str, int]]
         rng,  # type: random.Random
         avoid=None,  # type: Optional[Callable[[str], bool]]
         check=None,  # type: Optional[GoldCheck]
         module_path=None,  # type: Any
         helpers=None,  # type: Any
         ):
    # type: (...) -> Optional[Tuple[bytes, List[Record]]]
    """Replaces each target test of a module by its group. `targets`: [(class path as
    collected, name, k)]; `avoid(name)`: names taken elsewhere (other modules of the suite);
    `check`: a GoldCheck (with the module's path in its suite): only its sites carry groups, and
    a test it did not check carries none. Returns (new source bytes, records), or None when no
    target could carry a group; a target that cannot (no literal site, bound to its name, too
    few values) is left as it is and has no record. Each record names the group's variants and,
    as `real`, the index of the real one: the key, which must stay in the caller's memory.
    `helpers`: see canary_reading.Module.helpers (with a check, every call's literal is a candidate)."""
    module, names = start(source, rng, avoid, reading.ANY_CALL if check is not None else helpers)
    if module is None:
        return None
    edits, records = [], []
    for def_path, body, node, k in each_target(module, names, targets):
        lits = reading.sites(node, module, def_path)
        values_rng = lambda lit: rng  # type: Callable[..., random.Random]  # noqa: E731
        if check is not None:
            allowed = check.sites(module_path, def_path, node.name) or set()
            lits = [lit for lit in lits if (lit.lineno, lit.col_offset) in allowed]
            values_rng = lambda lit, d=def_path, n=node.name: check.rng(module_path, d, n, lit)  # noqa: E731
        # The site that gives the largest group; numbers before strings at a tie (their values
        # leave a reader nothing to weigh, where a changed letter may read less like a word).
        # An expected exception class only where the check ran its values, and last at a tie.
        best = None
        for lit in sorted(lits, key=lambda x: rng.random()):
            value = reading.site_value(lit)
            if isinstance(value, reading.ClassName):
                vals = None if check is None else check.class_values(module_path, def_path, node.name, lit, value, k)
            else:
                vals = None if value is None else writing.group_values(value, k, values_rng(lit))
            if vals is None:
                continue
            kind = 0 if isinstance(value, reading.ClassName) else 2 if isinstance(value, (int, float)) else 1
            rank = (len(vals), kind)
            if best is None or rank > best[0]:
                best = (rank, lit, vals)
        if best is None:
            continue
        _, lit, values = best
        real_value = reading.site_value(lit)
        # Stored in a random order: nothing that follows the record's order (a solo run's ids,
        # the facts) follows the values'.
        rng.shuffle(values)
        real = values.index(real_value)
        new_names = names.draw(node, body, len(values))
        if new_names is None:
            continue
        quote = writing.quote_of(module, lit)
        texts = [variant_text(module, node, lit, v, quote, n) for v, n in zip(values, new_names)]
        if any(t is None for t in texts):
            continue
        names.take(def_path, node, new_names)
        order = list(range(len(values)))
        rng.shuffle(order)
        edits.append(edit(module, def_path, node, [texts[i] for i in order]))
        records.append({"path": list(def_path), "template": node.name, "variants": new_names, "real": real,
                        "line": lit.lineno, "k": len(values) - 1, "shape": reading.shape_of(module, def_path, node),
                        "collected": reading.collected_by(module, def_path, node)})
        if isinstance(real_value, reading.ClassName):
            records[-1]["classes"] = [str(v).rsplit(".", 1)[-1] for v in values]
            if check is not None and check.kept_apart(module_path, def_path, node.name, lit):
                records[-1]["apart"] = True
    return finish(module, edits, records)


def plan_check(source,  # type: Union[str, bytes]
               targets,  # type: Iterable[Tuple[Sequence[str], str, Iterable[int]]]
               check,  # type: GoldCheck
               module_path,  # type: str
               rng,  # type: random.Random
               sites_per_test,  # type: int
               avoid=None,  # type: Optional[Callable[[str], bool]]
               helpers=None,  # type: Any
               hierarchy=None,  # type: Any
               ):
    # type: (...) -> Optional[Tuple[bytes, List[Record]]]
    """The gold check's variants of each target test (`targets`: [(class path, name, ks)]): the
    test itself once, renamed, and for up to `sites_per_test` of its sites every value a group
    built there with one of the `ks` can hold instead (check_values, drawn as a grading draws
    them under `check`). Returns (new source bytes, records) or None; a record names the
    variants (the real test first, `real` 0) and, under `sites`, each site's [line, col] with
    the indexes of its variants (and, at a site expecting an exception class, under `classes`
    the names they write). `helpers`: see canary_reading.Module.helpers; `hierarchy()`: the gold
    tree's canary_classes.Hierarchy, asked for only at a site expecting a class (None: no
    expected class is checked)."""
    module, names = start(source, rng, avoid, helpers)
    if module is None:
        return None
    edits, records = [], []
    for def_path, body, node, ks in each_target(module, names, targets):
        checked = []  # type: List[Tuple[Any, Value, List[Any]]]
        for lit in sorted(reading.sites(node, module, def_path), key=lambda x: rng.random()):
            v = reading.site_value(lit)
            if v is None:
                continue
            def rng_of(d=def_path, n=node.name, x=lit):  # type: (Tuple[str, ...], str, Any) -> random.Random
                return check.rng(module_path, d, n, x)
            if isinstance(v, reading.ClassName):
                found = [] if hierarchy is None else classes.pool(module.tree, v, hierarchy(), rng_of())
                others = [reading.ClassName(c) for c in found[:max(ks)]]  # type: Optional[List[Any]]
            else:
                others = writing.check_values(v, ks, rng_of)
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
        texts = [variant_text(module, node, first, v0, writing.quote_of(module, first), new_names[0])]
        site_records = []
        for lit, value, others in checked:
            quote, idx = writing.quote_of(module, lit), []
            for other in others:
                idx.append(len(texts))
                texts.append(variant_text(module, node, lit, other, quote, new_names[len(texts)]))
            site_records.append({"site": [lit.lineno, lit.col_offset], "variants": idx})
            if isinstance(value, reading.ClassName):
                site_records[-1]["classes"] = [str(o) for o in others]
        if any(t is None for t in texts):
            continue
        names.take(def_path, node, new_names)
        edits.append(edit(module, def_path, node, texts))
        records.append({"path": list(def_path), "template": node.name, "variants": new_names, "real": 0,
                        "line": first.lineno, "k": len(texts) - 1, "shape": reading.shape_of(module, def_path, node),
                        "collected": reading.collected_by(module, def_path, node),
                        "sites": site_records})
    return finish(module, edits, records)


def checked_sites(record, outcomes):  # type: (Record, Dict[str, str]) -> List[List[int]]
    """The [line, col] of each site of a gold-check record whose every other value failed in
    every collected item of the test while the real test passed there (at a site expecting an
    exception class: one other class at least, see checked_classes); [] when the real test did
    not pass in each (a test the gold patch fails, or a flaky one, carries no group)."""
    held = site_failures(record, outcomes)
    return [s["site"] for s in record["sites"]
            if held is not None and (any(held[i] for i in s["variants"]) if "classes" in s
                                     else all(held[i] for i in s["variants"]))]


def checked_classes(record, outcomes):  # type: (Record, Dict[str, str]) -> Dict[str, List[str]]
    """{"line:col": [classes]} of each site of a gold-check record that expects an exception
    class: the other classes whose variant failed in every collected item while the real test
    passed there. A class that passed under the gold patch names a class the gold code raised
    (a library's, say, that the hierarchy did not know), which honest code may raise too: it is
    left out, and the site keeps the others."""
    held = site_failures(record, outcomes)
    out = {}  # type: Dict[str, List[str]]
    for s in record["sites"]:
        if "classes" in s and held is not None:
            kept = [c for c, i in zip(s["classes"], s["variants"]) if held[i]]
            if kept:
                out["%d:%d" % tuple(s["site"])] = kept
    return out


def site_failures(record, outcomes):  # type: (Record, Dict[str, str]) -> Optional[Dict[int, bool]]
    """{variant index: whether it failed in every collected item} of a gold-check record, or
    None when the real test did not pass in each item, or no item ran."""
    found = items(record, outcomes)
    if not found:
        return None
    for by_variant in found.values():
        if by_variant.get(record["real"], (None, "no result"))[1] not in PASSED:
            return None
    indexes = set(i for s in record["sites"] for i in s["variants"])
    return dict((i, all(by_variant.get(i, (None, "no result"))[1] in ("failed", "error")
                        for by_variant in found.values())) for i in indexes)


class Names(object):
    """The fresh names of a module's variants: drawn in each template's style from the module's
    own words, never a name the module (or `avoid`) has taken."""

    def __init__(self, module, rng, avoid):  # type: (Module, random.Random, Optional[Callable[[str], bool]]) -> None
        self.module, self.rng, self.avoid = module, rng, avoid
        self.vocab = writing.vocabulary(module)
        self.taken = set(module.taken)
        self.done = set()  # type: Set[Tuple[Tuple[str, ...], str]]

    def draw(self, node, body, count):  # type: (Def, List[Any], int) -> Optional[List[str]]
        lengths = [max(1, len(writing.words_of(n.name)) - 1) for n in body if reading.is_test_def(n)] or [2]
        out = []
        for _ in range(count):
            new = writing.make_name(node.name, lengths, self.vocab, self.rng,
                            lambda x: x.encode("ascii") in self.taken or x in out
                            or (self.avoid is not None and self.avoid(x)))
            if new is None:
                return None
            out.append(new)
        return out

    def take(self, def_path, node, names):  # type: (Tuple[str, ...], Def, List[str]) -> None
        for n in names:
            self.taken.add(n.encode("ascii"))
        self.done.add((def_path, node.name))


def start(source, rng, avoid, helpers=None):
    # type: (Union[str, bytes], random.Random, Optional[Callable[[str], bool]], Any) -> Tuple[Optional[Module], Any]
    """(the module parsed, its Names), or (None, None) when it cannot carry groups."""
    module = reading.parse(source, helpers)
    if module is None or not reading.eligible(module):
        return None, None
    return module, Names(module, rng, avoid)


def each_target(module,  # type: Module
                names,  # type: Names
                targets,  # type: Iterable[Tuple[Sequence[str], str, Any]]
                ):
    # type: (...) -> Iterator[Tuple[Tuple[str, ...], List[ast.stmt], Def, Any]]
    """Each target (class path as collected, name, extra) that can carry a group, as (def path,
    scope body, def node, extra): found when its turn comes, after the ones before took theirs."""
    for path, name, extra in targets:
        found = reading.find_def(module, tuple(path), name)
        if found is None:
            continue
        def_path, body, index = found
        node = body[index]  # type: Any
        if (def_path, node.name) in names.done or not reading.is_test_def(node) \
                or not reading.template_ok(node, module):
            continue
        yield def_path, body, node, extra


def edit(module, def_path, node, texts):  # type: (Module, Tuple[str, ...], Def, List[Any]) -> Tuple[int, int, str]
    """(first line, end line, new text) putting `texts` where the def is, spaced as it was."""
    start, end = reading.block_lines(node)
    blanks = "\n" * blank_lines_before(module, start, def_path)
    return start, end, blanks.join(texts)


def finish(module, edits, records):
    # type: (Module, List[Tuple[int, int, str]], List[Record]) -> Optional[Tuple[bytes, List[Record]]]
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


def module_candidates(source, helpers=None):  # type: (Union[str, bytes], Any) -> List[Tuple[Tuple[str, ...], str]]
    """(class path, name) of every test of a module that can carry a group (for a Doc2Repo
    suite, where any test may be drawn)."""
    module = reading.parse(source, helpers)
    if module is None or not reading.eligible(module):
        return []
    out = []  # type: List[Tuple[Tuple[str, ...], str]]
    for path, body, i in reading.candidates(module):
        node = body[i]  # type: Any
        out.append((path, node.name))
    return out


# ---------------------------------------------------------------------------------------------
# Judging the outcomes

def split_key(key):  # type: (str) -> Tuple[str, Tuple[str, ...], str, str]
    """(module, class path, name, parameters) of a node id."""
    base, bracket, params = key.partition("[")
    parts = base.split("::")
    return parts[0], tuple(parts[1:-1]), parts[-1] if len(parts) > 1 else "", bracket + params


def items(record, outcomes, anywhere=False):
    # type: (Record, Dict[str, str], bool) -> Dict[Item, Dict[int, Tuple[str, str]]]
    """{(class path, parameters): {variant index: (node id, outcome)}} of a group's variants in
    `outcomes`: each collected item of the group (a class inheriting the template, a parameter
    set) is one group of its own. `anywhere`: variants collected in any module count (a suite's
    other modules may inherit the template's class)."""
    index = dict((n, i) for i, n in enumerate(record["variants"]))
    out = {}  # type: Dict[Item, Dict[int, Tuple[str, str]]]
    for key, outcome in outcomes.items():
        module, path, name, params = split_key(key)
        if name in index and (anywhere or module == record["module"]):
            out.setdefault((module, path, params), {})[index[name]] = (key, outcome)
    return out


def stands_for(record, path, name):  # type: (Record, Sequence[str], str) -> bool
    """Whether the test `name` collected under class path `path` of the record's module is
    the group's template: the same name, and a class that collects the template's def where
    another class of the module has a test of that name (the record's `collected`)."""
    collected = record.get("collected")
    return name == record["template"] and (collected is None or list(path) in collected)


def public_id(record, item):  # type: (Record, Item) -> str
    module, path, params = item
    return "::".join([module] + list(path) + [record["template"]]) + params


def variant_ids(record, item):  # type: (Record, Item) -> List[str]
    module, path, params = item
    return ["::".join([module] + list(path) + [n]) + params for n in record["variants"]]


def contradiction(by_variant, size, finished):  # type: (Dict[int, Tuple[str, str]], int, bool) -> Optional[str]
    """What is wrong with one item's outcomes, or None: two or more variants passed, or (when
    the run finished) a variant has no result while others of its item have one."""
    passed = sorted(i for i, (_, o) in by_variant.items() if o in PASSED)
    if len(passed) >= 2:
        return "%d of its %d variants passed" % (len(passed), size)
    if finished and by_variant and len(by_variant) < size:
        return "%d of its %d variants have no result" % (size - len(by_variant), size)
    return None


def judge(record, outcomes, finished, solo=None, doubled=(), anywhere=False, excuse=None):
    # type: (Record, Dict[str, str], bool, Optional[Solo], Iterable[str], bool, Optional[Callable[[str, str], Optional[str]]]) -> Dict[str, Any]  # noqa: E501
    """Facts about one group. Proof of forged outcomes, each confirmed by running the item's
    variants alone (`solo(ids) -> (outcomes, finished)`, SOLO_ROUNDS times; None: no rerun is
    possible and the first run stands): two or more variants of an item passed; a variant has
    no result where its item ran and the run finished; a variant was reported twice with
    different outcomes (`doubled`). A contradiction that does not hold alone is flakiness; the
    real variant's outcome is then the worst it had. In a group on an expected exception class
    (but one where the submission's classes relate none of its classes: `apart`), the real
    variant and exactly one other passing is no proof where `excuse(real class, other class)`
    says why (the submission defines a class deriving from both: honest code may raise it); it
    is listed under `review`. Returns the facts with `real_outcomes`: {public id: (the
    real variant's node id, its outcome)}."""
    size = len(record["variants"])
    fact = {"module": record["module"], "template": "::".join([record["module"]] + record["path"] +
                                                              [record["template"]]),
            "variants": len(record["variants"]), "k": record["k"], "line": record.get("line"),
            "shape": record.get("shape"), "real": record["variants"][record["real"]],
            "items": {}, "proof": [], "flaky": [], "review": [], "real_outcomes": {}}
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
        passed = sorted(i for i, (_, o) in by_variant.items() if o in PASSED)
        why = None
        if problem is not None and record.get("classes") and not record.get("apart") and excuse is not None \
                and len(passed) == 2 and record["real"] in passed:
            other = [i for i in passed if i != record["real"]][0]
            why = excuse(record["classes"][record["real"]], record["classes"][other])
        if why is not None:
            fact["review"].append("%s: %s (%s)" % (pid, problem, why))
        elif problem is not None:
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


def unit_outcomes(outcomes, units):  # type: (Dict[str, str], Iterable[Unit]) -> Dict[Unit, bool]
    """{unit: passed} for each unit (module, class path, name) with results in `outcomes`
    ({node id: outcome}, node ids by their public names): passed when every collected item
    of it passed. A unit with no result is left out."""
    wanted, seen = set(units), {}  # type: Set[Unit], Dict[Unit, bool]
    for key, outcome in outcomes.items():
        module, path, name, _ = split_key(key)
        unit = (module, path, name)
        if unit in wanted:
            seen[unit] = seen.get(unit, True) and outcome in PASSED
    return seen


def uneven_split_chance(sample_passed, sample_size, rest_passed, rest_size):  # type: (int, int, int, int) -> float
    """The chance that a sample of `sample_size` units drawn uniformly from all of them holds
    at most `sample_passed` passing ones, when `sample_passed + rest_passed` of the
    `sample_size + rest_size` pass whichever are drawn (the hypergeometric tail): how often
    code whose outcomes do not depend on the draw shows a split at least this uneven."""
    total, passed = sample_size + rest_size, sample_passed + rest_passed

    def comb(n, r):
        if r < 0 or r > n:
            return 0
        out = 1
        for i in range(min(r, n - r)):
            out = out * (n - i) // (i + 1)
        return out
    whole = comb(total, sample_size)
    if not whole:
        return 1.0
    tail = sum(comb(passed, x) * comb(total - passed, sample_size - x) for x in range(sample_passed + 1))
    return min(1.0, float(tail) / whole)


def all_variant_keys(records, outcomes, anywhere=False):  # type: (Iterable[Record], Dict[str, str], bool) -> Set[str]
    """Every key of `outcomes` that is a variant of one of the groups."""
    out = set()  # type: Set[str]
    for r in records:
        for by_variant in items(r, outcomes, anywhere).values():
            out.update(k for k, _ in by_variant.values())
    return out
