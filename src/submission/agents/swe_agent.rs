//! SWE-agent (0.x, its EnIGMA mode, and 1.x) and its sibling mini-swe-agent share a run's
//! layout: one `<id>/<id>.traj` (`.traj.json`) per instance, the submission in `info.submission`,
//! and `preds.json` (SWE-agent 0.x: `all_preds.jsonl`) beside them naming the model. This file
//! reads such runs into submissions, and SWE-agent's steps: a `.traj` file's `trajectory` (each
//! step's `action` is the command line, its `thought` the agent's words), or, in a 1.x file that
//! holds nothing else, its `history` (chat messages whose assistant turns carry `action`).
//!
//! EnIGMA (SWE-agent's CTF mode) submits a flag, not a patch: such a submission is named and
//! not graded.

use super::trajectory::{
    ActionKind, EditOp, Trajectory, TrajectoryShape, is_chat, openai_tool_calls, str_of, text_of,
};
use super::{
    AgentFormat, Folder, Ingest, IngestError, Ingested, join_note, parent_dir, read_json, str_at,
};
use crate::submission::Submitted;
use crate::submission::predictions::read_predictions;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Whether a `.traj` file's `trajectory` is SWE-agent's steps: a list whose steps carry their
/// `action` as a string.
pub fn is_traj_steps(steps: &[Value]) -> bool {
    !steps.is_empty()
        && steps
            .iter()
            .all(|s| s.get("action").is_none_or(Value::is_string))
        && steps.iter().any(|s| s.get("action").is_some())
}

/// Whether a `history` is SWE-agent's (chat messages, each with a `role`), not OpenHands' events
/// (each an `action` or an `observation`, with a `source`).
pub fn is_history(history: &[Value]) -> bool {
    is_chat(history)
}

/// SWE-agent's tools that take a block of file text after their first line, up to
/// `end_of_edit`: that text is a file's content, not a shell command (an `edit` may well write
/// the words `git pull` into a file). Their first line, and anything after the block, runs in the
/// shell like any other action (`open x && git log --all` runs both).
const BLOCK_TOOLS: [&str; 4] = ["edit", "insert", "append", "create"];

/// A SWE-agent action split at its block: the shell text (the whole action, less the file text of
/// a block tool) and, for a block tool, the block's text.
fn split_block(action: &str) -> (String, Option<String>) {
    let tool = action.split_whitespace().next().unwrap_or_default();
    if !BLOCK_TOOLS.contains(&tool) {
        return (action.to_owned(), None);
    }
    let mut lines = action.lines();
    let first = lines.next().unwrap_or_default();
    let block: Vec<&str> = lines
        .by_ref()
        .take_while(|l| l.trim() != "end_of_edit")
        .collect();
    let shell = std::iter::once(first)
        .chain(lines)
        .collect::<Vec<_>>()
        .join("\n");
    (shell, Some(block.join("\n")))
}

/// The first user message of a `history`, as the prompt.
fn history_prompt(line: &Value) -> Option<String> {
    line.get("history")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|m| str_of(m, "role") == Some("user"))
        .and_then(|m| m.get("content"))
        .map(text_of)
        .filter(|p| !p.is_empty())
}

/// One action at step `n`: a command (less an edit block's file text). A block's text is
/// shown as an edit of the file it goes into: the file `create` names, else the one `open` or
/// `create` opened last (`open`: the path the agent's tools edit next).
fn action(t: &mut Trajectory, n: usize, action: &str, open: &mut Option<String>) {
    let action = action.trim();
    if action.is_empty() {
        return;
    }
    t.tool_calls += 1;
    let (shell, block) = split_block(action);
    t.act(n, "bash", ActionKind::Command, &shell);
    let mut words = action.lines().next().unwrap_or_default().split_whitespace();
    let tool = words.next().unwrap_or_default();
    let path = words.next().map(|p| p.trim_matches(['"', '\'']).to_owned());
    if matches!(tool, "open" | "create") && path.is_some() {
        open.clone_from(&path);
    }
    // An edit the agent's tools make in its shell (0.x's block tools, 1.x's editor typed as a
    // command): counted as a file edit, never replayed (its result depends on the file's lines
    // at that moment); the audit reads it from the command.
    let editor = tool == "str_replace_editor"
        && matches!(
            path.as_deref(),
            Some("create" | "str_replace" | "insert" | "undo_edit")
        );
    if editor || (BLOCK_TOOLS.contains(&tool) && (block.is_some() || tool == "create")) {
        t.opaque(n, tool, format!("{tool} in SWE-agent's shell"));
    }
    let (Some(text), Some(file)) = (block.filter(|b| !b.is_empty()), open.clone()) else {
        return;
    };
    let op = if tool == "create" {
        EditOp::Write {
            path: file.clone(),
            content: text,
        }
    } else {
        EditOp::Replace {
            path: file.clone(),
            old: String::new(),
            new: text,
            replace_all: false,
        }
    };
    t.shown_op(n, tool, &file, Some(op));
}

/// Reads a `.traj` file's `trajectory` steps; the prompt is the first user message of its
/// `history`.
pub fn read_traj(steps: &[Value], line: &Value) -> Trajectory {
    let mut t = Trajectory::new(TrajectoryShape::SweAgentTraj);
    if let Some(p) = history_prompt(line) {
        t.prompt_at(0, &p);
    }
    let mut open = None;
    for (i, st) in steps.iter().enumerate() {
        let n = i + 1;
        t.words(n, str_of(st, "thought").unwrap_or_default());
        if let Some(a) = str_of(st, "action") {
            action(&mut t, n, a, &mut open);
        }
    }
    t.model = model_from_config(line);
    t
}

/// Reads a 1.x `.traj` file that holds only its `history`: the first user message is the
/// prompt; an assistant message's `thought` (else its content) is the agent's words, and its
/// `action` the command it ran (else the `command` of its tool calls).
pub fn read_history(history: &[Value], line: &Value) -> Trajectory {
    let mut t = Trajectory::new(TrajectoryShape::SweAgentHistory);
    let mut open = None;
    for (i, m) in history.iter().enumerate() {
        let n = i + 1;
        match str_of(m, "role") {
            Some("user") if t.prompt.is_none() => {
                t.prompt_at(n, &m.get("content").map(text_of).unwrap_or_default());
            }
            Some("assistant") => {
                let words = str_of(m, "thought")
                    .map(str::to_owned)
                    .unwrap_or_else(|| m.get("content").map(text_of).unwrap_or_default());
                t.words(n, &words);
                if let Some(a) = str_of(m, "action") {
                    action(&mut t, n, a, &mut open);
                } else {
                    for (tool, args) in openai_tool_calls(m) {
                        t.generic_call(n, tool, &args);
                    }
                }
            }
            _ => {}
        }
    }
    t.model = model_from_config(line);
    t
}

/// The steps of a SWE-agent or mini-swe-agent trajectory document, by the reader of its shape;
/// `None` when it holds none this file reads.
fn steps_of(v: &Value) -> Option<Trajectory> {
    if let Some(Value::Array(steps)) = v.get("trajectory")
        && is_traj_steps(steps)
    {
        return Some(read_traj(steps, v));
    }
    if super::mini_swe_agent::is_trajectory(v)
        && let Some(Value::Array(msgs)) = v.get("messages")
    {
        return Some(super::mini_swe_agent::read(msgs, v));
    }
    if let Value::Array(msgs) = v
        && is_chat(msgs)
    {
        return Some(super::mini_swe_agent::read(msgs, &Value::Null));
    }
    match v.get("history") {
        Some(Value::Array(h)) if is_history(h) => Some(read_history(h, v)),
        _ => None,
    }
}

/// Whether a submission is an answer rather than a patch: text that is no diff (EnIGMA's flag);
/// an empty submission is an empty patch.
fn is_answer(s: &str) -> bool {
    !s.trim().is_empty() && !is_patch_text(s)
}

/// Whether a submission is a patch: some line starts a file's diff (`diff --git`, or a `---`
/// line followed by a `+++` line). EnIGMA's flags and other answers are not.
fn is_patch_text(s: &str) -> bool {
    let mut prev_minus = false;
    for l in s.lines() {
        if l.starts_with("diff --git ") || (prev_minus && l.starts_with("+++ ")) {
            return true;
        }
        prev_minus = l.starts_with("--- ");
    }
    false
}

/// SWE-agent (`*.traj`) and mini-swe-agent (`*.traj.json`): `info.submission`, with the run's
/// `preds.json` (SWE-agent 0.x: `all_preds.jsonl`) for the model name and for instances that
/// have no trajectory. Each trajectory takes the nearest such file in its folder or one above it
/// (up to the folder given), so a parent folder of several runs keeps each run's model.
pub(super) fn ingest(
    path: &Path,
    folder: Option<&Folder>,
    suffix: &str,
    format: AgentFormat,
    instance: Option<&str>,
    ing: &mut Ingest,
) -> Result<(), IngestError> {
    // `--instance` names one file's instance when the trajectory names none (as the audit).
    let instance = instance.filter(|_| path.is_file());
    let (root, files) = match folder {
        Some(folder) => (
            path.to_owned(),
            folder
                .files_with(suffix, DEPTH)
                .map(|e| e.path().to_owned())
                .collect(),
        ),
        // One file: its run's predictions are in its folder or one above it, as in a folder
        // (`<run>/<id>/<id>.traj` beside `<run>/preds.json`, `trajs/<id>.traj` beside
        // `all_preds.jsonl`).
        None => {
            let folder = parent_dir(path);
            let root = folder
                .parent()
                .map_or_else(|| folder.clone(), Path::to_owned);
            (root, vec![path.to_owned()])
        }
    };
    let mut runs: BTreeMap<PathBuf, Preds> = BTreeMap::new();
    if let Some(p) = run_preds(&root) {
        runs.insert(p.clone(), patches_by_instance(&p, &mut ing.problems));
    }
    for file in files {
        let v = match read_json(&file) {
            Ok(v) => v,
            Err(e) => {
                ing.problems.push(format!("{e}; skipped"));
                continue;
            }
        };
        ing.files_read.insert(file.clone());
        let mut none = Preds::new();
        let from_preds = match nearest_preds(&file, &root) {
            Some(p) => runs
                .entry(p.clone())
                .or_insert_with(|| patches_by_instance(&p, &mut ing.problems)),
            None => &mut none,
        };
        let (mut item, answered) = trajectory_item(&file, &v, suffix, format, instance, from_preds);
        if item.submitted.is_none() {
            let why = match (answered, &item.note) {
                (true, Some(n)) => n.clone(),
                _ => "no info.submission".to_owned(),
            };
            ing.problems.push(format!("{}: {why}", file.display()));
        }
        if item.model.is_empty() {
            item.model = model_from_config(&v).unwrap_or_default();
        }
        ing.items.push(item);
    }
    for (preds_path, left) in runs {
        ing.files_read.insert(preds_path.clone());
        if folder.is_none() {
            // One trajectory was asked for: the run's other predictions are not part of it.
            continue;
        }
        for (id, (model, patch)) in left {
            if is_answer(&String::from_utf8_lossy(&patch)) {
                ing.problems.push(format!(
                    "{}: `{id}`: model_patch is not a patch but an answer (SWE-agent's EnIGMA mode submits a flag); skipped",
                    preds_path.display()
                ));
                continue;
            }
            ing.items.push(Ingested::new(
                id,
                model,
                Some(patch),
                format,
                preds_path.display().to_string(),
                Some(format!(
                    "from {} (no trajectory file)",
                    preds_path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default()
                )),
            ));
        }
    }
    Ok(())
}

/// How deep under a folder trajectories are looked for: as deep as every other file of a folder
/// (the audit reads them there too).
pub(super) const DEPTH: usize = super::folder::DEPTH;

/// Whether a folder holds SWE-agent trajectories, and why not.
pub(super) fn in_dir(folder: &Folder) -> (bool, &'static str) {
    (
        folder.files_with(".traj", DEPTH).next().is_some(),
        "no *.traj files",
    )
}

/// Whether a file is a SWE-agent trajectory: its name ends in `.traj`.
pub(super) fn is_file(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".traj"))
}

/// A run's predictions by instance: model and patch.
type Preds = BTreeMap<String, (String, Vec<u8>)>;

/// The predictions file a run keeps in `dir`: `preds.json`, else SWE-agent 0.x's
/// `all_preds.jsonl` (its `model_name_or_path` names the run).
fn run_preds(dir: &Path) -> Option<PathBuf> {
    ["preds.json", "all_preds.jsonl"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| crate::files::is_own_file(p))
}

/// The run's predictions file nearest a trajectory: in its folder or one above it, up to `root`.
fn nearest_preds(traj: &Path, root: &Path) -> Option<PathBuf> {
    traj.ancestors()
        .skip(1)
        .take_while(|d| d.starts_with(root))
        .find_map(run_preds)
}

/// The predictions files that belong to SWE-agent and mini-swe-agent runs under `dir`: read with their trajectories, not as predictions of their own.
pub(super) fn owned_preds(folder: &Folder) -> std::collections::BTreeSet<PathBuf> {
    folder
        .files_with(".traj", DEPTH)
        .chain(folder.files_with(".traj.json", DEPTH))
        .filter_map(|t| nearest_preds(t.path(), folder.root()))
        .collect()
}

/// The model a SWE-agent or mini-swe-agent trajectory names in its own configuration:
/// mini-swe-agent's `info.config.model.model_name`; SWE-agent 1.x's `replay_config` (a JSON
/// string, or an object) at `agent.model.name`.
pub(super) fn model_from_config(v: &Value) -> Option<String> {
    if let Some(m) = str_at(v, &["info", "config", "model", "model_name"]) {
        return Some(m.to_owned());
    }
    let replay = match v.get("replay_config")? {
        Value::String(text) => serde_json::from_str::<Value>(text).ok()?,
        other => other.clone(),
    };
    str_at(&replay, &["agent", "model", "name"])
        .or_else(|| str_at(&replay, &["agent", "model", "model_name"]))
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
}

/// A `preds.json` beside trajectories, when there is one: model and patch by instance.
fn patches_by_instance(preds_path: &Path, problems: &mut Vec<String>) -> Preds {
    let mut from_preds = BTreeMap::new();
    if preds_path.is_file() {
        match read_predictions(preds_path) {
            Ok(preds) => {
                for p in preds {
                    if let Submitted::Patch(b) = p.submitted {
                        from_preds.insert(p.instance_id, (p.model, b));
                    }
                }
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    from_preds
}

/// One trajectory file's submission; its entry in `from_preds` (taken out) gives the model, and
/// the patch when the trajectory has none. `true` beside it: the submission was an answer, not
/// a patch (its note says which).
fn trajectory_item(
    file: &Path,
    v: &Value,
    suffix: &str,
    format: AgentFormat,
    instance: Option<&str>,
    from_preds: &mut Preds,
) -> (Ingested, bool) {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let id = v
        .get("instance_id")
        .and_then(Value::as_str)
        .or(instance)
        .map(str::to_owned)
        .unwrap_or_else(|| name.trim_end_matches(suffix).to_owned());
    let exit = str_at(v, &["info", "exit_status"]).map(str::to_owned);
    // The steps, read as the audit reads them, counted for a person.
    let steps = steps_of(v).map(|t| t.counts());
    let mut note = steps.map(|c| c.to_string());
    if let Some(e) = exit {
        note = Some(join_note(note, &format!("exit status: {e}")));
    }
    let submitted = str_at(v, &["info", "submission"]);
    let answer = submitted.filter(|s| is_answer(s));
    let submission = submitted
        .filter(|_| answer.is_none())
        .map(|s| s.as_bytes().to_vec());
    if let Some(answer) = answer {
        // EnIGMA submits a CTF flag; any other answer that is no diff is not a patch either.
        note = Some(join_note(
            note,
            &format!(
                "info.submission is not a patch but an answer ({:?}{}; SWE-agent's EnIGMA mode submits a flag): nothing to grade",
                crate::text::one_line(&answer.chars().take(60).collect::<String>()),
                if answer.chars().count() > 60 {
                    "…"
                } else {
                    ""
                }
            ),
        ));
    }
    // The run's entry by the instance, else by the file's own name (`<id>.traj`, when
    // `--instance` named the instance another way).
    let (model, pred_patch) = from_preds
        .remove(&id)
        .or_else(|| from_preds.remove(name.trim_end_matches(suffix)))
        .map_or((String::new(), None), |(m, p)| (m, Some(p)));
    let pred_patch = pred_patch.filter(|_| answer.is_none());
    if let (Some(s), Some(p)) = (&submission, &pred_patch)
        && s != p
    {
        note = Some(join_note(
            note,
            "preds.json differs from the trajectory; the trajectory's info.submission is used",
        ));
    }
    let mut item = Ingested::new(
        id,
        model,
        submission.or(pred_patch),
        format,
        file.display().to_string(),
        note,
    );
    item.steps = steps;
    (item, answer.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Edits made in SWE-agent's shell are file edits: 0.x's block tools (with their block,
    /// and `create`) and 1.x's editor typed as a command (create, str_replace, insert,
    /// undo_edit); its views and other commands are not. Each is a command as well.
    #[test]
    fn edits_in_the_shell_are_counted_as_file_edits() {
        let steps: Vec<Value> = [
            "create a.py",
            "edit 1:1\nprint(1)\nend_of_edit",
            "open a.py",
            "str_replace_editor view /repo/a.py",
            "str_replace_editor create /repo/b.py --file_text 'x = 1'",
            "str_replace_editor str_replace /repo/b.py --old_str 1 --new_str 2",
            "python a.py",
        ]
        .iter()
        .map(|a| json!({"action": a, "observation": "", "thought": ""}))
        .collect();
        let t = read_traj(&steps, &json!({}));
        assert_eq!(t.tool_calls, 7);
        assert_eq!(t.commands().count(), 7);
        assert_eq!(t.file_edit_count(), 4);
    }
}
