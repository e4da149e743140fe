//! `beyondswe trajectory validate FILE…`: ATIF files checked as Harbor's validator checks them.

use super::{exit, out};
use anyhow::Result;
use beyondswe::harbor::atif::validate_file;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub(crate) enum TrajectoryCommand {
    /// Validate ATIF trajectory files (directories: every *.json below them).
    Validate {
        /// Trajectory files or directories (at least one).
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
    for f in files {
        if f.is_dir() {
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
    out(text)?;
    Ok(if bad > 0 {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
}
