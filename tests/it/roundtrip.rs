//! JSONL → Harbor task directory → JSONL is the identity, on generated records covering every
//! field variant and on the bundled fixtures.

use beyondswe::convert::{self, ToHarborOptions};
use beyondswe::harbor::paths;
use beyondswe::record::{Record, RecordReader, records_from_str};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::path::Path;

const KNOWN: &[&str] = &[
    "instance_id",
    "task",
    "repo",
    "user",
    "base_commit",
    "pre_agent_commit_id",
    "parent_commit",
    "base",
    "workdir",
    "image",
    "image_url",
    "language",
    "problem_statement",
    "REPO_DOCUMENT_CONTENT",
    "patch",
    "fix_patch",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "f2p_patch",
    "f2p_script",
    "test_suite",
    "test_suite_num",
    "pre_commands",
];

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e12f64..1e12).prop_map(|f| json!(f)),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z_][a-zA-Z0-9_]{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Text of every kind: short unicode (NUL, CR, emoji), empty, or large.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => any::<String>(),
        1 => Just(String::new()),
        1 => (any::<char>(), 100_000usize..300_000).prop_map(|(c, n)| c.to_string().repeat(n)),
    ]
}

fn test_ids() -> impl Strategy<Value = Option<Value>> {
    let id = "[a-z_/]{1,12}\\.py::[A-Za-z_]{1,8}(\\[[ a-zé☃-]{0,6}\\])?";
    prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        Just(Some(json!([]))),
        Just(Some(json!("[]"))),
        prop::collection::vec(id, 1..4).prop_map(|v| Some(json!(v))),
        prop::collection::vec(id, 1..4)
            .prop_map(|v| Some(Value::String(serde_json::to_string(&v).unwrap()))),
        id.prop_map(|s| Some(Value::String(s))),
    ]
}

fn record() -> impl Strategy<Value = Map<String, Value>> {
    let spelling = prop::sample::select(vec![
        "CrossRepo",
        "crossrepo",
        "cross-repo",
        "DomainFix",
        "domain_fix",
        "DepMigrate",
        "depmigrate",
        "Doc2Repo",
        "doc2repo",
        "refactor",
    ]);
    let issue_id = "[a-z][a-z0-9-]{0,8}_[a-z0-9_-]{1,10}_pr[0-9]{1,5}";
    let doc_id = "[A-Za-z][A-Za-z0-9]{0,8}_[0-9a-f]{40}";
    let base = prop_oneof![
        Just(None),
        "[0-9a-f]{40}".prop_map(|s| Some(("base_commit", json!(s)))),
        "[0-9a-f]{40}".prop_map(|s| Some(("parent_commit", json!(s)))),
        "[0-9a-f]{40}".prop_map(|s| Some(("pre_agent_commit_id", json!(s)))),
        "[0-9a-f]{40}".prop_map(|s| Some(("base", json!({"sha": s, "ref": "main"})))),
    ];
    let image = prop_oneof![
        "[a-z]{1,8}/[a-z]{1,8}:[a-z0-9_.-]{1,12}".prop_map(|s| ("image", json!(s))),
        "[a-z]{1,8}/[a-z]{1,8}:[a-z0-9_.-]{1,12}".prop_map(|s| ("image_url", json!(s))),
    ];
    let pre = prop_oneof![
        Just(None),
        any::<String>().prop_map(|s| Some(json!(s))),
        prop::collection::vec(any::<String>(), 0..3)
            .prop_map(|v| Some(json!({"execute_command": {"commands": v}}))),
        prop::collection::vec("[a-z ]{1,10}", 0..3).prop_map(|v| Some(json!(v))),
    ];
    let extras = prop::collection::btree_map("[a-z][a-zA-Z0-9_]{0,10}", any_json(), 0..4);
    (
        spelling,
        issue_id,
        doc_id,
        base,
        image,
        prop_oneof![
            Just(None),
            Just(Some(Value::Null)),
            "/[a-z ]{1,10}".prop_map(|s| Some(json!(s)))
        ],
        (text(), text(), text(), text()),
        (test_ids(), test_ids()),
        pre,
        extras,
        prop_oneof![
            Just(None),
            "[A-Za-z]{1,8}".prop_map(|s| Some(("repo", json!(s)))),
            "[a-z]{1,5}/[a-z]{1,5}".prop_map(|s| Some(("repo", json!(s))))
        ],
        (1u64..500, any::<bool>()),
    )
        .prop_map(
            |(
                task,
                issue_id,
                doc_id,
                base,
                image,
                workdir,
                (statement, spec, patch, f2p),
                (f2p_ids, p2p_ids),
                pre,
                extras,
                repo,
                (num, spec_in_statement),
            )| {
                let doc = beyondswe::record::Family::from_spelling(task)
                    == beyondswe::record::Family::Doc2Repo;
                let mut m = Map::new();
                m.insert(
                    "instance_id".into(),
                    json!(if doc { doc_id } else { issue_id }),
                );
                m.insert("task".into(), json!(task));
                if let Some((k, v)) = base {
                    m.insert(k.into(), v);
                }
                m.insert(image.0.into(), image.1);
                if let Some(w) = workdir {
                    m.insert("workdir".into(), w);
                }
                if let Some((k, v)) = repo {
                    m.insert(k.into(), v);
                }
                if doc {
                    if spec_in_statement {
                        m.insert("problem_statement".into(), json!(spec));
                    } else {
                        m.insert("REPO_DOCUMENT_CONTENT".into(), json!(spec));
                    }
                    m.insert("test_suite".into(), json!("suite.zip"));
                    m.insert("test_suite_num".into(), json!(num));
                } else {
                    m.insert("problem_statement".into(), json!(statement));
                    m.insert("patch".into(), json!(patch));
                    m.insert("f2p_patch".into(), json!(f2p));
                    if let Some(v) = f2p_ids {
                        m.insert("FAIL_TO_PASS".into(), v);
                    }
                    if let Some(v) = p2p_ids {
                        m.insert("PASS_TO_PASS".into(), v);
                    }
                }
                if let Some(p) = pre {
                    m.insert("pre_commands".into(), p);
                }
                for (k, v) in extras {
                    if !KNOWN.contains(&k.as_str()) {
                        m.insert(k, v);
                    }
                }
                m
            },
        )
}

fn suites_dir(dir: &Path) -> std::path::PathBuf {
    let suites = dir.join("suites");
    std::fs::create_dir_all(&suites).unwrap();
    std::fs::copy(
        super::support::fixtures().join("test_suites/variant_suite.zip"),
        suites.join("suite.zip"),
    )
    .unwrap();
    suites
}

/// JSONL line → record → task dir → record → JSONL line; returns the record read back.
fn through_harbor(map: &Map<String, Value>, dir: &Path) -> (Record, Record) {
    let line = serde_json::to_string(map).unwrap();
    let original = records_from_str(&line).unwrap().remove(0);
    let opts = ToHarborOptions {
        test_suites: Some(suites_dir(dir)),
        ..ToHarborOptions::default()
    };
    let task = convert::write_task(&original, &dir.join("tasks"), &opts).unwrap();
    let read = convert::read_task(&task).unwrap();
    let line_back = serde_json::to_string(&read.record).unwrap();
    let back = records_from_str(&line_back).unwrap().remove(0);
    (original, back)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn jsonl_to_harbor_to_jsonl_is_the_identity(map in record()) {
        let dir = tempfile::tempdir().unwrap();
        let (original, back) = through_harbor(&map, dir.path());
        prop_assert_eq!(Value::Object(original.raw().clone()), Value::Object(back.raw().clone()));
        prop_assert_eq!(Value::Object(map), Value::Object(back.into_raw()));
    }

    /// Without `instance.json` (the layout of task directories made by other tools), every field the
    /// grader needs is recovered from the other files.
    #[test]
    fn fields_are_recovered_without_instance_json(map in record()) {
        let dir = tempfile::tempdir().unwrap();
        let line = serde_json::to_string(&map).unwrap();
        let original = records_from_str(&line).unwrap().remove(0);
        let opts = ToHarborOptions { test_suites: Some(suites_dir(dir.path())), ..ToHarborOptions::default() };
        let task = convert::write_task(&original, &dir.path().join("tasks"), &opts).unwrap();
        std::fs::remove_file(task.join(paths::INSTANCE_JSON)).unwrap();
        let back = convert::read_task(&task).unwrap().record;
        prop_assert_eq!(back.instance_id(), original.instance_id());
        prop_assert_eq!(back.family(), original.family());
        prop_assert_eq!(back.image(), original.image());
        prop_assert_eq!(back.base_commit(), original.base_commit());
        prop_assert_eq!(back.workdir(), original.workdir());
        prop_assert_eq!(back.fail_to_pass(), original.fail_to_pass());
        prop_assert_eq!(back.pass_to_pass(), original.pass_to_pass());
        prop_assert_eq!(back.f2p_patch(), original.f2p_patch());
        prop_assert_eq!(back.gold_patch(), original.gold_patch());
        prop_assert_eq!(back.repo_document(), original.repo_document());
        prop_assert_eq!(back.test_suite_num(), original.test_suite_num());
        if original.family().is_issue_task() {
            prop_assert_eq!(back.problem_statement().unwrap_or_default(), original.problem_statement().unwrap_or_default());
        }
    }
}

#[test]
fn every_bundled_fixture_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let suites = super::support::fixtures().join("test_suites");
    let mut n = 0;
    for entry in std::fs::read_dir(super::support::fixtures().join("dataset")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        for item in RecordReader::open(&path).unwrap() {
            let (_, record) = item.unwrap();
            let opts = ToHarborOptions {
                test_suites: Some(suites.clone()),
                ..ToHarborOptions::default()
            };
            let out = dir.path().join(path.file_name().unwrap());
            let task = convert::write_task(&record, &out, &opts).unwrap();
            let back = convert::read_task(&task).unwrap().record;
            assert_eq!(back, record, "{}", record.instance_id());
            n += 1;
        }
    }
    assert!(n >= 6, "only {n} fixture records");
}
