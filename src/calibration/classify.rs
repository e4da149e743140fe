//! From the verdicts of an instance's gold and empty gradings to its calibration: counts per
//! test id and the class. Pure: no container, no file.

use super::{CalibrationClass, ClassCounts, InstanceCalibration, RunCounts, TestCounts};
use crate::grade::{Outcome, TestOutcome, Verdict};
use crate::record::Family;
use std::collections::{BTreeMap, BTreeSet};

/// One instance's gradings.
#[derive(Debug, Clone, Copy)]
pub struct Runs<'a> {
    /// The instance.
    pub instance_id: &'a str,
    /// Its task family (Doc2Repo counts suite tests and records pass rates).
    pub family: Family,
    /// The instance's FAIL_TO_PASS ids (a trivial instance names those passing without a fix).
    pub fail_to_pass: &'a [String],
    /// Whether the instance has a gold patch (else only the empty grading ran).
    pub has_gold: bool,
    /// The verdicts of the gold gradings, errors included.
    pub gold: &'a [&'a Verdict],
    /// The verdicts of the empty-patch gradings, errors included.
    pub empty: &'a [&'a Verdict],
}

/// Every test id a verdict has an outcome for: F2P and P2P ids, or the Doc2Repo suite's tests.
fn outcomes(v: &Verdict) -> impl Iterator<Item = (&str, bool)> {
    let suite = v.suite.iter().flat_map(|s| s.tests.iter());
    v.fail_to_pass
        .iter()
        .chain(v.pass_to_pass.iter())
        .chain(suite)
        .map(|(id, o)| (id.as_str(), *o == TestOutcome::Passed))
}

fn counts(verdicts: &[&Verdict], doc2repo: bool) -> RunCounts {
    let finished: Vec<&&Verdict> = verdicts.iter().filter(|v| !v.is_error()).collect();
    let score = |f: fn(f64, f64) -> f64| {
        (doc2repo && !finished.is_empty())
            .then(|| finished.iter().map(|v| v.score).fold(finished[0].score, f))
    };
    let reasons: BTreeSet<String> = verdicts
        .iter()
        .map(|v| v.reason.as_str().to_owned())
        .collect();
    let causes: BTreeSet<String> = verdicts.iter().filter_map(|v| v.cause.clone()).collect();
    let uses: BTreeSet<String> = verdicts
        .iter()
        .filter_map(|v| v.static_evidence.as_ref())
        .flat_map(|e| e.hits.iter().chain(&e.allowed).map(|h| h.kind.clone()))
        .collect();
    RunCounts {
        runs: verdicts.len() as u32,
        resolved: verdicts
            .iter()
            .filter(|v| v.verdict == Outcome::Resolved)
            .count() as u32,
        errors: verdicts.iter().filter(|v| v.is_error()).count() as u32,
        min_score: score(f64::min),
        max_score: score(f64::max),
        reasons: reasons.into_iter().collect(),
        causes: causes.into_iter().collect(),
        uses: uses.into_iter().collect(),
    }
}

/// The calibration of one instance from its gradings.
pub fn calibrate_instance(runs: Runs<'_>) -> InstanceCalibration {
    let doc2repo = runs.family == Family::Doc2Repo;
    let gold = counts(runs.gold, doc2repo);
    let empty = counts(runs.empty, doc2repo);
    let mut tests: BTreeMap<String, TestCounts> = BTreeMap::new();
    for v in runs.gold.iter().filter(|v| !v.is_error()) {
        for (id, passed) in outcomes(v) {
            let c = tests.entry(id.to_owned()).or_default();
            if passed {
                c.gold_passed += 1;
            } else {
                c.gold_failed += 1;
            }
        }
    }
    for v in runs.empty.iter().filter(|v| !v.is_error()) {
        for (id, passed) in outcomes(v) {
            let c = tests.entry(id.to_owned()).or_default();
            if passed {
                c.empty_passed += 1;
            } else {
                c.empty_failed += 1;
            }
        }
    }
    let ids = |f: fn(&TestCounts) -> bool| -> Vec<String> {
        tests
            .iter()
            .filter(|(_, c)| f(c))
            .map(|(id, _)| id.clone())
            .collect()
    };
    let failing_tests = ids(|c| c.gold_passed == 0 && c.gold_failed > 0);
    let flaky_tests = ids(|c| c.gold_passed > 0 && c.gold_failed > 0);
    let passing_without_fix: Vec<String> = ids(|c| c.empty_passed > 0)
        .into_iter()
        .filter(|id| doc2repo || runs.fail_to_pass.contains(id))
        .collect();
    let finished_gold = gold.runs - gold.errors;
    let class = if empty.resolved > 0 {
        CalibrationClass::Trivial
    } else if !runs.has_gold {
        CalibrationClass::NoReference
    } else if finished_gold == 0 {
        CalibrationClass::Error
    } else if gold.resolved == 0 {
        CalibrationClass::Broken
    } else if gold.resolved < finished_gold || !flaky_tests.is_empty() {
        CalibrationClass::Flaky
    } else {
        CalibrationClass::Ok
    };
    InstanceCalibration {
        instance_id: runs.instance_id.to_owned(),
        family: runs.family,
        class,
        gold,
        empty,
        failing_tests,
        flaky_tests,
        passing_without_fix,
        tests,
        warnings: warnings(runs.gold),
    }
}

/// `no canary: …` when a gold grading's plan built no group for the tests that matter
/// (FAIL_TO_PASS; Doc2Repo: the suite), and every canary group that contradicted itself under
/// gold (a mutant that the reference passes is no mutant: the group is bad, not the gold).
fn warnings(gold: &[&Verdict]) -> Vec<String> {
    let mut out: Vec<String> = gold
        .iter()
        .filter_map(|v| v.canary_plan.as_ref().map(|p| (v, p)))
        .find(|(v, p)| {
            if v.family == Family::Doc2Repo {
                p.groups == 0
            } else {
                p.f2p_groups == 0
            }
        })
        .map(|(_, p)| {
            let why = p.none_because.as_deref().unwrap_or("no group built");
            vec![format!("{}: {why}", super::NO_CANARY)]
        })
        .unwrap_or_default();
    for v in gold {
        for c in &v.canaries {
            for p in &c.proof {
                let w = format!("{}: {p}", super::BAD_GROUP);
                if !out.contains(&w) {
                    out.push(w);
                }
            }
        }
    }
    out
}

/// How many instances are in each class.
pub fn summarize(instances: &[InstanceCalibration]) -> ClassCounts {
    let mut c = ClassCounts::default();
    for i in instances {
        *match i.class {
            CalibrationClass::Ok => &mut c.ok,
            CalibrationClass::Broken => &mut c.broken,
            CalibrationClass::Flaky => &mut c.flaky,
            CalibrationClass::Trivial => &mut c.trivial,
            CalibrationClass::Error => &mut c.error,
            CalibrationClass::NoReference => &mut c.no_reference,
        } += 1;
    }
    c
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::grade::{Reason, SuiteResult};

    fn issue(outcome: Outcome, tests: &[(&str, TestOutcome)]) -> Verdict {
        let mut v = Verdict::new("i", Family::CrossRepo);
        let reason = match outcome {
            Outcome::Resolved => Reason::AllTestsPassed,
            Outcome::Unresolved => Reason::TestsFailed,
            Outcome::Error => Reason::SandboxFailed,
        };
        v.set(
            outcome,
            reason,
            f64::from(u8::from(outcome == Outcome::Resolved)),
        );
        for (id, o) in tests {
            v.fail_to_pass.insert((*id).to_owned(), *o);
        }
        v
    }

    use TestOutcome::{Failed as F, NotRun, Passed as P};

    fn class_of(gold: &[&Verdict], empty: &[&Verdict]) -> InstanceCalibration {
        let f2p = vec!["t::a".to_owned(), "t::b".to_owned()];
        calibrate_instance(Runs {
            instance_id: "i",
            family: Family::CrossRepo,
            fail_to_pass: &f2p,
            has_gold: true,
            gold,
            empty,
        })
    }

    #[test]
    fn instances_are_classified_over_a_table() {
        let ok = issue(Outcome::Resolved, &[("t::a", P), ("t::b", P)]);
        let half = issue(Outcome::Unresolved, &[("t::a", P), ("t::b", F)]);
        let none = issue(Outcome::Unresolved, &[("t::a", F), ("t::b", F)]);
        let err = issue(Outcome::Error, &[]);
        let empty_fails = issue(Outcome::Unresolved, &[("t::a", F), ("t::b", NotRun)]);
        let empty_resolves = issue(Outcome::Resolved, &[("t::a", P), ("t::b", P)]);

        let c = class_of(&[&ok, &ok, &ok], &[&empty_fails]);
        assert_eq!(c.class, CalibrationClass::Ok);
        assert_eq!((c.gold.runs, c.gold.resolved, c.empty.resolved), (3, 3, 0));
        assert_eq!(
            c.tests["t::b"],
            TestCounts {
                gold_passed: 3,
                gold_failed: 0,
                empty_passed: 0,
                empty_failed: 1
            }
        );

        // An error grading counts as neither: two of two finished gradings resolved.
        let c = class_of(&[&ok, &err, &ok], &[&empty_fails]);
        assert_eq!((c.class, c.gold.errors), (CalibrationClass::Ok, 1));

        let c = class_of(&[&ok, &half, &ok], &[&empty_fails]);
        assert_eq!(c.class, CalibrationClass::Flaky);
        assert_eq!(c.flaky_tests, ["t::b"]);
        assert!(c.failing_tests.is_empty());

        let c = class_of(&[&half, &none], &[&empty_fails]);
        assert_eq!(c.class, CalibrationClass::Broken);
        assert_eq!(c.failing_tests, ["t::b"]);
        assert_eq!(c.flaky_tests, ["t::a"]);

        let c = class_of(&[&ok], &[&empty_resolves]);
        assert_eq!(c.class, CalibrationClass::Trivial);
        assert_eq!(c.passing_without_fix, ["t::a", "t::b"]);

        let c = class_of(&[&err, &err], &[&empty_fails]);
        assert_eq!(c.class, CalibrationClass::Error);
        assert_eq!(c.gold.reasons, ["sandbox_failed"]);

        let f2p: Vec<String> = Vec::new();
        let empty = [&empty_fails];
        let c = calibrate_instance(Runs {
            instance_id: "i",
            family: Family::CrossRepo,
            fail_to_pass: &f2p,
            has_gold: false,
            gold: &[],
            empty: &empty,
        });
        assert_eq!(c.class, CalibrationClass::NoReference);
        assert_eq!(
            summarize(&[c.clone(), c]),
            ClassCounts {
                no_reference: 2,
                ..ClassCounts::default()
            }
        );
    }

    #[test]
    fn a_gold_grading_whose_plan_finds_no_canary_is_a_warning() {
        use crate::grade::CanaryPlan;
        let mut found = issue(Outcome::Resolved, &[("t::a", P), ("t::b", P)]);
        found.canary_plan = Some(CanaryPlan {
            groups: 1,
            f2p_groups: 1,
            modules: 1,
            ..CanaryPlan::default()
        });
        assert!(class_of(&[&found], &[]).warnings.is_empty());
        let mut none = found.clone();
        none.canary_plan = Some(CanaryPlan {
            modules: 1,
            none_because: Some("no test of the modules read can carry a group".to_owned()),
            ..CanaryPlan::default()
        });
        let c = class_of(&[&found, &none], &[]);
        assert_eq!(
            c.warnings,
            vec!["no canary: no test of the modules read can carry a group".to_owned()]
        );
        assert_eq!(
            c.class,
            CalibrationClass::Ok,
            "a warning does not change the class"
        );
    }

    #[test]
    fn doc2repo_names_the_suite_tests_the_reference_fails() {
        let suite = |score: f64, tests: &[(&str, TestOutcome)]| {
            let mut v = Verdict::new("d", Family::Doc2Repo);
            let resolved = score >= 1.0;
            v.set(
                if resolved {
                    Outcome::Resolved
                } else {
                    Outcome::Unresolved
                },
                if resolved {
                    Reason::AllTestsPassed
                } else {
                    Reason::TestsFailed
                },
                score,
            );
            v.suite = Some(SuiteResult {
                passed: tests.iter().filter(|t| t.1 == P).count() as u64,
                collected: tests.len() as u64,
                expected: tests.len() as u64,
                all_passed: resolved,
                tests: tests.iter().map(|(k, o)| ((*k).to_owned(), *o)).collect(),
            });
            v
        };
        let gold = [
            suite(0.5, &[("s::a", P), ("s::b", F)]),
            suite(0.5, &[("s::a", P), ("s::b", F)]),
        ];
        let empty = [suite(0.5, &[("s::a", P), ("s::b", F)])];
        let gold: Vec<&Verdict> = gold.iter().collect();
        let empty: Vec<&Verdict> = empty.iter().collect();
        let c = calibrate_instance(Runs {
            instance_id: "d",
            family: Family::Doc2Repo,
            fail_to_pass: &[],
            has_gold: true,
            gold: &gold,
            empty: &empty,
        });
        assert_eq!(c.class, CalibrationClass::Broken);
        assert_eq!(c.failing_tests, ["s::b"]);
        assert_eq!(c.passing_without_fix, ["s::a"]);
        assert_eq!((c.gold.min_score, c.gold.max_score), (Some(0.5), Some(0.5)));
    }
}
