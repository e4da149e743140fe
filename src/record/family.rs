//! Task families and the many spellings of the `task` field.
//!
//! Owns the mapping from whatever a dataset writes in `task` (`CrossRepo`, `crossrepo`, `cross-repo`,
//! `Doc2Repo`, …) to one of the four BeyondSWE families. The original spelling is always kept so that
//! a record can be written back unchanged. It never guesses: an unknown spelling is
//! [`Family::Unknown`], never silently DomainFix as the official loader does.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One of the four BeyondSWE task families, or `Unknown` for a spelling we do not recognise.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    Default,
    schemars::JsonSchema,
)]
pub enum Family {
    /// Issue fixes that need knowledge from other repositories; graded by test ids.
    CrossRepo,
    /// Issue fixes in domain-specific (scientific) repositories; graded by test ids.
    DomainFix,
    /// Migrations to a new version of a dependency; graded by test ids.
    DepMigrate,
    /// A repository built from its documentation; graded by the pass rate of a hidden test suite.
    Doc2Repo,
    /// A `task` value that names none of the four families, or no `task` at all.
    #[default]
    #[serde(rename = "unknown")]
    Unknown,
}

impl Family {
    /// The four real families, in the order the paper's tables use.
    pub const ALL: [Family; 4] = [
        Family::CrossRepo,
        Family::DomainFix,
        Family::DepMigrate,
        Family::Doc2Repo,
    ];

    /// Maps a `task` value to a family the way the official loader normalises it (lower case,
    /// `_`, `-` and spaces removed), but without its silent DomainFix fallback.
    pub fn from_spelling(spelling: &str) -> Family {
        let normalised: String = spelling
            .chars()
            .filter(|c| !matches!(c, '_' | '-' | ' ' | '\t'))
            .flat_map(char::to_lowercase)
            .collect();
        match normalised.as_str() {
            "crossrepo" => Family::CrossRepo,
            "domainfix" => Family::DomainFix,
            "depmigrate" => Family::DepMigrate,
            "doc2repo" => Family::Doc2Repo,
            _ => Family::Unknown,
        }
    }

    /// The canonical CamelCase name (`CrossRepo`, …, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            Family::CrossRepo => "CrossRepo",
            Family::DomainFix => "DomainFix",
            Family::DepMigrate => "DepMigrate",
            Family::Doc2Repo => "Doc2Repo",
            Family::Unknown => "unknown",
        }
    }

    /// The lower-case tag used in Harbor metadata and in the paper's Table 8.
    pub fn tag(self) -> &'static str {
        match self {
            Family::CrossRepo => "crossrepo",
            Family::DomainFix => "domainfix",
            Family::DepMigrate => "depmigrate",
            Family::Doc2Repo => "doc2repo",
            Family::Unknown => "unknown",
        }
    }

    /// Issue-fix families are graded by FAIL_TO_PASS / PASS_TO_PASS ids; Doc2Repo by a suite.
    pub fn is_issue_task(self) -> bool {
        matches!(
            self,
            Family::CrossRepo | Family::DomainFix | Family::DepMigrate
        )
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `task` field as written (if at all) and the family it maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskKind {
    /// The exact spelling found in the record, `None` when the field is absent.
    pub spelling: Option<String>,
    /// The family that spelling maps to ([`Family::Unknown`] when absent or unrecognised).
    pub family: Family,
}

impl TaskKind {
    /// The `task` field's value as found (`None` when absent) with its family.
    pub fn from_spelling(spelling: Option<&str>) -> TaskKind {
        TaskKind {
            spelling: spelling.map(str::to_owned),
            family: spelling.map_or(Family::Unknown, Family::from_spelling),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_spelling_maps_to_its_family() {
        for (s, f) in [
            ("CrossRepo", Family::CrossRepo),
            ("crossrepo", Family::CrossRepo),
            ("cross-repo", Family::CrossRepo),
            ("Cross_Repo", Family::CrossRepo),
            ("DomainFix", Family::DomainFix),
            ("domain fix", Family::DomainFix),
            ("DepMigrate", Family::DepMigrate),
            ("dep_migrate", Family::DepMigrate),
            ("Doc2Repo", Family::Doc2Repo),
            ("doc2repo", Family::Doc2Repo),
            ("DOC-2-REPO", Family::Doc2Repo),
        ] {
            assert_eq!(Family::from_spelling(s), f, "{s}");
        }
    }

    #[test]
    fn stale_spellings_are_unknown_not_domainfix() {
        for s in ["refactor", "domain", "", "swe"] {
            assert_eq!(Family::from_spelling(s), Family::Unknown, "{s}");
        }
    }
}
