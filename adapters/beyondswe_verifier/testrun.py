# beyondswe verifier: the test run and its outcomes: pytest as the test user through
# beyondswe_pytest_runner.py (and its second file beyondswe_runner_snapshot.py, copied beside it
# into a directory of root's), its reports read from a pipe only this process reads (a line the
# runner did not write, or two reports that contradict each other, are proof of tampering),
# cross-checked against pytest's JUnit report, matched to the instance's ids, and the run's
# facts and a cause for a person.
#
# adapters/beyondswe_verifier/testrun.py (see verify.py). The run step
# of both families.
import json
import os
import random
import re
import shutil
import tempfile
import time
import xml.etree.ElementTree as ET  # imported before any submission code runs, as every import

from . import common
from . import files
from . import processes
from . import environment

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Dict, Iterator, List, Optional, Set, Tuple  # noqa: F401


# The runner's files, (name in the run's directory, file of the package): the runner, and its
# second file, which the runner loads by that name from beside itself. Both root's, mode 0644.
RUNNER_NAME = "beyondswe_pytest_runner.py"
# A memory file system the grader mounts in its containers (sandbox/docker.rs, CAPTURE_TMPFS):
# where it is, the runner keeps pytest's capture files there, since on a storage driver in user
# space each test's capture I/O costs a round trip (about 1.7 ms a test). Elsewhere (Harbor's
# environments) pytest keeps them where it always does.
CAPTURE_DIR = "/run/beyondswe-capture"


def capture_dir():  # type: () -> Optional[str]
    """CAPTURE_DIR where the grader mounted it; None elsewhere (a directory of that name that is
    no mount point is not the grader's)."""
    return CAPTURE_DIR if os.path.ismount(CAPTURE_DIR) else None


RUNNER_FILES = ((RUNNER_NAME, "pytest_runner.py"), ("beyondswe_runner_snapshot.py", "runner_snapshot.py"))


def run_tests(ctx, ids, cwd, rootdir, extra_args, test_paths, prepend, timeout):
    # type: (Any, List[str], str, str, List[str], List[str], List[str], float) -> Dict[str, Any]
    """Runs pytest as the test user through the runner; returns the run's facts."""
    t = time.time()
    rundir = tempfile.mkdtemp(prefix="bsw-", dir="/tmp")
    os.chmod(rundir, 0o755)
    ctx.state["runner_dir"] = rundir
    runner = os.path.join(rundir, RUNNER_NAME)
    for name, source in RUNNER_FILES:
        shutil.copyfile(os.path.join(common.PACKAGE, source), os.path.join(rundir, name))
        os.chmod(os.path.join(rundir, name), 0o644)
    home = os.path.join(rundir, "home")
    os.mkdir(home, 0o700)
    os.chown(home, ctx.uid, ctx.gid)
    jdir = os.path.join(rundir, "j%d" % random.SystemRandom().randint(10 ** 8, 10 ** 9))
    os.mkdir(jdir, 0o700)
    os.chown(jdir, ctx.uid, ctx.gid)
    junit = os.path.join(jdir, "junit.xml")
    # Native tracebacks: a failing test costs about 0.5 ms to report instead of about 9 ms for
    # pytest's own (source lines and values of every frame), and a grading runs many failing
    # tests on purpose (a canary group's variants fail but one). The assertion's message (`assert
    # 4 == 5`, with where the values came from) is in the native traceback too. A dataset's own
    # `--tb` among its arguments comes after and wins.
    args = ["-o", "addopts=", "-p", "no:cacheprovider", "--rootdir=" + rootdir, "--confcutdir=" + rootdir,
            "-q", "-rN", "--tb=native", "--continue-on-collection-errors", "--junitxml=" + junit] + extra_args
    config = {
        "args": args, "ids": ids, "repo_paths": ctx.repo_paths,
        # Resolved here, as root and while the tree is warm: the runner takes them as they are
        # (thousands of files on a real project, each a chain of lookups, cold, as the test user).
        "test_paths": [os.path.realpath(p) for p in test_paths],
        "private_paths": ctx.private + ([ctx.spec["tests_dir"]] if ctx.spec.get("tests_dir") else []),
        "protected_modules": files.RULES["protected_modules"], "plugins": ctx.plugins,
        "prepend_paths": prepend, "image_paths": ctx.image_paths, "short_messages": ctx.doc2repo,
        "capture_dir": capture_dir(),
    }
    python = ctx.python
    res = processes.run_as_test_user(ctx, [python, "-I", runner], cwd, environment.child_env(ctx, home), timeout,
                                     json.dumps(config).encode("utf-8"), event_fd=True)
    outcomes, collect_errors, end, start, collected, messages, doubled = aggregate(res["events_raw"], ctx)
    if res["events_dropped"]:
        ctx.suspicious("the result channel carried %d bytes more than any run writes" % res["events_dropped"])
    if start is None and res["exit"] is not None and not res["timed_out"]:
        ctx.facts["runner_start_missing"] = True
    if start is not None and not start.get("audit_hook"):
        no_audit_hook(ctx)
    if end is not None and res["exit"] is not None and (end & 0xFF) != (res["exit"] & 0xFF):
        ctx.suspicious("the runner reported exit code %s but the process exited %s" % (end, res["exit"]))
    jout = junit_outcomes(junit) if files.lexists(junit) and not os.path.islink(junit) else None
    shutil.rmtree(rundir, ignore_errors=True)
    ctx.timed("tests", t)
    note_main_run(ctx, res["seconds"], start)
    return {"outcomes": outcomes, "collect_errors": collect_errors, "end": end, "exit": res["exit"],
            "timed_out": res["timed_out"], "oom": res["oom"], "junit": jout, "output": res["output"],
            "messages": messages, "collected": (collected or {}).get("count"), "started": start is not None,
            "doubled": doubled}


def note_main_run(ctx, seconds, start):  # type: (Any, float, Optional[Dict[str, Any]]) -> None
    """The runner's timings and capture of a grading's first run, its main one: the runs that
    follow it (a group's or a test's runs alone) add to `timings.tests` only."""
    timings = ctx.facts["timings"]
    timings.setdefault("runner", seconds)
    if start is not None and "runner_ready" not in timings:
        timings["runner_ready"] = start.get("ready_s")
        ctx.facts["capture_in_memory"] = bool(start.get("capture_in_memory"))


def check_plugins(ctx, plugins):  # type: (Any, List[str]) -> None
    """Conftest modules must be files the restore step left (a conftest made during the run is
    proof); other plugin files inside the repository are reported."""
    allowed = set(os.path.realpath(os.path.join(ctx.canary_root, p)) for p in ctx.facts.get("conftests", []))
    repo = os.path.realpath(ctx.workdir)
    for f in plugins:
        if not f or f == "None":
            continue
        real = os.path.realpath(f) if f.startswith("/") else f
        if os.path.basename(real) == "conftest.py":
            if real not in allowed:
                ctx.suspicious("a conftest the restore step did not leave was loaded: %s" % f)
        elif real.startswith(repo + os.sep) and not real.startswith(
                os.path.realpath(ctx.state.get("runner_dir", "/nonexistent"))):
            ctx.suspicious("a pytest plugin from the repository was registered: %s" % f)


def no_audit_hook(ctx):  # type: (Any) -> None
    """The runner says it ran without an audit hook: before 3.8 (the interpreter's version as the
    prepare step recorded it, outside the tested process) that is the grading's limit; on a
    Python that has audit hooks it is what the tested process said, and evidence."""
    version = tuple(int(p) for p in (ctx.python_version or "0.0").split(".")[:2])
    if ctx.python_version and version >= (3, 8):
        ctx.suspicious("the runner reported no audit hook on Python %s, which has them" % ctx.python_version)
    else:
        ctx.unwatched("this Python has no audit hooks (3.8+): code writes were not watched")


def aggregate(events_raw, ctx):
    # type: (bytes, Any) -> Tuple[Dict[str, str], List[Dict[str, Any]], Any, Any, Any, Dict[str, str], Set[str]]
    """Events from the runner's pipe -> (outcome per node id, collect errors, end exit code,
    start event, collected event, failure message per node id). Malformed lines and
    contradicting reports are proof of tampering: only the runner writes to that pipe."""
    phases = {}  # type: Dict[str, Dict[str, Any]]
    order = []  # type: List[str]
    doubled = set()  # type: Set[str]
    collect_errors = []
    end = None
    start = None
    collected = None
    for kind, ev in channel_events(events_raw, ctx):
        if kind == "start":
            if start is not None:
                ctx.suspicious("the result channel was started twice")
            start = ev
        elif kind == "report":
            record_report(ctx, phases, order, ev, doubled)
        elif kind == "collect_error":
            collect_errors.append({"nodeid": ev.get("nodeid"), "message": str(ev.get("message", ""))[-2000:]})
        elif kind == "collected":
            collected = ev
            check_plugins(ctx, ev.get("plugins", []))
        elif kind == "finding":
            msg = "%s: %s" % (ev.get("kind"), ev.get("detail"))
            # Seen inside the tested process, whose code could have staged it: evidence.
            ctx.suspicious(msg)
        elif kind == "end":
            if end is not None:
                ctx.suspicious("the result channel was ended twice")
            end = ev.get("exit")
    outcomes = dict((node, outcome_of_phases(phases[node])) for node in order)
    messages = dict((n, phases[n]["message"]) for n in order if phases[n]["message"])
    return outcomes, collect_errors, end, start, collected, messages, doubled


def channel_events(events_raw, ctx):  # type: (bytes, Any) -> Iterator[Tuple[Any, Any]]
    """(kind, event) for each line of the result channel, in order; a line the runner did not
    write is proof of tampering (recorded as it is reached)."""
    for raw in events_raw.split(b"\n"):
        if not raw.strip():
            continue
        try:
            ev = json.loads(raw.decode("ascii"))
            kind = ev["e"]
        except Exception:  # noqa: BLE001
            ctx.suspicious("the result channel carried a line the runner did not write: %r" % raw[:200])
            continue
        yield kind, ev


def record_report(ctx, phases, order, ev, doubled):
    # type: (Any, Dict[str, Dict[str, Any]], List[str], Any, Set[str]) -> None
    """One test report into `phases` (node id -> outcome per phase, xfail, first message): the
    worse outcome of a phase reported twice counts, and the contradiction is proof."""
    node, when = str(ev.get("nodeid")), str(ev.get("when"))
    outcome = str(ev.get("outcome"))
    if outcome == "rerun":
        return
    entry = phases.get(node)
    if entry is None:
        entry = phases[node] = {"xfail": False, "message": ""}
        order.append(node)
    if when in entry and entry[when] != outcome:
        # A canary group's variant reported twice is proof (canary_steps.judge); any other
        # test's is evidence, and the worse report counts.
        ctx.suspicious("%s: two %s reports (%s, then %s)" % (node, when, entry[when], outcome))
        doubled.add(node)
    prev = entry.get(when)
    if prev is None or RANK.get(outcome, 5) > RANK.get(prev, 5):
        entry[when] = outcome
    entry["xfail"] = entry["xfail"] or bool(ev.get("xfail"))
    if ev.get("message") and not entry["message"]:
        entry["message"] = str(ev["message"])[-2000:]


RANK = {"failed": 5, "error": 5, "skipped": 3, "passed": 1}


def outcome_of_phases(entry):  # type: (Dict[str, Any]) -> str
    """A test's outcome from its phases' reports."""
    if entry.get("setup") == "failed" or entry.get("teardown") == "failed":
        return "error"
    if entry.get("setup") == "skipped":
        return "skipped"
    if entry.get("call") == "passed":
        return "xpassed" if entry["xfail"] else "passed"
    if entry.get("call") == "failed":
        return "failed"
    if entry.get("call") == "skipped":
        return "xfailed" if entry["xfail"] else "skipped"
    return "error"


def unescape_id(test_id):  # type: (str) -> str
    if "\\" not in test_id:
        return test_id
    try:
        return test_id.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except Exception:  # noqa: BLE001
        return test_id


def junit_key(node_id):  # type: (str) -> str
    file_part, _, rest = node_id.partition("::")
    module = (file_part[:-3] if file_part.endswith(".py") else file_part).replace("/", ".")
    if not rest:
        return module
    i = rest.find("[")
    names, params = (rest, "") if i < 0 else (rest[:i], rest[i:])
    return "%s.%s%s" % (module, names.replace("::", "."), params)


def junit_outcomes(path):  # type: (str) -> Optional[Dict[str, str]]
    """key -> outcome from pytest's JUnit report (written by the test process; a cross-check)."""
    try:
        if os.path.getsize(path) > 64 * 1024 * 1024:
            return None
        tree = ET.parse(path)
    except Exception:  # noqa: BLE001
        return None
    out = {}  # type: Dict[str, str]
    for case in tree.iter("testcase"):
        key = unescape_id("%s.%s" % (case.get("classname", ""), case.get("name", "")))
        tags = set(child.tag for child in case)
        if "failure" in tags or "error" in tags:
            outcome = "failed"
        elif "skipped" in tags:
            outcome = "skipped"
        else:
            outcome = "passed"
        if out.get(key, "passed") == "passed":
            out[key] = outcome
    return out


def match(ids, outcomes):  # type: (List[str], Dict[str, str]) -> Dict[str, str]
    exact = outcomes
    loose = dict((unescape_id(k), v) for k, v in outcomes.items())
    out = {}
    for test_id in ids:
        if test_id in exact:
            out[test_id] = exact[test_id]
        else:
            out[test_id] = loose.get(unescape_id(test_id), "not_run")
    return out


def junit_says_passed(junit, node_id):  # type: (Optional[Dict[str, str]], str) -> bool
    if junit is None:
        return False
    return junit.get(unescape_id(junit_key(node_id))) == "passed"


def required_outcomes(run, ids, alias=None):
    # type: (Dict[str, Any], List[str], Optional[Dict[str, str]]) -> Dict[str, str]
    """Outcome per required id; a pass that pytest's own JUnit report does not confirm is
    `disputed`. `alias`: the node id that stands in for an id (a canary group's real
    variant)."""
    out = match(ids, run["outcomes"])
    alias = alias or {}
    for test_id, outcome in out.items():
        node = resolve_node(test_id, run["outcomes"])
        if outcome in ("passed", "xpassed") and not junit_says_passed(run["junit"], alias.get(node, node)):
            out[test_id] = "disputed"
    return out


def resolve_node(test_id, outcomes):  # type: (str, Dict[str, str]) -> str
    if test_id in outcomes:
        return test_id
    u = unescape_id(test_id)
    for k in outcomes:
        if unescape_id(k) == u:
            return k
    return test_id


MODULE_NOT_FOUND = re.compile(r"No module named '([^']+)'")


CANNOT_IMPORT = re.compile(r"ImportError: (cannot import name '[^']+' from '[^']+')")


# pytest's answer to an id that names no test it collected; it then runs no test at all.
ID_NOT_FOUND = re.compile(r"^ERROR: not found: (.+)$", re.M)


def failure_cause(run, root=""):  # type: (Dict[str, Any], str) -> Optional[str]
    """One cause that explains failing tests, for a person (never for the verdict): the module
    the tests could not import, as `module not found: X`, or the name they could not import;
    else a test id pytest could not find (it then runs none: an id made at collection time, such
    as a timestamp in a parameter, or a test renamed), relative to `root`. None when the messages
    say neither."""
    messages = [e.get("message") or "" for e in run["collect_errors"]] + list(run["messages"].values())
    if not run["started"]:
        messages.append(run["output"])  # the runner itself could not start: its traceback
    for pattern, label in ((MODULE_NOT_FOUND, "module not found: %s"), (CANNOT_IMPORT, "import error: %s")):
        for text in messages:
            m = pattern.search(text)
            if m:
                return label % m.group(1)
    missing = []
    prefix = root.rstrip("/") + "/" if root else None
    for found in ID_NOT_FOUND.findall(run.get("output") or ""):
        found = found.strip()
        if prefix and found.startswith(prefix):
            found = found[len(prefix):]
        if found not in missing:
            missing.append(found)
    if missing:
        more = " (and %d more)" % (len(missing) - 1) if len(missing) > 1 else ""
        return "test id not found, so pytest ran no test: %s%s" % (missing[0], more)
    return None


def record_run(ctx, run):  # type: (Any, Dict[str, Any]) -> None
    cause = failure_cause(run, ctx.workdir)
    if cause:
        ctx.facts["cause"] = cause
    ctx.facts["run"] = {"exit": run["exit"], "end": run["end"], "timed_out": run["timed_out"],
                        "oom": run["oom"], "junit": run["junit"] is not None, "started": run["started"],
                        "collected": run["collected"], "collect_errors": run["collect_errors"][:50]}
    ctx.facts["logs"]["test_output"] = common.tail(run["output"]) if not ctx.doc2repo else doc2repo_summary(run)


def doc2repo_summary(run):  # type: (Dict[str, Any]) -> str
    """Doc2Repo logs name tests and short reasons only: the hidden suite's source never leaves."""
    lines = ["%s %s" % (o, n) for n, o in sorted(run["outcomes"].items())]
    for e in run["collect_errors"][:50]:
        last = ((e.get("message") or "").strip().splitlines() or [""])[-1]
        lines.append("collect error %s: %s" % (e.get("nodeid"), last))
    return common.tail("\n".join(lines))
