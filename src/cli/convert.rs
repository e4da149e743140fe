//! `beyondswe convert to-harbor` and `convert from-harbor`.

use super::{exit, note, out};
use anyhow::{Context, Result, bail};
use beyondswe::convert::{self, Resources, ToHarborOptions};
use beyondswe::harbor::paths;
use beyondswe::record::{Family, JsonlError, JsonlWriter, Record, RecordReader};
use clap::{Args, Subcommand};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub(crate) enum ConvertCommand {
    /// BeyondSWE JSONL → one Harbor task directory per instance.
    ToHarbor(ToHarborArgs),
    /// Harbor task directories → BeyondSWE JSONL.
    FromHarbor(FromHarborArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ToHarborArgs {
    /// The dataset (JSONL, one record per line).
    pub(crate) dataset: PathBuf,
    /// Where the task directories go (created if missing).
    pub(crate) out_dir: PathBuf,
    /// Directory with the Doc2Repo test-suite zips (named by each record's `test_suite`).
    #[arg(long)]
    pub(crate) test_suites: Option<PathBuf>,
    /// Only these instance ids.
    #[arg(long, num_args = 1..)]
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
    /// CPUs per task container (Harbor: `--override-cpus N` raises it per run).
    #[arg(long, default_value_t = Resources::default().cpus)]
    pub(crate) cpus: u32,
    /// Memory per task container, in MB.
    #[arg(long, default_value_t = Resources::default().memory_mb)]
    pub(crate) memory_mb: u64,
    /// Agent timeout, in seconds.
    #[arg(long, default_value_t = Resources::default().agent_timeout_sec)]
    pub(crate) agent_timeout: f64,
    /// Verifier timeout, in seconds.
    #[arg(long, default_value_t = Resources::default().verifier_timeout_sec)]
    pub(crate) verifier_timeout: f64,
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

/// What a conversion did, per family.
#[derive(Debug, Default)]
pub(crate) struct Summary {
    pub(crate) per_family: BTreeMap<Family, usize>,
    pub(crate) failed: usize,
    /// Tasks written without `solution/solve.sh`.
    pub(crate) without_oracle: usize,
}

impl Summary {
    pub(crate) fn total(&self) -> usize {
        self.per_family.values().sum()
    }

    pub(crate) fn render(&self, verb: &str, target: &std::path::Path) -> String {
        let mut text = format!(
            "{verb} {} instance(s) → {}\n",
            self.total(),
            target.display()
        );
        for (family, n) in &self.per_family {
            text.push_str(&format!("  {:<11} {n}\n", family.as_str()));
        }
        if self.failed > 0 {
            text.push_str(&format!("  {:<11} {}\n", "failed", self.failed));
        }
        if self.without_oracle > 0 {
            text.push_str(&format!("  {:<11} {}\n", "no oracle", self.without_oracle));
        }
        text
    }

    /// Prints the summary; the exit code says whether anything failed.
    fn finish(&self, verb: &str, target: &std::path::Path) -> Result<i32> {
        out(self.render(verb, target))?;
        Ok(if self.failed > 0 {
            exit::FAILURE
        } else {
            exit::SUCCESS
        })
    }
}

pub(crate) fn to_harbor(args: &ToHarborArgs) -> Result<i32> {
    let opts = ToHarborOptions {
        test_suites: args.test_suites.clone(),
        force: args.force,
        prebuilt_image: args.prebuilt_image,
        solutions: args.solutions.clone(),
        resources: Resources {
            cpus: args.cpus,
            memory_mb: args.memory_mb,
            agent_timeout_sec: args.agent_timeout,
            verifier_timeout_sec: args.verifier_timeout,
            ..Resources::default()
        },
    };
    let summary = to_harbor_with(
        &args.dataset,
        &args.out_dir,
        &opts,
        &args.ids,
        args.keep_going,
    )?;
    summary.finish("converted", &args.out_dir)
}

/// The conversion loop shared by `convert to-harbor` and `demo`.
pub(crate) fn to_harbor_with(
    dataset: &std::path::Path,
    out_dir: &std::path::Path,
    opts: &ToHarborOptions,
    ids: &[String],
    keep_going: bool,
) -> Result<Summary> {
    let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
    // Ids are remembered by a 64-bit hash, so memory stays flat however many records stream by.
    let mut found: HashSet<u64> = HashSet::new();
    let mut seen: HashMap<u64, u64> = HashMap::new();
    let mut summary = Summary::default();
    for item in RecordReader::open(dataset)? {
        let Some((line, record)) = next_record(item, keep_going, &mut summary)? else {
            continue;
        };
        let id = record.instance_id().to_owned();
        if !wanted.is_empty() && !wanted.contains(id.as_str()) {
            continue;
        }
        // Where the record is; the converter's errors name the instance themselves.
        let at = format!("{}:{line}", dataset.display());
        let place = format!("{at}: instance `{id}`");
        let id_hash = hash_id(&id);
        let result = match seen.get(&id_hash) {
            Some(first) => Err(anyhow::anyhow!(
                "instance `{id}`: duplicate instance_id (first at line {first})"
            )),
            None => {
                seen.insert(id_hash, line);
                convert_record(&record, &place, out_dir, opts)
            }
        };
        match result {
            Ok(dir) => {
                if !dir.join(paths::SOLVE_SH).is_file() {
                    summary.without_oracle += 1;
                    warn_no_oracle(&place, &record, opts);
                }
                if !wanted.is_empty() {
                    found.insert(id_hash);
                }
                *summary.per_family.entry(record.family()).or_default() += 1;
            }
            Err(err) if keep_going => {
                note(format!("error: {at}: {}", exit::message(&err)));
                summary.failed += 1;
            }
            Err(err) => {
                return Err(err.context(format!("{at} (use --keep-going to convert the rest)")));
            }
        }
    }
    summary.failed += report_missing_ids(dataset, &wanted, &found);
    Ok(summary)
}

/// The next record, or `None` for a bad line passed over with `--keep-going`.
fn next_record(
    item: Result<(u64, Record), JsonlError>,
    keep_going: bool,
    summary: &mut Summary,
) -> Result<Option<(u64, Record)>> {
    match item {
        Ok(ok) => Ok(Some(ok)),
        Err(err) if err.is_line_error() && keep_going => {
            note(format!("error: {err}"));
            summary.failed += 1;
            Ok(None)
        }
        Err(err) => {
            let hint = if err.is_line_error() {
                "stopped at the first bad line (use --keep-going to convert the rest)"
            } else {
                "cannot read the dataset"
            };
            Err(err).context(hint)
        }
    }
}

/// Writes one record's task directory, warning first when its family is unknown.
fn convert_record(
    record: &Record,
    place: &str,
    out_dir: &std::path::Path,
    opts: &ToHarborOptions,
) -> Result<PathBuf> {
    if record.family() == Family::Unknown {
        note(format!(
            "warning: {place}: task `{}` is not a known family; converted with family `unknown` (see `beyondswe validate`)",
            record.task().spelling.unwrap_or_default()
        ));
    }
    Ok(convert::write_task(record, out_dir, opts)?)
}

/// The warning for a task written without `solution/solve.sh`.
fn warn_no_oracle(place: &str, record: &Record, opts: &ToHarborOptions) {
    note(format!(
        "warning: {place}: no solution (no gold patch{}); the task has no solution/solve.sh, so Harbor's oracle agent cannot run it (Harbor 0.26: `Solution script not found`, an error trial; 0.1.x: no reward)",
        if record.family() == Family::Doc2Repo {
            if opts.solutions.is_some() {
                " and nothing for it in --solutions"
            } else {
                "; pass --solutions DIR with a reference repository"
            }
        } else {
            ""
        }
    ));
}

/// Says which `--ids` the dataset does not hold; returns how many.
fn report_missing_ids(
    dataset: &std::path::Path,
    wanted: &HashSet<&str>,
    found: &HashSet<u64>,
) -> usize {
    let mut missing: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|id| !found.contains(&hash_id(id)))
        .collect();
    if !missing.is_empty() {
        missing.sort_unstable();
        note(format!(
            "error: --ids not in {}: {}",
            dataset.display(),
            missing.join(", ")
        ));
    }
    missing.len()
}

pub(crate) fn from_harbor(args: &FromHarborArgs) -> Result<i32> {
    let summary = from_harbor_with(
        &args.tasks_dir,
        &args.out,
        args.test_suites.as_deref(),
        args.keep_going,
    )?;
    summary.finish("read", &args.out)
}

/// The reading loop shared by `convert from-harbor` and `demo`.
pub(crate) fn from_harbor_with(
    tasks_dir: &std::path::Path,
    out_path: &std::path::Path,
    test_suites: Option<&std::path::Path>,
    keep_going: bool,
) -> Result<Summary> {
    if !tasks_dir.is_dir() {
        bail!("{}: not a directory of Harbor tasks", tasks_dir.display());
    }
    let mut writer = JsonlWriter::create(out_path)?;
    let mut summary = Summary::default();
    let mut seen: HashMap<u64, usize> = HashMap::new();
    let dirs = convert::task_dirs(tasks_dir)?;
    for (index, dir) in dirs.iter().enumerate() {
        let result = (|| -> Result<_> {
            let read = convert::read_task(dir)?;
            let id = read.record.instance_id().to_owned();
            if let Some(first) = seen.get(&hash_id(&id)) {
                bail!(
                    "duplicate instance_id `{id}` (also in {})",
                    dirs[*first].display()
                );
            }
            if let Some(zip) = &read.test_suite_zip {
                let name = read.record.test_suite().unwrap_or(&id).to_owned();
                match test_suites {
                    Some(dir) => {
                        convert::store_test_suite(zip, dir, &name)?;
                    }
                    None => bail!(
                        "{} has a test suite; pass --test-suites DIR to keep it",
                        zip.display()
                    ),
                }
            }
            seen.insert(hash_id(&id), index);
            Ok(read.record)
        })();
        match result {
            Ok(record) => {
                writer.write(&record)?;
                *summary.per_family.entry(record.family()).or_default() += 1;
            }
            Err(err) if keep_going => {
                note(format!("error: {}: {}", dir.display(), exit::message(&err)));
                summary.failed += 1;
            }
            Err(err) => {
                return Err(err.context(format!(
                    "{}: nothing written to {} (use --keep-going to convert the rest)",
                    dir.display(),
                    out_path.display()
                )));
            }
        }
    }
    writer.finish()?;
    Ok(summary)
}

/// A 64-bit hash of an instance id (duplicate detection over streams of any length).
fn hash_id(id: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(id)
}
