//! What the audit reads of a trajectory: its events (prompt, commands, pages, searches, the
//! agent's words) and the calls that could not be read, taken from the one trajectory model
//! every agent's reader fills ([`from_transcript`]). Every trajectory comes here read already,
//! a release line's too (`submission::agents::line_item`: each shape by its agent's reader);
//! this module parses no agent's format itself, so ingest and the audit read every file the
//! same way. Tool
//! calls that cannot be read are kept, so an audit never calls clean what it did not read.

use crate::submission::agents::{Action, EditOp, EditOutcome, FileEdit};
use crate::submission::{ActionKind, Trajectory, TrajectoryShape, Unread};
use std::collections::HashMap;

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
    /// A file written through an edit tool (its text is the path; what changed is in
    /// [`Event::change`]): read when a later command runs the file.
    Write,
}

/// What an edit did to its file, as far as the trajectory shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// The file now holds this text.
    Whole(String),
    /// This text was put into the file, beside what it held.
    Part(String),
    /// `old` replaced by `new` (every occurrence when `all`).
    Replace {
        /// The text replaced.
        old: String,
        /// The text put in its place.
        new: String,
        /// Every occurrence.
        all: bool,
    },
    /// The file was moved to this path.
    MovedTo(String),
    /// The file was deleted.
    Deleted,
    /// The file changed, and the trajectory does not show how.
    Unknown,
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
    /// The command, URL, query, prompt or words; the path of a write.
    pub text: String,
    /// For a write: what it did to the file.
    #[serde(skip)]
    pub change: Option<Change>,
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
    let mut edits: HashMap<usize, Vec<&FileEdit>> = HashMap::new();
    for e in &t.edits {
        edits.entry(e.action).or_default().push(e);
    }
    let mut events = Vec::new();
    for (index, a) in t.actions.iter().enumerate() {
        let kind = match a.kind {
            ActionKind::Prompt => EventKind::Prompt,
            ActionKind::Command => EventKind::Command,
            ActionKind::Url => EventKind::Url,
            ActionKind::Search => EventKind::Search,
            ActionKind::Message => EventKind::Reasoning,
            ActionKind::Edit => {
                writes(a, edits.get(&index).map(Vec::as_slice), &mut events);
                continue;
            }
            ActionKind::Other => continue,
        };
        events.push(Event {
            step: a.step,
            tool: a.tool.clone(),
            kind,
            text: a.text.clone(),
            change: None,
        });
    }
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

/// The writes of edit action `a`: each change of the edits replayed from it (`edits`; a failed
/// edit changed nothing), else the change the call shows ([`crate::submission::Action::shown`]),
/// else a change the trajectory does not show, of each path it names.
fn writes(a: &Action, edits: Option<&[&FileEdit]>, out: &mut Vec<Event>) {
    let mut push = |path: &str, change: Change| {
        out.push(Event {
            step: a.step,
            tool: a.tool.clone(),
            kind: EventKind::Write,
            text: path.to_owned(),
            change: Some(change),
        });
    };
    let ops: Vec<&EditOp> = match (edits, &a.shown) {
        (Some(edits), _) => edits
            .iter()
            .filter(|e| e.outcome != EditOutcome::Failed)
            .flat_map(|e| &e.ops)
            .collect(),
        (None, Some(op)) => vec![op],
        (None, None) => {
            for p in a.text.split(", ").filter(|p| !p.is_empty()) {
                push(p, Change::Unknown);
            }
            return;
        }
    };
    for op in ops {
        match op {
            EditOp::Write { path, content } | EditOp::Add { path, content } => {
                push(path, Change::Whole(content.clone()));
            }
            EditOp::Replace {
                path,
                old,
                new,
                replace_all,
            } => push(
                path,
                Change::Replace {
                    old: old.clone(),
                    new: new.clone(),
                    all: *replace_all,
                },
            ),
            EditOp::Delete { path } => push(path, Change::Deleted),
            EditOp::Update { path, move_to, .. } | EditOp::UnifiedDiff { path, move_to, .. } => {
                // The lines it puts in: a chunk's new lines, a hunk's `+` lines.
                let added: Vec<&str> = match op {
                    EditOp::Update { chunks, .. } => chunks
                        .iter()
                        .flat_map(|c| c.new_lines.iter().map(String::as_str))
                        .collect(),
                    EditOp::UnifiedDiff { diff, .. } => diff
                        .lines()
                        .filter_map(|l| l.strip_prefix('+'))
                        .filter(|l| !l.starts_with("++"))
                        .collect(),
                    _ => Vec::new(),
                };
                push(path, Change::Part(added.join("\n")));
                if let Some(to) = move_to {
                    push(path, Change::MovedTo(to.clone()));
                }
            }
        }
    }
}
