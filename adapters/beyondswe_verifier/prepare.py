# beyondswe verifier: the `prepare` command, once per instance image before any submission:
# what belongs to the image (untracked files and their hashes, the pytest plugins installed, the
# interpreter's clean sys.path, the places anyone can write, the static evidence's baseline, the
# git config), the interpreter that runs the verifier, and, in the offline grader's prepared
# image, the workdir handed to the test user with the base's test files locked.
#
# adapters/beyondswe_verifier/prepare.py (see verify.py, which calls
# prepare() for its `prepare` command). Unit tests: adapters/tests/test_prepare.py.
import hashlib
import json
import os
import sys

from . import common
from . import files
from . import gitobjects
from . import processes
from . import disk
from . import environment
from . import restore
from . import static_step

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Dict, List  # noqa: F401

# In the state directory: "SHA256 PATH" of the interpreter that runs the verifier.
VERIFIER_PYTHON = "verifier-python"


def prepare(ctx, args, compile_paths):  # type: (Any, Any, List[str]) -> int
    """What belongs to the image, recorded once before any submission: untracked files (with
    hashes), the pytest plugins installed, the interpreter's clean sys.path, the git config.
    `ctx`: the entry point's Ctx on the workdir and base; `compile_paths`: the verifier's own
    files, compiled here once so that each grading imports them."""
    # The image's environment as its configuration and the setup commands left it (the caller
    # sourced the setup chain's exports), and the interpreter its PATH picks: what every test
    # run gets back, whatever the agent's shell or the workdir say later.
    env = environment.image_env_now()
    python = environment.python_record(env)
    out = {"baseline_untracked": {}, "env": env, "python": python,
           "clean": environment.clean_interpreter_facts(python["path"] if python else sys.executable)}  # type: Dict[str, Any]
    out["plugins"] = out["clean"]["plugins"]
    out["clean_sys_path"] = out["clean"]["sys_path"]
    out["writable_roots"] = disk.writable_roots()
    out["static_baseline"] = {}
    if ctx.git.available():
        listing = gitobjects.base_listing(ctx)
        out["static_baseline"] = static_step.static_baseline(ctx)
        for rel, kind in files.walk_tree(args.workdir).items():
            if kind != "dir" and rel not in listing:
                out["baseline_untracked"][rel] = files.file_sha256(os.path.join(args.workdir, rel))
        with open(os.path.join(ctx.git.git_dir, "config"), "rb") as fh:
            out["git_config_sha256_before"] = hashlib.sha256(fh.read()).hexdigest()
        ctx.git.sanitize_config()
        with open(os.path.join(ctx.git.git_dir, "config"), "rb") as fh:
            out["git_config_sha256"] = hashlib.sha256(fh.read()).hexdigest()
    if args.own_workdir == "yes":
        # The offline grader's prepared image only (never an image an agent works in, where a
        # workdir root does not own would stop its git): the workdir is handed to the user
        # every grading of this image runs the tests as, once here rather than at each grading.
        # The base's covered files as the base has them (the restore step then reads only those
        # something of the grading rewrote), and its test files and configuration locked as each
        # grading locks them, here once rather than as a copy of every test file per grading.
        out["test_uid"] = processes.fresh_test_uid()
        clean = restore.prepared_clean_paths(ctx)
        out["restore_clean"] = clean
        files.hand_over(args.workdir, out["test_uid"], out["test_uid"], restore.lockable(clean))
    if not os.path.isdir(args.state_dir):
        os.makedirs(args.state_dir, 0o700)
    os.chmod(args.state_dir, 0o700)
    common.write_json(os.path.join(args.state_dir, "prepare.json"), out)
    # The interpreter that runs the verifier under Harbor, by absolute path with its hash:
    # tests/test.sh and the collect hook run this one and never look one up through PATH.
    me = os.path.realpath(sys.executable)
    with open(os.path.join(args.state_dir, VERIFIER_PYTHON + ".tmp"), "w", encoding="utf-8") as fh:
        fh.write("%s %s\n" % (files.file_sha256(me), me))
    os.replace(os.path.join(args.state_dir, VERIFIER_PYTHON + ".tmp"), os.path.join(args.state_dir, VERIFIER_PYTHON))
    # Compiled once here, so that each grading imports the verifier instead of compiling it.
    import py_compile
    for path in compile_paths:
        try:
            py_compile.compile(path, doraise=True)
        except (py_compile.PyCompileError, OSError) as exc:
            common.log("could not compile the verifier ahead: %r" % exc)
    sys.stdout.write(json.dumps({"baseline_untracked": len(out["baseline_untracked"]),
                                 "plugins": [p["module"] for p in out["plugins"]], "python": python,
                                 "pythonpath": environment.image_pythonpath(env, args.workdir)}) + "\n")
    return 0
