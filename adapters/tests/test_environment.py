"""Unit tests of the tests' environment (adapters/environment.py): the interpreter the image's
PATH picks (a venv first on PATH wins, Python 2 and relative PATH entries are passed over), the
image's PYTHONPATH made absolute from the workdir, the fallback that drops what loads code
without a prepare record, and the environment every process of the submission runs in."""
import os
import stat
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import environment  # noqa: E402


def script(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


class Environment(unittest.TestCase):
    def test_the_first_python_3_on_path_is_picked(self):
        root = tempfile.mkdtemp(prefix="bsw-env-")
        old, venv = os.path.join(root, "old", "bin"), os.path.join(root, "venv", "bin")
        script(os.path.join(old, "python"), "#!/bin/sh\necho 2.7\n")
        os.symlink(sys.executable, os.path.join(os.makedirs(venv) or venv, "python3"))
        path, version = environment.pick_python({"PATH": os.pathsep.join(["rel/bin", old, venv])})
        self.assertEqual(path, os.path.join(venv, "python3"))
        self.assertEqual(version, "%d.%d" % sys.version_info[:2])
        self.assertEqual(environment.pick_python({"PATH": os.pathsep.join(["rel/bin", old])}), (None, None))

    def test_the_images_pythonpath_is_absolute_ordered_and_once(self):
        got = environment.image_pythonpath({"PYTHONPATH": "src::/opt/lib:src:lib/../lib"}, "/workspace/p")
        self.assertEqual(got, ["/workspace/p/src", "/opt/lib", "/workspace/p/lib"])
        self.assertEqual(environment.image_pythonpath({}, "/w"), [])

    def test_without_a_record_what_loads_code_is_dropped(self):
        saved = dict(os.environ)
        try:
            os.environ.update({"PYTHONSTARTUP": "/x.py", "PYTEST_ADDOPTS": "-p evil", "LD_PRELOAD": "/e.so",
                               "PYTHONPATH": "/opt/lib", "LANG": "C.UTF-8", "BEYONDSWE_X": "1"})
            env = environment.fallback_env()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        for gone in ("PYTHONSTARTUP", "PYTEST_ADDOPTS", "LD_PRELOAD", "BEYONDSWE_X"):
            self.assertNotIn(gone, env)
        self.assertEqual((env["PYTHONPATH"], env["LANG"]), ("/opt/lib", "C.UTF-8"))

    def test_the_submissions_processes_get_the_images_environment_and_their_own_home(self):
        class Ctx(object):
            image_env = {"PATH": "/opt/venv/bin:/usr/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "0", "HOME": "/root"}
        env = environment.child_env(Ctx(), "/tmp/home", {"EXTRA": "1"})
        self.assertEqual(env["HOME"], "/tmp/home")
        self.assertEqual(env["PATH"], "/opt/venv/bin:/usr/bin")
        self.assertEqual(env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"], "1")
        self.assertEqual(env["PYTHONDONTWRITEBYTECODE"], "1")
        self.assertEqual(env["EXTRA"], "1")


if __name__ == "__main__":
    unittest.main()
