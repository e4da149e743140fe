"""Unit tests of the positions a syntax tree before Python 3.8 is given from its tokens
(adapters/end_positions.py). Run on a newer Python, a module's tree is made the way 3.6 and 3.7
make it (no end positions, a multi-line string at its last line with column -1, a decorated def
at its first decorator), filled again, and every position compared with the one the newer
Python gave: over this package's modules, its tests, the fixtures' test modules and a module of
awkward shapes. A literal whose text does not read back as its value carries no site. Run on 3.6
or 3.7 (tests/it/verifier.rs does, where those interpreters are found), the canary tests
exercise the same code on trees those Pythons really make."""
import ast
import glob
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import canary_reading as rm  # noqa: E402
from beyondswe_verifier import end_positions as ep  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NEW = sys.version_info >= (3, 8)

AWKWARD = b'''import pytest, unittest


@pytest.mark.parametrize("a,b", [
    (1, 2),  # a comment
    (3, 4),
])
@other
def test_params(a, b):
    assert (a + b) * 2 == (
        6)
    assert f(x for x in y) == f(a)(b)[0][1:2]
    assert g(*a, **k).h . i == """one
two""" "three"
    assert {**d, 'k': [1, -2.5, 1_000, 3j]} == {1, 2}; assert x == 1
    v = lambda q: (q if q else None)
    if a: b = 1; c = 2
    with open("p") as fh, open("q"):
        pass
    s = f"{a!r:>{b}}" 'tail'
    t = ('x'
         'y'  # inside
         "z")
    u = \\
        b"bytes"
    return ...


class TestCase(unittest.TestCase):
    @property
    def test_m(self):
        self.assertEqual(h(), ["caf\xc3\xa9", 'it''s'])

    async def test_n(self):
        await w()
        try:
            x = 1
        except (A, B) as e:
            raise
        else:
            y = [i for i in range(3) if i]
        finally:
            z = 3
'''


def old_style(tree, lines):
    """The tree as 3.6 and 3.7 give it: no end positions; a string written over several lines at
    its last line, column -1; a decorated def at its first decorator's `@`. Returns the nodes
    with their positions as the newer Python gave them."""
    kept = []
    for node in ast.walk(tree):
        if hasattr(node, "end_lineno"):
            kept.append((node, (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)))
    for node, (line, _, end_line, _) in kept:
        del node.end_lineno, node.end_col_offset
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and end_line > line:
            text = b"".join(lines[line - 1:end_line])
            if text.count(b'"""') + text.count(b"'''") == 2:  # one token over several lines
                node.lineno, node.col_offset = end_line, -1
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.decorator_list:
            first = node.decorator_list[0]
            node.lineno, node.col_offset = first.lineno, first.col_offset - 1
    return kept


def in_fstrings(tree):
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.update(id(n) for n in ast.walk(node) if n is not node)
    return out


def compare(test, data, name):
    """Fills the old-style tree of `data` and compares it with the newer Python's positions;
    returns how many nodes were compared."""
    module = rm.Module(data)
    kept = old_style(module.tree, module.lines)
    skipped = in_fstrings(module.tree)
    tree = ep.fill(module.tree, module.data, module.lines)
    placed = set(id(n) for n in ast.walk(tree))
    n = 0
    for node, want in kept:
        kind = type(node).__name__
        if id(node) in skipped or kind in ("alias", "match_case", "Slice") or kind.startswith("Match"):
            continue
        if id(node) not in placed:
            # Stood in for by an empty f-string: only where the old tree cannot say where it is.
            test.assertEqual(node.col_offset, -1, "%s: %s at %s replaced" % (name, ast.dump(node)[:80], want))
            continue
        got = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
        test.assertEqual(got, want, "%s: %s" % (name, ast.dump(node)[:120]))
        n += 1
    return n


@unittest.skipUnless(NEW, "needs a Python whose trees have the end positions to compare with")
class AgainstNewerTrees(unittest.TestCase):
    def test_every_position_is_the_one_a_newer_python_gives(self):
        paths = sorted(glob.glob(os.path.join(REPO, "adapters", "*", "*.py")) +
                       glob.glob(os.path.join(REPO, "fixtures", "**", "test_*.py"), recursive=True))
        self.assertGreater(len(paths), 40)
        total = compare(self, AWKWARD, "awkward")
        for path in paths:
            with open(path, "rb") as fh:
                data = fh.read()
            total += compare(self, data, os.path.relpath(path, REPO))
        self.assertGreater(total, 50000)

    def test_the_awkward_module_s_sites_and_def_ranges(self):
        module = rm.Module(AWKWARD)
        old_style(module.tree, module.lines)
        module.tree = ep.fill(module.tree, module.data, module.lines)
        test = module.tree.body[1]
        self.assertEqual((test.lineno, test.end_lineno), (9, 26))
        self.assertEqual(rm.block_lines(test), (3, 26))
        values = [rm.literal_value(lit) for lit in rm.sites(test, module)]
        self.assertEqual(values, [6, "one\ntwo" + "three"])
        cls = module.tree.body[2]
        self.assertEqual([rm.literal_value(lit) for lit in rm.sites(cls.body[0], module)], ["caf\xe9"])


class Literals(unittest.TestCase):
    def test_a_literal_whose_text_does_not_read_back_is_no_literal(self):
        module = rm.Module(b"def test_a():\n    assert f() == 'abc'\n    assert g() == 12\n")
        for node in ast.walk(module.tree):
            for attr in ("end_lineno", "end_col_offset"):
                if hasattr(node, attr):
                    delattr(node, attr)
        # The string put one column off: its cut text is no literal; the number is left alone.
        string = module.tree.body[0].body[0].test.comparators[0]
        string.col_offset += 1
        tree = ep.fill(module.tree, module.data, module.lines)
        first, second = tree.body[0].body
        self.assertIsInstance(first.test.comparators[0], ast.JoinedStr)
        self.assertEqual(rm.literal_value(second.test.comparators[0]), 12)

    def test_modules_the_tokens_cannot_be_laid_over_are_refused(self):
        for why, data in {
            "a byte-order mark": b"\xef\xbb\xbfdef test_a():\n    assert f() == 1\n",
            "a lone carriage return": b"def test_a():\r    assert f() == 1\n",
            "another encoding": b"# -*- coding: latin-1 -*-\ndef test_a():\n    assert f() == 1\n",
        }.items():
            with self.assertRaises(ep.Unreadable, msg=why):
                ep.Tokens(data, data.splitlines(True))

    def test_a_multi_line_string_is_put_back_at_its_first_line(self):
        data = b'def test_a():\n    assert f() == """x\ny"""\n'
        module = rm.Module(data)
        if NEW:
            old_style(module.tree, module.lines)
        lit = module.tree.body[0].body[0].test.comparators[0]
        self.assertEqual((lit.lineno, lit.col_offset), (3, -1))
        tree = ep.fill(module.tree, module.data, module.lines)
        lit = tree.body[0].body[0].test.comparators[0]
        self.assertEqual((lit.lineno, lit.col_offset, lit.end_lineno, lit.end_col_offset), (2, 18, 3, 4))


if __name__ == "__main__":
    unittest.main()
