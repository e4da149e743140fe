//! Errors of the record ⇄ Harbor converters; each names the instance or path it is about.

use crate::record::RecordError;
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ConvertError {
    #[error("instance `{id}`: the id cannot be a directory name: {reason}")]
    InvalidInstanceId { id: String, reason: &'static str },
    #[error("instance `{id}`: no image (expected a non-empty `image` or `image_url` field)")]
    MissingImage { id: String },
    #[error("instance `{id}`: Doc2Repo test suite {what}")]
    MissingTestSuite { id: String, what: String },
    #[error(
        "{place}: `test_suite` is `{name}`: {reason}; give the zip's file name only (the zip goes in the --test-suites directory)"
    )]
    SuiteName {
        place: String,
        name: String,
        reason: &'static str,
    },
    #[error(
        "instance `{id}`: its task directory {path} holds instance `{other}` (the two ids differ only in case or in characters Harbor cannot use in a directory name)"
    )]
    TaskDirTaken {
        id: String,
        other: String,
        path: PathBuf,
    },
    #[error("instance `{id}`: reference solution {path}: {message}")]
    Solution {
        id: String,
        path: PathBuf,
        message: String,
    },
    #[error("{path}: already exists (pass --force to replace it)")]
    TaskExists { path: PathBuf },
    #[error("{}", crate::errors::io_message(path, source))]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a Harbor task directory: {missing} is missing")]
    NotATaskDir {
        path: PathBuf,
        missing: &'static str,
    },
    #[error("{path}: {source}")]
    TaskToml {
        path: PathBuf,
        #[source]
        source: Box<toml::de::Error>,
    },
    #[error("{path}: {message}")]
    Json { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Record {
        path: PathBuf,
        #[source]
        source: RecordError,
    },
    #[error(
        "{path}: test suite `{name}` would overwrite a different file with the same name from another task"
    )]
    SuiteCollision { path: PathBuf, name: String },
}

pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ConvertError {
    let path = path.into();
    move |source| ConvertError::Io { path, source }
}
