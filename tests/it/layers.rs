//! The crate's layers, as ARCHITECTURE.md draws them, checked on its `use` lines and paths:
//! a top-level module uses only modules of lower layers, and no two files of one folder use each
//! other (directly or round a longer circle). Comments and test modules are not read.

use super::support::repo_root;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top to bottom: a module may use those of any lower layer, none of its own or above.
const LAYERS: &[&[&str]] = &[
    &["run", "schema"],
    &["audit", "report", "validate"],
    &["calibration"],
    &["dataset", "grade"],
    &["convert"],
    &["submission"],
    &["sandbox", "verifier_spec"],
    &["harbor", "restore_rules"],
    &["adapters", "patch", "record"],
    &["base64", "files", "text"],
    &["errors"],
];

/// Circles between the files of one folder that stay, each with why.
const KNOWN_CIRCLES: &[(&str, &str, &str)] = &[(
    "submission/agents/mini_swe_agent.rs",
    "submission/agents/swe_agent.rs",
    "the two agents share SWE-agent's run layout, whose reader reads both agents' documents",
)];

/// The code of a file that counts: no comment lines, nothing from its test module on.
fn code(text: &str) -> String {
    let end = text.find("#[cfg(test)]").unwrap_or(text.len());
    text[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first path segment after every `prefix` (`crate::`, `super::`), braces opened: for
/// `use crate::{a::b, c}` both `a` and `c`.
fn segments_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().last();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(inner) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut part = String::new();
            for c in inner.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(ident(part.trim()));
                        part.clear();
                        continue;
                    }
                    _ => {}
                }
                part.push(c);
            }
            out.insert(ident(part.trim()));
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

/// Every arrow that breaks the layers, as `from -> to: why`, over the crate under `src`.
fn violations(src: &Path) -> Vec<String> {
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, names)| names.iter().map(move |n| (*n, i)))
        .collect();
    let mut out = Vec::new();
    // Per folder: its files (not mod.rs) and which siblings each uses.
    let mut siblings: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for entry in walkdir::WalkDir::new(src).sort_by_file_name() {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let code = code(&std::fs::read_to_string(path).unwrap());
        let top = rel.split('/').next().unwrap().trim_end_matches(".rs");
        if let Some(&mine) = layer_of.get(top) {
            for used in segments_after(&code, "crate::") {
                match layer_of.get(used.as_str()) {
                    Some(&theirs) if used != top && theirs <= mine => out.push(format!(
                        "{rel} -> crate::{used}: `{top}` may not use a module of its own layer \
                         or above"
                    )),
                    None if used != top
                        && (src.join(format!("{used}.rs")).is_file()
                            || src.join(&used).join("mod.rs").is_file()) =>
                    {
                        out.push(format!("{rel} -> crate::{used}: `{used}` has no layer"));
                    }
                    _ => {}
                }
            }
        } else if !["main.rs", "lib.rs"].contains(&rel.as_str()) && !rel.starts_with("cli/") {
            out.push(format!("{rel}: `{top}` has no layer"));
        }
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        if file == "mod.rs" {
            continue;
        }
        let dir = path.parent().unwrap();
        let folder = dir
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let uses: BTreeSet<String> = segments_after(&code, "super::")
            .into_iter()
            .filter(|s| dir.join(format!("{s}.rs")).is_file() && format!("{s}.rs") != file)
            .map(|s| format!("{s}.rs"))
            .collect();
        siblings.entry(folder).or_default().insert(file, uses);
    }
    // Circles among a folder's files: a file that a file it uses reaches back.
    for (folder, files) in &siblings {
        let reaches = |from: &String, to: &String| {
            let mut seen = BTreeSet::new();
            let mut stack = vec![from];
            while let Some(f) = stack.pop() {
                if f == to {
                    return true;
                }
                if seen.insert(f.clone()) {
                    stack.extend(files.get(f).into_iter().flatten());
                }
            }
            false
        };
        let name = |f: &str| {
            if folder.is_empty() {
                f.to_owned()
            } else {
                format!("{folder}/{f}")
            }
        };
        for (start, uses) in files {
            let Some(back) = uses.iter().find(|n| reaches(n, start)) else {
                continue;
            };
            let (a, b) = (name(start), name(back));
            let known = KNOWN_CIRCLES
                .iter()
                .any(|(x, y, _)| (a == *x && b == *y) || (a == *y && b == *x));
            if !known {
                out.push(format!(
                    "{a}: uses {b}, which uses it back (directly or round a circle)"
                ));
            }
        }
    }
    out
}

#[test]
fn the_crate_keeps_its_layers() {
    let found = violations(&repo_root().join("src"));
    assert!(found.is_empty(), "{found:#?}");
}

/// The check fails on a planted arrow running up, on a module with no layer, and on two files
/// of a folder that use each other.
#[test]
fn a_planted_arrow_up_or_circle_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("sandbox")).unwrap();
    std::fs::create_dir_all(src.join("dataset")).unwrap();
    let write = |rel: &str, text: &str| std::fs::write(src.join(rel), text).unwrap();
    write("report.rs", "pub fn now() {}\n");
    write("text.rs", "use crate::files::x;\n");
    write("files.rs", "// crate::report is only named here\n");
    write("sandbox/mod.rs", "mod docker;\n");
    write(
        "sandbox/docker.rs",
        "use crate::{text::tail, report::now};\n",
    );
    write("dataset/mod.rs", "mod seen;\nmod source;\n");
    write("dataset/seen.rs", "use super::source::Location;\n");
    write(
        "dataset/source.rs",
        "use super::seen::Seen;\n#[cfg(test)]\nmod tests { use crate::run::x; }\n",
    );
    write("newmod.rs", "use crate::text::tail;\n");
    let found = violations(&src);
    assert!(
        found
            .iter()
            .any(|v| v.starts_with("sandbox/docker.rs -> crate::report")),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|v| v.starts_with("text.rs -> crate::files")),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|v| v.starts_with("newmod.rs: `newmod` has no layer")),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|v| v.starts_with("dataset/seen.rs: uses dataset/source.rs, which uses it back")),
        "{found:#?}"
    );
    assert_eq!(found.len(), 5, "{found:#?}");
}
