//! What a run is: the dataset, the submissions, the limits, the store and the calibration, as
//! settled values. The command line (or any other caller) builds one; nothing here parses.

use crate::grade::GradeOptions;
use crate::sandbox::{DockerSandbox, Limits, PullPolicy};
use crate::submission::{AgentFormat, ReadLimits};
use std::path::PathBuf;
use std::time::Duration;

/// The instances a run grades.
#[derive(Debug, Clone)]
pub struct DatasetSpec {
    /// A BeyondSWE JSONL file or a directory of Harbor task directories.
    pub path: PathBuf,
    /// The directory of Doc2Repo suite zips.
    pub test_suites: Option<PathBuf>,
    /// Only these instance ids (empty: all).
    pub ids: Vec<String>,
}

impl DatasetSpec {
    /// Every instance of `path`, no suites.
    pub fn new(path: PathBuf) -> DatasetSpec {
        DatasetSpec {
            path,
            test_suites: None,
            ids: Vec::new(),
        }
    }
}

/// One grading run.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The instances to grade.
    pub dataset: DatasetSpec,
    /// What is graded for them.
    pub submissions: Submissions,
    /// Where the verdicts and the report go.
    pub store: StoreSpec,
    /// Gradings at once.
    pub jobs: usize,
    /// Container limits, the test timeout, and how much of a submission is read.
    pub limits: RunLimits,
    /// A calibration to apply to the verdicts and the report; `None` for none.
    pub calibration: Option<CalibrationSpec>,
    /// Instances whose `forgery_suspected` evidence a reviewer accepted; added to the run's
    /// accepted ids (`report::ACCEPTED_FILE`).
    pub accept_suspected: Vec<String>,
    /// Grade only this part of the run (`--shard K/N`); `merge` joins the parts.
    pub shard: Option<crate::report::Shard>,
    /// Where the gradings happen: on this machine's engine, or through Harbor.
    pub backend: Backend,
    /// Evidence (static, or seen in the tested process) makes a verdict `forgery_suspected`
    /// (`--strict`); by default only proof changes a verdict.
    pub strict: bool,
}

/// Where a run's gradings happen.
#[derive(Debug, Clone, Default)]
pub enum Backend {
    /// In containers of this machine's engine.
    #[default]
    Local,
    /// Through Harbor (`grade --via-harbor`): each submission a task whose oracle solution it is,
    /// graded by the task's separate verifier on Harbor's environment.
    Harbor(HarborBackend),
}

/// How to reach Harbor.
#[derive(Debug, Clone)]
pub struct HarborBackend {
    /// The command that runs Harbor's CLI, as words: `["harbor"]`, or a wrapper such as
    /// `["bash", "scripts/harbor-run.sh", "0.26.0"]`. It runs in the directory that holds the
    /// tasks and the jobs (`RUN_DIR/harbor`), with paths relative to it.
    pub command: Vec<String>,
    /// Harbor's environment type, passed as `--env` (`docker`, `daytona`, `modal`, …).
    pub environment: String,
}

impl RunSpec {
    /// A run of `submissions` against `dataset` into `store`, with the default limits and one
    /// grading per core.
    pub fn new(dataset: DatasetSpec, submissions: Submissions, store: StoreSpec) -> RunSpec {
        RunSpec {
            dataset,
            submissions,
            store,
            jobs: default_jobs(),
            limits: RunLimits::default(),
            calibration: None,
            accept_suspected: Vec::new(),
            shard: None,
            backend: Backend::Local,
            strict: false,
        }
    }
}

/// What is graded.
#[derive(Debug, Clone)]
pub enum Submissions {
    /// Predictions or any agent output `ingest` reads (format detected unless given); Claude
    /// Code and Codex transcripts take their captured diffs from `patches`.
    Predictions {
        /// The predictions file, agent output file or directory.
        path: PathBuf,
        /// Its format; `None` to detect it.
        format: Option<AgentFormat>,
        /// The directory of captured diffs named `<instance_id>.diff`, for Claude Code and Codex
        /// transcripts; `None` when there is none.
        patches: Option<PathBuf>,
    },
    /// The dataset's gold patches (every instance should resolve); Doc2Repo instances, which
    /// have none, take their reference repository from `solutions` (`DIR/<instance_id>/` or an
    /// archive named by the id, as `convert to-harbor --solutions` reads them).
    Gold {
        /// The Doc2Repo reference repositories; `None` when there are none.
        solutions: Option<PathBuf>,
    },
    /// Empty patches (nothing should resolve).
    Empty,
}

impl Submissions {
    /// The dataset's own patches: graded without canaries, which are there to catch a submission
    /// forging its outcomes (see [`GradeOptions::trusted_submissions`]).
    pub fn trusted(&self) -> bool {
        matches!(self, Submissions::Gold { .. } | Submissions::Empty)
    }
}

/// Where the verdicts go: `results_dir/run_id`, resumable.
#[derive(Debug, Clone)]
pub struct StoreSpec {
    /// The directory holding one directory per run (`--results-dir`, `runs` by default).
    pub results_dir: PathBuf,
    /// The run's name: its directory under `results_dir`, and part of its containers' label.
    pub run_id: String,
    /// Reuse a results directory made for another dataset.
    pub force: bool,
    /// Resume a run made by another grader version (`--allow-mixed`).
    pub allow_mixed: bool,
}

impl StoreSpec {
    /// The run's directory, `results_dir/run_id`: the store and the report files.
    pub fn dir(&self) -> PathBuf {
        self.results_dir.join(&self.run_id)
    }

    /// This process's label on the containers of this run (what the final sweep removes).
    pub fn process_label(&self) -> String {
        format!("{}-{}", self.run_id, std::process::id())
    }
}

/// A calibration made by `calibrate`, and what to do with it.
#[derive(Debug, Clone)]
pub struct CalibrationSpec {
    /// The `calibration.json` file.
    pub path: PathBuf,
    /// Flaky test ids are not required to pass.
    pub exclude_flaky: bool,
    /// Broken instances are left out of the family figures (still listed).
    pub exclude_broken: bool,
}

/// The limits every grading command shares: the container's, the test timeout, and how much of
/// a submission is read from disk.
#[derive(Debug, Clone)]
pub struct RunLimits {
    /// Memory, CPU, process and disk limits of each grading container.
    pub container: Limits,
    /// Bound on the test command of each grading.
    pub test_timeout: Duration,
    /// How much of a submission is read from disk (`--max-patch-mb`, `--max-repo-mb`).
    pub read: ReadLimits,
    /// The prepared images are kept under this total at the end of a run, the least recently
    /// used removed first (`--max-prepared-gb`); `0`: no limit.
    pub max_prepared_bytes: u64,
    /// When instance images are pulled from their registries (`--pull`).
    pub pull: PullPolicy,
}

/// The prepared images' default limit: 50 GiB.
pub const DEFAULT_MAX_PREPARED_BYTES: u64 = 50 << 30;

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            container: Limits::default(),
            test_timeout: Duration::from_secs(crate::DEFAULT_TIMEOUT_SECS),
            read: ReadLimits::default(),
            max_prepared_bytes: DEFAULT_MAX_PREPARED_BYTES,
            pull: PullPolicy::default(),
        }
    }
}

impl RunLimits {
    /// The grading options of a run whose containers carry `label`.
    pub fn grade_options(&self, label: &str) -> GradeOptions {
        GradeOptions {
            limits: self.container.clone(),
            test_timeout: self.test_timeout,
            labels: DockerSandbox::process_labels(label),
            ..GradeOptions::default()
        }
    }
}

/// One grading per core.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
}
