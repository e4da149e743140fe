//! From a spec to the jobs of a run: the dataset's instances (only the asked ids), one job per
//! submission found for them, the calibration read and applied. Warnings (unknown ids, a
//! submission that cannot be read, a calibration made for another dataset) go to the caller's
//! [`Progress`] as they are found; a submission that cannot be read is that job's verdict, not
//! the run's end.

use super::batch::{Job, Progress};
use super::error::RunError;
use super::spec::{DatasetSpec, RunSpec, Submissions};
use crate::calibration::{self, Calibration, Loaded};
use crate::dataset::{Instance, dataset_hash, dataset_hash_as_read, load_all};
use crate::harbor::{lookup_task, task_name_index};
use crate::record::Family;
use crate::report::{RunIdentity, RunMeta, Shard, now_rfc3339};
use crate::submission::{
    Ingest, IngestOptions, Submission, check_patch_file, ingest_with, read_submission,
};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// A run ready to grade.
#[derive(Debug)]
pub struct Plan {
    /// The instances in scope (all, or those of `ids`).
    pub instances: Vec<Instance>,
    /// One job per submission found for those instances (or per gold or empty patch).
    pub jobs: Vec<Job>,
    /// The run's identity in the store: dataset and submissions with their hashes.
    pub meta: RunMeta,
    /// The calibration the spec names, read; `None` when it names none.
    pub calibration: Option<Loaded>,
    /// What was wrong with the input though the run goes on: bad predictions, `--ids` the
    /// dataset lacks. Each was said to the notes; the run's exit code says there were some.
    pub input_problems: Vec<String>,
}

/// Reads the dataset and the submissions and makes the jobs; nothing runs yet. What a person
/// should know (an unknown id, a submission that cannot be read, a calibration made for another
/// dataset) goes to `notes` as it is found, so nothing said is lost when a later step fails.
pub fn plan(spec: &RunSpec, notes: &dyn Progress) -> Result<Plan, RunError> {
    let (instances, digests) = load_instances(&spec.dataset, notes)?;
    let dataset_digest = digests.hash;
    let mut input_problems: Vec<String> = missing_ids(&spec.dataset, &instances)
        .iter()
        .map(|i| format!("--ids `{i}` is not in the dataset"))
        .collect();
    let calibration = match &spec.calibration {
        Some(c) => Some(calibration::read(&c.path)?),
        None => None,
    };
    let made = make_jobs(spec, &instances, notes)?;
    input_problems.extend(made.problems.iter().cloned());
    let mut jobs = made.jobs;
    if let (Some(loaded), Some(c)) = (&calibration, &spec.calibration) {
        if loaded.calibration.dataset_hash != dataset_digest
            && loaded.calibration.dataset_hash != digests.as_read
        {
            notes.note(&format!(
                "warning: {} was made for another dataset ({}, hash {}); instances are matched by id",
                c.path.display(),
                loaded.calibration.dataset,
                loaded.calibration.dataset_hash
            ));
        }
        if c.exclude_flaky {
            for job in &mut jobs {
                if let Some(note) = drop_flaky_ids(job, &loaded.calibration)? {
                    notes.note(&note);
                }
            }
        }
    }
    if !made.unknown.is_empty() {
        notes.note(&format!(
            "warning: {} prediction(s) for instances not in the dataset (not graded): {}",
            made.unknown.len(),
            made.unknown.join(", ")
        ));
    }
    let mut instances = instances;
    if let Some(shard) = spec.shard {
        // The submissions' digest above covers every shard's: the parts of one run share it.
        take_shard(shard, &mut instances, &mut jobs);
    }
    let meta = RunMeta {
        run: RunIdentity::new(
            spec.store.run_id.clone(),
            spec.dataset.path.display().to_string(),
            dataset_digest,
            made.label,
            made.digest,
        ),
        created_at: now_rfc3339(),
        dataset_hash_as_read: Some(digests.as_read),
        options_digest: None,
        shard: spec.shard,
    };
    Ok(Plan {
        instances,
        jobs,
        meta,
        calibration,
        input_problems,
    })
}

/// Keeps `shard`'s part of the run: the instances in scope are dealt round the shards in id
/// order ([`Shard::holds`]), and each keeps the jobs of its instances. The same dataset, scope
/// and submissions split the same way on every machine.
fn take_shard(shard: Shard, instances: &mut Vec<Instance>, jobs: &mut Vec<Job>) {
    let mut ids: Vec<&str> = instances.iter().map(|i| i.record.instance_id()).collect();
    ids.sort_unstable();
    ids.dedup();
    let mine: HashSet<String> = ids
        .iter()
        .enumerate()
        .filter(|(i, _)| shard.holds(*i))
        .map(|(_, id)| (*id).to_owned())
        .collect();
    instances.retain(|i| mine.contains(i.record.instance_id()));
    jobs.retain(|j| mine.contains(j.record.instance_id()));
}

/// `--ids` the dataset lacks (`instances`: the dataset, or its part in scope), sorted, once
/// each.
fn missing_ids<'a>(dataset: &'a DatasetSpec, instances: &[Instance]) -> Vec<&'a str> {
    let known: HashSet<&str> = instances.iter().map(|i| i.record.instance_id()).collect();
    let mut missing: Vec<&str> = dataset
        .ids
        .iter()
        .map(String::as_str)
        .filter(|i| !known.contains(i))
        .collect();
    missing.sort();
    missing.dedup();
    missing
}

/// The hashes of a dataset (over all of its instances).
#[derive(Debug, Clone)]
pub struct DatasetDigests {
    /// [`dataset_hash`]: what a run records now.
    pub hash: String,
    /// [`dataset_hash_as_read`]: what a run or a calibration made before recorded.
    pub as_read: String,
}

/// The dataset's instances, and its hashes (over all of them); with `ids`, only those (an id
/// the dataset lacks is named in a warning).
pub fn load_instances(
    dataset: &DatasetSpec,
    notes: &dyn Progress,
) -> Result<(Vec<Instance>, DatasetDigests), RunError> {
    let ids = &dataset.ids;
    let mut instances = load_all(&dataset.path, dataset.test_suites.as_deref())?;
    let dataset_digest = DatasetDigests {
        hash: dataset_hash(&instances),
        as_read: dataset_hash_as_read(&instances),
    };
    if !ids.is_empty() {
        let all: Vec<String> = instances
            .iter()
            .map(|i| i.record.instance_id().to_owned())
            .collect();
        let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
        instances.retain(|i| wanted.contains(i.record.instance_id()));
        let missing: Vec<String> = missing_ids(dataset, &instances)
            .into_iter()
            .map(|id| with_suggestions(id, &all))
            .collect();
        if instances.is_empty() {
            return Err(RunError::NoInstanceInScope {
                dataset: dataset.path.clone(),
                missing,
            });
        }
        if !missing.is_empty() {
            notes.note(&format!(
                "warning: --ids not in the dataset: {}",
                missing.join("; ")
            ));
        }
    }
    Ok((instances, dataset_digest))
}

/// `id`, and the dataset's ids that look like it ("did you mean …?"): those at least 0.85
/// alike by Jaro-Winkler or ignoring case, the three closest.
fn with_suggestions(id: &str, known: &[String]) -> String {
    let mut close: Vec<(f64, &str)> = known
        .iter()
        .map(|k| {
            let same_case = if k.eq_ignore_ascii_case(id) { 1.0 } else { 0.0 };
            (strsim::jaro_winkler(id, k).max(same_case), k.as_str())
        })
        .filter(|(score, _)| *score >= 0.85)
        .collect();
    close.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    close.truncate(3);
    if close.is_empty() {
        id.to_owned()
    } else {
        let names: Vec<&str> = close.iter().map(|(_, k)| *k).collect();
        format!("{id} (did you mean {}?)", names.join(", "))
    }
}

/// The jobs, the predictions naming unknown instances, and what was graded as the store
/// records it (a label and a digest).
struct Made {
    jobs: Vec<Job>,
    unknown: Vec<String>,
    label: String,
    digest: String,
    /// Submissions that could not be read at all (a bad predictions line), each named.
    problems: Vec<String>,
}

fn make_jobs(
    spec: &RunSpec,
    instances: &[Instance],
    notes: &dyn Progress,
) -> Result<Made, RunError> {
    let mut jobs = Vec::new();
    match &spec.submissions {
        Submissions::Predictions {
            path,
            format,
            patches,
        } => {
            check_predictions_path(path)?;
            // Any agent output beyondswe reads: predictions files, agent runs, Harbor jobs,
            // with the run's cap on the patch files it reads.
            let opts = IngestOptions {
                format: *format,
                patches: patches.clone(),
                instance: None,
                max_patch_bytes: Some(spec.limits.read.max_patch_bytes),
            };
            let ing = ingest_with(path, &opts)?;
            for line in ing.describe(path, None) {
                notes.note(&line);
            }
            let mut made = prediction_jobs(spec, instances, &ing, path, notes);
            made.problems.clone_from(&ing.problems);
            return Ok(made);
        }
        Submissions::Gold { solutions } => {
            for inst in instances {
                let id = inst.record.instance_id();
                let reference = solutions
                    .as_deref()
                    .filter(|_| inst.record.family() == Family::Doc2Repo)
                    .and_then(|dir| crate::convert::find_solution(&inst.record, dir));
                match (inst.record.gold_patch(), reference) {
                    (Some(p), _) => jobs.push(Job::new(
                        inst,
                        Submission::Patch(p.as_bytes().to_vec()),
                        "gold",
                        1,
                    )),
                    (None, Some(repo)) => {
                        let submission = match read_submission(
                            &crate::submission::Submitted::Repo(repo.clone()),
                            id,
                            inst.record.family(),
                            &spec.limits.read,
                        ) {
                            Ok(s) => s,
                            Err(e) => Submission::Unreadable(format!("{}: {e}", repo.display())),
                        };
                        jobs.push(Job::new(inst, submission, "gold", 1));
                    }
                    (None, None) => notes.note(&format!(
                        "note: `{id}` has no gold patch{}; not graded",
                        if inst.record.family() == Family::Doc2Repo {
                            " and no reference repository (--solutions DIR)"
                        } else {
                            ""
                        }
                    )),
                }
            }
        }
        Submissions::Empty => {
            for inst in instances {
                jobs.push(Job::new(inst, Submission::Patch(Vec::new()), "empty", 1));
            }
        }
    }
    let name = if matches!(spec.submissions, Submissions::Gold { .. }) {
        "gold"
    } else {
        "empty"
    };
    Ok(Made {
        jobs,
        unknown: Vec::new(),
        label: name.into(),
        digest: name.into(),
        problems: Vec::new(),
    })
}

/// One job per ingested submission of a known instance; the digest covers every submission (and
/// every reason one could not be read).
fn prediction_jobs(
    spec: &RunSpec,
    instances: &[Instance],
    ing: &Ingest,
    path: &Path,
    notes: &dyn Progress,
) -> Made {
    let by_id: HashMap<&str, &Instance> = instances
        .iter()
        .map(|i| (i.record.instance_id(), i))
        .collect();
    // Harbor trials name their task after its directory (lower case).
    let names = task_name_index(by_id.keys().copied());
    let mut h = Sha256::new();
    let mut jobs = Vec::new();
    let mut unknown = Vec::new();
    let mut outside = 0usize;
    let scoped = &spec.dataset.ids;
    for p in &ing.items {
        let Some(inst) = lookup_task(&names, &p.instance_id).and_then(|id| by_id.get(id.as_str()))
        else {
            // Left out by --ids, which is no problem of the prediction's.
            if !scoped.is_empty()
                && !scoped
                    .iter()
                    .any(|i| i.eq_ignore_ascii_case(&p.instance_id))
            {
                outside += 1;
            } else {
                unknown.push(format!("{} ({})", p.instance_id, p.source));
            }
            continue;
        };
        let Some(submission) = item_submission(spec, p, inst) else {
            continue;
        };
        h.update(p.instance_id.as_bytes());
        h.update(p.attempt.to_le_bytes());
        match &submission {
            Submission::Patch(b) => h.update(b),
            Submission::Tree(t) => h.update(t.digest()),
            Submission::Unreadable(why) => {
                notes.note(&format!("warning: {why} (graded as unresolved)"));
                h.update(why.as_bytes());
            }
        }
        let mut j = Job::new(inst, submission, &p.model, p.attempt);
        j.claimed_reward = p.reward;
        jobs.push(j);
    }
    if outside > 0 {
        notes.note(&format!(
            "note: {outside} prediction(s) for instances outside --ids (not graded)"
        ));
    }
    Made {
        jobs,
        unknown,
        label: path.display().to_string(),
        digest: hex::encode(h.finalize()),
        problems: Vec::new(),
    }
}

/// The submission of one ingested item (unreadable, with the reason, when it cannot be read);
/// `None` for an item with nothing to grade.
fn item_submission(
    spec: &RunSpec,
    p: &crate::submission::Ingested,
    inst: &Instance,
) -> Option<Submission> {
    let source = p.submitted.as_ref()?;
    let family = inst.record.family();
    Some(
        match read_submission(source, &p.instance_id, family, &spec.limits.read) {
            Ok(submission) => submission,
            Err(e) => Submission::Unreadable(format!("{}: {e}", p.source)),
        },
    )
}

/// The predictions path, checked before anything is read: a directory, or a regular file (a
/// FIFO or a device is refused here rather than read). The patch files it leads to (captured
/// diffs, Harbor trials' artifacts) are checked by ingest as it reads them, within the run's cap.
fn check_predictions_path(path: &Path) -> Result<(), RunError> {
    let meta = fs_err::metadata(path).map_err(|source| {
        crate::submission::SubmissionError::Io(crate::errors::PathError::new(
            path.to_owned(),
            source,
        ))
    })?;
    if !meta.is_dir() {
        check_patch_file(path, u64::MAX)?;
    }
    Ok(())
}

/// With `exclude_flaky`: the calibration's flaky ids are taken off the ids the job's instance
/// must pass (the record changes, so the resume key does too). An instance whose every
/// FAIL_TO_PASS id is flaky keeps its ids: nothing would be left to tell a fix. Returns a note
/// when the ids are kept for a reason a person should know.
fn drop_flaky_ids(job: &mut Job, cal: &Calibration) -> Result<Option<String>, RunError> {
    let id = job.record.instance_id().to_owned();
    let Some(flaky) = cal
        .instance(&id)
        .map(|c| &c.flaky_tests)
        .filter(|f| !f.is_empty())
    else {
        return Ok(None);
    };
    if job.record.family() == Family::Doc2Repo {
        return Ok(Some(format!(
            "note: `{id}`: flaky suite tests are reported, not excluded (the suite score counts every test)"
        )));
    }
    let keep = |ids: Vec<String>| -> Vec<String> {
        ids.into_iter().filter(|t| !flaky.contains(t)).collect()
    };
    let f2p = keep(job.record.fail_to_pass());
    if f2p.is_empty() {
        return Ok(Some(format!(
            "note: `{id}`: every FAIL_TO_PASS id is flaky; none excluded"
        )));
    }
    let p2p = keep(job.record.pass_to_pass());
    job.record.set("FAIL_TO_PASS", serde_json::json!(f2p))?;
    job.record.set("PASS_TO_PASS", serde_json::json!(p2p))?;
    Ok(None)
}
