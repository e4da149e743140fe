//! The generated Harbor tasks work in real containers, the way Harbor runs them: the environment
//! Dockerfile builds FROM the instance image and strips newer history; the oracle's solve.sh
//! applies the gold patch; tests/ is copied in after the agent and test.sh writes the reward.
//! Runs on the Docker engine with the offline fixture images (scripts/build-fixture-images.sh).

use super::support::{Container, docker, fixture_images, fixtures, require_docker};
use beyondswe::convert::{self, ToHarborOptions, VerifierMode};
use beyondswe::harbor::TaskToml;
use beyondswe::record::{Record, RecordReader};
use std::path::{Path, PathBuf};

/// Commits after the base in the fixture images (see fixtures/images/*/history).
const FUTURE: &[(&str, &str)] = &[
    ("acme_calc_pr7", "fb283b7d406fb2aa12dce63d54e287aecd8e4590"),
    (
        "acme_textkit_pr12",
        "9b9f1b606060cf374ed7348c25380e2ef0c1f4ec",
    ),
];

/// A fixture record by id: the instances of fixtures.jsonl and the image shapes of shapes.jsonl.
fn fixture(id: &str) -> Record {
    super::adversarial::records()
        .into_iter()
        .find(|r| r.instance_id() == id)
        .unwrap_or_else(|| panic!("no fixture {id}"))
}

pub(crate) struct Task {
    pub(crate) dir: PathBuf,
    pub(crate) image: String,
    pub(crate) workdir: String,
    _tmp: tempfile::TempDir,
}

/// Converts one fixture and builds its environment like Harbor's docker backend does (the
/// default conversion: a separate verifier).
pub(crate) fn build_task(id: &str) -> Task {
    build_task_with(id, VerifierMode::Separate)
}

/// [`build_task`] with the verifier mode given.
pub(crate) fn build_task_with(id: &str, verifier_mode: VerifierMode) -> Task {
    build_task_opts(
        id,
        ToHarborOptions {
            verifier_mode,
            ..ToHarborOptions::default()
        },
    )
}

/// [`build_task`] with the conversion's options given (the fixtures' suites added).
pub(crate) fn build_task_opts(id: &str, opts: ToHarborOptions) -> Task {
    let record = fixture(id);
    let tmp = tempfile::tempdir().unwrap();
    let opts = ToHarborOptions {
        test_suites: Some(fixtures().join("test_suites")),
        ..opts
    };
    let dir = convert::write_task(&record, tmp.path(), &opts).unwrap();
    task_in(dir, id, record.workdir(), tmp)
}

/// The task written at `dir` (inside `tmp`, kept as long as the task), its environment built
/// like Harbor's docker backend builds it.
pub(crate) fn task_in(dir: PathBuf, id: &str, workdir: &str, tmp: tempfile::TempDir) -> Task {
    let image = format!("beyondswe-test/harbor-{}:latest", id.to_lowercase());
    docker(&[
        "build",
        "-q",
        "--label",
        "beyondswe.test=1",
        "-t",
        &image,
        &dir.join("environment").display().to_string(),
    ]);
    Task {
        dir,
        image,
        workdir: workdir.to_owned(),
        _tmp: tmp,
    }
}

/// [`build_task`] with the task's gold check made on this engine (`convert to-harbor
/// --gold-check`), as a conversion meant to carry every canary group is made: a site that needs
/// the gold check to be sound (an expected exception class) carries a group only with it.
pub(crate) fn build_task_with_gold_check(id: &str, dataset: &Path) -> Task {
    let record = fixture(id);
    let tmp = tempfile::tempdir().unwrap();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_beyondswe"))
        .args(["convert", "to-harbor"])
        .arg(dataset)
        .arg(tmp.path().join("tasks"))
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .args(["--gold-check", "--ids", id])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let dir = tmp
        .path()
        .join("tasks")
        .join(beyondswe::harbor::task_dir_name(id));
    assert!(
        dir.join(beyondswe::harbor::paths::GOLD_CHECK).is_file(),
        "{id}: no gold check"
    );
    task_in(dir, id, record.workdir(), tmp)
}

/// Runs the verifier the way Harbor does; returns (reward.txt or None, report.json). In separate
/// mode (the default conversion, Harbor ≥ 0.26): the task's collect hooks run in the agent's
/// container `c`, `/logs/artifacts` is carried into a fresh container of the task's image, and
/// test.sh runs there. In shared mode (Harbor 0.1.x): test.sh runs in `c` itself.
pub(crate) fn verify(c: &Container, task: &Task) -> (Option<String>, serde_json::Value) {
    verify_in(c, task, &task.image, "true")
}

/// [`verify`] with the separate verifier's container started from `image` and `setup` run in it
/// first (a prebuilt `docker_image`, which Harbor starts as it is for the verifier too).
pub(crate) fn verify_in(
    c: &Container,
    task: &Task,
    image: &str,
    setup: &str,
) -> (Option<String>, serde_json::Value) {
    let toml =
        TaskToml::parse(&std::fs::read_to_string(task.dir.join("task.toml")).unwrap()).unwrap();
    if toml.verifier.environment_mode.as_deref() != Some("separate") {
        return run_test_sh(c, task);
    }
    for hook in &toml.verifier.collect {
        let (code, out) = c.sh(&hook.command);
        assert_eq!(code, 0, "the collect hook failed: {out}");
    }
    let carried = tempfile::tempdir().unwrap();
    c.copy_out("/logs/artifacts", &carried.path().join("artifacts"));
    let v = Container::run(image);
    let (code, out) = v.sh(setup);
    assert_eq!(code, 0, "{out}");
    v.sh("mkdir -p /logs");
    v.copy_in(&carried.path().join("artifacts"), "/logs/artifacts");
    run_test_sh(&v, task)
}

/// Uploads tests/ and runs test.sh in `c`, as Harbor's verifier step does.
fn run_test_sh(c: &Container, task: &Task) -> (Option<String>, serde_json::Value) {
    c.copy_in(&task.dir.join("tests"), "/tests");
    let (_code, output) = c.sh("sh /tests/test.sh");
    let (rc, reward) = c.sh("cat /logs/verifier/reward.txt");
    let (_, report) = c.sh("cat /logs/verifier/report.json");
    let report: serde_json::Value = serde_json::from_str(&report).unwrap_or_else(|e| {
        panic!("report.json unreadable ({e}): {report}\ntest.sh said:\n{output}")
    });
    ((rc == 0).then(|| reward.trim().to_owned()), report)
}

pub(crate) fn solve(c: &Container, task: &Task) {
    c.copy_in(&task.dir.join("solution"), "/solution");
    let (code, out) = c.sh("sh /solution/solve.sh");
    assert_eq!(code, 0, "solve.sh failed: {out}");
}

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn issue_tasks_strip_history_and_reward_gold_but_not_empty_or_tampered() {
    require_docker();
    fixture_images();
    let modes = [VerifierMode::Separate, VerifierMode::Shared];
    for ((id, future), mode) in FUTURE.iter().flat_map(|f| modes.map(|m| (f, m))) {
        let task = build_task_with(id, mode);

        // The agent's view: no commit newer than the base is stored anywhere.
        let agent = Container::run(&task.image);
        let (code, out) = agent.sh(&format!("cd {} && git cat-file -e {future}", task.workdir));
        assert_ne!(code, 0, "{id}: future commit still readable: {out}");
        let (_, log) = agent.sh(&format!(
            "cd {} && git log --all --format=%H && git tag && git branch -a",
            task.workdir
        ));
        assert!(!log.contains(future), "{id}: {log}");
        drop(agent);

        // Oracle: reward 1, every F2P and P2P test passed.
        let c = Container::run(&task.image);
        solve(&c, &task);
        let (reward, report) = verify(&c, &task);
        assert_eq!(reward.as_deref(), Some("1"), "{id}: {report:#}");
        assert_eq!(report["verdict"], "resolved");
        assert!(
            report["fail_to_pass"]
                .as_object()
                .unwrap()
                .values()
                .all(|v| v == "passed"),
            "{report:#}"
        );
        drop(c);

        // No change at all: reward 0.
        let c = Container::run(&task.image);
        let (reward, report) = verify(&c, &task);
        assert_eq!(reward.as_deref(), Some("0"), "{id}: {report:#}");
        assert_eq!(report["reason"], "tests_failed");
        drop(c);

        // An agent that leaves a root conftest.py turning failures into passes, a pytest.ini that
        // deselects everything, and a forged reward file: still 0, and every trick is undone.
        let c = Container::run(&task.image);
        let (code, out) = c.sh(&format!(
            "cd {w} && printf '%s\\n' 'import pytest' '@pytest.hookimpl(hookwrapper=True)' \
             'def pytest_runtest_makereport(item, call):' '    out = yield' '    r = out.get_result()' \
             '    r.outcome = \"passed\"' >conftest.py && printf '[pytest]\\naddopts = -k nothing\\n' >pytest.ini \
             && mkdir -p /logs/verifier && echo 1 >/logs/verifier/reward.txt && echo '{{\"reward\": 1}}' >/logs/verifier/reward.json",
            w = task.workdir
        ));
        assert_eq!(code, 0, "{out}");
        let (reward, report) = verify(&c, &task);
        assert_eq!(reward.as_deref(), Some("0"), "{id}: {report:#}");
        let removed: Vec<&str> = report["flags"]["files_removed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(
            removed.contains(&"conftest.py") && removed.contains(&"pytest.ini"),
            "{report:#}"
        );
        if mode == VerifierMode::Shared {
            // The verifier ran in this container: nothing of the forgery is left.
            let (rc, _) = c.sh("test -e /logs/verifier/reward.json");
            assert_ne!(rc, 0, "a forged reward.json survived");
        }
    }
}

pub(crate) fn copy_tree_into(c: &Container, src: &Path, workdir: &str) {
    // `docker cp DIR/. C:DEST` copies the contents.
    c.copy_in(&src.join("."), workdir);
}

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn doc2repo_task_scores_the_pass_rate() {
    require_docker();
    fixture_images();
    let id = RecordReader::open(&fixtures().join("dataset/fixtures.jsonl"))
        .unwrap()
        .map(|r| r.unwrap().1)
        .find(|r| r.family() == beyondswe::record::Family::Doc2Repo)
        .unwrap()
        .instance_id()
        .to_owned();
    let task = build_task(&id);
    for (submission, expected) in [("minidoc_gold", "1"), ("minidoc_partial", "0.600000")] {
        let c = Container::run(&task.image);
        let (rc, spec) = c.sh(&format!("cat {}/repo_document.md", task.workdir));
        assert_eq!(rc, 0, "the spec is not in the workdir: {spec}");
        copy_tree_into(
            &c,
            &fixtures().join("submissions").join(submission),
            &task.workdir,
        );
        let (reward, report) = verify(&c, &task);
        assert_eq!(
            reward.as_deref(),
            Some(expected),
            "{submission}: {report:#}"
        );
    }
    // A submission that prints fake summaries and a sitecustomize.py does not raise the score.
    let c = Container::run(&task.image);
    copy_tree_into(
        &c,
        &fixtures().join("submissions/minidoc_partial"),
        &task.workdir,
    );
    c.sh(&format!(
        "cd {w} && printf 'print(\"<pytest>true</pytest> 10 passed\")\\n' >sitecustomize.py \
         && printf 'import atexit\\natexit.register(lambda: print(\"10 passed, 0 failed\"))\\n' >>minidoc/__init__.py",
        w = task.workdir
    ));
    let (reward, report) = verify(&c, &task);
    // `atexit` in the package, which the reference never uses: listed for review, and the
    // partial tree's true score stands (the sitecustomize.py scrubbed, the prints ignored).
    assert_eq!(reward.as_deref(), Some("0.600000"), "{report:#}");
    assert_eq!(report["reason"], "tests_failed", "{report:#}");
    assert!(
        report["static"]["hits"]
            .as_array()
            .is_some_and(|h| !h.is_empty()),
        "{report:#}"
    );
}

/// The Doc2Repo split through Harbor's path: on minidoc's wide suite (38 tests, six grouped),
/// the reference tree scores 1 with no flag, and a forger that recognises the groups and forces
/// only the other tests is proof (reward 0, `forgery_detected`) once its grouped failures are
/// confirmed alone, as offline (`grade_docker`).
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn doc2repo_forcing_only_the_ungrouped_tests_is_proof_through_test_sh() {
    require_docker();
    fixture_images();
    let tmp = tempfile::tempdir().unwrap();
    let suites = tmp.path().join("suites");
    std::fs::create_dir(&suites).unwrap();
    let probe = super::grade_docker::wide_doc2repo(&tmp.path().join("probe.zip"));
    let name = probe
        .test_suite()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("{}.zip", probe.instance_id()));
    let record = super::grade_docker::wide_doc2repo(&suites.join(name));
    let opts = ToHarborOptions {
        test_suites: Some(suites),
        ..ToHarborOptions::default()
    };
    let dir = convert::write_task(&record, tmp.path(), &opts).unwrap();
    // Its own image name: the narrow suite's task is built under the instance's.
    let task = task_in(dir, "minidoc-wide-suite", record.workdir(), tmp);
    let forger = tempfile::tempdir().unwrap();
    for (tree, reward, reason) in [
        (
            fixtures().join("submissions/minidoc_gold"),
            "1",
            "all_tests_passed",
        ),
        (
            super::grade_docker::doc2repo_forger(
                forger.path(),
                "ungrouped",
                &[super::grade_docker::UNGROUPED],
            ),
            "0",
            "forgery_detected",
        ),
    ] {
        let c = Container::run(&task.image);
        copy_tree_into(&c, &tree, &task.workdir);
        let (got, report) = verify(&c, &task);
        assert_eq!(got.as_deref(), Some(reward), "{report:#}");
        assert_eq!(report["reason"], reason, "{report:#}");
        let split = &report["canary_plan"]["sample_versus_rest"];
        if reward == "1" {
            assert!(split["confirmed"].is_null(), "{report:#}");
            assert_eq!(
                report["flags"]["suspicious"],
                serde_json::json!([]),
                "{report:#}"
            );
        } else {
            assert_eq!(
                split["confirmed"]["grouped"],
                serde_json::json!([0, 6]),
                "{report:#}"
            );
        }
    }
}

/// The adversarial suite through Harbor's path: each cheat is what the agent left in its
/// container (a patch it applied as root, or a tree it wrote), then `tests/test.sh` grades it.
/// Archive cases are about reading submitted archives, which Harbor never does: left out here.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn adversarial_suite_through_test_sh() {
    use super::adversarial::{cases, meets};
    require_docker();
    fixture_images();
    let only = std::env::var("BEYONDSWE_ADVERSARIAL_ONLY").unwrap_or_default();
    let cases: Vec<_> = cases()
        .into_iter()
        .filter(|c| !c.submission.starts_with("archives/") && c.name.contains(&only))
        .collect();
    let records = super::adversarial::records();
    let mut tasks = std::collections::BTreeMap::new();
    for c in &cases {
        let id = records
            .iter()
            .find(|r| r.instance_id().starts_with(&c.instance))
            .unwrap()
            .instance_id()
            .to_owned();
        // The expected-exception instance's group stands on its gold check (its cases expect
        // the group); the others' tasks are converted as by default.
        tasks.entry(c.instance.clone()).or_insert_with(|| {
            if c.instance == "acme_calc_pr8" {
                build_task_with_gold_check(&id, &fixtures().join("adversarial/dataset.jsonl"))
            } else {
                build_task(&id)
            }
        });
    }
    let queue = std::sync::Mutex::new(cases.iter());
    let lines = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let Some(case) = queue.lock().unwrap().next() else {
                        break;
                    };
                    let task = &tasks[&case.instance];
                    let c = Container::run(&task.image);
                    let src = fixtures().join("adversarial").join(&case.submission);
                    if case.kind == "patch" {
                        // What the agent wrote is the fix itself: a transport-mangled copy (CRLF)
                        // is put back first, as the offline grader does.
                        let (fixed, _) =
                            beyondswe::patch::normalize_transport(&std::fs::read(&src).unwrap());
                        let tmp = tempfile::NamedTempFile::new().unwrap();
                        std::fs::write(tmp.path(), fixed).unwrap();
                        c.copy_in(tmp.path(), "/tmp/agent.patch");
                        c.sh(&format!(
                            "cd {} && git apply --whitespace=nowarn /tmp/agent.patch; rm -f /tmp/agent.patch",
                            task.workdir
                        ));
                    } else {
                        copy_tree_into(&c, &src, &task.workdir);
                    }
                    let (reward, report) = verify(&c, task);
                    let score = reward.as_deref().and_then(|r| r.parse::<f64>().ok());
                    let verdict = score.and_then(|_| serde_json::from_value(report["verdict"].clone()).ok());
                    let reason = report["reason"].as_str().unwrap_or_default().to_owned();
                    let flagged = report["static"]["hits"].as_array().is_some_and(|h| !h.is_empty())
                || report["flags"]["suspicious"].as_array().is_some_and(|h| !h.is_empty());
                    let ok = meets(&case.expect, verdict, score.unwrap_or(0.0), &reason, flagged);
                    lines.lock().unwrap().push((
                        ok,
                        format!(
                            "{:<5} {:<55} reward={:?} {} {}",
                            if ok { "ok" } else { "FAIL" },
                            case.name,
                            reward,
                            reason,
                            if ok { String::new() } else { format!("{}", report["flags"]) }
                        ),
                    ));
                }
            });
        }
    });
    let mut lines = lines.into_inner().unwrap();
    lines.sort_by(|a, b| a.1.cmp(&b.1));
    let failed: Vec<&str> = lines
        .iter()
        .filter(|l| !l.0)
        .map(|l| l.1.as_str())
        .collect();
    eprintln!(
        "adversarial suite through test.sh: {} cases, {} failed\n{}",
        lines.len(),
        failed.len(),
        lines
            .iter()
            .map(|l| l.1.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// Harbor's default runs `docker_image` as it is: no environment build, so no record of what the
/// image had before the agent. The verifier then keeps metadata that loads no pytest plugin (the
/// image's own editable install may live there) and still removes what would: the gold fix
/// scores 1, a root `*.dist-info` declaring a `pytest11` plugin that passes everything scores 0.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn without_the_environment_build_gold_passes_and_a_planted_plugin_does_not() {
    require_docker();
    fixture_images();
    let record = fixture("acme_calc_pr7");
    // Converted for a prebuilt image: its test.sh expects no interpreter record.
    let task = build_task_opts(
        "acme_calc_pr7",
        ToHarborOptions {
            prebuilt_image: true,
            ..ToHarborOptions::default()
        },
    );
    let base = record.base_commit().unwrap();
    let prepare = format!(
        "cd {w} && git -c advice.detachedHead=false checkout -q -f {base} && test ! -e /var/lib/beyondswe",
        w = task.workdir
    );
    let c = Container::run(record.image().unwrap());
    let (code, out) = c.sh(&prepare);
    assert_eq!(code, 0, "{out}");
    solve(&c, &task);
    let (reward, report) = verify_in(&c, &task, record.image().unwrap(), &prepare);
    assert_eq!(reward.as_deref(), Some("1"), "{report:#}");
    drop(c);

    let c = Container::run(record.image().unwrap());
    let (code, out) = c.sh(&prepare);
    assert_eq!(code, 0, "{out}");
    let (code, out) = c.sh(&format!(
        "cd {w} && mkdir -p evil-1.0.dist-info && printf 'Metadata-Version: 2.1\\nName: evil\\nVersion: 1.0\\n' >evil-1.0.dist-info/METADATA \
         && printf '[pytest11]\\nevil = calc_evil_plugin\\n' >evil-1.0.dist-info/entry_points.txt \
         && printf 'import pytest\\n@pytest.hookimpl(hookwrapper=True)\\ndef pytest_runtest_makereport(item, call):\\n    out = yield\\n    out.get_result().outcome = \"passed\"\\n' >calc_evil_plugin.py",
        w = task.workdir
    ));
    assert_eq!(code, 0, "{out}");
    let (reward, report) = verify_in(&c, &task, record.image().unwrap(), &prepare);
    assert_eq!(reward.as_deref(), Some("0"), "{report:#}");
    assert!(
        report["flags"]["files_removed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "evil-1.0.dist-info/"),
        "{report:#}"
    );
}

/// `convert to-harbor --gold-check` makes each issue task's gold check on this engine, as the
/// local grader makes it, and gives it to the task's verifier (`tests/gold_check.json`); a
/// Doc2Repo task has none and is made all the same.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn convert_gives_each_issue_task_its_gold_check() {
    require_docker();
    fixture_images();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tasks");
    let doc = "minidoc_ac79166631ba81556e3f40c05aa8d00fe9178ca6";
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_beyondswe"))
        .args(["convert", "to-harbor"])
        .arg(fixtures().join("dataset/demo.jsonl"))
        .arg(&out)
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .args(["--gold-check", "--ids", "acme_calc_pr7", doc])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let task = |id: &str| out.join(beyondswe::harbor::task_dir_name(id));
    let check: beyondswe::verifier_spec::GoldCheck = serde_json::from_slice(
        &std::fs::read(task("acme_calc_pr7").join(beyondswe::harbor::paths::GOLD_CHECK)).unwrap(),
    )
    .unwrap();
    assert!(check.finished && !check.seed.is_empty(), "{check:?}");
    let sound = check.tests.values().filter(|s| !s.is_empty()).count();
    assert!(sound >= 2, "{check:?}");
    assert!(task(doc).join("task.toml").is_file());
    assert!(
        !task(doc)
            .join(beyondswe::harbor::paths::GOLD_CHECK)
            .exists()
    );
}
