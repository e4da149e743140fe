//! The dataset as it ships: its JSONL, the Parquet copy the Hugging Face Hub serves (made by
//! pyarrow, `scripts/make-parquet-fixtures.py`), and the Hub's local cache, found by the
//! dataset's name with no network.

use super::support::fixtures;
use assert_cmd::cargo::cargo_bin_cmd;
use beyondswe::dataset::{Source, load_all};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

fn raw_records(path: &Path) -> Vec<Map<String, Value>> {
    Source::open(path)
        .unwrap()
        .entries()
        .map(|e| e.unwrap().1.record.into_raw())
        .collect()
}

fn dataset(name: &str) -> PathBuf {
    fixtures().join("dataset").join(name)
}

/// The Hub's Parquet copy of a JSONL dataset gives the same records, field for field, in two
/// row groups: the same dataset hash, so a run graded from either is one run.
#[test]
fn the_parquet_copy_reads_as_the_jsonl_it_was_made_from() {
    let jsonl = raw_records(&dataset("fixtures.jsonl"));
    assert_eq!(raw_records(&dataset("fixtures.parquet")), jsonl);
    let hash = |p: &Path| beyondswe::dataset::dataset_hash(&load_all(p, None).unwrap());
    assert_eq!(
        hash(&dataset("fixtures.parquet")),
        hash(&dataset("fixtures.jsonl"))
    );
}

/// Test ids stored as lists of strings (SWE-bench's datasets on the Hub) read as the same ids.
#[test]
fn list_columns_are_test_id_lists() {
    let ids = |p: &Path| -> Vec<(String, Vec<String>, Vec<String>)> {
        Source::open(p)
            .unwrap()
            .entries()
            .map(|e| {
                let r = e.unwrap().1.record;
                (
                    r.instance_id().to_owned(),
                    r.fail_to_pass(),
                    r.pass_to_pass(),
                )
            })
            .collect()
    };
    let from_lists = ids(&dataset("fixtures-lists.parquet"));
    assert_eq!(from_lists, ids(&dataset("fixtures.jsonl")));
    assert!(from_lists.iter().any(|(_, f2p, _)| !f2p.is_empty()));
}

/// A bad row is named by its row and the rest are read; a file that is not Parquet is named.
#[test]
fn a_bad_row_is_named_and_a_broken_file_is_an_error() {
    let out = cargo_bin_cmd!("beyondswe")
        .args(["validate", "--json"])
        .arg(dataset("bad-row.parquet"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let problems: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(problems.len(), 1, "{text}");
    assert!(
        problems[0]["location"]
            .as_str()
            .unwrap()
            .ends_with("bad-row.parquet row 2"),
        "{text}"
    );
    assert_eq!(problems[0]["field"], "instance_id", "{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("3 record(s), 1 error(s)"), "{err}");

    let tmp = tempfile::tempdir().unwrap();
    let cut = tmp.path().join("cut.parquet");
    let bytes = std::fs::read(dataset("fixtures.parquet")).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = cargo_bin_cmd!("beyondswe")
        .arg("validate")
        .arg(&cut)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cut.parquet: not a Parquet file this reader can read"),
        "{err}"
    );
}

/// A Hub cache laid out as `huggingface_hub` writes it: blobs named by their hash, the snapshot
/// of a commit holding links to them, `refs/<revision>` naming the commit.
struct HubCache {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl HubCache {
    fn new() -> HubCache {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("hub");
        HubCache { _tmp: tmp, root }
    }

    fn repo(&self) -> PathBuf {
        self.root.join("datasets--AweAI-Team--BeyondSWE")
    }

    /// `file` stored as `rel` in the snapshot of `commit`, which `refs/<revision>` names.
    fn add(&self, revision: &str, commit: &str, rel: &str, file: &Path) {
        let repo = self.repo();
        let bytes = std::fs::read(file).unwrap();
        let blob = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes));
        std::fs::create_dir_all(repo.join("blobs")).unwrap();
        std::fs::write(repo.join("blobs").join(&blob), &bytes).unwrap();
        let link = repo.join("snapshots").join(commit).join(rel);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        let depth = rel.matches('/').count() + 2;
        let target = format!("{}blobs/{blob}", "../".repeat(depth));
        std::os::unix::fs::symlink(target, &link).unwrap();
        let r = repo.join("refs").join(revision);
        std::fs::create_dir_all(r.parent().unwrap()).unwrap();
        std::fs::write(r, commit).unwrap();
    }

    fn cmd(&self) -> assert_cmd::Command {
        let mut c = cargo_bin_cmd!("beyondswe");
        c.env("HF_HUB_CACHE", &self.root).env_remove("HF_HOME");
        c
    }

    /// `validate AweAI-Team/BeyondSWE` against this cache: its exit code and standard error.
    fn validate(&self) -> (Option<i32>, String) {
        let out = self
            .cmd()
            .args(["validate", "AweAI-Team/BeyondSWE"])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// `validate AweAI-Team/BeyondSWE` and `convert to-harbor AweAI-Team/BeyondSWE` read the cached
/// `beyondswe.jsonl` of the commit `refs/main` names, offline; `HF_HOME` is honoured too.
#[test]
fn the_dataset_is_found_by_its_name_in_the_hub_cache() {
    let hub = HubCache::new();
    let old = "1".repeat(40);
    hub.add("main", &old, "beyondswe.jsonl", &dataset("demo.jsonl"));
    let new = "2".repeat(40);
    hub.add("main", &new, "beyondswe.jsonl", &dataset("fixtures.jsonl"));
    hub.add(
        "main",
        &new,
        "README.md",
        &fixtures().join("agents/README.md"),
    );
    let (code, err) = hub.validate();
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("3 record(s), 0 error(s)"), "{err}");

    let tasks = hub._tmp.path().join("tasks");
    hub.cmd()
        .args(["convert", "to-harbor", "hf://datasets/AweAI-Team/BeyondSWE"])
        .arg(&tasks)
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .assert()
        .success();
    let converted: Vec<String> = std::fs::read_dir(&tasks)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".toml"))
        .collect();
    assert_eq!(converted.len(), 3, "{converted:?}");

    // HF_HOME/hub, when HF_HUB_CACHE is not set.
    let home = hub._tmp.path();
    let out = cargo_bin_cmd!("beyondswe")
        .env_remove("HF_HUB_CACHE")
        .env("HF_HOME", home)
        .args(["validate", "AweAI-Team/BeyondSWE"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

/// Without a JSONL file on `main`, the Hub's Parquet conversion (`refs/convert/parquet`) is
/// read, its shards in order.
#[test]
fn the_hub_parquet_conversion_is_read_when_main_has_no_jsonl() {
    let hub = HubCache::new();
    hub.add(
        "main",
        &"3".repeat(40),
        "README.md",
        &fixtures().join("agents/README.md"),
    );
    let commit = "4".repeat(40);
    hub.add(
        "refs/convert/parquet",
        &commit,
        "default/test/0000.parquet",
        &dataset("fixtures.parquet"),
    );
    hub.add(
        "refs/convert/parquet",
        &commit,
        "default/test/0001.parquet",
        &dataset("demo.jsonl"),
    );
    // The second shard is not Parquet: the error names it, after the first shard's records.
    let (code, err) = hub.validate();
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("0001.parquet: not a Parquet file this reader can read"),
        "{err}"
    );
    let hub = HubCache::new();
    hub.add(
        "refs/convert/parquet",
        &commit,
        "default/test/0000.parquet",
        &dataset("fixtures.parquet"),
    );
    let (code, err) = hub.validate();
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("3 record(s)"), "{err}");
}

/// A name the cache does not hold says where it looked and how to download it; a snapshot link
/// that leads out of the cache's blobs is not followed.
#[test]
fn a_missing_name_or_a_link_out_of_the_cache_is_refused() {
    let hub = HubCache::new();
    let (code, err) = hub.validate();
    assert_ne!(code, Some(0));
    assert!(err.contains("datasets--AweAI-Team--BeyondSWE"), "{err}");
    assert!(
        err.contains("hf download --repo-type dataset AweAI-Team/BeyondSWE"),
        "{err}"
    );

    let commit = "5".repeat(40);
    hub.add(
        "main",
        &commit,
        "README.md",
        &fixtures().join("agents/README.md"),
    );
    let snapshot = hub.repo().join("snapshots").join(&commit);
    std::os::unix::fs::symlink(dataset("fixtures.jsonl"), snapshot.join("beyondswe.jsonl"))
        .unwrap();
    let (code, err) = hub.validate();
    assert_ne!(code, Some(0));
    assert!(
        err.contains("no snapshot of it has a JSONL or Parquet file"),
        "{err}"
    );
}

/// A Parquet file of string columns, one row of `values`, written with the parquet crate.
fn parquet_of(path: &std::path::Path, columns: &[(&str, &str)]) {
    use parquet::data_type::{ByteArray, ByteArrayType};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    let fields: String = columns
        .iter()
        .map(|(name, _)| format!("REQUIRED BYTE_ARRAY {name} (UTF8);"))
        .collect();
    let schema = std::sync::Arc::new(
        parquet::schema::parser::parse_message_type(&format!("message m {{ {fields} }}")).unwrap(),
    );
    let file = std::fs::File::create(path).unwrap();
    let mut writer = SerializedFileWriter::new(
        file,
        schema,
        std::sync::Arc::new(WriterProperties::default()),
    )
    .unwrap();
    let mut group = writer.next_row_group().unwrap();
    for (_, value) in columns {
        let mut col = group.next_column().unwrap().unwrap();
        col.typed::<ByteArrayType>()
            .write_batch(&[ByteArray::from(*value)], None, None)
            .unwrap();
        col.close().unwrap();
    }
    group.close().unwrap();
    writer.close().unwrap();
}

/// A Parquet file with a second `instance_id` column is refused naming it (the second no longer
/// silently replaces the ids), and a row larger than a record may be is refused with its row, as
/// a JSONL line over the cap is.
#[test]
fn parquet_columns_named_twice_and_rows_over_the_cap_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let twice = tmp.path().join("twice.parquet");
    parquet_of(
        &twice,
        &[
            ("instance_id", "acme_calc_pr7"),
            ("task", "CrossRepo"),
            ("instance_id", "evil"),
        ],
    );
    // `validate` on a file (with a line cap in MiB): its exit code and all it printed.
    let validate = |path: &std::path::Path, max_line_mb: Option<&str>| {
        let mut cmd = cargo_bin_cmd!("beyondswe");
        cmd.arg("validate").arg(path);
        if let Some(mb) = max_line_mb {
            cmd.env("BEYONDSWE_MAX_LINE_MB", mb);
        }
        let out = cmd.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), text)
    };
    let (code, text) = validate(&twice, None);
    assert_ne!(code, Some(0), "{text}");
    assert!(text.contains("`instance_id` appears twice"), "{text}");
    let big = tmp.path().join("big.parquet");
    let long = "x".repeat(3 << 20);
    parquet_of(
        &big,
        &[
            ("instance_id", "acme_calc_pr7"),
            ("task", "CrossRepo"),
            ("problem_statement", &long),
        ],
    );
    let (code, text) = validate(&big, Some("2"));
    assert_ne!(code, Some(0), "{text}");
    assert!(
        text.contains("row 1") && text.contains("larger than 2 MiB"),
        "{text}"
    );
}
