//! [`Record`]: one BeyondSWE instance, kept as the exact JSON object it was read from.
//!
//! The original object is the source of truth, so unknown fields, key order and every original
//! spelling survive a read and a write. The typed [`RecordFields`] view is checked once when the
//! record is made and then answers the questions the converters and the grader ask (which family,
//! which base commit, which test ids), applying the official fallbacks in one place.

use super::error::RecordError;
use super::family::{Family, TaskKind};
use super::fields::RecordFields;
use serde::Deserialize;
use serde_json::{Map, Value};

/// Default repository directory inside the image, as in the official loader.
pub const DEFAULT_WORKDIR: &str = "/workspace";

/// One dataset record: the original JSON object plus its checked, typed view.
#[derive(Debug, Clone)]
pub struct Record {
    raw: Map<String, Value>,
    fields: RecordFields,
}

impl PartialEq for Record {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

/// `owner/name` of a GitHub repository; the owner may be unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoRef {
    /// The GitHub user or organisation; `None` when the record does not say.
    pub owner: Option<String>,
    /// The repository's name, without the owner.
    pub name: String,
}

impl RepoRef {
    /// `owner/name`, or just `name` when the owner is unknown.
    pub fn full_name(&self) -> String {
        match &self.owner {
            Some(owner) => format!("{owner}/{}", self.name),
            None => self.name.clone(),
        }
    }
}

impl Record {
    /// Checks a JSON value and makes a record of it. Fails when it is not an object, when
    /// `instance_id` is missing, or when a known field has the wrong type.
    pub fn from_value(value: Value) -> Result<Record, RecordError> {
        match value {
            Value::Object(map) => Record::from_map(map),
            other => Err(RecordError::NotAnObject {
                found: json_type(&other),
            }),
        }
    }

    /// Like [`Record::from_value`] for an object already taken apart.
    pub fn from_map(raw: Map<String, Value>) -> Result<Record, RecordError> {
        let fields = {
            let de = MapRef(&raw);
            serde_path_to_error::deserialize::<_, RecordFields>(de).map_err(|err| {
                let path = err.path().to_string();
                let field = if path == "." || path.is_empty() {
                    missing_field_name(&err.inner().to_string()).unwrap_or_default()
                } else {
                    path
                };
                let top = field.split(['.', '[']).next().unwrap_or_default();
                RecordError::Field {
                    snippet: raw.get(top).map(snippet),
                    message: err.into_inner().to_string(),
                    field,
                }
            })?
        };
        if fields.instance_id.trim().is_empty() {
            return Err(RecordError::Field {
                field: "instance_id".into(),
                message: "must not be empty".into(),
                snippet: raw.get("instance_id").map(snippet),
            });
        }
        Ok(Record { raw, fields })
    }

    /// The JSON object exactly as read (plus any edits made through [`Record::set`]).
    pub fn raw(&self) -> &Map<String, Value> {
        &self.raw
    }

    /// The JSON object, giving up the typed view.
    pub fn into_raw(self) -> Map<String, Value> {
        self.raw
    }

    /// The checked, typed view.
    pub fn fields(&self) -> &RecordFields {
        &self.fields
    }

    /// The record's unique id (never empty).
    pub fn instance_id(&self) -> &str {
        &self.fields.instance_id
    }

    /// The `task` field as written, with the family it names.
    pub fn task(&self) -> TaskKind {
        TaskKind::from_spelling(self.fields.task.as_deref())
    }

    /// The task family ([`Family::Unknown`] when `task` is absent or unrecognised).
    pub fn family(&self) -> Family {
        self.task().family
    }

    /// The repository, from `repo` (`owner/name`), `repo` + `user`, or the instance id
    /// `<owner>_<repo>_pr<N>`.
    pub fn repo(&self) -> Option<RepoRef> {
        if let Some(repo) = non_empty(self.fields.repo.as_deref()) {
            let mut parts = repo.splitn(3, '/');
            let first = parts.next().unwrap_or_default();
            return Some(match parts.next() {
                Some(name) if !name.is_empty() => RepoRef {
                    owner: Some(first.to_owned()),
                    name: name.to_owned(),
                },
                _ => RepoRef {
                    owner: non_empty(self.fields.user.as_deref()).map(str::to_owned),
                    name: first.to_owned(),
                },
            });
        }
        if self.family().is_issue_task() {
            return parse_issue_instance_id(self.instance_id()).map(|(owner, name, _)| RepoRef {
                owner: Some(owner),
                name,
            });
        }
        None
    }

    /// The pull request number encoded in an issue task's id (`…_pr<N>`).
    pub fn pr_number(&self) -> Option<u64> {
        parse_issue_instance_id(self.instance_id()).map(|(_, _, n)| n)
    }

    /// The commit the agent starts from: the first non-empty of `base_commit`,
    /// `pre_agent_commit_id`, `parent_commit`, `base.sha`.
    pub fn base_commit(&self) -> Option<&str> {
        let f = &self.fields;
        [
            f.base_commit.as_deref(),
            f.pre_agent_commit_id.as_deref(),
            f.parent_commit.as_deref(),
            f.base.as_ref().and_then(|b| b.sha.as_deref()),
        ]
        .into_iter()
        .find_map(non_empty)
    }

    /// The repository directory inside the image: `workdir`, else [`DEFAULT_WORKDIR`].
    pub fn workdir(&self) -> &str {
        non_empty(self.fields.workdir.as_deref()).unwrap_or(DEFAULT_WORKDIR)
    }

    /// The container image: `image`, else `image_url`.
    pub fn image(&self) -> Option<&str> {
        non_empty(self.fields.image.as_deref()).or(non_empty(self.fields.image_url.as_deref()))
    }

    /// The programming language: `language`, else `python`.
    pub fn language(&self) -> &str {
        non_empty(self.fields.language.as_deref()).unwrap_or("python")
    }

    /// The issue text (for Doc2Repo in the paper's variant, the specification), as written.
    pub fn problem_statement(&self) -> Option<&str> {
        self.fields.problem_statement.as_deref()
    }

    /// The Doc2Repo specification: `REPO_DOCUMENT_CONTENT`, or for Doc2Repo records in the
    /// paper's variant, `problem_statement`.
    pub fn repo_document(&self) -> Option<&str> {
        non_empty(self.fields.REPO_DOCUMENT_CONTENT.as_deref()).or_else(|| {
            if self.family() == Family::Doc2Repo {
                non_empty(self.fields.problem_statement.as_deref())
            } else {
                None
            }
        })
    }

    /// The gold patch: `patch`, else `fix_patch`.
    pub fn gold_patch(&self) -> Option<&str> {
        non_empty(self.fields.patch.as_deref()).or(non_empty(self.fields.fix_patch.as_deref()))
    }

    /// The FAIL_TO_PASS test ids, decoded from any accepted form; empty when absent.
    pub fn fail_to_pass(&self) -> Vec<String> {
        self.fields
            .FAIL_TO_PASS
            .as_ref()
            .map(|t| t.ids())
            .unwrap_or_default()
    }

    /// The PASS_TO_PASS test ids, decoded from any accepted form; empty when absent.
    pub fn pass_to_pass(&self) -> Vec<String> {
        self.fields
            .PASS_TO_PASS
            .as_ref()
            .map(|t| t.ids())
            .unwrap_or_default()
    }

    /// The test patch the grader applies after the agent's patch; `None` when absent or empty.
    pub fn f2p_patch(&self) -> Option<&str> {
        non_empty(self.fields.f2p_patch.as_deref())
    }

    /// The test file written as `test_fail_to_pass.py` before the tests run; `None` when absent
    /// or empty.
    pub fn f2p_script(&self) -> Option<&str> {
        non_empty(self.fields.f2p_script.as_deref())
    }

    /// Doc2Repo: the test-suite zip's file name as the record gives it (not checked to be a
    /// plain file name); `None` when absent or empty.
    pub fn test_suite(&self) -> Option<&str> {
        non_empty(self.fields.test_suite.as_deref())
    }

    /// Doc2Repo: the number of tests in the hidden suite (the score's denominator).
    pub fn test_suite_num(&self) -> Option<u64> {
        self.fields.test_suite_num
    }

    /// The setup commands run before the agent starts, in order; empty when absent.
    pub fn pre_commands(&self) -> Vec<String> {
        self.fields
            .pre_commands
            .as_ref()
            .map(|p| p.commands())
            .unwrap_or_default()
    }

    /// Sets a top-level field (used when rebuilding a record from a Harbor task directory) and
    /// checks the result again.
    pub fn set(&mut self, key: &str, value: Value) -> Result<(), RecordError> {
        let mut raw = self.raw.clone();
        raw.insert(key.to_owned(), value);
        *self = Record::from_map(raw)?;
        Ok(())
    }
}

/// Splits `<owner>_<repo>_pr<N>`: owner = text before the first `_` (GitHub logins have none),
/// PR = digits after the last `_pr`, repo = the rest.
pub fn parse_issue_instance_id(id: &str) -> Option<(String, String, u64)> {
    let (owner, rest) = id.split_once('_')?;
    let (repo, pr) = rest.rsplit_once("_pr")?;
    if owner.is_empty()
        || repo.is_empty()
        || pr.is_empty()
        || !pr.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    Some((owner.to_owned(), repo.to_owned(), pr.parse().ok()?))
}

fn non_empty(s: Option<&str>) -> Option<&str> {
    s.filter(|s| !s.trim().is_empty())
}

/// A short, single-line rendering of a value for error messages.
pub fn snippet(value: &Value) -> String {
    let text = value.to_string();
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        text
    } else {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}… ({} bytes)", text.len())
    }
}

pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn missing_field_name(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let end = start + message[start..].find('`')?;
    Some(message[start..end].to_owned())
}

/// Deserializes a borrowed JSON object without cloning it into a `Value` first.
struct MapRef<'a>(&'a Map<String, Value>);

impl<'de> serde::Deserializer<'de> for MapRef<'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        use serde::de::value::MapDeserializer;
        let mut de = MapDeserializer::new(self.0.iter().map(|(k, v)| (k.as_str(), v)));
        let value = visitor.visit_map(&mut de)?;
        de.end()?;
        Ok(value)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = Map::deserialize(deserializer)?;
        Record::from_map(map).map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for Record {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(v: Value) -> Record {
        Record::from_value(v).unwrap()
    }

    #[test]
    fn base_commit_fallbacks_in_order() {
        assert_eq!(
            rec(json!({"instance_id":"a","parent_commit":"p","base":{"sha":"s"}})).base_commit(),
            Some("p")
        );
        assert_eq!(
            rec(json!({"instance_id":"a","base_commit":"","base":{"sha":"s"}})).base_commit(),
            Some("s")
        );
        assert_eq!(
            rec(json!({"instance_id":"a","base_commit":"b","pre_agent_commit_id":"x"}))
                .base_commit(),
            Some("b")
        );
        assert_eq!(rec(json!({"instance_id":"a"})).base_commit(), None);
    }

    #[test]
    fn repo_from_every_form() {
        let r = rec(json!({"instance_id":"x","repo":"pylons/plaster"}))
            .repo()
            .unwrap();
        assert_eq!(r.full_name(), "pylons/plaster");
        let r = rec(json!({"instance_id":"x","repo":"pyramid","user":"Pylons"}))
            .repo()
            .unwrap();
        assert_eq!(r.full_name(), "Pylons/pyramid");
        let r = rec(json!({"instance_id":"hyundai-kia-connect_hyundai_kia_connect_api_pr371","task":"crossrepo"}))
            .repo()
            .unwrap();
        assert_eq!(r.full_name(), "hyundai-kia-connect/hyundai_kia_connect_api");
    }

    #[test]
    fn instance_id_parsing() {
        assert_eq!(
            parse_issue_instance_id("abravalheri_validate-pyproject_pr105"),
            Some(("abravalheri".into(), "validate-pyproject".into(), 105))
        );
        assert_eq!(
            parse_issue_instance_id("PXMeter_7283384f03718625c13ee447b16db5206b45596b"),
            None
        );
    }

    #[test]
    fn wrong_types_name_the_field_and_value() {
        let err =
            Record::from_value(json!({"instance_id":"a","test_suite_num":"many"})).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("test_suite_num"), "{msg}");
        assert!(msg.contains("\"many\""), "{msg}");
        let err = Record::from_value(json!({"task":"crossrepo"})).unwrap_err();
        assert!(err.to_string().contains("instance_id"), "{err}");
        let err =
            Record::from_value(json!({"instance_id":"a","FAIL_TO_PASS":{"x":1}})).unwrap_err();
        assert!(err.to_string().contains("FAIL_TO_PASS"), "{err}");
        let err = Record::from_value(json!([1])).unwrap_err();
        assert!(err.to_string().contains("an array"), "{err}");
    }

    #[test]
    fn doc2repo_spec_in_problem_statement() {
        let r = rec(json!({"instance_id":"a","task":"doc2repo","problem_statement":"spec"}));
        assert_eq!(r.repo_document(), Some("spec"));
        let r = rec(json!({"instance_id":"a","task":"crossrepo","problem_statement":"issue"}));
        assert_eq!(r.repo_document(), None);
    }
}
