//! A dataset named as on the Hugging Face Hub (`AweAI-Team/BeyondSWE`, or
//! `hf://datasets/AweAI-Team/BeyondSWE`), found offline where `huggingface_hub` downloaded it: its
//! local cache (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`), in
//! `datasets--ORG--NAME/snapshots/<commit>/`, the commit being the one `refs/main` names.
//!
//! In the snapshot, the dataset is its one JSONL file (BeyondSWE's `beyondswe.jsonl`), else its
//! Parquet files in name order. Without either on `main`, the Hub's Parquet conversion
//! (`refs/convert/parquet`) is looked at too. Files in a snapshot are links into the cache's
//! `blobs/`, and are followed there only.

use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a Hub name could not be found in the local cache.
#[derive(Debug, Error)]
pub enum HubError {
    /// The dataset was never downloaded into this cache.
    #[error(
        "`{name}` is not a file or directory, and the Hugging Face cache has no dataset of that \
         name (looked in {}); download it first (`hf download --repo-type dataset {name}`, or \
         `huggingface_hub.snapshot_download(\"{name}\", repo_type=\"dataset\")`), or give the \
         JSONL or Parquet file",
        dir.display()
    )]
    NotCached {
        /// The name as given.
        name: String,
        /// The directory the dataset would be in.
        dir: PathBuf,
    },
    /// The dataset is cached, but no snapshot holds a JSONL or Parquet file.
    #[error(
        "the Hugging Face cache holds `{name}` ({}), but no snapshot of it has a JSONL or \
         Parquet file{}",
        dir.display(),
        if .several.is_empty() { String::new() } else { format!(" that is the dataset: it has several JSONL files ({}); give one", .several.join(", ")) }
    )]
    NoData {
        /// The name as given.
        name: String,
        /// The dataset's cache directory.
        dir: PathBuf,
        /// JSONL files found where one was expected.
        several: Vec<String>,
    },
    /// Several snapshots and no `refs/main` to say which is the dataset's.
    #[error(
        "the Hugging Face cache holds `{name}` ({}) in {} snapshots ({}) and no refs/main says \
         which is current; download it again (`hf download --repo-type dataset {name}` writes \
         the ref), or give the JSONL or Parquet file of the snapshot you mean",
        dir.display(),
        snapshots.len(),
        snapshots.join(", ")
    )]
    AmbiguousSnapshots {
        /// The name as given.
        name: String,
        /// The dataset's cache directory.
        dir: PathBuf,
        /// The snapshots' names (commits).
        snapshots: Vec<String>,
    },
}

/// `ORG/NAME` when `arg` names a Hub dataset (`ORG/NAME` or `hf://datasets/ORG/NAME`) rather
/// than a path on disk: two plain components, and nothing at that path.
pub fn hub_name(arg: &Path) -> Option<String> {
    let text = arg.to_str()?;
    let name = text
        .strip_prefix("hf://datasets/")
        .or_else(|| text.strip_prefix("hf://"))
        .unwrap_or(text);
    let explicit = name.len() != text.len();
    let mut parts = name.split('/');
    let (org, repo) = (parts.next()?, parts.next()?);
    let plain = |s: &str| {
        !s.is_empty()
            && s != "."
            && s != ".."
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    if parts.next().is_some() || !plain(org) || !plain(repo) {
        return None;
    }
    if !explicit && arg.exists() {
        return None;
    }
    Some(format!("{org}/{repo}"))
}

/// The Hub's cache directory, as `huggingface_hub` finds it.
pub fn cache_dir() -> PathBuf {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("HF_HUB_CACHE").or_else(|| var("HUGGINGFACE_HUB_CACHE")) {
        return dir;
    }
    if let Some(home) = var("HF_HOME") {
        return home.join("hub");
    }
    crate::files::user_cache_home()
        .join("huggingface")
        .join("hub")
}

/// The dataset files of the Hub dataset `name` (`ORG/NAME`) in the cache `cache`: one JSONL
/// file, or Parquet files in name order.
pub fn resolve(name: &str, cache: &Path) -> Result<Vec<PathBuf>, HubError> {
    let dir = cache.join(format!("datasets--{}", name.replace('/', "--")));
    if !dir.is_dir() {
        return Err(HubError::NotCached {
            name: name.to_owned(),
            dir,
        });
    }
    let mut several = Vec::new();
    for revision in ["main", "refs/convert/parquet"] {
        let Some(snapshot) = snapshot(&dir, revision) else {
            continue;
        };
        let files = data_files(&snapshot);
        let jsonl: Vec<&PathBuf> = files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        let chosen = match jsonl.as_slice() {
            [one] => Some(vec![(*one).clone()]),
            [] => None,
            many => match many
                .iter()
                .find(|p| p.file_name().is_some_and(|n| n == "beyondswe.jsonl"))
            {
                Some(p) => Some(vec![(*p).clone()]),
                None => {
                    several = many
                        .iter()
                        .map(|p| p.strip_prefix(&snapshot).unwrap_or(p).display().to_string())
                        .collect();
                    None
                }
            },
        };
        if let Some(files) = chosen {
            return Ok(files);
        }
        let parquet: Vec<PathBuf> = files
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
            .collect();
        if !parquet.is_empty() && several.is_empty() {
            return Ok(parquet);
        }
    }
    if !dir.join("refs").join("main").exists() {
        let mut snapshots: Vec<String> = std::fs::read_dir(dir.join("snapshots"))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if snapshots.len() > 1 {
            snapshots.sort();
            return Err(HubError::AmbiguousSnapshots {
                name: name.to_owned(),
                dir,
                snapshots,
            });
        }
    }
    Err(HubError::NoData {
        name: name.to_owned(),
        dir,
        several,
    })
}

/// The snapshot directory `refs/<revision>` names; for `main` without a ref, the one snapshot
/// there is.
fn snapshot(dir: &Path, revision: &str) -> Option<PathBuf> {
    let snapshots = dir.join("snapshots");
    let named = crate::files::read_text(
        &dir.join("refs").join(revision),
        crate::files::SMALL_FILE_MAX,
    )
    .ok()
    .map(|c| c.trim().to_owned())
    .filter(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_alphanumeric()));
    if let Some(commit) = named {
        let s = snapshots.join(commit);
        return s.is_dir().then_some(s);
    }
    if revision != "main" {
        return None;
    }
    let mut all = std::fs::read_dir(&snapshots)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir());
    let one = all.next()?;
    all.next().is_none().then_some(one)
}

/// The JSONL and Parquet files of a snapshot, in name order, hidden directories left out. A
/// file is a link into the cache's blobs; one that leads anywhere else is left out, and so is a
/// snapshot or a blobs folder that is itself a link.
fn data_files(snapshot: &Path) -> Vec<PathBuf> {
    // The snapshot and the blobs are the cache's own folders: a link in their place (to `/`,
    // to a folder elsewhere) would lead the lookup out of the cache, and is not followed.
    let own_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_dir());
    if !own_dir(snapshot) {
        return Vec::new();
    }
    let blobs = snapshot
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("blobs"))
        .filter(|b| own_dir(b))
        .and_then(|b| b.canonicalize().ok());
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(snapshot)
        .follow_root_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(Result::ok)
        .map(walkdir::DirEntry::into_path)
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "jsonl" || e == "parquet")
        })
        .filter(|p| {
            let Ok(meta) = std::fs::symlink_metadata(p) else {
                return false;
            };
            if meta.file_type().is_file() {
                return true;
            }
            meta.file_type().is_symlink()
                && p.canonicalize().is_ok_and(|target| {
                    target.is_file() && blobs.as_ref().is_some_and(|b| target.starts_with(b))
                })
        })
        .collect();
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths_are_told_apart() {
        assert_eq!(
            hub_name(Path::new("AweAI-Team/BeyondSWE")).as_deref(),
            Some("AweAI-Team/BeyondSWE")
        );
        assert_eq!(
            hub_name(Path::new("hf://datasets/AweAI-Team/BeyondSWE")).as_deref(),
            Some("AweAI-Team/BeyondSWE")
        );
        for not in [
            "data.jsonl",
            "a/b/c",
            "../x",
            "./x",
            "/abs/x",
            "a/",
            "hf://datasets/a/../b",
            "src/dataset", // exists: a path
        ] {
            assert_eq!(hub_name(Path::new(not)), None, "{not}");
        }
    }

    /// Two snapshots with a dataset file each and no `refs/main`: the error says there are
    /// several snapshots and no ref, not that none has a dataset file.
    #[test]
    fn several_snapshots_without_a_ref_are_named_as_such() {
        let cache = tempfile::tempdir().unwrap();
        let dir = cache.path().join("datasets--o--d");
        for commit in ["aaa111", "bbb222"] {
            let snap = dir.join("snapshots").join(commit);
            fs_err::create_dir_all(&snap).unwrap();
            fs_err::write(snap.join("data.jsonl"), "{}\n").unwrap();
        }
        let e = resolve("o/d", cache.path()).unwrap_err().to_string();
        assert!(
            e.contains("2 snapshots") && e.contains("aaa111, bbb222") && e.contains("refs/main"),
            "{e}"
        );
        assert!(!e.contains("no snapshot of it has"), "{e}");
    }

    /// A snapshot that links out of the cache, or a blobs folder that links to `/`, leads
    /// nowhere: the JSONL out there is never read.
    #[cfg(unix)]
    #[test]
    fn links_in_place_of_the_caches_folders_are_not_followed() {
        let cache = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs_err::write(outside.path().join("data.jsonl"), "{}\n").unwrap();
        let dir = cache.path().join("datasets--o--d");
        fs_err::create_dir_all(dir.join("snapshots")).unwrap();
        fs_err::create_dir_all(dir.join("refs")).unwrap();
        fs_err::write(dir.join("refs/main"), "abc123").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.join("snapshots/abc123")).unwrap();
        assert!(resolve("o/d", cache.path()).is_err());
        // A real snapshot whose file links into `blobs`, which is a link to `/`.
        fs_err::remove_file(dir.join("snapshots/abc123")).unwrap();
        fs_err::create_dir_all(dir.join("snapshots/abc123")).unwrap();
        std::os::unix::fs::symlink("/", dir.join("blobs")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("data.jsonl"),
            dir.join("snapshots/abc123/data.jsonl"),
        )
        .unwrap();
        assert!(resolve("o/d", cache.path()).is_err());
    }
}
