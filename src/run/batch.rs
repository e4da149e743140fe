//! Grading many submissions: a bounded pool of concurrent gradings over one sandbox, resumable
//! through the results store, with infrastructure errors retried once.
//!
//! A job whose key (record, submission, image id, suite, every grading option that can change a
//! verdict, the adapters run in the container, the grader version) already has a verdict in the
//! store is skipped; anything changed is graded again and its verdict replaces the old one. Each
//! verdict is appended and synced as soon as it exists, so a run killed at any moment loses at
//! most the gradings in flight.
//!
//! One submission never stops the run: a grading that panics becomes that submission's `error`
//! verdict with the panic's message, and a submission that could not be read becomes its
//! `unresolved` verdict; only a store that cannot be written stops the run.

use crate::dataset::Instance;
use crate::grade::{GradeInput, GradeOptions, Outcome, Reason, Verdict, grade};
use crate::record::Record;
use crate::report::{GRADER_VERSION, Store, StoreError, Stored};
use crate::sandbox::{Limits, Sandbox};
use crate::submission::Submission;
use futures_util::{FutureExt, StreamExt};
use sha2::{Digest, Sha256};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

/// One submission to grade.
#[derive(Debug, Clone)]
pub struct Job {
    /// The instance's dataset record.
    pub record: Record,
    /// 1-based attempt number; each attempt has its own verdict.
    pub attempt: u32,
    /// The patch or Doc2Repo tree to grade, or why it could not be read (graded `unresolved`).
    pub submission: Submission,
    /// The Doc2Repo suite zip; `None` for other families or when none was found.
    pub test_suite: Option<PathBuf>,
    /// The model or agent that produced the submission, stored as its `model_name_or_path`.
    pub model: String,
    /// Run the container from this image instead of the record's: the tag of a Harbor task's
    /// environment built for this run; `None` until
    /// [`Session::build_environments`](super::Session::build_environments) sets it.
    pub image_override: Option<String>,
    /// The reward the agent's harness recorded (Harbor), kept to compare with ours.
    pub claimed_reward: Option<f64>,
}

impl Job {
    /// A job for `instance` with no claimed reward and nothing wrong with its submission.
    pub fn new(instance: &Instance, submission: Submission, model: &str, attempt: u32) -> Job {
        Job {
            record: instance.record.clone(),
            attempt,
            submission,
            test_suite: instance.test_suite.clone(),
            model: model.to_owned(),
            image_override: None,
            claimed_reward: None,
        }
    }
}

/// What happened to one job.
#[derive(Debug, Clone)]
pub enum JobEvent {
    /// Already graded with the same key: the stored verdict stands.
    Cached(Stored),
    /// Graded now (after at most one retry of an infrastructure error).
    Graded {
        /// The new verdict, as appended to the store.
        stored: Stored,
        /// The first attempt ended in an infrastructure error and this is the second's verdict.
        retried: bool,
    },
}

/// What a run tells the person watching it; called from the grading tasks. Each method does
/// nothing by default.
pub trait Progress: Send + Sync {
    /// A line for a person (a warning, a note, what is being built).
    fn note(&self, _message: &str) {}
    /// The gradings are about to start: `total` jobs.
    fn start(&self, _total: usize) {}
    /// One job ended.
    fn event(&self, _event: &JobEvent) {}
    /// No more jobs will end.
    fn finish(&self) {}
}

/// Shows nothing.
pub struct Silent;

impl Progress for Silent {}

/// The grading options that can change a verdict, as a digest: limits, timeouts, and the files
/// run inside the container. Labels (run id, process) are left out: they change every run.
pub fn options_digest(opts: &GradeOptions) -> String {
    // Destructured so that a new option cannot be added without deciding whether it belongs here.
    let GradeOptions {
        limits,
        test_timeout,
        setup_timeout,
        labels: _,
        prepared_cache: _,
        test_empty_patch,
        trusted_submissions,
        strict,
        canary_groups,
    } = opts;
    let Limits {
        memory_mb,
        cpus,
        pids,
        disk_mb,
    } = limits;
    let mut h = Sha256::new();
    for part in [
        format!("memory_mb={memory_mb}"),
        format!("cpus={}", cpus.to_bits()),
        format!("pids={pids}"),
        format!("disk_mb={disk_mb}"),
        format!("test_timeout_ms={}", test_timeout.as_millis()),
        format!("setup_timeout_ms={}", setup_timeout.as_millis()),
        format!("adapters={}", crate::adapters::digest()),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    // Only when on, so the keys of runs made before this option existed stay valid.
    if *test_empty_patch {
        h.update(b"test_empty_patch\0");
    }
    if *trusted_submissions {
        h.update(b"trusted_submissions\0");
    }
    if *strict {
        h.update(b"strict\0");
    }
    if !*canary_groups {
        h.update(b"no_canary_groups\0");
    }
    hex::encode(h.finalize())
}

/// The resume key: the record, the submission (or why it could not be read), the image, the
/// suite, the grading options ([`options_digest`]) and the grader version.
pub fn job_key(job: &Job, image_id: &str, suite_digest: &str, options_digest: &str) -> String {
    // The record with its keys sorted: a dataset's JSONL and its Parquet copy (columns in one
    // order for every row) are one dataset, and resume each other's runs.
    let record = crate::dataset::keys_sorted(&serde_json::Value::Object(job.record.raw().clone()));
    key_of(job, &record, image_id, suite_digest, options_digest)
}

/// [`job_key`] as it was before the record's key order was left out of it: verdicts stored then
/// are still found.
fn job_key_as_read(job: &Job, image_id: &str, suite_digest: &str, options_digest: &str) -> String {
    let record = serde_json::Value::Object(job.record.raw().clone());
    key_of(job, &record, image_id, suite_digest, options_digest)
}

fn key_of(
    job: &Job,
    record: &serde_json::Value,
    image_id: &str,
    suite_digest: &str,
    options_digest: &str,
) -> String {
    let mut h = Sha256::new();
    h.update(GRADER_VERSION.as_bytes());
    h.update([0]);
    h.update(options_digest.as_bytes());
    h.update([0]);
    h.update(serde_json::to_vec(record).unwrap_or_default());
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
        Submission::Unreadable(why) => {
            h.update(b"problem\0");
            h.update(why.as_bytes());
        }
    }
    h.update([0]);
    h.update(image_id.as_bytes());
    h.update([0]);
    h.update(suite_digest.as_bytes());
    hex::encode(h.finalize())
}

/// Grades one submission; a panic anywhere in the grading becomes its `error` verdict, with the
/// message, instead of ending the run (and whatever else is in flight) with it.
async fn grade_caught<S: Sandbox>(
    sandbox: &S,
    input: GradeInput<'_>,
    opts: &GradeOptions,
) -> (Verdict, bool) {
    match AssertUnwindSafe(grade(sandbox, input, opts))
        .catch_unwind()
        .await
    {
        Ok(v) => (v, false),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".to_owned());
            tracing::error!(
                instance = input.record.instance_id(),
                %message,
                "the grader panicked; recorded as an error verdict"
            );
            let mut v = Verdict::new(input.record.instance_id(), input.record.family());
            v.set(Outcome::Error, Reason::GraderFailed, 0.0);
            v.logs.error = format!(
                "the grader itself failed on this submission (please report it): panicked: {message}"
            );
            (v, true)
        }
    }
}

pub(super) fn file_digest(path: Option<&PathBuf>) -> String {
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
    let options = options_digest(opts);
    let options = options.as_str();
    let results = futures_util::stream::iter(work)
        .map(|job| async move {
            let (key, as_read) = resume_key(sandbox, &job, options).await;
            let event = match stored_verdict(store, &job, &key)
                .or_else(|| stored_verdict(store, &job, &as_read))
            {
                Some(stored) => JobEvent::Cached(stored),
                None => grade_job(sandbox, job, key, store, opts).await?,
            };
            progress.event(&event);
            Ok::<_, StoreError>(event)
        })
        .buffer_unordered(jobs.max(1));
    let mut events = Vec::new();
    let mut results = std::pin::pin!(results);
    while let Some(r) = results.next().await {
        events.push(r?);
    }
    Ok(events)
}

/// Jobs whose image could not be had (its pull failed, `why` says how): each an `error` verdict
/// with the reason and its fix, stored as a grading's would be, under the key of a job whose
/// image the engine does not have (a resume once the image is there grades it).
pub(super) fn store_unavailable(
    work: Vec<Job>,
    why: &std::collections::HashMap<String, String>,
    store: &Mutex<Store>,
    opts: &GradeOptions,
    progress: &dyn Progress,
) -> Result<Vec<JobEvent>, StoreError> {
    let options = options_digest(opts);
    let mut events = Vec::new();
    for job in work {
        let suite = file_digest(job.test_suite.as_ref());
        let key = job_key(&job, "", &suite, &options);
        let event = match stored_verdict(store, &job, &key) {
            Some(stored) => JobEvent::Cached(stored),
            None => {
                let image = job.record.image().unwrap_or_default();
                let mut v = Verdict::new(job.record.instance_id(), job.record.family());
                v.set(Outcome::Error, Reason::ImageMissing, 0.0);
                v.logs.error = why.get(image).cloned().unwrap_or_default();
                store_verdict(store, &job, key, v, false)?
            }
        };
        progress.event(&event);
        events.push(event);
    }
    Ok(events)
}

/// The job's resume key, with the id of the image it would run on now, and the key a grader
/// before key order was left out would have given it.
async fn resume_key<S: Sandbox>(sandbox: &S, job: &Job, options: &str) -> (String, String) {
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
    let suite = file_digest(job.test_suite.as_ref());
    (
        job_key(job, &image_id, &suite, options),
        job_key_as_read(job, &image_id, &suite, options),
    )
}

/// The verdict stored for this job under the same key, if any (the run resumes past it). An
/// `error` is the infrastructure's failure, not a verdict on the submission: it is graded again
/// (a Harbor that left no trial, an engine that went away), except the grader's own panic,
/// which would only repeat.
pub(super) fn stored_verdict(store: &Mutex<Store>, job: &Job, key: &str) -> Option<Stored> {
    let store = store.lock().unwrap_or_else(|e| e.into_inner());
    let stored = store
        .get(job.record.instance_id(), job.attempt)
        .filter(|s| s.key == key)
        .filter(|s| {
            s.verdict.verdict != crate::grade::Outcome::Error
                || s.verdict.reason == crate::grade::Reason::GraderFailed
        })
        .cloned();
    if stored.is_some() {
        tracing::debug!(
            instance = job.record.instance_id(),
            attempt = job.attempt,
            "resumed: graded before with the same key; the stored verdict stands"
        );
    }
    stored
}

/// Grades one job (an infrastructure error is retried once; a panic is not: it would repeat) and
/// appends its verdict to the store.
async fn grade_job<S: Sandbox>(
    sandbox: &S,
    job: Job,
    key: String,
    store: &Mutex<Store>,
    opts: &GradeOptions,
) -> Result<JobEvent, StoreError> {
    let input = GradeInput {
        record: &job.record,
        submission: &job.submission,
        test_suite: job.test_suite.as_deref(),
        image_override: job.image_override.as_deref(),
    };
    let started = Instant::now();
    tracing::info!(
        instance = job.record.instance_id(),
        attempt = job.attempt,
        "grading"
    );
    let mut retried = false;
    let (mut verdict, panicked) = grade_caught(sandbox, input, opts).await;
    if verdict.is_error() && !panicked {
        retried = true;
        verdict = grade_caught(sandbox, input, opts).await.0;
    }
    tracing::info!(
        instance = job.record.instance_id(),
        attempt = job.attempt,
        verdict = ?verdict.verdict,
        reason = ?verdict.reason,
        score = verdict.score,
        retried,
        secs = started.elapsed().as_secs_f64(),
        "graded"
    );
    store_verdict(store, &job, key, verdict, retried)
}

/// Appends a job's verdict to the store (and its harness files to the run directory); the event
/// that says so.
pub(super) fn store_verdict(
    store: &Mutex<Store>,
    job: &Job,
    key: String,
    verdict: Verdict,
    retried: bool,
) -> Result<JobEvent, StoreError> {
    let stored = Stored {
        key,
        attempt: job.attempt,
        claimed_reward: job.claimed_reward,
        model_name_or_path: job.model.clone(),
        grader_version: GRADER_VERSION.to_owned(),
        verdict,
    };
    let patch = match &job.submission {
        Submission::Patch(p) => Some(p.as_slice()),
        _ => None,
    };
    {
        let mut store = store.lock().unwrap_or_else(|e| e.into_inner());
        // The line in results.jsonl is what makes a verdict final (a resume keeps it): it is
        // written last, once the harness files and the logs are, so a disk that fills up in
        // between leaves the instance to grade again instead of a verdict without its files.
        crate::report::write_harness_files(store.dir(), &stored, patch)?;
        store.append(stored.clone())?;
    }
    Ok(JobEvent::Graded { stored, retried })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::report::{RunIdentity, RunMeta};
    use crate::sandbox::SandboxError;
    use crate::sandbox::scripted::{OnStart, Scripted};
    use std::collections::BTreeMap;
    use std::time::Duration;

    /// An engine that has the instance images (and no prepared one), panics when asked to
    /// start `…/panic:…` and fails to start anything else.
    fn engine() -> Scripted {
        Scripted::new()
            .image("fake/ok:1")
            .image("fake/panic:1")
            .image("fake/panic:2")
            .on_start("panic", OnStart::Panic)
            .on_start(
                "fake/",
                OnStart::Fail(|| SandboxError::Api {
                    op: "start",
                    message: "the fake engine starts nothing".into(),
                }),
            )
    }

    fn job(id: &str, image: &str) -> Job {
        let record = Record::from_value(serde_json::json!({
            "instance_id": id, "task": "CrossRepo", "image": image, "base_commit": "0",
            "FAIL_TO_PASS": ["t.py::test_x"], "PASS_TO_PASS": [],
        }))
        .unwrap();
        Job {
            record,
            attempt: 1,
            submission: Submission::Patch(b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n".to_vec()),
            test_suite: None,
            model: "m".into(),
            image_override: None,
            claimed_reward: None,
        }
    }

    fn store(dir: &std::path::Path) -> Mutex<Store> {
        let meta = RunMeta {
            run: RunIdentity::new("r".into(), "d".into(), "h".into(), "p".into(), "h".into()),
            created_at: "now".into(),
            ..Default::default()
        };
        Mutex::new(Store::open(dir, &meta, false).unwrap())
    }

    fn run(
        engine: &Scripted,
        work: Vec<Job>,
        store: &Mutex<Store>,
        opts: &GradeOptions,
    ) -> Vec<JobEvent> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(run_jobs(engine, work, store, opts, 2, &Silent))
            .unwrap()
    }

    fn stored(e: &JobEvent) -> &Stored {
        match e {
            JobEvent::Cached(s) | JobEvent::Graded { stored: s, .. } => s,
        }
    }

    /// A grading that panics, one whose engine fails and one that could not be read each get their
    /// own verdict; the others are graded and the run ends normally.
    #[test]
    fn one_bad_submission_never_stops_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(dir.path());
        let engine = engine();
        let mut unreadable = job("c_c_pr3", "fake/ok:1");
        unreadable.submission =
            Submission::Unreadable("preds.jsonl:3: refused entry `../x`".into());
        let work = vec![
            job("a_a_pr1", "fake/panic:1"),
            job("b_b_pr2", "fake/ok:1"),
            unreadable,
            job("d_d_pr4", "fake/panic:2"),
        ];
        let events = run(&engine, work, &store, &GradeOptions::default());
        assert_eq!(events.len(), 4);
        let by_id: BTreeMap<&str, &Stored> = events
            .iter()
            .map(|e| (stored(e).verdict.instance_id.as_str(), stored(e)))
            .collect();
        for id in ["a_a_pr1", "d_d_pr4"] {
            let v = &by_id[id].verdict;
            assert_eq!(v.verdict, Outcome::Error, "{id}");
            assert!(
                v.logs
                    .error
                    .contains("panicked: the scripted engine breaks on fake/panic"),
                "{id}: {}",
                v.logs.error
            );
        }
        let failed = &by_id["b_b_pr2"].verdict;
        assert_eq!(failed.verdict, Outcome::Error);
        assert!(
            failed.logs.error.contains("starts nothing"),
            "{}",
            failed.logs.error
        );
        let refused = &by_id["c_c_pr3"].verdict;
        assert_eq!(refused.verdict, Outcome::Unresolved);
        assert!(
            refused.logs.apply.contains("refused entry"),
            "{}",
            refused.logs.apply
        );
        // The panics were not retried (a bug repeats); the engine failure was, once.
        assert_eq!(engine.count("start"), 4);
        // Every verdict is in the store.
        assert_eq!(store.lock().unwrap().all().count(), 4);
    }

    /// A verdict whose files cannot be written (a full disk; here a file where the harness
    /// directory goes) is not stored: the run stops with the error, and a resume grades the
    /// instance again and writes them all.
    #[test]
    fn a_verdict_is_stored_only_with_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine();
        let opts = GradeOptions::default();
        let empty = || {
            let mut j = job("b_b_pr2", "fake/ok:1");
            j.submission = Submission::Patch(Vec::new());
            j
        };
        let blocker = dir.path().join(crate::report::model_dir_name("m"));
        fs_err::write(&blocker, "not a directory").unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let first = rt.block_on(run_jobs(
            &engine,
            vec![empty()],
            &store(dir.path()),
            &opts,
            1,
            &Silent,
        ));
        assert!(first.is_err(), "the write error is the run's");
        assert_eq!(store(dir.path()).lock().unwrap().all().count(), 0);
        fs_err::remove_file(&blocker).unwrap();
        let again = run(&engine, vec![empty()], &store(dir.path()), &opts);
        assert!(matches!(again[0], JobEvent::Graded { .. }));
        assert!(
            blocker.join("b_b_pr2").join("run_instance.log").is_file(),
            "the harness files are written on the resume"
        );
        assert!(dir.path().join("instances/b_b_pr2").is_dir());
    }

    /// The same run with another timeout (or any limit, or other adapters) grades again instead
    /// of returning the verdicts stored under the old options.
    #[test]
    fn resume_keys_include_the_grading_options() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine();
        let opts = GradeOptions::default();
        let graded = |events: &[JobEvent]| {
            events
                .iter()
                .filter(|e| matches!(e, JobEvent::Graded { .. }))
                .count()
        };
        // An empty patch is decided without a container: a verdict on the submission.
        let empty = || {
            let mut j = job("b_b_pr2", "fake/ok:1");
            j.submission = Submission::Patch(Vec::new());
            j
        };
        let first = run(&engine, vec![empty()], &store(dir.path()), &opts);
        assert_eq!(graded(&first), 1);
        let again = run(&engine, vec![empty()], &store(dir.path()), &opts);
        assert_eq!(graded(&again), 0, "same options: resumed");
        let mut other = opts.clone();
        other.test_timeout = Duration::from_secs(3600);
        let longer = run(&engine, vec![empty()], &store(dir.path()), &other);
        assert_eq!(graded(&longer), 1, "another timeout: graded again");
        // The fake engine starts no container: an infrastructure error, graded again on every
        // resume rather than kept as if it were a verdict.
        for _ in 0..2 {
            let failed = run(
                &engine,
                vec![job("c_c_pr3", "fake/ok:1")],
                &store(dir.path()),
                &opts,
            );
            assert_eq!(graded(&failed), 1, "an error is graded again");
        }
        for change in [
            |o: &mut GradeOptions| o.limits.memory_mb += 1,
            |o: &mut GradeOptions| o.limits.cpus += 0.5,
            |o: &mut GradeOptions| o.limits.pids += 1,
            |o: &mut GradeOptions| o.limits.disk_mb += 1,
            |o: &mut GradeOptions| o.setup_timeout += Duration::from_secs(1),
            |o: &mut GradeOptions| o.test_empty_patch = true,
            |o: &mut GradeOptions| o.trusted_submissions = true,
            |o: &mut GradeOptions| o.strict = true,
            |o: &mut GradeOptions| o.canary_groups = false,
        ] {
            let mut changed = opts.clone();
            change(&mut changed);
            assert_ne!(options_digest(&changed), options_digest(&opts));
        }
        // Labels name the run and the process: they never change a verdict.
        let mut labelled = opts.clone();
        labelled.labels.push(("beyondswe.run".into(), "x-1".into()));
        assert_eq!(options_digest(&labelled), options_digest(&opts));
    }
}
