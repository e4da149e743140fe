//! `beyondswe grade`: grade a whole run in parallel, resumably, and report the paper's figures;
//! `report` and `compare` re-render stored runs.

use super::args::{self, DatasetArgs, LimitArgs, ResultsArgs, ScopeArgs};
use super::progress::Bar;
use super::{exit, out, outcome};
use anyhow::Result;
use beyondswe::report::{self, Format};
use beyondswe::run::{self, Backend, CalibrationSpec, HarborBackend, RunSpec, Submissions};
use beyondswe::submission::AgentFormat;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["predictions", "gold", "empty"])))]
pub(crate) struct GradeArgs {
    #[command(flatten)]
    pub(crate) dataset: DatasetArgs,
    /// Predictions (JSONL, a JSON list, or a JSON object keyed by instance id), or any agent
    /// output `ingest` reads: SWE-agent and mini-swe-agent runs, OpenHands output.jsonl, AweAgent
    /// runs, Claude Code / Codex transcripts with captured diffs, Harbor job directories.
    /// `gold` (with no file of that name) is `--gold`, as in SWE-bench's harness.
    #[arg(long)]
    pub(crate) predictions: Option<PathBuf>,
    /// The agent format of --predictions (default: detected).
    #[arg(long, alias = "predictions-format", value_parser = args::agent_format())]
    pub(crate) agent_format: Option<AgentFormat>,
    /// Claude Code / Codex: directory of captured diffs named `<instance_id>.diff`.
    #[arg(long)]
    pub(crate) patches: Option<PathBuf>,
    /// Grade the dataset's own gold patches (sanity run: every instance should resolve).
    #[arg(long)]
    pub(crate) gold: bool,
    /// Grade empty patches (sanity run: nothing should resolve).
    #[arg(long)]
    pub(crate) empty: bool,
    /// With --gold: the Doc2Repo reference repositories, `DIR/<instance_id>/` or an archive
    /// named by the id (Doc2Repo records carry no gold patch).
    #[arg(long)]
    pub(crate) solutions: Option<PathBuf>,
    /// The run's name; its results go to RESULTS_DIR/RUN_ID (one directory name).
    #[arg(long, value_parser = super::args::run_id)]
    pub(crate) run_id: String,
    #[command(flatten)]
    pub(crate) results: ResultsArgs,
    #[command(flatten)]
    pub(crate) scope: ScopeArgs,
    /// How to print the summary.
    #[arg(long, value_parser = args::report_format(), default_value_t = Format::Table)]
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
    /// Accept the static evidence of this instance's `forgery_suspected` verdict after review:
    /// the tests' verdict counts again, the evidence stays in the report (repeatable; kept in
    /// the run directory).
    #[arg(long, value_name = "INSTANCE_ID")]
    pub(crate) accept_suspected: Vec<String>,
    /// Evidence for review (static evidence in the submission's source, what the runner saw
    /// in the tested process) makes a verdict `forgery_suspected`. Without it only proof (a
    /// canary group two of whose variants passed) changes a verdict.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Grade only part K of N of the run (for example 2/4): the instances in scope are dealt
    /// round the parts in id order, every attempt at one instance in the same part. Run each
    /// part on its own machine with the same inputs and options, then join them with `merge`.
    #[arg(long, value_name = "K/N", value_parser = clap::value_parser!(report::Shard))]
    pub(crate) shard: Option<report::Shard>,
    /// Grade through Harbor instead of this machine's engine: each submission becomes a Harbor
    /// task whose oracle solution it is, graded by the task's separate verifier (Harbor 0.26 or
    /// later) on the environment --harbor-env names; the job is read back into this run.
    #[arg(long)]
    pub(crate) via_harbor: bool,
    /// With --via-harbor: Harbor's environment type (`docker`, `daytona`, `modal`, `gke`, …).
    #[arg(short = 'e', long, requires = "via_harbor", default_value = "docker")]
    pub(crate) harbor_env: String,
    /// With --via-harbor: the command that runs Harbor's CLI, split at spaces (a wrapper such as
    /// `bash scripts/harbor-run.sh 0.26.0` runs it from the Harbor client image).
    #[arg(
        long,
        requires = "via_harbor",
        default_value = "harbor",
        env = "BEYONDSWE_HARBOR"
    )]
    pub(crate) harbor_command: String,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

impl GradeArgs {
    /// `--gold`, or SWE-bench's spelling of it: `--predictions gold` with no file of that name.
    fn is_gold(&self) -> bool {
        self.gold
            || self
                .predictions
                .as_deref()
                .is_some_and(|p| p.as_os_str() == "gold" && !p.exists())
    }

    /// The run these arguments ask for.
    fn spec(&self) -> RunSpec {
        let submissions = match &self.predictions {
            // SWE-bench's harness spells the gold run `--predictions_path gold`.
            Some(_) if self.is_gold() => Submissions::Gold {
                solutions: self.solutions.clone(),
            },
            Some(path) => Submissions::Predictions {
                path: path.clone(),
                format: self.agent_format,
                patches: self.patches.clone(),
            },
            None if self.gold => Submissions::Gold {
                solutions: self.solutions.clone(),
            },
            None => Submissions::Empty,
        };
        RunSpec {
            dataset: self.dataset.spec(&self.scope),
            submissions,
            store: self.results.store(&self.run_id),
            jobs: self.scope.jobs(),
            limits: self.limits.limits(),
            calibration: self.calibration.as_ref().map(|path| CalibrationSpec {
                path: path.clone(),
                exclude_flaky: self.exclude_flaky,
                exclude_broken: self.exclude_broken,
            }),
            accept_suspected: self.accept_suspected.clone(),
            shard: self.shard,
            strict: self.strict,
            backend: if self.via_harbor {
                Backend::Harbor(HarborBackend {
                    command: self
                        .harbor_command
                        .split_whitespace()
                        .map(str::to_owned)
                        .collect(),
                    environment: self.harbor_env.clone(),
                })
            } else {
                Backend::Local
            },
        }
    }
}

pub(crate) fn run(args: &GradeArgs, quiet: bool) -> Result<i32> {
    if args.solutions.is_some() && !args.is_gold() {
        return Err(super::exit::Usage(
            "--solutions names the Doc2Repo reference repositories of a gold run: give it with \
             --gold (or --predictions gold)"
                .into(),
        )
        .into());
    }
    outcome::show(
        &run::grade_run(&args.spec(), &Bar::new(quiet))?,
        args.format,
    )
}

/// `beyondswe report RUN_DIR`.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// A run's directory (RESULTS_DIR/RUN_ID), holding its results.jsonl.
    pub(crate) run_dir: PathBuf,
    /// What to print: the summary table, report.json, Markdown, or the HTML page.
    #[arg(long, value_parser = args::report_format(), default_value_t = Format::Table)]
    pub(crate) format: Format,
    /// Accept the static evidence of this instance's `forgery_suspected` verdict after review
    /// (repeatable; kept in the run directory, and report.json is written again).
    #[arg(long, value_name = "INSTANCE_ID")]
    pub(crate) accept_suspected: Vec<String>,
}

pub(crate) fn report(args: &ReportArgs) -> Result<i32> {
    if !args.accept_suspected.is_empty() {
        report::accept(&args.run_dir, &args.accept_suspected)?;
    }
    let r = report::load_report(&args.run_dir)?;
    if !args.accept_suspected.is_empty() {
        report::write_report_files(&args.run_dir, &r)?;
    }
    let text = match args.format {
        Format::Html => report::html_for_run(&args.run_dir, &r),
        other => report::render(&r, other),
    };
    out(text)?;
    Ok(exit::SUCCESS)
}

/// `beyondswe merge RUN_DIR... -o RUN_DIR`.
#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// The run directories to join: the parts of a `grade --shard K/N` run, or runs of the same
    /// submissions, dataset and options over other instances.
    #[arg(required = true)]
    pub(crate) runs: Vec<PathBuf>,
    /// The run directory to write (new; its name is the joined run's id).
    #[arg(short, long, alias = "out")]
    pub(crate) output: PathBuf,
    /// How to print the joined run's summary.
    #[arg(long, value_parser = args::report_format(), default_value_t = Format::Table)]
    pub(crate) format: Format,
}

pub(crate) fn merge(args: &MergeArgs) -> Result<i32> {
    let merged = run::merge(&run::MergeSpec {
        runs: args.runs.clone(),
        out: args.output.clone(),
    })?;
    super::note(format!(
        "merged {} run(s): {} grading(s) into {}",
        args.runs.len(),
        merged.verdicts,
        args.output.display()
    ));
    let text = match args.format {
        Format::Html => report::html_for_run(&args.output, &merged.report),
        other => report::render(&merged.report, other),
    };
    out(text)?;
    Ok(exit::SUCCESS)
}

/// `beyondswe compare RUN_A RUN_B`.
#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// The first run's directory (the baseline).
    pub(crate) run_a: PathBuf,
    /// The second run's directory, compared against the first.
    pub(crate) run_b: PathBuf,
    /// The same as --format json.
    #[arg(long, conflicts_with = "format", hide = true)]
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
    let a = report::load_report(&args.run_a)?;
    let b = report::load_report(&args.run_b)?;
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
