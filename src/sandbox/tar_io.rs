//! Small tar helpers for moving files through the engine API.

use std::io::{Read, Write};

/// Builds a tar with fixed metadata (mode, mtime 0, root owner), in insertion order: in memory
/// (`new`) or into any writer (`to`).
pub struct TarBuilder<W: Write = Vec<u8>> {
    builder: tar::Builder<W>,
}

impl Default for TarBuilder {
    fn default() -> Self {
        TarBuilder::new()
    }
}

impl TarBuilder {
    /// A tar built in memory; [`TarBuilder::finish`] returns its bytes.
    pub fn new() -> TarBuilder {
        TarBuilder::to(Vec::new())
    }
}

impl<W: Write> TarBuilder<W> {
    /// A tar written into `out` as entries are added.
    pub fn to(out: W) -> TarBuilder<W> {
        let mut builder = tar::Builder::new(out);
        builder.mode(tar::HeaderMode::Deterministic);
        TarBuilder { builder }
    }

    fn header(kind: tar::EntryType, size: u64, mode: u32) -> tar::Header {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_size(size);
        header.set_mode(mode);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        header
    }

    /// Adds a regular file.
    pub fn file(&mut self, path: &str, data: &[u8], mode: u32) -> std::io::Result<&mut Self> {
        let mut header = Self::header(tar::EntryType::Regular, data.len() as u64, mode);
        self.builder.append_data(&mut header, path, data)?;
        Ok(self)
    }

    /// Adds a regular file of `len` bytes read from `data`.
    pub fn file_from(
        &mut self,
        path: &str,
        len: u64,
        data: &mut dyn Read,
        mode: u32,
    ) -> std::io::Result<&mut Self> {
        let mut header = Self::header(tar::EntryType::Regular, len, mode);
        self.builder.append_data(&mut header, path, data)?;
        Ok(self)
    }

    /// Adds a directory.
    pub fn dir(&mut self, path: &str, mode: u32) -> std::io::Result<&mut Self> {
        let mut header = Self::header(tar::EntryType::Directory, 0, mode);
        self.builder
            .append_data(&mut header, path, std::io::empty())?;
        Ok(self)
    }

    /// Adds a symbolic link at `path` pointing to `target`.
    pub fn symlink(&mut self, path: &str, target: &str) -> std::io::Result<&mut Self> {
        let mut header = Self::header(tar::EntryType::Symlink, 0, 0o777);
        self.builder.append_link(&mut header, path, target)?;
        Ok(self)
    }

    /// Ends the archive and returns the writer (the bytes, for [`TarBuilder::new`]).
    pub fn finish(self) -> std::io::Result<W> {
        self.builder.into_inner()
    }
}

/// The regular files of a tar archive, by file name (directories dropped).
pub fn files_in_tar(
    tar_bytes: &[u8],
) -> std::io::Result<std::collections::BTreeMap<String, Vec<u8>>> {
    let mut files = std::collections::BTreeMap::new();
    let mut archive = tar::Archive::new(tar_bytes);
    for entry in archive.entries()? {
        let mut entry = entry?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry
            .path()?
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut data = Vec::new();
        entry.read_to_end(&mut data)?;
        files.insert(name, data);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut t = TarBuilder::new();
        t.dir("d", 0o755).unwrap();
        t.file("d/x.txt", b"hello", 0o644).unwrap();
        let bytes = t.finish().unwrap();
        assert_eq!(files_in_tar(&bytes).unwrap()["x.txt"], b"hello");
    }
}
