//! Verifying a release: every published patch of a trajectory release (JSONL) or a Harbor jobs
//! directory graded as a run, and the reward each claims set beside the one measured.
//!
//! A release's lines become predictions (with the claimed reward) in a temporary file; a jobs
//! directory is read as `grade` reads it. What to print and the exit code are the caller's.

use super::batch::Progress;
use super::error::RunError;
use super::spec::{DatasetSpec, RunLimits, RunSpec, StoreSpec, Submissions};
use super::{RunOutcome, grade_run};
use crate::files::write_atomic;
use crate::record::JsonLines;
use crate::report::{Stored, read_run};
use crate::submission::agents::release;
use serde_json::json;
use std::path::{Path, PathBuf};

/// One verification.
#[derive(Debug, Clone)]
pub struct VerifySpec {
    /// A release (JSONL) or a Harbor jobs directory.
    pub release: PathBuf,
    /// The instances the release's patches are for.
    pub dataset: DatasetSpec,
    /// Where the verdicts and the report go.
    pub store: StoreSpec,
    /// Gradings at once.
    pub jobs: usize,
    /// Container limits, the test timeout, and how much of a submission is read.
    pub limits: RunLimits,
}

/// What a verification found: the run, and every grading in its store with the reward claimed.
#[derive(Debug)]
pub struct Verified {
    /// The grading run of the published patches, with its report.
    pub run: RunOutcome,
    /// Every grading in the run's store, read back; `claimed_reward` is the release's reward.
    pub stored: Vec<Stored>,
}

impl Verified {
    /// The gradings whose measured score is not the reward the release claims.
    pub fn disagreements(&self) -> impl Iterator<Item = &Stored> {
        self.stored.iter().filter(|s| disagrees(s))
    }
}

/// A grading whose measured score differs from the reward its release claimed.
pub fn disagrees(s: &Stored) -> bool {
    s.claimed_reward
        .is_some_and(|c| (c - s.verdict.score).abs() > 1e-6)
}

/// Grades every published patch and reads back what the store holds.
pub fn verify(spec: &VerifySpec, progress: &dyn Progress) -> Result<Verified, RunError> {
    let tmp = tempfile::tempdir()?;
    let predictions = if spec.release.is_dir() {
        spec.release.clone()
    } else {
        let p = tmp.path().join("release-predictions.jsonl");
        release_predictions(&spec.release, &p, progress)?;
        p
    };
    let run = RunSpec {
        dataset: spec.dataset.clone(),
        submissions: Submissions::Predictions {
            path: predictions,
            format: None,
            patches: None,
        },
        store: spec.store.clone(),
        jobs: spec.jobs,
        limits: spec.limits.clone(),
        calibration: None,
        accept_suspected: Vec::new(),
        shard: None,
        backend: super::spec::Backend::Local,
        strict: false,
    };
    let run = grade_run(&run, progress)?;
    let (_, stored) = read_run(&spec.store.dir())?;
    Ok(Verified { run, stored })
}

/// Release lines → predictions (with the claimed reward) in `dest`; lines without a patch, or
/// without a task, are said to `progress`. Returns how many predictions were written.
fn release_predictions(
    path: &Path,
    dest: &Path,
    progress: &dyn Progress,
) -> Result<usize, RunError> {
    let mut lines = JsonLines::open(path)?;
    let mut found = Vec::new();
    let mut keys = Vec::new();
    while let Some(item) = lines.next_value() {
        let (line, v) = match item {
            Ok(x) => x,
            Err(e) => {
                progress.note(&format!("warning: {e}"));
                continue;
            }
        };
        let s = match release::line_submission(&v) {
            Ok(s) => s,
            Err(why) => {
                progress.note(&format!("warning: {}:{line}: {why}", path.display()));
                continue;
            }
        };
        keys.push((s.instance_id.clone(), release::attempt_order(&v)));
        found.push((line, s));
    }
    // Attempts as ingest numbers them (a job's trials by start time).
    let attempts = release::number_attempts(&keys, |_| 0);
    let mut text = String::new();
    let mut n = 0;
    for ((line, s), attempt) in found.into_iter().zip(attempts) {
        let Some(patch) = s.patch else {
            progress.note(&format!(
                "{}:{line}: `{}` carries no patch; not verifiable",
                path.display(),
                s.instance_id
            ));
            continue;
        };
        let mut p = json!({"instance_id": s.instance_id, "attempt": attempt, "model_name_or_path": s.model});
        match String::from_utf8(patch) {
            Ok(t) => p["model_patch"] = json!(t),
            Err(e) => p["model_patch_base64"] = json!(crate::base64::encode(e.as_bytes())),
        }
        if let Some(r) = s.reward {
            p["reward"] = json!(r);
        }
        text.push_str(&p.to_string());
        text.push('\n');
        n += 1;
    }
    write_atomic(dest, text.as_bytes())?;
    Ok(n)
}
