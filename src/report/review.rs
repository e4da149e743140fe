//! A reviewer's decisions on `forgery_suspected` verdicts.
//!
//! Static evidence (the submission's source reaching for frames, gc, `__main__`, …) scores an
//! instance 0 until a person has looked at it. Accepting an instance keeps its evidence in the
//! verdict and puts back the verdict the tests gave (`if_accepted`). The accepted ids live in the
//! run directory (`accepted_suspected.json`), so every report of the run, now or rebuilt later
//! with `beyondswe report`, applies them the same way. No grading is repeated.

use super::store::{StoreError, Stored, write_atomic};
use crate::grade::Reason;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

/// The reviewer's file in a run directory.
pub const ACCEPTED_FILE: &str = "accepted_suspected.json";

#[derive(Debug, Default, Serialize, Deserialize)]
struct AcceptedFile {
    /// Instances whose static evidence a reviewer accepted.
    instance_ids: BTreeSet<String>,
}

/// The ids accepted so far in the run at `dir` (none when the file is absent).
pub fn read_accepted(dir: &Path) -> Result<BTreeSet<String>, StoreError> {
    let path = dir.join(ACCEPTED_FILE);
    let text = match crate::files::read_own_text(&path, crate::files::SMALL_FILE_MAX) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(source) => return Err(StoreError::Io(crate::errors::PathError::new(path, source))),
    };
    serde_json::from_str::<AcceptedFile>(&text)
        .map(|f| f.instance_ids)
        .map_err(|e| StoreError::BadLine {
            path,
            line: e.line(),
            message: format!("{e}; expected {{\"instance_ids\": [\"ID\", …]}}"),
        })
}

/// Adds `ids` to the run's accepted ids and writes them back; returns the whole set.
pub fn accept(dir: &Path, ids: &[String]) -> Result<BTreeSet<String>, StoreError> {
    let mut all = read_accepted(dir)?;
    if ids.is_empty() {
        return Ok(all);
    }
    all.extend(ids.iter().cloned());
    let file = AcceptedFile {
        instance_ids: all.clone(),
    };
    let text = serde_json::to_vec_pretty(&file).unwrap_or_default();
    write_atomic(&dir.join(ACCEPTED_FILE), &text)?;
    Ok(all)
}

/// Puts back the tests' verdict of every `forgery_suspected` verdict whose instance was
/// accepted; the evidence stays, marked accepted.
pub fn apply_accepted(stored: &mut [Stored], accepted: &BTreeSet<String>) {
    for st in stored {
        let v = &mut st.verdict;
        if v.reason != Reason::ForgerySuspected || !accepted.contains(&v.instance_id) {
            continue;
        }
        if let Some(evidence) = v.static_evidence.as_mut()
            && let Some((outcome, reason, score)) = evidence.if_accepted
        {
            evidence.accepted = true;
            v.set(outcome, reason, score);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grade::{Outcome, StaticEvidence, StaticHit, Verdict};
    use crate::record::Family;

    fn suspected(id: &str) -> Stored {
        let mut v = Verdict::new(id, Family::CrossRepo);
        v.set(Outcome::Unresolved, Reason::ForgerySuspected, 0.0);
        v.static_evidence = Some(StaticEvidence {
            hits: vec![StaticHit {
                kind: "frames".into(),
                path: "pkg/__init__.py".into(),
                line: 3,
                what: "sys._getframe".into(),
            }],
            if_accepted: Some((Outcome::Resolved, Reason::AllTestsPassed, 1.0)),
            ..StaticEvidence::default()
        });
        Stored {
            grader_version: String::new(),
            key: id.into(),
            attempt: 1,
            model_name_or_path: String::new(),
            claimed_reward: None,
            verdict: v,
        }
    }

    #[test]
    fn accepting_puts_back_the_tests_verdict_and_keeps_the_evidence() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert!(read_accepted(dir.path()).expect("empty").is_empty());
        let all = accept(dir.path(), &["a".into()]).expect("write");
        assert_eq!(all.len(), 1);
        let all = accept(dir.path(), &["b".into()]).expect("write");
        assert_eq!(read_accepted(dir.path()).expect("read"), all);

        let mut stored = vec![suspected("a"), suspected("c")];
        apply_accepted(&mut stored, &all);
        assert_eq!(stored[0].verdict.reason, Reason::AllTestsPassed);
        assert_eq!(stored[0].verdict.score, 1.0);
        let ev = stored[0].verdict.static_evidence.as_ref().expect("kept");
        assert!(ev.accepted && ev.hits.len() == 1);
        assert_eq!(stored[1].verdict.reason, Reason::ForgerySuspected);
    }

    #[test]
    fn a_broken_file_is_an_error_that_names_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        fs_err::write(dir.path().join(ACCEPTED_FILE), "[1, 2]").expect("write");
        let e = read_accepted(dir.path()).expect_err("bad");
        let text = e.to_string();
        assert!(
            text.contains(ACCEPTED_FILE) && text.contains("instance_ids"),
            "{text}"
        );
    }
}
