//! The adversarial suite (`fixtures/adversarial/`, made by scripts/make-adversarial-fixtures.py):
//! every cheat graded in a real container must stay unresolved (or at most its true Doc2Repo
//! score), and every honest control must keep its verdict. Two gradings run at a time.

use super::support::{fixture_images, fixtures, require_docker};
use beyondswe::grade::{self, GradeInput, GradeOptions, Outcome, Verdict};
use beyondswe::record::{Record, RecordReader};
use beyondswe::sandbox::{DockerSandbox, Limits};
use beyondswe::submission::{Submission, TreeLimits, read_tree};
use futures_util::StreamExt;
use std::time::Duration;

#[derive(Debug, Clone, serde::Deserialize)]
pub struct Case {
    pub name: String,
    pub class: String,
    pub instance: String,
    pub submission: String,
    pub kind: String,
    pub expect: Expect,
    /// Seconds for the test command, where the case needs a shorter bound than the suite's.
    pub timeout: Option<u64>,
}

#[derive(Debug, Clone, serde::Deserialize)]
pub struct Expect {
    pub verdict: Option<Outcome>,
    pub score_max: Option<f64>,
    pub score: Option<f64>,
    pub reason_any: Option<Vec<String>>,
    /// Evidence for review must be listed (static evidence, or what the runner saw), with no
    /// verdict changed: honest code that uses a listed construct the instance's baseline does
    /// not allow.
    pub flagged: Option<bool>,
    /// No canary group had two variants pass, even once: the forgery did not take hold at all
    /// (checked where the verdict's groups are known, offline).
    pub groups_honest: Option<bool>,
}

/// Whether a grading saw any canary group with two or more variants passing in one item,
/// proven or not (a contradiction that did not hold alone is listed as flaky).
pub fn groups_contradicted(v: &Verdict) -> bool {
    v.canaries.iter().any(|g| {
        !g.proof.is_empty()
            || !g.flaky.is_empty()
            || g.items
                .values()
                .any(|outcomes| outcomes.iter().filter(|o| *o == "passed").count() > 1)
    })
}

pub fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(fixtures().join("adversarial/cases.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The instances the cases are written against: the fixtures, the image shapes, and calc with a
/// test expecting an exception class (written with the cases).
pub fn records() -> Vec<Record> {
    [
        "dataset/fixtures.jsonl",
        "dataset/shapes.jsonl",
        "adversarial/dataset.jsonl",
    ]
    .into_iter()
    .flat_map(|f| RecordReader::open(&fixtures().join(f)).unwrap())
    .map(|r| r.unwrap().1)
    .collect()
}

/// What the case's submission is; `Err` when the grader refuses to read it at all.
pub fn submission(case: &Case) -> Result<Submission, String> {
    let path = fixtures().join("adversarial").join(&case.submission);
    if case.kind == "patch" {
        Ok(Submission::Patch(std::fs::read(&path).unwrap()))
    } else {
        read_tree(&path, TreeLimits::default())
            .map(Submission::Tree)
            .map_err(|e| e.to_string())
    }
}

/// Whether a verdict (or a refusal to read the submission, score 0) meets the expectation;
/// `flagged`: the grading listed evidence for review.
pub fn meets(
    e: &Expect,
    verdict: Option<Outcome>,
    score: f64,
    reason: &str,
    flagged: bool,
) -> bool {
    if e.flagged == Some(true) && !flagged {
        return false;
    }
    let honest = e.verdict == Some(Outcome::Resolved) || e.score.is_some();
    if verdict.is_none() {
        return !honest;
    }
    if verdict == Some(Outcome::Error) {
        return false;
    }
    if let Some(v) = e.verdict
        && Some(v) != verdict
    {
        return false;
    }
    if let Some(max) = e.score_max
        && score > max + 1e-9
    {
        return false;
    }
    if let Some(s) = e.score
        && (score - s).abs() > 1e-9
    {
        return false;
    }
    if let Some(any) = &e.reason_any
        && !any.iter().any(|r| r == reason)
    {
        return false;
    }
    true
}

fn reason_of(v: &Verdict) -> String {
    serde_json::to_value(v.reason)
        .ok()
        .and_then(|r| r.as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn every_cheat_fails_and_every_honest_submission_keeps_its_verdict() {
    require_docker();
    fixture_images();
    let cases = cases();
    assert!(cases.len() >= 40, "the suite has {} cases", cases.len());
    let only = std::env::var("BEYONDSWE_ADVERSARIAL_ONLY").unwrap_or_default();
    let records = records();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let sandbox = rt.block_on(DockerSandbox::connect()).unwrap();
    let run_id = format!("test-adversarial-{}", std::process::id());
    let opts = GradeOptions {
        limits: Limits {
            memory_mb: 1024,
            cpus: 1.0,
            pids: 256,
            ..Limits::default()
        },
        test_timeout: Duration::from_secs(60),
        setup_timeout: Duration::from_secs(120),
        labels: DockerSandbox::process_labels(&run_id),
        ..GradeOptions::default()
    };
    let suites = fixtures().join("test_suites");
    let selected: Vec<&Case> = cases
        .iter()
        .filter(|c| only.is_empty() || c.name.contains(&only))
        .collect();
    let results: Vec<(String, bool, String)> = rt.block_on(
        futures_util::stream::iter(selected.iter().map(|case| {
            let sandbox = &sandbox;
            let opts = &opts;
            let records = &records;
            let suites = &suites;
            async move {
                let record = records
                    .iter()
                    .find(|r| r.instance_id().starts_with(&case.instance))
                    .unwrap_or_else(|| panic!("{}: no instance {}", case.name, case.instance));
                let (verdict, score, reason, detail, flagged, groups) = match submission(case) {
                    Err(e) => (None, 0.0, "refused".to_owned(), e, false, false),
                    Ok(sub) => {
                        let suite = beyondswe::convert::find_test_suite(record, suites);
                        let input = GradeInput {
                            record,
                            submission: &sub,
                            test_suite: suite.as_deref(),
                            image_override: None,
                        };
                        let mut opts = opts.clone();
                        if let Some(t) = case.timeout {
                            opts.test_timeout = Duration::from_secs(t);
                        }
                        let v = grade::grade(sandbox, input, &opts).await;
                        let flagged = v
                            .static_evidence
                            .as_ref()
                            .is_some_and(|e| !e.hits.is_empty())
                            || !v.flags.suspicious.is_empty();
                        let detail = format!(
                            "forgery={:?} static={:?} suspicious={:?} removed={:?} error={}",
                            v.flags.forgery,
                            v.static_evidence.as_ref().map(|e| &e.hits),
                            v.flags.suspicious,
                            v.flags.files_removed,
                            {
                                let lines: Vec<&str> = v.logs.error.lines().collect();
                                lines[lines.len().saturating_sub(6)..].join(" | ")
                            }
                        );
                        let groups =
                            case.expect.groups_honest == Some(true) && groups_contradicted(&v);
                        (
                            Some(v.verdict),
                            v.score,
                            reason_of(&v),
                            detail,
                            flagged,
                            groups,
                        )
                    }
                };
                let ok = meets(&case.expect, verdict, score, &reason, flagged) && !groups;
                let line = format!(
                    "{:<5} {:<16} {:<55} {:?} {} {:.2} {}",
                    if ok { "ok" } else { "FAIL" },
                    case.class,
                    case.name,
                    verdict,
                    reason,
                    score,
                    if ok { String::new() } else { detail }
                );
                (case.name.clone(), ok, line)
            }
        }))
        .buffer_unordered(2)
        .collect(),
    );
    let left = rt.block_on(sandbox.containers_of_run(&run_id)).unwrap();
    assert!(left.is_empty(), "containers left behind: {left:?}");
    let mut report: Vec<&String> = results.iter().map(|(_, _, l)| l).collect();
    report.sort();
    let failed: Vec<&String> = results.iter().filter(|r| !r.1).map(|r| &r.2).collect();
    eprintln!(
        "adversarial suite: {} cases, {} failed\n{}",
        results.len(),
        failed.len(),
        report
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        failed.is_empty(),
        "{} cases failed:\n{}",
        failed.len(),
        failed
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
