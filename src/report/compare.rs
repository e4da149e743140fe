//! Two runs side by side: per-family scores with Δ, and for instances graded in both the paired
//! counts improved / tied / regressed (as in the paper's Figure 4), with the instances that flipped.

use super::Report;
use super::metrics::round2;
use crate::record::Family;
use serde::Serialize;
use std::collections::BTreeMap;

/// One family's score in both runs (0–100); `None` where a run has no instance of it.
#[derive(Debug, Clone, Serialize)]
pub struct FamilyDelta {
    /// The family.
    pub family: Family,
    /// Its score in the first run.
    pub a: Option<f64>,
    /// Its score in the second run.
    pub b: Option<f64>,
    /// `b - a`, when both exist.
    pub delta: Option<f64>,
}

/// Run `b` against run `a`.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The first run's id.
    pub a: String,
    /// The second run's id.
    pub b: String,
    /// Each of the four families, in the paper's order.
    pub families: Vec<FamilyDelta>,
    /// AVG in `a`, in `b`, and `b - a`.
    pub avg: (f64, f64, f64),
    /// Attempts graded in both runs (same instance and attempt number).
    pub paired: usize,
    /// Paired attempts that score higher in `b` (labels `id` or `id@N`).
    pub improved: Vec<String>,
    /// Paired attempts that score the same.
    pub tied: usize,
    /// Paired attempts that score lower in `b`.
    pub regressed: Vec<String>,
}

/// Compares two reports: family scores and AVG, and the paired attempts' scores.
pub fn compare(a: &Report, b: &Report) -> Comparison {
    let score = |r: &Report, f: Family| r.families.iter().find(|x| x.family == f).map(|x| x.score);
    let families = Family::ALL
        .into_iter()
        .map(|f| {
            let (x, y) = (score(a, f), score(b, f));
            FamilyDelta {
                family: f,
                a: x,
                b: y,
                delta: x.zip(y).map(|(x, y)| y - x),
            }
        })
        .collect();
    let a_scores: BTreeMap<(&str, u32), f64> = a
        .instances
        .iter()
        .map(|i| ((i.instance_id.as_str(), i.attempt), i.score))
        .collect();
    let (mut improved, mut regressed, mut tied, mut paired) = (Vec::new(), Vec::new(), 0, 0);
    for inst in &b.instances {
        if let Some(sa) = a_scores.get(&(inst.instance_id.as_str(), inst.attempt)) {
            paired += 1;
            if (inst.score - sa).abs() < 1e-9 {
                tied += 1;
            } else if inst.score > *sa {
                improved.push(super::attempt_label(&inst.instance_id, inst.attempt));
            } else {
                regressed.push(super::attempt_label(&inst.instance_id, inst.attempt));
            }
        }
    }
    Comparison {
        a: a.run.run_id.clone(),
        b: b.run.run_id.clone(),
        families,
        avg: (a.avg, b.avg, b.avg - a.avg),
        paired,
        improved,
        tied,
        regressed,
    }
}

/// A comparison as an aligned text table, followed by the paired counts and the flipped ids.
pub fn render_comparison(c: &Comparison) -> String {
    let fmt = |x: Option<f64>| {
        x.map(|v| format!("{:.2}", round2(v)))
            .unwrap_or_else(|| "-".into())
    };
    let mut s = format!("{:<11}  {:>9}  {:>9}  {:>8}\n", "FAMILY", c.a, c.b, "Δ");
    for f in &c.families {
        let delta = f
            .delta
            .map(|d| format!("{:+.2}", round2(d)))
            .unwrap_or_else(|| "-".into());
        s.push_str(&format!(
            "{:<11}  {:>9}  {:>9}  {:>8}\n",
            f.family.as_str(),
            fmt(f.a),
            fmt(f.b),
            delta
        ));
    }
    s.push_str(&format!(
        "{:<11}  {:>9.2}  {:>9.2}  {:>+8.2}\n",
        "AVG",
        round2(c.avg.0),
        round2(c.avg.1),
        round2(c.avg.2)
    ));
    s.push_str(&format!(
        "\npaired instances: {}  improved: {}  tied: {}  regressed: {}\n",
        c.paired,
        c.improved.len(),
        c.tied,
        c.regressed.len()
    ));
    if !c.improved.is_empty() {
        s.push_str(&format!("improved: {}\n", c.improved.join(", ")));
    }
    if !c.regressed.is_empty() {
        s.push_str(&format!("regressed: {}\n", c.regressed.join(", ")));
    }
    s
}
