//! `beyondswe validate DATASET`: a table of every problem; non-zero exit when any is an error.

use super::{exit, note, out};
use anyhow::Result;
use beyondswe::validate;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// A BeyondSWE JSONL file, its Parquet copy, a directory of Harbor task directories, or a
    /// Hugging Face dataset name (`AweAI-Team/BeyondSWE`) in the local cache.
    pub(crate) dataset: PathBuf,
    /// Directory with the Doc2Repo test-suite zips (JSONL datasets; the official evaluator's
    /// BEYONDSWE_TEST_SUITE_DIR when not given).
    #[arg(long, env = "BEYONDSWE_TEST_SUITE_DIR")]
    pub(crate) test_suites: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) output_format: super::args::TableOrJson,
}

pub(crate) fn run(args: &ValidateArgs) -> Result<i32> {
    let report = validate::validate_path(&args.dataset, args.test_suites.as_deref())?;
    if args.output_format.json() {
        let mut text = String::new();
        for p in &report.problems {
            text.push_str(&serde_json::to_string(p)?);
            text.push('\n');
        }
        out(text)?;
    } else if !report.problems.is_empty() {
        out(validate::render_table(&report))?;
    }
    note(format!(
        "{}: {} record(s), {} error(s), {} warning(s)",
        args.dataset.display(),
        report.records,
        report.errors(),
        report.warnings()
    ));
    if args.test_suites.is_none() && args.dataset.is_file() {
        // A folder is suggested only when it is there.
        let beside = validate::suites_hint(&args.dataset);
        let example = if beside.is_dir() {
            format!(" (e.g. {})", beside.display())
        } else {
            String::new()
        };
        note(format!(
            "hint: Doc2Repo suites were not checked; pass --test-suites DIR{example} or set \
             BEYONDSWE_TEST_SUITE_DIR"
        ));
    }
    Ok(if report.errors() > 0 {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
}
