//! The crate's folders document what they hold: each `mod.rs` names, in its `//!` doc, every
//! file and sub-folder beside it, so a file added without a word about it fails here (the
//! architecture notes point a newcomer at the folders' docs).

use super::support::repo_root;
use std::path::Path;

/// `folder/name` for every file (`name.rs`) or sub-folder (`name/`) of a folder whose `mod.rs`
/// doc does not name it in backquotes, over every folder under `src`.
fn unnamed(src: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(src).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.file_name() != "mod.rs" {
            continue;
        }
        let dir = entry.path().parent().unwrap();
        let doc: String = std::fs::read_to_string(entry.path())
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("//!"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter_map(|p| {
                let name = p.file_name()?.to_str()?.to_owned();
                if p.is_dir() {
                    p.join("mod.rs").is_file().then(|| format!("{name}/"))
                } else {
                    (name.ends_with(".rs") && name != "mod.rs").then_some(name)
                }
            })
            .collect();
        names.sort();
        for name in names {
            if !doc.contains(&format!("`{name}`")) {
                out.push(format!(
                    "{}/{name}",
                    dir.strip_prefix(src).unwrap_or(dir).display()
                ));
            }
        }
    }
    out
}

#[test]
fn every_folder_doc_names_the_files_beside_it() {
    let missing = unnamed(&repo_root().join("src"));
    assert!(
        missing.is_empty(),
        "not named in their folder's mod.rs doc: {missing:?}"
    );
}

/// The check fails on a file planted without a word in its folder's doc, and on a sub-folder.
#[test]
fn a_file_planted_without_a_word_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("run/inner")).unwrap();
    std::fs::write(
        src.join("run/mod.rs"),
        "//! Runs.\n//!\n//! Files:\n//! - `batch.rs`: many at once.\n\nmod batch;\n",
    )
    .unwrap();
    std::fs::write(src.join("run/batch.rs"), "//! Many.\n").unwrap();
    std::fs::write(src.join("run/planted.rs"), "//! Unnamed.\n").unwrap();
    std::fs::write(src.join("run/inner/mod.rs"), "//! Inner.\n").unwrap();
    assert_eq!(unnamed(&src), ["run/inner/", "run/planted.rs"]);
}
