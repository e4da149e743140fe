//! The BeyondSWE dataset record: every field variant, task families, test-id encodings, and
//! streaming JSONL reading and writing with line-numbered errors.
//!
//! Synchronous and free of any Harbor or container knowledge.
//!
//! Files:
//! - `error.rs`: Errors about a single record's content (not about where it was read from).
//! - `family.rs`: Task families and the many spellings of the `task` field.
//! - `fields.rs`: The typed view of a BeyondSWE record: every field the official tooling reads, in
//!   every shape it accepts.
//! - `jsonl.rs`: Streaming JSONL: read records one line at a time in constant memory, write them
//!   atomically.
//! - `model.rs`: `Record`: one BeyondSWE instance, kept as the exact JSON object it was read from.

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
