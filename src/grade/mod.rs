//! Grading one submission: sandbox → prepare (once per instance) → one run of the in-container
//! verifier (`adapters/beyondswe_verifier/verify.py`: apply, scrub, restore, canaries, tests as an unprivileged
//! user, decide) → its one JSON result → the verdict. Harbor's `test.sh` runs the same verifier.
//!
//! Driven from the host through a [`crate::sandbox::Sandbox`]; whole runs (many submissions, a
//! results store, resume) are `crate::run`'s, and nothing here knows of them.
//!
//! Files:
//! - `pipeline.rs`: Grading one submission, the host's side.
//! - `pipeline_tests.rs`: What the host side of a grading decides, over a scripted engine.
//! - `result.rs`: The in-container verifier's one JSON result (`adapters/beyondswe_verifier/verify.py`), read back
//!   through the engine from a directory only root can reach, and how it becomes a `Verdict`.
//! - `traced.rs`: A `Sandbox` that reports what it does: each container started, committed and
//!   removed, as `debug` tracing events (`-vv`), around any backend.
//! - `verdict.rs`: The verdict: what `grade-one --json` prints and what runs store, one per
//!   submission.

mod pipeline;
mod result;
mod traced;
mod verdict;

pub use pipeline::{
    Checked, GradeInput, GradeOptions, HostChecked, forgery_signs, gold_check_for, grade,
    host_checks, no_gold_check, note_crlf,
};
pub use result::{VerifierResult, test_outcome};
pub use traced::Traced;
pub use verdict::{
    Canary, CanaryPlan, Flags, Logs, Outcome, Reason, SampleVersusRest, SplitConfirmed,
    StaticEvidence, StaticHit, SuiteResult, TestOutcome, Verdict,
};
