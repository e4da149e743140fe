//! Calibration of a dataset: which instances and which tests can be trusted in this environment.
//!
//! `calibration.json` holds, per instance, how often the gold patch resolved it over N gradings
//! and whether the empty patch did, the pass/fail counts of every test id under each, what
//! weakens its gradings (no canary could be planted), and a class: `ok`, `broken` (the gold
//! patch never resolves), `flaky` (it sometimes does, or a test flips between runs), `trivial`
//! (the empty patch resolves), `error` (no gold grading finished) or `no_reference` (no gold
//! patch to compare against). This module owns the file format, the pure classification from
//! verdicts ([`calibrate_instance`]) and reading the file back. It runs no container: the
//! gradings are `run::calibrate`'s, and what a calibration changes in a run and its report is
//! `run`'s and `report`'s.
//!
//! Files:
//! - `classify.rs`: From the verdicts of an instance's gold and empty gradings to its calibration:
//!   counts per test id and the class.

mod classify;

pub use classify::{Runs, calibrate_instance, summarize};

use crate::record::Family;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The `format` of `calibration.json`.
pub const CALIBRATION_FORMAT: &str = "beyondswe-calibration-1";

/// What an instance's calibration says about it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CalibrationClass {
    /// The gold patch resolved every finished grading, the empty patch none.
    Ok,
    /// The gold patch never resolved it: the failing ids are named.
    Broken,
    /// The gold patch resolved some gradings and not others, or a test flipped: the flaky ids
    /// are named.
    Flaky,
    /// The empty patch resolved it: its tests do not tell a fix from no fix.
    Trivial,
    /// No gold grading finished (infrastructure errors): nothing is known.
    Error,
    /// The instance has no gold patch: only the empty grading ran.
    NoReference,
}

impl CalibrationClass {
    /// The name as serialised (`no_reference`).
    pub fn as_str(self) -> &'static str {
        match self {
            CalibrationClass::Ok => "ok",
            CalibrationClass::Broken => "broken",
            CalibrationClass::Flaky => "flaky",
            CalibrationClass::Trivial => "trivial",
            CalibrationClass::Error => "error",
            CalibrationClass::NoReference => "no_reference",
        }
    }
}

/// How one kind of submission (gold or empty) fared over its gradings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunCounts {
    /// Gradings made.
    pub runs: u32,
    /// Gradings that resolved the instance.
    pub resolved: u32,
    /// Gradings that ended in an infrastructure error (not counted as resolved or not).
    pub errors: u32,
    /// Doc2Repo: the lowest and highest pass rate (0–1) over the finished gradings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_score: Option<f64>,
    /// Doc2Repo: the highest pass rate (0–1) over the finished gradings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_score: Option<f64>,
    /// The distinct reasons of the gradings (`all_tests_passed`, `tests_failed`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// The distinct causes the gradings name for failing tests (`module not found: X`): why
    /// gold fails when the package cannot even be imported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<String>,
    /// The kinds of construct the static evidence lists that these submissions' own code uses
    /// (`ctypes`, `frames`, …): for gold, what the instance's baseline allows submissions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uses: Vec<String>,
}

/// Why a grading of this instance could be weaker than the others, for the dataset's owner.
pub const NO_CANARY: &str = "no canary";

/// A canary group that contradicted itself under gold: one of its mutants passed with the
/// reference (a flaw of the group, which a grading would call proof).
pub const BAD_GROUP: &str = "canary group contradicts gold";

/// One test id's outcomes: passed, or anything else (failed, error, skipped, not run, …).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestCounts {
    /// Finished gold gradings in which the test passed.
    pub gold_passed: u32,
    /// Finished gold gradings in which it did not.
    pub gold_failed: u32,
    /// Finished empty-patch gradings in which the test passed.
    pub empty_passed: u32,
    /// Finished empty-patch gradings in which it did not.
    pub empty_failed: u32,
}

/// One instance's calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InstanceCalibration {
    /// The instance.
    pub instance_id: String,
    /// Its task family.
    pub family: Family,
    /// What the gradings say about it.
    pub class: CalibrationClass,
    /// The gold patch (Doc2Repo: the reference solution), graded `repeat` times.
    pub gold: RunCounts,
    /// The empty patch, graded once, its tests run.
    pub empty: RunCounts,
    /// Ids that did not pass in any finished gold grading (broken instances name theirs here;
    /// Doc2Repo: the suite's tests that fail under the reference solution).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing_tests: Vec<String>,
    /// Ids that passed in some gold gradings and not in others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky_tests: Vec<String>,
    /// FAIL_TO_PASS ids (Doc2Repo: suite tests) that pass with the empty patch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passing_without_fix: Vec<String>,
    /// Per test id: pass/fail counts under gold and under empty.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tests: BTreeMap<String, TestCounts>,
    /// What weakens this instance's gradings without failing them: `no canary: …` where the
    /// canary plan finds no test to clone in the modules of its ids (a forged outcome then
    /// rests on the other evidence alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// How many instances fell in each class.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClassCounts {
    /// Instances classed `ok`.
    pub ok: usize,
    /// Instances classed `broken`.
    pub broken: usize,
    /// Instances classed `flaky`.
    pub flaky: usize,
    /// Instances classed `trivial`.
    pub trivial: usize,
    /// Instances classed `error`.
    pub error: usize,
    /// Instances classed `no_reference`.
    pub no_reference: usize,
}

/// `calibration.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "beyondswe dataset calibration")]
pub struct Calibration {
    /// `beyondswe-calibration-1`.
    pub format: String,
    /// The grader that made it: `beyondswe <version>`.
    pub grader_version: String,
    /// The dataset as given to `calibrate` (a JSONL file or a tasks directory).
    pub dataset: String,
    /// Digest of the dataset's records, to tell whether a later run grades the same dataset.
    pub dataset_hash: String,
    /// Gold gradings per instance.
    pub repeat: u32,
    /// When the calibration was written (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// How many instances fell in each class.
    pub summary: ClassCounts,
    /// Every calibrated instance.
    pub instances: Vec<InstanceCalibration>,
}

impl Calibration {
    /// The calibration of one instance; `None` when it was not calibrated.
    pub fn instance(&self, id: &str) -> Option<&InstanceCalibration> {
        self.instances.iter().find(|i| i.instance_id == id)
    }
}

/// Why a calibration file could not be used.
#[derive(Debug, Error)]
pub enum CalibrationError {
    /// The file could not be read.
    #[error(transparent)]
    Io(#[from] crate::errors::PathError),
    /// The file is not JSON of the calibration's shape.
    #[error("{path}:{line}:{column}: not a calibration file: at `{field}`: {message}")]
    Bad {
        /// The calibration file.
        path: PathBuf,
        /// Where the problem is, counting from 1.
        line: usize,
        /// Column on that line, counting from 1.
        column: usize,
        /// The JSON path of the offending value (`instances[3].class`).
        field: String,
        /// The JSON parser's message.
        message: String,
    },
    /// The file's `format` is not the one this version reads.
    #[error(
        "{path}: format `{found}` is not `{CALIBRATION_FORMAT}` (made by another version of beyondswe?)"
    )]
    Format {
        /// The calibration file.
        path: PathBuf,
        /// The `format` found.
        found: String,
    },
}

/// A calibration read back, with the SHA-256 of the file's bytes.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The file's content.
    pub calibration: Calibration,
    /// SHA-256 of the file's bytes, hex; reports record it.
    pub hash: String,
}

/// Reads `calibration.json`; a bad file is an error naming its line, column and field.
pub fn read(path: &Path) -> Result<Loaded, CalibrationError> {
    let bytes = crate::files::read_input(path, crate::record::max_line_bytes() as u64).map_err(
        |source| CalibrationError::Io(crate::errors::PathError::new(path.to_owned(), source)),
    )?;
    let hash = hex::encode(Sha256::digest(&bytes));
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    let calibration: Calibration =
        serde_path_to_error::deserialize(&mut de).map_err(|e| CalibrationError::Bad {
            path: path.to_owned(),
            line: e.inner().line(),
            column: e.inner().column(),
            field: e.path().to_string(),
            message: e.inner().to_string(),
        })?;
    if calibration.format != CALIBRATION_FORMAT {
        return Err(CalibrationError::Format {
            path: path.to_owned(),
            found: calibration.format,
        });
    }
    Ok(Loaded { calibration, hash })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_bad_file_names_its_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.json");
        fs_err::write(
            &p,
            "{\"format\": \"beyondswe-calibration-1\", \"grader_version\": \"x\",\n\"dataset\": \"d\", \"dataset_hash\": \"h\", \"repeat\": \"five\"}",
        )
        .unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("c.json:2:") && e.contains("`repeat`"), "{e}");
        fs_err::write(
            &p,
            serde_json::json!({"format": "other", "grader_version": "x", "dataset": "d",
                "dataset_hash": "h", "repeat": 5, "summary": ClassCounts::default(), "instances": []})
            .to_string(),
        )
        .unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("format `other`"), "{e}");
    }
}
