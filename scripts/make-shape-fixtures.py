#!/usr/bin/env python3
"""Writes the image-shape fixtures: fixtures/images/shape-*/ (build contexts FROM the one base)
and fixtures/dataset/shapes.jsonl (one record each).

Real BeyondSWE images put their package on the import path, and pytest on PATH, in several ways.
Each shape here is one of them, around the same tiny package (`greeter`, whose `greet` forgets to
strip the name and punctuate); the gold patch fixes it, and each shape's own tests pass only when
the tests run in the environment the image defines:

- pythonpath: a src layout reached only through the image's `ENV PYTHONPATH` (two entries);
- editable:   a src layout installed editable (a `.pth` in site-packages names src/);
- venv:       a venv first on PATH, with pytest installed only there (the system's removed);
- plugins:    tests that need plugins' fixtures and markers (mocker, asyncio, timeout);
- config:     pytest configured in tox.ini: testpaths, python_files, markers, addopts with -p,
              asyncio_mode = auto;
- precmds:    pre_commands that export variables and source a script that extends PATH;
- home:       tests that write to HOME, to /tmp and through tempfile;
- cext:       a C extension built in place (an untracked .so the image made), and a base
              module that uses ctypes (the static evidence's per-instance baseline);
- helper:     a FAIL_TO_PASS test that compares only through the project's own assertion
              helper, shipped in the package as Python-Markdown's `markdown.test_tools` is, its
              expected text a multi-line literal wrapped in the helper class's `dedent`;
- py37:       CPython 3.7 the only Python (Debian's removed; copied from the building machine's
              pyenv by scripts/stage-python.sh), pytest 7.4 from pinned wheels, a setup.py
              project installed editable the old way; a FAIL_TO_PASS test that is decorated and
              compares with a multi-line string, where 3.7's syntax trees have no end positions;
- pytestdep:  a project that ships a package pytest itself imports (`iniconfig`, as attrs or
              packaging are to the pytest that imports them), src layout installed editable: its
              tests import the project's copy, as plain pytest gives it to them;
- d2r-venv:   the minidoc Doc2Repo instance on a venv image: the install and the suite run with
              the venv's interpreter, pip and pytest.

Every commit input is fixed (see setup.sh), so the base commits below are the same on every
build. Run from the repository root: python3 scripts/make-shape-fixtures.py
"""

import json
import os
import shutil
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMAGES = os.path.join(ROOT, "fixtures", "images")
DATASET = os.path.join(ROOT, "fixtures", "dataset", "shapes.jsonl")
SETUP_SH = os.path.join(IMAGES, "calc", "setup.sh")
HISTORY = ("commit|01-base|2024-05-06T09:00:00+00:00|Grace Maintainer|grace@acme.invalid|"
           "Add greeter\n")

PROBLEM = """`greet` keeps stray whitespace and has no punctuation

```python
>>> greet("  Ada ")
'Hello   Ada '
```

Expected: surrounding whitespace is dropped and the greeting reads `Hello, Ada!`.
"""

INIT = '''"""greeter: greetings for names."""

from greeter.core import greet

__all__ = ["greet"]
'''

CORE_BASE = '''"""Greetings."""


def greet(name):
    """The greeting for `name`."""
    return "Hello " + name
'''

CORE_FIXED = '''"""Greetings."""


def greet(name):
    """The greeting for `name`: surrounding whitespace dropped, as `Hello, Name!`."""
    return "Hello, %s!" % name.strip()
'''

TEST_GREET = '''from greeter import greet


def test_greet_strips_and_punctuates():
    assert greet("  Ada ") == "Hello, Ada!"


def test_greet_returns_text():
    assert isinstance(greet("Ada"), str)
'''

F2P = "tests/test_greet.py::test_greet_strips_and_punctuates"
P2P = "tests/test_greet.py::test_greet_returns_text"

PYPROJECT = '''[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "greeter"
version = "0.1"
'''

PIP = ("pip install --no-cache-dir --no-input --disable-pip-version-check --no-build-isolation "
       "--no-deps -q")

# The venv shapes: a venv first on PATH whose interpreter alone has pytest (copied in from the
# system's packages, which are then removed).
VENV = r'''RUN python3 -m venv /opt/venv \
    && dp=/usr/lib/python3/dist-packages \
    && sp=$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') \
    && for m in pytest _pytest pluggy iniconfig packaging py attr attrs wheel; do \
           for f in $dp/$m $dp/$m.py $dp/$m-*-info; do if [ -e "$f" ]; then cp -a "$f" "$sp/"; fi; done; \
       done \
    && dpkg -r --force-depends python3-pytest-mock python3-pytest-asyncio python3-pytest-timeout \
           python3-pytest >/dev/null \
    && ! python3 -c 'import pytest' 2>/dev/null
ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
'''


# The py37 shape: CPython 3.7 copied into /usr/local from the building machine's pyenv and the
# wheels below, both put in a copy of the build context by scripts/stage-python.sh (the
# `stage-python` file asks for it); Debian's Python is removed, so python3 on PATH is 3.7 alone,
# and the verifier runs on it. pytest 7.4 is the last for 3.7; every wheel pinned with its hash.
PY37_STAGE = """# The CPython this image copies from the building machine's pyenv (scripts/stage-python.sh
# puts it and the wheels requirements.txt pins in a copy of this context).
3.7
"""

PY37_REQUIREMENTS = """# pytest for CPython 3.7, every wheel pinned with its hash (scripts/stage-python.sh downloads them).
exceptiongroup==1.3.2 --hash=sha256:41c6a70dfec22050d3d8b43386b059a4dc0bca3f3d40a40971cb206fff1785af
importlib_metadata==6.7.0 --hash=sha256:cb52082e659e97afc5dac71e79de97d8681de3aa07ff18578330904a9d18e5b5
iniconfig==2.0.0 --hash=sha256:b6a85871a79d2e3b22d2d1b94ac2824226a63c6b741c88f7ae975f18b6778374
packaging==24.0 --hash=sha256:2ddfb553fdf02fb784c234c7ba6ccc288296ceabec964ad2eae3777778130bc5
pluggy==1.2.0 --hash=sha256:c2fd55a7d7a3863cba1a013e4e2414658b1d07b6bc57b3919e0c63c9abb99849
pytest==7.4.4 --hash=sha256:b090cdf5ed60bf4c45261be03239c2c1c22df034fbffe691abe93cd80cea01d8
tomli==2.0.1 --hash=sha256:939de3e7a6161af0c887ef91b7d41a53e7c5a1ca976325f429cb46ea9bc30ecc
typing_extensions==4.7.1 --hash=sha256:440d5dd3af93b060174bf433bccd69b0babc3b15b1a8dca43789fd7f61514b36
zipp==3.15.0 --hash=sha256:48904fc76a60e542af151aded95726c1a5c34ed43ab4134b597665c86d7ad556
"""

PY37_HEAD = r"""COPY python/ /usr/local/
COPY requirements.txt wheels/ /tmp/wheels/
RUN ldconfig \
    && dpkg --purge --force-depends $(dpkg-query -W -f '${Package}\n' | grep -E '^(lib)?python3') >/dev/null 2>&1 \
    && ! ls -d /usr/bin/python* /usr/lib/python3* 2>/dev/null \
    && python3 -m ensurepip --default-pip >/dev/null \
    && pip install --no-cache-dir --no-input --disable-pip-version-check --no-index --find-links /tmp/wheels \
           --require-hashes -q -r /tmp/wheels/requirements.txt \
    && rm -rf /tmp/wheels \
    && test "$(python3 -c 'import sys; print(sys.version_info[:2])')" = "(3, 7)"
"""


TEST_TOOLS = '''"""Test tools shipped with the package, as Python-Markdown ships markdown.test_tools."""
import textwrap
import unittest

from greeter import greet


class TestCase(unittest.TestCase):
    """A TestCase with the project's own assertion."""

    def assertGreets(self, name, expected, **kwargs):
        """The greeting for `name` is `expected`."""
        output = greet(name, **kwargs)
        self.assertMultiLineEqual(output, expected)

    def dedent(self, text):
        return textwrap.dedent(text).strip()
'''

TEST_HELPER = '''from greeter.test_tools import TestCase


class TestGreeting(TestCase):

    def test_greeting_through_the_helper(self):
        self.assertGreets(
            "  Ada ",
            self.dedent(
                """
                Hello, Ada!
                """
            ),
        )
'''


def shape(name, files, fixed, tests, f2p, p2p, docker="", pre_commands="", note="", head="",
          copy="COPY . /tmp/fixture/\n", context=None):
    """`head`: Dockerfile lines before the repository is copied in (by `copy`); `context`: files
    put beside the Dockerfile."""
    return {"name": name, "files": files, "fixed": fixed, "tests": tests, "f2p": f2p, "p2p": p2p,
            "docker": docker, "pre_commands": pre_commands, "note": note, "head": head, "copy": copy,
            "context": context or {}}


def flat(extra=None):
    files = {"greeter/__init__.py": INIT, "greeter/core.py": CORE_BASE, "pyproject.toml": PYPROJECT}
    files.update(extra or {})
    return files


SHAPES = [
    shape(
        "pythonpath",
        {"src/greeter/__init__.py": INIT,
         "src/greeter/core.py": CORE_BASE.replace('"""Greetings."""\n', '"""Greetings."""\n\nimport greetdata\n'),
         "lib/greetdata.py": '"""Data the greeter reads."""\n\nPUNCT = "!"\n'},
        {"src/greeter/core.py": CORE_FIXED.replace('"""Greetings."""\n', '"""Greetings."""\n\nimport greetdata\n')
         .replace('"Hello, %s!" % name.strip()', '"Hello, %s%s" % (name.strip(), greetdata.PUNCT)')},
        {"tests/test_path.py": '''import os


def test_lib_is_on_the_image_path():
    import greetdata

    assert greetdata.PUNCT == "!"


def test_children_get_the_image_pythonpath():
    assert os.environ["PYTHONPATH"].split(os.pathsep)[0].endswith("/src")
'''},
        [F2P], [P2P, "tests/test_path.py::test_lib_is_on_the_image_path",
                "tests/test_path.py::test_children_get_the_image_pythonpath"],
        docker="ENV PYTHONPATH=/workspace/pythonpath/src:/workspace/pythonpath/lib\n",
        note="src layout reached only through ENV PYTHONPATH"),
    shape(
        "editable",
        {"src/greeter/__init__.py": INIT, "src/greeter/core.py": CORE_BASE,
         "pyproject.toml": PYPROJECT + '\n[tool.setuptools.packages.find]\nwhere = ["src"]\n',
         ".gitignore": "*.egg-info/\nbuild/\n"},
        {"src/greeter/core.py": CORE_FIXED},
        {"tests/test_installed.py": '''from importlib import metadata


def test_installed_as_a_distribution():
    assert metadata.version("greeter") == "0.1"
'''},
        [F2P], [P2P, "tests/test_installed.py::test_installed_as_a_distribution"],
        docker="RUN cd /workspace/editable && " + PIP + " -e . && rm -rf build\n",
        note="src layout installed editable (a .pth in site-packages)"),
    shape(
        "venv",
        flat(),
        {"greeter/core.py": CORE_FIXED},
        {"tests/test_venv.py": '''import sys

import pytest


def test_runs_in_the_venv():
    assert sys.prefix == "/opt/venv"


def test_pytest_is_the_venvs():
    assert pytest.__file__.startswith("/opt/venv/")
'''},
        [F2P], [P2P, "tests/test_venv.py::test_runs_in_the_venv", "tests/test_venv.py::test_pytest_is_the_venvs"],
        docker=VENV + "RUN cd /workspace/venv && /opt/venv/bin/" + PIP + " -e . && rm -rf build\n",
        note="a venv first on PATH, pytest only there"),
    shape(
        "plugins",
        flat(),
        {"greeter/core.py": CORE_FIXED},
        {"tests/test_plugins.py": '''import asyncio

import pytest

from greeter import core, greet


@pytest.mark.asyncio
async def test_greets_in_a_coroutine():
    await asyncio.sleep(0)
    assert greet(" Bo ") == "Hello, Bo!"


def test_greet_can_be_spied_on(mocker):
    spy = mocker.spy(core, "greet")
    core.greet("Ada")
    spy.assert_called_once_with("Ada")


@pytest.mark.timeout(60)
def test_greet_is_quick():
    assert greet("Ada").startswith("Hello")
'''},
        [F2P, "tests/test_plugins.py::test_greets_in_a_coroutine"],
        [P2P, "tests/test_plugins.py::test_greet_can_be_spied_on", "tests/test_plugins.py::test_greet_is_quick"],
        docker="RUN cd /workspace/plugins && " + PIP + " -e . && rm -rf build\n",
        note="tests that need pytest-mock, pytest-asyncio and pytest-timeout"),
    shape(
        "config",
        flat({"tox.ini": '''[tox]
envlist = py3

[pytest]
testpaths = tests
python_files = check_*.py
addopts = -p pytest_mock --strict-markers -ra
markers =
    slow: a slow check
asyncio_mode = auto
'''}),
        {"greeter/core.py": CORE_FIXED},
        {"tests/check_greet.py": '''import asyncio

import pytest

from greeter import greet


def test_greet_strips_and_punctuates():
    assert greet("  Ada ") == "Hello, Ada!"


async def test_greets_without_a_marker():
    await asyncio.sleep(0)
    assert greet(" Bo ") == "Hello, Bo!"


@pytest.mark.slow
def test_greet_returns_text(mocker):
    assert isinstance(greet("Ada"), str)
'''},
        ["tests/check_greet.py::test_greet_strips_and_punctuates", "tests/check_greet.py::test_greets_without_a_marker"],
        ["tests/check_greet.py::test_greet_returns_text"],
        docker="RUN cd /workspace/config && " + PIP + " -e . && rm -rf build\n",
        note="pytest configured in tox.ini (testpaths, python_files, markers, addopts, asyncio_mode)"),
    shape(
        "precmds",
        flat({"scripts/env.sh": '''# Sourced by the setup commands: the punctuation and the tools.
export GREETER_PUNCT='!'
export PATH="/opt/greeter-tools/bin:$PATH"
''',
            "greeter/core.py": CORE_BASE.replace('"""Greetings."""\n', '"""Greetings."""\n\nimport os\n')
            .replace('"Hello " + name', 'os.environ["GREETER_GREETING"] + " " + name')}),
        {"greeter/core.py": CORE_FIXED.replace('"""Greetings."""\n', '"""Greetings."""\n\nimport os\n')
         .replace('"Hello, %s!" % name.strip()',
                  '"%s, %s%s" % (os.environ["GREETER_GREETING"], name.strip(), os.environ["GREETER_PUNCT"])')},
        {"tests/test_env.py": '''import os
import subprocess


def test_setup_exports_reach_the_tests():
    assert os.environ["GREETER_GREETING"] == "Hello"


def test_a_sourced_script_extends_path():
    out = subprocess.run(["greeter-tool"], stdout=subprocess.PIPE, check=True)
    assert out.stdout.strip() == b"tool-ok"
'''},
        [F2P], [P2P, "tests/test_env.py::test_setup_exports_reach_the_tests",
                "tests/test_env.py::test_a_sourced_script_extends_path"],
        docker=("RUN cd /workspace/precmds && " + PIP + " -e . && rm -rf build \\\n"
                "    && mkdir -p /opt/greeter-tools/bin && printf '#!/bin/sh\\necho tool-ok\\n' \\\n"
                "       >/opt/greeter-tools/bin/greeter-tool && chmod 755 /opt/greeter-tools/bin/greeter-tool\n"),
        pre_commands={"execute_command": {"commands": ["export GREETER_GREETING=Hello", ". ./scripts/env.sh"]}},
        note="pre_commands that export variables and source a script"),
    shape(
        "home",
        flat(),
        {"greeter/core.py": CORE_FIXED},
        {"tests/test_home.py": '''import os
import tempfile


def test_writes_to_home():
    path = os.path.expanduser("~/.cache/greeter/history")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write("Ada\\n")
    with open(path) as fh:
        assert fh.read() == "Ada\\n"


def test_writes_to_tmp():
    path = "/tmp/greeter-%d.txt" % os.getpid()
    with open(path, "w") as fh:
        fh.write("x")
    os.remove(path)
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "f"), "w") as fh:
            fh.write("y")
'''},
        [F2P], [P2P, "tests/test_home.py::test_writes_to_home", "tests/test_home.py::test_writes_to_tmp"],
        docker="RUN cd /workspace/home && " + PIP + " -e . && rm -rf build\n",
        note="tests that write to HOME and /tmp"),
    shape(
        "cext",
        flat({"greeter/_fast.c": r'''#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The length of a str, in code points. */
static PyObject *length(PyObject *self, PyObject *args) {
    PyObject *s;
    if (!PyArg_ParseTuple(args, "U", &s)) return NULL;
    return PyLong_FromSsize_t(PyUnicode_GetLength(s));
}

static PyMethodDef methods[] = {{"length", length, METH_VARARGS, "Length of a str."}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fast", NULL, -1, methods};
PyMODINIT_FUNC PyInit__fast(void) { return PyModule_Create(&module); }
''', "greeter/_abi.py": '''"""The platform's word size, for the extension's buffers."""
import ctypes

WORD_BITS = ctypes.sizeof(ctypes.c_void_p) * 8
''', "setup.py": '''from setuptools import Extension, setup

setup(ext_modules=[Extension("greeter._fast", ["greeter/_fast.c"])])
''', ".gitignore": "*.so\nbuild/\n*.egg-info/\n"}),
        {"greeter/core.py": CORE_FIXED},
        {"tests/test_ext.py": '''from greeter import _fast


def test_extension_built_in_place():
    assert _fast.length("Ada") == 3
'''},
        [F2P], [P2P, "tests/test_ext.py::test_extension_built_in_place"],
        docker="RUN cd /workspace/cext && python3 setup.py -q build_ext --inplace && rm -rf build\n",
        note="a C extension built in place"),
    shape(
        "helper",
        flat({"greeter/test_tools.py": TEST_TOOLS}),
        {"greeter/core.py": CORE_FIXED},
        {"tests/test_helper.py": TEST_HELPER},
        ["tests/test_helper.py::TestGreeting::test_greeting_through_the_helper"], [P2P],
        docker="RUN cd /workspace/helper && " + PIP + " -e . && rm -rf build\n",
        note="a FAIL_TO_PASS test that compares only through the project's own assertion helper"),
    shape(
        "pytestdep",
        {"src/greeter/__init__.py": INIT, "src/greeter/core.py": CORE_BASE,
         "src/iniconfig/__init__.py": ('"""The iniconfig of this project: a package pytest imports too."""\n\n'
                                       'OWNER = "pytestdep"\n'),
         "pyproject.toml": PYPROJECT + '\n[tool.setuptools.packages.find]\nwhere = ["src"]\n',
         ".gitignore": "*.egg-info/\nbuild/\n"},
        {"src/greeter/core.py": CORE_FIXED},
        {"tests/test_own_iniconfig.py": '''import iniconfig


def test_the_projects_own_iniconfig_is_imported():
    assert iniconfig.OWNER == "pytestdep"
'''},
        [F2P], [P2P, "tests/test_own_iniconfig.py::test_the_projects_own_iniconfig_is_imported"],
        docker="RUN cd /workspace/pytestdep && " + PIP + " -e . && rm -rf build\n",
        note="a project shipping a package pytest imports (iniconfig), installed editable"),
    shape(
        "py37",
        {"greeter/__init__.py": INIT, "greeter/core.py": CORE_BASE,
         "setup.py": 'from setuptools import setup\n\nsetup(name="greeter", version="0.1", packages=["greeter"])\n',
         ".gitignore": "*.egg-info/\nbuild/\n"},
        {"greeter/core.py": CORE_FIXED},
        {"tests/test_py37.py": '''import sys

import pytest

from greeter import greet


@pytest.mark.filterwarnings("error")
def test_greets_a_name_on_two_lines():
    assert greet(" Ada\\nLovelace ") == """Hello, Ada
Lovelace!"""


def test_runs_on_python_3_7():
    assert sys.version_info[:2] == (3, 7)


def test_pytest_is_the_images():
    assert pytest.__file__.startswith("/usr/local/lib/python3.7/site-packages/")
'''},
        [F2P, "tests/test_py37.py::test_greets_a_name_on_two_lines"],
        [P2P, "tests/test_py37.py::test_runs_on_python_3_7", "tests/test_py37.py::test_pytest_is_the_images"],
        docker="RUN cd /workspace/py37 && " + PIP + " -e . && rm -rf build\n",
        head=PY37_HEAD,
        copy="COPY setup.sh history /tmp/fixture/\nCOPY stages/ /tmp/fixture/stages/\n",
        context={"stage-python": PY37_STAGE, "requirements.txt": PY37_REQUIREMENTS},
        note="CPython 3.7 the only Python, pytest 7.4 from wheels"),
]


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(path, mode)


def git(cwd, *args):
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", TZ="UTC", LC_ALL="C")
    return subprocess.run(["git", "-C", cwd] + list(args), check=True, stdout=subprocess.PIPE,
                          env=env).stdout.decode()


def build_repo(context, tmp):
    """The context's repository as setup.sh makes it; returns its path."""
    dest = os.path.join(tmp, "repo")
    subprocess.run(["sh", os.path.join(context, "setup.sh"), context, dest], check=True,
                   stderr=subprocess.DEVNULL)
    return dest


def gold_patch(repo, fixed):
    """`git diff` of the fix against the base, as the record's `patch`."""
    for rel, text in fixed.items():
        write(os.path.join(repo, rel), text)
    out = git(repo, "diff", "--no-color", "--no-ext-diff")
    git(repo, "checkout", "-q", "--", ".")
    return out


def issue_context(s):
    name = "shape-" + s["name"]
    context = os.path.join(IMAGES, name)
    shutil.rmtree(context, ignore_errors=True)
    base = os.path.join(context, "stages", "01-base")
    tracked = dict(s["files"])
    tracked.update(s["tests"])
    tracked["tests/test_greet.py"] = TEST_GREET
    tracked["README.md"] = "# greeter (%s shape)\n\n%s.\n" % (s["name"], s["note"])
    for rel, text in tracked.items():
        write(os.path.join(base, rel), text)
    shutil.copy(SETUP_SH, os.path.join(context, "setup.sh"))
    write(os.path.join(context, "history"), "# %s shape: one commit, the base.\n%s" % (s["name"], HISTORY))
    for rel, text in s["context"].items():
        write(os.path.join(context, rel), text)
    workdir = "/workspace/" + s["name"]
    write(os.path.join(context, "Dockerfile"), (
        "# Image shape fixture: %s (scripts/make-shape-fixtures.py).\n"
        "FROM beyondswe/base:2\nLABEL beyondswe.fixture=1\n%s%s"
        "RUN sh /tmp/fixture/setup.sh /tmp/fixture %s && rm -rf /tmp/fixture\n%sWORKDIR %s\n"
    ) % (s["note"], s["head"], s["copy"], workdir, s["docker"], workdir))
    return context, workdir


def main():
    records = []
    for s in SHAPES:
        context, workdir = issue_context(s)
        with tempfile.TemporaryDirectory() as tmp:
            repo = build_repo(context, tmp)
            base = git(repo, "rev-parse", "HEAD").strip()
            patch = gold_patch(repo, s["fixed"])
        records.append({
            "instance_id": "shapes_%s_pr1" % s["name"], "task": "CrossRepo", "repo": "shapes/" + s["name"],
            "base_commit": base, "workdir": workdir, "image": "beyondswe-fixture/shape-%s:1" % s["name"],
            "language": "python", "problem_statement": PROBLEM, "patch": patch,
            "FAIL_TO_PASS": json.dumps(s["f2p"]), "PASS_TO_PASS": json.dumps(s["p2p"]),
            "f2p_patch": "", "f2p_script": "", "pre_commands": s["pre_commands"] or "",
        })
    records.append(doc2repo_venv())
    with open(DATASET, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print("wrote %d records to %s" % (len(records), os.path.relpath(DATASET, ROOT)))


def doc2repo_venv():
    """The minidoc record on a venv image: the same repository, suite and reference solution."""
    context = os.path.join(IMAGES, "shape-d2r-venv")
    shutil.rmtree(context, ignore_errors=True)
    src = os.path.join(IMAGES, "minidoc")
    os.makedirs(context)
    for rel in ("setup.sh", "history"):
        shutil.copy(os.path.join(src, rel), os.path.join(context, rel))
    shutil.copytree(os.path.join(src, "stages"), os.path.join(context, "stages"))
    write(os.path.join(context, "Dockerfile"), (
        "# Image shape fixture: the minidoc Doc2Repo repository on a venv image whose interpreter\n"
        "# alone has pytest (scripts/make-shape-fixtures.py).\n"
        "FROM beyondswe/base:2\nLABEL beyondswe.fixture=1\nCOPY . /tmp/fixture/\n"
        "RUN sh /tmp/fixture/setup.sh /tmp/fixture /workspace/minidoc && rm -rf /tmp/fixture\n%s"
        "WORKDIR /workspace/minidoc\n") % VENV)
    with open(os.path.join(ROOT, "fixtures", "dataset", "fixtures.jsonl"), encoding="utf-8") as fh:
        minidoc = [json.loads(l) for l in fh if '"Doc2Repo"' in l][0]
    minidoc["instance_id"] = minidoc["instance_id"].replace("minidoc_", "minidocvenv_")
    minidoc["image"] = "beyondswe-fixture/shape-d2r-venv:1"
    return minidoc


if __name__ == "__main__":
    main()
