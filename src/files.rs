//! Files written whole or not at all, files read bounded, and names safe as one path component.
//!
//! Files the library writes whole for a reader to pick up later (reports, per-instance logs,
//! JSONL records and predictions, calibration tables, captured patches, test suites copied out
//! of Harbor tasks) go through [`AtomicFile`]: it is written beside its target under a hidden
//! temporary name, synced, and renamed into place, so a reader (or a run killed half-way) sees
//! the old file or the whole new one. Two writers do it their own way: a grading run's
//! `results.jsonl` is appended one synced line at a time (a torn last line is cut when it is
//! reopened) and goes through `AtomicFile` only when compacted, and a converted Harbor task
//! directory is built in a temporary directory and renamed into place whole.
//!
//! Every input file is opened through [`open_input`] (or, for a file the tool names itself,
//! [`open_own`]): regular files only, checked on the opened file (a FIFO would block forever,
//! `/dev/zero` never ends, a directory reads as an error), and read no further than its kind's
//! cap: [`read_bounded`] for whole files, the JSONL reader's line cap for lines.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A file being written beside `path`; [`AtomicFile::commit`] syncs it and renames it into
/// place, and dropping it uncommitted removes it.
pub struct AtomicFile {
    path: PathBuf,
    target: Target,
}

/// Where an [`AtomicFile`]'s bytes go.
enum Target {
    /// A temporary file beside the target, renamed onto it at commit.
    Temp(tempfile::NamedTempFile),
    /// The target itself, opened for writing: a device, a pipe or a socket (`-o /dev/null`,
    /// `-o /dev/stdout`), which a rename would replace with a regular file (run as root, the
    /// machine's own `/dev/null`).
    Direct(std::fs::File),
}

impl AtomicFile {
    /// Starts a file that will replace `path`, in `path`'s directory (the current one for a
    /// bare name); where `path` is something other than a regular file or a directory (links
    /// followed), the bytes are written straight into it instead.
    pub fn create(path: &Path) -> io::Result<Self> {
        if let Ok(meta) = std::fs::metadata(path)
            && !meta.is_file()
            && !meta.is_dir()
        {
            let file = std::fs::OpenOptions::new().write(true).open(path)?;
            return Ok(AtomicFile {
                path: path.to_owned(),
                target: Target::Direct(file),
            });
        }
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".beyondswe-").suffix(".tmp");
        // Created as any file is (0666 less the umask), not 0600: reports and predictions are
        // read by other users and tools.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let tmp = builder.tempfile_in(dir)?;
        Ok(AtomicFile {
            path: path.to_owned(),
            target: Target::Temp(tmp),
        })
    }

    /// Syncs the file and renames it onto its target (a device or pipe: flushes what was
    /// written into it).
    pub fn commit(self) -> io::Result<()> {
        match self.target {
            Target::Temp(tmp) => {
                tmp.as_file().sync_all()?;
                tmp.persist(&self.path).map_err(|e| e.error)?;
            }
            Target::Direct(mut file) => file.flush()?,
        }
        Ok(())
    }

    /// Gives the file `permissions` (a temporary file only: a device keeps its own).
    fn set_permissions(&self, permissions: std::fs::Permissions) -> io::Result<()> {
        match &self.target {
            Target::Temp(tmp) => tmp.as_file().set_permissions(permissions),
            Target::Direct(_) => Ok(()),
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.target {
            Target::Temp(tmp) => tmp.write(buf),
            Target::Direct(file) => file.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.target {
            Target::Temp(tmp) => tmp.flush(),
            Target::Direct(file) => file.flush(),
        }
    }
}

/// The user's cache directory: `$XDG_CACHE_HOME`, else `$HOME/.cache`.
pub fn user_cache_home() -> std::path::PathBuf {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from)
    };
    var("XDG_CACHE_HOME").unwrap_or_else(|| {
        var("HOME")
            .unwrap_or_else(|| std::path::PathBuf::from("."))
            .join(".cache")
    })
}

/// Writes `data` to `path` whole or not at all; the error names `path`.
pub fn write_atomic(path: &Path, data: &[u8]) -> io::Result<()> {
    let write = || {
        let mut file = AtomicFile::create(path)?;
        file.write_all(data)?;
        file.commit()
    };
    write().map_err(|e| naming(path, e))
}

/// Copies `from` to `to` (with its mode) whole or not at all; the error names the file it is
/// about.
pub fn copy_atomic(from: &Path, to: &Path) -> io::Result<()> {
    // fs-err names `from` when opening or reading it fails.
    let mut source = fs_err::File::open(from)?;
    let permissions = source.metadata()?.permissions();
    let mut copy = || {
        let mut file = AtomicFile::create(to)?;
        io::copy(&mut source, &mut file)?;
        // As `fs::copy` does: the copy has the source's mode, not the temporary file's 0600.
        file.set_permissions(permissions.clone())?;
        file.commit()
    };
    copy().map_err(|e| naming(to, e))
}

/// The error with `path` in its message, once (see `crate::errors::io_message`).
fn naming(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), crate::errors::io_message(path, &e))
}

/// Why [`read_bounded`] (or [`check_bounded`]) did not return a file's bytes.
#[derive(Debug, Error)]
pub enum BoundedReadError {
    /// Reading its metadata or its bytes failed (missing, unreadable, ...).
    #[error(transparent)]
    Io(#[from] crate::errors::PathError),
    /// Not a regular file (links are followed); `what` names what it is.
    #[error("{path}: {what}, not a regular file")]
    NotAFile {
        /// The path that was to be read.
        path: PathBuf,
        /// What it is instead, e.g. "a directory" or "a named pipe (FIFO)".
        what: &'static str,
    },
    /// Larger than `max_bytes`, before opening it or while reading it.
    #[error("{path}: larger than the limit of {max_bytes} bytes")]
    TooLarge {
        /// The file that was too large.
        path: PathBuf,
        /// The limit it went over, in bytes.
        max_bytes: u64,
    },
}

impl BoundedReadError {
    /// As an I/O error, for callers that report one: a missing file keeps its `NotFound` (any
    /// I/O error its kind); a file that is not a regular one, or too large, is `InvalidData`
    /// naming what it is.
    pub fn into_io(self) -> std::io::Error {
        match self {
            BoundedReadError::Io(e) => e.source,
            other => std::io::Error::new(std::io::ErrorKind::InvalidData, other.to_string()),
        }
    }
}

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
pub fn check_bounded(path: &Path, max_bytes: u64) -> Result<(), BoundedReadError> {
    let meta = fs_err::metadata(path).map_err(|source| {
        BoundedReadError::Io(crate::errors::PathError::new(path.to_owned(), source))
    })?;
    check_meta(path, &meta, max_bytes)
}

/// That `meta`, of `path`, is a regular file's of at most `max_bytes`.
fn check_meta(
    path: &Path,
    meta: &std::fs::Metadata,
    max_bytes: u64,
) -> Result<(), BoundedReadError> {
    if !meta.is_file() {
        return Err(BoundedReadError::NotAFile {
            path: path.to_owned(),
            what: kind(meta),
        });
    }
    if meta.len() > max_bytes {
        return Err(BoundedReadError::TooLarge {
            path: path.to_owned(),
            max_bytes,
        });
    }
    Ok(())
}

/// All of `file` (opened from `path`), refused past `max_bytes`: a file that grows while it is
/// read is still bounded.
fn read_capped(path: &Path, file: impl Read, max_bytes: u64) -> Result<Vec<u8>, BoundedReadError> {
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| {
            BoundedReadError::Io(crate::errors::PathError::new(path.to_owned(), source))
        })?;
    if bytes.len() as u64 > max_bytes {
        return Err(BoundedReadError::TooLarge {
            path: path.to_owned(),
            max_bytes,
        });
    }
    Ok(bytes)
}

/// Opens an input file for reading: links are followed (a user may link a dataset), and the
/// opened file must be a regular one, checked on the file descriptor, so nothing swapped in
/// after the check is read. The open itself never waits (`O_NONBLOCK`): a FIFO named as a file
/// (with a writer or not: one without would hang the command) is refused at once, naming what
/// it is. A stream the user hands over already open (`/dev/stdin`, `/dev/fd/N` from a shell's
/// `<(…)`) is taken as it is: its writer is the user's, and the readers cap what they take of it.
pub fn open_input(path: &Path) -> Result<std::fs::File, BoundedReadError> {
    open_checked(path, u64::MAX, false)
}

/// The one way a file is opened for reading: without waiting (`O_NONBLOCK`), without following
/// a link in its last component when `own` (a file the tool names itself), then checked on the
/// opened descriptor: a regular file of at most `max_bytes`, or (not `own`) a stream the user
/// handed over open, whose reads then wait for its writer again.
fn open_checked(path: &Path, max_bytes: u64, own: bool) -> Result<std::fs::File, BoundedReadError> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    use std::os::unix::fs::OpenOptionsExt;
    let at = |source| BoundedReadError::Io(crate::errors::PathError::new(path.to_owned(), source));
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    let file = if own {
        own_file_options(&mut options)
            .open(path)
            .map_err(|source| own_open_error(path, source))?
    } else {
        options
            .custom_flags(OFlag::O_NONBLOCK.bits())
            .open(path)
            .map_err(at)?
    };
    let meta = file.metadata().map_err(at)?;
    if !own && !meta.is_file() && is_open_stream(path) {
        fcntl(&file, FcntlArg::F_SETFL(OFlag::empty())).map_err(|e| at(std::io::Error::from(e)))?;
        return Ok(file);
    }
    check_meta(path, &meta, max_bytes)?;
    Ok(file)
}

/// Whether `path` names a stream this process already holds open: its standard input or an
/// inherited descriptor (`/dev/stdin`, `/dev/fd/N`, `/proc/self/fd/N`).
fn is_open_stream(path: &Path) -> bool {
    let p = path.to_string_lossy();
    p == "/dev/stdin"
        || ["/dev/fd/", "/proc/self/fd/"].iter().any(|dir| {
            p.strip_prefix(dir)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// What a folder's entry is when it is no regular file of its own (a link, which a walk of a
/// folder given as input never follows; a FIFO or a device, which it never opens); `None` for a
/// regular file (or one that is gone).
pub fn not_regular(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        Some("a symbolic link (links in a folder are not followed)".to_owned())
    } else if !meta.is_file() {
        Some(format!("{}, not a regular file", kind(&meta)))
    } else {
        None
    }
}

/// Whether `path` is a regular file of its own, not a link to one: what a reader takes from a
/// folder it was given (a third party's agent output) beside the file it was named, so that a
/// link planted there (`<id>.diff -> ~/.ssh/id_rsa`) reads nothing of this machine's.
pub fn is_own_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

/// [`open_input`] with its failure as an I/O error (see [`BoundedReadError::into_io`]).
pub fn open_input_io(path: &Path) -> io::Result<std::fs::File> {
    open_input(path).map_err(BoundedReadError::into_io)
}

/// Reads a regular file of at most `max_bytes` whole: its size checked on the opened file, and
/// again while reading, for a file that grows (a stream handed over open is capped as it is
/// read).
pub fn read_bounded(path: &Path, max_bytes: u64) -> Result<Vec<u8>, BoundedReadError> {
    read_capped(path, open_checked(path, max_bytes, false)?, max_bytes)
}

/// [`read_bounded`], with its failure as an I/O error naming the file.
pub fn read_input(path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
    read_bounded(path, max_bytes).map_err(BoundedReadError::into_io)
}

/// The bytes of `path` as text; invalid UTF-8 is `InvalidData` naming the file.
fn utf8(path: &Path, bytes: Vec<u8>) -> io::Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: not UTF-8 text: {e}", path.display()),
        )
    })
}

/// The longest name [`safe_name`] gives, in bytes: well under the 255 bytes of a file name on
/// every file system, with room for a suffix a caller adds.
pub const SAFE_NAME_MAX: usize = 200;

/// The most read of a file this tool names itself and expects small (`run.json`, a part's
/// `report.json`, `task.toml`, a Hugging Face ref, a log kept beside a verdict): a FIFO, a
/// device or a huge file put in its place is refused, not read.
pub const SMALL_FILE_MAX: u64 = 16 * 1024 * 1024;

/// A regular file of at most `max_bytes` as text ([`read_bounded`]), with its failure as an I/O
/// error for callers that report one: a missing file keeps its `NotFound`, and anything else
/// that is not a regular file, or too large, is `InvalidData` naming what it is. Invalid UTF-8
/// is `InvalidData` too.
pub fn read_text(path: &Path, max_bytes: u64) -> std::io::Result<String> {
    let bytes = read_bounded(path, max_bytes).map_err(BoundedReadError::into_io)?;
    utf8(path, bytes)
}

/// `options` set not to follow a link in the path's last component and not to block on a FIFO
/// (for a file the tool itself names: it never writes a link there).
pub fn own_file_options(options: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    use nix::fcntl::OFlag;
    use std::os::unix::fs::OpenOptionsExt;
    options.custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits())
}

/// Opens for reading a file the tool names itself (`run.json`, `results.jsonl`, a run's
/// `report.json`): a link in its place is refused whatever it points to, and so is anything but
/// a regular file of at most `max_bytes`. The check is made on the opened file, so nothing
/// swapped in after it is read.
pub fn open_own(path: &Path, max_bytes: u64) -> Result<std::fs::File, BoundedReadError> {
    open_checked(path, max_bytes, true)
}

/// The error of opening an own file: a link in its place (`ELOOP` under `O_NOFOLLOW`) is named.
pub fn own_open_error(path: &Path, source: io::Error) -> BoundedReadError {
    if source.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32) {
        BoundedReadError::NotAFile {
            path: path.to_owned(),
            what: "a symbolic link (the tool writes none here)",
        }
    } else {
        BoundedReadError::Io(crate::errors::PathError::new(path.to_owned(), source))
    }
}

/// [`read_text`] for a file the tool names itself ([`open_own`]): no link, no FIFO, no device,
/// at most `max_bytes`.
pub fn read_own_text(path: &Path, max_bytes: u64) -> io::Result<String> {
    let bytes = open_own(path, max_bytes)
        .and_then(|file| read_capped(path, file, max_bytes))
        .map_err(BoundedReadError::into_io)?;
    utf8(path, bytes)
}

/// An instance id (or any label) as one directory name: ASCII letters, digits, `-`, `_` and
/// `.` are kept, anything else becomes `_`, and leading dots go (no hidden or `..` names). A
/// name changed so, longer than [`SAFE_NAME_MAX`], or one that already ends as such a name does,
/// is cut to fit and ends in `-` and eight hex digits of the label's digest, so two labels never
/// share a directory (`x y`, `x_y`, `x:y` and `x_y-<digest of "x y">` are four names) and no
/// name is too long for the file system. Nothing left (`..`, an
/// empty label) is the empty name, which callers refuse or replace.
pub fn safe_name(id: &str) -> String {
    let mut out = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect::<String>()
        .trim_start_matches('.')
        .to_owned();
    // A label that already ends as a changed one does (`-` and eight hex digits, a letter among
    // them) is changed too: kept as it is, `x_y-<digest of "x y">` would share the directory of
    // `x y`. A date (`claude-3-5-sonnet-20241022`) has no letter there and is kept.
    if !out.is_empty() && (out != id || out.len() > SAFE_NAME_MAX || is_digest_tail(&out)) {
        // ASCII only here, so any cut is on a character boundary.
        out.truncate(SAFE_NAME_MAX - 9);
        out.push('-');
        out.push_str(&digest_tail(id));
    }
    out
}

/// Eight hex digits of `id`'s digest, a letter among them (the digest of `id` and as many NUL
/// bytes as it takes; one label in 43 needs a second try), so no kept name ends as a changed one.
fn digest_tail(id: &str) -> String {
    use sha2::Digest;
    let mut input = id.as_bytes().to_vec();
    loop {
        let digest = hex::encode(sha2::Sha256::digest(&input));
        let tail = &digest[..8];
        if tail.bytes().any(|b| b.is_ascii_alphabetic()) {
            return tail.to_owned();
        }
        input.push(0);
    }
}

/// Whether `name` ends as [`safe_name`] ends a changed name: `-`, then eight hex digits with a
/// letter among them.
fn is_digest_tail(name: &str) -> bool {
    name.len() > 9 && {
        let (head, tail) = name.split_at(name.len() - 8);
        head.ends_with('-')
            && tail
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            && tail.bytes().any(|b| b.is_ascii_alphabetic())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-o /dev/null`, `-o /dev/stdout`, a named pipe: the bytes go into the device or pipe
    /// itself, which stays what it was (a rename put a regular file in the place of the
    /// machine's `/dev/null`, run as root). Shown on a pipe made for the test, reached
    /// directly and through a link.
    #[cfg(unix)]
    #[test]
    fn writing_to_a_pipe_or_device_writes_into_it_and_keeps_it() {
        use std::os::unix::fs::FileTypeExt;
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        for (target, data) in [(&fifo, &b"straight"[..]), (&link, &b"through a link"[..])] {
            let reader = {
                let fifo = fifo.clone();
                std::thread::spawn(move || fs_err::read(fifo).unwrap())
            };
            write_atomic(target, data).unwrap();
            assert_eq!(reader.join().unwrap(), data);
            assert!(
                std::fs::symlink_metadata(&fifo)
                    .unwrap()
                    .file_type()
                    .is_fifo()
            );
        }
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        // Nothing was left beside it.
        let names: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        // A regular file is still replaced whole, by a rename.
        let plain = tmp.path().join("plain");
        fs_err::write(&plain, "old").unwrap();
        write_atomic(&plain, b"new").unwrap();
        assert_eq!(fs_err::read(&plain).unwrap(), b"new");
    }

    #[cfg(unix)]
    #[test]
    fn written_files_have_the_mode_any_new_file_gets() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        fs_err::File::create(&plain).unwrap();
        let ours = dir.path().join("ours.json");
        write_atomic(&ours, b"{}").unwrap();
        let mode = |p: &Path| fs_err::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&ours), mode(&plain));
    }

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
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        copy_atomic(&p, &dir.path().join("copy")).unwrap();
        assert_eq!(fs_err::read(dir.path().join("copy")).unwrap(), b"one");
        let mode = fs_err::metadata(dir.path().join("copy"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644);
    }

    #[test]
    fn bounded_reads_take_regular_files_up_to_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.diff");
        fs_err::write(&p, vec![b'x'; 2048]).unwrap();
        assert_eq!(read_bounded(&p, 2048).unwrap().len(), 2048);
        assert!(matches!(
            read_bounded(&p, 2047),
            Err(BoundedReadError::TooLarge {
                max_bytes: 2047,
                ..
            })
        ));
        for (path, what) in [
            (Path::new("/dev/zero"), "a character device"),
            (dir.path(), "a directory"),
        ] {
            match read_bounded(path, 2048) {
                Err(BoundedReadError::NotAFile { what: w, .. }) => assert_eq!(w, what),
                other => panic!("{}: {other:?}", path.display()),
            }
        }
    }

    #[test]
    fn names_stay_one_component_apart_and_short() {
        assert!(safe_name("../etc/passwd").starts_with("_etc_passwd-"));
        assert_eq!(safe_name("acme__calc-1.2"), "acme__calc-1.2");
        assert!(safe_name("a b/c").starts_with("a_b_c-"));
        // Labels that read alike stay apart.
        let names: std::collections::BTreeSet<String> = ["x y", "x_y", "x:y", "x/y", ".x_y"]
            .iter()
            .map(|l| safe_name(l))
            .collect();
        assert_eq!(names.len(), 5, "{names:?}");
        // A label written as another's changed name does not take that name.
        let taken = safe_name("x y");
        assert!(taken.starts_with("x_y-"));
        assert_ne!(safe_name(&taken), taken);
        assert_eq!(safe_name("run-2024"), "run-2024");
        assert_eq!(
            safe_name("claude-3-5-sonnet-20241022"),
            "claude-3-5-sonnet-20241022"
        );
        assert_ne!(safe_name("pkg-deadbeef"), "pkg-deadbeef");
        // A long label (a model name of 300 bytes) fits a file name, and stays apart from
        // another with the same start.
        let long = "m".repeat(300);
        let longer = format!("{long}x");
        assert!(safe_name(&long).len() <= SAFE_NAME_MAX);
        assert_ne!(safe_name(&long), safe_name(&longer));
        assert_eq!(safe_name(".."), "");
        for n in ["x y", &long, "é/ü", "..", ""] {
            let s = safe_name(n);
            assert!(!s.contains('/') && !s.starts_with('.'), "{n:?} -> {s}");
        }
    }
}
