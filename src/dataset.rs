//! A dataset to grade against: a BeyondSWE JSONL file or a directory of Harbor task directories,
//! seen as instances (record, suite zip, and for Harbor tasks without a prebuilt image, the
//! environment to build).

use crate::convert::{self, ConvertError, check_test_suite_name, find_test_suite};
use crate::harbor::{TaskToml, paths};
use crate::record::{JsonlError, Record, RecordReader};
use std::path::{Path, PathBuf};
use thiserror::Error;

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

/// Why a dataset (or one instance of it) could not be read.
#[derive(Debug, Error)]
pub enum DatasetError {
    /// The JSONL file could not be read, or a line in it is not a valid record.
    #[error(transparent)]
    Jsonl(#[from] JsonlError),
    /// A Harbor task directory could not be read back, or a record names a bad test-suite file.
    #[error(transparent)]
    Convert(#[from] ConvertError),
    /// The dataset holds no instance with the requested id.
    #[error("{dataset}: no instance `{id}`")]
    UnknownInstance {
        /// The JSONL file or task directory searched.
        dataset: PathBuf,
        /// The instance id asked for.
        id: String,
    },
    /// Two records share an `instance_id`.
    #[error("duplicate instance_id `{id}`: {first} and {second}")]
    Duplicate {
        /// The shared instance id.
        id: String,
        /// Where the first record is (`file:line` or task directory).
        first: String,
        /// Where the second record is.
        second: String,
    },
}

/// Finds one instance by id.
pub fn find_instance(
    dataset: &Path,
    id: &str,
    test_suites: Option<&Path>,
) -> Result<Instance, DatasetError> {
    tracing::info!(dataset = %dataset.display(), instance = id, "reading the dataset");
    if dataset.is_dir() {
        let direct = dataset.join(id);
        let candidates = if convert::is_task_dir(&direct) {
            vec![direct]
        } else {
            convert::task_dirs(dataset)?
        };
        for dir in candidates {
            let read = convert::read_task(&dir)?;
            if read.record.instance_id() == id {
                return Ok(harbor_instance(&dir, read, test_suites)?);
            }
        }
    } else {
        for item in RecordReader::open(dataset)? {
            let (line, record) = item?;
            if record.instance_id() == id {
                check_test_suite_name(
                    &record,
                    &format!("{}:{line}: instance `{id}`", dataset.display()),
                )?;
                return Ok(Instance {
                    test_suite: test_suites.and_then(|d| find_test_suite(&record, d)),
                    record,
                    environment_to_build: None,
                    location: format!("{}:{line}", dataset.display()),
                });
            }
        }
    }
    Err(DatasetError::UnknownInstance {
        dataset: dataset.to_owned(),
        id: id.to_owned(),
    })
}

fn harbor_instance(
    dir: &Path,
    read: convert::TaskRead,
    test_suites: Option<&Path>,
) -> Result<Instance, ConvertError> {
    let toml_path = dir.join(paths::TASK_TOML);
    let text = fs_err::read_to_string(&toml_path).map_err(|source| ConvertError::Io {
        path: toml_path.clone(),
        source,
    })?;
    let task = TaskToml::parse(&text).map_err(|e| ConvertError::TaskToml {
        path: toml_path,
        source: Box::new(e),
    })?;
    let env = dir.join(paths::ENVIRONMENT);
    let environment_to_build = (task.environment.docker_image.is_none()
        && env.join("Dockerfile").is_file())
    .then_some(env);
    let test_suite = read
        .test_suite_zip
        .clone()
        .or_else(|| test_suites.and_then(|d| find_test_suite(&read.record, d)));
    Ok(Instance {
        record: read.record,
        test_suite,
        environment_to_build,
        location: dir.display().to_string(),
    })
}

/// Every instance of a dataset, in file (or directory name) order. The first bad record stops
/// with an error naming it; duplicate ids are an error too.
pub fn load_all(dataset: &Path, test_suites: Option<&Path>) -> Result<Vec<Instance>, DatasetError> {
    let mut out: Vec<Instance> = Vec::new();
    if dataset.is_dir() {
        for dir in convert::task_dirs(dataset)? {
            let read = convert::read_task(&dir)?;
            out.push(harbor_instance(&dir, read, test_suites)?);
        }
    } else {
        for item in RecordReader::open(dataset)? {
            let (line, record) = item?;
            check_test_suite_name(
                &record,
                &format!(
                    "{}:{line}: instance `{}`",
                    dataset.display(),
                    record.instance_id()
                ),
            )?;
            out.push(Instance {
                test_suite: test_suites.and_then(|d| find_test_suite(&record, d)),
                record,
                environment_to_build: None,
                location: format!("{}:{line}", dataset.display()),
            });
        }
    }
    tracing::info!(dataset = %dataset.display(), instances = out.len(), "dataset read");
    let mut seen = std::collections::HashMap::new();
    for inst in &out {
        if let Some(first) = seen.insert(inst.record.instance_id(), &inst.location) {
            return Err(DatasetError::Duplicate {
                id: inst.record.instance_id().to_owned(),
                first: first.clone(),
                second: inst.location.clone(),
            });
        }
    }
    Ok(out)
}

/// A digest of the dataset's records (order-independent), to recognise a results directory.
pub fn dataset_hash(instances: &[Instance]) -> String {
    use sha2::{Digest, Sha256};
    let mut items: Vec<(String, Vec<u8>)> = instances
        .iter()
        .map(|i| {
            (
                i.record.instance_id().to_owned(),
                serde_json::to_vec(i.record.raw()).unwrap_or_default(),
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
