//! The verdict: what `grade-one --json` prints and what runs store, one per submission.

use crate::record::Family;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `resolved`, `unresolved`, or `error` (infrastructure, never the agent's fault).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The submission solves the instance: every required test passed.
    Resolved,
    /// The submission was graded and does not solve the instance (`reason` says why).
    Unresolved,
    /// The grading itself failed (image, engine, dataset or grader); says nothing about the
    /// submission, and is counted apart.
    Error,
}

/// Why the verdict is what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Every F2P and P2P test passed (Doc2Repo: every suite test).
    AllTestsPassed,
    /// At least one required test did not pass (Doc2Repo: the score is the pass rate).
    TestsFailed,
    /// The submission is empty; no test was run.
    EmptyPatch,
    /// The patch does not apply cleanly (a partial apply counts as not applying).
    PatchFailed,
    /// The tests did not finish in time.
    Timeout,
    /// The container ran out of memory.
    OutOfMemory,
    /// The container wrote more than its disk limit (`--disk-mb`) and was stopped.
    DiskLimit,
    /// The result channel has no results (the test process died before writing them).
    NoResults,
    /// The recorder and pytest's own JUnit report disagree: a sign of tampering.
    ResultsDisagree,
    /// The outcomes were forged, proven by a canary group: two of its variants passed, or a
    /// variant had no result or two while its group ran, each again when the group ran alone
    /// (evidence in `flags.forgery` and `canaries`).
    ForgeryDetected,
    /// With `--strict` only: evidence for review (static evidence in the submission's source,
    /// what the runner saw in the tested process) that neither the base repository nor the gold
    /// patch explains. Scores 0 until a reviewer accepts it.
    ForgerySuspected,
    /// Infrastructure: the instance's image is not available.
    ImageMissing,
    /// Infrastructure: the Docker engine cannot be reached.
    EngineUnreachable,
    /// Infrastructure: the dataset's f2p patch does not apply to the base.
    F2pPatchFailed,
    /// Infrastructure: the instance has no FAIL_TO_PASS / PASS_TO_PASS ids.
    NoTestIds,
    /// Infrastructure: commits newer than the base are still stored after the history strip.
    HistoryLeak,
    /// Infrastructure: the Doc2Repo suite zip is missing.
    TestSuiteMissing,
    /// Infrastructure: the base commit cannot be checked out, or the workdir is not a repository.
    PrepareFailed,
    /// Infrastructure: an engine call failed.
    SandboxFailed,
    /// Infrastructure: the in-container verifier failed or wrote no readable result.
    VerifierFailed,
    /// Infrastructure: the harness running the grading (Harbor) could not build or start the
    /// task's environment, so nothing of the submission ran.
    EnvironmentFailed,
    /// The grader itself failed on this submission (a bug: it panicked); not retried.
    GraderFailed,
}

/// Outcome of one required test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TestOutcome {
    /// The test passed (an unexpected pass of a non-strict `xfail` test counts too).
    Passed,
    /// The test ran and failed.
    Failed,
    /// The test's setup or teardown failed, or its outcome could not be read.
    Error,
    /// The test was skipped.
    Skipped,
    /// A test marked `xfail` failed as expected; not a pass.
    Xfailed,
    /// Not collected or not run.
    NotRun,
    /// The recorder says passed, pytest's JUnit report does not.
    Disputed,
}

/// `as_str()` (the serialised name, without a JSON round trip) and `ALL` for a unit enum; the
/// match is exhaustive, so a new variant cannot be left out, and a test holds each name to serde's.
macro_rules! names {
    ($t:ident { $($v:ident => $s:literal),* $(,)? }) => {
        impl $t {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$t] = &[$($t::$v),*];
            /// The name as serialised in JSON.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($t::$v => $s),*
                }
            }
        }
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

names!(Outcome { Resolved => "resolved", Unresolved => "unresolved", Error => "error" });

names!(Reason {
    AllTestsPassed => "all_tests_passed",
    TestsFailed => "tests_failed",
    EmptyPatch => "empty_patch",
    PatchFailed => "patch_failed",
    Timeout => "timeout",
    OutOfMemory => "out_of_memory",
    DiskLimit => "disk_limit",
    NoResults => "no_results",
    ResultsDisagree => "results_disagree",
    ForgeryDetected => "forgery_detected",
    ForgerySuspected => "forgery_suspected",
    ImageMissing => "image_missing",
    EngineUnreachable => "engine_unreachable",
    F2pPatchFailed => "f2p_patch_failed",
    NoTestIds => "no_test_ids",
    HistoryLeak => "history_leak",
    TestSuiteMissing => "test_suite_missing",
    PrepareFailed => "prepare_failed",
    SandboxFailed => "sandbox_failed",
    VerifierFailed => "verifier_failed",
    EnvironmentFailed => "environment_failed",
    GraderFailed => "grader_failed",
});

impl Reason {
    /// An `error` that is the input's problem, not the machine's, with what fixes it: the
    /// instance's image is not there, or a Doc2Repo instance's hidden suite was not given.
    pub fn users_fix(self) -> Option<&'static str> {
        match self {
            Reason::ImageMissing => Some(
                "pull the instance's image (`beyondswe image pull --dataset FILE`, or grade with \
                 --pull missing, the default), build it (`beyondswe image build`) or `docker load` it",
            ),
            Reason::TestSuiteMissing => {
                Some("give --test-suites DIR, the directory of the Doc2Repo suite zips")
            }
            _ => None,
        }
    }
}

names!(TestOutcome {
    Passed => "passed",
    Failed => "failed",
    Error => "error",
    Skipped => "skipped",
    Xfailed => "xfailed",
    NotRun => "not_run",
    Disputed => "disputed",
});

/// What the grader changed or noticed in the submission's tree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Flags {
    /// Paths covered by the restore rules that the patch touches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests_touched: Vec<String>,
    /// Tracked test files put back to the base commit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests_restored: Vec<String>,
    /// Files the submission added that were removed (conftest.py, plugins, start-up hooks, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_removed: Vec<String>,
    /// pytest configuration reverted to the base commit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_reverted: Vec<String>,
    /// Covered paths kept as submitted because the gold patch changes them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept_for_gold: Vec<String>,
    /// How the patch applied (`git apply`, or a documented fallback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_with: Option<String>,
    /// Setup commands that failed (the official harness ignores these too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pre_commands_failed: Vec<String>,
    /// Signs that the graded code tried to forge its results (each is a sentence).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suspicious: Vec<String>,
    /// Proof that outcomes were forged (each is a sentence); any makes the verdict
    /// `forgery_detected`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forgery: Vec<String>,
    /// What the grading could not watch on this image (an interpreter before 3.8 has no audit
    /// hooks): a limit of the grading, not a sign of the submission, so never flagged for
    /// review and never turned into a verdict by `--strict`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unwatched: Vec<String>,
    /// Doc2Repo: `pip install -e .` failed; the source was put on the path instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub install_failed: bool,
}

impl Flags {
    /// Whether the submission tried to change how it is tested.
    pub fn tampering(&self) -> bool {
        !self.tests_restored.is_empty()
            || !self.files_removed.is_empty()
            || !self.config_reverted.is_empty()
            || !self.suspicious.is_empty()
            || !self.forgery.is_empty()
    }
}

/// A canary group: one test that matters hidden among k mutants of itself (the same test with
/// the literal one assertion expects replaced by another value of its type, or the exception
/// class it expects by another class of its kind), every variant
/// under a fresh name, the real one drawn at random for this grading and known only to the
/// verifier (`research/canary-groups.md`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Canary {
    /// The test module the group was planted in, relative to the repository (or the suite).
    pub module: String,
    /// The test the group hides, as the dataset names it (without parameters).
    pub template: String,
    /// Which tests the group stands for: `f2p` (counted in the forge chance), `p2p` or `suite`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tier: String,
    /// Variants in the group: the real one and `k` mutants.
    pub variants: u32,
    /// Mutants in the group.
    pub k: u32,
    /// The line of the assertion whose expected value the mutants change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The template's kind: `function`, `method`, `unittest` or `class`, with `+async` and
    /// `+parametrised` where they apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    /// The name the real variant ran under in this grading (revealed once the tests are over).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub real: String,
    /// Each collected item of the group (a parameter set, a class inheriting the test) by its
    /// public id: the outcome of every variant, in the group's order.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub items: BTreeMap<String, Vec<String>>,
    /// What this group proves (empty: it behaved).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proof: Vec<String>,
    /// Contradictions that did not hold when the group ran alone: flakiness, not proof.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky: Vec<String>,
    /// In a group on an expected exception class, the real variant and one other passed where
    /// the submission defines a class deriving from both: what honest code may do, so no
    /// proof, flagged for review.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub review: Vec<String>,
}

/// What the canary plan built in a grading: its groups and the chance that a forger who cannot
/// tell a group's variants apart passed every FAIL_TO_PASS group undetected.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CanaryPlan {
    /// Whether the groups went into the tests.
    pub planted: bool,
    /// Groups built.
    #[serde(default)]
    pub groups: u32,
    /// Groups built for FAIL_TO_PASS tests.
    #[serde(default)]
    pub f2p_groups: u32,
    /// Each group's size (k + 1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<u32>,
    /// FAIL_TO_PASS ids no group stands for (no assertion of theirs compares with a literal):
    /// a forger can pass them without choosing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub f2p_ungrouped: Vec<String>,
    /// The templates' kinds (see [`Canary::shape`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shapes: Vec<String>,
    /// Test modules read.
    pub modules: u32,
    /// The chance that a forger choosing blindly in each FAIL_TO_PASS group (or, for
    /// Doc2Repo, each group) passed them all undetected: the product of 1/(k+1). 1 where no
    /// group was built.
    #[serde(default = "one")]
    pub forge_chance: f64,
    /// Why no group was built, where none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub none_because: Option<String>,
    /// What the groups rest on: `checked under the gold patch` (built only on sites where the
    /// gold patch passed the test and failed every other value a group there can hold), or
    /// why no gold check was run (then every site that can carry a group may, and a group
    /// that honest code contradicts is still confirmed alone before it is proof).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_check: Option<String>,
    /// Doc2Repo: the grouped tests against the rest of those that could have been grouped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_versus_rest: Option<SampleVersusRest>,
}

/// How often a Doc2Repo suite's grouped tests (their real variants) passed against the rest of
/// the tests that could have carried a group (a test without a result counts as failed on both
/// sides). The groups are a uniform draw among those tests, so for code whose outcomes do not
/// depend on the draw the two pass about as often. A split with `chance` under 1 in 10,000 is
/// confirmed: each grouped test that failed runs again once per variant, its module up to the
/// group with that variant alone, under the test's own name (where no variant passes so, after
/// every test that ran before it). Still under 1 in a million after that, it is proof (a payload
/// that recognises the groups and forces only the other tests); otherwise it is flagged for review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SampleVersusRest {
    /// [passed, counted] of the grouped tests.
    pub grouped: [u32; 2],
    /// [passed, counted] of the others that could have been grouped.
    pub rest: [u32; 2],
    /// The chance of a split at least this uneven for code whose outcomes do not depend on
    /// which tests were drawn (the hypergeometric tail).
    pub chance: f64,
    /// The split once each grouped failure was run again with its clones apart, where `chance`
    /// was under 1 in 10,000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed: Option<SplitConfirmed>,
}

/// A Doc2Repo split after each grouped test that failed ran again once per variant, apart from
/// its clones and under its own name: a test whose real variant passed alone, and every other
/// variant failed alone, failed only because of its group and counts as passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SplitConfirmed {
    /// [passed, counted] of the grouped tests, confirmed alone.
    pub grouped: [u32; 2],
    /// The chance of the confirmed split (proof under 1 in a million).
    pub chance: f64,
    /// How many runs confirming it took.
    pub runs: u32,
    /// A run ran out of its time (twice the whole suite's): no more were made, and the grouped
    /// tests not yet confirmed count as failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stalled: bool,
}

fn one() -> f64 {
    1.0
}

/// One use of a construct that reaches into the tests' machinery or the interpreter, found in
/// the submission's source before any of it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StaticHit {
    /// `frames`, `gc`, `ctypes`, `main_module`, `test_machinery`, `import_hooks`, … (the
    /// verifier's `static_evidence.KINDS`).
    pub kind: String,
    /// The file, relative to the repository.
    pub path: String,
    /// Line of the use, counting from 1; 0 for a file that is a hit by its name alone (`.pth`, extension module).
    pub line: u64,
    /// The construct as written (`sys._getframe`, `.f_locals`, `exec of a computed value`).
    pub what: String,
}

/// What the submission's source reaches for, read by the verifier as root after the patch was
/// applied and before any of it ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StaticEvidence {
    /// Uses of a kind that neither the base repository nor the gold patch uses: any makes the
    /// verdict `forgery_suspected`, unless a reviewer accepted them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hits: Vec<StaticHit>,
    /// Uses the instance's baseline allows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed: Vec<StaticHit>,
    /// Kind -> where the base repository's own code uses it (`path:line`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub baseline: BTreeMap<String, String>,
    /// Kinds the gold patch (Doc2Repo: the reference repository) uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gold: Vec<String>,
    /// A reviewer accepted the hits (`--accept-suspected`): they are kept, not counted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub accepted: bool,
    /// The verdict, reason and score a reviewer who accepts the hits would get.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub if_accepted: Option<(Outcome, Reason, f64)>,
}

/// Doc2Repo suite counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SuiteResult {
    /// Tests that passed in both the recorder and the JUnit report.
    pub passed: u64,
    /// Tests the suite run collected.
    pub collected: u64,
    /// `test_suite_num`: the denominator (when 0, `collected` is used instead).
    pub expected: u64,
    /// Every expected test passed: the Doc2Repo submission is resolved.
    pub all_passed: bool,
    /// Each suite test's outcome by name (canaries left out; a pass JUnit does not confirm is
    /// `disputed`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tests: BTreeMap<String, TestOutcome>,
}

/// Logs kept with the verdict (tails).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Logs {
    /// Checkout of the base commit and the setup commands.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prepare: String,
    /// Applying the patch (`git apply`'s output).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub apply: String,
    /// Doc2Repo: installing the submitted repository.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub install: String,
    /// What the test run printed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub test_output: String,
    /// What ended the grading early: the error of an `error` verdict, a limit, a refused patch.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub error: String,
}

/// The grade of one submission for one instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    /// The graded instance.
    pub instance_id: String,
    /// The instance's task family.
    pub family: Family,
    /// Resolved, unresolved, or an error of the grading.
    pub verdict: Outcome,
    /// 1 or 0 for issue tasks; the pass rate (capped at 1) for Doc2Repo.
    pub score: f64,
    /// Why the verdict is what it is.
    pub reason: Reason,
    /// Issue tasks: each FAIL_TO_PASS test's outcome, by test id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fail_to_pass: BTreeMap<String, TestOutcome>,
    /// Issue tasks: each PASS_TO_PASS test's outcome, by test id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pass_to_pass: BTreeMap<String, TestOutcome>,
    /// Doc2Repo: the hidden suite's counts; absent when the suite did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<SuiteResult>,
    /// Why the tests failed, for a person, where one cause explains it: the module they could
    /// not import (`module not found: X`) or the name (`import error: …`). Never part of the
    /// decision; a resolved verdict has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// What the grader changed or noticed in the submission's tree.
    #[serde(default)]
    pub flags: Flags,
    /// What the submission's source reaches for (absent when it reaches for nothing listed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_evidence: Option<StaticEvidence>,
    /// The canaries planted in this run and how they came out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub canaries: Vec<Canary>,
    /// What the canary plan found (absent from verifiers before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary_plan: Option<CanaryPlan>,
    /// The instance image's id as the engine reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_id: Option<String>,
    /// The prepared image the container ran (instance image after checkout, setup, strip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prepared_image: Option<String>,
    /// Seconds per phase (`start`, `prepare`, `apply`, `restore`, `tests`, `collect`, `remove`).
    #[serde(default)]
    pub timings: BTreeMap<String, f64>,
    /// Tails of the grading's logs; in a results directory they are stored beside the verdict
    /// (`instances/<id>/*.log`) and empty here.
    #[serde(default)]
    pub logs: Logs,
}

impl Verdict {
    /// A verdict to fill in: until [`Verdict::set`] says otherwise, an `error` with reason
    /// `sandbox_failed` and score 0.
    pub fn new(instance_id: &str, family: Family) -> Verdict {
        Verdict {
            instance_id: instance_id.to_owned(),
            family,
            verdict: Outcome::Error,
            score: 0.0,
            reason: Reason::SandboxFailed,
            fail_to_pass: BTreeMap::new(),
            pass_to_pass: BTreeMap::new(),
            suite: None,
            cause: None,
            flags: Flags::default(),
            static_evidence: None,
            canaries: Vec::new(),
            canary_plan: None,
            image_id: None,
            prepared_image: None,
            timings: BTreeMap::new(),
            logs: Logs::default(),
        }
    }

    /// Sets the outcome, its reason and the score together.
    pub fn set(&mut self, verdict: Outcome, reason: Reason, score: f64) {
        self.verdict = verdict;
        self.reason = reason;
        self.score = score;
    }

    /// Whether this is an infrastructure failure (kept apart from the agent's failures).
    pub fn is_error(&self) -> bool {
        self.verdict == Outcome::Error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serialised_names() {
        fn check<T: Serialize + Copy>(all: &[T], name: impl Fn(T) -> &'static str) {
            for &v in all {
                assert_eq!(serde_json::to_value(v).unwrap(), name(v));
            }
        }
        check(Outcome::ALL, Outcome::as_str);
        check(Reason::ALL, Reason::as_str);
        check(TestOutcome::ALL, TestOutcome::as_str);
    }
}
