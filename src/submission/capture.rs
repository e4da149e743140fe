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
    #[error("{}", crate::errors::io_message(path, source))]
    Io {
        /// The temporary directory's parent.
        path: PathBuf,
        /// What the operating system reported.
        #[source]
        source: std::io::Error,
    },
}

/// How [`capture`] chooses the files of the diff.
#[derive(Debug, Clone, Default)]
pub struct CaptureOptions {
    /// Leave out files that `.gitignore` rules (repository, global, info/exclude) ignore.
    pub respect_gitignore: bool,
}

/// The diff from `base` to the workspace as it is now (bytes: binary-safe).
pub fn capture(
    workspace: &Path,
    base: &str,
    opts: &CaptureOptions,
) -> Result<Vec<u8>, CaptureError> {
    let tmp = tempfile::tempdir().map_err(|source| CaptureError::Io {
        path: std::env::temp_dir(),
        source,
    })?;
    let index = tmp.path().join("index");
    let git = |args: &[&str]| -> Result<Vec<u8>, CaptureError> {
        let out = Command::new("git")
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
    git(&add)?;
    git(&[
        "diff",
        "--cached",
        "--binary",
        "--full-index",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        &commit,
    ])
}
