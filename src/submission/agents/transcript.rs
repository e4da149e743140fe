//! One Claude Code or Codex transcript, in whichever shape the agent wrote it, read into what the
//! rest of the tool needs: its metadata (agent, model, session, working directory, prompt), every
//! tool call in order (commands, pages, searches, the agent's words), the file edits those calls
//! made with their outcomes, and the calls that could not be read.
//!
//! Ingest (instance, model, patch reconstruction) and audit (blocklist, PR access) both read
//! transcripts through [`read_transcript`] or [`TranscriptBuilder`], so they agree on what a
//! transcript contains. Records are pushed one at a time: tool outputs are never kept, so a
//! transcript of hundreds of megabytes is read in little memory. This module knows nothing about
//! containers; replaying the edits is `replay`'s work.

use serde::Serialize;
use serde_json::Value;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The two agents whose raw transcripts are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    ClaudeCode,
    Codex,
}

impl Agent {
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
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
        }
    }
}

/// The shape a transcript was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
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
}

impl Shape {
    pub fn agent(self) -> Agent {
        match self {
            Shape::ClaudeStreamJson | Shape::ClaudeResult | Shape::ClaudeSession => {
                Agent::ClaudeCode
            }
            Shape::CodexExec | Shape::CodexExecLegacy | Shape::CodexRollout => Agent::Codex,
        }
    }

    /// For messages: what the file is.
    pub fn describe(self) -> &'static str {
        match self {
            Shape::ClaudeStreamJson => "a Claude Code stream-json transcript",
            Shape::ClaudeResult => "a Claude Code `--output-format json` result",
            Shape::ClaudeSession => "a Claude Code session file",
            Shape::CodexExec => "a Codex `exec --json` event stream",
            Shape::CodexExecLegacy => "an older Codex `exec --json` event stream",
            Shape::CodexRollout => "a Codex session rollout",
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

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Action {
    /// Line of the file (or index in an array), from 1.
    pub step: usize,
    pub tool: String,
    pub kind: ActionKind,
    pub text: String,
    /// A subagent's step (Claude Code sidechains, `parent_tool_use_id`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sidechain: bool,
}

/// A tool call whose meaning could not be read: the audit cannot call such a trajectory clean, and
/// its edits cannot be replayed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unread {
    pub step: usize,
    pub tool: String,
    pub why: String,
}

/// One change an edit makes, as the agent's tool defined it.
#[derive(Debug, Clone, PartialEq)]
pub enum EditOp {
    /// Claude Code `Edit` (and each part of `MultiEdit`): `old` must occur exactly once unless
    /// `replace_all`; an empty `old` creates a file that does not exist.
    Replace {
        path: String,
        old: String,
        new: String,
        replace_all: bool,
    },
    /// Claude Code `Write`: the whole content.
    Write {
        path: String,
        content: String,
    },
    /// Codex `apply_patch` (and legacy `patch_apply_begin` additions): a new file.
    Add {
        path: String,
        content: String,
    },
    Delete {
        path: String,
    },
    /// Codex `apply_patch` `*** Update File:` with its chunks.
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<super::apply_patch::Chunk>,
    },
    /// Legacy Codex `patch_apply_begin` update: a unified diff of one file (hunks only).
    UnifiedDiff {
        path: String,
        diff: String,
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
pub enum Outcome {
    Applied,
    Failed,
    /// No result in the transcript (interrupted, truncated).
    Unknown,
}

/// One edit tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEdit {
    pub step: usize,
    pub tool: String,
    pub call_id: Option<String>,
    /// Applied in order (MultiEdit: several replacements of one file).
    pub ops: Vec<EditOp>,
    pub outcome: Outcome,
    /// What the tool said the file held just before (Claude Code `originalFile`): a check that
    /// nothing else changed it in between. `Some(None)`: the tool said the file did not exist.
    pub original: Option<Option<String>>,
    /// The user changed the proposed edit before it was made (Claude Code `userModified`).
    pub user_modified: bool,
    /// The directory relative paths are relative to (a Codex call's `workdir`).
    pub cwd: Option<String>,
    /// Index of the edit's [`Action`] in [`Transcript::actions`] (for ordering against commands).
    pub action: usize,
}

/// A file change the transcript shows without its content (Codex `exec --json` `file_change`,
/// Claude Code `NotebookEdit`, an edit whose input could not be read).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpaqueEdit {
    pub step: usize,
    pub tool: String,
    pub what: String,
}

/// Everything read from one transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    pub shape: Shape,
    pub model: Option<String>,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    /// The agent's version (`claude_code_version`, `version`, `cli_version`).
    pub version: Option<String>,
    pub prompt: Option<String>,
    pub actions: Vec<Action>,
    pub edits: Vec<FileEdit>,
    pub opaque_edits: Vec<OpaqueEdit>,
    pub unread: Vec<Unread>,
    /// Tool calls read (each counted once, however many events repeat it).
    pub tool_calls: usize,
    /// Lines that were not JSON and did not look like a record either (interleaved stderr).
    pub noise_lines: usize,
}

impl Transcript {
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

    pub fn commands(&self) -> impl Iterator<Item = &Action> {
        self.actions
            .iter()
            .filter(|a| a.kind == ActionKind::Command)
    }
}

#[derive(Debug, Error)]
pub enum TranscriptError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not {expected}: {found}")]
    NotATranscript {
        path: PathBuf,
        expected: String,
        found: String,
    },
}

/// Which agent a single record belongs to and in which shape, when it says so.
pub fn classify_record(v: &Value) -> Option<Shape> {
    let obj = v.as_object()?;
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
    if obj.contains_key("payload")
        && matches!(
            ty,
            "session_meta" | "turn_context" | "response_item" | "event_msg" | "compacted"
        )
    {
        return Some(Shape::CodexRollout);
    }
    if obj.contains_key("record_type")
        || (obj.contains_key("instructions") && obj.contains_key("id") && ty.is_empty())
    {
        return Some(Shape::CodexRollout);
    }
    if ty.starts_with("thread.") || ty.starts_with("turn.") || ty.starts_with("item.") {
        return Some(Shape::CodexExec);
    }
    if obj.get("msg").and_then(|m| m.get("type")).is_some() {
        return Some(Shape::CodexExecLegacy);
    }
    if matches!(ty, "summary" | "file-history-snapshot" | "queue-operation")
        || obj.contains_key("sessionId")
        || (obj.contains_key("parentUuid") && obj.contains_key("uuid"))
    {
        return Some(Shape::ClaudeSession);
    }
    let claude_type = matches!(
        ty,
        "system"
            | "assistant"
            | "user"
            | "result"
            | "stream_event"
            | "rate_limit_event"
            | "control_request"
            | "control_response"
            | "keep_alive"
            | "tool_progress"
            | "auth_status"
    );
    if claude_type
        && (obj.contains_key("session_id")
            || obj.contains_key("message")
            || obj.contains_key("subtype"))
    {
        if ty == "result" && obj.contains_key("result") && obj.contains_key("num_turns") {
            return Some(Shape::ClaudeResult);
        }
        return Some(Shape::ClaudeStreamJson);
    }
    None
}

/// A legacy Codex `exec --json` prologue line: the config summary (`model`, `workdir`, …) or the
/// prompt echo (`{"prompt": …}`).
fn legacy_codex_prologue(v: &Value) -> bool {
    let Some(obj) = v.as_object() else {
        return false;
    };
    if obj.len() == 1 && obj.get("prompt").is_some_and(Value::is_string) {
        return true;
    }
    !obj.contains_key("type")
        && obj.contains_key("model")
        && (obj.contains_key("workdir")
            || obj.contains_key("approval")
            || obj.contains_key("sandbox"))
        && obj.values().all(Value::is_string)
}

/// The shape of a transcript from its first records (`None`: not a transcript).
pub fn shape_of<'a>(records: impl IntoIterator<Item = &'a Value>) -> Option<Shape> {
    let mut seen: Vec<Shape> = Vec::new();
    let mut prologue = false;
    for v in records.into_iter().take(200) {
        if legacy_codex_prologue(v) {
            prologue = true;
            continue;
        }
        if let Some(s) = classify_record(v) {
            seen.push(s);
        }
    }
    // The strongest marker wins: rollouts, item events and sessions all contain lines that alone
    // would read as something else.
    for s in [
        Shape::CodexRollout,
        Shape::CodexExec,
        Shape::CodexExecLegacy,
        Shape::ClaudeSession,
        Shape::ClaudeStreamJson,
    ] {
        if seen.contains(&s) {
            return Some(s);
        }
    }
    if seen.contains(&Shape::ClaudeResult) {
        // One result object is the `--output-format json` file; a result after messages ends a
        // stream.
        return Some(if seen.len() == 1 {
            Shape::ClaudeResult
        } else {
            Shape::ClaudeStreamJson
        });
    }
    prologue.then_some(Shape::CodexExecLegacy)
}

/// Reads transcript records one at a time.
#[derive(Debug)]
pub struct TranscriptBuilder {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Claude(super::claude_code::ClaudeReader),
    Codex(super::codex::CodexReader),
}

/// What both readers fill in as they go.
impl Transcript {
    pub(super) fn new(shape: Shape) -> Transcript {
        Transcript {
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
        });
        self.actions.len() - 1
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
        let mut any = false;
        for key in ["command", "cmd", "script"] {
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
            if let Some(t) = args.get(key).and_then(Value::as_str) {
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
}

impl TranscriptBuilder {
    /// A reader for a transcript of this shape.
    pub fn new(shape: Shape) -> TranscriptBuilder {
        TranscriptBuilder {
            inner: match shape.agent() {
                Agent::ClaudeCode => Inner::Claude(super::claude_code::ClaudeReader::new(shape)),
                Agent::Codex => Inner::Codex(super::codex::CodexReader::new(shape)),
            },
        }
    }

    /// One record, at `step` (its line, from 1).
    pub fn push(&mut self, step: usize, record: &Value) {
        match &mut self.inner {
            Inner::Claude(r) => r.push(step, record),
            Inner::Codex(r) => r.push(step, record),
        }
    }

    /// A line that is not JSON: a record cut short is a call that could not be read; anything
    /// else (stderr interleaved with stdout) is counted as noise.
    pub fn bad_line(&mut self, step: usize, line: &[u8]) {
        let parts = match &mut self.inner {
            Inner::Claude(r) => r.parts(),
            Inner::Codex(r) => r.parts(),
        };
        let trimmed = line.trim_ascii_start();
        if trimmed.starts_with(b"{") || trimmed.starts_with(b"[") {
            parts.unread(step, "?", "the line is not valid JSON (cut short?)");
        } else {
            parts.noise_lines += 1;
        }
    }

    pub fn finish(self) -> Transcript {
        match self.inner {
            Inner::Claude(r) => r.finish(),
            Inner::Codex(r) => r.finish(),
        }
    }
}

/// A transcript from records already in memory (a release line's inline transcript); steps are
/// indices from 1. `agent` narrows the detection (`messages` are Claude Code's, `events` Codex's).
pub fn transcript_from_values(values: &[Value], agent: Option<Agent>) -> Option<Transcript> {
    let shape = match (shape_of(values), agent) {
        (Some(s), Some(a)) if s.agent() != a => return None,
        (Some(s), _) => s,
        (None, Some(Agent::ClaudeCode)) => Shape::ClaudeStreamJson,
        (None, Some(Agent::Codex)) => Shape::CodexExec,
        (None, None) => return None,
    };
    let mut b = TranscriptBuilder::new(shape);
    for (i, v) in values.iter().enumerate() {
        b.push(i + 1, v);
    }
    Some(b.finish())
}

/// Reads a transcript file: JSONL (one record a line), or one JSON value (a result object, or the
/// `--verbose` array of messages). Lines are read one at a time.
pub fn read_transcript(path: &Path) -> Result<Transcript, TranscriptError> {
    read_transcripts(&[path.to_owned()])
}

/// Reads a transcript written across several files (a Claude Code session and its subagents'
/// files), in the order given; the shape comes from the first.
pub fn read_transcripts(paths: &[PathBuf]) -> Result<Transcript, TranscriptError> {
    let first = paths
        .first()
        .ok_or_else(|| TranscriptError::NotATranscript {
            path: PathBuf::new(),
            expected: "a transcript".into(),
            found: "no file".into(),
        })?;
    let shape = sniff(first)?.ok_or_else(|| TranscriptError::NotATranscript {
        path: first.clone(),
        expected: "a Claude Code or Codex transcript".into(),
        found: "no record of either agent's shapes".into(),
    })?;
    let mut b = TranscriptBuilder::new(shape);
    for path in paths {
        feed(path, &mut b)?;
    }
    Ok(b.finish())
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TranscriptError + '_ {
    move |source| TranscriptError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The shape of a file from its first records, reading no more than needed.
pub fn sniff(path: &Path) -> Result<Option<Shape>, TranscriptError> {
    let file = fs_err::File::open(path).map_err(io(path))?;
    let mut reader = std::io::BufReader::new(file);
    let mut head: Vec<Value> = Vec::new();
    let mut first_text = Vec::new();
    let mut buf = Vec::new();
    let mut lines = 0;
    while lines < 200 {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        lines += 1;
        if first_text.len() < 8 * 1024 * 1024 {
            first_text.extend_from_slice(&buf);
        }
        if let Ok(v) = serde_json::from_slice::<Value>(strip_bom(&buf)) {
            head.push(v);
        }
    }
    if head.is_empty() {
        // One pretty-printed JSON value.
        if let Ok(v) = serde_json::from_reader::<_, Value>(std::io::BufReader::new(
            fs_err::File::open(path).map_err(io(path))?,
        )) {
            return Ok(match &v {
                Value::Array(items) => shape_of(items),
                other => shape_of([other]),
            });
        }
        return Ok(None);
    }
    if head.len() == 1
        && let Value::Array(items) = &head[0]
    {
        return Ok(shape_of(items));
    }
    Ok(shape_of(&head))
}

fn strip_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line)
}

/// Pushes every record of `path` into `b`.
fn feed(path: &Path, b: &mut TranscriptBuilder) -> Result<(), TranscriptError> {
    let file = fs_err::File::open(path).map_err(io(path))?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    let mut line = 0usize;
    let mut parsed_any = false;
    let mut pending_bad: Vec<(usize, Vec<u8>)> = Vec::new();
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        line += 1;
        let text = strip_bom(&buf);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Value>(text) {
            Ok(Value::Array(items)) => {
                parsed_any = true;
                for (i, v) in items.iter().enumerate() {
                    b.push(i + 1, v);
                }
            }
            Ok(v) => {
                parsed_any = true;
                b.push(line, &v);
            }
            Err(_) => pending_bad.push((line, text.to_vec())),
        }
    }
    if !parsed_any {
        // Not JSONL: one pretty-printed value.
        let v: Value = serde_json::from_reader(std::io::BufReader::new(
            fs_err::File::open(path).map_err(io(path))?,
        ))
        .map_err(|e| TranscriptError::NotATranscript {
            path: path.to_owned(),
            expected: "JSON or JSONL".into(),
            found: e.to_string(),
        })?;
        match v {
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    b.push(i + 1, v);
                }
            }
            v => b.push(1, &v),
        }
        return Ok(());
    }
    for (n, text) in pending_bad {
        b.bad_line(n, &text);
    }
    Ok(())
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
    use serde_json::json;

    #[test]
    fn argv_is_joined_so_a_shell_reads_it_back() {
        assert_eq!(
            shell_join(&["bash", "-lc", "git log --all"]),
            "bash -lc 'git log --all'"
        );
        assert_eq!(shell_join(&["echo", "it's"]), "echo 'it'\\''s'");
        assert_eq!(shell_join(&["ls", ""]), "ls ''");
    }

    #[test]
    fn shapes_are_told_apart_by_their_strongest_marker() {
        let rollout = [
            json!({"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}),
            json!({"timestamp": "t", "type": "response_item", "payload": {"type": "message"}}),
        ];
        assert_eq!(shape_of(&rollout), Some(Shape::CodexRollout));
        let legacy = [
            json!({"model": "gpt-5", "workdir": "/w", "approval": "never"}),
            json!({"prompt": "fix it"}),
            json!({"id": "0", "msg": {"type": "task_started"}}),
        ];
        assert_eq!(shape_of(&legacy), Some(Shape::CodexExecLegacy));
        let stream = [
            json!({"type": "system", "subtype": "hook_started", "session_id": "s"}),
            json!({"type": "system", "subtype": "init", "session_id": "s", "model": "m"}),
            json!({"type": "rate_limit_event", "rate_limit_info": {}, "session_id": "s"}),
        ];
        assert_eq!(shape_of(&stream), Some(Shape::ClaudeStreamJson));
        let session = [
            json!({"type": "summary", "summary": "x", "leafUuid": "u"}),
            json!({"type": "user", "sessionId": "s", "uuid": "u", "parentUuid": null}),
        ];
        assert_eq!(shape_of(&session), Some(Shape::ClaudeSession));
        let result = [
            json!({"type": "result", "subtype": "success", "result": "ok", "num_turns": 3, "session_id": "s"}),
        ];
        assert_eq!(shape_of(&result), Some(Shape::ClaudeResult));
        assert_eq!(shape_of(&[json!({"hello": "world"})]), None);
    }
}
