//! Harbor's ATIF trajectories (`schema_version`, `agent`, `steps`), as Harbor's own agents write
//! them to `agent/trajectory.json` and as a release line carries them: the first user message is
//! the prompt, an agent step's `message` and `reasoning_content` are its words, and its
//! `tool_calls` (`function_name`, `arguments`) its calls: a call naming a file and what to write
//! in it is an edit (shown, not replayed), any other a generic call (terminus's `keystrokes`
//! are commands).

use super::trajectory::{Trajectory, TrajectoryShape, args_object, str_of, text_of};
use serde_json::Value;

/// Whether `v` is an ATIF trajectory: an object with `steps` (and, standing alone rather than
/// under a release line's `trajectory`, a `schema_version`).
pub fn is_atif(v: &Value, alone: bool) -> bool {
    v.get("steps").is_some() && (!alone || v.get("schema_version").is_some())
}

/// Reads an ATIF trajectory's steps.
pub fn read(t: &Value) -> Trajectory {
    let mut out = Trajectory::new(TrajectoryShape::Atif);
    out.model = t
        .get("agent")
        .and_then(|a| str_of(a, "model_name"))
        .map(str::to_owned);
    out.session_id = str_of(t, "session_id").map(str::to_owned);
    out.version = t
        .get("agent")
        .and_then(|a| str_of(a, "version"))
        .map(str::to_owned);
    for step in t
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let n = step.get("step_id").and_then(Value::as_u64).unwrap_or(0) as usize;
        let source = str_of(step, "source").unwrap_or_default();
        let message = step.get("message").map(text_of).unwrap_or_default();
        if source == "user" && out.prompt.is_none() {
            out.prompt_at(n, &message);
            continue;
        }
        if source == "agent" {
            out.words(n, &message);
            out.words(
                n,
                &step
                    .get("reasoning_content")
                    .map(text_of)
                    .unwrap_or_default(),
            );
        }
        for call in step
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let tool = str_of(call, "function_name").unwrap_or("tool");
            let args = args_object(call.get("arguments").unwrap_or(&Value::Null));
            match edited_file(&args) {
                Some(path) => {
                    out.tool_calls += 1;
                    out.shown_edit(n, tool, path, &args);
                    out.opaque(
                        n,
                        tool,
                        format!("an edit of {path} (ATIF calls are not replayed)"),
                    );
                }
                None => out.generic_call(n, tool, &args),
            }
        }
    }
    out
}

/// The file a call edits, when its arguments name one and what to write in it: the agents
/// Harbor runs name them so (Gemini CLI's `write_file` and `replace`, Claude Code's `Write` and
/// `Edit`, OpenHands' editor's `file_text` and `new_str`).
fn edited_file(args: &Value) -> Option<&str> {
    const PATH: [&str; 4] = ["file_path", "path", "absolute_path", "notebook_path"];
    const CONTENT: [&str; 6] = [
        "content",
        "new_string",
        "old_string",
        "file_text",
        "new_str",
        "edits",
    ];
    let path = PATH
        .iter()
        .find_map(|k| str_of(args, k))
        .filter(|p| !p.is_empty())?;
    CONTENT
        .iter()
        .any(|k| args.get(k).is_some())
        .then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::submission::ActionKind;
    use serde_json::json;

    /// Harbor's terminus-2 types its commands (`bash_command` `keystrokes`); Gemini CLI's and
    /// Claude Code's file tools are edits with their paths; a read is neither.
    #[test]
    fn keystrokes_are_commands_and_file_writes_are_edits() {
        let t = read(&json!({
            "schema_version": "ATIF-v1.2",
            "agent": {"name": "terminus-2", "model_name": "m"},
            "steps": [
                {"step_id": 1, "source": "user", "message": "Fix it"},
                {"step_id": 2, "source": "agent", "tool_calls": [
                    {"function_name": "bash_command", "arguments": {"keystrokes": "git log --all\n", "duration": 1.0}},
                    {"function_name": "write_file", "arguments": {"file_path": "/app/a.py", "content": "x = 1\n"}},
                    {"function_name": "Edit", "arguments": "{\"file_path\": \"/app/b.py\", \"old_string\": \"a\", \"new_string\": \"b\"}"},
                    {"function_name": "read_file", "arguments": {"file_path": "/app/a.py"}}
                ]}
            ]
        }));
        assert_eq!(t.tool_calls, 4);
        let commands: Vec<&str> = t.commands().map(|a| a.text.as_str()).collect();
        assert_eq!(commands, ["git log --all\n"]);
        let edits: Vec<&str> = t
            .actions
            .iter()
            .filter(|a| a.kind == ActionKind::Edit)
            .map(|a| a.text.as_str())
            .collect();
        assert_eq!(edits, ["/app/a.py", "/app/b.py"]);
        assert_eq!(t.opaque_edits.len(), 2);
        assert!(t.unread.is_empty());
    }
}
