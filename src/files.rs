//! Files written whole or not at all, and names safe as one path component.
//!
//! Every file the library writes for a reader to pick up later (results, reports, JSONL,
//! copied test suites) goes through [`AtomicFile`]: it is written beside its target under a
//! hidden temporary name, synced, and renamed into place, so a reader (or a run killed
//! half-way) sees the old file or the whole new one.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A file being written beside `path`; [`AtomicFile::commit`] syncs it and renames it into
/// place, and dropping it uncommitted removes it.
pub struct AtomicFile {
    path: PathBuf,
    tmp: tempfile::NamedTempFile,
}

impl AtomicFile {
    /// Starts a file that will replace `path`, in `path`'s directory (the current one for a
    /// bare name).
    pub fn create(path: &Path) -> io::Result<Self> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let tmp = tempfile::Builder::new()
            .prefix(".beyondswe-")
            .suffix(".tmp")
            .tempfile_in(dir)?;
        Ok(AtomicFile {
            path: path.to_owned(),
            tmp,
        })
    }

    /// Syncs the file and renames it onto its target.
    pub fn commit(self) -> io::Result<()> {
        self.tmp.as_file().sync_all()?;
        self.tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tmp.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.tmp.flush()
    }
}

/// Writes `data` to `path` whole or not at all; the error names `path`.
pub fn write_atomic(path: &Path, data: &[u8]) -> io::Result<()> {
    let write = || {
        let mut file = AtomicFile::create(path)?;
        file.write_all(data)?;
        file.commit()
    };
    write().map_err(|e| naming(path, "write", e))
}

/// Copies `from` to `to` whole or not at all; the error names the file it is about.
pub fn copy_atomic(from: &Path, to: &Path) -> io::Result<()> {
    // fs-err names `from` when opening or reading it fails.
    let mut source = fs_err::File::open(from)?;
    let mut copy = || {
        let mut file = AtomicFile::create(to)?;
        io::copy(&mut source, &mut file)?;
        file.commit()
    };
    copy().map_err(|e| naming(to, "write", e))
}

/// The error, worded as fs-err words its own: what was done to which path, then why.
fn naming(path: &Path, op: &str, e: io::Error) -> io::Error {
    if e.to_string().contains(&path.display().to_string()) {
        return e;
    }
    io::Error::new(
        e.kind(),
        format!("failed to {op} file `{}`: {e}", path.display()),
    )
}

/// An instance id (or any label) as one directory name: ASCII letters, digits, `-`, `_` and
/// `.` are kept, anything else becomes `_`, and leading dots go (no hidden or `..` names).
pub fn safe_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect::<String>()
        .trim_start_matches('.')
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_appears_whole_and_an_abandoned_one_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        write_atomic(&p, b"one").unwrap();
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"two, half").unwrap();
        drop(f);
        assert_eq!(fs_err::read(&p).unwrap(), b"one");
        assert_eq!(fs_err::read_dir(dir.path()).unwrap().count(), 1);
        copy_atomic(&p, &dir.path().join("copy")).unwrap();
        assert_eq!(fs_err::read(dir.path().join("copy")).unwrap(), b"one");
    }

    #[test]
    fn names_stay_one_component() {
        assert_eq!(safe_name("../etc/passwd"), "_etc_passwd");
        assert_eq!(safe_name("acme__calc-1.2"), "acme__calc-1.2");
        assert_eq!(safe_name("a b/c"), "a_b_c");
    }
}
