# beyondswe verifier: the Doc2Repo family: the submission installs itself as the unprivileged
# user; only then is the hidden suite unpacked, read-only; only the ids of its manifest
# (beyondswe_manifest.py, read from the archive before the install) count.
#
# adapters/beyondswe_verifier/doc2repo.py (see verify.py). Called by
# the entry point's grade for a Doc2Repo instance.
import os
import random
import shutil
import tempfile
import time

from . import common
from . import spec as spec_keys
from . import files
from . import gitobjects
from . import processes
from . import environment
from . import submission
from . import scrub
from . import static_step
from . import canary_steps
from . import testrun

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Dict, List, Tuple  # noqa: F401


def manifest_module():  # type: () -> Any
    from . import manifest
    return manifest


def grade_doc2repo(ctx):  # type: (Any) -> None
    spec = ctx.spec
    suite_zip = spec.get("suite_zip")
    if not suite_zip or not os.path.isfile(suite_zip):
        raise common.VerifyError("test_suite_missing", "no test suite for this Doc2Repo instance")
    # What the suite can produce, read from the archive before anything of the submission runs.
    try:
        ctx.manifest = manifest_module().manifest_of_zip(suite_zip)
    except Exception as exc:  # noqa: BLE001 - an unreadable zip is refused when it is unpacked
        ctx.manifest = None
        ctx.suspicious("the suite's manifest could not be read: %s" % exc)
    gold_kinds = static_step.gold_static_kinds(ctx)
    if spec.get("patch") and not submission.step_apply(ctx):
        return
    scrub.step_scrub(ctx)
    environment.load_clean_facts(ctx)
    static_step.step_static(ctx, gold_kinds)
    target, home = step_install(ctx)
    # Only now is the hidden suite unpacked, root's until the run.
    suite = tempfile.mkdtemp(prefix="bsw-suite-", dir="/tmp")
    os.chmod(suite, 0o700)
    extract_suite(suite_zip, suite)
    ctx.canary_root = suite
    plan = plan_suite_canaries(ctx, suite)
    ctx.facts["canary_plan"] = plan.facts
    lock_suite(ctx, suite)
    extra = []
    configs = ("pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini")
    if not any(os.path.exists(os.path.join(suite, n)) for n in configs):
        extra = ["-c", os.devnull]
    src = os.path.join(ctx.workdir, "src")
    prepend = [target, ctx.workdir] + ([src] if os.path.isdir(src) else [])
    ctx.repo_paths = ctx.repo_paths + [target, home]
    files.chown_tree(ctx.workdir, ctx.uid, ctx.gid)
    gitobjects.hide_git(ctx)
    timeout = spec_keys.test_timeout(spec)
    began = time.time()
    run = testrun.run_tests(ctx, [suite], suite, suite, extra, [suite], prepend, timeout)
    whole = time.time() - began

    def run_group(group, limit=timeout):  # type: (List[str], float) -> Dict[str, Any]
        return testrun.run_tests(ctx, group, suite, suite, extra, [suite], prepend, limit)
    ctx.facts["canaries"], mapped, alias = canary_steps.judge(ctx, plan, run, canary_steps.solo_runner(run_group),
                                                              anywhere=True)
    from . import suite_split  # with the canary modules, once a suite is graded
    # A run that confirms the split is part of one module: it gets twice the whole suite's time
    # (30 s at least), so a payload that stalls those runs cannot stretch the grading to a test
    # timeout each (suite_split.confirm_alone stops at the first that does not finish).
    split = suite_split.sample_versus_rest(ctx, plan, mapped, run["outcomes"],
                                           lambda ids: run_group(ids, min(timeout, max(30.0, 2 * whole))))
    shutil.rmtree(suite, ignore_errors=True)
    if split is not None:
        ctx.facts["canary_plan"]["sample_versus_rest"] = split
    record_suite(ctx, run, mapped, alias)
    testrun.record_run(ctx, run)


def step_install(ctx):  # type: (Any) -> Tuple[str, str]
    """The submission installs itself as the test user into a directory of its own; then every
    process it left is killed, and what the install wrote is scrubbed like the tree was.
    Returns (the install's target directory, the test user's home for it)."""
    t = time.time()
    files.chown_tree(ctx.workdir, ctx.uid, ctx.gid)
    target = tempfile.mkdtemp(prefix="bsw-site-", dir="/tmp")
    os.chmod(target, 0o755)
    os.chown(target, ctx.uid, ctx.gid)
    home = tempfile.mkdtemp(prefix="bsw-home-", dir="/tmp")
    os.chown(home, ctx.uid, ctx.gid)
    install = processes.run_as_test_user(ctx, [ctx.python, "-I", "-m", "pip", "install", "--no-deps",
                                               "--no-build-isolation", "--no-index", "--disable-pip-version-check",
                                               "-q", "--target", target, "."],
                                         ctx.workdir, environment.child_env(ctx, home),
                                         spec_keys.setup_timeout(ctx.spec))
    ok = install["exit"] == 0 and not install["timed_out"]
    ctx.facts["install"] = {"ok": ok, "exit": install["exit"], "timed_out": install["timed_out"]}
    ctx.facts["logs"]["install"] = common.tail(install["output"])
    if not ok:
        ctx.flags["install_failed"] = True
    for d in (ctx.workdir, target):
        os.chown(d, 0, 0)
    scrub.step_scrub(ctx, loaders=False)
    scrub.step_scrub(ctx, target, "site", loaders=False)
    ctx.timed("install", t)
    return target, home


def extract_suite(zip_path, dest):  # type: (str, str) -> None
    import zipfile  # Doc2Repo only: kept off every issue grading's start-up
    with zipfile.ZipFile(zip_path) as zf:
        names = set()
        for info in zf.infolist():
            name = info.filename
            if name.startswith("/") or ".." in name.split("/") or "\\" in name or name in names:
                raise common.VerifyError("test_suite_unreadable",
                                         "unsafe or repeated path in the test suite: %r" % name)
            names.add(name)
        for info in zf.infolist():
            if info.filename.endswith("/") or info.filename == "realswe_eval_script.py":
                continue
            data = zf.read(info)
            files.safe_write(dest, info.filename, data, "100644")


def plan_suite_canaries(ctx, suite):  # type: (Any, str) -> Any
    """Canary groups among the suite's tests, drawn at random (canary_steps.plan_suite)."""
    modules = [p for p, k in sorted(files.walk_tree(suite).items())
               if k == "file" and files.classify(p) == "test" and p.endswith(".py")
               and (p.rsplit("/", 1)[-1].startswith("test") or p.endswith("_test.py"))]
    return canary_steps.plan_suite(ctx, suite, modules, random.SystemRandom(), plant=ctx.spec.get("canaries", True))


def lock_suite(ctx, suite):  # type: (Any, str) -> None
    """Every file and directory of the suite (its canaries planted) becomes root's and
    read-only to the test user: nothing can be added to it, replaced or removed."""
    tree = files.walk_tree(suite)
    suite_files = [p for p, k in tree.items() if k == "file"]
    ctx.facts["conftests"] = [p for p in suite_files if p.rsplit("/", 1)[-1] in files.RULES["conftest_names"]]
    files.lock_paths(suite, suite_files)
    for rel in [""] + [p for p, k in tree.items() if k == "dir"]:
        full = os.path.join(suite, rel) if rel else suite
        if os.path.isdir(full) and not os.path.islink(full):
            os.chown(full, 0, 0)
            os.chmod(full, 0o755)


def record_suite(ctx, run, mapped, alias):  # type: (Any, Dict[str, Any], Dict[str, str], Dict[str, str]) -> None
    """The suite's facts from the run, each canary group counted once, as its real variant
    under the test's own id (`mapped`, `alias`: canary_steps.judge), and only the ids the
    suite's manifest names: how many passed (a pass JUnit confirms), how many ran, and each
    test's outcome by name. A collected id the manifest does not name, or more ids than the
    suite has, is evidence (it is not counted)."""
    real = mapped
    expected = ctx.spec.get("test_suite_num") or 0
    if ctx.manifest is not None:
        mf = manifest_module()
        kept, extra, over = mf.judge(ctx.manifest, sorted(real), expected)
        if extra:
            ctx.suspicious("collected %d test(s) the hidden suite does not have (not counted): %s"
                           % (len(extra), ", ".join(extra[:5])))
        if over:
            ctx.suspicious("collected %d more test(s) of the suite than it has (%d)" % (over, expected))
        real = dict((k, real[k]) for k in kept)

    def confirmed(k):  # type: (str) -> bool
        return testrun.junit_says_passed(run["junit"], alias.get(k, k))
    passed = sum(1 for k, v in real.items() if v in ("passed", "xpassed") and confirmed(k))
    # Per-test outcomes by name (names only, as in the log): a pass JUnit does not confirm is disputed.
    outcomes = dict((k, v if v not in ("passed", "xpassed") else ("passed" if confirmed(k) else "disputed"))
                    for k, v in real.items())
    ctx.facts["suite"] = {"passed": passed, "collected": len(real), "expected": expected,
                          "collect_errors": len(run["collect_errors"]), "outcomes": outcomes}
