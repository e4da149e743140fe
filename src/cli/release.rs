//! `beyondswe release from-harbor|to-harbor`: trajectory releases ⇄ Harbor job directories; the
//! loops are `convert::jobs_to_release` and `convert::release_to_jobs`.

use super::args::MIB;
use super::{exit, note, out};
use anyhow::Result;
use beyondswe::convert;
use beyondswe::harbor::ReleaseOptions;
use beyondswe::submission::DEFAULT_MAX_PATCH_BYTES;
use clap::Subcommand;
use std::path::{Path, PathBuf};

#[derive(Debug, Subcommand)]
pub(crate) enum ReleaseCommand {
    /// Harbor jobs directory → release JSONL (one line per trial).
    FromHarbor {
        /// A Harbor jobs directory (or one job's directory).
        jobs_dir: PathBuf,
        /// The release JSONL to write (written whole or not at all).
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
    ToHarbor {
        /// The release JSONL.
        release: PathBuf,
        /// Where the job directories go.
        out_dir: PathBuf,
    },
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

/// Harbor jobs directory → release JSONL; no trial found is a failure.
fn from_harbor(
    jobs_dir: &Path,
    output: &Path,
    dataset: Option<&Path>,
    opts: ReleaseOptions,
) -> Result<i32> {
    if !jobs_dir.exists() {
        anyhow::bail!("{}: no such file or directory", jobs_dir.display());
    }
    if !jobs_dir.is_dir() {
        anyhow::bail!("{}: not a directory of Harbor jobs", jobs_dir.display());
    }
    let families = match dataset {
        Some(d) => beyondswe::dataset::families_by_task_name(d)?,
        None => Default::default(),
    };
    let released = convert::jobs_to_release(jobs_dir, output, &families, opts)?;
    if released.trials == 0 {
        note(format!(
            "error: no Harbor trial under {} (a trial is a directory whose result.json names its \
             task_name and trial_name)",
            jobs_dir.display()
        ));
    }
    if released.omitted_files > 0 {
        note(format!(
            "{} file(s) listed but not carried (over --max-file-mb, --no-logs, links)",
            released.omitted_files
        ));
    }
    out(format!(
        "{} trial(s) → {}\n",
        released.trials,
        output.display()
    ))?;
    Ok(if released.trials == 0 {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
}

/// Release JSONL → Harbor job directories; every bad line is reported and the rest written.
fn to_harbor(release: &Path, out_dir: &Path) -> Result<i32> {
    let restored = convert::release_to_jobs(release, out_dir, &mut |n| note(n))?;
    out(format!(
        "{} trial(s) → {}\n",
        restored.trials,
        out_dir.display()
    ))?;
    Ok(if restored.failed > 0 {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
}
