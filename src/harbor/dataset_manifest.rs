//! Harbor's dataset manifest, `dataset.toml`: the dataset's package name and, for every task
//! directory beside it that names its package (`[task] name`), that name and the digest of the
//! task's content, as `harbor dataset add --scan` records them.
//!
//! The digest is Harbor's packager's: the sha256 of `<path>\0<sha256 of the file>\n` over the
//! task's files sorted by their path, where the files are `task.toml`, `instruction.md`,
//! `README.md`, `trajectory.json` and everything under `environment/`, `tests/`, `solution/` and
//! `steps/`, less what Harbor leaves out by default (`__pycache__/`, `*.pyc`, `.DS_Store`,
//! editor swap and backup files). A test holds it to the real Harbor's.

use super::TaskToml;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The manifest's file name, in the directory of the task directories.
pub const DATASET_TOML: &str = "dataset.toml";

/// Files of a task directory that are part of its content, besides the folders below.
const TOP_FILES: [&str; 4] = [
    "task.toml",
    "instruction.md",
    "README.md",
    "trajectory.json",
];
/// Folders of a task directory whose every file is part of its content.
const CONTENT_DIRS: [&str; 4] = ["environment", "tests", "solution", "steps"];

/// Why a manifest could not be written.
#[derive(Debug, Error)]
pub enum ManifestError {
    /// A task's file or the manifest could not be read or written.
    #[error(transparent)]
    Io(#[from] crate::errors::PathError),
    /// A task's `task.toml` could not be read as one.
    #[error("{path}: {message}")]
    TaskToml {
        /// The `task.toml` file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ManifestError + '_ {
    move |source| ManifestError::Io(crate::errors::PathError::new(path.to_owned(), source))
}

/// What [`write_dataset_toml`] listed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// Tasks listed, by package name.
    pub tasks: usize,
    /// Task directories left out because their `task.toml` names no package.
    pub unnamed: Vec<PathBuf>,
    /// Task directories left out because their content could not be hashed (a link, a special
    /// or huge file, an unreadable `task.toml`), each with why.
    pub unread: Vec<(PathBuf, String)>,
}

#[derive(Serialize)]
struct DatasetToml<'a> {
    schema_version: &'a str,
    dataset: DatasetTable<'a>,
    tasks: Vec<TaskRef>,
}

#[derive(Serialize)]
struct DatasetTable<'a> {
    name: &'a str,
    description: &'a str,
    keywords: Vec<&'a str>,
}

#[derive(Serialize)]
struct TaskRef {
    name: String,
    digest: String,
}

/// Whether Harbor's packager leaves a file out by default.
fn ignored(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    rel.split('/').any(|part| part == "__pycache__")
        || name.ends_with(".pyc")
        || name == ".DS_Store"
        || name.ends_with(".swp")
        || name.ends_with(".swo")
        || name.ends_with('~')
}

/// The largest task file hashed: a task's files are its Dockerfile's context, its tests and its
/// solution; a file over this in a task directory is refused, not read (a sparse file of 20 GB
/// put there would otherwise be read whole).
const MAX_TASK_FILE: u64 = 2 * 1024 * 1024 * 1024;

/// The sha256 of one task file: a regular file, never a link (a task's link to a host file is
/// not read), of at most [`MAX_TASK_FILE`].
fn file_sha256(path: &Path) -> Result<String, ManifestError> {
    let meta = fs_err::symlink_metadata(path).map_err(io(path))?;
    let refuse = |why: String| {
        ManifestError::Io(crate::errors::PathError::new(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, why),
        ))
    };
    if !meta.file_type().is_file() {
        return Err(refuse(
            "not a regular file (a link or a special file in a task is not read)".into(),
        ));
    }
    if meta.len() > MAX_TASK_FILE {
        return Err(refuse(format!(
            "larger than {} GiB; not read for the digest",
            MAX_TASK_FILE >> 30
        )));
    }
    let mut h = Sha256::new();
    let mut f = crate::files::open_input_io(path).map_err(io(path))?;
    std::io::copy(&mut f, &mut h).map_err(io(path))?;
    Ok(hex::encode(h.finalize()))
}

/// The content digest of one task directory, `sha256:<hex>`, as Harbor's registry records it.
pub fn task_digest(dir: &Path) -> Result<String, ManifestError> {
    // Present top files, links included: a link is then refused by name, not followed.
    let mut files: Vec<String> = TOP_FILES
        .iter()
        .filter(|f| fs_err::symlink_metadata(dir.join(f)).is_ok())
        .map(|f| (*f).to_owned())
        .collect();
    for sub in CONTENT_DIRS {
        let root = dir.join(sub);
        let Ok(meta) = fs_err::symlink_metadata(&root) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            // `environment -> /etc` would have every file there read for the digest.
            return Err(ManifestError::Io(crate::errors::PathError::new(
                root,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "a link in place of a task's folder (a link in a task is not read)",
                ),
            )));
        }
        if !meta.is_dir() {
            continue;
        }
        for entry in walkdir::WalkDir::new(&root)
            .follow_links(false)
            .follow_root_links(false)
        {
            let entry = entry.map_err(|e| {
                ManifestError::Io(crate::errors::PathError::new(root.clone(), e.into()))
            })?;
            if !entry.file_type().is_file() {
                continue;
            }
            let rel = entry
                .path()
                .strip_prefix(dir)
                .unwrap_or(entry.path())
                .to_string_lossy()
                .replace('\\', "/");
            if !ignored(&rel) {
                files.push(rel);
            }
        }
    }
    files.sort();
    let mut h = Sha256::new();
    for rel in &files {
        h.update(rel.as_bytes());
        h.update([0]);
        h.update(file_sha256(&dir.join(rel))?.as_bytes());
        h.update(b"\n");
    }
    Ok(format!("sha256:{}", hex::encode(h.finalize())))
}

/// Writes `dataset.toml` into `tasks_dir`, named `name` (`org/name`), listing every task directory
/// there (in name order) whose `task.toml` names its package.
pub fn write_dataset_toml(
    tasks_dir: &Path,
    name: &str,
    task_dirs: &[PathBuf],
) -> Result<Manifest, ManifestError> {
    let mut manifest = Manifest::default();
    let mut tasks = Vec::new();
    for dir in task_dirs {
        // One task that cannot be read is left out and named; the others are listed.
        let read = || -> Result<Option<TaskRef>, ManifestError> {
            let path = dir.join("task.toml");
            let text =
                crate::files::read_text(&path, crate::files::SMALL_FILE_MAX).map_err(io(&path))?;
            let toml = TaskToml::parse(&text).map_err(|e| ManifestError::TaskToml {
                path: path.clone(),
                message: e.to_string(),
            })?;
            toml.task
                .map(|task| {
                    Ok(TaskRef {
                        name: task.name,
                        digest: task_digest(dir)?,
                    })
                })
                .transpose()
        };
        match read() {
            Ok(Some(task)) => tasks.push(task),
            Ok(None) => manifest.unnamed.push(dir.clone()),
            Err(e) => manifest.unread.push((dir.clone(), e.to_string())),
        }
    }
    tasks.sort_by(|a, b| a.name.cmp(&b.name));
    manifest.tasks = tasks.len();
    let doc = DatasetToml {
        schema_version: "1.0",
        dataset: DatasetTable {
            name,
            description: "BeyondSWE tasks converted by beyondswe",
            keywords: vec!["beyondswe"],
        },
        tasks,
    };
    let text = toml::to_string(&doc).map_err(|e| ManifestError::TaskToml {
        path: tasks_dir.join(DATASET_TOML),
        message: e.to_string(),
    })?;
    crate::files::write_atomic(&tasks_dir.join(DATASET_TOML), text.as_bytes())
        .map_err(io(&tasks_dir.join(DATASET_TOML)))?;
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(dir: &Path, name: Option<&str>) {
        fs_err::create_dir_all(dir.join("tests/__pycache__")).expect("mkdir");
        let head = name
            .map(|n| format!("[task]\nname = \"{n}\"\n"))
            .unwrap_or_default();
        fs_err::write(dir.join("task.toml"), format!("version = \"1.0\"\n{head}")).expect("w");
        fs_err::write(dir.join("instruction.md"), "Fix it.\n").expect("w");
        fs_err::write(dir.join("tests/test.sh"), "exit 0\n").expect("w");
        fs_err::write(dir.join("tests/__pycache__/x.pyc"), "junk").expect("w");
        fs_err::write(dir.join("notes.txt"), "not content").expect("w");
    }

    #[test]
    fn the_digest_covers_the_content_files_only() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("t");
        task(&dir, Some("org/t"));
        let digest = task_digest(&dir).expect("digest");
        let mut h = Sha256::new();
        for (rel, data) in [
            ("instruction.md", "Fix it.\n"),
            ("task.toml", "version = \"1.0\"\n[task]\nname = \"org/t\"\n"),
            ("tests/test.sh", "exit 0\n"),
        ] {
            h.update(format!("{rel}\0{}\n", hex::encode(Sha256::digest(data))));
        }
        assert_eq!(digest, format!("sha256:{}", hex::encode(h.finalize())));
        // Neither a file outside the content nor bytecode changes it; a test file does.
        fs_err::write(dir.join("notes.txt"), "other").expect("w");
        fs_err::write(dir.join("tests/__pycache__/x.pyc"), "other").expect("w");
        assert_eq!(task_digest(&dir).expect("digest"), digest);
        fs_err::write(dir.join("tests/test.sh"), "exit 1\n").expect("w");
        assert_ne!(task_digest(&dir).expect("digest"), digest);
    }

    #[test]
    fn the_manifest_lists_named_tasks_and_reports_the_rest() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (b, a, c) = (
            tmp.path().join("b"),
            tmp.path().join("a"),
            tmp.path().join("c"),
        );
        task(&b, Some("org/b"));
        task(&a, Some("org/a"));
        task(&c, None);
        let got = write_dataset_toml(tmp.path(), "org/beyondswe", &[b.clone(), a, c.clone()])
            .expect("written");
        assert_eq!(got.tasks, 2);
        assert_eq!(got.unnamed, vec![c]);
        let text = fs_err::read_to_string(tmp.path().join(DATASET_TOML)).expect("read");
        let doc: toml::Table = toml::from_str(&text).expect("toml");
        assert_eq!(doc["dataset"]["name"].as_str(), Some("org/beyondswe"));
        let names: Vec<&str> = doc["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names, ["org/a", "org/b"]);
        assert_eq!(
            doc["tasks"][1]["digest"].as_str(),
            Some(task_digest(&b).expect("digest").as_str())
        );
    }
}
