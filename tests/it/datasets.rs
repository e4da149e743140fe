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
    // Two values under the cap that make a row over it.
    let big = tmp.path().join("big.parquet");
    let long = "x".repeat(3 << 19);
    parquet_of(
        &big,
        &[
            ("instance_id", "acme_calc_pr7"),
            ("task", "CrossRepo"),
            ("problem_statement", &long),
            ("hints_text", &long),
        ],
    );
    let (code, text) = validate(&big, Some("2"));
    assert_ne!(code, Some(0), "{text}");
    assert!(
        text.contains("row 1") && text.contains("larger than 2 MiB"),
        "{text}"
    );
    // One value over the cap: its page is refused before it is decompressed or decoded.
    let huge = tmp.path().join("huge.parquet");
    let longer = "x".repeat(3 << 20);
    parquet_of(
        &huge,
        &[
            ("instance_id", "acme_calc_pr7"),
            ("problem_statement", &longer),
        ],
    );
    let (code, text) = validate(&huge, Some("2"));
    assert_ne!(code, Some(0), "{text}");
    assert!(
        text.contains("column `problem_statement`")
            && text.contains("more than its column chunk, or a record, may hold"),
        "{text}"
    );
}

/// Thrift's compact encoding, enough to write a Parquet footer and page header by hand (a file
/// that lies about itself, which no writer makes).
#[derive(Default)]
struct Thrift {
    out: Vec<u8>,
    last: i16,
}

impl Thrift {
    fn varint(out: &mut Vec<u8>, mut n: u64) {
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }
    fn zigzag(out: &mut Vec<u8>, n: i64) {
        Self::varint(out, ((n << 1) ^ (n >> 63)) as u64);
    }
    fn field(mut self, id: i16, ty: u8) -> Self {
        let delta = id - self.last;
        if (1..=15).contains(&delta) {
            self.out.push(((delta as u8) << 4) | ty);
        } else {
            self.out.push(ty);
            Self::zigzag(&mut self.out, i64::from(id));
        }
        self.last = id;
        self
    }
    fn int(self, id: i16, ty: u8, v: i64) -> Self {
        let mut s = self.field(id, ty);
        Self::zigzag(&mut s.out, v);
        s
    }
    fn i32(self, id: i16, v: i64) -> Self {
        self.int(id, 5, v)
    }
    fn i64(self, id: i16, v: i64) -> Self {
        self.int(id, 6, v)
    }
    fn text(self, id: i16, v: &str) -> Self {
        let mut s = self.field(id, 8);
        Self::varint(&mut s.out, v.len() as u64);
        s.out.extend_from_slice(v.as_bytes());
        s
    }
    fn strukt(self, id: i16, inner: Thrift) -> Self {
        let mut s = self.field(id, 12);
        s.out.extend(inner.end());
        s
    }
    fn list(self, id: i16, elem: u8, items: Vec<Vec<u8>>) -> Self {
        let mut s = self.field(id, 9);
        if items.len() < 15 {
            s.out.push(((items.len() as u8) << 4) | elem);
        } else {
            s.out.push(0xf0 | elem);
            Self::varint(&mut s.out, items.len() as u64);
        }
        for item in items {
            s.out.extend(item);
        }
        s
    }
    fn end(mut self) -> Vec<u8> {
        self.out.push(0);
        self.out
    }
}

/// A Parquet file of one required string column `instance_id` holding `x`, in one page, with
/// what its footer and page header declare set by the arguments (`None`: the truth).
#[derive(Default)]
struct Lie {
    rows: Option<i64>,
    values: Option<i64>,
    page_values: Option<i64>,
    page_unpacked: Option<i64>,
    page_packed: Option<i64>,
    chunk_packed: Option<i64>,
    snappy: bool,
}

fn lying_parquet(lie: Lie) -> Vec<u8> {
    let data = [1u8, 0, 0, 0, b'x'];
    let page = Thrift::default()
        .i32(1, 0)
        .i32(2, lie.page_unpacked.unwrap_or(5))
        .i32(3, lie.page_packed.unwrap_or(5))
        .strukt(
            5,
            Thrift::default()
                .i32(1, lie.page_values.unwrap_or(1))
                .i32(2, 0)
                .i32(3, 3)
                .i32(4, 3),
        )
        .end();
    let mut body = page;
    body.extend(data);
    let zig = |v: i64| {
        let mut out = Vec::new();
        Thrift::zigzag(&mut out, v);
        out
    };
    let column = Thrift::default()
        .i32(1, 6)
        .list(2, 5, vec![zig(0)])
        .list(3, 8, vec![[vec![11u8], b"instance_id".to_vec()].concat()])
        .i32(4, i64::from(lie.snappy))
        .i64(5, lie.values.unwrap_or(1))
        .i64(6, body.len() as i64)
        .i64(7, lie.chunk_packed.unwrap_or(body.len() as i64))
        .i64(9, 4);
    let chunk = Thrift::default().i64(2, 4).strukt(3, column).end();
    let rows = lie.rows.unwrap_or(1);
    let group = Thrift::default()
        .list(1, 12, vec![chunk])
        .i64(2, body.len() as i64)
        .i64(3, rows)
        .end();
    let schema = vec![
        Thrift::default().text(4, "schema").i32(5, 1).end(),
        Thrift::default()
            .i32(1, 6)
            .i32(3, 0)
            .text(4, "instance_id")
            .i32(6, 0)
            .end(),
    ];
    let meta = Thrift::default()
        .i32(1, 1)
        .list(2, 12, schema)
        .i64(3, rows)
        .list(4, 12, vec![group])
        .end();
    framed(&body, &meta)
}

/// `PAR1`, the data, the footer, its length and `PAR1`.
fn framed(body: &[u8], meta: &[u8]) -> Vec<u8> {
    let mut file = b"PAR1".to_vec();
    file.extend(body);
    file.extend(meta);
    file.extend((meta.len() as u32).to_le_bytes());
    file.extend(b"PAR1");
    file
}

/// A footer whose schema nests `depth` groups, with no row group.
fn deep_parquet(depth: usize) -> Vec<u8> {
    let mut schema = vec![Thrift::default().text(4, "schema").i32(5, 1).end()];
    for _ in 0..depth {
        schema.push(Thrift::default().i32(3, 1).text(4, "a").i32(5, 1).end());
    }
    schema.push(Thrift::default().i32(1, 1).i32(3, 1).text(4, "leaf").end());
    let meta = Thrift::default()
        .i32(1, 1)
        .list(2, 12, schema)
        .i64(3, 0)
        .list(4, 12, vec![])
        .end();
    framed(&[], &meta)
}

/// A Parquet file that lies about itself is refused before the crate acts on the lie, with what
/// it declared, in bounded memory and without a panic: a schema 100,000 groups deep (a stack
/// overflow, exit 134, before), a page declaring 2 GiB once decompressed (2 GB taken, before),
/// a page or a column chunk larger than the file, a column chunk of negative size (a panic
/// inside the crate, before), a column or a row group declaring 2³¹ values
/// over the one stored (a panic inside the crate, before), or a page declaring them (the
/// crate's decoder still fails on it: its panic is the file's error, not printed). The truth of
/// the same file reads.
#[test]
fn a_parquet_file_that_lies_about_its_layout_is_refused_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let big = 1i64 << 31;
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truth", lying_parquet(Lie::default()), "1 record(s)"),
        (
            "deep",
            deep_parquet(100_000),
            "its schema nests groups more than 64 deep",
        ),
        (
            "unpacked",
            lying_parquet(Lie {
                page_unpacked: Some(big - 1),
                snappy: true,
                ..Lie::default()
            }),
            "declares 2147483647 bytes once decompressed",
        ),
        (
            "packed",
            lying_parquet(Lie {
                page_packed: Some(big - 1),
                ..Lie::default()
            }),
            "more than its column chunk holds",
        ),
        (
            "chunk",
            lying_parquet(Lie {
                chunk_packed: Some(big),
                ..Lie::default()
            }),
            "outside the file's data",
        ),
        (
            "negative chunk",
            lying_parquet(Lie {
                chunk_packed: Some(-1),
                ..Lie::default()
            }),
            "neither may be negative",
        ),
        (
            "values",
            lying_parquet(Lie {
                values: Some(big),
                rows: Some(big),
                ..Lie::default()
            }),
            "it declares 2147483648 values, and its pages hold 1",
        ),
        (
            "page values",
            lying_parquet(Lie {
                values: Some(big - 1),
                page_values: Some(big - 1),
                rows: Some(big - 1),
                ..Lie::default()
            }),
            "the Parquet reader failed on it",
        ),
        (
            "rows",
            lying_parquet(Lie {
                rows: Some(big),
                ..Lie::default()
            }),
            "declares 2147483648 rows",
        ),
    ];
    for (name, bytes, expected) in cases {
        let path = tmp
            .path()
            .join(format!("{}.parquet", name.replace(' ', "-")));
        std::fs::write(&path, bytes).unwrap();
        let out = cargo_bin_cmd!("beyondswe")
            .arg("validate")
            .arg(&path)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(matches!(out.status.code(), Some(0 | 1)), "{name}: {text}");
        assert!(!text.contains("panicked"), "{name}: {text}");
        assert!(text.contains(expected), "{name}: {text}");
        let peak = super::memory::peak_if_read(&["validate".as_ref(), path.as_os_str()]);
        assert!(
            peak.is_none_or(|p| p < 256 << 20),
            "{name}: {:?} MiB",
            peak.map(|p| p >> 20)
        );
    }
}

/// An extra column of dates or time stamps at their type's maximum (the crate's JSON writer
/// panics on those) is read: the record keeps the number, and every other field.
#[test]
fn dates_and_time_stamps_past_the_calendar_are_read_as_numbers() {
    use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("stamps.parquet");
    let schema = std::sync::Arc::new(
        parquet::schema::parser::parse_message_type(
            "message m { REQUIRED BYTE_ARRAY instance_id (UTF8); \
             REQUIRED INT64 at (TIMESTAMP(MILLIS, true)); \
             REQUIRED INT64 at_us (TIMESTAMP(MICROS, true)); \
             REQUIRED INT32 day (DATE); REQUIRED INT32 ok_day (DATE); }",
        )
        .unwrap(),
    );
    let mut writer = SerializedFileWriter::new(
        std::fs::File::create(&path).unwrap(),
        schema,
        std::sync::Arc::new(WriterProperties::default()),
    )
    .unwrap();
    let mut group = writer.next_row_group().unwrap();
    let mut col = group.next_column().unwrap().unwrap();
    col.typed::<ByteArrayType>()
        .write_batch(&[ByteArray::from("acme_calc_pr7")], None, None)
        .unwrap();
    col.close().unwrap();
    for _ in 0..2 {
        let mut col = group.next_column().unwrap().unwrap();
        col.typed::<Int64Type>()
            .write_batch(&[i64::MAX], None, None)
            .unwrap();
        col.close().unwrap();
    }
    for day in [i32::MAX, 20_000] {
        let mut col = group.next_column().unwrap().unwrap();
        col.typed::<Int32Type>()
            .write_batch(&[day], None, None)
            .unwrap();
        col.close().unwrap();
    }
    group.close().unwrap();
    writer.close().unwrap();
    let records = raw_records(&path);
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(r["instance_id"], "acme_calc_pr7");
    assert_eq!(r["at"], serde_json::json!(i64::MAX));
    assert_eq!(r["at_us"], serde_json::json!(i64::MAX));
    assert_eq!(r["day"], serde_json::json!(i32::MAX));
    assert_eq!(r["ok_day"], "2024-10-04");
}
