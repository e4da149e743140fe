//! `tests/test_config.json`: what the in-container verifier needs to know about one instance.
//!
//! The official BeyondSWE-harbor layout has `fail_to_pass` and `pass_to_pass` lists here; we add
//! the fields our `test.sh` reads (family, workdir, base commit, which paths the restore step must
//! keep for the gold patch). Unknown keys are kept so a file from elsewhere round-trips.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A Harbor task's `tests/test_config.json`: the tests that decide one BeyondSWE instance, and
/// what the task's `tests/test.sh` needs to run them. Keys not listed here are kept as they are.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "BeyondSWE Harbor test_config.json")]
pub struct TestConfig {
    /// Tests that must go from failing to passing (pytest node ids).
    #[serde(default)]
    pub fail_to_pass: Vec<String>,
    /// Tests that must keep passing.
    #[serde(default)]
    pub pass_to_pass: Vec<String>,
    /// The BeyondSWE instance id, as the dataset spells it (the task directory's name may be
    /// lower-cased).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// `CrossRepo`, `DomainFix`, `DepMigrate`, `Doc2Repo` or `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// Repository directory inside the container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workdir: Option<String>,
    /// The commit the agent started from; the restore step resets test files to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    /// Doc2Repo: the number of tests in the hidden suite (the score's denominator).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_suite_num: Option<u64>,
    /// Paths the f2p patch touches: reset to base before it is applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub f2p_paths: Vec<String>,
    /// Paths covered by the restore rules that the gold patch changes: never reset, so that the
    /// gold patch still resolves the instance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keep_paths: Vec<String>,
    /// Seconds the test command may run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_timeout_sec: Option<u64>,
    /// Fields written by other tools, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Map<String, Value>,
}
