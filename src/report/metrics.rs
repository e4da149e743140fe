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
    pub family: Family,
    /// Graded instances (errors included: they count as not resolved).
    pub instances: usize,
    pub resolved: usize,
    pub errors: usize,
    /// Issue tasks: resolved / instances × 100. Doc2Repo: mean pass rate × 100.
    pub score: f64,
    /// Doc2Repo: instances with a pass rate ≥ 90%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub almost_correct: Option<usize>,
    /// Doc2Repo: instances with every test passing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fully_correct: Option<usize>,
}

/// Per-family scores and AVG.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Scores {
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

pub fn scores<'a>(verdicts: impl IntoIterator<Item = &'a Stored>) -> Scores {
    let mut by_family: BTreeMap<Family, Vec<&Stored>> = BTreeMap::new();
    for s in verdicts {
        by_family.entry(s.verdict.family).or_default().push(s);
    }
    let mut families = Vec::new();
    let mut missing = Vec::new();
    for family in Family::ALL {
        let Some(list) = by_family.get(&family) else {
            missing.push(family);
            continue;
        };
        let instances = list.len();
        let resolved = list
            .iter()
            .filter(|s| s.verdict.verdict == Outcome::Resolved)
            .count();
        let errors = list
            .iter()
            .filter(|s| s.verdict.verdict == Outcome::Error)
            .count();
        let mut f = FamilyScore {
            family,
            instances,
            resolved,
            errors,
            ..FamilyScore::default()
        };
        if family == Family::Doc2Repo {
            let rates: Vec<f64> = list
                .iter()
                .map(|s| s.verdict.score.clamp(0.0, 1.0))
                .collect();
            f.score = 100.0 * rates.iter().sum::<f64>() / instances.max(1) as f64;
            f.almost_correct = Some(rates.iter().filter(|r| **r >= 0.9).count());
            f.fully_correct = Some(rates.iter().filter(|r| **r >= 1.0).count());
        } else {
            f.score = 100.0 * resolved as f64 / instances.max(1) as f64;
        }
        families.push(f);
    }
    if let Some(unknown) = by_family.get(&Family::Unknown) {
        families.push(FamilyScore {
            family: Family::Unknown,
            instances: unknown.len(),
            resolved: unknown
                .iter()
                .filter(|s| s.verdict.verdict == Outcome::Resolved)
                .count(),
            errors: unknown
                .iter()
                .filter(|s| s.verdict.verdict == Outcome::Error)
                .count(),
            score: 0.0,
            ..FamilyScore::default()
        });
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

/// The SWE-bench harness's summary fields, for tools that read them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SwebenchSummary {
    pub total_instances: usize,
    pub submitted_instances: usize,
    pub completed_instances: usize,
    pub resolved_instances: usize,
    pub unresolved_instances: usize,
    pub empty_patch_instances: usize,
    pub error_instances: usize,
    pub completed_ids: Vec<String>,
    pub resolved_ids: Vec<String>,
    pub unresolved_ids: Vec<String>,
    pub empty_patch_ids: Vec<String>,
    pub error_ids: Vec<String>,
    pub schema_version: u32,
}

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
        let id = v.verdict.instance_id.clone();
        s.submitted_instances += 1;
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
    fn avg_reproduces_the_papers_codex_row() {
        assert_eq!(round2(avg(&[55.17, 61.11, 48.59, 61.74])), 56.65);
    }
}
