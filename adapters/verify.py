# beyondswe verifier: the grading steps that run inside a task container.
#
#   python beyondswe_verify.py harbor --tests-dir /tests --logs-dir /logs/verifier
#       the whole Harbor verification: restore the test baseline, apply the f2p patch, write the
#       f2p script, run the tests through the result channel, write reward.txt and report.json.
#   python beyondswe_verify.py restore --workdir W --base C [--keep P ...] [--f2p-path P ...]
#       only the restore step; prints what it changed as JSON (used by the offline grader).
#
# The restore rules here are the ones the offline grader applies (shared/design.md). Python 3.6+,
# standard library only, so it runs with whatever interpreter the task image has.
import argparse
import fnmatch
import json
import os
import random
import re
import shutil
import string
import subprocess
import sys
import tempfile
import zipfile
import xml.etree.ElementTree as ET

TEST_DIRS = ("test", "tests", "testing")
CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini", ".coveragerc")
SECTION_CONFIG_FILES = ("setup.cfg", "pyproject.toml")
STARTUP_FILES = ("sitecustomize.py", "usercustomize.py")
RUNNER_NAME = "beyondswe_pytest_runner.py"


def log(msg):
    sys.stderr.write("beyondswe-verify: %s\n" % msg)
    sys.stderr.flush()


def git(workdir, *args, **kw):
    proc = subprocess.run(
        ["git", "-c", "core.quotepath=off"] + list(args),
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        timeout=kw.get("timeout", 300),
    )
    if kw.get("check", True) and proc.returncode != 0:
        raise RuntimeError("git %s failed: %s" % (" ".join(args), proc.stderr.decode("utf-8", "replace").strip()))
    return proc


def is_test_path(path):
    """Tracked test files: under a test/tests/testing directory, test_*.py, *_test.py, conftest.py."""
    parts = path.split("/")
    if any(p.lower() in TEST_DIRS for p in parts[:-1]):
        return True
    name = parts[-1]
    return name == "conftest.py" or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")))


def is_config_path(path):
    return path.split("/")[-1] in CONFIG_FILES


def is_startup_path(path):
    name = path.split("/")[-1]
    return name in STARTUP_FILES or name.endswith(".pth")


def covered(path):
    return is_test_path(path) or is_config_path(path) or is_startup_path(path) or path.split("/")[-1] in SECTION_CONFIG_FILES


def z_list(data):
    return [p for p in data.decode("utf-8", "surrogateescape").split("\0") if p]


def exists_in(workdir, base, path):
    return git(workdir, "cat-file", "-e", "%s:%s" % (base, path), check=False).returncode == 0


def show(workdir, base, path):
    proc = git(workdir, "show", "%s:%s" % (base, path), check=False)
    return proc.stdout.decode("utf-8", "surrogateescape") if proc.returncode == 0 else None


SECTION_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def split_sections(text):
    """Splits INI/TOML text into (header name or None, lines) blocks."""
    blocks = [[None, []]]
    for line in text.splitlines(True):
        m = SECTION_HEADER.match(line)
        if m:
            blocks.append([m.group(1).strip().strip('"'), [line]])
        else:
            blocks[-1][1].append(line)
    return blocks


def is_pytest_section(name, filename):
    if name is None:
        return False
    if filename == "setup.cfg":
        return name in ("tool:pytest", "pytest")
    return name == "tool.pytest" or name.startswith("tool.pytest.")


def revert_sections(current, base, filename):
    """The current file with its pytest sections replaced by the base file's pytest sections."""
    kept = [b for b in split_sections(current) if not is_pytest_section(b[0], filename)]
    base_sections = [b for b in split_sections(base or "") if is_pytest_section(b[0], filename)]
    text = "".join("".join(lines) for _, lines in kept)
    if base_sections:
        if text and not text.endswith("\n"):
            text += "\n"
        text += "".join("".join(lines) for _, lines in base_sections)
    return text


def restore(workdir, base, keep=(), f2p_paths=(), baseline_untracked=()):
    """Puts the test baseline back; returns what it changed.

    baseline_untracked: untracked paths that existed before the submission was applied (made by the
    image or the setup commands); they are left alone unless they are conftest, pytest config or
    interpreter start-up files.
    """
    keep = set(keep)
    baseline = set(baseline_untracked)
    flags = {"tests_restored": [], "files_removed": [], "config_reverted": [], "kept_for_gold": []}
    base = git(workdir, "rev-parse", "--verify", base + "^{commit}").stdout.decode().strip()
    changed = z_list(git(workdir, "diff", "--name-status", "-z", "--no-renames", base).stdout)
    tracked_changes = []
    it = iter(changed)
    for status in it:
        path = next(it, None)
        if path is not None:
            tracked_changes.append((status, path))
    untracked = z_list(git(workdir, "ls-files", "--others", "-z").stdout)
    # Only what differs from the base is touched: changed or deleted tracked files and untracked
    # ones, when the rules cover them or the f2p patch needs them pristine.
    f2p = set(f2p_paths)
    targets = set()
    for status, path in tracked_changes:
        if covered(path) or path in f2p:
            targets.add(path)
    for path in untracked:
        name = path.split("/")[-1]
        if path in baseline and name != "conftest.py" and not is_config_path(path) and not is_startup_path(path):
            continue
        if covered(path) or path in f2p:
            targets.add(path)
    for path in sorted(targets):
        full = os.path.join(workdir, path)
        if path in keep and path not in f2p_paths:
            flags["kept_for_gold"].append(path)
            continue
        name = path.split("/")[-1]
        in_base = exists_in(workdir, base, path)
        if name in SECTION_CONFIG_FILES and in_base and path not in f2p_paths:
            base_text = show(workdir, base, path)
            if os.path.isfile(full):
                with open(full, encoding="utf-8", errors="surrogateescape") as fh:
                    current = fh.read()
                new = revert_sections(current, base_text, name)
                if new != current:
                    with open(full, "w", encoding="utf-8", errors="surrogateescape") as fh:
                        fh.write(new)
                    flags["config_reverted"].append(path)
                continue
        if in_base:
            git(workdir, "checkout", base, "--", path)
            (flags["config_reverted"] if is_config_path(path) else flags["tests_restored"]).append(path)
        elif os.path.lexists(full):
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full)
            else:
                os.remove(full)
            flags["files_removed"].append(path)
    return flags


def nonce():
    return "".join(random.SystemRandom().choice(string.ascii_letters + string.digits) for _ in range(24))


def unescape_id(test_id):
    """pytest escapes non-ASCII in node ids (\\xe9, \\u00e9); compare ids in their decoded form."""
    if "\\" not in test_id:
        return test_id
    try:
        return test_id.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except Exception:  # noqa: BLE001
        return test_id


def match_outcomes(ids, tests):
    """Outcome for each requested id; ids that did not run are `not_run`."""
    exact = dict((k, v["outcome"]) for k, v in tests.items())
    loose = dict((unescape_id(k), v) for k, v in exact.items())
    out = {}
    for test_id in ids:
        if test_id in exact:
            out[test_id] = exact[test_id]
        else:
            out[test_id] = loose.get(unescape_id(test_id), "not_run")
    return out


def junit_outcomes(path):
    """name -> outcome from pytest's own JUnit file, for the cross-check."""
    out = {}
    tree = ET.parse(path)
    for case in tree.iter("testcase"):
        key = (case.get("classname", ""), case.get("name", ""))
        tags = set(child.tag for child in case)
        if "failure" in tags or "error" in tags:
            outcome = "failed"
        elif "skipped" in tags:
            outcome = "skipped"
        else:
            outcome = "passed"
        out[key] = outcome if out.get(key, "passed") == "passed" else out[key]
    return out


def run_pytest(python, cwd, ids, args, timeout, env_extra=None):
    """Runs the runner at a random path outside the workspace; returns (results, junit, exit, output)."""
    work = tempfile.mkdtemp(prefix="beyondswe-")
    runner = os.path.join(work, RUNNER_NAME)
    shutil.copyfile(os.path.join(os.path.dirname(os.path.abspath(__file__)), RUNNER_NAME), runner)
    token = nonce()
    results_path = os.path.join(work, "results-%s.json" % token)
    junit_path = os.path.join(work, "junit-%s.xml" % token)
    config_path = os.path.join(work, "config.json")
    with open(config_path, "w", encoding="utf-8") as fh:
        json.dump({"args": list(args) + ["--junitxml=" + junit_path], "ids": ids,
                   "results_path": results_path, "nonce": token}, fh)
    env = dict(os.environ)
    env.update({"PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_ADDOPTS": ""})
    env.pop("PYTEST_PLUGINS", None)
    env.update(env_extra or {})
    try:
        proc = subprocess.run([python, runner, config_path], cwd=cwd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout)
        code, output = proc.returncode, proc.stdout
    except subprocess.TimeoutExpired as exc:
        code, output = None, exc.output or b""
    results = None
    if os.path.isfile(results_path):
        with open(results_path, encoding="utf-8") as fh:
            results = json.load(fh)
        if results.get("nonce") != token:
            results = None
    junit = None
    if os.path.isfile(junit_path):
        try:
            junit = junit_outcomes(junit_path)
        except Exception:  # noqa: BLE001
            junit = None
    shutil.rmtree(work, ignore_errors=True)
    return results, junit, code, output.decode("utf-8", "replace")[-20000:]


def junit_agrees(outcomes, junit):
    """Every id the recorder saw pass must also pass in pytest's own JUnit report."""
    if junit is None:
        return False
    passed_junit = sum(1 for v in junit.values() if v == "passed")
    passed_rec = sum(1 for v in outcomes.values() if v in ("passed", "xpassed"))
    return passed_rec <= passed_junit


def pytest_base_args(rootdir):
    return ["-o", "addopts=", "-p", "no:cacheprovider", "--rootdir=" + rootdir,
            "--confcutdir=" + rootdir, "-q"]


def grade_issue(cfg, instance, tests_dir, python):
    workdir = cfg.get("workdir") or "/workspace"
    base = cfg.get("base_commit") or "HEAD"
    report = {"flags": restore(workdir, base, cfg.get("keep_paths", []), cfg.get("f2p_paths", []))}
    patch = os.path.join(tests_dir, "f2p_patch.diff")
    if os.path.isfile(patch) and os.path.getsize(patch) > 0:
        proc = git(workdir, "apply", "--verbose", "--whitespace=nowarn", patch, check=False)
        if proc.returncode != 0:
            report.update(verdict="error", reason="f2p_patch_failed",
                          log=proc.stderr.decode("utf-8", "replace")[-4000:])
            return report, None
    script = (instance or {}).get("f2p_script") or ""
    if script.strip():
        with open(os.path.join(workdir, "test_fail_to_pass.py"), "w", encoding="utf-8") as fh:
            fh.write(script)
    f2p, p2p = cfg.get("fail_to_pass", []), cfg.get("pass_to_pass", [])
    ids = f2p + [i for i in p2p if i not in f2p]
    if not ids:
        report.update(verdict="error", reason="no_test_ids")
        return report, None
    results, junit, code, output = run_pytest(python, workdir, ids, pytest_base_args(workdir),
                                              cfg.get("test_timeout_sec") or 1800)
    report["test_output"] = output
    report["exit_code"] = code
    if code is None:
        report.update(verdict="unresolved", reason="timeout")
        return report, 0.0
    if results is None:
        report.update(verdict="unresolved", reason="no_results")
        return report, 0.0
    outcomes = match_outcomes(ids, results["tests"])
    report["fail_to_pass"] = dict((i, outcomes[i]) for i in f2p)
    report["pass_to_pass"] = dict((i, outcomes[i]) for i in p2p)
    all_passed = all(outcomes[i] in ("passed", "xpassed") for i in ids)
    agrees = junit_agrees(dict((i, outcomes[i]) for i in ids), junit)
    report["junit_agrees"] = agrees
    if all_passed and agrees and code == 0:
        report.update(verdict="resolved", reason="all_tests_passed")
        return report, 1.0
    report.update(verdict="unresolved", reason="tests_failed" if agrees or not all_passed else "results_disagree")
    return report, 0.0


def safe_extract(zip_path, dest):
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            name = info.filename
            if name.startswith("/") or ".." in name.split("/") or "\\" in name:
                raise RuntimeError("unsafe path in test suite: %r" % name)
        zf.extractall(dest)


def install_repo(python, workdir, timeout=300):
    # First as the official grader does (with dependencies, if the network allows), then offline.
    attempts = [[python, "-m", "pip", "install", "--retries", "1", "--timeout", "10", "-e", "."],
                [python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-e", "."]]
    log_text = ""
    for cmd in attempts:
        try:
            proc = subprocess.run(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
            log_text += proc.stdout.decode("utf-8", "replace")[-4000:]
            if proc.returncode == 0:
                return True, log_text
        except subprocess.TimeoutExpired:
            log_text += "\n[timed out after %ss]" % timeout
    return False, log_text


def grade_doc2repo(cfg, tests_dir, python):
    workdir = cfg.get("workdir") or "/workspace"
    report = {"flags": {}}
    suite_zip = os.path.join(tests_dir, "test_suite.zip")
    if not os.path.isfile(suite_zip):
        report.update(verdict="error", reason="test_suite_missing")
        return report, None
    # Interpreter start-up hooks in the submission would run inside the test process (the
    # workdir may be on PYTHONPATH): remove them before anything runs.
    removed = []
    for root, dirs, files in os.walk(workdir):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            if name in STARTUP_FILES or name.endswith(".pth"):
                path = os.path.join(root, name)
                os.remove(path)
                removed.append(os.path.relpath(path, workdir))
    report["flags"]["files_removed"] = sorted(removed)
    installed, install_log = install_repo(python, workdir)
    report["install"] = {"ok": installed, "log": install_log}
    suite = tempfile.mkdtemp(prefix="beyondswe-suite-")
    safe_extract(suite_zip, suite)
    for name in ("realswe_eval_script.py",):
        path = os.path.join(suite, name)
        if os.path.exists(path):
            os.remove(path)
    args = pytest_base_args(suite)
    if not any(os.path.exists(os.path.join(suite, n)) for n in ("pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini")):
        args += ["-c", os.devnull]
    extra_path = [workdir, os.path.join(workdir, "src")] if not installed else []
    env = {"PYTHONPATH": os.pathsep.join(extra_path)} if extra_path else {}
    results, junit, code, output = run_pytest(python, suite, [suite], args, cfg.get("test_timeout_sec") or 1800, env)
    report["test_output"] = output
    report["exit_code"] = code
    expected = cfg.get("test_suite_num") or 0
    tests = (results or {}).get("tests", {})
    passed = sum(1 for v in tests.values() if v["outcome"] in ("passed", "xpassed"))
    if junit is not None:
        passed = min(passed, sum(1 for v in junit.values() if v == "passed"))
    else:
        passed = 0
    total = expected if expected > 0 else len(tests)
    score = min(1.0, float(passed) / total) if total else 0.0
    report.update(passed=passed, collected=len(tests), expected=expected, score=score,
                  all_passed=bool(total) and passed >= total)
    if code is None:
        report["timed_out"] = True
    report.update(verdict="resolved" if report["all_passed"] else "unresolved",
                  reason="all_tests_passed" if report["all_passed"] else ("timeout" if code is None else "tests_failed"))
    return report, score


def cmd_harbor(args):
    logs = args.logs_dir
    if not os.path.isdir(logs):
        os.makedirs(logs)
    for name in ("reward.txt", "reward.json"):
        if os.path.lexists(os.path.join(logs, name)):
            os.remove(os.path.join(logs, name))
    with open(os.path.join(args.tests_dir, "test_config.json"), encoding="utf-8") as fh:
        cfg = json.load(fh)
    instance = None
    inst_path = os.path.join(args.tests_dir, "instance.json")
    if os.path.isfile(inst_path):
        with open(inst_path, encoding="utf-8") as fh:
            instance = json.load(fh)
    python = sys.executable
    try:
        if cfg.get("family") == "Doc2Repo":
            report, reward = grade_doc2repo(cfg, args.tests_dir, python)
        else:
            report, reward = grade_issue(cfg, instance, args.tests_dir, python)
    except Exception as exc:  # noqa: BLE001 - any crash is an infrastructure error, not a score
        report, reward = {"verdict": "error", "reason": "verifier_crashed", "log": repr(exc)}, None
    report["instance_id"] = cfg.get("instance_id")
    report["family"] = cfg.get("family")
    report["reward"] = reward
    with open(os.path.join(logs, "report.json"), "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=2, ensure_ascii=False)
    if reward is None:
        log("no reward written: %s (%s)" % (report.get("reason"), report.get("log", "")))
        return 2
    with open(os.path.join(logs, "reward.txt"), "w") as fh:
        fh.write(("%d" % reward) if reward in (0.0, 1.0) else ("%.6f" % reward))
    log("%s: %s, reward %s" % (report["verdict"], report["reason"], reward))
    return 0


def cmd_restore(args):
    baseline = []
    if args.baseline_untracked and os.path.isfile(args.baseline_untracked):
        with open(args.baseline_untracked, "rb") as fh:
            baseline = z_list(fh.read())
    flags = restore(args.workdir, args.base, args.keep, args.f2p_path, baseline)
    # Then the dataset's own test changes, on the pristine baseline.
    if args.f2p_patch:
        proc = git(args.workdir, "apply", "--verbose", "--whitespace=nowarn", args.f2p_patch, check=False)
        if proc.returncode != 0:
            flags["f2p_patch_error"] = (proc.stdout + proc.stderr).decode("utf-8", "replace")[-4000:]
    if args.f2p_script:
        shutil.copyfile(args.f2p_script, os.path.join(args.workdir, "test_fail_to_pass.py"))
    sys.stdout.write(json.dumps(flags) + "\n")
    return 0


def main(argv):
    parser = argparse.ArgumentParser(prog="beyondswe_verify.py")
    sub = parser.add_subparsers(dest="command")
    h = sub.add_parser("harbor")
    h.add_argument("--tests-dir", default="/tests")
    h.add_argument("--logs-dir", default="/logs/verifier")
    r = sub.add_parser("restore")
    r.add_argument("--workdir", required=True)
    r.add_argument("--base", required=True)
    r.add_argument("--keep", action="append", default=[])
    r.add_argument("--f2p-path", action="append", default=[])
    r.add_argument("--f2p-patch", default=None, help="apply this patch after restoring")
    r.add_argument("--f2p-script", default=None, help="copy this file to WORKDIR/test_fail_to_pass.py")
    r.add_argument("--baseline-untracked", default=None,
                   help="file with the NUL-separated untracked paths present before the submission")
    args = parser.parse_args(argv[1:])
    if args.command == "harbor":
        return cmd_harbor(args)
    if args.command == "restore":
        return cmd_restore(args)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
