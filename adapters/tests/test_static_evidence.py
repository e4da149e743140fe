"""Unit tests of the static evidence (adapters/static_evidence.py): each construct it must find,
the spellings an attacker who read it would try, and honest code it must leave alone.

Run by tests/it/verifier.rs inside the base image, with the interpreter the fixture images have:
    python3 -m unittest discover -s adapters/tests -t adapters
"""
import os
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import static_evidence as se  # noqa: E402


def kinds(source, path="pkg/mod.py", is_test=False):
    hits, err = se.scan_source(path, textwrap.dedent(source).encode(), is_test)
    assert err is None, err
    return sorted(set(h.kind for h in hits))


class Constructs(unittest.TestCase):
    """Every construct of the issue's list, in its plain spelling."""

    CASES = [
        ("import __main__\n", "main_module"),
        ("import sys\nm = sys.modules['__main__']\n", "main_module"),
        ("import _pytest.runner\n", "test_machinery"),
        ("from pluggy import HookCaller\n", "test_machinery"),
        ("import pytest\n", "test_machinery"),
        ("import sys\nf = sys._getframe(1)\n", "frames"),
        ("import inspect\nfor fr in inspect.stack(): pass\n", "frames"),
        ("def f(fr):\n    return fr.f_back.f_locals\n", "frames"),
        ("def f(tb):\n    return tb.tb_frame\n", "frames"),
        ("import gc\ngc.get_referrers(object)\n", "gc"),
        ("import gc\nfor o in gc.get_objects(): pass\n", "gc"),
        ("import ctypes\n", "ctypes"),
        ("from cffi import FFI\n", "ctypes"),
        ("import sys\nsys.settrace(None)\n", "tracing"),
        ("import sys\nsys.setprofile(None)\n", "tracing"),
        ("import sys\nsys.monitoring.use_tool_id(1, 'x')\n", "tracing"),
        ("import threading\nthreading.settrace(None)\n", "tracing"),
        ("import sys\nsys.addaudithook(print)\n", "tracing"),
        ("import sys\nsys.meta_path.insert(0, object())\n", "import_hooks"),
        ("import sys\nsys.path_hooks.append(len)\n", "import_hooks"),
        ("import sys\nsys.path_importer_cache.clear()\n", "import_hooks"),
        ("import builtins\nbuiltins.open = None\n", "builtins_write"),
        ("import builtins\nsetattr(builtins, 'x', 1)\n", "builtins_write"),
        ("__builtins__['x'] = 1\n", "builtins_write"),
        ("import atexit\natexit.register(print)\n", "atexit"),
        ("open('/proc/self/fd/3')\n", "proc"),
        ("import os\nos.listdir('/dev/fd')\n", "proc"),
        ("import os\nos.write(3, b'x')\n", "raw_fd"),
        ("import os\nos.dup2(5, 1)\n", "raw_fd"),
        ("open(7, 'w')\n", "raw_fd"),
        ("import os\nif os.fork() == 0: pass\n", "process"),
        ("exec(data)\n", "dynamic_code"),
        ("eval(compile(src, 'f', 'exec'))\n", "dynamic_code"),
        ("import marshal\n", "dynamic_code"),
        ("def f(g, h):\n    g.__code__ = h.__code__\n", "dynamic_code"),
        ("__import__(name)\n", "computed_import"),
        ("import importlib\nimportlib.import_module('_py' + 'test')\n", "computed_import"),
        ("import sys\ng = getattr(sys, '_get' + 'frame')\n", "computed_import"),
        ("import sys\nd = sys.__dict__\n", "computed_import"),
        ("import sys\nm = sys.modules[name]\n", "computed_import"),
        ("from unittest import mock\n", "mocking"),
        ("from unittest.mock import patch\n", "mocking"),
    ]

    def test_each_construct_is_found(self):
        for source, kind in self.CASES:
            with self.subTest(source=source):
                self.assertIn(kind, kinds(source))

    def test_every_kind_has_words_for_the_report(self):
        found = set(k for _, k in self.CASES) | {"loader_file"}
        self.assertEqual(found, set(se.KINDS))


class Evasions(unittest.TestCase):
    """What an attacker who has read the scanner tries next."""

    def test_aliases_of_modules_and_names(self):
        self.assertIn("frames", kinds("import sys as s\ns._getframe()\n"))
        self.assertIn("frames", kinds("from sys import _getframe as g\ng()\n"))
        self.assertIn("frames", kinds("import sys\nx = sys\ny = x\ny._getframe()\n"))
        self.assertIn("gc", kinds("g = __import__('gc')\ng.get_referrers(1)\n"))
        self.assertIn("ctypes", kinds("__import__('ctypes')\n"))
        self.assertIn("ctypes", kinds("import importlib\nimportlib.import_module('ctypes')\n"))

    def test_lookups_by_name(self):
        self.assertIn("frames", kinds("def f(x):\n    return getattr(x, 'f_locals')\n"))
        self.assertIn("frames", kinds("import sys\nf = getattr(sys, '_getframe')\n"))
        self.assertIn("computed_import", kinds("import os\nf = getattr(os, n)\n"))
        self.assertIn("computed_import", kinds("import builtins\nv = vars(builtins)\n"))
        self.assertIn("dynamic_code", kinds("def f(a, b):\n    setattr(a, '__code__', b)\n"))

    def test_sys_modules_by_literal_name(self):
        self.assertIn("test_machinery", kinds("import sys\nr = sys.modules['_pytest.runner']\n"))
        self.assertIn("test_machinery", kinds("import sys\nr = sys.modules.get('pluggy')\n"))
        self.assertIn("test_machinery", kinds("import sys\nflag = 'pytest' in sys.modules\n"))

    def test_strings_that_name_the_machinery(self):
        self.assertIn("test_machinery", kinds("name = '_pytest.python'\n"))
        self.assertIn("main_module", kinds("key = '__main__'\n"))
        self.assertIn("proc", kinds("p = b'/proc/self/fd'\n"))

    def test_code_kept_in_strings(self):
        # exec of a literal is read like the file's own code
        self.assertIn("frames", kinds("exec('import sys\\nf = sys._getframe(1)')\n"))
        self.assertIn("gc", kinds("exec('import gc as g\\ng.get_objects()')\n"))
        # code written to a file and imported names what it reaches for
        self.assertIn("frames", kinds("open('pkg/_gen.py', 'w').write('import sys\\nsys._getframe(1).f_locals')\n"))
        self.assertIn("import_hooks", kinds("CODE = 'import sys; sys.meta_path.insert(0, F())'\n"))
        self.assertIn("test_machinery", kinds("CODE = 'from _pytest import runner'\n"))

    def test_nested_scopes_and_classes(self):
        src = """
            class Loader(object):
                def find_spec(self, *a):
                    import sys
                    def inner():
                        return sys._getframe(2).f_locals
                    return inner
        """
        self.assertIn("frames", kinds(src))

    def test_processes_from_build_hooks(self):
        self.assertIn("process", kinds("import subprocess\nsubprocess.Popen(['sleep', '9'])\n", "setup.py"))
        self.assertNotIn("process", kinds("import subprocess\nsubprocess.run(['ls'])\n", "pkg/tool.py"))

    def test_deep_nesting_is_a_hit_not_a_crash(self):
        src = "x = " + "(" * 400 + "1" + ")" * 400 + "\n"
        hits, err = se.scan_source("pkg/deep.py", src.encode())
        self.assertTrue(err is not None or all(h.kind == "dynamic_code" for h in hits))


class Honest(unittest.TestCase):
    """Ordinary code of a fix is left alone."""

    def test_ordinary_library_code(self):
        src = """
            import os, sys, re, json, functools, typing, inspect, types
            from collections import OrderedDict

            def greet(name):
                return "Hello " + name.strip() + "!"

            def arity(fn):
                return fn.__code__.co_argcount, inspect.signature(fn), fn.__globals__.get("x")

            def is_func(x):
                return isinstance(x, types.FunctionType)

            if sys.version_info < (3, 8):
                pass
            value = getattr(os, "sep")
            mod = sys.modules[__name__]
            here = sys.modules.get(__name__)
            data = eval("1 + 1")
            exec("x = 1")

            if __name__ == "__main__":
                greet("x")
        """
        self.assertEqual(kinds(src), [])

    def test_tests_may_use_pytest_and_mock(self):
        src = "import pytest\nfrom unittest import mock\n\ndef test_a(monkeypatch):\n    pass\n"
        self.assertEqual(kinds(src, "tests/test_a.py", is_test=True), [])
        # but not frames, even in a test file
        self.assertIn("frames", kinds("import sys\nsys._getframe()\n", "tests/test_a.py", is_test=True))

    def test_unparseable_file_is_an_error_not_a_hit(self):
        hits, err = se.scan_source("pkg/bad.py", b"def (:\n")
        self.assertEqual(hits, [])
        self.assertIn("pkg/bad.py", err)


class TestFiles(unittest.TestCase):
    """A test file may use pytest's public API and mocking, nothing more: a kept test file, or a
    Doc2Repo tree's, runs like any other module."""

    def test_internals_and_writes_to_pytest_are_not_a_tests_business(self):
        t = dict(path="tests/helpers.py", is_test=True)
        self.assertIn("test_machinery", kinds("import _pytest.runner\n", **t))
        self.assertIn("test_machinery", kinds("import pluggy\n", **t))
        self.assertIn("main_module", kinds("import __main__\n", **t))
        self.assertIn("test_machinery",
                      kinds("import pytest\npytest.MonkeyPatch().setattr(pytest.TestReport, '__init__', f)\n", **t))
        self.assertIn("test_machinery",
                      kinds("from unittest import mock\nmock.patch('pytest.TestReport.__init__', f).start()\n", **t))
        self.assertIn("test_machinery", kinds("import pytest\npytest.TestReport.__init__ = f\n", **t))
        self.assertIn("test_machinery", kinds("from unittest import mock\nimport pytest\n"
                                              "mock.patch.object(pytest.Function, 'runtest').start()\n", **t))

    def test_ordinary_patching_in_tests_is_fine(self):
        src = "import pytest\nfrom unittest import mock\n\ndef test_a(monkeypatch):\n" \
              "    monkeypatch.setattr('pkg.mod.x', 1)\n    mock.patch.object(pkg, 'y').start()\n"
        self.assertEqual(kinds(src, "tests/test_a.py", is_test=True), [])


class Loaders(unittest.TestCase):
    def test_code_run_from_files_that_are_not_modules(self):
        self.assertIn("dynamic_code", kinds("import runpy\nrunpy.run_path('pkg/data.txt')\n"))
        self.assertIn("import_hooks", kinds("import importlib.util as u\nu.spec_from_file_location('x', 'x.dat')\n"))
        self.assertIn("import_hooks", kinds("from importlib.machinery import SourceFileLoader\n"))
        self.assertIn("import_hooks", kinds("import zipimport\n"))
        self.assertEqual(se.loader_hit("pkg/_vendor.zip").kind, "loader_file")

    def test_a_module_that_is_a_link_is_read_through_it(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "pkg"))
            with open(os.path.join(root, "pkg/data.txt"), "w") as fh:
                fh.write("import sys\nsys._getframe(1)\n")
            os.symlink("data.txt", os.path.join(root, "pkg/hook.py"))
            hits, _ = se.scan_tree(root, ["pkg/hook.py"])
            self.assertEqual([(h.kind, h.path) for h in hits], [("frames", "pkg/hook.py")])


class Trees(unittest.TestCase):
    def test_loader_files_and_judging_against_a_baseline(self):
        with tempfile.TemporaryDirectory() as root:
            files = {"pkg/__init__.py": "import ctypes\n", "pkg/x.pth": "import os\n",
                     "pkg/_speed.cpython-311-x86_64-linux-gnu.so": "", "pkg/core.py": "import gc\ngc.get_objects()\n",
                     "README.md": "import ctypes"}
            for rel, text in files.items():
                os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
                with open(os.path.join(root, rel), "w") as fh:
                    fh.write(text)
            hits, errors = se.scan_tree(root, list(files) + ["gone.py"])
            self.assertEqual(errors, [])
            by_kind = se.kinds_of(hits)
            self.assertEqual(sorted(by_kind), ["ctypes", "gc", "loader_file"])
            self.assertEqual(by_kind["ctypes"], "pkg/__init__.py:1")
            left = se.judge(hits, {"ctypes", "loader_file"})
            self.assertEqual([(h.kind, h.path, h.line) for h in left], [("gc", "pkg/core.py", 2)])


if __name__ == "__main__":
    unittest.main()
