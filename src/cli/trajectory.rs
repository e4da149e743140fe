//! `beyondswe trajectory validate FILE…`: ATIF files checked as Harbor's validator checks them.

use super::{exit, out};
use anyhow::Result;
use beyondswe::harbor::atif::{validate_file, validate_value};
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub(crate) enum TrajectoryCommand {
    /// Validate ATIF trajectory files. A directory holding Harbor trials: each trial's
    /// `agent/trajectory.json`; any other directory: every *.json below it. A `.jsonl` file: a
    /// trajectory release, each line's `trajectory`.
    Validate {
        /// Trajectory files, directories or releases (at least one).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// One JSON object per file.
        #[arg(long)]
        json: bool,
    },
}

pub(crate) fn run(cmd: &TrajectoryCommand) -> Result<i32> {
    let TrajectoryCommand::Validate { files, json } = cmd;
    let mut paths = Vec::new();
    // (where, problems) for trajectories inside releases; `None` = the line has none.
    let mut inline: Vec<(String, Option<Vec<String>>)> = Vec::new();
    for f in files {
        let trials = if f.is_dir() {
            beyondswe::harbor::trial_dirs(f)
        } else {
            Vec::new()
        };
        if !trials.is_empty() {
            for (dir, _) in trials {
                let t = dir.join("agent/trajectory.json");
                if t.is_file() {
                    paths.push(t);
                } else {
                    inline.push((dir.display().to_string(), None));
                }
            }
        } else if f.is_file() && f.extension().is_some_and(|x| x == "jsonl") {
            let mut lines = beyondswe::record::JsonLines::open(f)?;
            while let Some(item) = lines.next_value() {
                let (n, v) = item?;
                let at = format!("{}:{n}", f.display());
                match v.get("trajectory").filter(|t| !t.is_null()) {
                    Some(t) => {
                        let problems = validate_value(t, f.parent());
                        inline.push((at, Some(problems.iter().map(ToString::to_string).collect())));
                    }
                    None => inline.push((at, None)),
                }
            }
        } else if f.is_dir() {
            let mut found: Vec<PathBuf> = walkdir::WalkDir::new(f)
                .into_iter()
                .filter_map(Result::ok)
                .filter(|e| {
                    e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "json")
                })
                .map(|e| e.into_path())
                .collect();
            found.sort();
            paths.extend(found);
        } else {
            paths.push(f.clone());
        }
    }
    let mut bad = 0;
    let mut text = String::new();
    for p in &paths {
        let problems = validate_file(p);
        if !problems.is_empty() {
            bad += 1;
        }
        if *json {
            let errors: Vec<String> = problems.iter().map(ToString::to_string).collect();
            text.push_str(&serde_json::json!({"file": p.display().to_string(), "ok": problems.is_empty(), "errors": errors}).to_string());
            text.push('\n');
        } else if problems.is_empty() {
            text.push_str(&format!("ok       {}\n", p.display()));
        } else {
            text.push_str(&format!("INVALID  {}\n", p.display()));
            for pr in problems {
                text.push_str(&format!("         {pr}\n"));
            }
        }
    }
    let mut without = 0;
    for (at, problems) in &inline {
        match problems {
            None => {
                without += 1;
                if *json {
                    text.push_str(
                        &serde_json::json!({"file": at, "ok": null, "errors": ["no trajectory"]})
                            .to_string(),
                    );
                    text.push('\n');
                } else {
                    text.push_str(&format!("none     {at} (no trajectory)\n"));
                }
            }
            Some(errors) => {
                if !errors.is_empty() {
                    bad += 1;
                }
                if *json {
                    text.push_str(
                        &serde_json::json!({"file": at, "ok": errors.is_empty(), "errors": errors})
                            .to_string(),
                    );
                    text.push('\n');
                } else if errors.is_empty() {
                    text.push_str(&format!("ok       {at}\n"));
                } else {
                    text.push_str(&format!("INVALID  {at}\n"));
                    for e in errors {
                        text.push_str(&format!("         {e}\n"));
                    }
                }
            }
        }
    }
    out(text)?;
    if without > 0 {
        super::note(format!(
            "{without} trial(s) without a trajectory (agents such as oracle and nop write none)"
        ));
    }
    Ok(if bad > 0 {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
}
