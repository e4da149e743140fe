//! `report --format html`, `compare --format html` and the `report.html` that `grade` writes,
//! loaded in a real headless browser: no console errors, the figures on the page equal those in
//! `report.json`, and markup or script in submitted strings is shown as text, never run.

use super::support::{Loaded, browser, fixture_images, fixtures, load_in_browser, require_docker};
use scraper::{Html, Selector};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

/// Markup and script a submission could carry in an instance id, a test name or a log.
pub const HOSTILE: &str = "<script>document.body.setAttribute('data-pwned','1')</script>\
<img src=x onerror=\"document.body.setAttribute('data-pwned','2')\">\"'&";

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_beyondswe"))
}

/// One stored verdict line.
pub fn line(
    id: &str,
    family: &str,
    verdict: &str,
    reason: &str,
    score: f64,
    tests: Value,
) -> Value {
    json!({
        "key": format!("k-{id}"), "attempt": 1, "model_name_or_path": "agent<b>x</b>",
        "instance_id": id, "family": family, "verdict": verdict, "score": score, "reason": reason,
        "fail_to_pass": tests, "pass_to_pass": {}, "flags": {"tests_restored": [format!("tests/{HOSTILE}.py")]},
        "timings": {"start": 0.1, "tests": 1.25}, "logs": {}
    })
}

/// A run directory as `grade` leaves it, with the verdicts given.
pub fn synthetic_run(dir: &Path, run_id: &str, lines: &[Value]) {
    std::fs::create_dir_all(dir.join("instances")).unwrap();
    std::fs::write(
        dir.join("run.json"),
        json!({"run_id": run_id, "grader_version": "beyondswe test", "dataset": "d.jsonl",
               "dataset_hash": "abc123", "predictions": "p.jsonl", "predictions_hash": "def456",
               "created_at": "2025-01-01T00:00:00Z"})
        .to_string(),
    )
    .unwrap();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("results.jsonl"), text).unwrap();
}

fn hostile_run(dir: &Path) {
    let evil_test = format!("tests/test_x.py::test_{HOSTILE}");
    let mut lines = vec![
        line(
            &format!("acme_x_pr1{HOSTILE}"),
            "CrossRepo",
            "resolved",
            "all_tests_passed",
            1.0,
            json!({ evil_test.clone(): "passed" }),
        ),
        line(
            "acme_x_pr2",
            "CrossRepo",
            "unresolved",
            "tests_failed",
            0.0,
            json!({"t.py::a": "failed", "t.py::b": "not_run"}),
        ),
        line(
            "acme_x_pr3",
            "DomainFix",
            "error",
            "sandbox_failed",
            0.0,
            json!({}),
        ),
        line(
            "acme_y_pr4",
            "DepMigrate",
            "resolved",
            "all_tests_passed",
            1.0,
            json!({"t.py::c": "passed"}),
        ),
    ];
    for (i, s) in [0.0, 0.35, 0.9, 0.95, 1.0].iter().enumerate() {
        lines.push(line(
            &format!("doc_{i}"),
            "Doc2Repo",
            if *s >= 1.0 { "resolved" } else { "unresolved" },
            if *s >= 1.0 {
                "all_tests_passed"
            } else {
                "tests_failed"
            },
            *s,
            json!({}),
        ));
    }
    synthetic_run(dir, &format!("run{HOSTILE}"), &lines);
    let err = dir.join("instances/acme_x_pr3");
    std::fs::create_dir_all(&err).unwrap();
    std::fs::write(
        err.join("error.log"),
        format!("engine said: </pre>{HOSTILE}"),
    )
    .unwrap();
}

fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn text_of(doc: &Html, css: &str) -> String {
    doc.select(&sel(css))
        .next()
        .unwrap_or_else(|| panic!("no element {css}"))
        .text()
        .collect::<String>()
}

/// The checks every rendered report gets: it loaded without a console message, scripts ran, no
/// injected script ran, nothing is fetched from anywhere, and the figures equal `report.json`'s.
fn check_report_page(page: &Path, loaded: &Loaded, report: &Value) {
    assert!(
        loaded.console.is_empty(),
        "console messages: {:#?}",
        loaded.console
    );
    let source = std::fs::read_to_string(page).unwrap();
    for needle in ["http://", "https://", "<link", "@import", "src=\"/"] {
        assert!(
            !source.contains(needle),
            "the page refers outside itself: {needle}"
        );
    }
    let doc = Html::parse_document(&loaded.dom);
    let body = doc.select(&sel("body")).next().unwrap();
    assert_eq!(
        body.value().attr("data-pwned"),
        None,
        "an injected script ran"
    );
    assert!(doc.select(&sel("img")).next().is_none(), "injected markup");
    // The figures.
    for f in report["families"].as_array().unwrap() {
        let fam = f["family"].as_str().unwrap();
        let row = |k: &str| text_of(&doc, &format!("tr[data-family=\"{fam}\"] [data-k=\"{k}\"]"));
        assert_eq!(row("instances"), f["instances"].to_string(), "{fam}");
        assert_eq!(row("resolved"), f["resolved"].to_string(), "{fam}");
        assert_eq!(row("errors"), f["errors"].to_string(), "{fam}");
        let score = f["score"].as_f64().unwrap();
        assert_eq!(
            row("score"),
            format!("{:.2}", (score * 100.0).round() / 100.0),
            "{fam}"
        );
        let bar = doc
            .select(&sel(&format!("#family-chart rect[data-family=\"{fam}\"]")))
            .next()
            .unwrap();
        assert_eq!(bar.value().attr("data-score"), Some(row("score").as_str()));
        if fam == "Doc2Repo" {
            assert_eq!(row("almost_correct"), f["almost_correct"].to_string());
            assert_eq!(row("fully_correct"), f["fully_correct"].to_string());
        }
    }
    let avg = report["avg"].as_f64().unwrap();
    assert_eq!(
        text_of(&doc, "tr[data-family=\"AVG\"] [data-k=\"score\"]"),
        format!("{:.2}", (avg * 100.0).round() / 100.0)
    );
    for (k, field) in [
        ("grader-version", "grader_version"),
        ("dataset-hash", "dataset_hash"),
        ("predictions-hash", "predictions_hash"),
    ] {
        assert_eq!(
            text_of(&doc, &format!("[data-meta=\"{k}\"]")),
            report[field].as_str().unwrap()
        );
    }
    // Every instance, with its verdict, reason and score; the script counted them.
    let instances = report["instances"].as_array().unwrap();
    let rows: Vec<_> = doc.select(&sel("details.i")).collect();
    assert_eq!(rows.len(), instances.len());
    for (row, inst) in rows.iter().zip(instances) {
        let v = row.value();
        assert_eq!(v.attr("data-id"), inst["instance_id"].as_str());
        assert_eq!(v.attr("data-verdict"), inst["verdict"].as_str());
        assert_eq!(v.attr("data-reason"), inst["reason"].as_str());
        let score: f64 = v.attr("data-score").unwrap().parse().unwrap();
        assert!((score - inst["score"].as_f64().unwrap()).abs() < 1e-12);
    }
    assert_eq!(
        text_of(&doc, "#shown"),
        format!("{n} of {n} shown", n = instances.len()),
        "the page's script did not run"
    );

    let errors = instances.iter().filter(|i| i["verdict"] == "error").count();
    assert_eq!(text_of(&doc, "#error-count"), errors.to_string());
    let doc2repo = instances
        .iter()
        .filter(|i| i["family"] == "Doc2Repo")
        .count();
    if doc2repo > 0 {
        let binned: usize = doc
            .select(&sel("#doc2repo-histogram rect[data-bin]"))
            .map(|r| {
                r.value()
                    .attr("data-count")
                    .unwrap()
                    .parse::<usize>()
                    .unwrap()
            })
            .sum();
        assert_eq!(binned, doc2repo);
    }
}

#[test]
#[ignore = "needs headless Chromium (scripts/test.sh runs it)"]
fn a_console_error_is_caught() {
    let browser = browser();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><p id=x>1</p><script>document.getElementById('x').textContent='2';notAFunction();</script></body></html>",
    )
    .unwrap();
    let loaded = load_in_browser(&browser, &page, "");
    assert!(loaded.dom.contains("<p id=\"x\">2</p>"), "{}", loaded.dom);
    assert!(
        loaded.console.iter().any(|l| l.contains("notAFunction")),
        "{:?}",
        loaded.console
    );
}

#[test]
#[ignore = "needs headless Chromium (scripts/test.sh runs it)"]
fn the_html_report_renders_escapes_and_matches_report_json() {
    let browser = browser();
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    hostile_run(&run);
    let report: Value = serde_json::from_str(&run_ok(
        bin().args(["report", "--format", "json"]).arg(&run),
    ))
    .unwrap();
    let html = run_ok(bin().args(["report", "--format", "html"]).arg(&run));
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();
    let loaded = load_in_browser(&browser, &page, "");
    check_report_page(&page, &loaded, &report);
    // Per-test tables are built when a row opens; `#expand` opens every row.
    let loaded = load_in_browser(&browser, &page, "#expand");
    check_report_page(&page, &loaded, &report);
    let doc = Html::parse_document(&loaded.dom);
    // The hostile strings are on the page as text.
    let text: String = doc.root_element().text().collect();
    assert!(
        text.contains(&format!("test_{HOSTILE}")),
        "the test name is not shown as text"
    );
    assert!(text.contains(&format!("acme_x_pr1{HOSTILE}")));
    assert!(text.contains(&format!("engine said: </pre>{HOSTILE}")));
    assert!(text.contains("agent<b>x</b>"));
    assert_eq!(
        text_of(&doc, "title"),
        format!("beyondswe run run{HOSTILE}")
    );
    // The page's data and its script; a third would mean one got through.
    assert_eq!(doc.select(&sel("script")).count(), 2);
    // Timings and per-test outcomes are in the rows, every row open.
    let rows: Vec<_> = doc.select(&sel("details.i")).collect();
    assert!(rows.iter().all(|r| r.value().attr("open").is_some()));
    let inner: String = rows[0].text().collect();
    assert!(
        inner.contains("timings (s): start 0.10 \u{b7} tests 1.25"),
        "{inner}"
    );
    let cells = |r: &scraper::ElementRef| -> Vec<String> {
        r.select(&sel("table.t td"))
            .map(|c| c.text().collect())
            .collect()
    };
    assert_eq!(
        cells(&rows[0]),
        [
            "passed".to_owned(),
            format!("tests/test_x.py::test_{HOSTILE}")
        ]
    );
    assert_eq!(cells(&rows[1]), ["failed", "t.py::a", "not_run", "t.py::b"]);
}

#[test]
#[ignore = "needs headless Chromium (scripts/test.sh runs it)"]
fn the_html_comparison_shows_the_paired_counts_and_deltas() {
    let browser = browser();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let l = |id: &str, fam: &str, score: f64| {
        line(
            id,
            fam,
            if score >= 1.0 {
                "resolved"
            } else {
                "unresolved"
            },
            if score >= 1.0 {
                "all_tests_passed"
            } else {
                "tests_failed"
            },
            score,
            json!({}),
        )
    };
    synthetic_run(
        &a,
        "before",
        &[
            l("i1", "CrossRepo", 0.0),
            l(&format!("i2{HOSTILE}"), "CrossRepo", 1.0),
            l("i3", "DomainFix", 0.0),
            l("d1", "Doc2Repo", 0.5),
        ],
    );
    synthetic_run(
        &b,
        "after",
        &[
            l("i1", "CrossRepo", 1.0),
            l(&format!("i2{HOSTILE}"), "CrossRepo", 0.0),
            l("i3", "DomainFix", 0.0),
            l("d1", "Doc2Repo", 0.8),
        ],
    );
    let c: Value = serde_json::from_str(&run_ok(
        bin().args(["compare", "--format", "json"]).arg(&a).arg(&b),
    ))
    .unwrap();
    let html = run_ok(bin().args(["compare", "--format", "html"]).arg(&a).arg(&b));
    let page = dir.path().join("compare.html");
    std::fs::write(&page, &html).unwrap();
    let loaded = load_in_browser(&browser, &page, "");
    assert!(loaded.console.is_empty(), "{:?}", loaded.console);
    let doc = Html::parse_document(&loaded.dom);
    assert_eq!(
        doc.select(&sel("body"))
            .next()
            .unwrap()
            .value()
            .attr("data-pwned"),
        None
    );
    assert_eq!(
        text_of(&doc, "[data-k=\"paired\"]"),
        c["paired"].to_string()
    );
    assert_eq!(text_of(&doc, "[data-k=\"tied\"]"), c["tied"].to_string());
    for k in ["improved", "regressed"] {
        let ids: Vec<String> = c[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            text_of(&doc, &format!("[data-k=\"{k}\"]")),
            ids.len().to_string()
        );
        let listed: Vec<String> = doc
            .select(&sel(&format!("ul#{k} li")))
            .map(|li| li.text().collect())
            .collect();
        assert_eq!(listed, ids);
    }
    assert_eq!(
        (
            c["improved"].as_array().unwrap().len(),
            c["regressed"].as_array().unwrap().len()
        ),
        (2, 1)
    );
    for f in c["families"].as_array().unwrap() {
        let Some(d) = f["delta"].as_f64() else {
            continue;
        };
        let fam = f["family"].as_str().unwrap();
        let shown = format!("{:+.2}", (d * 100.0).round() / 100.0);
        assert_eq!(
            text_of(
                &doc,
                &format!("tr[data-family=\"{fam}\"] [data-k=\"delta\"]")
            ),
            shown
        );
        let bar = doc
            .select(&sel(&format!("#delta-chart rect[data-family=\"{fam}\"]")))
            .next()
            .unwrap();
        assert_eq!(bar.value().attr("data-delta"), Some(shown.as_str()));
    }
}

/// A real run: `grade` writes report.html beside report.json and says so, and the page shows the
/// run's figures.
#[test]
#[ignore = "needs headless Chromium (scripts/test.sh runs it)"]
fn grade_writes_report_html() {
    require_docker();
    let browser = browser();
    fixture_images();
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args([
            "grade",
            "--jobs",
            "2",
            "--timeout",
            "120",
            "--run-id",
            "h",
            "--dataset",
        ])
        .arg(fixtures().join("dataset/demo.jsonl"))
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .arg("--results-dir")
        .arg(dir.path())
        .arg("--predictions")
        .arg(fixtures().join("predictions/demo.jsonl"))
        .args([
            "--ids",
            "acme_calc_pr7",
            "acme_calc_pr71",
            "acme_textkit_pr12",
            "minidocb_ac79166631ba81556e3f40c05aa8d00fe9178ca6",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let page = dir.path().join("h/report.html");
    assert!(stderr.contains("report.html"), "{stderr}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("h/report.json")).unwrap())
            .unwrap();
    assert_eq!(report["instances"].as_array().unwrap().len(), 4);
    let loaded = load_in_browser(&browser, &page, "#expand");
    check_report_page(&page, &loaded, &report);
    // `report --format html` renders the same page from the store.
    let again = run_ok(
        bin()
            .args(["report", "--format", "html"])
            .arg(dir.path().join("h")),
    );
    assert_eq!(again, std::fs::read_to_string(&page).unwrap());
}

/// The table says what its score column measures, and lists the instances not resolved and the
/// errors by id (the first twenty, then how many more).
#[test]
fn the_table_names_its_measure_and_the_ids_not_resolved() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut lines = vec![line(
        "o_r_pr1",
        "CrossRepo",
        "resolved",
        "all_tests_passed",
        1.0,
        json!({}),
    )];
    for i in 0..25 {
        lines.push(line(
            &format!("o_r_pr{}", 100 + i),
            "CrossRepo",
            "unresolved",
            "tests_failed",
            0.0,
            json!({}),
        ));
    }
    synthetic_run(&dir, "r", &lines);
    let table = run_ok(bin().arg("report").arg(&dir));
    assert!(table.contains("WHAT THE SCORE IS"), "{table}");
    assert!(table.contains("% resolved"), "{table}");
    let line = table
        .lines()
        .find(|l| l.starts_with("not resolved (25): "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(line.contains("o_r_pr100, o_r_pr101"), "{line}");
    assert!(
        line.ends_with("and 5 more (report.json lists them)"),
        "{line}"
    );
    assert!(!line.contains("o_r_pr1,"), "resolved is not listed: {line}");
}

/// `report --format leaderboard`: one Markdown row with the model, the run, the four families in
/// the paper's order, AVG and the resolved counts.
#[test]
fn a_leaderboard_row() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let lines = vec![
        line(
            "o_r_pr1",
            "CrossRepo",
            "resolved",
            "all_tests_passed",
            1.0,
            json!({}),
        ),
        line(
            "o_r_pr2",
            "CrossRepo",
            "unresolved",
            "tests_failed",
            0.0,
            json!({}),
        ),
    ];
    synthetic_run(&dir, "r1", &lines);
    let text = run_ok(bin().args(["report", "--format", "leaderboard"]).arg(&dir));
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(
        rows[0].starts_with("| model | run | date | CrossRepo | DomainFix"),
        "{text}"
    );
    assert!(
        rows[2].contains("| r1 |") && rows[2].contains("| 50.00 | - | - | - |"),
        "{text}"
    );
    assert!(rows[2].ends_with("| CrossRepo 1/2 |"), "{text}");
    assert!(rows[2].starts_with("| agent<b>x</b> |"), "{text}");
}

/// The Δ chart's axis labels keep their sign in a real browser: at a span of ±100 every label of
/// the chart lies inside the chart (a label cut at the left edge lost its sign before).
#[test]
#[ignore = "needs headless Chromium (scripts/test.sh runs it)"]
fn the_delta_charts_labels_fit_with_their_signs() {
    let browser = browser();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let l = |id: &str, fam: &str, score: f64| {
        let (verdict, reason) = if score >= 1.0 {
            ("resolved", "all_tests_passed")
        } else {
            ("unresolved", "tests_failed")
        };
        line(id, fam, verdict, reason, score, json!({}))
    };
    synthetic_run(
        &a,
        "before",
        &[l("i1", "CrossRepo", 0.0), l("i2", "DomainFix", 1.0)],
    );
    synthetic_run(
        &b,
        "after",
        &[l("i1", "CrossRepo", 1.0), l("i2", "DomainFix", 0.0)],
    );
    let html = run_ok(bin().args(["compare", "--format", "html"]).arg(&a).arg(&b));
    // Measured by the browser: every text of the chart against the chart's own box.
    let probe = "<script>addEventListener('load',()=>{const s=document.getElementById('delta-chart');\
const w=s.viewBox.baseVal.width;const out=[];for(const t of s.querySelectorAll('text')){\
const b=t.getBBox();if(b.x<0||b.x+b.width>w)out.push(t.textContent+'@'+b.x.toFixed(1));}\
document.body.dataset.clipped=out.join(' ');document.body.dataset.labels=\
[...s.querySelectorAll('text')].map(t=>t.textContent).join(' ');});</script>";
    let page = dir.path().join("compare.html");
    std::fs::write(&page, html.replace("</body>", &format!("{probe}</body>"))).unwrap();
    let loaded = load_in_browser(&browser, &page, "");
    let doc = Html::parse_document(&loaded.dom);
    let body = doc.select(&sel("body")).next().unwrap();
    let labels = body.value().attr("data-labels").expect("the probe ran");
    assert!(
        labels.contains("+100.00") && labels.contains("−100.00"),
        "{labels}"
    );
    assert_eq!(body.value().attr("data-clipped"), Some(""), "{labels}");
}
