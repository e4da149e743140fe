//! Harbor's on-disk formats: task directories (`task.toml`, `tests/test_config.json`, the fixed
//! file names), job and trial directories and the releases made from them (job.rs).
//!
//! Pure data and file layout; the mapping to and from BeyondSWE records is in `convert`.

mod agent_logs;
pub mod atif;
mod job;
mod task_config;
mod test_config;

pub use agent_logs::{CLAUDE_CODE_LOG, CODEX_LOG, SESSIONS_DIR, trial_agent_log};
pub use job::{
    JobError, TrialPatch, find_trial_patch, job_of, release_line, trial_dirs, trial_patch,
    write_trial,
};
pub use task_config::{EnvironmentToml, TaskToml, Timeout, size_to_mb};
pub use test_config::TestConfig;

/// `[metadata]` key marking a task directory written by this tool, whose `tests/instance.json`
/// is then the complete record.
pub const CONVERTED_BY_KEY: &str = "converted_by";
pub const CONVERTED_BY: &str = "beyondswe";

/// File names inside a Harbor task directory.
pub mod paths {
    pub const TASK_TOML: &str = "task.toml";
    pub const INSTRUCTION: &str = "instruction.md";
    pub const ENVIRONMENT: &str = "environment";
    pub const DOCKERFILE: &str = "environment/Dockerfile";
    pub const REPO_DOCUMENT: &str = "environment/repo_document.md";
    pub const STRIP_HISTORY: &str = "environment/beyondswe_strip_history.sh";
    pub const ENV_VERIFY_PY: &str = "environment/beyondswe_verify.py";
    pub const ENV_RESTORE_RULES: &str = "environment/beyondswe_restore_rules.json";
    pub const TESTS: &str = "tests";
    pub const TEST_SH: &str = "tests/test.sh";
    pub const TEST_CONFIG: &str = "tests/test_config.json";
    pub const F2P_PATCH: &str = "tests/f2p_patch.diff";
    pub const INSTANCE_JSON: &str = "tests/instance.json";
    pub const TEST_SUITE_ZIP: &str = "tests/test_suite.zip";
    pub const VERIFY_PY: &str = "tests/beyondswe_verify.py";
    pub const PYTEST_RUNNER: &str = "tests/beyondswe_pytest_runner.py";
    pub const RESTORE_RULES: &str = "tests/beyondswe_restore_rules.json";
    pub const SOLVE_SH: &str = "solution/solve.sh";
    pub const SOLUTION_PATCH: &str = "solution/gold.patch";
}
