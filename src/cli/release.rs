//! `beyondswe release from-harbor|to-harbor`: trajectory releases ⇄ Harbor job directories.

use super::args::MIB;
use super::{exit, note, out};
use anyhow::Result;
use beyondswe::dataset::load_all;
use beyondswe::harbor::{
    ReleaseOptions, job_files, job_of, release_line, task_name_index, trial_dirs, write_trial,
};
use beyondswe::record::{JsonLines, JsonlWriter};
use beyondswe::submission::DEFAULT_MAX_PATCH_BYTES;
use clap::Subcommand;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Subcommand)]
pub(crate) enum ReleaseCommand {
    /// Harbor jobs directory → release JSONL (one line per trial).
    FromHarbor {
        jobs_dir: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
        /// Adds each trial's family.
        #[arg(long)]
        dataset: Option<PathBuf>,
        /// Files larger than this many MiB are listed (size, SHA-256) but not carried.
        #[arg(long, default_value_t = 64)]
        max_file_mb: u64,
        /// Leave logs out (listed, not carried): `*.log`, `verifier/test-stdout.txt`,
        /// `agent/**/*.txt`, `artifacts/logs/`.
        #[arg(long)]
        no_logs: bool,
        /// Largest trial patch read into a line's `patch`, in MiB (as the grading commands'
        /// --max-patch-mb); a larger one stops the release, naming the file.
        #[arg(long, default_value_t = DEFAULT_MAX_PATCH_BYTES / MIB)]
        max_patch_mb: u64,
    },
    /// Release JSONL → Harbor job directory (loadable by Harbor's models and `harbor view`).
    ToHarbor { release: PathBuf, out_dir: PathBuf },
}

pub(crate) fn run(cmd: &ReleaseCommand) -> Result<i32> {
    match cmd {
        ReleaseCommand::FromHarbor {
            jobs_dir,
            output,
            dataset,
            max_file_mb,
            no_logs,
            max_patch_mb,
        } => {
            let opts = ReleaseOptions {
                max_file_bytes: max_file_mb.saturating_mul(MIB),
                logs: !no_logs,
                max_patch_bytes: max_patch_mb.saturating_mul(MIB),
            };
            from_harbor(jobs_dir, output, dataset.as_deref(), opts)
        }
        ReleaseCommand::ToHarbor { release, out_dir } => to_harbor(release, out_dir),
    }
}

/// Task name → family, for the dataset's ids and the directory names Harbor names tasks after.
fn families(dataset: Option<&Path>) -> Result<HashMap<String, String>> {
    let Some(d) = dataset else {
        return Ok(HashMap::new());
    };
    let by_id: HashMap<String, String> = load_all(d, None)?
        .into_iter()
        .map(|i| {
            (
                i.record.instance_id().to_owned(),
                i.record.family().as_str().to_owned(),
            )
        })
        .collect();
    // Harbor's task names are directory names (lower case): those too.
    Ok(task_name_index(by_id.keys().map(String::as_str))
        .into_iter()
        .filter_map(|(name, id)| by_id.get(&id).map(|f| (name, f.clone())))
        .collect())
}

/// Harbor jobs directory → release JSONL.
fn from_harbor(
    jobs_dir: &Path,
    output: &Path,
    dataset: Option<&Path>,
    opts: ReleaseOptions,
) -> Result<i32> {
    let families = families(dataset)?;
    let mut w = JsonlWriter::create(output)?;
    let (mut n, mut omitted) = (0, 0usize);
    let trials = trial_dirs(jobs_dir);
    let all: Vec<PathBuf> = trials.iter().map(|(d, _)| d.clone()).collect();
    // The job directory's own files travel once, on its first trial's line.
    let mut jobs_done: HashSet<PathBuf> = HashSet::new();
    for (dir, result) in trials {
        let task = result
            .get("task_name")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        let mut job = job_of(&dir);
        if let (Some(job), Some(job_dir)) = (job.as_mut(), dir.parent())
            && job_dir.starts_with(jobs_dir)
            && jobs_done.insert(job_dir.to_owned())
        {
            let tree = job_files(job_dir, &all, opts)?;
            job["files"] = tree["files"].clone();
            job["dirs"] = tree["dirs"].clone();
        }
        let line = release_line(
            &dir,
            &result,
            job.as_ref(),
            families.get(task).map(String::as_str),
            opts,
        )?;
        omitted += omitted_files(&line, job.as_ref());
        w.write(&line)?;
        n += 1;
    }
    w.finish()?;
    if omitted > 0 {
        note(format!(
            "{omitted} file(s) listed but not carried (over --max-file-mb, --no-logs, links)"
        ));
    }
    out(format!("{n} trial(s) → {}\n", output.display()))?;
    Ok(if n == 0 { exit::FAILURE } else { exit::SUCCESS })
}

/// How many files a line (and its job's files) lists without carrying them.
fn omitted_files(line: &Value, job: Option<&Value>) -> usize {
    line["files"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(
            job.and_then(|j| j["files"].as_array())
                .into_iter()
                .flatten(),
        )
        .filter(|f| f.get("omitted").is_some())
        .count()
}

/// Release JSONL → Harbor job directories; every bad line is reported and the rest written.
fn to_harbor(release: &Path, out_dir: &Path) -> Result<i32> {
    let mut lines = JsonLines::open(release)?;
    let (mut n, mut bad) = (0, 0);
    while let Some(item) = lines.next_value() {
        match item.map_err(anyhow::Error::from).and_then(|(line, v)| {
            write_trial(out_dir, &v)
                .map_err(|e| anyhow::anyhow!("{}:{line}: {e}", release.display()))
        }) {
            Ok(_) => n += 1,
            Err(e) => {
                bad += 1;
                note(format!("error: {}", exit::message(&e)));
            }
        }
    }
    out(format!("{n} trial(s) → {}\n", out_dir.display()))?;
    Ok(if bad > 0 {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
}
