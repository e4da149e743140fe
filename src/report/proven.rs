//! What the canary secret proves of a Doc2Repo score.
//!
//! A Doc2Repo suite's groups stand on a uniform draw among the tests that could carry one, and a
//! grouped test's real variant passes only where the code passes it (or a forger guessing among
//! the variants picks it, one chance in the group's size). A payload that recognises the groups
//! can still force part of the other tests, and a draw of a few dozen cannot tell a small shift
//! from chance: the score can rise by what it forces. What the secret does prove is a floor: the
//! fewest passing tests among those that could carry a group for which the grouped ones would
//! have done as well as they did with a chance of at least 1 in 100. The report prints it beside
//! the pass rate the run claims for the same tests, so a reader sees what rests on the secret.

use crate::grade::CanaryPlan;
use serde::{Deserialize, Serialize};

/// Below this chance a floor is excluded: a true pass count whose grouped tests would have done
/// as well as they did less often than 1 in 100 is ruled out.
pub const FLOOR_CHANCE: f64 = 0.01;

/// A Doc2Repo grading's tests that could carry a group: the rate the run claims for them, and the
/// lowest rate the grouped ones prove.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProvenFloor {
    /// Tests that could carry a group (grouped and the rest).
    pub tests: u32,
    /// The share of them that passed in the grading (confirmed alone where it was confirmed).
    pub claimed: f64,
    /// The lowest share for which the grouped tests would have passed as often as they did with
    /// a chance of at least 1 in 100, counting a blind guess in each failing group.
    pub floor: f64,
}

/// The run's Doc2Repo attempts with a floor: the mean share claimed and the mean floor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MeanProven {
    /// Attempts counted.
    pub attempts: u32,
    /// Mean share of the tests that could carry a group that passed.
    pub claimed: f64,
    /// Mean floor.
    pub floor: f64,
}

impl MeanProven {
    /// The mean over `floors`, or None when there is none.
    pub fn of(floors: impl Iterator<Item = ProvenFloor>) -> Option<MeanProven> {
        let (mut n, mut claimed, mut floor) = (0u32, 0.0, 0.0);
        for f in floors {
            n += 1;
            claimed += f.claimed;
            floor += f.floor;
        }
        (n > 0).then(|| MeanProven {
            attempts: n,
            claimed: claimed / f64::from(n),
            floor: floor / f64::from(n),
        })
    }
}

/// The floor of a Doc2Repo grading's plan, where the plan compared its grouped tests with the
/// rest (absent otherwise: an issue instance, no group, nothing to compare).
pub fn proven_floor(plan: &CanaryPlan) -> Option<ProvenFloor> {
    let split = plan.sample_versus_rest.as_ref()?;
    let grouped = split
        .confirmed
        .as_ref()
        .map_or(split.grouped, |c| c.grouped);
    let [sample_passed, sample] = grouped;
    let [rest_passed, rest] = split.rest;
    let tests = sample.checked_add(rest).filter(|&t| t > 0)?;
    let guess = plan
        .sizes
        .iter()
        .filter(|&&s| s > 0)
        .min()
        .map_or(0.0, |&s| 1.0 / f64::from(s));
    let ln_fact = ln_factorials(tests);
    // The chance grows with the passing count, so the floor is where it first reaches 1 in 100.
    let counts: Vec<u32> = (0..=tests).collect();
    let floor = counts.partition_point(|&t| {
        at_least_chance(&ln_fact, tests, t, sample, sample_passed, guess) < FLOOR_CHANCE
    });
    let floor = u32::try_from(floor).unwrap_or(tests).min(tests);
    Some(ProvenFloor {
        tests,
        claimed: f64::from(sample_passed.min(sample) + rest_passed.min(rest)) / f64::from(tests),
        floor: f64::from(floor) / f64::from(tests),
    })
}

/// The chance that at least `seen` of `drawn` tests pass, drawn uniformly among `total` of which
/// `passing` pass, when each failing one drawn still passes with chance `guess`.
/// `ln_fact` holds ln(i!) for i up to at least `total`.
fn at_least_chance(
    ln_fact: &[f64],
    total: u32,
    passing: u32,
    drawn: u32,
    seen: u32,
    guess: f64,
) -> f64 {
    if seen == 0 {
        return 1.0;
    }
    if drawn > total {
        return 0.0;
    }
    let ln_choose = |n: u32, r: u32| -> Option<f64> {
        (r <= n).then(|| ln_fact[n as usize] - ln_fact[r as usize] - ln_fact[(n - r) as usize])
    };
    let Some(whole) = ln_choose(total, drawn) else {
        return 0.0;
    };
    let mut sum = 0.0;
    for x in 0..=drawn.min(passing) {
        let (Some(a), Some(b)) = (ln_choose(passing, x), ln_choose(total - passing, drawn - x))
        else {
            continue;
        };
        let hyper = (a + b - whole).exp();
        let need = seen.saturating_sub(x);
        sum += hyper * binomial_at_least(drawn - x, need, guess, ln_fact);
    }
    sum.min(1.0)
}

/// P(Bin(n, p) >= k), with `ln_fact` holding ln(i!) for i up to at least n.
fn binomial_at_least(n: u32, k: u32, p: f64, ln_fact: &[f64]) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    (k..=n)
        .map(|i| {
            let ln = ln_fact[n as usize] - ln_fact[i as usize] - ln_fact[(n - i) as usize]
                + f64::from(i) * p.ln()
                + f64::from(n - i) * (1.0 - p).ln();
            ln.exp()
        })
        .sum()
}

fn ln_factorials(n: u32) -> Vec<f64> {
    let mut out = Vec::with_capacity(n as usize + 1);
    let mut acc = 0.0;
    out.push(acc);
    for i in 1..=n {
        acc += f64::from(i).ln();
        out.push(acc);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grade::{SampleVersusRest, SplitConfirmed};

    fn plan(grouped: [u32; 2], rest: [u32; 2], sizes: Vec<u32>) -> CanaryPlan {
        CanaryPlan {
            planted: true,
            sizes,
            sample_versus_rest: Some(SampleVersusRest {
                grouped,
                rest,
                chance: 1.0,
                confirmed: None,
            }),
            ..CanaryPlan::default()
        }
    }

    /// A run of one Doc2Repo attempt whose ten grouped tests all passed prints its floor beside
    /// the claim in the table and the HTML, and carries it in the JSON.
    #[test]
    fn the_report_prints_the_floor_beside_the_claim() {
        use crate::grade::{Outcome, Reason, Verdict};
        use crate::record::Family;
        use crate::report::{Format, Scope, Stored, build_report, render};
        let mut v = Verdict::new("doc", Family::Doc2Repo);
        v.set(Outcome::Unresolved, Reason::TestsFailed, 0.9);
        v.canary_plan = Some(plan([10, 10], [350, 390], vec![4; 10]));
        let stored = [Stored {
            grader_version: String::new(),
            key: "doc".into(),
            attempt: 1,
            model_name_or_path: String::new(),
            claimed_reward: None,
            verdict: v,
        }];
        let families = std::collections::BTreeMap::new();
        let ids = ["doc".to_owned()];
        let scope = Scope {
            total: 1,
            ids: &ids,
            families: &families,
        };
        let report = build_report(None, &stored, &scope, (None, None, None), None);
        let mean = report.doc2repo_proven.expect("a floor");
        assert_eq!(mean.attempts, 1);
        assert!((mean.claimed - 0.9).abs() < 1e-9, "{mean:?}");
        assert!(mean.floor > 0.5 && mean.floor < mean.claimed, "{mean:?}");
        let table = render(&report, Format::Table);
        assert!(table.contains("doc2repo proven: of the tests that could carry a canary group, 90.0% passed; the grouped ones prove at least"), "{table}");
        let html = render(&report, Format::Html);
        assert!(html.contains("id=\"doc2repo-proven\""), "{html}");
        assert!(html.contains("the grouped ones prove at least"), "{html}");
        let json: serde_json::Value =
            serde_json::from_str(&render(&report, Format::Json)).expect("json");
        assert_eq!(json["instances"][0]["proven"]["tests"], 400);
        assert_eq!(json["doc2repo_proven"]["attempts"], 1);
    }

    #[test]
    fn no_split_no_floor() {
        assert_eq!(proven_floor(&CanaryPlan::default()), None);
        assert_eq!(proven_floor(&plan([0, 0], [0, 0], vec![4])), None);
    }

    #[test]
    fn every_grouped_failure_proves_nothing() {
        let f = proven_floor(&plan([0, 10], [390, 390], vec![4; 10])).unwrap();
        assert_eq!(f.floor, 0.0);
        assert!((f.claimed - 0.975).abs() < 1e-9, "{f:?}");
    }

    #[test]
    fn a_full_sample_proves_a_floor_below_the_claim() {
        // Ten of ten grouped tests passing, each group of four (a guess passes one in four): a
        // suite where fewer than 205 of 400 pass shows that less often than 1 in 100.
        let f = proven_floor(&plan([10, 10], [390, 390], vec![4; 10])).unwrap();
        assert_eq!(f.tests, 400);
        assert_eq!(f.claimed, 1.0);
        assert_eq!(f.floor, 205.0 / 400.0, "{f:?}");
        // The floor is the smallest count not ruled out: one fewer is ruled out.
        let t = (f.floor * 400.0).round() as u32;
        assert!(at_least_chance(&ln_factorials(400), 400, t, 10, 10, 0.25) >= FLOOR_CHANCE);
        assert!(at_least_chance(&ln_factorials(400), 400, t - 1, 10, 10, 0.25) < FLOOR_CHANCE);
    }

    #[test]
    fn guessing_lowers_the_floor() {
        let blind = proven_floor(&plan([10, 10], [390, 390], vec![2; 10])).unwrap();
        let sharp = proven_floor(&plan([10, 10], [390, 390], vec![8; 10])).unwrap();
        assert!(blind.floor < sharp.floor, "{blind:?} {sharp:?}");
    }

    #[test]
    fn the_confirmed_split_is_the_one_counted() {
        let mut p = plan([2, 10], [390, 390], vec![4; 10]);
        let before = proven_floor(&p).unwrap();
        p.sample_versus_rest.as_mut().unwrap().confirmed = Some(SplitConfirmed {
            grouped: [10, 10],
            chance: 1.0,
            runs: 8,
            stalled: false,
        });
        let after = proven_floor(&p).unwrap();
        assert!(after.floor > before.floor, "{before:?} {after:?}");
        assert_eq!(after.claimed, 1.0);
    }

    #[test]
    fn the_chance_matches_the_hypergeometric_tail_without_guessing() {
        // 5 of 10 pass, draw 3, all 3 passing: C(5,3)/C(10,3) = 10/120.
        let p = at_least_chance(&ln_factorials(10), 10, 5, 3, 3, 0.0);
        assert!((p - 10.0 / 120.0).abs() < 1e-12, "{p}");
        // With a guess of 1/2 per failing draw: sum over x of hyper(x) * P(Bin(3-x, .5) >= 3-x).
        let hyper = |x: u32| {
            let c = |n: u32, r: u32| -> f64 {
                (0..r).fold(1.0, |acc, i| acc * f64::from(n - i) / f64::from(i + 1))
            };
            c(5, x) * c(5, 3 - x) / c(10, 3)
        };
        let want: f64 = (0..=3).map(|x| hyper(x) * 0.5f64.powi(3 - x as i32)).sum();
        let got = at_least_chance(&ln_factorials(10), 10, 5, 3, 3, 0.5);
        assert!((got - want).abs() < 1e-12, "{got} {want}");
    }
}
