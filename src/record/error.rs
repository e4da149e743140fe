//! Errors about a single record's content (not about where it was read from).

use thiserror::Error;

#[derive(Debug, Error)]
pub enum RecordError {
    #[error("expected a JSON object for the record, found {found}")]
    NotAnObject { found: &'static str },
    #[error("field `{field}`: {message}{}", .snippet.as_ref().map(|s| format!(" (value: {s})")).unwrap_or_default())]
    Field {
        field: String,
        message: String,
        snippet: Option<String>,
    },
}
