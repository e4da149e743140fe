#![warn(missing_docs)]
//! beyondswe: convert, grade and audit runs of the BeyondSWE code-agent benchmark.
//!
//! The library holds everything; the `beyondswe` binary is a thin CLI over it. Formats
//! (`record`, `harbor`, `patch`) are synchronous and independent of containers.

/// How long a test run or an image build may take by default: 30 minutes, as in the official
/// harness (`--timeout`, `test_timeout_sec`, `build_timeout_sec`).
pub const DEFAULT_TIMEOUT_SECS: u64 = 1800;

pub mod adapters;
pub mod audit;
pub mod base64;
pub mod calibration;
pub mod convert;
pub mod dataset;
pub mod errors;
pub mod files;
pub mod grade;
pub mod harbor;
pub mod patch;
pub mod record;
pub mod report;
pub mod restore_rules;
pub mod run;
pub mod sandbox;
pub mod schema;
pub mod submission;
pub mod text;
pub mod validate;
pub mod verifier_spec;
