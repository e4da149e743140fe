//! The engine around container work, once for every caller: grading runs and calibrations,
//! [`grade_one`], and the transcript replays of `ingest --reconstruct`. A [`Session`] connects,
//! sweeps what dead graders of this host left, builds the Harbor environments the jobs need, stops
//! at Ctrl-C, SIGTERM or SIGHUP, and sweeps this process's containers whatever the end (finished, interrupted,
//! stopped, a grading that panicked).
//!
//! The async [`runtime`] everything runs on, and the packing of a build context for the engine,
//! are here as well; image builds (`image build`) use
//! both, without a session.

use super::batch::{Job, Progress};
use super::error::RunError;
use super::spec::RunLimits;
use crate::dataset::Instance;
use crate::grade::{self, GradeInput, Traced, Verdict};
use crate::sandbox::{DockerSandbox, Sandbox};
use crate::sandbox::{PullPolicy, SandboxError};
use crate::submission::{Submission, TreeLimits, read_tree};
use crate::verifier_spec::GoldCheck;
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// What [`Session::pull_images`] did, each list sorted.
#[derive(Debug, Default)]
pub struct Pulled {
    /// Pulled now.
    pub pulled: Vec<String>,
    /// On the engine already (and not pulled, or its pull failed with `--pull always`).
    pub present: Vec<String>,
    /// Not on the engine, and its pull failed.
    pub failed: Vec<(String, SandboxError)>,
}

/// Pulls at once: the engine fetches each image's layers in parallel itself.
const PULLS_AT_ONCE: usize = 3;

/// The async runtime grading runs on (two worker threads: the work is the engine's).
pub fn runtime() -> Result<tokio::runtime::Runtime, RunError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(RunError::Runtime)
}

/// A build context (a directory) packed as the engine takes it.
pub(super) fn context_tar(dir: &Path) -> Result<Vec<u8>, RunError> {
    let tree = read_tree(dir, TreeLimits::default())?;
    let tar = tree.to_tar().map_err(|source| {
        crate::submission::SubmissionError::Io(crate::errors::PathError::new(
            dir.to_owned(),
            source,
        ))
    })?;
    Ok(tar)
}

/// A connection to the engine for one process's gradings, labelled `label`.
pub struct Session {
    sandbox: DockerSandbox,
    label: String,
}

/// The number of the signal that stopped this process's work, 0 while none has.
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

/// The signal that stopped a session's work (2: SIGINT, 15: SIGTERM, 1: SIGHUP), if one did: the
/// process then exits with 128 plus it, as a shell reports a process killed by it.
pub fn stop_signal() -> Option<i32> {
    Some(STOPPED_BY.load(Ordering::SeqCst)).filter(|s| *s != 0)
}

/// From now on, SIGINT, SIGTERM and SIGHUP no longer end the process: they are recorded
/// ([`stop_signal`]) for work that looks for them between its steps (a Harbor job the run
/// waits for). Called once, before such work starts.
pub(crate) fn record_stop_signals() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::thread::spawn(record_them);
    });
}

/// The signal thread of [`record_stop_signals`]: each stop signal, as it comes.
fn record_them() {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    rt.block_on(async {
        loop {
            let signal = stop_requested().await;
            STOPPED_BY.store(signal, Ordering::SeqCst);
        }
    });
}

/// Waits for SIGINT, SIGTERM or SIGHUP; returns its number.
async fn stop_requested() -> i32 {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let (Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) {
            return tokio::select! {
                _ = tokio::signal::ctrl_c() => 2,
                _ = term.recv() => 15,
                _ = hup.recv() => 1,
            };
        }
    }
    let _ = tokio::signal::ctrl_c().await;
    2
}

impl Session {
    /// Connects and removes the containers of grader processes of this host that are gone.
    pub async fn open(label: &str, progress: &dyn Progress) -> Result<Session, RunError> {
        let sandbox = DockerSandbox::connect().await?;
        tracing::debug!("connected to the Docker engine");
        let swept = sandbox.sweep(None).await.unwrap_or(0);
        tracing::debug!(removed = swept, "swept containers left by dead graders");
        if swept > 0 {
            progress.note(&format!(
                "removed {swept} container(s) left by earlier runs"
            ));
        }
        Ok(Session {
            sandbox,
            label: label.to_owned(),
        })
    }

    /// The engine, with container events logged (`-vv`).
    pub fn sandbox(&self) -> Traced<'_, DockerSandbox> {
        Traced(&self.sandbox)
    }

    /// The engine connection itself, for work outside gradings (pruning images).
    pub fn docker(&self) -> &DockerSandbox {
        &self.sandbox
    }

    /// Runs `work` until it ends or a signal asks the process to stop (`None`): Ctrl-C
    /// (SIGINT), SIGTERM (what `kill`, systemd and container engines send) or SIGHUP (a closed
    /// terminal). Then removes every container of this process's run: none of its gradings is
    /// running any more, and a killed grader's last requests may have created some after the
    /// start-up sweep. [`stop_signal`] says which signal it was.
    pub async fn until_interrupted<F: Future>(&self, work: F) -> Option<F::Output> {
        let result = tokio::select! {
            r = work => Some(r),
            signal = stop_requested() => {
                STOPPED_BY.store(signal, Ordering::SeqCst);
                None
            }
        };
        let _ = self.sandbox.sweep(Some(self.label.as_str())).await;
        result
    }

    /// Pulls the images of `images` that `policy` asks for (each once, a few at a time), saying
    /// progress; returns what was pulled, what the engine had, and what could not be had, with
    /// why (with `--pull never`, nothing is pulled and nothing fails here: a missing image is its
    /// gradings' `image_missing`). An image built from a
    /// Harbor task's `environment/` is not in `images`: it is built, never pulled.
    pub async fn pull_images<'a>(
        &self,
        images: impl IntoIterator<Item = &'a str>,
        policy: PullPolicy,
        progress: &dyn Progress,
    ) -> Result<Pulled, RunError> {
        let mut done = Pulled::default();
        let wanted: BTreeSet<&str> = images.into_iter().collect();
        let mut to_pull = Vec::new();
        for image in wanted {
            let present = self.sandbox.image_id(image).await?.is_some();
            match policy {
                PullPolicy::Always => to_pull.push(image),
                _ if present => done.present.push(image.to_owned()),
                PullPolicy::Never => {}
                PullPolicy::Missing => to_pull.push(image),
            }
        }
        if to_pull.is_empty() {
            return Ok(done);
        }
        progress.note(&format!(
            "{} image(s) to pull ({})",
            to_pull.len(),
            match policy {
                PullPolicy::Always => "--pull always",
                _ => "not on the engine",
            }
        ));
        let note = |line: &str| progress.note(line);
        let logins = crate::sandbox::Logins::default();
        let (note, logins) = (&note, &logins);
        let results: Vec<_> = futures_util::stream::iter(to_pull)
            .map(|image| async move { (image, self.sandbox.pull(image, logins, note).await) })
            .buffer_unordered(PULLS_AT_ONCE)
            .collect()
            .await;
        for (image, result) in results {
            match result {
                Ok(()) => done.pulled.push(image.to_owned()),
                // The engine may still have it (`--pull always` with a registry down).
                Err(e)
                    if policy == PullPolicy::Always
                        && self.sandbox.image_id(image).await?.is_some() =>
                {
                    progress.note(&format!("warning: {e}; the engine's copy is used"));
                    done.present.push(image.to_owned());
                }
                Err(e) => done.failed.push((image.to_owned(), e)),
            }
        }
        done.pulled.sort();
        done.present.sort();
        done.failed.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(done)
    }

    /// Builds each Harbor task's `environment/` once (for tasks without a prebuilt image) and
    /// points its instance's jobs at the image.
    pub async fn build_environments(
        &self,
        instances: &[Instance],
        jobs: &mut [Job],
        progress: &dyn Progress,
    ) -> Result<(), RunError> {
        let mut built: BTreeMap<PathBuf, String> = BTreeMap::new();
        for inst in instances {
            if let Some(dir) = &inst.environment_to_build
                && !built.contains_key(dir)
            {
                let name = inst.record.instance_id().to_lowercase();
                built.insert(
                    dir.clone(),
                    self.build_environment(&name, dir, progress).await?,
                );
            }
        }
        let env_of: HashMap<&str, &PathBuf> = instances
            .iter()
            .filter_map(|i| {
                i.environment_to_build
                    .as_ref()
                    .map(|d| (i.record.instance_id(), d))
            })
            .collect();
        for job in jobs {
            if let Some(dir) = env_of.get(job.record.instance_id()) {
                job.image_override = built.get(*dir).cloned();
            }
        }
        Ok(())
    }

    /// Builds a Harbor task's `environment/`, tagged by its content so it is built once.
    pub async fn build_environment(
        &self,
        name: &str,
        dir: &Path,
        progress: &dyn Progress,
    ) -> Result<String, RunError> {
        let tar = context_tar(dir)?;
        let digest = hex::encode(Sha256::digest(&tar));
        // A name every engine accepts in an image reference.
        let tag = format!(
            "beyondswe-env/{}:{}",
            crate::harbor::task_dir_name(name),
            &digest[..12]
        );
        if self.sandbox.image_id(&tag).await?.is_some() {
            tracing::debug!(
                image = tag.as_str(),
                "environment image present; not rebuilt"
            );
            return Ok(tag);
        }
        progress.note(&format!("building {} as {tag}", dir.display()));
        tracing::info!(image = tag.as_str(), context = %dir.display(), "building an image");
        let labels = [("beyondswe.environment".to_owned(), name.to_owned())]
            .into_iter()
            .collect();
        let timeout = Duration::from_secs(crate::DEFAULT_TIMEOUT_SECS);
        self.sandbox
            .build_image(&tag, tar, &labels, timeout)
            .await
            .map_err(|source| RunError::Environment {
                dir: dir.to_owned(),
                source,
            })?;
        tracing::info!(image = tag.as_str(), "built");
        Ok(tag)
    }
}

/// Pulls `images` (`image pull`), in a session of its own.
pub fn pull_images(
    images: &[String],
    policy: PullPolicy,
    progress: &dyn Progress,
) -> Result<Pulled, RunError> {
    let label = format!("pull-{}", std::process::id());
    runtime()?.block_on(async {
        let session = Session::open(&label, progress).await?;
        session
            .pull_images(images.iter().map(String::as_str), policy, progress)
            .await
    })
}

/// The gold checks of `records` (see [`crate::grade::gold_check_for`]) on this machine's engine,
/// `concurrency` at a time, by instance id; `Err` when the engine cannot be reached (why).
pub fn gold_checks(
    records: &[&crate::record::Record],
    opts: &crate::grade::GradeOptions,
    concurrency: usize,
    progress: &dyn Progress,
) -> Result<BTreeMap<String, Result<GoldCheck, String>>, String> {
    let runtime = runtime().map_err(|e| format!("no gold check: {e}"))?;
    runtime.block_on(async {
        let session = Session::open("gold-check", progress)
            .await
            .map_err(|e| format!("no gold check: {e}"))?;
        let sandbox = session.sandbox();
        progress.note(&format!(
            "the gold check of {} instance(s) on this machine's engine (each made once, then cached)",
            records.len()
        ));
        let found = futures_util::stream::iter(records.iter())
            .map(|record| {
                let sandbox = &sandbox;
                async move {
                    (
                        record.instance_id().to_owned(),
                        crate::grade::gold_check_for(sandbox, record, opts).await,
                    )
                }
            })
            .buffer_unordered(concurrency.max(1))
            .collect::<BTreeMap<_, _>>()
            .await;
        Ok(found)
    })
}

/// Grades one submission for one instance in a fresh container, in a session of its own;
/// `None` when Ctrl-C stopped it (its containers are removed).
pub fn grade_one(
    instance: &Instance,
    submission: &Submission,
    limits: &RunLimits,
    progress: &dyn Progress,
) -> Result<Option<Verdict>, RunError> {
    let label = format!("one-{}", std::process::id());
    let opts = limits.grade_options(&label);
    runtime()?.block_on(async {
        let session = Session::open(&label, progress).await?;
        let image = match &instance.environment_to_build {
            Some(dir) => {
                let name = instance.record.instance_id().to_lowercase();
                Some(session.build_environment(&name, dir, progress).await?)
            }
            None => {
                let failed = session
                    .pull_images(instance.record.image(), limits.pull, progress)
                    .await?
                    .failed;
                if !failed.is_empty() {
                    return Err(RunError::ImagesUnavailable(failed));
                }
                None
            }
        };
        let input = GradeInput {
            record: &instance.record,
            submission,
            test_suite: instance.test_suite.as_deref(),
            image_override: image.as_deref(),
        };
        tracing::info!(instance = instance.record.instance_id(), "grading");
        let sandbox = session.sandbox();
        let verdict = session
            .until_interrupted(grade::grade(&sandbox, input, &opts))
            .await;
        if let Some(v) = &verdict {
            tracing::info!(
                instance = v.instance_id.as_str(),
                verdict = ?v.verdict,
                reason = ?v.reason,
                score = v.score,
                "graded"
            );
        }
        Ok(verdict)
    })
}
