//! `beyondswe grade`: grade a whole run in parallel, resumably, and report the paper's figures.

use super::grade_one::{LimitArgs, build_environment, connect, sweep_left_over};
use super::ingest::describe;
use super::{exit, note, out};
use anyhow::Result;
use beyondswe::calibration::{self, Calibration};
use beyondswe::dataset::{Instance, dataset_hash, load_all};
use beyondswe::grade::{Job, JobEvent, Outcome, Progress, Traced, run_jobs};
use beyondswe::harbor::{trial_dirs, trial_patch};
use beyondswe::record::Family;
use beyondswe::report::{
    self, CalibrationUse, Format, GRADER_VERSION, RunMeta, Store, build_report, now_rfc3339,
    write_atomic,
};
use beyondswe::sandbox::DockerSandbox;
use beyondswe::submission::{AgentFormat, Submission, check_patch_file, detect, ingest, read_tree};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["predictions", "gold", "empty"])))]
pub(crate) struct GradeArgs {
    /// The dataset: a BeyondSWE JSONL file or a directory of Harbor task directories.
    #[arg(long)]
    pub(crate) dataset: PathBuf,
    /// Predictions (JSONL, a JSON list, or a JSON object keyed by instance id), or any agent
    /// output `ingest` reads: SWE-agent and mini-swe-agent runs, OpenHands output.jsonl, AweAgent
    /// runs, Claude Code / Codex transcripts with captured diffs, Harbor job directories.
    #[arg(long)]
    pub(crate) predictions: Option<PathBuf>,
    /// The format of --predictions (default: detected).
    #[arg(long, value_enum)]
    pub(crate) predictions_format: Option<AgentFormat>,
    /// Claude Code / Codex: directory of captured diffs named `<instance_id>.diff`.
    #[arg(long)]
    pub(crate) patches: Option<PathBuf>,
    /// Grade the dataset's own gold patches (sanity run: every instance should resolve).
    #[arg(long)]
    pub(crate) gold: bool,
    /// Grade empty patches (sanity run: nothing should resolve).
    #[arg(long)]
    pub(crate) empty: bool,
    /// The run's name; its results go to RESULTS_DIR/RUN_ID.
    #[arg(long)]
    pub(crate) run_id: String,
    #[arg(long, default_value = "runs")]
    pub(crate) results_dir: PathBuf,
    /// Gradings at once (default: the number of cores).
    #[arg(long)]
    pub(crate) jobs: Option<usize>,
    /// Only these instance ids.
    #[arg(long, num_args = 1..)]
    pub(crate) ids: Vec<String>,
    /// Directory with the Doc2Repo test-suite zips.
    #[arg(long)]
    pub(crate) test_suites: Option<PathBuf>,
    /// Reuse a results directory made for another dataset.
    #[arg(long)]
    pub(crate) force: bool,
    /// How to print the summary.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(crate) format: Format,
    /// A calibration made by `beyondswe calibrate`: flaky test ids and broken instances are
    /// reported apart, and the report records the file's hash.
    #[arg(long)]
    pub(crate) calibration: Option<PathBuf>,
    /// With --calibration: flaky test ids are not required to pass.
    #[arg(long, requires = "calibration")]
    pub(crate) exclude_flaky: bool,
    /// With --calibration: broken instances are left out of the family figures (still listed).
    #[arg(long, requires = "calibration")]
    pub(crate) exclude_broken: bool,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

/// Progress on stderr: a bar with ETA and running tallies (hidden when stderr is not a terminal
/// or with --quiet).
pub(crate) struct Bar {
    pub(crate) bar: ProgressBar,
    resolved: AtomicUsize,
    unresolved: AtomicUsize,
    errors: AtomicUsize,
    cached: AtomicUsize,
}

impl Bar {
    pub(crate) fn new(len: usize, quiet: bool) -> Bar {
        let bar = ProgressBar::with_draw_target(
            Some(len as u64),
            if quiet {
                ProgressDrawTarget::hidden()
            } else {
                ProgressDrawTarget::stderr()
            },
        );
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} ETA {eta}  {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Bar {
            bar,
            resolved: AtomicUsize::new(0),
            unresolved: AtomicUsize::new(0),
            errors: AtomicUsize::new(0),
            cached: AtomicUsize::new(0),
        }
    }
}

impl Progress for Bar {
    fn event(&self, event: &JobEvent) {
        let stored = match event {
            JobEvent::Cached(s) => {
                self.cached.fetch_add(1, Ordering::Relaxed);
                s
            }
            JobEvent::Graded { stored, .. } => stored,
        };
        let counter = match stored.verdict.verdict {
            Outcome::Resolved => &self.resolved,
            Outcome::Unresolved => &self.unresolved,
            Outcome::Error => &self.errors,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.bar.set_message(format!(
            "resolved {}  unresolved {}  error {}  (cached {})",
            self.resolved.load(Ordering::Relaxed),
            self.unresolved.load(Ordering::Relaxed),
            self.errors.load(Ordering::Relaxed),
            self.cached.load(Ordering::Relaxed)
        ));
        self.bar.inc(1);
    }
}

/// The patch files that reading `path` will load, checked before anything is read: captured diffs
/// (`--patches DIR`, or `patches/` beside transcripts) and Harbor trials' artifacts must be
/// regular files within `--max-patch-mb`; the predictions themselves a file or a directory.
fn check_patch_files(args: &GradeArgs, path: &Path) -> Result<()> {
    let max = args.limits.max_patch_bytes();
    let meta = fs_err::metadata(path)?;
    if !meta.is_dir() {
        check_patch_file(path, u64::MAX)?;
    }
    let beside = if meta.is_dir() {
        path.join("patches")
    } else {
        path.parent().unwrap_or(Path::new(".")).join("patches")
    };
    let dir = args.patches.clone().unwrap_or(beside);
    if dir.is_dir() {
        for entry in fs_err::read_dir(&dir)? {
            let p = entry?.path();
            if p.extension().is_some_and(|e| e == "diff" || e == "patch") {
                check_patch_file(&p, max)?;
            }
        }
    }
    let format = match args.predictions_format {
        Some(f) => Some(f),
        None => detect(path).ok(),
    };
    if format == Some(AgentFormat::HarborJob) {
        for (trial, _) in trial_dirs(path) {
            if let Some(p) = trial_patch(&trial) {
                check_patch_file(&p, max)?;
            }
        }
    }
    Ok(())
}

/// The jobs of a run, and the predictions that name unknown instances.
fn build_jobs(
    args: &GradeArgs,
    instances: &[Instance],
) -> Result<(Vec<Job>, Vec<String>, String, String)> {
    let by_id: HashMap<&str, &Instance> = instances
        .iter()
        .map(|i| (i.record.instance_id(), i))
        .collect();
    let job = |inst: &Instance, submission: Submission, model: &str, attempt: u32| Job {
        record: inst.record.clone(),
        attempt,
        claimed_reward: None,
        submission,
        test_suite: inst.test_suite.clone(),
        model: model.to_owned(),
        image_override: None,
        problem: None,
    };
    let mut jobs = Vec::new();
    let mut unknown = Vec::new();
    let (label, digest) = if let Some(path) = &args.predictions {
        check_patch_files(args, path)?;
        // Any agent output beyondswe reads: predictions files, agent runs, Harbor jobs.
        let ing = ingest(path, args.predictions_format, args.patches.as_deref())?;
        describe(path, &ing, None);
        let mut h = Sha256::new();
        // Harbor trials name their task after its directory (lower case).
        let names = beyondswe::harbor::task_name_index(by_id.keys().copied());
        for p in &ing.items {
            let Some(inst) = names
                .get(p.instance_id.as_str())
                .and_then(|id| by_id.get(id.as_str()))
            else {
                unknown.push(format!("{} ({})", p.instance_id, p.source));
                continue;
            };
            // A submission that cannot be read is that prediction's verdict, not the run's end.
            let mut problem = None;
            let submission = match (&p.patch, &p.repo) {
                (Some(bytes), _) => Submission::Patch(bytes.clone()),
                (None, Some(_)) if inst.record.family() != Family::Doc2Repo => {
                    problem = Some(format!(
                        "{}: `model_repo` is for Doc2Repo instances; `{}` is {}",
                        p.source,
                        p.instance_id,
                        inst.record.family()
                    ));
                    Submission::Patch(Vec::new())
                }
                (None, Some(dir)) => match read_tree(dir, args.limits.tree_limits()) {
                    Ok(tree) => Submission::Tree(tree),
                    Err(e) => {
                        problem = Some(format!("{}: {e}", p.source));
                        Submission::Patch(Vec::new())
                    }
                },
                (None, None) => continue,
            };
            if let Some(problem) = &problem {
                note(format!("warning: {problem} (graded as unresolved)"));
                h.update(problem.as_bytes());
            }
            h.update(p.instance_id.as_bytes());
            h.update(p.attempt.to_le_bytes());
            match &submission {
                Submission::Patch(b) => h.update(b),
                Submission::Tree(t) => h.update(t.digest()),
            }
            let mut j = job(inst, submission, &p.model, p.attempt);
            j.claimed_reward = p.reward;
            j.problem = problem;
            jobs.push(j);
        }
        (path.display().to_string(), hex::encode(h.finalize()))
    } else if args.gold {
        for inst in instances {
            match inst.record.gold_patch() {
                Some(p) => jobs.push(job(
                    inst,
                    Submission::Patch(p.as_bytes().to_vec()),
                    "gold",
                    1,
                )),
                None => note(format!(
                    "note: `{}` has no gold patch; not graded",
                    inst.record.instance_id()
                )),
            }
        }
        ("gold".into(), "gold".into())
    } else {
        for inst in instances {
            jobs.push(job(inst, Submission::Patch(Vec::new()), "empty", 1));
        }
        ("empty".into(), "empty".into())
    };
    Ok((jobs, unknown, label, digest))
}

/// Harbor tasks without a prebuilt image: builds each environment once and points the jobs of
/// its instance at the image.
pub(crate) async fn build_environments(
    sandbox: &DockerSandbox,
    instances: &[Instance],
    jobs: &mut [Job],
) -> Result<()> {
    let mut built: BTreeMap<PathBuf, String> = BTreeMap::new();
    for inst in instances
        .iter()
        .filter(|i| i.environment_to_build.is_some())
    {
        let dir = inst.environment_to_build.clone().unwrap_or_default();
        let tag =
            build_environment(sandbox, &inst.record.instance_id().to_lowercase(), &dir).await?;
        built.insert(dir, tag);
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

/// The dataset's instances, and its hash (over all of them); with `ids`, only those (an id the
/// dataset lacks is named in a warning).
pub(crate) fn load_instances(
    dataset: &Path,
    test_suites: Option<&Path>,
    ids: &[String],
) -> Result<(Vec<Instance>, String)> {
    let mut instances = load_all(dataset, test_suites)?;
    let dataset_digest = dataset_hash(&instances);
    if !ids.is_empty() {
        let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let known: HashSet<&str> = instances.iter().map(|i| i.record.instance_id()).collect();
        let missing: Vec<&str> = wanted
            .iter()
            .copied()
            .filter(|i| !known.contains(i))
            .collect();
        if !missing.is_empty() {
            note(format!(
                "warning: --ids not in the dataset: {}",
                missing.join(", ")
            ));
        }
        instances.retain(|i| wanted.contains(i.record.instance_id()));
    }
    Ok((instances, dataset_digest))
}

pub(crate) fn run(args: &GradeArgs, quiet: bool) -> Result<i32> {
    let (instances, dataset_digest) =
        load_instances(&args.dataset, args.test_suites.as_deref(), &args.ids)?;
    let calibration = match &args.calibration {
        Some(path) => Some(calibration::read(path)?),
        None => None,
    };
    let (mut jobs, unknown, label, digest) = build_jobs(args, &instances)?;
    if let Some(loaded) = &calibration {
        if loaded.calibration.dataset_hash != dataset_digest {
            note(format!(
                "warning: {} was made for another dataset ({}, hash {}); instances are matched by id",
                args.calibration
                    .as_deref()
                    .unwrap_or(Path::new(""))
                    .display(),
                loaded.calibration.dataset,
                loaded.calibration.dataset_hash
            ));
        }
        if args.exclude_flaky {
            for job in &mut jobs {
                drop_flaky_ids(job, &loaded.calibration)?;
            }
        }
    }
    if !unknown.is_empty() {
        note(format!(
            "warning: {} prediction(s) for instances not in the dataset (not graded): {}",
            unknown.len(),
            unknown.join(", ")
        ));
    }
    let meta = RunMeta {
        run_id: args.run_id.clone(),
        grader_version: GRADER_VERSION.into(),
        dataset: args.dataset.display().to_string(),
        dataset_hash: dataset_digest,
        predictions: label,
        predictions_hash: digest,
        created_at: now_rfc3339(),
    };
    let run_dir = args.results_dir.join(&args.run_id);
    let store = Store::open(&run_dir, &meta, args.force)?;
    tracing::info!(
        store = %run_dir.display(),
        stored = store.all().count(),
        "results store opened; stored verdicts with unchanged keys are kept (resume)"
    );
    if store.repaired > 0 {
        note(format!(
            "repaired {}: cut {} partial line(s) left by an interrupted run",
            run_dir.join("results.jsonl").display(),
            store.repaired
        ));
    }
    let store = Mutex::new(store);
    let jobs_n = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    });
    let started = now_rfc3339();
    let runtime = super::runtime()?;
    let run_label = format!("{}-{}", args.run_id, std::process::id());
    let outcome = runtime.block_on(async {
        let sandbox = connect().await?;
        sweep_left_over(&sandbox).await;
        build_environments(&sandbox, &instances, &mut jobs).await?;
        let mut opts = args.limits.options(&run_label);
        // `--gold` and `--empty` grade the dataset's own patches: no canaries.
        opts.trusted_submissions = args.gold || args.empty;
        let bar = Bar::new(jobs.len(), quiet);
        let traced = Traced(&sandbox);
        let result = tokio::select! {
            r = run_jobs(&traced, jobs, &store, &opts, jobs_n, &bar) => Some(r),
            _ = tokio::signal::ctrl_c() => None,
        };
        bar.bar.finish_and_clear();
        // Whatever the end (finished, interrupted, stopped, a grading that panicked), no grading of
        // this process is running now: every container of this run is left over, as are those a
        // killed grader's last requests created after the start-up sweep.
        let _ = sandbox.sweep(Some(run_label.as_str())).await;
        Ok::<_, anyhow::Error>(result)
    });
    let outcome = outcome?;
    let mut store = store.into_inner().unwrap_or_else(|e| e.into_inner());
    let interrupted = outcome.is_none();
    if let Some(Err(e)) = outcome {
        return Err(anyhow::Error::new(e).context(format!(
            "the run stopped; every verdict written so far is kept in {}",
            run_dir.display()
        )));
    }
    store.compact()?;
    let stored: Vec<_> = store.all().cloned().collect();
    let graded_ids: HashSet<&str> = instances.iter().map(|i| i.record.instance_id()).collect();
    let in_scope: Vec<_> = stored
        .into_iter()
        .filter(|s| graded_ids.contains(s.verdict.instance_id.as_str()))
        .collect();
    let cal_use = calibration.as_ref().map(|loaded| {
        CalibrationUse::new(
            &args
                .calibration
                .as_deref()
                .unwrap_or(Path::new(""))
                .display()
                .to_string(),
            loaded,
            in_scope.iter().map(|s| s.verdict.instance_id.as_str()),
            &meta.dataset_hash,
            args.exclude_flaky,
            args.exclude_broken,
        )
    });
    let report = build_report(
        Some(&meta),
        &in_scope,
        instances.len(),
        (Some(started), Some(now_rfc3339()), Some(jobs_n)),
        cal_use.as_ref(),
    );
    write_atomic(
        &run_dir.join("report.json"),
        &serde_json::to_vec_pretty(&report)?,
    )?;
    write_atomic(
        &run_dir.join("swebench_report.json"),
        &serde_json::to_vec_pretty(&report.swebench)?,
    )?;
    let html = run_dir.join("report.html");
    write_atomic(&html, report::html_for_run(&run_dir, &report).as_bytes())?;
    out(report::render(&report, args.format))?;
    note(format!(
        "results in {}; open {} in a browser",
        run_dir.display(),
        html.display()
    ));
    if interrupted {
        note(
            "interrupted: no new gradings started; containers removed; the results so far are kept",
        );
        return Ok(exit::INTERRUPTED);
    }
    Ok(if report.swebench.error_instances > 0 {
        exit::INFRASTRUCTURE
    } else {
        exit::SUCCESS
    })
}

/// `beyondswe report RUN_DIR`.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    pub(crate) run_dir: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(crate) format: Format,
}

pub(crate) fn load_report(dir: &Path) -> Result<report::Report> {
    let (meta, stored) = report::read_run(dir)?;
    // The report of the run as graded, when it has one, keeps the run's scope and timing.
    if let Ok(text) = fs_err::read_to_string(dir.join("report.json"))
        && let Ok(saved) = serde_json::from_str::<report::Report>(&text)
    {
        let ids: HashSet<&str> = saved
            .instances
            .iter()
            .map(|i| i.instance_id.as_str())
            .collect();
        let scoped: Vec<_> = stored
            .iter()
            .filter(|s| ids.contains(s.verdict.instance_id.as_str()))
            .cloned()
            .collect();
        return Ok(build_report(
            meta.as_ref(),
            &scoped,
            saved.swebench.total_instances,
            (saved.started_at, saved.finished_at, saved.jobs),
            saved.calibration.as_ref(),
        ));
    }
    let n = stored.len();
    Ok(build_report(
        meta.as_ref(),
        &stored,
        n,
        (None, None, None),
        None,
    ))
}

pub(crate) fn report(args: &ReportArgs) -> Result<i32> {
    let r = load_report(&args.run_dir)?;
    let text = match args.format {
        Format::Html => report::html_for_run(&args.run_dir, &r),
        other => report::render(&r, other),
    };
    out(text)?;
    Ok(exit::SUCCESS)
}

/// `--exclude-flaky`: the calibration's flaky ids are taken off the ids the job's instance must
/// pass (the record changes, so the resume key does too). An instance whose every
/// FAIL_TO_PASS id is flaky keeps its ids: nothing would be left to tell a fix.
fn drop_flaky_ids(job: &mut Job, cal: &Calibration) -> Result<()> {
    let id = job.record.instance_id().to_owned();
    let Some(flaky) = cal
        .instance(&id)
        .map(|c| &c.flaky_tests)
        .filter(|f| !f.is_empty())
    else {
        return Ok(());
    };
    if job.record.family() == Family::Doc2Repo {
        note(format!(
            "note: `{id}`: flaky suite tests are reported, not excluded (the suite score counts every test)"
        ));
        return Ok(());
    }
    let keep = |ids: Vec<String>| -> Vec<String> {
        ids.into_iter().filter(|t| !flaky.contains(t)).collect()
    };
    let f2p = keep(job.record.fail_to_pass());
    if f2p.is_empty() {
        note(format!(
            "note: `{id}`: every FAIL_TO_PASS id is flaky; none excluded"
        ));
        return Ok(());
    }
    let p2p = keep(job.record.pass_to_pass());
    job.record.set("FAIL_TO_PASS", serde_json::json!(f2p))?;
    job.record.set("PASS_TO_PASS", serde_json::json!(p2p))?;
    Ok(())
}

/// `beyondswe compare RUN_A RUN_B`.
#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    pub(crate) run_a: PathBuf,
    pub(crate) run_b: PathBuf,
    /// JSON instead of a table (the same as --format json).
    #[arg(long, conflicts_with = "format")]
    pub(crate) json: bool,
    /// table, json, or html (one self-contained page).
    #[arg(long, value_enum)]
    pub(crate) format: Option<CompareFormat>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CompareFormat {
    Table,
    Json,
    Html,
}

pub(crate) fn compare(args: &CompareArgs) -> Result<i32> {
    let a = load_report(&args.run_a)?;
    let b = load_report(&args.run_b)?;
    let c = report::compare(&a, &b);
    let format = match (args.json, args.format) {
        (true, _) => CompareFormat::Json,
        (false, f) => f.unwrap_or(CompareFormat::Table),
    };
    match format {
        CompareFormat::Json => out(format!("{}\n", serde_json::to_string_pretty(&c)?))?,
        CompareFormat::Table => out(report::render_comparison(&c))?,
        CompareFormat::Html => out(report::render_comparison_html(&c))?,
    }
    Ok(exit::SUCCESS)
}
