//! Grading many submissions: a bounded pool of concurrent gradings over one sandbox, resumable
//! through the results store, with infrastructure errors retried once.
//!
//! A job whose key (record, submission, image id, grader version) already has a verdict in the
//! store is skipped; a changed submission is graded again and its verdict replaces the old one.
//! Each verdict is appended and synced as soon as it exists, so a run killed at any moment loses
//! at most the gradings in flight.

use super::pipeline::{GradeInput, GradeOptions, grade};
use super::verdict::Verdict;
use crate::record::Record;
use crate::report::{GRADER_VERSION, Store, StoreError, Stored};
use crate::sandbox::Sandbox;
use crate::submission::Submission;
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::Mutex;

/// One submission to grade.
#[derive(Debug, Clone)]
pub struct Job {
    pub record: Record,
    /// 1-based attempt number; each attempt has its own verdict.
    pub attempt: u32,
    pub submission: Submission,
    pub test_suite: Option<PathBuf>,
    pub model: String,
    pub image_override: Option<String>,
    /// The reward the agent's harness recorded (Harbor), kept to compare with ours.
    pub claimed_reward: Option<f64>,
}

/// What happened to one job.
#[derive(Debug, Clone)]
pub enum JobEvent {
    /// Already graded with the same key: the stored verdict stands.
    Cached(Stored),
    /// Graded now (after at most one retry of an infrastructure error).
    Graded { stored: Stored, retried: bool },
}

/// Hooks for progress display; called from the grading tasks.
pub trait Progress: Send + Sync {
    fn event(&self, event: &JobEvent);
}

/// The resume key: the record, the submission, the image and the grader version.
pub fn job_key(job: &Job, image_id: &str, suite_digest: &str) -> String {
    let mut h = Sha256::new();
    h.update(GRADER_VERSION.as_bytes());
    h.update([0]);
    h.update(serde_json::to_vec(job.record.raw()).unwrap_or_default());
    h.update([0]);
    match &job.submission {
        Submission::Patch(p) => {
            h.update(b"patch\0");
            h.update(p);
        }
        Submission::Tree(t) => {
            h.update(b"tree\0");
            h.update(t.digest());
        }
    }
    h.update([0]);
    h.update(image_id.as_bytes());
    h.update([0]);
    h.update(suite_digest.as_bytes());
    hex::encode(h.finalize())
}

fn file_digest(path: Option<&PathBuf>) -> String {
    path.and_then(|p| fs_err::read(p).ok())
        .map(|b| hex::encode(Sha256::digest(b)))
        .unwrap_or_default()
}

/// Grades every job with at most `jobs` at once; returns the events in completion order. Stops at
/// the first store error (disk full…), after the gradings in flight finish.
pub async fn run_jobs<S: Sandbox>(
    sandbox: &S,
    work: Vec<Job>,
    store: &Mutex<Store>,
    opts: &GradeOptions,
    jobs: usize,
    progress: &dyn Progress,
) -> Result<Vec<JobEvent>, StoreError> {
    let results = futures_util::stream::iter(work)
        .map(|job| async move {
            let image = job
                .image_override
                .clone()
                .or_else(|| job.record.image().map(str::to_owned))
                .unwrap_or_default();
            let image_id = sandbox
                .image_id(&image)
                .await
                .ok()
                .flatten()
                .unwrap_or_default();
            let key = job_key(&job, &image_id, &file_digest(job.test_suite.as_ref()));
            let cached = {
                let store = store.lock().unwrap_or_else(|e| e.into_inner());
                store
                    .get(job.record.instance_id(), job.attempt)
                    .filter(|s| s.key == key)
                    .cloned()
            };
            if let Some(stored) = cached {
                let event = JobEvent::Cached(stored);
                progress.event(&event);
                return Ok(event);
            }
            let input = GradeInput {
                record: &job.record,
                submission: &job.submission,
                test_suite: job.test_suite.as_deref(),
                image_override: job.image_override.as_deref(),
            };
            let mut verdict: Verdict = grade(sandbox, input, opts).await;
            let mut retried = false;
            if verdict.is_error() {
                retried = true;
                verdict = grade(sandbox, input, opts).await;
            }
            let stored = Stored {
                key,
                attempt: job.attempt,
                claimed_reward: job.claimed_reward,
                model_name_or_path: job.model.clone(),
                verdict,
            };
            store
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .append(stored.clone())?;
            let event = JobEvent::Graded { stored, retried };
            progress.event(&event);
            Ok(event)
        })
        .buffer_unordered(jobs.max(1));
    let mut events = Vec::new();
    let mut results = std::pin::pin!(results);
    let mut first_error = None;
    while let Some(r) = results.next().await {
        match r {
            Ok(e) => events.push(e),
            Err(e) => {
                if first_error.is_none() {
                    first_error = Some(e);
                }
            }
        }
        if first_error.is_some() {
            break;
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(events),
    }
}
