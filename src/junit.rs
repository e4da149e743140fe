//! JUnit XML → per-test outcomes, with a streaming quick-xml reader.
//!
//! Tolerates what pytest, and other tools, write: a bare `<testsuite>` root or `<testsuites>`,
//! nested suites, several status children per case, CDATA. Used by the grader to cross-check the
//! recorder's results against pytest's own report.

use quick_xml::Reader;
use quick_xml::events::Event;

/// How one test case ended, as JUnit says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum JunitOutcome {
    Passed,
    Skipped,
    Failed,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JunitCase {
    pub classname: String,
    pub name: String,
    pub outcome: JunitOutcome,
}

impl JunitCase {
    /// `classname.name`, the key pytest ids are compared with.
    pub fn key(&self) -> String {
        if self.classname.is_empty() {
            self.name.clone()
        } else {
            format!("{}.{}", self.classname, self.name)
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("JUnit XML at byte {position}: {message}")]
pub struct JunitError {
    pub position: u64,
    pub message: String,
}

fn read_case(reader: &Reader<&[u8]>, e: &quick_xml::events::BytesStart<'_>) -> JunitCase {
    let mut case = JunitCase {
        classname: String::new(),
        name: String::new(),
        outcome: JunitOutcome::Passed,
    };
    for attr in e.attributes().flatten() {
        let value = attr
            .decode_and_unescape_value(reader.decoder())
            .map(|v| v.into_owned())
            .unwrap_or_default();
        match attr.key.as_ref() {
            b"classname" => case.classname = value,
            b"name" => case.name = value,
            _ => {}
        }
    }
    case
}

/// Every `<testcase>` in the document, in order.
pub fn parse(xml: &[u8]) -> Result<Vec<JunitCase>, JunitError> {
    let mut reader = Reader::from_reader(xml);
    reader.config_mut().trim_text(true);
    let mut buf = Vec::new();
    let mut cases = Vec::new();
    let mut current: Option<JunitCase> = None;
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|e| JunitError {
            position: reader.buffer_position(),
            message: e.to_string(),
        })?;
        match event {
            Event::Start(e) if e.name().as_ref() == b"testcase" => {
                if let Some(done) = current.replace(read_case(&reader, &e)) {
                    cases.push(done);
                }
            }
            Event::Empty(e) if e.name().as_ref() == b"testcase" => {
                // `<testcase/>` has no children: it passed.
                if let Some(done) = current.take() {
                    cases.push(done);
                }
                cases.push(read_case(&reader, &e));
            }
            Event::Start(e) | Event::Empty(e) => {
                if let Some(case) = current.as_mut() {
                    let outcome = match e.name().as_ref() {
                        b"failure" => Some(JunitOutcome::Failed),
                        b"error" => Some(JunitOutcome::Error),
                        b"skipped" => Some(JunitOutcome::Skipped),
                        _ => None,
                    };
                    if let Some(o) = outcome {
                        case.outcome = case.outcome.max(o);
                    }
                }
            }
            Event::End(e) if e.name().as_ref() == b"testcase" => {
                if let Some(done) = current.take() {
                    cases.push(done);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if let Some(done) = current.take() {
        cases.push(done);
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_report() {
        let xml = br#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.test_calc" name="test_add[caf\xe9 case]" time="0.001" />
<testcase classname="tests.test_calc.TestOps" name="test_sub"><failure message="assert">trace &lt;x&gt;</failure></testcase>
<testcase classname="tests.unit.test_more" name="test_skip"><skipped type="pytest.skip" message="no"/></testcase>
<testcase classname="t" name="teardown"><system-out><![CDATA[<testcase name="fake"/>]]></system-out><error message="e"/></testcase>
</testsuite></testsuites>"#;
        let cases = parse(xml).unwrap();
        assert_eq!(cases.len(), 4);
        assert_eq!(cases[0].key(), r"tests.test_calc.test_add[caf\xe9 case]");
        assert_eq!(cases[0].outcome, JunitOutcome::Passed);
        assert_eq!(cases[1].outcome, JunitOutcome::Failed);
        assert_eq!(cases[2].outcome, JunitOutcome::Skipped);
        assert_eq!(cases[3].outcome, JunitOutcome::Error);
    }

    #[test]
    fn bare_testsuite_and_garbage() {
        let cases =
            parse(br#"<testsuite><testcase classname="a" name="b"></testcase></testsuite>"#)
                .unwrap();
        assert_eq!(cases.len(), 1);
        assert!(parse(b"<testsuite><testcase name='x'></testsuite>").is_err());
    }
}
