"""Unit tests of how a test module is read for canary groups (adapters/canary_reading.py): which
literals are sites (an expected literal of a top-level equality assertion, written on one line
or several; with ANY_CALL every literal argument of a top-level call, wrapped or not), which are
not (two computed sides, a message, a boolean, an assertion sharing its line); which tests can be
templates; a mixin's test found through the class that collects it; and modules that key their
expectations by a test's name carry no group. Plans and verdicts: tests/test_canaries.py."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import canary_reading as rm  # noqa: E402


def site_values(source, helpers=None, path=()):
    """{test name: [values of its sites]} of the tests at class path `path`."""
    module = rm.parse(source, helpers)
    body = module.tree.body if not path else rm.classes(module.tree)[path].body
    return dict((n.name, [rm.literal_value(lit) for lit in rm.sites(n, module, path)])
                for n in body if rm.is_test_def(n))


class Sites(unittest.TestCase):
    def test_an_expected_literal_of_a_top_level_equality_is_a_site(self):
        source = ("import unittest\n\n\n"
                  "def test_a():\n    assert f(1) == 5\n    assert -2.5 == g()\n\n\n"
                  "def test_b():\n    assert h() == (\n        'two '\n        'lines'\n    )\n\n\n"
                  "def test_c():\n    assert h() == '''x\ny'''\n\n\n"
                  "class T(unittest.TestCase):\n    def test_d(self):\n        self.assertEqual(f(), 'a-b')\n")
        self.assertEqual(site_values(source), {"test_a": [5, -2.5], "test_b": ["two lines"], "test_c": ["x\ny"]})
        self.assertEqual(site_values(source, path=("T",)), {"test_d": ["a-b"]})

    def test_comparisons_no_group_can_stand_on_are_no_site(self):
        for why, body in {
            "two computed sides": "    assert f() == g()\n",
            "a message": "    assert f() == 1, 'why'\n",
            "a boolean": "    assert f() == True\n",
            "not equality": "    assert f() != 1\n",
            "two literals": "    assert 1 == 1\n",
            "shares its line": "    x = 1; assert f() == 1\n",
            "nested in a block": "    if x:\n        assert f() == 1\n",
            "an empty string": "    assert f() == ''\n",
        }.items():
            self.assertEqual(site_values("def test_a():\n" + body), {"test_a": []}, why)

    def test_a_member_of_an_expected_list_tuple_or_dict_literal_is_a_site(self):
        for body, want in {
            "    assert headings(d) == [(1, 'A'), (2, 'B')]\n": [1],
            "    assert f() == ('x', -3)\n": [-3],
            "    assert f() == {'a': ['one', 'two'], 'n': None}\n": ["one"],
            "    assert [[], ('ab', 2.5)] == f()\n": [2.5],
            "    self.assertEqual(f(), [\n        'a-b',\n        'c',\n    ])\n": ["a-b"],
            # no member a group can stand on, or one whose mutants could be one value
            "    assert f() == {1, 2, 3}\n": [],
            "    assert f() == [{1, 2}]\n": [],
            "    assert f() == {1: 'a'}\n": ["a"],
            "    assert f() == {(1, 2): True}\n": [],
            "    assert f() == [x, 1]\n": [],
            "    assert f() == [g(), 1]\n": [],
            "    assert f() == ['', None, True]\n": [],
            "    assert f() == []\n": [],
            "    assert [1] == [2]\n": [],
        }.items():
            self.assertEqual(site_values("def test_a():\n" + body), {"test_a": want}, body)

    def test_a_calls_literal_is_a_site_only_for_what_says_so(self):
        source = ("def test_a():\n    check(self.dedent('src'), 'expected', n=3)\n")
        self.assertEqual(site_values(source), {"test_a": []})
        self.assertEqual(site_values(source, rm.ANY_CALL), {"test_a": ["src", "expected", 3]})


class Templates(unittest.TestCase):
    def test_tests_whose_clones_would_not_behave_alike_are_no_template(self):
        cases = {
            "returns early": "def test_a():\n    if f():\n        return\n    assert f() == 1\n",
            "named elsewhere": "def test_a():\n    assert f() == 1\n\n\nCHECKS = [test_a]\n",
            "xfail": "import pytest\n\n\n@pytest.mark.xfail\ndef test_a():\n    assert f() == 1\n",
            "bound to its name": "def test_a(request):\n    assert f(request) == 1\n",
            "reads its own id": "def test_a(self):\n    assert f(self.id()) == 1\n",
            "a fixture": "import pytest\n\n\n@pytest.fixture\ndef test_a():\n    assert f() == 1\n",
            "a generator": "def test_a():\n    assert f() == 1\n    yield\n",
        }
        for why, source in cases.items():
            module = rm.parse(source)
            node = [n for n in module.tree.body if getattr(n, "name", "") == "test_a"][0]
            self.assertFalse(rm.template_ok(node, module), why)
            self.assertEqual(rm.candidates(module), [], why)
        module = rm.parse("def test_a():\n    assert f() == 1\n")
        self.assertTrue(rm.template_ok(module.tree.body[0], module))

    def test_a_test_named_again_only_in_an_unrelated_class_is_a_template(self):
        def carried(source, path, name):
            return rm.carries(rm.parse(source), path, name)
        unrelated = ("class ChunkedTests:\n    def test_negative(self):\n        assert f(-1) == 1\n\n\n"
                     "class SlicedTests:\n    def test_negative(self):\n        assert g(-1) == 2\n")
        self.assertTrue(carried(unrelated, ("ChunkedTests",), "test_negative"))
        self.assertTrue(carried(unrelated, ("SlicedTests",), "test_negative"))
        for why, source in {
            "an override": unrelated.replace("class SlicedTests:", "class SlicedTests(ChunkedTests):"),
            "an overridden one": unrelated.replace("class ChunkedTests:", "class ChunkedTests(Base):")
                                          .replace("class SlicedTests:", "class Base:"),
            "a call besides": unrelated + "\n\nCHECKS = [SlicedTests.test_negative]\n",
            "a nested class": unrelated.replace("class SlicedTests:\n    def test_negative(self):\n"
                                                "        assert g(-1) == 2\n",
                                                "class SlicedTests:\n    class Inner:\n"
                                                "        def test_negative(self):\n"
                                                "            assert g(-1) == 2\n"),
        }.items():
            self.assertFalse(carried(source, ("ChunkedTests",), "test_negative"), why)
        twice = "def test_a():\n    assert f() == 1\n\n\ndef test_a():\n    assert f() == 2\n"
        self.assertFalse(carried(twice, (), "test_a"))
        self.assertTrue(carried(twice.replace("test_a", "test_b", 1), (), "test_a"))

    def test_a_mixin_test_is_found_through_the_class_that_collects_it(self):
        source = ("class Checks:\n    def test_add(self):\n        assert add(1, 2) == 3\n\n\n"
                  "class TestFast(Checks):\n    pass\n")
        module = rm.parse(source)
        path, body, index = rm.find_def(module, ("TestFast",), "test_add")
        self.assertEqual((path, body[index].name), (("Checks",), "test_add"))
        self.assertTrue(rm.carries(module, ("TestFast",), "test_add"))
        self.assertIsNone(rm.find_def(module, ("TestFast",), "test_other"))

    def test_modules_that_key_expectations_by_name_carry_no_group(self):
        for source in ("def test_a(snapshot):\n    assert f() == 1\n",
                       "import vcr\n\n\ndef test_a():\n    assert f() == 1\n",
                       "import pytest\n\npytestmark = [pytest.mark.flaky(reruns=2)]\n\n\n"
                       "def test_a():\n    assert f() == 1\n",
                       "import pytest\n\n\n@pytest.mark.xfail\nclass TestA:\n    def test_a(self):\n"
                       "        assert f() == 1\n",
                       "class TestA:\n    pytestmark = pytest.mark.xfail\n\n    def test_a(self):\n"
                       "        assert f() == 1\n",
                       "import pytest\n\n\n@pytest.fixture\ndef broken():\n    pytest.xfail('known')\n\n\n"
                       "def test_a(broken):\n    assert f() == 1\n",
                       "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_a(self):\n"
                       "        assert f() == 1\n\n\nT.test_a = unittest.expectedFailure(T.test_a)\n"):
            self.assertFalse(rm.eligible(rm.parse(source)), source)
        self.assertTrue(rm.eligible(rm.parse("def test_a():\n    assert f() == 1\n")))

    def test_outcome_words_in_code_that_is_no_decorator_leave_the_module_eligible(self):
        # more-itertools' and toolz's test modules call itertools.repeat and test repeat_each:
        # the word alone took every group of the module away.
        source = ("import itertools\nimport pytest\n\n\ndef test_repeat_each():\n"
                  "    assert list(itertools.repeat(1, 2)) == [1, 1]\n\n\n"
                  "@pytest.mark.flaky(reruns=3)\ndef test_b():\n    assert f() == 2\n\n\n"
                  "def test_c():\n    \"\"\"Not retried, never xfail.\"\"\"\n    assert f() == 3\n")
        module = rm.parse(source)
        self.assertTrue(rm.eligible(module))
        # The flaky test's own decorator keeps it from being a template; the others are.
        self.assertEqual(sorted(body[i].name for _, body, i in rm.candidates(module)),
                         ["test_c", "test_repeat_each"])
        self.assertIsNone(rm.parse(b"def test_a(:\n"))
        self.assertIsNone(rm.parse(b"\xff\xfe"))

    def test_the_shape_of_a_template(self):
        source = ("import unittest\n\n\nclass T(unittest.TestCase):\n    async def test_a(self):\n"
                  "        assert f() == 1\n\n\nclass TestX:\n    def test_b(self):\n        assert f() == 1\n")
        module = rm.parse(source)
        classes = rm.classes(module.tree)
        self.assertEqual(rm.shape_of(module, ("T",), classes[("T",)].body[0]), "unittest+async")
        self.assertEqual(rm.shape_of(module, ("TestX",), classes[("TestX",)].body[0]), "method")


if __name__ == "__main__":
    unittest.main()
