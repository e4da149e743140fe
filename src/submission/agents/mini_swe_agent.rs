//! mini-swe-agent: its runs are laid out as SWE-agent's (`<id>/<id>.traj.json`, `preds.json`;
//! read by `swe_agent.rs`), and its steps are chat `messages`: the first `user` message is the
//! prompt; an assistant message's words are the agent's, its commands what ran: its tool calls
//! (`function.arguments` with a `command`) and `extra.actions` where it has them, else (text
//! mode) its one code block (```` ```bash ```` in v1, ```` ```mswea_bash_command ```` in v2). A
//! block shown beside a tool call did not run; nor did any of several blocks in one reply, which
//! mini-swe-agent refuses as a format error.

use super::trajectory::{
    ActionKind, Trajectory, TrajectoryShape, is_chat, openai_tool_calls, str_of, text_of,
};
use super::{AgentFormat, Ingest, IngestError};
use serde_json::Value;
use std::path::Path;

/// Whether a folder holds mini-swe-agent trajectories, and why not.
pub(super) fn in_dir(folder: &super::Folder) -> (bool, &'static str) {
    (
        folder
            .files_with(".traj.json", super::swe_agent::DEPTH)
            .next()
            .is_some(),
        "no <id>/<id>.traj.json files",
    )
}

/// Whether a file is a mini-swe-agent trajectory: its name ends in `.traj.json`.
pub(super) fn is_file(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".traj.json"))
}

/// Reads a run (a folder, or one `.traj.json` file) into `ing`.
pub(super) fn ingest(
    path: &Path,
    folder: Option<&super::Folder>,
    instance: Option<&str>,
    ing: &mut Ingest,
) -> Result<(), IngestError> {
    super::swe_agent::ingest(
        path,
        folder,
        ".traj.json",
        AgentFormat::MiniSweAgent,
        instance,
        ing,
    )
}

/// Whether a line is a mini-swe-agent trajectory (`messages` with a `trajectory_format` that
/// names it).
pub fn is_trajectory(line: &Value) -> bool {
    line.get("messages").is_some_and(Value::is_array)
        && str_of(line, "trajectory_format").is_some_and(|f| f.starts_with("mini-swe-agent"))
}

/// Whether a file's one JSON list is a trajectory saved as its messages alone (each with a
/// `role`).
pub fn is_message_list(v: &Value) -> bool {
    v.as_array().is_some_and(|msgs| is_chat(msgs))
}

/// The commands in a response's fenced code blocks.
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

/// Reads a trajectory's messages. A tool call whose arguments cannot be read is unread.
pub fn read(msgs: &[Value], line: &Value) -> Trajectory {
    let mut t = Trajectory::new(TrajectoryShape::MiniSweAgent);
    t.model = super::swe_agent::model_from_config(line);
    for (i, m) in msgs.iter().enumerate() {
        let n = i + 1;
        let content = m.get("content").map(text_of).unwrap_or_default();
        match str_of(m, "role") {
            Some("user") if t.prompt.is_none() => t.prompt_at(n, &content),
            Some("assistant") => {
                t.words(n, &content);
                let actions = m
                    .get("extra")
                    .and_then(|e| e.get("actions"))
                    .and_then(Value::as_array);
                let mut commands = if openai_tool_calls(m).next().is_some() || actions.is_some() {
                    Vec::new()
                } else {
                    let blocks = fenced_commands(&content);
                    let refused = || {
                        msgs.get(i + 1)
                            .and_then(|next| next.get("content"))
                            .map(text_of)
                            .is_some_and(|t| t.contains("EXACTLY ONE"))
                    };
                    if blocks.len() > 1 && refused() {
                        Vec::new()
                    } else {
                        blocks
                    }
                };
                for (tool, args) in openai_tool_calls(m) {
                    if args.is_object() {
                        t.generic_call(n, tool, &args);
                    } else {
                        t.tool_calls += 1;
                        t.unread(n, tool, "the tool call's arguments are not a JSON object");
                    }
                }
                for a in actions.into_iter().flatten() {
                    if let Some(c) = str_of(a, "command") {
                        commands.push(c.to_owned());
                    }
                }
                commands.sort();
                commands.dedup();
                for c in commands {
                    let seen = t
                        .actions
                        .iter()
                        .any(|a| a.step == n && a.kind == ActionKind::Command && a.text == c);
                    if !seen {
                        t.tool_calls += 1;
                        t.act(n, "bash", ActionKind::Command, &c);
                    }
                }
            }
            _ => {}
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn commands(msgs: &[Value]) -> Vec<String> {
        let t = read(msgs, &json!({}));
        t.commands().map(|a| a.text.clone()).collect()
    }

    /// What ran is what the reader reads: a tool call's command, not a block the same reply
    /// shows (mini-swe-agent 2.x in tool-call mode; the block was the model's words).
    #[test]
    fn a_block_beside_a_tool_call_did_not_run() {
        let msgs = [
            json!({"role": "user", "content": "Fix it"}),
            json!({"role": "assistant", "content": "I will run:\n```bash\ngit log --all\n```", "tool_calls": [{"id": "c1", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]}),
            json!({"role": "assistant", "content": "Again:\n```bash\ngit log --all\n```", "extra": {"actions": [{"command": "pwd"}]}}),
        ];
        assert_eq!(commands(&msgs), ["ls", "pwd"]);
    }

    /// Text mode: one block runs; several in one reply are a format error that runs none
    /// (the next message says so), and without that message every block is read.
    #[test]
    fn text_mode_runs_one_block_and_refuses_several() {
        let one = [json!({"role": "assistant", "content": "```bash\ngit fetch\n```"})];
        assert_eq!(commands(&one), ["git fetch"]);
        let two = "```bash\nls\n```\nthen\n```bash\ngit fetch\n```";
        let refused = [
            json!({"role": "assistant", "content": two}),
            json!({"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks, found 2 actions."}),
        ];
        assert!(commands(&refused).is_empty());
        let ran = [
            json!({"role": "assistant", "content": two}),
            json!({"role": "user", "content": "<returncode>0</returncode>"}),
        ];
        assert_eq!(commands(&ran), ["git fetch", "ls"]);
    }
}
