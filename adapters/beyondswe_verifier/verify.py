# beyondswe verifier: every grading step that runs inside a task container, for both callers.
# This module holds the commands, the context the steps share (Ctx) and grade(), which runs the
# steps in order; the steps and the machinery they share are the package's other modules.
#
# The verifier is the package beyondswe_verifier (adapters/beyondswe_verifier/), installed as one
# directory in an image or a Harbor task, beside its entry point beyondswe_verify.py
# (adapters/beyondswe_verify.py, which runs main() below) and beyondswe_restore_rules.json
# (adapters/restore_rules.json). Its modules import each other with relative imports:
#   common.py          what every module shares: where it is installed, the log, the step error
#   spec.py            the spec: the keys it may carry with their types, the defaults, and
#                      the spec of a Harbor task from its test_config.json
#   files.py           the restore rules' classify(); files read and written without following
#                      links; ownership handed to the test user or locked against it
#   gitobjects.py      git with a clean environment; hash-checked objects; the base's listing
#   processes.py       the test user; every process of a uid killed at once; the disk limit;
#                      commands run with every privilege dropped
#   disk.py            the disk limit's measure: where the test user can write, what it wrote
#   environment.py     the image's environment and interpreter; the clean interpreter's plugins
#   submission.py      capture (Harbor), apply, the paths the submission added or changed
#   scrub.py           the scrub step
#   restore.py         the restore step: rules, pytest configuration sections, the f2p patch
#   static_step.py     the static step (static_evidence.py reads the source)
#   canary_steps.py    canaries planted, placed among the ids, judged (canaries.py plans them
#                      and judges them, canary_reading.py finds their templates and sites,
#                      canary_writing.py writes their values and names, helper_sites.py finds
#                      the expected arguments of a project's own assertion helpers)
#   testrun.py         the test run, its result channel, JUnit, the outcomes per id
#   issue.py           the issue families: the steps from apply to the outcomes per id
#   doc2repo.py        the Doc2Repo family: install, hidden suite, manifest (manifest.py),
#                      the split between its grouped tests and the rest (suite_split.py)
#   prepare.py         the `prepare` command: what belongs to the image, recorded once
#   decide.py          the verdict from the facts
#   pytest_runner.py   the unprivileged runner, started for each run (never imported), with
#   runner_snapshot.py its second file: the snapshot and checks of pytest and of the runner
# static_evidence.py, manifest.py, the canary modules and helper_sites.py are
# imported when first needed; every other module is imported with this one, before any step
# runs. Python unit tests of the modules: adapters/tests/. On the host, src/grade/pipeline.rs runs `grade`,
# src/grade/result.rs reads its result, src/restore_rules.rs reads the same rules, and
# tests/it/verifier.rs checks `classify` against it, `decide` over a table of cases, and runs the
# unit tests.
#
#   python3 -I -S beyondswe_verify.py grade --spec SPEC.json
#       the offline grader: SPEC names the submission's patch (or a tree already uploaded), the
#       instance's ids and files, and where to write the one JSON result it reads back.
#   python3 -I -S beyondswe_verify.py harbor --tests-dir /tests --logs-dir /logs/verifier
#       Harbor's tests/test.sh (adapters/test.sh): the same steps on the agent's workspace;
#       writes reward.txt and report.json (the same JSON result).
#   python3 -I beyondswe_verify.py prepare --workdir W --base C --state-dir D
#       once per instance image, before any submission: what belongs to the image (untracked files
#       and their hashes, the pytest plugins installed, the interpreter's clean sys.path).
#
# Steps of `grade` (each records facts; `decide` turns the facts into the verdict, once):
#   lock      stop every leftover process, make the grader's directories root-only
#   apply     the submission's patch with `git apply` only (strict, then whitespace-tolerant)
#   scrub     remove what loads code behind the sources' back: start-up hooks in any form,
#             metadata with entry points, bytecode and extension modules the base did not have,
#             top-level modules shadowing pytest, pluggy or the standard library
#   restore   test files, conftest files and pytest configuration back to the base commit, read
#             from git objects whose hashes are checked (replace refs and planted objects fail)
#   static    the submission's added and changed source read as root before any of it runs
#             (beyondswe_static_evidence.py): ways into the test machinery or the interpreter
#             that neither the base nor the gold patch uses are evidence for review; only under
#             the spec's `strict` do they make the verdict forgery_suspected
#   install   Doc2Repo: the submission installs itself as the unprivileged user; only then is the
#             hidden suite unpacked, read-only; only the ids of its manifest (beyondswe_manifest.py,
#             read from the archive before the install) count
#   canaries  each test that matters replaced by a group: itself and k mutants of one expected
#             literal, all renamed alike and shuffled (beyondswe_canary_steps.py); which one is
#             real stays in this process's memory; two passing variants of a group are proof
#   run       pytest as an unprivileged user through beyondswe_pytest_runner.py; outcomes arrive
#             over a pipe only this process reads; every process of that user is killed after
#   decide    the verdict from the facts
#
# Every git command runs with a clean environment, hooks and fsmonitor off, and the repository's
# own configuration replaced by a minimal one (gitobjects.py). Python 3.6+, standard library only.
import json
import os
import subprocess
import sys
import time
import traceback

LOADED_AT = time.time()

from . import common
from . import spec as spec_keys
from . import files
from . import gitobjects
from . import processes
from . import disk
from . import environment
from . import submission
from . import scrub
from . import restore
from . import static_step
from . import canary_steps
from . import testrun
from . import doc2repo
from . import issue
from . import prepare
# Imported with the rest, before any step runs: nothing of the verifier is imported after the
# submission's code has had the container.
from . import decide as decide_module

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Dict, List, Optional, Tuple  # noqa: F401

# Every module of the verifier this file imports, compiled ahead by `prepare`.
MODULES = (common, spec_keys, files, gitobjects, processes, disk, environment, submission, scrub, restore,
           static_step, canary_steps, testrun, doc2repo, issue, prepare, decide_module)


RESULT_FORMAT = "beyondswe-verify-result-1"


# Harbor: the submission as the verifier found it, in the verifier's log directory.
SUBMISSION_DIFF = "submission.diff"

# Harbor, separate verifier: where the collect hook leaves the agent's work (the convention
# directory Harbor carries from the agent's container into the verifier's).
COLLECTED_DIFF = "/logs/artifacts/submission.diff"

STATE_DIR = "/var/lib/beyondswe"


class Ctx(object):
    """What the steps share: the spec, the facts gathered so far, the test user."""

    def __init__(self, spec):
        self.spec = spec
        self.workdir = spec.get("workdir") or "/workspace"
        self.family = spec.get("family") or ""
        self.doc2repo = self.family.lower() == "doc2repo"
        self.facts = {"flags": {"tests_restored": [], "files_removed": [], "config_reverted": [],
                                "kept_for_gold": [], "suspicious": [], "forgery": [], "unwatched": []},
                      "logs": {}, "timings": {}}
        self.uid = self.gid = None
        self.git = gitobjects.Git(self.workdir)
        self.base_listing = None
        self.algo_len = 40
        self.state = {}
        self.private = [p for p in spec.get("private_paths", []) if p]
        # The image's environment and interpreter (settle_environment, after the prepare
        # record is read).
        self.image_env = {}
        self.image_paths = []
        self.python = sys.executable
        # Its "X.Y", as the prepare step (or the probe of the image's PATH) found it.
        self.python_version = "%d.%d" % sys.version_info[:2]  # type: Optional[str]
        # Doc2Repo: the hidden suite's manifest (beyondswe_manifest.py), read before the install.
        self.manifest = None
        # What `git apply` said the submission's patch touches (step_apply).
        self.applied_paths = []
        # The restore step's covered files the prepared image has as the base has them, with
        # their signatures before the apply (restore.note_prepared_clean).
        self.prepared_clean = {}
        # Someone had the container before the verifier (Harbor's agent, as root): nothing it
        # could have rewritten (the prepare record, the interpreter) is taken on trust.
        self.shared_container = bool(spec.get("shared_container"))
        # () -> the classes of the submission's tree, read once when first asked
        # (canary_steps.own_classes).
        self.own_classes = None

    @property
    def flags(self):  # type: () -> Dict[str, Any]
        return self.facts["flags"]

    def timed(self, name, since):  # type: (str, float) -> None
        self.facts["timings"][name] = round(self.facts["timings"].get(name, 0) + time.time() - since, 3)

    def suspicious(self, msg):  # type: (str) -> None
        if msg not in self.flags["suspicious"]:
            self.flags["suspicious"].append(msg)

    def unwatched(self, msg):  # type: (str) -> None
        """What this grading could not watch on this image: a limit of the grading, never a
        sign of the submission (not counted for review, not turned into a verdict by strict)."""
        if msg not in self.flags["unwatched"]:
            self.flags["unwatched"].append(msg)

    def forgery(self, msg):  # type: (str) -> None
        if msg not in self.flags["forgery"]:
            self.flags["forgery"].append(msg)


def grade(spec):  # type: (Any) -> Dict[str, Any]
    """Runs every step; always returns a result (errors included)."""
    try:
        spec_keys.check(spec)
    except common.VerifyError as exc:
        return {"format": RESULT_FORMAT, "instance_id": None, "family": "", "verdict": "error",
                "reason": exc.reason, "score": 0.0, "logs": {"error": exc.message}}
    ctx = Ctx(spec)
    t = time.time()
    ctx.repo_paths = [ctx.workdir]  # type: ignore[attr-defined]
    ctx.facts["timings"]["interpreter"] = round(max(0.0, LOADED_AT - (common.process_started_at() or LOADED_AT)), 3)
    try:
        t_lock = time.time()
        step_lock(ctx)
        environment.settle_environment(ctx)
        ctx.timed("lock", t_lock)
        ctx.state.setdefault("clean_sys_path", (ctx.state.get("clean") or {}).get("sys_path", []))
        capture = spec.get("capture")
        if capture:
            # What the agent left, before any step changes it; never part of the verdict.
            try:
                ctx.facts["capture"] = {"ok": True, "bytes": submission.capture_submission(ctx, capture)}
            except (common.VerifyError, OSError, subprocess.SubprocessError) as exc:
                if files.lexists(capture):
                    os.remove(capture)
                ctx.facts["capture"] = {"ok": False, "error": str(getattr(exc, "message", exc))[:500]}
        if ctx.doc2repo:
            doc2repo.grade_doc2repo(ctx)
        else:
            issue.grade_issue(ctx)
    except common.VerifyError as exc:
        if exc.infrastructure:
            ctx.facts["error"] = {"reason": exc.reason, "message": exc.message}
        else:
            ctx.suspicious(exc.message)
    except Exception as exc:  # noqa: BLE001 - a crash is the grader's failure, never a score
        ctx.facts["error"] = {"reason": "verifier_crashed", "message": traceback.format_exc()[-4000:]}
        common.log("crashed: %r" % exc)
    finally:
        try:
            if ctx.uid is not None:
                processes.kill_all(ctx.uid)
        except Exception:  # noqa: BLE001
            pass
    ctx.facts["family"] = ctx.family
    ctx.facts["strict"] = bool(spec.get("strict"))
    ctx.timed("verify", t)
    verdict, reason, score = decide(ctx.facts)
    if reason == "forgery_suspected":
        # What a reviewer who accepts the evidence would get (`--accept-suspected`).
        ctx.facts.setdefault("static", {})["if_accepted"] = list(decide(dict(ctx.facts, strict=False)))
    result = {"format": RESULT_FORMAT, "instance_id": spec.get("instance_id"), "family": ctx.family,
              "verdict": verdict, "reason": reason, "score": score}
    if verdict == "resolved":
        ctx.facts.pop("cause", None)
    result.update(ctx.facts)
    if "apply" in result:
        result["logs"]["apply"] = result["apply"].get("log", "")
    if ctx.facts.get("error"):
        result["logs"]["error"] = ctx.facts["error"]["message"]
    elif ctx.facts.get("disk_limit"):
        d = ctx.facts["disk_limit"]
        result["logs"]["error"] = ("the submission's processes wrote %d MiB, over the disk limit of %d MiB "
                                   "(--disk-mb), and were stopped" % (d["written_bytes"] >> 20, d["limit_bytes"] >> 20))
    return result


def step_lock(ctx):  # type: (Ctx) -> None
    """Leftover processes are killed (Harbor: the agent's daemons), the grader's files made
    root-only, the test user made, the prepare step's facts read."""
    killed = processes.kill_leftovers()
    if killed:
        ctx.facts["leftover_processes_killed"] = killed
    for p in ctx.private:
        if os.path.isdir(p) and not os.path.islink(p):
            os.chown(p, 0, 0)
            os.chmod(p, 0o700)
    state_dir = ctx.spec.get("state_dir")
    if state_dir:
        path = os.path.join(state_dir, "prepare.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as fh:
                ctx.state = json.load(fh)
        setup = os.path.join(state_dir, "setup.json")
        if os.path.isfile(setup):
            with open(setup, encoding="utf-8") as fh:
                ctx.facts["setup"] = json.load(fh)
    ctx.facts["prepared"] = bool(ctx.state)
    ctx.uid, ctx.gid = processes.ensure_test_user(ctx.state.get("test_uid"))
    if ctx.git.available():
        before = ctx.git.sanitize_config()
        expected = ctx.state.get("git_config_sha256")
        if expected and before != expected:
            ctx.suspicious(".git/config was changed after the prepare step (replaced by a minimal one)")


def decide(facts):  # type: (Dict[str, Any]) -> Tuple[str, str, float]
    """The verdict from the facts (beyondswe_decide.decide): (verdict, reason, score)."""
    return decide_module.decide(facts)


def cmd_grade(args):  # type: (Any) -> int
    """`"result": "-"` (the default) sends the result to this process's stdout, which only the grader reads:
    fd 1 is moved to a private descriptor that no child inherits, and /dev/null takes its place,
    so nothing else ever writes there."""
    with open(args.spec, encoding="utf-8") as fh:
        spec = json.load(fh)
    # `result`: a path, or "-" (and by default) this process's stdout.
    where = (spec.get("result") if isinstance(spec, dict) else None) or "-"
    out_fd = None
    if where == "-":
        out_fd = os.dup(1)  # not inheritable
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    result = grade(spec)
    if out_fd is None:
        common.write_json(where, result)
        return 0
    view = memoryview(json.dumps(result, ensure_ascii=True).encode("ascii"))
    while view:
        view = view[os.write(out_fd, view):]
    os.close(out_fd)
    return 0


def cmd_prepare(args):  # type: (Any) -> int
    """What belongs to the image, recorded once before any submission (beyondswe_prepare.py);
    the verifier's own modules compiled ahead, so each grading imports them."""
    ctx = Ctx({"workdir": args.workdir, "base_commit": args.base})
    own = [os.path.join(common.HERE, "beyondswe_verify.py"), os.path.join(common.PACKAGE, "__init__.py"),
           os.path.abspath(__file__)]
    return prepare.prepare(ctx, args, own + [m.__file__ for m in MODULES if m.__file__])


def cmd_harbor(args):  # type: (Any) -> int
    """Harbor's tests/test.sh. `--mode separate`: a fresh container from the task's image, the
    agent's work only what the collect hook carried over (COLLECTED_DIFF), applied like any
    submission's patch. `--mode shared` (Harbor 0.1.x): the agent's own container, captured as
    the agent left it before any step changes it."""
    if args.mode not in ("separate", "shared"):
        sys.stderr.write("beyondswe_verify.py harbor: --mode is separate or shared, not %r\n" % args.mode)
        return 2
    logs = args.logs_dir
    if not os.path.isdir(logs):
        os.makedirs(logs)
    # Nothing the agent left in the verifier's directory stands for the verifier's output.
    for name in ("reward.txt", "reward.json", "report.json", SUBMISSION_DIFF):
        if files.lexists(os.path.join(logs, name)):
            files.remove_entry(os.path.join(logs, name))
    tests = args.tests_dir
    os.chmod(tests, 0o700)
    with open(os.path.join(tests, "test_config.json"), encoding="utf-8") as fh:
        cfg = json.load(fh)
    instance = {}
    if os.path.isfile(os.path.join(tests, "instance.json")):
        with open(os.path.join(tests, "instance.json"), encoding="utf-8") as fh:
            instance = json.load(fh)
    spec = spec_keys.from_test_config(cfg, tests, logs, STATE_DIR, SUBMISSION_DIFF)
    collected = None
    if args.mode == "separate":
        collected = take_collected(args.submission, os.path.join(logs, SUBMISSION_DIFF))
        if collected is None:
            return no_reward(logs, "submission_not_collected",
                             "%s is missing: the collect hook did not run or failed in the agent's "
                             "container" % args.submission)
        spec.pop("capture", None)
        spec["shared_container"] = False
        if collected:
            spec["patch"] = os.path.join(logs, SUBMISSION_DIFF)
            spec["collected"] = True
    script = (instance or {}).get("f2p_script") or ""
    if script.strip():
        path = os.path.join(tests, "test_fail_to_pass.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(script)
        spec["f2p_script"] = path
    result = grade(spec)
    if collected is not None:
        result["capture"] = {"ok": True, "bytes": collected, "collected": True}
    result["verifier_mode"] = args.mode
    reward = None if result["verdict"] == "error" else result["score"]
    result["reward"] = reward
    common.write_json(os.path.join(logs, "report.json"), result)
    if reward is None:
        common.log("no reward written: %s (%s)" % (result.get("reason"), result.get("logs", {}).get("error", "")))
        return 2
    with open(os.path.join(logs, "reward.txt"), "w") as fh:
        fh.write(("%d" % reward) if reward in (0.0, 1.0) else ("%.6f" % reward))
    common.log("%s: %s, reward %s" % (result["verdict"], result["reason"], reward))
    return 0


def take_collected(src, dest):  # type: (str, str) -> Optional[int]
    """Copies the collected diff to `dest` (root's; what the trial records as graded): its size,
    or None when there is none. Read without following a link: it is the agent's data."""
    try:
        data = files.read_regular(src)
    except (OSError, ValueError):
        return None
    with open(dest, "wb") as fh:
        fh.write(data)
    return len(data)


def no_reward(logs, reason, message):  # type: (str, str, str) -> int
    common.write_json(os.path.join(logs, "report.json"), {"format": RESULT_FORMAT, "verdict": "error", "reason": reason,
                                                   "score": 0.0, "reward": None, "logs": {"error": message}})
    common.log("no reward written: %s (%s)" % (reason, message))
    return 2


def cmd_capture(args):  # type: (Any) -> int
    """Harbor's [[verifier.collect]] hook, in the agent's container after the agent: the workdir
    as the agent left it, as a binary diff against the base (against the empty tree without one),
    less what the image itself had there unchanged. Runs where the agent was root, so what it
    writes is only ever a submission: the verifier applies it in a fresh container."""
    spec = {"workdir": args.workdir, "base_commit": args.base, "state_dir": args.state_dir}
    ctx = Ctx(spec)
    path = os.path.join(args.state_dir, "prepare.json")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            ctx.state = json.load(fh)
    out = args.out
    if files.lexists(out):
        files.remove_entry(out)
    parent = os.path.dirname(out)
    if parent and not os.path.isdir(parent):
        os.makedirs(parent)
    tmp = out + ".partial"
    if files.lexists(tmp):
        files.remove_entry(tmp)
    size = submission.capture_submission(ctx, tmp)
    os.replace(tmp, out)
    sys.stdout.write(json.dumps({"bytes": size, "out": out}) + "\n")
    return 0


def cmd_classify(args):  # type: (Any) -> int
    """Prints the rules' answer for each path given on stdin (one per line), for the drift test."""
    out = {}
    for line in sys.stdin.read().splitlines():
        if line:
            out[line] = files.classify(line)
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


def cmd_decide(args):  # type: (Any) -> int
    """Prints decide() for each fact set in a JSON list on stdin, for the table test."""
    cases = json.loads(sys.stdin.read())
    sys.stdout.write(json.dumps([list(decide(c)) for c in cases]) + "\n")
    return 0


USAGE = """usage: beyondswe_verify.py COMMAND [--OPTION VALUE ...]
  grade    --spec SPEC.json
  harbor   --mode separate|shared [--tests-dir /tests] [--logs-dir /logs/verifier]
           [--submission /logs/artifacts/submission.diff]
  capture  --workdir W [--base C] --out PATH [--state-dir /var/lib/beyondswe]
  prepare  --workdir W [--base C] [--state-dir /var/lib/beyondswe] [--own-workdir yes|no]
  classify | decide   (JSON on stdin, for the tests)
"""


REQUIRED = object()


COMMANDS = {
    # command: (handler, {option: default})
    "grade": ("cmd_grade", {"spec": REQUIRED}),
    "harbor": ("cmd_harbor", {"mode": REQUIRED, "tests_dir": "/tests", "logs_dir": "/logs/verifier",
                              "submission": COLLECTED_DIFF}),
    "capture": ("cmd_capture", {"workdir": REQUIRED, "base": None, "out": REQUIRED, "state_dir": STATE_DIR}),
    "prepare": ("cmd_prepare", {"workdir": REQUIRED, "base": None, "state_dir": STATE_DIR, "own_workdir": "no"}),
    "classify": ("cmd_classify", {}),
    "decide": ("cmd_decide", {}),
}


class Args(object):
    pass


def main(argv):  # type: (List[str]) -> int
    """A small parser of its own: argparse alone costs each grading 10 ms of start-up."""
    if len(argv) < 2 or argv[1] not in COMMANDS:
        sys.stderr.write(USAGE)
        return 2
    handler, options = COMMANDS[argv[1]]
    args = Args()
    for name, default in options.items():
        setattr(args, name, default)
    rest = argv[2:]
    while rest:
        key = rest.pop(0)
        name = key[2:].replace("-", "_") if key.startswith("--") else None  # type: ignore[assignment]
        if name not in options or not rest:
            sys.stderr.write("beyondswe_verify.py %s: bad option %r\n%s" % (argv[1], key, USAGE))
            return 2
        setattr(args, name, rest.pop(0))
    missing = [n for n in options if getattr(args, n) is REQUIRED]
    if missing:
        sys.stderr.write("beyondswe_verify.py %s: --%s is required\n" % (argv[1], missing[0].replace("_", "-")))
        return 2
    return globals()[handler](args)
