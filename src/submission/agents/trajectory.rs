//! One agent's trajectory, whichever agent wrote it and in whichever shape, as the rest of the
//! tool needs it: its metadata (agent, model, session, working directory, prompt), every tool
//! call in order (commands, pages, searches, the agent's words), the file edits those calls made
//! with their outcomes, and the calls that could not be read. Which shape a record is, each
//! agent's file says by its own markers (`reading.rs` asks them in order).
//!
//! Ingest (instance, model, patch reconstruction) and audit (blocklist, PR access) both read
//! every agent's steps into this one model, each agent by its own file (`claude_code.rs`,
//! `codex.rs`, `gemini.rs`, `aider.rs`, `swe_agent.rs`, `mini_swe_agent.rs`, `openhands.rs`,
//! `aweagent.rs`, `atif.rs`), so they agree on what a trajectory contains. Record streams are
//! read one record at a time (`reading.rs`: tool outputs are never kept, so a transcript of
//! hundreds of megabytes is read in little memory). This module knows nothing about containers;
//! replaying the edits is `replay`'s work.

use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;
use thiserror::Error;

/// The agents whose trajectories are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    /// Anthropic's Claude Code CLI.
    ClaudeCode,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    GeminiCli,
    /// Aider.
    Aider,
    /// SWE-agent (0.x, EnIGMA and 1.x).
    SweAgent,
    /// mini-swe-agent.
    MiniSweAgent,
    /// OpenHands.
    Openhands,
    /// AweAgent.
    Aweagent,
    /// An agent run by Harbor that writes ATIF (Harbor's own terminus agents, and any agent whose
    /// log Harbor converts).
    Harbor,
}

impl Agent {
    /// The agent's kebab-case name (`claude-code`, `codex`), as model names and reports write it.
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini-cli",
            Agent::Aider => "aider",
            Agent::SweAgent => "swe-agent",
            Agent::MiniSweAgent => "mini-swe-agent",
            Agent::Openhands => "openhands",
            Agent::Aweagent => "aweagent",
            Agent::Harbor => "harbor",
        }
    }

    /// The shapes this agent writes, for messages.
    pub fn shapes(self) -> &'static str {
        match self {
            Agent::ClaudeCode => {
                "a Claude Code transcript (stream-json, an `--output-format json` result or a session file)"
            }
            Agent::Codex => {
                "a Codex transcript (`codex exec --json` events, the older `{\"id\",\"msg\"}` events or a session rollout)"
            }
            Agent::GeminiCli => {
                "a Gemini CLI chat recording (`~/.gemini/tmp/<project>/chats/session-*.json`)"
            }
            Agent::Aider => "an Aider chat history (`.aider.chat.history.md`)",
            Agent::SweAgent => {
                "a SWE-agent trajectory (`<id>.traj`: `trajectory` steps or `history`)"
            }
            Agent::MiniSweAgent => "a mini-swe-agent trajectory (`<id>.traj.json`: `messages`)",
            Agent::Openhands => "an OpenHands event history (`history`, or a JSON list of events)",
            Agent::Aweagent => "AweAgent steps (`trajectory` with `action`)",
            Agent::Harbor => "an ATIF trajectory (`steps`, `schema_version`)",
        }
    }
}

/// The shape a transcript was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrajectoryShape {
    /// `claude -p --output-format stream-json` (also the `--verbose` JSON array of messages).
    ClaudeStreamJson,
    /// `claude -p --output-format json`: one result object.
    ClaudeResult,
    /// `~/.claude/projects/<project>/<session>.jsonl`.
    ClaudeSession,
    /// `codex exec --json`: `thread.*`, `turn.*`, `item.*` events.
    CodexExec,
    /// The older `codex exec --json`: a config line, a prompt line, then `{"id","msg"}` events.
    CodexExecLegacy,
    /// `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`.
    CodexRollout,
    /// `~/.gemini/tmp/<project_hash>/chats/session-*.json`: one document with `messages`.
    GeminiChat,
    /// Aider's `.aider.chat.history.md`: Markdown, not JSON.
    AiderHistory,
    /// A SWE-agent `.traj` file's `trajectory` (steps whose `action` is the command line).
    SweAgentTraj,
    /// A SWE-agent 1.x `.traj` file's `history` alone (chat messages carrying `action`).
    SweAgentHistory,
    /// A mini-swe-agent `.traj.json` file (`messages`; commands in code blocks or tool calls).
    MiniSweAgent,
    /// OpenHands' event history (actions and observations).
    OpenhandsHistory,
    /// AweAgent's steps.
    AweagentSteps,
    /// Harbor's ATIF trajectory (`steps`).
    Atif,
}

impl serde::Serialize for TrajectoryShape {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl TrajectoryShape {
    /// The shape's kebab-case name, as ingest and the audit write it.
    pub fn name(self) -> &'static str {
        match self {
            TrajectoryShape::ClaudeStreamJson => "claude-stream-json",
            TrajectoryShape::ClaudeResult => "claude-result",
            TrajectoryShape::ClaudeSession => "claude-session",
            TrajectoryShape::CodexExec => "codex-exec",
            TrajectoryShape::CodexExecLegacy => "codex-exec-legacy",
            TrajectoryShape::CodexRollout => "codex-rollout",
            TrajectoryShape::GeminiChat => "gemini-chat",
            TrajectoryShape::AiderHistory => "aider-history",
            TrajectoryShape::SweAgentTraj => "swe-agent-traj",
            TrajectoryShape::SweAgentHistory => "swe-agent-history",
            TrajectoryShape::MiniSweAgent => "mini-swe-agent",
            TrajectoryShape::OpenhandsHistory => "openhands-history",
            TrajectoryShape::AweagentSteps => "aweagent-steps",
            TrajectoryShape::Atif => "atif",
        }
    }

    /// The agent that writes this shape.
    pub fn agent(self) -> Agent {
        match self {
            TrajectoryShape::ClaudeStreamJson
            | TrajectoryShape::ClaudeResult
            | TrajectoryShape::ClaudeSession => Agent::ClaudeCode,
            TrajectoryShape::CodexExec
            | TrajectoryShape::CodexExecLegacy
            | TrajectoryShape::CodexRollout => Agent::Codex,
            TrajectoryShape::GeminiChat => Agent::GeminiCli,
            TrajectoryShape::AiderHistory => Agent::Aider,
            TrajectoryShape::SweAgentTraj | TrajectoryShape::SweAgentHistory => Agent::SweAgent,
            TrajectoryShape::MiniSweAgent => Agent::MiniSweAgent,
            TrajectoryShape::OpenhandsHistory => Agent::Openhands,
            TrajectoryShape::AweagentSteps => Agent::Aweagent,
            TrajectoryShape::Atif => Agent::Harbor,
        }
    }

    /// For messages: what the file is.
    pub fn describe(self) -> &'static str {
        match self {
            TrajectoryShape::ClaudeStreamJson => "a Claude Code stream-json transcript",
            TrajectoryShape::ClaudeResult => "a Claude Code `--output-format json` result",
            TrajectoryShape::ClaudeSession => "a Claude Code session file",
            TrajectoryShape::CodexExec => "a Codex `exec --json` event stream",
            TrajectoryShape::CodexExecLegacy => "an older Codex `exec --json` event stream",
            TrajectoryShape::CodexRollout => "a Codex session rollout",
            TrajectoryShape::GeminiChat => "a Gemini CLI chat recording",
            TrajectoryShape::AiderHistory => "an Aider chat history",
            TrajectoryShape::SweAgentTraj => "a SWE-agent trajectory",
            TrajectoryShape::SweAgentHistory => {
                "a SWE-agent 1.x trajectory holding only its history"
            }
            TrajectoryShape::MiniSweAgent => "a mini-swe-agent trajectory",
            TrajectoryShape::OpenhandsHistory => "an OpenHands event history",
            TrajectoryShape::AweagentSteps => "AweAgent steps",
            TrajectoryShape::Atif => "an ATIF trajectory",
        }
    }
}

/// What one step of the transcript did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    /// The task as the user gave it.
    Prompt,
    /// A shell command (or text typed into a running shell).
    Command,
    /// A page opened or fetched.
    Url,
    /// A web search query.
    Search,
    /// The agent's own words: messages, reasoning, instructions to a subagent.
    Message,
    /// A file edit (its text is the path).
    Edit,
    /// Another tool call (reading files, planning, …).
    Other,
}

/// One step of a transcript: a prompt, a command, a page, a search, the agent's words, an edit or
/// another tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Action {
    /// Line of the file (or index in an array), from 1.
    pub step: usize,
    /// The tool's name as the agent called it (`Bash`, `exec_command`, an MCP tool), or `prompt`
    /// and `message` for the user's and the agent's words.
    pub tool: String,
    /// What kind of step it is.
    pub kind: ActionKind,
    /// What it did, as text: the prompt, the command line, the URL, the query, the words or the
    /// edited path; empty for other tool calls.
    pub text: String,
    /// A subagent's step (Claude Code sidechains, `parent_tool_use_id`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sidechain: bool,
    /// For an edit that is shown and never replayed (ATIF, OpenHands' SDK editor): the change
    /// as far as the call's arguments hold it. The audit reads it when a later command runs the
    /// file. Edits that are replayed carry theirs in [`FileEdit`].
    #[serde(skip)]
    pub shown: Option<EditOp>,
}

/// A tool call whose meaning could not be read: the audit cannot call such a trajectory clean, and
/// its edits cannot be replayed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unread {
    /// Where it is, as in [`Action::step`].
    pub step: usize,
    /// The tool's name as the agent called it; `?` when a line cut short hides it.
    pub tool: String,
    /// What could not be read, e.g. "no `command` string".
    pub why: String,
}

/// One change an edit makes, as the agent's tool defined it.
#[derive(Debug, Clone, PartialEq)]
pub enum EditOp {
    /// Claude Code `Edit` (and each part of `MultiEdit`): `old` must occur exactly once unless
    /// `replace_all`; an empty `old` creates a file that does not exist.
    Replace {
        /// The file, as the tool was given it.
        path: String,
        /// The text to find.
        old: String,
        /// The text to put in its place.
        new: String,
        /// Replace every occurrence, not exactly one.
        replace_all: bool,
    },
    /// Claude Code `Write`: the whole content.
    Write {
        /// The file, as the tool was given it.
        path: String,
        /// The file's new content.
        content: String,
    },
    /// Codex `apply_patch` (and legacy `patch_apply_begin` additions): a new file.
    Add {
        /// The new file, as the envelope names it.
        path: String,
        /// Its content.
        content: String,
    },
    /// Codex `apply_patch` `*** Delete File:` (and legacy `patch_apply_begin` deletions).
    Delete {
        /// The deleted file, as the envelope names it.
        path: String,
    },
    /// Codex `apply_patch` `*** Update File:` with its chunks.
    Update {
        /// The file, as the envelope names it.
        path: String,
        /// `*** Move to:`: the file is renamed to this path; `None` when it stays.
        move_to: Option<String>,
        /// The changes, in file order.
        chunks: Vec<Chunk>,
    },
    /// Legacy Codex `patch_apply_begin` update: a unified diff of one file (hunks only).
    UnifiedDiff {
        /// The file, as the event names it.
        path: String,
        /// The hunks.
        diff: String,
        /// The file is renamed to this path; `None` when it stays.
        move_to: Option<String>,
    },
}

impl EditOp {
    /// Every path the change reads or writes.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            EditOp::Replace { path, .. }
            | EditOp::Write { path, .. }
            | EditOp::Add { path, .. }
            | EditOp::Delete { path } => vec![path],
            EditOp::Update { path, move_to, .. } | EditOp::UnifiedDiff { path, move_to, .. } => {
                std::iter::once(path.as_str())
                    .chain(move_to.as_deref())
                    .collect()
            }
        }
    }
}

/// Whether the tool reported the edit as made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EditOutcome {
    /// The tool's result says the edit was made.
    Applied,
    /// The tool's result is an error: the edit changed nothing.
    Failed,
    /// No result in the transcript (interrupted, truncated).
    Unknown,
}

/// One edit tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEdit {
    /// Where the call is, as in [`Action::step`].
    pub step: usize,
    /// The tool's name as the agent called it (`Edit`, `MultiEdit`, `Write`, `apply_patch`).
    pub tool: String,
    /// The id that pairs the call with its result (Claude Code `tool_use` id, Codex `call_id`);
    /// `None` when the transcript gives none.
    pub call_id: Option<String>,
    /// Applied in order (MultiEdit: several replacements of one file).
    pub ops: Vec<EditOp>,
    /// Whether the tool reported it as made.
    pub outcome: EditOutcome,
    /// What the tool said the file held just before (Claude Code `originalFile`): a check that
    /// nothing else changed it in between. `Some(None)`: the tool said the file did not exist.
    pub original: Option<Option<String>>,
    /// The user changed the proposed edit before it was made (Claude Code `userModified`).
    pub user_modified: bool,
    /// The directory relative paths are relative to (a Codex call's `workdir`).
    pub cwd: Option<String>,
    /// Index of the edit's [`Action`] in [`Trajectory::actions`] (for ordering against commands).
    pub action: usize,
}

/// A file change the transcript shows without its content (Codex `exec --json` `file_change`,
/// Claude Code `NotebookEdit`, an edit whose input could not be read).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpaqueEdit {
    /// Where it is, as in [`Action::step`].
    pub step: usize,
    /// The tool's name as the agent called it.
    pub tool: String,
    /// What the change was, for messages (e.g. "notebook cell edit of nb.ipynb").
    pub what: String,
}

/// Everything read from one trajectory, whichever agent wrote it: what `ingest`, its
/// `--reconstruct` and the audit (of files and of release lines) take.
#[derive(Debug, Clone, PartialEq)]
pub struct Trajectory {
    /// The shape it was written in, and so its agent.
    pub shape: TrajectoryShape,
    /// The model, as the transcript names it; `None` when it names none.
    pub model: Option<String>,
    /// The agent's session (Claude Code `session_id`, Codex thread or session id); `None` when
    /// the transcript names none.
    pub session_id: Option<String>,
    /// The directory the agent worked in; `None` when the transcript does not say.
    pub cwd: Option<String>,
    /// The agent's version (`claude_code_version`, `version`, `cli_version`).
    pub version: Option<String>,
    /// The task as the user gave it: the first prompt of the main agent (not a subagent's);
    /// `None` when there is none.
    pub prompt: Option<String>,
    /// Every step, in transcript order.
    pub actions: Vec<Action>,
    /// Every edit tool call with its content, in order: what a replay makes.
    pub edits: Vec<FileEdit>,
    /// File changes shown without their content: a transcript with any cannot be replayed.
    pub opaque_edits: Vec<OpaqueEdit>,
    /// Tool calls that could not be read.
    pub unread: Vec<Unread>,
    /// Tool calls read (each counted once, however many events repeat it).
    pub tool_calls: usize,
    /// Lines that were not JSON and did not look like a record either (interleaved stderr).
    pub noise_lines: usize,
    /// Sub-agents it started whose steps are written in files of their own (Codex
    /// `spawn_agent`), each with whether that file was read with it.
    pub subagents: Vec<SubAgentLink>,
}

/// A sub-agent a trajectory started, kept in a file of its own.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubAgentLink {
    /// Where it was started, as in [`Action::step`].
    pub step: usize,
    /// Its id (a Codex thread id), when the trajectory says; `None` when the start's result is
    /// missing.
    pub id: Option<String>,
    /// Its file was read with the trajectory.
    pub read: bool,
}

impl Trajectory {
    /// The agent that wrote it (from its shape).
    pub fn agent(&self) -> Agent {
        self.shape.agent()
    }

    /// `agent/model` (the agent alone when the transcript names no model).
    pub fn model_name(&self) -> String {
        match &self.model {
            Some(m) => format!("{}/{m}", self.agent().name()),
            None => self.agent().name().to_owned(),
        }
    }

    /// How many file edits it made, replayable or not (a person's count: ingest's note).
    pub fn file_edit_count(&self) -> usize {
        self.edits.len() + self.opaque_edits.len()
    }

    /// The shell commands it ran, in order.
    pub fn commands(&self) -> impl Iterator<Item = &Action> {
        self.actions
            .iter()
            .filter(|a| a.kind == ActionKind::Command)
    }

    /// What it holds, counted ([`StepCounts`]).
    pub fn counts(&self) -> StepCounts {
        let kind = |k: ActionKind| self.actions.iter().filter(|a| a.kind == k).count();
        StepCounts {
            shape: self.shape,
            tool_calls: self.tool_calls,
            commands: kind(ActionKind::Command),
            web: kind(ActionKind::Url) + kind(ActionKind::Search),
            file_edits: self.file_edit_count(),
            edits_not_made: self
                .edits
                .iter()
                .filter(|e| e.outcome == EditOutcome::Failed)
                .count(),
            unread: self.unread.len(),
            subagents_unread: self.subagents.iter().filter(|s| !s.read).count(),
        }
    }
}

/// A trajectory's steps, counted: what ingest keeps of the steps it read (for its note, and so
/// that what ingest read and what the audit read can be compared), whichever agent wrote them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepCounts {
    /// The shape it was written in.
    pub shape: TrajectoryShape,
    /// Tool calls read.
    pub tool_calls: usize,
    /// Shell commands.
    pub commands: usize,
    /// Pages opened and searches made.
    pub web: usize,
    /// File edits, replayable or not.
    pub file_edits: usize,
    /// Edits the agent's tool reported as failed.
    pub edits_not_made: usize,
    /// Tool calls that could not be read.
    pub unread: usize,
    /// Sub-agents started whose files were not read with it.
    pub subagents_unread: usize,
}

impl std::fmt::Display for StepCounts {
    /// For a person: `a Claude Code stream-json transcript: 7 tool calls, 3 commands, 4 file
    /// edits (1 not made)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} tool calls, {} commands, {} file edits",
            self.shape.describe(),
            self.tool_calls,
            self.commands,
            self.file_edits
        )?;
        if self.edits_not_made > 0 {
            write!(f, " ({} not made)", self.edits_not_made)?;
        }
        Ok(())
    }
}

/// One `@@` chunk of an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The text after `@@ `, a line to find before the old lines.
    pub context: Option<String>,
    /// The lines the chunk replaces (context and `-` lines), without their prefix.
    pub old_lines: Vec<String>,
    /// The lines it puts in their place (context and `+` lines), without their prefix.
    pub new_lines: Vec<String>,
    /// `*** End of File`: the old lines end the file.
    pub end_of_file: bool,
}

/// Why a transcript file could not be read.
#[derive(Debug, Error)]
pub enum TranscriptError {
    /// Opening or reading the file failed (missing, no permission, ...).
    #[error(transparent)]
    Io(#[from] crate::errors::PathError),
    /// The file is not JSON or JSONL, or none of its first records has a Claude Code or Codex
    /// shape (also: no file given).
    #[error("{path}: not {expected}: {found}")]
    NotATranscript {
        /// The file (empty when no file was given).
        path: PathBuf,
        /// What it should have been.
        expected: String,
        /// What was found instead, or the JSON parser's message.
        found: String,
    },
}

/// What both readers fill in as they go.
impl Trajectory {
    pub(super) fn new(shape: TrajectoryShape) -> Trajectory {
        Trajectory {
            shape,
            model: None,
            session_id: None,
            cwd: None,
            version: None,
            prompt: None,
            actions: Vec::new(),
            edits: Vec::new(),
            opaque_edits: Vec::new(),
            unread: Vec::new(),
            tool_calls: 0,
            noise_lines: 0,
            subagents: Vec::new(),
        }
    }

    /// Records an action; returns its index.
    pub(super) fn act(&mut self, step: usize, tool: &str, kind: ActionKind, text: &str) -> usize {
        self.actions.push(Action {
            step,
            tool: tool.to_owned(),
            kind,
            text: text.to_owned(),
            sidechain: false,
            shown: None,
        });
        self.actions.len() - 1
    }

    /// Records an edit of `path` that is shown and never replayed, with its change as far as
    /// the call's arguments hold it ([`Action::shown`]): the whole text (`content`,
    /// `file_text`), else a replacement (`old_string`/`new_string`, `old_str`/`new_str`).
    pub(super) fn shown_edit(&mut self, step: usize, tool: &str, path: &str, args: &Value) {
        let text = |k: &str| str_of(args, k).map(str::to_owned);
        let whole = text("content").or_else(|| text("file_text"));
        let replace = |old: &str, new: &str| {
            Some(EditOp::Replace {
                path: path.to_owned(),
                old: text(old).unwrap_or_default(),
                new: text(new)?,
                replace_all: false,
            })
        };
        let op = match whole {
            Some(content) => Some(EditOp::Write {
                path: path.to_owned(),
                content,
            }),
            None => replace("old_string", "new_string").or_else(|| replace("old_str", "new_str")),
        };
        self.shown_op(step, tool, path, op);
    }

    /// Records an edit of `path` that is shown and never replayed, with its change when known.
    pub(super) fn shown_op(&mut self, step: usize, tool: &str, path: &str, op: Option<EditOp>) {
        let at = self.act(step, tool, ActionKind::Edit, path);
        self.actions[at].shown = op;
    }

    pub(super) fn unread(&mut self, step: usize, tool: &str, why: impl Into<String>) {
        self.unread.push(Unread {
            step,
            tool: tool.to_owned(),
            why: why.into(),
        });
    }

    pub(super) fn opaque(&mut self, step: usize, tool: &str, what: impl Into<String>) {
        self.opaque_edits.push(OpaqueEdit {
            step,
            tool: tool.to_owned(),
            what: what.into(),
        });
    }

    /// Commands, pages and queries named by a tool's JSON arguments (MCP and unknown tools).
    pub(super) fn arguments(&mut self, step: usize, tool: &str, args: &Value) -> bool {
        self.arguments_with(step, tool, args, &COMMAND_KEYS[..3])
    }

    /// As [`Trajectory::arguments`], a command taken from any of `command_keys`.
    pub(super) fn arguments_with(
        &mut self,
        step: usize,
        tool: &str,
        args: &Value,
        command_keys: &[&str],
    ) -> bool {
        let mut any = false;
        for key in command_keys {
            match args.get(key) {
                Some(Value::String(t)) if !t.is_empty() => {
                    self.act(step, tool, ActionKind::Command, t);
                    any = true;
                }
                Some(Value::Array(words)) if words.iter().all(Value::is_string) => {
                    let argv: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
                    self.act(step, tool, ActionKind::Command, &shell_join(&argv));
                    any = true;
                }
                _ => {}
            }
        }
        for key in ["url", "uri", "link"] {
            if let Some(t) = args
                .get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                self.act(step, tool, ActionKind::Url, t);
                any = true;
            }
        }
        for key in ["query", "queries"] {
            match args.get(key) {
                Some(Value::String(t)) if !t.is_empty() => {
                    self.act(step, tool, ActionKind::Search, t);
                    any = true;
                }
                Some(Value::Array(qs)) => {
                    for t in qs.iter().filter_map(Value::as_str) {
                        self.act(step, tool, ActionKind::Search, t);
                        any = true;
                    }
                }
                _ => {}
            }
        }
        any
    }

    /// One call of a generic tool (ATIF, OpenHands, AweAgent, mini-swe-agent): counted, and its
    /// commands, pages and queries recorded ([`COMMAND_KEYS`]); an `Other` action when its
    /// arguments name none, so every call is a step.
    pub(super) fn generic_call(&mut self, step: usize, tool: &str, args: &Value) {
        self.tool_calls += 1;
        // OpenHands' and SWE-agent's file editor (`str_replace_editor`): its `command` names an
        // operation on `path`, not a shell command.
        if let (Some(op), Some(path)) = (str_of(args, "command"), str_of(args, "path"))
            && EDITOR_OPERATIONS.contains(&op)
        {
            if op == "view" {
                self.act(step, tool, ActionKind::Other, "");
            } else {
                self.shown_edit(step, tool, path, args);
            }
            return;
        }
        if !self.arguments_with(step, tool, args, &COMMAND_KEYS) {
            self.act(step, tool, ActionKind::Other, "");
        }
    }

    /// The agent's own words at `step`, when there are any.
    pub(super) fn words(&mut self, step: usize, text: &str) {
        if !text.is_empty() {
            self.act(step, "message", ActionKind::Message, text);
        }
    }

    /// The task as the user gave it, at `step`: the first prompt is the transcript's.
    pub(super) fn prompt_at(&mut self, step: usize, text: &str) {
        if self.prompt.is_none() {
            self.prompt = Some(text.to_owned());
        }
        self.act(step, "prompt", ActionKind::Prompt, text);
    }
}

/// The operations of OpenHands' and SWE-agent's file editor (`str_replace_editor`), given as its
/// `command` argument beside a `path`.
pub(super) const EDITOR_OPERATIONS: [&str; 5] =
    ["create", "str_replace", "insert", "view", "undo_edit"];

/// The argument keys that carry a command: `command`, `cmd` and `script` in every agent's tools;
/// for generic tools also an interpreter's `code`, a terminal's `input`, and the `keystrokes`
/// Harbor's terminus agents type into their terminal (`bash_command`).
pub(super) const COMMAND_KEYS: [&str; 6] =
    ["command", "cmd", "script", "code", "input", "keystrokes"];

/// Whether `items` are chat messages: at least one, each with a string `role`.
pub(super) fn is_chat(items: &[Value]) -> bool {
    !items.is_empty()
        && items
            .iter()
            .all(|m| m.get("role").is_some_and(Value::is_string))
}

/// Arguments given as an object or as a JSON string (`Null` when the string is no JSON).
pub(super) fn args_object(v: &Value) -> Value {
    match v {
        Value::String(t) => serde_json::from_str(t).unwrap_or(Value::Null),
        other => other.clone(),
    }
}

/// A message's OpenAI-style `tool_calls`: each tool's name (`tool` when it has none) and its
/// arguments, given as an object or as a JSON string.
pub(super) fn openai_tool_calls(message: &Value) -> impl Iterator<Item = (&str, Value)> {
    message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|call| {
            let f = call.get("function").unwrap_or(call);
            let tool = f.get("name").and_then(Value::as_str).unwrap_or("tool");
            (
                tool,
                args_object(f.get("arguments").unwrap_or(&Value::Null)),
            )
        })
}

/// `argv` as a shell would need it typed: words with nothing special stay bare, the others are
/// single-quoted. Joining with plain spaces would turn `["bash", "-lc", "git log --all"]` into a
/// command whose script is only `git`.
pub fn shell_join<S: AsRef<str>>(argv: &[S]) -> String {
    argv.iter()
        .map(|w| {
            let w = w.as_ref();
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c))
            {
                w.to_owned()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Text of a content value: a string, or the `text` of each part of an array.
pub(super) fn text_of(v: &Value) -> String {
    match v {
        Value::String(t) => t.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str).or_else(|| p.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

pub(super) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_is_joined_so_a_shell_reads_it_back() {
        assert_eq!(
            shell_join(&["bash", "-lc", "git log --all"]),
            "bash -lc 'git log --all'"
        );
        assert_eq!(shell_join(&["echo", "it's"]), "echo 'it'\\''s'");
        assert_eq!(shell_join(&["ls", ""]), "ls ''");
    }
}
