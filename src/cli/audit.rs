//! `beyondswe audit PATH`: cheating checks on every trajectory, streamed. PATH is a release
//! (JSONL, one trajectory a line), a raw Claude Code or Codex transcript, a directory of
//! transcripts, or a Harbor jobs directory (each trial's raw agent log, else its ATIF trajectory).

use super::{exit, note, out};
use anyhow::Result;
use beyondswe::audit::{
    AuditOptions, Item, TrajectoryAudit, TrajectoryClass, audit_item, for_each_item, rescore,
    task_infos,
};
use beyondswe::record::Family;
use beyondswe::report::round2;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(crate) struct AuditArgs {
    /// A release (JSONL, one trajectory per line), a Claude Code or Codex transcript, a directory
    /// of transcripts, or a Harbor jobs directory.
    pub(crate) path: PathBuf,
    /// The instance a single transcript file is about (else its file name says).
    #[arg(long)]
    pub(crate) instance: Option<String>,
    /// The dataset: families, repositories (owner case) and prompts of the tasks.
    #[arg(long)]
    pub(crate) dataset: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) output_format: super::args::TableOrJson,
    /// Search was not allowed in the run: `git clone` is forbidden too.
    #[arg(long)]
    pub(crate) search_disallowed: bool,
    /// Count tier B candidates as failures too in the corrected scores (after confirming them).
    #[arg(long)]
    pub(crate) count_tier_b: bool,
}

pub(crate) fn run(args: &AuditArgs) -> Result<i32> {
    let infos = task_infos(args.dataset.as_deref())?;
    let opts = AuditOptions {
        search_disallowed: args.search_disallowed,
    };
    let mut audits: Vec<TrajectoryAudit> = Vec::new();
    let mut bad = 0usize;
    let mut text = String::new();
    let mut skipped = 0usize;
    for_each_item(&args.path, args.instance.as_deref(), |n, item| {
        if let Ok(Item::NothingToAudit(why)) = &item {
            // Each said by name: a trial that is not audited is never silently clean.
            skipped += 1;
            note(format!("{}:{n}: not audited: {why}", args.path.display()));
            return;
        }
        match item.and_then(|item| audit_item(n, item, &infos, opts)) {
            Ok(mut a) => {
                // Keep the findings, not huge texts, in memory.
                for e in &mut a.evidence {
                    truncate_at_char(&mut e.excerpt, 600);
                }
                if args.output_format.json() {
                    text.push_str(&serde_json::to_string(&a).unwrap_or_default());
                    text.push('\n');
                }
                audits.push(a);
            }
            Err(e) => {
                bad += 1;
                note(format!("{}:{n}: {e}", args.path.display()));
            }
        }
    })?;
    if !args.output_format.json() {
        text.push_str(&audit_table(&audits));
        text.push('\n');
        text.push_str(&class_counts(&audits));
        text.push_str(&corrected_scores(&audits, args.count_tier_b));
    }
    out(text)?;
    if skipped > 0 {
        note(format!(
            "{skipped} item(s) not audited, each named above with the reason (trials of Harbor's \
             own agents, files that are no trajectory)"
        ));
    }
    if bad > 0 {
        note(format!(
            "{bad} line(s) could not be audited (see above); every other line was"
        ));
    }
    Ok(if bad > 0 {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
}

/// One row per trajectory: line, task, class, reward and the first findings.
fn audit_table(audits: &[TrajectoryAudit]) -> String {
    let mut text = format!(
        "{:<6} {:<52} {:<17} {:>6}  {}\n",
        "LINE", "TASK", "CLASS", "REWARD", "FINDINGS"
    );
    for a in audits {
        let reward = a
            .reward
            .map(|r| format!("{r:.2}"))
            .unwrap_or_else(|| "-".into());
        text.push_str(&format!(
            "{:<6} {:<52} {:<17} {:>6}  {}\n",
            a.line,
            beyondswe::text::one_line(&a.task_name),
            a.class.as_str(),
            reward,
            beyondswe::text::one_line(&findings(a))
        ));
    }
    text
}

/// The blocklist hits, the first other finding, the first unread call, the first check that did
/// not run and how much network use was listed, in a few words.
fn findings(a: &TrajectoryAudit) -> String {
    let mut findings: Vec<String> = a
        .blocklist_hits
        .iter()
        .map(|b| format!("blocklist: {b}"))
        .chain(a.web_hits.iter().map(|w| format!("web: {w}")))
        .collect();
    // Hits are named above; listed pages and network use are in the JSON.
    if let Some(e) = a.evidence.iter().find(|e| {
        !matches!(
            e.finding.as_str(),
            "blocklist" | "same_repo" | "network" | "web_blocklist"
        )
    }) {
        findings.push(format!("step {} {}: {}", e.step, e.tool, e.what));
    }
    if let Some(u) = a.unread.first() {
        findings.push(format!(
            "{} tool call(s) not read (step {} {}: {})",
            a.unread.len(),
            u.step,
            u.tool,
            u.why
        ));
    }
    if let Some(c) = a.unchecked.first() {
        findings.push(format!("not checked: {c}"));
    }
    let network = a.evidence.iter().filter(|e| e.finding == "network").count();
    if network > 0 {
        findings.push(format!("network use: {network} (listed in the JSON)"));
    }
    findings.join("; ")
}

/// How many trajectories fall in each class, and how many hit the blocklist.
fn class_counts(audits: &[TrajectoryAudit]) -> String {
    let mut text = String::new();
    for class in TrajectoryClass::MOST_SERIOUS_FIRST {
        text.push_str(&format!(
            "{:<17} {}\n",
            class.as_str(),
            audits.iter().filter(|a| a.class == class).count()
        ));
    }
    text.push_str(&format!(
        "{:<17} {}\n\n",
        "blocklist hits",
        audits
            .iter()
            .filter(|a| !a.blocklist_hits.is_empty() || !a.web_hits.is_empty())
            .count()
    ));
    text
}

/// Published and corrected scores per family.
fn corrected_scores(audits: &[TrajectoryAudit], count_tier_b: bool) -> String {
    let mut text = format!(
        "{:<11} {:>6} {:>10} {:>10} {:>7} {:>7}\n",
        "FAMILY", "TRAJ", "PUBLISHED", "CORRECTED", "TIER A", "TIER B"
    );
    for r in rescore(audits, count_tier_b) {
        text.push_str(&format!(
            "{:<11} {:>6} {:>10.2} {:>10.2} {:>7} {:>7}\n",
            r.family.as_str(),
            r.trajectories,
            round2(r.published),
            round2(r.corrected),
            r.tier_a_successes,
            r.tier_b_successes
        ));
    }
    if audits.iter().any(|a| a.family == Family::Unknown) {
        text.push_str(
            "(trajectories without a known family are left out of the scores; pass --dataset)\n",
        );
    }
    text
}

/// Cuts `s` to at most `max` bytes at a character boundary (`String::truncate` panics inside a
/// multi-byte character, and excerpts are the agent's own text).
fn truncate_at_char(s: &mut String, max: usize) {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
}
