# beyondswe suite manifest: which test node ids a Doc2Repo hidden suite can produce, read from
# the suite's archive before anything of the submission runs.
#
# adapters/beyondswe_verifier/manifest.py, a module of the verifier package.
# The verifier (doc2repo.py) reads the manifest as root from the
# suite zip it was handed, before the submission installs itself, so no code of the submission
# can add to it. The Doc2Repo score then counts only outcomes whose node id the manifest names;
# any other collected id (a test planted beside the suite, or an id invented on the result
# channel) is evidence of forgery. Unit tests: adapters/tests/test_manifest.py.
#
# A node id `path::Name` or `path::Name::...` (parameters `[...]` stripped) is in the manifest
# when `path` is a test module of the archive and `Name` a function or class defined at its top
# level. Classes count whole: their methods may come from base classes elsewhere.
#
# Python 3.6+, standard library only.
import ast
import zipfile

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Dict, List, Optional, Set, Tuple, Union  # noqa: F401

TEST_PREFIX, TEST_SUFFIX = "test_", "_test.py"


def is_test_module(path):  # type: (str) -> bool
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith(TEST_PREFIX) or name.endswith(TEST_SUFFIX))


def top_level_names(source):  # type: (Union[str, bytes]) -> Optional[Set[str]]
    """Functions and classes a module defines at its top level (also under `if`/`try`, as
    modules do for optional dependencies); None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    names = set()
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.If, ast.Try, ast.With)) or type(node).__name__ == "TryStar":
            for field in ("body", "orelse", "finalbody"):
                stack.extend(getattr(node, field, None) or [])
            for handler in getattr(node, "handlers", None) or []:
                stack.extend(handler.body)
        elif isinstance(node, ast.Assign):
            # `test_x = make_test(...)` and `TestY = type(...)`: names a module binds to tests.
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names.add(t.id)
    return names


def manifest_of_zip(path, skip=("realswe_eval_script.py",)):
    # type: (str, Tuple[str, ...]) -> Dict[str, Optional[Set[str]]]
    """{module path: set of top-level names} for every test module of the suite archive; a
    module that does not parse maps to None (its ids are then accepted by module)."""
    out = {}
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            name = info.filename
            if name.endswith("/") or name in skip or not is_test_module(name):
                continue
            out[name] = top_level_names(zf.read(info))
    return out


def split_node_id(node_id):  # type: (str) -> Tuple[str, str]
    """(module path, first name) of a pytest node id; the name without its parameters."""
    parts = node_id.split("::")
    module = parts[0]
    first = parts[1] if len(parts) > 1 else ""
    return module, first.split("[", 1)[0]


def in_manifest(manifest, node_id):  # type: (Dict[str, Optional[Set[str]]], str) -> bool
    module, first = split_node_id(node_id)
    if module not in manifest:
        return False
    names = manifest[module]
    return names is None or first in names


def judge(manifest, node_ids, expected=0):
    # type: (Dict[str, Optional[Set[str]]], List[str], int) -> Tuple[List[str], List[str], int]
    """(kept ids, extra ids, over): the ids the manifest names, the ones it does not, and by how
    many the kept ids outnumber `expected` (the suite's published test count; 0: unknown)."""
    kept = [i for i in node_ids if in_manifest(manifest, i)]
    extra = [i for i in node_ids if not in_manifest(manifest, i)]
    over = max(0, len(kept) - expected) if expected else 0
    return kept, extra, over
