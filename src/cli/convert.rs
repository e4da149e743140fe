//! `beyondswe convert to-harbor` and `convert from-harbor`.

use super::{exit, note, out};
use anyhow::Result;
use beyondswe::convert::{DEFAULT_ORG, Resources, ToHarborOptions, VerifierMode};
use beyondswe::dataset::{self, Summary};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Debug, Subcommand)]
pub(crate) enum ConvertCommand {
    /// BeyondSWE JSONL → one Harbor task directory per instance.
    ToHarbor(ToHarborArgs),
    /// Harbor task directories → BeyondSWE JSONL.
    FromHarbor(FromHarborArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ToHarborArgs {
    /// The dataset: JSONL (one record per line), its Parquet copy, or a Hugging Face dataset
    /// name (`AweAI-Team/BeyondSWE`) in the local cache.
    pub(crate) dataset: PathBuf,
    /// Where the task directories go (created if missing).
    pub(crate) out_dir: PathBuf,
    /// Directory with the Doc2Repo test-suite zips (named by each record's `test_suite`; the
    /// official evaluator's BEYONDSWE_TEST_SUITE_DIR when not given).
    #[arg(long, env = "BEYONDSWE_TEST_SUITE_DIR")]
    pub(crate) test_suites: Option<PathBuf>,
    /// Only these instance ids, separated by spaces or commas (`--instance-ids` works too).
    #[arg(long, alias = "instance-ids", num_args = 1..)]
    pub(crate) ids: Vec<String>,
    /// Replace task directories that already exist.
    #[arg(long)]
    pub(crate) force: bool,
    /// Report every bad line and convert the rest (the exit code is still non-zero).
    #[arg(long)]
    pub(crate) keep_going: bool,
    /// Write `[environment].docker_image`: Harbor then starts the record's image as it is and
    /// never runs environment/ (the history strip). Only for images already stripped of every
    /// commit, tag and ref newer than the base; by default Harbor builds environment/.
    #[arg(long)]
    pub(crate) prebuilt_image: bool,
    /// The default since `--prebuilt-image` exists; accepted for old scripts.
    #[arg(long, hide = true, conflicts_with = "prebuilt_image")]
    pub(crate) omit_docker_image: bool,
    /// Doc2Repo reference solutions, one per instance id: a directory `DIR/<id>/` or an archive
    /// `DIR/<id>.tar|.tar.gz|.tgz|.zip`; `solution/solve.sh` puts it into the workdir (Harbor's
    /// oracle agent). Without one a Doc2Repo task has no oracle (a warning says so).
    #[arg(long)]
    pub(crate) solutions: Option<PathBuf>,
    /// CPUs per task container, whole (Harbor's task.toml takes whole CPUs; `--override-cpus
    /// N` raises it per run).
    #[arg(long, default_value_t = f64::from(Resources::default().cpus), value_parser = whole_cpus)]
    pub(crate) cpus: f64,
    /// Memory per task container, in MB.
    #[arg(long, default_value_t = Resources::default().memory_mb)]
    pub(crate) memory_mb: u64,
    /// Agent timeout, in seconds.
    #[arg(long, default_value_t = Resources::default().agent_timeout_sec)]
    pub(crate) agent_timeout: f64,
    /// Verifier timeout, in seconds.
    #[arg(long, default_value_t = Resources::default().verifier_timeout_sec)]
    pub(crate) verifier_timeout: f64,
    /// The organisation in the tasks' Harbor package names (`[task] name = "ORG/<task>"`) and in
    /// `dataset.toml`'s (`ORG/beyondswe`), which Harbor's registry needs.
    #[arg(long, default_value = DEFAULT_ORG, value_parser = package_part)]
    pub(crate) org: String,
    /// Where Harbor runs the verifier. `separate` (Harbor ≥ 0.26): a fresh container of the
    /// task's image, fed only the agent's diff. `shared`: the agent's own container, for Harbor
    /// 0.1.x, which has no separate verifier (README: what that layout cannot stop).
    #[arg(long, value_enum, default_value_t = VerifierArg::Separate)]
    pub(crate) verifier: VerifierArg,
    /// The tasks' verifier makes a verdict `forgery_suspected` on evidence for review (static
    /// evidence, what the runner saw), as `grade --strict` does; by default only proof (a canary
    /// group two of whose variants passed) changes a verdict.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Make each issue task's gold check on this machine's Docker engine (the instance images
    /// must be on it) and give it to the task as `tests/gold_check.json`: its verifier then
    /// builds canary groups only where the gold patch passed the test and failed every other
    /// value a group there can hold, as the local grader does. A check that cannot be made is
    /// named, and its task made without one.
    #[arg(long)]
    pub(crate) gold_check: bool,
}

/// `--verifier`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum VerifierArg {
    /// A fresh container (Harbor ≥ 0.26).
    Separate,
    /// The agent's container (Harbor 0.1.x).
    Shared,
}

impl From<VerifierArg> for VerifierMode {
    fn from(v: VerifierArg) -> VerifierMode {
        match v {
            VerifierArg::Separate => VerifierMode::Separate,
            VerifierArg::Shared => VerifierMode::Shared,
        }
    }
}

/// A part of a Harbor package name, checked as Harbor's registry checks it.
fn package_part(s: &str) -> Result<String, String> {
    beyondswe::harbor::check_package_name(s).map(|()| s.to_owned())
}

#[derive(Debug, Args)]
pub(crate) struct FromHarborArgs {
    /// A directory of task directories (or one task directory).
    pub(crate) tasks_dir: PathBuf,
    /// The JSONL file to write (written atomically).
    pub(crate) out: PathBuf,
    /// Where to put the Doc2Repo test-suite zips found in the tasks.
    #[arg(long)]
    pub(crate) test_suites: Option<PathBuf>,
    /// Report every bad task directory and convert the rest (the exit code is still non-zero).
    #[arg(long)]
    pub(crate) keep_going: bool,
}

pub(crate) fn run(cmd: ConvertCommand) -> Result<i32> {
    match cmd {
        ConvertCommand::ToHarbor(args) => to_harbor(&args),
        ConvertCommand::FromHarbor(args) => from_harbor(&args),
    }
}

/// Prints the summary; the exit code says whether anything failed.
fn finish(summary: &Summary, verb: &str, target: &Path) -> Result<i32> {
    out(summary.render(verb, target))?;
    Ok(if summary.failed > 0 {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
}

/// `--cpus` of a Harbor task: a number like `--cpus` of `grade`, but whole and at least 1.
fn whole_cpus(s: &str) -> Result<f64, String> {
    let n: f64 = s
        .parse()
        .map_err(|_| format!("`{s}`: expected a number of CPUs"))?;
    if n.fract() != 0.0 || !(1.0..=1024.0).contains(&n) {
        return Err(format!(
            "`{s}`: Harbor's task.toml takes whole CPUs, from 1 to 1024"
        ));
    }
    Ok(n)
}

fn to_harbor(args: &ToHarborArgs) -> Result<i32> {
    let opts = ToHarborOptions {
        test_suites: args.test_suites.clone(),
        force: args.force,
        prebuilt_image: args.prebuilt_image,
        solutions: args.solutions.clone(),
        resources: Resources {
            cpus: args.cpus as u32,
            memory_mb: args.memory_mb,
            agent_timeout_sec: args.agent_timeout,
            verifier_timeout_sec: args.verifier_timeout,
            ..Resources::default()
        },
        org: Some(args.org.clone()),
        verifier_mode: args.verifier.into(),
        strict: args.strict,
        gold_checks: if args.gold_check {
            gold_checks(args)
        } else {
            Default::default()
        },
    };
    let summary = dataset::dataset_to_tasks(
        &args.dataset,
        &args.out_dir,
        &opts,
        &super::args::split_ids(&args.ids),
        args.keep_going,
        &mut |n| note(n),
    )?;
    finish(&summary, "converted", &args.out_dir)
}

/// `--gold-check`: the checks of the records to convert that can have one, by instance id; each
/// that cannot be made is named on stderr (the records that cannot be read are the
/// conversion's to report).
fn gold_checks(
    args: &ToHarborArgs,
) -> std::collections::BTreeMap<String, beyondswe::verifier_spec::GoldCheck> {
    let wanted = super::args::split_ids(&args.ids);
    let mut records = Vec::new();
    if let Ok(source) = dataset::Source::records(&args.dataset) {
        for item in source {
            let Ok(dataset::Item {
                entry: Ok(entry), ..
            }) = item
            else {
                continue;
            };
            let id = entry.record.instance_id();
            if (wanted.is_empty() || wanted.iter().any(|w| w == id))
                && beyondswe::grade::no_gold_check(&entry.record).is_none()
            {
                records.push(entry.record);
            }
        }
    }
    let refs: Vec<_> = records.iter().collect();
    let opts = beyondswe::grade::GradeOptions {
        test_timeout: std::time::Duration::from_secs(Resources::default().test_timeout_sec),
        ..Default::default()
    };
    let progress = super::progress::Bar::new(false);
    match beyondswe::run::gold_checks(&refs, &opts, beyondswe::run::default_jobs(), &progress) {
        Err(why) => {
            note(format!("{why}: the tasks are made without one"));
            Default::default()
        }
        Ok(found) => found
            .into_iter()
            .filter_map(|(id, check)| match check {
                Ok(check) => Some((id, check)),
                Err(why) => {
                    note(format!("instance `{id}`: {why}"));
                    None
                }
            })
            .collect(),
    }
}

fn from_harbor(args: &FromHarborArgs) -> Result<i32> {
    let summary = dataset::tasks_to_dataset(
        &args.tasks_dir,
        &args.out,
        args.test_suites.as_deref(),
        args.keep_going,
        &mut |n| note(n),
    )?;
    finish(&summary, "read", &args.out)
}
