//! Codex's three shapes.
//!
//! - `codex exec --json` (item events): `thread.started`, `turn.*`, and `item.started` /
//!   `item.updated` / `item.completed` carrying one item each (`command_execution`,
//!   `file_change` with paths only, `web_search`, `mcp_tool_call`, `agent_message`,
//!   `reasoning`, …). An item repeats across its events: it is read once, by id.
//! - The older `codex exec --json`: a config summary line (`model`, `workdir`, …), a `{"prompt"}`
//!   line, then `{"id", "msg": {"type": …}}` events: `exec_command_begin` (the argument list),
//!   `patch_apply_begin` (every file change with its content), `agent_message`, ….
//! - Session rollouts: `{"timestamp", "type", "payload"}` lines (`session_meta`, `turn_context`
//!   with the model, `response_item` with the model's calls, `event_msg`); the oldest rollouts
//!   write the payloads bare. Shell calls are `function_call`s whose `arguments` is a JSON
//!   *string*; `shell` takes an argument list (`["bash", "-lc", "…"]`), `shell_command` and
//!   `exec_command` a string, `local_shell_call` items an `action.command` list. Edits are
//!   `apply_patch` calls: a custom tool call whose `input` is the envelope, a function call, or the
//!   argument list `["apply_patch", envelope]` and its heredoc form.

use super::apply_patch;
use super::code_mode;
use super::trajectory::{
    ActionKind, EditOp, EditOutcome, FileEdit, SubAgentLink, Trajectory, TrajectoryShape,
    shell_join, str_of, text_of,
};
use serde_json::{Value, json};
use std::collections::HashMap;

/// Which of Codex's shapes a record is in, by its own markers: a rollout line (`payload` under
/// a rollout type, an older rollout's `record_type` or its header), an `exec --json` event
/// (`thread.*`, `turn.*`, `item.*`), an older `exec --json` event (`{"id","msg"}`).
pub(super) fn record_shape(
    obj: &serde_json::Map<String, Value>,
    ty: &str,
) -> Option<TrajectoryShape> {
    if obj.contains_key("payload")
        && matches!(
            ty,
            "session_meta" | "turn_context" | "response_item" | "event_msg" | "compacted"
        )
    {
        return Some(TrajectoryShape::CodexRollout);
    }
    if obj.contains_key("record_type")
        || (obj.contains_key("instructions") && obj.contains_key("id") && ty.is_empty())
    {
        return Some(TrajectoryShape::CodexRollout);
    }
    if ty.starts_with("thread.") || ty.starts_with("turn.") || ty.starts_with("item.") {
        return Some(TrajectoryShape::CodexExec);
    }
    obj.get("msg")
        .and_then(|m| m.get("type"))
        .map(|_| TrajectoryShape::CodexExecLegacy)
}

/// A legacy Codex `exec --json` prologue line: the config summary (`model`, `workdir`, …) or the
/// prompt echo (`{"prompt": …}`).
pub(super) fn legacy_prologue(v: &Value) -> bool {
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

#[derive(Debug)]
pub(crate) struct CodexReader {
    /// The transcript as read so far.
    parts: Trajectory,
    /// Call id → index of its edit.
    edits_by_id: HashMap<String, usize>,
    /// Exec items by id, in the order first seen, latest version kept (read at the end).
    items: Vec<(usize, Value)>,
    item_index: HashMap<String, usize>,
    /// Legacy events already read, by call id.
    seen_calls: std::collections::HashSet<String>,
    /// Rollouts: the prompt from `event_msg` `user_message`, preferred over response items.
    user_message: Option<(usize, String)>,
    first_user_item: Option<(usize, String)>,
    /// `spawn_agent` calls by call id → index of their link in `parts.subagents`.
    spawns: HashMap<String, usize>,
    /// The threads whose rollouts were read (this one's, then its sub-agents').
    threads_read: std::collections::HashSet<String>,
}

impl CodexReader {
    pub(crate) fn new(shape: TrajectoryShape) -> CodexReader {
        CodexReader {
            parts: Trajectory::new(shape),
            edits_by_id: HashMap::new(),
            items: Vec::new(),
            item_index: HashMap::new(),
            seen_calls: Default::default(),
            user_message: None,
            first_user_item: None,
            spawns: HashMap::new(),
            threads_read: Default::default(),
        }
    }

    pub(super) fn parts(&mut self) -> &mut Trajectory {
        &mut self.parts
    }

    pub(crate) fn push(&mut self, step: usize, v: &Value) {
        match self.parts.shape {
            TrajectoryShape::CodexExec => self.exec_event(step, v),
            TrajectoryShape::CodexExecLegacy => self.legacy_event(step, v),
            _ => self.rollout_line(step, v),
        }
    }

    // ---- codex exec --json (items) ----

    fn exec_event(&mut self, step: usize, v: &Value) {
        match str_of(v, "type") {
            Some("thread.started") => {
                self.parts.session_id = str_of(v, "thread_id").map(str::to_owned);
            }
            Some(t) if t.starts_with("item.") => {
                let Some(item) = v.get("item") else { return };
                // Outputs are never needed: they are not copied.
                let item = match item.as_object() {
                    Some(o) => Value::Object(
                        o.iter()
                            .filter(|(k, _)| k.as_str() != "aggregated_output")
                            .map(|(k, x)| (k.clone(), x.clone()))
                            .collect(),
                    ),
                    None => item.clone(),
                };
                match str_of(&item, "id").map(str::to_owned) {
                    Some(id) => match self.item_index.get(&id) {
                        Some(&i) => self.items[i].1 = item,
                        None => {
                            self.item_index.insert(id, self.items.len());
                            self.items.push((step, item));
                        }
                    },
                    None => self.items.push((step, item)),
                }
            }
            // Rollout-shaped lines inside an exec stream file (some harnesses concatenate).
            _ => {}
        }
    }

    fn exec_item(&mut self, step: usize, item: &Value) {
        let ty = str_of(item, "type").unwrap_or("");
        match ty {
            "command_execution" => {
                self.parts.tool_calls += 1;
                let command = item.get("command");
                if let Some(c) = command.and_then(Value::as_str) {
                    self.command(step, "shell", c, None);
                } else if let Some(argv) = command.and_then(string_list) {
                    self.argv(step, "shell", &argv, None, None);
                } else {
                    self.parts
                        .unread(step, "shell", "a command_execution item without a command");
                }
            }
            "file_change" => {
                self.parts.tool_calls += 1;
                self.file_change_item(step, item);
            }
            "web_search" => {
                self.parts.tool_calls += 1;
                self.web_search(step, item.get("action"), str_of(item, "query"));
            }
            "mcp_tool_call" => {
                self.parts.tool_calls += 1;
                self.mcp_call(step, item);
            }
            "agent_message" | "reasoning" | "plan" => {
                if let Some(t) = str_of(item, "text") {
                    self.message(step, t);
                }
            }
            "collab_tool_call" => {
                self.parts.tool_calls += 1;
                if let Some(p) = str_of(item, "prompt") {
                    self.parts.act(step, "collab", ActionKind::Message, p);
                }
            }
            "todo_list" | "error" => {}
            other => {
                self.parts.tool_calls += 1;
                self.parts
                    .unread(step, other, format!("an item of unknown type `{other}`"));
            }
        }
    }

    /// A `file_change` item: the paths and kinds of its changes, never their content (an edit
    /// of each path, its change unknown but for a deletion).
    fn file_change_item(&mut self, step: usize, item: &Value) {
        let mut paths = Vec::new();
        for c in item
            .get("changes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(path) = str_of(c, "path") else {
                continue;
            };
            let kind = str_of(c, "kind").unwrap_or("?");
            let op = (kind == "delete").then(|| EditOp::Delete {
                path: path.to_owned(),
            });
            self.parts.shown_op(step, "apply_patch", path, op);
            paths.push(format!("{kind} {path}"));
        }
        if str_of(item, "status") != Some("failed") {
            self.parts.opaque(
                step,
                "apply_patch",
                format!(
                    "file changes recorded without their content ({})",
                    paths.join(", ")
                ),
            );
        }
    }

    /// An MCP call (`server`, `tool`, `arguments`): what its arguments name, or an action of the
    /// tool alone.
    fn mcp_call(&mut self, step: usize, call: &Value) {
        let tool = format!(
            "{}.{}",
            str_of(call, "server").unwrap_or("mcp"),
            str_of(call, "tool").unwrap_or("tool")
        );
        match args_value(call.get("arguments").unwrap_or(&Value::Null)) {
            Some(a) => {
                if !self.parts.arguments(step, &tool, &a) {
                    self.parts.act(step, &tool, ActionKind::Other, "");
                }
            }
            None => self
                .parts
                .unread(step, &tool, "the MCP call's arguments are not JSON"),
        }
    }

    // ---- the older codex exec --json ----

    fn legacy_event(&mut self, step: usize, v: &Value) {
        let Some(msg) = v.get("msg") else {
            self.legacy_prologue(step, v);
            return;
        };
        let call_id = str_of(msg, "call_id").map(str::to_owned);
        let ty = str_of(msg, "type");
        let begins_call = matches!(
            ty,
            Some(
                "exec_command_begin"
                    | "patch_apply_begin"
                    | "web_search_begin"
                    | "web_search_end"
                    | "mcp_tool_call_begin"
            )
        );
        if begins_call {
            // A call is counted and read once, however many of its events repeat it.
            if !self.first_sight(ty.unwrap_or(""), call_id.as_deref()) {
                return;
            }
            self.parts.tool_calls += 1;
        }
        match ty {
            Some("session_configured") => {
                if let Some(m) = str_of(msg, "model") {
                    self.parts.model = Some(m.to_owned());
                }
                self.parts.session_id = str_of(msg, "session_id").map(str::to_owned);
            }
            Some("exec_command_begin") => self.legacy_exec(step, msg, call_id),
            Some("patch_apply_begin") => self.legacy_patch(step, msg, call_id),
            Some("patch_apply_end") => {
                if let Some(id) = &call_id
                    && let Some(&e) = self.edits_by_id.get(id)
                {
                    self.parts.edits[e].outcome = match msg.get("success").and_then(Value::as_bool)
                    {
                        Some(true) => EditOutcome::Applied,
                        Some(false) => EditOutcome::Failed,
                        None => EditOutcome::Unknown,
                    };
                }
            }
            Some("web_search_begin" | "web_search_end") => {
                self.web_search(step, msg.get("action"), str_of(msg, "query"));
            }
            Some("mcp_tool_call_begin") => {
                self.mcp_call(step, msg.get("invocation").unwrap_or(&Value::Null));
            }
            Some("agent_message") => {
                if let Some(t) = str_of(msg, "message") {
                    self.message(step, t);
                }
            }
            Some("agent_reasoning") => {
                if let Some(t) = str_of(msg, "text") {
                    self.message(step, t);
                }
            }
            _ => {}
        }
    }

    /// The lines before the events: the config summary and the prompt.
    fn legacy_prologue(&mut self, step: usize, v: &Value) {
        if let Some(p) = str_of(v, "prompt") {
            self.parts.prompt.get_or_insert_with(|| p.to_owned());
            self.parts.act(step, "prompt", ActionKind::Prompt, p);
        } else if let Some(m) = str_of(v, "model") {
            self.parts.model.get_or_insert_with(|| m.to_owned());
            if let Some(w) = str_of(v, "workdir") {
                self.parts.cwd.get_or_insert_with(|| w.to_owned());
            }
        }
    }

    /// Whether this is the first event of type `ty` for the call (events without an id always are).
    fn first_sight(&mut self, ty: &str, call_id: Option<&str>) -> bool {
        match call_id {
            Some(id) => self.seen_calls.insert(format!("{ty}:{id}")),
            None => true,
        }
    }

    /// `exec_command_begin`: the command as an argument list (or, in some versions, a string).
    fn legacy_exec(&mut self, step: usize, msg: &Value, call_id: Option<String>) {
        let cwd = str_of(msg, "cwd").map(str::to_owned);
        let command = msg.get("command");
        if let Some(argv) = command.and_then(string_list) {
            self.argv(step, "shell", &argv, call_id, cwd);
        } else if let Some(c) = command.and_then(Value::as_str) {
            self.command(step, "shell", c, cwd);
        } else {
            self.parts
                .unread(step, "shell", "exec_command_begin without a command");
        }
    }

    /// `patch_apply_begin`: every file change with its content, or an opaque change when one is
    /// in a form not read.
    fn legacy_patch(&mut self, step: usize, msg: &Value, call_id: Option<String>) {
        let Some(changes) = msg.get("changes").and_then(Value::as_object) else {
            self.parts
                .unread(step, "apply_patch", "patch_apply_begin without changes");
            return;
        };
        let mut ops = Vec::new();
        let mut bad = None;
        for (path, change) in changes {
            match file_change(path, change) {
                Some(op) => ops.push(op),
                None => bad = Some(path.clone()),
            }
        }
        match bad {
            Some(p) => {
                self.parts.act(step, "apply_patch", ActionKind::Edit, &p);
                self.parts.opaque(
                    step,
                    "apply_patch",
                    format!("a change of {p} in a form not read"),
                );
            }
            None => self.edit(step, "apply_patch", call_id, ops, None),
        }
    }

    // ---- session rollouts ----

    fn rollout_line(&mut self, step: usize, v: &Value) {
        let (ty, payload) = match (str_of(v, "type"), v.get("payload")) {
            (Some(t), Some(p)) => (t, p),
            // The oldest rollouts: a bare meta line, `record_type` lines and bare items.
            _ => {
                if v.get("record_type").is_some() {
                    return;
                }
                if v.get("instructions").is_some() && str_of(v, "type").is_none() {
                    self.meta(v);
                    return;
                }
                ("response_item", v)
            }
        };
        match ty {
            "session_meta" => self.meta(payload.get("meta").unwrap_or(payload)),
            "turn_context" => {
                if let Some(m) = str_of(payload, "model") {
                    self.parts.model.get_or_insert_with(|| m.to_owned());
                }
                if let Some(c) = str_of(payload, "cwd") {
                    self.parts.cwd.get_or_insert_with(|| c.to_owned());
                }
            }
            "response_item" => self.response_item(step, payload),
            "event_msg" => match str_of(payload, "type") {
                Some("user_message") => {
                    if self.user_message.is_none()
                        && let Some(m) = str_of(payload, "message")
                    {
                        self.user_message = Some((step, m.to_owned()));
                    }
                }
                Some("collab_agent_spawn_end") => {
                    if let (Some(call), Some(thread)) =
                        (str_of(payload, "call_id"), str_of(payload, "new_thread_id"))
                    {
                        self.spawned(call, thread, true);
                    }
                }
                Some("patch_apply_end") => {
                    if let Some(id) = str_of(payload, "call_id")
                        && let Some(&e) = self.edits_by_id.get(id)
                    {
                        match payload.get("success").and_then(Value::as_bool) {
                            Some(true) => self.parts.edits[e].outcome = EditOutcome::Applied,
                            Some(false) => self.parts.edits[e].outcome = EditOutcome::Failed,
                            None => {}
                        }
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }

    fn meta(&mut self, m: &Value) {
        if let Some(id) = str_of(m, "id") {
            self.parts.session_id.get_or_insert_with(|| id.to_owned());
            self.threads_read.insert(id.to_owned());
        }
        if let Some(c) = str_of(m, "cwd") {
            self.parts.cwd.get_or_insert_with(|| c.to_owned());
        }
        if let Some(v) = str_of(m, "cli_version") {
            self.parts.version.get_or_insert_with(|| v.to_owned());
        }
    }

    fn response_item(&mut self, step: usize, p: &Value) {
        let call_id = str_of(p, "call_id").map(str::to_owned);
        match str_of(p, "type") {
            Some("message") => {
                let text = text_of(p.get("content").unwrap_or(&Value::Null));
                match str_of(p, "role") {
                    Some("user") => {
                        let t = text.trim_start();
                        let injected = t.starts_with("<environment_context>")
                            || t.starts_with("<user_instructions>")
                            || t.starts_with("# AGENTS.md")
                            || t.starts_with("<permissions");
                        if !injected && !t.is_empty() && self.first_user_item.is_none() {
                            self.first_user_item = Some((step, text));
                        }
                    }
                    Some("assistant") => self.message(step, &text),
                    _ => {}
                }
            }
            Some("reasoning") => {
                let summary = text_of(p.get("summary").unwrap_or(&Value::Null));
                self.message(step, &summary);
            }
            Some("function_call") => {
                self.parts.tool_calls += 1;
                let name = str_of(p, "name").unwrap_or("tool").to_owned();
                let raw = p.get("arguments").unwrap_or(&Value::Null);
                let Some(args) = args_value(raw) else {
                    self.parts
                        .unread(step, &name, "the call's `arguments` are not JSON");
                    return;
                };
                self.function_call(step, &name, &args, call_id);
            }
            Some("custom_tool_call") => {
                self.parts.tool_calls += 1;
                let name = str_of(p, "name").unwrap_or("tool").to_owned();
                let input = str_of(p, "input").unwrap_or("");
                match name.as_str() {
                    "apply_patch" => self.envelope(step, &name, input, call_id, None),
                    "exec" | "js" | "code" => self.program(step, &name, input),
                    _ => self.parts.unread(
                        step,
                        &name,
                        format!("a free-form `{name}` call whose input is not read"),
                    ),
                }
            }
            Some("local_shell_call") => {
                self.parts.tool_calls += 1;
                let action = p.get("action").unwrap_or(&Value::Null);
                let cwd = str_of(action, "working_directory").map(str::to_owned);
                match action.get("command").and_then(string_list) {
                    Some(argv) => self.argv(step, "local_shell", &argv, call_id, cwd),
                    None => self
                        .parts
                        .unread(step, "local_shell", "no `action.command` list"),
                }
            }
            Some("web_search_call") => {
                self.parts.tool_calls += 1;
                self.web_search(step, p.get("action"), None);
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                if let Some(id) = &call_id
                    && self.spawns.contains_key(id)
                    && let Some(out) = p.get("output").and_then(spawn_output)
                {
                    self.spawned(id, &out, false);
                }
                if let Some(id) = &call_id
                    && let Some(&e) = self.edits_by_id.get(id)
                    && self.parts.edits[e].outcome == EditOutcome::Unknown
                {
                    self.parts.edits[e].outcome = output_outcome(p.get("output"));
                }
            }
            _ => {}
        }
    }

    fn function_call(&mut self, step: usize, name: &str, args: &Value, call_id: Option<String>) {
        let workdir = str_of(args, "workdir").map(str::to_owned);
        match name {
            "shell" | "container.exec" | "local_shell" => {
                let command = args.get("command");
                if let Some(argv) = command.and_then(string_list) {
                    self.argv(step, name, &argv, call_id, workdir);
                } else if let Some(c) = command.and_then(Value::as_str) {
                    self.shell_string(step, name, c, call_id, workdir);
                } else {
                    self.parts.unread(step, name, "no `command` argument list");
                }
            }
            "shell_command" => match str_of(args, "command") {
                Some(c) => self.shell_string(step, name, c, call_id, workdir),
                None => self.parts.unread(step, name, "no `command` string"),
            },
            "exec_command" => match str_of(args, "cmd").or(str_of(args, "command")) {
                Some(c) => self.shell_string(step, name, c, call_id, workdir),
                None => self.parts.unread(step, name, "no `cmd` string"),
            },
            "write_stdin" => {
                let chars = str_of(args, "chars").unwrap_or("");
                if chars.trim().is_empty() {
                    self.parts.act(step, name, ActionKind::Other, "");
                } else {
                    // Typed into a running shell: it runs like a command.
                    self.parts.act(step, name, ActionKind::Command, chars);
                }
            }
            "apply_patch" => {
                let input = str_of(args, "input")
                    .or(str_of(args, "patch"))
                    .unwrap_or("")
                    .to_owned();
                self.envelope(step, name, &input, call_id, workdir);
            }
            "spawn_agent" => {
                // The sub-agent's task is words to it; its steps are in its own rollout.
                self.parts
                    .act(step, name, ActionKind::Message, &words_to_agent(args));
                self.parts.subagents.push(SubAgentLink {
                    step,
                    id: None,
                    read: false,
                });
                if let Some(id) = call_id {
                    self.spawns.insert(id, self.parts.subagents.len() - 1);
                }
            }
            "send_input" => {
                self.parts
                    .act(step, name, ActionKind::Message, &words_to_agent(args));
            }
            "exec" | "js" | "code" => match args
                .as_str()
                .or(str_of(args, "code"))
                .or(str_of(args, "source"))
                .or(str_of(args, "input"))
            {
                Some(program) => self.program(step, name, program),
                None => self
                    .parts
                    .unread(step, name, "a code-mode call without its program"),
            },
            "web__run" | "web.run" => self.web_run(step, name, args),
            _ => {
                if !self.parts.arguments(step, name, args) {
                    self.parts.act(step, name, ActionKind::Other, "");
                }
            }
        }
    }

    /// A code-mode program (`code_mode.rs`): each of its tool calls read as the call it makes,
    /// or the whole program unread with why.
    fn program(&mut self, step: usize, tool: &str, program: &str) {
        match code_mode::read_program(program) {
            Ok(calls) => {
                if calls.is_empty() {
                    self.parts.act(step, tool, ActionKind::Other, "");
                }
                for call in calls {
                    self.parts.tool_calls += 1;
                    let args = match (call.tool.as_str(), call.argument) {
                        ("apply_patch", Value::String(p)) => json!({ "input": p }),
                        ("exec_command", Value::String(c)) => json!({ "cmd": c }),
                        (_, a) => a,
                    };
                    self.function_call(step, &call.tool, &args, None);
                }
            }
            Err(why) => {
                self.parts
                    .unread(step, tool, format!("a code-mode program not read: {why}"))
            }
        }
    }

    /// The `web.run` tool: pages opened (`open[].ref_id`, when an address) and queries
    /// (`search_query[].q`); other operations (find, click on a result) are steps.
    fn web_run(&mut self, step: usize, tool: &str, args: &Value) {
        let mut any = false;
        let list = |key: &str| {
            args.get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        for page in list("open") {
            if let Some(url) = str_of(&page, "ref_id").filter(|u| u.contains("://")) {
                self.parts.act(step, tool, ActionKind::Url, url);
                any = true;
            }
        }
        for query in list("search_query").into_iter().chain(list("image_query")) {
            if let Some(q) = str_of(&query, "q") {
                self.parts.act(step, tool, ActionKind::Search, q);
                any = true;
            }
        }
        if !any && !self.parts.arguments(step, tool, args) {
            self.parts.act(step, tool, ActionKind::Other, "");
        }
    }

    /// A shell command given as a string: `apply_patch` heredocs are edits, the rest commands.
    fn shell_string(
        &mut self,
        step: usize,
        tool: &str,
        script: &str,
        call_id: Option<String>,
        workdir: Option<String>,
    ) {
        if let Some((env, dir)) = apply_patch::from_heredoc(script) {
            self.envelope(step, "apply_patch", &env, call_id, dir.or(workdir));
            return;
        }
        self.command(step, tool, script, workdir);
    }

    /// An argument list: `apply_patch ENVELOPE` and `bash -lc "apply_patch <<…"` are edits.
    fn argv(
        &mut self,
        step: usize,
        tool: &str,
        argv: &[String],
        call_id: Option<String>,
        workdir: Option<String>,
    ) {
        match argv {
            [p, env] if p == "apply_patch" || p == "applypatch" => {
                self.envelope(step, "apply_patch", env, call_id, workdir);
            }
            [sh, flag, script]
                if matches!(sh.rsplit('/').next(), Some("bash" | "sh" | "zsh" | "dash"))
                    && flag.starts_with('-')
                    && flag.contains('c') =>
            {
                match apply_patch::from_heredoc(script) {
                    Some((env, dir)) => {
                        self.envelope(step, "apply_patch", &env, call_id, dir.or(workdir))
                    }
                    None => self.command(step, tool, &shell_join(argv), workdir),
                }
            }
            _ => self.command(step, tool, &shell_join(argv), workdir),
        }
    }

    fn command(&mut self, step: usize, tool: &str, script: &str, _cwd: Option<String>) {
        // Item events of some versions join the argument list with bare spaces (`bash -lc git
        // log --all`): the script is then everything after the flag.
        let text = unquoted_shell_script(script).unwrap_or(script);
        self.parts.act(step, tool, ActionKind::Command, text);
    }

    fn envelope(
        &mut self,
        step: usize,
        tool: &str,
        envelope: &str,
        call_id: Option<String>,
        cwd: Option<String>,
    ) {
        match apply_patch::parse(envelope) {
            Ok(ops) => self.edit(step, tool, call_id, ops, cwd),
            Err(why) => {
                self.parts.act(step, tool, ActionKind::Edit, "");
                self.parts.opaque(
                    step,
                    tool,
                    format!("an apply_patch envelope not read: {why}"),
                );
            }
        }
    }

    fn edit(
        &mut self,
        step: usize,
        tool: &str,
        call_id: Option<String>,
        ops: Vec<EditOp>,
        cwd: Option<String>,
    ) {
        let paths: Vec<String> = ops
            .iter()
            .flat_map(|o| o.paths().into_iter().map(str::to_owned))
            .collect();
        let action = self
            .parts
            .act(step, tool, ActionKind::Edit, &paths.join(", "));
        self.parts.edits.push(FileEdit {
            step,
            tool: tool.to_owned(),
            call_id: call_id.clone(),
            ops,
            outcome: EditOutcome::Unknown,
            original: None,
            user_modified: false,
            cwd,
            action,
        });
        if let Some(id) = call_id {
            self.edits_by_id.insert(id, self.parts.edits.len() - 1);
        }
    }

    fn web_search(&mut self, step: usize, action: Option<&Value>, query: Option<&str>) {
        let action = action.unwrap_or(&Value::Null);
        match str_of(action, "type") {
            Some("open_page" | "find_in_page") => {
                if let Some(u) = str_of(action, "url") {
                    self.parts.act(step, "web_search", ActionKind::Url, u);
                }
            }
            _ => {
                let mut qs: Vec<String> = action
                    .get("queries")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|q| q.as_str().map(str::to_owned))
                    .collect();
                if let Some(q) = str_of(action, "query").or(query).filter(|q| !q.is_empty())
                    && !qs.iter().any(|x| x == q)
                {
                    qs.push(q.to_owned());
                }
                for q in qs {
                    self.parts.act(step, "web_search", ActionKind::Search, &q);
                }
            }
        }
    }

    fn message(&mut self, step: usize, text: &str) {
        if !text.trim().is_empty() {
            self.parts.act(step, "message", ActionKind::Message, text);
        }
    }

    /// The `spawn_agent` call `call_id` started `thread`: a thread id from the spawn's event
    /// (`thread_id`), else what the call's output names.
    fn spawned(&mut self, call_id: &str, thread: &str, thread_id: bool) {
        if let Some(&i) = self.spawns.get(call_id)
            && (thread_id || self.parts.subagents[i].id.is_none())
        {
            self.parts.subagents[i].id = Some(thread.to_owned());
        }
    }

    /// The threads of the sub-agents started so far whose rollouts were not read with this one.
    pub(super) fn unread_threads(&self) -> Vec<String> {
        self.parts
            .subagents
            .iter()
            .filter_map(|l| l.id.as_ref())
            .filter(|id| !self.threads_read.contains(*id))
            .cloned()
            .collect()
    }

    /// Sub-agents whose rollouts were not read with this one are unread: what they did is
    /// unknown.
    fn check_subagents(&mut self) {
        for link in &mut self.parts.subagents {
            link.read = link
                .id
                .as_ref()
                .is_some_and(|id| self.threads_read.contains(id));
        }
        let missing: Vec<(usize, String)> = self
            .parts
            .subagents
            .iter()
            .filter(|l| !l.read)
            .map(|l| {
                let why = match &l.id {
                    Some(id) => format!(
                        "the sub-agent `{id}` ran in a rollout of its own (rollout-…-{id}.jsonl), \
                         which was not found beside this one: its steps are not read"
                    ),
                    None => "a sub-agent was started and the transcript does not say which \
                             thread it ran in: its steps are not read"
                        .to_owned(),
                };
                (l.step, why)
            })
            .collect();
        for (step, why) in missing {
            self.parts.unread(step, "spawn_agent", why);
        }
    }

    pub(crate) fn finish(mut self) -> Trajectory {
        self.check_subagents();
        for (step, item) in std::mem::take(&mut self.items) {
            self.exec_item(step, &item);
        }
        if self.parts.prompt.is_none()
            && let Some((step, p)) = self.user_message.take().or(self.first_user_item.take())
        {
            self.parts.act(step, "prompt", ActionKind::Prompt, &p);
            self.parts.prompt = Some(p);
        }
        self.parts
    }
}

/// What a `spawn_agent` or `send_input` call tells the sub-agent: its `message`, else the text
/// of its `items`.
fn words_to_agent(args: &Value) -> String {
    str_of(args, "message")
        .map(str::to_owned)
        .unwrap_or_else(|| text_of(args.get("items").unwrap_or(&Value::Null)))
}

/// The thread a `spawn_agent` call's output names: `agent_id` (v1) or `task_name` (v2), in an
/// output given as an object or as JSON text.
fn spawn_output(output: &Value) -> Option<String> {
    let v = match output {
        Value::String(t) => serde_json::from_str::<Value>(t).ok()?,
        other => other.clone(),
    };
    str_of(&v, "agent_id")
        .or(str_of(&v, "task_name"))
        .map(str::to_owned)
}

/// A JSON array of strings as a list (`None` for anything else).
fn string_list(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|w| w.as_str().map(str::to_owned))
        .collect()
}

/// A legacy `changes` entry: `{"add": {"content"}}`, `{"delete": {…}}` or `"delete"`,
/// `{"update": {"unified_diff", "move_path"}}`, or the newer `{"type": "add" | "delete" |
/// "update", …}`.
fn file_change(path: &str, change: &Value) -> Option<EditOp> {
    let path = path.to_owned();
    if change.as_str() == Some("delete") {
        return Some(EditOp::Delete { path });
    }
    let (kind, body) = match str_of(change, "type") {
        Some(t) => (t, change),
        None => {
            let (k, b) = change.as_object()?.iter().next()?;
            (k.as_str(), b)
        }
    };
    match kind {
        "add" => Some(EditOp::Add {
            path,
            content: str_of(body, "content")?.to_owned(),
        }),
        "delete" => Some(EditOp::Delete { path }),
        "update" => Some(EditOp::UnifiedDiff {
            path,
            diff: str_of(body, "unified_diff")?.to_owned(),
            move_to: str_of(body, "move_path").map(str::to_owned),
        }),
        _ => None,
    }
}

/// Arguments as an object: JSON objects as they are, JSON strings parsed.
fn args_value(v: &Value) -> Option<Value> {
    match v {
        Value::String(t) => serde_json::from_str(t).ok(),
        Value::Object(_) => Some(v.clone()),
        Value::Null => Some(Value::Object(Default::default())),
        _ => None,
    }
}

/// Whether a tool output says the call succeeded: `{"output", "metadata": {"exit_code"}}` (as a
/// JSON string or an object), "Success. Updated the following files", "Exit code: N".
fn output_outcome(output: Option<&Value>) -> EditOutcome {
    let Some(output) = output else {
        return EditOutcome::Unknown;
    };
    let parsed = match output {
        Value::String(t) => serde_json::from_str::<Value>(t).unwrap_or(Value::String(t.clone())),
        other => other.clone(),
    };
    if let Some(code) = parsed
        .get("metadata")
        .and_then(|m| m.get("exit_code"))
        .and_then(Value::as_i64)
    {
        return if code == 0 {
            EditOutcome::Applied
        } else {
            EditOutcome::Failed
        };
    }
    let text = match &parsed {
        Value::String(t) => t.clone(),
        Value::Object(_) => str_of(&parsed, "output").unwrap_or("").to_owned(),
        other => text_of(other),
    };
    let t = text.trim_start();
    for line in t.lines().take(5) {
        if let Some(code) = line
            .strip_prefix("Exit code: ")
            .or_else(|| line.strip_prefix("Process exited with code "))
            .and_then(|c| c.trim().parse::<i64>().ok())
        {
            return if code == 0 {
                EditOutcome::Applied
            } else {
                EditOutcome::Failed
            };
        }
    }
    if t.starts_with("Success") || t.starts_with("Done!") {
        EditOutcome::Applied
    } else if t.starts_with("apply_patch verification failed")
        || t.starts_with("Failed")
        || t.starts_with("error")
        || t.starts_with("Error")
    {
        EditOutcome::Failed
    } else {
        EditOutcome::Unknown
    }
}

/// `bash -lc git log --all` (an argument list joined with bare spaces): the script after the flag.
fn unquoted_shell_script(command: &str) -> Option<&str> {
    let mut words = command.splitn(3, ' ');
    let sh = words.next()?;
    let flag = words.next()?;
    let rest = words.next()?;
    let shell = matches!(sh.rsplit('/').next(), Some("bash" | "sh" | "zsh" | "dash"));
    let quoted = rest.starts_with('\'') || rest.starts_with('"');
    (shell && flag.starts_with('-') && flag.contains('c') && !quoted && rest.contains(' '))
        .then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::super::reading::transcript_from_values;
    use super::*;
    use serde_json::json;

    #[test]
    fn rollout_shell_calls_keep_their_script() {
        let lines = [
            json!({"timestamp": "t", "type": "session_meta", "payload": {"id": "s", "cwd": "/w", "cli_version": "0.46.0"}}),
            json!({"timestamp": "t", "type": "turn_context", "payload": {"cwd": "/w", "model": "gpt-5-codex"}}),
            json!({"timestamp": "t", "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>x</environment_context>"}]}}),
            json!({"timestamp": "t", "type": "event_msg", "payload": {"type": "user_message", "message": "Fix it"}}),
            json!({"timestamp": "t", "type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"bash\",\"-lc\",\"git log --all\"]}", "call_id": "c1"}}),
            json!({"timestamp": "t", "type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"apply_patch\",\"*** Begin Patch\\n*** Add File: a.txt\\n+x\\n*** End Patch\"]}", "call_id": "c2"}}),
            json!({"timestamp": "t", "type": "response_item", "payload": {"type": "function_call_output", "call_id": "c2", "output": "{\"output\":\"Success. Updated the following files:\\nA a.txt\\n\",\"metadata\":{\"exit_code\":0}}"}}),
            // Code mode: a program's plain calls are read as the calls they make, and one it
            // cannot vouch for (a command built at run time) is unread.
            json!({"timestamp": "t", "type": "response_item", "payload": {"type": "custom_tool_call", "name": "exec", "input": "await tools.exec_command({cmd: 'git fetch'})", "call_id": "c3"}}),
            json!({"timestamp": "t", "type": "response_item", "payload": {"type": "custom_tool_call", "name": "exec", "input": "const p = \"*** Begin Patch\\n*** Add File: b.txt\\n+y\\n*** End Patch\\n\";\ntext(await tools.apply_patch(p));\nconst r = await tools.web__run({\"open\":[{\"ref_id\":\"https://pypi.org/project/x\"}],\"search_query\":[{\"q\":\"x fix\"}]}); text(r);", "call_id": "c4"}}),
            json!({"timestamp": "t", "type": "response_item", "payload": {"type": "custom_tool_call", "name": "exec", "input": "for (const f of ['a','b']) await tools.exec_command({cmd: `cat ${f}`});", "call_id": "c5"}}),
        ];
        let t = transcript_from_values(&lines, None).unwrap();
        assert_eq!(t.shape, TrajectoryShape::CodexRollout);
        assert_eq!(t.model_name(), "codex/gpt-5-codex");
        assert_eq!(t.prompt.as_deref(), Some("Fix it"));
        let cmds: Vec<&str> = t.commands().map(|a| a.text.as_str()).collect();
        assert_eq!(cmds, ["bash -lc 'git log --all'", "git fetch"]);
        assert_eq!(t.edits.len(), 2);
        assert_eq!(t.edits[0].outcome, EditOutcome::Applied);
        let web: Vec<&str> = t
            .actions
            .iter()
            .filter(|a| matches!(a.kind, ActionKind::Url | ActionKind::Search))
            .map(|a| a.text.as_str())
            .collect();
        assert_eq!(web, ["https://pypi.org/project/x", "x fix"]);
        assert_eq!(t.unread.len(), 1, "{:?}", t.unread);
        assert!(t.unread[0].why.contains("computed"), "{:?}", t.unread);
        // Five calls in the rollout, and three made inside two programs.
        assert_eq!(t.tool_calls, 8);
    }

    #[test]
    fn exec_items_are_read_once_and_bare_joins_opened() {
        let lines = [
            json!({"type": "thread.started", "thread_id": "th"}),
            json!({"type": "item.started", "item": {"id": "i1", "type": "command_execution", "command": "bash -lc git fetch origin", "status": "in_progress"}}),
            json!({"type": "item.completed", "item": {"id": "i1", "type": "command_execution", "command": "bash -lc git fetch origin", "exit_code": 0, "status": "completed"}}),
            json!({"type": "item.completed", "item": {"id": "i2", "type": "file_change", "changes": [{"path": "a.py", "kind": "update"}], "status": "completed"}}),
        ];
        let t = transcript_from_values(&lines, None).unwrap();
        let cmds: Vec<&str> = t.commands().map(|a| a.text.as_str()).collect();
        assert_eq!(cmds, ["git fetch origin"]);
        assert_eq!(t.opaque_edits.len(), 1);
        assert_eq!(t.tool_calls, 2);
    }

    #[test]
    fn legacy_events_carry_model_and_content() {
        let lines = [
            json!({"model": "gpt-5", "workdir": "/w", "approval": "never", "sandbox": "danger-full-access"}),
            json!({"prompt": "Fix it"}),
            json!({"id": "0", "msg": {"type": "exec_command_begin", "call_id": "c1", "command": ["bash", "-lc", "git pull"], "cwd": "/w"}}),
            json!({"id": "0", "msg": {"type": "patch_apply_begin", "call_id": "c2", "auto_approved": true, "changes": {"/w/a.py": {"update": {"unified_diff": "@@ -1 +1 @@\n-a\n+b\n", "move_path": null}}}}}),
            json!({"id": "0", "msg": {"type": "patch_apply_end", "call_id": "c2", "stdout": "", "stderr": "", "success": true}}),
        ];
        let t = transcript_from_values(&lines, None).unwrap();
        assert_eq!(t.shape, TrajectoryShape::CodexExecLegacy);
        assert_eq!(t.model.as_deref(), Some("gpt-5"));
        assert_eq!(t.commands().count(), 1);
        assert_eq!(t.edits[0].outcome, EditOutcome::Applied);
    }
}
