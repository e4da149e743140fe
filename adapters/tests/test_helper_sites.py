"""Unit tests of the helper sites (adapters/helper_sites.py): which literal arguments of a call to
a project's own assertion helper carry a group. The expected argument of a helper that compares
it, unchanged, in an equality assertion every call reaches is one (found through the class's
bases in other modules of the tree, through relative imports, through a helper handing it on);
an input argument, a helper that changes or reuses it, one that may skip the comparison, and a
helper the tree does not define are none. Then a gold check's plan and a grading's groups on
such a site, with a multi-line literal wrapped in a call, as Python-Markdown writes its tests."""
import ast
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import canaries  # noqa: E402
from beyondswe_verifier import canary_reading as reading  # noqa: E402
from beyondswe_verifier import helper_sites as hs  # noqa: E402

TOOLS = '''import textwrap
import unittest

from pkg.core import Markdown


class TestCase(unittest.TestCase):
    default_kwargs = {}

    def assertMarkdownRenders(self, source, expected, expected_attrs=None, **kwargs):
        expected_attrs = expected_attrs or {}
        md = Markdown(**kwargs)
        output = md.convert(source)
        self.assertMultiLineEqual(output, expected)
        for key, value in expected_attrs.items():
            self.assertEqual(getattr(md, key), value)

    def dedent(self, text):
        return textwrap.dedent(text).strip()
'''

TEST = '''from pkg.test_tools import TestCase


class TestSetext(TestCase):

    def test_mixed_chars(self):
        """Mixed = and - make no heading."""
        self.assertMarkdownRenders(
            self.dedent(
                """
                Not a header
                =-
                """
            ),
            self.dedent(
                """
                <p>Not a header
                =-</p>
                """
            )
        )

    def test_plain(self):
        self.assertMarkdownRenders('foo', '<p>foo</p>')
'''


def tree(files):
    def load(path):
        data = files.get(path)
        return data.encode("utf-8") if data is not None else None
    return load


def literal_sites(files, module_path, wrappers=True):
    """{test name: [literal values of its sites]} of every test def of a module."""
    helpers = hs.Helpers(tree(files), module_path, wrappers)
    module = reading.parse(files[module_path].encode("utf-8"), helpers)
    out = {}
    for path, body in reading.scopes(module.tree):
        for node in body:
            if reading.is_test_def(node):
                out[node.name] = [reading.literal_value(lit) for lit in reading.sites(node, module, path)]
    return out


class HelperSites(unittest.TestCase):
    def test_a_method_helper_of_another_module_gives_its_expected_argument(self):
        found = literal_sites({"pkg/test_tools.py": TOOLS, "tests/test_setext.py": TEST}, "tests/test_setext.py")
        self.assertEqual(found["test_plain"], ["<p>foo</p>"])
        self.assertEqual(found["test_mixed_chars"], ["\n                <p>Not a header\n                =-</p>\n"
                                                     "                "])

    def test_a_wrapped_literal_is_a_site_only_where_a_check_proves_it(self):
        found = literal_sites({"pkg/test_tools.py": TOOLS, "tests/test_setext.py": TEST}, "tests/test_setext.py",
                              wrappers=False)
        self.assertEqual(found["test_mixed_chars"], [])
        self.assertEqual(found["test_plain"], ["<p>foo</p>"])

    def test_without_the_helpers_tree_there_is_no_helper_site(self):
        found = literal_sites({"tests/test_setext.py": TEST}, "tests/test_setext.py")
        self.assertEqual(found, {"test_mixed_chars": [], "test_plain": []})

    def test_a_function_helper_and_a_relative_import_and_a_base_of_a_base(self):
        files = {
            "tests/__init__.py": "",
            "tests/base.py": "import unittest\n\n\nclass Base(unittest.TestCase):\n"
                             "    def check(self, src, expected):\n"
                             "        self.assertEqual(render(src), expected)\n",
            "tests/mid.py": "from . import base\n\n\nclass Mid(base.Base):\n    pass\n",
            "tests/helpers.py": "def check(src, expected):\n    out = render(src)\n    assert out == expected\n",
            "tests/test_a.py": "from .mid import Mid\nfrom .helpers import check as verify\n\n\n"
                               "class TestA(Mid):\n    def test_m(self):\n        self.check('a', 'b')\n\n\n"
                               "def test_f():\n    verify('x', expected='y')\n",
        }
        self.assertEqual(literal_sites(files, "tests/test_a.py"), {"test_m": ["b"], "test_f": ["y"]})

    def test_a_helper_that_hands_its_argument_on_to_another(self):
        files = {"tests/test_a.py": "def compare(out, expected):\n    assert out == expected\n\n\n"
                                    "def check(src, expected):\n    compare(render(src), expected)\n\n\n"
                                    "def test_a():\n    check('a', 'b')\n"}
        self.assertEqual(literal_sites(files, "tests/test_a.py"), {"test_a": ["b"]})

    def test_arguments_no_implementation_is_bound_to_fail_alike_are_no_site(self):
        helpers = {
            "changed": "def check(src, expected):\n    assert render(src) == expected.strip()\n",
            "used twice": "def check(src, expected):\n    assert render(src, expected) == expected\n",
            "in a branch": "def check(src, expected):\n    out = render(src)\n    if out:\n"
                           "        assert out == expected\n",
            "after a return": "def check(src, expected):\n    out = render(src)\n    if not out:\n"
                              "        return\n    assert out == expected\n",
            "a generator": "def check(src, expected):\n    assert render(src) == expected\n    yield\n",
            "decorated": "@wraps\ndef check(src, expected):\n    assert render(src) == expected\n",
            "rebound": "def check(src, expected):\n    expected = expected + 'x'\n    assert render(src) == expected\n",
            "against a literal": "def check(src, expected):\n    assert 'a' == expected\n",
            "not equality": "def check(src, expected):\n    assert expected in render(src)\n",
            "a message naming it": "def check(src, expected):\n    assert render(src) == 'x', expected\n",
        }
        for why, helper in helpers.items():
            files = {"tests/test_a.py": helper + "\n\ndef test_a():\n    check('a', 'b')\n"}
            self.assertEqual(literal_sites(files, "tests/test_a.py"), {"test_a": []}, why)
        files = {"tests/test_a.py": "import unittest\n\n\nclass T(unittest.TestCase):\n"
                                    "    def test_a(self):\n        self.assertIn('a', f())\n"
                                    "        self.assertRenders('a', 'b')\n"}
        self.assertEqual(literal_sites(files, "tests/test_a.py"), {"test_a": []}, "a helper the tree lacks")

    def test_a_return_after_the_comparison_keeps_the_site(self):
        files = {"tests/test_a.py": "def check(src, expected):\n    out = render(src)\n"
                                    "    assert out == expected\n    return out\n\n\n"
                                    "def test_a():\n    check('a', 'b')\n"}
        self.assertEqual(literal_sites(files, "tests/test_a.py"), {"test_a": ["b"]})

    def test_trees_it_cannot_follow_give_no_site_and_no_error(self):
        cyclic = {
            "tests/a.py": "from tests.b import B\n\n\nclass A(B):\n    pass\n",
            "tests/b.py": "from tests.a import A\n\n\nclass B(A):\n    pass\n",
            "tests/test_a.py": "from tests.a import A\n\n\nclass TestA(A):\n"
                               "    def test_a(self):\n        self.check('a', 'b')\n",
        }
        self.assertEqual(literal_sites(cyclic, "tests/test_a.py"), {"test_a": []})
        broken = {"tests/base.py": "class Base(:\n",
                  "tests/test_a.py": "from tests.base import Base\n\n\nclass TestA(Base):\n"
                                     "    def test_a(self):\n        self.check('a', 'b')\n"}
        self.assertEqual(literal_sites(broken, "tests/test_a.py"), {"test_a": []})

    def test_the_test_modules_of_one_tree_read_a_shared_helper_module_once(self):
        files = {"pkg/test_tools.py": TOOLS, "tests/test_setext.py": TEST, "tests/test_other.py": TEST}
        reads = []

        def load(path):
            reads.append(path)
            return tree(files)(path)
        parsed = {}
        for path in ("tests/test_setext.py", "tests/test_other.py"):
            helpers = hs.Helpers(load, path, True, parsed)
            module = reading.parse(files[path].encode("utf-8"), helpers)
            cls = reading.classes(module.tree)[("TestSetext",)]
            self.assertEqual(len(reading.sites(cls.body[1], module, ("TestSetext",))), 1)
        self.assertEqual(reads.count("pkg/test_tools.py"), 1)

    def test_a_path_out_of_the_tree_is_not_read(self):
        seen = []
        helpers = hs.Helpers(lambda p: seen.append(p), "tests/test_a.py", True)
        self.assertIsNone(helpers.module_at("../etc/x.py"))
        self.assertIsNone(helpers.module_at("/etc/x.py"))
        self.assertIsNone(helpers.resolve("tests/test_a.py", "x", 3))
        self.assertEqual(seen, [])


class GroupsOnHelperSites(unittest.TestCase):
    def test_the_check_plans_the_helper_site_and_a_grading_builds_its_group_from_the_check_alone(self):
        files = {"pkg/test_tools.py": TOOLS, "tests/test_setext.py": TEST}
        check = canaries.GoldCheck("seed", {})
        helpers = hs.Helpers(tree(files), "tests/test_setext.py", True)
        out = canaries.plan_check(files["tests/test_setext.py"], [(("TestSetext",), "test_mixed_chars", [4])], check,
                                  "tests/test_setext.py", random.Random(1), 3, helpers=helpers)
        self.assertIsNotNone(out)
        source, records = out
        (record,) = records
        ((line, col),) = [s["site"] for s in record["sites"]]
        self.assertEqual((line, col), (16, 16))  # the expected text's literal, not the source's
        tree_ = ast.parse(source)
        # the real one, 4 others, and test_plain
        self.assertEqual(len([n for n in ast.walk(tree_) if isinstance(n, ast.FunctionDef)]), 5 + 1)

        # The grading: the check's site, found with no helper read (the tree is the submission's).
        check = canaries.GoldCheck("seed", {"tests/test_setext.py::TestSetext::test_mixed_chars": [[line, col]]})
        planned = canaries.plan(TEST, [(("TestSetext",), "test_mixed_chars", 4)], random.Random(2), check=check,
                                module_path="tests/test_setext.py")
        self.assertIsNotNone(planned)
        source, (record,) = planned
        self.assertEqual(record["k"], 4)
        texts = source.decode("utf-8")
        variants = [n for n in ast.walk(ast.parse(texts)) if isinstance(n, ast.FunctionDef)
                    and n.name in record["variants"]]
        expected = []
        for v in variants:
            call = v.body[1].value
            self.assertEqual(ast.dump(call.args[0]), ast.dump(variants[0].body[1].value.args[0]))
            expected.append(ast.literal_eval(call.args[1].args[0]))
        self.assertEqual(len(set(expected)), 5)
        real = [e for e in expected if "Not a header" in e and "=-</p>" in e and "<p>" in e]
        self.assertIn("\n                <p>Not a header\n                =-</p>\n                ", real)


if __name__ == "__main__":
    unittest.main()
