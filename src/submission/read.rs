//! Reading a patch file from disk, bounded: [`crate::files::read_bounded`] (regular files only,
//! never more than a cap), with its errors worded for a patch and the `--max-patch-mb` limit.
//!
//! Every place in `submission` and the CLI that reads a patch named on the command line or found
//! beside agent output calls this; it checks and reads, nothing else.

use super::SubmissionError;
use crate::files::BoundedReadError;
use std::path::Path;

pub use crate::patch::DEFAULT_MAX_PATCH_BYTES;

/// Checks, without opening it, that `path` is a regular file (links followed) of at most
/// `max_bytes`.
pub fn check_patch_file(path: &Path, max_bytes: u64) -> Result<(), SubmissionError> {
    crate::files::check_bounded(path, max_bytes).map_err(from_bounded)
}

/// A bounded read's failure, worded for a patch (`--max-patch-mb`).
fn from_bounded(e: BoundedReadError) -> SubmissionError {
    match e {
        BoundedReadError::Io { path, source } => SubmissionError::Io { path, source },
        BoundedReadError::NotAFile { path, what } => SubmissionError::NotAFile { path, what },
        BoundedReadError::TooLarge { path, max_bytes } => too_large(&path, max_bytes),
    }
}

fn too_large(path: &Path, max_bytes: u64) -> SubmissionError {
    SubmissionError::TooLarge {
        path: path.to_owned(),
        message: format!(
            "the patch is larger than the limit of {} (raise it with --max-patch-mb)",
            human(max_bytes)
        ),
    }
}

fn human(bytes: u64) -> String {
    if bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0 {
        format!("{} MiB", bytes / (1024 * 1024))
    } else {
        format!("{bytes} bytes")
    }
}

/// Reads a patch file as bytes: a regular file of at most `max_bytes` (checked before opening it,
/// and again while reading, for a file that grows).
pub fn read_patch(path: &Path, max_bytes: u64) -> Result<Vec<u8>, SubmissionError> {
    crate::files::read_bounded(path, max_bytes).map_err(from_bounded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_pipes_and_directories_are_refused_by_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (path, what) in [
            (Path::new("/dev/zero"), "character device"),
            (dir.path(), "directory"),
        ] {
            let err = read_patch(path, DEFAULT_MAX_PATCH_BYTES)
                .expect_err("refused")
                .to_string();
            assert!(
                err.contains(what) && err.contains(&path.display().to_string()),
                "{err}"
            );
        }
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let err = read_patch(&fifo, DEFAULT_MAX_PATCH_BYTES).expect_err("refused");
            assert!(err.to_string().contains("named pipe"), "{err}");
        }
    }

    #[test]
    fn the_cap_holds() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("p.diff");
        fs_err::write(&p, vec![b'x'; 2048]).expect("write");
        assert_eq!(read_patch(&p, 2048).expect("at the cap").len(), 2048);
        let err = read_patch(&p, 2047).expect_err("over the cap").to_string();
        assert!(err.contains("--max-patch-mb"), "{err}");
    }
}
