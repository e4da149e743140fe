//! Harbor's ATIF trajectories (`schema_version`, `agent`, `steps`), as Harbor's own agents write
//! them to `agent/trajectory.json` and as a release line carries them: the first user message is
//! the prompt, an agent step's `message` and `reasoning_content` are its words, and its
//! `tool_calls` (`function_name`, `arguments`) its calls.

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
            out.generic_call(n, tool, &args);
        }
    }
    out
}
