//! `beyondswe parity JOBS_DIR… --dataset DATASET -o DIR`: Harbor's parity experiment, from jobs
//! that ran: each job's rewards beside the same trials regraded offline, written as Harbor's
//! adapter layout wants them (`parity_experiment.json`, `adapter_metadata.json`).

use super::args::{DatasetArgs, LimitArgs, ResultsArgs, ScopeArgs};
use super::progress::Bar;
use super::{exit, note, out};
use anyhow::{Context, Result};
use beyondswe::convert::check_dir_name;
use beyondswe::files::write_atomic;
use beyondswe::run::{self, Parity, ParitySpec, Silent, load_instances};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(crate) struct ParityArgs {
    /// Harbor job directories: one run each; runs of the same agent and model make one
    /// experiment.
    #[arg(required = true)]
    pub(crate) jobs_dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) dataset: DatasetArgs,
    /// Where `parity_experiment.json` and `adapter_metadata.json` go (created if missing).
    #[arg(short, long, alias = "out-dir")]
    pub(crate) output: PathBuf,
    /// The adapter's id in both files.
    #[arg(long, default_value = "beyondswe")]
    pub(crate) adapter_name: String,
    /// The date recorded (`YYYY-MM-DD`); today by default.
    #[arg(long, value_parser = super::args::date)]
    pub(crate) date: Option<String>,
    /// The regradings' run names: `RUN_ID-1`, `RUN_ID-2`, … under RESULTS_DIR.
    #[arg(long, default_value = "parity", value_parser = super::args::run_id)]
    pub(crate) run_id: String,
    #[command(flatten)]
    pub(crate) results: ResultsArgs,
    #[command(flatten)]
    pub(crate) scope: ScopeArgs,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

pub(crate) fn run(args: &ParityArgs, quiet: bool) -> Result<i32> {
    let dataset = args.dataset.spec(&args.scope);
    let (instances, _) = load_instances(&dataset, &Silent)?;
    // What `convert to-harbor` writes a task for: a usable id and an image.
    let adapted = instances
        .iter()
        .filter(|i| check_dir_name(i.record.instance_id()).is_ok() && i.record.image().is_some())
        .count();
    let spec = ParitySpec {
        jobs_dirs: args.jobs_dirs.clone(),
        dataset,
        store: args.results.store(&args.run_id),
        jobs: args.scope.jobs(),
        limits: args.limits.limits(),
        adapter_name: args.adapter_name.clone(),
        adapted_size: adapted,
        date: args
            .date
            .clone()
            .unwrap_or_else(|| beyondswe::report::now_rfc3339()[..10].to_owned()),
    };
    let parity = run::parity(&spec, &Bar::new(quiet))?;
    fs_err::create_dir_all(&args.output)?;
    let experiments = serde_json::to_string_pretty(&parity.experiments)? + "\n";
    let metadata =
        serde_json::to_string_pretty(&parity.adapter_metadata(&spec, instances.len()))? + "\n";
    for (name, text) in [
        ("parity_experiment.json", experiments),
        ("adapter_metadata.json", metadata),
    ] {
        let path = args.output.join(name);
        write_atomic(&path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        note(format!("wrote {}", path.display()));
    }
    let mut text = String::new();
    let mut all_match = true;
    for e in &parity.experiments {
        let m = &e.metrics[0];
        let matching = Parity::matching(e);
        all_match &= matching;
        text.push_str(&format!(
            "{} {} ({} run(s), {} task(s)): original {}, harbor {}, {}; trials agreeing {}/{}\n",
            e.agent,
            e.model,
            e.number_of_runs,
            e.parity_benchmark_size,
            m.original,
            m.harbor,
            if matching {
                "ranges overlap"
            } else {
                "ranges do NOT overlap"
            },
            e.trial_agreement.agreeing,
            e.trial_agreement.trials
        ));
        for d in &e.trial_agreement.disagreements {
            text.push_str(&format!("  {d}\n"));
        }
    }
    out(text)?;
    Ok(if all_match {
        exit::SUCCESS
    } else {
        exit::FAILURE
    })
}
