//! Which repository paths the grader's restore step resets to the base commit.
//!
//! The same rules are implemented in `adapters/verify.py` (which applies them inside the
//! container); this copy lets `validate` and the converters see ahead of time which paths a gold
//! patch changes that the rules cover, so those paths can be kept instead of reset.

const TEST_DIRS: [&str; 3] = ["test", "tests", "testing"];
const CONFIG_FILES: [&str; 6] = [
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "tox.ini",
    ".coveragerc",
];
const SECTION_CONFIG_FILES: [&str; 2] = ["setup.cfg", "pyproject.toml"];
const STARTUP_FILES: [&str; 2] = ["sitecustomize.py", "usercustomize.py"];

/// A tracked test file: under a `test`/`tests`/`testing` directory at any depth, `test_*.py`,
/// `*_test.py`, or `conftest.py` anywhere including the root.
pub fn is_test_path(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    let name = parts.pop().unwrap_or_default();
    if parts
        .iter()
        .any(|p| TEST_DIRS.contains(&p.to_ascii_lowercase().as_str()))
    {
        return true;
    }
    name == "conftest.py"
        || (name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py")))
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whole-file pytest configuration (`pytest.ini`, `tox.ini`, `.coveragerc`, …).
pub fn is_config_path(path: &str) -> bool {
    CONFIG_FILES.contains(&file_name(path))
}

/// Files whose pytest sections are reverted (`setup.cfg`, `pyproject.toml`).
pub fn is_section_config_path(path: &str) -> bool {
    SECTION_CONFIG_FILES.contains(&file_name(path))
}

/// Interpreter start-up hooks (`sitecustomize.py`, `usercustomize.py`, `*.pth`).
pub fn is_startup_path(path: &str) -> bool {
    let name = file_name(path);
    STARTUP_FILES.contains(&name) || name.ends_with(".pth")
}

/// Whether the restore step touches this path at all.
pub fn is_covered(path: &str) -> bool {
    is_test_path(path)
        || is_config_path(path)
        || is_section_config_path(path)
        || is_startup_path(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        for p in [
            "tests/test_a.py",
            "tests/helpers/util.py",
            "pkg/Testing/data.json",
            "conftest.py",
            "a/b/conftest.py",
            "test_top.py",
            "pkg/mod_test.py",
            "pytest.ini",
            "setup.cfg",
            "sub/pyproject.toml",
            "sitecustomize.py",
            "x/evil.pth",
        ] {
            assert!(is_covered(p), "{p}");
        }
        for p in [
            "src/pkg/core.py",
            "README.md",
            "testdata.py",
            "contest.py",
            "pkg/tester.py",
        ] {
            assert!(!is_covered(p), "{p}");
        }
    }
}
