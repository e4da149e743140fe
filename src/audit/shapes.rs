//! The trajectory shapes a release line can carry, read into one list of events: ATIF steps,
//! Codex `exec --json` events, Claude Code stream-json messages, OpenHands history, AweAgent steps.

use serde_json::Value;

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

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Event {
    /// Step (or event) index in the trajectory, from 1.
    pub step: usize,
    pub tool: String,
    pub kind: EventKind,
    pub text: String,
}

/// Which shape a line carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    Atif,
    CodexEvents,
    ClaudeCode,
    OpenhandsHistory,
    AweagentSteps,
}

fn s(v: &Value) -> Option<&str> {
    v.as_str()
}

fn text_of(v: &Value) -> String {
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

/// Arguments given as an object or as a JSON string.
fn args_object(v: &Value) -> Value {
    match v {
        Value::String(t) => serde_json::from_str(t).unwrap_or(Value::Null),
        other => other.clone(),
    }
}

/// Events from tool-call arguments: commands, URLs, queries.
fn from_arguments(step: usize, tool: &str, args: &Value, out: &mut Vec<Event>) {
    let push = |kind, text: &str, out: &mut Vec<Event>| {
        if !text.is_empty() {
            out.push(Event {
                step,
                tool: tool.to_owned(),
                kind,
                text: text.to_owned(),
            });
        }
    };
    for key in ["command", "cmd", "script", "code", "input"] {
        if let Some(t) = args.get(key) {
            match t {
                Value::String(t) => push(EventKind::Command, t, out),
                Value::Array(words) => push(
                    EventKind::Command,
                    &words
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" "),
                    out,
                ),
                _ => {}
            }
        }
    }
    for key in ["url", "uri", "link"] {
        if let Some(t) = args.get(key).and_then(Value::as_str) {
            push(EventKind::Url, t, out);
        }
    }
    if let Some(q) = args.get("query") {
        match q {
            Value::String(t) => push(EventKind::Search, t, out),
            Value::Array(qs) => {
                for t in qs.iter().filter_map(Value::as_str) {
                    push(EventKind::Search, t, out);
                }
            }
            _ => {}
        }
    }
    if let Some(qs) = args.get("queries").and_then(Value::as_array) {
        for t in qs.iter().filter_map(Value::as_str) {
            push(EventKind::Search, t, out);
        }
    }
}

/// Reads the events of a release line; `None` with the keys found when no shape matches.
pub fn events(line: &Value) -> Result<(Shape, Vec<Event>), Vec<String>> {
    let traj = line.get("trajectory");
    if let Some(t) = traj.filter(|t| t.get("steps").is_some()) {
        return Ok((Shape::Atif, atif(t)));
    }
    if line.get("steps").is_some() && line.get("schema_version").is_some() {
        return Ok((Shape::Atif, atif(line)));
    }
    if let Some(Value::Array(steps)) = traj
        && steps.iter().any(|s| s.get("action").is_some())
    {
        return Ok((Shape::AweagentSteps, aweagent(steps, line)));
    }
    if let Some(Value::Array(evs)) = line.get("events") {
        return Ok((Shape::CodexEvents, codex(evs)));
    }
    if let Some(Value::Array(msgs)) = line.get("messages") {
        return Ok((Shape::ClaudeCode, claude(msgs)));
    }
    if let Some(Value::Array(h)) = line.get("history") {
        return Ok((Shape::OpenhandsHistory, openhands(h, line)));
    }
    Err(line
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default())
}

fn atif(t: &Value) -> Vec<Event> {
    let mut out = Vec::new();
    let mut prompt_seen = false;
    for step in t
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let n = step.get("step_id").and_then(Value::as_u64).unwrap_or(0) as usize;
        let source = step
            .get("source")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let message = step.get("message").map(text_of).unwrap_or_default();
        if source == "user" && !prompt_seen {
            prompt_seen = true;
            out.push(Event {
                step: n,
                tool: "prompt".into(),
                kind: EventKind::Prompt,
                text: message,
            });
            continue;
        }
        if source == "agent" {
            for text in [
                message,
                step.get("reasoning_content")
                    .map(text_of)
                    .unwrap_or_default(),
            ] {
                if !text.is_empty() {
                    out.push(Event {
                        step: n,
                        tool: "message".into(),
                        kind: EventKind::Reasoning,
                        text,
                    });
                }
            }
        }
        for call in step
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let tool = call
                .get("function_name")
                .and_then(Value::as_str)
                .unwrap_or("tool");
            let args = args_object(call.get("arguments").unwrap_or(&Value::Null));
            from_arguments(n, tool, &args, &mut out);
        }
    }
    out
}

fn codex(evs: &[Value]) -> Vec<Event> {
    let mut out = Vec::new();
    for (i, ev) in evs.iter().enumerate() {
        // Exec events wrap an item; rollout lines wrap a payload.
        let item = ev.get("item").or_else(|| ev.get("payload")).unwrap_or(ev);
        let n = i + 1;
        match item.get("type").and_then(s) {
            Some("command_execution") => {
                if let Some(c) = item.get("command").and_then(s) {
                    out.push(Event {
                        step: n,
                        tool: "shell".into(),
                        kind: EventKind::Command,
                        text: c.to_owned(),
                    });
                }
            }
            Some("web_search" | "web_search_call") => {
                let action = item.get("action").unwrap_or(&Value::Null);
                match action.get("type").and_then(s) {
                    Some("open_page" | "find_in_page") => {
                        if let Some(u) = action.get("url").and_then(s) {
                            out.push(Event {
                                step: n,
                                tool: "web_search".into(),
                                kind: EventKind::Url,
                                text: u.to_owned(),
                            });
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
                        if let Some(q) = action
                            .get("query")
                            .and_then(s)
                            .or(item.get("query").and_then(s))
                        {
                            qs.push(q.to_owned());
                        }
                        for q in qs {
                            out.push(Event {
                                step: n,
                                tool: "web_search".into(),
                                kind: EventKind::Search,
                                text: q,
                            });
                        }
                    }
                }
            }
            Some("agent_message" | "reasoning" | "message") => {
                let t = item
                    .get("text")
                    .map(text_of)
                    .unwrap_or_else(|| item.get("content").map(text_of).unwrap_or_default());
                if !t.is_empty() {
                    out.push(Event {
                        step: n,
                        tool: "message".into(),
                        kind: EventKind::Reasoning,
                        text: t,
                    });
                }
            }
            Some("function_call") => {
                let tool = item.get("name").and_then(s).unwrap_or("tool");
                from_arguments(
                    n,
                    tool,
                    &args_object(item.get("arguments").unwrap_or(&Value::Null)),
                    &mut out,
                );
            }
            _ => {}
        }
    }
    out
}

fn claude(msgs: &[Value]) -> Vec<Event> {
    let mut out = Vec::new();
    let mut prompt_seen = false;
    for (i, m) in msgs.iter().enumerate() {
        let n = i + 1;
        let content = m
            .get("message")
            .and_then(|x| x.get("content"))
            .unwrap_or(&Value::Null);
        match m.get("type").and_then(s) {
            Some("user") if !prompt_seen => {
                let t = text_of(content);
                if !t.is_empty() {
                    prompt_seen = true;
                    out.push(Event {
                        step: n,
                        tool: "prompt".into(),
                        kind: EventKind::Prompt,
                        text: t,
                    });
                }
            }
            Some("assistant") => {
                for block in content.as_array().into_iter().flatten() {
                    match block.get("type").and_then(s) {
                        Some("tool_use") => {
                            let tool = block.get("name").and_then(s).unwrap_or("tool");
                            from_arguments(
                                n,
                                tool,
                                block.get("input").unwrap_or(&Value::Null),
                                &mut out,
                            );
                        }
                        Some("text" | "thinking") => {
                            let t = block
                                .get("text")
                                .or(block.get("thinking"))
                                .map(text_of)
                                .unwrap_or_default();
                            if !t.is_empty() {
                                out.push(Event {
                                    step: n,
                                    tool: "message".into(),
                                    kind: EventKind::Reasoning,
                                    text: t,
                                });
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn openhands(history: &[Value], line: &Value) -> Vec<Event> {
    let mut out = Vec::new();
    if let Some(p) = line.get("instruction").and_then(s) {
        out.push(Event {
            step: 0,
            tool: "prompt".into(),
            kind: EventKind::Prompt,
            text: p.to_owned(),
        });
    }
    let mut prompt_seen = !out.is_empty();
    for (i, h) in history.iter().enumerate() {
        let n = i + 1;
        let args = h.get("args").unwrap_or(&Value::Null);
        match (h.get("source").and_then(s), h.get("action").and_then(s)) {
            (Some("user"), Some("message")) if !prompt_seen => {
                prompt_seen = true;
                out.push(Event {
                    step: n,
                    tool: "prompt".into(),
                    kind: EventKind::Prompt,
                    text: args.get("content").map(text_of).unwrap_or_default(),
                });
            }
            (Some("agent"), Some("run" | "run_ipython")) => {
                for key in ["command", "code"] {
                    if let Some(c) = args.get(key).and_then(s) {
                        out.push(Event {
                            step: n,
                            tool: "run".into(),
                            kind: EventKind::Command,
                            text: c.to_owned(),
                        });
                    }
                }
            }
            (Some("agent"), Some("browse")) => {
                if let Some(u) = args.get("url").and_then(s) {
                    out.push(Event {
                        step: n,
                        tool: "browse".into(),
                        kind: EventKind::Url,
                        text: u.to_owned(),
                    });
                }
            }
            (Some("agent"), Some("browse_interactive")) => {
                let actions = args.get("browser_actions").and_then(s).unwrap_or_default();
                for u in super::rules::urls(actions) {
                    out.push(Event {
                        step: n,
                        tool: "browse_interactive".into(),
                        kind: EventKind::Url,
                        text: u,
                    });
                }
            }
            (Some("agent"), Some(action)) => {
                let t = args
                    .get("content")
                    .or(args.get("thought"))
                    .map(text_of)
                    .unwrap_or_default();
                if !t.is_empty() {
                    out.push(Event {
                        step: n,
                        tool: action.to_owned(),
                        kind: EventKind::Reasoning,
                        text: t,
                    });
                }
                if let Some(tool) = h
                    .get("tool_call_metadata")
                    .and_then(|m| m.get("function_name"))
                    .and_then(s)
                {
                    from_arguments(n, tool, args, &mut out);
                }
            }
            _ => {}
        }
    }
    out
}

fn aweagent(steps: &[Value], line: &Value) -> Vec<Event> {
    let mut out = Vec::new();
    if let Some(p) = line
        .get("problem_statement")
        .or(line.get("instruction"))
        .and_then(s)
    {
        out.push(Event {
            step: 0,
            tool: "prompt".into(),
            kind: EventKind::Prompt,
            text: p.to_owned(),
        });
    }
    for (i, st) in steps.iter().enumerate() {
        let n = st
            .get("step")
            .and_then(Value::as_u64)
            .map_or(i + 1, |x| x as usize);
        let action = st.get("action").unwrap_or(&Value::Null);
        if let Some(c) = action.get("content").and_then(s).filter(|c| !c.is_empty()) {
            out.push(Event {
                step: n,
                tool: "message".into(),
                kind: EventKind::Reasoning,
                text: c.to_owned(),
            });
        }
        for call in action
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let f = call.get("function").unwrap_or(call);
            let tool = f.get("name").and_then(s).unwrap_or("tool");
            let args = args_object(f.get("arguments").unwrap_or(&Value::Null));
            from_arguments(n, tool, &args, &mut out);
        }
    }
    out
}
