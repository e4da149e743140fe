//! Whole Harbor jobs directories ⇄ trajectory releases: every trial under a jobs directory to
//! one release line each ([`jobs_to_release`]), and every line of a release back to a trial
//! directory ([`release_to_jobs`]).
//!
//! The formats themselves (a trial's line, a job's own files, a line written back as a trial)
//! are Harbor's and live in `harbor::job`; this module runs the loops over them, adds each
//! trial's family from a dataset read through `dataset::Source`, and counts what it did. What is
//! printed, and the exit code, are the caller's.

use crate::errors::message;
use crate::harbor::{
    JobError, ReleaseOptions, job_files, job_of, lookup_task, release_line, trial_dir, trial_dirs,
    write_trial,
};
use crate::record::{JsonLines, JsonlError, JsonlWriter};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a release could not be made or read.
#[derive(Debug, Error)]
pub enum ReleaseError {
    /// The release file could not be opened, read or written.
    #[error(transparent)]
    Jsonl(#[from] JsonlError),
    /// A trial or job directory could not be read into a release line.
    #[error(transparent)]
    Job(#[from] JobError),
    /// One release line could not be written back as a trial directory.
    #[error("{}:{line}: {source}", path.display())]
    Line {
        /// The release file.
        path: PathBuf,
        /// The line, counting from 1.
        line: u64,
        /// What went wrong writing it.
        #[source]
        source: JobError,
    },
}

/// What [`jobs_to_release`] wrote.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Released {
    /// Release lines written, one per trial.
    pub trials: usize,
    /// Files listed (size, SHA-256) but not carried: over the size cap, logs left out, links.
    pub omitted_files: usize,
}

/// What [`release_to_jobs`] wrote.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Restored {
    /// Trial directories written.
    pub trials: usize,
    /// Lines that could not be read or written back (each said through `note`).
    pub failed: usize,
}

/// Writes one release line per trial under `jobs_dir` to `output` (written whole or not at
/// all); each job's own files travel once, on its first trial's line. Each line names its
/// trial's family when `families` (Harbor task name → family) knows the task.
pub fn jobs_to_release(
    jobs_dir: &Path,
    output: &Path,
    families: &HashMap<String, String>,
    opts: ReleaseOptions,
) -> Result<Released, ReleaseError> {
    let mut w = JsonlWriter::create(output)?;
    let mut released = Released::default();
    let trials = trial_dirs(jobs_dir);
    let all: Vec<PathBuf> = trials.iter().map(|(d, _)| d.clone()).collect();
    let mut jobs_done: HashSet<PathBuf> = HashSet::new();
    for (dir, result) in trials {
        let task = result
            .get("task_name")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        let mut job = job_of(&dir);
        if let (Some(job), Some(job_dir)) = (job.as_mut(), dir.parent())
            && job_dir.starts_with(jobs_dir)
            && jobs_done.insert(job_dir.to_owned())
        {
            let tree = job_files(job_dir, &all, opts)?;
            job["files"] = tree["files"].clone();
            job["dirs"] = tree["dirs"].clone();
        }
        let line = release_line(
            &dir,
            &result,
            job.as_ref(),
            lookup_task(families, task).map(String::as_str),
            opts,
        )?;
        released.omitted_files += omitted_files(&line, job.as_ref());
        w.write(&line)?;
        released.trials += 1;
    }
    w.finish()?;
    Ok(released)
}

/// How many files a line (and its job's files) lists without carrying them.
fn omitted_files(line: &Value, job: Option<&Value>) -> usize {
    line["files"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(
            job.and_then(|j| j["files"].as_array())
                .into_iter()
                .flatten(),
        )
        .filter(|f| f.get("omitted").is_some())
        .count()
}

/// Writes every line of `release` back as a trial directory (and its job's files) under
/// `out_dir`. A line that cannot be read or written is said through `note` and counted, and
/// the rest written; only a release that cannot be opened is an error.
pub fn release_to_jobs(
    release: &Path,
    out_dir: &Path,
    note: &mut dyn FnMut(&str),
) -> Result<Restored, ReleaseError> {
    let mut lines = JsonLines::open(release)?;
    let mut restored = Restored::default();
    // Trial directory → the line that wrote it: a second line naming the same trial would write
    // over the first.
    let mut written_by: HashMap<PathBuf, u64> = HashMap::new();
    while let Some(item) = lines.next_value() {
        let written = item.map_err(ReleaseError::from).and_then(|(line, v)| {
            let at = |source| ReleaseError::Line {
                path: release.to_owned(),
                line,
                source,
            };
            let (_, dir) = trial_dir(out_dir, &v).map_err(at)?;
            if let Some(first) = written_by.get(&dir) {
                return Err(at(JobError::Bad {
                    path: dir.clone(),
                    message: format!(
                        "line {first} already wrote this trial; two trials of one job cannot \
                         share a name"
                    ),
                }));
            }
            written_by.insert(dir, line);
            write_trial(out_dir, &v).map_err(at)
        });
        match written {
            Ok(_) => restored.trials += 1,
            Err(err) => {
                restored.failed += 1;
                note(&format!("error: {}", message(&err)));
            }
        }
    }
    Ok(restored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_job_goes_to_a_release_and_back() {
        let tmp = tempfile::tempdir().unwrap();
        let trial = tmp.path().join("jobs/job-1/o_r_pr1__abc");
        fs_err::create_dir_all(trial.join("verifier")).unwrap();
        fs_err::write(
            tmp.path().join("jobs/job-1/config.json"),
            json!({"job_name": "job-1"}).to_string(),
        )
        .unwrap();
        let result = json!({
            "task_name": "o_r_pr1", "trial_name": "o_r_pr1__abc",
            "verifier_result": {"rewards": {"reward": 1}},
        });
        fs_err::write(trial.join("result.json"), result.to_string()).unwrap();
        fs_err::write(trial.join("verifier/reward.txt"), "1").unwrap();
        let families = HashMap::from([("o_r_pr1".to_owned(), "DomainFix".to_owned())]);

        let release = tmp.path().join("release.jsonl");
        let released = jobs_to_release(
            &tmp.path().join("jobs"),
            &release,
            &families,
            ReleaseOptions::default(),
        )
        .unwrap();
        assert_eq!(
            released,
            Released {
                trials: 1,
                omitted_files: 0
            }
        );
        let line: Value = serde_json::from_str(&fs_err::read_to_string(&release).unwrap()).unwrap();
        assert_eq!(line["family"], "DomainFix", "found by its directory name");

        // Back, with a bad line after the good one: reported and counted, the rest written.
        let mut text = fs_err::read_to_string(&release).unwrap();
        text.push_str("not json\n");
        fs_err::write(&release, text).unwrap();
        let mut notes = Vec::new();
        let restored = release_to_jobs(&release, &tmp.path().join("back"), &mut |n| {
            notes.push(n.to_owned())
        })
        .unwrap();
        assert_eq!(
            restored,
            Restored {
                trials: 1,
                failed: 1
            }
        );
        assert!(notes[0].contains("release.jsonl:2"), "{notes:?}");
        assert_eq!(
            fs_err::read_to_string(
                tmp.path()
                    .join("back/job-1/o_r_pr1__abc/verifier/reward.txt")
            )
            .unwrap(),
            "1"
        );
    }

    /// A one-trial job under `root/jobs/job-1`, its trial directory named `trial`.
    fn job(root: &Path, trial: &str) -> PathBuf {
        let dir = root.join("jobs/job-1").join(trial);
        fs_err::create_dir_all(dir.join("verifier")).unwrap();
        fs_err::write(
            root.join("jobs/job-1/config.json"),
            json!({"job_name": "job-1"}).to_string(),
        )
        .unwrap();
        let result = json!({"task_name": "t", "trial_name": trial,
            "verifier_result": {"rewards": {"reward": 0}}});
        fs_err::write(dir.join("result.json"), result.to_string()).unwrap();
        dir
    }

    fn release_of(root: &Path) -> PathBuf {
        let release = root.join("release.jsonl");
        jobs_to_release(
            &root.join("jobs"),
            &release,
            &HashMap::new(),
            ReleaseOptions::default(),
        )
        .unwrap();
        release
    }

    /// A release of one good trial (`t__1`) followed by `lines` made from its line by `edit`,
    /// written back under `back`: what was restored, and the notes.
    fn restore_with(
        root: &Path,
        edit: impl Fn(&mut Value),
        lines: impl Fn(&str, &Value) -> String,
    ) -> (Restored, Vec<String>) {
        job(root, "t__1");
        let release = release_of(root);
        let good = fs_err::read_to_string(&release).unwrap();
        let mut other: Value = serde_json::from_str(good.trim()).unwrap();
        edit(&mut other);
        fs_err::write(&release, lines(&good, &other)).unwrap();
        let mut notes = Vec::new();
        let restored = release_to_jobs(&release, &root.join("back"), &mut |n| {
            notes.push(n.to_owned())
        })
        .unwrap();
        (restored, notes)
    }

    #[test]
    fn a_trial_named_dot_dot_or_twice_writes_over_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let back = tmp.path().join("back");
        let (restored, notes) = restore_with(
            tmp.path(),
            |evil| {
                evil["trial_result"]["trial_name"] = json!("..");
                evil["files"] = json!([{"path": "config.json", "text": "overwritten"}]);
            },
            |good, evil| format!("{good}{evil}\n{good}"),
        );
        assert_eq!(
            restored,
            Restored {
                trials: 1,
                failed: 2
            },
            "{notes:?}"
        );
        assert!(
            notes[0].contains("trial name \"..\" is not one directory name"),
            "{notes:?}"
        );
        assert!(
            notes[1].contains("line 1 already wrote this trial"),
            "{notes:?}"
        );
        let config = fs_err::read_to_string(back.join("job-1/config.json")).unwrap();
        assert!(!config.contains("overwritten"), "{config}");
    }

    /// A line refused half-way through its files (a path listed twice) leaves no trial
    /// directory and nothing hidden behind; the good lines are written whole.
    #[test]
    fn a_line_refused_half_way_leaves_no_half_trial() {
        let tmp = tempfile::tempdir().unwrap();
        let back = tmp.path().join("back");
        let (restored, notes) = restore_with(
            tmp.path(),
            |twice| {
                twice["trial_result"]["trial_name"] = json!("t__2");
                twice["files"] = json!([
                    {"path": "a.txt", "text": "first"},
                    {"path": "a.txt", "text": "second"}
                ]);
            },
            |good, twice| format!("{good}{twice}\n"),
        );
        assert_eq!(
            restored,
            Restored {
                trials: 1,
                failed: 1
            },
            "{notes:?}"
        );
        assert!(notes[0].contains("listed twice"), "{notes:?}");
        let left: Vec<String> = fs_err::read_dir(back.join("job-1"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            !left.iter().any(|n| n == "t__2" || n.starts_with('.')),
            "{left:?}"
        );
        // Written again into the same place, the good trial is replaced whole.
        let again = release_to_jobs(&tmp.path().join("release.jsonl"), &back, &mut |_| {}).unwrap();
        assert_eq!(again.trials, 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_name_that_is_not_utf8_is_named_and_left_out_and_a_sparse_terabyte_is_not_read() {
        use std::os::unix::ffi::OsStrExt;
        let tmp = tempfile::tempdir().unwrap();
        let trial = job(tmp.path(), "t__1");
        let odd = trial.join(std::ffi::OsStr::from_bytes(b"agent-\xff.log"));
        fs_err::write(&odd, "x").unwrap();
        // 1 TB of holes: left out by its size, never read or hashed.
        let sparse = fs_err::File::create(trial.join("huge.bin")).unwrap();
        sparse.set_len(1 << 40).unwrap();
        let started = std::time::Instant::now();
        let release = release_of(tmp.path());
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        let line: Value =
            serde_json::from_str(fs_err::read_to_string(&release).unwrap().trim()).unwrap();
        let files = line["files"].as_array().unwrap();
        let named = |p: &str| files.iter().find(|f| f["path"] == p).cloned();
        assert_eq!(
            named("agent-\u{fffd}.log").unwrap()["omitted"],
            "name_not_utf8"
        );
        let huge = named("huge.bin").unwrap();
        assert_eq!(huge["omitted"], "too_large");
        assert!(huge.get("sha256").is_none(), "{huge}");
        assert_eq!(huge["size"], 1u64 << 40);
        // The rest of the trial travels, and comes back.
        let back = tmp.path().join("back");
        release_to_jobs(&release, &back, &mut |_| {}).unwrap();
        assert!(back.join("job-1/t__1/result.json").is_file());
    }
}
