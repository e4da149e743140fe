//! Whole datasets converted: every record of a JSONL file to a task directory
//! ([`dataset_to_tasks`]), every task directory back to one JSONL file ([`tasks_to_dataset`]), and
//! the two in a row ([`round_trip`]), each with a per-family [`Summary`].
//!
//! Both read their input through `dataset::Source` and find repeated ids with `dataset::Seen`,
//! as loading and validation do. Records stream by one at a time (`Seen` keeps a fixed-size
//! digest of each id, not the record). With `keep_going` a bad line or task is said through the caller's `note` and
//! counted, and the rest converted; without it the first one stops the conversion with an error
//! that says where. Warnings (an unknown family, a task without an oracle) go to `note` as they
//! are found. What is printed, and the exit code, are the caller's.

use super::{DatasetError, Duplicate, Entry, Item, Location, Seen, Source};
use crate::convert::{ConvertError, ToHarborOptions, store_test_suite, task_dirs, write_task};
use crate::errors::message;
use crate::harbor::{DATASET_TOML, ManifestError, paths, write_dataset_toml};
use crate::record::{Family, JsonlError, JsonlWriter, Record, RecordReader};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why one record or task directory was not converted.
#[derive(Debug, Error)]
pub enum ItemError {
    /// An id the dataset already had.
    #[error(transparent)]
    Duplicate(#[from] Duplicate),
    /// A task directory that cannot be read back.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// A task bundles a Doc2Repo suite and no directory was given to keep it in.
    #[error("{} has a test suite; pass --test-suites DIR to keep it", zip.display())]
    SuiteNotKept {
        /// The bundled suite zip.
        zip: PathBuf,
    },
    /// The record could not be written as a task directory.
    #[error(transparent)]
    Convert(#[from] ConvertError),
}

/// Why a conversion stopped.
#[derive(Debug, Error)]
pub enum BatchError {
    /// Writing or finishing a JSONL file.
    #[error(transparent)]
    Jsonl(#[from] JsonlError),
    /// Opening the dataset or listing the tasks.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// The output could not be prepared (a suite directory, a task directory's parent).
    #[error(transparent)]
    Convert(#[from] ConvertError),
    /// A line that is not a record, without `--keep-going`.
    #[error("stopped at the first bad line (use --keep-going to convert the rest)")]
    BadLine(#[source] DatasetError),
    /// The dataset stopped being readable partway.
    #[error("cannot read the dataset")]
    Read(#[source] DatasetError),
    /// A record that could not be converted; `at` is `file:line`.
    #[error("{at} (use --keep-going to convert the rest)")]
    Record {
        /// Where the record is, `file:line`.
        at: String,
        /// Why it was not converted.
        #[source]
        source: Box<ItemError>,
    },
    /// `dataset.toml` could not be written.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The path given as a tasks directory holds no task directory.
    #[error("{}: not a directory of Harbor tasks", .0.display())]
    NotTasks(PathBuf),
    /// A task directory that could not be read; nothing is written.
    #[error(
        "{}: nothing written to {} (use --keep-going to convert the rest)",
        dir.display(),
        out.display()
    )]
    Task {
        /// The task directory.
        dir: PathBuf,
        /// The JSONL file being written.
        out: PathBuf,
        /// Why it was not converted.
        #[source]
        source: Box<ItemError>,
    },
}

/// What a conversion did, per family.
#[derive(Debug, Default)]
pub struct Summary {
    /// Records converted, per family.
    pub per_family: BTreeMap<Family, usize>,
    /// Records or tasks that were not (with `--keep-going`; each was said as it happened).
    pub failed: usize,
    /// Tasks written without `solution/solve.sh`.
    pub without_oracle: usize,
}

impl Summary {
    /// Records converted, all families together.
    pub fn total(&self) -> usize {
        self.per_family.values().sum()
    }

    /// `{verb} N instance(s) → target`, then one line per family and the failures.
    pub fn render(&self, verb: &str, target: &Path) -> String {
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
}

/// Writes one task directory per record of `dataset` (only `ids`, when given) under `out_dir`.
pub fn dataset_to_tasks(
    dataset: &Path,
    out_dir: &Path,
    opts: &ToHarborOptions,
    ids: &[String],
    keep_going: bool,
    note: &mut dyn FnMut(&str),
) -> Result<Summary, BatchError> {
    let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let mut found: HashSet<String> = HashSet::new();
    let mut seen = Seen::new();
    let mut summary = Summary::default();
    for item in Source::records(dataset)? {
        let Some((location, Entry { record, .. })) =
            next_entry(item, keep_going, &mut summary, note)?
        else {
            continue;
        };
        let id = record.instance_id();
        if !wanted.is_empty() && !wanted.contains(id) {
            continue;
        }
        // Where the record is; the converter's errors name the instance themselves.
        let at = location.to_string();
        let place = format!("{at}: instance `{id}`");
        let result = match seen.check(id, &location) {
            Err(duplicate) => Err(duplicate.into()),
            Ok(()) => convert_record(&record, &place, out_dir, opts, note),
        };
        match result {
            Ok(dir) => {
                if !dir.join(paths::SOLVE_SH).is_file() {
                    summary.without_oracle += 1;
                    warn_no_oracle(&place, &record, opts, note);
                }
                if !wanted.is_empty() {
                    found.insert(id.to_owned());
                }
                *summary.per_family.entry(record.family()).or_default() += 1;
            }
            Err(err) if keep_going => {
                note(&format!("error: {at}: {}", message(&err)));
                summary.failed += 1;
            }
            Err(source) => {
                return Err(BatchError::Record {
                    at,
                    source: Box::new(source),
                });
            }
        }
    }
    summary.failed += report_missing_ids(dataset, &wanted, &found, note);
    if out_dir.is_dir() {
        write_manifest(out_dir, opts, note)?;
    }
    Ok(summary)
}

/// `dataset.toml` beside the task directories, as `harbor dataset add --scan` would write it:
/// every task there by its package name and content digest.
fn write_manifest(
    out_dir: &Path,
    opts: &ToHarborOptions,
    note: &mut dyn FnMut(&str),
) -> Result<(), BatchError> {
    // A directory without a task.toml of its own (a plain folder, a link) is no task: named and
    // left out, and the manifest of the others still written.
    let (dirs, others): (Vec<_>, Vec<_>) = task_dirs(out_dir)?.into_iter().partition(|d| {
        fs_err::symlink_metadata(d).is_ok_and(|m| m.is_dir())
            && fs_err::symlink_metadata(d.join("task.toml")).is_ok_and(|m| m.file_type().is_file())
    });
    for dir in &others {
        let what = if fs_err::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
            "a link, not a task directory (a link is not followed)"
        } else {
            "no task.toml (not a task directory)"
        };
        note(&format!(
            "warning: {}: {what}: left out of {DATASET_TOML}",
            dir.display()
        ));
    }
    let name = format!("{}/beyondswe", opts.org());
    let manifest = write_dataset_toml(out_dir, &name, &dirs)?;
    for (dir, why) in &manifest.unread {
        note(&format!(
            "warning: {}: left out of {DATASET_TOML}: {why}",
            dir.display()
        ));
    }
    for dir in &manifest.unnamed {
        note(&format!(
            "warning: {}: task.toml names no package ([task] name; written by an older \
             convert): left out of {DATASET_TOML}",
            dir.display()
        ));
    }
    Ok(())
}

/// The next readable line, or `None` for a bad line passed over with `keep_going`.
fn next_entry(
    item: Result<Item, DatasetError>,
    keep_going: bool,
    summary: &mut Summary,
    note: &mut dyn FnMut(&str),
) -> Result<Option<(Location, Entry)>, BatchError> {
    let item = item.map_err(BatchError::Read)?;
    match item.entry {
        Ok(entry) => Ok(Some((item.location, entry))),
        Err(err) if keep_going => {
            note(&format!("error: {err}"));
            summary.failed += 1;
            Ok(None)
        }
        Err(err) => Err(BatchError::BadLine(err)),
    }
}

/// Writes one record's task directory, warning first when its family is unknown.
fn convert_record(
    record: &Record,
    place: &str,
    out_dir: &Path,
    opts: &ToHarborOptions,
    note: &mut dyn FnMut(&str),
) -> Result<PathBuf, ItemError> {
    if record.family() == Family::Unknown {
        note(&format!(
            "warning: {place}: task `{}` is not a known family; converted with family `unknown` (see `beyondswe validate`)",
            record.task().spelling.unwrap_or_default()
        ));
    }
    Ok(write_task(record, out_dir, opts)?)
}

/// The warning for a task written without `solution/solve.sh`.
fn warn_no_oracle(
    place: &str,
    record: &Record,
    opts: &ToHarborOptions,
    note: &mut dyn FnMut(&str),
) {
    note(&format!(
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

/// Says which of the wanted ids the dataset does not hold; returns how many.
fn report_missing_ids(
    dataset: &Path,
    wanted: &HashSet<&str>,
    found: &HashSet<String>,
    note: &mut dyn FnMut(&str),
) -> usize {
    let mut missing: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|id| !found.contains(*id))
        .collect();
    if !missing.is_empty() {
        missing.sort_unstable();
        note(&format!(
            "error: --ids not in {}: {}",
            dataset.display(),
            missing.join(", ")
        ));
    }
    missing.len()
}

/// Reads every task directory under `tasks_dir` (or that one task) into the JSONL file
/// `out_path` (written whole or not at all); Doc2Repo suites go to `test_suites`.
pub fn tasks_to_dataset(
    tasks_dir: &Path,
    out_path: &Path,
    test_suites: Option<&Path>,
    keep_going: bool,
    note: &mut dyn FnMut(&str),
) -> Result<Summary, BatchError> {
    if !tasks_dir.is_dir() {
        return Err(BatchError::NotTasks(tasks_dir.to_owned()));
    }
    let tasks = Source::tasks(tasks_dir)?;
    let mut writer = JsonlWriter::create(out_path)?;
    let mut summary = Summary::default();
    let mut seen = Seen::new();
    for item in tasks {
        let Item { location, entry } = item?;
        let result = (|| -> Result<_, ItemError> {
            let entry = entry?;
            let id = entry.record.instance_id();
            seen.check(id, &location)?;
            if let Some(zip) = &entry.test_suite_zip {
                let name = entry.record.test_suite().unwrap_or(id).to_owned();
                match test_suites {
                    Some(dir) => {
                        store_test_suite(zip, dir, &name)?;
                    }
                    None => return Err(ItemError::SuiteNotKept { zip: zip.clone() }),
                }
            }
            Ok(entry.record)
        })();
        match result {
            Ok(record) => {
                writer.write(&record)?;
                *summary.per_family.entry(record.family()).or_default() += 1;
            }
            Err(err) if keep_going => {
                note(&format!("error: {location}: {}", message(&err)));
                summary.failed += 1;
            }
            Err(source) => {
                return Err(BatchError::Task {
                    dir: location.path().to_owned(),
                    out: out_path.to_owned(),
                    source: Box::new(source),
                });
            }
        }
    }
    writer.finish()?;
    Ok(summary)
}

/// Converts `dataset` to task directories under `scratch` and back; how many records came back
/// unchanged (as JSON values, by instance id), of how many. Each changed one is named in `note`.
pub fn round_trip(
    dataset: &Path,
    test_suites: &Path,
    scratch: &Path,
    note: &mut dyn FnMut(&str),
) -> Result<(usize, usize), BatchError> {
    let opts = ToHarborOptions {
        test_suites: Some(test_suites.to_owned()),
        ..ToHarborOptions::default()
    };
    let tasks = scratch.join("tasks");
    dataset_to_tasks(dataset, &tasks, &opts, &[], false, note)?;
    let back = scratch.join("back.jsonl");
    tasks_to_dataset(&tasks, &back, Some(&scratch.join("suites")), false, note)?;
    let back: HashMap<String, Record> = RecordReader::open(&back)?
        .map(|r| r.map(|(_, rec)| (rec.instance_id().to_owned(), rec)))
        .collect::<Result<_, _>>()?;
    let (mut same, mut total) = (0, 0);
    for item in RecordReader::open(dataset)? {
        let (_, rec) = item?;
        total += 1;
        if back.get(rec.instance_id()) == Some(&rec) {
            same += 1;
        } else {
            note(&format!("round trip changed `{}`", rec.instance_id()));
        }
    }
    Ok((same, total))
}
