//! The grading pipeline: plan → sandbox → prepare → apply → restore → test → verdict.
//!
//! The same steps as the Harbor `test.sh` (both use `adapters/`), driven from the host through a
//! [`crate::sandbox::Sandbox`]; results are read back through the engine and parsed here.

mod batch;
mod pipeline;
mod results;
mod verdict;

pub use batch::{Job, JobEvent, Progress, job_key, run_jobs};
pub use pipeline::{GradeInput, GradeOptions, forgery_signs, grade, suite_for};
pub use results::{Matcher, RunnerResults, junit_key, unescape};
pub use verdict::{Flags, Logs, Outcome, Reason, SuiteResult, TestOutcome, Verdict};
