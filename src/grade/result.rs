//! The in-container verifier's one JSON result (`adapters/beyondswe_verifier/verify.py`), read back through the
//! engine from a directory only root can reach, and how it becomes a [`Verdict`].
//!
//! The verifier decides the verdict from the facts it gathered (`adapters/beyondswe_verifier/decide.py`, the one
//! place a verdict is made, for this grader and for Harbor's `test.sh` alike); this module only
//! checks the result's shape and maps its strings onto the typed verdict. It knows nothing of
//! containers.

use super::verdict::{
    Canary, CanaryPlan, Outcome, Reason, StaticEvidence, SuiteResult, TestOutcome, Verdict,
};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The result format `verify.py` writes.
pub(super) const RESULT_FORMAT: &str = "beyondswe-verify-result-1";

/// What `verify.py grade` writes.
#[derive(Debug, Clone, Deserialize)]
pub struct VerifierResult {
    /// The result format's name; only `beyondswe-verify-result-1` is read.
    pub format: String,
    /// The verifier's outcome.
    pub verdict: Outcome,
    /// The reason's name; one this build does not know becomes `verifier_failed`.
    pub reason: String,
    /// The score, clamped to 0..=1 when it becomes the verdict.
    pub score: f64,
    /// Each FAIL_TO_PASS test's outcome name, by test id.
    #[serde(default)]
    pub fail_to_pass: BTreeMap<String, String>,
    /// Each PASS_TO_PASS test's outcome name, by test id.
    #[serde(default)]
    pub pass_to_pass: BTreeMap<String, String>,
    /// Doc2Repo: the suite's counts and outcomes.
    #[serde(default)]
    pub suite: Option<RawSuite>,
    /// What the restore step changed and what the verifier noticed.
    #[serde(default)]
    pub flags: RawFlags,
    /// The canaries planted and how they came out.
    #[serde(default)]
    pub canaries: Vec<Canary>,
    /// What the canary plan found.
    #[serde(default)]
    pub canary_plan: Option<CanaryPlan>,
    /// What the submission's source reaches for (`static` in the verifier's facts).
    #[serde(default, rename = "static")]
    pub static_evidence: Option<StaticEvidence>,
    /// Logs by step (`apply`, `install`, `test_output`, `error`).
    #[serde(default)]
    pub logs: BTreeMap<String, String>,
    /// Seconds per verifier step.
    #[serde(default)]
    pub timings: BTreeMap<String, f64>,
    /// What the prepare step recorded, read back from the prepared image.
    #[serde(default)]
    pub setup: Option<SetupFacts>,
    /// Why the tests failed, where one import failure explains it (`module not found: X`).
    #[serde(default)]
    pub cause: Option<String>,
    /// The gold check's findings, when this run was the check.
    #[serde(default)]
    pub canary_check: Option<crate::verifier_spec::GoldCheck>,
}

/// The Doc2Repo suite's counts as the verifier writes them.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RawSuite {
    pub passed: u64,
    pub collected: u64,
    pub expected: u64,
    #[serde(default)]
    pub all_passed: bool,
    /// Each suite test's outcome by name.
    #[serde(default)]
    pub outcomes: BTreeMap<String, String>,
}

/// The verifier's flags, as it writes them (see [`crate::grade::Flags`]).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RawFlags {
    #[serde(default)]
    pub tests_restored: Vec<String>,
    #[serde(default)]
    pub files_removed: Vec<String>,
    #[serde(default)]
    pub config_reverted: Vec<String>,
    #[serde(default)]
    pub kept_for_gold: Vec<String>,
    #[serde(default)]
    pub suspicious: Vec<String>,
    #[serde(default)]
    pub forgery: Vec<String>,
    #[serde(default)]
    pub unwatched: Vec<String>,
    #[serde(default)]
    pub applied_with: Option<String>,
    #[serde(default)]
    pub install_failed: bool,
}

/// What the prepare step recorded (`setup.json` in the prepared image).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SetupFacts {
    #[serde(default)]
    pub log: String,
    #[serde(default)]
    pub pre_commands_failed: Vec<String>,
}

impl VerifierResult {
    /// Parses the result and checks its format.
    pub fn parse(bytes: &[u8]) -> Result<VerifierResult, String> {
        let r: VerifierResult = serde_json::from_slice(bytes)
            .map_err(|e| format!("unreadable verifier result: {e}"))?;
        if r.format != RESULT_FORMAT {
            return Err(format!("unexpected verifier result format `{}`", r.format));
        }
        Ok(r)
    }

    /// The reason as the typed enum; a name this build does not know is the verifier's failure.
    pub fn reason(&self) -> Reason {
        Reason::ALL
            .iter()
            .copied()
            .find(|r| r.as_str() == self.reason)
            .unwrap_or(Reason::VerifierFailed)
    }

    /// Moves everything into the verdict (`tail` shortens logs).
    pub fn apply_to(self, v: &mut Verdict, tail: impl Fn(&str) -> String) {
        let reason = self.reason();
        let outcome = if reason == Reason::VerifierFailed && self.verdict != Outcome::Error {
            Outcome::Error
        } else {
            self.verdict
        };
        // An infrastructure failure scores nothing, whatever score came with it.
        let score = if outcome == Outcome::Error {
            0.0
        } else {
            self.score.clamp(0.0, 1.0)
        };
        v.set(outcome, reason, score);
        v.fail_to_pass = self
            .fail_to_pass
            .iter()
            .map(|(k, o)| (k.clone(), test_outcome(o)))
            .collect();
        v.pass_to_pass = self
            .pass_to_pass
            .iter()
            .map(|(k, o)| (k.clone(), test_outcome(o)))
            .collect();
        v.suite = self.suite.map(|s| SuiteResult {
            passed: s.passed,
            collected: s.collected,
            expected: s.expected,
            all_passed: s.all_passed,
            tests: s
                .outcomes
                .iter()
                .map(|(k, o)| (k.clone(), test_outcome(o)))
                .collect(),
        });
        let f = &mut v.flags;
        f.tests_restored = self.flags.tests_restored;
        f.files_removed = self.flags.files_removed;
        f.config_reverted = self.flags.config_reverted;
        f.kept_for_gold = self.flags.kept_for_gold;
        f.suspicious.extend(self.flags.suspicious);
        f.forgery = self.flags.forgery;
        f.unwatched = self.flags.unwatched;
        f.install_failed = self.flags.install_failed;
        if self.flags.applied_with.is_some() {
            f.applied_with = self.flags.applied_with;
        }
        v.canaries = self.canaries;
        v.canary_plan = self.canary_plan;
        v.static_evidence = self
            .static_evidence
            .filter(|s| !s.hits.is_empty() || !s.allowed.is_empty());
        v.cause = self.cause;
        if let Some(setup) = self.setup {
            v.logs.prepare = tail(&setup.log);
            v.flags.pre_commands_failed = setup.pre_commands_failed;
        }
        let log = |k: &str| self.logs.get(k).map(|s| tail(s)).unwrap_or_default();
        v.logs.apply = log("apply");
        v.logs.install = log("install");
        v.logs.test_output = log("test_output");
        let error = log("error");
        if !error.is_empty() {
            v.logs.error = error;
        }
        for (k, t) in self.timings {
            *v.timings.entry(k).or_default() += t;
        }
    }
}

/// The runner's outcome names as typed outcomes (`xpassed` counts as passed, as pytest does for
/// non-strict xfail).
pub fn test_outcome(o: &str) -> TestOutcome {
    match o {
        "passed" | "xpassed" => TestOutcome::Passed,
        "failed" => TestOutcome::Failed,
        "skipped" => TestOutcome::Skipped,
        "xfailed" => TestOutcome::Xfailed,
        "disputed" => TestOutcome::Disputed,
        "not_run" => TestOutcome::NotRun,
        _ => TestOutcome::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Family;

    #[test]
    fn a_result_becomes_the_verdict_and_unknown_reasons_are_the_verifiers_failure() {
        let json = serde_json::json!({
            "format": RESULT_FORMAT, "verdict": "unresolved", "reason": "forgery_detected",
            "score": 0.0, "fail_to_pass": {"t::a": "passed", "t::b": "not_run"},
            "flags": {"forgery": ["canary group t.py::a: 2 of its 10 variants passed"],
                      "files_removed": ["pytest.py"]},
            "canaries": [{"module": "t.py", "template": "t.py::a", "tier": "f2p", "variants": 10,
                          "k": 9, "real": "test_b_c", "items": {"t.py::a": ["passed", "passed"]},
                          "proof": ["t.py::a: 2 of its 10 variants passed"]}],
            "canary_plan": {"planted": true, "groups": 1, "f2p_groups": 1, "sizes": [10],
                            "modules": 1, "forge_chance": 0.1},
            "timings": {"tests": 1.5}
        });
        let r = VerifierResult::parse(json.to_string().as_bytes()).unwrap();
        let mut v = Verdict::new("x", Family::CrossRepo);
        r.apply_to(&mut v, |s| s.to_owned());
        assert_eq!(
            (v.verdict, v.reason),
            (Outcome::Unresolved, Reason::ForgeryDetected)
        );
        assert_eq!(v.fail_to_pass["t::b"], TestOutcome::NotRun);
        assert!(v.flags.tampering());
        assert_eq!(v.canaries.len(), 1);
        assert_eq!(v.canaries[0].k, 9);
        assert_eq!(v.canary_plan.as_ref().map(|p| p.forge_chance), Some(0.1));

        let json = serde_json::json!({"format": RESULT_FORMAT, "verdict": "error",
                                      "reason": "something_new", "score": 0.0});
        let r = VerifierResult::parse(json.to_string().as_bytes()).unwrap();
        assert_eq!(r.reason(), Reason::VerifierFailed);
        assert!(VerifierResult::parse(b"{\"format\": \"other\"}").is_err());
    }
}
