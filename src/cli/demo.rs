//! `beyondswe demo`: the main job on the bundled demo data.
//!
//! For now: convert the bundled fixture datasets to Harbor task directories, read them back, and
//! check that every record survived the round trip unchanged.

use super::convert::{from_harbor_with, to_harbor_with};
use super::{exit, note, out};
use anyhow::{Context, Result};
use beyondswe::convert::ToHarborOptions;
use beyondswe::record::RecordReader;
use clap::Args;
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Keep the output here instead of a temporary directory.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
}

pub(crate) fn run(args: &DemoArgs) -> Result<i32> {
    let tmp = tempfile::tempdir()?;
    let root = args.out.clone().unwrap_or_else(|| tmp.path().to_owned());
    let fixtures = Path::new(FIXTURES);
    let suites = fixtures.join("test_suites");
    let mut all_ok = true;
    let mut report = String::new();
    for name in ["fixtures.jsonl", "variants.jsonl"] {
        let dataset = fixtures.join("dataset").join(name);
        if !dataset.is_file() {
            continue;
        }
        let stem = name.trim_end_matches(".jsonl");
        let tasks = root.join(format!("{stem}-harbor"));
        let back = root.join(format!("{stem}-roundtrip.jsonl"));
        let back_suites = root.join(format!("{stem}-suites"));
        let opts = ToHarborOptions {
            test_suites: Some(suites.clone()),
            force: true,
            ..ToHarborOptions::default()
        };
        let there = to_harbor_with(&dataset, &tasks, &opts, &[], false)
            .with_context(|| format!("converting {}", dataset.display()))?;
        report.push_str(&there.render("converted", &tasks));
        let back_summary = from_harbor_with(&tasks, &back, Some(&back_suites), false)?;
        report.push_str(&back_summary.render("read back", &back));
        let (same, total) = compare(&dataset, &back)?;
        report.push_str(&format!(
            "  round trip: {same}/{total} records identical\n\n"
        ));
        all_ok &= same == total;
    }
    out(report)?;
    if args.out.is_some() {
        note(format!("output kept in {}", root.display()));
    }
    Ok(if all_ok { exit::SUCCESS } else { exit::FAILURE })
}

/// How many records of `a` appear unchanged (as JSON values) in `b`, by instance id.
fn compare(a: &Path, b: &Path) -> Result<(usize, usize)> {
    let back: std::collections::HashMap<String, _> = RecordReader::open(b)?
        .map(|r| r.map(|(_, rec)| (rec.instance_id().to_owned(), rec)))
        .collect::<Result<_, _>>()?;
    let mut same = 0;
    let mut total = 0;
    for item in RecordReader::open(a)? {
        let (_, rec) = item?;
        total += 1;
        if back.get(rec.instance_id()) == Some(&rec) {
            same += 1;
        } else {
            note(format!("round trip changed `{}`", rec.instance_id()));
        }
    }
    Ok((same, total))
}
