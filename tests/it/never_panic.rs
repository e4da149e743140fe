//! Never-panic properties: every parser of user input, given random bytes and near-valid input
//! (real fixtures with bytes changed, inserted, deleted, duplicated or cut, and tricky tokens such
//! as multi-byte characters, quotes, `$(` and diff headers spliced in), returns — a value or an
//! error — and never panics.
//!
//! Each property runs `PROPTEST_CASES` cases (proptest's default, 256) so CI stays fast; set
//! `PROPTEST_CASES=10000` for a longer hunt.

use super::support::fixtures;
use beyondswe::audit::{self, AuditOptions, TargetPr, TaskInfo};
use beyondswe::harbor::TaskToml;
use beyondswe::harbor::atif;
use beyondswe::record::{JsonLines, Record, RecordReader};
use beyondswe::submission::{self, AgentFormat, TreeLimits};
use beyondswe::{patch, validate};
use proptest::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Splice-ins that tend to break parsers.
const TOKENS: &[&str] = &[
    "é",
    "日本",
    "😀",
    "\u{0}",
    "\r\n",
    "\n",
    "\"",
    "'",
    "\\",
    "$(",
    "`",
    "${",
    "<<EOF\n",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "@@ -1,3 +1,3 @@",
    "diff --git a/xé b/y",
    "--- a/",
    "+++ b/",
    "GIT binary patch\nliteral 4\n",
    "+0é",
    "<testcase name=\"é\">",
    "</testsuite>",
    "&amp;",
    "<![CDATA[",
    "-1",
    "1e999",
    "null",
    "../",
    "/etc/passwd",
];

/// One change to a byte string; positions are taken modulo its length.
#[derive(Debug, Clone)]
enum Edit {
    Set(usize, u8),
    Insert(usize, usize),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Cut(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Set(p, b)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(p, t)| Edit::Insert(p, t)),
        (any::<usize>(), 1usize..64).prop_map(|(p, n)| Edit::Delete(p, n)),
        (any::<usize>(), 1usize..256).prop_map(|(p, n)| Edit::Duplicate(p, n)),
        any::<usize>().prop_map(Edit::Cut),
    ]
}

fn apply(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let len = bytes.len();
        let at = |p: usize| if len == 0 { 0 } else { p % (len + 1) };
        match *e {
            Edit::Set(p, b) if len > 0 => bytes[p % len] = b,
            Edit::Set(..) => bytes.push(0),
            Edit::Insert(p, t) => {
                let p = at(p);
                bytes.splice(p..p, TOKENS[t].bytes());
            }
            Edit::Delete(p, n) => {
                let p = at(p);
                bytes.drain(p..(p + n).min(len));
            }
            Edit::Duplicate(p, n) => {
                let p = at(p);
                let piece: Vec<u8> = bytes[p..(p + n).min(len)].to_vec();
                bytes.splice(p..p, piece);
            }
            Edit::Cut(p) => bytes.truncate(at(p)),
        }
    }
    bytes
}

/// A real sample from `samples`, changed by a few edits.
fn mutated(samples: &'static [Vec<u8>]) -> impl Strategy<Value = Vec<u8>> {
    (0..samples.len(), prop::collection::vec(edit(), 0..6))
        .prop_map(move |(i, edits)| apply(samples[i].clone(), &edits))
}

/// Random bytes, random text with the tokens, or a mutated sample.
fn input(samples: &'static [Vec<u8>]) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..512),
        1 => prop::collection::vec(prop_oneof![
            any::<char>().prop_map(|c| c.to_string()),
            (0..TOKENS.len()).prop_map(|t| TOKENS[t].to_owned()),
        ], 0..64).prop_map(|parts| parts.concat().into_bytes()),
        4 => mutated(samples),
    ]
}

/// The Parquet fixtures, as pyarrow wrote them.
fn parquet_samples() -> &'static [Vec<u8>] {
    static S: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    S.get_or_init(|| files("dataset", "parquet"))
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

fn files(dir: &str, ext: &str) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = walkdir::WalkDir::new(fixtures().join(dir))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.file_name().to_string_lossy().ends_with(ext))
        .map(|e| read(e.path()))
        .collect();
    assert!(!out.is_empty(), "no {ext} fixtures under {dir}");
    out.truncate(40);
    out
}

fn dataset_lines() -> &'static [Vec<u8>] {
    static S: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    S.get_or_init(|| {
        let mut out = files("dataset", ".jsonl");
        out.extend(
            ["dataset/variants.jsonl", "dataset/fixtures.jsonl"]
                .iter()
                .flat_map(|f| {
                    std::fs::read_to_string(fixtures().join(f))
                        .unwrap()
                        .lines()
                        .map(|l| format!("{l}\n").into_bytes())
                        .collect::<Vec<_>>()
                }),
        );
        out
    })
}

fn patch_samples() -> &'static [Vec<u8>] {
    static S: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    S.get_or_init(|| {
        let mut out = Vec::new();
        for f in ["dataset/variants.jsonl", "dataset/fixtures.jsonl"] {
            for l in std::fs::read_to_string(fixtures().join(f)).unwrap().lines() {
                let v: Value = serde_json::from_str(l).unwrap();
                for k in ["patch", "f2p_patch"] {
                    if let Some(p) = v[k].as_str() {
                        out.push(p.as_bytes().to_vec());
                    }
                }
            }
        }
        out.extend(files("agents", ".diff"));
        out
    })
}

fn atif_samples() -> &'static [Vec<u8>] {
    static S: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    S.get_or_init(|| files("atif", ".json"))
}

fn timestamps() -> &'static [Vec<u8>] {
    static S: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    S.get_or_init(|| {
        [
            "2025-11-04T09:00:01Z",
            "2025-11-04 09:00:01.123456+02:00",
            "2025-11-04T09:00:01-0530",
            "20240101T100000Z",
            "2024-W01-1",
            "2025-11-04",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect()
    })
}

/// A timestamp with a multi-byte character or sign spliced in somewhere, and a few more edits.
fn timestamp() -> impl Strategy<Value = String> {
    const SPLICE: &[&str] = &["é", "0é", "+0é", "-01xé", "日", "+", "-", "Z", ":", "."];
    (
        0..timestamps().len(),
        any::<usize>(),
        0..SPLICE.len(),
        prop::collection::vec(edit(), 0..3),
    )
        .prop_map(|(i, at, t, edits)| {
            let mut b = timestamps()[i].clone();
            let at = at % (b.len() + 1);
            b.splice(at..at, SPLICE[t].bytes());
            lossy(&apply(b, &edits))
        })
}

fn release_lines() -> &'static [Vec<u8>] {
    static S: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    S.get_or_init(|| {
        std::fs::read_to_string(fixtures().join("audit/release.jsonl"))
            .unwrap()
            .lines()
            .filter(|l| l.len() < 200_000)
            .map(|l| l.as_bytes().to_vec())
            .collect()
    })
}

fn commands() -> &'static [Vec<u8>] {
    static S: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    S.get_or_init(|| {
        let mut out: Vec<Vec<u8>> = [
            "cd /repo && git  log --all | head",
            "bash -lc 'git fetch origin pull/1/head:pr && git diff'",
            "x=git; eval \"$x log --all\"; echo 'git pull' | sh",
            "python3 - <<'EOF'\nimport os\nos.system(\"git fetch\")\nEOF\n",
            "python -c \"import subprocess; subprocess.run(['git', 'log', '--all'])\"",
            "curl -s https://github.com/o/r/pull/1.diff | head; gh pr view 1",
            "$'\\x67it' fetch 2>&1 | tee log.txt",
            "diff <(git log --all) <(git log) || true",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        for l in release_lines() {
            if let Ok(v) = serde_json::from_slice::<Value>(l) {
                collect_commands(&v, &mut out);
            }
        }
        out.truncate(200);
        out
    })
}

fn collect_commands(v: &Value, out: &mut Vec<Vec<u8>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if (k == "command" || k == "cmd") && x.is_string() {
                    out.push(x.as_str().unwrap_or_default().as_bytes().to_vec());
                } else {
                    collect_commands(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_commands(x, out)),
        _ => {}
    }
}

fn task_tomls() -> &'static [Vec<u8>] {
    static S: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    S.get_or_init(|| {
        vec![
            b"version = \"1.0\"\n\n[metadata]\ninstance_id = \"acme_widget_pr12\"\nfamily = \"CrossRepo\"\ntags = [\"CrossRepo\", \"python\"]\n\n[verifier]\ntimeout_sec = 3600.0\n\n[agent]\ntimeout_sec = 14400.0\n\n[environment]\ndocker_image = \"x/y:1\"\ncpus = 4\nmemory = \"8G\"\nstorage_mb = 20480\nbuild_timeout_sec = 1800.0\n".to_vec(),
        ]
    })
}

fn archives() -> &'static [Vec<u8>] {
    static S: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    S.get_or_init(|| {
        let files: &[(&str, &[u8])] = &[
            ("pkg/__init__.py", b"x = 1\n"),
            ("pkg/mod.py", b"def f():\n    return 2\n"),
            ("README.md", "é 日本\n".as_bytes()),
        ];
        let mut tar = tar::Builder::new(Vec::new());
        for (name, data) in files {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            tar.append_data(&mut h, name, *data).unwrap();
        }
        let tar = tar.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &tar).unwrap();
        let tgz = gz.finish().unwrap();
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, data) in files {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            std::io::Write::write_all(&mut zip, data).unwrap();
        }
        let zip = zip.finish().unwrap().into_inner();
        vec![tar, tgz, zip]
    })
}

fn agent_samples() -> &'static [Vec<u8>] {
    static S: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    S.get_or_init(|| {
        let mut out = files("agents", ".json");
        out.extend(files("agents", ".jsonl"));
        out.extend(files("agents", ".traj"));
        out.extend(files("agents", ".history.md"));
        out
    })
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, bytes).unwrap();
    p
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn pr() -> TargetPr {
    TargetPr {
        owner: "o".into(),
        repo: "r".into(),
        number: 1,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::default())]

    #[test]
    fn jsonl_records_and_validate(bytes in input(dataset_lines())) {
        for item in RecordReader::new(bytes.as_slice(), PathBuf::from("d.jsonl")) {
            if let Err(e) = item {
                let _ = e.to_string();
            }
        }
        let mut lines = JsonLines::new(bytes.as_slice(), PathBuf::from("d.jsonl"));
        while let Some(item) = lines.next_value() {
            if let Ok((_, v)) = item {
                let _ = Record::from_value(v);
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "d.jsonl", &bytes);
        if let Ok(report) = validate::validate_path(&p, Some(dir.path())) {
            let _ = validate::render_table(&report);
        }
        let _ = submission::read_predictions(&p);
    }

    #[test]
    fn parquet_datasets(bytes in mutated(parquet_samples())) {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "d.parquet", &bytes);
        if let Ok(report) = validate::validate_path(&p, None) {
            let _ = validate::render_table(&report);
        }
    }

    #[test]
    fn patches(bytes in input(patch_samples())) {
        let _ = patch::parse(&lossy(&bytes)).map(|p| p.touched_paths());
        let _ = patch::normalize_transport(&bytes);
    }

    #[test]
    fn atif_trajectories(bytes in input(atif_samples()), ts in timestamp()) {
        let _ = atif::iso8601(&ts);
        let _ = atif::iso8601(&lossy(&bytes));
        if let Ok(mut v) = serde_json::from_slice::<Value>(&bytes) {
            // The stream that reads files finds what the whole document finds.
            let whole = atif::validate_value(&v, None);
            prop_assert_eq!(atif::validate_stream(&bytes, None), Ok(whole));
            // The same trajectory with the mutated timestamp on its first step.
            if let Some(step) = v.pointer_mut("/steps/0").and_then(Value::as_object_mut) {
                step.insert("timestamp".into(), Value::String(ts));
                let _ = atif::validate_value(&v, None);
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "agent/trajectory.json", &bytes);
        let _ = atif::validate_file(&p);
    }

    #[test]
    fn shell_commands_and_audit(bytes in input(commands()), line in input(release_lines())) {
        let s = lossy(&bytes);
        let _ = audit::split_commands(&s);
        let _ = audit::blocklist_hits(&s, false);
        let _ = audit::command_pr_access(&s, &pr());
        for u in beyondswe::text::urls(&s) {
            let _ = audit::classify_url(&u, &pr());
        }
        let _ = audit::query_names_pr(&s, &pr());
        if let Ok(v) = serde_json::from_slice::<Value>(&line) {
            let _ = audit::audit_line(1, &v, &TaskInfo::default(), AuditOptions::default());
        }
    }

    #[test]
    fn harbor_task_toml(bytes in input(task_tomls())) {
        if let Ok(t) = TaskToml::parse(&lossy(&bytes)) {
            let _ = (t.environment.memory_mb(), t.environment.storage_mb(), t.to_toml_string());
        }
    }

    #[test]
    fn archives_and_trees(bytes in input(archives())) {
        let dir = tempfile::tempdir().unwrap();
        for name in ["repo.tar", "repo.tar.gz", "repo.zip"] {
            let p = write(dir.path(), name, &bytes);
            let limits = TreeLimits { max_total_bytes: 1 << 20, max_entries: 1000 };
            if let Ok(tree) = submission::read_tree(&p, limits) {
                let _ = tree.digest();
            }
        }
    }

    #[test]
    fn agent_outputs(bytes in input(agent_samples())) {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "preds.json", "output.jsonl", "trajectories.jsonl", "x_y_pr1.traj",
            "x_y_pr1.traj.json", "x_y_pr1.json", "x_y_pr1.jsonl",
        ] {
            let p = write(dir.path(), name, &bytes);
            let _ = submission::detect(&p);
            for format in [
                AgentFormat::Predictions, AgentFormat::SweAgent, AgentFormat::MiniSweAgent,
                AgentFormat::Openhands, AgentFormat::ClaudeCode, AgentFormat::Codex,
                AgentFormat::Aweagent,
            ] {
                let _ = submission::ingest(&p, Some(format), None);
            }
        }
        // A Harbor job whose trial files are the input.
        let job = dir.path().join("job");
        write(&job, "t__a/result.json", &bytes);
        write(&job, "t__a/config.json", &bytes);
        write(&job, "t__a/artifacts/patch.diff", &bytes);
        write(&job, "t__a/agent/trajectory.json", &bytes);
        let _ = submission::detect(&job);
        let _ = submission::ingest(&job, Some(AgentFormat::HarborJob), None);
        let _ = submission::ingest(dir.path(), None, None);
    }
}
