//! Reading the result channel: the recorder's JSON and pytest's JUnit report, matched to the
//! dataset's test ids.
//!
//! Matching is exact first, then on the decoded form (pytest escapes non-ASCII characters in node
//! ids as `\xe9`, `\u2212`, …, and datasets are not consistent about it). A required test counts as
//! passed only if the recorder says so, the JUnit report agrees, and it was collected at all.

use super::verdict::TestOutcome;
use crate::junit::{JunitCase, JunitOutcome};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

/// The runner's results file (`adapters/pytest_runner.py`).
#[derive(Debug, Clone, Deserialize)]
pub struct RunnerResults {
    pub format: String,
    pub nonce: String,
    /// `None` in a partial file written while the tests were still running.
    pub exit_code: Option<i64>,
    pub finished: bool,
    pub tests: BTreeMap<String, RunnerTest>,
    #[serde(default)]
    pub collect_errors: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RunnerTest {
    pub outcome: String,
    #[serde(default)]
    pub message: String,
}

pub(crate) const RESULTS_FORMAT: &str = "beyondswe-pytest-results-1";

impl RunnerResults {
    /// Parses the file and checks that it is the one the grader asked for (format and nonce).
    pub fn parse(bytes: &[u8], nonce: &str) -> Result<RunnerResults, String> {
        let r: RunnerResults =
            serde_json::from_slice(bytes).map_err(|e| format!("unreadable results file: {e}"))?;
        if r.format != RESULTS_FORMAT {
            return Err(format!("unexpected results format `{}`", r.format));
        }
        if r.nonce != nonce {
            return Err("results file carries another run's nonce (planted?)".into());
        }
        Ok(r)
    }
}

/// Decodes pytest's escapes (`\xHH`, `\uHHHH`, `\UHHHHHHHH`, `\\`, `\n`, `\t`, `\r`).
pub fn unescape(id: &str) -> String {
    if !id.contains('\\') {
        return id.to_owned();
    }
    let mut out = String::with_capacity(id.len());
    let mut chars = id.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let hex =
            |n: usize, chars: &mut std::iter::Peekable<std::str::Chars<'_>>| -> Option<char> {
                let s: String = chars.clone().take(n).collect();
                if s.len() == n && s.chars().all(|c| c.is_ascii_hexdigit()) {
                    for _ in 0..n {
                        chars.next();
                    }
                    char::from_u32(u32::from_str_radix(&s, 16).ok()?)
                } else {
                    None
                }
            };
        match chars.peek().copied() {
            Some('x') => {
                chars.next();
                match hex(2, &mut chars) {
                    Some(ch) => out.push(ch),
                    None => out.push_str("\\x"),
                }
            }
            Some('u') => {
                chars.next();
                match hex(4, &mut chars) {
                    Some(ch) => out.push(ch),
                    None => out.push_str("\\u"),
                }
            }
            Some('U') => {
                chars.next();
                match hex(8, &mut chars) {
                    Some(ch) => out.push(ch),
                    None => out.push_str("\\U"),
                }
            }
            Some('\\') => {
                chars.next();
                out.push('\\');
            }
            Some('n') => {
                chars.next();
                out.push('\n');
            }
            Some('t') => {
                chars.next();
                out.push('\t');
            }
            Some('r') => {
                chars.next();
                out.push('\r');
            }
            _ => out.push('\\'),
        }
    }
    out
}

/// The JUnit key of a pytest node id: `dir/file.py::Class::test[p]` → `dir.file.Class.test[p]`.
pub fn junit_key(node_id: &str) -> String {
    let (file, rest) = node_id.split_once("::").unwrap_or((node_id, ""));
    let module = file.strip_suffix(".py").unwrap_or(file).replace('/', ".");
    if rest.is_empty() {
        return module;
    }
    // Only the `::` separators outside the parameter brackets become dots.
    let (names, params) = match rest.find('[') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    format!("{module}.{}{params}", names.replace("::", "."))
}

fn from_runner(outcome: &str) -> TestOutcome {
    match outcome {
        "passed" | "xpassed" => TestOutcome::Passed,
        "failed" => TestOutcome::Failed,
        "skipped" => TestOutcome::Skipped,
        "xfailed" => TestOutcome::Xfailed,
        "disputed" => TestOutcome::Disputed,
        _ => TestOutcome::Error,
    }
}

/// Both views of one run, indexed for matching.
pub struct Matcher<'a> {
    exact: HashMap<&'a str, &'a RunnerTest>,
    decoded: HashMap<String, &'a RunnerTest>,
    junit: HashMap<String, JunitOutcome>,
}

impl<'a> Matcher<'a> {
    pub fn new(results: &'a RunnerResults, junit: &[JunitCase]) -> Matcher<'a> {
        let mut junit_map: HashMap<String, JunitOutcome> = HashMap::new();
        for case in junit {
            let e = junit_map
                .entry(unescape(&case.key()))
                .or_insert(case.outcome);
            *e = (*e).max(case.outcome);
        }
        Matcher {
            exact: results.tests.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            decoded: results
                .tests
                .iter()
                .map(|(k, v)| (unescape(k), v))
                .collect(),
            junit: junit_map,
        }
    }

    /// The outcome of one required id.
    pub fn outcome(&self, id: &str) -> TestOutcome {
        let decoded = unescape(id);
        let Some(test) = self
            .exact
            .get(id)
            .copied()
            .or_else(|| self.decoded.get(&decoded).copied())
        else {
            return TestOutcome::NotRun;
        };
        let recorded = from_runner(&test.outcome);
        if recorded != TestOutcome::Passed {
            return recorded;
        }
        match self.junit.get(&unescape(&junit_key(id))) {
            Some(JunitOutcome::Passed) => TestOutcome::Passed,
            _ => TestOutcome::Disputed,
        }
    }

    /// Doc2Repo: how many recorded tests passed in both views.
    pub fn passed_in_both(&self) -> u64 {
        self.exact
            .iter()
            .filter(|(id, t)| {
                from_runner(&t.outcome) == TestOutcome::Passed
                    && self.junit.get(&unescape(&junit_key(id))) == Some(&JunitOutcome::Passed)
            })
            .count() as u64
    }

    /// Doc2Repo after a timeout: recorded passes only (there is no JUnit report to compare).
    pub fn passed_recorded(&self) -> u64 {
        self.exact
            .values()
            .filter(|t| from_runner(&t.outcome) == TestOutcome::Passed)
            .count() as u64
    }

    pub fn collected(&self) -> u64 {
        self.exact.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescaping() {
        assert_eq!(unescape(r"test_add[caf\xe9 case]"), "test_add[café case]");
        assert_eq!(unescape(r"t[\u2212]"), "t[−]");
        assert_eq!(unescape(r"t[\U0001f600]"), "t[😀]");
        assert_eq!(unescape(r"a\\b\q"), r"a\b\q");
    }

    #[test]
    fn junit_keys() {
        assert_eq!(
            junit_key("tests/unit/test_more.py::test_x"),
            "tests.unit.test_more.test_x"
        );
        assert_eq!(
            junit_key("tests/test_calc.py::TestOps::test_sub"),
            "tests.test_calc.TestOps.test_sub"
        );
        assert_eq!(junit_key("t.py::test[a::b.py]"), "t.test[a::b.py]");
    }

    #[test]
    fn matching_requires_both_views() {
        let results: RunnerResults = serde_json::from_value(serde_json::json!({
            "format": RESULTS_FORMAT, "nonce": "n", "exit_code": 0, "finished": true,
            "tests": {
                "tests/t.py::test_a[caf\\xe9]": {"outcome": "passed"},
                "tests/t.py::test_b": {"outcome": "passed"},
                "tests/t.py::test_c": {"outcome": "skipped"},
            }
        }))
        .unwrap();
        let junit = vec![
            JunitCase {
                classname: "tests.t".into(),
                name: "test_a[caf\\xe9]".into(),
                outcome: JunitOutcome::Passed,
            },
            JunitCase {
                classname: "tests.t".into(),
                name: "test_b".into(),
                outcome: JunitOutcome::Failed,
            },
        ];
        let m = Matcher::new(&results, &junit);
        assert_eq!(m.outcome("tests/t.py::test_a[café]"), TestOutcome::Passed);
        assert_eq!(m.outcome("tests/t.py::test_b"), TestOutcome::Disputed);
        assert_eq!(m.outcome("tests/t.py::test_c"), TestOutcome::Skipped);
        assert_eq!(m.outcome("tests/t.py::test_missing"), TestOutcome::NotRun);
        assert_eq!(m.passed_in_both(), 1);
        assert!(RunnerResults::parse(&serde_json::to_vec(&serde_json::json!({"format": RESULTS_FORMAT, "nonce": "x", "exit_code": 0, "finished": true, "tests": {}})).unwrap(), "n").is_err());
    }
}
