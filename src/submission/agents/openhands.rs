//! OpenHands: its evaluation output (`output.jsonl`, the patch in `test_result.git_patch`, the
//! events in `history`) and its event streams (a JSON list of actions and observations, no
//! patch), detected, read into submissions, and their steps read: a `run` action's command, a
//! `browse` action's page, an agent message's words, a tool call behind any other action.

use super::trajectory::{Trajectory, TrajectoryShape, str_of, text_of};
use super::{
    AgentFormat, Folder, Ingest, IngestError, Ingested, each_jsonl, instance_from_file_name,
    instance_id, read_json, str_at,
};
use serde_json::Value;
use std::path::Path;

/// Reads an OpenHands history (`history`), with the `instruction` recorded beside it as the
/// prompt (step 0) when there is one; steps are the events' places from 1.
pub fn read_history(history: &[Value], instruction: Option<&str>) -> Trajectory {
    let mut t = Trajectory::new(TrajectoryShape::OpenhandsHistory);
    if let Some(p) = instruction {
        t.prompt_at(0, p);
    }
    for (i, h) in history.iter().enumerate() {
        let n = i + 1;
        if let Some(kind) = str_of(h, "kind") {
            // The software-agent SDK's (v1) events carry their type in `kind`.
            sdk_event(&mut t, n, kind, h);
            continue;
        }
        let args = h.get("args").unwrap_or(&Value::Null);
        match (str_of(h, "source"), str_of(h, "action")) {
            (Some("user"), Some("message")) if t.prompt.is_none() => {
                t.prompt_at(n, &args.get("content").map(text_of).unwrap_or_default());
            }
            (Some("agent"), Some(action)) => action_steps(&mut t, n, action, h, args),
            _ => {}
        }
        if t.model.is_none() {
            t.model =
                str_at(h, &["tool_call_metadata", "model_response", "model"]).map(str::to_owned);
        }
    }
    t
}

/// One event of the software-agent SDK (v1) at step `n`: a user `MessageEvent` is the prompt
/// (the first) and an agent's its words; an `ActionEvent`'s thought and reasoning are words, and
/// its `action` is read by kind: a terminal's command, an editor's file, a browser's page, a
/// finish or think's words. An action of any other kind is unread, so a history holding one is
/// never called clean. Observations and system events hold nothing the checks read.
fn sdk_event(t: &mut Trajectory, n: usize, kind: &str, h: &Value) {
    use super::trajectory::ActionKind;
    match kind {
        "MessageEvent" => {
            let text = h
                .get("llm_message")
                .and_then(|m| m.get("content"))
                .map(text_of)
                .unwrap_or_default();
            match str_of(h, "source") {
                Some("user") if t.prompt.is_none() => t.prompt_at(n, &text),
                Some("agent") => t.words(n, &text),
                _ => {}
            }
        }
        "ActionEvent" => {
            t.words(n, &h.get("thought").map(text_of).unwrap_or_default());
            t.words(
                n,
                &h.get("reasoning_content").map(text_of).unwrap_or_default(),
            );
            let action = h.get("action").unwrap_or(&Value::Null);
            let tool = str_of(h, "tool_name").unwrap_or("tool");
            let action_kind = str_of(action, "kind").unwrap_or_default();
            t.tool_calls += 1;
            match action_kind {
                "ExecuteBashAction" | "TerminalAction" | "BashAction" => {
                    match str_of(action, "command").filter(|c| !c.trim().is_empty()) {
                        Some(c) => {
                            t.act(n, tool, ActionKind::Command, c);
                        }
                        None => {
                            t.act(n, tool, ActionKind::Other, "");
                        }
                    }
                }
                "FileEditorAction" | "StrReplaceEditorAction" => {
                    t.shown_edit(n, tool, str_of(action, "path").unwrap_or_default(), action);
                }
                "FinishAction" | "ThinkAction" => {
                    let words = str_of(action, "message")
                        .or(str_of(action, "thought"))
                        .unwrap_or_default();
                    t.words(n, words);
                }
                k if k.starts_with("Browser") || k.contains("Browse") => {
                    if !t.arguments(n, tool, action) {
                        t.act(n, tool, ActionKind::Other, "");
                    }
                }
                other => t.unread(
                    n,
                    tool,
                    format!("an OpenHands SDK action of kind `{other}` is not read"),
                ),
            }
        }
        _ => {}
    }
    if t.model.is_none() {
        t.model = str_at(h, &["llm_response", "model"]).map(str::to_owned);
    }
}

/// One agent action of a history (`h`, at step `n`): the commands it ran, the pages it opened,
/// or its words and the tool call behind them.
fn action_steps(t: &mut Trajectory, n: usize, action: &str, h: &Value, args: &Value) {
    use super::trajectory::ActionKind;
    match action {
        "run" | "run_ipython" => {
            t.tool_calls += 1;
            for key in ["command", "code"] {
                if let Some(c) = str_of(args, key) {
                    t.act(n, "run", ActionKind::Command, c);
                }
            }
        }
        "browse" => {
            t.tool_calls += 1;
            if let Some(u) = str_of(args, "url") {
                t.act(n, "browse", ActionKind::Url, u);
            }
        }
        "browse_interactive" => {
            t.tool_calls += 1;
            let actions = str_of(args, "browser_actions").unwrap_or_default();
            for u in crate::text::urls(actions) {
                t.act(n, "browse_interactive", ActionKind::Url, &u);
            }
        }
        _ => {
            let words = args
                .get("content")
                .or(args.get("thought"))
                .map(text_of)
                .unwrap_or_default();
            if !words.is_empty() {
                t.act(n, action, ActionKind::Message, &words);
            }
            if let Some(tool) = h
                .get("tool_call_metadata")
                .and_then(|m| str_of(m, "function_name"))
            {
                t.generic_call(n, tool, args);
            }
        }
    }
}

/// Whether a folder holds OpenHands output, and why not.
pub(super) fn in_dir(folder: &Folder) -> (bool, &'static str) {
    (
        output_files(folder).next().is_some() || event_files(folder).next().is_some(),
        "no output.jsonl, and no OpenHands event stream (a .json list of actions and \
         observations)",
    )
}

/// Whether a file is OpenHands output (its first record has `test_result`) or an event stream,
/// and why not.
pub(super) fn is_file(path: &Path, first: Option<&Value>) -> (bool, &'static str) {
    (
        first.is_some_and(|v| v.get("test_result").is_some()) || openhands_events(path).is_some(),
        "first record has no `test_result`, and the file is no list of OpenHands events",
    )
}

/// Whether `events` is an OpenHands event stream: each an action (`action`) or an observation
/// (`observation`), at least one an action.
pub fn is_openhands_events(events: &[Value]) -> bool {
    events
        .iter()
        .all(|e| e.get("action").is_some() || e.get("observation").is_some())
        && events.iter().any(|e| e.get("action").is_some())
}

/// The events of an OpenHands event stream file (`.json`, see [`is_openhands_events`]). A file
/// whose first character is not `[` is no list, and is not parsed (a folder's Gemini CLI
/// recordings and trajectories are objects, some of them large).
pub fn openhands_events(path: &Path) -> Option<Vec<Value>> {
    if path.extension().is_none_or(|e| e != "json") {
        return None;
    }
    let mut head = [0u8; 512];
    let n = std::io::Read::read(&mut crate::files::open_input(path).ok()?, &mut head).ok()?;
    let first = head[..n]
        .strip_prefix(b"\xef\xbb\xbf")
        .unwrap_or(&head[..n])
        .iter()
        .find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'[') {
        return None;
    }
    match read_json(path).ok()? {
        Value::Array(events) if is_openhands_events(&events) => Some(events),
        _ => None,
    }
}

/// A folder's OpenHands event-stream files (`*.json`, as deep as the folder is read, as the
/// audit reads them), with their events; each file is parsed once, whoever asks first.
fn event_files(folder: &Folder) -> impl Iterator<Item = (&Path, &[Value])> {
    folder
        .files_with(".json", super::folder::DEPTH)
        .filter_map(|e| Some((e.path(), e.openhands_events()?)))
}

/// The evaluation outputs under a folder, six levels down: each `output.jsonl`, and each other
/// `.jsonl` file whose first record naming an instance has a `test_result`, as the audit reads
/// them (a renamed output, or one with a line before its records).
fn output_files(folder: &Folder) -> impl Iterator<Item = &Path> {
    folder
        .files_with(".jsonl", 6)
        .filter(|e| e.name() == "output.jsonl" || e.lines_format() == Some(AgentFormat::Openhands))
        .map(|e| e.path())
}

/// An OpenHands event stream: what the agent did, with no patch (the workspace's diff is not in
/// it); its instance is the file's name.
fn openhands_stream(file: &Path, events: &[Value], ing: &mut Ingest) {
    ing.files_read.insert(file.to_owned());
    let id = instance_from_file_name(file).unwrap_or_default();
    let model = events
        .iter()
        .find_map(|e| str_at(e, &["tool_call_metadata", "model_response", "model"]))
        .unwrap_or_default()
        .to_owned();
    let actions = events.iter().filter(|e| e.get("action").is_some()).count();
    let mut item = Ingested::new(
        id,
        model,
        None,
        AgentFormat::Openhands,
        file.display().to_string(),
        Some(format!(
            "an OpenHands event stream ({actions} actions): no patch in it; capture the \
             workspace's diff (`beyondswe capture`) to grade it"
        )),
    );
    // Its steps as the audit reads a stream: a history.
    item.steps = Some(read_history(events, None).counts());
    ing.items.push(item);
}

pub(super) fn ingest(
    path: &Path,
    folder: Option<&Folder>,
    ing: &mut Ingest,
) -> Result<(), IngestError> {
    if let Some(folder) = folder {
        // Every `output.jsonl` (an evaluation folder keeps it deep:
        // `outputs/<dataset>/<agent>/<model>_maxiter_N/`) and every event stream, each read once.
        for output in output_files(folder) {
            ingest(output, None, ing)?;
        }
        for (file, events) in event_files(folder) {
            openhands_stream(file, events, ing);
        }
        return Ok(());
    }
    if let Some(events) = openhands_events(path) {
        openhands_stream(path, &events, ing);
        return Ok(());
    }
    let file = path.to_owned();
    ing.files_read.insert(file.clone());
    each_jsonl(&file, ing, |ing, line, v| {
        let source = format!("{}:{line}", file.display());
        let Some(id) = instance_id(&v, &source, &mut ing.problems) else {
            return;
        };
        let patch = str_at(&v, &["test_result", "git_patch"]).map(|s| s.as_bytes().to_vec());
        if patch.is_none() {
            ing.problems
                .push(format!("{source}: no test_result.git_patch"));
        }
        let error = v
            .get("error")
            .and_then(Value::as_str)
            .map(|e| format!("agent error: {e}"));
        let model = str_at(&v, &["metadata", "llm_config", "model"])
            .or(str_at(&v, &["metadata", "llm", "model"]))
            .unwrap_or_default();
        let mut item = Ingested::new(
            id.to_owned(),
            model.to_owned(),
            patch,
            AgentFormat::Openhands,
            source,
            error,
        );
        item.steps = v
            .get("history")
            .and_then(Value::as_array)
            .map(|h| read_history(h, v.get("instruction").and_then(Value::as_str)).counts());
        ing.items.push(item);
    })
}
