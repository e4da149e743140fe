//! Streaming JSONL: read records one line at a time in constant memory, write them atomically.
//!
//! Owns line numbering, BOM and CRLF handling, blank lines, and errors that name the file, the line,
//! the field and the value. It knows nothing about Harbor or grading.

use super::error::RecordError;
use super::model::Record;
use fs_err as fs;
use serde::Serialize;
use serde_json::Value;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A problem with one line of a JSONL file, or with the file itself.
#[derive(Debug, Error)]
pub enum JsonlError {
    /// The file could not be opened, read or written; reading stops here.
    #[error(transparent)]
    Io(#[from] crate::errors::PathError),
    /// A line is not valid JSON.
    #[error("{path}:{line}:{column}: not valid JSON: {message}; the line starts with {start}")]
    Syntax {
        /// The JSONL file.
        path: PathBuf,
        /// The line, counting from 1.
        line: u64,
        /// Where on the line the parser gave up, counting from 1.
        column: usize,
        /// The JSON parser's message.
        message: String,
        /// The line's first 60 bytes, quoted.
        start: String,
    },
    /// A line longer than [`max_line_bytes`]; reading stops there.
    #[error("{}: {}", path.display(), line_too_long_message(*line))]
    LineTooLong {
        /// The JSONL file.
        path: PathBuf,
        /// The line, counting from 1.
        line: u64,
    },
    /// A line is valid JSON but not a usable record.
    #[error("{path}:{line}: {source}")]
    Record {
        /// The JSONL file.
        path: PathBuf,
        /// The line, counting from 1.
        line: u64,
        /// What is wrong with the record.
        #[source]
        source: RecordError,
    },
}

/// The longest line any reader of this crate takes, in bytes: 512 MiB, or
/// `BEYONDSWE_MAX_LINE_MB` MiB. A file with no line end at all (`/dev/zero`) stops there instead
/// of exhausting memory.
pub fn max_line_bytes() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        std::env::var("BEYONDSWE_MAX_LINE_MB")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|mb| *mb > 0)
            .unwrap_or(512)
            .saturating_mul(1 << 20)
    })
}

/// What the error says of a line over [`max_line_bytes`].
pub fn line_too_long_message(line: u64) -> String {
    format!(
        "line {line} is longer than {} MiB, the most one line may hold; reading stops here \
         (BEYONDSWE_MAX_LINE_MB raises the limit)",
        max_line_bytes() >> 20
    )
}

/// A whole file that is one JSON value (a predictions array, a trajectory), read up to
/// [`max_line_bytes`]: past it, an error (`InvalidData`) that says the limit and how to raise it,
/// with no more than that much read. Regular files only ([`crate::files::open_input`]): a FIFO
/// or a device is refused naming what it is.
pub fn read_whole_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    let max = max_line_bytes();
    let mut bytes = Vec::new();
    crate::files::open_input_io(path)?
        .take(max as u64 + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "longer than {} MiB, the most one JSON value may hold (BEYONDSWE_MAX_LINE_MB \
                 raises the limit)",
                max >> 20
            ),
        ));
    }
    Ok(bytes)
}

/// [`read_whole_capped`] as UTF-8 text.
pub fn read_text_capped(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_whole_capped(path)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Reads one line into `buf` (cleared first), at most `max` bytes of it: `Ok(Some(n))` with the
/// bytes read (0 at the end), `Ok(None)` when the line is longer than `max` (`buf` then holds
/// its first `max + 1` bytes and the reader stands inside the line).
pub fn read_line_capped<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<usize>> {
    buf.clear();
    let n = reader
        .by_ref()
        .take(max as u64 + 1)
        .read_until(b'\n', buf)?;
    if n > max && buf.last() != Some(&b'\n') {
        return Ok(None);
    }
    Ok(Some(n))
}

/// [`read_line_capped`] at [`max_line_bytes`], a line over it an `InvalidData` error that names
/// the line (`line`, counting from 1) and the limit: the bytes read, 0 at the end.
pub fn read_line_or_stop<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    line: u64,
) -> std::io::Result<usize> {
    read_line_capped(reader, buf, max_line_bytes())?.ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, line_too_long_message(line))
    })
}

impl JsonlError {
    /// The 1-based line the error is about, if it is about one line.
    pub fn line(&self) -> Option<u64> {
        match self {
            JsonlError::Io { .. } | JsonlError::LineTooLong { .. } => None,
            JsonlError::Syntax { line, .. } | JsonlError::Record { line, .. } => Some(*line),
        }
    }

    /// Whether reading can go on after this error (a bad line), or not (the file is unreadable).
    pub fn is_line_error(&self) -> bool {
        self.line().is_some()
    }
}

/// Reads JSON values line by line from any reader; blank lines are skipped, a UTF-8 BOM on the first
/// line and `\r` line ends are accepted.
pub struct JsonLines<R> {
    reader: R,
    path: PathBuf,
    buf: Vec<u8>,
    line: u64,
    done: bool,
}

impl JsonLines<BufReader<fs::File>> {
    /// Opens a JSONL file with a large buffer.
    pub fn open(path: &Path) -> Result<Self, JsonlError> {
        let file = crate::files::open_input_io(path).map_err(|source| {
            JsonlError::Io(crate::errors::PathError::new(path.to_owned(), source))
        })?;
        Ok(JsonLines::new(
            BufReader::with_capacity(1 << 20, fs::File::from_parts(file, path)),
            path.to_owned(),
        ))
    }
}

impl<R: BufRead> JsonLines<R> {
    /// Reads from `reader`; `path` is only used to name the source in errors.
    pub fn new(reader: R, path: PathBuf) -> Self {
        JsonLines {
            reader,
            path,
            buf: Vec::with_capacity(64 * 1024),
            line: 0,
            done: false,
        }
    }

    /// The path errors name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next non-blank line as a JSON value, with its 1-based line number.
    pub fn next_value(&mut self) -> Option<Result<(u64, Value), JsonlError>> {
        loop {
            if self.done {
                return None;
            }
            match read_line_capped(&mut self.reader, &mut self.buf, max_line_bytes()) {
                Ok(Some(0)) => {
                    self.done = true;
                    return None;
                }
                Ok(Some(_)) => {}
                Ok(None) => {
                    self.done = true;
                    return Some(Err(JsonlError::LineTooLong {
                        path: self.path.clone(),
                        line: self.line + 1,
                    }));
                }
                Err(source) => {
                    self.done = true;
                    return Some(Err(JsonlError::Io(crate::errors::PathError::new(
                        self.path.clone(),
                        source,
                    ))));
                }
            }
            self.line += 1;
            let mut bytes: &[u8] = &self.buf;
            if self.line == 1 {
                bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
            }
            let bytes = bytes.trim_ascii();
            if bytes.is_empty() {
                continue;
            }
            return Some(match serde_json::from_slice::<Value>(bytes) {
                Ok(value) => Ok((self.line, value)),
                Err(err) => Err(JsonlError::Syntax {
                    path: self.path.clone(),
                    line: self.line,
                    column: err.column(),
                    message: err.to_string(),
                    start: line_start(bytes),
                }),
            });
        }
    }
}

fn line_start(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(60)]);
    format!("{:?}", text)
}

/// Iterates over the records of a JSONL file. Each item is a record with its line number or the
/// error for that line; the iterator keeps going after a bad line.
pub struct RecordReader<R> {
    lines: JsonLines<R>,
}

impl RecordReader<BufReader<fs::File>> {
    /// Opens a JSONL file of records.
    pub fn open(path: &Path) -> Result<Self, JsonlError> {
        tracing::debug!(path = %path.display(), "reading records");
        Ok(RecordReader {
            lines: JsonLines::open(path)?,
        })
    }
}

impl<R: BufRead> RecordReader<R> {
    /// Reads records from `reader`; `path` is only used to name the source in errors.
    pub fn new(reader: R, path: PathBuf) -> Self {
        RecordReader {
            lines: JsonLines::new(reader, path),
        }
    }
}

impl<R: BufRead> Iterator for RecordReader<R> {
    type Item = Result<(u64, Record), JsonlError>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = self.lines.next_value()?;
        Some(item.and_then(|(line, value)| {
            Record::from_value(value)
                .map(|r| (line, r))
                .map_err(|source| JsonlError::Record {
                    path: self.lines.path.clone(),
                    line,
                    source,
                })
        }))
    }
}

/// Reads a whole small JSONL document from memory (tests, fixtures).
pub fn records_from_str(text: &str) -> Result<Vec<Record>, JsonlError> {
    RecordReader::new(text.as_bytes(), PathBuf::from("<memory>"))
        .map(|r| r.map(|(_, rec)| rec))
        .collect()
}

/// Writes JSON lines to a temporary file beside the target and renames it into place on
/// [`JsonlWriter::finish`], so readers never see a half-written file.
pub struct JsonlWriter {
    path: PathBuf,
    out: BufWriter<crate::files::AtomicFile>,
}

impl JsonlWriter {
    /// Starts a file that will replace `path` on [`JsonlWriter::finish`]; dropped unfinished, it
    /// leaves `path` as it was.
    pub fn create(path: &Path) -> Result<Self, JsonlError> {
        let file = crate::files::AtomicFile::create(path).map_err(|source| {
            JsonlError::Io(crate::errors::PathError::new(path.to_owned(), source))
        })?;
        Ok(JsonlWriter {
            path: path.to_owned(),
            out: BufWriter::with_capacity(1 << 20, file),
        })
    }

    /// Writes `value` as one line of JSON.
    pub fn write<T: Serialize>(&mut self, value: &T) -> Result<(), JsonlError> {
        let io = |source| JsonlError::Io(crate::errors::PathError::new(self.path.clone(), source));
        serde_json::to_writer(&mut self.out, value).map_err(|e| io(e.into()))?;
        self.out.write_all(b"\n").map_err(io)
    }

    /// Flushes, syncs and renames the file into place.
    pub fn finish(self) -> Result<(), JsonlError> {
        let path = self.path;
        let io = |source| JsonlError::Io(crate::errors::PathError::new(path.clone(), source));
        let file = self.out.into_inner().map_err(|e| io(e.into_error()))?;
        file.commit().map_err(io)
    }
}

/// Reads a whole file into memory; for small files only (task directories).
pub(crate) fn read_to_string_limited(path: &Path, limit: u64) -> std::io::Result<String> {
    let file = crate::files::open_input_io(path)?;
    let mut text = String::new();
    file.take(limit).read_to_string(&mut text)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_bom_and_crlf() {
        let text = "\u{feff}{\"instance_id\":\"a\"}\r\n\r\n   \n{\"instance_id\":\"b\"}";
        let recs = records_from_str(text).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].instance_id(), "b");
    }

    #[test]
    fn errors_name_line_and_field_and_reading_goes_on() {
        let text = "{\"instance_id\":\"a\"}\n{not json\n{\"instance_id\":\"c\",\"test_suite_num\":-1}\n{\"instance_id\":\"d\"}\n";
        let items: Vec<_> = RecordReader::new(text.as_bytes(), "data.jsonl".into()).collect();
        assert_eq!(items.len(), 4);
        let e1 = items[1].as_ref().unwrap_err().to_string();
        assert!(e1.starts_with("data.jsonl:2:"), "{e1}");
        let e2 = items[2].as_ref().unwrap_err().to_string();
        assert!(
            e2.starts_with("data.jsonl:3: field `test_suite_num`"),
            "{e2}"
        );
        assert!(e2.contains("-1"), "{e2}");
        assert_eq!(items[3].as_ref().unwrap().0, 4);
    }
}
