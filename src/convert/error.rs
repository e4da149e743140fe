//! Errors of the record ⇄ Harbor converters; each names the instance or path it is about.

use crate::record::RecordError;
use std::path::PathBuf;
use thiserror::Error;

/// Why one record could not become a task directory, or one task directory a record.
#[derive(Debug, Error)]
pub enum ConvertError {
    /// The instance id cannot name a task directory (empty, a path separator, `..`).
    #[error("instance `{id}`: the id cannot be a directory name: {reason}")]
    InvalidInstanceId {
        /// The instance id as the record gives it.
        id: String,
        /// What makes it unusable.
        reason: &'static str,
    },
    /// The record names no image to run the task in.
    #[error("instance `{id}`: no image (expected a non-empty `image` or `image_url` field)")]
    MissingImage {
        /// The instance id.
        id: String,
    },
    /// A Doc2Repo record whose hidden test suite is not where it should be.
    #[error("instance `{id}`: Doc2Repo test suite {what}")]
    MissingTestSuite {
        /// The instance id.
        id: String,
        /// What is wrong with the suite (not found, not a file), as one phrase.
        what: String,
    },
    /// A record's `test_suite` is not a bare zip file name.
    #[error(
        "{place}: `test_suite` is `{name}`: {reason}; give the zip's file name only (the zip goes in the --test-suites directory)"
    )]
    SuiteName {
        /// Where the record is (`file:line` or the task directory).
        place: String,
        /// The `test_suite` value.
        name: String,
        /// Why it is refused (a path, a parent reference).
        reason: &'static str,
    },
    /// Two ids of one dataset map to the same task directory name.
    #[error(
        "instance `{id}`: its task directory {path} holds instance `{other}` (the two ids differ only in case or in characters Harbor cannot use in a directory name)"
    )]
    TaskDirTaken {
        /// The instance being written.
        id: String,
        /// The instance the directory already holds.
        other: String,
        /// The task directory.
        path: PathBuf,
    },
    /// A Doc2Repo reference repository (`solution/repo.tar`) could not be read or packed.
    #[error("instance `{id}`: reference solution {path}: {message}")]
    Solution {
        /// The instance id.
        id: String,
        /// The reference repository.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The task directory exists and `--force` was not given.
    #[error("{path}: already exists (pass --force to replace it)")]
    TaskExists {
        /// The existing task directory.
        path: PathBuf,
    },
    /// A file or directory could not be read or written.
    #[error(transparent)]
    Io(#[from] crate::errors::PathError),
    /// A directory read as a task lacks one of a task's fixed files.
    #[error("{path}: not a Harbor task directory: {missing} is missing")]
    NotATaskDir {
        /// The directory.
        path: PathBuf,
        /// The missing file (`task.toml`, `instruction.md`).
        missing: &'static str,
    },
    /// A file of a task directory is a link (or lies under one) that leads out of the task:
    /// reading it would put a host file into the record, the suite or a container.
    #[error(
        "{}: a link out of the task directory (to {}); task files are read only from inside it",
        path.display(),
        target.display()
    )]
    LinkOutOfTask {
        /// The file as the task names it.
        path: PathBuf,
        /// Where it leads.
        target: PathBuf,
    },
    /// `task.toml` is not valid TOML or does not fit Harbor's task schema.
    #[error("{path}: {source}")]
    TaskToml {
        /// The `task.toml` file.
        path: PathBuf,
        /// The parser's error, with its line and column.
        #[source]
        source: Box<toml::de::Error>,
    },
    /// A JSON file of the task (`tests/test_config.json`, `tests/instance.json`) is not readable
    /// JSON of the expected shape.
    #[error("{path}: {message}")]
    Json {
        /// The JSON file.
        path: PathBuf,
        /// The parser's message, with the place in the file.
        message: String,
    },
    /// What a task directory holds does not make a valid record.
    #[error("{path}: {source}")]
    Record {
        /// The task directory.
        path: PathBuf,
        /// The field that is wrong and why.
        #[source]
        source: RecordError,
    },
    /// Two tasks bundle different test suites under one file name.
    #[error(
        "{path}: test suite `{name}` would overwrite a different file with the same name from another task"
    )]
    SuiteCollision {
        /// The task directory whose suite collides.
        path: PathBuf,
        /// The suite's file name.
        name: String,
    },
}

pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ConvertError {
    let path = path.into();
    move |source| ConvertError::Io(crate::errors::PathError::new(path, source))
}
