//! The BeyondSWE dataset record: every field variant, task families, test-id encodings, and
//! streaming JSONL reading and writing with line-numbered errors.
//!
//! Synchronous and free of any Harbor or container knowledge.

mod error;
mod family;
mod fields;
mod jsonl;
mod model;

pub use error::RecordError;
pub use family::{Family, TaskKind};
pub use fields::{PreCommands, RecordFields, TestIds};
pub(crate) use jsonl::read_to_string_limited;
pub use jsonl::{
    JsonLines, JsonlError, JsonlWriter, RecordReader, line_too_long_message, max_line_bytes,
    read_line_capped, read_line_or_stop, read_text_capped, read_whole_capped, records_from_str,
};
pub use model::{DEFAULT_WORKDIR, Record, RepoRef, parse_issue_instance_id, snippet};
