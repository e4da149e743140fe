//! The paper's figures from a set of verdicts: per family resolved rate (issue tasks) or mean pass
//! rate with almost-correct and fully-correct counts (Doc2Repo), and AVG, the unweighted mean of the
//! four family scores on the 0–100 scale (BeyondSWE paper, §5.1).

use crate::grade::{Outcome, Reason};
use crate::record::Family;
use crate::report::store::Stored;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One family's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FamilyScore {
    /// The family these figures are for.
    pub family: Family,
    /// Instances in the run's scope (the dataset, or `--ids`): graded ones, errors included,
    /// and those with no submission, which count as not resolved (Doc2Repo: a pass rate of 0),
    /// as SWE-bench and the paper count them.
    pub instances: usize,
    /// Instances with a verdict (the rest of `instances` had no submission).
    #[serde(default)]
    pub submitted: usize,
    /// The score over the submitted instances only, where some had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_of_submitted: Option<f64>,
    /// Instances resolved by at least one attempt.
    pub resolved: usize,
    /// Instances with at least one attempt that ended in an error.
    pub errors: usize,
    /// pass@1 × 100: issue tasks, the resolved share (over attempts, then instances); Doc2Repo,
    /// the mean pass rate.
    pub score: f64,
    /// The most attempts any instance has (1 in a plain run).
    #[serde(default = "one")]
    pub attempts: usize,
    /// With several attempts: pass@k × 100 for k = `attempts` (Doc2Repo: the mean best pass rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_at_k: Option<f64>,
    /// Doc2Repo: instances with a pass rate ≥ 90%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub almost_correct: Option<usize>,
    /// Doc2Repo: instances with every test passing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fully_correct: Option<usize>,
}

fn one() -> usize {
    1
}

/// Per-family scores and AVG.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Scores {
    /// One entry per family with graded instances, in the paper's order (`unknown` last).
    pub families: Vec<FamilyScore>,
    /// Mean of the family scores present (all four in a full run), 0–100.
    pub avg: f64,
    /// Families missing from the run (AVG is then over fewer than four).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_families: Vec<Family>,
}

/// The paper's AVG: the unweighted mean of the family scores.
pub fn avg(scores: &[f64]) -> f64 {
    if scores.is_empty() {
        return 0.0;
    }
    scores.iter().sum::<f64>() / scores.len() as f64
}

/// Rounds to two decimals, as the paper prints.
pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// One instance's attempts: (resolved, error, score) each; none for an instance in scope that
/// had no submission.
struct Attempts {
    family: Family,
    results: Vec<(bool, bool, f64)>,
}

/// Unbiased pass@k for n attempts with c successes: 1 − C(n−c, k) / C(n, k).
pub fn pass_at_k(n: usize, c: usize, k: usize) -> f64 {
    if k == 0 || n == 0 {
        return 0.0;
    }
    if n - c < k {
        return 1.0;
    }
    let mut fail = 1.0;
    for i in (n - c + 1)..=n {
        fail *= 1.0 - k as f64 / i as f64;
    }
    1.0 - fail
}

/// Per-family figures and AVG from stored verdicts (several attempts per instance allowed),
/// over the scope: `unsubmitted` names the instances in scope that have no verdict, each with
/// its family; they count as not resolved (Doc2Repo: 0).
pub fn scores<'a>(
    verdicts: impl IntoIterator<Item = &'a Stored>,
    unsubmitted: &[Unsubmitted],
) -> Scores {
    let mut instances = attempts_by_instance(verdicts);
    for u in unsubmitted {
        instances.entry(u.instance_id.as_str()).or_insert(Attempts {
            family: u.family,
            results: Vec::new(),
        });
    }
    let mut by_family: BTreeMap<Family, Vec<&Attempts>> = BTreeMap::new();
    for a in instances.values() {
        by_family.entry(a.family).or_default().push(a);
    }
    let mut families = Vec::new();
    let mut missing = Vec::new();
    for family in Family::ALL.into_iter().chain([Family::Unknown]) {
        match by_family.get(&family) {
            Some(list) => families.push(family_score(family, list)),
            None if family != Family::Unknown => missing.push(family),
            None => {}
        }
    }
    let known: Vec<f64> = families
        .iter()
        .filter(|f| f.family != Family::Unknown)
        .map(|f| f.score)
        .collect();
    Scores {
        avg: avg(&known),
        families,
        missing_families: missing,
    }
}

/// The verdicts grouped by instance, each instance's attempts in the order given.
fn attempts_by_instance<'a>(
    verdicts: impl IntoIterator<Item = &'a Stored>,
) -> BTreeMap<&'a str, Attempts> {
    let mut instances: BTreeMap<&str, Attempts> = BTreeMap::new();
    for s in verdicts {
        let a = instances
            .entry(s.verdict.instance_id.as_str())
            .or_insert(Attempts {
                family: s.verdict.family,
                results: Vec::new(),
            });
        a.results.push((
            s.verdict.verdict == Outcome::Resolved,
            s.verdict.verdict == Outcome::Error,
            s.verdict.score.clamp(0.0, 1.0),
        ));
    }
    instances
}

/// One family's figures from its instances' attempts.
fn family_score(family: Family, list: &[&Attempts]) -> FamilyScore {
    let n = list.len().max(1) as f64;
    let k = list
        .iter()
        .map(|a| a.results.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let submitted = list.iter().filter(|a| !a.results.is_empty()).count();
    let mut f = FamilyScore {
        family,
        instances: list.len(),
        submitted,
        resolved: list
            .iter()
            .filter(|a| a.results.iter().any(|r| r.0))
            .count(),
        errors: list
            .iter()
            .filter(|a| a.results.iter().any(|r| r.1))
            .count(),
        attempts: k,
        ..FamilyScore::default()
    };
    // pass@1: the mean over an instance's attempts, then over instances.
    let per_instance: Vec<f64> = list
        .iter()
        .map(|a| {
            // No submission: not resolved, a pass rate of 0.
            let len = a.results.len().max(1) as f64;
            if family == Family::Doc2Repo {
                // A fold from +0: the sum of no f64 is -0, printed "-0.00".
                a.results.iter().fold(0.0, |acc, r| acc + r.2) / len
            } else {
                a.results.iter().filter(|r| r.0).count() as f64 / len
            }
        })
        .collect();
    f.score = if family == Family::Unknown {
        0.0
    } else {
        100.0 * per_instance.iter().sum::<f64>() / n
    };
    if submitted < list.len() && family != Family::Unknown {
        f.score_of_submitted = Some(if submitted == 0 {
            0.0
        } else {
            100.0 * per_instance.iter().sum::<f64>() / submitted as f64
        });
    }
    if family == Family::Doc2Repo {
        f.almost_correct = Some(per_instance.iter().filter(|r| **r >= 0.9).count());
        f.fully_correct = Some(per_instance.iter().filter(|r| **r >= 1.0).count());
    }
    if k > 1 {
        f.pass_at_k = Some(100.0 * best_of_k(family, list, k) / n);
    }
    f
}

/// Σ over instances of pass@k (Doc2Repo: of the best pass rate among the attempts).
fn best_of_k(family: Family, list: &[&Attempts], k: usize) -> f64 {
    list.iter()
        .map(|a| {
            if family == Family::Doc2Repo {
                a.results.iter().map(|r| r.2).fold(0.0, f64::max)
            } else {
                pass_at_k(
                    a.results.len(),
                    a.results.iter().filter(|r| r.0).count(),
                    k.min(a.results.len()),
                )
            }
        })
        .sum()
}

/// An instance in a run's scope that has no verdict: no submission named it (or its grading
/// has not happened yet). It counts in its family's figures as not resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Unsubmitted {
    /// The instance.
    pub instance_id: String,
    /// Its task family.
    pub family: Family,
}

/// The SWE-bench harness's summary fields, for tools that read them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SwebenchSummary {
    /// Instances the run covers, graded or not.
    pub total_instances: usize,
    /// Attempts with a verdict.
    pub submitted_instances: usize,
    /// Attempts graded to resolved or unresolved (not empty, not errors).
    pub completed_instances: usize,
    /// Attempts resolved.
    pub resolved_instances: usize,
    /// Attempts graded and not resolved.
    pub unresolved_instances: usize,
    /// Attempts whose patch was empty.
    pub empty_patch_instances: usize,
    /// Attempts whose grading ended in an error.
    pub error_instances: usize,
    /// Labels (`id`, or `id@N` for later attempts) of the completed attempts.
    pub completed_ids: Vec<String>,
    /// Labels of the resolved attempts.
    pub resolved_ids: Vec<String>,
    /// Labels of the unresolved attempts.
    pub unresolved_ids: Vec<String>,
    /// Labels of the empty-patch attempts.
    pub empty_patch_ids: Vec<String>,
    /// Labels of the attempts that ended in an error.
    pub error_ids: Vec<String>,
    /// Labels of every attempt with a verdict (the harness's `submitted_ids`).
    #[serde(default)]
    pub submitted_ids: Vec<String>,
    /// Instances in the run's scope with no verdict at all (the harness's `incomplete_ids`).
    #[serde(default)]
    pub incomplete_ids: Vec<String>,
    /// The SWE-bench report's schema version (2).
    pub schema_version: u32,
}

/// The SWE-bench summary of stored verdicts; `total_instances` is the run's instance count.
pub fn swebench_summary<'a>(
    verdicts: impl IntoIterator<Item = &'a Stored>,
    total_instances: usize,
) -> SwebenchSummary {
    let mut s = SwebenchSummary {
        total_instances,
        schema_version: 2,
        ..SwebenchSummary::default()
    };
    for v in verdicts {
        let id = v.label();
        s.submitted_instances += 1;
        s.submitted_ids.push(id.clone());
        match (v.verdict.verdict, v.verdict.reason) {
            (Outcome::Error, _) => s.error_ids.push(id),
            (_, Reason::EmptyPatch) => s.empty_patch_ids.push(id),
            (Outcome::Resolved, _) => {
                s.completed_ids.push(id.clone());
                s.resolved_ids.push(id);
            }
            (Outcome::Unresolved, _) => {
                s.completed_ids.push(id.clone());
                s.unresolved_ids.push(id);
            }
        }
    }
    s.completed_instances = s.completed_ids.len();
    s.resolved_instances = s.resolved_ids.len();
    s.unresolved_instances = s.unresolved_ids.len();
    s.empty_patch_instances = s.empty_patch_ids.len();
    s.error_instances = s.error_ids.len();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's Table 2 row for Codex with GPT-5.4 (xhigh): CrossRepo 55.17, DomainFix 61.11,
    /// DepMigrate 48.59, Doc2Repo 61.74 → AVG 56.65.
    #[test]
    fn pass_at_k_matches_the_definition() {
        assert_eq!(pass_at_k(2, 1, 1), 0.5);
        assert_eq!(pass_at_k(2, 1, 2), 1.0);
        assert_eq!(pass_at_k(3, 0, 2), 0.0);
        assert!((pass_at_k(5, 2, 2) - 0.7).abs() < 1e-12);
    }

    fn stored(id: &str, family: Family, verdict: Outcome, score: f64) -> Stored {
        let mut v = crate::grade::Verdict::new(id, family);
        v.set(verdict, Reason::AllTestsPassed, score);
        Stored {
            grader_version: String::new(),
            key: id.to_owned(),
            attempt: 1,
            model_name_or_path: String::new(),
            claimed_reward: None,
            verdict: v,
        }
    }

    /// One gold prediction against a dataset of five CrossRepo and two Doc2Repo instances
    /// scores over the dataset, as SWE-bench and the paper count: 1 of 5 resolved (20.00), the
    /// other Doc2Repo instance 0, and the score over the submitted beside it.
    #[test]
    fn instances_with_no_submission_count_as_not_resolved() {
        let graded = [
            stored("a", Family::CrossRepo, Outcome::Resolved, 1.0),
            stored("d1", Family::Doc2Repo, Outcome::Unresolved, 0.6),
        ];
        let unsubmitted: Vec<Unsubmitted> = ["b", "c", "d", "e"]
            .iter()
            .map(|id| Unsubmitted {
                instance_id: (*id).to_owned(),
                family: Family::CrossRepo,
            })
            .chain(std::iter::once(Unsubmitted {
                instance_id: "d2".to_owned(),
                family: Family::Doc2Repo,
            }))
            .collect();
        let s = scores(&graded, &unsubmitted);
        let cross = &s.families[0];
        assert_eq!(
            (cross.instances, cross.submitted, cross.resolved),
            (5, 1, 1)
        );
        assert_eq!(round2(cross.score), 20.0);
        assert_eq!(cross.score_of_submitted, Some(100.0));
        let doc = s
            .families
            .iter()
            .find(|f| f.family == Family::Doc2Repo)
            .unwrap();
        assert_eq!((doc.instances, doc.submitted), (2, 1));
        assert_eq!(round2(doc.score), 30.0);
        // No submission at all: +0, never "-0.00".
        let none = scores(&[], &unsubmitted[4..]);
        assert!(
            none.families[0].score.is_sign_positive(),
            "{:?}",
            none.families
        );
        assert_eq!(doc.score_of_submitted.map(round2), Some(60.0));
        assert_eq!(round2(s.avg), 25.0);
        // With every instance submitted there is nothing to put beside the score.
        let s = scores(&graded, &[]);
        assert_eq!(s.families[0].score_of_submitted, None);
        assert_eq!(s.families[0].score, 100.0);
    }

    #[test]
    fn avg_reproduces_the_papers_codex_row() {
        assert_eq!(round2(avg(&[55.17, 61.11, 48.59, 61.74])), 56.65);
    }
}
