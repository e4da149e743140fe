//! Reading a patch file from disk, bounded: only regular files (a FIFO would block forever,
//! `/dev/zero` never ends), and never more than a cap, however the file changes while it is read.
//!
//! Every place that reads a patch named on the command line or found beside agent output calls
//! this; it checks and reads, nothing else.

use super::SubmissionError;
use std::io::Read;
use std::path::Path;

/// The default cap on a patch read from disk (`--max-patch-mb`): 256 MiB.
pub const DEFAULT_MAX_PATCH_BYTES: u64 = 256 * 1024 * 1024;

/// What a path is, for the error when it is not a regular file.
fn kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Checks, without opening it, that `path` is a regular file (links followed) of at most
/// `max_bytes`.
pub fn check_patch_file(path: &Path, max_bytes: u64) -> Result<(), SubmissionError> {
    let meta = fs_err::metadata(path).map_err(|source| SubmissionError::Io {
        path: path.to_owned(),
        source,
    })?;
    if !meta.is_file() {
        return Err(SubmissionError::NotAFile {
            path: path.to_owned(),
            what: kind(&meta),
        });
    }
    if meta.len() > max_bytes {
        return Err(too_large(path, max_bytes));
    }
    Ok(())
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
    check_patch_file(path, max_bytes)?;
    let io = |source| SubmissionError::Io {
        path: path.to_owned(),
        source,
    };
    let file = fs_err::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(path, max_bytes));
    }
    Ok(bytes)
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
