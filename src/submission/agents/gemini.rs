//! Gemini CLI's chat recordings (`~/.gemini/tmp/<project_hash>/chats/session-*.json`): one JSON
//! document, `{sessionId, projectHash, startTime, lastUpdated, messages}`, each message
//! `{id, timestamp, type: "user" | "gemini" | …, content}`; a `gemini` message may carry its
//! `model`, `thoughts` (`{subject, description}`) and `toolCalls`
//! (`{id, name, args, result, status, …}`). The tools read: `run_shell_command` (`command`),
//! `web_fetch` (a `prompt` holding the URLs, or `url`), `google_web_search` (`query`),
//! `write_file` (`file_path`, `content`) and `replace` (`file_path`, `old_string`, `new_string`,
//! `expected_replacements`); any other tool's arguments are read the generic way. A call whose
//! `status` is `error` or `cancelled` changed nothing.

use super::trajectory::{
    ActionKind, EditOp, EditOutcome, FileEdit, Trajectory, TrajectoryShape, str_of, text_of,
};
use serde_json::Value;

/// A Gemini CLI recording's marker: `projectHash` beside a `messages` list.
pub(super) fn record_shape(obj: &serde_json::Map<String, Value>) -> Option<TrajectoryShape> {
    (obj.contains_key("projectHash") && obj.get("messages").is_some_and(Value::is_array))
        .then_some(TrajectoryShape::GeminiChat)
}

/// Reads a Gemini CLI recording: the whole document, or its messages one at a time.
#[derive(Debug)]
pub(crate) struct GeminiReader {
    parts: Trajectory,
}

impl GeminiReader {
    pub(crate) fn new(shape: TrajectoryShape) -> GeminiReader {
        GeminiReader {
            parts: Trajectory::new(shape),
        }
    }

    pub(super) fn parts(&mut self) -> &mut Trajectory {
        &mut self.parts
    }

    /// The whole recording (its messages numbered from 1), or one message at `step`.
    pub(crate) fn push(&mut self, step: usize, v: &Value) {
        if let Some(messages) = v.get("messages").and_then(Value::as_array) {
            if self.parts.session_id.is_none() {
                self.parts.session_id = str_of(v, "sessionId").map(str::to_owned);
            }
            for (i, m) in messages.iter().enumerate() {
                self.message(i + 1, m);
            }
        } else {
            self.message(step, v);
        }
    }

    fn message(&mut self, step: usize, m: &Value) {
        let content = m.get("content").map(text_of).unwrap_or_default();
        match str_of(m, "type") {
            Some("user") if self.parts.prompt.is_none() && !content.trim().is_empty() => {
                self.parts.prompt = Some(content.clone());
                self.parts.act(step, "prompt", ActionKind::Prompt, &content);
            }
            Some("gemini") => {
                if let Some(model) = str_of(m, "model") {
                    self.parts.model.get_or_insert_with(|| model.to_owned());
                }
                for t in m
                    .get("thoughts")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let text = [str_of(t, "subject"), str_of(t, "description")]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(": ");
                    if !text.is_empty() {
                        self.parts.act(step, "thought", ActionKind::Message, &text);
                    }
                }
                if !content.trim().is_empty() {
                    self.parts
                        .act(step, "message", ActionKind::Message, &content);
                }
                for call in m
                    .get("toolCalls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    self.tool_call(step, call);
                }
            }
            // `info`, `error`, `warning`: the CLI's own notes, no step of the agent.
            _ => {}
        }
    }

    fn tool_call(&mut self, step: usize, call: &Value) {
        self.parts.tool_calls += 1;
        let name = str_of(call, "name").unwrap_or("tool").to_owned();
        let Some(args) = call.get("args").filter(|a| a.is_object()) else {
            self.parts
                .unread(step, &name, "the tool call's `args` is not an object");
            return;
        };
        let s = |k: &str| str_of(args, k).map(str::to_owned);
        match name.as_str() {
            "run_shell_command" => match s("command") {
                Some(c) => {
                    self.parts.act(step, &name, ActionKind::Command, &c);
                }
                None => self.parts.unread(step, &name, "no `command` string"),
            },
            "web_fetch" => match s("url").or_else(|| s("prompt")) {
                Some(u) => {
                    self.parts.act(step, &name, ActionKind::Url, &u);
                }
                None => self
                    .parts
                    .unread(step, &name, "no `prompt` or `url` string"),
            },
            "google_web_search" | "web_search" => match s("query") {
                Some(q) => {
                    self.parts.act(step, &name, ActionKind::Search, &q);
                }
                None => self.parts.unread(step, &name, "no `query` string"),
            },
            "write_file" | "replace" | "edit" => self.edit(step, &name, call, args),
            _ => {
                if !self.parts.arguments(step, &name, args) {
                    self.parts.act(step, &name, ActionKind::Other, "");
                }
            }
        }
    }

    fn edit(&mut self, step: usize, name: &str, call: &Value, args: &Value) {
        let path = str_of(args, "file_path")
            .or(str_of(args, "absolute_path"))
            .map(str::to_owned);
        let action = self.parts.act(
            step,
            name,
            ActionKind::Edit,
            path.as_deref().unwrap_or_default(),
        );
        let op = path.as_deref().and_then(|p| {
            if name == "write_file" {
                return str_of(args, "content").map(|c| EditOp::Write {
                    path: p.to_owned(),
                    content: c.to_owned(),
                });
            }
            Some(EditOp::Replace {
                path: p.to_owned(),
                old: str_of(args, "old_string")?.to_owned(),
                new: str_of(args, "new_string")?.to_owned(),
                replace_all: args
                    .get("expected_replacements")
                    .and_then(Value::as_u64)
                    .is_some_and(|n| n > 1),
            })
        });
        let Some(op) = op else {
            self.parts.opaque(
                step,
                name,
                "an edit whose path or strings could not be read".to_owned(),
            );
            return;
        };
        let outcome = match str_of(call, "status") {
            Some("success") => EditOutcome::Applied,
            Some("error" | "cancelled") => EditOutcome::Failed,
            _ => EditOutcome::Unknown,
        };
        self.parts.edits.push(FileEdit {
            step,
            tool: name.to_owned(),
            call_id: str_of(call, "id").map(str::to_owned),
            ops: vec![op],
            outcome,
            original: None,
            user_modified: false,
            cwd: None,
            action,
        });
    }

    pub(crate) fn finish(self) -> Trajectory {
        self.parts
    }
}
