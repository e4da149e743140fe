//! Harbor job directories: one trial directory per attempt, its task from `result.json` (never
//! the directory's name), its patch from the trial's collected artifacts, its reward, its error,
//! and its agent's raw log (read by that agent's reader) or its ATIF trajectory (`atif.rs`).

use super::trajectory::TrajectoryShape;
use super::{AgentFormat, Ingest, IngestError, Ingested, join_note, read_optional, sniff, str_at};
use crate::submission::Submitted;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Harbor job directories: the task from `result.json` (never the directory name), the patch from
/// the trial's collected artifacts, attempts numbered by start time.
/// Whether a folder is a Harbor job (or jobs) directory, and why not.
pub(super) fn in_dir(path: &Path) -> (bool, &'static str) {
    (
        !crate::harbor::trial_dirs(path).is_empty(),
        "no trial directory with a result.json naming a task_name",
    )
}

pub(super) fn ingest(path: &Path, max_patch: u64, ing: &mut Ingest) -> Result<(), IngestError> {
    let trials = crate::harbor::trial_dirs(path);
    if trials.is_empty() {
        return Err(IngestError::Bad {
            path: path.to_owned(),
            message: "no trial directories (result.json with task_name) found".into(),
        });
    }
    // A job is read as one thing: its trials, and its own configuration and log beside them.
    ing.dirs_read.push(path.to_owned());
    for t in in_order(trials) {
        let item = harbor_trial(
            &t.instance,
            t.attempt,
            &t.dir,
            &t.result,
            max_patch,
            &mut ing.problems,
        )?;
        ing.items.push(item);
    }
    Ok(())
}

/// One trial of a job, numbered among its instance's.
pub(crate) struct OrderedTrial {
    /// The instance it ran ([`crate::harbor::trial_instance`]).
    pub instance: String,
    /// Its attempt, from 1, by start time among the trials of its instance.
    pub attempt: u32,
    /// Its directory.
    pub dir: PathBuf,
    /// Its `result.json`.
    pub result: Value,
}

/// A job's trials (`crate::harbor::trial_dirs`) by instance, and by start time (then directory)
/// within one: the order and attempts ingest and the audit both give them.
pub(crate) fn in_order(trials: Vec<(PathBuf, Value)>) -> Vec<OrderedTrial> {
    let mut out = Vec::new();
    for (task, mut list) in trials_by_task(trials) {
        list.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        for (n, (_, dir, result)) in list.into_iter().enumerate() {
            out.push(OrderedTrial {
                instance: task.clone(),
                attempt: (n + 1) as u32,
                dir,
                result,
            });
        }
    }
    out
}

/// What a trial left to read its agent's steps from: the one rule ingest (and its replay) and
/// the audit both follow.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TrialSteps {
    /// The agent's raw log (a Claude Code or Codex transcript with its sub-agents' files), of
    /// the shape its first file has, read by that agent's reader: it holds more than the ATIF
    /// trajectory Harbor makes of it.
    Log(Vec<PathBuf>, TrajectoryShape),
    /// Its ATIF trajectory, `agent/trajectory.json`.
    Trajectory(PathBuf),
    /// Harbor's own agent (`oracle`, `nop`) ran and left no trajectory: no model, no steps.
    BuiltIn(String),
    /// Neither a log nor a trajectory.
    Missing,
}

/// Where the steps of the trial in `dir` (its `result.json` is `result`) are to be read.
pub(crate) fn trial_steps(dir: &Path, result: &Value) -> TrialSteps {
    if let Some(files) = crate::harbor::trial_agent_log(dir)
        && let Some(Ok(Some(shape))) = files.first().map(|f| sniff(f))
    {
        return TrialSteps::Log(files, shape);
    }
    let trajectory = dir.join(TRAJECTORY);
    if crate::files::is_own_file(&trajectory) {
        return TrialSteps::Trajectory(trajectory);
    }
    match crate::harbor::built_in_agent(result) {
        Some(agent) => TrialSteps::BuiltIn(agent.to_owned()),
        None => TrialSteps::Missing,
    }
}

/// A trial's ATIF trajectory, relative to its directory.
pub(crate) const TRAJECTORY: &str = "agent/trajectory.json";

/// What a trial without steps to read says, for a person.
pub(crate) const NO_STEPS: &str = "no agent log (agent/claude-code.txt, agent/codex.txt, agent/sessions/) and no agent/trajectory.json";

/// A trial's start time, directory and `result.json`.
type Trial = (String, PathBuf, Value);

/// Trials grouped by the instance they ran (the task's `instance_id`, else Harbor's task name).
fn trials_by_task(trials: Vec<(PathBuf, Value)>) -> BTreeMap<String, Vec<Trial>> {
    let mut by_task: BTreeMap<String, Vec<Trial>> = BTreeMap::new();
    for (dir, v) in trials {
        let task = crate::harbor::trial_instance(&v);
        let started = v
            .get("started_at")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        by_task.entry(task).or_default().push((started, dir, v));
    }
    by_task
}

/// One trial as a submission: agent and model, reward, patch (links out of the trial refused, in
/// `problems`), the trial's error and the agent's raw log.
fn harbor_trial(
    task: &str,
    attempt: u32,
    dir: &Path,
    v: &Value,
    max_patch: u64,
    problems: &mut Vec<String>,
) -> Result<Ingested, IngestError> {
    let model = str_at(v, &["config", "agent", "model_name"])
        .map(str::to_owned)
        .or_else(|| str_at(v, &["agent_info", "model_info", "name"]).map(str::to_owned))
        .unwrap_or_default();
    let agent = str_at(v, &["agent_info", "name"]).unwrap_or_default();
    let reward = crate::harbor::trial_reward(v);
    let lookup = crate::harbor::find_trial_patch(dir);
    for (link, target) in &lookup.refused {
        problems.push(format!(
            "{}: leads out of the trial directory (to {}); not read",
            link.display(),
            target.display()
        ));
    }
    let patch = read_optional(lookup.found.as_ref(), max_patch)?;
    let mut note = v.get("exception_info").filter(|e| !e.is_null()).map(|e| {
        format!(
            "trial error: {}: {}",
            str_at(e, &["exception_type"]).unwrap_or("?"),
            str_at(e, &["exception_message"]).unwrap_or("")
        )
    });
    if patch.is_none() {
        note = Some(join_note(
            note,
            "no patch in artifacts/ (see README: collect one with a post-agent step)",
        ));
    }
    // The files a replay reads the agent's edits from: the ones the audit reads its steps from.
    let steps_read = trial_steps(dir, v);
    let steps = trial_trajectory(dir, &steps_read).map(|t| t.counts());
    let transcript = match steps_read {
        TrialSteps::Log(files, _) => files,
        TrialSteps::Trajectory(t) => vec![t],
        TrialSteps::BuiltIn(_) => Vec::new(),
        TrialSteps::Missing => {
            note = Some(join_note(note, NO_STEPS));
            Vec::new()
        }
    };
    Ok(Ingested {
        instance_id: task.to_owned(),
        attempt,
        model: if agent.is_empty() {
            model
        } else {
            format!("{agent}/{model}")
        },
        submitted: patch.map(Submitted::Patch),
        format: AgentFormat::HarborJob,
        source: dir.display().to_string(),
        reward,
        note,
        transcript,
        reconstructed: false,
        steps,
    })
}

/// A trial's `agent/trajectory.json` (at `path`), parsed.
pub(super) fn trial_document(dir: &Path, path: &Path) -> Result<Value, String> {
    let text = crate::record::read_text_capped(path)
        .map_err(|_| format!("{}: {NO_STEPS}", dir.display()))?;
    serde_json::from_str::<Value>(&text)
        .map_err(|e| format!("{}: agent/trajectory.json is not JSON: {e}", dir.display()))
}

/// The steps of a trial (`dir`, its [`trial_steps`]), read as the audit reads them: the raw
/// log, else the ATIF trajectory; `None` where it holds none to read (Harbor's own agent,
/// nothing left) or they could not be read.
fn trial_trajectory(dir: &Path, steps: &TrialSteps) -> Option<super::Trajectory> {
    match steps {
        TrialSteps::Log(files, shape) => super::read_transcripts_as(files, *shape).ok(),
        TrialSteps::Trajectory(path) => {
            let t = trial_document(dir, path).ok()?;
            super::atif::is_atif(&t, false).then(|| super::atif::read(&t))
        }
        TrialSteps::BuiltIn(_) | TrialSteps::Missing => None,
    }
}
