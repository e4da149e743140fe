//! Why a run could not start or stopped: each library error it passes on, unchanged.

use crate::calibration::CalibrationError;
use crate::dataset::DatasetError;
use crate::record::{JsonlError, RecordError};
use crate::report::StoreError;
use crate::sandbox::SandboxError;
use crate::submission::{IngestError, SubmissionError};
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum RunError {
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    #[error(transparent)]
    Calibration(#[from] CalibrationError),
    #[error(transparent)]
    Ingest(#[from] IngestError),
    #[error(transparent)]
    Submission(#[from] SubmissionError),
    #[error(transparent)]
    Record(#[from] RecordError),
    /// Reading a JSONL file (a release).
    #[error(transparent)]
    Jsonl(#[from] JsonlError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// Building a Harbor task's `environment/` failed.
    #[error("building {dir}: {source}")]
    Environment {
        dir: PathBuf,
        #[source]
        source: SandboxError,
    },
    /// An image build context without a Dockerfile.
    #[error("{}: no Dockerfile in the build context", .0.display())]
    NoDockerfile(PathBuf),
    /// Building an image (`image build`) failed.
    #[error("building {} as {tag}: {source}", context.display())]
    Image {
        context: PathBuf,
        tag: String,
        #[source]
        source: SandboxError,
    },
    /// The engine went away while a transcript's edits were replayed.
    #[error("replaying {instance}: {source}")]
    Replay {
        instance: String,
        #[source]
        source: SandboxError,
    },
    /// Writing a report file (the message names it). Not transparent: the I/O error itself
    /// must stay in the chain, where a full disk is told apart.
    #[error("{0}")]
    Write(#[from] std::io::Error),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The run (or calibration) stopped part-way: the store could not be written; what was
    /// graded is kept.
    #[error("the {what} stopped; every grading written so far is kept in {}", run_dir.display())]
    Stopped {
        what: &'static str,
        run_dir: PathBuf,
        #[source]
        source: Box<RunError>,
    },
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
            _ => false,
        }
    }
}
