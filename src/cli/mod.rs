//! Command-line definitions (clap) and one module per subcommand.
//!
//! Arguments are parsed here and turned into library options before any work starts; the
//! subcommand modules call the library and print. Data goes to stdout, messages to stderr.
//! Subcommand modules never import one another: what several share is in `args.rs` (argument
//! groups), `progress.rs` (the progress bar), `outcome.rs` (a finished run shown) and `exit.rs`
//! (exit codes).
//!
//! Files:
//! - `args.rs`: Argument groups the grading commands share (`#[command(flatten)]`), each turned
//!   into the library's settings before any work starts.
//! - `audit.rs`: `beyondswe audit PATH`: cheating checks on every trajectory, streamed.
//! - `calibrate.rs`: `beyondswe calibrate`: grade every instance's gold patch N times and its empty
//!   patch once (its tests run).
//! - `capture.rs`: `beyondswe capture WORKSPACE --base COMMIT -o patch.diff`.
//! - `convert.rs`: `beyondswe convert to-harbor` and `convert from-harbor`.
//! - `demo.rs`: `beyondswe demo`: the main job on the bundled demo data.
//! - `examples.rs`: An example for every command's `--help`, kept in one table and put on the
//!   command tree when it is built (`command`).
//! - `exit.rs`: Exit codes, decided here and nowhere else, and how an error that ends a command is
//!   printed.
//! - `grade.rs`: `beyondswe grade`: grade a whole run in parallel, resumably, and report the
//!   paper's figures; `report` and `compare` re-render stored runs.
//! - `grade_one.rs`: `beyondswe grade-one`: grade one submission for one instance in a fresh
//!   container.
//! - `image.rs`: `beyondswe image build CONTEXT --tag TAG`: build an image through the engine API
//!   (no registry needed when the Dockerfile is `FROM` a local image such as the offline base).
//! - `ingest.rs`: `beyondswe ingest PATH -o predictions.jsonl`.
//! - `outcome.rs`: What the grading commands (`grade`, `verify`, `demo`) print when a run ends: the
//!   report's summary on stdout, where its files are on stderr, and the run's exit code.
//! - `parity.rs`: `beyondswe parity JOBS_DIR… --dataset DATASET -o DIR`.
//! - `progress.rs`: What the grading commands show while they run.
//! - `release.rs`: `beyondswe release from-harbor|to-harbor`: trajectory releases ⇄ Harbor job
//!   directories; the loops are `convert::jobs_to_release` and `convert::release_to_jobs`.
//! - `schemas.rs`: `beyondswe schemas write|check [DIR]`: the JSON Schemas generated from the Rust
//!   types.
//! - `trajectory.rs`: `beyondswe trajectory validate FILE…`: ATIF files checked as Harbor's
//!   validator checks them.
//! - `validate.rs`: `beyondswe validate DATASET`: a table of every problem; non-zero exit when any
//!   is an error.
//! - `verify.rs`: `beyondswe verify RELEASE_OR_JOBS_DIR --dataset DATASET`: grade every published
//!   patch and compare the reward the release claims with the one measured.

pub(crate) mod args;
pub(crate) mod audit;
pub(crate) mod calibrate;
pub(crate) mod capture;
pub(crate) mod convert;
pub(crate) mod demo;
pub(crate) mod examples;
pub(crate) mod exit;
pub(crate) mod grade;
pub(crate) mod grade_one;
pub(crate) mod image;
pub(crate) mod ingest;
pub(crate) mod outcome;
pub(crate) mod parity;
pub(crate) mod progress;
pub(crate) mod release;
pub(crate) mod schemas;
pub(crate) mod trajectory;
pub(crate) mod validate;
pub(crate) mod verify;

use beyondswe::text::for_terminal;
use clap::{Parser, Subcommand};
use std::io::Write;

#[derive(Debug, Parser)]
#[command(
    name = "beyondswe",
    version,
    about = "Convert, grade and audit BeyondSWE benchmark runs"
)]
pub(crate) struct Cli {
    /// More log output on stderr (-v info, -vv debug).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Convert between BeyondSWE JSONL and Harbor task directories.
    #[command(subcommand)]
    Convert(convert::ConvertCommand),
    /// Check a dataset (JSONL, Parquet, Harbor tasks directory or a cached Hugging Face name)
    /// and list every problem.
    Validate(validate::ValidateArgs),
    /// Write or check the JSON Schemas in schemas/.
    #[command(subcommand)]
    Schemas(schemas::SchemasCommand),
    /// Grade a whole run (predictions, or the gold or empty sanity runs) in parallel, resumably.
    Grade(grade::GradeArgs),
    /// Grade every instance's gold patch N times and its empty patch once, and write which
    /// instances (ok, broken, flaky, trivial) and tests can be trusted.
    Calibrate(calibrate::CalibrateArgs),
    /// Re-render a run's report from its results store (no container).
    Report(grade::ReportArgs),
    /// Compare two runs: per-family scores with Δ, and the instances that flipped.
    Compare(grade::CompareArgs),
    /// Join the parts of a run graded apart (`grade --shard K/N`) into one run directory.
    Merge(grade::MergeArgs),
    /// Grade one submission for one instance in a fresh container.
    GradeOne(grade_one::GradeOneArgs),
    /// Build, pull and prune images through the engine API.
    #[command(subcommand)]
    Image(image::ImageCommand),
    /// Turn what an agent wrote (SWE-agent, OpenHands, Harbor jobs, …) into predictions.
    Ingest(ingest::IngestArgs),
    /// Diff a workspace against its base commit (untracked and ignored files included), binary-safe.
    Capture(capture::CaptureArgs),
    /// Trajectory releases: from and to Harbor job directories.
    #[command(subcommand)]
    Release(release::ReleaseCommand),
    /// Audit trajectories for forbidden git commands and access to the task's own PR.
    Audit(audit::AuditArgs),
    /// ATIF trajectories: validate them as Harbor does.
    #[command(subcommand)]
    Trajectory(trajectory::TrajectoryCommand),
    /// Grade every published patch of a release or Harbor job and compare claimed with measured.
    Verify(verify::VerifyArgs),
    /// Harbor's parity experiment from Harbor jobs that ran: each job's rewards beside the same
    /// trials regraded offline (`parity_experiment.json`, `adapter_metadata.json`).
    Parity(parity::ParityArgs),
    /// Run the main job on the bundled demo data.
    Demo(demo::DemoArgs),
}

/// `-q`: only errors (and their hints) reach stderr.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes [`note`] print only errors and their hints from now on (`-q`).
pub(crate) fn set_quiet(quiet: bool) {
    QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
}

/// Writes one line to stderr (people-facing messages; never data), no control character of a
/// dataset's or an agent's in it reaching the terminal as one ([`for_terminal`]). With `-q`,
/// only a line that starts with `error` or `hint:` is written.
pub(crate) fn note(msg: impl std::fmt::Display) {
    let msg = msg.to_string();
    if QUIET.load(std::sync::atomic::Ordering::Relaxed)
        && !(msg.starts_with("error") || msg.trim_start().starts_with("hint:"))
    {
        return;
    }
    let _ = writeln!(std::io::stderr(), "{}", for_terminal(&msg));
}

/// Writes text to stdout (data); a closed pipe is not an error. Control characters other than
/// the newline and the tab are written as `\uXXXX` ([`for_terminal`]): the tables and reports
/// stay text, and JSON output reads back as the same strings.
pub(crate) fn out(text: impl std::fmt::Display) -> std::io::Result<()> {
    let text = text.to_string();
    let text = for_terminal(&text);
    let mut stdout = std::io::stdout().lock();
    match write!(stdout, "{text}").and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod help_tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every argument of every command says what it is for in `--help`.
    #[test]
    fn every_argument_has_help_text() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if matches!(id, "help" | "version") || arg.is_hide_set() {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "beyondswe", &mut missing);
        assert!(
            missing.is_empty(),
            "arguments without help text:\n{}",
            missing.join("\n")
        );
    }
}
