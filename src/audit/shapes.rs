//! The trajectory shapes the audit reads, each into one list of events: those a release line can
//! carry ([`events`]: ATIF steps, OpenHands history, AweAgent steps, and Claude Code and Codex
//! transcripts in every shape they are written in, inline as a list of records or as the file's
//! text), and a raw transcript file ([`from_transcript`]). Transcripts are read by `submission`'s
//! transcript readers, the same ones ingest uses. Tool calls that cannot be read are kept, so an
//! audit never calls clean what it did not read.

use crate::submission::{
    ActionKind, Agent, Transcript, TranscriptShape, Unread, shape_of, shell_join,
    transcript_from_values,
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

impl Event {
    fn new(step: usize, tool: &str, kind: EventKind, text: impl Into<String>) -> Event {
        Event {
            step,
            tool: tool.to_owned(),
            kind,
            text: text.into(),
        }
    }
}

/// Which shape a trajectory line carries. Claude Code's and Codex's are the transcript reader's
/// own shapes, under the names it gives them; written as one kebab-case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrajectoryShape {
    /// Harbor's ATIF trajectory (`steps`).
    Atif,
    /// A Claude Code or Codex transcript.
    Transcript(TranscriptShape),
    /// OpenHands' event history.
    OpenhandsHistory,
    /// AweAgent's steps.
    AweagentSteps,
    /// A SWE-agent `.traj` file (`trajectory` steps whose `action` is the command line).
    SweAgentTraj,
    /// A mini-swe-agent `.traj.json` file (`messages`; commands in code blocks or tool calls).
    MiniSweAgent,
}

impl TrajectoryShape {
    /// The shape's name in the audit's output.
    pub fn name(self) -> &'static str {
        match self {
            TrajectoryShape::Atif => "atif",
            TrajectoryShape::Transcript(t) => t.name(),
            TrajectoryShape::OpenhandsHistory => "openhands-history",
            TrajectoryShape::AweagentSteps => "aweagent-steps",
            TrajectoryShape::SweAgentTraj => "swe-agent-traj",
            TrajectoryShape::MiniSweAgent => "mini-swe-agent",
        }
    }
}

impl serde::Serialize for TrajectoryShape {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// What was read from one trajectory.
#[derive(Debug, Clone, PartialEq)]
pub struct Read {
    /// The shape it was written in.
    pub shape: TrajectoryShape,
    /// Its events, in trajectory order.
    pub events: Vec<Event>,
    /// Tool calls whose meaning could not be read.
    pub unread: Vec<Unread>,
    /// Why the trajectory holds nothing to audit even though it was read.
    pub empty_because: Option<String>,
}

impl Read {
    fn of(shape: TrajectoryShape, events: Vec<Event>) -> Read {
        Read {
            shape,
            events,
            unread: Vec::new(),
            empty_because: None,
        }
    }
}

/// The events of a Claude Code or Codex transcript.
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
        shape: TrajectoryShape::Transcript(t.shape),
        events,
        unread: t.unread.clone(),
        empty_because,
    }
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

/// A message's OpenAI-style `tool_calls`: each tool's name (`tool` when it has none) and its
/// arguments, given as an object or as a JSON string.
fn openai_tool_calls(message: &Value) -> impl Iterator<Item = (&str, Value)> {
    message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|call| {
            let f = call.get("function").unwrap_or(call);
            let tool = f.get("name").and_then(s).unwrap_or("tool");
            (
                tool,
                args_object(f.get("arguments").unwrap_or(&Value::Null)),
            )
        })
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
                // An argument list, joined so that a shell reads it back as it was run.
                Value::Array(words) => push(
                    EventKind::Command,
                    &shell_join(&words.iter().filter_map(Value::as_str).collect::<Vec<_>>()),
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

/// Reads the events of a release line; `Err` with the keys found when no shape matches.
pub fn events(line: &Value) -> Result<Read, Vec<String>> {
    let traj = line.get("trajectory");
    if let Some(t) = traj.filter(|t| t.get("steps").is_some()) {
        return Ok(Read::of(TrajectoryShape::Atif, atif(t)));
    }
    if line.get("steps").is_some() && line.get("schema_version").is_some() {
        return Ok(Read::of(TrajectoryShape::Atif, atif(line)));
    }
    if let Some(Value::Array(steps)) = traj
        && !steps.is_empty()
        && steps
            .iter()
            .all(|s| s.get("action").is_none_or(Value::is_string))
        && steps.iter().any(|s| s.get("action").is_some())
    {
        return Ok(swe_agent(steps, line));
    }
    if let Some(Value::Array(msgs)) = line.get("messages")
        && line
            .get("trajectory_format")
            .and_then(Value::as_str)
            .is_some_and(|f| f.starts_with("mini-swe-agent"))
    {
        return Ok(mini_swe_agent(msgs));
    }
    if let Some(Value::Array(steps)) = traj
        && steps.iter().any(|s| s.get("action").is_some())
    {
        return Ok(Read::of(
            TrajectoryShape::AweagentSteps,
            aweagent(steps, line),
        ));
    }
    if let Some(t) = traj.and_then(|t| inline_transcript(t, None)) {
        return Ok(from_transcript(&t));
    }
    if let Some(evs @ Value::Array(_)) = line.get("events")
        && let Some(t) = inline_transcript(evs, Some(Agent::Codex))
    {
        return Ok(from_transcript(&t));
    }
    if let Some(msgs @ Value::Array(_)) = line.get("messages")
        && let Some(t) = inline_transcript(msgs, Some(Agent::ClaudeCode))
    {
        return Ok(from_transcript(&t));
    }
    if let Some(Value::Array(h)) = line.get("history") {
        return Ok(Read::of(
            TrajectoryShape::OpenhandsHistory,
            openhands(h, line),
        ));
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

fn openhands(history: &[Value], line: &Value) -> Vec<Event> {
    let mut out = Vec::new();
    if let Some(p) = line.get("instruction").and_then(s) {
        out.push(Event::new(0, "prompt", EventKind::Prompt, p));
    }
    let mut prompt_seen = !out.is_empty();
    for (i, h) in history.iter().enumerate() {
        let n = i + 1;
        let args = h.get("args").unwrap_or(&Value::Null);
        match (h.get("source").and_then(s), h.get("action").and_then(s)) {
            (Some("user"), Some("message")) if !prompt_seen => {
                prompt_seen = true;
                let text = args.get("content").map(text_of).unwrap_or_default();
                out.push(Event::new(n, "prompt", EventKind::Prompt, text));
            }
            (Some("agent"), Some(action)) => openhands_action(n, action, h, args, &mut out),
            _ => {}
        }
    }
    out
}

/// One agent action of an OpenHands history (`h`, at step `n`): the commands it ran, the pages
/// it opened, or its words and the tool call behind them.
fn openhands_action(n: usize, action: &str, h: &Value, args: &Value, out: &mut Vec<Event>) {
    match action {
        "run" | "run_ipython" => {
            for key in ["command", "code"] {
                if let Some(c) = args.get(key).and_then(s) {
                    out.push(Event::new(n, "run", EventKind::Command, c));
                }
            }
        }
        "browse" => {
            if let Some(u) = args.get("url").and_then(s) {
                out.push(Event::new(n, "browse", EventKind::Url, u));
            }
        }
        "browse_interactive" => {
            let actions = args.get("browser_actions").and_then(s).unwrap_or_default();
            for u in super::rules::urls(actions) {
                out.push(Event::new(n, "browse_interactive", EventKind::Url, u));
            }
        }
        _ => {
            let t = args
                .get("content")
                .or(args.get("thought"))
                .map(text_of)
                .unwrap_or_default();
            if !t.is_empty() {
                out.push(Event::new(n, action, EventKind::Reasoning, t));
            }
            if let Some(tool) = h
                .get("tool_call_metadata")
                .and_then(|m| m.get("function_name"))
                .and_then(s)
            {
                from_arguments(n, tool, args, out);
            }
        }
    }
}

/// SWE-agent's tools that take a block of file text after their first line, up to
/// `end_of_edit`: that text is a file's content, not a shell command (an `edit` may well write
/// the words `git pull` into a file). Their first line, and anything after the block, runs in the
/// shell like any other action (`open x && git log --all` runs both).
const SWE_AGENT_BLOCK_TOOLS: [&str; 4] = ["edit", "insert", "append", "create"];

/// The shell text of a SWE-agent action: the whole action, less the file text of a block tool.
fn swe_agent_shell_text(action: &str) -> String {
    let tool = action.split_whitespace().next().unwrap_or_default();
    if !SWE_AGENT_BLOCK_TOOLS.contains(&tool) {
        return action.to_owned();
    }
    let mut lines = action.lines();
    let first = lines.next().unwrap_or_default();
    let after: Vec<&str> = lines
        .skip_while(|l| l.trim() != "end_of_edit")
        .skip(1)
        .collect();
    std::iter::once(first)
        .chain(after)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A SWE-agent trajectory: the first user message of `history` is the prompt; each step's
/// `thought` is the agent's words and its `action` what the shell ran (SWE-agent's tools are
/// shell functions), less the file text of an edit block.
fn swe_agent(steps: &[Value], line: &Value) -> Read {
    let mut out = Vec::new();
    if let Some(p) = line
        .get("history")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|m| m.get("role").and_then(s) == Some("user"))
        .and_then(|m| m.get("content"))
        .map(text_of)
        .filter(|p| !p.is_empty())
    {
        out.push(Event::new(0, "prompt", EventKind::Prompt, p));
    }
    for (i, st) in steps.iter().enumerate() {
        let n = i + 1;
        if let Some(t) = st.get("thought").and_then(s).filter(|t| !t.is_empty()) {
            out.push(Event::new(n, "message", EventKind::Reasoning, t));
        }
        let Some(action) = st.get("action").and_then(s).map(str::trim) else {
            continue;
        };
        if !action.is_empty() {
            out.push(Event::new(
                n,
                "bash",
                EventKind::Command,
                swe_agent_shell_text(action),
            ));
        }
    }
    Read::of(TrajectoryShape::SweAgentTraj, out)
}

/// The commands in a mini-swe-agent response: its ```` ```bash ```` (v1) or
/// ```` ```mswea_bash_command ```` (v2) blocks.
fn fenced_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let (lang, body) = after.split_once('\n').unwrap_or((after, ""));
        let Some(end) = body.find("```") else {
            break;
        };
        if matches!(lang.trim(), "bash" | "sh" | "shell" | "mswea_bash_command") {
            out.push(body[..end].trim_end().to_owned());
        }
        rest = &body[end + 3..];
    }
    out
}

/// A mini-swe-agent trajectory: the first `user` message is the prompt; an assistant message's
/// words are the agent's, its commands those of its code blocks, tool calls (`function.arguments`
/// with a `command`) and `extra.actions`. A tool call whose arguments cannot be read is unread.
fn mini_swe_agent(msgs: &[Value]) -> Read {
    let mut out = Vec::new();
    let mut unread = Vec::new();
    let mut prompt_seen = false;
    for (i, m) in msgs.iter().enumerate() {
        let n = i + 1;
        let content = m.get("content").map(text_of).unwrap_or_default();
        match m.get("role").and_then(s) {
            Some("user") if !prompt_seen => {
                prompt_seen = true;
                out.push(Event::new(n, "prompt", EventKind::Prompt, content));
            }
            Some("assistant") => {
                if !content.is_empty() {
                    out.push(Event::new(n, "message", EventKind::Reasoning, &content));
                }
                let mut commands = fenced_commands(&content);
                for (tool, args) in openai_tool_calls(m) {
                    let before = out.len();
                    from_arguments(n, tool, &args, &mut out);
                    if out.len() == before && !args.is_object() {
                        unread.push(Unread {
                            step: n,
                            tool: tool.to_owned(),
                            why: "the tool call's arguments are not a JSON object".into(),
                        });
                    }
                }
                for a in m
                    .get("extra")
                    .and_then(|e| e.get("actions"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(c) = a.get("command").and_then(s) {
                        commands.push(c.to_owned());
                    }
                }
                commands.sort();
                commands.dedup();
                for c in commands {
                    if !out
                        .iter()
                        .any(|e| e.step == n && e.kind == EventKind::Command && e.text == c)
                    {
                        out.push(Event::new(n, "bash", EventKind::Command, c));
                    }
                }
            }
            _ => {}
        }
    }
    Read {
        shape: TrajectoryShape::MiniSweAgent,
        events: out,
        unread,
        empty_because: None,
    }
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
        for (tool, args) in openai_tool_calls(action) {
            from_arguments(n, tool, &args, &mut out);
        }
    }
    out
}
