//! Renderings of a report: an aligned table, Markdown, JSON, a leaderboard row, HTML (`html.rs`)
//! or JUnit XML (`junit.rs`).

use super::metrics::round2;
use super::{InstanceReport, Report};
use crate::record::Family;

/// How a report is rendered: an aligned table, JSON, Markdown, or one self-contained HTML page
/// (the run's `report.html`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Family figures and AVG as an aligned text table, with notes.
    Table,
    /// `report.json` itself.
    Json,
    /// Family figures and AVG as a Markdown table, with notes.
    Markdown,
    /// One self-contained HTML page.
    Html,
    /// One leaderboard row as Markdown: model, run, date, the four families, AVG and the
    /// resolved counts.
    Leaderboard,
    /// JUnit XML for CI: a test suite per family, a test case per graded attempt.
    Junit,
}

impl Format {
    /// Every format, in the order `--format` lists them.
    pub const ALL: [Format; 6] = [
        Format::Table,
        Format::Json,
        Format::Markdown,
        Format::Html,
        Format::Leaderboard,
        Format::Junit,
    ];

    /// The name `--format` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::Leaderboard => "leaderboard",
            Format::Junit => "junit",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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
        // Over the scope; where some instances had no submission, the score over those that
        // had one beside it.
        let extra = match f.score_of_submitted {
            Some(s) => format!(
                "{extra}; {} of {} submitted, {:.2} of submitted",
                f.submitted,
                f.instances,
                round2(s)
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

const HEADER: [&str; 6] = [
    "FAMILY",
    "INSTANCES",
    "RESOLVED",
    "ERRORS",
    "SCORE",
    "WHAT THE SCORE IS",
];

/// The report in `format`; HTML without error messages (see [`super::render_html`]).
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Html => super::render_html(report, &std::collections::BTreeMap::new()),
        Format::Json => serde_json::to_string_pretty(report).unwrap_or_default() + "\n",
        Format::Markdown => markdown(report),
        Format::Leaderboard => leaderboard(report),
        Format::Junit => super::junit::render_junit(report),
        Format::Table => {
            let mut s = aligned_table(&rows(report));
            s.push_str(&table_notes(report));
            s.push_str(&calibration_lines(report));
            s
        }
    }
}

/// The leaderboard's header and this run's row: the paper's four families in its order, then
/// AVG, then the resolved counts (issue families) and the fully passing repositories (Doc2Repo).
fn leaderboard(report: &Report) -> String {
    let order = [
        Family::CrossRepo,
        Family::DomainFix,
        Family::DepMigrate,
        Family::Doc2Repo,
    ];
    let mut models: Vec<&str> = report
        .instances
        .iter()
        .map(|i| i.model_name_or_path.as_str())
        .filter(|m| !m.is_empty())
        .collect();
    models.sort_unstable();
    models.dedup();
    let model = if models.is_empty() {
        "unknown".to_owned()
    } else {
        models.join(", ")
    };
    let date = report
        .finished_at
        .as_deref()
        .map(|d| d.chars().take(10).collect::<String>())
        .unwrap_or_default();
    let mut row = vec![
        crate::text::one_line(&model).into_owned(),
        crate::text::one_line(&report.run.run_id).into_owned(),
        date,
    ];
    let mut counts = Vec::new();
    for fam in order {
        match report.families.iter().find(|f| f.family == fam) {
            Some(f) => {
                row.push(format!("{:.2}", round2(f.score)));
                counts.push(if fam == Family::Doc2Repo {
                    format!(
                        "{} {}/{} fully",
                        fam.as_str(),
                        f.fully_correct.unwrap_or(0),
                        f.instances
                    )
                } else {
                    format!("{} {}/{}", fam.as_str(), f.resolved, f.instances)
                });
            }
            None => row.push("-".into()),
        }
    }
    row.push(format!("{:.2}", round2(report.avg)));
    if report.flagged_for_review > 0 {
        counts.push(format!("{} flagged for review", report.flagged_for_review));
    }
    row.push(counts.join(", "));
    format!(
        "| model | run | date | CrossRepo | DomainFix | DepMigrate | Doc2Repo | AVG | resolved |\n\
         |---|---|---|---:|---:|---:|---:|---:|---|\n| {} |\n",
        row.iter()
            .map(|c| c.replace('|', "\\|"))
            .collect::<Vec<_>>()
            .join(" | ")
    )
}

fn markdown(report: &Report) -> String {
    let mut s = format!(
        "### Run `{}`\n\n| family | instances | resolved | errors | score | what the score is |\n|---|---:|---:|---:|---:|---|\n",
        report.run.run_id
    );
    for r in rows(report) {
        s.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    if !report.missing_families.is_empty() {
        s.push_str(&format!(
            "\nAVG over the families present (missing: {}).\n",
            missing_names(report)
        ));
    }
    let cal = calibration_lines(report);
    if !cal.is_empty() {
        s.push('\n');
        s.push_str(&cal);
    }
    s
}

/// The families missing from the run, comma-separated.
fn missing_names(report: &Report) -> String {
    let names: Vec<&str> = report.missing_families.iter().map(|f| f.as_str()).collect();
    names.join(", ")
}

/// `HEADER` and `body` in columns as wide as their widest cell: the first and last left-aligned,
/// the figures between right-aligned.
fn aligned_table(body: &[[String; 6]]) -> String {
    let header = HEADER.map(String::from);
    let mut widths = [0usize; 6];
    for r in std::iter::once(&header).chain(body) {
        for (w, c) in widths.iter_mut().zip(r.iter()) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut s = String::new();
    for r in std::iter::once(&header).chain(body) {
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
    s
}

/// The lines under the table: claimed rewards that differ from ours, errors, missing families.
fn table_notes(report: &Report) -> String {
    let mut s = String::new();
    let differ: Vec<String> = report
        .instances
        .iter()
        .filter(|i| i.claimed_reward.is_some_and(|c| (c - i.score).abs() > 1e-6))
        .map(|i| {
            format!(
                "{} (claimed {}, measured {:.4})",
                crate::text::one_line(&super::attempt_label(&i.instance_id, i.attempt)),
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
    s.push_str(&review_lines(report));
    s.push_str(&flagged_lines(report));
    s.push_str(&forge_chance_line(report));
    s.push_str(&proven_line(report));
    let unresolved = &report.swebench.unresolved_ids;
    if !unresolved.is_empty() {
        s.push_str(&format!(
            "not resolved ({}): {}\n",
            unresolved.len(),
            first_ids(unresolved)
        ));
    }
    // Each error with its reason; those the input caused (an image not there, a suite not
    // given) apart, with what fixes them.
    let (mut users, mut machine): (Vec<&InstanceReport>, Vec<&InstanceReport>) = report
        .instances
        .iter()
        .filter(|i| i.verdict == crate::grade::Outcome::Error)
        .partition(|i| i.reason.users_fix().is_some());
    users.sort_by_key(|i| i.reason.as_str());
    machine.sort_by_key(|i| i.reason.as_str());
    let labelled = |list: &[&InstanceReport]| -> Vec<String> {
        list.iter()
            .map(|i| {
                format!(
                    "{} ({})",
                    crate::text::one_line(&super::attempt_label(&i.instance_id, i.attempt)),
                    i.reason
                )
            })
            .collect()
    };
    if !users.is_empty() {
        s.push_str(&format!(
            "not graded, the input's problem ({}): {}\n",
            users.len(),
            first_ids(&labelled(&users))
        ));
        let mut fixes: Vec<&str> = users.iter().filter_map(|i| i.reason.users_fix()).collect();
        fixes.dedup();
        for fix in fixes {
            s.push_str(&format!("  hint: {fix}\n"));
        }
    }
    if !machine.is_empty() {
        s.push_str(&format!(
            "errors (infrastructure, not the agent's; {}): {}\n",
            machine.len(),
            first_ids(&labelled(&machine))
        ));
    }
    if !report.missing_families.is_empty() {
        s.push_str(&format!(
            "AVG is over the families present (missing: {})\n",
            missing_names(report)
        ));
    }
    s
}

/// Up to twenty ids, then how many more (report.json lists every one).
fn first_ids(ids: &[String]) -> String {
    const SHOWN: usize = 20;
    let mut text = ids
        .iter()
        .take(SHOWN)
        .map(|i| crate::text::one_line(i).into_owned())
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        text.push_str(&format!(
            " and {} more (report.json lists them)",
            ids.len() - SHOWN
        ));
    }
    text
}

/// The `forgery_suspected` instances a person should look at: the first unexplained use in each,
/// and how to accept it.
fn review_lines(report: &Report) -> String {
    let mut s = String::new();
    for i in report
        .instances
        .iter()
        .filter(|i| i.reason == crate::grade::Reason::ForgerySuspected)
    {
        let hits = i
            .static_evidence
            .as_ref()
            .map(|e| e.hits.as_slice())
            .unwrap_or_default();
        let first = hits
            .first()
            // The path and the construct are the submission's words: escaped for the terminal.
            .map(|h| {
                format!(
                    "{} at {}:{} ({})",
                    h.kind.escape_debug(),
                    h.path.escape_debug(),
                    h.line,
                    h.what.escape_debug()
                )
            })
            .unwrap_or_default();
        let more = hits.len().saturating_sub(1);
        s.push_str(&format!(
            "for review (forgery_suspected, scored 0): {}: {first}{}
",
            crate::text::one_line(&super::attempt_label(&i.instance_id, i.attempt)),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            },
        ));
    }
    if !s.is_empty() {
        s.push_str(&format!(
            "  after review: beyondswe report RUN_DIR --accept-suspected INSTANCE_ID (run {})\n",
            report.run.run_id
        ));
    }
    s
}

/// The attempts with evidence for review that changed no verdict: the first piece of each.
fn flagged_lines(report: &Report) -> String {
    let flagged: Vec<String> = report
        .instances
        .iter()
        .filter(|i| i.flagged_for_review())
        .map(|i| {
            let more = i.for_review.len() - 1;
            format!(
                "  {}: {}{}\n",
                crate::text::one_line(&super::attempt_label(&i.instance_id, i.attempt)),
                crate::text::one_line(&i.for_review[0]).escape_debug(),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        })
        .collect();
    if flagged.is_empty() {
        return String::new();
    }
    format!(
        "flagged for review ({}; evidence only, no verdict changed):\n{}",
        flagged.len(),
        flagged.concat()
    )
}

/// How likely a forger who cannot tell the canary variants apart got the weakest `resolved`.
fn forge_chance_line(report: &Report) -> String {
    match report.max_forge_chance {
        Some(p) if p >= 1.0 => "forge chance: at least one resolved verdict had no canary group \
                                for a FAIL_TO_PASS test (it rests on the tested process)\n"
            .to_owned(),
        Some(p) => format!(
            "forge chance: a blind forger gets any one resolved verdict here undetected at most \
             1 in {:.0}\n",
            1.0 / p
        ),
        None => String::new(),
    }
}

/// What the canary secret proves of the run's Doc2Repo scores, beside what they claim.
fn proven_line(report: &Report) -> String {
    match report.doc2repo_proven {
        Some(m) => format!(
            "doc2repo proven: of the tests that could carry a canary group, {:.1}% passed; the \
             grouped ones prove at least {:.1}% (mean over {} attempt{}: under its floor, grouped \
             tests do this well less often than 1 in {:.0}); the rest of a score rests on the \
             tested process\n",
            m.claimed * 100.0,
            m.floor * 100.0,
            m.attempts,
            if m.attempts == 1 { "" } else { "s" },
            1.0 / super::FLOOR_CHANCE
        ),
        None => String::new(),
    }
}

/// What the run's calibration said and changed, one line each (empty without one).
fn calibration_lines(report: &Report) -> String {
    let Some(c) = &report.calibration else {
        return String::new();
    };
    let mut s = format!(
        "calibration: {} (sha256 {}){}\n",
        c.path,
        &c.hash[..c.hash.len().min(16)],
        if c.other_dataset {
            ", made for another dataset"
        } else {
            ""
        }
    );
    if !c.broken.is_empty() {
        s.push_str(&format!(
            "broken ({}, {}): {}\n",
            c.broken.len(),
            if c.exclude_broken {
                "excluded from the figures"
            } else {
                "counted; --exclude-broken leaves them out"
            },
            c.broken.join(", ")
        ));
    }
    if !c.flaky_tests.is_empty() {
        let ids: Vec<String> = c
            .flaky_tests
            .iter()
            .flat_map(|(inst, ids)| ids.iter().map(move |t| format!("{inst}: {t}")))
            .collect();
        s.push_str(&format!(
            "flaky test ids ({}, {}): {}\n",
            ids.len(),
            if c.exclude_flaky {
                "not required"
            } else {
                "required; --exclude-flaky drops them"
            },
            ids.join(", ")
        ));
    }
    if !c.trivial.is_empty() {
        s.push_str(&format!(
            "trivial (the empty patch resolves them): {}\n",
            c.trivial.join(", ")
        ));
    }
    if !c.uncalibrated.is_empty() {
        s.push_str(&format!(
            "not in the calibration: {}\n",
            c.uncalibrated.join(", ")
        ));
    }
    s
}
