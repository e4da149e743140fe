//! How library errors word an I/O failure: the path once, then the reason; and how an error
//! with its causes reads as one line ([`message`]), for the library's notes and the binary's
//! `error:` line alike.
//!
//! File I/O goes through fs-err, whose messages already say what was done to which path
//! (``failed to open file `x`: No such file or directory``); an error that prefixes its own
//! path would say it twice. Every `Io` variant of the library displays through `io_message`.

use std::fmt::Write as _;
use std::path::Path;

/// An error and its causes, joined by `: `, each said once: a cause whose text is already in the
/// message (a library error whose message carries its source) is left out.
pub fn message(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut cause = Some(err);
    while let Some(e) = cause {
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

/// `path: reason`, or the I/O error alone when it already names `path`.
pub(crate) fn io_message(path: &Path, err: &std::io::Error) -> String {
    let text = err.to_string();
    let shown = path.display().to_string();
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
            "failed to open file `/no/such.jsonl`: No such file or directory (os error 2)"
        );
        let plain = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(io_message(p, &plain), "/no/such.jsonl: permission denied");
    }
}
