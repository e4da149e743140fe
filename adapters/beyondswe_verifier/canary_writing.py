# beyondswe canary groups: how each variant is written: the values a site's literal takes in a
# group (a number's block of k+1 on its grid, strings changed at one place alike), how every
# value is rendered, and the module's own words the variants' names are made of.
#
# adapters/beyondswe_verifier/canary_writing.py; used by canaries.py.
# Works on values and source text only; unit tests: adapters/tests/test_canary_writing.py.
import ast
import keyword
import re

from . import canary_reading as reading

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    import random  # noqa: F401
    from typing import Any, Callable, Iterable, List, Optional, Tuple  # noqa: F401
    from .canary_reading import Module, Value  # noqa: F401

WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
LOWER, UPPER, DIGITS = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789"


# ---------------------------------------------------------------------------------------------
# Values: the real one among k others of its type and size, and how every one is written

def decimals(v):  # type: (float) -> Optional[int]
    text = repr(v)
    if "e" in text or "E" in text or "inf" in text or "nan" in text:
        return None
    return len(text.split(".", 1)[1].rstrip("0")) if "." in text else 0


def number_values(v, k, rng):  # type: (float, int, random.Random) -> Optional[List[float]]
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


def other_chars(c):  # type: (str) -> List[str]
    for alphabet in (LOWER, UPPER, DIGITS):
        if c in alphabet:
            return [a for a in alphabet if a != c]
    return []


def string_values(v, k, rng):  # type: (Any, int, random.Random) -> Optional[List[Any]]
    """Up to k+1 distinct strings (or bytes) that differ from each other at one place only, a
    letter or digit of v changed to others of its kind (never in case alone): every two
    variants differ alike, so none is the one the others were made from. None when v has no
    such place."""
    is_bytes = isinstance(v, bytes)
    text = v.decode("latin-1") if is_bytes else v
    spots = [i for i, c in enumerate(text) if ord(c) < 128 and c.isalnum()]  # str.isascii is 3.7+
    if not spots:
        return None

    def others_at(i):
        return [c for c in other_chars(text[i]) if c.lower() != text[i].lower()]
    # A letter where there is one: 25 others, where a digit has 9 (a group of 10 at most, too
    # few for one FAIL_TO_PASS group's 1 in 20). The same places whatever k is.
    room = max(len(others_at(i)) for i in spots)
    i = rng.choice([j for j in spots if len(others_at(j)) == room])
    others = others_at(i)
    # Shuffled and cut: from one seed (a gold check's, see canaries.GoldCheck), a smaller k's
    # values are the first of a larger k's, so the check's values hold every group a grading can
    # draw.
    rng.shuffle(others)
    chosen = others[:k]
    out = [text] + [text[:i] + c + text[i + 1:] for c in chosen]
    if len(out) < 2:
        return None
    return [x.encode("latin-1") for x in out] if is_bytes else out


def group_values(v, k, rng):  # type: (Value, int, random.Random) -> Optional[List[Any]]
    """The values of a group (v among them; at most k+1, at least two), or None."""
    if isinstance(v, (str, bytes)):
        return string_values(v, k, rng)
    return number_values(v, k, rng)


def check_values(v, ks, rng_of):  # type: (Value, Iterable[int], Callable[[], random.Random]) -> Optional[List[Any]]
    """Every value other than v that a group of v built with one of the `ks` can hold (each
    draw from a fresh `rng_of()`), or None where no group can be built on v."""
    out, any_group = [], False  # type: List[Any], bool
    for k in sorted(set(ks)):
        vals = group_values(v, k, rng_of())
        if vals is None:
            continue
        any_group = True
        out.extend(x for x in vals if x != v and x not in out)
    return out if any_group else None


def render(v, quote):  # type: (Any, str) -> str
    """One literal as every variant writes it: numbers plainly, strings and bytes with the
    site's quote character, printable characters as they are and the rest escaped; a class's
    dotted name bare."""
    if isinstance(v, reading.ClassName):
        return str(v)
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


def quote_of(module, lit):  # type: (Module, ast.expr) -> str
    text = module.text(lit).lstrip(b"bBrRuU")
    return "'" if text[:1] == b"'" else '"'


# ---------------------------------------------------------------------------------------------
# Names made of the module's own words

def words_of(name):  # type: (str) -> List[str]
    return [w.lower() for w in (name.split("_") if "_" in name else WORD.findall(name)) if w]


def vocabulary(module):  # type: (Module) -> Tuple[List[str], List[int]]
    """The module's words, in the order names are made from them: those of its test names, then
    those of the identifiers its tests use, then every other word of the module. Returns the
    word list and where each of the first two parts ends."""
    parts = ([], [], [])  # type: Tuple[List[str], List[str], List[str]]
    for node in ast.walk(module.tree):
        if reading.is_test_def(node):
            parts[0].extend(words_of(node.name)[1:])  # type: ignore[attr-defined]
            for sub in reading.own_nodes(node):
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
    # type: (str, List[int], Any, random.Random, Callable[[str], bool]) -> Optional[str]
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
