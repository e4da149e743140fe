//! Whole grading runs: what to grade, with which options, into which store ([`RunSpec`]), and
//! everything between that and a written report.
//!
//! A caller (the `grade`, `verify`, `demo` and `calibrate` commands, or a program using the
//! library) fills in a spec and calls [`grade_run`] (or [`calibrate`], [`grade_one`],
//! [`verify`]: a release's published patches graded and their claimed rewards set beside the
//! measured ones); nothing of the command line reaches this module. The steps:
//! - [`plan`](plan::plan): the dataset's instances and the jobs for them (predictions read
//!   through every agent format, or the gold or empty patches), the calibration applied;
//! - [`Session`]: the engine connection around the work, made once for every caller: connect,
//!   sweep what dead graders left, build Harbor environments, stop on Ctrl-C, sweep this run's
//!   containers whatever the end;
//! - [`run_jobs`]: the bounded pool of gradings with resume through the results store;
//! - [`finish`](grade_run): the store compacted, the report scoped to the graded instances and
//!   written (`report.json`, `swebench_report.json`, `report.html`).
//!
//! The other work that needs the engine is here too: [`reconstruct`] replays, in a [`Session`] of
//! its own, the edits of transcripts that came without a patch (`ingest --reconstruct`), and
//! [`build_image`] builds an image from a build context (`image build`).
//!
//! `grade/` grades one submission and knows nothing of runs or stores; `report/` holds the store
//! and the renderings.
//!
//! Files:
//! - `batch.rs`: Grading many submissions: a bounded pool of concurrent gradings over one sandbox,
//!   resumable through the results store, with infrastructure errors retried once.
//! - `calibrate.rs`: Calibration runs: every instance's gold patch graded N times and its empty
//!   patch once (its tests run), in two resumable stores, and the `Calibration` made from their
//!   verdicts.
//! - `error.rs`: Why a run could not start or stopped: each library error it passes on,
//!   unchanged, and why runs do not merge.
//! - `image.rs`: Images built from a build context through the engine API (`image build`): no
//!   registry is needed when the Dockerfile is `FROM` a local image such as the offline base.
//! - `merge.rs`: Joining runs graded apart (`grade --shard K/N` on several machines) into one run
//!   directory whose store, logs and report are those a single run would have written.
//! - `parity.rs`: Parity experiments: the same agent's Harbor jobs, scored by Harbor and regraded
//!   offline.
//! - `plan.rs`: From a spec to the jobs of a run: the dataset's instances (only the asked ids), one
//!   job per submission found for them, the calibration read and applied.
//! - `reconstruct.rs`: Patches rebuilt from transcripts (`ingest --reconstruct`).
//! - `session.rs`: The engine around container work, once for every caller: grading runs and
//!   calibrations, `grade_one`, and the transcript replays of `ingest --reconstruct`.
//! - `spec.rs`: What a run is: the dataset, the submissions, the limits, the store and the
//!   calibration, as settled values.
//! - `verify.rs`: Verifying a release: every published patch of a trajectory release (JSONL) or a
//!   Harbor jobs directory graded as a run, and the reward each claims set beside the one measured.
//! - `via_harbor.rs`: Grading through Harbor (`grade --via-harbor`).

mod batch;
mod calibrate;
mod error;
mod image;
mod merge;
mod parity;
mod plan;
mod reconstruct;
mod session;
mod spec;
mod verify;
mod via_harbor;

pub use batch::{Job, JobEvent, Progress, Silent, job_key, options_digest, run_jobs};
pub use calibrate::{CalibrateSpec, Calibrated, calibrate};
pub use error::{MergeError, RunError};
pub use image::{ImageSpec, Pruned, build_image, prune_images, prune_prepared};
pub use merge::{MergeSpec, Merged, merge};
pub use parity::{Parity, ParityExperiment, ParitySpec, mean_sem, parity};
pub use plan::{DatasetDigests, Plan, load_instances, plan};
pub use reconstruct::reconstruct;
pub use session::{Pulled, Session, gold_checks, grade_one, pull_images, runtime, stop_signal};
pub use spec::{
    Backend, CalibrationSpec, DEFAULT_MAX_PREPARED_BYTES, DatasetSpec, HarborBackend, RunLimits,
    RunSpec, StoreSpec, Submissions, default_jobs,
};
pub use verify::{Verified, VerifySpec, disagrees, verify};

use crate::report::{self, CalibrationUse, Report, Store, build_report, now_rfc3339};
use crate::sandbox::PullPolicy;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;

/// What a finished (or interrupted) run left.
#[derive(Debug)]
pub struct RunOutcome {
    /// The report of the graded instances, as written to the run directory.
    pub report: Report,
    /// `RESULTS_DIR/RUN_ID`: the store and the report files.
    pub run_dir: PathBuf,
    /// Ctrl-C stopped it: no new gradings started, those in flight were dropped.
    pub interrupted: bool,
    /// Gradings the run set out to make (with those kept from before, on a resume).
    pub planned: usize,
    /// What was wrong with the input though the run went on ([`Plan::input_problems`]).
    pub input_problems: Vec<String>,
}

impl RunOutcome {
    /// The run's HTML report, `run_dir/report.html`.
    pub fn html(&self) -> PathBuf {
        self.run_dir.join("report.html")
    }
}

/// Plans, grades and reports one run. Every verdict is in the store as soon as it exists; on an
/// error the store keeps what was graded before it.
pub fn grade_run(spec: &RunSpec, progress: &dyn Progress) -> Result<RunOutcome, RunError> {
    let mut plan = plan(spec, progress)?;
    let planned = plan.jobs.len();
    let input_problems = std::mem::take(&mut plan.input_problems);
    let run_dir = spec.store.dir();
    let label = spec.store.process_label();
    let mut opts = spec.limits.grade_options(&label);
    // `--gold` and `--empty` grade the dataset's own patches (recorded in the resume key).
    opts.trusted_submissions = spec.submissions.trusted();
    opts.strict = spec.strict;
    plan.meta.options_digest = Some(run_options_digest(&opts, spec, plan.calibration.as_ref()));
    // Another writer first, then the engine and the images: a run that cannot start leaves no
    // run directory.
    report::check_unheld(&run_dir)?;
    let engine = match &spec.backend {
        Backend::Local => Engine::Local(Box::new(start_local(
            &plan.instances,
            &plan.jobs.iter().map(|j| j.record.instance_id()).collect(),
            &label,
            spec.limits.pull,
            progress,
        )?)),
        Backend::Harbor(harbor) => Engine::Harbor(harbor),
    };
    let store = open_store(&spec.store, &plan.meta, progress)?;
    if !spec.store.force {
        check_one_model(&store, &plan.jobs, &run_dir)?;
    }
    let store = Mutex::new(store);
    let started = now_rfc3339();
    let Local {
        runtime,
        session,
        unavailable,
    } = match engine {
        Engine::Local(local) => *local,
        Engine::Harbor(harbor) => {
            progress.start(plan.jobs.len());
            let jobs = std::mem::take(&mut plan.jobs);
            let graded =
                via_harbor::grade_via_harbor(harbor, jobs, &store, &opts, spec.jobs, progress);
            progress.finish();
            let mut store = store.into_inner().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = graded {
                return Err(RunError::Stopped {
                    what: "run",
                    run_dir,
                    source: Box::new(e),
                });
            }
            store.compact()?;
            let report = finish(spec, &plan, &store, started)?;
            return Ok(RunOutcome {
                report,
                run_dir,
                interrupted: stop_signal().is_some(),
                planned,
                input_problems,
            });
        }
    };
    let outcome = runtime.block_on(async {
        session
            .build_environments(&plan.instances, &mut plan.jobs, progress)
            .await?;
        progress.start(plan.jobs.len());
        let jobs = std::mem::take(&mut plan.jobs);
        let work = grade_jobs(
            &session,
            &unavailable,
            jobs,
            &store,
            &opts,
            spec.jobs,
            progress,
        );
        let outcome = session.until_interrupted(work).await;
        keep_prepared_under(&session, spec.limits.max_prepared_bytes, progress).await;
        Ok::<_, RunError>(outcome)
    })?;
    progress.finish();
    let mut store = store.into_inner().unwrap_or_else(|e| e.into_inner());
    // A resume that graded nothing leaves the report's times as the run that graded them
    // wrote them.
    let (interrupted, times) = match outcome {
        None => (true, None),
        Some(Err(e)) => {
            return Err(RunError::Stopped {
                what: "run",
                run_dir,
                source: Box::new(e.into()),
            });
        }
        Some(Ok(events)) if events.iter().all(|e| matches!(e, JobEvent::Cached(_))) => {
            (false, earlier_times(&run_dir))
        }
        Some(Ok(_)) => (false, None),
    };
    store.compact()?;
    let report = match times {
        Some(times) => finish_with(spec, &plan, &store, times)?,
        None => finish(spec, &plan, &store, started)?,
    };
    Ok(RunOutcome {
        report,
        run_dir,
        interrupted,
        planned,
        input_problems,
    })
}

/// Where a run's gradings happen, made ready before its store is opened.
enum Engine<'a> {
    /// This machine's engine, connected, the images pulled.
    Local(Box<Local>),
    /// Harbor, which needs nothing ready here.
    Harbor(&'a HarborBackend),
}

/// A local run's engine, ready before its store is opened: the runtime, the session, and the
/// images that could not be pulled (each with why, as its jobs' `error` verdicts say it).
pub(crate) struct Local {
    runtime: tokio::runtime::Runtime,
    session: Session,
    unavailable: std::collections::HashMap<String, String>,
}

/// Connects to the engine and pulls what `policy` asks of the instance images of `graded` (the
/// instances some job grades). Stops
/// (before any run directory exists) when the engine is down or no image of the run could be
/// had; images of a part of the run that could not be had are its jobs' `error` verdicts.
pub(crate) fn start_local(
    instances: &[crate::dataset::Instance],
    graded: &HashSet<&str>,
    label: &str,
    policy: PullPolicy,
    progress: &dyn Progress,
) -> Result<Local, RunError> {
    let runtime = runtime()?;
    let session = runtime.block_on(Session::open(label, progress))?;
    let images: HashSet<&str> = instances
        .iter()
        .filter(|i| i.environment_to_build.is_none() && graded.contains(i.record.instance_id()))
        .filter_map(|i| i.record.image())
        .collect();
    let failed = runtime
        .block_on(session.pull_images(images.iter().copied(), policy, progress))?
        .failed;
    if !failed.is_empty() && failed.len() == images.len() {
        return Err(RunError::ImagesUnavailable(failed));
    }
    let unavailable = failed
        .into_iter()
        .map(|(image, e)| {
            let hint = e.hint().map(|h| format!("\nhint: {h}")).unwrap_or_default();
            progress.note(&format!("{e}: its instances are errors{hint}"));
            (image, format!("{e}{hint}"))
        })
        .collect();
    Ok(Local {
        runtime,
        session,
        unavailable,
    })
}

/// [`run_jobs`] on the session's engine, but for the jobs whose image could not be had
/// (`unavailable`), which become their `error` verdicts with why.
pub(crate) async fn grade_jobs(
    session: &Session,
    unavailable: &std::collections::HashMap<String, String>,
    jobs: Vec<Job>,
    store: &Mutex<Store>,
    opts: &crate::grade::GradeOptions,
    at_once: usize,
    progress: &dyn Progress,
) -> Result<Vec<JobEvent>, report::StoreError> {
    let (lost, jobs): (Vec<Job>, Vec<Job>) = jobs.into_iter().partition(|j| {
        j.image_override.is_none()
            && j.record
                .image()
                .is_some_and(|i| unavailable.contains_key(i))
    });
    let mut events = batch::store_unavailable(lost, unavailable, store, opts, progress)?;
    let sandbox = session.sandbox();
    events.extend(run_jobs(&sandbox, jobs, store, opts, at_once, progress).await?);
    Ok(events)
}

/// Prunes the prepared images to at most `max_bytes` (least recently used first; `0`: no
/// limit), saying what it freed. A failure is a warning: the run's verdicts stand.
pub(crate) async fn keep_prepared_under(
    session: &Session,
    max_bytes: u64,
    progress: &dyn Progress,
) {
    if max_bytes == 0 {
        return;
    }
    match image::prune_prepared(session.docker(), max_bytes, false).await {
        Ok(p) if !p.removed.is_empty() => progress.note(&format!(
            "removed {} prepared image(s), least recently used first, freeing {} MiB: the prepared images are kept under {} MiB (--max-prepared-gb)",
            p.removed.len(),
            p.freed_bytes >> 20,
            max_bytes >> 20
        )),
        Ok(_) => {}
        Err(e) => progress.note(&format!("warning: pruning the prepared images: {e}")),
    }
}

/// What `run.json` records as the run's options ([`report::RunMeta::options_digest`]): the
/// grading options' digest (the resume keys' too), and the calibration file's hash and how it
/// is applied.
fn run_options_digest(
    opts: &crate::grade::GradeOptions,
    spec: &RunSpec,
    calibration: Option<&crate::calibration::Loaded>,
) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in [
        options_digest(opts),
        calibration.map(|c| c.hash.clone()).unwrap_or_default(),
        spec.calibration
            .as_ref()
            .map(|c| format!("flaky={} broken={}", c.exclude_flaky, c.exclude_broken))
            .unwrap_or_default(),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    // Gradings through Harbor are another path than this machine's (local runs' digests are
    // as they were before Harbor was one).
    if let Backend::Harbor(harbor) = &spec.backend {
        h.update(format!("via-harbor {}", harbor.environment).as_bytes());
        h.update([0]);
    }
    hex::encode(h.finalize())
}

/// One model per run: the models of `jobs` are those the store already holds verdicts of, or the
/// store holds none yet.
fn check_one_model(store: &Store, jobs: &[Job], run_dir: &std::path::Path) -> Result<(), RunError> {
    use std::collections::BTreeSet;
    let theirs: BTreeSet<&str> = store.all().map(|s| s.model_name_or_path.as_str()).collect();
    let ours: BTreeSet<&str> = jobs.iter().map(|j| j.model.as_str()).collect();
    if theirs.is_empty() || ours.is_empty() || theirs == ours || ours.is_subset(&theirs) {
        return Ok(());
    }
    let names = |set: &BTreeSet<&str>| {
        set.iter()
            .map(|m| {
                if m.is_empty() {
                    "(no model name)".to_owned()
                } else {
                    format!("`{}`", crate::text::one_line(m))
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(RunError::OtherModel {
        run_dir: run_dir.to_owned(),
        theirs: names(&theirs),
        ours: names(&ours),
    })
}

/// Opens (or resumes) the run's store; a partial last line left by a killed run is cut and said.
pub(crate) fn open_store(
    spec: &StoreSpec,
    meta: &report::RunMeta,
    progress: &dyn Progress,
) -> Result<Store, RunError> {
    let dir = spec.dir();
    let store = Store::open_resuming(&dir, meta, spec.force, spec.allow_mixed)?;
    tracing::info!(
        store = %dir.display(),
        stored = store.all().count(),
        "results store opened; stored verdicts with unchanged keys are kept (resume)"
    );
    if store.repaired > 0 {
        progress.note(&format!(
            "repaired {}: cut {} partial line(s) left by an interrupted run",
            dir.join("results.jsonl").display(),
            store.repaired
        ));
    }
    Ok(store)
}

/// The start and end times of the report an earlier run wrote in `run_dir`, if it has both.
fn earlier_times(run_dir: &std::path::Path) -> Option<(String, String)> {
    let text = crate::files::read_bounded(&run_dir.join("report.json"), 64 << 20).ok()?;
    let saved: Report = serde_json::from_slice(&text).ok()?;
    Some((saved.started_at?, saved.finished_at?))
}

/// The report of the graded instances (a store may hold others from earlier runs), written as
/// `report.json`, `swebench_report.json` and `report.html`.
fn finish(spec: &RunSpec, plan: &Plan, store: &Store, started: String) -> Result<Report, RunError> {
    finish_with(spec, plan, store, (started, now_rfc3339()))
}

/// [`finish`] with the run's start and end times given.
fn finish_with(
    spec: &RunSpec,
    plan: &Plan,
    store: &Store,
    (started, finished): (String, String),
) -> Result<Report, RunError> {
    let graded: HashSet<&str> = plan
        .instances
        .iter()
        .map(|i| i.record.instance_id())
        .collect();
    let mut in_scope: Vec<_> = store
        .all()
        .filter(|s| graded.contains(s.verdict.instance_id.as_str()))
        .cloned()
        .collect();
    let accepted = report::accept(&spec.store.dir(), &spec.accept_suspected)?;
    report::apply_accepted(&mut in_scope, &accepted);
    let cal_use = match (&plan.calibration, &spec.calibration) {
        (Some(loaded), Some(c)) => {
            // A calibration made before the hash left key order out names the hash as read.
            let hash = if plan.meta.dataset_hash_as_read.as_ref()
                == Some(&loaded.calibration.dataset_hash)
            {
                &loaded.calibration.dataset_hash
            } else {
                &plan.meta.run.dataset_hash
            };
            Some(CalibrationUse::new(
                &c.path.display().to_string(),
                loaded,
                in_scope.iter().map(|s| s.verdict.instance_id.as_str()),
                hash,
                c.exclude_flaky,
                c.exclude_broken,
            ))
        }
        _ => None,
    };
    let scope_ids: Vec<String> = plan
        .instances
        .iter()
        .map(|i| i.record.instance_id().to_owned())
        .collect();
    let families: std::collections::BTreeMap<String, crate::record::Family> = plan
        .instances
        .iter()
        .map(|i| (i.record.instance_id().to_owned(), i.record.family()))
        .collect();
    let report = build_report(
        Some(&plan.meta),
        &in_scope,
        &report::Scope {
            total: plan.instances.len(),
            ids: &scope_ids,
            families: &families,
        },
        (Some(started), Some(finished), Some(spec.jobs)),
        cal_use.as_ref(),
    );
    report::write_report_files(&spec.store.dir(), &report)?;
    Ok(report)
}
