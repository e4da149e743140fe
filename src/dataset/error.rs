//! Why a dataset, or one item of it, could not be read.

use super::seen::Duplicate;
use crate::convert::ConvertError;
use crate::record::JsonlError;
use std::path::PathBuf;
use thiserror::Error;

/// Why a dataset (or one item of it) could not be read.
#[derive(Debug, Error)]
pub enum DatasetError {
    /// The JSONL file could not be read, or a line in it is not a valid record.
    #[error(transparent)]
    Jsonl(#[from] JsonlError),
    /// A Harbor task directory could not be read back, the tasks directory could not be listed,
    /// or a record names a bad test-suite file.
    #[error(transparent)]
    Convert(#[from] ConvertError),
    /// The dataset holds no instance with the requested id.
    #[error("{dataset}: no instance `{id}`{hint}")]
    UnknownInstance {
        /// The JSONL file or task directory searched.
        dataset: PathBuf,
        /// The instance id asked for.
        id: String,
        /// The id that differs only in case, as a suggestion; empty when there is none.
        hint: String,
    },
    /// Two items share an `instance_id`.
    #[error(transparent)]
    Duplicate(#[from] Duplicate),
    /// The Parquet file could not be read, or a row in it is not a valid record.
    #[error(transparent)]
    Parquet(#[from] super::parquet::ParquetError),
    /// A Hugging Face Hub name that the local cache does not hold.
    #[error(transparent)]
    Hub(#[from] super::hub::HubError),
}
