//! Errors about a single record's content (not about where it was read from).

use thiserror::Error;

/// Why a JSON value is not a usable record.
#[derive(Debug, Error)]
pub enum RecordError {
    /// The value is not a JSON object.
    #[error("expected a JSON object for the record, found {found}")]
    NotAnObject {
        /// What it is instead ("an array", "a string", ...).
        found: &'static str,
    },
    /// One field has the wrong type or an unusable value.
    #[error("field `{field}`: {message}{}", .snippet.as_ref().map(|s| format!(" (value: {s})")).unwrap_or_default())]
    Field {
        /// The field's name in the record.
        field: String,
        /// What is wrong with it.
        message: String,
        /// The start of the offending value, when there is one worth showing.
        snippet: Option<String>,
    },
}
