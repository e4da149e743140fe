//! A dataset: a BeyondSWE JSONL file or a directory of Harbor task directories.
//!
//! One [`Source`] reads either, item by item (source.rs), and one [`Seen`] finds repeated ids
//! (seen.rs); loading, validation and conversion all read datasets through them. Whole datasets
//! are converted either way here, streamed, with a per-family summary (batch.rs), over
//! `convert`'s one-record converters. This file sees a dataset as instances to grade against
//! (record, suite zip, and for Harbor tasks without a prebuilt image, the environment to
//! build), and as the families a release's lines name.
//!
//! Files:
//! - `batch.rs`: Whole datasets converted: every record of a JSONL file to a task directory
//!   (`dataset_to_tasks`).
//! - `error.rs`: Why a dataset, or one item of it, could not be read.
//! - `hub.rs`: A dataset named as on the Hugging Face Hub (`AweAI-Team/BeyondSWE`, or
//!   `hf://datasets/AweAI-Team/BeyondSWE`), found offline where `huggingface_hub` downloaded it.
//! - `location.rs`: Where an item of a dataset is: a JSONL file's line, a Parquet file's row or
//!   a Harbor task directory.
//! - `parquet.rs`: The dataset as the Hugging Face Hub serves it in Parquet: each row one record.
//! - `parquet_layout.rs`: What a Parquet file declares about itself, checked against the file
//!   before the `parquet` crate reads it.
//! - `seen.rs`: The one duplicate check of a dataset: which instance ids have been seen, and where
//!   first.
//! - `source.rs`: A dataset as a stream of items, whatever holds it.

mod batch;
mod error;
pub mod hub;
mod location;
mod parquet;
mod parquet_layout;
mod seen;
mod source;

pub use batch::{BatchError, ItemError, Summary, dataset_to_tasks, round_trip, tasks_to_dataset};
pub use error::DatasetError;
pub use parquet::{ParquetError, ParquetRows, is_parquet};
pub use seen::{Duplicate, Seen};
pub use source::{Entry, Item, Location, Source};

use crate::convert::{check_test_suite_name, find_test_suite, is_task_dir};
use crate::harbor::task_name_index;
use crate::record::Record;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One gradable instance.
#[derive(Debug, Clone)]
pub struct Instance {
    /// The instance's BeyondSWE record (from the JSONL line, or read back from the Harbor task).
    pub record: Record,
    /// The Doc2Repo suite zip, if found.
    pub test_suite: Option<PathBuf>,
    /// A Harbor task whose `task.toml` names no `docker_image`: its `environment/` must be built.
    pub environment_to_build: Option<PathBuf>,
    /// Where the record came from (`file:line` or the task directory).
    pub location: String,
}

impl Instance {
    /// The instance an entry is: its suite is the one its task directory bundles, else the one
    /// named by `test_suite` in `test_suites`. A JSONL record whose `test_suite` is not a plain
    /// file name is an error.
    fn new(
        location: Location,
        entry: Entry,
        test_suites: Option<&Path>,
    ) -> Result<Instance, DatasetError> {
        let record = entry.record;
        if let Location::Line { .. } = location {
            check_test_suite_name(
                &record,
                &format!("{location}: instance `{}`", record.instance_id()),
            )?;
        }
        let test_suite = entry
            .test_suite_zip
            .or_else(|| test_suites.and_then(|d| find_test_suite(&record, d)));
        Ok(Instance {
            record,
            test_suite,
            environment_to_build: entry.environment_to_build,
            location: location.to_string(),
        })
    }
}

/// Finds one instance by id (in a tasks directory, the task directory named after it first).
pub fn find_instance(
    dataset: &Path,
    id: &str,
    test_suites: Option<&Path>,
) -> Result<Instance, DatasetError> {
    tracing::info!(dataset = %dataset.display(), instance = id, "reading the dataset");
    let direct = dataset.join(id);
    let source = if dataset.is_dir() && is_task_dir(&direct) {
        Source::tasks(&direct)?
    } else {
        Source::open(dataset)?
    };
    let mut same_but_case = None;
    for item in source {
        let item = item?;
        let entry = item.entry?;
        let theirs = entry.record.instance_id();
        if theirs == id {
            return Instance::new(item.location, entry, test_suites);
        }
        if same_but_case.is_none() && theirs.eq_ignore_ascii_case(id) {
            same_but_case = Some(theirs.to_owned());
        }
    }
    Err(DatasetError::UnknownInstance {
        dataset: dataset.to_owned(),
        id: id.to_owned(),
        hint: same_but_case
            .map(|t| format!(" (ids are case-sensitive: did you mean `{t}`?)"))
            .unwrap_or_default(),
    })
}

/// Every instance of a dataset, in file (or directory name) order. The first bad record stops
/// with an error naming it; so does an id seen twice.
pub fn load_all(dataset: &Path, test_suites: Option<&Path>) -> Result<Vec<Instance>, DatasetError> {
    let out = Source::open(dataset)?
        .entries()
        .map(|entry| entry.and_then(|(at, entry)| Instance::new(at, entry, test_suites)))
        .collect::<Result<Vec<_>, _>>()?;
    tracing::info!(dataset = %dataset.display(), instances = out.len(), "dataset read");
    Ok(out)
}

/// A digest of the dataset's records, to recognise a results directory: independent of the
/// records' order and of the order of the keys in each (the JSONL and its Parquet copy, whose
/// columns come in one order for every row, are one dataset).
pub fn dataset_hash(instances: &[Instance]) -> String {
    digest(instances, |raw| {
        serde_json::to_vec(&keys_sorted(&serde_json::Value::Object(raw.clone())))
    })
}

/// [`dataset_hash`] as it was before key order was left out of it: each record's keys in the
/// order read. A results directory or a calibration made then names this hash, and still
/// matches the same dataset.
pub fn dataset_hash_as_read(instances: &[Instance]) -> String {
    digest(instances, serde_json::to_vec)
}

/// SHA-256 over the records sorted by id, each its id and `bytes` of its JSON object.
fn digest(
    instances: &[Instance],
    bytes: impl Fn(&serde_json::Map<String, serde_json::Value>) -> serde_json::Result<Vec<u8>>,
) -> String {
    use sha2::{Digest, Sha256};
    let mut items: Vec<(&str, Vec<u8>)> = instances
        .iter()
        .map(|i| {
            (
                i.record.instance_id(),
                bytes(i.record.raw()).unwrap_or_default(),
            )
        })
        .collect();
    items.sort();
    let mut h = Sha256::new();
    for (id, raw) in items {
        h.update(id.as_bytes());
        h.update([0]);
        h.update(raw);
        h.update([0]);
    }
    hex::encode(h.finalize())
}

/// `v` with every object's keys in sorted order.
pub(crate) fn keys_sorted(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), keys_sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(keys_sorted).collect()),
        other => other.clone(),
    }
}

/// Harbor task name → family: the dataset's ids and the directory names Harbor names tasks
/// after (lower case), for a release's lines. The first bad item or repeated id is an error.
pub fn families_by_task_name(dataset: &Path) -> Result<HashMap<String, String>, DatasetError> {
    let mut by_id: HashMap<String, String> = HashMap::new();
    for entry in Source::open(dataset)?.entries() {
        let (_, entry) = entry?;
        let record = entry.record;
        by_id.insert(
            record.instance_id().to_owned(),
            record.family().as_str().to_owned(),
        );
    }
    Ok(task_name_index(by_id.keys().map(String::as_str))
        .into_iter()
        .filter_map(|(name, id)| by_id.get(&id).map(|f| (name, f.clone())))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash as read is what runs recorded before: SHA-256 over each record's id and its
    /// JSON as read, by id. The hash now leaves key order out.
    #[test]
    fn the_hash_as_read_is_the_hash_runs_recorded_before() {
        use sha2::{Digest, Sha256};
        let tmp = tempfile::tempdir().expect("tempdir");
        let dataset = tmp.path().join("data.jsonl");
        let text = "{\"task\":\"CrossRepo\",\"instance_id\":\"o_r_pr2\",\"image\":\"x/y:1\",\"base_commit\":\"a\",\"problem_statement\":\"p\",\"FAIL_TO_PASS\":[\"t.py::a\"]}\n\
                    {\"instance_id\":\"o_r_pr1\",\"task\":\"CrossRepo\",\"image\":\"x/y:1\",\"base_commit\":\"a\",\"problem_statement\":\"p\",\"FAIL_TO_PASS\":[\"t.py::a\"]}\n";
        fs_err::write(&dataset, text).expect("write");
        let instances = load_all(&dataset, None).expect("read");
        let mut h = Sha256::new();
        let mut lines: Vec<(&str, &str)> = text
            .lines()
            .map(|l| {
                let id = if l.contains("o_r_pr1") {
                    "o_r_pr1"
                } else {
                    "o_r_pr2"
                };
                (id, l)
            })
            .collect();
        lines.sort();
        for (id, line) in lines {
            h.update(id.as_bytes());
            h.update([0]);
            h.update(line.as_bytes());
            h.update([0]);
        }
        assert_eq!(dataset_hash_as_read(&instances), hex::encode(h.finalize()));
        assert_ne!(dataset_hash(&instances), dataset_hash_as_read(&instances));
    }

    #[test]
    fn families_are_found_by_id_and_by_harbors_task_name() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dataset = tmp.path().join("data.jsonl");
        let line = serde_json::json!({"instance_id": "O_r_pr1", "task": "DomainFix"});
        fs_err::write(&dataset, format!("{line}\n")).expect("write");
        let families = families_by_task_name(&dataset).expect("read");
        assert_eq!(families["O_r_pr1"], "DomainFix");
        assert_eq!(families["o_r_pr1"], "DomainFix");
    }

    #[test]
    fn a_dataset_with_a_repeated_id_gives_no_families() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dataset = tmp.path().join("data.jsonl");
        let line = serde_json::json!({"instance_id": "a_b_pr1", "task": "CrossRepo"});
        fs_err::write(&dataset, format!("{line}\n{line}\n")).expect("write");
        let err = families_by_task_name(&dataset).expect_err("repeated id");
        assert!(
            err.to_string()
                .starts_with("duplicate instance_id `a_b_pr1`: "),
            "{err}"
        );
    }
}
