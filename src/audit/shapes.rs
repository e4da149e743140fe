//! What the audit reads of a trajectory: its events (prompt, commands, pages, searches, the
//! agent's words) and the calls that could not be read, taken from the one trajectory model
//! every agent's reader fills ([`from_transcript`]). A release line's trajectory is handed to
//! the reader of the agent whose shape it is ([`read_line`]: ATIF, SWE-agent, mini-swe-agent,
//! AweAgent, OpenHands, and Claude Code, Codex and Gemini CLI transcripts inline); this module
//! parses no agent's format itself, so ingest and the audit read every file the same way. Tool
//! calls that cannot be read are kept, so an audit never calls clean what it did not read.

use crate::submission::agents::{atif, aweagent, mini_swe_agent, openhands, swe_agent};
use crate::submission::{
    ActionKind, Agent, Transcript, TranscriptShape, Unread, shape_of, transcript_from_values,
};
use serde_json::Value;

/// What an event is, for the checks: commands go to the blocklist, commands and URLs to the PR
/// check, queries to the search check, words to tier B excerpts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// The task's prompt (first user message).
    Prompt,
    /// A shell command the agent ran.
    Command,
    /// A page the agent opened or fetched through a browsing tool.
    Url,
    /// A web search query.
    Search,
    /// The agent's own words (reasoning, messages).
    Reasoning,
}

/// One thing the agent was told, did or said, as the checks read it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Event {
    /// Step (or event) index in the trajectory, from 1 (0: an OpenHands `instruction` recorded
    /// beside the history).
    pub step: usize,
    /// The tool called (`Bash`, `run`, `web_search`, …), or `prompt`/`message` for text.
    pub tool: String,
    /// What it is.
    pub kind: EventKind,
    /// The command, URL, query, prompt or words.
    pub text: String,
}

/// What was read from one trajectory.
#[derive(Debug, Clone, PartialEq)]
pub struct Read {
    /// The shape it was written in (and so its agent).
    pub shape: TranscriptShape,
    /// Its events, in trajectory order.
    pub events: Vec<Event>,
    /// Tool calls whose meaning could not be read.
    pub unread: Vec<Unread>,
    /// Why the trajectory holds nothing to audit even though it was read.
    pub empty_because: Option<String>,
}

/// The events of a trajectory, whichever agent wrote it.
pub fn from_transcript(t: &Transcript) -> Read {
    let events = t
        .actions
        .iter()
        .filter_map(|a| {
            let kind = match a.kind {
                ActionKind::Prompt => EventKind::Prompt,
                ActionKind::Command => EventKind::Command,
                ActionKind::Url => EventKind::Url,
                ActionKind::Search => EventKind::Search,
                ActionKind::Message => EventKind::Reasoning,
                ActionKind::Edit | ActionKind::Other => return None,
            };
            Some(Event {
                step: a.step,
                tool: a.tool.clone(),
                kind,
                text: a.text.clone(),
            })
        })
        .collect();
    let empty_because = (t.shape == TranscriptShape::ClaudeResult).then(|| {
        "a Claude Code `--output-format json` result carries the final answer only, no tool calls: nothing to audit (record runs with `--output-format stream-json`)".to_owned()
    });
    Read {
        shape: t.shape,
        events,
        unread: t.unread.clone(),
        empty_because,
    }
}

/// A transcript given inline: a list of records, the file's text, or one result object.
fn inline_transcript(v: &Value, agent: Option<Agent>) -> Option<Transcript> {
    match v {
        Value::Array(items) => transcript_from_values(items, agent),
        Value::String(text) => {
            let records: Vec<Value> = match serde_json::from_str::<Value>(text) {
                Ok(Value::Array(items)) => items,
                Ok(one @ Value::Object(_)) => vec![one],
                _ => text
                    .lines()
                    .filter_map(|l| serde_json::from_str(l.trim_start_matches('\u{feff}')).ok())
                    .collect(),
            };
            transcript_from_values(&records, agent)
        }
        Value::Object(_) => {
            shape_of([v]).and_then(|_| transcript_from_values(std::slice::from_ref(v), agent))
        }
        _ => None,
    }
}

/// Reads the events of a release line, each shape by its agent's reader; `Err` with the keys
/// found when no shape matches.
pub fn events(line: &Value) -> Result<Read, Vec<String>> {
    read_line(line).map(|t| from_transcript(&t)).ok_or_else(|| {
        line.as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    })
}

/// The trajectory a release line (or one trajectory document) carries, read by its agent's
/// reader; `None` when no shape matches.
pub fn read_line(line: &Value) -> Option<Transcript> {
    let traj = line.get("trajectory");
    if let Some(t) = traj.filter(|t| atif::is_atif(t, false)) {
        return Some(atif::read(t));
    }
    if atif::is_atif(line, true) {
        return Some(atif::read(line));
    }
    if let Some(Value::Array(steps)) = traj
        && swe_agent::is_traj_steps(steps)
    {
        return Some(swe_agent::read_traj(steps, line));
    }
    if mini_swe_agent::is_trajectory(line)
        && let Some(Value::Array(msgs)) = line.get("messages")
    {
        return Some(mini_swe_agent::read(msgs, line));
    }
    if let Some(Value::Array(steps)) = traj
        && aweagent::is_steps(steps)
    {
        return Some(aweagent::read_steps(steps, line));
    }
    if let Some(t) = traj.and_then(|t| inline_transcript(t, None)) {
        return Some(t);
    }
    if let Some(evs @ Value::Array(_)) = line.get("events")
        && let Some(t) = inline_transcript(evs, Some(Agent::Codex))
    {
        return Some(t);
    }
    if let Some(msgs @ Value::Array(_)) = line.get("messages")
        && let Some(t) = inline_transcript(msgs, Some(Agent::ClaudeCode))
    {
        return Some(t);
    }
    if let Some(Value::Array(h)) = line.get("history") {
        if swe_agent::is_history(h) {
            return Some(swe_agent::read_history(h, line));
        }
        return Some(openhands::read_history(
            h,
            line.get("instruction").and_then(Value::as_str),
        ));
    }
    None
}
