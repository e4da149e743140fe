//! The report as one self-contained HTML page (`report.html`), and the comparison of two runs.
//!
//! Inline CSS, a few lines of inline JavaScript (filtering the instance rows) and SVG charts drawn
//! here: nothing is loaded from anywhere. Every string that comes from a submission, a dataset or
//! a log (instance ids, test names, reasons, messages, paths) goes through [`escape`]; the script
//! reads the page, never data spliced into its source. The figures are printed as the table and
//! markdown renderings print them, and carried in `data-*` attributes so a test can read them
//! back from the DOM.

use super::compare::Comparison;
use super::metrics::round2;
use super::{InstanceReport, Report};
use crate::grade::{Outcome, TestOutcome};
use crate::record::Family;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Text safe inside HTML elements and quoted attribute values.
pub fn escape(s: &str) -> String {
    replace_chars(s, |c| match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' => Some("&quot;"),
        '\'' => Some("&#39;"),
        _ => None,
    })
}

/// `s` with every character `replacement` names written as that replacement.
fn replace_chars(s: &str, replacement: impl Fn(char) -> Option<&'static str>) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match replacement(c) {
            Some(r) => out.push_str(r),
            None => out.push(c),
        }
    }
    out
}

/// A log excerpt kept short: the page stays small for large runs.
const MAX_ERROR_CHARS: usize = 2000;

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:70em;padding:0 1em;color:#222}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}\
table{border-collapse:collapse}td,th{padding:.15em .6em;text-align:left;vertical-align:top}\
td.n{text-align:right;font-variant-numeric:tabular-nums}thead th{border-bottom:1px solid #999}\
tr.avg th,tr.avg td{border-top:1px solid #999;font-weight:bold}code,pre{font:12px ui-monospace,monospace}\
pre{white-space:pre-wrap;background:#f6f6f6;padding:.5em;max-height:20em;overflow:auto}\
details.i{border-bottom:1px solid #eee;padding:.1em 0}details.i>summary{cursor:pointer}\
.resolved{color:#176b2c}.unresolved{color:#9a3b00}.error{color:#b00020}\
.p{color:#176b2c}.f{color:#9a3b00}.x{color:#888}small{color:#666}\
svg text{font:11px system-ui,sans-serif;fill:#333}.bar{fill:#4b7bbd}.pos{fill:#2e8b57}.neg{fill:#c0392b}\
.line{stroke:#c0392b;stroke-dasharray:4 3}.axis{stroke:#999}";

/// Filters the instance rows by text and verdict and says how many are shown; builds a row's
/// per-test table from the page's data when the row is opened (`#expand` opens every row). Text
/// goes in through `textContent` only.
const SCRIPT: &str = "(function(){var q=document.getElementById('q'),v=document.getElementById('vf'),\
rows=Array.prototype.slice.call(document.querySelectorAll('details.i')),s=document.getElementById('shown'),\
all=JSON.parse(document.getElementById('tests-data').textContent),S=all[0],data=all[1],\
names={p:'passed',f:'failed',e:'error',s:'skipped',x:'xfailed',n:'not_run',d:'disputed'},\
cls={p:'p',f:'f',e:'f',d:'f'};\
function build(r){var d=r.querySelector('div.tt');if(!d||d.dataset.built)return;d.dataset.built='1';\
var e=data[+d.dataset.t];e[0].forEach(function(g){var p=document.createElement('p');p.textContent=S[g[0]];d.appendChild(p);\
var t=document.createElement('table');t.className='t';g[1].forEach(function(m){m[2].forEach(function(n){\
var tr=t.insertRow(),a=tr.insertCell(),b=tr.insertCell(),c=document.createElement('code');\
a.textContent=names[m[1]]||m[1];a.className=cls[m[1]]||'x';c.textContent=S[n]?S[m[0]]+'::'+S[n]:S[m[0]];b.appendChild(c);});});\
d.appendChild(t);});if(e[1].length){var p=document.createElement('p');\
p.textContent='timings (s): '+e[1].map(function(x){return S[x[0]]+' '+x[1].toFixed(2);}).join(' \\u00b7 ');d.appendChild(p);}}\
function f(){var t=q.value.toLowerCase(),w=v.value,n=0;rows.forEach(function(r){\
var ok=(!w||r.dataset.verdict===w)&&(!t||r.dataset.id.toLowerCase().indexOf(t)>=0);\
r.hidden=!ok;if(ok)n++;});s.textContent=n+' of '+rows.length+' shown';}\
rows.forEach(function(r){r.addEventListener('toggle',function(){if(r.open)build(r);});});\
q.addEventListener('input',f);v.addEventListener('change',f);\
document.getElementById('open').addEventListener('click',function(){rows.forEach(function(r){if(!r.hidden){r.open=true;build(r);}});});\
document.getElementById('close').addEventListener('click',function(){rows.forEach(function(r){r.open=false;});});\
if(location.hash==='#expand')rows.forEach(function(r){r.open=true;build(r);});\
f();})();";

fn head(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>{}</title><style>{STYLE}</style></head><body>",
        escape(title)
    );
}

fn score2(x: f64) -> String {
    format!("{:.2}", round2(x))
}

/// A bar chart of the family scores (0–100) and AVG.
fn family_chart(report: &Report) -> String {
    let bars: Vec<(String, f64)> = report
        .families
        .iter()
        .filter(|f| f.family != Family::Unknown)
        .map(|f| (f.family.as_str().to_owned(), f.score))
        .chain(std::iter::once(("AVG".to_owned(), report.avg)))
        .collect();
    let (h, top, left, bw, gap) = (160.0, 16.0, 34.0, 56.0, 24.0);
    let w = left + bars.len() as f64 * (bw + gap) + gap;
    let mut s = format!(
        "<svg id=\"family-chart\" role=\"img\" aria-label=\"family scores\" width=\"{w}\" height=\"{}\" viewBox=\"0 0 {w} {}\">",
        h + top + 30.0,
        h + top + 30.0
    );
    for tick in [0.0, 25.0, 50.0, 75.0, 100.0] {
        let y = top + h - tick / 100.0 * h;
        let _ = write!(
            s,
            "<line class=\"axis\" x1=\"{left}\" x2=\"{w}\" y1=\"{y}\" y2=\"{y}\" stroke-opacity=\"0.3\"/>\
<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{tick}</text>",
            left - 4.0,
            y + 4.0
        );
    }
    for (i, (name, score)) in bars.iter().enumerate() {
        let x = left + gap + i as f64 * (bw + gap);
        let bh = score.clamp(0.0, 100.0) / 100.0 * h;
        let _ = write!(
            s,
            "<rect class=\"bar\" data-family=\"{n}\" data-score=\"{v}\" x=\"{x}\" y=\"{}\" width=\"{bw}\" height=\"{bh}\"/>\
<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{v}</text><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{n}</text>",
            top + h - bh,
            x + bw / 2.0,
            top + h - bh - 3.0,
            x + bw / 2.0,
            top + h + 16.0,
            n = escape(name),
            v = score2(*score),
        );
    }
    s.push_str("</svg>");
    s
}

/// The Doc2Repo pass rates as a histogram in 5-point bins, with the ≥ 90 % and 100 % lines.
fn doc2repo_histogram(rates: &[f64]) -> String {
    let mut bins = [0usize; 20];
    for r in rates {
        let pct = (r.clamp(0.0, 1.0) * 100.0).round();
        bins[((pct / 5.0) as usize).min(19)] += 1;
    }
    let max = bins.iter().copied().max().unwrap_or(0).max(1) as f64;
    let (h, top, left, bw) = (140.0, 18.0, 30.0, 18.0);
    let w = left + 20.0 * bw + 40.0;
    let mut s = format!(
        "<svg id=\"doc2repo-histogram\" role=\"img\" aria-label=\"Doc2Repo pass-rate distribution\" width=\"{w}\" height=\"{}\" viewBox=\"0 0 {w} {}\">",
        h + top + 34.0,
        h + top + 34.0
    );
    for (i, n) in bins.iter().enumerate() {
        let x = left + i as f64 * bw;
        let bh = *n as f64 / max * h;
        let _ = write!(
            s,
            "<rect class=\"bar\" data-bin=\"{}\" data-count=\"{n}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{bh}\"><title>{}–{}%: {n}</title></rect>",
            i * 5,
            x + 1.0,
            top + h - bh,
            bw - 2.0,
            i * 5,
            i * 5 + 5
        );
        if *n > 0 {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{n}</text>",
                x + bw / 2.0,
                top + h - bh - 3.0
            );
        }
    }
    for (pct, label, anchor) in [(90.0, "≥90%", "end"), (100.0, "100%", "start")] {
        let x = left + pct / 100.0 * 20.0 * bw;
        let _ = write!(
            s,
            "<line class=\"line\" x1=\"{x}\" x2=\"{x}\" y1=\"{}\" y2=\"{}\"/><text x=\"{x}\" y=\"{}\" text-anchor=\"{anchor}\">{label}</text>",
            top - 4.0,
            top + h,
            top - 6.0
        );
    }
    for pct in [0, 25, 50, 75, 100] {
        let x = left + f64::from(pct) / 100.0 * 20.0 * bw;
        let _ = write!(
            s,
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{pct}%</text>",
            top + h + 16.0
        );
    }
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{left}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/></svg>",
        left + 20.0 * bw,
        top + h,
        top + h
    );
    s
}

fn meta_table(report: &Report) -> String {
    let mut rows: Vec<(&str, String)> = vec![
        ("run", report.run.run_id.clone()),
        ("grader version", report.run.grader_version.clone()),
        ("dataset", report.run.dataset.clone()),
        ("dataset hash", report.run.dataset_hash.clone()),
        ("predictions", report.run.predictions.clone()),
        ("predictions hash", report.run.predictions_hash.clone()),
    ];
    for (k, v) in [
        ("started", &report.started_at),
        ("finished", &report.finished_at),
    ] {
        if let Some(v) = v {
            rows.push((k, v.clone()));
        }
    }
    if let Some(j) = report.jobs {
        rows.push(("jobs", j.to_string()));
    }
    if let Some(c) = &report.calibration {
        rows.push(("calibration", c.path.clone()));
        rows.push(("calibration hash", c.hash.clone()));
    }
    let mut s = String::from("<table id=\"meta\">");
    for (k, v) in rows {
        let key = k.replace(' ', "-");
        let _ = write!(
            s,
            "<tr><th>{k}</th><td><code data-meta=\"{key}\">{}</code></td></tr>",
            escape(&v)
        );
    }
    s.push_str("</table>");
    s
}

fn family_table(report: &Report) -> String {
    let mut s = String::from(
        "<table id=\"family-table\"><thead><tr><th>family</th><th>instances</th><th>resolved</th>\
<th>errors</th><th>score</th><th></th></tr></thead><tbody>",
    );
    for f in &report.families {
        let extra = if f.family == Family::Doc2Repo {
            format!(
                "mean pass rate; ≥90%: <span data-k=\"almost_correct\">{}</span>, 100%: <span data-k=\"fully_correct\">{}</span>",
                f.almost_correct.unwrap_or(0),
                f.fully_correct.unwrap_or(0)
            )
        } else {
            "% resolved".to_owned()
        };
        let extra = match f.pass_at_k {
            Some(k) => format!(
                "{extra}; pass@1 over {n} attempts, pass@{n}: <span data-k=\"pass_at_k\">{}</span>",
                score2(k),
                n = f.attempts
            ),
            None => extra,
        };
        let extra = match f.score_of_submitted {
            Some(of) => format!(
                "{extra}; <span data-k=\"submitted\">{}</span> of {} submitted, \
<span data-k=\"score_of_submitted\">{}</span> of submitted",
                f.submitted,
                f.instances,
                score2(of)
            ),
            None => extra,
        };
        let _ = write!(
            s,
            "<tr data-family=\"{n}\"><th>{n}</th><td class=\"n\" data-k=\"instances\">{}</td>\
<td class=\"n\" data-k=\"resolved\">{}</td><td class=\"n\" data-k=\"errors\">{}</td>\
<td class=\"n\" data-k=\"score\">{}</td><td><small>{extra}</small></td></tr>",
            f.instances,
            f.resolved,
            f.errors,
            score2(f.score),
            n = escape(f.family.as_str()),
        );
    }
    let _ = write!(
        s,
        "<tr class=\"avg\" data-family=\"AVG\"><th>AVG</th><td></td><td></td><td></td>\
<td class=\"n\" data-k=\"score\">{}</td><td><small>mean of the family scores</small></td></tr></tbody></table>",
        score2(report.avg)
    );
    if !report.missing_families.is_empty() {
        let names: Vec<&str> = report.missing_families.iter().map(|f| f.as_str()).collect();
        let _ = write!(
            s,
            "<p id=\"missing\">AVG is over the families present (missing: {}).</p>",
            escape(&names.join(", "))
        );
    }
    if report.flagged_for_review > 0 {
        let _ = write!(
            s,
            "<p id=\"flagged\"><b data-k=\"flagged\">{}</b> flagged for review: evidence only, \
no verdict changed (open a row to read it).</p>",
            report.flagged_for_review
        );
    }
    if let Some(p) = report.max_forge_chance {
        let _ = write!(
            s,
            "<p id=\"forge-chance\">Forge chance of the weakest resolved verdict: <b data-k=\"forge\">{}</b> \
(a forger who cannot tell a canary group's variants apart).</p>",
            if p >= 1.0 {
                "no canary group".to_owned()
            } else {
                format!("1 in {:.0}", 1.0 / p)
            }
        );
    }
    if let Some(m) = report.doc2repo_proven {
        let _ = write!(
            s,
            "<p id=\"doc2repo-proven\">Doc2Repo: of the tests that could carry a canary group, \
<b data-k=\"claimed\">{:.1}%</b> passed; the grouped ones prove at least <b data-k=\"floor\">{:.1}%</b> \
(mean over {} attempts; the rest of a score rests on the tested process).</p>",
            m.claimed * 100.0,
            m.floor * 100.0,
            m.attempts
        );
    }
    s
}

fn calibration_section(report: &Report) -> String {
    let Some(c) = &report.calibration else {
        return String::new();
    };
    let mut s = format!(
        "<section id=\"calibration\"><h2>Calibration</h2><p>From <code>{}</code> (SHA-256 <code>{}</code>, \
gold graded {} times). Broken instances {}; flaky test ids {}.</p>",
        escape(&c.path),
        escape(&c.hash),
        c.repeat,
        if c.exclude_broken {
            "are left out of the family figures"
        } else {
            "are counted (pass --exclude-broken to leave them out)"
        },
        if c.exclude_flaky {
            "were not required"
        } else {
            "were required as usual (pass --exclude-flaky to drop them)"
        }
    );
    let list = |title: &str, id: &str, items: &[String]| -> String {
        if items.is_empty() {
            return String::new();
        }
        let mut t = format!("<h3>{title} ({})</h3><ul id=\"{id}\">", items.len());
        for i in items {
            let _ = write!(t, "<li><code>{}</code></li>", escape(i));
        }
        t.push_str("</ul>");
        t
    };
    s.push_str(&list("Broken", "cal-broken", &c.broken));
    s.push_str(&list(
        "Excluded from the figures",
        "cal-excluded",
        &c.excluded,
    ));
    s.push_str(&list("Trivial", "cal-trivial", &c.trivial));
    if !c.flaky_tests.is_empty() {
        let _ = write!(
            s,
            "<h3>Flaky test ids ({})</h3><ul id=\"cal-flaky\">",
            c.flaky_tests.values().map(Vec::len).sum::<usize>()
        );
        for (inst, ids) in &c.flaky_tests {
            let _ = write!(s, "<li><code>{}</code>: ", escape(inst));
            let names: Vec<String> = ids
                .iter()
                .map(|i| format!("<code>{}</code>", escape(i)))
                .collect();
            s.push_str(&names.join(", "));
            s.push_str("</li>");
        }
        s.push_str("</ul>");
    }
    s.push_str(&list("Not calibrated", "cal-uncalibrated", &c.uncalibrated));
    s.push_str("</section>");
    s
}

/// One letter per outcome in the page's test data (the script spells them out).
fn outcome_code(o: TestOutcome) -> &'static str {
    match o {
        TestOutcome::Passed => "p",
        TestOutcome::Failed => "f",
        TestOutcome::Error => "e",
        TestOutcome::Skipped => "s",
        TestOutcome::Xfailed => "x",
        TestOutcome::NotRun => "n",
        TestOutcome::Disputed => "d",
    }
}

/// The page's strings (test names, modules, titles, timing names), each written once: the data
/// refers to them by index. Attempts of one instance, and instances of one repository, repeat
/// the same test names, which were most of a large run's page.
#[derive(Default)]
struct Strings {
    index: std::collections::HashMap<String, usize>,
    list: Vec<String>,
}

impl Strings {
    fn id(&mut self, s: &str) -> usize {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.list.push(s.to_owned());
        self.index.insert(s.to_owned(), self.list.len() - 1);
        self.list.len() - 1
    }
}

/// A group of per-test outcomes as the page's data holds them: `[title, [[module, outcome,
/// [names…]]…]]` (strings as indexes into [`Strings`]), test ids split at their first `::` so a
/// module is written once per outcome.
fn tests_group(
    title: &str,
    tests: &BTreeMap<String, TestOutcome>,
    strings: &mut Strings,
) -> Option<serde_json::Value> {
    if tests.is_empty() {
        return None;
    }
    let mut groups: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    for (id, o) in tests {
        let (module, name) = id.split_once("::").unwrap_or((id.as_str(), ""));
        groups
            .entry((module, outcome_code(*o)))
            .or_default()
            .push(name);
    }
    let list: Vec<serde_json::Value> = groups
        .into_iter()
        .map(|((m, o), names)| {
            let names: Vec<usize> = names.into_iter().map(|n| strings.id(n)).collect();
            serde_json::json!([strings.id(m), o, names])
        })
        .collect();
    Some(serde_json::json!([strings.id(title), list]))
}

/// JSON that can stand inside a `<script>` element: `<`, `>` and `&` (only ever inside strings)
/// as `\u` escapes, so no text of a submission can close the element.
fn script_json(value: &serde_json::Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_else(|_| "[]".into());
    replace_chars(&text, |c| match c {
        '<' => Some("\\u003c"),
        '>' => Some("\\u003e"),
        '&' => Some("\\u0026"),
        '\u{2028}' => Some("\\u2028"),
        '\u{2029}' => Some("\\u2029"),
        _ => None,
    })
}

/// One instance's row; its per-test outcomes go to `tests` (built into the row by the page's
/// script when it is opened, so a large run's page stays small and quick to show).
fn instance_row(
    out: &mut String,
    i: &InstanceReport,
    tests: &mut Vec<serde_json::Value>,
    strings: &mut Strings,
) {
    row_summary(out, i);
    row_facts(out, i);
    row_tests(out, i, tests, strings);
    out.push_str("</details>");
}

/// The row's opening and its one-line summary: id, family, verdict, reason, score and marks.
fn row_summary(out: &mut String, i: &InstanceReport) {
    let label = super::attempt_label(&i.instance_id, i.attempt);
    let verdict = i.verdict.as_str();
    let reason = i.reason.as_str();
    let _ = write!(
        out,
        "<details class=\"i\" data-id=\"{id}\" data-verdict=\"{verdict}\" data-reason=\"{reason}\" data-score=\"{score}\">\
<summary><code>{id}</code> <small>{family}</small> <b class=\"{verdict}\">{verdict}</b> {reason} <small>score {shown}</small>",
        id = escape(&label),
        family = escape(i.family.as_str()),
        score = i.score,
        shown = format_args!("{:.4}", i.score),
    );
    if i.flags.tampering() {
        out.push_str(" <small class=\"f\">flagged</small>");
    }
    if let Some(c) = i.calibration {
        let _ = write!(out, " <small>calibration: {}</small>", c.as_str());
    }
    if i.excluded {
        out.push_str(" <small class=\"x\">excluded</small>");
    }
    out.push_str("</summary>");
}

/// What the opened row says besides the tests: model, claimed reward, flags, flaky tests, suite.
fn row_facts(out: &mut String, i: &InstanceReport) {
    if !i.model_name_or_path.is_empty() {
        let _ = write!(
            out,
            "<p>model <code>{}</code></p>",
            escape(&i.model_name_or_path)
        );
    }
    if let Some(c) = i.claimed_reward {
        let _ = write!(out, "<p>claimed reward {c}</p>");
    }
    flag_list(out, &i.flags);
    if !i.for_review.is_empty() {
        out.push_str("<p>for review (changed no verdict)</p><ul>");
        for r in &i.for_review {
            let _ = write!(out, "<li>{}</li>", escape(r));
        }
        out.push_str("</ul>");
    }
    if let Some(p) = i.forge_chance {
        let _ = write!(out, "<p>forge chance {p}</p>");
    }
    if let Some(f) = i.proven {
        let _ = write!(
            out,
            "<p>of the {} tests that could carry a canary group, {:.1}% passed; the grouped \
ones prove at least {:.1}%</p>",
            f.tests,
            f.claimed * 100.0,
            f.floor * 100.0
        );
    }
    if !i.flaky_tests.is_empty() {
        let names: Vec<String> = i.flaky_tests.iter().map(|t| escape(t)).collect();
        let _ = write!(
            out,
            "<p>flaky (calibration): <code>{}</code></p>",
            names.join("</code>, <code>")
        );
    }
    if let Some(suite) = &i.suite {
        let _ = write!(
            out,
            "<p>suite: {} passed of {} expected ({} collected)</p>",
            suite.passed, suite.expected, suite.collected
        );
    }
}

/// The grader's flags as a list, by their `report.json` names (nothing when none is set).
fn flag_list(out: &mut String, flags: &crate::grade::Flags) {
    let Ok(serde_json::Value::Object(mut flags)) = serde_json::to_value(flags) else {
        return;
    };
    // How the patch applied is worth a line only when it is not the usual `git apply`.
    if flags.get("applied_with").and_then(|v| v.as_str()) == Some("git apply") {
        flags.remove("applied_with");
    }
    if flags.is_empty() {
        return;
    }
    out.push_str("<p>flags</p><ul>");
    for (k, v) in flags {
        let text = match v {
            serde_json::Value::Array(items) => items
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| x.to_string())
                })
                .collect::<Vec<_>>()
                .join(", "),
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        let _ = write!(
            out,
            "<li>{}: <code>{}</code></li>",
            escape(&k),
            escape(&text)
        );
    }
    out.push_str("</ul>");
}

/// The row's per-test outcomes and timings, added to `tests` for the page's script to build when
/// the row opens; the row keeps only their index.
fn row_tests(
    out: &mut String,
    i: &InstanceReport,
    tests: &mut Vec<serde_json::Value>,
    strings: &mut Strings,
) {
    let groups: Vec<serde_json::Value> = [
        tests_group("FAIL_TO_PASS", &i.fail_to_pass, strings),
        tests_group("PASS_TO_PASS", &i.pass_to_pass, strings),
        i.suite
            .as_ref()
            .and_then(|s| tests_group("suite tests", &s.tests, strings)),
    ]
    .into_iter()
    .flatten()
    .collect();
    let timings: Vec<serde_json::Value> = i
        .timings
        .iter()
        .map(|(k, v)| serde_json::json!([strings.id(k), (v * 100.0).round() / 100.0]))
        .collect();
    if !groups.is_empty() || !timings.is_empty() {
        let _ = write!(out, "<div class=\"tt\" data-t=\"{}\"></div>", tests.len());
        tests.push(serde_json::json!([groups, timings]));
    }
}

/// The whole run as one HTML page. `errors` holds each error verdict's message by label
/// (`id` or `id@N`), read from the run's logs.
pub fn render_html(report: &Report, errors: &BTreeMap<String, String>) -> String {
    let mut s = String::with_capacity(4096 + report.instances.len() * 800);
    head(&mut s, &format!("beyondswe run {}", report.run.run_id));
    let _ = write!(
        s,
        "<h1>Run <code id=\"run-id\">{}</code></h1>",
        escape(&report.run.run_id)
    );
    s.push_str(&meta_table(report));
    s.push_str("<section id=\"families\"><h2>Family scores</h2>");
    s.push_str(&family_table(report));
    s.push_str(&family_chart(report));
    s.push_str("</section>");
    let rates: Vec<f64> = report
        .instances
        .iter()
        .filter(|i| i.family == Family::Doc2Repo)
        .map(|i| i.score)
        .collect();
    if !rates.is_empty() {
        let _ = write!(
            s,
            "<section id=\"doc2repo\"><h2>Doc2Repo pass rates</h2><p><span id=\"doc2repo-count\">{}</span> gradings; \
the dashed lines mark 90% (almost correct) and 100% (fully correct).</p>",
            rates.len()
        );
        s.push_str(&doc2repo_histogram(&rates));
        s.push_str("</section>");
    }
    s.push_str(&calibration_section(report));
    let error_rows: Vec<&InstanceReport> = report
        .instances
        .iter()
        .filter(|i| i.verdict == Outcome::Error)
        .collect();
    let _ = write!(
        s,
        "<section id=\"errors\"><h2>Errors (<span id=\"error-count\">{}</span>)</h2>",
        error_rows.len()
    );
    if error_rows.is_empty() {
        s.push_str("<p>None: every grading finished.</p>");
    } else {
        s.push_str("<p>Infrastructure failures, not the agent's: counted as not resolved.</p>");
        for i in error_rows {
            let label = super::attempt_label(&i.instance_id, i.attempt);
            let _ = write!(
                s,
                "<p><code>{}</code> {}</p>",
                escape(&label),
                escape(i.reason.as_str())
            );
            if let Some(msg) = errors.get(&label).filter(|m| !m.is_empty()) {
                let cut: String = msg.chars().take(MAX_ERROR_CHARS).collect();
                let _ = write!(s, "<pre>{}</pre>", escape(&cut));
            }
        }
    }
    s.push_str("</section>");
    let _ = write!(
        s,
        "<section id=\"instances\"><h2>Instances (<span id=\"instance-count\">{}</span>)</h2>\
<p><input id=\"q\" type=\"search\" placeholder=\"filter by id\"> <select id=\"vf\"><option value=\"\">every verdict</option>\
<option>resolved</option><option>unresolved</option><option>error</option></select> \
<button id=\"open\" type=\"button\">expand</button> <button id=\"close\" type=\"button\">collapse</button> \
<small id=\"shown\"></small></p><div id=\"rows\">",
        report.instances.len()
    );
    let mut tests = Vec::new();
    let mut strings = Strings::default();
    for i in &report.instances {
        instance_row(&mut s, i, &mut tests, &mut strings);
    }
    let _ = writeln!(
        s,
        "</div></section><script type=\"application/json\" id=\"tests-data\">{}</script><script>{SCRIPT}</script></body></html>",
        script_json(&serde_json::json!([strings.list, tests]))
    );
    s
}

/// A chart of the per-family Δ (B − A), bars up for gains and down for losses.
fn delta_chart(c: &Comparison) -> String {
    let rows: Vec<(String, f64)> = c
        .families
        .iter()
        .filter_map(|f| f.delta.map(|d| (f.family.as_str().to_owned(), d)))
        .chain(std::iter::once(("AVG".to_owned(), c.avg.2)))
        .collect();
    let span = rows
        .iter()
        .map(|r| r.1.abs())
        .fold(1.0_f64, f64::max)
        .min(100.0);
    let (up, down) = (format!("+{}", score2(span)), format!("−{}", score2(span)));
    // The axis labels are right-aligned at `left - 4`: the margin holds the widest of them
    // (11 px digits and signs are under 7 px each), sign included.
    let widest = up.chars().count().max(down.chars().count()) as f64;
    let (half, top, bw, gap) = (80.0, 16.0, 56.0, 24.0);
    let left = (8.0 + 7.0 * widest).max(40.0);
    let w = left + rows.len() as f64 * (bw + gap) + gap;
    let zero = top + half;
    let mut s = format!(
        "<svg id=\"delta-chart\" role=\"img\" aria-label=\"per-family delta\" width=\"{w}\" height=\"{}\" viewBox=\"0 0 {w} {}\">",
        2.0 * half + top + 30.0,
        2.0 * half + top + 30.0
    );
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{left}\" x2=\"{w}\" y1=\"{zero}\" y2=\"{zero}\"/>\
<text x=\"{}\" y=\"{}\" text-anchor=\"end\">0</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{up}</text>\
<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{down}</text>",
        left - 4.0,
        zero + 4.0,
        left - 4.0,
        top + 4.0,
        left - 4.0,
        zero + half + 4.0,
    );
    for (i, (name, d)) in rows.iter().enumerate() {
        let x = left + gap + i as f64 * (bw + gap);
        let bh = d.abs().min(span) / span * half;
        let (y, class) = if *d >= 0.0 {
            (zero - bh, "pos")
        } else {
            (zero, "neg")
        };
        let label_y = if *d >= 0.0 { y - 3.0 } else { y + bh + 12.0 };
        let _ = write!(
            s,
            "<rect class=\"{class}\" data-family=\"{n}\" data-delta=\"{v}\" x=\"{x}\" y=\"{y}\" width=\"{bw}\" height=\"{bh}\"/>\
<text x=\"{}\" y=\"{label_y}\" text-anchor=\"middle\">{v}</text><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{n}</text>",
            x + bw / 2.0,
            x + bw / 2.0,
            zero + half + 24.0,
            n = escape(name),
            v = format_args!("{:+.2}", round2(*d)),
        );
    }
    s.push_str("</svg>");
    s
}

/// Improved / tied / regressed as one stacked bar, as in the paper's Figure 4.
fn paired_bar(c: &Comparison) -> String {
    let total = c.paired.max(1) as f64;
    let w = 480.0;
    let parts = [
        ("improved", c.improved.len(), "pos"),
        ("tied", c.tied, "bar"),
        ("regressed", c.regressed.len(), "neg"),
    ];
    let mut s = format!(
        "<svg id=\"paired-chart\" role=\"img\" aria-label=\"paired outcomes\" width=\"{w}\" height=\"48\" viewBox=\"0 0 {w} 48\">"
    );
    let mut x = 0.0;
    for (name, n, class) in parts {
        let pw = n as f64 / total * w;
        if n > 0 {
            let _ = write!(
                s,
                "<rect class=\"{class}\" data-part=\"{name}\" data-count=\"{n}\" x=\"{x}\" y=\"0\" width=\"{pw}\" height=\"24\"/>\
<text x=\"{}\" y=\"40\" text-anchor=\"middle\">{name} {n}</text>",
                x + pw / 2.0
            );
        }
        x += pw;
    }
    s.push_str("</svg>");
    s
}

/// Two runs side by side as one HTML page.
pub fn render_comparison_html(c: &Comparison) -> String {
    let fmt = |x: Option<f64>| x.map(score2).unwrap_or_else(|| "-".into());
    let mut s = String::with_capacity(8192);
    head(&mut s, &format!("beyondswe compare {} vs {}", c.a, c.b));
    let _ = write!(
        s,
        "<h1>Run <code id=\"run-a\">{}</code> against <code id=\"run-b\">{}</code></h1>",
        escape(&c.a),
        escape(&c.b)
    );
    let _ = write!(
        s,
        "<section id=\"families\"><h2>Family scores</h2><table id=\"family-table\"><thead><tr><th>family</th>\
<th>{}</th><th>{}</th><th>Δ</th></tr></thead><tbody>",
        escape(&c.a),
        escape(&c.b)
    );
    for f in &c.families {
        let _ = write!(
            s,
            "<tr data-family=\"{n}\"><th>{n}</th><td class=\"n\" data-k=\"a\">{}</td><td class=\"n\" data-k=\"b\">{}</td>\
<td class=\"n\" data-k=\"delta\">{}</td></tr>",
            fmt(f.a),
            fmt(f.b),
            f.delta
                .map(|d| format!("{:+.2}", round2(d)))
                .unwrap_or_else(|| "-".into()),
            n = escape(f.family.as_str())
        );
    }
    let _ = write!(
        s,
        "<tr class=\"avg\" data-family=\"AVG\"><th>AVG</th><td class=\"n\" data-k=\"a\">{}</td><td class=\"n\" data-k=\"b\">{}</td>\
<td class=\"n\" data-k=\"delta\">{:+.2}</td></tr></tbody></table>",
        score2(c.avg.0),
        score2(c.avg.1),
        round2(c.avg.2)
    );
    s.push_str(&delta_chart(c));
    s.push_str("</section>");
    let _ = write!(
        s,
        "<section id=\"paired\"><h2>Paired instances</h2><p>graded in both: <b data-k=\"paired\">{}</b>; \
improved <b data-k=\"improved\">{}</b>, tied <b data-k=\"tied\">{}</b>, regressed <b data-k=\"regressed\">{}</b></p>",
        c.paired,
        c.improved.len(),
        c.tied,
        c.regressed.len()
    );
    s.push_str(&paired_bar(c));
    for (title, id, items) in [
        ("Improved", "improved", &c.improved),
        ("Regressed", "regressed", &c.regressed),
    ] {
        let _ = write!(s, "<h3>{title} ({})</h3><ul id=\"{id}\">", items.len());
        for i in items {
            let _ = write!(s, "<li><code>{}</code></li>", escape(i));
        }
        s.push_str("</ul>");
    }
    s.push_str("</section></body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_leaves_no_markup() {
        let nasty = "t::x[<script>alert(1)</script>\"' onerror=x &amp;]";
        let e = escape(nasty);
        assert!(!e.contains('<') && !e.contains('>') && !e.contains('"') && !e.contains('\''));
        assert_eq!(
            e,
            "t::x[&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39; onerror=x &amp;amp;]"
        );
    }

    #[test]
    fn script_data_cannot_close_its_element() {
        let v = serde_json::json!(["</script><script>alert(1)</script>", "a&b>c", "\u{2028}"]);
        let text = script_json(&v);
        assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'));
        let back: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(back, v);
    }

    #[test]
    fn histogram_bins_and_marks() {
        let svg = doc2repo_histogram(&[0.0, 0.6, 0.9, 0.94, 1.0, 1.0]);
        assert!(svg.contains("data-bin=\"0\" data-count=\"1\""), "{svg}");
        assert!(svg.contains("data-bin=\"60\" data-count=\"1\""));
        assert!(svg.contains("data-bin=\"90\" data-count=\"2\""));
        assert!(svg.contains("data-bin=\"95\" data-count=\"2\""));
        assert!(svg.contains("≥90%") && svg.contains(">100%<"));
    }
}
