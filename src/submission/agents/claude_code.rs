//! Claude Code's three shapes, which share one message format: `--output-format stream-json`
//! (`system`/`init`, `assistant`, `user`, `result`, and lines that carry no step such as
//! `hook_started`, `rate_limit_event` and `stream_event`), the `--output-format json` result
//! object, and session files (the same messages with `sessionId`, `uuid`, `isSidechain`,
//! `toolUseResult`, beside `summary` and `file-history-snapshot` lines).
//!
//! An assistant message's blocks may arrive one per line (sessions and newer streams repeat the
//! message with one block each), and a session can repeat a line; tool calls are counted once by
//! their id and lines once by their `uuid`. Subagents' steps (sidechains) are read like the
//! main agent's: what a subagent ran, it ran in the same workspace.

use super::trajectory::{
    ActionKind, EditOp, EditOutcome, FileEdit, Trajectory, TrajectoryShape, str_of, text_of,
};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Which of Claude Code's shapes a record is in, by its own markers: a session file's line
/// (`sessionId`, `parentUuid` with `uuid`, or a session-only type), a stream-json message (one
/// of the SDK's message types with a session, a message or a subtype), or the one result object
/// of `--output-format json`.
pub(super) fn record_shape(
    obj: &serde_json::Map<String, Value>,
    ty: &str,
) -> Option<TrajectoryShape> {
    if matches!(ty, "summary" | "file-history-snapshot" | "queue-operation")
        || obj.contains_key("sessionId")
        || (obj.contains_key("parentUuid") && obj.contains_key("uuid"))
    {
        return Some(TrajectoryShape::ClaudeSession);
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
    if !(claude_type
        && (obj.contains_key("session_id")
            || obj.contains_key("message")
            || obj.contains_key("subtype")))
    {
        return None;
    }
    Some(
        if ty == "result" && obj.contains_key("result") && obj.contains_key("num_turns") {
            TrajectoryShape::ClaudeResult
        } else {
            TrajectoryShape::ClaudeStreamJson
        },
    )
}

#[derive(Debug)]
pub(crate) struct ClaudeReader {
    /// The transcript as read so far.
    parts: Trajectory,
    /// Tool call id → index of its edit in `parts.edits`.
    edits_by_id: HashMap<String, usize>,
    tool_ids: HashSet<String>,
    uuids: HashSet<String>,
    /// The main agent's model (`init`, else the first main-chain assistant message).
    init_model: Option<String>,
    message_model: Option<String>,
    sidechain_model: Option<String>,
    /// From a result object's `modelUsage`: the model that wrote the most.
    usage_model: Option<String>,
    /// The `agentId` of the line being read (a Claude Code 2.0 sub-agent's lines carry it).
    line_agent: Option<String>,
    /// Sub-agents' tool calls read, by `agentId` (`""`: sidechain lines that name none).
    subagent_calls: HashMap<String, u64>,
    /// Sub-agent runs the main chain reports (a `Task` result's `totalToolUseCount`): the step of
    /// the result, the sub-agent's id, and how many tool calls it made (`None`: a sub-agent
    /// started in the background, whose result gives no count).
    subagent_runs: Vec<(usize, String, Option<u64>)>,
    /// The ids of sub-agents any of whose lines were read.
    subagent_seen: HashSet<String>,
}

impl ClaudeReader {
    pub(crate) fn new(shape: TrajectoryShape) -> ClaudeReader {
        ClaudeReader {
            parts: Trajectory::new(shape),
            edits_by_id: HashMap::new(),
            tool_ids: HashSet::new(),
            uuids: HashSet::new(),
            init_model: None,
            message_model: None,
            sidechain_model: None,
            usage_model: None,
            line_agent: None,
            subagent_calls: HashMap::new(),
            subagent_runs: Vec::new(),
            subagent_seen: HashSet::new(),
        }
    }

    pub(super) fn parts(&mut self) -> &mut Trajectory {
        &mut self.parts
    }

    pub(crate) fn push(&mut self, step: usize, v: &Value) {
        if let Some(u) = str_of(v, "uuid")
            && self.parts.shape == TrajectoryShape::ClaudeSession
            && !self.uuids.insert(u.to_owned())
        {
            return;
        }
        let sidechain = v.get("isSidechain").and_then(Value::as_bool) == Some(true)
            || v.get("parent_tool_use_id").is_some_and(|p| !p.is_null());
        self.line_agent = str_of(v, "agentId").map(str::to_owned);
        if sidechain && let Some(id) = &self.line_agent {
            self.subagent_seen.insert(id.clone());
        }
        if self.parts.session_id.is_none() {
            self.parts.session_id = str_of(v, "session_id")
                .or(str_of(v, "sessionId"))
                .map(str::to_owned);
        }
        if !sidechain {
            if self.parts.cwd.is_none() {
                self.parts.cwd = str_of(v, "cwd").map(str::to_owned);
            }
            if self.parts.version.is_none() {
                self.parts.version = str_of(v, "claude_code_version")
                    .or(str_of(v, "version"))
                    .map(str::to_owned);
            }
        }
        match str_of(v, "type") {
            Some("system") if str_of(v, "subtype") == Some("init") => {
                if let Some(m) = str_of(v, "model") {
                    self.init_model.get_or_insert_with(|| m.to_owned());
                }
            }
            // Claude Code 2.1 writes each sub-agent message into the session as it happens
            // (`progress` of type `agent_progress`): the sub-agent's steps, inline.
            Some("progress")
                if v.pointer("/data/type").and_then(Value::as_str) == Some("agent_progress") =>
            {
                if let Some(inner) = v.pointer("/data/message").filter(|m| m.is_object()) {
                    let mut inner = inner.clone();
                    if let Some(o) = inner.as_object_mut() {
                        o.insert("isSidechain".into(), Value::Bool(true));
                        if let Some(id) = v.pointer("/data/agentId").cloned() {
                            o.insert("agentId".into(), id);
                        }
                    }
                    self.push(step, &inner);
                }
            }
            Some("assistant") => self.assistant(step, v, sidechain),
            Some("user") => self.user(step, v, sidechain),
            Some("result") => {
                if let Some(usage) = v.get("modelUsage").and_then(Value::as_object) {
                    let score = |u: &Value| {
                        u.get("costUSD")
                            .and_then(Value::as_f64)
                            .or_else(|| u.get("outputTokens").and_then(Value::as_f64))
                            .unwrap_or(0.0)
                    };
                    self.usage_model = usage
                        .iter()
                        .max_by(|a, b| score(a.1).total_cmp(&score(b.1)))
                        .map(|(k, _)| k.clone());
                }
                if self.parts.shape == TrajectoryShape::ClaudeResult
                    && let Some(r) = str_of(v, "result")
                    && !r.is_empty()
                {
                    self.parts.act(step, "result", ActionKind::Message, r);
                }
            }
            // hook_*, status, compact_boundary, stream_event, rate_limit_event, summary,
            // file-history-snapshot, queue-operation, attachment, …: no step of the agent.
            _ => {}
        }
    }

    fn assistant(&mut self, step: usize, v: &Value, sidechain: bool) {
        let Some(message) = v.get("message") else {
            return;
        };
        if let Some(m) = str_of(message, "model").filter(|m| !m.starts_with('<')) {
            let slot = if sidechain {
                &mut self.sidechain_model
            } else {
                &mut self.message_model
            };
            slot.get_or_insert_with(|| m.to_owned());
        }
        let content = message.get("content").unwrap_or(&Value::Null);
        let blocks: Vec<&Value> = match content {
            Value::Array(b) => b.iter().collect(),
            Value::String(t) => {
                self.message(step, t, sidechain);
                return;
            }
            _ => return,
        };
        for block in blocks {
            match str_of(block, "type") {
                Some("text") => {
                    if let Some(t) = str_of(block, "text") {
                        self.message(step, t, sidechain);
                    }
                }
                Some("thinking") => {
                    if let Some(t) = str_of(block, "thinking") {
                        self.message(step, t, sidechain);
                    }
                }
                Some("tool_use" | "server_tool_use") => self.tool_use(step, block, sidechain),
                _ => {}
            }
        }
    }

    fn message(&mut self, step: usize, text: &str, sidechain: bool) {
        if text.is_empty() {
            return;
        }
        let i = self.parts.act(step, "message", ActionKind::Message, text);
        self.parts.actions[i].sidechain = sidechain;
    }

    fn tool_use(&mut self, step: usize, block: &Value, sidechain: bool) {
        let id = str_of(block, "id").map(str::to_owned);
        if let Some(id) = &id
            && !self.tool_ids.insert(id.clone())
        {
            return;
        }
        self.parts.tool_calls += 1;
        if sidechain {
            *self
                .subagent_calls
                .entry(self.line_agent.clone().unwrap_or_default())
                .or_default() += 1;
        }
        let name = str_of(block, "name").unwrap_or("tool").to_owned();
        let before = self.parts.actions.len();
        let input = match block.get("input") {
            Some(i @ Value::Object(_)) => i,
            _ => {
                self.parts
                    .unread(step, &name, "the tool call's input is not an object");
                return;
            }
        };
        let s = |k: &str| str_of(input, k).map(str::to_owned);
        match name.as_str() {
            "Bash" => match s("command") {
                Some(c) => {
                    self.parts.act(step, &name, ActionKind::Command, &c);
                }
                None => self.parts.unread(step, &name, "no `command` string"),
            },
            "WebFetch" => match s("url") {
                Some(u) => {
                    self.parts.act(step, &name, ActionKind::Url, &u);
                }
                None => self.parts.unread(step, &name, "no `url` string"),
            },
            "WebSearch" | "web_search" => match s("query") {
                Some(q) => {
                    self.parts.act(step, &name, ActionKind::Search, &q);
                }
                None => self.parts.unread(step, &name, "no `query` string"),
            },
            "Edit" | "Write" | "MultiEdit" => self.edit(step, &name, id, input),
            "NotebookEdit" => {
                let path = s("notebook_path").unwrap_or_default();
                self.parts.act(step, &name, ActionKind::Edit, &path);
                self.parts
                    .opaque(step, &name, format!("notebook cell edit of {path}"));
            }
            "Task" | "Agent" => {
                let text = s("prompt").or(s("description")).unwrap_or_default();
                self.parts.act(step, &name, ActionKind::Message, &text);
            }
            _ => {
                if !self.parts.arguments(step, &name, input) {
                    self.parts.act(step, &name, ActionKind::Other, "");
                }
            }
        }
        for a in &mut self.parts.actions[before..] {
            a.sidechain = sidechain;
        }
    }

    fn edit(&mut self, step: usize, name: &str, id: Option<String>, input: &Value) {
        let path = str_of(input, "file_path").map(str::to_owned);
        let replace = |e: &Value, path: &str| -> Option<EditOp> {
            Some(EditOp::Replace {
                path: path.to_owned(),
                old: str_of(e, "old_string")?.to_owned(),
                new: str_of(e, "new_string")?.to_owned(),
                replace_all: e.get("replace_all").and_then(Value::as_bool) == Some(true),
            })
        };
        let ops: Option<Vec<EditOp>> = path.as_deref().and_then(|p| match name {
            "Edit" => replace(input, p).map(|op| vec![op]),
            "Write" => str_of(input, "content").map(|c| {
                vec![EditOp::Write {
                    path: p.to_owned(),
                    content: c.to_owned(),
                }]
            }),
            _ => input
                .get("edits")
                .and_then(Value::as_array)
                .and_then(|es| es.iter().map(|e| replace(e, p)).collect()),
        });
        let action = self.parts.act(
            step,
            name,
            ActionKind::Edit,
            path.as_deref().unwrap_or_default(),
        );
        let Some(ops) = ops else {
            self.parts.opaque(
                step,
                name,
                "an edit whose path or strings could not be read".to_owned(),
            );
            return;
        };
        self.parts.edits.push(FileEdit {
            step,
            tool: name.to_owned(),
            call_id: id.clone(),
            ops,
            outcome: EditOutcome::Unknown,
            original: None,
            user_modified: false,
            cwd: None,
            action,
        });
        if let Some(id) = id {
            self.edits_by_id.insert(id, self.parts.edits.len() - 1);
        }
    }

    fn user(&mut self, step: usize, v: &Value, sidechain: bool) {
        let content = v
            .get("message")
            .and_then(|m| m.get("content"))
            .unwrap_or(&Value::Null);
        let meta = v.get("isMeta").and_then(Value::as_bool) == Some(true);
        let prompt_ok = |t: &str| !t.trim().is_empty() && !t.trim_start().starts_with('<');
        match content {
            Value::String(t)
                if !sidechain && !meta && self.parts.prompt.is_none() && prompt_ok(t) =>
            {
                self.parts.prompt = Some(t.clone());
                self.parts.act(step, "prompt", ActionKind::Prompt, t);
            }
            Value::Array(blocks) => {
                // `toolUseResult` (sessions) or `tool_use_result` (stream-json): the tool's own
                // account of the call this line answers.
                let result = v.get("toolUseResult").or(v.get("tool_use_result"));
                if let Some(r) = result
                    && let Some(n) = r.get("totalToolUseCount").and_then(Value::as_u64)
                    && n > 0
                {
                    let id = str_of(r, "agentId").unwrap_or_default().to_owned();
                    self.subagent_runs.push((step, id, Some(n)));
                } else if let Some(r) = result
                    && (r.get("isAsync").and_then(Value::as_bool) == Some(true)
                        || str_of(r, "status") == Some("async_launched"))
                {
                    // A sub-agent started in the background (Claude Code 2.0.7x and later): its
                    // result comes later (`TaskOutput`, a `<task-notification>`) with no count
                    // of its calls, and its steps are in its own file.
                    let id = str_of(r, "agentId").unwrap_or_default().to_owned();
                    self.subagent_runs.push((step, id, None));
                }
                for block in blocks {
                    match str_of(block, "type") {
                        Some("tool_result") => {
                            let Some(id) = str_of(block, "tool_use_id") else {
                                continue;
                            };
                            let Some(&e) = self.edits_by_id.get(id) else {
                                continue;
                            };
                            let failed = block.get("is_error").and_then(Value::as_bool)
                                == Some(true)
                                || result.and_then(Value::as_str).is_some_and(|r| {
                                    r.starts_with("Error") || r.contains("<tool_use_error>")
                                })
                                || text_of(block.get("content").unwrap_or(&Value::Null))
                                    .contains("<tool_use_error>");
                            let edit = &mut self.parts.edits[e];
                            edit.outcome = if failed {
                                EditOutcome::Failed
                            } else {
                                EditOutcome::Applied
                            };
                            if let Some(r) = result.filter(|r| r.is_object()) {
                                match r.get("originalFile") {
                                    Some(Value::String(o)) => edit.original = Some(Some(o.clone())),
                                    Some(Value::Null) if str_of(r, "type") == Some("create") => {
                                        edit.original = Some(None)
                                    }
                                    _ => {}
                                }
                                edit.user_modified =
                                    r.get("userModified").and_then(Value::as_bool) == Some(true);
                            }
                        }
                        Some("text") if !sidechain && !meta && self.parts.prompt.is_none() => {
                            if let Some(t) = str_of(block, "text").filter(|t| prompt_ok(t)) {
                                self.parts.prompt = Some(t.to_owned());
                                self.parts.act(step, "prompt", ActionKind::Prompt, t);
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// Sub-agent runs whose tool calls are not all in what was read (Claude Code 2.0 keeps a
    /// sub-agent's steps in `agent-<id>.jsonl` beside the session) are unread: what those calls
    /// did is unknown. A background sub-agent, whose calls are not counted, is read when any of
    /// its lines was.
    fn check_subagents(&mut self) {
        for (step, id, made) in std::mem::take(&mut self.subagent_runs) {
            let file = if id.is_empty() {
                "its own file".to_owned()
            } else {
                format!("agent-{id}.jsonl")
            };
            let Some(made) = made else {
                if id.is_empty() || !self.subagent_seen.contains(&id) {
                    self.parts.unread(
                        step,
                        "Task",
                        format!(
                            "a sub-agent started in the background, none of whose steps is in \
                             what was read; Claude Code keeps them in {file} beside the session"
                        ),
                    );
                }
                continue;
            };
            let mut seen = 0;
            for key in [id.as_str(), ""] {
                if let Some(n) = self.subagent_calls.get_mut(key) {
                    let take = (*n).min(made - seen);
                    *n -= take;
                    seen += take;
                }
            }
            if seen < made {
                self.parts.unread(
                    step,
                    "Task",
                    format!(
                        "the sub-agent made {made} tool calls and {seen} of them are in what was \
                         read; Claude Code keeps a sub-agent's steps in {file} beside the session"
                    ),
                );
            }
        }
    }

    pub(crate) fn finish(mut self) -> Trajectory {
        self.check_subagents();
        self.parts.model = self
            .init_model
            .take()
            .or(self.message_model.take())
            .or(self.usage_model.take())
            .or(self.sidechain_model.take());
        self.parts
    }
}

#[cfg(test)]
mod tests {
    use super::super::reading::{TrajectoryBuilder, transcript_from_values};
    use super::*;
    use serde_json::json;

    #[test]
    fn edits_take_their_outcome_and_original_from_the_result_line() {
        let lines = [
            json!({"type": "user", "sessionId": "s", "uuid": "u1", "parentUuid": null, "cwd": "/app", "version": "1.0.51", "message": {"role": "user", "content": "Fix the bug"}}),
            json!({"type": "assistant", "sessionId": "s", "uuid": "a1", "parentUuid": "u1", "message": {"id": "m1", "model": "claude-opus-4-20250514", "content": [{"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "/app/x.py", "old_string": "a", "new_string": "b"}}]}}),
            json!({"type": "user", "sessionId": "s", "uuid": "u2", "parentUuid": "a1", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "updated"}]}, "toolUseResult": {"filePath": "/app/x.py", "oldString": "a", "newString": "b", "originalFile": "a\n", "userModified": false}}),
            // The same line again (sessions repeat lines): counted once.
            json!({"type": "assistant", "sessionId": "s", "uuid": "a1", "parentUuid": "u1", "message": {"id": "m1", "model": "claude-opus-4-20250514", "content": [{"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "/app/x.py", "old_string": "a", "new_string": "b"}}]}}),
        ];
        let t = transcript_from_values(&lines, None).unwrap();
        assert_eq!(t.shape, TrajectoryShape::ClaudeSession);
        assert_eq!(t.model_name(), "claude-code/claude-opus-4-20250514");
        assert_eq!(t.prompt.as_deref(), Some("Fix the bug"));
        assert_eq!(t.tool_calls, 1);
        assert_eq!(t.edits[0].outcome, EditOutcome::Applied);
        assert_eq!(t.edits[0].original, Some(Some("a\n".into())));
        assert_eq!(t.cwd.as_deref(), Some("/app"));
    }

    /// A `Task` result that reports the sub-agent's tool calls, with those calls not in what was
    /// read, leaves the transcript with an unread step; with them read, none.
    #[test]
    fn sub_agent_calls_kept_in_another_file_are_unread() {
        let main = [
            json!({"type": "user", "sessionId": "s", "uuid": "u1", "parentUuid": null, "message": {"role": "user", "content": "Fix the bug"}}),
            json!({"type": "assistant", "sessionId": "s", "uuid": "a1", "parentUuid": "u1", "message": {"id": "m1", "content": [{"type": "tool_use", "id": "t1", "name": "Task", "input": {"description": "look around", "prompt": "find it"}}]}}),
            json!({"type": "user", "sessionId": "s", "uuid": "u2", "parentUuid": "a1", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "found"}]}]}, "toolUseResult": {"status": "completed", "agentId": "5f3e", "totalToolUseCount": 2, "totalDurationMs": 900}}),
        ];
        let t = transcript_from_values(&main, None).unwrap();
        assert_eq!(t.unread.len(), 1, "{:?}", t.unread);
        assert_eq!(t.unread[0].step, 3);
        assert!(t.unread[0].why.contains("made 2 tool calls and 0 of them"));
        assert!(t.unread[0].why.contains("agent-5f3e.jsonl"));

        let mut all = main.to_vec();
        for (i, cmd) in ["ls", "git log --all"].iter().enumerate() {
            all.push(json!({"type": "assistant", "sessionId": "s", "agentId": "5f3e", "isSidechain": true, "uuid": format!("s{i}"), "parentUuid": null, "message": {"id": format!("sm{i}"), "content": [{"type": "tool_use", "id": format!("st{i}"), "name": "Bash", "input": {"command": cmd}}]}}));
        }
        let t = transcript_from_values(&all, None).unwrap();
        assert!(t.unread.is_empty(), "{:?}", t.unread);
        assert_eq!(t.commands().count(), 2);

        // Claude Code 2.1 also writes each sub-agent message into the session, as `progress` of
        // type `agent_progress`: the calls are read from there, and once only when the
        // sub-agent's own file (the same messages, the same uuids) is read too.
        let mut inline = main.to_vec();
        let mut sub = Vec::new();
        for (i, cmd) in ["ls", "git log --all"].iter().enumerate() {
            let m = json!({"type": "assistant", "uuid": format!("s{i}"), "message": {"id": format!("sm{i}"), "content": [{"type": "tool_use", "id": format!("st{i}"), "name": "Bash", "input": {"command": cmd}}]}});
            inline.push(json!({"type": "progress", "sessionId": "s", "isSidechain": false, "uuid": format!("p{i}"), "data": {"type": "agent_progress", "agentId": "5f3e", "message": m.clone()}}));
            sub.push(m);
        }
        let t = transcript_from_values(&inline, None).unwrap();
        assert!(t.unread.is_empty(), "{:?}", t.unread);
        assert_eq!(t.commands().count(), 2);
        inline.extend(sub);
        let t = transcript_from_values(&inline, None).unwrap();
        assert_eq!((t.commands().count(), t.tool_calls), (2, 3));
    }

    /// A sub-agent started in the background (`isAsync`, `async_launched`) reports no count of
    /// its calls, and its result comes back later through `TaskOutput` or a
    /// `<task-notification>`: unless a line of its own was read, the trajectory is unread there,
    /// never clean (Claude Code 2.0.76 and 2.1.17 sessions do this).
    #[test]
    fn a_background_sub_agent_whose_steps_are_not_read_is_unread() {
        let main = [
            json!({"type": "user", "sessionId": "s", "uuid": "u1", "parentUuid": null, "message": {"role": "user", "content": "Fix the bug"}}),
            json!({"type": "assistant", "sessionId": "s", "uuid": "a1", "parentUuid": "u1", "message": {"id": "m1", "content": [{"type": "tool_use", "id": "t1", "name": "Task", "input": {"description": "look around", "prompt": "find it", "run_in_background": true}}]}}),
            json!({"type": "user", "sessionId": "s", "uuid": "u2", "parentUuid": "a1", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "Async agent launched"}]}]}, "toolUseResult": {"isAsync": true, "status": "async_launched", "agentId": "a961"}}),
            json!({"type": "user", "sessionId": "s", "uuid": "u3", "parentUuid": "u2", "message": {"role": "user", "content": "<task-notification>done</task-notification>"}}),
        ];
        let t = transcript_from_values(&main, None).unwrap();
        assert_eq!(t.unread.len(), 1, "{:?}", t.unread);
        assert_eq!(t.unread[0].step, 3);
        assert!(t.unread[0].why.contains("in the background"));
        assert!(t.unread[0].why.contains("agent-a961.jsonl"));

        // Its own lines read (its file beside the session, or inline): read.
        let mut all = main.to_vec();
        all.push(json!({"type": "assistant", "sessionId": "s", "agentId": "a961", "isSidechain": true, "uuid": "s1", "parentUuid": null, "message": {"id": "sm1", "content": [{"type": "tool_use", "id": "st1", "name": "Bash", "input": {"command": "gh pr diff 6"}}]}}));
        let t = transcript_from_values(&all, None).unwrap();
        assert!(t.unread.is_empty(), "{:?}", t.unread);
        assert_eq!(t.commands().count(), 1);
    }

    #[test]
    fn a_tool_call_without_an_object_input_is_unread() {
        let mut b = TrajectoryBuilder::new(TrajectoryShape::ClaudeStreamJson);
        b.push(1, &json!({"type": "assistant", "session_id": "s", "message": {"content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": "git fetch"}]}}));
        let t = b.finish();
        assert_eq!(t.unread.len(), 1);
        assert_eq!(t.commands().count(), 0);
    }
}
