"""The verifier's types are written down where a checker reads them: every public function and
method of every module (a name without a leading underscore) carries a PEP 484 type comment or
annotations, which mypy checks in CI. The names of `typing` are imported for the checker only
(under `if MYPY:`), never at run time: the verifier starts on every grading, on any Python from
3.6 up."""
import ast
import glob
import os
import sys
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def modules():
    """The package's modules and the entry point beside it."""
    return sorted(glob.glob(os.path.join(HERE, "beyondswe_verifier", "*.py")) + glob.glob(os.path.join(HERE, "*.py")))


def public_functions(tree):
    """(qualified name, node) of the module's functions and its classes' methods whose names have
    no leading underscore (nested functions are their function's own business)."""
    out = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            out.append((node.name, node))
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not item.name.startswith("_"):
                    out.append((node.name + "." + item.name, item))
    return out


def typed(node):
    args = node.args
    every = args.posonlyargs + args.args + args.kwonlyargs
    return bool(node.type_comment) or node.returns is not None or any(a.annotation is not None for a in every)


def typing_imports_at_run_time(tree):
    """Line numbers of imports of `typing` that run when the module is imported: any but those
    under a top-level `if MYPY:`."""
    checker_only = set()
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "MYPY":
            checker_only.update(id(n) for n in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if id(node) in checker_only:
            continue
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "typing" for a in node.names):
            found.append(node.lineno)
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "typing":
            found.append(node.lineno)
    return found


@unittest.skipUnless(sys.version_info >= (3, 8), "reads type comments, which syntax trees give from 3.8")
class Types(unittest.TestCase):
    def test_every_public_function_carries_its_types(self):
        missing = []
        for path in modules():
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read(), path, type_comments=True)
            for name, node in public_functions(tree):
                if not typed(node):
                    missing.append("%s:%d %s" % (os.path.basename(path), node.lineno, name))
        self.assertEqual(missing, [], "public functions without a type comment or annotations")

    def test_typing_is_never_imported_at_run_time(self):
        found = []
        for path in modules():
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read(), path)
            found += ["%s:%d" % (os.path.basename(path), n) for n in typing_imports_at_run_time(tree)]
        self.assertEqual(found, [])

    def test_the_checks_see_what_they_look_for(self):
        tree = ast.parse("def f(x):  # type: (int) -> int\n    return x\n"
                         "def g(x):\n    return x\n"
                         "class C(object):\n    def m(self, y: int):\n        pass\n    def _p(self):\n        pass\n"
                         "MYPY = False\nif MYPY:\n    from typing import List\n"
                         "import typing\n", type_comments=True)
        found = {name: typed(node) for name, node in public_functions(tree)}
        self.assertEqual(found, {"f": True, "g": False, "C.m": True})
        self.assertEqual(typing_imports_at_run_time(tree), [13])


if __name__ == "__main__":
    unittest.main()
