//! Parity experiments: the same agent's Harbor jobs, scored by Harbor and regraded offline.
//!
//! Harbor's adapter guide asks every adapter for `parity_experiment.json`: the same agent run
//! several times through the original benchmark's harness and through the Harbor adapter, the
//! scores of each run side by side. Here each Harbor job is one run. Its trials' rewards are the
//! Harbor side; the same trials' diffs, regraded by this project's offline grader in fresh
//! containers (the official evaluator's procedure, [`verify`]), are the original side. So the
//! numbers always come from a run that happened, and the per-trial agreement is recorded beside
//! them. `adapter_metadata.json` is written from the same facts and the dataset.

use super::batch::Progress;
use super::error::RunError;
use super::spec::{DatasetSpec, RunLimits, StoreSpec};
use super::verify::{VerifySpec, verify};
use crate::harbor::{trial_dirs, trial_reward};
use crate::report::Stored;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One parity experiment over Harbor jobs.
#[derive(Debug, Clone)]
pub struct ParitySpec {
    /// Harbor job directories, one run each.
    pub jobs_dirs: Vec<PathBuf>,
    /// The instances the jobs ran.
    pub dataset: DatasetSpec,
    /// Where each run's regrading goes (`<run id>-<n>`).
    pub store: StoreSpec,
    /// Gradings at once.
    pub jobs: usize,
    /// Container limits, the test timeout, and how much of a submission is read.
    pub limits: RunLimits,
    /// The adapter's id (`adapter_name`).
    pub adapter_name: String,
    /// How many tasks the adapter converts from the dataset (`adapted_benchmark_size`).
    pub adapted_size: usize,
    /// The date to record (`YYYY-MM-DD`).
    pub date: String,
}

/// What one agent and model scored over its runs.
#[derive(Debug, Clone, Serialize)]
pub struct ParityExperiment {
    /// The adapter's id.
    pub adapter_name: String,
    /// `name@version` of the agent the trials name.
    pub agent: String,
    /// The model the trials name (`none` for Harbor's own agents).
    pub model: String,
    /// When the experiment was recorded.
    pub date: String,
    /// Tasks the adapter converts.
    pub adapted_benchmark_size: usize,
    /// Distinct tasks the runs covered.
    pub parity_benchmark_size: usize,
    /// Runs per side.
    pub number_of_runs: usize,
    /// How each side was measured.
    pub notes: String,
    /// Where the original side's procedure lives.
    pub original_parity_repo: String,
    /// Adapter pull requests: null until there is one (an empty list is a finding of Harbor's
    /// adapter review; null asks for the links to be filled in).
    pub adapter_pr: Option<Vec<String>>,
    /// Dataset pull requests: null until there is one.
    pub dataset_pr: Option<Vec<String>>,
    /// Result uploads: null until there is one.
    pub parity_pr: Option<Vec<String>>,
    /// The Harbor jobs, one per run (their directory names).
    pub harbor_jobs: Vec<String>,
    /// The Harbor version the jobs' `lock.json` names (`0.26.0`); empty when they do not say.
    pub harbor_version: String,
    /// The scores.
    pub metrics: Vec<ParityMetric>,
    /// Trial by trial: how many were scored the same on both sides, and which were not.
    pub trial_agreement: TrialAgreement,
}

/// One metric, both sides.
#[derive(Debug, Clone, Serialize)]
pub struct ParityMetric {
    /// `BeyondSWE`.
    pub benchmark_name: String,
    /// `mean reward`.
    pub metric: String,
    /// `mean ± sample SEM` of the original side's runs.
    pub original: String,
    /// `mean ± sample SEM` of Harbor's runs.
    pub harbor: String,
    /// Each run's score, offline.
    pub original_runs: Vec<f64>,
    /// Each run's score, as Harbor recorded it.
    pub harbor_runs: Vec<f64>,
}

/// Per-trial agreement of the two sides.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TrialAgreement {
    /// Trials in all runs.
    pub trials: usize,
    /// Trials both sides scored the same.
    pub agreeing: usize,
    /// `run N: instance: harbor X, offline Y (reason)` for every other.
    pub disagreements: Vec<String>,
}

/// Everything a parity run wrote: one experiment per agent and model.
#[derive(Debug, Clone)]
pub struct Parity {
    /// `parity_experiment.json`'s entries.
    pub experiments: Vec<ParityExperiment>,
}

impl Parity {
    /// Whether each experiment's run ranges overlap (Harbor's review criterion).
    pub fn matching(e: &ParityExperiment) -> bool {
        e.metrics.iter().all(|m| {
            let (lo_a, hi_a) = range(&m.original_runs);
            let (lo_b, hi_b) = range(&m.harbor_runs);
            lo_a <= hi_b && lo_b <= hi_a
        })
    }

    /// `adapter_metadata.json`: one entry, the whole dataset as one split.
    pub fn adapter_metadata(&self, spec: &ParitySpec, dataset_size: usize) -> Value {
        let parity_size = self
            .experiments
            .iter()
            .map(|e| e.parity_benchmark_size)
            .max()
            .unwrap_or(0);
        let label = |e: &ParityExperiment| format!("{}+{}", e.agent, e.model);
        let (matching, unmatching): (Vec<_>, Vec<_>) =
            self.experiments.iter().partition(|e| Parity::matching(e));
        let names = |v: Vec<&ParityExperiment>| -> Value {
            if v.is_empty() {
                Value::Null
            } else {
                v.into_iter().map(label).collect()
            }
        };
        serde_json::json!([{
            "adapter_name": spec.adapter_name,
            "adapter_builders": ["beyondswe maintainers"],
            "original_benchmark": [{
                "split": "full",
                "size": dataset_size,
                "harness": "agent",
                "supported_agents": null,
                "adaptable": true,
                "notes": "BeyondSWE (arXiv 2603.03194): CrossRepo, DomainFix and DepMigrate issue fixes graded by FAIL_TO_PASS / PASS_TO_PASS, Doc2Repo graded by the pass rate of a hidden suite. Size: the records of the dataset given to `beyondswe parity`."
            }],
            "harbor_adapter": [{
                "split": "full",
                "adapted_benchmark_size": spec.adapted_size,
                "parity_benchmark_size": parity_size,
                "parity_sampling_rate": if spec.adapted_size == 0 { 0.0 } else { parity_size as f64 / spec.adapted_size as f64 },
                "registry_benchmark_size": spec.adapted_size,
                "added_agents": [],
                "parity_matching_agents": names(matching),
                "parity_unmatching_agents": names(unmatching),
                "parity_costs": 0,
                "notes": "Written by `beyondswe parity` from the Harbor jobs each experiment of parity_experiment.json names (harbor_jobs); every task the converter writes is registered (dataset.toml)."
            }]
        }])
    }
}

fn range(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(*x), hi.max(*x))
        })
}

/// `mean ± sample SEM` (the SEM of one run is undefined: `± n/a`).
pub fn mean_sem(runs: &[f64]) -> String {
    let n = runs.len() as f64;
    if runs.is_empty() {
        return "n/a".to_owned();
    }
    let mean = runs.iter().sum::<f64>() / n;
    if runs.len() < 2 {
        return format!("{mean:.4} ± n/a");
    }
    let ss: f64 = runs.iter().map(|x| (x - mean).powi(2)).sum();
    format!("{mean:.4} ± {:.4}", (ss / (n * (n - 1.0))).sqrt())
}

/// One run's trials as Harbor scored them: (task name, agent, model, reward or none).
struct JobTrials {
    agent: String,
    model: String,
    rewards: BTreeMap<String, Vec<Option<f64>>>,
}

fn job_trials(dir: &std::path::Path) -> JobTrials {
    let mut out = JobTrials {
        agent: String::new(),
        model: String::new(),
        rewards: BTreeMap::new(),
    };
    for (_, v) in trial_dirs(dir) {
        let info = &v["agent_info"];
        if out.agent.is_empty() {
            let name = info["name"].as_str().unwrap_or("unknown");
            out.agent = match info["version"].as_str() {
                Some(ver) if !ver.is_empty() => format!("{name}@{ver}"),
                _ => name.to_owned(),
            };
            out.model = info["model_info"]["name"]
                .as_str()
                .or(v["config"]["agent"]["model_name"].as_str())
                .unwrap_or("none")
                .to_owned();
        }
        let task = v["task_name"].as_str().unwrap_or_default().to_owned();
        out.rewards.entry(task).or_default().push(trial_reward(&v));
    }
    out
}

/// The runs of one agent and model, as they are regraded.
#[derive(Default)]
struct Runs {
    /// (Harbor's score, the offline score) per run.
    scores: Vec<(f64, f64)>,
    /// The instances the runs covered.
    tasks: std::collections::BTreeSet<String>,
    agreement: TrialAgreement,
    /// The job directories' names.
    jobs: Vec<String>,
    harbor_version: String,
}

/// Regrades every job and sets the two sides beside each other, one experiment per agent+model.
pub fn parity(spec: &ParitySpec, progress: &dyn Progress) -> Result<Parity, RunError> {
    let mut by_agent: BTreeMap<(String, String), Runs> = BTreeMap::new();
    for (n, dir) in spec.jobs_dirs.iter().enumerate() {
        let trials = job_trials(dir);
        let count: usize = trials.rewards.values().map(Vec::len).sum();
        if count == 0 {
            return Err(RunError::NoTrials(dir.clone()));
        }
        progress.note(&format!(
            "run {}: {} ({} trial(s), {})",
            n + 1,
            dir.display(),
            count,
            trials.agent
        ));
        let mut store = spec.store.clone();
        store.run_id = format!("{}-{}", spec.store.run_id, n + 1);
        let verified = verify(
            &VerifySpec {
                release: dir.clone(),
                dataset: spec.dataset.clone(),
                store,
                jobs: spec.jobs,
                limits: spec.limits.clone(),
            },
            progress,
        )?;
        let harbor: f64 = trials
            .rewards
            .values()
            .flatten()
            .map(|r| r.unwrap_or(0.0))
            .sum::<f64>()
            / count as f64;
        let offline: f64 =
            verified.stored.iter().map(|s| s.verdict.score).sum::<f64>() / count as f64;
        let runs = by_agent
            .entry((trials.agent.clone(), trials.model.clone()))
            .or_default();
        runs.scores.push((harbor, offline));
        agree(&mut runs.agreement, n + 1, &verified.stored, count);
        runs.tasks.extend(
            verified
                .stored
                .iter()
                .map(|s| s.verdict.instance_id.clone()),
        );
        runs.jobs.push(
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        if runs.harbor_version.is_empty() {
            runs.harbor_version = harbor_version(dir);
        }
    }
    let experiments = by_agent
        .into_iter()
        .map(|((agent, model), runs)| {
            let harbor_runs: Vec<f64> = runs.scores.iter().map(|r| round4(r.0)).collect();
            let original_runs: Vec<f64> = runs.scores.iter().map(|r| round4(r.1)).collect();
            ParityExperiment {
                adapter_name: spec.adapter_name.clone(),
                agent,
                model,
                date: spec.date.clone(),
                adapted_benchmark_size: spec.adapted_size,
                parity_benchmark_size: runs.tasks.len(),
                number_of_runs: runs.scores.len(),
                notes: "harbor: the mean reward Harbor recorded over each job's trials (a trial \
                        without a reward counts 0); original: the same trials' diffs regraded by \
                        `beyondswe verify` in fresh containers of the instance images (the \
                        official evaluator's procedure; a trial without a diff counts 0). Written \
                        by `beyondswe parity`."
                    .to_owned(),
                original_parity_repo: "this repository: `beyondswe parity`".to_owned(),
                adapter_pr: None,
                dataset_pr: None,
                parity_pr: None,
                harbor_jobs: runs.jobs,
                harbor_version: runs.harbor_version,
                metrics: vec![ParityMetric {
                    benchmark_name: "BeyondSWE".to_owned(),
                    metric: "mean reward".to_owned(),
                    original: mean_sem(&original_runs),
                    harbor: mean_sem(&harbor_runs),
                    original_runs,
                    harbor_runs,
                }],
                trial_agreement: runs.agreement,
            }
        })
        .collect();
    Ok(Parity { experiments })
}

/// The Harbor version a job's `lock.json` records (`harbor.version`), or "".
fn harbor_version(dir: &std::path::Path) -> String {
    crate::files::read_text(&dir.join("lock.json"), crate::files::SMALL_FILE_MAX)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["harbor"]["version"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// Counts the trials of one run both sides scored alike; names the others.
fn agree(out: &mut TrialAgreement, run: usize, stored: &[Stored], count: usize) {
    out.trials += count;
    for s in stored {
        let harbor = s.claimed_reward.unwrap_or(0.0);
        if (harbor - s.verdict.score).abs() <= 1e-6 {
            out.agreeing += 1;
        } else {
            out.disagreements.push(format!(
                "run {run}: {}: harbor {harbor}, offline {} ({})",
                s.label(),
                s.verdict.score,
                s.verdict.reason.as_str()
            ));
        }
    }
    // Trials with nothing to regrade (no diff) agree when Harbor gave them nothing either; they
    // are not in the store, so they are counted here as the difference.
    out.agreeing += count.saturating_sub(stored.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_sem_as_harbor_defines_it() {
        assert_eq!(mean_sem(&[1.0, 1.0]), "1.0000 ± 0.0000");
        assert_eq!(mean_sem(&[0.5]), "0.5000 ± n/a");
        // sqrt(((0.2-0.3)^2 + (0.4-0.3)^2) / (2*1)) = 0.1
        assert_eq!(mean_sem(&[0.2, 0.4]), "0.3000 ± 0.1000");
        assert_eq!(mean_sem(&[]), "n/a");
    }

    #[test]
    fn run_ranges_that_overlap_match() {
        let e = |o: Vec<f64>, h: Vec<f64>| ParityExperiment {
            adapter_name: "a".into(),
            agent: "x@1".into(),
            model: "m".into(),
            date: "2026-12-02".into(),
            adapted_benchmark_size: 1,
            parity_benchmark_size: 1,
            number_of_runs: o.len(),
            notes: String::new(),
            original_parity_repo: String::new(),
            adapter_pr: None,
            dataset_pr: None,
            parity_pr: None,
            harbor_jobs: vec![],
            harbor_version: String::new(),
            metrics: vec![ParityMetric {
                benchmark_name: "B".into(),
                metric: "m".into(),
                original: mean_sem(&o),
                harbor: mean_sem(&h),
                original_runs: o,
                harbor_runs: h,
            }],
            trial_agreement: TrialAgreement::default(),
        };
        assert!(Parity::matching(&e(vec![0.2, 0.4], vec![0.35, 0.6])));
        assert!(!Parity::matching(&e(vec![0.2, 0.3], vec![0.35, 0.6])));
    }
}
