//! Reading a submission from disk, within the read limits every caller passes ([`ReadLimits`]:
//! `--max-patch-mb`, `--max-repo-mb`): [`read_submission`] for a whole submission, and
//! [`read_patch`] for a patch file (the bounded reader of [`crate::patch::read_file`], its errors
//! as a submission's).
//!
//! Every place that reads a submission named on the command line or found in agent output calls
//! these; they check and read, nothing else: grading is `grade`'s.

use super::Submission;
use super::SubmissionError;
use super::tree::{TreeLimits, read_tree};
use crate::record::Family;
use std::path::{Path, PathBuf};

pub use crate::patch::DEFAULT_MAX_PATCH_BYTES;

/// How much of a submission is read from disk.
#[derive(Debug, Clone, Copy)]
pub struct ReadLimits {
    /// The largest patch file read (`--max-patch-mb`).
    pub max_patch_bytes: u64,
    /// What a Doc2Repo tree may expand to (`--max-repo-mb`).
    pub tree: TreeLimits,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            max_patch_bytes: DEFAULT_MAX_PATCH_BYTES,
            tree: TreeLimits::default(),
        }
    }
}

/// What was submitted, as found (in a predictions line, an agent's output, on the command line),
/// before [`read_submission`] reads it into the [`Submission`] that is graded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submitted {
    /// A patch already read, as bytes (a predictions line, a captured diff; a `.diff` captured
    /// from a workspace need not be UTF-8).
    Patch(Vec<u8>),
    /// A patch file a person named: read bounded, and refused when it is not a diff (an empty
    /// file is an empty patch).
    PatchFile(PathBuf),
    /// A Doc2Repo repository: a directory or a `.tar`, `.tar.gz`, `.tgz` or `.zip` archive.
    Repo(PathBuf),
}

/// Reads the submission for an instance (`instance`, of `family`) from `source`, within
/// `limits`. A repository is only for Doc2Repo instances.
pub fn read_submission(
    source: &Submitted,
    instance: &str,
    family: Family,
    limits: &ReadLimits,
) -> Result<Submission, SubmissionError> {
    match source {
        Submitted::Patch(bytes) => Ok(Submission::Patch(bytes.clone())),
        Submitted::PatchFile(path) => {
            let sub = Submission::Patch(read_patch(path, limits.max_patch_bytes)?);
            if !sub.is_empty_patch()
                && let Submission::Patch(bytes) = &sub
                && let Err(e) = crate::patch::parse(&String::from_utf8_lossy(bytes))
            {
                return Err(SubmissionError::NotADiff {
                    path: path.clone(),
                    source: e,
                });
            }
            Ok(sub)
        }
        Submitted::Repo(_) if family != Family::Doc2Repo => Err(SubmissionError::RepoNotDoc2Repo {
            instance: instance.to_owned(),
            family,
        }),
        Submitted::Repo(path) => Ok(Submission::Tree(read_tree(path, limits.tree)?)),
    }
}

/// Checks, without opening it, that `path` is a regular file (links followed) of at most
/// `max_bytes`.
pub fn check_patch_file(path: &Path, max_bytes: u64) -> Result<(), SubmissionError> {
    Ok(crate::patch::check_file(path, max_bytes)?)
}

/// Reads a patch file as bytes: a regular file of at most `max_bytes`.
pub fn read_patch(path: &Path, max_bytes: u64) -> Result<Vec<u8>, SubmissionError> {
    Ok(crate::patch::read_file(path, max_bytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_patch_bytes: u64) -> ReadLimits {
        ReadLimits {
            max_patch_bytes,
            ..ReadLimits::default()
        }
    }

    const DIFF: &str = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n";

    /// A patch over a cap is read under a raised one, and refused, naming the file, over the
    /// cap it is read with.
    #[test]
    fn a_patch_file_is_read_within_the_limits_it_is_given() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("big.diff");
        let mut text = String::from(DIFF);
        text.push_str(&"+more\n".repeat(400));
        let text = text.replace("@@ -1 +1 @@", "@@ -1 +1,401 @@");
        fs_err::write(&p, &text).expect("write");
        let len = text.len() as u64;
        let source = Submitted::PatchFile(p.clone());
        let read = read_submission(&source, "i", Family::CrossRepo, &limits(len)).expect("within");
        assert!(matches!(read, Submission::Patch(b) if b.len() as u64 == len));
        let err = read_submission(&source, "i", Family::CrossRepo, &limits(len - 1))
            .expect_err("over the limit")
            .to_string();
        assert!(err.starts_with(&p.display().to_string()), "{err}");
        assert!(err.contains("larger than the limit"), "{err}");
        assert!(err.contains("--max-patch-mb"), "{err}");
    }

    #[test]
    fn a_patch_file_must_be_a_diff_and_a_repository_is_for_doc2repo() {
        let dir = tempfile::tempdir().expect("tempdir");
        let notes = dir.path().join("notes.txt");
        fs_err::write(&notes, "not a diff\n").expect("write");
        let err = read_submission(
            &Submitted::PatchFile(notes.clone()),
            "i",
            Family::CrossRepo,
            &ReadLimits::default(),
        )
        .expect_err("not a diff")
        .to_string();
        assert!(err.contains("notes.txt: not a unified diff"), "{err}");
        let empty = dir.path().join("empty.diff");
        fs_err::write(&empty, "\n").expect("write");
        let sub = read_submission(
            &Submitted::PatchFile(empty.clone()),
            "i",
            Family::CrossRepo,
            &ReadLimits::default(),
        )
        .expect("an empty patch");
        assert!(sub.is_empty_patch());
        let err = read_submission(
            &Submitted::Repo(dir.path().to_owned()),
            "a_b_pr1",
            Family::CrossRepo,
            &ReadLimits::default(),
        )
        .expect_err("not Doc2Repo")
        .to_string();
        assert!(
            err.contains("is for Doc2Repo instances; `a_b_pr1` is"),
            "{err}"
        );
    }
}
