//! Grading through Harbor (`grade --via-harbor`): each submission becomes a Harbor task whose
//! oracle solution is that submission, Harbor runs them on whatever environment it has (its
//! `--env`: `docker`, `daytona`, `modal`, …) at the run's concurrency, and each task's separate
//! verifier (the same `adapters/beyondswe_verifier/verify.py` the local grader runs, in a fresh container of the
//! task's image) grades what the oracle left. The job is read back into the run's store: the
//! verifier's own result (`verifier/report.json`) becomes the verdict, as the local grader's
//! result does, so the store, the resume keys and the report are those of any run.
//!
//! The host's checks run here first, as they do before a local grading (a submission that
//! cannot be read, an empty patch, a patch that does not parse or touches `.git`, a tree for an
//! issue task): those need no task. A patch that does not apply is recorded by the task's
//! `solve.sh` in the trial's `agent/` directory and read back as `patch_failed`.

use super::Job;
use super::batch::store_verdict;
use super::batch::{JobEvent, Progress, file_digest, job_key, options_digest, stored_verdict};
use super::error::RunError;
use super::spec::HarborBackend;
use crate::adapters::APPLY_RECORD;
use crate::convert::{Oracle, Resources, ToHarborOptions, VerifierMode, write_oracle_task};
use crate::grade::{
    Checked, GradeOptions, HostChecked, Outcome, Reason, Verdict, VerifierResult, host_checks,
    note_crlf,
};
use crate::harbor::{task_dir_name, trial_dirs};
use crate::report::Store;
use crate::submission::Submission;
use crate::verifier_spec::GoldCheck;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// A grading the verifier must make, waiting for its trial.
struct Pending {
    job: Job,
    key: String,
    checked: Checked,
    /// Why the task carries no gold check, when it carries none.
    no_check: Option<String>,
}

/// The largest verifier result or apply record read back from a trial.
const MAX_READ: u64 = 32 << 20;

/// Grades `work` through Harbor into `store`; every verdict is stored as soon as it is known.
pub(super) fn grade_via_harbor(
    harbor: &HarborBackend,
    work: Vec<Job>,
    store: &Mutex<Store>,
    opts: &GradeOptions,
    concurrency: usize,
    progress: &dyn Progress,
) -> Result<(), RunError> {
    let options = harbor_options_digest(opts, harbor);
    let mut pending = Vec::new();
    for job in work {
        let image = job.record.image().unwrap_or_default();
        let key = job_key(
            &job,
            &format!("harbor:{image}"),
            &file_digest(job.test_suite.as_ref()),
            &options,
        );
        if let Some(stored) = stored_verdict(store, &job, &key) {
            progress.event(&JobEvent::Cached(stored));
            continue;
        }
        match host_checks(&job.record, &job.submission, opts) {
            HostChecked::Decided(v) => progress.event(&store_verdict(store, &job, key, v, false)?),
            HostChecked::Verify(checked) => pending.push(Pending {
                job,
                key,
                checked,
                no_check: None,
            }),
        }
    }
    if pending.is_empty() {
        return Ok(());
    }
    let dir = store
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .dir()
        .join("harbor");
    let jobs = dir.join("jobs");
    let mut open: HashMap<String, Pending> = pending
        .into_iter()
        .map(|p| {
            (
                task_name(&p.key, p.job.attempt, p.job.record.instance_id()),
                p,
            )
        })
        .collect();
    // What an earlier Harbor job finished of these very gradings (a run stopped while Harbor
    // went on, or before it read the job back) is read, not run again.
    take_finished(&jobs, &mut open, false, store, progress)?;
    if open.is_empty() {
        return Ok(());
    }
    let job_name = format!("grade-{}", job_stamp());
    let tasks_rel = format!("tasks-{job_name}");
    let tasks = dir.join(&tasks_rel);
    let mut topts = task_options(opts);
    topts.gold_checks = gold_checks(harbor, &mut open, opts, concurrency, progress);
    let mut names: Vec<String> = open.keys().cloned().collect();
    names.sort();
    for name in names {
        let p = &open[&name];
        let oracle = match &p.checked.submission {
            Submission::Patch(bytes) => Ok(Oracle::Patch(bytes.clone())),
            Submission::Tree(tree) => tree.to_tar().map(Oracle::Tree),
            Submission::Unreadable(_) => continue, // decided by the host's checks
        };
        let made = oracle.map_err(|e| e.to_string()).and_then(|oracle| {
            write_oracle_task(
                &p.job.record,
                &tasks,
                &name,
                &oracle,
                p.job.test_suite.as_deref(),
                &topts,
            )
            .map_err(|e| e.to_string())
        });
        if let Err(e) = made
            && let Some(p) = open.remove(&name)
        {
            let mut v = p.checked.verdict;
            v.set(Outcome::Error, Reason::GraderFailed, 0.0);
            v.logs.error = format!("writing the Harbor task for this submission: {e}");
            progress.event(&store_verdict(store, &p.job, p.key, v, false)?);
        }
    }
    if open.is_empty() {
        return Ok(());
    }
    progress.note(&format!(
        "harbor: {} task(s) in {}, running them as job {job_name} on `{}` ({} at a time)",
        open.len(),
        tasks.display(),
        harbor.environment,
        concurrency.max(1)
    ));
    let sent = open.len();
    // A stop signal (Ctrl-C, SIGTERM, SIGHUP) is the run's to act on: Harbor runs in a process
    // group of its own, which the run stops, and what finished is kept.
    super::session::record_stop_signals();
    let mut child = start_harbor(harbor, &dir, &tasks_rel, &job_name, concurrency)?;
    let job_dir = jobs.join(&job_name);
    // Each verdict is stored as soon as its trial is done, so a run stopped here keeps them.
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if let Some(signal) = super::session::stop_signal() {
            progress.note(&format!(
                "stopping Harbor (signal {signal}); the trials it finished are kept"
            ));
            stop_harbor(&mut child);
            take_finished(&job_dir, &mut open, false, store, progress)?;
            return Ok(());
        }
        take_finished(&job_dir, &mut open, false, store, progress)?;
        std::thread::sleep(POLL);
    };
    take_finished(&job_dir, &mut open, true, store, progress)?;
    let log = dir.join(format!("{job_name}.log"));
    if !status.success() && open.len() == sent {
        // Harbor itself failed (a wrong command or version, no engine): nothing was graded, so
        // nothing is stored for these submissions and a run with the cause fixed grades them.
        let output = read_text(&log).unwrap_or_default();
        return Err(RunError::Harbor(format!(
            "`{}` failed ({status}) and graded nothing; its output ({}) ends:\n{}",
            harbor.command.join(" "),
            log.display(),
            crate::text::tail(&output, 4_000)
        )));
    }
    for (name, p) in open {
        let mut v = p.checked.verdict;
        v.set(Outcome::Error, Reason::VerifierFailed, 0.0);
        v.logs.error = format!(
            "Harbor left no trial for task {name} (harbor {status}; its output is in {})",
            log.display()
        );
        progress.event(&store_verdict(store, &p.job, p.key, v, false)?);
    }
    Ok(())
}

/// Stops Harbor's process group as a terminal would, then harder: SIGINT (Harbor cleans up its
/// environments), SIGTERM after [`STOP_GRACE`], SIGKILL after as long again; waits for it.
fn stop_harbor(child: &mut std::process::Child) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    let group = Pid::from_raw(child.id() as i32);
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGKILL] {
        let _ = killpg(group, signal);
        let until = std::time::Instant::now() + STOP_GRACE;
        while std::time::Instant::now() < until {
            if child.try_wait().ok().flatten().is_some() {
                // The group's other processes (Harbor's children) go with the same signal.
                let _ = killpg(group, Signal::SIGKILL);
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
    let _ = child.wait();
}

/// How long Harbor is given to stop on each signal.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// How often a running Harbor job is looked at for finished trials.
const POLL: std::time::Duration = std::time::Duration::from_secs(2);

/// Stores the verdict of every trial below `root` that grades one of `open` and is over (it has
/// its `result.json`, which Harbor writes last), and takes it off `open`. Unless `last`, only a
/// trial with a conclusive record counts (the verifier's result, or a patch that did not apply):
/// one that failed otherwise may still be retried by Harbor, or belong to an earlier job.
fn take_finished(
    root: &Path,
    open: &mut HashMap<String, Pending>,
    last: bool,
    store: &Mutex<Store>,
    progress: &dyn Progress,
) -> Result<(), RunError> {
    if open.is_empty() || !root.is_dir() {
        return Ok(());
    }
    for (trial, result) in trial_dirs(root) {
        let task = result["task_name"].as_str().unwrap_or_default();
        let local = task.rsplit_once('/').map_or(task, |(_, n)| n);
        if !open.contains_key(local) || !(last || conclusive(&trial)) {
            continue;
        }
        let Some(p) = open.remove(local) else {
            continue;
        };
        let mut v = p.checked.verdict;
        read_trial(&mut v, &p.checked.submission, &trial, &result);
        if let (Some(plan), Some(why)) = (v.canary_plan.as_mut(), p.no_check)
            && plan.gold_check.is_none()
        {
            plan.gold_check = Some(why);
        }
        note_crlf(p.checked.crlf, &mut v);
        progress.event(&store_verdict(store, &p.job, p.key, v, false)?);
    }
    Ok(())
}

/// The gold checks of the submissions' instances (see [`crate::grade::gold_check_for`]), made on
/// this machine's engine when it is Harbor's environment (`-e docker`), as a local run makes
/// them (and from the same cache), by instance id. A submission whose instance has none is told
/// why in its `no_check`; its task's verifier then builds groups on any site, as before.
fn gold_checks(
    harbor: &HarborBackend,
    open: &mut HashMap<String, Pending>,
    opts: &GradeOptions,
    concurrency: usize,
    progress: &dyn Progress,
) -> BTreeMap<String, GoldCheck> {
    let mut records: BTreeMap<&str, &crate::record::Record> = BTreeMap::new();
    for p in open.values() {
        if crate::grade::no_gold_check(&p.job.record).is_none() {
            records.insert(p.job.record.instance_id(), &p.job.record);
        }
    }
    let found: Result<BTreeMap<String, Result<GoldCheck, String>>, String> =
        if harbor.environment != "docker" {
            Err(format!(
                "no gold check: Harbor's environment `{}` is not this machine's engine",
                harbor.environment
            ))
        } else if records.is_empty() {
            Ok(BTreeMap::new())
        } else {
            let records: Vec<_> = records.into_values().collect();
            super::session::gold_checks(&records, opts, concurrency, progress)
        };
    let mut checks = BTreeMap::new();
    for p in open.values_mut() {
        let id = p.job.record.instance_id();
        if let Some(why) = crate::grade::no_gold_check(&p.job.record) {
            p.no_check = Some(why.to_owned());
            continue;
        }
        p.no_check = match found.as_ref().map(|f| f.get(id)) {
            Ok(Some(Ok(check))) => {
                checks.insert(id.to_owned(), check.clone());
                None
            }
            Ok(Some(Err(why))) | Err(why) => Some(why.clone()),
            Ok(None) => Some("no gold check was made".to_owned()),
        };
    }
    checks
}

/// Whether a finished trial's record decides its verdict whatever comes after: the verifier
/// wrote its result, or the patch did not apply.
fn conclusive(trial: &Path) -> bool {
    trial.join("verifier").join("report.json").is_file()
        || read_text(&trial.join("agent").join(APPLY_RECORD))
            .is_some_and(|t| t.starts_with("failed"))
}

/// What the resume keys of gradings through Harbor hold as their options: the grading options,
/// the path and the environment.
fn harbor_options_digest(opts: &GradeOptions, harbor: &HarborBackend) -> String {
    format!(
        "{}\0via-harbor\0{}",
        options_digest(opts),
        harbor.environment
    )
}

/// The name of the task made for a grading: its resume key's first 12 digits and its attempt
/// (so a trial of an earlier job is known for the same grading), then the instance; a name
/// Docker takes for an image (Harbor names the environment's image after it).
fn task_name(key: &str, attempt: u32, id: &str) -> String {
    let mut name = format!(
        "{}a{attempt}-{}",
        key.get(..12).unwrap_or(key),
        task_dir_name(id)
    );
    name.truncate(120);
    task_dir_name(&name)
}

/// The tasks' options: a separate verifier, the run's limits as the task's resources, and
/// `--strict` as the verifier's.
fn task_options(opts: &GradeOptions) -> ToHarborOptions {
    let test = opts.test_timeout.as_secs().max(1);
    ToHarborOptions {
        force: true,
        resources: Resources {
            cpus: opts.limits.cpus.ceil().max(1.0) as u32,
            memory_mb: opts.limits.memory_mb,
            // As the local grader bounds its one verifier run: setup, tests and two minutes.
            verifier_timeout_sec: (opts.setup_timeout.as_secs() + test + 120) as f64,
            test_timeout_sec: test,
            ..Resources::default()
        },
        verifier_mode: VerifierMode::Separate,
        strict: opts.strict,
        ..ToHarborOptions::default()
    }
}

/// Seconds since the epoch and the process id: a job name unique within one run directory.
fn job_stamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    format!("{secs}-{}", std::process::id())
}

/// Starts `harbor run` on the tasks, its output into `dir/<job>.log`. A command that cannot be
/// started is the run's error (nothing was graded through it).
fn start_harbor(
    harbor: &HarborBackend,
    dir: &Path,
    tasks_rel: &str,
    job_name: &str,
    concurrency: usize,
) -> Result<std::process::Child, RunError> {
    let (program, args) = harbor
        .command
        .split_first()
        .ok_or_else(|| RunError::Harbor("the Harbor command is empty".into()))?;
    let log = fs_err::File::create(dir.join(format!("{job_name}.log")))?;
    let err = log.file().try_clone()?;
    let mut cmd = Command::new(program);
    // A process group of its own: a signal to the run reaches Harbor through the run, which
    // stops the whole group (Harbor and what it started), never Harbor alone or not at all.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.args(args)
        .args(["run", "-p", tasks_rel, "-a", "oracle", "--env"])
        .arg(&harbor.environment)
        .args(["-n", &concurrency.max(1).to_string(), "-o", "jobs"])
        .args(["--job-name", job_name, "-y"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log.into_parts().0)
        .stderr(err);
    tracing::info!(?cmd, "running Harbor");
    cmd.spawn().map_err(|e| {
        RunError::Harbor(format!(
            "cannot run `{}` (set the Harbor command with --harbor-command): {e}",
            harbor.command.join(" ")
        ))
    })
}

/// Completes `v` from one trial: the oracle's apply record, then the separate verifier's
/// result; without a result, why the trial has none.
fn read_trial(v: &mut Verdict, submission: &Submission, trial: &Path, result: &Value) {
    if let Some(why) = environment_failure(result) {
        v.set(Outcome::Error, Reason::EnvironmentFailed, 0.0);
        v.logs.error = format!("Harbor could not build or start the trial's environment: {why}");
        return;
    }
    if let Submission::Patch(_) = submission {
        match read_text(&trial.join("agent").join(APPLY_RECORD)) {
            Some(text) if text.starts_with("failed") => {
                v.set(Outcome::Unresolved, Reason::PatchFailed, 0.0);
                v.logs.apply = crate::text::tail_marked(
                    text.trim_start_matches("failed").trim_start(),
                    20_000,
                );
                return;
            }
            Some(_) => {}
            None => {
                v.set(Outcome::Error, Reason::VerifierFailed, 0.0);
                v.logs.error = format!(
                    "the oracle left no {APPLY_RECORD} in {}: {}",
                    trial.join("agent").display(),
                    exception(result).unwrap_or_else(|| "no exception recorded".into())
                );
                return;
            }
        }
    }
    let report = trial.join("verifier").join("report.json");
    let tail = |s: &str| crate::text::tail_marked(s, 20_000);
    match crate::files::read_bounded(&report, MAX_READ) {
        Ok(bytes) => match VerifierResult::parse(&bytes) {
            Ok(parsed) => parsed.apply_to(v, tail),
            Err(e) => {
                v.set(Outcome::Error, Reason::VerifierFailed, 0.0);
                v.logs.error = format!(
                    "{}: {e}: {}",
                    report.display(),
                    crate::text::tail(&String::from_utf8_lossy(&bytes), 2_000)
                );
            }
        },
        Err(e) => {
            let why = exception(result);
            let timed_out = result["exception_info"]["exception_type"]
                .as_str()
                .is_some_and(|t| t.contains("Timeout"));
            if timed_out {
                v.set(Outcome::Unresolved, Reason::Timeout, 0.0);
            } else {
                v.set(Outcome::Error, Reason::VerifierFailed, 0.0);
            }
            v.logs.error = format!(
                "no verifier result ({}: {e}){}",
                report.display(),
                why.map(|w| format!("; the trial: {w}")).unwrap_or_default()
            );
        }
    }
}

/// Harbor's exceptions that mean the environment never came up.
const ENVIRONMENT_EXCEPTIONS: [&str; 3] = [
    "EnvironmentStartTimeoutError",
    "SandboxBuildFailedError",
    "HealthcheckError",
];

/// Why the trial's environment never came up, when it did not: an exception of the
/// environment's kind, or any exception before the agent's setup began (Harbor records
/// `agent_setup` once the environment is up; an image tag Docker refuses fails before it).
fn environment_failure(result: &Value) -> Option<String> {
    let why = exception(result)?;
    let kind = result["exception_info"]["exception_type"]
        .as_str()
        .unwrap_or_default();
    let before_agent = result.get("agent_setup").is_none_or(Value::is_null);
    (ENVIRONMENT_EXCEPTIONS.contains(&kind) || before_agent).then_some(why)
}

/// A trial's exception, as Harbor recorded it.
fn exception(result: &Value) -> Option<String> {
    let info = result.get("exception_info").filter(|v| !v.is_null())?;
    Some(format!(
        "{}: {}",
        info["exception_type"].as_str().unwrap_or("exception"),
        info["exception_message"].as_str().unwrap_or_default()
    ))
}

fn read_text(path: &Path) -> Option<String> {
    crate::files::read_bounded(path, MAX_READ)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::record::Family;

    /// `grade --strict --via-harbor`: the tasks' verifier is told, and the resume key differs.
    #[test]
    fn strict_reaches_the_tasks_verifier_and_the_key() {
        let strict = GradeOptions {
            strict: true,
            ..GradeOptions::default()
        };
        assert!(task_options(&strict).strict);
        assert!(!task_options(&GradeOptions::default()).strict);
        let harbor = HarborBackend {
            command: vec!["harbor".into()],
            environment: "docker".into(),
        };
        assert_ne!(
            harbor_options_digest(&strict, &harbor),
            harbor_options_digest(&GradeOptions::default(), &harbor)
        );
    }

    #[test]
    fn task_names_are_unique_image_names() {
        let key = "0123456789abcdef0123";
        let a = task_name(key, 1, "PyCQA_pyflakes_pr801");
        let b = task_name(key, 2, "PyCQA_pyflakes_pr801");
        assert_eq!(a, "0123456789aba1-pycqa_pyflakes_pr801");
        assert_ne!(a, b);
        let long = task_name(key, 7, &"x".repeat(300));
        assert!(long.len() <= 120, "{long}");
        assert_eq!(task_dir_name(&long), long);
    }

    fn trial(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            fs_err::create_dir_all(p.parent().unwrap()).unwrap();
            fs_err::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_patch_that_did_not_apply_is_patch_failed() {
        let t = trial(&[(
            "agent/beyondswe-apply.txt",
            "failed\nerror: patch failed: a.py:1\n",
        )]);
        let mut v = Verdict::new("x", Family::CrossRepo);
        read_trial(
            &mut v,
            &Submission::Patch(b"diff".to_vec()),
            t.path(),
            &Value::Null,
        );
        assert_eq!(
            (v.verdict, v.reason),
            (Outcome::Unresolved, Reason::PatchFailed)
        );
        assert!(
            v.logs.apply.contains("patch failed: a.py"),
            "{}",
            v.logs.apply
        );
    }

    #[test]
    fn no_result_is_an_error_or_a_timeout_with_the_trials_exception() {
        let t = trial(&[("agent/beyondswe-apply.txt", "applied: git apply\n")]);
        let patch = Submission::Patch(b"diff".to_vec());
        let mut v = Verdict::new("x", Family::CrossRepo);
        // Failures after the environment came up (Harbor had begun the agent's setup).
        let up = serde_json::json!({"started_at": "2026-12-05T10:00:00Z"});
        let failed = serde_json::json!({"agent_setup": up, "exception_info": {
            "exception_type": "RuntimeError", "exception_message": "the engine went away"}});
        read_trial(&mut v, &patch, t.path(), &failed);
        assert_eq!(
            (v.verdict, v.reason),
            (Outcome::Error, Reason::VerifierFailed)
        );
        assert!(
            v.logs.error.contains("the engine went away"),
            "{}",
            v.logs.error
        );

        let mut v = Verdict::new("x", Family::CrossRepo);
        let slow = serde_json::json!({"agent_setup": up, "exception_info": {
            "exception_type": "VerifierTimeoutError", "exception_message": "3600 s"}});
        read_trial(&mut v, &patch, t.path(), &slow);
        assert_eq!(
            (v.verdict, v.reason),
            (Outcome::Unresolved, Reason::Timeout)
        );

        // The oracle never ran: no apply record.
        let empty = trial(&[]);
        let mut v = Verdict::new("x", Family::CrossRepo);
        read_trial(&mut v, &patch, empty.path(), &failed);
        assert_eq!(v.verdict, Outcome::Error);
        assert!(v.logs.error.contains(APPLY_RECORD), "{}", v.logs.error);
    }

    /// Harbor 0.26 could not build the environment (an image tag Docker refuses; a build that
    /// timed out): `environment_failed` with Harbor's message, not the verifier's failure.
    #[test]
    fn an_environment_that_never_came_up_is_environment_failed() {
        let patch = Submission::Patch(b"diff".to_vec());
        let refused = serde_json::json!({"agent_setup": null, "exception_info": {
            "exception_type": "RuntimeError",
            "exception_message": "Docker compose command failed: invalid reference format: \
                pytoolz_toolz_v0-__thqvqbq__env-main"}});
        let timed_out = serde_json::json!({"agent_setup": {"started_at": "t"}, "exception_info": {
            "exception_type": "EnvironmentStartTimeoutError", "exception_message": "600 s"}});
        for (result, says) in [(refused, "invalid reference format"), (timed_out, "600 s")] {
            let empty = trial(&[]);
            let mut v = Verdict::new("x", Family::DepMigrate);
            read_trial(&mut v, &patch, empty.path(), &result);
            assert_eq!(
                (v.verdict, v.reason),
                (Outcome::Error, Reason::EnvironmentFailed)
            );
            assert!(v.logs.error.contains(says), "{}", v.logs.error);
            assert!(v.logs.error.contains("environment"), "{}", v.logs.error);
        }
    }

    #[test]
    fn a_result_that_is_not_the_verifiers_is_an_error() {
        let t = trial(&[
            ("agent/beyondswe-apply.txt", "applied: git apply\n"),
            (
                "verifier/report.json",
                r#"{"verdict": "error", "reason": "no_python_in_image"}"#,
            ),
        ]);
        let mut v = Verdict::new("x", Family::CrossRepo);
        read_trial(
            &mut v,
            &Submission::Patch(b"diff".to_vec()),
            t.path(),
            &Value::Null,
        );
        assert_eq!(
            (v.verdict, v.reason),
            (Outcome::Error, Reason::VerifierFailed)
        );
        assert!(
            v.logs.error.contains("no_python_in_image"),
            "{}",
            v.logs.error
        );
    }
}
