//! `beyondswe calibrate`: grade every instance's gold patch N times and its empty patch once (its
//! tests run), in fresh containers, resumably, and write which instances and tests can be
//! trusted (`calibration.json`).

use super::grade::{Bar, build_environments, load_instances};
use super::grade_one::{LimitArgs, connect, sweep_left_over};
use super::{exit, note, out};
use anyhow::Result;
use beyondswe::calibration::{
    CALIBRATION_FORMAT, Calibration, Class, InstanceCalibration, Runs, calibrate_instance,
    summarize,
};
use beyondswe::dataset::Instance;
use beyondswe::files::write_atomic;
use beyondswe::grade::{Job, Traced, Verdict, run_jobs};
use beyondswe::report::{GRADER_VERSION, RunMeta, Store, now_rfc3339};
use beyondswe::submission::Submission;
use clap::Args;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug, Args)]
pub(crate) struct CalibrateArgs {
    /// The dataset: a BeyondSWE JSONL file or a directory of Harbor task directories.
    #[arg(long)]
    pub(crate) dataset: PathBuf,
    /// Directory with the Doc2Repo test-suite zips.
    #[arg(long)]
    pub(crate) test_suites: Option<PathBuf>,
    /// Gold gradings per instance.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) repeat: u32,
    /// Gradings at once (default: the number of cores).
    #[arg(long)]
    pub(crate) jobs: Option<usize>,
    /// Only these instance ids.
    #[arg(long, num_args = 1..)]
    pub(crate) ids: Vec<String>,
    /// Where to write the calibration (JSON; schema in schemas/calibration.schema.json).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// The gradings are kept in RESULTS_DIR/RUN_ID/{gold,empty} (resumable, like `grade`).
    #[arg(long, default_value = "runs")]
    pub(crate) results_dir: PathBuf,
    #[arg(long, default_value = "calibration")]
    pub(crate) run_id: String,
    /// Reuse a results directory made for another dataset.
    #[arg(long)]
    pub(crate) force: bool,
    /// Print the calibration JSON on stdout instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

fn job(inst: &Instance, submission: Submission, model: &str, attempt: u32) -> Job {
    Job {
        record: inst.record.clone(),
        attempt,
        submission,
        test_suite: inst.test_suite.clone(),
        model: model.to_owned(),
        image_override: None,
        claimed_reward: None,
        problem: None,
    }
}

fn open_store(dir: &Path, args: &CalibrateArgs, which: &str, hash: &str) -> Result<Store> {
    let meta = RunMeta {
        run_id: format!("{}/{which}", args.run_id),
        grader_version: GRADER_VERSION.into(),
        dataset: args.dataset.display().to_string(),
        dataset_hash: hash.to_owned(),
        predictions: which.to_owned(),
        predictions_hash: which.to_owned(),
        created_at: now_rfc3339(),
    };
    let store = Store::open(&dir.join(which), &meta, args.force)?;
    if store.repaired > 0 {
        note(format!(
            "repaired {}: cut {} partial line(s) left by an interrupted run",
            dir.join(which).join("results.jsonl").display(),
            store.repaired
        ));
    }
    Ok(store)
}

pub(crate) fn run(args: &CalibrateArgs, quiet: bool) -> Result<i32> {
    let (instances, dataset_digest) =
        load_instances(&args.dataset, args.test_suites.as_deref(), &args.ids)?;
    let mut gold_jobs = Vec::new();
    let mut empty_jobs = Vec::new();
    for inst in &instances {
        if let Some(p) = inst.record.gold_patch().filter(|p| !p.trim().is_empty()) {
            for attempt in 1..=args.repeat {
                gold_jobs.push(job(
                    inst,
                    Submission::Patch(p.as_bytes().to_vec()),
                    "gold",
                    attempt,
                ));
            }
        } else {
            note(format!(
                "note: `{}` has no gold patch; only the empty patch is graded",
                inst.record.instance_id()
            ));
        }
        empty_jobs.push(job(inst, Submission::Patch(Vec::new()), "empty", 1));
    }
    let run_dir = args.results_dir.join(&args.run_id);
    let gold_store = Mutex::new(open_store(&run_dir, args, "gold", &dataset_digest)?);
    let empty_store = Mutex::new(open_store(&run_dir, args, "empty", &dataset_digest)?);
    let jobs_n = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    });
    note(format!(
        "calibrating {} instance(s): the gold patch {} time(s) each, the empty patch once ({} gradings, {} at once)",
        instances.len(),
        args.repeat,
        gold_jobs.len() + empty_jobs.len(),
        jobs_n
    ));
    let runtime = super::runtime()?;
    let run_label = format!("{}-{}", args.run_id, std::process::id());
    let outcome = runtime.block_on(async {
        let sandbox = connect().await?;
        sweep_left_over(&sandbox).await;
        build_environments(&sandbox, &instances, &mut gold_jobs).await?;
        build_environments(&sandbox, &instances, &mut empty_jobs).await?;
        let mut opts = args.limits.options(&run_label);
        // The empty patch's tests run: which of them pass without a fix is the point.
        opts.test_empty_patch = true;
        // Only the dataset's own patches are graded: no canaries (see `trusted_submissions`).
        opts.trusted_submissions = true;
        let bar = Bar::new(gold_jobs.len() + empty_jobs.len(), quiet);
        let traced = Traced(&sandbox);
        let work = async {
            run_jobs(&traced, empty_jobs, &empty_store, &opts, jobs_n, &bar).await?;
            run_jobs(&traced, gold_jobs, &gold_store, &opts, jobs_n, &bar).await
        };
        let result = tokio::select! {
            r = work => Some(r),
            _ = tokio::signal::ctrl_c() => None,
        };
        bar.bar.finish_and_clear();
        let _ = sandbox.sweep(Some(run_label.as_str())).await;
        Ok::<_, anyhow::Error>(result)
    });
    let outcome = outcome?;
    let mut gold_store = gold_store.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut empty_store = empty_store.into_inner().unwrap_or_else(|e| e.into_inner());
    match outcome {
        None => {
            note(format!(
                "interrupted: no new gradings started; containers removed; the gradings so far are kept in {} (run the same command to resume); {} not written",
                run_dir.display(),
                args.output.display()
            ));
            return Ok(exit::INTERRUPTED);
        }
        Some(Err(e)) => {
            return Err(anyhow::Error::new(e).context(format!(
                "the calibration stopped; every grading written so far is kept in {}",
                run_dir.display()
            )));
        }
        Some(Ok(_)) => {}
    }
    gold_store.compact()?;
    empty_store.compact()?;
    let calibration = build(args, &instances, &dataset_digest, &gold_store, &empty_store);
    let mut bytes = serde_json::to_vec_pretty(&calibration)?;
    bytes.push(b'\n');
    write_atomic(&args.output, &bytes)?;
    if args.json {
        out(String::from_utf8_lossy(&bytes))?;
    } else {
        out(table(&calibration))?;
    }
    note(format!(
        "calibration written to {} (sha256 {}); gradings in {}",
        args.output.display(),
        hex::encode(Sha256::digest(&bytes)),
        run_dir.display()
    ));
    Ok(if calibration.summary.error > 0 {
        exit::INFRASTRUCTURE
    } else {
        exit::SUCCESS
    })
}

/// The calibration from the stores' verdicts (attempts 1..=N of the gold store, 1 of the empty).
fn build(
    args: &CalibrateArgs,
    instances: &[Instance],
    dataset_digest: &str,
    gold: &Store,
    empty: &Store,
) -> Calibration {
    let mut by_id: BTreeMap<&str, (Vec<&Verdict>, Vec<&Verdict>)> = BTreeMap::new();
    for s in gold.all().filter(|s| s.attempt <= args.repeat) {
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
        dataset: args.dataset.display().to_string(),
        dataset_hash: dataset_digest.to_owned(),
        repeat: args.repeat,
        created_at: Some(now_rfc3339()),
        summary: summarize(&list),
        instances: list,
    }
}

fn runs_cell(r: &beyondswe::calibration::RunCounts) -> String {
    let finished = r.runs - r.errors;
    let mut s = format!("{}/{finished}", r.resolved);
    if r.errors > 0 {
        s.push_str(&format!(" (+{} error)", r.errors));
    }
    s
}

/// The summary table: one line per instance, then the class counts.
fn table(c: &Calibration) -> String {
    let header = ["INSTANCE", "FAMILY", "CLASS", "GOLD", "EMPTY", "DETAIL"].map(String::from);
    let rows: Vec<[String; 6]> = c
        .instances
        .iter()
        .map(|i| {
            let detail = match i.class {
                Class::Broken => format!(
                    "never passing under gold: {}{}",
                    if i.failing_tests.is_empty() {
                        "(none ran)".to_owned()
                    } else {
                        i.failing_tests.join(", ")
                    },
                    if i.gold.reasons.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", i.gold.reasons.join(", "))
                    }
                ),
                Class::Flaky => format!("flaky: {}", i.flaky_tests.join(", ")),
                Class::Trivial => format!(
                    "passing without a fix: {}",
                    i.passing_without_fix.join(", ")
                ),
                Class::Error => format!("no gold grading finished: {}", i.gold.reasons.join(", ")),
                Class::NoReference => "no gold patch".to_owned(),
                Class::Ok if !i.failing_tests.is_empty() => {
                    format!("failing under gold: {}", i.failing_tests.join(", "))
                }
                Class::Ok => String::new(),
            };
            [
                i.instance_id.clone(),
                i.family.as_str().to_owned(),
                i.class.as_str().to_owned(),
                runs_cell(&i.gold),
                runs_cell(&i.empty),
                detail,
            ]
        })
        .collect();
    let mut widths = [0usize; 6];
    for r in std::iter::once(&header).chain(rows.iter()) {
        for (w, cell) in widths.iter_mut().zip(r.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut s = String::new();
    for r in std::iter::once(&header).chain(rows.iter()) {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, cell)| format!("{cell:<w$}", w = widths[i]))
            .collect();
        s.push_str(line.join("  ").trim_end());
        s.push('\n');
    }
    let n = &c.summary;
    s.push_str(&format!(
        "\nok {}  broken {}  flaky {}  trivial {}  error {}  no_reference {}  (gold graded {} times each)\n",
        n.ok, n.broken, n.flaky, n.trivial, n.error, n.no_reference, c.repeat
    ));
    s
}
