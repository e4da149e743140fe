//! JSON Schemas for the files we read and write, generated from the Rust types.
//!
//! `beyondswe schemas write DIR` regenerates `schemas/`; `beyondswe schemas check DIR` fails when
//! a checked-in file differs from what the types produce (run in CI).

use crate::calibration::Calibration;
use crate::grade::Verdict;
use crate::harbor::TestConfig;
use crate::record::RecordFields;
use crate::report::Report;
use crate::verifier_spec::VerifierSpec;
use std::path::Path;

/// `(file name, schema text)` for every schema we publish.
pub fn all() -> Vec<(&'static str, String)> {
    let render = |schema: schemars::Schema| {
        let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
        text.push('\n');
        text
    };
    vec![
        (
            "record.schema.json",
            render(schemars::schema_for!(RecordFields)),
        ),
        (
            "test_config.schema.json",
            render(schemars::schema_for!(TestConfig)),
        ),
        (
            "verdict.schema.json",
            render(schemars::schema_for!(Verdict)),
        ),
        ("report.schema.json", render(schemars::schema_for!(Report))),
        (
            "verifier_spec.schema.json",
            render(schemars::schema_for!(VerifierSpec)),
        ),
        (
            "calibration.schema.json",
            render(schemars::schema_for!(Calibration)),
        ),
    ]
}

/// Files in `dir` that are missing or differ from the generated schemas.
pub fn stale(dir: &Path) -> Vec<String> {
    all()
        .into_iter()
        .filter(|(name, text)| {
            fs_err::read_to_string(dir.join(name)).ok().as_deref() != Some(text.as_str())
        })
        .map(|(name, _)| name.to_owned())
        .collect()
}

/// Write every generated schema into `dir` (created if missing), returning the file names written.
pub fn write(dir: &Path) -> std::io::Result<Vec<String>> {
    fs_err::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (name, text) in all() {
        fs_err::write(dir.join(name), text)?;
        written.push(name.to_owned());
    }
    Ok(written)
}
