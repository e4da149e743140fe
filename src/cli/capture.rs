//! `beyondswe capture WORKSPACE --base COMMIT -o patch.diff`.

use super::{exit, note};
use anyhow::{Context, Result};
use beyondswe::files::write_atomic;
use beyondswe::submission::{CaptureOptions, capture};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(crate) struct CaptureArgs {
    /// The agent's workspace (a git checkout).
    pub(crate) workspace: PathBuf,
    /// The commit the agent started from.
    #[arg(long)]
    pub(crate) base: String,
    /// Where to write the patch (`-` for stdout).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Leave out files that the ignore rules ignore (by default they are kept: an agent's work is
    /// not dropped because of a `.gitignore`).
    #[arg(long)]
    pub(crate) respect_gitignore: bool,
    /// Files larger than this many MiB are left out (unread) and listed.
    #[arg(long, default_value_t = 100)]
    pub(crate) max_file_mb: u64,
}

pub(crate) fn run(args: &CaptureArgs) -> Result<i32> {
    let opts = CaptureOptions {
        respect_gitignore: args.respect_gitignore,
        max_file_bytes: args.max_file_mb.saturating_mul(1 << 20),
    };
    let captured = capture(&args.workspace, &args.base, &opts)?;
    for (rel, bytes) in &captured.left_out {
        note(format!(
            "left out {rel}: {bytes} bytes, over --max-file-mb {}",
            args.max_file_mb
        ));
    }
    let patch = captured.diff;
    if args.output.as_os_str() == "-" {
        std::io::stdout()
            .lock()
            .write_all(&patch)
            .context("writing the patch to stdout")?;
    } else {
        write_atomic(&args.output, &patch)?;
        note(format!("{}: {} bytes", args.output.display(), patch.len()));
    }
    Ok(exit::SUCCESS)
}
