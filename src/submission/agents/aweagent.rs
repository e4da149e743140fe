//! AweAgent (the official BeyondSWE harness): a run's `trajectories.jsonl` (one line per
//! instance: `patch`, `score`, `trajectory` steps) with its `run_config.json` (the model), read
//! into submissions; and its steps: each step's `action` holds the agent's words (`content`)
//! and its OpenAI-style `tool_calls`.

use super::trajectory::{Trajectory, TrajectoryShape, openai_tool_calls, str_of};
use super::{
    AgentFormat, Folder, Ingest, IngestError, Ingested, each_jsonl, instance_id, parent_dir,
    read_json, str_at,
};
use serde_json::Value;
use std::path::Path;

/// Whether a folder is an AweAgent run, and why not.
pub(super) fn in_dir(folder: &Folder) -> (bool, &'static str) {
    (
        run_files(folder).next().is_some(),
        "no trajectories.jsonl, and no JSON lines whose records carry `patch` with `trajectory`/`stats`",
    )
}

/// A folder's AweAgent runs, six levels down: each `trajectories.jsonl` in the folder itself,
/// and each `.jsonl` file whose first record naming an instance is AweAgent's, as the audit
/// reads them (a run kept in a sub-folder, a renamed file, a line before the records).
fn run_files(folder: &Folder) -> impl Iterator<Item = &Path> {
    folder
        .files_with(".jsonl", super::folder::DEPTH)
        .filter(|e| {
            (e.depth() == 1 && e.name() == "trajectories.jsonl")
                || e.lines_format() == Some(AgentFormat::Aweagent)
        })
        .map(|e| e.path())
}

/// Whether a file is AweAgent's `trajectories.jsonl`, from its first record, and why not.
pub(super) fn is_file(first: Option<&Value>) -> (bool, &'static str) {
    let has = |k: &str| first.is_some_and(|v| v.get(k).is_some());
    (
        has("patch") && (has("trajectory") || has("stats")),
        "first record has no `patch` with `trajectory`/`stats`",
    )
}

/// Whether a release line's `trajectory` is AweAgent's steps (some with an `action`).
pub fn is_steps(steps: &[Value]) -> bool {
    steps.iter().any(|s| s.get("action").is_some())
}

/// The reward an AweAgent line records: its `score`.
pub fn score(line: &Value) -> Option<f64> {
    line.get("score").and_then(Value::as_f64)
}

/// [`score`] where `line` is AweAgent's (its `trajectory` is AweAgent's steps): the audit's
/// reward for a line, as ingest takes it for the submission.
pub fn reward(line: &Value) -> Option<f64> {
    line.get("trajectory")
        .and_then(Value::as_array)
        .is_some_and(|s| is_steps(s))
        .then(|| score(line))
        .flatten()
}

/// Reads AweAgent's steps; the line's `problem_statement` (or `instruction`) is the prompt.
pub fn read_steps(steps: &[Value], line: &Value) -> Trajectory {
    let mut t = Trajectory::new(TrajectoryShape::AweagentSteps);
    if let Some(p) = str_of(line, "problem_statement").or(str_of(line, "instruction")) {
        t.prompt_at(0, p);
    }
    for (i, st) in steps.iter().enumerate() {
        let n = st
            .get("step")
            .and_then(Value::as_u64)
            .map_or(i + 1, |x| x as usize);
        let action = st.get("action").unwrap_or(&Value::Null);
        t.words(n, str_of(action, "content").unwrap_or_default());
        for (tool, args) in openai_tool_calls(action) {
            t.generic_call(n, tool, &args);
        }
    }
    t
}

pub(super) fn ingest(
    path: &Path,
    folder: Option<&Folder>,
    ing: &mut Ingest,
) -> Result<(), IngestError> {
    if let Some(folder) = folder {
        for file in run_files(folder) {
            ingest(file, None, ing)?;
        }
        return Ok(());
    }
    // A run's model is in the `run_config.json` beside its trajectories.
    let (dir, file) = (parent_dir(path), path.to_owned());
    let model = read_json(&dir.join("run_config.json"))
        .ok()
        .and_then(|c| {
            str_at(&c, &["config", "llm", "model"])
                .or(str_at(&c, &["run_id"]))
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "aweagent".into());
    ing.files_read.insert(file.clone());
    ing.files_read.insert(dir.join("run_config.json"));
    each_jsonl(&file, ing, |ing, line, v| {
        let source = format!("{}:{line}", file.display());
        let Some(id) = instance_id(&v, &source, &mut ing.problems) else {
            return;
        };
        let patch = v
            .get("patch")
            .and_then(Value::as_str)
            .map(|s| s.as_bytes().to_vec());
        if patch.is_none() {
            ing.problems.push(format!("{source}: no `patch`"));
        }
        let note = v
            .get("error")
            .and_then(Value::as_str)
            .map(|e| format!("agent error: {e}"));
        let mut item = Ingested::new(
            id.to_owned(),
            model.clone(),
            patch,
            AgentFormat::Aweagent,
            source,
            note,
        );
        item.steps = v
            .get("trajectory")
            .and_then(Value::as_array)
            .filter(|s| is_steps(s))
            .map(|s| read_steps(s, &v).counts());
        item.reward = score(&v);
        ing.items.push(item);
    })
}
