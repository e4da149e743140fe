//! ATIF, the Agent Trajectory Interchange Format (`agent/trajectory.json`), v1.0–v1.8: a validator
//! that applies the rules of Harbor's own (its pydantic models plus
//! `harbor/utils/trajectory_validator.py`, as of the newest release) to the JSON as it is, reporting
//! every problem with its JSON path. Readers of trajectories (`audit`) read the JSON, not types.
//!
//! Like Harbor, it does not reject fields newer than the file's declared version; unlike Harbor,
//! it never stops at the first problem of a kind.
//!
//! A file is read as a stream ([`validate_file`]): each step is parsed, checked and dropped in
//! turn, so memory follows the largest step, not the file. The problems are the same, in the same
//! order, as those of [`validate_value`] on the whole document (a test holds the two equal).

use serde::Serialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::cell::Cell;
use std::io::Read;
use std::path::Path;
use std::rc::Rc;

/// The most problems listed for one trajectory; past it they are counted, and the last problem
/// says how many more there were (a file of `{},` steps would otherwise list more text than it
/// holds).
pub const MAX_LISTED: usize = 1000;

/// The `schema_version` values accepted (Harbor 0.1.x writes `ATIF-v1.6`, current Harbor
/// `ATIF-v1.8`); a trajectory without one is not faulted for it.
pub const VERSIONS: [&str; 9] = [
    "ATIF-v1.0",
    "ATIF-v1.1",
    "ATIF-v1.2",
    "ATIF-v1.3",
    "ATIF-v1.4",
    "ATIF-v1.5",
    "ATIF-v1.6",
    "ATIF-v1.7",
    "ATIF-v1.8",
];

/// A problem: where (`trajectory.steps[3].tool_calls[0].arguments`) and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The JSON path of the offending value, from `trajectory`; the file's path when the file
    /// cannot be read or is not JSON.
    pub path: String,
    /// What is wrong (`required`, `expected a string`, `unexpected field (not part of ATIF)`, …).
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Problems in the order found: the first [`MAX_LISTED`] of them, and how many more.
#[derive(Debug, Default)]
struct Problems {
    listed: Vec<Problem>,
    more: usize,
}

impl Problems {
    fn push(&mut self, p: Problem) {
        if self.listed.len() < MAX_LISTED {
            self.listed.push(p);
        } else {
            self.more += 1;
        }
    }

    /// How many were found, listed or not.
    fn count(&self) -> usize {
        self.listed.len() + self.more
    }

    fn extend(&mut self, other: Problems) {
        let room = MAX_LISTED.saturating_sub(self.listed.len());
        let mut rest = other.listed;
        let over = rest.split_off(room.min(rest.len()));
        self.listed.extend(rest);
        self.more += over.len() + other.more;
    }

    /// The listed problems, the last one saying how many more were found.
    fn finish(mut self) -> Vec<Problem> {
        if self.more > 0 {
            self.listed.push(Problem {
                path: "trajectory".to_owned(),
                message: format!(
                    "{} more problems, not listed (the first {MAX_LISTED} are)",
                    self.more
                ),
            });
        }
        self.listed
    }
}

struct Checker<'a> {
    problems: Problems,
    /// Directory for relative media paths (`None`: media not checked).
    base: Option<&'a Path>,
}

impl<'a> Checker<'a> {
    fn new(base: Option<&'a Path>) -> Self {
        Checker {
            problems: Problems::default(),
            base,
        }
    }

    fn err(&mut self, path: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            path: path.to_owned(),
            message: message.into(),
        });
    }

    fn known_keys(&mut self, path: &str, obj: &Map<String, Value>, allowed: &[&str]) {
        for k in obj.keys() {
            if !allowed.contains(&k.as_str()) {
                self.err(
                    &format!("{path}.{k}"),
                    "unexpected field (not part of ATIF)",
                );
            }
        }
    }

    fn string(&mut self, path: &str, obj: &Map<String, Value>, key: &str, required: bool) {
        match obj.get(key) {
            None if required => self.err(&format!("{path}.{key}"), "required"),
            None => {}
            Some(Value::Null) if !required => {}
            Some(Value::String(_)) => {}
            Some(_) => self.err(&format!("{path}.{key}"), "expected a string"),
        }
    }

    fn object(&mut self, path: &str, obj: &Map<String, Value>, key: &str) {
        if let Some(v) = obj.get(key)
            && !v.is_null()
            && !v.is_object()
        {
            self.err(&format!("{path}.{key}"), "expected an object");
        }
    }

    fn int(&mut self, path: &str, obj: &Map<String, Value>, key: &str, min: i64) {
        if let Some(v) = obj.get(key).filter(|v| !v.is_null()) {
            match v.as_i64() {
                Some(n) if n >= min => {}
                Some(_) => self.err(&format!("{path}.{key}"), format!("must be ≥ {min}")),
                None => self.err(&format!("{path}.{key}"), "expected an integer"),
            }
        }
    }

    /// `obj[key]`, when present and not null, as a list: `f` on each item, with its path.
    fn list(
        &mut self,
        path: &str,
        obj: &Map<String, Value>,
        key: &str,
        mut f: impl FnMut(&mut Self, &str, &Value),
    ) {
        let Some(v) = obj.get(key).filter(|v| !v.is_null()) else {
            return;
        };
        let p = format!("{path}.{key}");
        match v.as_array() {
            Some(items) => {
                for (i, item) in items.iter().enumerate() {
                    f(self, &format!("{p}[{i}]"), item);
                }
            }
            None => self.err(&p, "expected a list"),
        }
    }

    /// [`Self::list`] whose items must be objects.
    fn list_of_objects(
        &mut self,
        path: &str,
        obj: &Map<String, Value>,
        key: &str,
        mut f: impl FnMut(&mut Self, &str, &Map<String, Value>),
    ) {
        self.list(path, obj, key, |c, p, item| match item.as_object() {
            Some(o) => f(c, p, o),
            None => c.err(p, "expected an object"),
        });
    }

    /// `obj[key]`, when present and not null, as an object: `f` on it, with its path.
    fn nested(
        &mut self,
        path: &str,
        obj: &Map<String, Value>,
        key: &str,
        f: impl FnOnce(&mut Self, &str, &Map<String, Value>),
    ) {
        let Some(v) = obj.get(key).filter(|v| !v.is_null()) else {
            return;
        };
        let p = format!("{path}.{key}");
        match v.as_object() {
            Some(o) => f(self, &p, o),
            None => self.err(&p, "expected an object"),
        }
    }

    /// A trajectory: the root object, or one embedded in `subagent_trajectories`.
    fn trajectory(&mut self, path: &str, v: &Value) {
        let Some(t) = v.as_object() else {
            self.err(path, "expected a JSON object");
            return;
        };
        self.trajectory_fields(path, t);
        self.agent(path, t);
        self.nested(path, t, "final_metrics", Self::final_metrics);
        self.steps(path, t);
        self.subagent_trajectories(path, t);
    }

    /// The trajectory's own scalar fields: known keys, `schema_version`, strings, `extra`.
    fn trajectory_fields(&mut self, path: &str, t: &Map<String, Value>) {
        self.known_keys(
            path,
            t,
            &[
                "schema_version",
                "session_id",
                "trajectory_id",
                "agent",
                "steps",
                "notes",
                "final_metrics",
                "continued_trajectory_ref",
                "extra",
                "subagent_trajectories",
            ],
        );
        match t.get("schema_version") {
            None => {}
            Some(Value::String(s)) if VERSIONS.contains(&s.as_str()) => {}
            Some(other) => self.err(
                &format!("{path}.schema_version"),
                format!("must be one of ATIF-v1.0 … ATIF-v1.8, found {other}"),
            ),
        }
        for key in [
            "session_id",
            "trajectory_id",
            "notes",
            "continued_trajectory_ref",
        ] {
            self.string(path, t, key, false);
        }
        self.object(path, t, "extra");
    }

    fn agent(&mut self, path: &str, t: &Map<String, Value>) {
        let a = match t.get("agent") {
            Some(Value::Object(a)) => a,
            Some(_) => return self.err(&format!("{path}.agent"), "expected an object"),
            None => return self.err(&format!("{path}.agent"), "required"),
        };
        let p = format!("{path}.agent");
        self.known_keys(
            &p,
            a,
            &["name", "version", "model_name", "tool_definitions", "extra"],
        );
        self.string(&p, a, "name", true);
        self.string(&p, a, "version", true);
        self.string(&p, a, "model_name", false);
        self.object(&p, a, "extra");
        if let Some(defs) = a.get("tool_definitions").filter(|d| !d.is_null())
            && !defs
                .as_array()
                .is_some_and(|d| d.iter().all(Value::is_object))
        {
            self.err(
                &format!("{p}.tool_definitions"),
                "expected a list of objects",
            );
        }
    }

    fn final_metrics(&mut self, p: &str, m: &Map<String, Value>) {
        self.known_keys(
            p,
            m,
            &[
                "total_prompt_tokens",
                "total_completion_tokens",
                "total_cached_tokens",
                "total_cost_usd",
                "total_steps",
                "extra",
            ],
        );
        for k in [
            "total_prompt_tokens",
            "total_completion_tokens",
            "total_cached_tokens",
        ] {
            self.int(p, m, k, i64::MIN);
        }
        self.int(p, m, "total_steps", 0);
        self.object(p, m, "extra");
    }

    /// Every step, then (when the steps themselves are sound) their ids: 1, 2, 3, … in order.
    fn steps(&mut self, path: &str, t: &Map<String, Value>) {
        let steps = match t.get("steps") {
            Some(Value::Array(steps)) if !steps.is_empty() => steps,
            Some(Value::Array(_)) => {
                return self.err(&format!("{path}.steps"), "must have at least one step");
            }
            Some(_) => return self.err(&format!("{path}.steps"), "expected a list"),
            None => return self.err(&format!("{path}.steps"), "required"),
        };
        let before = self.problems.count();
        for (i, s) in steps.iter().enumerate() {
            self.step(&format!("{path}.steps[{i}]"), s);
        }
        if self.problems.count() != before {
            return;
        }
        for (i, s) in steps.iter().enumerate() {
            if !step_in_order(i, s) {
                self.step_out_of_order(path, i);
            }
        }
    }

    fn step_out_of_order(&mut self, path: &str, i: usize) {
        self.err(
            &format!("{path}.steps[{i}].step_id"),
            format!("step ids must be 1, 2, 3, … in order; expected {}", i + 1),
        );
    }

    /// Embedded subagent trajectories: each needs a `trajectory_id` of its own.
    fn subagent_trajectories(&mut self, path: &str, t: &Map<String, Value>) {
        let mut seen = std::collections::HashSet::new();
        self.list(path, t, "subagent_trajectories", |c, p, sub| {
            c.embedded_id(p, sub.get("trajectory_id"), &mut seen);
            c.trajectory(p, sub);
        });
    }

    /// An embedded trajectory's `trajectory_id`: present, and not one seen before.
    fn embedded_id(
        &mut self,
        p: &str,
        id: Option<&Value>,
        seen: &mut std::collections::HashSet<String>,
    ) {
        match id.and_then(Value::as_str) {
            Some(id) => {
                if !seen.insert(id.to_owned()) {
                    self.err(
                        &format!("{p}.trajectory_id"),
                        format!("duplicate embedded trajectory_id `{id}`"),
                    );
                }
            }
            None => self.err(
                &format!("{p}.trajectory_id"),
                "an embedded subagent trajectory needs a trajectory_id",
            ),
        }
    }

    fn step(&mut self, path: &str, v: &Value) {
        let Some(s) = v.as_object() else {
            self.err(path, "expected an object");
            return;
        };
        let source = s.get("source").and_then(Value::as_str);
        self.step_fields(path, s, source);
        self.source_rules(path, s, source);
        let mut call_ids = Vec::new();
        self.list_of_objects(path, s, "tool_calls", |c, p, call| {
            if let Some(id) = c.tool_call(p, call) {
                call_ids.push(id);
            }
        });
        self.nested(path, s, "metrics", Self::step_metrics);
        self.nested(path, s, "observation", |c, p, o| {
            c.observation(p, o, &call_ids);
        });
    }

    /// A step's own fields: known keys, `step_id`, `source`, `message`, `timestamp`, the optional
    /// scalars and `extra`.
    fn step_fields(&mut self, path: &str, s: &Map<String, Value>, source: Option<&str>) {
        self.known_keys(
            path,
            s,
            &[
                "step_id",
                "timestamp",
                "source",
                "model_name",
                "reasoning_effort",
                "message",
                "reasoning_content",
                "tool_calls",
                "observation",
                "metrics",
                "is_copied_context",
                "llm_call_count",
                "extra",
            ],
        );
        match s.get("step_id") {
            None => self.err(&format!("{path}.step_id"), "required"),
            Some(id) => match step_id(id) {
                Some(n) if n >= 1 => {}
                Some(_) => self.err(&format!("{path}.step_id"), "must be ≥ 1"),
                None => self.err(&format!("{path}.step_id"), "expected an integer"),
            },
        }
        match source {
            Some("system" | "user" | "agent") => {}
            Some(other) => self.err(
                &format!("{path}.source"),
                format!("must be system, user or agent, found `{other}`"),
            ),
            None => self.err(&format!("{path}.source"), "required"),
        }
        match s.get("message") {
            None => self.err(&format!("{path}.message"), "required"),
            Some(m) => self.content(&format!("{path}.message"), m),
        }
        if let Some(ts) = s.get("timestamp").filter(|v| !v.is_null()) {
            match ts.as_str() {
                Some(t) if iso8601(t) => {}
                Some(t) => self.err(
                    &format!("{path}.timestamp"),
                    format!("not an ISO 8601 timestamp: `{t}`"),
                ),
                None => self.err(&format!("{path}.timestamp"), "expected a string"),
            }
        }
        for key in ["model_name", "reasoning_content"] {
            self.string(path, s, key, false);
        }
        if let Some(e) = s.get("reasoning_effort").filter(|v| !v.is_null())
            && !(e.is_string() || e.is_number())
        {
            self.err(
                &format!("{path}.reasoning_effort"),
                "expected a string or a number",
            );
        }
        if let Some(c) = s.get("is_copied_context").filter(|v| !v.is_null())
            && !c.is_boolean()
        {
            self.err(&format!("{path}.is_copied_context"), "expected a boolean");
        }
        self.int(path, s, "llm_call_count", 0);
        self.object(path, s, "extra");
    }

    /// What only agent steps may carry, and what an agent step that made no LLM call may not.
    fn source_rules(&mut self, path: &str, s: &Map<String, Value>, source: Option<&str>) {
        let present = |key: &str| s.get(key).is_some_and(|v| !v.is_null());
        if source != Some("agent") {
            for key in [
                "model_name",
                "reasoning_effort",
                "reasoning_content",
                "tool_calls",
                "metrics",
            ] {
                if present(key) {
                    self.err(
                        &format!("{path}.{key}"),
                        format!("only agent steps may have `{key}`"),
                    );
                }
            }
        }
        if source == Some("agent") && s.get("llm_call_count").and_then(Value::as_i64) == Some(0) {
            for key in ["metrics", "reasoning_content"] {
                if present(key) {
                    self.err(&format!("{path}.{key}"), "a step with llm_call_count 0 made no LLM call: no metrics or reasoning_content");
                }
            }
        }
    }

    /// One tool call; its `tool_call_id` when it has one (observations may refer to it).
    fn tool_call(&mut self, p: &str, c: &Map<String, Value>) -> Option<String> {
        self.known_keys(
            p,
            c,
            &["tool_call_id", "function_name", "arguments", "extra"],
        );
        self.string(p, c, "tool_call_id", true);
        self.string(p, c, "function_name", true);
        match c.get("arguments") {
            Some(Value::Object(_)) => {}
            Some(_) => self.err(&format!("{p}.arguments"), "expected an object"),
            None => self.err(&format!("{p}.arguments"), "required"),
        }
        self.object(p, c, "extra");
        c.get("tool_call_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    fn step_metrics(&mut self, p: &str, m: &Map<String, Value>) {
        self.known_keys(
            p,
            m,
            &[
                "prompt_tokens",
                "completion_tokens",
                "cached_tokens",
                "cost_usd",
                "prompt_token_ids",
                "completion_token_ids",
                "logprobs",
                "extra",
            ],
        );
        for k in ["prompt_tokens", "completion_tokens", "cached_tokens"] {
            self.int(p, m, k, i64::MIN);
        }
        if m.get("cost_usd")
            .is_some_and(|c| !c.is_null() && !c.is_number())
        {
            self.err(&format!("{p}.cost_usd"), "expected a number");
        }
        self.object(p, m, "extra");
    }

    fn observation(&mut self, p: &str, o: &Map<String, Value>, call_ids: &[String]) {
        self.known_keys(p, o, &["results"]);
        match o.get("results") {
            Some(Value::Array(results)) => {
                for (i, r) in results.iter().enumerate() {
                    self.result(&format!("{p}.results[{i}]"), r, call_ids);
                }
            }
            Some(_) => self.err(&format!("{p}.results"), "expected a list"),
            None => self.err(&format!("{p}.results"), "required"),
        }
    }

    fn result(&mut self, path: &str, v: &Value, call_ids: &[String]) {
        let Some(r) = v.as_object() else {
            self.err(path, "expected an object");
            return;
        };
        self.known_keys(
            path,
            r,
            &[
                "source_call_id",
                "content",
                "subagent_trajectory_ref",
                "extra",
            ],
        );
        self.string(path, r, "source_call_id", false);
        self.object(path, r, "extra");
        if let Some(id) = r.get("source_call_id").and_then(Value::as_str)
            && !call_ids.iter().any(|c| c == id)
        {
            self.err(
                &format!("{path}.source_call_id"),
                format!("`{id}` is not the tool_call_id of a call in this step"),
            );
        }
        if let Some(c) = r.get("content").filter(|v| !v.is_null()) {
            self.content(&format!("{path}.content"), c);
        }
        self.list_of_objects(path, r, "subagent_trajectory_ref", |c, p, x| {
            c.known_keys(
                p,
                x,
                &["trajectory_id", "session_id", "trajectory_path", "extra"],
            );
            for k in ["trajectory_id", "session_id", "trajectory_path"] {
                c.string(p, x, k, false);
            }
            if x.get("trajectory_id").is_none_or(Value::is_null)
                && x.get("trajectory_path").is_none_or(Value::is_null)
            {
                c.err(p, "needs a trajectory_id or a trajectory_path");
            }
        });
    }

    /// A message or observation content: a string, or a list of content parts.
    fn content(&mut self, path: &str, v: &Value) {
        match v {
            Value::String(_) => {}
            Value::Array(parts) => {
                for (i, part) in parts.iter().enumerate() {
                    self.part(&format!("{path}[{i}]"), part);
                }
            }
            _ => self.err(path, "expected a string or a list of content parts"),
        }
    }

    fn part(&mut self, path: &str, v: &Value) {
        let Some(p) = v.as_object() else {
            self.err(path, "expected an object");
            return;
        };
        self.known_keys(path, p, &["type", "text", "source"]);
        let kind = p.get("type").and_then(Value::as_str);
        match kind {
            Some("text") => {
                if !p.get("text").is_some_and(Value::is_string) {
                    self.err(&format!("{path}.text"), "a text part needs `text`");
                }
                if p.get("source").is_some_and(|s| !s.is_null()) {
                    self.err(&format!("{path}.source"), "a text part has no `source`");
                }
            }
            Some(kind @ ("image" | "audio")) => {
                if p.get("text").is_some_and(|s| !s.is_null()) {
                    self.err(
                        &format!("{path}.text"),
                        format!("an {kind} part has no `text`"),
                    );
                }
                match p.get("source").and_then(Value::as_object) {
                    Some(src) => self.media(&format!("{path}.source"), kind, src),
                    None => self.err(
                        &format!("{path}.source"),
                        format!("an {kind} part needs a `source`"),
                    ),
                }
            }
            Some(other) => self.err(
                &format!("{path}.type"),
                format!("must be text, image or audio, found `{other}`"),
            ),
            None => self.err(&format!("{path}.type"), "required"),
        }
    }

    fn media(&mut self, path: &str, kind: &str, src: &Map<String, Value>) {
        let allowed: &[&str] = if kind == "image" {
            &["media_type", "path"]
        } else {
            &["media_type", "path", "duration_sec"]
        };
        self.known_keys(path, src, allowed);
        let media_type = src
            .get("media_type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let ok = if kind == "image" {
            matches!(
                media_type,
                "image/jpeg" | "image/png" | "image/gif" | "image/webp"
            )
        } else {
            matches!(
                media_type,
                "audio/wav"
                    | "audio/mpeg"
                    | "audio/mp4"
                    | "audio/aac"
                    | "audio/ogg"
                    | "audio/flac"
                    | "audio/webm"
                    | "audio/aiff"
                    | "audio/mp3"
                    | "audio/x-wav"
                    | "audio/wave"
                    | "audio/m4a"
                    | "audio/x-m4a"
                    | "audio/x-aiff"
                    | "audio/x-flac"
            )
        };
        if !ok {
            self.err(
                &format!("{path}.media_type"),
                format!("`{media_type}` is not an allowed {kind} media type"),
            );
        }
        if let Some(d) = src.get("duration_sec").filter(|d| !d.is_null())
            && !d.as_f64().is_some_and(|d| d >= 0.0)
        {
            self.err(&format!("{path}.duration_sec"), "must be a number ≥ 0");
        }
        match src.get("path").and_then(Value::as_str) {
            Some(p) => {
                if let Some(base) = self.base
                    && !p.contains("://")
                {
                    let full = if Path::new(p).is_absolute() {
                        Path::new(p).to_owned()
                    } else {
                        base.join(p)
                    };
                    if !full.is_file() {
                        self.err(
                            &format!("{path}.path"),
                            format!("media file `{p}` does not exist"),
                        );
                    }
                }
            }
            None => self.err(&format!("{path}.path"), "required"),
        }
    }
}

/// Whether step `i` (from 0) has the step id `i + 1`.
fn step_in_order(i: usize, s: &Value) -> bool {
    step_id(s.get("step_id").unwrap_or(&Value::Null)) == Some(i as i64 + 1)
}

/// `step_id` as pydantic reads an int in lax mode: integers, integral floats, numeric strings,
/// booleans.
fn step_id(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

/// ISO 8601 as Python's `datetime.fromisoformat` reads it (3.11+): extended and basic dates,
/// ordinal and week dates, `T` or space, fractions, `Z` or offsets.
pub fn iso8601(s: &str) -> bool {
    let s = s.trim();
    let (date, time) = match s.find(['T', ' ']) {
        Some(i) if i >= 8 => (&s[..i], Some(&s[i + 1..])),
        _ => (s, None),
    };
    date_ok(date) && time.is_none_or(time_ok)
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn date_ok(d: &str) -> bool {
    let num = |x: &str| x.parse::<u32>().ok();
    let ymd = |y: &str, m: &str, day: &str| {
        digits(y)
            && y.len() == 4
            && num(m).is_some_and(|m| (1..=12).contains(&m))
            && m.len() == 2
            && num(day).is_some_and(|d| (1..=31).contains(&d))
            && day.len() == 2
    };
    if d.len() == 10 && d.as_bytes()[4] == b'-' && d.as_bytes()[7] == b'-' {
        return ymd(&d[..4], &d[5..7], &d[8..]);
    }
    if d.len() == 8 && digits(d) {
        return ymd(&d[..4], &d[4..6], &d[6..]);
    }
    // Week dates: 2024-W01, 2024-W01-1, 2024W01, 2024W011.
    let w = d.replace('-', "");
    if w.len() >= 7 && w.as_bytes()[4] == b'W' && digits(&w[..4]) {
        let rest = &w[5..];
        return digits(rest)
            && (rest.len() == 2 || rest.len() == 3)
            && num(&rest[..2]).is_some_and(|wk| (1..=53).contains(&wk))
            && (rest.len() == 2 || num(&rest[2..]).is_some_and(|x| (1..=7).contains(&x)));
    }
    false
}

fn time_ok(t: &str) -> bool {
    let (clock, tz) = match t.find(['Z', 'z', '+', '-']) {
        Some(i) => (&t[..i], Some(&t[i..])),
        None => (t, None),
    };
    let tz_ok = tz.is_none_or(|z| {
        if z.eq_ignore_ascii_case("z") {
            return true;
        }
        // Checked slicing: the offset is user text and may hold multi-byte characters.
        let z = z.get(1..).unwrap_or_default().replace(':', "");
        let (h, rest) = (
            z.get(..2).unwrap_or(z.as_str()),
            z.get(2..).unwrap_or_default(),
        );
        digits(h)
            && h.len() == 2
            && h.parse::<u32>().is_ok_and(|h| h < 24)
            && (rest.is_empty() || rest.get(..2).is_some_and(digits))
    });
    let (main, frac) = match clock.find(['.', ',']) {
        Some(i) => (&clock[..i], Some(&clock[i + 1..])),
        None => (clock, None),
    };
    let hms: Vec<&str> = if main.contains(':') {
        main.split(':').collect()
    } else {
        main.as_bytes()
            .chunks(2)
            .map(|c| std::str::from_utf8(c).unwrap_or("x"))
            .collect()
    };
    let limits = [24u32, 60, 60];
    let clock_ok = !hms.is_empty()
        && hms.len() <= 3
        && hms
            .iter()
            .zip(limits)
            .all(|(p, lim)| p.len() == 2 && digits(p) && p.parse::<u32>().is_ok_and(|v| v < lim));
    clock_ok && frac.is_none_or(digits) && tz_ok
}

/// Every problem of one trajectory value; media paths are checked against `base` when given.
pub fn validate_value(v: &Value, base: Option<&Path>) -> Vec<Problem> {
    let mut c = Checker::new(base);
    c.trajectory("trajectory", v);
    c.problems.finish()
}

/// Every problem of a trajectory file (unreadable, not JSON or a value over the cap is one
/// problem), read as a stream: one step at a time is held, and no step or other value may be
/// longer than [`crate::record::max_line_bytes`].
pub fn validate_file(path: &Path) -> Vec<Problem> {
    let one = |message: String| {
        vec![Problem {
            path: path.display().to_string(),
            message,
        }]
    };
    let file = match crate::files::open_input_io(path) {
        Ok(f) => f,
        Err(e) => return one(crate::errors::io_message(path, &e)),
    };
    let used = Rc::new(Cell::new(0));
    let reader = Budgeted {
        inner: std::io::BufReader::with_capacity(1 << 16, file),
        used: Rc::clone(&used),
        max: crate::record::max_line_bytes() as u64,
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let base = path.parent().unwrap_or(Path::new("."));
    let seed = TrajectorySeed {
        path: "trajectory",
        base: Some(base),
        used: &used,
    };
    match seed.deserialize(&mut de).and_then(|t| de.end().map(|()| t)) {
        Ok(t) => t.problems.finish(),
        Err(e) if e.is_io() => one(e.to_string()),
        Err(e) => one(format!("not valid JSON: {e}")),
    }
}

/// [`validate_file`] on JSON text in memory, through the same stream (for tests that hold it
/// equal to [`validate_value`]).
pub fn validate_stream(text: &[u8], base: Option<&Path>) -> Result<Vec<Problem>, String> {
    let used = Cell::new(0);
    let mut de = serde_json::Deserializer::from_slice(text);
    let seed = TrajectorySeed {
        path: "trajectory",
        base,
        used: &used,
    };
    seed.deserialize(&mut de)
        .and_then(|t| de.end().map(|()| t))
        .map(|t| t.problems.finish())
        .map_err(|e| e.to_string())
}

/// A reader that fails once more than `max` bytes were read since `used` was last set to 0:
/// the stream sets it before each value it holds in memory, so that no one value passes the cap.
struct Budgeted<R> {
    inner: R,
    used: Rc<Cell<u64>>,
    max: u64,
}

impl<R: Read> Read for Budgeted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.used.get() > self.max {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "one value (a step, or another field of the trajectory) is longer than {} \
                     MiB, the most one JSON value may hold (BEYONDSWE_MAX_LINE_MB raises the \
                     limit)",
                    self.max >> 20
                ),
            ));
        }
        let n = self.inner.read(buf)?;
        self.used.set(self.used.get() + n as u64);
        Ok(n)
    }
}

/// The `visit_*` methods of a visitor for a boolean, a number and a string: each is
/// `Ok(self.$other())`, what the visitor makes of a value of the wrong kind.
macro_rules! scalars_are {
    ($other:ident, $ty:ty) => {
        fn visit_bool<E>(self, _: bool) -> Result<$ty, E> {
            Ok(self.$other())
        }

        fn visit_i64<E>(self, _: i64) -> Result<$ty, E> {
            Ok(self.$other())
        }

        fn visit_u64<E>(self, _: u64) -> Result<$ty, E> {
            Ok(self.$other())
        }

        fn visit_f64<E>(self, _: f64) -> Result<$ty, E> {
            Ok(self.$other())
        }

        fn visit_str<E>(self, _: &str) -> Result<$ty, E> {
            Ok(self.$other())
        }
    };
}

/// One trajectory read from the stream: its problems, and its `trajectory_id` (`None`: not an
/// object, or the field missing), which an embedding trajectory checks.
struct Streamed {
    problems: Problems,
    id: Option<Value>,
}

/// A trajectory (the root, or one of `subagent_trajectories`) read from the stream. Fields other
/// than `steps` and `subagent_trajectories` are read whole (they are small); those two are read
/// item by item.
struct TrajectorySeed<'a> {
    path: &'a str,
    base: Option<&'a Path>,
    /// The bytes read since the current value began ([`Budgeted`]).
    used: &'a Cell<u64>,
}

/// What `steps` was: missing, not a list, or a list whose items were checked.
enum StepsSeen {
    Missing,
    Checked(Problems),
}

impl<'de> DeserializeSeed<'de> for TrajectorySeed<'_> {
    type Value = Streamed;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Streamed, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TrajectorySeed<'_> {
    type Value = Streamed;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a trajectory")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Streamed, A::Error> {
        let mut fields = Map::new();
        let mut steps = StepsSeen::Missing;
        let mut embedded = Problems::default();
        while let Some(key) = map.next_key::<String>()? {
            self.used.set(0);
            match key.as_str() {
                "steps" => {
                    steps = StepsSeen::Checked(map.next_value_seed(ListSeed {
                        path: self.path,
                        base: self.base,
                        used: self.used,
                        of: ListOf::Steps,
                    })?);
                }
                "subagent_trajectories" => {
                    embedded = map.next_value_seed(ListSeed {
                        path: self.path,
                        base: self.base,
                        used: self.used,
                        of: ListOf::Embedded,
                    })?;
                }
                _ => {
                    let v: Value = map.next_value()?;
                    fields.insert(key, v);
                }
            }
        }
        let path = self.path;
        let mut c = Checker::new(self.base);
        c.trajectory_fields(path, &fields);
        c.agent(path, &fields);
        c.nested(path, &fields, "final_metrics", Checker::final_metrics);
        match steps {
            StepsSeen::Missing => c.err(&format!("{path}.steps"), "required"),
            StepsSeen::Checked(p) => c.problems.extend(p),
        }
        c.problems.extend(embedded);
        Ok(Streamed {
            problems: c.problems,
            id: fields.swap_remove("trajectory_id"),
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Streamed, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(self.not_an_object())
    }

    scalars_are!(not_an_object, Streamed);

    fn visit_unit<E>(self) -> Result<Streamed, E> {
        Ok(self.not_an_object())
    }
}

impl TrajectorySeed<'_> {
    fn not_an_object(&self) -> Streamed {
        let mut c = Checker::new(self.base);
        c.err(self.path, "expected a JSON object");
        Streamed {
            problems: c.problems,
            id: None,
        }
    }
}

/// What a list of a trajectory holds: its `steps`, or its `subagent_trajectories`.
#[derive(Clone, Copy)]
enum ListOf {
    Steps,
    Embedded,
}

impl ListOf {
    fn key(self) -> &'static str {
        match self {
            ListOf::Steps => "steps",
            ListOf::Embedded => "subagent_trajectories",
        }
    }
}

/// A list of a trajectory read from the stream: `steps`, each step parsed, checked and dropped
/// in turn (the order of their ids checked, as [`Checker::steps`] does, only when the steps
/// themselves are sound), or `subagent_trajectories`, each read as a trajectory of its own.
struct ListSeed<'a> {
    path: &'a str,
    base: Option<&'a Path>,
    used: &'a Cell<u64>,
    of: ListOf,
}

impl<'de> DeserializeSeed<'de> for ListSeed<'_> {
    type Value = Problems;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Problems, D::Error> {
        d.deserialize_any(self)
    }
}

impl ListSeed<'_> {
    fn not_a_list(&self) -> Problems {
        let mut c = Checker::new(self.base);
        c.err(
            &format!("{}.{}", self.path, self.of.key()),
            "expected a list",
        );
        c.problems
    }

    fn steps<'de, A: SeqAccess<'de>>(&self, mut seq: A) -> Result<Problems, A::Error> {
        let path = self.path;
        let mut c = Checker::new(self.base);
        // The steps out of order, by index: the first MAX_LISTED, and how many more.
        let mut out_of_order = Vec::new();
        let mut more_out_of_order = 0;
        let mut n = 0;
        loop {
            self.used.set(0);
            let Some(step) = seq.next_element::<Value>()? else {
                break;
            };
            c.step(&format!("{path}.steps[{n}]"), &step);
            if !step_in_order(n, &step) {
                if out_of_order.len() < MAX_LISTED {
                    out_of_order.push(n);
                } else {
                    more_out_of_order += 1;
                }
            }
            n += 1;
        }
        if n == 0 {
            c.err(&format!("{path}.steps"), "must have at least one step");
        } else if c.problems.count() == 0 {
            for i in out_of_order {
                c.step_out_of_order(path, i);
            }
            c.problems.more += more_out_of_order;
        }
        Ok(c.problems)
    }

    fn embedded<'de, A: SeqAccess<'de>>(&self, mut seq: A) -> Result<Problems, A::Error> {
        let mut c = Checker::new(self.base);
        let mut seen = std::collections::HashSet::new();
        let mut i = 0;
        loop {
            let p = format!("{}.subagent_trajectories[{i}]", self.path);
            let Some(t) = seq.next_element_seed(TrajectorySeed {
                path: &p,
                base: self.base,
                used: self.used,
            })?
            else {
                break;
            };
            c.embedded_id(&p, t.id.as_ref(), &mut seen);
            c.problems.extend(t.problems);
            i += 1;
        }
        Ok(c.problems)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = Problems;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a list of {}", self.of.key())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Problems, A::Error> {
        match self.of {
            ListOf::Steps => self.steps(seq),
            ListOf::Embedded => self.embedded(seq),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Problems, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(self.not_a_list())
    }

    scalars_are!(not_a_list, Problems);

    /// `null` steps are not a list; `null` embedded trajectories are none, as in
    /// [`Checker::list`].
    fn visit_unit<E>(self) -> Result<Problems, E> {
        Ok(match self.of {
            ListOf::Steps => self.not_a_list(),
            ListOf::Embedded => Problems::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_as_python_reads_them() {
        for ok in [
            "2025-11-04T09:00:01Z",
            "2025-11-04",
            "20240101T100000Z",
            "2024-W01-1",
            "2025-11-04 09:00:01.123456789+02:00",
            "2025-11-04T09:00",
        ] {
            assert!(iso8601(ok), "{ok}");
        }
        for bad in [
            "yesterday",
            "2025-13-01",
            "2025-11-04T25:00:00",
            "04/11/2025",
            // Multi-byte characters where the offset's digits are sliced.
            "2025-11-04T09:00:00+0é",
            "2025-11-04T09:00:00+01xé",
            "2025-11-04T09:00:00+é",
            "2025-11-04T09:00:00-日本",
            "2025-é-04",
            "2025Wé1",
            "éééééééé",
        ] {
            assert!(!iso8601(bad), "{bad}");
        }
    }
}
