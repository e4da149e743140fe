//! The dataset as the Hugging Face Hub serves it in Parquet: each row one record. A row's columns
//! become the record's fields (lists as JSON lists, structs as objects); a column that is null in
//! a row is a field the record does not have, as in the JSONL the Hub converted (its Parquet
//! copy puts a null wherever a line lacked a key). Rows are read one row group at a time.

use crate::record::{Record, RecordError};
use parquet::file::reader::SerializedFileReader;
use parquet::record::reader::RowIter;
use parquet::record::{Field, Row};
use serde_json::Value;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a Parquet file, or one row of it, could not be read.
#[derive(Debug, Error)]
pub enum ParquetError {
    /// The file cannot be opened.
    #[error(transparent)]
    Io(#[from] crate::errors::PathError),
    /// The file is not Parquet, or a page of it cannot be decoded.
    #[error("{}: not a Parquet file this reader can read: {message}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// The reader's words.
        message: String,
    },
    /// A row larger than a record may be (the JSONL reader's line cap, `BEYONDSWE_MAX_LINE_MB`).
    #[error(
        "{}: row {row}: larger than {} MiB, more than a record may be (a JSONL line is capped \
         at the same); not read",
        path.display(),
        max >> 20
    )]
    RowTooLarge {
        /// The file.
        path: PathBuf,
        /// The row, counting from 1.
        row: u64,
        /// The cap, in bytes.
        max: usize,
    },
    /// A row is not a usable record.
    #[error("{}: row {row}: {source}", path.display())]
    Row {
        /// The file.
        path: PathBuf,
        /// The row, counting from 1.
        row: u64,
        /// What is wrong with it.
        source: RecordError,
    },
}

impl ParquetError {
    /// The row of a bad record; `None` when the file itself cannot be read on.
    pub fn row(&self) -> Option<u64> {
        match self {
            ParquetError::Row { row, .. } | ParquetError::RowTooLarge { row, .. } => Some(*row),
            _ => None,
        }
    }
}

/// The records of one Parquet file, in row order, with their row numbers (from 1).
pub struct ParquetRows {
    path: PathBuf,
    rows: RowIter<'static>,
    row: u64,
    /// A decoding error ends the file: nothing after it is read.
    done: bool,
}

impl ParquetRows {
    /// Opens `path` and reads its footer.
    pub fn open(path: &Path) -> Result<ParquetRows, ParquetError> {
        let io = |source| ParquetError::Io(crate::errors::PathError::new(path.to_owned(), source));
        let file = crate::files::open_input_io(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let format = |message: String| ParquetError::Format {
            path: path.to_owned(),
            message,
        };
        // What the file declares is checked before the crate acts on it: the schema's depth
        // before it builds the schema, the pages' sizes and counts before it allocates and
        // decodes them.
        let data_end = super::parquet_layout::check_footer(&file, len).map_err(&format)?;
        let copy = file.try_clone().map_err(io)?;
        let reader = unpanicked(|| SerializedFileReader::try_from(copy))
            .map_err(&format)?
            .map_err(|e| format(e.to_string()))?;
        {
            use parquet::file::reader::FileReader;
            super::parquet_layout::check_pages(
                &file,
                data_end,
                reader.metadata(),
                crate::record::max_line_bytes() as u64,
            )
            .map_err(&format)?;
        }
        // A column named twice would become one field, the last silently winning (a second
        // `instance_id` would replace the real ids): refused.
        {
            use parquet::file::reader::FileReader;
            let mut seen = std::collections::HashSet::new();
            for field in reader
                .metadata()
                .file_metadata()
                .schema_descr()
                .root_schema()
                .get_fields()
            {
                if !seen.insert(field.name().to_owned()) {
                    return Err(format(format!(
                        "the column `{}` appears twice; which one is the record's field is not \
                         clear",
                        field.name()
                    )));
                }
            }
        }
        Ok(ParquetRows {
            path: path.to_owned(),
            rows: reader.into_iter(),
            row: 0,
            done: false,
        })
    }
}

impl Iterator for ParquetRows {
    type Item = Result<(u64, Record), ParquetError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        // The parquet crate panics on some malformed files (a column's declared start or
        // length out of range, values past their type's range): a panic ends the file as a
        // decoding error does.
        let read = unpanicked(|| self.rows.next().map(|r| r.map(|row| row_json(&row))));
        let value = match read {
            Ok(None) => return None,
            Ok(Some(Ok(value))) => Ok(value),
            Ok(Some(Err(e))) => Err(e.to_string()),
            Err(message) => Err(message),
        };
        let value = match value {
            Ok(value) => value,
            Err(message) => {
                self.done = true;
                return Some(Err(ParquetError::Format {
                    path: self.path.clone(),
                    message,
                }));
            }
        };
        self.row += 1;
        let max = crate::record::max_line_bytes();
        if text_bytes(&value) > max {
            return Some(Err(ParquetError::RowTooLarge {
                path: self.path.clone(),
                row: self.row,
                max,
            }));
        }
        let value = match value {
            Value::Object(mut map) => {
                map.retain(|_, v| !v.is_null());
                Value::Object(map)
            }
            other => other,
        };
        Some(
            Record::from_value(value)
                .map(|r| (self.row, r))
                .map_err(|source| ParquetError::Row {
                    path: self.path.clone(),
                    row: self.row,
                    source,
                }),
        )
    }
}

/// A row as a JSON object, as the crate's `to_json_value` writes it, but for a date or a time
/// stamp outside the calendar's range (the crate panics on those): that one is its number.
fn row_json(row: &Row) -> Value {
    Value::Object(
        row.get_column_iter()
            .map(|(name, field)| (name.clone(), field_json(field)))
            .collect(),
    )
}

/// One value of a row (nesting is bounded by the schema's depth, checked when the file opened).
fn field_json(field: &Field) -> Value {
    use chrono::DateTime;
    let stamp = |at: Option<DateTime<chrono::Utc>>, fmt: &str, raw: i64| {
        at.map_or(Value::from(raw), |at| {
            Value::String(at.format(fmt).to_string())
        })
    };
    match field {
        Field::Date(days) => stamp(
            DateTime::from_timestamp(i64::from(*days) * 86_400, 0),
            "%Y-%m-%d",
            i64::from(*days),
        ),
        Field::TimestampMillis(ms) => stamp(
            DateTime::from_timestamp_millis(*ms),
            "%Y-%m-%d %H:%M:%S%.3f %:z",
            *ms,
        ),
        Field::TimestampMicros(us) => stamp(
            DateTime::from_timestamp_micros(*us),
            "%Y-%m-%d %H:%M:%S%.6f %:z",
            *us,
        ),
        Field::Group(row) => row_json(row),
        Field::ListInternal(list) => Value::Array(list.elements().iter().map(field_json).collect()),
        Field::MapInternal(map) => Value::Object(
            map.entries()
                .iter()
                .map(|(key, value)| {
                    let key = match field_json(key) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, field_json(value))
                })
                .collect(),
        ),
        other => other.to_json_value(),
    }
}

/// About how many bytes a value takes as JSON text: its strings' and keys' lengths, and a few
/// for each other value (enough to hold a row to the JSONL line cap).
fn text_bytes(v: &Value) -> usize {
    let mut total = 0usize;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => total = total.saturating_add(s.len() + 2),
            Value::Array(items) => {
                total = total.saturating_add(2);
                stack.extend(items);
            }
            Value::Object(map) => {
                total = total.saturating_add(2);
                for (k, v) in map {
                    total = total.saturating_add(k.len() + 4);
                    stack.push(v);
                }
            }
            _ => total = total.saturating_add(8),
        }
    }
    total
}

/// `f()`, or the message of the panic it raised. The panic is not printed: it becomes the
/// file's error (panics elsewhere are printed as ever).
fn unpanicked<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    thread_local! {
        static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let printed = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(std::cell::Cell::get) {
                printed(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(false));
    caught.map_err(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".to_owned());
        format!("the Parquet reader failed on it: {what}")
    })
}

/// Whether `path` is a Parquet file: by its name, or by the magic bytes it starts with.
pub fn is_parquet(path: &Path) -> bool {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
    {
        return true;
    }
    let mut magic = [0u8; 4];
    crate::files::open_input_io(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok_and(|()| &magic == b"PAR1")
}
