//! What the in-container verifier is told about one grading: one type, [`VerifierSpec`], with one
//! name and one default per option.
//!
//! The offline grader uploads it whole as `spec.json` (`grade/pipeline.rs`). A Harbor task holds
//! its instance part, [`TestConfig`], as `tests/test_config.json` (`convert/to_harbor.rs`); the
//! verifier's Harbor entry point adds the paths of the task's own files. Both are built from the
//! record by [`instance_config`], and the verifier (`adapters/beyondswe_verifier/verify.py`) reads the same names:
//! `schemas/verifier_spec.schema.json` is generated from this type, and a test holds the
//! verifier's list of the keys it accepts to that schema.

use crate::harbor::TestConfig;
use crate::record::Record;
use crate::restore_rules;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How long each setup command (and a Doc2Repo submission's install) may take by default.
pub const DEFAULT_SETUP_TIMEOUT: Duration = Duration::from_secs(300);

/// Everything the verifier's `grade` command reads. Paths are inside the container.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "BeyondSWE verifier spec")]
pub struct VerifierSpec {
    /// The instance: its ids, paths kept or reset, and the test timeout.
    #[serde(flatten)]
    pub instance: TestConfig,
    /// Seconds each setup command, and a Doc2Repo submission's install, may run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_timeout_sec: Option<u64>,
    /// Plant canary groups among the tests (false: the groups are only counted).
    #[serde(default = "planted")]
    pub canaries: bool,
    /// Evidence seen in the tested process or the submission's source makes the verdict
    /// `forgery_suspected` (`--strict`); by default only proof changes a verdict.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
    /// Bytes the submission's processes may write before they are stopped (`--disk-mb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_file_bytes: Option<u64>,
    /// The verifier's root-only state directory: the prepare step's record.
    pub state_dir: String,
    /// Directories the test user may not read (the verifier's own, the task's tests).
    #[serde(default)]
    pub private_paths: Vec<String>,
    /// Where the one JSON result goes: a path, or `-` for the verifier's own stdout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// The submission's patch. Absent: an empty submission, or a tree already in the workdir.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// The gold patch: the constructs it uses are allowed to the submission (static evidence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_patch: Option<String>,
    /// The test patch applied after the restore step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub f2p_patch: Option<String>,
    /// A test file written after the restore step (records that carry one instead of a patch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub f2p_script: Option<String>,
    /// Doc2Repo: the hidden suite's zip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_zip: Option<String>,
    /// Harbor: the task's `tests/` directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_dir: Option<String>,
    /// Harbor: where the diff of what the agent left is written, before any step changes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<String>,
    /// Harbor: the agent had this container first, so nothing in it is taken on trust.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared_container: bool,
    /// The patch is a diff that Harbor's collect hook captured in the agent's container: a file
    /// the image had untracked and the agent changed is a new file in it, and the image's own
    /// copy makes way for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub collected: bool,
    /// The gold check this grading's canary groups rest on: groups are built only on the sites it
    /// found sound. Absent: no check was run (no gold patch, a Doc2Repo suite, Harbor), and every
    /// site that can carry a group may.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary_check: Option<GoldCheck>,
    /// This run is the gold check itself (the submission is the gold patch): the seed its string
    /// sites' values are drawn from. Every checked value runs, and nothing is judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary_check_run: Option<String>,
}

/// What the gold check of an instance found, run once before any submission of it is graded:
/// for each test it checked, the sites (a literal's line and column in the test file) where the
/// test passed under the gold patch and every value a canary group there can hold instead
/// failed. Honest code that passes as the gold patch does cannot make two variants of a group
/// built there pass, so such a group's contradiction is proof.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GoldCheck {
    /// The seed a string site's values are drawn from, the same at the check and at every
    /// grading (never written where the test user can read it).
    pub seed: String,
    /// The sites that held, as `[line, column]`, by `module::class path::test name`; a test
    /// with none carries no group.
    #[serde(default)]
    pub tests: std::collections::BTreeMap<String, Vec<[u32; 2]>>,
    /// At a site expecting an exception class (`with pytest.raises(X)`), the other classes the
    /// check ran there and saw fail, by `module::class path::test name::line:column`: a
    /// grading's group there names only these.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub classes: std::collections::BTreeMap<String, Vec<String>>,
    /// Whether the check's test run finished (a run that did not leaves its unrun sites out).
    #[serde(default)]
    pub finished: bool,
}

fn planted() -> bool {
    true
}

/// The instance part of the spec, from the record: what a Harbor task's `test_config.json` holds
/// and what the offline grader's spec starts from.
pub fn instance_config(record: &Record, test_timeout: Duration) -> TestConfig {
    let (f2p_paths, keep_paths) = restore_rules::keep_paths(record);
    TestConfig {
        fail_to_pass: record.fail_to_pass(),
        pass_to_pass: record.pass_to_pass(),
        instance_id: Some(record.instance_id().to_owned()),
        family: Some(record.family().as_str().to_owned()),
        workdir: Some(record.workdir().to_owned()),
        base_commit: record.base_commit().map(str::to_owned),
        test_suite_num: record.test_suite_num(),
        f2p_paths,
        keep_paths,
        test_timeout_sec: Some(test_timeout.as_secs().max(1)),
        extra: Default::default(),
    }
}

/// The keys a spec may carry: the properties of its schema, which the verifier's own list must
/// equal (a test reads both).
pub fn keys() -> Vec<String> {
    let schema = schemars::schema_for!(VerifierSpec);
    let mut keys: Vec<String> = schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_round_trips_through_json_with_flat_keys() {
        let spec = VerifierSpec {
            instance: TestConfig {
                fail_to_pass: vec!["t.py::a".into()],
                instance_id: Some("x".into()),
                test_timeout_sec: Some(7),
                ..Default::default()
            },
            setup_timeout_sec: Some(3),
            canaries: false,
            state_dir: "/var/lib/beyondswe".into(),
            patch: Some("/tmp/p/submission.patch".into()),
            ..Default::default()
        };
        let json = serde_json::to_value(&spec).unwrap();
        assert_eq!(json["fail_to_pass"][0], "t.py::a");
        assert_eq!(json["test_timeout_sec"], 7);
        assert_eq!(json["canaries"], false);
        assert!(json.get("shared_container").is_none());
        let back: VerifierSpec = serde_json::from_value(json).unwrap();
        assert_eq!(back, spec);
    }

    #[test]
    fn canaries_are_planted_unless_the_spec_says_otherwise() {
        let spec: VerifierSpec = serde_json::from_str(r#"{"state_dir": "/s"}"#).unwrap();
        assert!(spec.canaries);
    }

    #[test]
    fn the_keys_are_the_instance_fields_and_the_grading_options() {
        let keys = keys();
        for k in [
            "fail_to_pass",
            "test_timeout_sec",
            "setup_timeout_sec",
            "patch",
            "canaries",
        ] {
            assert!(keys.iter().any(|x| x == k), "{k} missing from {keys:?}");
        }
        assert!(
            !keys.iter().any(|x| x == "timeout" || x == "extra"),
            "{keys:?}"
        );
    }
}
