"""Unit tests of the test run's outcomes (adapters/testrun.py): the result channel read into
outcomes, with every line the runner did not write and every contradiction recorded as proof;
a test's outcome from its phases; JUnit's cross-check; ids matched to outcomes; the cause shown
to a person; the Doc2Repo log. Standard library only."""
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import testrun  # noqa: E402
from beyondswe_verifier import verify  # noqa: E402


def channel(*events):
    return b"".join(json.dumps(e).encode("ascii") + b"\n" for e in events)


def report(nodeid, when, outcome, **extra):
    ev = {"e": "report", "nodeid": nodeid, "when": when, "outcome": outcome}
    ev.update(extra)
    return ev


class Channel(unittest.TestCase):
    def setUp(self):
        self.ctx = verify.Ctx({"workdir": "/nonexistent"})

    def test_outcomes_errors_and_end_of_an_honest_run(self):
        raw = channel(
            {"e": "start", "audit_hook": True, "ready_s": 0.1},
            report("t.py::a", "setup", "passed"), report("t.py::a", "call", "passed"),
            report("t.py::a", "teardown", "passed"),
            report("t.py::b", "call", "failed", message="assert 1 == 2"),
            report("t.py::c", "setup", "skipped"),
            report("t.py::d", "call", "passed", xfail=True),
            {"e": "collect_error", "nodeid": "u.py", "message": "ImportError"},
            {"e": "end", "exit": 1},
        )
        outcomes, errors, end, start, collected, messages, doubled = testrun.aggregate(raw, self.ctx)
        self.assertEqual(outcomes, {"t.py::a": "passed", "t.py::b": "failed", "t.py::c": "skipped",
                                    "t.py::d": "xpassed"})
        self.assertEqual(list(outcomes), ["t.py::a", "t.py::b", "t.py::c", "t.py::d"])
        self.assertEqual(errors, [{"nodeid": "u.py", "message": "ImportError"}])
        self.assertEqual(end, 1)
        self.assertTrue(start["audit_hook"])
        self.assertIsNone(collected)
        self.assertEqual(messages, {"t.py::b": "assert 1 == 2"})
        self.assertEqual(doubled, set())
        self.assertEqual(self.ctx.flags["forgery"], [])
        self.assertEqual(self.ctx.flags["suspicious"], [])

    # The runner writes the channel from inside the tested process: what it carries is
    # evidence, never proof (only a canary group's variant reported twice is, canary_steps).
    def test_a_line_the_runner_did_not_write_is_evidence(self):
        raw = b"PASSED t.py::a\n" + channel(report("t.py::a", "call", "failed")) + b'{"no_kind": 1}\n'
        outcomes = testrun.aggregate(raw, self.ctx)[0]
        self.assertEqual(outcomes, {"t.py::a": "failed"})
        self.assertEqual(self.ctx.flags["forgery"], [])
        self.assertEqual(len(self.ctx.flags["suspicious"]), 2)
        self.assertIn("did not write", self.ctx.flags["suspicious"][0])

    def test_contradicting_reports_are_named_and_the_worse_one_counts(self):
        raw = channel(report("t.py::a", "call", "failed"), report("t.py::a", "call", "passed"))
        out = testrun.aggregate(raw, self.ctx)
        self.assertEqual(out[0], {"t.py::a": "failed"})
        self.assertEqual(out[-1], set(["t.py::a"]))
        self.assertEqual(self.ctx.flags["suspicious"], ["t.py::a: two call reports (failed, then passed)"])
        self.assertEqual(self.ctx.flags["forgery"], [])

    def test_reruns_are_not_reports(self):
        raw = channel(report("t.py::a", "call", "rerun"), report("t.py::a", "call", "passed"))
        self.assertEqual(testrun.aggregate(raw, self.ctx)[0], {"t.py::a": "passed"})
        self.assertEqual(self.ctx.flags["suspicious"], [])

    def test_no_audit_hook_is_the_grading_s_limit_only_where_the_python_has_none(self):
        # Before 3.8 (as recorded outside the tested process): unwatched, never for review.
        self.ctx.python_version = "3.7"
        testrun.no_audit_hook(self.ctx)
        self.assertEqual(len(self.ctx.flags["unwatched"]), 1)
        self.assertEqual(self.ctx.flags["suspicious"], [])
        # On a Python that has audit hooks, the runner's word that it had none is evidence
        # (the tested process can write the channel).
        ctx = verify.Ctx({"workdir": "/nonexistent"})
        ctx.python_version = "3.11"
        testrun.no_audit_hook(ctx)
        self.assertEqual(ctx.flags["unwatched"], [])
        self.assertIn("which has them", ctx.flags["suspicious"][0])

    def test_a_channel_started_or_ended_twice_is_evidence(self):
        raw = channel({"e": "start"}, {"e": "start"}, {"e": "end", "exit": 0}, {"e": "end", "exit": 0})
        testrun.aggregate(raw, self.ctx)
        self.assertEqual(self.ctx.flags["suspicious"], ["the result channel was started twice",
                                                        "the result channel was ended twice"])
        self.assertEqual(self.ctx.flags["forgery"], [])

    def test_findings_are_evidence_whatever_the_runner_says(self):
        raw = channel({"e": "finding", "kind": "patched", "detail": "x", "proof": True},
                      {"e": "finding", "kind": "frames", "detail": "y"})
        testrun.aggregate(raw, self.ctx)
        self.assertEqual(self.ctx.flags["forgery"], [])
        self.assertEqual(self.ctx.flags["suspicious"], ["patched: x", "frames: y"])

    def test_channel_events_in_order_blank_lines_skipped(self):
        raw = channel({"e": "start"}, {"e": "end", "exit": 0}).replace(b"\n", b"\n\n")
        self.assertEqual([k for k, _ in testrun.channel_events(raw, self.ctx)], ["start", "end"])


class MainRun(unittest.TestCase):
    def test_the_first_run_s_timings_are_kept_over_the_runs_after_it(self):
        ctx = verify.Ctx({"workdir": "/nonexistent"})
        testrun.note_main_run(ctx, 2.5, {"ready_s": 0.4, "capture_in_memory": True})
        testrun.note_main_run(ctx, 0.3, {"ready_s": 0.2, "capture_in_memory": False})
        testrun.note_main_run(ctx, 0.1, None)
        self.assertEqual((ctx.facts["timings"]["runner"], ctx.facts["timings"]["runner_ready"]), (2.5, 0.4))
        self.assertTrue(ctx.facts["capture_in_memory"])


class Phases(unittest.TestCase):
    def test_outcome_of_phases(self):
        cases = [
            ({"setup": "failed"}, "error"),
            ({"setup": "passed", "call": "passed", "teardown": "failed"}, "error"),
            ({"setup": "skipped"}, "skipped"),
            ({"call": "passed"}, "passed"),
            ({"call": "passed", "xfail": True}, "xpassed"),
            ({"call": "failed"}, "failed"),
            ({"call": "skipped"}, "skipped"),
            ({"call": "skipped", "xfail": True}, "xfailed"),
            ({"setup": "passed"}, "error"),
        ]
        for phases, outcome in cases:
            entry = dict({"xfail": False, "message": ""}, **phases)
            self.assertEqual(testrun.outcome_of_phases(entry), outcome, phases)


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.test_a" name="test_ok" time="0.1"/>
<testcase classname="tests.test_a" name="test_bad"><failure message="x">boom</failure></testcase>
<testcase classname="tests.test_a.TestX" name="test_err[1-2]"><error message="e"/></testcase>
<testcase classname="tests.test_a" name="test_skip"><skipped message="s"/></testcase>
<testcase classname="tests.test_a" name="test_twice"/>
<testcase classname="tests.test_a" name="test_twice"><failure/></testcase>
<testcase classname="tests.test_a" name="test_twice"/>
</testsuite></testsuites>
"""


class Junit(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def junit(self, text):
        path = os.path.join(self.dir, "junit.xml")
        with open(path, "w") as fh:
            fh.write(text)
        return testrun.junit_outcomes(path)

    def test_outcomes_per_key_a_failure_sticks(self):
        self.assertEqual(self.junit(JUNIT), {
            "tests.test_a.test_ok": "passed", "tests.test_a.test_bad": "failed",
            "tests.test_a.TestX.test_err[1-2]": "failed", "tests.test_a.test_skip": "skipped",
            "tests.test_a.test_twice": "failed",
        })

    def test_an_unreadable_report_is_none(self):
        self.assertIsNone(self.junit("<testsuites><testcase"))
        self.assertIsNone(testrun.junit_outcomes(os.path.join(self.dir, "missing.xml")))

    def test_junit_key_of_a_node_id(self):
        self.assertEqual(testrun.junit_key("tests/test_a.py::TestX::test_err[1-2]"), "tests.test_a.TestX.test_err[1-2]")
        self.assertEqual(testrun.junit_key("tests/test_a.py"), "tests.test_a")
        self.assertEqual(testrun.junit_key("tests/test_a.py::test_p[a::b]"), "tests.test_a.test_p[a::b]")

    def test_a_pass_junit_does_not_confirm_is_disputed(self):
        run = {"outcomes": {"tests/test_a.py::test_ok": "passed", "tests/test_a.py::test_bad": "passed",
                            "tests/test_a.py::test_skip": "skipped"},
               "junit": self.junit(JUNIT)}
        ids = ["tests/test_a.py::test_ok", "tests/test_a.py::test_bad", "tests/test_a.py::test_skip",
               "tests/test_a.py::test_gone"]
        self.assertEqual(testrun.required_outcomes(run, ids), {
            "tests/test_a.py::test_ok": "passed", "tests/test_a.py::test_bad": "disputed",
            "tests/test_a.py::test_skip": "skipped", "tests/test_a.py::test_gone": "not_run"})
        run["junit"] = None
        self.assertEqual(testrun.required_outcomes(run, ids[:1]), {"tests/test_a.py::test_ok": "disputed"})


class Matching(unittest.TestCase):
    def test_unescape_id(self):
        self.assertEqual(testrun.unescape_id("t.py::t[\\u00e9]"), "t.py::t[\u00e9]")
        self.assertEqual(testrun.unescape_id("t.py::t[plain]"), "t.py::t[plain]")

    def test_match_exactly_then_unescaped_else_not_run(self):
        outcomes = {"t.py::a": "passed", "t.py::b[\u00e9]": "failed"}
        self.assertEqual(testrun.match(["t.py::a", "t.py::b[\\u00e9]", "t.py::c"], outcomes),
                         {"t.py::a": "passed", "t.py::b[\\u00e9]": "failed", "t.py::c": "not_run"})

    def test_resolve_node(self):
        outcomes = {"t.py::a": "passed", "t.py::b[\u00e9]": "failed"}
        self.assertEqual(testrun.resolve_node("t.py::a", outcomes), "t.py::a")
        self.assertEqual(testrun.resolve_node("t.py::b[\\u00e9]", outcomes), "t.py::b[\u00e9]")
        self.assertEqual(testrun.resolve_node("t.py::c", outcomes), "t.py::c")


def run_of(**facts):
    run = {"collect_errors": [], "messages": {}, "started": True, "output": "", "outcomes": {}}
    run.update(facts)
    return run


class Causes(unittest.TestCase):
    def test_a_module_not_found_first(self):
        run = run_of(collect_errors=[{"nodeid": "t.py",
                                      "message": "E   ModuleNotFoundError: No module named 'calc.ops'"}],
                     messages={"t.py::a": "ImportError: cannot import name 'add' from 'calc' (/w/calc.py)"})
        self.assertEqual(testrun.failure_cause(run), "module not found: calc.ops")

    def test_a_name_that_cannot_be_imported(self):
        run = run_of(messages={"t.py::a": "ImportError: cannot import name 'add' from 'calc' (/w/calc.py)"})
        self.assertEqual(testrun.failure_cause(run), "import error: cannot import name 'add' from 'calc'")

    def test_the_runners_own_output_only_when_it_did_not_start(self):
        output = "Traceback ...\nModuleNotFoundError: No module named 'pytest'\n"
        self.assertIsNone(testrun.failure_cause(run_of(output=output)))
        self.assertEqual(testrun.failure_cause(run_of(output=output, started=False)), "module not found: pytest")

    def test_ids_pytest_could_not_find_relative_to_the_root(self):
        output = ("ERROR: not found: /w/repo/tests/test_a.py::test_x[1700000000]\n(no match in any of [<Module>])\n"
                  "ERROR: not found: /w/repo/tests/test_a.py::test_y\n"
                  "ERROR: not found: /w/repo/tests/test_a.py::test_y\n")
        self.assertEqual(testrun.failure_cause(run_of(output=output), "/w/repo/"),
                         "test id not found, so pytest ran no test: tests/test_a.py::test_x[1700000000] (and 1 more)")
        self.assertEqual(testrun.failure_cause(run_of(output=output.split("\n", 1)[0])),
                         "test id not found, so pytest ran no test: /w/repo/tests/test_a.py::test_x[1700000000]")

    def test_capture_files_go_to_the_grader_s_mount_only(self):
        from unittest import mock
        with mock.patch.object(testrun.os.path, "ismount", lambda p: p == testrun.CAPTURE_DIR):
            self.assertEqual(testrun.capture_dir(), "/run/beyondswe-capture")
        with mock.patch.object(testrun.os.path, "ismount", lambda p: False):
            self.assertIsNone(testrun.capture_dir())

    def test_nothing_to_say(self):
        self.assertIsNone(testrun.failure_cause(run_of(messages={"t.py::a": "assert 1 == 2"})))

    def test_doc2repo_summary_names_tests_and_last_lines_only(self):
        run = run_of(outcomes={"tests/test_b.py::t": "failed", "tests/test_a.py::t": "passed"},
                     collect_errors=[{"nodeid": "tests/test_c.py",
                                      "message": "def hidden_helper():\n    secret = 42\nE   ImportError: boom\n"}])
        summary = testrun.doc2repo_summary(run)
        lines = summary.splitlines()
        self.assertEqual(lines[:2], ["passed tests/test_a.py::t", "failed tests/test_b.py::t"])
        self.assertIn("collect error tests/test_c.py:", lines[2])
        self.assertIn("ImportError: boom", lines[2])
        self.assertNotIn("secret", summary)
        self.assertEqual(len(lines), 3)


if __name__ == "__main__":
    unittest.main()
