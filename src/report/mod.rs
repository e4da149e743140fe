//! Results of whole runs: the store (resumable, crash-safe), the paper's metrics, `report.json`
//! and its renderings (table, markdown, JSON, HTML), the comparison of two runs, what a dataset
//! calibration changes in a report (flaky ids apart, broken instances excluded on request), and a
//! reviewer's acceptance of `forgery_suspected` verdicts.
//!
//! Files:
//! - `compare.rs`: Two runs side by side: per-family scores with Δ.
//! - `harness.rs`: The SWE-bench harness's per-instance layout, written beside this grader's own.
//! - `html.rs`: The report as one self-contained HTML page (`report.html`), and the comparison of
//!   two runs.
//! - `junit.rs`: A run as JUnit XML (`report --format junit`), for CI systems that show test
//!   reports: one `<testsuite>` per task family, one `<testcase>` per graded attempt.
//! - `metrics.rs`: The paper's figures from a set of verdicts.
//! - `proven.rs`: What the canary secret proves of a Doc2Repo score: a floor beside the claim.
//! - `render.rs`: Renderings of a report: an aligned table, Markdown, JSON, a leaderboard row, HTML
//!   (`html.rs`) or JUnit XML (`junit.rs`).
//! - `review.rs`: A reviewer's decisions on `forgery_suspected` verdicts.
//! - `store.rs`: The results store of a run: `results.jsonl` (one verdict per line, appended and
//!   synced as each instance finishes), `instances/<id>/` (logs), `run.json` (what the run grades).

mod compare;
mod harness;
mod html;
mod junit;
mod metrics;
mod proven;
mod render;
mod review;
mod store;

pub use compare::{Comparison, compare, render_comparison};
pub use harness::{harness_report, model_dir_name, write_harness_files};
pub use html::{escape as escape_html, render_comparison_html, render_html};
pub use junit::render_junit;
pub use metrics::{
    FamilyScore, Scores, SwebenchSummary, Unsubmitted, avg, pass_at_k, round2, scores,
    swebench_summary,
};
pub use proven::{FLOOR_CHANCE, MeanProven, ProvenFloor, proven_floor};
pub use render::{Format, render};
pub use review::{ACCEPTED_FILE, accept, apply_accepted, read_accepted};
pub use store::{
    RunIdentity, RunMeta, Shard, Store, StoreError, Stored, UNFINISHED_MERGE, attempt_label,
    check_unheld, error_log, read_run, write_atomic,
};

use crate::calibration::{CalibrationClass, Loaded};
use crate::grade::{Flags, Outcome, Reason, StaticEvidence, SuiteResult, TestOutcome};
use crate::record::Family;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Grader version recorded in every run and in the resume key.
pub const GRADER_VERSION: &str = concat!("beyondswe ", env!("CARGO_PKG_VERSION"));

/// One instance in `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InstanceReport {
    /// The graded instance.
    pub instance_id: String,
    /// 1-based attempt number.
    pub attempt: u32,
    /// The instance's task family.
    pub family: Family,
    /// Resolved, unresolved, or an error of the grading.
    pub verdict: Outcome,
    /// 1 or 0 for issue tasks; the pass rate (capped at 1) for Doc2Repo.
    pub score: f64,
    /// Why the verdict is what it is.
    pub reason: Reason,
    /// The model or agent the submission names (the predictions' `model_name_or_path`).
    #[serde(default)]
    pub model_name_or_path: String,
    /// The reward the agent's harness recorded, when it differs from ours or exists at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_reward: Option<f64>,
    /// What the grader changed or noticed in the submission's tree.
    pub flags: Flags,
    /// Issue tasks: each FAIL_TO_PASS test's outcome, by test id.
    pub fail_to_pass: BTreeMap<String, TestOutcome>,
    /// Issue tasks: each PASS_TO_PASS test's outcome, by test id.
    pub pass_to_pass: BTreeMap<String, TestOutcome>,
    /// Doc2Repo: the suite's counts and per-test outcomes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<SuiteResult>,
    /// What the submission's source reaches for; with `forgery_suspected`, what a reviewer
    /// looks at before accepting it (`beyondswe report RUN --accept-suspected ID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_evidence: Option<StaticEvidence>,
    /// The chance that a forger who cannot tell a canary group's variants apart got this verdict
    /// without proof (the product of 1/(k+1) over the FAIL_TO_PASS groups; 1 where no group
    /// stood for a test that matters). Absent for gradings that planted no group (an error, a
    /// patch refused before any test ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forge_chance: Option<f64>,
    /// Doc2Repo: of the tests that could carry a canary group, the share that passed and the
    /// share the grouped ones prove (a payload that recognises the groups may force part of the
    /// rest; the floor is what rests on the secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proven: Option<ProvenFloor>,
    /// Evidence for review that changed no verdict (static evidence in the submission's source,
    /// what the runner saw in the tested process, a canary contradiction that did not hold
    /// alone): a sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub for_review: Vec<String>,
    /// Seconds per phase.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub timings: BTreeMap<String, f64>,
    /// The instance's class in the calibration the run used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<CalibrationClass>,
    /// Test ids the calibration found flaky (reported apart; not required with --exclude-flaky).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky_tests: Vec<String>,
    /// Left out of the family figures (a broken instance, with --exclude-broken).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub excluded: bool,
}

impl InstanceReport {
    /// Evidence for review that changed no verdict (a proven forgery is no longer a question).
    pub fn flagged_for_review(&self) -> bool {
        !self.for_review.is_empty() && self.reason != Reason::ForgeryDetected
    }
}

/// Which calibration a run used and what it changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CalibrationUse {
    /// The calibration file as given.
    pub path: String,
    /// SHA-256 of the file's bytes.
    pub hash: String,
    /// Gold gradings per instance in that calibration.
    pub repeat: u32,
    /// Flaky test ids were dropped from the ids an instance must pass.
    pub exclude_flaky: bool,
    /// Broken instances were left out of the family figures.
    pub exclude_broken: bool,
    /// Graded instances the calibration calls broken (always listed).
    #[serde(default)]
    pub broken: Vec<String>,
    /// Graded instances the calibration calls trivial (the empty patch resolves them).
    #[serde(default)]
    pub trivial: Vec<String>,
    /// Flaky test ids per graded instance.
    #[serde(default)]
    pub flaky_tests: BTreeMap<String, Vec<String>>,
    /// Instances left out of the family figures.
    #[serde(default)]
    pub excluded: Vec<String>,
    /// Graded instances the calibration does not cover.
    #[serde(default)]
    pub uncalibrated: Vec<String>,
    /// The calibration was made for another dataset (its hash differs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub other_dataset: bool,
}

impl CalibrationUse {
    /// What `loaded` says about the graded instances `ids`.
    pub fn new<'a>(
        path: &str,
        loaded: &Loaded,
        ids: impl IntoIterator<Item = &'a str>,
        dataset_hash: &str,
        exclude_flaky: bool,
        exclude_broken: bool,
    ) -> CalibrationUse {
        let cal = &loaded.calibration;
        let mut u = CalibrationUse {
            path: path.to_owned(),
            hash: loaded.hash.clone(),
            repeat: cal.repeat,
            exclude_flaky,
            exclude_broken,
            other_dataset: cal.dataset_hash != dataset_hash,
            ..CalibrationUse::default()
        };
        let mut ids: Vec<&str> = ids.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let Some(c) = cal.instance(id) else {
                u.uncalibrated.push(id.to_owned());
                continue;
            };
            match c.class {
                CalibrationClass::Broken => {
                    u.broken.push(id.to_owned());
                    if exclude_broken {
                        u.excluded.push(id.to_owned());
                    }
                }
                CalibrationClass::Trivial => u.trivial.push(id.to_owned()),
                _ => {}
            }
            if !c.flaky_tests.is_empty() {
                u.flaky_tests.insert(id.to_owned(), c.flaky_tests.clone());
            }
        }
        u
    }

    fn class_of(&self, id: &str) -> Option<CalibrationClass> {
        if self.broken.iter().any(|b| b == id) {
            Some(CalibrationClass::Broken)
        } else if self.trivial.iter().any(|b| b == id) {
            Some(CalibrationClass::Trivial)
        } else if self.uncalibrated.iter().any(|b| b == id) {
            None
        } else if self.flaky_tests.contains_key(id) {
            Some(CalibrationClass::Flaky)
        } else {
            Some(CalibrationClass::Ok)
        }
    }
}

/// `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "beyondswe run report")]
pub struct Report {
    /// The run and what it grades; the grader version is the one that wrote the report.
    #[serde(flatten)]
    pub run: RunIdentity,
    /// When the grading run started (RFC 3339, UTC); absent for a report rebuilt from a store
    /// alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When the grading run finished (RFC 3339, UTC); absent as `started_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// How many gradings ran at once (`--jobs`); absent as `started_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<usize>,
    /// The calibration the run used (`grade --calibration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<CalibrationUse>,
    /// Per-family figures (CrossRepo, DomainFix, DepMigrate: % resolved; Doc2Repo: mean pass rate).
    pub families: Vec<FamilyScore>,
    /// The paper's AVG on its 0–100 scale.
    pub avg: f64,
    /// Families with no graded instance (AVG is then over fewer than four).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_families: Vec<Family>,
    /// Every graded attempt, excluded ones included.
    pub instances: Vec<InstanceReport>,
    /// Attempts with evidence for review whose verdict it did not change.
    #[serde(default)]
    pub flagged_for_review: usize,
    /// The largest forge chance of a resolved attempt: the weakest proof behind any `resolved`
    /// of the run (absent when none is resolved, or none planted a group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_forge_chance: Option<f64>,
    /// Doc2Repo attempts with a proven floor: the mean share claimed and the mean floor over them
    /// (absent when none has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc2repo_proven: Option<MeanProven>,
    /// The instances in scope with no verdict, each with its family: they count in the family
    /// figures and AVG as not resolved (Doc2Repo: 0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsubmitted: Vec<Unsubmitted>,
    /// The SWE-bench harness's summary fields.
    pub swebench: SwebenchSummary,
}

/// What a grading saw that a person should look at, though it changed no verdict: static
/// evidence in the submission's source and what was noticed in the tested process (each
/// `path:line: kind (what)` or the verifier's sentence).
pub fn for_review(v: &crate::grade::Verdict) -> Vec<String> {
    let mut out: Vec<String> = v
        .static_evidence
        .iter()
        .filter(|e| !e.accepted)
        .flat_map(|e| &e.hits)
        .map(|h| format!("{}:{}: {} ({})", h.path, h.line, h.kind, h.what))
        .collect();
    out.extend(v.flags.suspicious.iter().cloned());
    out
}

/// Builds `report.json` from the stored verdicts; with a calibration, its excluded instances are
/// left out of the family figures (and still listed).
pub fn build_report(
    meta: Option<&RunMeta>,
    stored: &[Stored],
    scope: &Scope<'_>,
    timing: (Option<String>, Option<String>, Option<usize>),
    calibration: Option<&CalibrationUse>,
) -> Report {
    let total_instances = scope.total;
    let excluded = |id: &str| calibration.is_some_and(|c| c.excluded.iter().any(|e| e == id));
    let graded: std::collections::HashSet<&str> = stored
        .iter()
        .map(|s| s.verdict.instance_id.as_str())
        .collect();
    // In scope, no verdict: counted as not resolved in its family (the family as the scope
    // knows it; an id it cannot place goes under `unknown`, outside AVG).
    let unsubmitted: Vec<Unsubmitted> = scope
        .ids
        .iter()
        .filter(|id| !graded.contains(id.as_str()) && !excluded(id))
        .map(|id| Unsubmitted {
            instance_id: id.clone(),
            family: scope.families.get(id).copied().unwrap_or(Family::Unknown),
        })
        .collect();
    let s = scores(
        stored
            .iter()
            .filter(|st| !excluded(&st.verdict.instance_id)),
        &unsubmitted,
    );
    let mut report = Report {
        run: RunIdentity {
            grader_version: GRADER_VERSION.into(),
            ..meta.map(|m| m.run.clone()).unwrap_or_default()
        },
        started_at: timing.0,
        finished_at: timing.1,
        jobs: timing.2,
        calibration: calibration.cloned(),
        families: s.families,
        avg: s.avg,
        missing_families: s.missing_families,
        instances: stored
            .iter()
            .map(|st| InstanceReport {
                instance_id: st.verdict.instance_id.clone(),
                attempt: st.attempt,
                family: st.verdict.family,
                verdict: st.verdict.verdict,
                score: st.verdict.score,
                reason: st.verdict.reason,
                model_name_or_path: st.model_name_or_path.clone(),
                claimed_reward: st.claimed_reward,
                flags: st.verdict.flags.clone(),
                fail_to_pass: st.verdict.fail_to_pass.clone(),
                pass_to_pass: st.verdict.pass_to_pass.clone(),
                suite: st.verdict.suite.clone(),
                static_evidence: st.verdict.static_evidence.clone(),
                forge_chance: st.verdict.canary_plan.as_ref().map(|p| p.forge_chance),
                proven: st.verdict.canary_plan.as_ref().and_then(proven_floor),
                for_review: for_review(&st.verdict),
                timings: st.verdict.timings.clone(),
                calibration: calibration.and_then(|c| c.class_of(&st.verdict.instance_id)),
                flaky_tests: calibration
                    .and_then(|c| c.flaky_tests.get(&st.verdict.instance_id))
                    .cloned()
                    .unwrap_or_default(),
                excluded: excluded(&st.verdict.instance_id),
            })
            .collect(),
        swebench: {
            let mut sw = swebench_summary(stored.iter(), total_instances.max(stored.len()));
            sw.incomplete_ids = scope
                .ids
                .iter()
                .filter(|id| !graded.contains(id.as_str()))
                .cloned()
                .collect();
            sw
        },
        flagged_for_review: 0,
        max_forge_chance: None,
        doc2repo_proven: None,
        unsubmitted,
    };
    report.flagged_for_review = report
        .instances
        .iter()
        .filter(|i| i.flagged_for_review())
        .count();
    report.max_forge_chance = report
        .instances
        .iter()
        .filter(|i| i.verdict == Outcome::Resolved)
        .filter_map(|i| i.forge_chance)
        .reduce(f64::max);
    report.doc2repo_proven = MeanProven::of(
        report
            .instances
            .iter()
            .filter(|i| !i.excluded)
            .filter_map(|i| i.proven),
    );
    report
}

/// The instances a report covers: how many, and which (those without a verdict are the
/// SWE-bench report's `incomplete_ids`).
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// How many instances the run covers.
    pub total: usize,
    /// Their ids, where known.
    pub ids: &'a [String],
    /// Their families, where known: an id in scope without a verdict counts as not resolved
    /// in its family.
    pub families: &'a BTreeMap<String, Family>,
}

/// The report of a stored run. The report written when it was graded, if there is one, gives
/// the run's scope (the instances it graded; a store may hold others) and its timing; the
/// verdicts are always the store's.
pub fn load_report(dir: &std::path::Path) -> Result<Report, StoreError> {
    let (meta, mut stored) = read_run(dir)?;
    apply_accepted(&mut stored, &read_accepted(dir)?);
    let saved_path = dir.join("report.json");
    let saved = match crate::files::read_own_text(&saved_path, crate::files::SMALL_FILE_MAX) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        // A link, a FIFO or a huge file where the run's report goes is refused, not skipped.
        Err(source) => {
            return Err(StoreError::Io(crate::errors::PathError::new(
                saved_path, source,
            )));
        }
    };
    if let Some(text) = saved
        && let Ok(saved) = serde_json::from_str::<Report>(&text)
    {
        let ids: std::collections::HashSet<&str> = saved
            .instances
            .iter()
            .map(|i| i.instance_id.as_str())
            .collect();
        let scoped: Vec<_> = stored
            .iter()
            .filter(|s| ids.contains(s.verdict.instance_id.as_str()))
            .cloned()
            .collect();
        // The instances without a verdict are those the saved report named.
        let scope_ids: Vec<String> = saved.swebench.incomplete_ids.clone();
        let families: BTreeMap<String, Family> = saved
            .unsubmitted
            .iter()
            .map(|u| (u.instance_id.clone(), u.family))
            .collect();
        return Ok(build_report(
            meta.as_ref(),
            &scoped,
            &Scope {
                total: saved.swebench.total_instances,
                ids: &scope_ids,
                families: &families,
            },
            (saved.started_at, saved.finished_at, saved.jobs),
            saved.calibration.as_ref(),
        ));
    }
    let n = stored.len();
    Ok(build_report(
        meta.as_ref(),
        &stored,
        &Scope {
            total: n,
            ids: &[],
            families: &BTreeMap::new(),
        },
        (None, None, None),
        None,
    ))
}

/// Writes a run's `report.json`, `swebench_report.json` and `report.html`.
pub fn write_report_files(dir: &std::path::Path, report: &Report) -> Result<(), StoreError> {
    // Plain structs of strings and numbers: serialising them cannot fail.
    let report_json = serde_json::to_vec_pretty(report).unwrap_or_default();
    let swebench = serde_json::to_vec_pretty(&report.swebench).unwrap_or_default();
    write_atomic(&dir.join("report.json"), &report_json)?;
    write_atomic(&dir.join("swebench_report.json"), &swebench)?;
    write_atomic(
        &dir.join("report.html"),
        html_for_run(dir, report).as_bytes(),
    )
}

/// `report.html` for a run directory: the report with the error messages its logs hold.
pub fn html_for_run(dir: &std::path::Path, report: &Report) -> String {
    let errors: BTreeMap<String, String> = report
        .instances
        .iter()
        .filter(|i| i.verdict == Outcome::Error)
        .filter_map(|i| {
            let label = attempt_label(&i.instance_id, i.attempt);
            error_log(dir, &label).map(|m| (label, m))
        })
        .collect();
    render_html(report, &errors)
}

/// Now, as an RFC 3339 UTC timestamp.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    crate::text::rfc3339_of(secs)
}
