//! `task.toml`: the model we write, and a tolerant reader for every Harbor version's files.
//!
//! Writing: `schema_version = "1.4"` (current Harbor's spelling and default; Harbor 0.1.x
//! ignores it and takes its own default, `version = "1.0"`), `[task]`, `[metadata]`,
//! `[verifier]`, `[agent]`, `[environment]` with `memory_mb`/`storage_mb`: what Harbor 0.1.x and
//! current Harbor both load (0.1.x ignores the keys it does not know: `schema_version`, `[task]`,
//! the separate verifier's settings). Reading: unknown keys are ignored as Harbor ignores them, the deprecated
//! `memory = "4G"` strings are understood, and a wrong type is an error with its line.

use serde::{Deserialize, Serialize};
use toml::Table;

/// A `task.toml`: the one we write, or what this tool uses of one any Harbor version wrote.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TaskToml {
    /// The schema version: written as `schema_version` ([`SCHEMA_VERSION`]); read from
    /// `schema_version` or the legacy `version`, `"1.0"` when absent.
    #[serde(
        default = "default_version",
        rename = "schema_version",
        alias = "version"
    )]
    pub version: String,
    /// `[task]`: the package identity current Harbor's registry needs (`harbor dataset add`,
    /// `publish` skip a task without it); Harbor 0.1.x ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskTable>,
    /// `[metadata]`, free-form; ours names the instance (`instance_id`, `family`, `repo`,
    /// `base_commit`, `workdir`, …) and [`CONVERTED_BY_KEY`](super::CONVERTED_BY_KEY).
    #[serde(default)]
    pub metadata: Table,
    /// `[verifier]`: how long the tests may run, and (Harbor ≥ 0.26) where.
    #[serde(default)]
    pub verifier: VerifierToml,
    /// `[agent]`: how long the agent may run.
    #[serde(default)]
    pub agent: Timeout,
    /// `[environment]`: the container's image and resources.
    #[serde(default)]
    pub environment: EnvironmentToml,
}

/// The `[task]` table.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TaskTable {
    /// `org/name`, as Harbor's registry names packages ([`check_package_name`]).
    pub name: String,
    /// One line for the registry.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Search words for the registry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    /// Who made the task: for an adapted benchmark, its original authors (Harbor's adapter
    /// review asks for them). Written as `authors = [{ name = … }]` under `[task]`, the form
    /// the review reads ([`TaskToml::to_toml_string`]).
    #[serde(default, skip_serializing)]
    pub authors: Vec<Author>,
}

/// One of `[task] authors`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Author {
    /// The name.
    pub name: String,
    /// An address, when there is one to give.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// Checks one part of a Harbor package name (`org` or `name` of `org/name`): it starts with a
/// letter or digit, holds only letters, digits, `.`, `_` and `-`, and no `..`.
pub fn check_package_name(part: &str) -> Result<(), String> {
    let mut chars = part.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !part.contains("..");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{part}` cannot be part of a Harbor package name: it must start with a letter or \
             digit and hold only letters, digits, `.`, `_` and `-` (no `..`)"
        ))
    }
}

/// The task schema version we write: Harbor 0.26's default.
pub const SCHEMA_VERSION: &str = "1.4";

fn default_version() -> String {
    "1.0".into()
}

/// The `[agent]` table, of which only the time limit is used.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Timeout {
    /// Seconds the phase may run; `None`: Harbor's default (600 s in 0.1.x; for the agent, no
    /// limit in current Harbor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_sec: Option<f64>,
}

/// The `[verifier]` table.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct VerifierToml {
    /// Seconds `tests/test.sh` may run; `None`: Harbor's default (600 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_sec: Option<f64>,
    /// Harbor ≥ 0.26: `"separate"` runs the verifier in a fresh container of the task's
    /// environment; `"shared"` (and absent, without `[verifier.environment]`) in the agent's.
    /// Harbor 0.1.x ignores it and always shares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_mode: Option<String>,
    /// Harbor ≥ 0.26: `[[verifier.collect]]`, commands run in the agent's container after the
    /// agent, before its artifacts are collected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub collect: Vec<CollectHook>,
}

/// One `[[verifier.collect]]` hook.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CollectHook {
    /// Run through the service's shell.
    pub command: String,
    /// Seconds it may run (Harbor's default: 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_sec: Option<f64>,
    /// Who runs it (Harbor's default: the container's default user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

/// The `[environment]` table: the task container's image and resources.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct EnvironmentToml {
    /// A prebuilt image to run instead of building `environment/Dockerfile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docker_image: Option<String>,
    /// Seconds the image build may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_timeout_sec: Option<f64>,
    /// CPUs for the container; written as an integer when whole: Harbor 0.1.x rejects `1.5` and
    /// accepts `2`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "whole_as_int"
    )]
    pub cpus: Option<f64>,
    /// Memory limit in MB (use [`memory_mb`](Self::memory_mb()) to read either spelling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// Disk limit in MB (use [`storage_mb`](Self::storage_mb()) to read either spelling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_mb: Option<u64>,
    /// Deprecated Harbor 0.1.x spelling, e.g. `"4G"`; read, never written.
    #[serde(default, skip_serializing)]
    pub memory: Option<String>,
    /// Deprecated Harbor 0.1.x spelling of the disk limit, e.g. `"10G"`; read, never written.
    #[serde(default, skip_serializing)]
    pub storage: Option<String>,
    /// Harbor 0.1.x's network switch (default `true`): `false` cuts the whole trial, verifier
    /// included, off the network; later versions map it to `network_mode`. Our tasks leave it
    /// unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_internet: Option<bool>,
}

fn whole_as_int<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => s.serialize_i64(*x as i64),
        Some(x) => s.serialize_f64(*x),
        None => s.serialize_none(),
    }
}

impl EnvironmentToml {
    /// Memory in MB, from `memory_mb` or the deprecated `memory` string.
    pub fn memory_mb(&self) -> Option<u64> {
        self.memory_mb
            .or_else(|| self.memory.as_deref().and_then(size_to_mb))
    }

    /// Disk in MB, from `storage_mb` or the deprecated `storage` string.
    pub fn storage_mb(&self) -> Option<u64> {
        self.storage_mb
            .or_else(|| self.storage.as_deref().and_then(size_to_mb))
    }
}

/// `"4G"` → 4096, `"512M"` → 512, `"1024K"` → 1 (Harbor's conversion).
pub fn size_to_mb(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len()));
    let n: f64 = num.trim().parse().ok()?;
    let mb = match unit.trim().to_ascii_uppercase().as_str() {
        "G" | "GB" => n * 1024.0,
        "M" | "MB" | "" => n,
        "K" | "KB" => n / 1024.0,
        _ => return None,
    };
    Some(mb as u64)
}

impl TaskToml {
    /// Parses `task.toml` text; the error carries TOML's line, column and the offending value.
    pub fn parse(text: &str) -> Result<TaskToml, toml::de::Error> {
        toml::from_str(text)
    }

    /// The `task.toml` text to write.
    pub fn to_toml_string(&self) -> String {
        // Serialising plain tables of strings and numbers cannot fail.
        let text = toml::to_string_pretty(self).unwrap_or_default();
        let authors = match &self.task {
            Some(t) if !t.authors.is_empty() => &t.authors,
            _ => return text,
        };
        // Inline tables in one array, right under the header (a serialiser would write
        // `[[task.authors]]`, which Harbor reads the same but its adapter review does not).
        let items: Vec<String> = authors
            .iter()
            .filter_map(|a| toml::Value::try_from(a).ok())
            .map(|v| v.to_string())
            .collect();
        let line = format!("authors = [{}]\n", items.join(", "));
        match text.find("[task]\n") {
            Some(at) => {
                let at = at + "[task]\n".len();
                format!("{}{line}{}", &text[..at], &text[at..])
            }
            None => text,
        }
    }

    /// A string value from `[metadata]`.
    pub fn meta_str(&self, key: &str) -> Option<&str> {
        self.metadata.get(key).and_then(toml::Value::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_harbor_01_deprecated_sizes_and_ignores_unknown_keys() {
        let t = TaskToml::parse(
            "version = \"1.0\"\n[environment]\nmemory = \"4G\"\nstorage = \"10G\"\ncpus = 1\nfuture_key = 3\n[verifier]\ntimeout_sec = 3000\n",
        )
        .unwrap();
        assert_eq!(t.environment.memory_mb(), Some(4096));
        assert_eq!(t.environment.storage_mb(), Some(10240));
        assert_eq!(t.verifier.timeout_sec, Some(3000.0));
    }

    #[test]
    fn wrong_type_names_the_line() {
        let err = TaskToml::parse("[environment]\ncpus = \"many\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2"), "{err}");
        assert!(err.contains("cpus"), "{err}");
    }

    #[test]
    fn schema_version_spelling_is_read() {
        let t = TaskToml::parse("schema_version = \"1.1\"\n").unwrap();
        assert_eq!(t.version, "1.1");
    }
}
