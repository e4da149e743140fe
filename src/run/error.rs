//! Why a run could not start or stopped: each library error it passes on, unchanged, and why
//! runs do not merge ([`MergeError`]).

use crate::calibration::CalibrationError;
use crate::dataset::DatasetError;
use crate::record::{JsonlError, RecordError};
use crate::report::StoreError;
use crate::sandbox::SandboxError;
use crate::submission::{IngestError, SubmissionError};
use std::path::PathBuf;
use thiserror::Error;

/// Why a run, calibration, verification, single grading, reconstruction or image build did not
/// start or end; [`is_infrastructure`](RunError::is_infrastructure) tells the machinery's failures
/// from the input's.
#[derive(Debug, Error)]
pub enum RunError {
    /// The dataset (a JSONL file or Harbor task directories) could not be read.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// The calibration file given to the run could not be read.
    #[error(transparent)]
    Calibration(#[from] CalibrationError),
    /// The predictions or agent output could not be read as a whole.
    #[error(transparent)]
    Ingest(#[from] IngestError),
    /// A patch file or directory the run reads failed its checks before grading (not a file,
    /// over the limit, unreadable), or a build context could not be read.
    #[error(transparent)]
    Submission(#[from] SubmissionError),
    /// A calibration's flaky test ids could not be taken off a record's test lists.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// Reading a JSONL file (a release).
    #[error(transparent)]
    Jsonl(#[from] JsonlError),
    /// The results store could not be opened, read or written (another dataset's store without
    /// `force`, a full disk, ...).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The container engine is unreachable, or a request to it outside a grading failed.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// Building a Harbor task's `environment/` failed.
    #[error("building {dir}: {source}")]
    Environment {
        /// The task's `environment/` directory.
        dir: PathBuf,
        /// What the engine reported.
        #[source]
        source: SandboxError,
    },
    /// An image build context without a Dockerfile.
    #[error("{}: no Dockerfile in the build context", .0.display())]
    NoDockerfile(PathBuf),
    /// Building an image (`image build`) failed.
    #[error("building {} as {tag}: {source}", context.display())]
    Image {
        /// The build context directory.
        context: PathBuf,
        /// The tag the image was to get.
        tag: String,
        /// What the engine reported.
        #[source]
        source: SandboxError,
    },
    /// The engine went away while a transcript's edits were replayed.
    #[error("replaying {instance}: {source}")]
    Replay {
        /// The instance whose edits were being replayed.
        instance: String,
        /// What the engine reported.
        #[source]
        source: SandboxError,
    },
    /// Runs that do not merge.
    #[error(transparent)]
    Merge(#[from] MergeError),
    /// The run already holds another model's verdicts: grading these submissions into it would
    /// mix two models in one report.
    #[error(
        "{}: this run holds the verdicts of {theirs}; grading {ours} into it would mix models in \
         one report: choose another --run-id (or --force to mix them)",
        run_dir.display()
    )]
    OtherModel {
        /// The run's directory.
        run_dir: PathBuf,
        /// The models already in it, quoted and joined.
        theirs: String,
        /// The models of these submissions, quoted and joined.
        ours: String,
    },
    /// A Harbor jobs directory given to a parity experiment holds no trial.
    #[error("{}: no Harbor trial there (no */result.json with task_name and trial_name)", .0.display())]
    NoTrials(PathBuf),
    /// Harbor could not be run (`grade --via-harbor`).
    #[error("harbor: {0}")]
    Harbor(String),
    /// `--ids` named no instance of the dataset: nothing would be graded. Refused before any
    /// run directory is made.
    #[error("--ids names no instance of {}: {}", dataset.display(), .missing.join("; "))]
    NoInstanceInScope {
        /// The dataset as given.
        dataset: PathBuf,
        /// Each id given, with the closest ids the dataset has where one is close.
        missing: Vec<String>,
    },
    /// No instance image of the run could be had: each named with why its pull failed. Refused
    /// before any run directory is made.
    #[error("{}", unavailable_message(.0))]
    ImagesUnavailable(Vec<(String, SandboxError)>),
    /// Writing a report file (the message names it). Not transparent: the I/O error itself
    /// must stay in the chain, where a full disk is told apart.
    #[error("{0}")]
    Write(#[from] std::io::Error),
    /// The async runtime the engine work runs on could not be started (its threads could not be
    /// spawned).
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The run (or calibration) stopped part-way: the store could not be written; what was
    /// graded is kept.
    #[error("the {what} stopped; every grading written so far is kept in {}", run_dir.display())]
    Stopped {
        /// What stopped: "run" or "calibration".
        what: &'static str,
        /// The run's directory, where its store keeps the gradings written so far.
        run_dir: PathBuf,
        /// Why it stopped.
        #[source]
        source: Box<RunError>,
    },
}

/// One line per image that could not be had, each with its hint (once per kind of failure).
fn unavailable_message(failed: &[(String, SandboxError)]) -> String {
    let mut text = format!(
        "no instance image of the run could be had ({}):",
        failed.len()
    );
    for (_, e) in failed {
        text.push_str(&format!("\n  {e}"));
    }
    for h in SandboxError::distinct_hints(failed.iter().map(|(_, e)| e)) {
        text.push_str(&format!("\nhint: {h}"));
    }
    text
}

impl RunError {
    /// A failure of the machinery (the engine, the runtime, a full disk), not of the input.
    pub fn is_infrastructure(&self) -> bool {
        match self {
            RunError::Sandbox(_)
            | RunError::Environment { .. }
            | RunError::Replay { .. }
            | RunError::Image { .. }
            | RunError::Runtime(_) => true,
            RunError::Write(e) => matches!(
                e.kind(),
                std::io::ErrorKind::StorageFull
                    | std::io::ErrorKind::FileTooLarge
                    | std::io::ErrorKind::QuotaExceeded
            ),
            RunError::Stopped { source, .. } => source.is_infrastructure(),
            RunError::ImagesUnavailable(failed) => !failed.iter().all(|(_, e)| e.is_users()),
            _ => false,
        }
    }
}

/// Why runs do not merge.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A directory given is not a finished run.
    #[error("{}: {why}", run.display())]
    NotARun {
        /// The directory.
        run: PathBuf,
        /// What is missing.
        why: String,
    },
    /// Two parts differ in what they graded or how.
    #[error(
        "{}: another {what} than {} ({theirs} there, {ours} here): runs merge only when they grade the same submissions of the same dataset with the same options and grader",
        run.display(),
        first.display()
    )]
    Differs {
        /// The part that differs.
        run: PathBuf,
        /// The first part, which the others are held to.
        first: PathBuf,
        /// `dataset`, `submissions`, `options` or `grader version`.
        what: &'static str,
        /// The first part's value.
        theirs: String,
        /// This part's value.
        ours: String,
    },
    /// A split run is not whole, or a part is given twice, or whole and split runs are mixed.
    #[error("{0}")]
    Shards(String),
    /// Two parts hold different verdicts of the same grading.
    #[error(
        "`{label}` was graded in both {} and {}, with different resume keys (another submission, image or suite): merge runs of disjoint gradings",
        a.display(),
        b.display()
    )]
    Conflict {
        /// The grading (`id` or `id@N`).
        label: String,
        /// The first run holding it.
        a: PathBuf,
        /// The second.
        b: PathBuf,
    },
    /// The output directory already holds a run.
    #[error("{}: already holds a run (results.jsonl); choose a new directory", .0.display())]
    OutExists(PathBuf),
    /// The output path holds something else than an empty directory.
    #[error(
        "{}: already exists and is not an empty directory; a merge is written whole into a new \
         (or empty) directory",
        .0.display()
    )]
    OutNotEmpty(PathBuf),
}
