//! The real Harbor CLI on the converted fixture tasks: Harbor 0.26.0 (with its full dependency set)
//! and 0.1.45 (the version BeyondSWE-harbor targets, with the packages it imports), run from the
//! client image that `scripts/build-harbor-client-image.sh` makes (Python 3.13 from Debian, Compose
//! v2) through `scripts/harbor-run.sh`, against the engine, with the default conversion: no
//! prebuilt image, so Harbor builds `environment/` and its history strip. One trial per task, two
//! at a time; one Harbor job at a time.
//!
//! The tests are `#[ignore]`d (a plain `cargo test` leaves them out); run, they fail without the
//! engine or the client image.

use super::adversarial::{Case, cases, meets};
use super::support::{copy_dir, fixture_images, fixtures, repo_root, require_docker, run_ok};
use beyondswe::grade::Outcome;
use beyondswe::harbor::{TaskToml, lookup_task, task_dir_name, task_name_index, trial_dirs};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

const VERSIONS: [&str; 2] = ["0.26.0", "0.1.45"];
const DOC2REPO: &str = "minidoc_ac79166631ba81556e3f40c05aa8d00fe9178ca6";
/// A DomainFix instance made from the textkit fixture, with capitals in its id (Harbor 0.1.45
/// names its image build after the directory).
const DOMAINFIX: &str = "Acme_TextKit_pr12_DomainFix";

/// Commits after the base in the fixture images (fixtures/images/*/history).
const FUTURE: &[&str] = &[
    "fb283b7d406fb2aa12dce63d54e287aecd8e4590",
    "9b9f1b606060cf374ed7348c25380e2ef0c1f4ec",
];

/// Harbor jobs are heavy on two cores: one at a time across these tests.
static ONE_JOB: Mutex<()> = Mutex::new(());

/// Trials of one job at once. A trial mostly waits on the engine (its environment built, compose
/// up and down, the verifier's container), so four keep two cores busier than two did: the
/// root-agent and tamper jobs are most of the suite's time.
const TRIALS_AT_ONCE: &str = "4";

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_beyondswe"))
}

/// The engine, the fixture images and the Harbor client image (built once, cached by tag).
fn client_ready() {
    require_docker();
    fixture_images();
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let out = Command::new("bash")
            .arg(repo_root().join("scripts/build-harbor-client-image.sh"))
            .output()
            .expect("bash runs");
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    });
    if let Err(e) = built {
        panic!(
            "this test needs the Harbor client image: scripts/build-harbor-client-image.sh failed:\n{e}"
        );
    }
}

/// A directory that harbor-run.sh mounts at the same path (tasks, jobs and solutions inside).
struct Work {
    tmp: tempfile::TempDir,
}

impl Work {
    fn new() -> Work {
        // Canonical: Harbor bind-mounts trial directories by their host paths.
        let tmp = tempfile::tempdir().unwrap();
        Work { tmp }
    }

    fn path(&self) -> PathBuf {
        self.tmp.path().canonicalize().unwrap()
    }

    /// fixtures.jsonl plus a DomainFix instance: all four families.
    fn dataset(&self) -> PathBuf {
        let path = self.path().join("dataset.jsonl");
        let text = std::fs::read_to_string(fixtures().join("dataset/fixtures.jsonl")).unwrap();
        let mut out = text.clone();
        let line = text
            .lines()
            .find(|l| l.contains("\"acme_textkit_pr12\""))
            .unwrap();
        let mut v: Value = serde_json::from_str(line).unwrap();
        v["instance_id"] = DOMAINFIX.into();
        v["task"] = "DomainFix".into();
        out.push_str(&v.to_string());
        out.push('\n');
        std::fs::write(&path, out).unwrap();
        path
    }

    /// `convert to-harbor` for a Harbor version, the Doc2Repo reference repository given: the
    /// default options (a separate verifier) for 0.26, `--verifier shared` for 0.1.45, which has
    /// no separate verifier. The directory's name, below the work directory.
    fn tasks(&self, version: &str) -> String {
        let solutions = self.path().join("solutions");
        if !solutions.exists() {
            copy_dir(
                &fixtures().join("submissions/minidoc_gold"),
                &solutions.join(DOC2REPO),
            );
        }
        let mode = verifier_mode(version);
        let name = format!("tasks-{mode}");
        let tasks = self.path().join(&name);
        if !tasks.exists() {
            run_ok(
                bin()
                    .args(["convert", "to-harbor"])
                    .arg(self.dataset())
                    .arg(&tasks)
                    .arg("--test-suites")
                    .arg(fixtures().join("test_suites"))
                    .arg("--solutions")
                    .arg(&solutions)
                    .args(["--verifier", mode]),
            );
        }
        name
    }

    /// `harbor run -p TASKS -a AGENT -n TRIALS_AT_ONCE` as job NAME; returns the job directory.
    fn run(&self, version: &str, tasks: &str, agent: &str, name: &str) -> PathBuf {
        let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
        let mut cmd = Command::new("bash");
        cmd.current_dir(self.path())
            .arg(repo_root().join("scripts/harbor-run.sh"))
            .args([
                version,
                "run",
                "-p",
                tasks,
                "-a",
                agent,
                "-n",
                TRIALS_AT_ONCE,
                "-o",
                "jobs",
            ])
            .args(["--job-name", name]);
        if version != "0.1.45" {
            cmd.arg("-y");
        }
        let t = std::time::Instant::now();
        let out = cmd.output().unwrap();
        eprintln!(
            "harbor {version} run -a {agent} ({name}): {:.1}s",
            t.elapsed().as_secs_f64()
        );
        assert!(
            out.status.success(),
            "harbor {version} run failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        self.path().join("jobs").join(name)
    }
}

/// The verifier mode a Harbor version runs: separate from 0.26, shared before.
fn verifier_mode(version: &str) -> &'static str {
    if version.starts_with("0.1.") {
        "shared"
    } else {
        "separate"
    }
}

/// What one trial of a job scored.
#[derive(Debug)]
struct Trial {
    dir: PathBuf,
    task: String,
    reward: Option<f64>,
    exception: Value,
    /// `verifier_environment_mode` (Harbor 0.26; absent in 0.1.x).
    mode: Option<String>,
}

fn trials(job: &Path) -> Vec<Trial> {
    trial_dirs(job)
        .into_iter()
        .map(|(dir, v)| Trial {
            task: v["task_name"].as_str().unwrap_or_default().to_owned(),
            reward: v["verifier_result"]["rewards"]["reward"].as_f64(),
            exception: v["exception_info"].clone(),
            mode: v["verifier_environment_mode"].as_str().map(str::to_owned),
            dir,
        })
        .collect()
}

/// Task name → instance id for the dataset's four instances.
fn instances() -> HashMap<String, String> {
    task_name_index(["acme_calc_pr7", "acme_textkit_pr12", DOC2REPO, DOMAINFIX])
}

fn by_instance(job: &Path) -> BTreeMap<String, Trial> {
    let names = instances();
    trials(job)
        .into_iter()
        .map(|t| {
            (
                lookup_task(&names, &t.task)
                    .cloned()
                    .unwrap_or(t.task.clone()),
                t,
            )
        })
        .collect()
}

/// Every file (bytes) and directory below `root`.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    walkdir::WalkDir::new(root)
        .min_depth(1)
        .into_iter()
        .map(|e| e.unwrap())
        .map(|e| {
            let rel = e.path().strip_prefix(root).unwrap().to_owned();
            (
                rel,
                e.file_type()
                    .is_file()
                    .then(|| std::fs::read(e.path()).unwrap()),
            )
        })
        .collect()
}

/// On a job Harbor wrote: `ingest` and `verify` agree with the rewards Harbor recorded, and a
/// release rebuilds the job byte for byte.
/// `verify` on a job or a release: every trial's claimed reward is the one measured.
fn verify_agrees(work: &Work, path: &Path, dataset: &Path, run_id: &str) {
    let report = run_ok(
        bin()
            .arg("verify")
            .arg(path)
            .arg("--dataset")
            .arg(dataset)
            .arg("--test-suites")
            .arg(fixtures().join("test_suites"))
            .arg("--results-dir")
            .arg(work.path().join("runs"))
            .args(["--run-id", run_id, "--jobs", "2"]),
    );
    assert!(report.contains("0 disagreement(s)"), "{run_id}:\n{report}");
}

fn check_job(work: &Work, job: &Path, dataset: &Path, label: &str) {
    let preds = work.path().join(format!("{label}.predictions.jsonl"));
    run_ok(
        bin()
            .arg("ingest")
            .arg(job)
            .arg("--dataset")
            .arg(dataset)
            .arg("-o")
            .arg(&preds),
    );
    let ids: Vec<String> = std::fs::read_to_string(&preds)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["instance_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(ids.contains(&DOMAINFIX.to_owned()), "{label}: {ids:?}");
    assert_eq!(ids.len(), trials(job).len(), "{label}: a patch per trial");
    if label.starts_with("oracle") || label.starts_with("nop") {
        // Harbor's own agents leave no trajectory: the audit says so and succeeds.
        let out = bin()
            .arg("audit")
            .arg(job)
            .arg("--dataset")
            .arg(dataset)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{label} audit: {stderr}");
        assert!(
            stderr.contains("leaves no trajectory; nothing to audit"),
            "{label} audit: {stderr}"
        );
    }
    verify_agrees(work, job, dataset, label);

    let release = work.path().join(format!("{label}.release.jsonl"));
    run_ok(
        bin()
            .args(["release", "from-harbor"])
            .arg(job)
            .arg("-o")
            .arg(&release)
            .arg("--dataset")
            .arg(dataset),
    );
    let rebuilt = work.path().join(format!("{label}.rebuilt"));
    run_ok(
        bin()
            .args(["release", "to-harbor"])
            .arg(&release)
            .arg(&rebuilt),
    );
    let name = job.file_name().unwrap();
    let (a, b) = (snapshot(job), snapshot(&rebuilt.join(name)));
    let differ: Vec<&PathBuf> = a
        .keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .collect();
    assert!(
        differ.is_empty(),
        "{label}: rebuilt job differs at {differ:?}"
    );
    assert!(
        a.keys().any(|k| k.ends_with("lock.json")) || label.contains("0.1.45"),
        "{label}: Harbor 0.26 writes lock.json"
    );
    if label.starts_with("oracle") {
        // The release alone is enough to check the job.
        verify_agrees(work, &release, dataset, &format!("{label}-release"));
    }
}

/// Lists every commit, tag and ref the agent's container can reach, into /logs/agent/probe.txt,
/// and leaves an ATIF trajectory of what it ran.
const PROBE: &str = r#"#!/bin/sh
cd @WORKDIR@
{
echo "HEAD $(git rev-parse HEAD)"
git for-each-ref --format='REF %(refname) %(objectname)'
git tag -l | sed 's/^/TAG /'
git log --all --reflog --format='LOG %H'
git rev-list --all --reflog | sed 's/^/REV /'
git fsck --unreachable --no-reflogs 2>&1 | sed 's/^/FSCK /'
for c in $(git cat-file --batch-all-objects --batch-check='%(objecttype) %(objectname)' | awk '$1 == "commit" { print $2 }'); do
    echo "OBJ $c"
    git merge-base --is-ancestor "$c" HEAD || echo "NEWER $c"
done
cat .git/packed-refs .git/FETCH_HEAD .git/ORIG_HEAD 2>/dev/null | sed 's/^/FILE /'
echo END
} >/logs/agent/probe.txt 2>&1
cat >/logs/agent/trajectory.json <<'EOF'
{"schema_version": "ATIF-v1.6", "session_id": "probe", "agent": {"name": "probe", "version": "1"},
 "steps": [{"step_id": 1, "source": "user", "message": "List every commit you can reach."},
  {"step_id": 2, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "c1",
   "function_name": "bash", "arguments": {"command": "git log --all --reflog --format=%H"}}],
   "observation": {"results": [{"source_call_id": "c1", "content": "see probe.txt"}]}}]}
EOF
"#;

/// Copies `tasks` to `dest` with the probe as every task's solution.
fn probe_tasks(tasks: &Path, dest: &Path) {
    for entry in std::fs::read_dir(tasks).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue; // dataset.toml
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let to = dest.join(&name);
        copy_dir(&dir, &to);
        let config: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("tests/test_config.json")).unwrap(),
        )
        .unwrap();
        let workdir = config["workdir"].as_str().unwrap();
        std::fs::remove_dir_all(to.join("solution")).unwrap();
        std::fs::create_dir_all(to.join("solution")).unwrap();
        std::fs::write(
            to.join("solution/solve.sh"),
            PROBE.replace("@WORKDIR@", &beyondswe::adapters::shell_quote(workdir)),
        )
        .unwrap();
    }
}

/// What a probe found: nothing newer than the base, and it did look.
fn check_probe(text: &str, what: &str, base: Option<&str>) {
    assert!(
        text.contains("\nEND"),
        "{what}: the probe did not finish:\n{text}"
    );
    assert!(
        text.contains("OBJ "),
        "{what}: the probe saw no commit:\n{text}"
    );
    if let Some(base) = base {
        assert!(text.starts_with(&format!("HEAD {base}")), "{what}:\n{text}");
    }
    for future in FUTURE {
        assert!(
            !text.contains(future),
            "{what}: {future} is reachable:\n{text}"
        );
    }
    for line in text.lines() {
        assert!(
            !line.starts_with("NEWER") && !line.starts_with("TAG") && !line.starts_with("FSCK"),
            "{what}: {line}\n{text}"
        );
    }
}

fn base_of(dataset: &Path, id: &str) -> Option<String> {
    std::fs::read_to_string(dataset)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["instance_id"] == id)
        .and_then(|v| v["base_commit"].as_str().map(str::to_owned))
}

/// The offline grader's score for an empty repository on the Doc2Repo fixture.
fn empty_doc2repo_score(work: &Work, dataset: &Path) -> f64 {
    let empty = work.path().join("empty-repo");
    std::fs::create_dir_all(&empty).unwrap();
    let out = run_ok(
        bin()
            .args(["grade-one", "--json", "--instance", DOC2REPO, "--dataset"])
            .arg(dataset)
            .arg("--test-suites")
            .arg(fixtures().join("test_suites"))
            .arg("--repo")
            .arg(&empty),
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    v["score"].as_f64().unwrap()
}

/// `beyondswe parity` on this test's jobs: Harbor's rewards and the offline regrading agree on
/// every trial, and each agent's scores are the ones the committed parity file of the adapter
/// records (made the same way by scripts/parity-fixtures.sh).
fn parity_agrees(work: &Work, dataset: &Path, jobs: &[&Path]) {
    let out = work.path().join("parity");
    run_ok(
        bin()
            .arg("parity")
            .args(jobs)
            .arg("--dataset")
            .arg(dataset)
            .arg("--test-suites")
            .arg(fixtures().join("test_suites"))
            .arg("--results-dir")
            .arg(work.path().join("runs"))
            .args(["--jobs", "2", "-o"])
            .arg(&out),
    );
    let read = |p: PathBuf| -> Vec<Value> {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let ours = read(out.join("parity_experiment.json"));
    let committed = read(repo_root().join("harbor/adapters/beyondswe/parity_experiment.json"));
    assert_eq!(ours.len(), 2, "{ours:#?}");
    for e in &ours {
        let agreement = &e["trial_agreement"];
        assert_eq!(agreement["agreeing"], agreement["trials"], "{e:#}");
        let same = committed
            .iter()
            .find(|c| c["agent"] == e["agent"])
            .unwrap_or_else(|| panic!("the committed parity file has no {}", e["agent"]));
        for side in ["original_runs", "harbor_runs"] {
            for score in e["metrics"][0][side].as_array().unwrap() {
                assert!(
                    same["metrics"][0][side].as_array().unwrap().contains(score),
                    "{}: {side} {score} is not among the committed runs",
                    e["agent"]
                );
            }
        }
    }
}

fn end_to_end(version: &str) {
    client_ready();
    let work = Work::new();
    let dataset = work.dataset();
    let tasks_name = work.tasks(version);
    let tasks = work.path().join(&tasks_name);
    // Every directory name is one Harbor 0.1.45 can tag an image with.
    assert!(
        tasks
            .join(task_dir_name(DOMAINFIX))
            .join("task.toml")
            .is_file()
    );
    assert_eq!(task_dir_name(DOMAINFIX), DOMAINFIX.to_lowercase());

    // The oracle passes every task, all four families.
    let job = work.run(version, &tasks_name, "oracle", "oracle");
    let oracle_job = job.clone();
    let got = by_instance(&job);
    assert_eq!(got.len(), 4, "{got:#?}");
    let separate = verifier_mode(version) == "separate";
    for (id, t) in &got {
        assert_eq!(t.reward, Some(1.0), "{version} oracle {id}: {t:#?}");
        assert!(t.exception.is_null(), "{version} oracle {id}: {t:#?}");
        assert!(t.dir.join("verifier/submission.diff").is_file(), "{id}");
        if separate {
            // Graded in a fresh container, from the diff the collect hook carried over.
            assert_eq!(t.mode.as_deref(), Some("separate"), "{id}: {t:#?}");
            let report: Value = serde_json::from_str(
                &std::fs::read_to_string(t.dir.join("verifier/report.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(report["verifier_mode"], "separate", "{id}");
            assert_eq!(report["capture"]["collected"], true, "{id}");
            assert_eq!(
                std::fs::read(t.dir.join("verifier/submission.diff")).unwrap(),
                std::fs::read(t.dir.join("artifacts/logs/artifacts/submission.diff")).unwrap(),
                "{id}: the graded diff is the collected one"
            );
        }
    }
    check_job(&work, &job, &dataset, &format!("oracle-{version}"));

    // nop: 0 on issue tasks; Doc2Repo scores what an empty repository scores offline.
    let job = work.run(version, &tasks_name, "nop", "nop");
    let got = by_instance(&job);
    assert_eq!(got.len(), 4, "{got:#?}");
    let empty = empty_doc2repo_score(&work, &dataset);
    for (id, t) in &got {
        let want = if id == DOC2REPO { empty } else { 0.0 };
        assert_eq!(t.reward, Some(want), "{version} nop {id}: {t:#?}");
    }
    check_job(&work, &job, &dataset, &format!("nop-{version}"));
    if separate {
        parity_agrees(&work, &dataset, &[&oracle_job, &job]);
    }

    // The agent's container holds no commit, tag or ref newer than the base.
    probe_tasks(&tasks, &work.path().join("probe-tasks"));
    let job = work.run(version, "probe-tasks", "oracle", "probe");
    let got = by_instance(&job);
    assert_eq!(got.len(), 4, "{got:#?}");
    for (id, t) in &got {
        let text = std::fs::read_to_string(t.dir.join("agent/probe.txt")).unwrap();
        check_probe(
            &text,
            &format!("{version} {id}"),
            base_of(&dataset, id).as_deref(),
        );
    }
    // audit and trajectory validate read the job and its release: the probe's `git log --all`
    // is on SearchSWE's blocklist.
    let release = work.path().join("probe.release.jsonl");
    run_ok(
        bin()
            .args(["release", "from-harbor"])
            .arg(&job)
            .arg("-o")
            .arg(&release),
    );
    for path in [&job, &release] {
        let out = run_ok(bin().arg("trajectory").arg("validate").arg(path));
        assert_eq!(out.matches("ok ").count(), 4, "{out}");
        let out = bin()
            .arg("audit")
            .arg(path)
            .arg("--json")
            .arg("--dataset")
            .arg(&dataset)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let hits = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| {
                v["blocklist_hits"]
                    .as_array()
                    .is_some_and(|a| !a.is_empty())
            })
            .count();
        assert_eq!(
            hits,
            4,
            "{}:\n{stdout}\n{}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn harbor_0_26_oracle_nop_probe_and_the_job_it_writes() {
    end_to_end(VERSIONS[0]);
}

#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn harbor_0_1_45_oracle_nop_probe_and_the_job_it_writes() {
    end_to_end(VERSIONS[1]);
}

/// The probe has teeth: in the instance image itself (what a prebuilt `docker_image` would start)
/// it finds the future commits.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn the_probe_finds_future_commits_in_an_unstripped_image() {
    require_docker();
    fixture_images();
    let c = super::support::Container::run("beyondswe-fixture/calc:1");
    c.sh("mkdir -p /logs/agent");
    let script = PROBE.replace("@WORKDIR@", "/workspace/calc");
    let (code, out) = c.sh(&script);
    assert_eq!(code, 0, "{out}");
    let (_, text) = c.sh("cat /logs/agent/probe.txt");
    assert!(text.contains(FUTURE[0]), "{text}");
    assert!(text.contains("TAG v1.1.0"), "{text}");
}

/// Copies the task of `instance` from `tasks` to `dest/<name>` as its own package (Harbor 0.26
/// names trials after `[task] name`), its solution replaced by `solve` plus `files`.
fn task_with_solution(
    tasks: &Path,
    instance: &str,
    dest: &Path,
    name: &str,
    solve: &str,
    files: &[(&str, Vec<u8>)],
) {
    let from = tasks.join(task_dir_name(instance));
    let to = dest.join(name);
    copy_dir(&from, &to);
    let toml_path = to.join("task.toml");
    let mut toml = TaskToml::parse(&std::fs::read_to_string(&toml_path).unwrap()).unwrap();
    if let Some(task) = toml.task.as_mut() {
        task.name = format!("{}/{name}", beyondswe::convert::DEFAULT_ORG);
    }
    std::fs::write(&toml_path, toml.to_toml_string()).unwrap();
    std::fs::remove_dir_all(to.join("solution")).unwrap();
    std::fs::create_dir_all(to.join("solution")).unwrap();
    for (file, bytes) in files {
        std::fs::write(to.join("solution").join(file), bytes).unwrap();
    }
    std::fs::write(to.join("solution/solve.sh"), solve).unwrap();
}

/// The workdir of an instance's task, quoted for sh.
fn quoted_workdir(tasks: &Path, instance: &str) -> String {
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(
            tasks
                .join(task_dir_name(instance))
                .join("tests/test_config.json"),
        )
        .unwrap(),
    )
    .unwrap();
    beyondswe::adapters::shell_quote(config["workdir"].as_str().unwrap())
}

/// Tamper solutions from the adversarial suite, as the oracle's solve.sh (the agent applies the
/// cheat in its container), graded by Harbor: every cheat keeps its expected verdict (reward 0
/// for the cheats), with a separate verifier (0.26) and a shared one (0.1.45). Two cases of every
/// class by default; BEYONDSWE_HARBOR_ADVERSARIAL=all runs all of them (about ten minutes per
/// version).
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn tamper_solutions_through_harbor() {
    client_ready();
    let all = std::env::var("BEYONDSWE_HARBOR_ADVERSARIAL").is_ok_and(|v| v == "all");
    let work = Work::new();
    let mut per_class: HashMap<String, usize> = HashMap::new();
    let known = work.path().join(work.tasks(VERSIONS[0]));
    // The fixtures' instances (the image-shape ones go through test.sh in harbor_docker).
    let mut chosen: Vec<Case> = cases()
        .into_iter()
        .filter(|c| !c.submission.starts_with("archives/"))
        .filter(|c| known.join(task_dir_name(&c.instance)).is_dir())
        .collect();
    chosen.sort_by(|a, b| a.name.cmp(&b.name));
    chosen.retain(|c| {
        let honest = c.expect.verdict == Some(Outcome::Resolved) || c.expect.score.is_some();
        let n = per_class.entry(c.class.clone()).or_default();
        *n += 1;
        !honest && (all || *n <= 2)
    });
    for version in VERSIONS {
        let tasks = work.path().join(work.tasks(version));
        let adv_name = format!("adv-tasks-{version}");
        let adv = work.path().join(&adv_name);
        let mut names: HashMap<String, Case> = HashMap::new();
        for case in &chosen {
            let name = task_dir_name(&format!("adv-{}", case.name));
            let workdir = quoted_workdir(&tasks, &case.instance);
            let src = fixtures().join("adversarial").join(&case.submission);
            let (solve, files) = if case.kind == "patch" {
                let (fixed, _) =
                    beyondswe::patch::normalize_transport(&std::fs::read(&src).unwrap());
                (
                    format!(
                        "#!/bin/sh\ncd {workdir} && git apply --whitespace=nowarn /solution/cheat.patch\nexit 0\n"
                    ),
                    vec![("cheat.patch", fixed)],
                )
            } else {
                let tree = beyondswe::submission::read_tree(&src, Default::default()).unwrap();
                (
                    format!(
                        "#!/bin/sh\ntar -xf /solution/cheat.tar --no-same-owner -C {workdir}\nexit 0\n"
                    ),
                    vec![("cheat.tar", tree.to_tar().unwrap())],
                )
            };
            task_with_solution(&tasks, &case.instance, &adv, &name, &solve, &files);
            names.insert(name, case.clone());
        }
        let job = work.run(version, &adv_name, "oracle", &format!("adv-{version}"));
        let got = trials(&job);
        assert_eq!(got.len(), chosen.len(), "{version}");
        let mut failed = Vec::new();
        for t in got {
            let case = lookup_task(&names, &t.task).expect("a case of this run");
            let report: Value = std::fs::read_to_string(t.dir.join("verifier/report.json"))
                .ok()
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or(Value::Null);
            let verdict = t
                .reward
                .and_then(|_| serde_json::from_value(report["verdict"].clone()).ok());
            let reason = report["reason"].as_str().unwrap_or_default();
            let flagged = report["static"]["hits"]
                .as_array()
                .is_some_and(|h| !h.is_empty())
                || report["flags"]["suspicious"]
                    .as_array()
                    .is_some_and(|h| !h.is_empty());
            if !meets(
                &case.expect,
                verdict,
                t.reward.unwrap_or(0.0),
                reason,
                flagged,
            ) {
                failed.push(format!("{}: reward {:?} {reason}", case.name, t.reward));
            }
            assert_ne!(
                t.reward,
                Some(1.0),
                "{version} {}: a cheat scored 1",
                case.name
            );
        }
        assert!(
            failed.is_empty(),
            "harbor {version}:\n{}",
            failed.join("\n")
        );
    }
}

/// The root-agent attacks of the issue (fixtures/root_attacks/*.sh: pytest patched, a
/// site-packages hook, a plugin added to the prepare record, a python3 shim on PATH and the same
/// with the interpreter record removed, an atexit hook in the standard library, the recorded
/// interpreter replaced, a reward planted, a diff planted), each as the oracle's solve.sh on the
/// calc task, alone and after the gold patch.
/// With a separate verifier (Harbor 0.26) every one scores its true reward: 0 alone (nothing in
/// the repository changed), 1 with the gold patch. With the shared layout
/// (Harbor 0.1.45) the ones the README lists still get 1, and no others.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn root_agent_attacks_through_harbor() {
    client_ready();
    let work = Work::new();
    let dir = fixtures().join("root_attacks");
    let mut attacks: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    attacks.sort();
    assert!(attacks.len() >= 8, "{attacks:?}");
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    for version in VERSIONS {
        let tasks = work.path().join(work.tasks(version));
        let workdir = quoted_workdir(&tasks, "acme_calc_pr7");
        let gold = std::fs::read(
            tasks
                .join(task_dir_name("acme_calc_pr7"))
                .join("solution/gold.patch"),
        )
        .unwrap();
        let name = format!("root-tasks-{version}");
        let dest = work.path().join(&name);
        for (attack, script) in &attacks {
            let with_gold = format!(
                "#!/bin/sh\ncd {workdir} && git apply --whitespace=nowarn /solution/gold.patch || exit 1\ncd /\nsh /solution/attack.sh\n"
            );
            // The shared layout's list is about the attacks alone: no gold runs there.
            let labels = if verifier_mode(version) == "separate" {
                vec![("alone", script.clone()), ("gold", with_gold)]
            } else {
                vec![("alone", script.clone())]
            };
            for (label, solve) in labels {
                task_with_solution(
                    &tasks,
                    "acme_calc_pr7",
                    &dest,
                    &task_dir_name(&format!("root-{attack}-{label}")),
                    &solve,
                    &[
                        ("gold.patch", gold.clone()),
                        ("attack.sh", script.clone().into_bytes()),
                    ],
                );
            }
        }
        let job = work.run(version, &name, "oracle", &format!("root-{version}"));
        let got = trials(&job);
        let per_attack = if verifier_mode(version) == "separate" {
            2
        } else {
            1
        };
        assert_eq!(got.len(), attacks.len() * per_attack, "{version}");
        let mut lines = Vec::new();
        let mut through = BTreeSet::new();
        let mut failed = Vec::new();
        for t in &got {
            let (attack, label) = attacks
                .iter()
                .find_map(|(a, _)| {
                    ["alone", "gold"].into_iter().find_map(|l| {
                        let n = task_dir_name(&format!("root-{a}-{l}"));
                        (t.task == n || t.task.ends_with(&format!("/{n}"))).then(|| (a.clone(), l))
                    })
                })
                .unwrap_or_else(|| panic!("{version}: a trial of no attack: {}", t.task));
            let truth = if label == "gold" { 1.0 } else { 0.0 };
            lines.push(format!("{attack} {label}: {:?}", t.reward));
            if verifier_mode(version) == "separate" {
                // Its true reward: the collect hook falls back to git where the agent broke the
                // verifier's copy or the interpreter in its container.
                if t.reward != Some(truth) {
                    failed.push(format!(
                        "{attack} {label}: reward {:?}, true {truth}",
                        t.reward
                    ));
                }
            } else if label == "alone" && t.reward == Some(1.0) {
                through.insert(attack.clone());
            }
        }
        lines.sort();
        eprintln!(
            "harbor {version}, root-agent attacks:\n{}",
            lines.join("\n")
        );
        assert!(
            failed.is_empty(),
            "harbor {version}:\n{}",
            failed.join("\n")
        );
        if verifier_mode(version) == "shared" {
            // The README's list of what the shared layout cannot stop is what happened.
            let section = readme
                .split("### What the shared layout cannot stop")
                .nth(1)
                .and_then(|s| s.split("\n#").next())
                .unwrap_or_else(|| panic!("README has no section on the shared layout"));
            for (attack, _) in &attacks {
                let listed = section.contains(&format!("`{attack}`"));
                assert_eq!(
                    listed,
                    through.contains(attack),
                    "{attack}: README lists it as getting through: {listed}; it did: {}",
                    through.contains(attack)
                );
            }
        }
    }
}

/// The real Harbor 0.26 registry commands take every converted task: `harbor dataset add --scan`
/// adds each by the package name its `[task]` gives, with the content digest our `dataset.toml`
/// records, and `harbor lint` finds nothing under its default rules (issue: Harbor-native tasks).
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn harbors_registry_takes_every_task_with_our_digests() {
    client_ready();
    let work = Work::new();
    let tasks = work.path().join(work.tasks(VERSIONS[0]));
    let ours: toml::Table =
        toml::from_str(&std::fs::read_to_string(tasks.join("dataset.toml")).unwrap()).unwrap();
    let digests = |doc: &toml::Table| -> BTreeMap<String, String> {
        doc["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_owned(),
                    t["digest"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let ours = digests(&ours);
    // The dataset's four instances, one task each.
    assert_eq!(ours.len(), 4, "{ours:?}");
    let harbor = |args: &[&str]| harbor_026(&work.path(), args);
    let dirs: Vec<String> = std::fs::read_dir(&tasks)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    // Harbor hashes each task itself (every task directory named, or found by `--scan`), and
    // reads our manifest as a dataset of its own (the tasks directory, which holds it): each
    // gives our names and digests.
    let tasks_dir = tasks.to_string_lossy().into_owned();
    for (label, sources) in [
        ("tasks", dirs.clone()),
        ("scan", vec![tasks_dir.clone(), "--scan".to_owned()]),
        ("manifest", vec![tasks_dir.clone()]),
    ] {
        let theirs = work.path().join(format!("theirs-{label}"));
        std::fs::create_dir_all(&theirs).unwrap();
        let (code, text) = harbor(&[
            "dataset",
            "init",
            "beyondswe/check",
            "-o",
            theirs.to_str().unwrap(),
        ]);
        assert_eq!(code, Some(0), "{text}");
        let mut add = vec!["dataset", "add"];
        add.extend(sources.iter().map(String::as_str));
        let manifest = theirs.join("dataset.toml");
        add.extend(["--to", manifest.to_str().unwrap()]);
        let (code, text) = harbor(&add);
        assert_eq!(code, Some(0), "{label}: {text}");
        let theirs: toml::Table =
            toml::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
        assert_eq!(digests(&theirs), ours, "{label}: {text}");
    }
    // Harbor's default lint rules find nothing; `--select ALL` adds only the two findings the
    // README documents (the agent runs as root, the image is not pinned by digest).
    for (select, want) in [
        (None, BTreeSet::new()),
        (
            Some("ALL"),
            BTreeSet::from(["root-agent", "unpinned-image"]),
        ),
    ] {
        let mut lint = vec!["lint", "--json"];
        if let Some(rule) = select {
            lint.extend(["--select", rule]);
        }
        lint.extend(dirs.iter().map(String::as_str));
        let (_, text) = harbor(&lint);
        let start = text.find('[').unwrap_or(0);
        let findings: Vec<Value> = serde_json::Deserializer::from_str(&text[start..])
            .into_iter::<Vec<Value>>()
            .next()
            .and_then(Result::ok)
            .unwrap_or_else(|| panic!("harbor lint --json printed no list:\n{text}"));
        let rules: BTreeSet<&str> = findings.iter().filter_map(|f| f["rule"].as_str()).collect();
        assert_eq!(rules, want, "harbor lint {select:?}:\n{text}");
        let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
        for rule in &want {
            assert!(
                readme.contains(&format!("`{rule}`")),
                "README documents the `{rule}` finding"
            );
        }
    }
    // As a user lints: `harbor lint OUT_DIR/*/` (what the README says) takes every task and
    // finds nothing; the bare `*` also names dataset.toml, which Harbor refuses as no directory.
    let glob = |pattern: &str| {
        let script = format!(
            "bash {} {} lint {tasks_dir}/{pattern}",
            repo_root().join("scripts/harbor-run.sh").display(),
            VERSIONS[0]
        );
        let out = Command::new("bash")
            .current_dir(work.path())
            .args(["-c", &script])
            .output()
            .unwrap();
        (out.status.code(), output_text(&out))
    };
    let (code, text) = glob("*/");
    assert_eq!(code, Some(0), "harbor lint {tasks_dir}/*/:\n{text}");
    let (code, text) = glob("*");
    assert_ne!(code, Some(0), "harbor lint {tasks_dir}/*:\n{text}");
    assert!(text.contains("must be an existing directory"), "{text}");
}

/// `harbor adapter review --skip-ai` from the installed Harbor 0.26 checks nothing outside a
/// Harbor checkout: its structural validator is the repository's scripts/validate_adapter.py,
/// which the package does not carry. That is why tests/it/harbor_adapter.rs checks the same list
/// itself (README: Harbor's adapter layout).
#[test]
#[ignore = "needs the Docker engine and the Harbor client image (scripts/test.sh runs it)"]
fn harbors_adapter_review_needs_a_harbor_checkout() {
    client_ready();
    let work = Work::new();
    let adapter = work.path().join("adapters/beyondswe");
    super::support::copy_dir(&repo_root().join("harbor/adapters/beyondswe"), &adapter);
    let report = work.path().join("review.md");
    let (_, text) = harbor_026(
        &work.path(),
        &[
            "adapter",
            "review",
            "--skip-ai",
            "-p",
            &adapter.to_string_lossy(),
            "-o",
            &report.to_string_lossy(),
        ],
    );
    assert!(text.contains("validate_adapter.py not found"), "{text}");
}

/// Harbor 0.26's CLI (the client image) run in `dir`: its exit code, and stdout then stderr.
fn harbor_026(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new("bash")
        .current_dir(dir)
        .arg(repo_root().join("scripts/harbor-run.sh"))
        .arg(VERSIONS[0])
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), output_text(&out))
}

/// A command's stdout, then its stderr.
fn output_text(out: &std::process::Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `grade --via-harbor -e docker` with the real Harbor 0.26 (each submission a task whose oracle
/// solution it is, graded by the separate verifier) gives, for one of the demo's submissions of
/// each kind, the verdict the local grader gives: outcome, reason, score and every test's
/// outcome. The kinds: a gold fix of each family (a DepMigrate one under a long dotted id), half
/// a fix, an empty patch, a tampering held for review, another repository's patch (which does
/// not apply) and a partial Doc2Repo repository (the full sweep of the demo's eleven and the
/// long id is `BEYONDSWE_HARBOR_VIA_ALL=1`). Run again,
/// nothing goes to Harbor: every verdict is resumed from the store, or without it from the
/// trials Harbor finished.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn via_harbor_gives_the_local_graders_verdicts() {
    client_ready();
    let work = Work::new();
    let runs = work.path().join("runs");
    let full = std::env::var_os("BEYONDSWE_HARBOR_VIA_ALL").is_some();
    // The demo, and its gold migration again under a DepMigrate-style id long enough, with a dot
    // where Harbor 0.26 cuts a task's name into the trial's (`…v10.__abcdefg`), that its image
    // tag would be one Docker refuses unless the task's name keeps it valid.
    let long_id = "acme_textkit_v10.0_to_v11.0";
    let with_long = |file: &Path, out: &Path| {
        // Relative paths (a Doc2Repo prediction's `model_repo`) are the original file's.
        let mut text = String::new();
        for line in std::fs::read_to_string(file).unwrap().lines() {
            let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
            if let Some(repo) = v.get("model_repo").and_then(|r| r.as_str()) {
                let absolute = file.parent().unwrap().join(repo);
                v["model_repo"] = absolute.display().to_string().into();
            }
            text.push_str(&v.to_string());
            text.push('\n');
        }
        let line = text
            .lines()
            .find(|l| l.contains("\"acme_textkit_pr12\""))
            .unwrap()
            .replace("\"acme_textkit_pr12\"", &format!("\"{long_id}\""));
        text.push_str(&line);
        text.push('\n');
        std::fs::write(out, text).unwrap();
    };
    let dataset = work.path().join("demo-long.jsonl");
    let predictions = work.path().join("preds-long.jsonl");
    with_long(&fixtures().join("dataset/demo.jsonl"), &dataset);
    with_long(&fixtures().join("predictions/demo.jsonl"), &predictions);
    // One submission of every family, and each kind of verdict.
    let ids: &[&str] = if full {
        &[]
    } else {
        &[
            "acme_calc_pr7",
            "acme_calc_pr71",
            "acme_calc_pr72",
            "acme_calc_pr74",
            "acme_calc_pr75",
            "acme_textkit_pr121",
            long_id,
            "minidocb_ac79166631ba81556e3f40c05aa8d00fe9178ca6",
        ]
    };
    let grade = |run: &str, extra: &[String]| {
        let t = std::time::Instant::now();
        run_ok(
            bin()
                .args(["grade", "--dataset"])
                .arg(&dataset)
                .arg("--predictions")
                .arg(&predictions)
                .arg("--test-suites")
                .arg(fixtures().join("test_suites"))
                .arg("--results-dir")
                .arg(&runs)
                .args(["--run-id", run, "--jobs", "2"])
                .args(if ids.is_empty() {
                    &[][..]
                } else {
                    &["--ids"][..]
                })
                .args(ids)
                .args(extra),
        );
        eprintln!("grade {run}: {:.1}s", t.elapsed().as_secs_f64());
    };
    grade("local", &[]);
    let harbor = [
        "--via-harbor".to_owned(),
        "-e".to_owned(),
        "docker".to_owned(),
        "--harbor-command".to_owned(),
        format!(
            "bash {} 0.26.0",
            repo_root().join("scripts/harbor-run.sh").display()
        ),
    ];
    {
        let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
        grade("harbor", &harbor);
    }
    type Seen = (
        String,
        String,
        String,
        BTreeMap<String, String>,
        Option<(u64, BTreeMap<String, String>)>,
    );
    let verdicts = |run: &str| -> BTreeMap<(String, u32), Seen> {
        let (_, stored) = beyondswe::report::read_run(&runs.join(run)).unwrap();
        stored
            .into_iter()
            .map(|s| {
                let v = &s.verdict;
                let tests = v
                    .fail_to_pass
                    .iter()
                    .chain(&v.pass_to_pass)
                    .map(|(k, o)| (k.clone(), format!("{o:?}")))
                    .collect();
                let suite = v.suite.as_ref().map(|s| {
                    (
                        s.passed,
                        s.tests
                            .iter()
                            .map(|(k, o)| (k.clone(), format!("{o:?}")))
                            .collect(),
                    )
                });
                (
                    (v.instance_id.clone(), s.attempt),
                    (
                        format!("{:?}", v.verdict),
                        format!("{:?}", v.reason),
                        format!("{:.4}", v.score),
                        tests,
                        suite,
                    ),
                )
            })
            .collect()
    };
    let (local, via) = (verdicts("local"), verdicts("harbor"));
    assert_eq!(local.len(), if full { 12 } else { 8 }, "{local:#?}");
    let long = local
        .iter()
        .find(|(k, _)| k.0 == long_id)
        .map(|(_, v)| v.1.as_str());
    assert_eq!(long, Some("AllTestsPassed"), "{local:#?}");
    for (k, want) in &local {
        assert_eq!(
            via.get(k),
            Some(want),
            "{k:?}: through Harbor, then locally"
        );
    }
    assert_eq!(local.len(), via.len());
    // The groups rest on the same gold check through Harbor (the task carries the check made
    // on this engine) as locally; the Doc2Repo suite's say why they have none.
    let checks = |run: &str| -> BTreeMap<(String, u32), Option<String>> {
        let (_, stored) = beyondswe::report::read_run(&runs.join(run)).unwrap();
        stored
            .into_iter()
            .map(|s| {
                let check = s.verdict.canary_plan.and_then(|p| p.gold_check);
                ((s.verdict.instance_id, s.attempt), check)
            })
            .collect()
    };
    let (local_checks, via_checks) = (checks("local"), checks("harbor"));
    assert_eq!(local_checks, via_checks);
    let checked = via_checks
        .values()
        .filter(|c| c.as_deref() == Some("checked under the gold patch"))
        .count();
    assert!(checked >= 3, "{via_checks:#?}");
    // Every submission but the empty one went through Harbor: one trial each.
    let jobs = runs.join("harbor/harbor/jobs");
    let trials = trial_dirs(&jobs);
    assert_eq!(trials.len(), local.len() - 1, "{trials:#?}");
    let reasons: BTreeSet<&str> = local.values().map(|v| v.1.as_str()).collect();
    for want in ["AllTestsPassed", "TestsFailed", "PatchFailed", "EmptyPatch"] {
        assert!(
            reasons.iter().any(|r| r.contains(want)),
            "the demo no longer covers {want}: {reasons:?}"
        );
    }
    // Again: every verdict resumes, and no second Harbor job is made.
    grade("harbor", &harbor);
    assert_eq!(verdicts("harbor"), via);
    let job_dirs = std::fs::read_dir(&jobs).unwrap().count();
    assert_eq!(job_dirs, 1, "a resumed run made another Harbor job");
    // A run whose store lost the verdicts (stopped before it read the job back) takes them
    // from the trials Harbor finished, without running them again.
    copy_dir(&runs.join("harbor/harbor"), &runs.join("again/harbor"));
    grade("again", &harbor);
    assert_eq!(verdicts("again"), via);
    let job_dirs = std::fs::read_dir(runs.join("again/harbor/jobs"))
        .unwrap()
        .count();
    assert_eq!(job_dirs, 1, "finished trials were run again");
}

/// A Harbor command that fails and grades nothing is the run's error, with its output, and
/// leaves no verdict for what it was sent (a run with the command fixed grades them); what the
/// host decided alone (the empty patch) is kept. Needs no engine: nothing runs in a container.
#[test]
fn a_harbor_that_grades_nothing_fails_the_run_and_stores_no_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let fake = tmp.path().join("harbor.sh");
    std::fs::write(&fake, "echo no-such-harbor >&2\nexit 3\n").unwrap();
    let out = bin()
        .args(["grade", "--dataset"])
        .arg(fixtures().join("dataset/demo.jsonl"))
        .arg("--predictions")
        .arg(fixtures().join("predictions/demo.jsonl"))
        .args(["--ids", "acme_calc_pr7", "acme_calc_pr71", "--results-dir"])
        .arg(&runs)
        .args(["--run-id", "r", "--via-harbor", "--harbor-command"])
        .arg(format!("sh {}", fake.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("graded nothing"), "{stderr}");
    let (_, stored) = beyondswe::report::read_run(&runs.join("r")).unwrap();
    let ids: Vec<&str> = stored
        .iter()
        .map(|s| s.verdict.instance_id.as_str())
        .collect();
    assert_eq!(ids, ["acme_calc_pr71"], "{stored:#?}");
    let log = std::fs::read_dir(runs.join("r/harbor"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "log"))
        .expect("Harbor's output is kept");
    assert!(
        std::fs::read_to_string(log)
            .unwrap()
            .contains("no-such-harbor")
    );
}

/// SIGTERM or Ctrl-C to `grade --via-harbor` stops Harbor and everything it started (it runs in
/// a process group of its own, which the run stops: SIGINT, then SIGTERM, then SIGKILL), within
/// seconds, and the run exits 128 plus the signal; nothing is left running under PID 1. Needs no
/// engine: the Harbor here is a script that starts a long child and waits, ignoring SIGINT.
#[test]
fn a_stopped_run_stops_harbor_and_what_it_started() {
    for (signal, code) in [("TERM", 143), ("INT", 130)] {
        let tmp = tempfile::tempdir().unwrap();
        let runs = tmp.path().join("runs");
        let pids = tmp.path().join("pids");
        let fake = tmp.path().join("harbor.sh");
        std::fs::write(
            &fake,
            format!(
                "trap '' INT\nsleep 300 &\necho $$ $! > {}\nwait\n",
                pids.display()
            ),
        )
        .unwrap();
        let child = bin()
            .args(["grade", "--dataset"])
            .arg(fixtures().join("dataset/demo.jsonl"))
            .arg("--predictions")
            .arg(fixtures().join("predictions/demo.jsonl"))
            .args(["--ids", "acme_calc_pr7", "--results-dir"])
            .arg(&runs)
            .args(["--run-id", "r", "--via-harbor", "--harbor-command"])
            .arg(format!("sh {}", fake.display()))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !pids.is_file()
            || std::fs::read_to_string(&pids)
                .unwrap()
                .split_whitespace()
                .count()
                < 2
        {
            assert!(
                std::time::Instant::now() < until,
                "the fake Harbor never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let started = std::time::Instant::now();
        assert!(
            std::process::Command::new("kill")
                .args([&format!("-{signal}"), &child.id().to_string()])
                .status()
                .unwrap()
                .success()
        );
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{signal}: {stderr}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(40),
            "{signal}: took {:?}",
            started.elapsed()
        );
        for pid in std::fs::read_to_string(&pids).unwrap().split_whitespace() {
            // Gone, or a zombie waiting for whatever reaps orphans here: not running.
            let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| s.rsplit_once(") ").map(|(_, r)| r.to_owned()))
                .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'));
            assert!(
                !alive,
                "{signal}: process {pid} of Harbor's is still running"
            );
        }
    }
}
