//! `beyondswe trajectory validate FILE…`: ATIF files checked as Harbor's validator checks them.

use super::{exit, out};
use anyhow::Result;
use beyondswe::harbor::atif::{validate_file, validate_value};
use clap::Subcommand;
use std::path::{Path, PathBuf};

#[derive(Debug, Subcommand)]
pub(crate) enum TrajectoryCommand {
    /// Validate ATIF trajectory files. A directory holding Harbor trials: each trial's
    /// `agent/trajectory.json`; any other directory: every *.json below it. A `.jsonl` file: a
    /// trajectory release, each line's `trajectory`.
    Validate {
        /// Trajectory files, directories or releases (at least one).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        output_format: super::args::TableOrJson,
    },
}

/// What to check: trajectory files, and trajectories met inside releases or trial directories as
/// `(where, problems)` (`None`: that line or trial has none).
#[derive(Default)]
struct Targets {
    paths: Vec<PathBuf>,
    inline: Vec<(String, Option<Vec<String>>)>,
}

pub(crate) fn run(cmd: &TrajectoryCommand) -> Result<i32> {
    let TrajectoryCommand::Validate {
        files,
        output_format,
    } = cmd;
    let json = output_format.json();
    let mut targets = Targets::default();
    for f in files {
        targets.add(f)?;
    }
    let mut bad = 0;
    let mut text = String::new();
    for p in &targets.paths {
        let problems: Vec<String> = validate_file(p).iter().map(ToString::to_string).collect();
        if !problems.is_empty() {
            bad += 1;
        }
        report(&mut text, json, &p.display().to_string(), &problems);
    }
    let mut without = 0;
    for (at, problems) in &targets.inline {
        match problems {
            None => {
                without += 1;
                if json {
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
                report(&mut text, json, at, errors);
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

impl Targets {
    /// One argument: Harbor trials, a release, a directory of `*.json`, or a file.
    fn add(&mut self, f: &Path) -> Result<()> {
        let trials = if f.is_dir() {
            beyondswe::harbor::trial_dirs(f)
        } else {
            Vec::new()
        };
        if !trials.is_empty() {
            for (dir, _) in trials {
                let t = dir.join("agent/trajectory.json");
                if t.is_file() {
                    self.paths.push(t);
                } else {
                    self.inline.push((dir.display().to_string(), None));
                }
            }
        } else if f.is_file() && f.extension().is_some_and(|x| x == "jsonl") {
            self.add_release(f)?;
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
            self.paths.extend(found);
        } else {
            self.paths.push(f.to_owned());
        }
        Ok(())
    }

    /// Each line's `trajectory` in a release, checked as it is read.
    fn add_release(&mut self, f: &Path) -> Result<()> {
        let mut lines = beyondswe::record::JsonLines::open(f)?;
        while let Some(item) = lines.next_value() {
            let (n, v) = item?;
            let at = format!("{}:{n}", f.display());
            match v.get("trajectory").filter(|t| !t.is_null()) {
                Some(t) => {
                    let problems = validate_value(t, f.parent());
                    self.inline
                        .push((at, Some(problems.iter().map(ToString::to_string).collect())));
                }
                None => self.inline.push((at, None)),
            }
        }
        Ok(())
    }
}

/// One trajectory's result: a JSON object, or `ok`/`INVALID` with a problem a line.
fn report(text: &mut String, json: bool, at: &str, errors: &[String]) {
    if json {
        text.push_str(
            &serde_json::json!({"file": at, "ok": errors.is_empty(), "errors": errors}).to_string(),
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
