//! Results of whole runs: the store (resumable, crash-safe), the paper's metrics, `report.json`
//! and its renderings (table, markdown, JSON), and the comparison of two runs.

mod compare;
mod metrics;
mod render;
mod store;

pub use compare::{Comparison, compare, render_comparison};
pub use metrics::{
    FamilyScore, Scores, SwebenchSummary, avg, pass_at_k, round2, scores, swebench_summary,
};
pub use render::{Format, render};
pub use store::{
    RunMeta, Store, StoreError, Stored, attempt_label, read_run, safe_name, write_atomic,
};

use crate::grade::{Flags, Outcome, Reason, TestOutcome};
use crate::record::Family;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Grader version recorded in every run and in the resume key.
pub const GRADER_VERSION: &str = concat!("beyondswe ", env!("CARGO_PKG_VERSION"));

/// One instance in `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InstanceReport {
    pub instance_id: String,
    /// 1-based attempt number.
    pub attempt: u32,
    pub family: Family,
    pub verdict: Outcome,
    pub score: f64,
    pub reason: Reason,
    #[serde(default)]
    pub model_name_or_path: String,
    /// The reward the agent's harness recorded, when it differs from ours or exists at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_reward: Option<f64>,
    pub flags: Flags,
    pub fail_to_pass: BTreeMap<String, TestOutcome>,
    pub pass_to_pass: BTreeMap<String, TestOutcome>,
}

/// `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "beyondswe run report")]
pub struct Report {
    pub run_id: String,
    pub grader_version: String,
    pub dataset: String,
    pub dataset_hash: String,
    pub predictions: String,
    pub predictions_hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<usize>,
    /// Per-family figures (CrossRepo, DomainFix, DepMigrate: % resolved; Doc2Repo: mean pass rate).
    pub families: Vec<FamilyScore>,
    /// The paper's AVG on its 0–100 scale.
    pub avg: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_families: Vec<Family>,
    pub instances: Vec<InstanceReport>,
    /// The SWE-bench harness's summary fields.
    pub swebench: SwebenchSummary,
}

/// Builds `report.json` from the stored verdicts.
pub fn build_report(
    meta: Option<&RunMeta>,
    stored: &[Stored],
    total_instances: usize,
    timing: (Option<String>, Option<String>, Option<usize>),
) -> Report {
    let s = scores(stored.iter());
    Report {
        run_id: meta.map(|m| m.run_id.clone()).unwrap_or_default(),
        grader_version: GRADER_VERSION.into(),
        dataset: meta.map(|m| m.dataset.clone()).unwrap_or_default(),
        dataset_hash: meta.map(|m| m.dataset_hash.clone()).unwrap_or_default(),
        predictions: meta.map(|m| m.predictions.clone()).unwrap_or_default(),
        predictions_hash: meta.map(|m| m.predictions_hash.clone()).unwrap_or_default(),
        started_at: timing.0,
        finished_at: timing.1,
        jobs: timing.2,
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
            })
            .collect(),
        swebench: swebench_summary(stored.iter(), total_instances.max(stored.len())),
    }
}

/// Now, as an RFC 3339 UTC timestamp.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
