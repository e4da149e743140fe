//! What the host side of a grading decides, over a scripted engine: every way a grading can end
//! before, during or after the verifier's run, each with its verdict and reason, and the
//! container removed on every path. The verifier's own decisions are tested in real containers
//! (`tests/it/verifier.rs`, `tests/it/adversarial.rs`).

#![allow(clippy::unwrap_used)]

use super::*;
use crate::grade::TestOutcome;
use crate::grade::result::RESULT_FORMAT;
use crate::sandbox::scripted::{OnStart, Scripted, output};

const IMAGE: &str = "fake/calc:1";
const PATCH: &[u8] = b"--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-a\n+b\n";
/// A piece of the verifier's command line.
const VERIFIER: &str = "import beyondswe_verify as v";

fn record(family: &str) -> Record {
    Record::from_value(serde_json::json!({
        "instance_id": "acme__calc_pr7", "task": family, "image": IMAGE, "base_commit": "abc",
        "FAIL_TO_PASS": ["tests/test_calc.py::test_add"], "PASS_TO_PASS": [],
        "test_suite_num": 3,
    }))
    .unwrap()
}

fn result(verdict: &str, reason: &str) -> String {
    serde_json::json!({"format": RESULT_FORMAT, "verdict": verdict, "reason": reason,
        "score": if verdict == "resolved" { 1.0 } else { 0.0 },
        "fail_to_pass": {"tests/test_calc.py::test_add": if verdict == "resolved" { "passed" } else { "failed" }}})
    .to_string()
}

fn grade_with(engine: &Scripted, record: &Record, submission: &Submission) -> Verdict {
    let input = GradeInput {
        record,
        submission,
        test_suite: None,
        image_override: None,
    };
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(grade(engine, input, &GradeOptions::default()))
}

fn grade_patch(engine: &Scripted, patch: &[u8]) -> Verdict {
    grade_with(
        engine,
        &record("CrossRepo"),
        &Submission::Patch(patch.to_vec()),
    )
}

/// Every container started was removed.
fn all_removed(engine: &Scripted) {
    assert_eq!(
        engine.count("start"),
        engine.count("remove"),
        "{:#?}",
        engine.journal()
    );
}

#[test]
fn the_verifiers_result_is_the_verdict_and_the_prepared_image_is_made_once() {
    let engine = Scripted::new().image(IMAGE).on_exec(
        VERIFIER,
        output(Some(0), &result("resolved", "all_tests_passed"), false),
    );
    let v = grade_patch(&engine, PATCH);
    assert_eq!(
        (v.verdict, v.reason),
        (Outcome::Resolved, Reason::AllTestsPassed)
    );
    assert_eq!(
        v.fail_to_pass["tests/test_calc.py::test_add"],
        TestOutcome::Passed
    );
    assert!(
        v.prepared_image
            .as_deref()
            .is_some_and(|t| t.starts_with("beyondswe-prepared:"))
    );
    let again = grade_patch(&engine, PATCH);
    assert_eq!(again.verdict, Outcome::Resolved);
    assert_eq!(engine.count("commit"), 1, "{:#?}", engine.journal());
    assert_eq!(engine.count("exec sh -c mkdir"), 1, "prepared once");
    all_removed(&engine);
}

/// The verifier's ends the host sees: a timeout, the kernel's OOM killer, no result, garbage,
/// a reason this build does not know, and the verifier's own unresolved reasons passed on.
#[test]
fn each_way_the_verifier_can_end_has_its_verdict() {
    let cases: Vec<(&str, Scripted, Outcome, Reason)> = vec![
        (
            "timed out",
            Scripted::new()
                .image(IMAGE)
                .on_exec(VERIFIER, output(None, "", true)),
            Outcome::Unresolved,
            Reason::Timeout,
        ),
        (
            "timed out, out of memory",
            Scripted::new()
                .image(IMAGE)
                .on_exec(VERIFIER, output(None, "", true))
                .oom_killed(),
            Outcome::Unresolved,
            Reason::OutOfMemory,
        ),
        (
            "no result",
            Scripted::new()
                .image(IMAGE)
                .on_exec(VERIFIER, output(Some(1), "", false)),
            Outcome::Error,
            Reason::VerifierFailed,
        ),
        (
            "not JSON",
            Scripted::new().image(IMAGE).on_exec(
                VERIFIER,
                output(Some(0), "5 passed\n<pytest>true</pytest>", false),
            ),
            Outcome::Error,
            Reason::VerifierFailed,
        ),
        (
            "an unknown reason",
            Scripted::new().image(IMAGE).on_exec(
                VERIFIER,
                output(Some(0), &result("resolved", "trust_me"), false),
            ),
            Outcome::Error,
            Reason::VerifierFailed,
        ),
        (
            "the channel and JUnit disagree",
            Scripted::new().image(IMAGE).on_exec(
                VERIFIER,
                output(Some(0), &result("unresolved", "results_disagree"), false),
            ),
            Outcome::Unresolved,
            Reason::ResultsDisagree,
        ),
        (
            "a forgery proven",
            Scripted::new().image(IMAGE).on_exec(
                VERIFIER,
                output(Some(0), &result("unresolved", "forgery_detected"), false),
            ),
            Outcome::Unresolved,
            Reason::ForgeryDetected,
        ),
    ];
    for (name, engine, outcome, reason) in cases {
        let v = grade_patch(&engine, PATCH);
        assert_eq!(
            (v.verdict, v.reason),
            (outcome, reason),
            "{name}: {}",
            v.logs.error
        );
        if outcome != Outcome::Resolved {
            assert_eq!(v.score, 0.0, "{name}");
        }
        all_removed(&engine);
    }
}

/// What the host refuses before any container starts, and what the engine and the prepare step
/// can end a grading with.
#[test]
fn refusals_and_infrastructure_failures_have_their_verdicts() {
    let started_nothing =
        |engine: &Scripted| assert_eq!(engine.count("start"), 0, "{:#?}", engine.journal());
    let engine = Scripted::new().image(IMAGE);
    let v = grade_patch(&engine, b"this is not a diff\n");
    assert_eq!(
        (v.verdict, v.reason),
        (Outcome::Unresolved, Reason::PatchFailed)
    );

    let v = grade_patch(&engine, b"");
    assert_eq!(
        (v.verdict, v.reason),
        (Outcome::Unresolved, Reason::EmptyPatch)
    );
    started_nothing(&engine);

    let git = b"--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n";
    let v = grade_patch(&engine, git);
    assert_eq!(
        (v.verdict, v.reason),
        (Outcome::Unresolved, Reason::PatchFailed)
    );
    assert!(v.logs.error.contains(".git"), "{}", v.logs.error);

    let missing = Scripted::new();
    let v = grade_patch(&missing, PATCH);
    assert_eq!(
        (v.verdict, v.reason),
        (Outcome::Error, Reason::ImageMissing)
    );
    started_nothing(&missing);

    let unreachable = Scripted::new().image(IMAGE).on_start(
        "fake/",
        OnStart::Fail(|| SandboxError::EngineUnreachable {
            endpoint: "unix:///x".into(),
            message: "gone".into(),
        }),
    );
    let v = grade_patch(&unreachable, PATCH);
    assert_eq!(
        (v.verdict, v.reason),
        (Outcome::Error, Reason::EngineUnreachable)
    );

    let checkout = Scripted::new().image(IMAGE).on_exec(
        "checkout -q -f",
        output(Some(128), "fatal: bad object abc", false),
    );
    let v = grade_patch(&checkout, PATCH);
    assert_eq!(
        (v.verdict, v.reason),
        (Outcome::Error, Reason::PrepareFailed)
    );
    assert_eq!(checkout.count("commit"), 0, "a failed prepare is not kept");
    all_removed(&checkout);

    let leak = Scripted::new().image(IMAGE).on_exec(
        "strip_history.sh",
        output(Some(3), "a newer commit is reachable", false),
    );
    let v = grade_patch(&leak, PATCH);
    assert_eq!((v.verdict, v.reason), (Outcome::Error, Reason::HistoryLeak));
    all_removed(&leak);

    let no_suite = Scripted::new().image(IMAGE);
    let v = grade_with(
        &no_suite,
        &record("Doc2Repo"),
        &Submission::Patch(PATCH.to_vec()),
    );
    assert_eq!(
        (v.verdict, v.reason),
        (Outcome::Error, Reason::TestSuiteMissing)
    );
    all_removed(&no_suite);
}
