//! SWE-bench-style predictions: `instance_id`, `model_name_or_path`, `model_patch`, as JSONL, a JSON
//! list, or a JSON object keyed by instance id. For Doc2Repo a prediction may instead name a
//! repository directory or archive (`model_repo`, relative paths resolved against the file).

use super::Submitted;
use crate::record::{JsonLines, snippet};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// One prediction: what was submitted for one attempt at one instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// The instance (`instance_id`, or the key of a JSON object keyed by id).
    pub instance_id: String,
    /// The reward the agent's harness recorded, when the file carries one.
    pub reward: Option<f64>,
    /// 1-based attempt number (several attempts per instance are all graded: pass@k).
    pub attempt: u32,
    /// `model_name_or_path`; empty when the prediction has none.
    pub model: String,
    /// The patch, or (Doc2Repo) the repository it names.
    pub submitted: Submitted,
    /// `file:line` (JSONL), `file[index]` (list) or `file{id}` (object).
    pub location: String,
}

/// Why a predictions file could not be read; the first problem found stops the reading.
#[derive(Debug, Error)]
pub enum PredictionsError {
    /// The file could not be read (missing, no permission, not UTF-8).
    #[error(transparent)]
    Io(#[from] crate::errors::PathError),
    /// One prediction is not usable: not an object, a field of the wrong type, no patch or
    /// repository, an `instance_id` that differs from its key, bad base64.
    #[error("{location}: {message}")]
    Bad {
        /// Where it is, as in [`Prediction::location`].
        location: String,
        /// What is wrong with it.
        message: String,
    },
    /// The file is neither a JSON list, a JSON object nor JSONL (or a JSONL line is not JSON).
    #[error("{path}: not JSON, a JSON list or JSONL: {message}")]
    NotJson {
        /// The predictions file.
        path: PathBuf,
        /// The JSON parser's message.
        message: String,
    },
    /// Two predictions for the same instance and attempt.
    #[error("two predictions for `{id}`: {first} and {second}")]
    Duplicate {
        /// The instance id.
        id: String,
        /// Where the first one is.
        first: String,
        /// Where the second one is.
        second: String,
    },
}

/// Reads every prediction; the first problem stops with an error that names where it is.
pub fn read_predictions(path: &Path) -> Result<Vec<Prediction>, PredictionsError> {
    let read = read_predictions_keeping_going(path)?;
    match read.bad.into_iter().next() {
        Some(first) => Err(first),
        None => Ok(read.predictions),
    }
}

/// What [`read_predictions_keeping_going`] found: the usable predictions and, for every other
/// one, why not (each naming its file and line, or index, or key).
#[derive(Debug, Default)]
pub struct PredictionsRead {
    /// The usable predictions, in file order.
    pub predictions: Vec<Prediction>,
    /// The predictions that could not be used (a bad field, a second one for the same attempt,
    /// a JSONL line that is not JSON).
    pub bad: Vec<PredictionsError>,
}

/// Reads every prediction, the way the SWE-bench harness takes a predictions file: a bad line
/// is reported and the others are kept. Only a file that cannot be read, or a whole-file JSON
/// document that is not JSON, is an error.
pub fn read_predictions_keeping_going(path: &Path) -> Result<PredictionsRead, PredictionsError> {
    let io = |source| PredictionsError::Io(crate::errors::PathError::new(path.to_owned(), source));
    let text = crate::record::read_text_capped(path).map_err(io)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    let name = path.display().to_string();
    let mut found: Vec<Result<Prediction, PredictionsError>> = Vec::new();
    if trimmed.starts_with('[') {
        let value: Value =
            serde_json::from_str(trimmed).map_err(|e| PredictionsError::NotJson {
                path: path.to_owned(),
                message: e.to_string(),
            })?;
        for (i, item) in value.as_array().into_iter().flatten().enumerate() {
            found.push(one(item, None, &format!("{name}[{i}]"), base));
        }
    } else if let Some(map) = whole_object_keyed_by_id(trimmed) {
        for (id, item) in &map {
            found.push(one(item, Some(id), &format!("{name}{{{id}}}"), base));
        }
    } else {
        let mut lines = JsonLines::new(text.as_bytes(), path.to_owned());
        while let Some(item) = lines.next_value() {
            found.push(match item {
                Ok((line, value)) => one(&value, None, &format!("{name}:{line}"), base),
                Err(e) => Err(PredictionsError::NotJson {
                    path: path.to_owned(),
                    message: e.to_string(),
                }),
            });
        }
    }
    let mut read = PredictionsRead::default();
    let mut seen: HashMap<(String, u32), String> = HashMap::new();
    for item in found {
        match item {
            Ok(p) => match seen.get(&(p.instance_id.clone(), p.attempt)) {
                Some(first) => read.bad.push(PredictionsError::Duplicate {
                    id: p.instance_id.clone(),
                    first: first.clone(),
                    second: p.location.clone(),
                }),
                None => {
                    seen.insert((p.instance_id.clone(), p.attempt), p.location.clone());
                    read.predictions.push(p);
                }
            },
            Err(e) => read.bad.push(e),
        }
    }
    Ok(read)
}

/// A whole-file JSON object whose values are predictions (not a single JSONL record).
fn whole_object_keyed_by_id(text: &str) -> Option<Map<String, Value>> {
    if !text.starts_with('{') {
        return None;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map))
            if !map.contains_key("instance_id") && map.values().all(Value::is_object) =>
        {
            Some(map)
        }
        _ => None,
    }
}

fn one(
    value: &Value,
    key: Option<&str>,
    location: &str,
    base: &Path,
) -> Result<Prediction, PredictionsError> {
    let bad = |message: String| PredictionsError::Bad {
        location: location.to_owned(),
        message,
    };
    let obj = value
        .as_object()
        .ok_or_else(|| bad(format!("expected a JSON object, found {}", snippet(value))))?;
    let str_field = |name: &str| -> Result<Option<String>, PredictionsError> {
        match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(bad(format!(
                "field `{name}`: expected a string, found {}",
                snippet(other)
            ))),
        }
    };
    let id = match (str_field("instance_id")?, key) {
        (Some(id), Some(k)) if id != k => {
            return Err(bad(format!("`instance_id` is `{id}` but the key is `{k}`")));
        }
        (Some(id), _) => id,
        (None, Some(k)) => k.to_owned(),
        (None, None) => return Err(bad("missing field `instance_id`".into())),
    };
    let model = str_field("model_name_or_path")?.unwrap_or_default();
    let attempt = match obj.get("attempt") {
        None | Some(Value::Null) => 1,
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=u64::from(u32::MAX)).contains(n))
            .map(|n| n as u32)
            .ok_or_else(|| {
                bad(format!(
                    "field `attempt`: expected a whole number from 1, found {}",
                    snippet(v)
                ))
            })?,
    };
    let submitted = match (str_field("model_patch")?, str_field("model_repo")?) {
        (Some(patch), _) => Submitted::Patch(patch.into_bytes()),
        (None, Some(repo)) => {
            let p = PathBuf::from(&repo);
            Submitted::Repo(if p.is_absolute() { p } else { base.join(p) })
        }
        (None, None) => match str_field("model_patch_base64")? {
            Some(b64) => Submitted::Patch(
                crate::base64::decode(&b64)
                    .ok_or_else(|| bad("field `model_patch_base64`: not valid base64".into()))?,
            ),
            // `"model_patch": null` (SWE-agent writes it for a failed run) or no patch at all:
            // an empty patch, as the SWE-bench harness counts it.
            None => Submitted::Patch(Vec::new()),
        },
    };
    Ok(Prediction {
        instance_id: id,
        reward: obj.get("reward").and_then(Value::as_f64),
        attempt,
        model,
        submitted,
        location: location.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<Prediction>, PredictionsError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("preds.json");
        fs_err::write(&p, text).unwrap();
        read_predictions(&p)
    }

    #[test]
    fn all_three_shapes() {
        let jsonl = read("{\"instance_id\":\"a\",\"model_name_or_path\":\"m\",\"model_patch\":\"p\"}\n{\"instance_id\":\"b\",\"model_patch\":\"\"}\n").unwrap();
        assert_eq!(jsonl.len(), 2);
        assert!(jsonl[1].location.ends_with(":2"));
        let list = read("[{\"instance_id\":\"a\",\"model_patch\":\"p\"}]").unwrap();
        assert_eq!(list[0].submitted, Submitted::Patch(b"p".to_vec()));
        let dict = read("{\"a\":{\"model_patch\":\"p\"},\"b\":{\"instance_id\":\"b\",\"model_repo\":\"repo.zip\"}}").unwrap();
        assert_eq!(dict[0].instance_id, "a");
        assert!(matches!(&dict[1].submitted, Submitted::Repo(p) if p.ends_with("repo.zip")));
    }

    #[test]
    fn problems_are_named() {
        let e = read("{\"instance_id\":\"a\",\"model_patch\":\"p\"}\n{\"instance_id\":\"a\",\"model_patch\":\"q\"}\n").unwrap_err().to_string();
        assert!(
            e.contains("two predictions for `a`") && e.contains(":1") && e.contains(":2"),
            "{e}"
        );
        let e = read("this is not json").unwrap_err().to_string();
        assert!(e.contains("not JSON"), "{e}");
        let e = read("{\"instance_id\":\"a\",\"model_patch\":3}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("model_patch") && e.contains(":1"), "{e}");
    }
}
