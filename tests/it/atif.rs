//! The ATIF validator against `fixtures/atif/expected.json`: what Harbor's own validator said of
//! every sample, recorded once, so the agreement is checked offline (no Harbor, no Docker). Our
//! validator follows the newest Harbor release; the live comparison is
//! `harbor_loader::atif_validation_agrees_with_harbors_validator`.

use super::support::fixtures;
use beyondswe::harbor::atif::validate_file;
use serde_json::Value;
use std::collections::BTreeMap;

/// The Harbor release whose validator ours follows.
const HARBOR: &str = "0.26.0";

const SETS: [&str; 3] = ["valid", "invalid", "lenient"];

/// `sample (relative to fixtures/atif) -> accepted` as Harbor recorded it.
fn expected() -> BTreeMap<String, bool> {
    let text = std::fs::read_to_string(fixtures().join("atif/expected.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v.as_object()
        .unwrap()
        .iter()
        .map(|(file, by_version)| {
            let ok = by_version[HARBOR]["ok"].as_bool();
            (
                file.clone(),
                ok.unwrap_or_else(|| panic!("{file}: no {HARBOR} ok")),
            )
        })
        .collect()
}

/// Every sample trajectory on disk, relative to fixtures/atif.
fn samples() -> Vec<String> {
    super::support::tree(&fixtures().join("atif"))
        .into_iter()
        .filter(|p| p.ends_with(".json"))
        .filter(|p| SETS.iter().any(|set| p.starts_with(&format!("{set}/"))))
        .collect()
}

#[test]
fn every_sample_is_judged_as_harbor_judged_it() {
    let expected = expected();
    assert_eq!(
        expected.keys().cloned().collect::<Vec<_>>(),
        samples(),
        "expected.json and the samples on disk name the same files"
    );
    let ours: BTreeMap<String, bool> = expected
        .keys()
        .map(|file| {
            let problems = validate_file(&fixtures().join("atif").join(file));
            (file.clone(), problems.is_empty())
        })
        .collect();
    assert_eq!(ours, expected);
    // The sets say what they hold: Harbor accepts valid/ and lenient/ and rejects invalid/.
    for (file, ok) in &expected {
        assert_eq!(*ok, !file.starts_with("invalid/"), "{file}");
    }
}

/// `trajectory validate --json` over the sample directories says the same, one line per file.
#[test]
fn the_cli_reports_the_expected_outcomes() {
    let root = fixtures().join("atif");
    let out = assert_cmd::cargo::cargo_bin_cmd!("beyondswe")
        .args(["trajectory", "validate", "--json"])
        .args(SETS.iter().map(|s| root.join(s)))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "invalid samples fail the command"
    );
    let ours: BTreeMap<String, bool> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let file = v["file"].as_str().unwrap();
            let rel = file.split("fixtures/atif/").last().unwrap().to_owned();
            let errors = v["errors"].as_array().unwrap();
            assert_eq!(v["ok"].as_bool().unwrap(), errors.is_empty(), "{l}");
            (rel, v["ok"].as_bool().unwrap())
        })
        .collect();
    assert_eq!(ours, expected());
}

/// The file is read as a stream, a step at a time; what it finds is what the whole document
/// checked at once finds, problem for problem and in the same order, on every sample (the
/// proptest in `never_panic` holds the same on mutated ones).
#[test]
fn the_stream_finds_what_the_whole_document_finds() {
    use beyondswe::harbor::atif::validate_value;
    let mut compared = 0;
    for file in samples() {
        let path = fixtures().join("atif").join(&file);
        let text = std::fs::read(&path).unwrap();
        let Ok(v) = serde_json::from_slice::<Value>(&text) else {
            continue;
        };
        assert_eq!(
            validate_file(&path),
            validate_value(&v, path.parent()),
            "{file}"
        );
        compared += 1;
    }
    assert!(compared > 20, "only {compared} samples parse");
}

/// Problems past the first thousand are counted, not listed: a file of empty steps lists no more
/// text than it holds. The count is exact, and the step-order check still waits for sound steps.
#[test]
fn problems_past_the_first_thousand_are_counted() {
    use beyondswe::harbor::atif::{MAX_LISTED, validate_stream};
    let steps = vec!["{}"; 2000].join(",");
    let doc = format!(r#"{{"agent": {{"name": "a", "version": "1"}}, "steps": [{steps}]}}"#);
    let problems = validate_stream(doc.as_bytes(), None).unwrap();
    assert_eq!(problems.len(), MAX_LISTED + 1);
    // Each empty step lacks step_id, source and message.
    assert_eq!(
        problems.last().unwrap().message,
        format!(
            "{} more problems, not listed (the first 1000 are)",
            3 * 2000 - MAX_LISTED
        )
    );
    assert!(problems.iter().all(|p| !p.message.contains("in order")));
}
