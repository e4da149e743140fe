//! Repository trees read safely from directories and archives.

use super::SubmissionError;
use crate::sandbox::TarBuilder;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Component, Path};
use std::sync::{Arc, Mutex};

/// A file's contents: a stretch of the tree's spool, with its length and SHA-256.
#[derive(Debug, Clone)]
pub struct Blob {
    offset: u64,
    /// Size in bytes.
    pub len: u64,
    /// SHA-256 of the contents.
    pub sha256: [u8; 32],
}

/// Two blobs are the same contents whatever their place in a spool.
impl PartialEq for Blob {
    fn eq(&self, other: &Blob) -> bool {
        self.len == other.len && self.sha256 == other.sha256
    }
}

impl Eq for Blob {}

/// What a tree entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File {
        /// Its contents, in the tree's spool.
        blob: Blob,
        /// Any execute bit was set: placed with mode 755, else 644.
        executable: bool,
    },
    /// A directory (placed with mode 755).
    Dir,
    /// A symbolic link; its target stays inside the tree, followed through the tree's own links.
    Symlink {
        /// The target as written in the link, relative.
        target: String,
    },
}

/// One path of a repository tree and what is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// Relative path with `/` separators, never empty, no `.` or `..` components.
    pub path: String,
    /// A file, a directory or a link.
    pub kind: EntryKind,
}

/// Where the contents of a tree's files wait until they are uploaded: one unnamed temporary
/// file, so that memory stays flat however large the tree (an archive that expands to 1 GiB
/// costs 1 GiB of temporary disk, never of memory).
#[derive(Debug, Clone, Default)]
struct Spool(Option<Arc<Mutex<std::fs::File>>>);

impl Spool {
    fn file(&mut self) -> std::io::Result<Arc<Mutex<std::fs::File>>> {
        if self.0.is_none() {
            self.0 = Some(Arc::new(Mutex::new(tempfile::tempfile()?)));
        }
        Ok(self.0.clone().unwrap_or_else(|| unreachable!("set above")))
    }

    /// Appends everything `reader` gives, up to `max` bytes (an error past it).
    fn append(&mut self, reader: &mut dyn Read, max: u64) -> Result<Option<Blob>, std::io::Error> {
        use sha2::{Digest, Sha256};
        let file = self.file()?;
        let mut file = file
            .lock()
            .map_err(|_| std::io::Error::other("spool lock poisoned"))?;
        let offset = file.seek(SeekFrom::End(0))?;
        let mut h = Sha256::new();
        let mut buf = vec![0u8; 64 * 1024];
        let mut len = 0u64;
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            len += n as u64;
            if len > max {
                return Ok(None);
            }
            h.update(&buf[..n]);
            file.write_all(&buf[..n])?;
        }
        Ok(Some(Blob {
            offset,
            len,
            sha256: h.finalize().into(),
        }))
    }
}

/// A repository as a list of entries, sorted by path; file contents wait in a spool on disk.
#[derive(Debug, Clone, Default)]
pub struct RepoTree {
    /// Every entry, sorted by path, each path once; `.git` and below are left out.
    pub entries: Vec<TreeEntry>,
    /// Paths skipped on purpose (VCS internals).
    pub skipped: Vec<String>,
    spool: Spool,
}

/// Trees are equal when their entries are (contents compared by hash).
impl PartialEq for RepoTree {
    fn eq(&self, other: &RepoTree) -> bool {
        self.entries == other.entries && self.skipped == other.skipped
    }
}

impl Eq for RepoTree {}

/// Caps on what a tree may expand to.
#[derive(Debug, Clone, Copy)]
pub struct TreeLimits {
    /// The most bytes all files together may hold once expanded (`--max-repo-mb`; 1 GiB by
    /// default).
    pub max_total_bytes: u64,
    /// The most entries (files, directories, links) a tree may have; 200,000 by default.
    pub max_entries: usize,
}

/// The default cap on what a Doc2Repo tree may expand to (`--max-repo-mb`).
pub const DEFAULT_MAX_TREE_BYTES: u64 = 1 << 30;

impl Default for TreeLimits {
    fn default() -> Self {
        TreeLimits {
            max_total_bytes: DEFAULT_MAX_TREE_BYTES,
            max_entries: 200_000,
        }
    }
}

impl RepoTree {
    /// Regular files, in order.
    pub fn files(&self) -> impl Iterator<Item = (&str, &Blob)> {
        self.entries.iter().filter_map(|e| match &e.kind {
            EntryKind::File { blob, .. } => Some((e.path.as_str(), blob)),
            _ => None,
        })
    }

    /// The contents of a file of this tree (read from the spool).
    pub fn read(&self, blob: &Blob) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(usize::try_from(blob.len).unwrap_or(0));
        SpoolReader::new(&self.spool, blob).read_to_end(&mut out)?;
        Ok(out)
    }

    /// Bytes of all files together.
    pub fn total_bytes(&self) -> u64 {
        self.files().map(|(_, b)| b.len).sum()
    }

    /// A digest of the tree's paths, kinds, modes and contents (for resume keys).
    pub fn digest(&self) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for e in &self.entries {
            h.update(e.path.as_bytes());
            match &e.kind {
                EntryKind::Dir => h.update([0, b'd']),
                EntryKind::File { blob, executable } => {
                    h.update([0, if *executable { b'x' } else { b'f' }]);
                    h.update(blob.len.to_le_bytes());
                    h.update(blob.sha256);
                }
                EntryKind::Symlink { target } => {
                    h.update([0, b'l']);
                    h.update(target.as_bytes());
                }
            }
            h.update([0]);
        }
        h.finalize().into()
    }

    /// Writes the tree as a tar archive to `out`, file by file through a fixed-size buffer.
    pub fn write_tar<W: Write>(&self, out: W) -> std::io::Result<W> {
        let mut tar = TarBuilder::to(out);
        for e in &self.entries {
            match &e.kind {
                EntryKind::Dir => tar.dir(&e.path, 0o755)?,
                EntryKind::File { blob, executable } => {
                    let mode = if *executable { 0o755 } else { 0o644 };
                    let mut reader = SpoolReader::new(&self.spool, blob);
                    tar.file_from(&e.path, blob.len, &mut reader, mode)?
                }
                EntryKind::Symlink { target } => tar.symlink(&e.path, target)?,
            };
        }
        tar.finish()
    }

    /// The tree as a tar archive in memory (small trees: build contexts, tests).
    pub fn to_tar(&self) -> std::io::Result<Vec<u8>> {
        self.write_tar(Vec::new())
    }
}

/// Reads one blob out of a spool in chunks (what `tar` wants for a member's contents).
struct SpoolReader<'a> {
    spool: &'a Spool,
    blob: &'a Blob,
    done: u64,
}

impl<'a> SpoolReader<'a> {
    fn new(spool: &'a Spool, blob: &'a Blob) -> SpoolReader<'a> {
        SpoolReader {
            spool,
            blob,
            done: 0,
        }
    }
}

impl Read for SpoolReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.blob.len - self.done;
        if left == 0 || buf.is_empty() {
            return Ok(0);
        }
        let n = left.min(buf.len() as u64) as usize;
        let file = self
            .spool
            .0
            .as_ref()
            .ok_or_else(|| std::io::Error::other("the tree's spool is gone"))?;
        let mut f = file
            .lock()
            .map_err(|_| std::io::Error::other("spool lock poisoned"))?;
        f.seek(SeekFrom::Start(self.blob.offset + self.done))?;
        f.read_exact(&mut buf[..n])?;
        self.done += n as u64;
        Ok(n)
    }
}

/// Normalises an entry path; `None` for the root itself.
fn clean_path(raw: &str) -> Result<Option<String>, String> {
    if raw.starts_with('/') || raw.starts_with('\\') || raw.contains('\0') {
        return Err("absolute path".into());
    }
    let mut parts = Vec::new();
    for comp in Path::new(raw).components() {
        match comp {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => return Err("`..` in the path".into()),
            Component::RootDir | Component::Prefix(_) => return Err("absolute path".into()),
        }
    }
    if parts.iter().any(|p| p.contains('\\')) {
        return Err("backslash in the path".into());
    }
    Ok((!parts.is_empty()).then(|| parts.join("/")))
}

/// A link target must stay inside the tree.
fn check_link(path: &str, target: &str) -> Result<(), String> {
    if target.starts_with('/') {
        return Err(format!("link to the absolute path `{target}`"));
    }
    let mut depth: i64 = path.matches('/').count() as i64;
    for comp in target.split('/') {
        match comp {
            "" | "." => {}
            ".." => depth -= 1,
            _ => depth += 1,
        }
        if depth < 0 {
            return Err(format!("link `{target}` escapes the repository"));
        }
    }
    Ok(())
}

/// Follows `target` (relative to the directory `dir`) through the tree's own links; an error if
/// it leaves the tree at any point, is absolute, or loops.
fn resolve_link(dir: &str, target: &str, links: &BTreeMap<&str, &str>) -> Result<(), String> {
    let mut queue: std::collections::VecDeque<String> = dir
        .split('/')
        .chain(target.split('/'))
        .map(str::to_owned)
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut hops = 0;
    while let Some(comp) = queue.pop_front() {
        match comp.as_str() {
            "" | "." => {}
            ".." => {
                if out.pop().is_none() {
                    return Err("resolves to a path outside the repository".into());
                }
            }
            _ => {
                out.push(comp);
                let here = out.join("/");
                if let Some(next) = links.get(here.as_str()) {
                    hops += 1;
                    if hops > 40 {
                        return Err("a loop of links".into());
                    }
                    if next.starts_with('/') {
                        return Err(format!("goes through a link to the absolute path `{next}`"));
                    }
                    out.pop();
                    for c in next.split('/').rev() {
                        queue.push_front(c.to_owned());
                    }
                }
            }
        }
    }
    Ok(())
}

fn is_vcs(path: &str) -> bool {
    path == ".git" || path.starts_with(".git/")
}

struct Collector<'a> {
    origin: &'a Path,
    limits: TreeLimits,
    total: u64,
    tree: RepoTree,
}

impl Collector<'_> {
    fn unsafe_entry(&self, entry: &str, reason: impl Into<String>) -> SubmissionError {
        SubmissionError::Unsafe {
            path: self.origin.to_owned(),
            entry: entry.to_owned(),
            reason: reason.into(),
        }
    }

    fn add(&mut self, raw: &str, kind: EntryKind) -> Result<(), SubmissionError> {
        let Some(path) = clean_path(raw).map_err(|r| self.unsafe_entry(raw, r))? else {
            return Ok(());
        };
        if is_vcs(&path) {
            if !path.contains('/') {
                self.tree.skipped.push(path);
            }
            return Ok(());
        }
        if let EntryKind::Symlink { target } = &kind {
            check_link(&path, target).map_err(|r| self.unsafe_entry(raw, r))?;
        }
        if let EntryKind::File { blob, .. } = &kind {
            self.total += blob.len;
        }
        if self.total > self.limits.max_total_bytes
            || self.tree.entries.len() >= self.limits.max_entries
        {
            return Err(self.too_large());
        }
        self.tree.entries.push(TreeEntry { path, kind });
        Ok(())
    }

    /// Spools at most what is left of the byte budget; over it is `TooLarge`.
    fn spool(&mut self, reader: &mut dyn Read, entry: &str) -> Result<Blob, SubmissionError> {
        let left = self.limits.max_total_bytes.saturating_sub(self.total);
        match self.tree.spool.append(reader, left) {
            Ok(Some(blob)) => Ok(blob),
            Ok(None) => Err(self.too_large()),
            Err(e) => Err(SubmissionError::BadArchive {
                path: self.origin.to_owned(),
                message: format!("{entry}: {e}"),
            }),
        }
    }

    fn too_large(&self) -> SubmissionError {
        SubmissionError::TooLarge {
            path: self.origin.to_owned(),
            message: format!(
                "expands beyond {} MiB or {} entries (--max-repo-mb raises the first)",
                self.limits.max_total_bytes / (1024 * 1024),
                self.limits.max_entries
            ),
        }
    }

    /// Sorts the entries and checks the tree as a whole: no path twice (but a directory), no
    /// member below a link or a file, and no link whose target, followed through every link of
    /// the tree, leaves it.
    fn finish(mut self) -> Result<RepoTree, SubmissionError> {
        self.tree.entries.sort_by(|a, b| a.path.cmp(&b.path));
        for pair in self.tree.entries.windows(2) {
            if pair[0].path == pair[1].path
                && !(matches!(pair[0].kind, EntryKind::Dir)
                    && matches!(pair[1].kind, EntryKind::Dir))
            {
                return Err(self.unsafe_entry(
                    &pair[0].path,
                    "the archive holds this path twice (duplicates are refused rather than \
                     guessing which copy counts)",
                ));
            }
        }
        self.tree.entries.dedup_by(|a, b| a.path == b.path);
        let links: BTreeMap<&str, &str> = self
            .tree
            .entries
            .iter()
            .filter_map(|e| match &e.kind {
                EntryKind::Symlink { target } => Some((e.path.as_str(), target.as_str())),
                _ => None,
            })
            .collect();
        let files: BTreeSet<&str> = self
            .tree
            .entries
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::File { .. }))
            .map(|e| e.path.as_str())
            .collect();
        for e in &self.tree.entries {
            let mut parent = e.path.as_str();
            while let Some((p, _)) = parent.rsplit_once('/') {
                if links.contains_key(p) {
                    return Err(self.unsafe_entry(&e.path, format!("its parent `{p}` is a link")));
                }
                if files.contains(p) {
                    return Err(self.unsafe_entry(
                        &e.path,
                        format!("its parent `{p}` is a file (a file/directory conflict)"),
                    ));
                }
                parent = p;
            }
        }
        for (path, target) in &links {
            let start = path.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
            resolve_link(start, target, &links)
                .map_err(|r| self.unsafe_entry(path, format!("link `{target}`: {r}")))?;
        }
        Ok(self.tree)
    }
}

/// Reads a repository from a directory or an archive (by extension).
pub fn read_tree(path: &Path, limits: TreeLimits) -> Result<RepoTree, SubmissionError> {
    let mut c = Collector {
        origin: path,
        limits,
        total: 0,
        tree: RepoTree::default(),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if path.is_dir() {
        read_dir(path, &mut c)?;
    } else if name.ends_with(".zip") {
        read_zip(path, &mut c)?;
    } else if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        let file = open(path)?;
        read_tar(flate2::read::MultiGzDecoder::new(file), &mut c)?;
    } else if name.ends_with(".tar") {
        read_tar(open(path)?, &mut c)?;
    } else {
        return Err(SubmissionError::UnknownKind {
            path: path.to_owned(),
        });
    }
    c.finish()
}

fn open(path: &Path) -> Result<std::fs::File, SubmissionError> {
    crate::files::open_input_io(path).map_err(|source| {
        SubmissionError::Io(crate::errors::PathError::new(path.to_owned(), source))
    })
}

fn read_dir(root: &Path, c: &mut Collector<'_>) -> Result<(), SubmissionError> {
    for entry in walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
    {
        let entry = entry.map_err(|e| {
            SubmissionError::Io(crate::errors::PathError::new(root.to_owned(), e.into()))
        })?;
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .replace('\\', "/");
        if rel.is_empty() {
            continue;
        }
        let ft = entry.file_type();
        let io = |source| {
            SubmissionError::Io(crate::errors::PathError::new(
                entry.path().to_owned(),
                source,
            ))
        };
        let kind = if ft.is_symlink() {
            let target = fs_err::read_link(entry.path()).map_err(io)?;
            EntryKind::Symlink {
                target: target.to_string_lossy().into_owned(),
            }
        } else if ft.is_dir() {
            EntryKind::Dir
        } else if ft.is_file() {
            let mut file = crate::files::open_input_io(entry.path()).map_err(io)?;
            let blob = c.spool(&mut file, &rel)?;
            EntryKind::File {
                blob,
                executable: is_executable(entry.path()),
            }
        } else {
            return Err(c.unsafe_entry(
                &rel,
                "not a regular file, directory or link (device, socket or FIFO)",
            ));
        };
        c.add(&rel, kind)?;
    }
    Ok(())
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs_err::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_path: &Path) -> bool {
    false
}

/// The most bytes one archive header may carry beyond its 512-byte block: a GNU long name or
/// long link, or a PAX header. Checked against the header's size field before any of it is
/// read: a 14 MB archive can claim a 3 GiB name.
const MAX_HEADER_BYTES: u64 = 16 * 1024;

/// Names and links that the next entry takes from the extension headers before it.
#[derive(Default)]
struct Pending {
    path: Option<Vec<u8>>,
    link: Option<Vec<u8>>,
}

/// The PAX records `path` and `linkpath` of a PAX header's data (`LEN KEY=VALUE\n` each).
fn pax_names(data: &[u8], pending: &mut Pending) -> Result<(), String> {
    let mut rest = data;
    while !rest.is_empty() {
        let space = rest
            .iter()
            .position(|b| *b == b' ')
            .ok_or("a PAX record without its length")?;
        let len: usize = std::str::from_utf8(&rest[..space])
            .ok()
            .and_then(|t| t.parse().ok())
            .filter(|n| *n > space + 1 && *n <= rest.len())
            .ok_or("a PAX record whose length is not one")?;
        let record = &rest[space + 1..len];
        let record = record.strip_suffix(b"\n").unwrap_or(record);
        if let Some(eq) = record.iter().position(|b| *b == b'=') {
            let (key, value) = (&record[..eq], &record[eq + 1..]);
            match key {
                b"path" => pending.path = Some(value.to_vec()),
                b"linkpath" => pending.link = Some(value.to_vec()),
                _ => {}
            }
        }
        rest = &rest[len..];
    }
    Ok(())
}

fn read_tar(reader: impl Read, c: &mut Collector<'_>) -> Result<(), SubmissionError> {
    let origin = c.origin.to_owned();
    let bad = |message: String| SubmissionError::BadArchive {
        path: origin.clone(),
        message,
    };
    let mut archive = tar::Archive::new(reader);
    // Raw: the extension headers (long names, long links, PAX) come as entries of their own,
    // so their size is checked before their data is read; the names are applied here.
    let mut pending = Pending::default();
    for entry in archive.entries().map_err(|e| bad(e.to_string()))?.raw(true) {
        let mut entry = entry.map_err(|e| bad(e.to_string()))?;
        let header = entry.header();
        let kind = header.entry_type();
        if matches!(
            kind,
            tar::EntryType::GNULongName
                | tar::EntryType::GNULongLink
                | tar::EntryType::XHeader
                | tar::EntryType::XGlobalHeader
        ) {
            let size = header.size().map_err(|e| bad(e.to_string()))?;
            if size > MAX_HEADER_BYTES {
                return Err(bad(format!(
                    "an extension header ({kind:?}) claims {size} bytes; names, links and PAX \
                     headers are refused past {MAX_HEADER_BYTES} bytes"
                )));
            }
            let mut data = Vec::with_capacity(size as usize);
            (&mut entry)
                .take(size)
                .read_to_end(&mut data)
                .map_err(|e| bad(e.to_string()))?;
            let name = || {
                let end = data.iter().position(|b| *b == 0).unwrap_or(data.len());
                data[..end].to_vec()
            };
            match kind {
                tar::EntryType::GNULongName => pending.path = Some(name()),
                tar::EntryType::GNULongLink => pending.link = Some(name()),
                tar::EntryType::XHeader => pax_names(&data, &mut pending)
                    .map_err(|m| bad(format!("bad PAX header: {m}")))?,
                _ => {}
            }
            continue;
        }
        let taken = std::mem::take(&mut pending);
        let path_bytes = taken
            .path
            .unwrap_or_else(|| entry.path_bytes().into_owned());
        let raw = String::from_utf8_lossy(&path_bytes).into_owned();
        let header = entry.header();
        let mode = header.mode().unwrap_or(0o644);
        let kind = match kind {
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let blob = c.spool(&mut entry, &raw)?;
                EntryKind::File {
                    blob,
                    executable: mode & 0o111 != 0,
                }
            }
            tar::EntryType::Directory => EntryKind::Dir,
            tar::EntryType::Symlink => {
                let target = taken
                    .link
                    .or_else(|| entry.link_name_bytes().map(|b| b.into_owned()))
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default();
                EntryKind::Symlink { target }
            }
            tar::EntryType::Link => return Err(c.unsafe_entry(&raw, "hard link (not supported)")),
            other => {
                return Err(c.unsafe_entry(
                    &raw,
                    format!("unsupported entry type {other:?} (device, FIFO or similar)"),
                ));
            }
        };
        c.add(&raw, kind)?;
    }
    Ok(())
}

fn read_zip(path: &Path, c: &mut Collector<'_>) -> Result<(), SubmissionError> {
    let bad = |message: String| SubmissionError::BadArchive {
        path: path.to_owned(),
        message,
    };
    let mut zip = zip::ZipArchive::new(open(path)?).map_err(|e| bad(e.to_string()))?;
    for i in 0..zip.len() {
        let mut file = zip.by_index(i).map_err(|e| bad(e.to_string()))?;
        let raw = file.name().to_owned();
        let mode = file.unix_mode();
        let is_link = mode.is_some_and(|m| m & 0o170000 == 0o120000);
        let kind = if file.is_dir() {
            EntryKind::Dir
        } else if is_link {
            let mut target = String::new();
            (&mut file)
                .take(4096)
                .read_to_string(&mut target)
                .map_err(|e| bad(format!("{raw}: {e}")))?;
            EntryKind::Symlink { target }
        } else {
            let blob = c.spool(&mut file, &raw)?;
            EntryKind::File {
                blob,
                executable: mode.is_some_and(|m| m & 0o111 != 0),
            }
        };
        c.add(&raw, kind)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_of(bytes: &[u8]) -> Result<RepoTree, SubmissionError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("repo.tar");
        fs_err::write(&path, bytes).unwrap();
        read_tree(&path, TreeLimits::default())
    }

    /// A 512-byte header of `kind` claiming `size` bytes, its checksum right.
    fn claiming_header(name: &str, kind: u8, size: u64) -> Vec<u8> {
        let mut h = tar::Header::new_gnu();
        h.set_path(name).unwrap();
        h.set_mode(0o644);
        h.set_size(size);
        h.set_entry_type(tar::EntryType::new(kind));
        h.set_cksum();
        h.as_bytes().to_vec()
    }

    #[test]
    fn a_long_name_header_claiming_gigabytes_is_refused_before_it_is_read() {
        // The header says 3 GiB; the archive holds a few blocks. Nothing near that is read.
        let mut bytes = claiming_header("././@LongLink", b'L', 3 << 30);
        bytes.extend(vec![b'a'; 4096]);
        let err = tar_of(&bytes).unwrap_err().to_string();
        assert!(err.contains("claims 3221225472 bytes"), "{err}");
        for kind in [b'K', b'x', b'g'] {
            let mut bytes = claiming_header("h", kind, 1 << 20);
            bytes.extend(vec![0u8; 1024]);
            let err = tar_of(&bytes).unwrap_err().to_string();
            assert!(err.contains("refused past 16384 bytes"), "{err}");
        }
    }

    #[test]
    fn long_names_long_links_and_pax_paths_within_the_bound_are_read() {
        let long = format!("pkg/{}/mod.py", "d".repeat(300));
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(3);
        h.set_mode(0o644);
        b.append_data(&mut h, &long, &b"x=1"[..]).unwrap();
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        b.append_link(&mut h, "pkg/link.py", format!("{}/mod.py", "d".repeat(300)))
            .unwrap();
        b.append_pax_extensions([("path", &b"pkg/pax_named.py"[..])])
            .unwrap();
        let mut h = tar::Header::new_ustar();
        h.set_size(3);
        h.set_mode(0o644);
        b.append_data(&mut h, "pkg/short.py", &b"y=2"[..]).unwrap();
        let tree = tar_of(&b.into_inner().unwrap()).unwrap();
        let paths: Vec<&str> = tree.entries.iter().map(|e| e.path.as_str()).collect();
        assert!(paths.contains(&long.as_str()), "{paths:?}");
        assert!(paths.contains(&"pkg/pax_named.py"), "{paths:?}");
        assert!(
            !paths.contains(&"pkg/short.py"),
            "the PAX path names it: {paths:?}"
        );
        let link = tree
            .entries
            .iter()
            .find(|e| e.path == "pkg/link.py")
            .unwrap();
        assert!(
            matches!(&link.kind, EntryKind::Symlink { target } if target.len() > 300),
            "{:?}",
            link.kind
        );
    }

    #[test]
    fn paths() {
        assert_eq!(clean_path("./a/b").unwrap().as_deref(), Some("a/b"));
        assert!(clean_path("/etc/passwd").is_err());
        assert!(clean_path("a/../../x").is_err());
        assert_eq!(clean_path(".").unwrap(), None);
        assert!(check_link("a/b", "../c").is_ok());
        assert!(check_link("a/b", "../../c").is_err());
        assert!(check_link("a", "/etc").is_err());
    }

    fn tar_with(build: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> tempfile::NamedTempFile {
        let mut b = tar::Builder::new(Vec::new());
        build(&mut b);
        let bytes = b.into_inner().unwrap();
        let f = tempfile::Builder::new().suffix(".tar").tempfile().unwrap();
        fs_err::write(f.path(), bytes).unwrap();
        f
    }

    fn raw_header(path: &str, kind: tar::EntryType, size: u64) -> tar::Header {
        let mut h = tar::Header::new_old();
        {
            let old = h.as_old_mut();
            old.name[..path.len()].copy_from_slice(path.as_bytes());
        }
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(0o644);
        h.set_cksum();
        h
    }

    #[test]
    fn archives_with_escapes_are_refused() {
        for (path, kind) in [
            ("../evil.py", tar::EntryType::Regular),
            ("/abs.py", tar::EntryType::Regular),
            ("dev", tar::EntryType::Char),
        ] {
            let f = tar_with(|b| {
                let h = raw_header(path, kind, 0);
                b.append(&h, std::io::empty()).unwrap();
            });
            let err = read_tree(f.path(), TreeLimits::default())
                .unwrap_err()
                .to_string();
            assert!(err.contains("refused"), "{path}: {err}");
        }
        let f = tar_with(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_size(0);
            b.append_link(&mut h, "link", "../../etc/passwd").unwrap();
        });
        assert!(
            read_tree(f.path(), TreeLimits::default())
                .unwrap_err()
                .to_string()
                .contains("escapes")
        );
    }

    #[test]
    fn link_chains_parents_duplicates_and_conflicts_are_refused() {
        let link = |b: &mut tar::Builder<Vec<u8>>, path: &str, target: &str| {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_size(0);
            b.append_link(&mut h, path, target).unwrap();
        };
        let file = |b: &mut tar::Builder<Vec<u8>>, path: &str| {
            let h = raw_header(path, tar::EntryType::Regular, 2);
            b.append(&h, &b"x\n"[..]).unwrap();
        };
        type Build<'a> = Box<dyn Fn(&mut tar::Builder<Vec<u8>>) + 'a>;
        let cases: Vec<(&str, Build<'_>)> = vec![
            // Each link alone stays inside; followed through each other they reach `/`.
            (
                "outside the repository",
                Box::new(|b| {
                    link(b, "p/q/0", "../..");
                    link(b, "p/q/1", "0/../..");
                }),
            ),
            (
                "is a link",
                Box::new(|b| {
                    link(b, "p/l", ".");
                    file(b, "p/l/x.py");
                }),
            ),
            (
                "twice",
                Box::new(|b| {
                    file(b, "a.py");
                    file(b, "a.py");
                }),
            ),
            (
                "file/directory conflict",
                Box::new(|b| {
                    file(b, "a");
                    file(b, "a/b.py");
                }),
            ),
            (
                "a loop",
                Box::new(|b| {
                    link(b, "x", "y");
                    link(b, "y", "x");
                }),
            ),
        ];
        for (want, build) in cases {
            let f = tar_with(|b| build(b));
            let err = read_tree(f.path(), TreeLimits::default())
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{want}: {err}");
        }
        // Links that stay inside, through other links, are fine.
        let f = tar_with(|b| {
            file(b, "pkg/data.txt");
            link(b, "alias", "pkg");
            link(b, "deep/d", "../alias/data.txt");
        });
        assert!(read_tree(f.path(), TreeLimits::default()).is_ok());
    }

    #[test]
    fn expansion_is_capped() {
        let f = tar_with(|b| {
            let data = vec![0u8; 10_000];
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            b.append_data(&mut h, "big.bin", data.as_slice()).unwrap();
        });
        let limits = TreeLimits {
            max_total_bytes: 1000,
            max_entries: 10,
        };
        assert!(matches!(
            read_tree(f.path(), limits),
            Err(SubmissionError::TooLarge { .. })
        ));
    }

    #[test]
    fn git_dir_is_skipped_and_tar_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::create_dir_all(dir.path().join(".git/objects")).unwrap();
        fs_err::write(dir.path().join(".git/HEAD"), "x").unwrap();
        fs_err::create_dir_all(dir.path().join("pkg")).unwrap();
        fs_err::write(dir.path().join("pkg/__init__.py"), "x = 1\n").unwrap();
        let tree = read_tree(dir.path(), TreeLimits::default()).unwrap();
        assert_eq!(tree.skipped, [".git"]);
        assert_eq!(
            tree.files().map(|(p, _)| p).collect::<Vec<_>>(),
            ["pkg/__init__.py"]
        );
        let tar = tree.to_tar().unwrap();
        let f = tempfile::Builder::new().suffix(".tar").tempfile().unwrap();
        fs_err::write(f.path(), tar).unwrap();
        assert_eq!(
            read_tree(f.path(), TreeLimits::default()).unwrap().entries,
            tree.entries
        );
    }
}
