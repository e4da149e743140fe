//! A dataset as a stream of items, whatever holds it: a BeyondSWE JSONL file, its Parquet copy
//! (one or more files), a directory of Harbor task directories, or a Hugging Face Hub name found
//! in the local cache (`hub.rs`).
//!
//! [`Source`] yields every item in order (file order, or task directories by name), each with
//! where it is ([`Location`]) and what was read there: a record with what a task directory
//! bundles beside it ([`Entry`]), or why that one item could not be read (a bad line, an
//! unreadable task directory), after which reading goes on. An error that ends the whole stream
//! (the file cannot be read on) is the iterator's own. What to do with a bad item is the
//! caller's: loading stops ([`Source::entries`]), validation reports it and goes on, conversion
//! does either. Another format is one more variant of the private `Items`.

use super::error::DatasetError;
pub use super::location::Location;
use super::parquet::{ParquetRows, is_parquet};
use super::seen::Seen;
use crate::convert::{TaskRead, read_task, task_dirs};
use crate::record::{Record, RecordReader};
use fs_err as fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A record of a dataset, with what its task directory bundles beside it.
#[derive(Debug)]
pub struct Entry {
    /// The record (the JSONL line, or read back from the task directory).
    pub record: Record,
    /// The Doc2Repo suite zip a task directory carries; `None` for JSONL.
    pub test_suite_zip: Option<PathBuf>,
    /// A task directory whose `task.toml` names no `docker_image`: its `environment/`, to build.
    pub environment_to_build: Option<PathBuf>,
}

impl From<TaskRead> for Entry {
    fn from(read: TaskRead) -> Self {
        Entry {
            record: read.record,
            test_suite_zip: read.test_suite_zip,
            environment_to_build: read.environment_to_build,
        }
    }
}

/// One item of a dataset: where it is, and its entry or why it could not be read.
#[derive(Debug)]
pub struct Item {
    /// Where the item is.
    pub location: Location,
    /// The entry, or this item's error: a bad line ([`DatasetError::Jsonl`]) or a task directory
    /// that cannot be read back ([`DatasetError::Convert`]).
    pub entry: Result<Entry, DatasetError>,
}

/// The items of one dataset, read one at a time.
pub struct Source {
    path: PathBuf,
    items: Items,
}

/// What the items are read from.
enum Items {
    Jsonl {
        file: Arc<Path>,
        records: RecordReader<BufReader<fs::File>>,
    },
    Tasks(std::vec::IntoIter<Arc<Path>>),
    /// Parquet files, read in turn: the one being read, and those after it.
    Parquet {
        current: Option<(Arc<Path>, ParquetRows)>,
        rest: std::vec::IntoIter<Arc<Path>>,
    },
}

impl Source {
    /// A directory as Harbor tasks, anything else as [`Source::records`].
    pub fn open(path: &Path) -> Result<Source, DatasetError> {
        if path.is_dir() {
            Source::tasks(path)
        } else {
            Source::records(path)
        }
    }

    /// A dataset of records: a JSONL file, a Parquet file (by its name or its first bytes), or
    /// a Hugging Face Hub name (`AweAI-Team/BeyondSWE`) where nothing on disk has that path,
    /// found in the local cache.
    pub fn records(path: &Path) -> Result<Source, DatasetError> {
        if let Some(name) = super::hub::hub_name(path) {
            let files = super::hub::resolve(&name, &super::hub::cache_dir())?;
            tracing::info!(name, files = ?files, "dataset found in the Hugging Face cache");
            return match files.as_slice() {
                [one] if !is_parquet(one) => Source::jsonl(one),
                _ => Source::parquet(path, files),
            };
        }
        if is_parquet(path) {
            return Source::parquet(path, vec![path.to_owned()]);
        }
        Source::jsonl(path)
    }

    /// Parquet files read in turn as one dataset; `path` names it.
    fn parquet(path: &Path, files: Vec<PathBuf>) -> Result<Source, DatasetError> {
        let mut rest = files
            .into_iter()
            .map(Arc::from)
            .collect::<Vec<Arc<Path>>>()
            .into_iter();
        let current = match rest.next() {
            Some(first) => Some((first.clone(), ParquetRows::open(&first)?)),
            None => None,
        };
        Ok(Source {
            path: path.to_owned(),
            items: Items::Parquet { current, rest },
        })
    }

    /// A BeyondSWE JSONL file, one record per line.
    pub fn jsonl(path: &Path) -> Result<Source, DatasetError> {
        let records = RecordReader::open(path)?;
        Ok(Source {
            path: path.to_owned(),
            items: Items::Jsonl {
                file: path.into(),
                records,
            },
        })
    }

    /// The Harbor task directories under `root` (or `root` itself, if it is one), by name.
    pub fn tasks(root: &Path) -> Result<Source, DatasetError> {
        let dirs: Vec<Arc<Path>> = task_dirs(root)?.into_iter().map(Arc::from).collect();
        Ok(Source {
            path: root.to_owned(),
            items: Items::Tasks(dirs.into_iter()),
        })
    }

    /// The file or directory the dataset was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every entry in order with its location, each id once: the first bad item or repeated
    /// id ends the stream with its error.
    pub fn entries(self) -> impl Iterator<Item = Result<(Location, Entry), DatasetError>> {
        let mut seen = Seen::new();
        self.map(move |item| {
            let item = item?;
            let entry = item.entry?;
            seen.check(entry.record.instance_id(), &item.location)?;
            Ok((item.location, entry))
        })
    }
}

impl Iterator for Source {
    type Item = Result<Item, DatasetError>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.items {
            Items::Jsonl { file, records } => {
                let at = |line| Location::Line {
                    file: file.clone(),
                    line,
                };
                Some(match records.next()? {
                    Ok((line, record)) => Ok(Item {
                        location: at(line),
                        entry: Ok(Entry {
                            record,
                            test_suite_zip: None,
                            environment_to_build: None,
                        }),
                    }),
                    Err(err) => match err.line() {
                        Some(line) => Ok(Item {
                            location: at(line),
                            entry: Err(err.into()),
                        }),
                        None => Err(err.into()),
                    },
                })
            }
            Items::Tasks(dirs) => {
                let dir = dirs.next()?;
                Some(Ok(Item {
                    entry: read_task(&dir).map(Entry::from).map_err(Into::into),
                    location: Location::TaskDir(dir),
                }))
            }
            Items::Parquet { current, rest } => loop {
                let Some((file, rows)) = current else {
                    return None;
                };
                let at = |row| Location::Row {
                    file: file.clone(),
                    row,
                };
                match rows.next() {
                    Some(Ok((row, record))) => {
                        return Some(Ok(Item {
                            location: at(row),
                            entry: Ok(Entry {
                                record,
                                test_suite_zip: None,
                                environment_to_build: None,
                            }),
                        }));
                    }
                    Some(Err(err)) => {
                        return Some(match err.row() {
                            Some(row) => Ok(Item {
                                location: at(row),
                                entry: Err(err.into()),
                            }),
                            None => Err(err.into()),
                        });
                    }
                    None => {
                        *current = match rest.next() {
                            Some(next) => match ParquetRows::open(&next) {
                                Ok(rows) => Some((next, rows)),
                                Err(e) => {
                                    *current = None;
                                    return Some(Err(e.into()));
                                }
                            },
                            None => None,
                        };
                    }
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{ConvertError, ToHarborOptions, write_task};
    use serde_json::json;

    fn line(id: &str) -> String {
        json!({
            "instance_id": id, "task": "CrossRepo", "image": "x/y:1", "base_commit": "abc",
            "problem_statement": "Fix it.", "FAIL_TO_PASS": ["t.py::test_a"],
        })
        .to_string()
    }

    fn jsonl(dir: &Path, lines: &[String]) -> PathBuf {
        let path = dir.join("data.jsonl");
        fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    }

    #[test]
    fn jsonl_items_go_on_past_a_bad_line_in_the_middle() {
        let tmp = tempfile::tempdir().unwrap();
        let path = jsonl(
            tmp.path(),
            &[line("a_b_pr1"), "not json".into(), line("a_b_pr2")],
        );
        let items: Vec<Item> = Source::open(&path)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(items.len(), 3);
        let at: Vec<String> = items.iter().map(|i| i.location.to_string()).collect();
        let file = path.display();
        assert_eq!(
            at,
            [
                format!("{file}:1"),
                format!("{file}:2"),
                format!("{file}:3")
            ]
        );
        assert_eq!(
            items[0].entry.as_ref().unwrap().record.instance_id(),
            "a_b_pr1"
        );
        let bad = items[1].entry.as_ref().unwrap_err();
        assert!(matches!(bad, DatasetError::Jsonl(e) if e.line() == Some(2)));
        assert_eq!(
            items[2].entry.as_ref().unwrap().record.instance_id(),
            "a_b_pr2"
        );
        // Loading stops at the bad line.
        let loaded: Result<Vec<_>, _> = Source::open(&path).unwrap().entries().collect();
        assert!(loaded.unwrap_err().to_string().contains(":2:"));
    }

    #[test]
    fn entries_stop_at_a_repeated_id_naming_both_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let path = jsonl(
            tmp.path(),
            &[line("a_b_pr1"), line("a_b_pr2"), line("a_b_pr1")],
        );
        let mut entries = Source::open(&path).unwrap().entries();
        assert!(entries.next().unwrap().is_ok());
        assert!(entries.next().unwrap().is_ok());
        let err = entries.next().unwrap().unwrap_err();
        let file = path.display();
        assert_eq!(
            err.to_string(),
            format!("duplicate instance_id `a_b_pr1`: {file}:1 and {file}:3")
        );
    }

    #[test]
    fn a_missing_file_fails_to_open() {
        let tmp = tempfile::tempdir().unwrap();
        let err = Source::open(&tmp.path().join("missing.jsonl"))
            .err()
            .unwrap();
        assert!(matches!(err, DatasetError::Jsonl(_)), "{err}");
    }

    #[test]
    fn task_directories_are_items_with_what_they_bundle() {
        let tmp = tempfile::tempdir().unwrap();
        let tasks = tmp.path().join("tasks");
        for id in ["a_b_pr1", "a_b_pr2"] {
            let record = Record::from_value(serde_json::from_str(&line(id)).unwrap()).unwrap();
            write_task(&record, &tasks, &ToHarborOptions::default()).unwrap();
        }
        // A directory that is not a task, between the two.
        fs::create_dir_all(tasks.join("a_b_pr1x")).unwrap();
        let items: Vec<Item> = Source::open(&tasks)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(items.len(), 3);
        assert_eq!(
            items[0].location,
            Location::TaskDir(tasks.join("a_b_pr1").into())
        );
        let first = items[0].entry.as_ref().unwrap();
        assert_eq!(first.record.instance_id(), "a_b_pr1");
        assert_eq!(first.test_suite_zip, None);
        // Harbor builds environment/ by default (no prebuilt image).
        assert_eq!(
            first.environment_to_build.as_deref(),
            Some(tasks.join("a_b_pr1/environment").as_path())
        );
        assert!(matches!(
            items[1].entry,
            Err(DatasetError::Convert(ConvertError::NotATaskDir { .. }))
        ));
        assert_eq!(
            items[2].entry.as_ref().unwrap().record.instance_id(),
            "a_b_pr2"
        );
        // The same instance in a second directory is a duplicate naming both directories.
        fs::remove_dir(tasks.join("a_b_pr1x")).unwrap();
        let record = Record::from_value(serde_json::from_str(&line("a_b_pr1")).unwrap()).unwrap();
        let other = write_task(
            &record,
            &tmp.path().join("other"),
            &ToHarborOptions::default(),
        )
        .unwrap();
        fs::rename(&other, tasks.join("z_copy")).unwrap();
        let err = Source::open(&tasks)
            .unwrap()
            .entries()
            .find_map(Result::err)
            .unwrap();
        assert_eq!(
            err.to_string(),
            format!(
                "duplicate instance_id `a_b_pr1`: {} and {}",
                tasks.join("a_b_pr1").display(),
                tasks.join("z_copy").display()
            )
        );
    }
}
