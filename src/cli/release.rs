//! `beyondswe release from-harbor|to-harbor`: trajectory releases ⇄ Harbor job directories.

use super::{exit, note, out};
use anyhow::Result;
use beyondswe::dataset::load_all;
use beyondswe::harbor::{job_of, release_line, trial_dirs, write_trial};
use beyondswe::record::{JsonLines, JsonlWriter};
use clap::Subcommand;
use std::collections::HashMap;
use std::path::PathBuf;

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
        } => {
            let families: HashMap<String, String> = match dataset {
                Some(d) => load_all(d, None)?
                    .into_iter()
                    .map(|i| {
                        (
                            i.record.instance_id().to_owned(),
                            i.record.family().as_str().to_owned(),
                        )
                    })
                    .collect(),
                None => HashMap::new(),
            };
            let mut w = JsonlWriter::create(output)?;
            let mut n = 0;
            for (dir, result) in trial_dirs(jobs_dir) {
                let task = result
                    .get("task_name")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default();
                let line = release_line(
                    &dir,
                    &result,
                    job_of(&dir).as_ref(),
                    families.get(task).map(String::as_str),
                )?;
                w.write(&line)?;
                n += 1;
            }
            w.finish()?;
            out(format!("{n} trial(s) → {}\n", output.display()))?;
            Ok(if n == 0 { exit::FAILURE } else { exit::SUCCESS })
        }
        ReleaseCommand::ToHarbor { release, out_dir } => {
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
    }
}
