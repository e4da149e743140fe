//! The typed view of a BeyondSWE record: every field the official tooling reads, in every shape
//! it accepts.
//!
//! This module owns the field names, their accepted JSON types and the JSON Schema generated from
//! them. It does not own the record's bytes: [`crate::record::Record`] keeps the original JSON
//! object (unknown fields included) and uses this view only to check and read it.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// A BeyondSWE dataset record (one line of `beyondswe.jsonl`).
///
/// Fields not listed here are allowed and kept verbatim. `null` is read as "absent" everywhere.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(title = "BeyondSWE record", extend("additionalProperties" = true))]
#[allow(non_snake_case)]
pub struct RecordFields {
    /// Unique id: `<owner>_<repo>_pr<N>` for issue tasks, `<Repo>_<40-hex commit>` for Doc2Repo.
    pub instance_id: String,
    /// Task family in any spelling (`CrossRepo`, `crossrepo`, `cross-repo`, `Doc2Repo`, …).
    #[serde(default)]
    pub task: Option<String>,
    /// Repository: `owner/name`, or the bare name with the owner in `user`.
    #[serde(default)]
    pub repo: Option<String>,
    /// GitHub owner when `repo` is a bare name (paper, Table 8).
    #[serde(default)]
    pub user: Option<String>,
    /// Commit the agent starts from. Fallbacks, in order: `pre_agent_commit_id`, `parent_commit`,
    /// `base.sha`.
    #[serde(default)]
    pub base_commit: Option<String>,
    /// First fallback for `base_commit`.
    #[serde(default)]
    pub pre_agent_commit_id: Option<String>,
    /// Second fallback for `base_commit`.
    #[serde(default)]
    pub parent_commit: Option<String>,
    /// Nested form `{"sha": "..."}`.
    #[serde(default)]
    pub base: Option<BaseRef>,
    /// Repository directory inside the image (default `/workspace`).
    #[serde(default)]
    pub workdir: Option<String>,
    /// Container image; `image_url` is the fallback spelling.
    #[serde(default)]
    pub image: Option<String>,
    /// Container image, when `image` is absent.
    #[serde(default)]
    pub image_url: Option<String>,
    /// Programming language (default `python`).
    #[serde(default)]
    pub language: Option<String>,
    /// The issue text; for Doc2Repo in the paper's variant, the specification.
    #[serde(default)]
    pub problem_statement: Option<String>,
    /// Doc2Repo specification (AweAgent's spelling).
    #[serde(default)]
    pub REPO_DOCUMENT_CONTENT: Option<String>,
    /// Gold patch; `fix_patch` is the fallback spelling.
    #[serde(default)]
    pub patch: Option<String>,
    /// Gold patch, when `patch` is absent.
    #[serde(default)]
    pub fix_patch: Option<String>,
    /// Tests that must go from failing to passing.
    #[serde(default)]
    pub FAIL_TO_PASS: Option<TestIds>,
    /// Tests that must keep passing.
    #[serde(default)]
    pub PASS_TO_PASS: Option<TestIds>,
    /// Unified diff with the new tests, applied by the grader after the agent's patch.
    #[serde(default)]
    pub f2p_patch: Option<String>,
    /// Python source written to `<workdir>/test_fail_to_pass.py` before the tests run.
    #[serde(default)]
    pub f2p_script: Option<String>,
    /// Doc2Repo: file name of the test-suite zip.
    #[serde(default)]
    pub test_suite: Option<String>,
    /// Doc2Repo: number of tests in the hidden suite (the score's denominator).
    #[serde(default)]
    pub test_suite_num: Option<u64>,
    /// Setup run before the agent starts: one shell command, or the dict form
    /// `{"execute_command": {"commands": [...]}}`.
    #[serde(default)]
    pub pre_commands: Option<PreCommands>,
}

/// The nested `base` object some exports use.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = true))]
pub struct BaseRef {
    /// The commit the agent starts from (last fallback for `base_commit`).
    #[serde(default)]
    pub sha: Option<String>,
}

/// FAIL_TO_PASS / PASS_TO_PASS: a list of pytest node ids, a JSON-encoded list in a string (the
/// SWE-bench style), or a single id.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(
    untagged,
    expecting = "a list of test ids, a JSON-encoded list in a string, or one id as a string"
)]
pub enum TestIds {
    // Text first: it is the usual form, and a failed List attempt costs an error message.
    /// A JSON-encoded list in a string (the SWE-bench style), or one id.
    Text(String),
    /// A list of ids; `null` items are skipped.
    List(Vec<TestId>),
}

/// One test id inside a list. Numbers are accepted and turned into text, as the official code does.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged, expecting = "a test id (string)")]
pub enum TestId {
    /// A pytest node id.
    Text(String),
    /// A number, read as its text.
    Number(serde_json::Number),
    /// `null`, skipped.
    Null(()),
}

/// `pre_commands`: one shell command, a list of commands, or the dict form.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(
    untagged,
    expecting = "a shell command (string), a list of commands, or {\"execute_command\": {\"commands\": [...]}}"
)]
pub enum PreCommands {
    /// One shell command (a trailing literal `\n` is dropped).
    Text(String),
    /// Shell commands run in order.
    List(Vec<String>),
    /// `{"execute_command": {"commands": [...]}}`.
    Structured(StructuredPreCommands),
}

/// The dict form of `pre_commands`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = true))]
pub struct StructuredPreCommands {
    /// Holds the commands.
    pub execute_command: ExecuteCommand,
}

/// `execute_command` in the dict form of `pre_commands`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = true))]
pub struct ExecuteCommand {
    /// Shell commands run in order.
    #[serde(default)]
    pub commands: Vec<String>,
}

impl TestIds {
    /// The ids as the official `parse_test_ids` reads them: a JSON array in a string is decoded, a
    /// JSON string scalar is one id, any other text is one id; items are trimmed and empty ones
    /// dropped.
    pub fn ids(&self) -> Vec<String> {
        match self {
            TestIds::List(items) => items.iter().filter_map(TestId::text).collect(),
            TestIds::Text(text) => parse_test_id_text(text),
        }
    }
}

impl TestId {
    fn text(&self) -> Option<String> {
        let s = match self {
            TestId::Text(s) => s.trim().to_owned(),
            TestId::Number(n) => n.to_string(),
            TestId::Null(()) => return None,
        };
        (!s.is_empty()).then_some(s)
    }
}

fn parse_test_id_text(text: &str) -> Vec<String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Vec::new();
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Array(items)) => items
            .iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s.trim().to_owned()),
                Value::Null => None,
                other => Some(other.to_string()),
            })
            .filter(|s| !s.is_empty())
            .collect(),
        Ok(Value::String(s)) => {
            let s = s.trim();
            if s.is_empty() {
                Vec::new()
            } else {
                vec![s.to_owned()]
            }
        }
        Ok(Value::Null) => Vec::new(),
        _ => vec![trimmed.to_owned()],
    }
}

impl PreCommands {
    /// The setup commands in order. A string is one command, trimmed, with a trailing literal
    /// backslash-n removed (as the official loader does).
    pub fn commands(&self) -> Vec<String> {
        match self {
            PreCommands::Text(s) => {
                let mut s = s.trim();
                while let Some(rest) = s.strip_suffix("\\n") {
                    s = rest.trim_end();
                }
                if s.is_empty() {
                    Vec::new()
                } else {
                    vec![s.to_owned()]
                }
            }
            PreCommands::List(list) => list
                .iter()
                .map(|c| c.trim().to_owned())
                .filter(|c| !c.is_empty())
                .collect(),
            PreCommands::Structured(s) => s
                .execute_command
                .commands
                .iter()
                .map(|c| c.trim().to_owned())
                .filter(|c| !c.is_empty())
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: Value) -> Vec<String> {
        serde_json::from_value::<TestIds>(v).unwrap().ids()
    }

    #[test]
    fn test_ids_in_every_encoding() {
        assert_eq!(
            ids(Value::String(r#"["a.py::t", " b.py::u ", ""]"#.into())),
            ["a.py::t", "b.py::u"]
        );
        assert_eq!(ids(serde_json::json!(["x::y", null, 3])), ["x::y", "3"]);
        assert_eq!(
            ids(Value::String("tests/t.py::test_one".into())),
            ["tests/t.py::test_one"]
        );
        assert_eq!(ids(Value::String(r#""quoted::id""#.into())), ["quoted::id"]);
        assert!(ids(Value::String("  ".into())).is_empty());
        assert!(ids(Value::String("[]".into())).is_empty());
    }

    #[test]
    fn pre_commands_in_every_form() {
        let p: PreCommands =
            serde_json::from_value(serde_json::json!("pip install -e .\\n")).unwrap();
        assert_eq!(p.commands(), ["pip install -e ."]);
        let p: PreCommands = serde_json::from_value(
            serde_json::json!({"execute_command": {"commands": ["a", " ", "b"]}}),
        )
        .unwrap();
        assert_eq!(p.commands(), ["a", "b"]);
        let p: PreCommands = serde_json::from_value(serde_json::json!(["x", "y"])).unwrap();
        assert_eq!(p.commands(), ["x", "y"]);
    }
}
