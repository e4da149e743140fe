//! Which repository paths the grader's restore step resets, removes or protects.
//!
//! The rules are one table, `adapters/restore_rules.json`, read here and by the in-container
//! verifier (`adapters/beyondswe_verifier/verify.py`, which applies them). This side lets `validate` and the
//! converters see ahead of time which paths a gold patch changes that the rules cover, so those
//! paths can be kept instead of reset. A test runs both classifiers over the same paths.

use crate::adapters::RESTORE_RULES_JSON;
use crate::patch;
use crate::record::{Family, Record};
use serde::Deserialize;
use std::sync::OnceLock;

/// The table (field names as in the JSON file).
#[derive(Debug, Deserialize)]
pub struct Rules {
    /// Directory names (lower case, matched at any depth) whose every file is a test file.
    pub test_dirs: Vec<String>,
    /// Start of a `.py` file name that makes it a test file (`test_`).
    pub test_file_prefixes: Vec<String>,
    /// End of a `.py` file name that makes it a test file (`_test.py`).
    pub test_file_suffixes: Vec<String>,
    /// File names that are pytest `conftest` files, test files wherever they are.
    pub conftest_names: Vec<String>,
    /// File names of whole-file pytest configuration ([`PathClass::Config`]).
    pub config_files: Vec<String>,
    /// File names whose pytest sections are reverted ([`PathClass::SectionConfig`]).
    pub section_config_files: Vec<String>,
    /// Module names of interpreter start-up hooks, matched on any path component up to its
    /// first dot ([`PathClass::Startup`]).
    pub startup_stems: Vec<String>,
    /// File name endings of start-up hooks (`.pth`).
    pub startup_suffixes: Vec<String>,
    /// Directory name endings of installed-package metadata (`.dist-info`, `.egg-info`).
    pub metadata_dir_suffixes: Vec<String>,
    /// File name endings of compiled bytecode.
    pub bytecode_suffixes: Vec<String>,
    /// Directory names that hold compiled bytecode (`__pycache__`).
    pub bytecode_dirs: Vec<String>,
    /// File name endings of compiled extension modules (`.so`, `.pyd`).
    pub extension_suffixes: Vec<String>,
    /// File name endings of development-install links (`.egg-link`).
    pub link_suffixes: Vec<String>,
    /// Top-level module names an untracked file in the repository may not shadow (pytest and
    /// its plugins, the grader's own); only the in-container verifier acts on them.
    pub protected_modules: Vec<String>,
}

/// The embedded table. It is part of the binary, so a parse failure is a build defect that the
/// unit tests catch; it is not user input.
pub fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        #[allow(clippy::expect_used)]
        serde_json::from_str(RESTORE_RULES_JSON).expect("adapters/restore_rules.json parses")
    })
}

/// What the rules make of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathClass {
    /// An interpreter start-up hook in any form (`sitecustomize` file, package or compiled
    /// module; `*.pth`): always removed when the base does not have it.
    Startup,
    /// Something that loads code behind the sources' back: metadata directories, bytecode,
    /// extension modules, egg-links.
    Loader,
    /// Whole-file pytest configuration (`pytest.ini`, `tox.ini`, `.coveragerc`, …).
    Config,
    /// Files whose pytest sections are reverted (`setup.cfg`, `pyproject.toml`).
    SectionConfig,
    /// Test files: under a test directory at any depth, `test_*.py`, `*_test.py`, `conftest.py`.
    Test,
}

impl PathClass {
    /// The class's name as the JSON table and `adapters/beyondswe_verifier/verify.py` spell it (`section_config`).
    pub fn as_str(self) -> &'static str {
        match self {
            PathClass::Startup => "startup",
            PathClass::Loader => "loader",
            PathClass::Config => "config",
            PathClass::SectionConfig => "section_config",
            PathClass::Test => "test",
        }
    }
}

fn ends_with_any(s: &str, suffixes: &[String]) -> bool {
    suffixes.iter().any(|x| s.ends_with(x.as_str()))
}

/// The class of a repository path, as `classify` in `adapters/beyondswe_verifier/verify.py` answers it.
pub fn classify(path: &str) -> Option<PathClass> {
    let r = rules();
    let parts: Vec<&str> = path.split('/').collect();
    let (name, dirs) = parts.split_last()?;
    let stem = |p: &str| p.split('.').next().unwrap_or(p).to_owned();
    if parts.iter().any(|p| r.startup_stems.contains(&stem(p)))
        || ends_with_any(name, &r.startup_suffixes)
    {
        return Some(PathClass::Startup);
    }
    if dirs.iter().any(|d| {
        r.bytecode_dirs.iter().any(|b| b == d) || ends_with_any(d, &r.metadata_dir_suffixes)
    }) || ends_with_any(name, &r.bytecode_suffixes)
        || ends_with_any(name, &r.extension_suffixes)
        || ends_with_any(name, &r.link_suffixes)
    {
        return Some(PathClass::Loader);
    }
    if r.config_files.iter().any(|c| c == name) {
        return Some(PathClass::Config);
    }
    if r.section_config_files.iter().any(|c| c == name) {
        return Some(PathClass::SectionConfig);
    }
    let test_dir = dirs
        .iter()
        .any(|d| r.test_dirs.contains(&d.to_ascii_lowercase()));
    let test_file = name.ends_with(".py")
        && (r
            .test_file_prefixes
            .iter()
            .any(|p| name.starts_with(p.as_str()))
            || ends_with_any(name, &r.test_file_suffixes));
    if test_dir || r.conftest_names.iter().any(|c| c == name) || test_file {
        return Some(PathClass::Test);
    }
    None
}

/// A tracked test file.
pub fn is_test_path(path: &str) -> bool {
    classify(path) == Some(PathClass::Test)
}

/// Whether the restore step touches this path at all.
pub fn is_covered(path: &str) -> bool {
    classify(path).is_some()
}

/// Paths the restore step covers that the gold patch changes and the f2p patch does not: the
/// verifier keeps them as the agent left them, so that the gold patch still resolves. Returns
/// (the f2p patch's paths, the paths to keep). Doc2Repo submissions are whole repositories graded
/// by a suite run outside them: nothing to keep.
pub fn keep_paths(record: &Record) -> (Vec<String>, Vec<String>) {
    if record.family() == Family::Doc2Repo {
        return (Vec::new(), Vec::new());
    }
    let touched = |p: Option<&str>| {
        p.and_then(|p| patch::parse(p).ok())
            .map(|p| p.touched_paths())
            .unwrap_or_default()
    };
    let f2p_paths = touched(record.f2p_patch());
    let keep = touched(record.gold_patch())
        .into_iter()
        .filter(|p| is_covered(p) && !f2p_paths.contains(p))
        .collect();
    (f2p_paths, keep)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples in the table itself: each list names the class its paths must get.
    #[test]
    fn the_tables_own_examples() {
        let table: serde_json::Value = serde_json::from_str(RESTORE_RULES_JSON).unwrap();
        let examples = table["classify_examples"].as_object().unwrap();
        assert!(examples.len() >= 6);
        for (class, paths) in examples {
            for p in paths.as_array().unwrap() {
                let p = p.as_str().unwrap();
                let got = classify(p).map(PathClass::as_str).unwrap_or("none");
                assert_eq!(got, class, "{p}");
            }
        }
        assert!(is_test_path("tests/test_a.py") && !is_covered("src/pkg/core.py"));
    }
}
