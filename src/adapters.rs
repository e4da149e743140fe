//! Files that run inside containers, embedded in the binary so that the Harbor converter and the
//! offline grader use byte-identical copies.
//!
//! The sources live in `adapters/` at the repository root; this module only exposes them and fills
//! the one template placeholder (the `solve*.sh` working directory).

/// Checks out the base commit's history only and proves no newer commit is stored.
pub const STRIP_HISTORY_SH: &str = include_str!("../adapters/strip_history.sh");
/// Runs one setup command so that its exports carry over to the next one and to the tests.
pub const SETUP_STEP_SH: &str = include_str!("../adapters/setup_step.sh");
/// The in-container verifier's entry point: puts its own directory first on `sys.path` and runs
/// the package's `verify.main`.
pub const ENTRY_PY: &str = include_str!("../adapters/beyondswe_verify.py");
/// The verifier package's `__init__.py` (it runs nothing).
pub const INIT_PY: &str = include_str!("../adapters/beyondswe_verifier/__init__.py");
/// The verifier's commands, the context its steps share, and `grade`, which runs the steps (the
/// modules below) in order and returns the one JSON result.
pub const VERIFY_PY: &str = include_str!("../adapters/beyondswe_verifier/verify.py");
/// What every module of the verifier shares: where it is installed, the log, the step error.
pub const COMMON_PY: &str = include_str!("../adapters/beyondswe_verifier/common.py");
/// The spec the verifier is given: the keys it accepts with their types, and its defaults (held
/// to [`crate::verifier_spec::VerifierSpec`] by a test).
pub const SPEC_PY: &str = include_str!("../adapters/beyondswe_verifier/spec.py");
/// The restore rules' classification of a path; files handled without following links.
pub const FILES_PY: &str = include_str!("../adapters/beyondswe_verifier/files.py");
/// git with a clean environment, hash-checked objects, the base commit's listing.
pub const GITOBJECTS_PY: &str = include_str!("../adapters/beyondswe_verifier/gitobjects.py");
/// The test user, killing every process of a uid at once, the disk limit, dropped privileges.
pub const PROCESSES_PY: &str = include_str!("../adapters/beyondswe_verifier/processes.py");
/// The disk limit's measure: the places the test user can write to, what it wrote there.
pub const DISK_PY: &str = include_str!("../adapters/beyondswe_verifier/disk.py");
/// The image's environment and interpreter, recorded at prepare and given to every test run.
pub const ENVIRONMENT_PY: &str = include_str!("../adapters/beyondswe_verifier/environment.py");
/// The submission: captured (Harbor), applied with `git apply`, the paths it touched.
pub const SUBMISSION_PY: &str = include_str!("../adapters/beyondswe_verifier/submission.py");
/// The scrub step: untracked loaders and shadowing modules removed.
pub const SCRUB_PY: &str = include_str!("../adapters/beyondswe_verifier/scrub.py");
/// The restore step: test files and pytest configuration back to the base commit.
pub const RESTORE_PY: &str = include_str!("../adapters/beyondswe_verifier/restore.py");
/// The static step: the submission's source read through `STATIC_EVIDENCE_PY` before it runs.
pub const STATIC_STEP_PY: &str = include_str!("../adapters/beyondswe_verifier/static_step.py");
/// Canaries planted in the tree, placed among the run's ids and judged (`CANARIES_PY` plans them).
pub const CANARY_STEPS_PY: &str = include_str!("../adapters/beyondswe_verifier/canary_steps.py");
/// The test run through `PYTEST_RUNNER_PY`, its result channel, JUnit and outcomes per id.
pub const TESTRUN_PY: &str = include_str!("../adapters/beyondswe_verifier/testrun.py");
/// The issue families: the steps from the apply to the outcomes per id.
pub const ISSUE_PY: &str = include_str!("../adapters/beyondswe_verifier/issue.py");
/// The Doc2Repo family: the install as the test user, the hidden suite, its manifest.
pub const DOC2REPO_PY: &str = include_str!("../adapters/beyondswe_verifier/doc2repo.py");
/// The verifier's `prepare` command: what belongs to the image, recorded once.
pub const PREPARE_PY: &str = include_str!("../adapters/beyondswe_verifier/prepare.py");
/// Runs pytest as the unprivileged test user; started by `TESTRUN_PY`, reports over a pipe.
pub const PYTEST_RUNNER_PY: &str = include_str!("../adapters/beyondswe_verifier/pytest_runner.py");
/// The runner's second file: the snapshot of pytest's and the runner's functions and the checks
/// against it; copied beside `PYTEST_RUNNER_PY` by `TESTRUN_PY`, loaded by the runner by its path.
pub const RUNNER_SNAPSHOT_PY: &str =
    include_str!("../adapters/beyondswe_verifier/runner_snapshot.py");
/// Reads the submission's source for ways into the test machinery; imported by `STATIC_STEP_PY`.
pub const STATIC_EVIDENCE_PY: &str =
    include_str!("../adapters/beyondswe_verifier/static_evidence.py");
/// Reads a Doc2Repo suite's node-id manifest from its archive; imported by `DOC2REPO_PY`.
pub const MANIFEST_PY: &str = include_str!("../adapters/beyondswe_verifier/manifest.py");
/// Plans canaries (clones of the suite's own tests) and judges them; imported by `CANARY_STEPS_PY`.
pub const CANARIES_PY: &str = include_str!("../adapters/beyondswe_verifier/canaries.py");
/// A test module read for canaries: which tests can be templates, which literals sites.
pub const CANARY_READING_PY: &str =
    include_str!("../adapters/beyondswe_verifier/canary_reading.py");
/// The end positions a syntax tree lacks before Python 3.8, from the module's tokens; used by
/// `CANARY_READING_PY`.
pub const END_POSITIONS_PY: &str = include_str!("../adapters/beyondswe_verifier/end_positions.py");
/// The exception class a test expects, as a canary site: the raises-calls, the classes a
/// variant may name; used by `CANARY_READING_PY` and `CANARIES_PY`.
pub const CANARY_CLASSES_PY: &str =
    include_str!("../adapters/beyondswe_verifier/canary_classes.py");
/// How each canary variant is written: its value, its rendering, the words of its name.
pub const CANARY_WRITING_PY: &str =
    include_str!("../adapters/beyondswe_verifier/canary_writing.py");
/// Which literal arguments of a project's own assertion helpers carry groups; used by
/// `CANARY_STEPS_PY` at a gold check and for a Doc2Repo suite.
pub const HELPER_SITES_PY: &str = include_str!("../adapters/beyondswe_verifier/helper_sites.py");
/// The Doc2Repo split between the suite's grouped tests and the rest, confirmed alone;
/// imported by `DOC2REPO_PY`.
pub const SUITE_SPLIT_PY: &str = include_str!("../adapters/beyondswe_verifier/suite_split.py");
/// The verdict from the verifier's facts; imported by `VERIFY_PY`.
pub const DECIDE_PY: &str = include_str!("../adapters/beyondswe_verifier/decide.py");
/// The one table of restore rules, read by `FILES_PY` and by `crate::restore_rules`.
pub const RESTORE_RULES_JSON: &str = include_str!("../adapters/restore_rules.json");
/// Harbor `tests/test.sh`.
pub const TEST_SH: &str = include_str!("../adapters/test.sh");
const SOLVE_SH: &str = include_str!("../adapters/solve.sh");
const SOLVE_REPO_SH: &str = include_str!("../adapters/solve_repo.sh");
const SOLVE_SUBMISSION_SH: &str = include_str!("../adapters/solve_submission.sh");

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

/// The verifier's entry point, as installed beside its package [`PACKAGE`].
pub const VERIFY_FILE: &str = "beyondswe_verify.py";

/// The verifier's package: one directory beside [`VERIFY_FILE`], its modules importing each other
/// with relative imports.
pub const PACKAGE: &str = "beyondswe_verifier";

/// What the verifier's `prepare` command imports, by installed path: the entry point, the
/// package's `__init__.py`, every module it imports as it starts, and the static evidence (the
/// base's baseline). The Harbor environment's image holds these and no more of the verifier: the
/// agent works in that image.
pub const PREPARE_MODULES: [(&str, &str); 21] = [
    (VERIFY_FILE, ENTRY_PY),
    ("beyondswe_verifier/__init__.py", INIT_PY),
    ("beyondswe_verifier/verify.py", VERIFY_PY),
    ("beyondswe_verifier/common.py", COMMON_PY),
    ("beyondswe_verifier/spec.py", SPEC_PY),
    ("beyondswe_verifier/files.py", FILES_PY),
    ("beyondswe_verifier/gitobjects.py", GITOBJECTS_PY),
    ("beyondswe_verifier/processes.py", PROCESSES_PY),
    ("beyondswe_verifier/disk.py", DISK_PY),
    ("beyondswe_verifier/environment.py", ENVIRONMENT_PY),
    ("beyondswe_verifier/submission.py", SUBMISSION_PY),
    ("beyondswe_verifier/scrub.py", SCRUB_PY),
    ("beyondswe_verifier/restore.py", RESTORE_PY),
    ("beyondswe_verifier/static_step.py", STATIC_STEP_PY),
    ("beyondswe_verifier/canary_steps.py", CANARY_STEPS_PY),
    ("beyondswe_verifier/testrun.py", TESTRUN_PY),
    ("beyondswe_verifier/issue.py", ISSUE_PY),
    ("beyondswe_verifier/doc2repo.py", DOC2REPO_PY),
    ("beyondswe_verifier/prepare.py", PREPARE_PY),
    ("beyondswe_verifier/static_evidence.py", STATIC_EVIDENCE_PY),
    ("beyondswe_verifier/decide.py", DECIDE_PY),
];

/// The verifier by installed path: the entry point and its package, one directory. Those of
/// [`PREPARE_MODULES`], then the ones only a grading needs.
pub const VERIFIER_MODULES: [(&str, &str); 31] = concat(
    PREPARE_MODULES,
    [
        ("beyondswe_verifier/pytest_runner.py", PYTEST_RUNNER_PY),
        ("beyondswe_verifier/runner_snapshot.py", RUNNER_SNAPSHOT_PY),
        ("beyondswe_verifier/manifest.py", MANIFEST_PY),
        ("beyondswe_verifier/canaries.py", CANARIES_PY),
        ("beyondswe_verifier/canary_reading.py", CANARY_READING_PY),
        ("beyondswe_verifier/canary_classes.py", CANARY_CLASSES_PY),
        ("beyondswe_verifier/end_positions.py", END_POSITIONS_PY),
        ("beyondswe_verifier/canary_writing.py", CANARY_WRITING_PY),
        ("beyondswe_verifier/helper_sites.py", HELPER_SITES_PY),
        ("beyondswe_verifier/suite_split.py", SUITE_SPLIT_PY),
    ],
);

/// `a` then `b`, in a constant.
const fn concat<const A: usize, const B: usize, const N: usize>(
    a: [(&'static str, &'static str); A],
    b: [(&'static str, &'static str); B],
) -> [(&'static str, &'static str); N] {
    assert!(A + B == N, "the lengths do not add up");
    let mut out = [("", ""); N];
    let mut i = 0;
    while i < N {
        out[i] = if i < A { a[i] } else { b[i - A] };
        i += 1;
    }
    out
}

/// Every embedded file, by its path in `adapters/` (a test checks none is missing): the files
/// that are not the verifier's Python, then the verifier (installed under the same paths).
pub const FILES: [(&str, &str); 38] = concat(
    [
        ("strip_history.sh", STRIP_HISTORY_SH),
        ("setup_step.sh", SETUP_STEP_SH),
        ("restore_rules.json", RESTORE_RULES_JSON),
        ("test.sh", TEST_SH),
        ("solve.sh", SOLVE_SH),
        ("solve_repo.sh", SOLVE_REPO_SH),
        ("solve_submission.sh", SOLVE_SUBMISSION_SH),
    ],
    VERIFIER_MODULES,
);

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

/// Harbor `tests/test.sh` for a verifier mode (`separate` or `shared`); `recorded`: the task's
/// environment build records the interpreter (every task but one with a prebuilt image), so a
/// missing record is someone's doing, never a reason to look elsewhere.
pub fn test_sh(mode: &str, recorded: bool) -> String {
    TEST_SH
        .replace("@MODE@", mode)
        .replace("@RECORDED@", if recorded { "yes" } else { "no" })
}

/// Where the verifier's modules live in a Harbor task's image (the environment's Dockerfile
/// copies [`PREPARE_MODULES`] there).
pub const IMAGE_VERIFIER_DIR: &str = "/opt/beyondswe";

/// Harbor's `[[verifier.collect]]` command: in the agent's container after the agent, writes the
/// workdir as the agent left it as `/logs/artifacts/submission.diff` (a binary diff against
/// `base`, or against the empty tree), which Harbor carries into the verifier's fresh container.
/// It runs the verifier's `capture` with the interpreter the prepare step recorded, by absolute
/// path. Where that fails or is missing (an image that was not prepared, an agent that upgraded
/// or broke the interpreter) git alone writes the diff, without the ignored files. Any stale copy
/// is removed first, so a capture that fails both ways leaves no diff and the trial no reward,
/// never a diff the agent planted.
pub fn collect_command(workdir: &str, base: Option<&str>) -> String {
    let out = "/logs/artifacts/submission.diff";
    let w = shell_quote(workdir);
    let base_arg = base
        .map(|b| format!(" --base {}", shell_quote(b)))
        .unwrap_or_default();
    // Without the verifier: git alone, with an index (and without a base, a repository) of its
    // own in a fresh temporary directory.
    let (init, git_dir, against) = match base {
        Some(b) => (String::new(), ".git", shell_quote(b)),
        None => (
            r#"git init -q --bare "$t/g" && "#.to_owned(),
            r#""$t/g""#,
            "$(git hash-object -t tree /dev/null)".to_owned(),
        ),
    };
    let git = format!(
        r#"GIT_INDEX_FILE="$t/i" git -c safe.directory='*' --git-dir={git_dir} --work-tree=."#
    );
    format!(
        r#"mkdir -p /logs/artifacts && rm -f {out} {out}.partial && if read -r _ py 2>/dev/null < {STATE_DIR}/verifier-python && "$py" -I -S {IMAGE_VERIFIER_DIR}/{VERIFY_FILE} capture --workdir {w}{base_arg} --out {out} && [ -f {out} ]; then :; else rm -f {out} && t=$(mktemp -d) && cd {w} && {init}{git} add -A && {git} diff --cached --binary --no-color --no-ext-diff --no-renames {against} > {out}.partial && mv {out}.partial {out}; fi"#
    )
}

/// Harbor `solution/solve.sh` for a repository at `workdir`.
pub fn solve_sh(workdir: &str) -> String {
    SOLVE_SH.replace("@WORKDIR@", &shell_quote(workdir))
}

/// Harbor `solution/solve.sh` for a Doc2Repo reference repository (`solution/repo.tar`).
pub fn solve_repo_sh(workdir: &str) -> String {
    SOLVE_REPO_SH.replace("@WORKDIR@", &shell_quote(workdir))
}

/// Harbor `solution/solve.sh` of a task made to grade one submission (`grade --via-harbor`): the
/// patch `solution/submission.patch` applied as the verifier applies one, and whether it applied
/// written to [`APPLY_RECORD`].
pub fn solve_submission_sh(workdir: &str) -> String {
    SOLVE_SUBMISSION_SH.replace("@WORKDIR@", &shell_quote(workdir))
}

/// Where [`solve_submission_sh`] says whether the patch applied, below a trial's `agent/`
/// directory: `applied: HOW` or `failed`, then git's log.
pub const APPLY_RECORD: &str = "beyondswe-apply.txt";

/// Quotes a string for POSIX sh with single quotes.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file added to `adapters/` (or to the package in it) must be embedded and listed in
    /// [`FILES`], or a change to it would not invalidate resumed verdicts. The unit tests
    /// (`adapters/tests/`) and bytecode caches are not embedded.
    #[test]
    fn every_adapter_file_is_listed() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("adapters");
        let mut on_disk: Vec<String> = walkdir::WalkDir::new(&dir)
            .into_iter()
            .filter_entry(|e| {
                let name = e.file_name().to_string_lossy();
                e.depth() == 0 || (name != "tests" && name != "__pycache__")
            })
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e.path().strip_prefix(&dir).unwrap_or(e.path());
                rel.to_string_lossy().into_owned()
            })
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

    /// Every Python file of `adapters/` is installed under its path there: the entry point,
    /// and the package as one directory beside it. A module left out would be missing in every
    /// container.
    #[test]
    fn every_python_module_is_installed() {
        for (name, text) in FILES.iter().filter(|(n, _)| n.ends_with(".py")) {
            assert!(
                VERIFIER_MODULES.contains(&(name, text)),
                "{name} is not in VERIFIER_MODULES"
            );
            assert!(
                *name == VERIFY_FILE || name.starts_with(&format!("{PACKAGE}/")),
                "{name}"
            );
        }
        assert_eq!(VERIFIER_MODULES[..PREPARE_MODULES.len()], PREPARE_MODULES);
    }

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(shell_quote("/work space/it's"), r"'/work space/it'\''s'");
        assert!(solve_sh("/workspace").contains("cd '/workspace'"));
    }
}
