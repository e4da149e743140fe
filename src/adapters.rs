//! Files that run inside containers, embedded in the binary so that the Harbor converter and the
//! offline grader use byte-identical copies.
//!
//! The sources live in `adapters/` at the repository root; this module only exposes them and fills
//! the one template placeholder (`solve.sh`'s working directory).

/// Checks out the base commit's history only and proves no newer commit is stored.
pub const STRIP_HISTORY_SH: &str = include_str!("../adapters/strip_history.sh");
/// The in-container verifier: restore, f2p patch, tests through the result channel, reward.
pub const VERIFY_PY: &str = include_str!("../adapters/verify.py");
/// Runs pytest as the unprivileged test user; started by `VERIFY_PY`, reports over a pipe.
pub const PYTEST_RUNNER_PY: &str = include_str!("../adapters/pytest_runner.py");
/// The one table of restore rules, read by `VERIFY_PY` and by `crate::restore_rules`.
pub const RESTORE_RULES_JSON: &str = include_str!("../adapters/restore_rules.json");
/// Harbor `tests/test.sh`.
pub const TEST_SH: &str = include_str!("../adapters/test.sh");
const SOLVE_SH: &str = include_str!("../adapters/solve.sh");

/// Harbor `solution/solve.sh` for a repository at `workdir`.
pub fn solve_sh(workdir: &str) -> String {
    SOLVE_SH.replace("@WORKDIR@", &shell_quote(workdir))
}

/// Quotes a string for POSIX sh with single quotes.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(shell_quote("/work space/it's"), r"'/work space/it'\''s'");
        assert!(solve_sh("/workspace").contains("cd '/workspace'"));
    }
}
