//! The offline grader on the real Docker engine: fixture instances with future commits in their
//! history; gold, empty and half patches; and a tamper suite in which every attempt must end
//! unresolved (or with an unchanged Doc2Repo score) and be flagged, with no container left behind.

use super::support::{copy_dir, fixture_images, fixtures, require_docker};
use beyondswe::grade::{self, GradeInput, GradeOptions, Outcome, Reason, TestOutcome, Verdict};
use beyondswe::record::{Record, RecordReader};
use beyondswe::sandbox::{DockerSandbox, Limits};
use beyondswe::submission::{Submission, TreeLimits, read_tree};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const CALC: &str = "acme_calc_pr7";
const CALC_FUTURE: &str = "fb283b7d406fb2aa12dce63d54e287aecd8e4590";

fn record(id: &str) -> Record {
    RecordReader::open(&fixtures().join("dataset/fixtures.jsonl"))
        .unwrap()
        .map(|r| r.unwrap().1)
        .find(|r| r.instance_id() == id)
        .unwrap()
}

fn doc2repo() -> Record {
    RecordReader::open(&fixtures().join("dataset/fixtures.jsonl"))
        .unwrap()
        .map(|r| r.unwrap().1)
        .find(|r| r.family() == beyondswe::record::Family::Doc2Repo)
        .unwrap()
}

/// A patch made with git on the host: the fixture's base stage, edited by `edit`.
fn patch_from_base(fixture: &str, edit: impl FnOnce(&Path)) -> String {
    let dir = tempfile::tempdir().unwrap();
    let stage = fixtures()
        .join("images")
        .join(fixture)
        .join("stages/02-base");
    copy_dir(&stage, dir.path());
    let git = |args: &[&str]| super::support::git(dir.path(), args);
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    edit(dir.path());
    git(&["add", "-A"]);
    git(&["diff", "--cached", "--binary", "HEAD"])
}

fn future_file(fixture: &str, rel: &str) -> String {
    std::fs::read_to_string(
        fixtures()
            .join("images")
            .join(fixture)
            .join("stages/03-future")
            .join(rel),
    )
    .unwrap()
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn append(dir: &Path, rel: &str, text: &str) {
    let old = std::fs::read_to_string(dir.join(rel)).unwrap();
    write(dir, rel, &format!("{old}{text}"));
}

struct Grader {
    rt: tokio::runtime::Runtime,
    sandbox: DockerSandbox,
    run_id: String,
}

impl Grader {
    fn new() -> Grader {
        require_docker();
        fixture_images();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let sandbox = rt.block_on(DockerSandbox::connect()).unwrap();
        let run_id = format!(
            "test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        )
        .replace(['(', ')'], "");
        Grader {
            rt,
            sandbox,
            run_id,
        }
    }

    fn options(&self, timeout: Duration) -> GradeOptions {
        GradeOptions {
            limits: Limits {
                memory_mb: 1024,
                cpus: 1.0,
                pids: 256,
                ..Limits::default()
            },
            test_timeout: timeout,
            labels: DockerSandbox::process_labels(&self.run_id),
            ..GradeOptions::default()
        }
    }

    fn grade_with(&self, record: &Record, submission: Submission, timeout: Duration) -> Verdict {
        let suite = beyondswe::convert::find_test_suite(record, &fixtures().join("test_suites"));
        let input = GradeInput {
            record,
            submission: &submission,
            test_suite: suite.as_deref(),
            image_override: None,
        };
        let v = self
            .rt
            .block_on(grade::grade(&self.sandbox, input, &self.options(timeout)));
        let left = self
            .rt
            .block_on(self.sandbox.containers_of_run(&self.run_id))
            .unwrap();
        assert!(left.is_empty(), "containers left behind: {left:?}");
        v
    }

    fn grade(&self, id: &str, patch: &str) -> Verdict {
        self.grade_with(
            &record(id),
            Submission::Patch(patch.as_bytes().to_vec()),
            Duration::from_secs(120),
        )
    }
}

fn gold(id: &str) -> String {
    record(id).gold_patch().unwrap().to_owned()
}

/// Import-time check that no newer commit, tag or branch is visible to the graded code.
const HISTORY_PROBE: &str = r#"
import subprocess as _sp, os as _os
def _git(*a):
    return _sp.run(("git",) + a, cwd=_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))),
                   stdout=_sp.PIPE, stderr=_sp.PIPE)
if _git("cat-file", "-e", "FUTURE").returncode == 0 or _git("tag").stdout.strip() \
        or b"develop" in _git("branch", "-a").stdout or _git("remote").stdout.strip():
    raise RuntimeError("future history is visible")
"#;

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn gold_resolves_with_no_future_history_visible_and_empty_and_half_do_not() {
    let g = Grader::new();
    // Gold plus a probe that breaks the import if any newer commit, tag, branch or remote is visible.
    let probed = patch_from_base("calc", |d| {
        write(d, "calc/ops.py", &future_file("calc", "calc/ops.py"));
        append(
            d,
            "calc/__init__.py",
            &HISTORY_PROBE.replace("FUTURE", CALC_FUTURE),
        );
    });
    let v = g.grade(CALC, &probed);
    assert_eq!(
        (v.verdict, v.reason, v.score),
        (Outcome::Resolved, Reason::AllTestsPassed, 1.0),
        "{v:#?}"
    );
    assert!(
        v.logs.prepare.contains("future_commits=0"),
        "{}",
        v.logs.prepare
    );
    assert!(
        v.fail_to_pass
            .values()
            .chain(v.pass_to_pass.values())
            .all(|o| *o == TestOutcome::Passed)
    );
    assert!(!v.flags.tampering(), "{:?}", v.flags);
    assert!(
        v.image_id
            .as_deref()
            .is_some_and(|i| i.starts_with("sha256:"))
    );

    let v = g.grade(CALC, "");
    assert_eq!(
        (v.verdict, v.reason),
        (Outcome::Unresolved, Reason::EmptyPatch)
    );
    let v = g.grade(CALC, "  \n\n");
    assert_eq!(v.reason, Reason::EmptyPatch);

    // Half a fix: typeset minus signs, not currency symbols.
    let half = patch_from_base("calc", |d| {
        let ops = std::fs::read_to_string(d.join("calc/ops.py")).unwrap();
        write(
            d,
            "calc/ops.py",
            &ops.replace(
                "        return float(value)",
                "        return float(value.replace(\"\\u2212\", \"-\"))",
            ),
        );
    });
    let v = g.grade(CALC, &half);
    assert_eq!(
        (v.verdict, v.reason),
        (Outcome::Unresolved, Reason::TestsFailed),
        "{v:#?}"
    );
    let f2p: Vec<TestOutcome> = v.fail_to_pass.values().copied().collect();
    assert!(
        f2p.contains(&TestOutcome::Passed) && f2p.contains(&TestOutcome::Failed),
        "{f2p:?}"
    );
}

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn multi_file_migration_resolves_and_another_repos_patch_fails_to_apply() {
    let g = Grader::new();
    let v = g.grade("acme_textkit_pr12", &gold("acme_textkit_pr12"));
    assert_eq!(v.verdict, Outcome::Resolved, "{v:#?}");
    assert_eq!(
        v.fail_to_pass.get("test_fail_to_pass.py::test_migrated"),
        Some(&TestOutcome::Passed)
    );

    let v = g.grade(CALC, &gold("acme_textkit_pr12"));
    assert_eq!(
        (v.verdict, v.reason),
        (Outcome::Unresolved, Reason::PatchFailed),
        "{v:#?}"
    );
    assert!(v.logs.apply.contains("textkit/"), "{}", v.logs.apply);
}

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn binary_and_large_patches_apply() {
    let g = Grader::new();
    let p = patch_from_base("calc", |d| {
        write(d, "calc/ops.py", &future_file("calc", "calc/ops.py"));
        let bytes: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
        std::fs::write(d.join("calc/table.bin"), bytes).unwrap();
        // About 100 MB of text in one new file.
        let line = "x".repeat(99) + "\n";
        std::fs::write(d.join("data.txt"), line.repeat(1_000_000)).unwrap();
    });
    assert!(p.len() > 100_000_000 && p.contains("GIT binary patch"));
    let v = g.grade(CALC, &p);
    assert_eq!(
        v.verdict,
        Outcome::Resolved,
        "{:?} {}",
        v.reason,
        v.logs.apply
    );
    assert_eq!(v.flags.applied_with.as_deref(), Some("git apply"));
}

/// Each tamper attempt runs on the unfixed code: it must stay unresolved and be flagged.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn tamper_attempts_are_undone_and_flagged() {
    let g = Grader::new();
    type Edit = Box<dyn Fn(&Path)>;
    type Check = Box<dyn Fn(&Verdict) -> bool>;
    let cases: Vec<(&str, Edit, Check)> = vec![
        (
            "edit the failing tests",
            Box::new(|d: &Path| {
                let t = std::fs::read_to_string(d.join("tests/unit/test_more.py")).unwrap();
                write(
                    d,
                    "tests/unit/test_more.py",
                    &format!("{t}\n\ndef test_div_unicode_minus():\n    assert True\n"),
                );
            }),
            Box::new(|v: &Verdict| {
                v.flags
                    .tests_restored
                    .contains(&"tests/unit/test_more.py".to_owned())
            }),
        ),
        (
            "root conftest.py rewriting reports",
            Box::new(|d: &Path| {
                write(
                    d,
                    "conftest.py",
                    "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    out = yield\n    rep = out.get_result()\n    rep.outcome = 'passed'\n    rep.longrepr = None\n",
                );
            }),
            Box::new(|v: &Verdict| v.flags.files_removed.contains(&"conftest.py".to_owned())),
        ),
        (
            "conftest collection hooks that skip and deselect",
            Box::new(|d: &Path| {
                write(
                    d,
                    "tests/conftest.py",
                    "import pytest\n\ndef pytest_collection_modifyitems(config, items):\n    for item in items:\n        item.add_marker(pytest.mark.skip(reason='x'))\n    items[:] = items[:1]\n",
                );
            }),
            Box::new(|v: &Verdict| {
                v.flags
                    .files_removed
                    .contains(&"tests/conftest.py".to_owned())
            }),
        ),
        (
            "pytest.ini and pyproject addopts, python_files and a -p plugin",
            Box::new(|d: &Path| {
                write(
                    d,
                    "pytest.ini",
                    "[pytest]\naddopts = -p calc_evil\npython_files = nothing_*.py\n",
                );
                write(
                    d,
                    "calc_evil.py",
                    "def pytest_collection_modifyitems(items):\n    items.clear()\n",
                );
                append(
                    d,
                    "pyproject.toml",
                    "\n[tool.pytest.ini_options]\naddopts = \"-p calc_evil -k nothing\"\n",
                );
            }),
            Box::new(|v: &Verdict| {
                v.flags.files_removed.contains(&"pytest.ini".to_owned())
                    && v.flags
                        .config_reverted
                        .contains(&"pyproject.toml".to_owned())
            }),
        ),
        (
            "fake markers and summaries at import and exit, fake result files, a rewriting daemon",
            Box::new(|d: &Path| {
                append(d, "calc/__init__.py", FORGER);
            }),
            Box::new(|v: &Verdict| !v.flags.suspicious.is_empty()),
        ),
        (
            "delete the test files",
            Box::new(|d: &Path| {
                std::fs::remove_file(d.join("tests/test_calc.py")).unwrap();
                std::fs::remove_file(d.join("tests/unit/test_more.py")).unwrap();
            }),
            Box::new(|v: &Verdict| v.flags.tests_restored.len() == 2),
        ),
        (
            "sitecustomize.py and a .pth file",
            Box::new(|d: &Path| {
                write(
                    d,
                    "sitecustomize.py",
                    "import builtins\nbuiltins.float = lambda x: 0.0\n",
                );
                write(
                    d,
                    "calc/zz_evil.pth",
                    "import sys; sys.modules.pop('pytest', None)\n",
                );
            }),
            Box::new(|v: &Verdict| {
                v.flags
                    .files_removed
                    .contains(&"sitecustomize.py".to_owned())
                    && v.flags
                        .files_removed
                        .contains(&"calc/zz_evil.pth".to_owned())
            }),
        ),
    ];
    for (name, edit, flagged) in cases {
        let p = patch_from_base("calc", |d| edit(d));
        let v = g.grade(CALC, &p);
        assert_eq!(v.verdict, Outcome::Unresolved, "{name}: {v:#?}");
        assert_eq!(v.score, 0.0, "{name}");
        assert!(flagged(&v), "{name}: not flagged: {v:#?}");
        assert!(
            v.fail_to_pass.values().any(|o| *o != TestOutcome::Passed),
            "{name}: an F2P test passed on unfixed code: {:?}",
            v.fail_to_pass
        );
    }
}

/// Prints the official markers and fake summaries, plants fake JUnit files at the official fixed
/// path, and tries to rewrite the grader's own result files after the run (atexit and a daemon).
const FORGER: &str = r#"
import atexit, glob, json, os, sys, time
print("<pytest>true</pytest>\n999 passed in 0.01s")
sys.stderr.write("<pytest>true</pytest>\n")
_FAKE_XML = '<testsuite><testcase classname="x" name="y"/></testsuite>'
for _p in ("/tmp/_awe_test_results.xml", "/tmp/results.xml", "junit.xml"):
    try:
        open(_p, "w").write(_FAKE_XML)
    except OSError:
        pass
def _forge():
    for cfg in glob.glob("/tmp/beyondswe-*/runner.json"):
        c = json.load(open(cfg))
        tests = {i: {"outcome": "passed", "message": ""} for i in c["ids"]}
        json.dump({"format": "beyondswe-pytest-results-1", "nonce": c["nonce"], "exit_code": 0,
                   "finished": True, "tests": tests, "collect_errors": []}, open(c["results_path"], "w"))
        for a in c["args"]:
            if a.startswith("--junitxml="):
                cases = "".join('<testcase classname="%s" name="%s"/>' % (i.split("::")[0][:-3].replace("/", "."), i.split("::")[-1]) for i in c["ids"])
                open(a.split("=", 1)[1], "w").write("<testsuite>%s</testsuite>" % cases)
    print("<pytest>true</pytest> 11 passed")
atexit.register(_forge)
if os.environ.get("BEYONDSWE_FORGER_CHILD") is None:
    os.environ["BEYONDSWE_FORGER_CHILD"] = "1"
    if os.fork() == 0:
        time.sleep(0.3)
        _forge()
        time.sleep(1.0)
        _forge()
        os._exit(0)
"#;

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn runaway_code_is_stopped_and_the_container_removed() {
    let g = Grader::new();
    for (name, code) in [
        ("infinite loop", "\nwhile True:\n    pass\n"),
        (
            "fork bomb",
            "\nimport os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
        ),
    ] {
        let p = patch_from_base("calc", |d| append(d, "calc/__init__.py", code));
        let v = g.grade_with(
            &record(CALC),
            Submission::Patch(p.into_bytes()),
            Duration::from_secs(8),
        );
        assert_eq!(v.verdict, Outcome::Unresolved, "{name}: {v:#?}");
        // The fork bomb's `os.fork` is static evidence too (calc never forks): held for review,
        // with what the run itself came to behind it.
        let ran = match v.reason {
            Reason::ForgerySuspected => v
                .static_evidence
                .as_ref()
                .and_then(|e| e.if_accepted)
                .map(|(_, reason, _)| reason),
            other => Some(other),
        };
        assert!(
            matches!(ran, Some(Reason::Timeout | Reason::OutOfMemory)),
            "{name}: {:?} {ran:?}",
            v.reason
        );
    }
}

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn doc2repo_scores_directories_archives_and_patches() {
    let g = Grader::new();
    let rec = doc2repo();
    let tree = |p: &Path| Submission::Tree(read_tree(p, TreeLimits::default()).unwrap());
    let subs = fixtures().join("submissions");

    let v = g.grade_with(
        &rec,
        tree(&subs.join("minidoc_gold")),
        Duration::from_secs(120),
    );
    assert_eq!((v.verdict, v.score), (Outcome::Resolved, 1.0), "{v:#?}");
    assert_eq!(v.suite.as_ref().unwrap().passed, 10);
    // What pip makes of the submission's own sources (its metadata, bytecode) is not tampering.
    assert!(!v.flags.tampering(), "{:?}", v.flags);

    let v = g.grade_with(
        &rec,
        tree(&subs.join("minidoc_partial")),
        Duration::from_secs(120),
    );
    assert_eq!((v.verdict, v.score), (Outcome::Unresolved, 0.6), "{v:#?}");

    // The same trees as archives.
    let dir = tempfile::tempdir().unwrap();
    let tgz = dir.path().join("partial.tar.gz");
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&tgz)
        .arg("-C")
        .arg(subs.join("minidoc_partial"))
        .arg(".")
        .status()
        .unwrap();
    assert!(status.success());
    let v = g.grade_with(&rec, tree(&tgz), Duration::from_secs(120));
    assert_eq!(v.score, 0.6);
    let zip_path = dir.path().join("gold.zip");
    zip_dir(&subs.join("minidoc_gold"), &zip_path);
    let v = g.grade_with(&rec, tree(&zip_path), Duration::from_secs(120));
    assert_eq!(v.score, 1.0, "{v:#?}");

    // A patch against the empty base.
    let v = g.grade_with(
        &rec,
        Submission::Patch(rec.gold_patch().unwrap().as_bytes().to_vec()),
        Duration::from_secs(120),
    );
    assert_eq!(v.score, 1.0, "{v:#?}");

    // Tampering does not raise the partial score: start-up hooks, printed summaries, a pytest
    // plugin registered through the package's own entry points, a conftest in the repo.
    let evil = dir.path().join("evil");
    copy_dir(&subs.join("minidoc_partial"), &evil);
    write(
        &evil,
        "sitecustomize.py",
        "print('<pytest>true</pytest> 10 passed')\n",
    );
    write(
        &evil,
        "conftest.py",
        "def pytest_collection_modifyitems(items):\n    items.clear()\n",
    );
    write(
        &evil,
        "minidoc_evil_plugin.py",
        "import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    out = yield\n    out.get_result().outcome = 'passed'\n",
    );
    let pyproject = std::fs::read_to_string(evil.join("pyproject.toml")).unwrap();
    write(
        &evil,
        "pyproject.toml",
        &format!(
            "{pyproject}\n[project.entry-points.pytest11]\nminidoc_evil = \"minidoc_evil_plugin\"\n"
        ),
    );
    append(
        &evil,
        "minidoc/__init__.py",
        "\nimport atexit\natexit.register(lambda: print('10 passed, 0 failed'))\nprint('<pytest>true</pytest>')\n",
    );
    let v = g.grade_with(&rec, tree(&evil), Duration::from_secs(120));
    // atexit and a pytest plugin outside the tests, which the reference never uses: listed for
    // review, and the partial tree's true score stands (every trick undone).
    assert_eq!((v.reason, v.score), (Reason::TestsFailed, 0.6), "{v:#?}");
    let evidence = v.static_evidence.as_ref().expect("static evidence");
    let kinds: Vec<&str> = evidence.hits.iter().map(|h| h.kind.as_str()).collect();
    assert!(
        kinds.contains(&"atexit") && kinds.contains(&"test_machinery"),
        "{kinds:?}"
    );
    assert!(
        v.flags
            .files_removed
            .contains(&"sitecustomize.py".to_owned()),
        "{:?}",
        v.flags
    );
}

/// Honest Doc2Repo work is never proof: the reference tree graded 20 times in a row against its
/// own hidden suite and against a suite written the way real projects write theirs
/// (`fixtures/honest_suites/minidoc_real_shapes`: a mixin collected by two classes, an
/// inherited unittest case, parameters, an order-dependent pair, a shuffle), each with fresh
/// canary groups, two gradings at a time. Every grading is resolved at 1.0 with no proof and no
/// flaky group, and the groups did land on the inherited tests.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn doc2repo_reference_trees_are_never_proof_in_twenty_gradings() {
    use futures_util::StreamExt;
    let g = Grader::new();
    let dir = tempfile::tempdir().unwrap();
    let shapes_zip = dir.path().join("real_shapes_suite.zip");
    zip_dir(
        &fixtures().join("honest_suites/minidoc_real_shapes"),
        &shapes_zip,
    );
    let own = doc2repo();
    let mut raw = own.raw().clone();
    raw.insert("test_suite_num".into(), serde_json::json!(15));
    let shaped = Record::from_map(raw).unwrap();
    let own_suite =
        beyondswe::convert::find_test_suite(&own, &fixtures().join("test_suites")).unwrap();
    let gold = Submission::Tree(
        read_tree(
            &fixtures().join("submissions/minidoc_gold"),
            TreeLimits::default(),
        )
        .unwrap(),
    );
    let runs: Vec<(&str, &Record, &Path)> = (0..20)
        .flat_map(|_| {
            [
                ("own suite", &own, own_suite.as_path()),
                ("real shapes", &shaped, shapes_zip.as_path()),
            ]
        })
        .collect();
    let opts = g.options(Duration::from_secs(120));
    let verdicts: Vec<(&str, Verdict)> = g.rt.block_on(
        futures_util::stream::iter(runs.iter().map(|(name, record, suite)| {
            let (sandbox, opts, gold) = (&g.sandbox, &opts, &gold);
            async move {
                let input = GradeInput {
                    record,
                    submission: gold,
                    test_suite: Some(suite),
                    image_override: None,
                };
                (*name, grade::grade(sandbox, input, opts).await)
            }
        }))
        .buffer_unordered(2)
        .collect(),
    );
    let mut inherited = 0;
    for (name, v) in &verdicts {
        let proofs: Vec<&String> = v.canaries.iter().flat_map(|c| &c.proof).collect();
        let flaky: Vec<&String> = v.canaries.iter().flat_map(|c| &c.flaky).collect();
        assert!(
            v.flags.forgery.is_empty() && proofs.is_empty() && flaky.is_empty(),
            "{name}: {v:#?}"
        );
        assert_eq!(
            (v.verdict, v.reason, v.score),
            (Outcome::Resolved, Reason::AllTestsPassed, 1.0),
            "{name}: {v:#?}"
        );
        assert!(
            v.canary_plan.as_ref().is_some_and(|p| p.groups > 0),
            "{name}: no group was planted: {:#?}",
            v.canary_plan
        );
        // A group on a mixin's or a base class's test stands for each class that collects it.
        inherited += v
            .canaries
            .iter()
            .filter(|c| {
                c.template.contains("::SlugChecks::") || c.template.contains("::BaseCase::")
            })
            .inspect(|c| assert!(c.items.len() >= 2, "{name}: {c:#?}"))
            .count();
    }
    assert!(
        inherited > 0,
        "no group landed on a test two classes collect in 20 gradings"
    );
    let left =
        g.rt.block_on(g.sandbox.containers_of_run(&g.run_id))
            .unwrap();
    assert!(left.is_empty(), "containers left behind: {left:?}");
}

/// Doc2Repo's six groups are a sample of the suite, and a forger that recognises them by their
/// code and forces only the other tests is proven all the same: on a suite of 38 tests that can
/// all carry a group, its grouped tests pass 0 of 6 and the rest 32 of 32, a split of 1 in
/// about 2.8 million; each grouped failure is confirmed by running its variants one at a time
/// (24 runs with its module's tests before it, then 24 with every test before it), and the
/// split is proof (`forgery_detected`, score 0). A forger that also forces whichever variant
/// runs alone makes every variant of a group pass: proof by the group. The
/// reference tree (twice) and the honest partial tree show no flag and no confirming run.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn doc2repo_forcing_only_the_ungrouped_tests_is_proof_and_honest_trees_are_not_flagged() {
    let g = Grader::new();
    let dir = tempfile::tempdir().unwrap();
    let wide_zip = dir.path().join("wide_suite.zip");
    let wide = wide_doc2repo(&wide_zip);
    let gold_dir = fixtures().join("submissions/minidoc_gold");
    let ungrouped = doc2repo_forger(dir.path(), "ungrouped", &[UNGROUPED]);
    let alone = doc2repo_forger(dir.path(), "alone", &[UNGROUPED, ALONE]);
    let stalls = doc2repo_forger(dir.path(), "stalls", &[UNGROUPED, ALONE, STALLS]);
    let tree = |p: &Path| Submission::Tree(read_tree(p, TreeLimits::default()).unwrap());
    let opts = g.options(Duration::from_secs(120));
    let grade = |submission: Submission| {
        let input = GradeInput {
            record: &wide,
            submission: &submission,
            test_suite: Some(&wide_zip),
            image_override: None,
        };
        g.rt.block_on(grade::grade(&g.sandbox, input, &opts))
    };
    let split_of = |name: &str, v: &Verdict| {
        v.canary_plan
            .as_ref()
            .and_then(|p| p.sample_versus_rest.clone())
            .unwrap_or_else(|| panic!("{name}: no split: {v:#?}"))
    };
    let partial = fixtures().join("submissions/minidoc_partial");
    for (name, submission) in [
        ("gold", tree(&gold_dir)),
        ("gold again", tree(&gold_dir)),
        ("partial", tree(&partial)),
    ] {
        let v = grade(submission);
        let split = split_of(name, &v);
        assert_eq!((split.grouped[1], split.rest[1]), (6, 32), "{name}: {v:#?}");
        assert!(
            split.chance >= 1e-4
                && split.confirmed.is_none()
                && v.flags.suspicious.is_empty()
                && v.flags.forgery.is_empty(),
            "{name}: {v:#?}"
        );
        if name.starts_with("gold") {
            assert_eq!((v.score, split.chance), (1.0, 1.0), "{name}: {v:#?}");
        }
    }
    // Each forger is proof (score 0), with `flag` among the kind of flags `kind` gives.
    let proven = |forger: &Path, flag: &str, suspicious: bool| {
        let v = grade(tree(forger));
        assert_eq!(
            (v.reason, v.score),
            (Reason::ForgeryDetected, 0.0),
            "{v:#?}"
        );
        let flags = if suspicious {
            &v.flags.suspicious
        } else {
            &v.flags.forgery
        };
        assert!(flags.iter().any(|f| f.contains(flag)), "{v:#?}");
        split_of("forger", &v)
    };
    let split = proven(&ungrouped, "the suite's grouped tests passed 0 of 6", false);
    assert_eq!((split.grouped, split.rest), ([0, 6], [32, 32]));
    let confirmed = split.confirmed.expect("a confirmed split");
    assert_eq!((confirmed.grouped, confirmed.runs), ([0, 6], 48));
    assert!(confirmed.chance < 1e-6, "{confirmed:?}");
    proven(
        &alone,
        "variants passed, each run alone with its module",
        false,
    );
    // Stalling the runs alone: the first that stalls runs out of its time (twice the suite's,
    // 30 s at least), no other is made, the grouped tests left count as failed: proof, one
    // run's time lost where 48 runs of a test timeout each were at stake. (The forger's guess
    // that a variant runs alone misses on some groups' runs, which then fail as they are.)
    let began = std::time::Instant::now();
    let split = proven(&stalls, "ran out of its time", true);
    let confirmed = split.confirmed.expect("a confirmed split");
    assert_eq!((confirmed.grouped, confirmed.stalled), ([0, 6], true));
    assert!(confirmed.runs < 48, "{confirmed:?}");
    assert!(
        began.elapsed() < Duration::from_secs(150),
        "{:?}",
        began.elapsed()
    );
}

/// The draw's limit, written down: a forger that forces only part of the ungrouped tests (those
/// whose name's bytes sum to an even number) and answers wrongly everywhere else has a true score
/// of 0, yet moves the split less than proof needs (0 of 6 grouped against about half of 32: no
/// confirming run, no flag) and keeps the score it forced. The report's floor says what the
/// secret proves of it: 0.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn doc2repo_forcing_part_of_the_ungrouped_tests_keeps_its_score_and_a_floor_of_zero() {
    let g = Grader::new();
    let dir = tempfile::tempdir().unwrap();
    let wide_zip = dir.path().join("wide_suite.zip");
    let wide = wide_doc2repo(&wide_zip);
    let forger = doc2repo_forger(dir.path(), "half", &[UNGROUPED, HALF]);
    let submission = Submission::Tree(read_tree(&forger, TreeLimits::default()).unwrap());
    let opts = g.options(Duration::from_secs(120));
    let input = GradeInput {
        record: &wide,
        submission: &submission,
        test_suite: Some(&wide_zip),
        image_override: None,
    };
    let v = g.rt.block_on(grade::grade(&g.sandbox, input, &opts));
    let plan = v.canary_plan.clone().expect("a canary plan");
    let split = plan.sample_versus_rest.clone().expect("a split");
    assert_eq!(split.grouped, [0, 6], "{v:#?}");
    assert!(
        split.rest[0] > 8 && split.rest[0] < 24 && split.rest[1] == 32,
        "{split:?}"
    );
    assert!(
        split.chance >= 1e-4 && split.confirmed.is_none(),
        "{split:?}"
    );
    assert_ne!(v.reason, Reason::ForgeryDetected, "{v:#?}");
    assert!(v.flags.forgery.is_empty(), "{v:#?}");
    assert!(
        (v.score - f64::from(split.rest[0]) / 38.0).abs() < 1e-9,
        "{} {split:?}",
        v.score
    );
    let floor = beyondswe::report::proven_floor(&plan).expect("a floor");
    assert_eq!(floor.floor, 0.0, "{floor:?}");
    assert!((floor.claimed - v.score).abs() < 1e-9, "{floor:?}");
}

/// An honest suite whose every test fails under another name, as tests that compare with a
/// snapshot kept under their name do: minidoc's wide suite with a conftest that fails a test
/// whose name is not among the 38 it knows. A group's variants are renamed, so the reference
/// tree's grouped tests fail beside their clones (0 of 6 against 32 of 32, the forger's split);
/// run alone under their own names they pass and their clones fail: confirmed 6 of 6, no
/// proof and no flag. (The six still count as failed in the score, as every grouped test whose
/// outcome depends on its name does: 32 of 38.)
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn doc2repo_tests_that_fail_under_another_name_are_confirmed_under_their_own_and_not_proof() {
    let g = Grader::new();
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite");
    copy_dir(&fixtures().join("honest_suites/minidoc_wide"), &suite);
    let module = std::fs::read_to_string(suite.join("tests/test_wide.py")).unwrap();
    let names: Vec<&str> = module
        .lines()
        .filter_map(|l| l.strip_prefix("def ")?.split('(').next())
        .collect();
    assert_eq!(names.len(), 38);
    write(&suite, "tests/names.txt", &names.join("\n"));
    write(
        &suite,
        "tests/conftest.py",
        "import os\n\nimport pytest\n\n\
         with open(os.path.join(os.path.dirname(__file__), 'names.txt')) as fh:\n    KNOWN = set(fh.read().split())\n\n\n\
         @pytest.fixture(autouse=True)\ndef snapshot(request):\n\
         \x20   # What a test compares with is kept under its name, as a snapshot plugin keeps it.\n\
         \x20   if request.node.name.split('[')[0] not in KNOWN:\n\
         \x20       pytest.fail('no snapshot stored for %s' % request.node.name)\n",
    );
    let zip = dir.path().join("by_name.zip");
    zip_dir(&suite, &zip);
    let mut raw = doc2repo().raw().clone();
    raw.insert("test_suite_num".into(), serde_json::json!(38));
    let record = Record::from_map(raw).unwrap();
    let gold = Submission::Tree(
        read_tree(
            &fixtures().join("submissions/minidoc_gold"),
            TreeLimits::default(),
        )
        .unwrap(),
    );
    let input = GradeInput {
        record: &record,
        submission: &gold,
        test_suite: Some(&zip),
        image_override: None,
    };
    let v = g.rt.block_on(grade::grade(
        &g.sandbox,
        input,
        &g.options(Duration::from_secs(120)),
    ));
    let split = v
        .canary_plan
        .as_ref()
        .and_then(|p| p.sample_versus_rest.clone())
        .unwrap_or_else(|| panic!("no split: {v:#?}"));
    assert_eq!((split.grouped, split.rest), ([0, 6], [32, 32]), "{v:#?}");
    let confirmed = split.confirmed.as_ref().expect("a confirmed split");
    assert_eq!(
        (confirmed.grouped, confirmed.chance),
        ([6, 6], 1.0),
        "{v:#?}"
    );
    assert!(
        v.flags.forgery.is_empty() && v.flags.suspicious.is_empty(),
        "{v:#?}"
    );
    assert_eq!(v.suite.as_ref().map(|s| s.passed), Some(32), "{v:#?}");
}

/// Minidoc's Doc2Repo record with the wide suite (38 tests that can all carry a group) zipped
/// at `zip`.
pub(crate) fn wide_doc2repo(zip: &Path) -> Record {
    zip_dir(&fixtures().join("honest_suites/minidoc_wide"), zip);
    let mut raw = doc2repo().raw().clone();
    raw.insert("test_suite_num".into(), serde_json::json!(38));
    Record::from_map(raw).unwrap()
}

/// Minidoc's reference tree under `dir/name` with the forgers `parts` of `fixtures/forgers/`
/// appended to its package, in that order.
pub(crate) fn doc2repo_forger(dir: &Path, name: &str, parts: &[&str]) -> std::path::PathBuf {
    let d = dir.join(name);
    copy_dir(&fixtures().join("submissions/minidoc_gold"), &d);
    let text: String = parts
        .iter()
        .map(|p| std::fs::read_to_string(fixtures().join("forgers").join(p)).unwrap())
        .collect();
    append(&d, "minidoc/__init__.py", &text);
    d
}

/// `fixtures/forgers/doc2repo_forces_the_ungrouped.py`: forces every test it sees no group in.
pub(crate) const UNGROUPED: &str = "doc2repo_forces_the_ungrouped.py";
/// Then forces the variant that runs alone too.
const ALONE: &str = "doc2repo_forces_what_runs_alone.py";
/// Then stalls where a variant runs alone.
const STALLS: &str = "doc2repo_stalls_what_runs_alone.py";
/// After [`UNGROUPED`]: forces only about half of the tests it sees no group in.
const HALF: &str = "doc2repo_forces_half_the_ungrouped.py";

pub(crate) fn zip_dir(src: &Path, dest: &Path) {
    let file = std::fs::File::create(dest).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    for entry in walkdir::WalkDir::new(src).sort_by_file_name() {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        zip.start_file(rel, zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::copy(&mut std::fs::File::open(entry.path()).unwrap(), &mut zip).unwrap();
    }
    zip.finish().unwrap();
}

mod cli {
    use super::super::support::{fixture_images, fixtures, require_docker};
    use assert_cmd::cargo::cargo_bin_cmd;
    use predicates::str::contains;

    fn grade_one() -> assert_cmd::Command {
        let mut cmd = cargo_bin_cmd!("beyondswe");
        cmd.arg("grade-one")
            .arg("--dataset")
            .arg(fixtures().join("dataset/fixtures.jsonl"));
        cmd
    }

    #[test]
    fn bad_inputs_get_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let not_patch = dir.path().join("notes.txt");
        std::fs::write(&not_patch, "I fixed it, trust me\n").unwrap();
        grade_one()
            .args(["--instance", "acme_calc_pr7", "--patch"])
            .arg(&not_patch)
            .assert()
            .code(1)
            .stderr(contains("notes.txt: not a unified diff"));
        grade_one()
            .args(["--instance", "nope_nope_pr1", "--patch"])
            .arg(&not_patch)
            .assert()
            .code(1)
            .stderr(contains("no instance `nope_nope_pr1`"));
        grade_one()
            .args(["--instance", "acme_calc_pr7", "--repo"])
            .arg(dir.path())
            .assert()
            .code(1)
            .stderr(contains("--repo is for Doc2Repo instances"));
        // An archive whose entries escape the workdir.
        let zip_path = dir.path().join("evil.zip");
        {
            let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
            zip.start_file(
                "../../etc/evil.py",
                zip::write::SimpleFileOptions::default(),
            )
            .unwrap();
            std::io::Write::write_all(&mut zip, b"x = 1\n").unwrap();
            zip.finish().unwrap();
        }
        let doc = super::doc2repo();
        grade_one()
            .args(["--instance", doc.instance_id(), "--repo"])
            .arg(&zip_path)
            .assert()
            .code(1)
            .stderr(contains("refused entry `../../etc/evil.py`"));
        // The engine is unreachable: exit 3 with a hint.
        let empty = dir.path().join("empty.patch");
        std::fs::write(&empty, "").unwrap();
        let gold = dir.path().join("gold.patch");
        std::fs::write(&gold, super::gold("acme_calc_pr7")).unwrap();
        grade_one()
            .env(
                "DOCKER_HOST",
                format!("unix://{}/no.sock", dir.path().display()),
            )
            .args(["--instance", "acme_calc_pr7", "--patch"])
            .arg(&gold)
            .assert()
            .code(3)
            .stderr(contains("not reachable"))
            .stderr(contains("hint: start the Docker engine"));
    }

    /// A zip of the gold repository plus one file of `mib` MiB of zeros (about 1 KB per MiB).
    fn zip_bomb(path: &std::path::Path, mib: usize) {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(true);
        let gold = fixtures().join("submissions/minidoc_gold");
        for entry in walkdir::WalkDir::new(&gold) {
            let entry = entry.unwrap();
            if entry.file_type().is_file() {
                let rel = entry.path().strip_prefix(&gold).unwrap();
                zip.start_file(rel.to_string_lossy(), opts).unwrap();
                std::io::Write::write_all(&mut zip, &std::fs::read(entry.path()).unwrap()).unwrap();
            }
        }
        zip.start_file("data/zeros.bin", opts).unwrap();
        let block = vec![0u8; 1 << 20];
        for _ in 0..mib {
            std::io::Write::write_all(&mut zip, &block).unwrap();
        }
        zip.finish().unwrap();
    }

    /// The peak resident memory of a running child, read until it exits (`VmHWM` only grows).
    fn peak_rss_kib(mut child: std::process::Child) -> (u64, std::process::Output) {
        let pid = child.id();
        let mut peak = 0;
        while child.try_wait().unwrap().is_none() {
            if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status"))
                && let Some(kib) = status
                    .lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kib);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        (peak, child.wait_with_output().unwrap())
    }

    #[test]
    #[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
    fn a_repository_archive_streams_into_the_container_with_flat_memory() {
        require_docker();
        fixture_images();
        let dir = tempfile::tempdir().unwrap();
        let doc = super::doc2repo();
        let bin = assert_cmd::cargo::cargo_bin!("beyondswe");
        let run = |mib: usize, cap_mb: usize| {
            let bomb = dir.path().join(format!("bomb-{mib}.zip"));
            zip_bomb(&bomb, mib);
            assert!(std::fs::metadata(&bomb).unwrap().len() < (mib as u64 + 64) * 2048);
            let child = std::process::Command::new(bin)
                .args(["grade-one", "--json", "--instance", doc.instance_id()])
                .arg("--dataset")
                .arg(fixtures().join("dataset/fixtures.jsonl"))
                .arg("--test-suites")
                .arg(fixtures().join("test_suites"))
                .args([
                    "--max-repo-mb",
                    &cap_mb.to_string(),
                    "--disk-mb",
                    "2048",
                    "--repo",
                ])
                .arg(&bomb)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            peak_rss_kib(child)
        };
        // Over the cap: refused before anything runs, naming the flag.
        let (_, out) = run(64, 32);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--max-repo-mb"),
            "{out:?}"
        );
        // 64 MiB and 512 MiB trees: graded, and the grader's memory does not grow with them.
        let mut peaks = Vec::new();
        for mib in [64, 512] {
            let (peak, out) = run(mib, 1024);
            let v: serde_json::Value =
                serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
            assert_eq!(v["verdict"], "resolved", "{mib} MiB: {v}");
            peaks.push(peak);
        }
        assert!(
            peaks[1] < 100 * 1024,
            "peak RSS {} KiB for a 512 MiB tree",
            peaks[1]
        );
        assert!(
            peaks[1] < peaks[0] + 16 * 1024,
            "memory grows with the tree: {peaks:?} KiB"
        );
    }

    #[test]
    #[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
    fn a_missing_image_is_pulled_or_named_with_its_fix() {
        require_docker();
        fixture_images();
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data.jsonl");
        let line = std::fs::read_to_string(fixtures().join("dataset/fixtures.jsonl")).unwrap();
        let mut rec: serde_json::Value =
            serde_json::from_str(line.lines().next().unwrap()).unwrap();
        rec["image"] = "beyondswe-test/does-not-exist:1".into();
        std::fs::write(&data, format!("{rec}\n")).unwrap();
        let gold = dir.path().join("gold.patch");
        std::fs::write(&gold, rec["patch"].as_str().unwrap()).unwrap();
        // With pulls off: the input's problem (the image is not there), with its fix: 1, not 3.
        let assert = cargo_bin_cmd!("beyondswe")
            .args([
                "grade-one",
                "--json",
                "--pull",
                "never",
                "--instance",
                "acme_calc_pr7",
                "--dataset",
            ])
            .arg(&data)
            .arg("--patch")
            .arg(&gold)
            .assert()
            .code(1)
            .stderr(contains("hint: pull the instance's image"));
        let v: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
        assert_eq!(v["verdict"], "error");
        assert_eq!(v["reason"], "image_missing");
        // With pulls on (the default) and no registry answering: the pull's failure, named, an
        // infrastructure error (3), before any container.
        cargo_bin_cmd!("beyondswe")
            .args(["grade-one", "--instance", "acme_calc_pr7", "--dataset"])
            .arg(&data)
            .arg("--patch")
            .arg(&gold)
            .assert()
            .code(3)
            .stderr(contains("pulling `beyondswe-test/does-not-exist:1`"));
        // The empty patch needs no container at all.
        let empty = dir.path().join("empty.patch");
        std::fs::write(&empty, "\n").unwrap();
        let assert = cargo_bin_cmd!("beyondswe")
            .args([
                "grade-one",
                "--json",
                "--instance",
                "acme_calc_pr7",
                "--dataset",
            ])
            .arg(fixtures().join("dataset/fixtures.jsonl"))
            .arg("--patch")
            .arg(&empty)
            .assert()
            .success();
        let v: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
        assert_eq!(
            (
                v["verdict"].as_str(),
                v["reason"].as_str(),
                v["score"].as_f64()
            ),
            (Some("unresolved"), Some("empty_patch"), Some(0.0))
        );
    }

    #[test]
    #[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
    fn harbor_task_without_docker_image_is_built_and_graded() {
        require_docker();
        fixture_images();
        let dir = tempfile::tempdir().unwrap();
        cargo_bin_cmd!("beyondswe")
            .args(["convert", "to-harbor", "--omit-docker-image"])
            .arg(fixtures().join("dataset/fixtures.jsonl"))
            .arg(dir.path())
            .args(["--ids", "acme_calc_pr7"])
            .assert()
            .success();
        let gold = dir.path().join("gold.patch");
        std::fs::write(&gold, super::gold("acme_calc_pr7")).unwrap();
        let assert = cargo_bin_cmd!("beyondswe")
            .args([
                "grade-one",
                "--json",
                "--instance",
                "acme_calc_pr7",
                "--dataset",
            ])
            .arg(dir.path())
            .arg("--patch")
            .arg(&gold)
            .assert()
            .success();
        let v: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
        assert_eq!(v["verdict"], "resolved", "{v:#}");
    }
}

/// `grade-one --json` of calc with `code` appended to its package (so its tests run as long as
/// the code does), under a 600 s timeout, started and left running.
fn grade_one_running(dir: &Path, code: &str) -> std::process::Child {
    // calc's gold check made (and cached) first: the grading then runs in the only container
    // it starts, which the tests stop or kill from outside.
    static CHECKED: std::sync::Once = std::sync::Once::new();
    CHECKED.call_once(|| {
        let patch = dir.join("gold.patch");
        std::fs::write(&patch, gold(CALC)).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_beyondswe"))
            .args(["grade-one", "--instance", CALC, "--json", "--dataset"])
            .arg(fixtures().join("dataset/fixtures.jsonl"))
            .arg("--patch")
            .arg(&patch)
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("\"resolved\""),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
    let patch = dir.join("slow.patch");
    std::fs::write(
        &patch,
        patch_from_base("calc", |d| append(d, "calc/__init__.py", code)),
    )
    .unwrap();
    Command::new(env!("CARGO_BIN_EXE_beyondswe"))
        .args([
            "grade-one",
            "--instance",
            CALC,
            "--timeout",
            "600",
            "--json",
            "--dataset",
        ])
        .arg(fixtures().join("dataset/fixtures.jsonl"))
        .arg("--patch")
        .arg(&patch)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn ctrl_c_removes_the_container() {
    require_docker();
    fixture_images();
    let dir = tempfile::tempdir().unwrap();
    let mut child = grade_one_running(dir.path(), "\nwhile True:\n    pass\n");
    let label = format!("label=beyondswe.pid={}", child.id());
    let listed = || super::support::docker(&["ps", "-aq", "--filter", &label]);
    super::support::wait_for_container(&format!("beyondswe.pid={}", child.id()));
    // Let the tests start, then interrupt.
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(listed().trim().is_empty(), "container left after Ctrl-C");
}

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn memory_exhaustion_is_reported_as_out_of_memory() {
    let g = Grader::new();
    let p = patch_from_base("calc", |d| {
        append(
            d,
            "calc/__init__.py",
            "\nhog = []\nwhile True:\n    hog.append(bytearray(50 * 1024 * 1024))\n",
        )
    });
    let v = g.grade_with(
        &record(CALC),
        Submission::Patch(p.into_bytes()),
        Duration::from_secs(60),
    );
    assert_eq!(
        (v.verdict, v.reason),
        (Outcome::Unresolved, Reason::OutOfMemory),
        "{v:#?}"
    );
}

/// Writes `mib` MiB in 16 MiB files under `dir`, at import; with `keep_open`, each file is
/// unlinked at once and only its descriptor keeps it (no directory entry shows it).
fn disk_filler(dir: &str, mib: u32, keep_open: bool) -> String {
    format!(
        r#"
import os as _os
_held = []
_os.makedirs({dir:?}, exist_ok=True)
for _i in range({files}):
    _p = _os.path.join({dir:?}, "blob-%d" % _i)
    _fh = open(_p, "wb")
    if {keep_open}:
        _os.unlink(_p)
        _held.append(_fh)
    for _ in range(16):
        _fh.write(b"x" * (1 << 20))
    _fh.flush()
    if not {keep_open}:
        _fh.close()
"#,
        files = mib / 16,
        keep_open = if keep_open { "True" } else { "False" },
    )
}

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn writing_past_the_disk_limit_is_stopped_and_reported() {
    let g = Grader::new();
    let rec = record(CALC);
    let mut opts = g.options(Duration::from_secs(120));
    opts.limits.disk_mb = 160;
    let grade = |patch: String| {
        let input = GradeInput {
            record: &rec,
            submission: &Submission::Patch(patch.into_bytes()),
            test_suite: None,
            image_override: None,
        };
        g.rt.block_on(grade::grade(&g.sandbox, input, &opts))
    };
    // The gold patch under the same small limit: nothing to stop.
    let v = grade(gold(CALC));
    assert_eq!(v.verdict, Outcome::Resolved, "{v:#?}");
    for (name, dir, keep_open) in [
        ("files in /tmp", "/tmp/fill", false),
        ("files in the workdir", "fill", false),
        ("unlinked files held open", "/var/tmp/fill", true),
    ] {
        let code = disk_filler(dir, 640, keep_open);
        let p = patch_from_base("calc", |d| {
            write(d, "calc/ops.py", &future_file("calc", "calc/ops.py"));
            append(d, "calc/__init__.py", &code);
        });
        let v = grade(p);
        assert_eq!(v.verdict, Outcome::Unresolved, "{name}: {v:#?}");
        assert_eq!(v.reason, Reason::DiskLimit, "{name}: {v:#?}");
        assert!(
            v.logs.error.contains("over the disk limit of 160 MiB"),
            "{name}: {}",
            v.logs.error
        );
    }
    let left =
        g.rt.block_on(g.sandbox.containers_of_run(&g.run_id))
            .unwrap();
    assert!(left.is_empty(), "containers left behind: {left:?}");
}

/// A diff that adds `tests/conftest.py` holding `body`.
fn new_conftest(body: &str) -> String {
    let lines: Vec<&str> = body.lines().collect();
    let mut diff = format!(
        "diff --git a/tests/conftest.py b/tests/conftest.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/conftest.py\n@@ -0,0 +1,{} @@\n",
        lines.len()
    );
    for l in lines {
        diff.push('+');
        diff.push_str(l);
        diff.push('\n');
    }
    diff
}

/// A conftest that forges reports, brought in by the dataset's own f2p patch: the stand-in for
/// a forger the static step cannot see, so that the canaries alone must catch it. `FORGE(item)`
/// says which failed reports become passes.
fn forging_conftest(forge: &str) -> String {
    let body = format!(
        "import os\n\nimport pytest\n\n\nF2P = {{\"tests/test_calc.py::test_add\", \"tests/test_calc.py::TestOps::test_sub_currency\",\n       \"tests/unit/test_more.py::test_div_unicode_minus\"}}\nwith open(os.path.join(os.path.dirname(__file__), os.pardir, \"calc\", \"ops.py\")) as _fh:\n    SUBMITTED = \"parsed by float()\" in _fh.read()\n\n\ndef FORGE(item):\n    return SUBMITTED and ({forge})\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    report = outcome.get_result()\n    if report.failed and FORGE(item):\n        report.outcome = \"passed\"\n        report.longrepr = None\n"
    );
    new_conftest(&body)
}

/// Canary groups catch forged outcomes where nothing else does: a conftest from the dataset's
/// own f2p patch (which neither the static step nor the restore questions) forges the reports
/// of a wrong fix (only where the wrong fix is: the gold check, which runs the same tests under
/// the gold patch, sees them honest, as it sees a submission's forging, which is never there). Forging every failure makes every variant of a group pass, which holds when
/// the group runs alone: proof. Forging the FAIL_TO_PASS ids by their public names forges
/// nothing a group stands for (the real variant has a fresh name), so the wrong fix stays
/// unresolved. Forging only in a session of many tests still forges when a group runs alone
/// (it is many tests): proof. The same conftest forging nothing leaves it plainly unresolved.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn canaries_alone_catch_a_forger_the_static_step_cannot_see() {
    let g = Grader::new();
    let wrong_fix = patch_from_base("calc", |d| {
        append(d, "calc/ops.py", "\n# Operands are parsed by float().\n");
    });
    for (forge, proof) in [
        ("True", true),
        ("item.nodeid.split(\"[\")[0] in F2P", false),
        ("False", false),
        ("len(item.session.items) > 1", true),
    ] {
        let mut raw = record(CALC).raw().clone();
        let f2p_patch = raw["f2p_patch"].as_str().unwrap().to_owned() + &forging_conftest(forge);
        raw.insert("f2p_patch".into(), f2p_patch.into());
        let rec = Record::from_map(raw).unwrap();
        let v = g.grade_with(
            &rec,
            Submission::Patch(wrong_fix.as_bytes().to_vec()),
            Duration::from_secs(120),
        );
        assert!(v.static_evidence.is_none(), "{forge}: {v:#?}");
        let plan = v.canary_plan.as_ref().expect("a canary plan");
        assert_eq!(plan.f2p_groups, 2, "{forge}: {plan:#?}");
        // The printed chance is the product of 1/size over the F2P groups as built (a string
        // whose changed place is a digit has ten values at most).
        let product: f64 = plan.sizes.iter().map(|n| 1.0 / f64::from(*n)).product();
        assert!((plan.forge_chance - product).abs() < 1e-12, "{plan:#?}");
        let proofs: Vec<&String> = v.canaries.iter().flat_map(|c| &c.proof).collect();
        if proof {
            assert_eq!(
                (v.verdict, v.reason),
                (Outcome::Unresolved, Reason::ForgeryDetected),
                "{forge}: {v:#?}"
            );
            assert!(
                proofs
                    .iter()
                    .any(|p| p.contains("variants passed") && p.contains("alone")),
                "{forge}: {proofs:#?}"
            );
        } else {
            assert_eq!(
                (v.verdict, v.reason),
                (Outcome::Unresolved, Reason::TestsFailed),
                "{forge}: {v:#?}"
            );
            assert!(proofs.is_empty(), "{proofs:#?}");
        }
    }
}

/// The blind forger (`fixtures/forgers/blind_conftest.py`) as a new `tests/conftest.py`.
fn blind_forger_conftest() -> String {
    let body = std::fs::read_to_string(fixtures().join("forgers/blind_conftest.py")).unwrap();
    new_conftest(&body)
}

/// The most a binomial(n, p) count reaches but with a chance under one in a million.
fn binomial_ceiling(n: u64, p: f64) -> u64 {
    let mut tail = 1.0;
    let mut pmf = (1.0 - p).powi(n as i32);
    for x in 0..=n {
        tail -= pmf;
        if tail < 1e-6 {
            return x;
        }
        pmf *= (n - x) as f64 / (x + 1) as f64 * p / (1.0 - p);
    }
    n
}

/// The printed bound holds for a blind forger: over many gradings of a wrong fix whose reports
/// a forger rewrites (one variant of each group it recognises, the rest wholesale), it passes
/// undetected no more often than the forge chance each verdict prints allows. 20 gradings in
/// CI; `BEYONDSWE_BLIND_FORGER_RUNS` sets more (the full sweep is 200).
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn a_blind_forger_passes_undetected_no_more_often_than_the_printed_chance() {
    let g = Grader::new();
    let runs: u64 = std::env::var("BEYONDSWE_BLIND_FORGER_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let wrong_fix = patch_from_base("calc", |d| {
        append(d, "calc/ops.py", "\n# Operands are parsed by float().\n");
    });
    let mut raw = record(CALC).raw().clone();
    let f2p_patch = raw["f2p_patch"].as_str().unwrap().to_owned() + &blind_forger_conftest();
    raw.insert("f2p_patch".into(), f2p_patch.into());
    let rec = Record::from_map(raw).unwrap();
    // A wrong guess is a passing mutant beside a failing real variant (tests_failed, as wrong
    // honest code is), or a forced mutant beside a real variant that passed (proof).
    let (mut undetected, mut detected, mut chance) = (0u64, 0u64, 0.0f64);
    for _ in 0..runs {
        let v = g.grade_with(
            &rec,
            Submission::Patch(wrong_fix.as_bytes().to_vec()),
            Duration::from_secs(120),
        );
        let plan = v.canary_plan.as_ref().expect("a canary plan");
        chance = chance.max(plan.forge_chance);
        let passes: Vec<String> = v
            .canaries
            .iter()
            .flat_map(|c| c.items.values())
            .map(|o| o.iter().filter(|o| *o == "passed").count().to_string())
            .collect();
        eprintln!(
            "  {:?} {:?}, passes per group {passes:?}",
            v.verdict, v.reason
        );
        match (v.verdict, v.reason) {
            (Outcome::Resolved, _) => undetected += 1,
            (Outcome::Unresolved, Reason::ForgeryDetected) => detected += 1,
            (Outcome::Unresolved, _) => {}
            other => panic!("the blind forger was graded {other:?}"),
        }
    }
    let ceiling = binomial_ceiling(runs, chance);
    eprintln!(
        "blind forger: {runs} gradings, {detected} proof, {undetected} resolved, the rest unresolved (forge chance {chance}, ceiling {ceiling})"
    );
    assert!(
        chance <= 0.01 + 1e-12,
        "calc's two F2P groups (3.5 and -2 take ten values each) print at most 1 in 100"
    );
    assert!(
        undetected <= ceiling,
        "{undetected} of {runs} passed undetected"
    );
}

/// The restore step reads only the covered files that something of the grading rewrote, once the
/// prepared image is older than its margin. Against that: the adversarial suite's
/// `restore-skip-same-size-weakened-test`, a P2P test weakened in place to the same size and mode
/// beside a regression it would hide. Graded when the skip is active (the gold grading first, so
/// the prepared image exists and is older than the margin), it must still be read and restored.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn the_restore_still_reads_a_test_weakened_to_the_same_size_in_an_aged_prepared_image() {
    let g = Grader::new();
    let v = g.grade(CALC, &gold(CALC));
    assert_eq!(v.verdict, Outcome::Resolved, "{v:?}");
    // The restore's margin: a file counts as the image's if it changed last 2 s before the start.
    std::thread::sleep(Duration::from_millis(2500));
    let v = g.grade(CALC, &gold(CALC));
    assert_eq!(v.verdict, Outcome::Resolved, "{v:?}");
    assert!(v.timings.contains_key("note_clean"), "{:?}", v.timings);
    assert!(v.flags.tests_restored.is_empty(), "{:?}", v.flags);
    let patch = std::fs::read_to_string(
        fixtures().join("adversarial/patches/restore-skip-same-size-weakened-test.patch"),
    )
    .unwrap();
    let v = g.grade(CALC, &patch);
    assert_eq!(v.verdict, Outcome::Unresolved, "{v:?}");
    assert_eq!(
        v.flags.tests_restored,
        vec!["tests/test_calc.py".to_owned()],
        "{:?}",
        v.flags
    );
    assert_eq!(
        v.pass_to_pass.get("tests/test_calc.py::test_add_ints"),
        Some(&TestOutcome::Failed),
        "{:?}",
        v.pass_to_pass
    );
}

/// A grading container killed or stopped from outside the grader while the tests run (an
/// operator, the machine's OOM killer elsewhere, a daemon restart) is the infrastructure's failure, said within
/// seconds: `error` / `sandbox_failed` naming what happened, not `unresolved` / `timeout` after
/// the whole `--timeout`, which would blame the submission.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn a_container_killed_from_outside_is_an_infrastructure_error_at_once() {
    require_docker();
    fixture_images();
    // `docker kill` (SIGKILL at once) and `docker stop` (SIGTERM, then SIGKILL after its grace).
    for how in [&["kill"][..], &["stop", "-t", "1"][..]] {
        let dir = tempfile::tempdir().unwrap();
        let started = std::time::Instant::now();
        let child = grade_one_running(dir.path(), "\nimport time\ntime.sleep(600)\n");
        let label = format!("beyondswe.pid={}", child.id());
        // The grading's container: the one that stays (the instance's gold check, made first
        // when it is not cached yet, runs in a container of its own for a few seconds).
        let mut seen = (String::new(), std::time::Instant::now());
        let id = loop {
            super::support::wait_for_container(&label);
            let id = super::support::docker(&["ps", "-q", "--filter", &format!("label={label}")]);
            let id = id.trim().to_owned();
            if !id.is_empty() && id == seen.0 && seen.1.elapsed() > Duration::from_secs(4) {
                break id;
            }
            if id != seen.0 {
                seen = (id, std::time::Instant::now());
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "no grading container"
            );
            std::thread::sleep(Duration::from_millis(200));
        };
        let mut args = how.to_vec();
        args.push(&id);
        super::support::docker(&args);
        let out = child.wait_with_output().unwrap();
        let took = started.elapsed();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{how:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(v["verdict"], "error", "{how:?}: {v:#}");
        assert_eq!(v["reason"], "sandbox_failed", "{how:?}: {v:#}");
        assert!(
            v.to_string().contains("stopped while the step ran")
                || v.to_string().contains("removed from outside"),
            "{how:?}: {v:#}"
        );
        assert!(took < Duration::from_secs(120), "{how:?} took {took:?}");
    }
}

/// Every container the grader starts has a memory file system for pytest's capture files,
/// writable by the test user and bounded by the memory limit (the verifier hands it to the
/// runner; on a storage driver in user space it saves about 1.7 ms a test).
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn containers_have_a_memory_file_system_for_pytest_s_capture() {
    use beyondswe::sandbox::{ContainerSpec, ExecSpec, Sandbox};
    require_docker();
    fixture_images();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let sandbox = rt.block_on(DockerSandbox::connect()).unwrap();
    let spec = ContainerSpec {
        image: record(CALC).image().unwrap().to_owned(),
        workdir: None,
        labels: DockerSandbox::process_labels(&format!("test-capture-{}", std::process::id()))
            .into_iter()
            .collect(),
        limits: Limits {
            memory_mb: 512,
            ..Limits::default()
        },
    };
    let handle = rt.block_on(sandbox.start(&spec)).unwrap();
    let exec = ExecSpec {
        cmd: vec![
            "sh".into(),
            "-c".into(),
            "grep ' /run/beyondswe-capture ' /proc/mounts; su nobody -s /bin/sh -c 'touch /run/beyondswe-capture/x && echo writable'".into(),
        ],
        workdir: None,
        env: Vec::new(),
        timeout: Duration::from_secs(60),
        max_output: 1 << 16,
    };
    let out = rt.block_on(sandbox.exec(&handle, &exec));
    rt.block_on(sandbox.remove(&handle)).unwrap();
    let out = out.unwrap();
    assert!(
        out.stdout.contains("tmpfs /run/beyondswe-capture tmpfs"),
        "{out:?}"
    );
    assert!(out.stdout.contains("size=524288k"), "{out:?}");
    assert!(out.stdout.contains("writable"), "{out:?}");
}
