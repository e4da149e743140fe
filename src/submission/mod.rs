//! What an agent produced: a patch, or (Doc2Repo) a whole repository tree, in two shapes.
//! [`Submitted`] is what was found (a patch's bytes in a predictions line or an agent's output, a
//! patch file a person named, a repository's path); [`read_submission`] reads it, within the
//! [`ReadLimits`], into the [`Submission`] that is graded. A submission that cannot be read
//! becomes [`Submission::Unreadable`] with the reason: that submission's `unresolved` verdict,
//! not the end of the run.
//!
//! Reads repository trees from a directory or a `.tar`, `.tar.gz`/`.tgz` or `.zip` archive,
//! safely: absolute paths, `..`, links escaping the root, device files and hard links are refused,
//! and expansion is capped (zip bombs). Reads what agents write (agents/: predictions, SWE-agent,
//! OpenHands, Claude Code and Codex transcripts, Harbor jobs, …), captures workspaces
//! (capture.rs), and rebuilds a patch from a transcript's edits in a container (replay.rs).
//!
//! Files:
//! - `agents/`: What third-party agents write, turned into submissions (`Ingested`, each with what
//!   was `Submitted`, if anything).
//! - `capture.rs`: `capture`: a binary-safe diff of a workspace against its base commit, for agents
//!   that never write a patch (Claude Code, Codex, …).
//! - `predictions.rs`: SWE-bench-style predictions: `instance_id`, `model_name_or_path`,
//!   `model_patch`, as JSONL, a JSON list, or a JSON object keyed by instance id.
//! - `read.rs`: Reading a submission from disk, within the read limits every caller passes
//!   (`ReadLimits`: `--max-patch-mb`, `--max-repo-mb`).
//! - `replay.rs`: Rebuilding a patch from a transcript.
//! - `tree.rs`: Repository trees read safely from directories and archives.

pub mod agents;
mod capture;
mod predictions;
mod read;
pub mod replay;
mod tree;

pub use agents::{
    Action, ActionKind, Agent, AgentFormat, Chunk, EditOp, EditOutcome, FileEdit, Ingest,
    IngestError, IngestOptions, Ingested, OpaqueEdit, Trajectory, TrajectoryBuilder,
    TrajectoryShape, TranscriptError, Unread, agent_file_name, apply_chunks, classify_record,
    detect, ingest, ingest_with, instance_from_file_name, is_openhands_events, is_subagent_file,
    openhands_events, read_transcript, read_transcripts, shape_of, shell_join, sniff,
    transcript_from_values,
};
pub use capture::{CaptureError, CaptureOptions, Captured, capture};
pub use predictions::{
    Prediction, PredictionsError, PredictionsRead, read_predictions, read_predictions_keeping_going,
};
pub use read::{
    DEFAULT_MAX_PATCH_BYTES, ReadLimits, Submitted, check_patch_file, read_patch, read_submission,
};
pub use tree::{
    Blob, DEFAULT_MAX_TREE_BYTES, EntryKind, RepoTree, TreeEntry, TreeLimits, read_tree,
};

use std::path::PathBuf;
use thiserror::Error;

/// A graded submission.
#[derive(Debug, Clone)]
pub enum Submission {
    /// A unified diff, as bytes (binary patches and non-UTF-8 content are kept as they are).
    Patch(Vec<u8>),
    /// A repository tree to place in the workdir (Doc2Repo).
    Tree(RepoTree),
    /// What was submitted could not be read (an unsafe archive, a patch over the size limit, a
    /// repository for an issue task): graded `unresolved` without a container, with this reason.
    Unreadable(String),
}

impl Submission {
    /// A patch that is empty or only white space.
    pub fn is_empty_patch(&self) -> bool {
        matches!(self, Submission::Patch(p) if p.iter().all(u8::is_ascii_whitespace))
    }
}

/// Why a submission (a patch file or a Doc2Repo repository) could not be read; each names the file
/// or directory.
#[derive(Debug, Error)]
pub enum SubmissionError {
    /// Opening or reading a file or directory failed (missing, no permission, ...).
    #[error(transparent)]
    Io(#[from] crate::errors::PathError),
    /// A repository entry that could write outside the workdir or be misread is refused: an
    /// absolute path, `..`, a link leaving the tree, a device file or hard link, a path twice.
    #[error("{path}: refused entry `{entry}`: {reason}")]
    Unsafe {
        /// The repository (directory or archive).
        path: PathBuf,
        /// The entry's path as the repository spells it.
        entry: String,
        /// Why it is refused.
        reason: String,
    },
    /// A repository expands beyond [`TreeLimits`] (`--max-repo-mb`, or the entry count).
    #[error("{path}: {message}")]
    TooLarge {
        /// The repository (directory or archive).
        path: PathBuf,
        /// The limit it went over, and how to raise it.
        message: String,
    },
    /// A patch file that cannot be read (`--max-patch-mb`, not a regular file).
    #[error(transparent)]
    PatchFile(#[from] crate::patch::PatchFileError),
    /// A patch file named by a person that is not a diff.
    #[error("{path}: not a unified diff: {source}")]
    NotADiff {
        /// The patch file.
        path: PathBuf,
        /// Why [`crate::patch::parse`] refused it.
        #[source]
        source: crate::patch::PatchError,
    },
    /// A repository for an instance whose submission is a patch.
    #[error("`model_repo` is for Doc2Repo instances; `{instance}` is {family}")]
    RepoNotDoc2Repo {
        /// The instance the repository was submitted for.
        instance: String,
        /// Its family (not Doc2Repo).
        family: crate::record::Family,
    },
    /// An archive that is corrupt or truncated, or whose contents could not be spooled to a
    /// temporary file.
    #[error("{path}: not a readable archive: {message}")]
    BadArchive {
        /// The archive.
        path: PathBuf,
        /// What the archive reader (or the spool) reported.
        message: String,
    },
    /// A repository path that is neither a directory nor a file with a known archive extension.
    #[error("{path}: not a directory or a .tar, .tar.gz, .tgz or .zip archive")]
    UnknownKind {
        /// The path given as a repository.
        path: PathBuf,
    },
}
