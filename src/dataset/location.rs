//! Where an item of a dataset is: a JSONL file's line, a Parquet file's row or a Harbor task
//! directory, as errors and duplicate checks name it.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Where an item of a dataset is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A line of a JSONL file, shown as `file:line`.
    Line {
        /// The JSONL file.
        file: Arc<Path>,
        /// The line, counting from 1.
        line: u64,
    },
    /// A Harbor task directory, shown as its path.
    TaskDir(Arc<Path>),
    /// A row of a Parquet file, shown as `file row N`.
    Row {
        /// The Parquet file.
        file: Arc<Path>,
        /// The row, counting from 1.
        row: u64,
    },
}

impl Location {
    /// The file or directory the item is in: the JSONL file, or the task directory.
    pub fn path(&self) -> &Path {
        match self {
            Location::Line { file, .. } | Location::Row { file, .. } => file,
            Location::TaskDir(dir) => dir,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line { file, line } => write!(f, "{}:{line}", file.display()),
            Location::TaskDir(dir) => write!(f, "{}", dir.display()),
            Location::Row { file, row } => write!(f, "{} row {row}", file.display()),
        }
    }
}
