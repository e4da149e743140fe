//! Per evaluation, side by side in one run: this grader against the official BeyondSWE evaluator's
//! procedure, and the grader's test phase against a plain pytest run of the same tests in the
//! same container.
//!
//! The official evaluator (AweAgent's `BeyondSWEEvaluator`, steps in the research notes on the
//! formats, section 2.2–2.8) cannot run here (its images and runtime need a registry), so this
//! bench replays its procedure on the same fixture images through the same engine: a fresh
//! container from the instance image; one exec per step, as its runtime does (checkout of the
//! base, the setup commands, the pre-agent commit, the future-history strip, the patch uploaded
//! and applied, the two restore commands, the f2p patch and script, the runner and its config
//! uploaded,
//! the injected runner: `pytest.main(["-vv", "--junitxml=…", "-o", "addopts=", "--rootdir=."] +
//! ids)`, the JUnit file downloaded); Doc2Repo: the tree uploaded, `pip install -e .`, the suite
//! uploaded and unzipped, pytest over it. That runner's exec is the plain pytest run.
//!
//! Three baselines for the test phase: that pytest exec (root, after the replay's steps); the
//! same exec again as an unprivileged user; and, for issue instances, a plain pytest run first
//! thing in a fresh container of this grader's prepared image as an unprivileged user (cold, as
//! this grader's own test phase runs). On a storage driver in user space (fuse-overlayfs) the
//! last two cost much more than the first, whoever runs them.
//!
//! Rounds are interleaved per instance (ours, then the official replay), so both see the same
//! machine; before each timed run the disk is synced (untimed), so no run pays for the writes
//! of the one before it. Run with `cargo bench --bench official -- N` (N rounds, default 7; needs the Docker
//! engine; builds the fixture images first if they are missing). The instances are the fixtures',
//! or those of `BEYONDSWE_BENCH_DATASET` (issue instances from real projects, made by
//! `scripts/make-bench-project.py`). A Markdown table on stdout, progress on stderr.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::unwrap_used)]

mod common;

use beyondswe::grade::{self, GradeInput, GradeOptions, Outcome};
use beyondswe::record::{Family, Record};
use beyondswe::sandbox::{ContainerSpec, DockerSandbox, ExecSpec, Limits, Sandbox, TarBuilder};
use common::{build_images, engine, gold_submissions, median, minidoc_gold_tree, repetitions};
use std::path::Path;
use std::time::Instant;

/// The injected runner of the official evaluator, as its notes describe it (written here, not
/// copied): cwd first on the path, pytest with JUnit, a marker for the return code.
const OFFICIAL_RUNNER: &str = r#"import json, os, sys
config = json.load(open(sys.argv[1]))
sys.path.insert(0, os.getcwd())
sys.argv = [sys.argv[0]]
import pytest
code = pytest.main(["-vv", "--junitxml=" + config["xml_path"], "-o", "addopts=", "--rootdir=."] + config["test_ids"])
print("<pytest>true</pytest>" if code == 0 else "<pytest>false</pytest>")
"#;

/// The injected runner's exec as an unprivileged user (uid 4242, which owns the workdir then).
const AS_USER: &str = "HOME=/tmp setpriv --reuid 4242 --regid 4242 --clear-groups python3 /tmp/_awe_pytest_runner.py /tmp/_awe_test_config.json > /dev/null 2>&1; true";

/// The injected runner's configuration: the F2P and P2P ids, the JUnit file's place.
fn runner_config(rec: &Record) -> serde_json::Value {
    let mut ids = rec.fail_to_pass();
    ids.extend(rec.pass_to_pass());
    serde_json::json!({"test_ids": ids, "xml_path": "/tmp/_awe_test_results.xml"})
}

/// The future-history strip of the official evaluator, in one shell exec.
const STRIP: &str = r#"cur=$(git rev-parse --abbrev-ref HEAD)
for ref in $(git for-each-ref --format='%(refname)'); do
  case "$ref" in
    refs/heads/*) b=${ref#refs/heads/}; [ "$b" = "$cur" ] || git branch -f "$b" HEAD ;;
    *) git update-ref "$ref" HEAD ;;
  esac
done
git stash clear || true
git reflog expire --expire=now --all || true
git gc --prune=now -q || true"#;

struct Replay<'a> {
    sandbox: &'a DockerSandbox,
    container: <DockerSandbox as Sandbox>::Handle,
    workdir: String,
}

impl<'a> Replay<'a> {
    /// A fresh container of `image`, with default limits, labelled as this bench's.
    async fn start(sandbox: &'a DockerSandbox, image: &str, workdir: &str) -> Replay<'a> {
        let spec = ContainerSpec {
            image: image.to_owned(),
            workdir: None,
            labels: DockerSandbox::process_labels("bench-official")
                .into_iter()
                .collect(),
            limits: Limits::default(),
        };
        Replay {
            sandbox,
            container: sandbox.start(&spec).await.expect("start"),
            workdir: workdir.to_owned(),
        }
    }

    async fn sh(&self, script: &str) -> beyondswe::sandbox::ExecOutput {
        self.sandbox
            .exec(
                &self.container,
                &ExecSpec::new(["bash", "-c", script]).in_dir(self.workdir.clone()),
            )
            .await
            .expect("exec")
    }

    async fn upload(&self, dir: &str, files: &[(&str, &[u8])]) {
        let mut tar = TarBuilder::new();
        for (name, data) in files {
            tar.file(name, data, 0o644).unwrap();
        }
        self.sandbox
            .upload(&self.container, dir, tar.finish().unwrap())
            .await
            .expect("upload");
    }

    async fn upload_tree(&self, src: &Path) {
        let mut tar = TarBuilder::new();
        for entry in walkdir::WalkDir::new(src).min_depth(1).sort_by_file_name() {
            let entry = entry.unwrap();
            let rel = entry.path().strip_prefix(src).unwrap().to_string_lossy();
            if entry.file_type().is_dir() {
                tar.dir(&rel, 0o755).unwrap();
            } else {
                tar.file(&rel, &fs_err::read(entry.path()).unwrap(), 0o644)
                    .unwrap();
            }
        }
        self.sandbox
            .upload(&self.container, &self.workdir, tar.finish().unwrap())
            .await
            .expect("upload");
    }
}

/// The official procedure on one submission: (wall seconds, pytest exec seconds, passed, the
/// same pytest exec again as an unprivileged user, timed apart and outside the wall time).
async fn official(
    sandbox: &DockerSandbox,
    rec: &Record,
    gold_tree: &Path,
    suite: Option<&Path>,
) -> (f64, f64, bool, f64) {
    let t = Instant::now();
    let r = Replay::start(sandbox, rec.image().unwrap(), rec.workdir()).await;
    r.sh(&format!("git checkout -q {}", rec.base_commit().unwrap()))
        .await;
    for cmd in rec.pre_commands() {
        r.sh(&cmd).await;
    }
    r.sh("git config user.email pre-agent@example.invalid")
        .await;
    r.sh("git config user.name Pre-Agent").await;
    r.sh("git add -A").await;
    r.sh("git commit -q -m 'pre-agent commit' || true").await;
    r.sh("git rev-parse HEAD").await;
    r.sh(STRIP).await;
    let (pytest, passed);
    if rec.family() == Family::Doc2Repo {
        r.upload_tree(gold_tree).await;
        r.sh("git checkout HEAD -- tests/ test/ Test/ Tests/ 2>/dev/null; true")
            .await;
        r.sh("pip install -q --no-deps --no-build-isolation --no-index -e . 2>&1")
            .await;
        let zip = fs_err::read(suite.unwrap()).unwrap();
        r.upload("/tmp", &[("_awe_test_suite.zip", &zip)]).await;
        r.sh("unzip -o -q /tmp/_awe_test_suite.zip").await;
        let t = Instant::now();
        let out = r
            .sh("python3 -m pytest -q -p no:cacheprovider 2>&1 | tail -n 3")
            .await;
        pytest = t.elapsed().as_secs_f64();
        passed = out.combined().contains("passed") && !out.combined().contains("failed");
    } else {
        let patch = rec.gold_patch().unwrap();
        r.upload("/tmp", &[("_awe_agent.patch", patch.as_bytes())])
            .await;
        r.sh("git apply --verbose /tmp/_awe_agent.patch").await;
        r.sh("git checkout HEAD -- tests/ test/ Test/ Tests/ 2>/dev/null; true")
            .await;
        r.sh("git checkout HEAD -- $(git ls-files '**/test_*.py' '**/*_test.py' '**/conftest.py') 2>/dev/null; true")
            .await;
        if let Some(f2p) = rec.f2p_patch().filter(|p| !p.trim().is_empty()) {
            r.upload("/tmp", &[("_awe_f2p.patch", f2p.as_bytes())])
                .await;
            r.sh("git apply --verbose /tmp/_awe_f2p.patch").await;
        }
        if let Some(script) = rec.f2p_script().filter(|s| !s.trim().is_empty()) {
            let dir = r.workdir.clone();
            r.upload(&dir, &[("test_fail_to_pass.py", script.as_bytes())])
                .await;
        }
        let config = runner_config(rec);
        r.upload(
            "/tmp",
            &[
                ("_awe_pytest_runner.py", OFFICIAL_RUNNER.as_bytes()),
                ("_awe_test_config.json", config.to_string().as_bytes()),
            ],
        )
        .await;
        let t = Instant::now();
        let out = r
            .sh("python3 /tmp/_awe_pytest_runner.py /tmp/_awe_test_config.json")
            .await;
        pytest = t.elapsed().as_secs_f64();
        passed = out.combined().contains("<pytest>true</pytest>");
        sandbox
            .download(&r.container, "/tmp/_awe_test_results.xml", 1 << 20)
            .await
            .expect("download");
    }
    let wall = t.elapsed().as_secs_f64();
    // The same run as a user other than root, as this grader's tests run: on a storage driver in
    // user space (fuse-overlayfs) every path an unprivileged process opens costs a permission
    // check that root skips, which is the machine's cost and not the runner's.
    let mut as_user = f64::NAN;
    if rec.family() != Family::Doc2Repo {
        r.sh("chown -R 4242:4242 . && chmod 644 /tmp/_awe_test_config.json")
            .await;
        let t = Instant::now();
        r.sh(AS_USER).await;
        as_user = t.elapsed().as_secs_f64();
    }
    sandbox.remove(&r.container).await.expect("remove");
    (wall, pytest, passed, as_user)
}

/// A plain pytest run of the instance's tests in a fresh container of this grader's prepared
/// image, cold, as an unprivileged user (as this grader's test phase runs: first thing in its
/// container, not as root): the gold and f2p patches applied as root first, untimed.
async fn plain_cold(sandbox: &DockerSandbox, rec: &Record, prepared: &str) -> f64 {
    let r = Replay::start(sandbox, prepared, rec.workdir()).await;
    let config = runner_config(rec);
    let gold = rec.gold_patch().unwrap_or_default();
    let f2p = rec.f2p_patch().unwrap_or_default();
    r.upload(
        "/tmp",
        &[
            ("_awe_pytest_runner.py", OFFICIAL_RUNNER.as_bytes()),
            ("_awe_test_config.json", config.to_string().as_bytes()),
            ("_gold.patch", gold.as_bytes()),
            ("_f2p.patch", f2p.as_bytes()),
        ],
    )
    .await;
    r.sh("git apply /tmp/_gold.patch; test ! -s /tmp/_f2p.patch || git apply /tmp/_f2p.patch; chown -R 4242:4242 .")
        .await;
    let t = Instant::now();
    r.sh(AS_USER).await;
    let secs = t.elapsed().as_secs_f64();
    sandbox.remove(&r.container).await.expect("remove");
    secs
}

/// Untimed, before each timed run: the page cache's dirty pages written out, so that neither
/// side's run pays for the writes the run before it left (the official replay's `git gc`
/// rewrites a whole pack, which the disk then writes while the next run works).
fn settle() {
    let _ = std::process::Command::new("sync").status();
}

fn main() {
    let rounds = repetitions(7);
    build_images();
    let (rt, sandbox) = engine();
    let opts = GradeOptions {
        labels: DockerSandbox::process_labels("bench-official"),
        ..GradeOptions::default()
    };
    let gold_tree = minidoc_gold_tree();
    println!(
        "## Per evaluation against the official evaluator's procedure ({rounds} interleaved rounds, medians in seconds)\n"
    );
    println!(
        "| instance | family | ours: total | official: total | **official / ours** | ours: tests | ours: verifier | plain pytest | **tests / pytest** | **verifier / pytest** | plain pytest, unprivileged | **tests / that** | plain pytest, unprivileged, cold, prepared image | **tests / that** |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let (mut all_ratio, mut all_tests, mut all_verifier) = (Vec::new(), Vec::new(), Vec::new());
    for (rec, sub, suite) in &gold_submissions() {
        let input = GradeInput {
            record: rec,
            submission: sub,
            test_suite: suite.as_deref(),
            image_override: None,
        };
        eprintln!("{}: warm-up…", rec.instance_id());
        let v = rt.block_on(grade::grade(&sandbox, input, &opts));
        assert_eq!(v.verdict, Outcome::Resolved, "{v:?}");
        let (_, _, ok, _) = rt.block_on(official(&sandbox, rec, &gold_tree, suite.as_deref()));
        assert!(
            ok,
            "{}: the official replay did not pass gold",
            rec.instance_id()
        );
        let (mut ours, mut theirs, mut tests, mut verifier, mut plain, mut plain_user, mut cold) = (
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
        );
        for round in 0..rounds {
            eprintln!("{}: round {}/{rounds}…", rec.instance_id(), round + 1);
            settle();
            let t = Instant::now();
            let v = rt.block_on(grade::grade(&sandbox, input, &opts));
            ours.push(t.elapsed().as_secs_f64());
            assert_eq!(v.verdict, Outcome::Resolved);
            tests.push(v.timings.get("tests").copied().unwrap_or(f64::NAN));
            if rec.family() != Family::Doc2Repo {
                let prepared = v.prepared_image.clone().expect("a prepared image");
                settle();
                cold.push(rt.block_on(plain_cold(&sandbox, rec, &prepared)));
            }
            verifier.push(v.timings.get("verifier").copied().unwrap_or(f64::NAN));
            settle();
            let (wall, pytest, ok, as_user) =
                rt.block_on(official(&sandbox, rec, &gold_tree, suite.as_deref()));
            assert!(ok);
            theirs.push(wall);
            plain.push(pytest);
            plain_user.push(as_user);
        }
        let pc = median(cold);
        let (o, t, te, ve, p, pu) = (
            median(ours),
            median(theirs),
            median(tests),
            median(verifier),
            median(plain),
            median(plain_user),
        );
        all_ratio.push(t / o);
        all_tests.push(te / p);
        all_verifier.push(ve / p);
        println!(
            "| {} | {} | {o:.3} | {t:.3} | **{:.1}×** | {te:.3} | {ve:.3} | {p:.3} | **{:.2}×** | **{:.2}×** | {pu:.3} | **{:.2}×** | {pc:.3} | **{:.2}×** |",
            rec.instance_id(),
            rec.family(),
            t / o,
            te / p,
            ve / p,
            te / pu,
            te / pc
        );
    }
    println!();
    println!(
        "Median over instances: official / ours **{:.1}×**; our test phase / plain pytest **{:.2}×**; our whole verifier exec / plain pytest **{:.2}×**.",
        median(all_ratio),
        median(all_tests),
        median(all_verifier)
    );
}
