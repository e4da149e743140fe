//! The results store of a run: `results.jsonl` (one verdict per line, appended and synced as each
//! instance finishes), `instances/<id>/` (logs), `run.json` (what the run grades).
//!
//! Survives being killed at any moment: a line is written whole or, if the process died in the
//! middle, the partial line is cut off at the next open; a later line for the same instance
//! replaces an earlier one, and the file is compacted to one line per instance at the end of a
//! run (written aside and renamed).

use super::GRADER_VERSION;
use crate::files::safe_name;
use crate::grade::Verdict;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A verdict as stored: the verdict (logs kept aside in `instances/<id>/`) plus what identifies
/// the grading that produced it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Stored {
    /// Hash of everything that can change the verdict (record, submission, image id, suite,
    /// grading options, the verifier's files, grader version): a later run with the same key
    /// keeps this verdict instead of grading again.
    pub key: String,
    /// 1-based attempt number (several attempts per instance give pass@k).
    #[serde(default = "first_attempt")]
    pub attempt: u32,
    /// The model or agent the submission names (the predictions' `model_name_or_path`).
    #[serde(default)]
    pub model_name_or_path: String,
    /// The reward the agent's harness recorded (Harbor), if the submission came with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_reward: Option<f64>,
    /// The grader that gave the verdict (`beyondswe X.Y.Z`); empty in lines written before
    /// verdicts named it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub grader_version: String,
    /// The verdict, its logs taken out.
    #[serde(flatten)]
    pub verdict: Verdict,
}

fn first_attempt() -> u32 {
    1
}

impl Stored {
    /// `id`, or `id@N` for attempts after the first.
    pub fn label(&self) -> String {
        attempt_label(&self.verdict.instance_id, self.attempt)
    }
}

/// `id`, or `id@N` for attempts after the first.
pub fn attempt_label(id: &str, attempt: u32) -> String {
    if attempt <= 1 {
        id.to_owned()
    } else {
        format!("{id}@{attempt}")
    }
}

/// Which run this is and what it grades: the head of a results directory's `run.json` and of
/// `report.json` alike.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
pub struct RunIdentity {
    /// The run's name, the results directory's subdirectory.
    pub run_id: String,
    /// The grader that wrote the file.
    pub grader_version: String,
    /// The dataset's path as given.
    pub dataset: String,
    /// A digest of the dataset's records.
    pub dataset_hash: String,
    /// What was graded: a predictions file, `gold` or `empty`.
    pub predictions: String,
    /// A digest of the submissions.
    pub predictions_hash: String,
}

impl RunIdentity {
    /// A run of this grader.
    pub fn new(
        run_id: String,
        dataset: String,
        dataset_hash: String,
        predictions: String,
        predictions_hash: String,
    ) -> RunIdentity {
        RunIdentity {
            run_id,
            grader_version: GRADER_VERSION.into(),
            dataset,
            dataset_hash,
            predictions,
            predictions_hash,
        }
    }
}

/// One part of a run split across machines: the `index`-th of `count` (from 1), as `--shard
/// K/N` names it and `run.json` records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Shard {
    /// Which part, from 1.
    pub index: u32,
    /// How many parts.
    pub count: u32,
}

impl Shard {
    /// Whether the `i`-th (from 0) of the run's instances, in id order, is this shard's: the
    /// instances are dealt round the shards, so every shard gets its share of each family
    /// that sorts together, and all attempts at one instance go to one shard (its images are
    /// prepared once).
    pub fn holds(&self, i: usize) -> bool {
        i % self.count as usize == (self.index - 1) as usize
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}` is not a shard: expected K/N with 1 <= K <= N, e.g. 2/4");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            k.trim().parse::<u32>().map_err(|_| bad())?,
            n.trim().parse::<u32>().map_err(|_| bad())?,
        );
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl TryFrom<String> for Shard {
    type Error = String;
    fn try_from(s: String) -> Result<Shard, String> {
        s.parse()
    }
}

impl From<Shard> for String {
    fn from(s: Shard) -> String {
        s.to_string()
    }
}

/// What a run grades (`run.json`); a results directory refuses another dataset unless forced.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct RunMeta {
    /// The run and what it grades.
    #[serde(flatten)]
    pub run: RunIdentity,
    /// When the results directory was first opened.
    pub created_at: String,
    /// The dataset's hash as this grader computed it before key order was left out of it
    /// ([`crate::dataset::dataset_hash_as_read`]): a directory made then names it. Not written.
    #[serde(skip)]
    pub dataset_hash_as_read: Option<String>,
    /// A digest of every option that can change a verdict or the report: the grading options
    /// (limits, timeouts, the verifier's files) and the calibration applied. Runs with another
    /// digest do not merge. `None` in directories made before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options_digest: Option<String>,
    /// The part of a split run this directory holds (`--shard K/N`); `None` for a whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

/// Why a results directory could not be read or written.
#[derive(Debug, Error)]
pub enum StoreError {
    /// A file of the results directory could not be read or written (also: not a run
    /// directory, when it has no `results.jsonl`).
    #[error(transparent)]
    Io(#[from] crate::errors::PathError),
    /// A whole line of `results.jsonl` is not a stored verdict (edited by hand, or written by an
    /// incompatible version).
    #[error("{path}:{line}: unreadable verdict line: {message}")]
    BadLine {
        /// `results.jsonl`.
        path: PathBuf,
        /// The line, counting from 1.
        line: usize,
        /// The JSON parser's message.
        message: String,
    },
    /// The directory's `run.json` names another dataset (its hash differs); `--force` reuses it.
    #[error(
        "{path}: this results directory grades another dataset ({theirs}, hash {their_hash}); pass --force to reuse it"
    )]
    OtherDataset {
        /// The results directory.
        path: PathBuf,
        /// The dataset it grades.
        theirs: String,
        /// That dataset's hash.
        their_hash: String,
    },
    /// The run was graded by another grader version, whose verdicts may differ.
    #[error(
        "{path}: this run was graded by {theirs}, and this is {ours}, whose verdicts may differ \
         (CHANGELOG.md says how); pass --allow-mixed to resume it anyway (what is graded now is \
         graded under this version, the rest keeps its verdicts), or choose another --run-id"
    )]
    OtherGrader {
        /// The results directory.
        path: PathBuf,
        /// The grader version that made the run.
        theirs: String,
        /// This grader's version.
        ours: String,
    },
    /// A merge's output that the merge did not finish (it was killed, or the disk filled up):
    /// part of the verdicts at most, so no run to report.
    #[error(
        "{}: a merge that did not finish (killed or out of disk): not a whole run; merge the parts again",
        .0.display()
    )]
    UnfinishedMerge(PathBuf),
    /// Another process has the run open: two writers would each keep their own view of the
    /// store, and one's verdicts would be lost.
    #[error(
        "{}: another process is writing this run ({holder}); wait for it, or choose another --run-id",
        path.display()
    )]
    Locked {
        /// The run directory.
        path: PathBuf,
        /// Who holds it, as its lock file says (`pid N on HOST since TIME`).
        holder: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io(crate::errors::PathError::new(path.to_owned(), source))
}

/// Says who holds the run directory's lock, if a live process does; creates nothing (a run
/// checks this before it connects to the engine, and makes its directory only after). Holds a
/// shared lock for the instant of the check.
pub fn check_unheld(dir: &Path) -> Result<(), StoreError> {
    use std::io::Read;
    let path = dir.join(".lock");
    let mut file =
        match crate::files::own_file_options(std::fs::OpenOptions::new().read(true)).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io(&path)(e)),
        };
    match file.try_lock_shared() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = Read::take(&mut file, 4096).read_to_string(&mut holder);
            Err(StoreError::Locked {
                path: dir.to_owned(),
                holder: holder_named(&holder),
            })
        }
        Err(std::fs::TryLockError::Error(e)) => Err(io(&path)(e)),
    }
}

/// The holder as a lock file names it, on one line.
fn holder_named(text: &str) -> String {
    let holder = text.trim();
    if holder.is_empty() {
        "a process that has not said who it is yet".to_owned()
    } else {
        crate::text::one_line(holder).into_owned()
    }
}

/// Takes the run directory's lock (`.lock`, an exclusive advisory lock on the file), or says who
/// holds it. The file names the holder once the lock is taken.
fn lock_run(dir: &Path) -> Result<std::fs::File, StoreError> {
    use std::io::{Read, Write};
    let path = dir.join(".lock");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .write(true)
        .truncate(false)
        .open(&path)
        .map_err(io(&path))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = Read::take(&mut file, 4096).read_to_string(&mut holder);
            return Err(StoreError::Locked {
                path: dir.to_owned(),
                holder: holder_named(&holder),
            });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io(&path)(e)),
    }
    let host = fs_err::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "this host".to_owned());
    let who = format!(
        "pid {} on {host} since {}\n",
        std::process::id(),
        super::now_rfc3339()
    );
    file.set_len(0)
        .and_then(|()| file.write_all(who.as_bytes()))
        .map_err(io(&path))?;
    Ok(file)
}

/// The latest verdict per (instance, attempt).
type Verdicts = BTreeMap<(String, u32), Stored>;

/// A run's results directory, open for appending verdicts; the latest verdict per instance and
/// attempt is held in memory.
pub struct Store {
    dir: PathBuf,
    results: fs_err::File,
    /// `.lock`, locked while the store is open: one writer per run. The kernel releases the
    /// lock when the process dies, so a crashed run's directory is taken over without a step.
    _lock: std::fs::File,
    /// Latest verdict per instance.
    latest: Verdicts,
    /// Lines cut off because the process died while writing them.
    pub repaired: usize,
}

impl Store {
    /// Opens (or creates) the store of a run; checks that it grades `meta`'s dataset.
    pub fn open(dir: &Path, meta: &RunMeta, force: bool) -> Result<Store, StoreError> {
        Store::open_resuming(dir, meta, force, true)
    }

    /// [`Store::open`]; unless `allow_mixed`, a run made by another grader version is refused
    /// ([`StoreError::OtherGrader`]).
    pub fn open_resuming(
        dir: &Path,
        meta: &RunMeta,
        force: bool,
        allow_mixed: bool,
    ) -> Result<Store, StoreError> {
        fs_err::create_dir_all(dir.join("instances")).map_err(io(dir))?;
        let lock = lock_run(dir)?;
        let meta_path = dir.join("run.json");
        match crate::files::read_own_text(&meta_path, crate::files::SMALL_FILE_MAX) {
            Ok(text) => {
                if let Ok(old) = serde_json::from_str::<RunMeta>(&text) {
                    if old.run.dataset_hash != meta.run.dataset_hash
                        && meta.dataset_hash_as_read.as_ref() != Some(&old.run.dataset_hash)
                        && !force
                    {
                        return Err(StoreError::OtherDataset {
                            path: dir.to_owned(),
                            theirs: old.run.dataset,
                            their_hash: old.run.dataset_hash,
                        });
                    }
                    if old.run.grader_version != meta.run.grader_version
                        && !allow_mixed
                        && dir.join("results.jsonl").is_file()
                    {
                        return Err(StoreError::OtherGrader {
                            path: dir.to_owned(),
                            theirs: old.run.grader_version,
                            ours: meta.run.grader_version.clone(),
                        });
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&meta_path)(e)),
        }
        write_atomic(
            &meta_path,
            &serde_json::to_vec_pretty(meta).unwrap_or_default(),
        )?;
        let path = dir.join("results.jsonl");
        let (latest, good_len, repaired) = load(&path)?;
        let mut options = std::fs::OpenOptions::new();
        crate::files::own_file_options(&mut options);
        let results = options
            .create(true)
            .read(true)
            .write(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io(&path)(crate::files::own_open_error(&path, e).into_io()))?;
        let mut results = fs_err::File::from_parts(results, &path);
        // Cut a partial last line (the process died while writing it).
        results.set_len(good_len).map_err(io(&path))?;
        results.seek(SeekFrom::End(0)).map_err(io(&path))?;
        Ok(Store {
            dir: dir.to_owned(),
            results,
            _lock: lock,
            latest,
            repaired,
        })
    }

    /// The results directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The latest verdict stored for this attempt at this instance.
    pub fn get(&self, instance_id: &str, attempt: u32) -> Option<&Stored> {
        self.latest.get(&(instance_id.to_owned(), attempt))
    }

    /// The latest verdict of every stored attempt, by instance id then attempt.
    pub fn all(&self) -> impl Iterator<Item = &Stored> {
        self.latest.values()
    }

    /// Appends one verdict (logs go to `instances/<id>/`), and syncs it to disk.
    pub fn append(&mut self, mut stored: Stored) -> Result<(), StoreError> {
        let logs = std::mem::take(&mut stored.verdict.logs);
        let inst = self.dir.join("instances").join(safe_name(&stored.label()));
        fs_err::create_dir_all(&inst).map_err(io(&inst))?;
        for (name, text) in [
            ("prepare.log", &logs.prepare),
            ("apply.log", &logs.apply),
            ("install.log", &logs.install),
            ("test_output.log", &logs.test_output),
            ("error.log", &logs.error),
        ] {
            let p = inst.join(name);
            if text.is_empty() {
                let _ = fs_err::remove_file(&p);
            } else {
                write_atomic(&p, text.as_bytes())?;
            }
        }
        let mut line = serde_json::to_vec(&stored).unwrap_or_default();
        line.push(b'\n');
        let path = self.dir.join("results.jsonl");
        let end = self.results.seek(SeekFrom::End(0)).map_err(io(&path))?;
        if let Err(e) = self
            .results
            .write_all(&line)
            .and_then(|()| self.results.sync_data())
        {
            // Disk full or similar: take the partial line back so the file stays whole.
            let _ = self.results.set_len(end);
            return Err(io(&path)(e));
        }
        self.latest
            .insert((stored.verdict.instance_id.clone(), stored.attempt), stored);
        Ok(())
    }

    /// Rewrites `results.jsonl` with one line per instance (aside, then renamed).
    pub fn compact(&mut self) -> Result<(), StoreError> {
        let path = self.dir.join("results.jsonl");
        let mut text = Vec::new();
        for s in self.latest.values() {
            text.extend(serde_json::to_vec(s).unwrap_or_default());
            text.push(b'\n');
        }
        write_atomic(&path, &text)?;
        self.results = fs_err::OpenOptions::new()
            .append(true)
            .read(true)
            .open(&path)
            .map_err(io(&path))?;
        Ok(())
    }
}

/// The longest verdict line read back: a stored verdict holds test ids and outcomes, never
/// logs (they are files of their own), so a line over this is not one.
const VERDICT_LINE_MAX: usize = 64 * 1024 * 1024;

/// Reads the latest verdict per instance, tolerating a partial last line; returns the byte length
/// of the whole lines.
fn load(path: &Path) -> Result<(Verdicts, u64, usize), StoreError> {
    let mut latest = BTreeMap::new();
    // A link, a FIFO or a device in the store's place is refused (it would lead elsewhere, hang
    // or never end).
    let file = match crate::files::open_own(path, u64::MAX).map_err(|e| e.into_io()) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((latest, 0, 0)),
        Err(e) => return Err(io(path)(e)),
    };
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    let (mut good, mut line_no, mut repaired) = (0u64, 0usize, 0usize);
    loop {
        let Some(n) = crate::record::read_line_capped(&mut reader, &mut buf, VERDICT_LINE_MAX)
            .map_err(io(path))?
        else {
            return Err(StoreError::BadLine {
                path: path.to_owned(),
                line: line_no + 1,
                message: format!(
                    "longer than {} MiB, more than any verdict this tool writes",
                    VERDICT_LINE_MAX >> 20
                ),
            });
        };
        if n == 0 {
            break;
        }
        line_no += 1;
        if buf.last() != Some(&b'\n') {
            // A partial line: the process died while writing it.
            repaired += 1;
            break;
        }
        match serde_json::from_slice::<Stored>(&buf) {
            Ok(s) => {
                latest.insert((s.verdict.instance_id.clone(), s.attempt), s);
            }
            Err(e) => {
                return Err(StoreError::BadLine {
                    path: path.to_owned(),
                    line: line_no,
                    message: e.to_string(),
                });
            }
        }
        good += n as u64;
    }
    Ok((latest, good, repaired))
}

/// The file a merge keeps in its output while it writes it: a directory holding it is a merge
/// that did not finish (killed, out of disk), never a run.
pub const UNFINISHED_MERGE: &str = ".merge-unfinished";

/// Reads a run directory without opening it for writing (for `report` and `compare`); a merge
/// that did not finish is refused ([`StoreError::UnfinishedMerge`]).
pub fn read_run(dir: &Path) -> Result<(Option<RunMeta>, Vec<Stored>), StoreError> {
    if fs_err::symlink_metadata(dir.join(UNFINISHED_MERGE)).is_ok() {
        return Err(StoreError::UnfinishedMerge(dir.to_owned()));
    }
    // A run made before run.json existed has none; one that is there and is no regular file of
    // a sane size (a FIFO, a device, a huge file) is refused, not skipped.
    let meta_path = dir.join("run.json");
    let meta = match crate::files::read_own_text(&meta_path, crate::files::SMALL_FILE_MAX) {
        Ok(t) => serde_json::from_str(&t).ok(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(StoreError::Io(crate::errors::PathError::new(
                meta_path, source,
            )));
        }
    };
    let (latest, _, _) = load(&dir.join("results.jsonl"))?;
    if latest.is_empty() && !dir.join("results.jsonl").is_file() {
        return Err(StoreError::Io(crate::errors::PathError::new(
            dir.join("results.jsonl"),
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not a run directory (no results.jsonl)",
            ),
        )));
    }
    Ok((meta, latest.into_values().collect()))
}

/// The error message an error verdict left in `instances/<label>/error.log`, if any.
pub fn error_log(dir: &Path, label: &str) -> Option<String> {
    crate::files::read_own_text(
        &dir.join("instances")
            .join(safe_name(label))
            .join("error.log"),
        crate::files::SMALL_FILE_MAX,
    )
    .ok()
}

/// Writes a file whole or not at all ([`crate::files::write_atomic`]).
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<(), StoreError> {
    crate::files::write_atomic(path, data).map_err(io(path))
}

#[cfg(test)]
mod lock_tests {
    use super::*;

    fn meta() -> RunMeta {
        RunMeta {
            run: crate::report::RunIdentity::new(
                "r".into(),
                "d".into(),
                "h".into(),
                "p".into(),
                "h".into(),
            ),
            created_at: "now".into(),
            ..Default::default()
        }
    }

    /// A directory made before the dataset hash left key order out names the hash as it was; the
    /// same dataset still opens it, another dataset does not.
    #[test]
    fn a_run_made_with_the_hash_as_read_still_opens() {
        let tmp = tempfile::tempdir().unwrap();
        let mut old = meta();
        old.run.dataset_hash = "as-read".into();
        drop(Store::open(tmp.path(), &old, false).unwrap());
        let mut now = meta();
        now.run.dataset_hash = "sorted".into();
        assert!(matches!(
            Store::open(tmp.path(), &now, false),
            Err(StoreError::OtherDataset { .. })
        ));
        now.dataset_hash_as_read = Some("as-read".into());
        assert!(Store::open(tmp.path(), &now, false).is_ok());
    }

    /// A link where the run's results.jsonl goes is refused, never written through: the file
    /// it points to is left as it was.
    #[test]
    fn a_linked_results_file_is_refused_not_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere.txt");
        fs_err::write(&elsewhere, "someone else's\n").unwrap();
        let run = tmp.path().join("run");
        fs_err::create_dir_all(&run).unwrap();
        std::os::unix::fs::symlink(&elsewhere, run.join("results.jsonl")).unwrap();
        let err = Store::open(&run, &meta(), false)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("symbolic link"), "{err}");
        assert_eq!(
            fs_err::read_to_string(&elsewhere).unwrap(),
            "someone else's\n"
        );
    }

    /// A run made by another grader version is not resumed unless mixing is allowed; the same
    /// version resumes it, and a new directory opens whatever the version.
    #[test]
    fn a_run_of_another_grader_version_needs_allow_mixed() {
        let tmp = tempfile::tempdir().unwrap();
        let mut old = meta();
        old.run.grader_version = "beyondswe 0.1.0".into();
        drop(Store::open_resuming(tmp.path(), &old, false, false).unwrap());
        let mut now = meta();
        now.run.grader_version = "beyondswe 0.2.0".into();
        let err = Store::open_resuming(tmp.path(), &now, false, false)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("beyondswe 0.1.0") && err.contains("--allow-mixed"),
            "{err}"
        );
        assert!(Store::open_resuming(tmp.path(), &old, false, false).is_ok());
        assert!(Store::open_resuming(tmp.path(), &now, false, true).is_ok());
        // Mixed once, the run is this version's now.
        assert!(Store::open_resuming(tmp.path(), &now, false, false).is_ok());
    }

    #[test]
    fn one_writer_per_run_and_the_second_is_told_who() {
        let tmp = tempfile::tempdir().unwrap();
        let first = Store::open(tmp.path(), &meta(), false).unwrap();
        let err = Store::open(tmp.path(), &meta(), false)
            .err()
            .expect("a second writer is refused");
        let text = err.to_string();
        assert!(matches!(err, StoreError::Locked { .. }), "{text}");
        assert!(
            text.contains(&format!("pid {}", std::process::id())),
            "{text}"
        );
        // The holder gone (a process that exits releases its lock the same way), the run is
        // taken over.
        drop(first);
        Store::open(tmp.path(), &meta(), false).unwrap();
    }
}
