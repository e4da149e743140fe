//! Files that run inside containers, embedded in the binary so that the Harbor converter and the
//! offline grader use byte-identical copies.
//!
//! The sources live in `adapters/` at the repository root; this module only exposes them and fills
//! the one template placeholder (the `solve*.sh` working directory).

/// Checks out the base commit's history only and proves no newer commit is stored.
pub const STRIP_HISTORY_SH: &str = include_str!("../adapters/strip_history.sh");
/// Runs one setup command so that its exports carry over to the next one and to the tests.
pub const SETUP_STEP_SH: &str = include_str!("../adapters/setup_step.sh");
/// The in-container verifier: restore, f2p patch, tests through the result channel, reward.
pub const VERIFY_PY: &str = include_str!("../adapters/verify.py");
/// Runs pytest as the unprivileged test user; started by `VERIFY_PY`, reports over a pipe.
pub const PYTEST_RUNNER_PY: &str = include_str!("../adapters/pytest_runner.py");
/// Reads the submission's source for ways into the test machinery; imported by `VERIFY_PY`.
pub const STATIC_EVIDENCE_PY: &str = include_str!("../adapters/static_evidence.py");
/// Reads a Doc2Repo suite's node-id manifest from its archive; imported by `VERIFY_PY`.
pub const MANIFEST_PY: &str = include_str!("../adapters/manifest.py");
/// Plans canaries (clones of the suite's own tests) and judges them; imported by `VERIFY_PY`.
pub const CANARIES_PY: &str = include_str!("../adapters/canaries.py");
/// The verdict from the verifier's facts; imported by `VERIFY_PY`.
pub const DECIDE_PY: &str = include_str!("../adapters/decide.py");
/// The one table of restore rules, read by `VERIFY_PY` and by `crate::restore_rules`.
pub const RESTORE_RULES_JSON: &str = include_str!("../adapters/restore_rules.json");
/// Harbor `tests/test.sh`.
pub const TEST_SH: &str = include_str!("../adapters/test.sh");
const SOLVE_SH: &str = include_str!("../adapters/solve.sh");
const SOLVE_REPO_SH: &str = include_str!("../adapters/solve_repo.sh");

/// The verifier's root-only state directory, in a prepared image and in a Harbor environment
/// alike: the prepare step's record, and the setup commands' exports below.
pub const STATE_DIR: &str = "/var/lib/beyondswe";
/// The file the setup commands' exports are chained through ([`SETUP_STEP_SH`]).
pub const SETUP_ENV: &str = "/var/lib/beyondswe/setup.env";

/// Shell that takes the setup commands' exports into the current shell: what the prepare step
/// records as the image's environment starts from it.
pub fn source_setup_env() -> String {
    format!("if [ -f {SETUP_ENV} ]; then . {SETUP_ENV}; fi")
}

/// The verifier's installed name: the entry point of [`VERIFIER_MODULES`].
pub const VERIFY_FILE: &str = "beyondswe_verify.py";

/// The verifier's modules by the names they are installed under, side by side in one directory:
/// the verifier imports its siblings by these names.
pub const VERIFIER_MODULES: [(&str, &str); 6] = [
    (VERIFY_FILE, VERIFY_PY),
    ("beyondswe_pytest_runner.py", PYTEST_RUNNER_PY),
    ("beyondswe_static_evidence.py", STATIC_EVIDENCE_PY),
    ("beyondswe_manifest.py", MANIFEST_PY),
    ("beyondswe_canaries.py", CANARIES_PY),
    ("beyondswe_decide.py", DECIDE_PY),
];

/// Every embedded file, by its name in `adapters/` (a test checks none is missing).
pub const FILES: [(&str, &str); 12] = [
    ("strip_history.sh", STRIP_HISTORY_SH),
    ("setup_step.sh", SETUP_STEP_SH),
    ("verify.py", VERIFY_PY),
    ("pytest_runner.py", PYTEST_RUNNER_PY),
    ("static_evidence.py", STATIC_EVIDENCE_PY),
    ("manifest.py", MANIFEST_PY),
    ("canaries.py", CANARIES_PY),
    ("decide.py", DECIDE_PY),
    ("restore_rules.json", RESTORE_RULES_JSON),
    ("test.sh", TEST_SH),
    ("solve.sh", SOLVE_SH),
    ("solve_repo.sh", SOLVE_REPO_SH),
];

/// A digest of every embedded file: what runs in the container, part of each resume key (a
/// changed verifier grades again).
pub fn digest() -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for (name, text) in FILES {
        h.update(name.as_bytes());
        h.update([0]);
        h.update(text.as_bytes());
        h.update([0]);
    }
    hex::encode(h.finalize())
}

/// Harbor `solution/solve.sh` for a repository at `workdir`.
pub fn solve_sh(workdir: &str) -> String {
    SOLVE_SH.replace("@WORKDIR@", &shell_quote(workdir))
}

/// Harbor `solution/solve.sh` for a Doc2Repo reference repository (`solution/repo.tar`).
pub fn solve_repo_sh(workdir: &str) -> String {
    SOLVE_REPO_SH.replace("@WORKDIR@", &shell_quote(workdir))
}

/// Quotes a string for POSIX sh with single quotes.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file added to `adapters/` must be embedded and listed in [`FILES`], or a change to it
    /// would not invalidate resumed verdicts.
    #[test]
    fn every_adapter_file_is_listed() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("adapters");
        let mut on_disk: Vec<String> = fs_err::read_dir(&dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| e.path().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut listed: Vec<String> = FILES.iter().map(|(n, _)| (*n).to_owned()).collect();
        listed.sort();
        assert_eq!(on_disk, listed);
        for (name, text) in FILES {
            assert_eq!(
                fs_err::read_to_string(dir.join(name)).ok().as_deref(),
                Some(text),
                "{name}"
            );
        }
    }

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(shell_quote("/work space/it's"), r"'/work space/it'\''s'");
        assert!(solve_sh("/workspace").contains("cd '/workspace'"));
    }
}
