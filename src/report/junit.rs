//! A run as JUnit XML (`report --format junit`), for CI systems that show test reports: one
//! `<testsuite>` per task family, one `<testcase>` per graded attempt. A resolved attempt passes;
//! an unresolved one is a `<failure>` whose message is the reason and whose text lists the tests
//! that did not pass; a grading error is an `<error>`; an attempt a calibration left out of the
//! figures is `<skipped>`. Written with quick-xml, so every name and text is escaped.

use super::{InstanceReport, Report};
use crate::grade::{Outcome, TestOutcome};
use crate::record::Family;
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use std::collections::BTreeMap;

/// The report as a JUnit XML document.
pub fn render_junit(report: &Report) -> String {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    // Writing to a Vec cannot fail; the results are dropped for that reason alone.
    let _ = write(&mut w, report);
    let mut text = String::from_utf8(w.into_inner()).unwrap_or_default();
    text.push('\n');
    text
}

/// An attempt, with what it is in JUnit's terms.
type Graded<'a> = (&'a InstanceReport, Case<'a>);

/// What one attempt is in JUnit's terms.
enum Case<'a> {
    Passed,
    Failed { message: String, text: String },
    Error { message: String },
    Skipped { message: &'a str },
}

fn case(i: &InstanceReport) -> Case<'_> {
    if i.excluded {
        return Case::Skipped {
            message: "left out of the figures by the run's calibration (broken)",
        };
    }
    match i.verdict {
        Outcome::Resolved => Case::Passed,
        Outcome::Error => Case::Error {
            message: i.reason.as_str().to_owned(),
        },
        Outcome::Unresolved => {
            let message = match &i.suite {
                Some(s) => format!(
                    "{}: pass rate {:.4} ({} of {} tests)",
                    i.reason,
                    i.score,
                    s.passed,
                    if s.expected > 0 {
                        s.expected
                    } else {
                        s.collected
                    }
                ),
                None => i.reason.as_str().to_owned(),
            };
            let mut lines = Vec::new();
            let mut not_passed = |kind: &str, tests: &BTreeMap<String, TestOutcome>| {
                for (id, outcome) in tests {
                    if *outcome != TestOutcome::Passed {
                        lines.push(format!("{kind} {id}: {outcome}"));
                    }
                }
            };
            not_passed("FAIL_TO_PASS", &i.fail_to_pass);
            not_passed("PASS_TO_PASS", &i.pass_to_pass);
            if let Some(s) = &i.suite {
                not_passed("suite", &s.tests);
            }
            if let Some(ev) = &i.static_evidence {
                for h in &ev.hits {
                    lines.push(format!(
                        "static evidence: {} at {}:{}: {}",
                        h.kind, h.path, h.line, h.what
                    ));
                }
            }
            Case::Failed {
                message,
                text: lines.join("\n"),
            }
        }
    }
}

/// An attempt's grading time in seconds (0 when it recorded none).
fn seconds(i: &InstanceReport) -> f64 {
    i.timings.get("total").copied().unwrap_or(0.0)
}

/// How many of `cases` failed, erred and were skipped.
fn counts<'a, 'b: 'a>(cases: impl Iterator<Item = &'a Case<'b>>) -> (usize, usize, usize) {
    cases.fold((0, 0, 0), |(f, e, s), c| match c {
        Case::Failed { .. } => (f + 1, e, s),
        Case::Error { .. } => (f, e + 1, s),
        Case::Skipped { .. } => (f, e, s + 1),
        Case::Passed => (f, e, s),
    })
}

/// `<tag a="…" …>`, each value made [`xml_safe`] (quick-xml escapes it).
fn start<'a>(tag: &'a str, attrs: &[(&str, &str)]) -> BytesStart<'a> {
    let mut e = BytesStart::new(tag);
    for (k, v) in attrs {
        e.push_attribute((*k, xml_safe(v).as_ref()));
    }
    e
}

/// `s` with every character XML 1.0 cannot hold, even escaped (most C0 controls, lone
/// surrogates cannot occur in a `str`, U+FFFE and U+FFFF), as U+FFFD: a test id or a reason
/// from a hostile dataset must not make the document unreadable.
fn xml_safe(s: &str) -> std::borrow::Cow<'_, str> {
    let allowed = |c: char| {
        matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
            || c >= '\u{10000}'
    };
    if s.chars().all(allowed) {
        return s.into();
    }
    s.chars()
        .map(|c| if allowed(c) { c } else { '\u{FFFD}' })
        .collect::<String>()
        .into()
}

fn write(w: &mut Writer<Vec<u8>>, report: &Report) -> std::io::Result<()> {
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    // Each attempt's case is worked out once, for the counts and for its element.
    let mut by_family: BTreeMap<usize, (Family, Vec<Graded<'_>>)> = BTreeMap::new();
    for i in &report.instances {
        let order = Family::ALL.iter().position(|f| *f == i.family).unwrap_or(0);
        by_family
            .entry(order)
            .or_insert_with(|| (i.family, Vec::new()))
            .1
            .push((i, case(i)));
    }
    let all: Vec<&Graded<'_>> = by_family.values().flat_map(|(_, cases)| cases).collect();
    let (failures, errors, skipped) = counts(all.iter().map(|(_, c)| c));
    let total_time: f64 = all.iter().map(|(i, _)| seconds(i)).sum();
    let name = format!("beyondswe run {}", report.run.run_id);
    w.write_event(Event::Start(start(
        "testsuites",
        &[
            ("name", &name),
            ("tests", &all.len().to_string()),
            ("failures", &failures.to_string()),
            ("errors", &errors.to_string()),
            ("skipped", &skipped.to_string()),
            ("time", &format!("{total_time:.3}")),
        ],
    )))?;
    for (family, cases) in by_family.values() {
        let score = report
            .families
            .iter()
            .find(|f| f.family == *family)
            .map(|f| f.score);
        let time: f64 = cases.iter().map(|(i, _)| seconds(i)).sum();
        let (failures, errors, skipped) = counts(cases.iter().map(|(_, c)| c));
        let mut attrs = vec![
            ("name", family.as_str().to_owned()),
            ("tests", cases.len().to_string()),
            ("failures", failures.to_string()),
            ("errors", errors.to_string()),
            ("skipped", skipped.to_string()),
            ("time", format!("{time:.3}")),
        ];
        if let Some(t) = &report.finished_at {
            attrs.push(("timestamp", t.clone()));
        }
        let attrs: Vec<(&str, &str)> = attrs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        w.write_event(Event::Start(start("testsuite", &attrs)))?;
        let mut props = vec![
            ("grader", report.run.grader_version.clone()),
            ("dataset_hash", report.run.dataset_hash.clone()),
        ];
        if let Some(s) = score {
            props.push(("score", format!("{s:.2}")));
        }
        w.write_event(Event::Start(BytesStart::new("properties")))?;
        for (k, v) in &props {
            w.write_event(Event::Empty(start(
                "property",
                &[("name", k), ("value", v)],
            )))?;
        }
        w.write_event(Event::End(BytesEnd::new("properties")))?;
        for (i, c) in cases {
            testcase(w, family, i, c)?;
        }
        w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
    Ok(())
}

fn testcase(
    w: &mut Writer<Vec<u8>>,
    family: &Family,
    i: &InstanceReport,
    case: &Case<'_>,
) -> std::io::Result<()> {
    let name = if i.attempt > 1 {
        format!("{} (attempt {})", i.instance_id, i.attempt)
    } else {
        i.instance_id.clone()
    };
    let classname = format!("beyondswe.{}", family.as_str());
    let time = format!("{:.3}", seconds(i));
    let open = start(
        "testcase",
        &[("name", &name), ("classname", &classname), ("time", &time)],
    );
    match case {
        Case::Passed => {
            w.write_event(Event::Empty(open))?;
        }
        Case::Failed { message, text } => {
            w.write_event(Event::Start(open))?;
            let f = start("failure", &[("message", message), ("type", "unresolved")]);
            if text.is_empty() {
                w.write_event(Event::Empty(f))?;
            } else {
                w.write_event(Event::Start(f))?;
                w.write_event(Event::Text(BytesText::new(&xml_safe(text))))?;
                w.write_event(Event::End(BytesEnd::new("failure")))?;
            }
            w.write_event(Event::End(BytesEnd::new("testcase")))?;
        }
        Case::Error { message } => {
            w.write_event(Event::Start(open))?;
            w.write_event(Event::Empty(start(
                "error",
                &[("message", message), ("type", "grading_error")],
            )))?;
            w.write_event(Event::End(BytesEnd::new("testcase")))?;
        }
        Case::Skipped { message } => {
            w.write_event(Event::Start(open))?;
            w.write_event(Event::Empty(start("skipped", &[("message", message)])))?;
            w.write_event(Event::End(BytesEnd::new("testcase")))?;
        }
    }
    Ok(())
}
