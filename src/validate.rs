//! `validate`: every problem in a dataset (JSONL file or Harbor tasks directory), not just the first.
//!
//! Checks required fields per family, duplicate ids, test-id lists, that patches parse as unified
//! diffs, Doc2Repo suites and their sizes, images, and gold patches that the restore step would
//! otherwise reset. The dataset is read through `dataset::Source` and repeated ids are found by
//! `dataset::Seen`, as loading and conversion do; unlike them, validation reports every bad item
//! and goes on. It reads only; it never changes a file.

use crate::convert::{check_dir_name, find_test_suite, suite_name_problem};
use crate::dataset::{DatasetError, Item, Location, Seen, Source};
use crate::harbor::paths;
use crate::patch;
use crate::record::{Family, JsonlError, Record, RecordError};
use crate::restore_rules;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How bad a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The record cannot be converted or graded as it is; `validate` exits non-zero.
    Error,
    /// The record can be used, but part of it will not work as meant (e.g. a gold patch the
    /// restore step would reset, or a task Harbor's oracle agent cannot run).
    Warning,
}

/// One finding.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    /// `file:line` for JSONL, the task directory for Harbor.
    pub location: String,
    /// The record's `instance_id`; `None` when the line or task could not be read as a record.
    pub instance: Option<String>,
    /// Whether it stops the record from being used.
    pub severity: Severity,
    /// The record field at fault (e.g. `test_patch`); `None` for a problem with no one field,
    /// such as a missing file in a task directory.
    pub field: Option<String>,
    /// What is wrong, for a person to read.
    pub message: String,
}

/// Everything `validate` found in one dataset.
#[derive(Debug, Default, Serialize)]
pub struct ValidationReport {
    /// Records (JSONL lines or task directories) looked at, readable or not.
    pub records: usize,
    /// Every problem found, in dataset order.
    pub problems: Vec<Problem>,
}

impl ValidationReport {
    /// How many problems are errors.
    pub fn errors(&self) -> usize {
        self.problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count()
    }

    /// How many problems are warnings.
    pub fn warnings(&self) -> usize {
        self.problems.len() - self.errors()
    }
}

/// Where a Doc2Repo suite is looked for.
#[derive(Debug, Clone, Copy)]
enum Suites<'a> {
    /// A directory of zips named by `test_suite` (JSONL datasets); `None` when not given.
    Dir(Option<&'a Path>),
    /// The zip inside a task directory, if it has one.
    Bundled(Option<&'a Path>),
}

/// Validates a JSONL file or a Harbor tasks directory: every item, readable or not. Doc2Repo
/// suites are the zips a task directory bundles, or for JSONL the zips in `test_suites` (not
/// checked when `None`). Only a dataset that cannot be read at all is an error.
pub fn validate_path(
    path: &Path,
    test_suites: Option<&Path>,
) -> Result<ValidationReport, DatasetError> {
    let mut report = ValidationReport::default();
    let mut seen = Seen::new();
    // Task directory name → (the id that has it, where): ids that differ only in case (or in
    // what a directory name cannot hold) would be written to one task directory.
    let mut dir_names: HashMap<String, (String, String)> = HashMap::new();
    for item in Source::open(path)? {
        let Item { location, entry } = item?;
        report.records += 1;
        let at = location.to_string();
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                report.problems.push(unreadable(&at, &err));
                continue;
            }
        };
        let record = &entry.record;
        if let Err(duplicate) = seen.check(record.instance_id(), &location) {
            report.problems.push(problem(
                &at,
                Some(record),
                Severity::Error,
                Some("instance_id"),
                duplicate.to_string(),
            ));
        } else {
            let id = record.instance_id();
            match dir_names.entry(crate::harbor::task_dir_name(id)) {
                std::collections::hash_map::Entry::Occupied(e) if e.get().0 != id => {
                    let (other, other_at) = e.get();
                    report.problems.push(problem(
                        &at,
                        Some(record),
                        Severity::Error,
                        Some("instance_id"),
                        format!(
                            "`{}` and `{}` ({other_at}) differ only in case or in characters a \
                             directory name cannot hold: both would be the task directory `{}`",
                            crate::text::one_line(id),
                            crate::text::one_line(other),
                            e.key()
                        ),
                    ));
                }
                std::collections::hash_map::Entry::Occupied(_) => {}
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert((id.to_owned(), at.clone()));
                }
            }
        }
        match &location {
            Location::TaskDir(dir) => {
                let suites = Suites::Bundled(entry.test_suite_zip.as_deref());
                report.problems.extend(check_record(record, &at, suites));
                check_task_files(dir, &at, record, &mut report.problems);
            }
            Location::Line { .. } | Location::Row { .. } => {
                let suites = Suites::Dir(test_suites);
                report.problems.extend(check_record(record, &at, suites));
            }
        }
    }
    Ok(report)
}

/// A line or task directory that could not be read as a record.
fn unreadable(location: &str, err: &DatasetError) -> Problem {
    let (field, message) = match err {
        DatasetError::Jsonl(err) => (
            match err {
                JsonlError::Record {
                    source: RecordError::Field { field, .. },
                    ..
                } => Some(field.clone()),
                _ => None,
            },
            line_message(err),
        ),
        DatasetError::Parquet(crate::dataset::ParquetError::Row { source, .. }) => (
            match source {
                RecordError::Field { field, .. } => Some(field.clone()),
                RecordError::NotAnObject { .. } => None,
            },
            source.to_string(),
        ),
        other => (None, other.to_string()),
    };
    Problem {
        location: location.to_owned(),
        instance: None,
        severity: Severity::Error,
        field,
        message,
    }
}

fn line_message(err: &JsonlError) -> String {
    match err {
        JsonlError::Syntax { message, start, .. } => {
            format!("not valid JSON: {message}; the line starts with {start}")
        }
        JsonlError::Record { source, .. } => source.to_string(),
        JsonlError::Io(e) => e.source.to_string(),
        JsonlError::LineTooLong { line, .. } => crate::record::line_too_long_message(*line),
    }
}

/// The files Harbor needs in a task directory beside the record: the verifier and instruction
/// (errors), the oracle's script and the environment (warnings).
fn check_task_files(dir: &Path, location: &str, record: &Record, out: &mut Vec<Problem>) {
    for (rel, what) in [
        (paths::TEST_SH, "Harbor runs it to verify"),
        (paths::INSTRUCTION, "Harbor requires it"),
    ] {
        if !dir.join(rel).is_file() {
            out.push(problem(
                location,
                Some(record),
                Severity::Error,
                None,
                format!("{rel} is missing ({what})"),
            ));
        }
    }
    if !dir.join(paths::SOLVE_SH).is_file() {
        out.push(problem(
            location,
            Some(record),
            Severity::Warning,
            None,
            format!(
                "{} is missing: Harbor's oracle agent cannot run this task (0.26: `Solution script not found`, an error trial; 0.1.x: no reward){}",
                paths::SOLVE_SH,
                if record.family() == Family::Doc2Repo {
                    "; convert with --solutions DIR holding a reference repository"
                } else {
                    ""
                }
            ),
        ));
    }
    if !dir.join(paths::ENVIRONMENT).is_dir() {
        out.push(problem(
            location,
            Some(record),
            Severity::Warning,
            None,
            "environment/ is missing (Harbor 0.1.x then treats the task as invalid)".into(),
        ));
    }
}

fn problem(
    location: &str,
    record: Option<&Record>,
    severity: Severity,
    field: Option<&str>,
    message: String,
) -> Problem {
    Problem {
        location: location.to_owned(),
        instance: record.map(|r| r.instance_id().to_owned()),
        severity,
        field: field.map(str::to_owned),
        message,
    }
}

/// The problems of one record, as they are found.
struct Findings<'a> {
    location: &'a str,
    record: &'a Record,
    out: Vec<Problem>,
}

impl Findings<'_> {
    fn push(&mut self, severity: Severity, field: &str, message: String) {
        let p = problem(
            self.location,
            Some(self.record),
            severity,
            Some(field),
            message,
        );
        self.out.push(p);
    }

    fn error(&mut self, field: &str, message: String) {
        self.push(Severity::Error, field, message);
    }

    fn warning(&mut self, field: &str, message: String) {
        self.push(Severity::Warning, field, message);
    }
}

/// Every problem of one record.
fn check_record(record: &Record, location: &str, suites: Suites<'_>) -> Vec<Problem> {
    let mut f = Findings {
        location,
        record,
        out: Vec::new(),
    };
    check_identity(&mut f);
    if record.task().family == Family::Doc2Repo {
        check_doc2repo_fields(&mut f, suites);
    } else {
        check_issue_fields(&mut f);
    }
    check_test_ids(&mut f);
    check_patches(&mut f, suites);
    check_restore_overlap(&mut f);
    f.out
}

/// Family, id, image and suite name: what every record needs.
fn check_identity(f: &mut Findings<'_>) {
    let record = f.record;
    let task = record.task();
    match (&task.spelling, task.family) {
        (None, _) => f.error("task", "missing: cannot tell the family (expected CrossRepo, DomainFix, DepMigrate or Doc2Repo)".into()),
        (Some(s), Family::Unknown) => f.error("task", format!("unknown task spelling `{s}` (expected CrossRepo, DomainFix, DepMigrate or Doc2Repo in any case, with or without `-`/`_`)")),
        _ => {}
    }
    if let Err(e) = check_dir_name(record.instance_id()) {
        f.error("instance_id", e.to_string());
    }
    if record.image().is_none() {
        f.error("image", "missing: no `image` or `image_url`".into());
    }
    if let Some(name) = record.test_suite()
        && let Some(reason) = suite_name_problem(name)
    {
        f.error(
            "test_suite",
            format!("`{name}` is not a plain file name: {reason}"),
        );
    }
}

/// A Doc2Repo record: its specification, suite size and suite.
fn check_doc2repo_fields(f: &mut Findings<'_>, suites: Suites<'_>) {
    let record = f.record;
    if record.repo_document().is_none() {
        f.error(
            "REPO_DOCUMENT_CONTENT",
            "missing: a Doc2Repo record needs its specification".into(),
        );
    }
    match record.test_suite_num() {
        Some(n) if n > 0 => {}
        Some(_) => f.error(
            "test_suite_num",
            "must be greater than 0 (it is the score's denominator)".into(),
        ),
        None => f.error(
            "test_suite_num",
            "missing: the number of tests in the hidden suite".into(),
        ),
    }
    check_suite(f, suites);
}

/// The Doc2Repo suite zip: found where the dataset says, and readable.
fn check_suite(f: &mut Findings<'_>, suites: Suites<'_>) {
    let record = f.record;
    match suites {
        Suites::Dir(Some(dir)) => match find_test_suite(record, dir) {
            Some(zip) => {
                if let Some(msg) = check_zip(&zip) {
                    f.error("test_suite", msg);
                }
            }
            // A name that is not a plain file name is reported by check_identity.
            None if record
                .test_suite()
                .is_some_and(|n| suite_name_problem(n).is_some()) => {}
            None => f.error(
                "test_suite",
                format!(
                    "`{}` not found in {}",
                    record.test_suite().unwrap_or("<missing>"),
                    dir.display()
                ),
            ),
        },
        Suites::Dir(None) => {
            if record.test_suite().is_none() {
                f.error(
                    "test_suite",
                    "missing: the file name of the suite zip".into(),
                );
            }
        }
        Suites::Bundled(Some(zip)) => {
            if let Some(msg) = check_zip(zip) {
                f.error("test_suite", msg);
            }
        }
        Suites::Bundled(None) => f.error(
            "test_suite",
            format!("{} is missing", paths::TEST_SUITE_ZIP),
        ),
    }
}

/// An issue record (CrossRepo, DomainFix, DepMigrate): base commit, statement, tests to fix.
fn check_issue_fields(f: &mut Findings<'_>) {
    let record = f.record;
    if record.base_commit().is_none() {
        f.error(
            "base_commit",
            "missing: no `base_commit`, `pre_agent_commit_id`, `parent_commit` or `base.sha`"
                .into(),
        );
    }
    if record
        .problem_statement()
        .is_none_or(|s| s.trim().is_empty())
    {
        f.error("problem_statement", "missing or empty".into());
    }
    if record.fail_to_pass().is_empty() {
        f.error(
            "FAIL_TO_PASS",
            "no test ids: the instance could never be resolved".into(),
        );
    }
}

/// Test ids with line breaks (errors), then ids that look like several joined (warnings).
fn check_test_ids(f: &mut Findings<'_>) {
    let record = f.record;
    let mut warnings: Vec<(&str, String)> = Vec::new();
    for (field, ids) in [
        ("FAIL_TO_PASS", record.fail_to_pass()),
        ("PASS_TO_PASS", record.pass_to_pass()),
    ] {
        if let Some(id) = ids.iter().find(|i| i.contains('\n')) {
            f.error(field, format!("test id contains a line break: {id:?}"));
        }
        if let Some(message) = test_ids_shape(record.raw().get(field)) {
            f.error(field, message);
        }
        if let Some(raw) = record.raw().get(field).and_then(|v| v.as_str())
            && ids.len() == 1
            && raw.contains(", ")
            && !raw.trim_start().starts_with('[')
        {
            warnings.push((
                field,
                format!(
                    "one id that looks like several joined by commas: {}",
                    crate::record::snippet(&raw.into())
                ),
            ));
        }
    }
    for (field, message) in warnings {
        f.warning(field, message);
    }
}

/// What is wrong with the shape of a FAIL_TO_PASS / PASS_TO_PASS value, if anything: text that
/// starts like a JSON list but is not one (`"[[[not json"`, which the official reader would take
/// as one id), and items that are not ids (`[1, 2, 3]`, nested lists, objects): no pytest node
/// id is a number.
fn test_ids_shape(raw: Option<&serde_json::Value>) -> Option<String> {
    use serde_json::Value;
    let items: Vec<Value> = match raw? {
        Value::String(text) => {
            let t = text.trim();
            if !t.starts_with('[') {
                return None;
            }
            match serde_json::from_str::<Value>(t) {
                Ok(Value::Array(items)) => items,
                Ok(_) | Err(_) => {
                    return Some(format!(
                        "starts like a JSON list but is not one: {}",
                        crate::record::snippet(&raw?.clone())
                    ));
                }
            }
        }
        Value::Array(items) => items.clone(),
        _ => return None,
    };
    items
        .iter()
        .enumerate()
        .find(|(_, v)| !matches!(v, Value::String(_) | Value::Null))
        .map(|(i, v)| {
            format!(
                "item {} is {}, not a test id (a pytest node id is a string such as \
                 `tests/test_x.py::test_y`)",
                i + 1,
                crate::record::snippet(v)
            )
        })
}

/// The gold and test patches parse; a missing gold patch is said.
fn check_patches(f: &mut Findings<'_>, suites: Suites<'_>) {
    let record = f.record;
    let gold = record.gold_patch();
    if let Some(text) = gold
        && let Err(e) = patch::parse(text)
    {
        let field = if record
            .fields()
            .patch
            .as_deref()
            .is_some_and(|p| !p.trim().is_empty())
        {
            "patch"
        } else {
            "fix_patch"
        };
        f.error(field, format!("not a unified diff: {e}"));
    }
    if let Some(text) = record.f2p_patch()
        && let Err(e) = patch::parse(text)
    {
        f.error("f2p_patch", format!("not a unified diff: {e}"));
    }
    let family = record.task().family;
    if family.is_issue_task() && gold.is_none() {
        f.warning(
            "patch",
            "no gold patch: `grade --gold` cannot check this instance".into(),
        );
    }
    if family == Family::Doc2Repo && gold.is_none() && matches!(suites, Suites::Dir(_)) {
        f.warning(
            "patch",
            "no reference solution: `grade --gold` cannot check this instance, and its Harbor task has no oracle unless `convert to-harbor --solutions DIR` supplies a repository".into(),
        );
    }
}

/// Paths the gold patch changes that the restore step covers (the grader keeps them).
fn check_restore_overlap(f: &mut Findings<'_>) {
    let (_, keep) = restore_rules::keep_paths(f.record);
    if !keep.is_empty() {
        f.warning(
            "patch",
            format!(
                "the gold patch changes {} that the restore step covers; the grader keeps {} as the submission leaves {}",
                keep.join(", "),
                if keep.len() == 1 { "it" } else { "them" },
                if keep.len() == 1 { "it" } else { "them" },
            ),
        );
    }
    debug_assert!(keep.iter().all(|p| restore_rules::is_covered(p)));
}

/// `None` if the zip opens and has at least one file, else why not.
fn check_zip(path: &Path) -> Option<String> {
    let file = match crate::files::open_input_io(path) {
        Ok(f) => f,
        Err(e) => return Some(crate::errors::io_message(path, &e)),
    };
    match zip::ZipArchive::new(file) {
        Ok(z) if z.is_empty() => Some(format!("{}: the zip is empty", path.display())),
        Ok(_) => None,
        Err(e) => Some(format!("{}: not a readable zip: {e}", path.display())),
    }
}

/// The problems as an aligned text table.
pub fn render_table(report: &ValidationReport) -> String {
    let rows: Vec<[String; 5]> = report
        .problems
        .iter()
        .map(|p| {
            [
                crate::text::one_line(&p.location).into_owned(),
                p.instance
                    .as_deref()
                    .map_or_else(|| "-".into(), |i| crate::text::one_line(i).into_owned()),
                match p.severity {
                    Severity::Error => "error".into(),
                    Severity::Warning => "warning".into(),
                },
                p.field.clone().unwrap_or_else(|| "-".into()),
                crate::text::one_line(&p.message).into_owned(),
            ]
        })
        .collect();
    let header = ["LOCATION", "INSTANCE", "SEVERITY", "FIELD", "PROBLEM"].map(String::from);
    let mut widths = [0usize; 4];
    for row in std::iter::once(&header).chain(rows.iter()) {
        for (w, cell) in widths.iter_mut().zip(row.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(rows.iter()) {
        for (i, cell) in row.iter().enumerate() {
            if i < 4 {
                out.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            } else {
                out.push_str(cell);
            }
        }
        out.push('\n');
    }
    out
}

/// Where a suites directory would be if the user gave one (used in hints).
pub fn suites_hint(path: &Path) -> PathBuf {
    path.parent().unwrap_or(Path::new(".")).join("test_suites")
}
