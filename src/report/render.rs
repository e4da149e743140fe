//! Renderings of a report: an aligned table, Markdown, or JSON.

use super::Report;
use super::metrics::round2;
use crate::record::Family;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Markdown,
}

fn rows(report: &Report) -> Vec<[String; 6]> {
    let mut rows = Vec::new();
    for f in &report.families {
        let (score, extra) = if f.family == Family::Doc2Repo {
            (
                format!("{:.2}", round2(f.score)),
                format!(
                    "pass rate; ≥90%: {}, 100%: {}",
                    f.almost_correct.unwrap_or(0),
                    f.fully_correct.unwrap_or(0)
                ),
            )
        } else {
            (format!("{:.2}", round2(f.score)), "% resolved".into())
        };
        let extra = match f.pass_at_k {
            Some(k) => format!(
                "{extra}; pass@1 over {} attempts, pass@{}: {:.2}",
                f.attempts,
                f.attempts,
                round2(k)
            ),
            None => extra,
        };
        rows.push([
            f.family.as_str().into(),
            f.instances.to_string(),
            f.resolved.to_string(),
            f.errors.to_string(),
            score,
            extra,
        ]);
    }
    rows.push([
        "AVG".into(),
        String::new(),
        String::new(),
        String::new(),
        format!("{:.2}", round2(report.avg)),
        "mean of the family scores".into(),
    ]);
    rows
}

const HEADER: [&str; 6] = ["FAMILY", "INSTANCES", "RESOLVED", "ERRORS", "SCORE", ""];

pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(report).unwrap_or_default() + "\n",
        Format::Markdown => {
            let mut s = format!(
                "### Run `{}`\n\n| family | instances | resolved | errors | score | |\n|---|---:|---:|---:|---:|---|\n",
                report.run_id
            );
            for r in rows(report) {
                s.push_str(&format!("| {} |\n", r.join(" | ")));
            }
            if !report.missing_families.is_empty() {
                let names: Vec<&str> = report.missing_families.iter().map(|f| f.as_str()).collect();
                s.push_str(&format!(
                    "\nAVG over the families present (missing: {}).\n",
                    names.join(", ")
                ));
            }
            s
        }
        Format::Table => {
            let body = rows(report);
            let mut widths = [0usize; 6];
            for r in std::iter::once(HEADER.map(String::from)).chain(body.iter().cloned()) {
                for (w, c) in widths.iter_mut().zip(r.iter()) {
                    *w = (*w).max(c.chars().count());
                }
            }
            let mut s = String::new();
            for r in std::iter::once(HEADER.map(String::from)).chain(body) {
                let line: Vec<String> = r
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        if i == 0 || i == 5 {
                            format!("{c:<w$}", w = widths[i])
                        } else {
                            format!("{c:>w$}", w = widths[i])
                        }
                    })
                    .collect();
                s.push_str(line.join("  ").trim_end());
                s.push('\n');
            }
            let differ: Vec<String> = report
                .instances
                .iter()
                .filter(|i| i.claimed_reward.is_some_and(|c| (c - i.score).abs() > 1e-6))
                .map(|i| {
                    format!(
                        "{} (claimed {}, measured {:.4})",
                        super::attempt_label(&i.instance_id, i.attempt),
                        i.claimed_reward.unwrap_or_default(),
                        i.score
                    )
                })
                .collect();
            if !differ.is_empty() {
                s.push_str(&format!(
                    "the recorded reward differs from ours for {}: {}\n",
                    differ.len(),
                    differ.join(", ")
                ));
            }
            let errors = &report.swebench.error_ids;
            if !errors.is_empty() {
                s.push_str(&format!(
                    "errors (infrastructure, not the agent's): {}\n",
                    errors.join(", ")
                ));
            }
            if !report.missing_families.is_empty() {
                let names: Vec<&str> = report.missing_families.iter().map(|f| f.as_str()).collect();
                s.push_str(&format!(
                    "AVG is over the families present (missing: {})\n",
                    names.join(", ")
                ));
            }
            s
        }
    }
}
