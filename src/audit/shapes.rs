//! What the audit reads of a trajectory: its events (prompt, commands, pages, searches, the
//! agent's words) and the calls that could not be read, taken from the one trajectory model
//! every agent's reader fills ([`from_transcript`]). A release line's trajectory is handed to
//! the reader of the agent whose shape it is ([`read_line`]: ATIF, SWE-agent, mini-swe-agent,
//! AweAgent, OpenHands, and Claude Code, Codex and Gemini CLI transcripts inline); this module
//! parses no agent's format itself, so ingest and the audit read every file the same way. Tool
//! calls that cannot be read are kept, so an audit never calls clean what it did not read.

use crate::submission::agents::read_line;
use crate::submission::{ActionKind, Trajectory, TrajectoryShape, Unread};
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
    pub shape: TrajectoryShape,
    /// Its events, in trajectory order.
    pub events: Vec<Event>,
    /// Tool calls whose meaning could not be read.
    pub unread: Vec<Unread>,
    /// Why the trajectory holds nothing to audit even though it was read.
    pub empty_because: Option<String>,
}

/// The events of a trajectory, whichever agent wrote it.
pub fn from_transcript(t: &Trajectory) -> Read {
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
    let empty_because = (t.shape == TrajectoryShape::ClaudeResult).then(|| {
        "a Claude Code `--output-format json` result carries the final answer only, no tool calls: nothing to audit (record runs with `--output-format stream-json`)".to_owned()
    });
    Read {
        shape: t.shape,
        events,
        unread: t.unread.clone(),
        empty_because,
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
