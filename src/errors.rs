//! How library errors word an I/O failure: the path once, then the reason; and how an error
//! with its causes reads as one line ([`message`]), for the library's notes and the binary's
//! `error:` line alike.
//!
//! File I/O goes through fs-err, whose messages already say what was done to which path
//! (``failed to open file `x`: No such file or directory``); an error that prefixes its own
//! path would say it twice. Every `Io` variant of the library holds one [`PathError`], which
//! displays through `io_message`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// An I/O failure on a path: what every error of the library that reads or writes a file holds
/// in its `Io` variant, its message naming the path once ([`io_message`]).
#[derive(Debug, thiserror::Error)]
#[error("{}", io_message(path, source))]
pub struct PathError {
    /// The file or directory.
    pub path: PathBuf,
    /// What the operating system (or fs-err) reported.
    #[source]
    pub source: std::io::Error,
}

impl PathError {
    /// The failure `source` on `path`.
    pub fn new(path: impl Into<PathBuf>, source: std::io::Error) -> PathError {
        PathError {
            path: path.into(),
            source,
        }
    }

    /// For `map_err`: the failure on `path`.
    pub fn at(path: &Path) -> impl FnOnce(std::io::Error) -> PathError + '_ {
        move |source| PathError::new(path, source)
    }
}

/// An error and its causes, joined by `: `, each said once: a cause whose text is already in the
/// message (a library error whose message carries its source) is left out.
pub fn message(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut cause = Some(err);
    while let Some(e) = cause {
        // A missing file or a refused permission said plainly already: the I/O error that says
        // it again in the words of the call (and its OS error below it) adds nothing.
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            let said = match io.kind() {
                std::io::ErrorKind::NotFound => "no such file or directory",
                std::io::ErrorKind::PermissionDenied => "permission denied",
                _ => "",
            };
            if !said.is_empty() && text.contains(said) {
                break;
            }
        }
        let part = e.to_string();
        cause = e.source();
        if part.is_empty() || text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        let _ = write!(text, "{part}");
    }
    text
}

/// `path: reason`, or the I/O error alone when it already names `path`. A missing file or a
/// refused permission is said plainly (`PATH: no such file or directory`), never in the words of
/// the call that met it (`failed to query resolved metadata`).
pub(crate) fn io_message(path: &Path, err: &std::io::Error) -> String {
    let shown = path.display().to_string();
    let text = err.to_string();
    // The operating system's words (an error of our own wording is kept as it is).
    let from_os = err.raw_os_error().is_some() || text.contains("(os error ");
    match err.kind() {
        std::io::ErrorKind::NotFound if from_os && !shown.is_empty() => {
            return format!("{shown}: no such file or directory");
        }
        std::io::ErrorKind::PermissionDenied if from_os && !shown.is_empty() => {
            return format!("{shown}: permission denied");
        }
        _ => {}
    }
    if !shown.is_empty() && text.contains(&shown) {
        text
    } else {
        format!("{shown}: {text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_is_said_once() {
        let p = Path::new("/no/such.jsonl");
        let fs_err = fs_err::File::open(p).expect_err("missing");
        assert_eq!(
            io_message(p, &fs_err),
            "/no/such.jsonl: no such file or directory"
        );
        let meta = fs_err::metadata(p).expect_err("missing");
        assert_eq!(
            io_message(p, &meta),
            "/no/such.jsonl: no such file or directory"
        );
        let busy = std::io::Error::other("disk on fire");
        assert_eq!(io_message(p, &busy), "/no/such.jsonl: disk on fire");
        let plain = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(io_message(p, &plain), "/no/such.jsonl: permission denied");
        let ours = std::io::Error::new(std::io::ErrorKind::NotFound, "not a run directory");
        assert_eq!(io_message(p, &ours), "/no/such.jsonl: not a run directory");
    }
}
