//! Trajectory releases: one JSON line per trial, as `beyondswe release from-harbor` writes them
//! (the trial's `task_name`, `instance_id` where its task names one, `agent`, `model`, `reward`,
//! the patch it published as `patch` or `patch_base64`, its `trajectory`) and as published
//! trajectory sets carry them (`task_name`, `reward`, the agent's `events` or `trajectory`,
//! maybe no patch). A line is a submission: `ingest` reads a release like any agent's output,
//! and `verify` grades the same submissions ([`line_submission`]).

use super::folder::Folder;
use super::{AgentFormat, Ingest, IngestError, Ingested};
use serde_json::Value;
use std::path::Path;

/// Whether a record is a release line: it names a Harbor task (`task_name`, a string), and is
/// no OpenHands output line (`test_result`).
pub(super) fn is_line(v: &Value) -> bool {
    v.get("task_name").is_some_and(Value::is_string) && v.get("test_result").is_none()
}

/// Why a first record is not a release line, for the formats tried.
pub(super) const NOT_A_LINE: &str = "first record names no Harbor task (`task_name`)";

/// The release files of a folder, six levels down: every `.jsonl` whose first record naming
/// an instance is a release line.
fn release_files(folder: &Folder) -> impl Iterator<Item = &Path> {
    folder
        .files_with(".jsonl", super::folder::DEPTH)
        .filter(|e| e.lines_format() == Some(AgentFormat::Release))
        .map(|e| e.path())
}

/// Whether a folder holds a release, and why not.
pub(super) fn in_dir(folder: &Folder) -> (bool, &'static str) {
    (
        release_files(folder).next().is_some(),
        "no trajectory release (JSON lines naming a Harbor task: `task_name`)",
    )
}

/// Where a line stands among its task's lines: by the trial's start time, then its name, as a
/// job's trials are numbered (a release of a job numbers its attempts as the job does); lines
/// that carry neither keep the release's order.
pub fn attempt_order(v: &Value) -> (String, String) {
    let text = |path: &[&str]| {
        path.iter()
            .try_fold(v, |v, k| v.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    (text(&["trial_result", "started_at"]), text(&["trial_name"]))
}

/// The attempt of each of `lines` (each `(instance, attempt_order)`, in the release's order):
/// from 1 within its instance, in [`attempt_order`] (ties in the release's order), after the
/// `earlier` attempts an instance already has.
pub fn number_attempts(
    lines: &[(String, (String, String))],
    earlier: impl Fn(&str) -> u32,
) -> Vec<u32> {
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by(|&a, &b| (&lines[a].0, &lines[a].1).cmp(&(&lines[b].0, &lines[b].1)));
    let mut out = vec![0; lines.len()];
    let mut last: Option<(&str, u32)> = None;
    for i in order {
        let id = lines[i].0.as_str();
        let n = match last {
            Some((prev, n)) if prev == id => n + 1,
            _ => earlier(id) + 1,
        };
        out[i] = n;
        last = Some((id, n));
    }
    out
}

/// What one release line submitted.
#[derive(Debug, Clone, PartialEq)]
pub struct LineSubmission {
    /// The instance: the line's `instance_id`, else its Harbor task name.
    pub instance_id: String,
    /// `agent/model` as Harbor names them (as a job directory's trial is ingested), or the
    /// one the line gives.
    pub model: String,
    /// The published patch (`patch`, or `patch_base64` for one that is not UTF-8); `None`
    /// when the line carries none.
    pub patch: Option<Vec<u8>>,
    /// The reward the release claims.
    pub reward: Option<f64>,
    /// The trial's error, when it recorded one.
    pub error: Option<String>,
}

/// The instance a line is about: its `instance_id` (the dataset's id, which a Harbor task
/// names in its `task.toml`), else its Harbor task name; for ingest, `verify` and the audit
/// alike.
pub fn line_instance(v: &Value) -> Option<&str> {
    v.get("instance_id")
        .or(v.get("task_name"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The reward a line claims: its `reward`, else what Harbor recorded (the line's own
/// `verifier_result`, or its `trial_result`'s), else an AweAgent line's score; for ingest,
/// `verify` and the audit alike.
pub fn line_reward(v: &Value) -> Option<f64> {
    v.get("reward")
        .and_then(Value::as_f64)
        .or_else(|| crate::harbor::trial_reward(v))
        .or_else(|| v.get("trial_result").and_then(crate::harbor::trial_reward))
        .or_else(|| super::aweagent::reward(v))
}

/// What a release line submitted, or why it names no instance. A `patch_base64` that does not
/// decode is an error too: the line claims a patch that cannot be read.
pub fn line_submission(v: &Value) -> Result<LineSubmission, String> {
    let Some(instance_id) = line_instance(v) else {
        return Err("no `instance_id` or `task_name`".into());
    };
    let text = |k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let model = match (text("agent"), text("model")) {
        (Some(a), Some(m)) => format!("{a}/{m}"),
        (a, m) => m.or(a).unwrap_or_default().to_owned(),
    };
    let patch = match (
        v.get("patch").or(v.get("model_patch")),
        text("patch_base64"),
    ) {
        (Some(Value::String(p)), _) => Some(p.as_bytes().to_vec()),
        (_, Some(b)) => Some(
            crate::base64::decode(b)
                .ok_or("`patch_base64` is not base64: the patch it claims cannot be read")?,
        ),
        _ => None,
    };
    let error = v.get("exception").filter(|e| !e.is_null()).map(|e| {
        match e.get("exception_type").and_then(Value::as_str) {
            Some(t) => format!(
                "{t}: {}",
                e.get("exception_message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ),
            None => e.as_str().map_or_else(|| e.to_string(), str::to_owned),
        }
    });
    Ok(LineSubmission {
        instance_id: instance_id.to_owned(),
        model,
        patch,
        reward: line_reward(v),
        error,
    })
}

/// Every line of a release file (a folder: of each release in it) as a submission, a task's
/// lines numbered as its attempts; a line that names no instance, or whose patch cannot be
/// read, is a problem.
pub(super) fn ingest(
    path: &Path,
    folder: Option<&Folder>,
    ing: &mut Ingest,
) -> Result<(), IngestError> {
    if let Some(folder) = folder {
        for file in release_files(folder) {
            ingest(file, None, ing)?;
        }
        return Ok(());
    }
    ing.files_read.insert(path.to_owned());
    let first = ing.items.len();
    let mut keys = Vec::new();
    super::each_jsonl(path, ing, |ing, line, v| {
        let source = format!("{}:{line}", path.display());
        let s = match line_submission(&v) {
            Ok(s) => s,
            Err(why) => {
                ing.problems.push(format!("{source}: {why}; skipped"));
                return;
            }
        };
        let mut note = s.error.map(|e| format!("trial error: {e}"));
        if s.patch.is_none() {
            let none = "the release line carries no patch (`patch` or `patch_base64`)";
            note = Some(note.map_or_else(|| none.to_owned(), |n| format!("{n}; {none}")));
        }
        let mut item = Ingested::new(
            s.instance_id,
            s.model,
            s.patch,
            AgentFormat::Release,
            source,
            note,
        );
        item.steps = super::read_line(&v).map(|t| t.counts());
        item.reward = s.reward;
        keys.push((item.instance_id.clone(), attempt_order(&v)));
        ing.items.push(item);
    })?;
    // A release holds every trial: a task's lines are its attempts, numbered as its job's
    // trials are, after those of the releases read before this one.
    let (before, now) = ing.items.split_at_mut(first);
    let earlier = |id: &str| {
        before
            .iter()
            .filter(|i| i.format == AgentFormat::Release && i.instance_id == id)
            .count() as u32
    };
    for (item, n) in now.iter_mut().zip(number_attempts(&keys, earlier)) {
        item.attempt = n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_line_names_its_instance_model_patch_and_reward() {
        let s = line_submission(
            &json!({"task_name": "acme_calc_pr7", "agent": "claude-code",
            "model": "m", "patch": "diff", "reward": 1.0}),
        )
        .unwrap();
        assert_eq!(s.instance_id, "acme_calc_pr7");
        assert_eq!(s.model, "claude-code/m");
        assert_eq!(s.patch.as_deref(), Some(&b"diff"[..]));
        assert_eq!(s.reward, Some(1.0));
        // The task's instance id, where the line gives one, wins over Harbor's task name.
        let s = line_submission(
            &json!({"task_name": "t", "instance_id": "Acme_X_pr1", "patch_base64": "ZGlmZv8="}),
        )
        .unwrap();
        assert_eq!(s.instance_id, "Acme_X_pr1");
        assert_eq!(s.patch.as_deref(), Some(&b"diff\xff"[..]));
        assert_eq!(s.model, "");
    }

    #[test]
    fn a_lines_reward_is_its_own_else_the_one_harbor_recorded() {
        let trial = json!({"verifier_result": {"rewards": {"reward": 0.5}}});
        assert_eq!(
            line_reward(&json!({"reward": 1.0, "trial_result": trial})),
            Some(1.0)
        );
        assert_eq!(
            line_reward(&json!({"task_name": "t", "trial_result": trial})),
            Some(0.5)
        );
        assert_eq!(line_reward(&json!({"task_name": "t"})), None);
    }

    #[test]
    fn a_line_without_an_instance_or_with_a_bad_patch_says_why() {
        let e = line_submission(&json!({"task_name": "", "patch": "x"})).unwrap_err();
        assert!(e.contains("task_name"), "{e}");
        let e =
            line_submission(&json!({"task_name": "t", "patch_base64": "not base64!"})).unwrap_err();
        assert!(e.contains("patch_base64"), "{e}");
        let s = line_submission(&json!({"task_name": "t", "events": [],
            "exception": {"exception_type": "AgentTimeoutError", "exception_message": "x"}}))
        .unwrap();
        assert_eq!(s.patch, None);
        assert_eq!(s.error.as_deref(), Some("AgentTimeoutError: x"));
    }

    #[test]
    fn a_tasks_lines_are_its_attempts_by_start_time_then_name_else_in_order() {
        let key = |t: &str, started: &str, name: &str| {
            (t.to_owned(), (started.to_owned(), name.to_owned()))
        };
        let lines = [
            key("a", "2026-03-25T10:00:02", "a__x"),
            key("b", "", ""),
            key("a", "2026-03-25T10:00:01", "a__y"),
            key("b", "", ""),
            key("a", "2026-03-25T10:00:01", "a__w"),
        ];
        assert_eq!(number_attempts(&lines, |_| 0), vec![3, 1, 2, 2, 1]);
        // After the attempts a task already has (an earlier release of the folder).
        assert_eq!(
            number_attempts(&lines, |id| u32::from(id == "b") * 5),
            vec![3, 6, 2, 7, 1]
        );
    }

    #[test]
    fn a_release_line_is_neither_openhands_nor_a_record_without_a_task() {
        assert!(is_line(&json!({"task_name": "t", "events": []})));
        assert!(!is_line(&json!({"task_name": "t", "test_result": {}})));
        assert!(!is_line(
            &json!({"instance_id": "i", "patch": "", "trajectory": []})
        ));
        assert!(!is_line(&json!({"task_name": 3})));
    }
}
