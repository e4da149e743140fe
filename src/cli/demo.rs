//! `beyondswe demo`: the main job on the bundled demo data.
//!
//! Builds what it needs on a machine with Docker and no registry (the offline base image from
//! Debian packages, the fixture images FROM it), checks that the bundled dataset survives a
//! JSONL → Harbor → JSONL round trip, then grades a bundled predictions file that mixes good, bad
//! and tampering submissions, in parallel, and prints the summary. A second run resumes and
//! finishes at once.

use super::convert::{from_harbor_with, to_harbor_with};
use super::grade::{GradeArgs, run as grade_run};
use super::grade_one::LimitArgs;
use super::{exit, note, out};
use anyhow::{Context, Result, bail};
use beyondswe::convert::ToHarborOptions;
use beyondswe::record::RecordReader;
use beyondswe::report::{Format, read_run};
use clap::Args;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Where the run's results go (default: target/demo-runs in the checkout).
    #[arg(long)]
    pub(crate) results_dir: Option<PathBuf>,
    /// Gradings at once.
    #[arg(long, default_value_t = 2)]
    pub(crate) jobs: usize,
}

pub(crate) fn run(args: &DemoArgs, quiet: bool) -> Result<i32> {
    let root = Path::new(ROOT);
    let fixtures = root.join("fixtures");

    note(
        "1/3 images: the offline base (Debian packages) and the fixture images FROM it (cached by tag)",
    );
    let exe = std::env::current_exe().context("locating this binary")?;
    let status = std::process::Command::new("bash")
        .arg(root.join("scripts/build-fixture-images.sh"))
        .env("BEYONDSWE_BIN", exe)
        .stdout(std::process::Stdio::null())
        .status()
        .context("running scripts/build-fixture-images.sh")?;
    if !status.success() {
        bail!("building the images failed (see above); is the Docker engine running?");
    }

    note("2/3 convert: the demo dataset to Harbor task directories and back");
    let tmp = tempfile::tempdir()?;
    let dataset = fixtures.join("dataset/demo.jsonl");
    let suites = fixtures.join("test_suites");
    let opts = ToHarborOptions {
        test_suites: Some(suites.clone()),
        ..ToHarborOptions::default()
    };
    to_harbor_with(&dataset, &tmp.path().join("tasks"), &opts, &[], false)?;
    let back = tmp.path().join("back.jsonl");
    from_harbor_with(
        &tmp.path().join("tasks"),
        &back,
        Some(&tmp.path().join("suites")),
        false,
    )?;
    let (same, total) = compare(&dataset, &back)?;
    note(format!(
        "    {same}/{total} records identical after the round trip"
    ));

    note("3/3 grade: good, bad and tampering submissions, each in a fresh container");
    let results_dir = args
        .results_dir
        .clone()
        .unwrap_or_else(|| root.join("target/demo-runs"));
    let grade = GradeArgs {
        dataset,
        predictions: Some(fixtures.join("predictions/demo.jsonl")),
        predictions_format: None,
        patches: None,
        gold: false,
        empty: false,
        run_id: "demo".into(),
        results_dir: results_dir.clone(),
        jobs: Some(args.jobs),
        ids: Vec::new(),
        test_suites: Some(suites),
        force: true,
        format: Format::Table,
        calibration: None,
        exclude_flaky: false,
        exclude_broken: false,
        limits: LimitArgs {
            timeout: 120,
            ..LimitArgs::default()
        },
    };
    let code = grade_run(&grade, quiet)?;
    let (_, stored) = read_run(&results_dir.join("demo"))?;
    let notes = demo_notes(&fixtures.join("predictions/demo.jsonl"))?;
    let mut table = String::from(
        "\nINSTANCE                                          VERDICT     REASON            SUBMISSION\n",
    );
    for s in &stored {
        let v = &s.verdict;
        let (verdict, reason) = (v.verdict.as_str(), v.reason.as_str());
        let mut what = notes.get(&v.instance_id).cloned().unwrap_or_default();
        if v.flags.tampering() {
            what.push_str("  [flagged]");
        }
        table.push_str(&format!(
            "{:<49} {verdict:<11} {reason:<17} {what}\n",
            v.instance_id
        ));
    }
    out(table)?;
    Ok(if same != total { exit::FAILURE } else { code })
}

fn demo_notes(path: &Path) -> Result<std::collections::HashMap<String, String>> {
    let text = fs_err::read_to_string(path)?;
    let mut notes = std::collections::HashMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line)?;
        notes.insert(
            v["instance_id"].as_str().unwrap_or_default().to_owned(),
            v["note"].as_str().unwrap_or_default().to_owned(),
        );
    }
    Ok(notes)
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
