//! Host-side reading of unified and git diffs: is this text a patch, and which paths does it touch;
//! and patch files read from disk, bounded ([`read_file`]).
//!
//! Used by `validate` (patches must parse), by the grader (a submission must be a patch, outside
//! `.git`), by the restore rules (which files the test patch owns) and by the submission readers
//! (undoing CRLF added in transit). It never applies a patch: application happens inside the
//! container with `git apply`, so that the result matches what git does.
//!
//! Every patch file the library reads (`--patch`, captured diffs, a Harbor trial's patch, in a run
//! or a release) is read by [`read_file`] with the caller's cap (`--max-patch-mb`): a regular file
//! only, never more than the cap, with errors that name the file.

use crate::files::BoundedReadError;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The default cap on a patch read from disk (`--max-patch-mb`, and a Harbor trial's patch in a
/// release): 256 MiB.
pub const DEFAULT_MAX_PATCH_BYTES: u64 = 256 * 1024 * 1024;

/// Why a patch file could not be read; each names the file.
#[derive(Debug, Error)]
pub enum PatchFileError {
    /// Reading its metadata or its bytes failed (missing, no permission, ...).
    #[error(transparent)]
    Io(#[from] crate::errors::PathError),
    /// The path is not a regular file (links are followed): a directory, a pipe, a device.
    #[error("{path}: {what}, not a regular file; a patch must be a file")]
    NotAFile {
        /// The path given as a patch.
        path: PathBuf,
        /// What it is instead, e.g. "a directory" or "a named pipe (FIFO)".
        what: &'static str,
    },
    /// The file is over the cap, before opening it or while reading it; the message suggests
    /// `--max-patch-mb`.
    #[error(
        "{path}: the patch is larger than the limit of {} (raise it with --max-patch-mb)",
        human(*max_bytes)
    )]
    TooLarge {
        /// The patch file.
        path: PathBuf,
        /// The cap it went over, in bytes.
        max_bytes: u64,
    },
}

impl From<BoundedReadError> for PatchFileError {
    fn from(e: BoundedReadError) -> Self {
        match e {
            BoundedReadError::Io(e) => PatchFileError::Io(e),
            BoundedReadError::NotAFile { path, what } => PatchFileError::NotAFile { path, what },
            BoundedReadError::TooLarge { path, max_bytes } => {
                PatchFileError::TooLarge { path, max_bytes }
            }
        }
    }
}

fn human(bytes: u64) -> String {
    if bytes >= 1024 * 1024 && bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB", bytes / (1024 * 1024))
    } else {
        format!("{bytes} bytes")
    }
}

/// Checks, without opening it, that `path` is a regular file (links followed) of at most
/// `max_bytes`.
pub fn check_file(path: &Path, max_bytes: u64) -> Result<(), PatchFileError> {
    Ok(crate::files::check_bounded(path, max_bytes)?)
}

/// Reads a patch file as bytes: a regular file of at most `max_bytes` (checked before opening it,
/// and again while reading, for a file that grows).
pub fn read_file(path: &Path, max_bytes: u64) -> Result<Vec<u8>, PatchFileError> {
    Ok(crate::files::read_bounded(path, max_bytes)?)
}

/// What one file section of a patch does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Path before the change; `None` for a new file.
    pub old_path: Option<String>,
    /// Path after the change; `None` for a deleted file.
    pub new_path: Option<String>,
    /// A `GIT binary patch` or `Binary files … differ` section.
    pub binary: bool,
    /// Number of text hunks.
    pub hunks: usize,
}

impl FileChange {
    /// Every path this change reads or writes.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.old_path.as_deref().into_iter().chain(
            self.new_path
                .as_deref()
                .filter(|n| Some(*n) != self.old_path.as_deref()),
        )
    }
}

/// A parsed patch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Patch {
    /// One entry per file section, in patch order (never empty).
    pub files: Vec<FileChange>,
}

impl Patch {
    /// All paths touched, in patch order, without repeats.
    pub fn touched_paths(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in self.files.iter().flat_map(FileChange::paths) {
            if !out.iter().any(|o| o == p) {
                out.push(p.to_owned());
            }
        }
        out
    }
}

/// Why a text is not a patch [`parse`] accepts.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PatchError {
    /// The text is empty or only whitespace.
    #[error("the patch is empty")]
    Empty,
    /// The text has no file header at all (no `diff --git`, no `---`/`+++` pair).
    #[error("no file changes found (expected `diff --git` or `---`/`+++` headers)")]
    NoFiles,
    /// A file section is broken, e.g. a hunk whose line counts do not match its body.
    #[error("line {line}: {message}")]
    Malformed {
        /// Where the problem was found, counting from 1.
        line: usize,
        /// What is wrong there.
        message: String,
    },
}

/// Parses a unified diff (plain or git-extended, CRLF tolerated).
pub fn parse(text: &str) -> Result<Patch, PatchError> {
    if text.trim().is_empty() {
        return Err(PatchError::Empty);
    }
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut files = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let (change, next) = parse_git_section(&lines, i, rest)?;
            files.push(change);
            i = next;
        } else if line.starts_with("--- ")
            && lines.get(i + 1).is_some_and(|l| l.starts_with("+++ "))
        {
            let old = header_path(&line[4..]);
            let new = header_path(&lines[i + 1][4..]);
            let mut change = FileChange {
                old_path: old,
                new_path: new,
                binary: false,
                hunks: 0,
            };
            i = parse_hunks(&lines, i + 2, &mut change)?;
            if change.hunks == 0 {
                return Err(malformed(i, "file header without any hunk"));
            }
            files.push(change);
        } else {
            i += 1;
        }
    }
    if files.is_empty() {
        return Err(PatchError::NoFiles);
    }
    Ok(Patch { files })
}

fn malformed(index: usize, message: impl Into<String>) -> PatchError {
    PatchError::Malformed {
        line: index + 1,
        message: message.into(),
    }
}

fn parse_git_section(
    lines: &[&str],
    start: usize,
    header: &str,
) -> Result<(FileChange, usize), PatchError> {
    let (mut old, mut new) = split_git_header(header).ok_or_else(|| {
        malformed(
            start,
            format!("cannot read the paths in `diff --git {header}`"),
        )
    })?;
    let mut change = FileChange {
        old_path: None,
        new_path: None,
        binary: false,
        hunks: 0,
    };
    let (mut created, mut deleted) = (false, false);
    let mut i = start + 1;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("new file mode") {
            created = true;
        } else if line.starts_with("deleted file mode") {
            deleted = true;
        } else if let Some(p) = line
            .strip_prefix("rename from ")
            .or(line.strip_prefix("copy from "))
        {
            old = unquote(p);
        } else if let Some(p) = line
            .strip_prefix("rename to ")
            .or(line.strip_prefix("copy to "))
        {
            new = unquote(p);
        } else if line.starts_with("old mode")
            || line.starts_with("new mode")
            || line.starts_with("similarity index")
            || line.starts_with("dissimilarity index")
            || line.starts_with("index ")
        {
        } else if line.starts_with("Binary files ") {
            change.binary = true;
        } else if line == "GIT binary patch" {
            change.binary = true;
            i = skip_binary(lines, i + 1)?;
            continue;
        } else if line.starts_with("--- ")
            && lines.get(i + 1).is_some_and(|l| l.starts_with("+++ "))
        {
            if let Some(p) = header_path(&line[4..]) {
                old = p;
            }
            if let Some(p) = header_path(&lines[i + 1][4..]) {
                new = p;
            }
            i = parse_hunks(lines, i + 2, &mut change)?;
            break;
        } else {
            break;
        }
        i += 1;
    }
    change.old_path = (!created).then_some(old);
    change.new_path = (!deleted).then_some(new);
    Ok((change, i))
}

/// Skips `literal N` / `delta N` blocks of base85 lines, up to and including their blank lines.
fn skip_binary(lines: &[&str], mut i: usize) -> Result<usize, PatchError> {
    let mut blocks = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("literal ") || line.starts_with("delta ") {
            blocks += 1;
            i += 1;
            while i < lines.len() && !lines[i].is_empty() {
                i += 1;
            }
            i += 1;
        } else {
            break;
        }
    }
    if blocks == 0 {
        return Err(malformed(
            i,
            "`GIT binary patch` without a literal or delta block",
        ));
    }
    Ok(i)
}

fn parse_hunks(lines: &[&str], mut i: usize, change: &mut FileChange) -> Result<usize, PatchError> {
    while i < lines.len() && lines[i].starts_with("@@") {
        let (old_count, new_count) = parse_hunk_header(lines[i])
            .ok_or_else(|| malformed(i, format!("bad hunk header `{}`", truncate(lines[i]))))?;
        let header_line = i;
        let (mut old_seen, mut new_seen) = (0u64, 0u64);
        i += 1;
        while old_seen < old_count || new_seen < new_count {
            let short = |old_seen, new_seen| {
                short_hunk(header_line, old_count, new_count, old_seen, new_seen)
            };
            let Some(line) = lines.get(i) else {
                return Err(short(old_seen, new_seen));
            };
            match line.as_bytes().first() {
                Some(b' ') | None => {
                    // An empty line is a context line whose space was stripped by an editor; the
                    // final empty string after a trailing newline is not.
                    if line.is_empty() && i + 1 == lines.len() {
                        return Err(short(old_seen, new_seen));
                    }
                    old_seen += 1;
                    new_seen += 1;
                }
                Some(b'-') => old_seen += 1,
                Some(b'+') => new_seen += 1,
                Some(b'\\') => {}
                _ => {
                    return Err(short_hunk(
                        header_line,
                        old_count,
                        new_count,
                        old_seen,
                        new_seen,
                    ));
                }
            }
            i += 1;
        }
        if old_seen > old_count || new_seen > new_count {
            return Err(malformed(
                header_line,
                "hunk has more lines than its header says",
            ));
        }
        while lines.get(i).is_some_and(|l| l.starts_with('\\')) {
            i += 1;
        }
        change.hunks += 1;
    }
    Ok(i)
}

fn short_hunk(line: usize, old: u64, new: u64, old_seen: u64, new_seen: u64) -> PatchError {
    malformed(
        line,
        format!(
            "hunk expects {old} old and {new} new lines but has {old_seen} and {new_seen} (truncated or hand-edited patch?)"
        ),
    )
}

fn parse_hunk_header(line: &str) -> Option<(u64, u64)> {
    let rest = line.strip_prefix("@@ -")?;
    let end = rest.find(" @@")?;
    let (old, new) = rest[..end].split_once(" +")?;
    Some((range_count(old)?, range_count(new)?))
}

fn range_count(range: &str) -> Option<u64> {
    match range.split_once(',') {
        Some((start, count)) => {
            start.parse::<u64>().ok()?;
            count.parse().ok()
        }
        None => {
            range.parse::<u64>().ok()?;
            Some(1)
        }
    }
}

fn truncate(line: &str) -> String {
    line.chars().take(60).collect()
}

/// `a/x b/y` (possibly quoted) into (`x`, `y`).
fn split_git_header(rest: &str) -> Option<(String, String)> {
    if rest.starts_with('"') {
        let (first, remainder) = take_quoted(rest)?;
        let second = remainder.trim_start();
        let second = if second.starts_with('"') {
            take_quoted(second)?.0
        } else {
            second.to_owned()
        };
        return Some((strip_prefix_dir(&first), strip_prefix_dir(&second)));
    }
    // Unquoted: the two halves are `a/P b/P` for the same P unless renamed; try the split that
    // makes them equal first, then the last ` b/`.
    // The middle byte is checked before slicing: only a space (ASCII, so a character boundary)
    // splits there; any other byte may be inside a multi-byte character.
    let bytes = rest.len();
    if bytes % 2 == 1 && rest.as_bytes().get(bytes / 2) == Some(&b' ') {
        let half = bytes / 2;
        let (a, b) = (&rest[..half], &rest[half + 1..]);
        if strip_prefix_dir(a) == strip_prefix_dir(b) {
            return Some((strip_prefix_dir(a), strip_prefix_dir(b)));
        }
    }
    if rest.ends_with('"') {
        let start = rest.rfind(" \"")?;
        let second = take_quoted(&rest[start + 1..])?.0;
        return Some((strip_prefix_dir(&rest[..start]), strip_prefix_dir(&second)));
    }
    let idx = rest.rfind(" b/").or_else(|| rest.find(' '))?;
    Some((
        strip_prefix_dir(&rest[..idx]),
        strip_prefix_dir(&rest[idx + 1..]),
    ))
}

fn strip_prefix_dir(p: &str) -> String {
    p.split_once('/')
        .filter(|(head, _)| head.len() == 1)
        .map_or(p, |(_, tail)| tail)
        .to_owned()
}

/// The path on a `---`/`+++` line; `None` for `/dev/null`.
fn header_path(raw: &str) -> Option<String> {
    let raw = raw.split('\t').next().unwrap_or(raw).trim_end();
    let path = if raw.starts_with('"') {
        take_quoted(raw)
            .map(|(p, _)| p)
            .unwrap_or_else(|| raw.to_owned())
    } else {
        raw.to_owned()
    };
    if path == "/dev/null" {
        return None;
    }
    Some(strip_prefix_dir(&path))
}

fn unquote(p: &str) -> String {
    if p.starts_with('"') {
        take_quoted(p)
            .map(|(s, _)| s)
            .unwrap_or_else(|| p.to_owned())
    } else {
        p.to_owned()
    }
}

/// Reads a C-style quoted string as git writes it; returns it and the remainder.
fn take_quoted(s: &str) -> Option<(String, &str)> {
    let bytes = s.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return Some((String::from_utf8_lossy(&out).into_owned(), &s[i + 1..])),
            b'\\' => {
                i += 1;
                let c = *bytes.get(i)?;
                match c {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'v' => out.push(11),
                    b'0'..=b'7' => {
                        let digits = bytes.get(i..i + 3)?;
                        let v = u8::from_str_radix(std::str::from_utf8(digits).ok()?, 8).ok()?;
                        out.push(v);
                        i += 2;
                    }
                    other => out.push(other),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_diff_with_new_deleted_renamed_and_binary_files() {
        let text = "\
diff --git a/src/a.py b/src/a.py
index 111..222 100644
--- a/src/a.py
+++ b/src/a.py
@@ -1,2 +1,2 @@
 x = 1
-y = 2
+y = 3
diff --git a/tests/test_new.py b/tests/test_new.py
new file mode 100644
--- /dev/null
+++ b/tests/test_new.py
@@ -0,0 +1 @@
+def test_x(): pass
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/x y.py b/z.py
similarity index 100%
rename from x y.py
rename to z.py
diff --git a/img.png b/img.png
new file mode 100644
index 0000000..1234567
GIT binary patch
literal 4
LcmZ?wbhEX0

literal 0
HcmV?d00001

";
        let p = parse(text).unwrap();
        assert_eq!(p.files.len(), 5);
        assert_eq!(p.files[1].old_path, None);
        assert_eq!(p.files[2].new_path, None);
        assert_eq!(p.files[3].old_path.as_deref(), Some("x y.py"));
        assert_eq!(p.files[3].new_path.as_deref(), Some("z.py"));
        assert!(p.files[4].binary);
        assert_eq!(
            p.touched_paths(),
            [
                "src/a.py",
                "tests/test_new.py",
                "old.txt",
                "x y.py",
                "z.py",
                "img.png"
            ]
        );
    }

    #[test]
    fn crlf_and_plain_unified_diff() {
        let text = "--- a/f.py\r\n+++ b/f.py\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n\\ No newline at end of file\r\n";
        let p = parse(text).unwrap();
        assert_eq!(p.touched_paths(), ["f.py"]);
    }

    #[test]
    fn truncated_hunk_is_an_error_with_its_line() {
        let text = "--- a/f.py\n+++ b/f.py\n@@ -1,3 +1,3 @@\n a\n-b\n";
        match parse(text) {
            Err(PatchError::Malformed { line, message }) => {
                assert_eq!(line, 3);
                assert!(message.contains("expects 3 old"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn not_a_patch() {
        assert_eq!(parse("hello world\n"), Err(PatchError::NoFiles));
        assert_eq!(parse(" \n"), Err(PatchError::Empty));
    }

    #[test]
    fn multi_byte_characters_in_the_middle_of_a_git_header() {
        // `a/xé b/y` has 9 bytes: the middle one is the second byte of `é`.
        for header in ["a/xé b/y", "a/日本 b/x", "é", "éé", "a/é b/é", "a/x😀 b/x"] {
            let _ = parse(&format!("diff --git {header}\nnew file mode 100644\n"));
        }
        let p = parse("diff --git a/xé b/y\nnew file mode 100644\n").unwrap();
        assert_eq!(p.files[0].new_path.as_deref(), Some("y"));
    }

    #[test]
    fn quoted_paths() {
        let text = "diff --git \"a/t\\303\\251st.py\" \"b/t\\303\\251st.py\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/t\\303\\251st.py\"\n@@ -0,0 +1 @@\n+x\n";
        assert_eq!(parse(text).unwrap().touched_paths(), ["tést.py"]);
    }

    #[test]
    fn devices_pipes_and_directories_are_refused_by_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (path, what) in [
            (Path::new("/dev/zero"), "character device"),
            (dir.path(), "directory"),
        ] {
            let err = read_file(path, DEFAULT_MAX_PATCH_BYTES)
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
            let err = read_file(&fifo, DEFAULT_MAX_PATCH_BYTES).expect_err("refused");
            assert!(err.to_string().contains("named pipe"), "{err}");
        }
    }

    #[test]
    fn the_cap_holds() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("p.diff");
        fs_err::write(&p, vec![b'x'; 2048]).expect("write");
        assert_eq!(read_file(&p, 2048).expect("at the cap").len(), 2048);
        let err = read_file(&p, 2047).expect_err("over the cap").to_string();
        assert!(err.contains("--max-patch-mb"), "{err}");
        assert!(err.starts_with(&p.display().to_string()), "{err}");
    }
}

/// Undoes a CRLF conversion applied to a whole patch in transit (JSON exports, Windows tools): when
/// the diff's own header lines end in `\r\n`, every `\r\n` becomes `\n`. Patches whose headers end
/// in `\n` are left alone (their `\r` belong to the files they change). Returns whether it changed.
pub fn normalize_transport(patch: &[u8]) -> (Vec<u8>, bool) {
    let headers_crlf = patch
        .split(|b| *b == b'\n')
        .filter(|l| {
            l.starts_with(b"diff --git ")
                || l.starts_with(b"--- ")
                || l.starts_with(b"+++ ")
                || l.starts_with(b"@@ ")
        })
        .take(8)
        .collect::<Vec<_>>();
    if headers_crlf.is_empty() || !headers_crlf.iter().all(|l| l.ends_with(b"\r")) {
        return (patch.to_vec(), false);
    }
    let mut out = Vec::with_capacity(patch.len());
    let mut i = 0;
    while i < patch.len() {
        if patch[i] == b'\r' && patch.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        out.push(patch[i]);
        i += 1;
    }
    (out, true)
}

#[cfg(test)]
mod transport_tests {
    use super::normalize_transport;

    #[test]
    fn crlf_patches() {
        let (fixed, changed) =
            normalize_transport(b"--- a/f\r\n+++ b/f\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n");
        assert!(changed);
        assert_eq!(fixed, b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n");
        let keep = b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\r\n+b\r\n";
        assert_eq!(normalize_transport(keep), (keep.to_vec(), false));
    }
}
