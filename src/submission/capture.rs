//! `capture`: a binary-safe diff of a workspace against its base commit, for agents that never
//! write a patch (Claude Code, Codex, …).
//!
//! Includes untracked files, and by default also files the repository's or the agent's ignore
//! rules would drop (an agent's new `build/` module is still part of its work); excludes `.rej` and
//! `.orig` leftovers and VCS internals. Works on a private copy of the index, so the workspace's
//! own index and files are never touched. Shells out to `git`.

use std::path::{Path, PathBuf};
use std::process::Command;
use thiserror::Error;

/// Why a workspace's diff could not be captured.
#[derive(Debug, Error)]
pub enum CaptureError {
    /// A `git` command failed: the workspace is not a repository, or `base` is not a commit of
    /// it.
    #[error("{workspace}: `git {args}` failed: {message}")]
    Git {
        /// The workspace.
        workspace: PathBuf,
        /// The command's arguments, after `git`.
        args: String,
        /// What git printed on its standard error.
        message: String,
    },
    /// `git` could not be started (not installed, or not on `PATH`).
    #[error("cannot run git: {0}")]
    NoGit(std::io::Error),
    /// The temporary directory for the private index could not be made.
    #[error(transparent)]
    Io(#[from] crate::errors::PathError),
}

/// How [`capture`] chooses the files of the diff.
#[derive(Debug, Clone)]
pub struct CaptureOptions {
    /// Leave out files that `.gitignore` rules (repository, global, info/exclude) ignore.
    pub respect_gitignore: bool,
    /// Files larger than this (their apparent size) are left out, unread, and listed: a sparse
    /// disk image of a terabyte would otherwise be hashed whole.
    pub max_file_bytes: u64,
}

impl Default for CaptureOptions {
    /// Ignored files kept; files up to 100 MiB.
    fn default() -> Self {
        CaptureOptions {
            respect_gitignore: false,
            max_file_bytes: 100 << 20,
        }
    }
}

/// What [`capture`] produced.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    /// The diff from the base to the workspace (bytes: binary-safe).
    pub diff: Vec<u8>,
    /// Files left out for their size: (path in the workspace, bytes).
    pub left_out: Vec<(String, u64)>,
}

/// Regular files under `workspace` (outside `.git`) larger than `max`, by their size alone.
fn oversized(workspace: &Path, max: u64) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let walk = walkdir::WalkDir::new(workspace)
        .min_depth(1)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git");
    for e in walk.flatten() {
        if !e.file_type().is_file() {
            continue;
        }
        let Ok(meta) = e.metadata() else { continue };
        if meta.len() > max
            && let Ok(rel) = e.path().strip_prefix(workspace)
            && let Some(rel) = rel.to_str()
        {
            out.push((rel.to_owned(), meta.len()));
        }
    }
    out.sort();
    out
}

/// The diff from `base` to the workspace as it is now (bytes: binary-safe). Nothing is written
/// into the workspace: the index is a private one, and the objects git makes while hashing the
/// workspace go to a temporary object directory (the repository's own are read through it).
pub fn capture(
    workspace: &Path,
    base: &str,
    opts: &CaptureOptions,
) -> Result<Captured, CaptureError> {
    let tmp = tempfile::tempdir().map_err(|source| {
        CaptureError::Io(crate::errors::PathError::new(std::env::temp_dir(), source))
    })?;
    let index = tmp.path().join("index");
    let objects = tmp.path().join("objects");
    fs_err::create_dir_all(&objects).map_err(|source| {
        CaptureError::Io(crate::errors::PathError::new(objects.clone(), source))
    })?;
    let git_in = |args: &[&str], own_objects: Option<&Path>| -> Result<Vec<u8>, CaptureError> {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(workspace);
        if let Some(repo_objects) = own_objects {
            cmd.env("GIT_OBJECT_DIRECTORY", &objects)
                .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", repo_objects);
        }
        let out = cmd
            .arg("-C")
            .arg(workspace)
            .args([
                "-c",
                "core.autocrlf=false",
                "-c",
                "core.safecrlf=false",
                "-c",
                "core.quotepath=off",
            ])
            .args(args)
            .env("GIT_INDEX_FILE", &index)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output()
            .map_err(CaptureError::NoGit)?;
        if !out.status.success() {
            return Err(CaptureError::Git {
                workspace: workspace.to_owned(),
                args: args.join(" "),
                message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        Ok(out.stdout)
    };
    let repo_objects = String::from_utf8_lossy(&git_in(
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "objects",
        ],
        None,
    )?)
    .trim()
    .to_owned();
    let git = |args: &[&str]| git_in(args, Some(Path::new(&repo_objects)));
    let commit = String::from_utf8_lossy(&git(&[
        "rev-parse",
        "--verify",
        &format!("{base}^{{commit}}"),
    ])?)
    .trim()
    .to_owned();
    git(&["read-tree", &commit])?;
    let mut add = vec!["add", "--all"];
    if !opts.respect_gitignore {
        add.push("--force");
    }
    add.extend([
        "--",
        ".",
        ":(exclude,glob)**/*.rej",
        ":(exclude,glob)**/*.orig",
    ]);
    let left_out = oversized(workspace, opts.max_file_bytes);
    let excluded: Vec<String> = left_out
        .iter()
        .map(|(rel, _)| format!(":(exclude,literal){rel}"))
        .collect();
    add.extend(excluded.iter().map(String::as_str));
    git(&add)?;
    let diff = git(&[
        "diff",
        "--cached",
        "--binary",
        "--full-index",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        &commit,
    ])?;
    Ok(Captured { diff, left_out })
}
