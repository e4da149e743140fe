"""Unit tests of the restore step (adapters/restore.py): pytest configuration sections put back
to the base's while the rest of the file stays the submission's, the entries that would shadow a
test module, and the step itself on a small git repository (when git is on PATH).
Standard library only."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import restore  # noqa: E402
from beyondswe_verifier import verify  # noqa: E402

try:
    import tomllib
except ImportError:  # before Python 3.11
    tomllib = None  # type: ignore[assignment]

# The submission's setup.cfg: its own pytest options and a section of another tool.
SETUP = "[metadata]\nname = calc\n\n[tool:pytest]\naddopts = -p evil\n\n[flake8]\nmax-line-length = 99\n"
# The base's.
BASE = "[metadata]\nname = calc\n\n[tool:pytest]\ntestpaths = tests\n"


def write(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


def read(path):
    with open(path) as fh:
        return fh.read()


class Sections(unittest.TestCase):
    def test_split_sections_names_each_block_and_keeps_every_line(self):
        blocks = restore.split_sections(SETUP)
        self.assertEqual([b[0] for b in blocks], [None, "metadata", "tool:pytest", "flake8"])
        self.assertEqual("".join("".join(lines) for _, lines in blocks), SETUP)

    def test_split_sections_reads_toml_tables_arrays_and_quoted_names(self):
        text = '[project]\nname = "x"\n[[tool.pytest.markers]]\n["tool.pytest.ini_options"]  # c\n'
        names = [b[0] for b in restore.split_sections(text)]
        self.assertEqual(names, [None, "project", "tool.pytest.markers", "tool.pytest.ini_options"])

    def test_which_sections_are_pytest_s(self):
        self.assertTrue(restore.is_pytest_section("tool:pytest", "setup.cfg"))
        self.assertTrue(restore.is_pytest_section("pytest", "setup.cfg"))
        self.assertFalse(restore.is_pytest_section("tool.pytest.ini_options", "setup.cfg"))
        self.assertTrue(restore.is_pytest_section("tool.pytest.ini_options", "pyproject.toml"))
        self.assertTrue(restore.is_pytest_section("tool.pytest", "pyproject.toml"))
        self.assertFalse(restore.is_pytest_section("tool.pytester", "pyproject.toml"))
        self.assertFalse(restore.is_pytest_section(None, "pyproject.toml"))

    def test_revert_keeps_the_rest_and_takes_the_bases_pytest_sections(self):
        self.assertEqual(restore.revert_sections(SETUP, BASE, "setup.cfg"),
                         "[metadata]\nname = calc\n\n[flake8]\nmax-line-length = 99\n"
                         "[tool:pytest]\ntestpaths = tests\n")

    def test_revert_drops_pytest_sections_the_base_did_not_have(self):
        expected = "[metadata]\nname = calc\n\n[flake8]\nmax-line-length = 99\n"
        self.assertEqual(restore.revert_sections(SETUP, "", "setup.cfg"), expected)
        self.assertEqual(restore.revert_sections(SETUP, None, "setup.cfg"), expected)

    def test_revert_ends_the_kept_text_before_the_bases_sections(self):
        self.assertEqual(restore.revert_sections("[metadata]\nname = calc", BASE, "setup.cfg"),
                         "[metadata]\nname = calc\n[tool:pytest]\ntestpaths = tests\n")

    def test_pytest_config_of_setup_cfg(self):
        self.assertEqual(json.loads(restore.pytest_config_of(SETUP, "setup.cfg")),
                         {"tool:pytest": {"addopts": "-p evil"}})
        reverted = restore.revert_sections(SETUP, BASE, "setup.cfg")
        self.assertEqual(restore.pytest_config_of(reverted, "setup.cfg"), restore.pytest_config_of(BASE, "setup.cfg"))
        self.assertIsNone(restore.pytest_config_of("[tool:pytest\naddopts = -x\n", "setup.cfg"))

    @unittest.skipIf(tomllib is None, "no TOML parser before Python 3.11")
    def test_pytest_config_of_pyproject(self):
        text = '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'
        self.assertEqual(json.loads(restore.pytest_config_of(text, "sub/pyproject.toml")),
                         {"ini_options": {"addopts": "-q"}})
        self.assertIsNone(restore.pytest_config_of("[tool.pytest\n", "pyproject.toml"))

    @unittest.skipIf(tomllib is None, "no TOML parser before Python 3.11")
    def test_a_dotted_key_hides_from_the_section_rule_but_not_from_the_parser(self):
        # Why revert_pytest_sections compares parsed settings and then takes the whole base file.
        base = '[project]\nname = "x"\n'
        dotted = base + '[tool]\npytest.ini_options.addopts = "-p evil"\n'
        reverted = restore.revert_sections(dotted, base, "pyproject.toml")
        self.assertEqual(reverted, dotted)
        self.assertNotEqual(restore.pytest_config_of(reverted, "pyproject.toml"),
                            restore.pytest_config_of(base, "pyproject.toml"))


class ShadowSiblings(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.root)

    def test_what_python_would_import_instead_of_a_test_module(self):
        for name in ("test_a.py", "test_a.pyc", "test_a.cpython-311.so", "test_ab.py", "test_a.txt"):
            write(os.path.join(self.root, "tests", name), "")
        os.mkdir(os.path.join(self.root, "tests", "test_a"))
        self.assertEqual(sorted(restore.shadow_siblings(self.root, "tests/test_a.py")),
                         ["tests/test_a", "tests/test_a.cpython-311.so", "tests/test_a.pyc"])
        write(os.path.join(self.root, "t.py"), "")
        os.mkdir(os.path.join(self.root, "t"))
        self.assertEqual(restore.shadow_siblings(self.root, "t.py"), ["t"])


@unittest.skipIf(shutil.which("git") is None, "no git")
class StepRestore(unittest.TestCase):
    """The step on a repository whose tests and configuration the submission changed."""

    def setUp(self):
        self.repo = tempfile.mkdtemp()
        write(os.path.join(self.repo, "tests", "test_a.py"), "def test_a():\n    assert 1 + 1 == 2\n")
        write(os.path.join(self.repo, "setup.cfg"), BASE)
        write(os.path.join(self.repo, "src", "calc.py"), "def add(a, b):\n    return a - b\n")
        self.git("init", "-q")
        self.git("add", "-A")
        self.git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base")
        self.base = self.git("rev-parse", "HEAD").strip()
        # The submission: a weakened test, its own pytest options, new tests and a conftest,
        # and the fix.
        write(os.path.join(self.repo, "tests", "test_a.py"), "def test_a():\n    pass\n")
        write(os.path.join(self.repo, "setup.cfg"), SETUP)
        write(os.path.join(self.repo, "tests", "test_new.py"), "def test_new():\n    pass\n")
        write(os.path.join(self.repo, "conftest.py"), "")
        write(os.path.join(self.repo, "src", "calc.py"), "def add(a, b):\n    return a + b\n")

    def tearDown(self):
        shutil.rmtree(self.repo)

    def git(self, *args):
        return subprocess.run(["git"] + list(args), cwd=self.repo, check=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE).stdout.decode()

    def ctx(self, **spec):
        spec.update({"workdir": self.repo, "base_commit": self.base})
        return verify.Ctx(spec)

    def test_tests_and_pytest_configuration_go_back_to_the_base(self):
        ctx = self.ctx()
        restore.step_restore(ctx)
        self.assertEqual(read(os.path.join(self.repo, "tests", "test_a.py")), "def test_a():\n    assert 1 + 1 == 2\n")
        self.assertEqual(read(os.path.join(self.repo, "setup.cfg")), restore.revert_sections(SETUP, BASE, "setup.cfg"))
        self.assertFalse(os.path.lexists(os.path.join(self.repo, "tests", "test_new.py")))
        self.assertFalse(os.path.lexists(os.path.join(self.repo, "conftest.py")))
        self.assertEqual(read(os.path.join(self.repo, "src", "calc.py")), "def add(a, b):\n    return a + b\n")
        self.assertEqual(ctx.flags["tests_restored"], ["tests/test_a.py"])
        self.assertEqual(ctx.flags["config_reverted"], ["setup.cfg"])
        self.assertEqual(sorted(ctx.flags["files_removed"]), ["conftest.py", "tests/test_new.py"])
        self.assertEqual(sorted(ctx.facts["locked"]), ["setup.cfg", "tests/test_a.py"])

    def test_paths_the_gold_patch_changes_are_kept(self):
        ctx = self.ctx(keep_paths=["tests/test_a.py", "tests/test_new.py"])
        restore.step_restore(ctx)
        self.assertEqual(read(os.path.join(self.repo, "tests", "test_a.py")), "def test_a():\n    pass\n")
        self.assertTrue(os.path.exists(os.path.join(self.repo, "tests", "test_new.py")))
        self.assertEqual(sorted(ctx.flags["kept_for_gold"]), ["tests/test_a.py", "tests/test_new.py"])
        self.assertEqual(ctx.flags["tests_restored"], [])


class PreparedClean(unittest.TestCase):
    """The restore reads only the covered files that something of the grading rewrote: the
    prepare step records which files the image has as the base has them, and a file is taken as
    still so only if its inode is unchanged since before the apply and changed last well before
    the container started."""

    def setUp(self):
        self.repo = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.repo)
        write(os.path.join(self.repo, "tests", "test_a.py"), "def test_a():\n    assert 1 + 1 == 2\n")
        write(os.path.join(self.repo, "tests", "test_b.py"), "def test_b():\n    assert 2\n")
        write(os.path.join(self.repo, "src", "calc.py"), "x = 1\n")
        def run(*a):
            return subprocess.run(["git"] + list(a), cwd=self.repo, check=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE).stdout.decode()
        run("init", "-q")
        run("add", "-A")
        run("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base")
        self.base = run("rev-parse", "HEAD").strip()
        write(os.path.join(self.repo, "tests", "test_b.py"), "def test_b():\n    pass\n")
        ctx = verify.Ctx({"workdir": self.repo, "base_commit": self.base})
        # At prepare: test_b.py differs from the base, so only test_a.py is recorded.
        self.clean = restore.prepared_clean_paths(ctx)
        write(os.path.join(self.repo, "tests", "test_b.py"), "def test_b():\n    assert 2\n")

    def ctx(self, started, shared=False):
        ctx = verify.Ctx({"workdir": self.repo, "base_commit": self.base, "shared_container": shared})
        ctx.state = {"restore_clean": self.clean}
        real = restore.common.process_started_at
        restore.common.process_started_at = lambda pid="self": started
        try:
            restore.note_prepared_clean(ctx)
        finally:
            restore.common.process_started_at = real
        return ctx

    def test_prepare_records_only_covered_files_as_the_base_has_them(self):
        self.assertEqual(self.clean, ["tests/test_a.py"])

    def test_an_unchanged_file_is_not_read_and_a_rewritten_one_is_restored(self):
        import time
        ctx = self.ctx(time.time() + 60)
        self.assertEqual(sorted(ctx.prepared_clean), ["tests/test_a.py"])
        reads = []
        real = restore.gitobjects.blob_sha
        restore.gitobjects.blob_sha = lambda path, n: reads.append(os.path.relpath(path, self.repo)) or real(path, n)
        self.addCleanup(setattr, restore.gitobjects, "blob_sha", real)
        restore.step_restore(ctx)
        self.assertEqual(reads, ["tests/test_b.py"])
        self.assertEqual(sorted(ctx.facts["locked"]), ["tests/test_a.py", "tests/test_b.py"])
        # The apply rewrites test_a.py after the note: it is read and put back.
        ctx = self.ctx(time.time() + 60)
        time.sleep(0.01)
        write(os.path.join(self.repo, "tests", "test_a.py"), "def test_a():\n    pass\n")
        del reads[:]
        restore.step_restore(ctx)
        self.assertIn("tests/test_a.py", reads)
        self.assertEqual(read(os.path.join(self.repo, "tests", "test_a.py")), "def test_a():\n    assert 1 + 1 == 2\n")
        self.assertEqual(ctx.flags["tests_restored"], ["tests/test_a.py"])

    def test_files_written_near_the_containers_start_or_a_shared_container_are_read(self):
        import time
        self.assertEqual(self.ctx(time.time()).prepared_clean, {})
        self.assertEqual(self.ctx(time.time() + 60, shared=True).prepared_clean, {})
        self.assertEqual(self.ctx(None).prepared_clean, {})


if __name__ == "__main__":
    unittest.main()
