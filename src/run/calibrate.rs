//! Calibration runs: every instance's gold patch graded N times and its empty patch once (its
//! tests run), in two resumable stores, and the [`Calibration`] made from their verdicts.

use super::batch::{Job, Progress};
use super::error::RunError;
use super::open_store;
use super::plan::load_instances;
use super::spec::{DatasetSpec, RunLimits, StoreSpec};
use crate::calibration::{
    CALIBRATION_FORMAT, Calibration, InstanceCalibration, Runs, calibrate_instance, summarize,
};
use crate::dataset::Instance;
use crate::grade::Verdict;
use crate::report::{GRADER_VERSION, RunIdentity, RunMeta, Store, now_rfc3339};
use crate::submission::Submission;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// One calibration.
#[derive(Debug, Clone)]
pub struct CalibrateSpec {
    /// The instances to calibrate.
    pub dataset: DatasetSpec,
    /// Gold gradings per instance.
    pub repeat: u32,
    /// The gradings go to `store.dir()/gold` and `store.dir()/empty`.
    pub store: StoreSpec,
    /// Gradings at once.
    pub jobs: usize,
    /// Container limits, the test timeout, and how much of a submission is read.
    pub limits: RunLimits,
}

/// What a calibration run ended with.
#[derive(Debug)]
pub enum Calibrated {
    /// Every grading ended: the calibration made from the verdicts, for the caller to write.
    Done(Calibration),
    /// Ctrl-C: the gradings so far are kept in the stores.
    Interrupted,
}

/// Grades the gold patches `repeat` times and the empty patches once, then classifies each
/// instance from its verdicts.
pub fn calibrate(spec: &CalibrateSpec, progress: &dyn Progress) -> Result<Calibrated, RunError> {
    let (instances, digests) = load_instances(&spec.dataset, progress)?;
    let (mut gold_jobs, mut empty_jobs) = jobs(&instances, spec.repeat, progress);
    let run_dir = spec.store.dir();
    let label = spec.store.process_label();
    // The engine and the images before the stores: a calibration that cannot start leaves no
    // run directory.
    for part in ["gold", "empty"] {
        crate::report::check_unheld(&run_dir.join(part))?;
    }
    let graded = gold_jobs
        .iter()
        .chain(&empty_jobs)
        .map(|j| j.record.instance_id())
        .collect();
    let super::Local {
        runtime,
        session,
        unavailable,
    } = super::start_local(&instances, &graded, &label, spec.limits.pull, progress)?;
    let (gold_store, empty_store) = open_stores(spec, &digests, progress)?;
    let (gold_store, empty_store) = (Mutex::new(gold_store), Mutex::new(empty_store));
    progress.note(&format!(
        "calibrating {} instance(s): the gold patch {} time(s) each, the empty patch once ({} gradings, {} at once)",
        instances.len(),
        spec.repeat,
        gold_jobs.len() + empty_jobs.len(),
        spec.jobs
    ));
    let mut opts = spec.limits.grade_options(&label);
    // The empty patch's tests run: which of them pass without a fix is the point.
    opts.test_empty_patch = true;
    // Only the dataset's own patches are graded: no canaries (see `trusted_submissions`).
    opts.trusted_submissions = true;
    let outcome = runtime.block_on(async {
        session
            .build_environments(&instances, &mut gold_jobs, progress)
            .await?;
        session
            .build_environments(&instances, &mut empty_jobs, progress)
            .await?;
        progress.start(gold_jobs.len() + empty_jobs.len());
        let grade = |jobs, store| {
            super::grade_jobs(
                &session,
                &unavailable,
                jobs,
                store,
                &opts,
                spec.jobs,
                progress,
            )
        };
        let work = async {
            grade(empty_jobs, &empty_store).await?;
            grade(gold_jobs, &gold_store).await
        };
        let outcome = session.until_interrupted(work).await;
        super::keep_prepared_under(&session, spec.limits.max_prepared_bytes, progress).await;
        Ok::<_, RunError>(outcome)
    })?;
    progress.finish();
    let mut gold = gold_store.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut empty = empty_store.into_inner().unwrap_or_else(|e| e.into_inner());
    match outcome {
        None => return Ok(Calibrated::Interrupted),
        Some(Err(e)) => {
            return Err(RunError::Stopped {
                what: "calibration",
                run_dir,
                source: Box::new(e.into()),
            });
        }
        Some(Ok(_)) => {}
    }
    gold.compact()?;
    empty.compact()?;
    Ok(Calibrated::Done(build(
        spec,
        &instances,
        &digests.hash,
        &gold,
        &empty,
    )))
}

/// The two stores of a calibration, `gold/` and `empty/` under the spec's store.
fn open_stores(
    spec: &CalibrateSpec,
    digests: &super::plan::DatasetDigests,
    progress: &dyn Progress,
) -> Result<(Store, Store), RunError> {
    let open = |which: &str| {
        let meta = RunMeta {
            run: RunIdentity::new(
                format!("{}/{which}", spec.store.run_id),
                spec.dataset.path.display().to_string(),
                digests.hash.clone(),
                which.to_owned(),
                which.to_owned(),
            ),
            created_at: now_rfc3339(),
            dataset_hash_as_read: Some(digests.as_read.clone()),
            ..Default::default()
        };
        let store = StoreSpec {
            results_dir: spec.store.dir(),
            run_id: which.to_owned(),
            force: spec.store.force,
            allow_mixed: spec.store.allow_mixed,
        };
        open_store(&store, &meta, progress)
    };
    Ok((open("gold")?, open("empty")?))
}

/// The gold jobs (`repeat` attempts each) and the empty jobs (one each).
fn jobs(instances: &[Instance], repeat: u32, notes: &dyn Progress) -> (Vec<Job>, Vec<Job>) {
    let mut gold = Vec::new();
    let mut empty = Vec::new();
    for inst in instances {
        if let Some(p) = inst.record.gold_patch().filter(|p| !p.trim().is_empty()) {
            for attempt in 1..=repeat {
                let patch = Submission::Patch(p.as_bytes().to_vec());
                gold.push(Job::new(inst, patch, "gold", attempt));
            }
        } else {
            notes.note(&format!(
                "note: `{}` has no gold patch; only the empty patch is graded",
                inst.record.instance_id()
            ));
        }
        empty.push(Job::new(inst, Submission::Patch(Vec::new()), "empty", 1));
    }
    (gold, empty)
}

/// The calibration from the stores' verdicts (attempts 1..=N of the gold store, 1 of the empty).
fn build(
    spec: &CalibrateSpec,
    instances: &[Instance],
    dataset_digest: &str,
    gold: &Store,
    empty: &Store,
) -> Calibration {
    let mut by_id: BTreeMap<&str, (Vec<&Verdict>, Vec<&Verdict>)> = BTreeMap::new();
    for s in gold.all().filter(|s| s.attempt <= spec.repeat) {
        by_id
            .entry(s.verdict.instance_id.as_str())
            .or_default()
            .0
            .push(&s.verdict);
    }
    for s in empty.all().filter(|s| s.attempt == 1) {
        by_id
            .entry(s.verdict.instance_id.as_str())
            .or_default()
            .1
            .push(&s.verdict);
    }
    let none = (Vec::new(), Vec::new());
    let list: Vec<InstanceCalibration> = instances
        .iter()
        .map(|inst| {
            let id = inst.record.instance_id();
            let (g, e) = by_id.get(id).unwrap_or(&none);
            let f2p = inst.record.fail_to_pass();
            calibrate_instance(Runs {
                instance_id: id,
                family: inst.record.family(),
                fail_to_pass: &f2p,
                has_gold: inst
                    .record
                    .gold_patch()
                    .is_some_and(|p| !p.trim().is_empty()),
                gold: g,
                empty: e,
            })
        })
        .collect();
    Calibration {
        format: CALIBRATION_FORMAT.into(),
        grader_version: GRADER_VERSION.into(),
        dataset: spec.dataset.path.display().to_string(),
        dataset_hash: dataset_digest.to_owned(),
        repeat: spec.repeat,
        created_at: Some(now_rfc3339()),
        summary: summarize(&list),
        instances: list,
    }
}
