//! Joining runs graded apart (`grade --shard K/N` on several machines) into one run directory
//! whose store, logs and report are those a single run would have written: every verdict with its
//! resume key, each grading's logs and harness files, the reviewers' accepted ids, and the report
//! over the union of the parts' scopes. Parts of another dataset, other submissions, other
//! options or another grader version are refused, naming the part and what differs; so are two
//! verdicts of one grading that disagree, and a split run with parts missing.

use super::error::{MergeError, RunError};
use crate::files::safe_name;
use crate::report::{
    self, CalibrationUse, Report, RunMeta, Scope, Store, Stored, build_report, model_dir_name,
    now_rfc3339, read_run,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Which runs to join, and where.
#[derive(Debug, Clone)]
pub struct MergeSpec {
    /// The run directories (`RESULTS_DIR/RUN_ID` of each part).
    pub runs: Vec<PathBuf>,
    /// The run directory to write; it must not hold a run yet. Its name is the run's id.
    pub out: PathBuf,
}

/// What a merge wrote.
#[derive(Debug)]
pub struct Merged {
    /// The joined run's report, as written to `out`.
    pub report: Report,
    /// How many verdicts the joined store holds.
    pub verdicts: usize,
}

/// One part as read.
struct Part {
    dir: PathBuf,
    meta: RunMeta,
    stored: Vec<Stored>,
    saved: Report,
}

fn read_part(dir: &Path) -> Result<Part, RunError> {
    let (meta, stored) = read_run(dir)?;
    let not_a_run = |why: &str| MergeError::NotARun {
        run: dir.to_owned(),
        why: why.to_owned(),
    };
    let meta = meta.ok_or_else(|| not_a_run("no readable run.json"))?;
    let text = crate::files::read_own_text(&dir.join("report.json"), crate::files::SMALL_FILE_MAX)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                not_a_run("no report.json: let the run finish (or resume it) first")
            }
            _ => not_a_run(&e.to_string()),
        })?;
    let saved: Report = serde_json::from_str(&text)
        .map_err(|e| not_a_run(&format!("report.json cannot be read: {e}")))?;
    Ok(Part {
        dir: dir.to_owned(),
        meta,
        stored,
        saved,
    })
}

/// Every part graded the same dataset and submissions with the same options and grader as the
/// first; a split run has each of its parts once.
fn check_parts(parts: &[Part]) -> Result<(), MergeError> {
    let first = &parts[0];
    let dataset = |m: &RunMeta| format!("{} hash {}", m.run.dataset, m.run.dataset_hash);
    let submissions =
        |m: &RunMeta| format!("{} hash {}", m.run.predictions, m.run.predictions_hash);
    let options = |m: &RunMeta| {
        m.options_digest
            .clone()
            .unwrap_or_else(|| "none recorded".into())
    };
    for p in &parts[1..] {
        let (a, b) = (&first.meta, &p.meta);
        for (what, same, theirs, ours) in [
            (
                "dataset",
                a.run.dataset_hash == b.run.dataset_hash,
                dataset(a),
                dataset(b),
            ),
            (
                "submissions",
                a.run.predictions_hash == b.run.predictions_hash,
                submissions(a),
                submissions(b),
            ),
            (
                // A run made before options were recorded cannot show it used the same.
                "options",
                a.options_digest.is_some() && a.options_digest == b.options_digest,
                options(a),
                options(b),
            ),
            (
                "grader version",
                a.run.grader_version == b.run.grader_version,
                a.run.grader_version.clone(),
                b.run.grader_version.clone(),
            ),
        ] {
            if !same {
                return Err(MergeError::Differs {
                    run: p.dir.clone(),
                    first: first.dir.clone(),
                    what,
                    theirs,
                    ours,
                });
            }
        }
    }
    if parts.iter().all(|p| p.meta.shard.is_none()) {
        return Ok(());
    }
    let counts: BTreeSet<Option<u32>> = parts
        .iter()
        .map(|p| p.meta.shard.map(|s| s.count))
        .collect();
    let count = match counts.into_iter().collect::<Vec<_>>()[..] {
        [Some(count)] => count,
        _ => {
            let listed: Vec<String> = parts
                .iter()
                .map(|p| {
                    let what = p
                        .meta
                        .shard
                        .map_or_else(|| "a whole run".to_owned(), |s| format!("shard {s}"));
                    format!("{} ({what})", p.dir.display())
                })
                .collect();
            return Err(MergeError::Shards(format!(
                "the runs are not the parts of one split: {}",
                listed.join(", ")
            )));
        }
    };
    let mut seen: BTreeMap<u32, &Path> = BTreeMap::new();
    for p in parts {
        let Some(s) = p.meta.shard else { continue };
        if let Some(other) = seen.insert(s.index, &p.dir) {
            return Err(MergeError::Shards(format!(
                "shard {s} is given twice: {} and {}",
                other.display(),
                p.dir.display()
            )));
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|k| !seen.contains_key(k))
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Shards(format!(
            "shard(s) {} missing: a merge of part of a split run would report part of it as the whole",
            missing.join(", ")
        )));
    }
    Ok(())
}

/// Joins the runs of `spec` into `spec.out`.
pub fn merge(spec: &MergeSpec) -> Result<Merged, RunError> {
    if spec.runs.is_empty() {
        return Err(MergeError::Shards("no run to merge".into()).into());
    }
    if spec.out.join("results.jsonl").exists() {
        return Err(MergeError::OutExists(spec.out.clone()).into());
    }
    // The merged run is written whole into a directory beside the output and renamed into place
    // at the end: a merge killed or out of disk leaves no half run under the output's name (and
    // a link in an existing output is never written through).
    if let Ok(m) = fs_err::symlink_metadata(&spec.out) {
        let empty = m.is_dir()
            && fs_err::read_dir(&spec.out)
                .map_err(RunError::Write)?
                .next()
                .is_none();
        if !empty {
            return Err(MergeError::OutNotEmpty(spec.out.clone()).into());
        }
    }
    let staging = Staging::new(&spec.out)?;
    let merged = merge_into(spec, &staging.dir)?;
    staging.finish(&spec.out)?;
    Ok(merged)
}

/// A merge's output as it is written: `.<name>.merging-<pid>` beside the output, removed if the
/// merge fails; left-overs of merges that were killed are removed when the next one starts.
struct Staging {
    dir: PathBuf,
    done: bool,
}

impl Staging {
    fn new(out: &Path) -> Result<Staging, RunError> {
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        };
        fs_err::create_dir_all(&parent).map_err(RunError::Write)?;
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "merged".into());
        let prefix = format!(".{name}.merging-");
        for e in fs_err::read_dir(&parent)
            .map_err(RunError::Write)?
            .flatten()
        {
            let n = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = n.strip_prefix(&prefix)
                && !Path::new("/proc").join(pid).exists()
            {
                let _ = fs_err::remove_dir_all(e.path());
            }
        }
        let dir = parent.join(format!("{prefix}{}", std::process::id()));
        let _ = fs_err::remove_dir_all(&dir);
        fs_err::create_dir(&dir).map_err(RunError::Write)?;
        // Until the merge is whole, its output says so: `report` refuses it.
        fs_err::write(dir.join(crate::report::UNFINISHED_MERGE), b"").map_err(RunError::Write)?;
        Ok(Staging { dir, done: false })
    }

    /// Puts the finished merge in place (an empty output directory is replaced).
    fn finish(mut self, out: &Path) -> Result<(), RunError> {
        fs_err::remove_file(self.dir.join(crate::report::UNFINISHED_MERGE))
            .map_err(RunError::Write)?;
        if out.is_dir() {
            fs_err::remove_dir(out).map_err(RunError::Write)?;
        }
        fs_err::rename(&self.dir, out).map_err(RunError::Write)?;
        self.done = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs_err::remove_dir_all(&self.dir);
        }
    }
}

/// Joins the runs of `spec` into `out`, the staging directory.
fn merge_into(spec: &MergeSpec, out: &Path) -> Result<Merged, RunError> {
    let parts = spec
        .runs
        .iter()
        .map(|d| read_part(d))
        .collect::<Result<Vec<_>, _>>()?;
    check_parts(&parts)?;

    // Every grading once; the same grading twice only with the same key.
    let mut verdicts: BTreeMap<(String, u32), (&Stored, &Path)> = BTreeMap::new();
    for p in &parts {
        for s in &p.stored {
            let at = (s.verdict.instance_id.clone(), s.attempt);
            match verdicts.get(&at) {
                Some((earlier, dir)) if earlier.key != s.key => {
                    return Err(MergeError::Conflict {
                        label: s.label(),
                        a: dir.to_path_buf(),
                        b: p.dir.clone(),
                    }
                    .into());
                }
                Some(_) => {}
                None => {
                    verdicts.insert(at, (s, &p.dir));
                }
            }
        }
    }

    let first = &parts[0];
    let meta = RunMeta {
        run: report::RunIdentity {
            run_id: spec
                .out
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            ..first.meta.run.clone()
        },
        created_at: now_rfc3339(),
        dataset_hash_as_read: None,
        options_digest: first.meta.options_digest.clone(),
        shard: None,
    };
    let mut store = Store::open(out, &meta, false)?;
    for (s, from) in verdicts.values() {
        store.append((*s).clone())?;
        // The logs and the harness files of the grading, as its part wrote them.
        let label = safe_name(&s.label());
        for rel in [
            PathBuf::from("instances").join(&label),
            PathBuf::from(model_dir_name(&s.model_name_or_path)).join(&label),
        ] {
            if no_link_below(from, &rel) {
                copy_dir(&from.join(&rel), &out.join(&rel))?;
            }
        }
    }
    store.compact()?;
    let mut accepted = BTreeSet::new();
    for p in &parts {
        accepted.extend(report::read_accepted(&p.dir)?);
    }
    if !accepted.is_empty() {
        report::accept(out, &accepted.into_iter().collect::<Vec<_>>())?;
    }

    let report = joined_report(&parts, &meta, store.all().cloned().collect(), out)?;
    report::write_report_files(out, &report)?;
    Ok(Merged {
        report,
        verdicts: store.all().count(),
    })
}

/// The report a single run of the parts' scopes would have written: their verdicts, their scopes
/// joined, the earliest start and the latest end, their calibration's lists joined.
fn joined_report(
    parts: &[Part],
    meta: &RunMeta,
    mut stored: Vec<Stored>,
    out: &Path,
) -> Result<Report, RunError> {
    let mut scope: BTreeSet<String> = BTreeSet::new();
    for p in parts {
        scope.extend(p.saved.instances.iter().map(|i| i.instance_id.clone()));
        scope.extend(p.saved.swebench.incomplete_ids.iter().cloned());
    }
    // A store may hold verdicts of instances outside its run's scope (an earlier run's).
    stored.retain(|s| scope.contains(&s.verdict.instance_id));
    report::apply_accepted(&mut stored, &report::read_accepted(out)?);
    let ids: Vec<String> = scope.iter().cloned().collect();
    let families: std::collections::BTreeMap<String, crate::record::Family> = parts
        .iter()
        .flat_map(|p| &p.saved.unsubmitted)
        .map(|u| (u.instance_id.clone(), u.family))
        .collect();
    let started = parts
        .iter()
        .filter_map(|p| p.saved.started_at.clone())
        .min();
    let finished = parts
        .iter()
        .filter_map(|p| p.saved.finished_at.clone())
        .max();
    let jobs: BTreeSet<Option<usize>> = parts.iter().map(|p| p.saved.jobs).collect();
    let jobs = if jobs.len() == 1 {
        jobs.into_iter().next().flatten()
    } else {
        None
    };
    let calibration = joined_calibration(parts);
    Ok(build_report(
        Some(meta),
        &stored,
        &Scope {
            total: ids.len(),
            ids: &ids,
            families: &families,
        },
        (started, finished, jobs),
        calibration.as_ref(),
    ))
}

/// The parts' calibration use with its per-instance lists joined (each part lists its own
/// instances); the file, its hash and the switches are the same in every part (the options
/// digest covers them).
fn joined_calibration(parts: &[Part]) -> Option<CalibrationUse> {
    let mut joined: Option<CalibrationUse> = None;
    for c in parts.iter().filter_map(|p| p.saved.calibration.as_ref()) {
        let Some(j) = joined.as_mut() else {
            joined = Some(c.clone());
            continue;
        };
        for (into, from) in [
            (&mut j.broken, &c.broken),
            (&mut j.trivial, &c.trivial),
            (&mut j.excluded, &c.excluded),
            (&mut j.uncalibrated, &c.uncalibrated),
        ] {
            into.extend(from.iter().cloned());
            into.sort();
            into.dedup();
        }
        j.flaky_tests.extend(c.flaky_tests.clone());
        j.other_dataset |= c.other_dataset;
    }
    joined
}

/// Whether every folder from `base` down to `base/rel` is a folder of its own, not a link: a
/// part whose `instances` (or model folder) links elsewhere has nothing of its own there.
fn no_link_below(base: &Path, rel: &Path) -> bool {
    let mut at = base.to_owned();
    rel.components().all(|c| {
        at.push(c);
        std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir())
    })
}

/// Copies a directory's regular files and subdirectories, if it is a directory: links are not
/// followed, the directory itself included (a part's `instances/x` that links to `/etc` copies
/// nothing).
fn copy_dir(from: &Path, to: &Path) -> Result<(), RunError> {
    if !std::fs::symlink_metadata(from).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    for entry in walkdir::WalkDir::new(from)
        .follow_links(false)
        .follow_root_links(false)
    {
        let entry = entry.map_err(|e| {
            RunError::Write(std::io::Error::other(format!(
                "reading {}: {e}",
                from.display()
            )))
        })?;
        let rel = entry.path().strip_prefix(from).unwrap_or(entry.path());
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            fs_err::create_dir_all(&dest)?;
        } else if entry.file_type().is_file() {
            fs_err::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::report::Shard;

    /// A part's log directory that is a link, or holds links, copies no file from elsewhere.
    #[cfg(unix)]
    #[test]
    fn linked_logs_are_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let secret = tmp.path().join("secret");
        fs_err::create_dir_all(&secret).unwrap();
        fs_err::write(secret.join("key"), "s3cret").unwrap();
        let part = tmp.path().join("part/instances");
        fs_err::create_dir_all(part.join("real")).unwrap();
        fs_err::write(part.join("real/test_output.log"), "ok").unwrap();
        std::os::unix::fs::symlink(secret.join("key"), part.join("real/leak.log")).unwrap();
        std::os::unix::fs::symlink(&secret, part.join("linked")).unwrap();
        let out = tmp.path().join("out/instances");
        for name in ["real", "linked"] {
            super::copy_dir(&part.join(name), &out.join(name)).unwrap();
        }
        assert!(out.join("real/test_output.log").is_file());
        assert!(!out.join("real/leak.log").exists());
        assert!(!out.join("linked").exists());
    }

    /// A part whose `instances` folder itself links elsewhere: the instance's logs found through
    /// it are no part's, and nothing is copied from there.
    #[cfg(unix)]
    #[test]
    fn a_part_whose_instances_folder_is_a_link_has_no_logs_there() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        fs_err::create_dir_all(elsewhere.join("x")).unwrap();
        fs_err::write(elsewhere.join("x/secret.log"), "s3cret").unwrap();
        let part = tmp.path().join("part");
        fs_err::create_dir_all(part.join("model/x")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, part.join("instances")).unwrap();
        let rel = std::path::Path::new("instances/x");
        assert!(!super::no_link_below(&part, rel));
        assert!(super::no_link_below(&part, std::path::Path::new("model/x")));
        assert!(!super::no_link_below(
            &part,
            std::path::Path::new("model/missing")
        ));
    }

    #[test]
    fn shards_parse_and_deal_instances_round() {
        let s: Shard = "2/3".parse().unwrap();
        assert_eq!((s.index, s.count), (2, 3));
        assert_eq!(s.to_string(), "2/3");
        // run.json holds it as its text, and refuses a bad one.
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"2/3\"");
        assert_eq!(serde_json::from_str::<Shard>("\"2/3\"").unwrap(), s);
        assert!(serde_json::from_str::<Shard>("\"0/3\"").is_err());
        let held: Vec<usize> = (0..7).filter(|i| s.holds(*i)).collect();
        assert_eq!(held, [1, 4]);
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains("K/N"), "{bad}: {e}");
        }
        // Every instance falls in exactly one shard.
        for n in 1..6u32 {
            for i in 0..20 {
                let holders = (1..=n)
                    .filter(|k| {
                        Shard {
                            index: *k,
                            count: n,
                        }
                        .holds(i)
                    })
                    .count();
                assert_eq!(holders, 1);
            }
        }
    }
}
