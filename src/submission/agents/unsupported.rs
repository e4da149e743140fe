//! Agents whose output is recognised but not read, so that a user is told so in that word
//! rather than "not a format" or "nothing to audit", which would read as if the file held no
//! steps. Today: Cline's task storage and exports (`api_conversation_history.json`, a list of
//! Anthropic messages; `ui_messages.json`, a list of `{ts, type: "say"|"ask"}`;
//! `task_metadata.json`), which hold no patch and whose tool calls are written in Cline's own
//! XML-in-text form.

use serde_json::Value;
use std::path::Path;

/// The file names Cline gives a task's storage.
const CLINE_FILES: [&str; 5] = [
    "api_conversation_history.json",
    "ui_messages.json",
    "claude_messages.json",
    "task_metadata.json",
    "context_history.json",
];

/// What an unsupported agent's file is, for messages; `None` for any other file. Decided by
/// the file's name, else by its first bytes (a JSON list whose first item is a Cline UI message).
pub fn unsupported_file(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    if CLINE_FILES.contains(&name.as_str()) || looks_like_cline_ui(path) {
        return Some(format!(
            "a Cline task export (`{name}`): Cline is unsupported; its steps are not read and \
             it carries no patch (capture the workspace's diff with `beyondswe capture` to grade \
             it)"
        ));
    }
    None
}

/// The first unsupported agent's file in a folder (as deep as the folder is read), with what it is.
pub fn unsupported_in(folder: &super::Folder) -> Option<String> {
    folder
        .files(super::folder::DEPTH)
        .find_map(|e| unsupported_file(e.path()).map(|w| format!("{}: {w}", e.path().display())))
}

/// A `.json` file whose first item is `{"ts": <number>, "type": "say"|"ask", …}`.
fn looks_like_cline_ui(path: &Path) -> bool {
    if path.extension().is_none_or(|e| e != "json") {
        return false;
    }
    let mut head = [0u8; 4096];
    let Ok(mut f) = crate::files::open_input(path) else {
        return false;
    };
    let Ok(n) = std::io::Read::read(&mut f, &mut head) else {
        return false;
    };
    let text = String::from_utf8_lossy(&head[..n]);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    let Some(rest) = text.strip_prefix('[') else {
        return false;
    };
    // The first item, when it is short enough to be whole in the head.
    let mut de = serde_json::Deserializer::from_str(rest.trim_start()).into_iter::<Value>();
    matches!(de.next(), Some(Ok(v))
        if v.get("ts").is_some_and(Value::is_number)
            && matches!(v.get("type").and_then(Value::as_str), Some("say" | "ask")))
}
