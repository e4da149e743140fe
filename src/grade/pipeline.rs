//! The grading pipeline: sandbox → prepare → apply → restore → test → verdict.
//!
//! Every submission gets a new container from the instance image. Every step is bounded in time,
//! and every failure ends in a verdict: the agent's failures are `unresolved` with a reason, the
//! infrastructure's are `error`. Nothing printed by the code under test decides anything: outcomes
//! come from the recorder's file (random path, fresh nonce) and pytest's JUnit report, read back
//! through the engine API and parsed here.

use super::results::{Matcher, RunnerResults};
use super::verdict::{Flags, Outcome, Reason, SuiteResult, TestOutcome, Verdict};
use crate::adapters;
use crate::convert::keep_paths;
use crate::junit;
use crate::patch;
use crate::record::{Family, Record};
use crate::restore_rules;
use crate::sandbox::{
    ContainerSpec, ExecOutput, ExecSpec, Limits, Sandbox, SandboxError, TarBuilder,
    first_file_in_tar,
};
use crate::submission::{EntryKind, RepoTree, Submission, TreeLimits, read_tree};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How to grade.
#[derive(Debug, Clone)]
pub struct GradeOptions {
    pub limits: Limits,
    /// Bound on the test command.
    pub test_timeout: Duration,
    /// Bound on each setup command and on `pip install -e .`.
    pub setup_timeout: Duration,
    /// Labels put on every container (run id, process).
    pub labels: Vec<(String, String)>,
}

impl Default for GradeOptions {
    fn default() -> Self {
        GradeOptions {
            limits: Limits::default(),
            test_timeout: Duration::from_secs(1800),
            setup_timeout: Duration::from_secs(300),
            labels: Vec::new(),
        }
    }
}

/// One instance and what to grade for it.
#[derive(Debug, Clone, Copy)]
pub struct GradeInput<'a> {
    pub record: &'a Record,
    pub submission: &'a Submission,
    /// The Doc2Repo suite zip.
    pub test_suite: Option<&'a Path>,
    /// Run the container from this image instead of the record's (a locally built environment).
    pub image_override: Option<&'a str>,
}

/// A step that ended the grading early.
struct Stop {
    verdict: Outcome,
    reason: Reason,
    message: String,
}

impl Stop {
    fn error(reason: Reason, message: impl Into<String>) -> Stop {
        Stop {
            verdict: Outcome::Error,
            reason,
            message: message.into(),
        }
    }

    fn unresolved(reason: Reason, message: impl Into<String>) -> Stop {
        Stop {
            verdict: Outcome::Unresolved,
            reason,
            message: message.into(),
        }
    }
}

impl From<SandboxError> for Stop {
    fn from(e: SandboxError) -> Stop {
        let reason = match e {
            SandboxError::EngineUnreachable { .. } => Reason::EngineUnreachable,
            SandboxError::ImageMissing { .. } => Reason::ImageMissing,
            _ => Reason::SandboxFailed,
        };
        Stop::error(reason, e.to_string())
    }
}

const MAX_LOG: usize = 20_000;
const MAX_RESULTS: usize = 64 * 1024 * 1024;

fn tail(s: &str) -> String {
    if s.len() <= MAX_LOG {
        return s.to_owned();
    }
    let mut start = s.len() - MAX_LOG;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    format!("[… {} bytes cut]\n{}", start, &s[start..])
}

fn random_token() -> String {
    let mut bytes = [0u8; 12];
    // The OS generator does not fail on supported platforms; fall back to time and pid anyway.
    if getrandom::fill(&mut bytes).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        bytes[..8].copy_from_slice(&(t as u64).to_le_bytes());
        bytes[8..].copy_from_slice(&std::process::id().to_le_bytes());
    }
    hex::encode(bytes)
}

/// Grades one submission. Never fails: problems become the verdict's `error` or `unresolved`.
pub async fn grade<S: Sandbox>(sandbox: &S, input: GradeInput<'_>, opts: &GradeOptions) -> Verdict {
    let record = input.record;
    let mut v = Verdict::new(record.instance_id(), record.family());
    let total = Instant::now();
    if input.submission.is_empty_patch() {
        v.set(Outcome::Unresolved, Reason::EmptyPatch, 0.0);
        return v;
    }
    let Some(image) = input.image_override.or(record.image()) else {
        v.set(Outcome::Error, Reason::ImageMissing, 0.0);
        v.logs.error = "the record names no image".into();
        return v;
    };
    match sandbox.image_id(image).await {
        Ok(Some(id)) => v.image_id = Some(id),
        Ok(None) => {
            let e = SandboxError::ImageMissing {
                image: image.to_owned(),
            };
            v.set(Outcome::Error, Reason::ImageMissing, 0.0);
            v.logs.error = format!("{e}\nhint: {}", e.hint().unwrap_or_default());
            return v;
        }
        Err(e) => {
            let stop = Stop::from(e);
            v.set(stop.verdict, stop.reason, 0.0);
            v.logs.error = stop.message;
            return v;
        }
    }
    let mut labels: BTreeMap<String, String> = opts.labels.iter().cloned().collect();
    labels.insert(
        crate::sandbox::INSTANCE_LABEL.into(),
        record.instance_id().into(),
    );
    let spec = ContainerSpec {
        image: image.to_owned(),
        workdir: None,
        labels,
        limits: opts.limits.clone(),
    };
    let t = Instant::now();
    let container = match sandbox.start(&spec).await {
        Ok(c) => c,
        Err(e) => {
            let stop = Stop::from(e);
            v.set(stop.verdict, stop.reason, 0.0);
            v.logs.error = stop.message;
            return v;
        }
    };
    v.timings.insert("start".into(), t.elapsed().as_secs_f64());
    let mut run = Run {
        sandbox,
        container: &container,
        record,
        opts,
        workdir: record.workdir().to_owned(),
        private: format!("/tmp/beyondswe-{}", random_token()),
        python: String::new(),
        has_timeout: false,
        main_pid: 1,
        v: &mut v,
    };
    let outcome = run.steps(input).await;
    if let Err(stop) = outcome {
        // A command that ran out of memory looks like a kill; say so.
        let oom = sandbox.state(&container).await.is_ok_and(|s| s.oom_killed);
        let (verdict, reason) = if oom && stop.verdict != Outcome::Error {
            (Outcome::Unresolved, Reason::OutOfMemory)
        } else {
            (stop.verdict, stop.reason)
        };
        v.verdict = verdict;
        v.reason = reason;
        if v.family != Family::Doc2Repo || verdict == Outcome::Error {
            v.score = 0.0;
        }
        if !stop.message.is_empty() {
            v.logs.error = tail(&stop.message);
        }
    }
    let t = Instant::now();
    if let Err(e) = sandbox.remove(&container).await {
        v.logs
            .error
            .push_str(&format!("\nremoving the container failed: {e}"));
    }
    v.timings.insert("remove".into(), t.elapsed().as_secs_f64());
    v.timings
        .insert("total".into(), total.elapsed().as_secs_f64());
    v
}

struct Run<'a, S: Sandbox> {
    sandbox: &'a S,
    container: &'a S::Handle,
    record: &'a Record,
    opts: &'a GradeOptions,
    workdir: String,
    /// A directory only the grader knows: adapters, patches, results.
    private: String,
    python: String,
    /// Whether the image has coreutils' `timeout`.
    has_timeout: bool,
    /// The container's idle main process (kept alive when the test shell kills the rest).
    main_pid: u32,
    v: &'a mut Verdict,
}

impl<S: Sandbox> Run<'_, S> {
    async fn exec(&self, spec: ExecSpec) -> Result<ExecOutput, Stop> {
        Ok(self.sandbox.exec(self.container, &spec).await?)
    }

    /// `sh -c script` in the workdir, bounded inside the container (when `timeout` exists) and on
    /// the host.
    async fn sh_bounded(
        &self,
        script: &str,
        limit: Duration,
        env: &[(&str, String)],
    ) -> Result<ExecOutput, Stop> {
        let secs = limit.as_secs().max(1);
        let cmd = if self.has_timeout {
            vec![
                "timeout".into(),
                "-k".into(),
                "10".into(),
                secs.to_string(),
                "sh".into(),
                "-c".into(),
                script.into(),
            ]
        } else {
            vec!["sh".into(), "-c".into(), script.into()]
        };
        let mut spec = ExecSpec::new(cmd)
            .in_dir(self.workdir.clone())
            .timeout(limit + Duration::from_secs(60));
        for (k, val) in env {
            spec = spec.env(*k, val.clone());
        }
        self.exec(spec).await
    }

    async fn upload_file(&self, dir: &str, name: &str, data: &[u8]) -> Result<(), Stop> {
        let mut tar = TarBuilder::new();
        tar.file(name, data, 0o644)
            .map_err(|e| Stop::error(Reason::SandboxFailed, e.to_string()))?;
        let bytes = tar
            .finish()
            .map_err(|e| Stop::error(Reason::SandboxFailed, e.to_string()))?;
        Ok(self.sandbox.upload(self.container, dir, bytes).await?)
    }

    async fn download_file(&self, path: &str) -> Result<Option<Vec<u8>>, Stop> {
        match self
            .sandbox
            .download(self.container, path, MAX_RESULTS)
            .await?
        {
            Some(tar) => first_file_in_tar(&tar)
                .map_err(|e| Stop::error(Reason::SandboxFailed, format!("{path}: {e}"))),
            None => Ok(None),
        }
    }

    fn timed(&mut self, phase: &str, since: Instant) {
        *self.v.timings.entry(phase.into()).or_default() += since.elapsed().as_secs_f64();
    }

    async fn steps(&mut self, input: GradeInput<'_>) -> Result<(), Stop> {
        let t = Instant::now();
        self.setup_private().await?;
        self.prepare().await?;
        self.timed("prepare", t);
        if self.record.family() == Family::Doc2Repo {
            self.doc2repo(input).await
        } else {
            self.issue(input).await
        }
    }

    /// Uploads the adapters to the private directory and finds the interpreter.
    async fn setup_private(&mut self) -> Result<(), Stop> {
        let mut tar = TarBuilder::new();
        let add = |tar: &mut TarBuilder, name: &str, data: &str| {
            tar.file(name, data.as_bytes(), 0o755)
                .map(|_| ())
                .map_err(|e| Stop::error(Reason::SandboxFailed, e.to_string()))
        };
        add(&mut tar, "strip_history.sh", adapters::STRIP_HISTORY_SH)?;
        add(&mut tar, "beyondswe_verify.py", adapters::VERIFY_PY)?;
        add(
            &mut tar,
            "beyondswe_pytest_runner.py",
            adapters::PYTEST_RUNNER_PY,
        )?;
        let bytes = tar
            .finish()
            .map_err(|e| Stop::error(Reason::SandboxFailed, e.to_string()))?;
        self.sandbox
            .upload(self.container, &self.private, bytes)
            .await?;
        let probe = self
            .exec(ExecSpec::sh(format!(
                "mkdir -p {w} && (command -v python3 || command -v python) && (command -v timeout >/dev/null && echo has-timeout || true) \
                 && echo \"main-pid $(cat /proc/1/task/1/children 2>/dev/null)\"",
                w = adapters::shell_quote(&self.workdir)
            )))
            .await?;
        let mut lines = probe.stdout.lines();
        self.python = lines.next().unwrap_or_default().trim().to_owned();
        self.has_timeout = probe.stdout.contains("has-timeout");
        // With an init process, the idle `sleep` is its first child; without one, it is PID 1.
        self.main_pid = probe
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("main-pid "))
            .and_then(|l| l.split_whitespace().next()?.parse().ok())
            .unwrap_or(1);
        if self.python.is_empty() {
            return Err(Stop::error(
                Reason::PrepareFailed,
                format!(
                    "no python3 or python on the image's PATH\n{}",
                    probe.combined()
                ),
            ));
        }
        Ok(())
    }

    /// Checks out the base, runs the setup commands, strips newer history and proves it.
    async fn prepare(&mut self) -> Result<(), Stop> {
        let is_repo = self
            .exec(ExecSpec::new(["git", "rev-parse", "--git-dir"]).in_dir(self.workdir.clone()))
            .await?
            .success();
        if !is_repo {
            if self.record.family() == Family::Doc2Repo {
                return Ok(());
            }
            return Err(Stop::error(
                Reason::PrepareFailed,
                format!("{} is not a git repository in the image", self.workdir),
            ));
        }
        let mut log = String::new();
        if let Some(base) = self.record.base_commit() {
            let out = self
                .exec(
                    ExecSpec::new([
                        "git",
                        "-c",
                        "advice.detachedHead=false",
                        "checkout",
                        "-q",
                        "-f",
                        base,
                    ])
                    .in_dir(self.workdir.clone()),
                )
                .await?;
            if !out.success() {
                return Err(Stop::error(
                    Reason::PrepareFailed,
                    format!("git checkout {base} failed:\n{}", out.combined()),
                ));
            }
        }
        for cmd in self.record.pre_commands() {
            let out = self.sh_bounded(&cmd, self.opts.setup_timeout, &[]).await?;
            log.push_str(&format!("$ {cmd}\n{}\n", out.combined()));
            if !out.success() {
                self.v.flags.pre_commands_failed.push(cmd);
            }
        }
        let strip = self
            .exec(ExecSpec::new([
                "sh".to_owned(),
                format!("{}/strip_history.sh", self.private),
                self.workdir.clone(),
            ]))
            .await?;
        log.push_str(&strip.combined());
        self.v.logs.prepare = tail(&log);
        match strip.exit_code {
            Some(0) => {}
            Some(3) => return Err(Stop::error(Reason::HistoryLeak, strip.combined())),
            _ => {
                return Err(Stop::error(
                    Reason::PrepareFailed,
                    format!("history strip failed:\n{}", strip.combined()),
                ));
            }
        }
        // What is untracked now belongs to the image, not to the submission.
        let untracked = self
            .exec(ExecSpec::new(["git", "ls-files", "--others", "-z"]).in_dir(self.workdir.clone()))
            .await?;
        self.upload_file(
            &self.private.clone(),
            "baseline-untracked",
            untracked.stdout.as_bytes(),
        )
        .await?;
        Ok(())
    }

    /// Applies a patch without ever leaving it half-applied: `git apply` (atomic), the same with
    /// whitespace tolerance, then GNU patch only after a dry run says every hunk applies.
    async fn apply_patch(&mut self, patch_bytes: &[u8]) -> Result<(), Stop> {
        let text = String::from_utf8_lossy(patch_bytes);
        let parsed = patch::parse(&text).map_err(|e| {
            Stop::unresolved(Reason::PatchFailed, format!("not a unified diff: {e}"))
        })?;
        let touched = parsed.touched_paths();
        if let Some(p) = touched.iter().find(|p| p.split('/').any(|c| c == ".git")) {
            return Err(Stop::unresolved(
                Reason::PatchFailed,
                format!("the patch touches `{p}` inside .git"),
            ));
        }
        self.v.flags.tests_touched = touched
            .into_iter()
            .filter(|p| restore_rules::is_covered(p))
            .collect();
        self.v.flags.suspicious.extend(forgery_signs(&text));
        self.upload_file(&self.private.clone(), "submission.patch", patch_bytes)
            .await?;
        let file = format!("{}/submission.patch", self.private);
        let q = adapters::shell_quote(&file);
        let strategies = [
            (
                "git apply",
                format!("git apply --verbose --whitespace=nowarn {q}"),
                None,
            ),
            (
                "git apply --ignore-whitespace",
                format!(
                    "git apply --verbose --whitespace=nowarn --ignore-space-change --ignore-whitespace {q}"
                ),
                None,
            ),
            (
                "patch --fuzz=3",
                format!("patch --batch --forward -p1 --fuzz=3 -i {q}"),
                Some(format!(
                    "patch --batch --forward -p1 --fuzz=3 --dry-run -i {q}"
                )),
            ),
        ];
        let mut log = String::new();
        for (name, cmd, dry_run) in strategies {
            if let Some(dry) = dry_run {
                let out = self.sh_bounded(&dry, self.opts.setup_timeout, &[]).await?;
                log.push_str(&format!("$ {dry}\n{}\n", out.combined()));
                if !out.success() {
                    continue;
                }
            }
            let out = self.sh_bounded(&cmd, self.opts.setup_timeout, &[]).await?;
            log.push_str(&format!("$ {cmd}\n{}\n", out.combined()));
            if out.success() {
                self.v.flags.applied_with = Some(name.to_owned());
                self.v.logs.apply = tail(&log);
                return Ok(());
            }
        }
        self.v.logs.apply = tail(&log);
        Err(Stop::unresolved(
            Reason::PatchFailed,
            "the patch does not apply (every strategy failed; see logs.apply)",
        ))
    }

    async fn issue(&mut self, input: GradeInput<'_>) -> Result<(), Stop> {
        let Submission::Patch(patch_bytes) = input.submission else {
            return Err(Stop::unresolved(
                Reason::PatchFailed,
                "issue tasks are graded from a patch, not a repository tree",
            ));
        };
        let t = Instant::now();
        self.apply_patch(patch_bytes).await?;
        self.timed("apply", t);

        let t = Instant::now();
        let (f2p_paths, keep) = keep_paths(self.record);
        let base = self.record.base_commit().unwrap_or("HEAD").to_owned();
        let mut cmd = vec![
            self.python.clone(),
            format!("{}/beyondswe_verify.py", self.private),
            "restore".into(),
            "--workdir".into(),
            self.workdir.clone(),
            "--base".into(),
            base,
            "--baseline-untracked".into(),
            format!("{}/baseline-untracked", self.private),
        ];
        for k in keep {
            cmd.extend(["--keep".into(), k]);
        }
        for p in f2p_paths {
            cmd.extend(["--f2p-path".into(), p]);
        }
        let out = self
            .exec(ExecSpec::new(cmd).in_dir(self.workdir.clone()))
            .await?;
        if !out.success() {
            return Err(Stop::error(
                Reason::SandboxFailed,
                format!("restore step failed:\n{}", out.combined()),
            ));
        }
        let restored: Flags = serde_json::from_str(out.stdout.trim()).map_err(|e| {
            Stop::error(
                Reason::SandboxFailed,
                format!("restore output unreadable: {e}: {}", out.stdout),
            )
        })?;
        self.v.flags.tests_restored = restored.tests_restored;
        self.v.flags.files_removed = restored.files_removed;
        self.v.flags.config_reverted = restored.config_reverted;
        self.v.flags.kept_for_gold = restored.kept_for_gold;

        if let Some(f2p) = self.record.f2p_patch() {
            self.upload_file(&self.private.clone(), "f2p.patch", f2p.as_bytes())
                .await?;
            let out = self
                .exec(
                    ExecSpec::new([
                        "git".into(),
                        "apply".into(),
                        "--verbose".into(),
                        "--whitespace=nowarn".into(),
                        format!("{}/f2p.patch", self.private),
                    ])
                    .in_dir(self.workdir.clone()),
                )
                .await?;
            if !out.success() {
                return Err(Stop::error(
                    Reason::F2pPatchFailed,
                    format!(
                        "the dataset's f2p patch does not apply:\n{}",
                        out.combined()
                    ),
                ));
            }
        }
        if let Some(script) = self.record.f2p_script() {
            self.upload_file(
                &self.workdir.clone(),
                "test_fail_to_pass.py",
                script.as_bytes(),
            )
            .await?;
        }
        self.timed("restore", t);

        let f2p = self.record.fail_to_pass();
        let p2p = self.record.pass_to_pass();
        let mut ids = f2p.clone();
        ids.extend(p2p.iter().filter(|i| !f2p.contains(i)).cloned());
        if ids.is_empty() {
            return Err(Stop::error(
                Reason::NoTestIds,
                "the instance has no FAIL_TO_PASS or PASS_TO_PASS ids",
            ));
        }
        let workdir = self.workdir.clone();
        let args = base_pytest_args(&workdir);
        let run = self.run_tests(&workdir, ids, args, Vec::new()).await?;
        let Some((results, junit_cases)) = run else {
            return Ok(());
        };
        let m = Matcher::new(&results, &junit_cases);
        self.v.fail_to_pass = f2p.iter().map(|i| (i.clone(), m.outcome(i))).collect();
        self.v.pass_to_pass = p2p.iter().map(|i| (i.clone(), m.outcome(i))).collect();
        let all: Vec<TestOutcome> = self
            .v
            .fail_to_pass
            .values()
            .chain(self.v.pass_to_pass.values())
            .copied()
            .collect();
        if all.iter().all(|o| *o == TestOutcome::Passed) && results.exit_code == Some(0) {
            self.v.set(Outcome::Resolved, Reason::AllTestsPassed, 1.0);
        } else if all.contains(&TestOutcome::Disputed) {
            self.v
                .set(Outcome::Unresolved, Reason::ResultsDisagree, 0.0);
        } else {
            self.v.set(Outcome::Unresolved, Reason::TestsFailed, 0.0);
        }
        Ok(())
    }

    /// Runs the recorder; `None` when it ended the grading (timeout, no results) with the verdict
    /// already set.
    async fn run_tests(
        &mut self,
        cwd: &str,
        ids: Vec<String>,
        mut args: Vec<String>,
        env: Vec<(&str, String)>,
    ) -> Result<Option<(RunnerResults, Vec<junit::JunitCase>)>, Stop> {
        let t = Instant::now();
        let nonce = random_token();
        let results_path = format!("{}/results-{nonce}.json", self.private);
        let junit_path = format!("{}/junit-{nonce}.xml", self.private);
        args.push(format!("--junitxml={junit_path}"));
        let config = serde_json::json!({
            "args": args, "ids": ids, "results_path": results_path, "nonce": nonce, "prepend_cwd": true,
        });
        self.upload_file(
            &self.private.clone(),
            "runner.json",
            config.to_string().as_bytes(),
        )
        .await?;
        // The shell that starts the runner kills every other process of the container (but init
        // and the idle main process) the moment the runner exits: nothing the tests started can
        // outlive them and rewrite the results.
        let limit = if self.has_timeout {
            format!("timeout -k 10 {} ", self.opts.test_timeout.as_secs().max(1))
        } else {
            String::new()
        };
        let script = format!(
            "cd {cwd} || exit 97; {limit}{py} {private}/beyondswe_pytest_runner.py {private}/runner.json; code=$?; \
             for p in /proc/[0-9]*; do pid=${{p#/proc/}}; case \"$pid\" in 1|$$|{keep}) ;; *) kill -9 \"$pid\" 2>/dev/null;; esac; done; exit $code",
            cwd = adapters::shell_quote(cwd),
            py = adapters::shell_quote(&self.python),
            private = self.private,
            keep = self.main_pid,
        );
        let mut env_all: Vec<(&str, String)> = vec![
            ("PYTHONNOUSERSITE", "1".into()),
            ("PYTHONDONTWRITEBYTECODE", "1".into()),
            ("PYTEST_ADDOPTS", String::new()),
            ("PYTEST_PLUGINS", String::new()),
        ];
        env_all.extend(env);
        let mut spec =
            ExecSpec::sh(script).timeout(self.opts.test_timeout + Duration::from_secs(60));
        for (k, val) in env_all {
            spec = spec.env(k, val);
        }
        let out = self.exec(spec).await?;
        self.timed("tests", t);
        let t = Instant::now();
        if out.combined().contains("<pytest>true</pytest>") {
            self.v.flags.suspicious.push(
                "the test output contains the official success marker `<pytest>true</pytest>`"
                    .into(),
            );
        }
        self.v.logs.test_output = tail(&out.combined());
        let timed_out = out.timed_out || matches!(out.exit_code, Some(124) | Some(137));
        let results_bytes = self.download_file(&results_path).await?;
        let junit_bytes = self.download_file(&junit_path).await?;
        self.timed("collect", t);
        if let Some(b) = &results_bytes {
            self.v.logs.results = tail(&String::from_utf8_lossy(b));
        }
        let results = match results_bytes.map(|b| RunnerResults::parse(&b, &nonce)) {
            Some(Ok(r)) => Some(r),
            Some(Err(msg)) => {
                self.v
                    .flags
                    .suspicious
                    .push(format!("results file rejected: {msg}"));
                None
            }
            None => None,
        };
        if timed_out {
            let oom = self
                .sandbox
                .state(self.container)
                .await
                .is_ok_and(|s| s.oom_killed);
            let reason = if oom {
                Reason::OutOfMemory
            } else {
                Reason::Timeout
            };
            // Doc2Repo keeps the credit of the tests that finished (from the partial results).
            let score = match (&results, self.record.family()) {
                (Some(r), Family::Doc2Repo) => self.suite_score(&Matcher::new(r, &[]), true),
                _ => 0.0,
            };
            self.v.set(Outcome::Unresolved, reason, score);
            return Ok(None);
        }
        let Some(mut results) = results else {
            self.v.set(Outcome::Unresolved, Reason::NoResults, 0.0);
            return Ok(None);
        };
        // The exit code that counts is the one the engine saw. A file that disagrees was written
        // by someone other than the runner: none of its outcomes is trusted.
        if results.exit_code != out.exit_code {
            self.v.flags.suspicious.push(format!(
                "results file rewritten: it says exit code {:?}, the engine saw {:?}",
                results.exit_code, out.exit_code
            ));
            results.exit_code = out.exit_code;
            for t in results.tests.values_mut() {
                if t.outcome == "passed" || t.outcome == "xpassed" {
                    t.outcome = "disputed".into();
                }
            }
        }
        let junit_cases = match junit_bytes {
            Some(b) => junit::parse(&b).unwrap_or_else(|e| {
                self.v.logs.error = format!("JUnit report unreadable: {e}");
                Vec::new()
            }),
            None => Vec::new(),
        };
        Ok(Some((results, junit_cases)))
    }

    /// The Doc2Repo score from a matcher; `recorder_only` when the JUnit report is unavailable
    /// (a timeout).
    fn suite_score(&mut self, m: &Matcher<'_>, recorder_only: bool) -> f64 {
        let expected = self.record.test_suite_num().unwrap_or(0);
        let passed = if recorder_only {
            m.passed_recorded()
        } else {
            m.passed_in_both()
        };
        let collected = m.collected();
        let denominator = if expected > 0 { expected } else { collected };
        let score = if denominator == 0 {
            0.0
        } else {
            (passed as f64 / denominator as f64).min(1.0)
        };
        self.v.suite = Some(SuiteResult {
            passed,
            collected,
            expected,
            all_passed: denominator > 0 && passed >= denominator,
        });
        score
    }

    async fn doc2repo(&mut self, input: GradeInput<'_>) -> Result<(), Stop> {
        let Some(zip) = input.test_suite else {
            return Err(Stop::error(
                Reason::TestSuiteMissing,
                "no test suite zip for this Doc2Repo instance (pass --test-suites)",
            ));
        };
        let t = Instant::now();
        match input.submission {
            Submission::Patch(p) => self.apply_patch(p).await?,
            Submission::Tree(tree) => {
                let bytes = tree
                    .to_tar()
                    .map_err(|e| Stop::error(Reason::SandboxFailed, e.to_string()))?;
                self.sandbox
                    .upload(self.container, &self.workdir, bytes)
                    .await?;
                self.v.flags.applied_with = Some("repository tree".into());
            }
        }
        // Interpreter start-up hooks in the submission would run inside the test process.
        let hooks = self
            .exec(
                ExecSpec::sh("find . -path ./.git -prune -o -type f \\( -name sitecustomize.py -o -name usercustomize.py -o -name '*.pth' \\) -print -exec rm -f {} +")
                    .in_dir(self.workdir.clone()),
            )
            .await?;
        self.v.flags.files_removed = hooks
            .stdout
            .lines()
            .map(|l| l.trim_start_matches("./").to_owned())
            .collect();
        self.timed("apply", t);

        // pytest plugins installed before the submission may load; the submission's may not.
        let t = Instant::now();
        let plugins = self
            .exec(
                ExecSpec::new([self.python.clone(), "-c".into(), LIST_PLUGINS.into()])
                    .in_dir(self.workdir.clone()),
            )
            .await?;
        let plugins: Vec<String> = serde_json::from_str(plugins.stdout.trim()).unwrap_or_default();
        let install = self
            .sh_bounded(
                &format!("{} -m pip install --no-deps --no-build-isolation --no-index --disable-pip-version-check -q -e .", adapters::shell_quote(&self.python)),
                self.opts.setup_timeout,
                &[("PIP_NO_INPUT", "1".into())],
            )
            .await?;
        self.v.logs.install = tail(&install.combined());
        let mut env: Vec<(&str, String)> = vec![("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1".into())];
        if !install.success() {
            self.v.flags.install_failed = true;
            env.push(("PYTHONPATH", format!("{w}:{w}/src", w = self.workdir)));
        }
        let suite = suite_tree(zip).map_err(|e| Stop::error(Reason::TestSuiteMissing, e))?;
        let suite_dir = format!("{}/suite", self.private);
        let has_ini = suite.entries.iter().any(|e| {
            ["pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"].contains(&e.path.as_str())
        });
        let bytes = suite
            .to_tar()
            .map_err(|e| Stop::error(Reason::SandboxFailed, e.to_string()))?;
        self.sandbox
            .upload(self.container, &suite_dir, bytes)
            .await?;
        self.timed("restore", t);

        let mut args = base_pytest_args(&suite_dir);
        if !has_ini {
            args.extend(["-c".into(), "/dev/null".into()]);
        }
        for p in plugins {
            args.extend(["-p".into(), p]);
        }
        let run = self
            .run_tests(&suite_dir.clone(), vec![suite_dir.clone()], args, env)
            .await?;
        let Some((results, junit_cases)) = run else {
            return Ok(());
        };
        let score = self.suite_score(&Matcher::new(&results, &junit_cases), false);
        let all = self.v.suite.as_ref().is_some_and(|s| s.all_passed);
        let (verdict, reason) = if all {
            (Outcome::Resolved, Reason::AllTestsPassed)
        } else {
            (Outcome::Unresolved, Reason::TestsFailed)
        };
        self.v.set(verdict, reason, score);
        Ok(())
    }
}

/// Lines a patch adds that look like an attempt to forge results: the official success marker,
/// printed pytest summaries, references to grader internals, pytest hooks outside test files.
/// Signs for a person to look at; they do not change the verdict.
pub fn forgery_signs(patch_text: &str) -> Vec<String> {
    let mut signs = Vec::new();
    let mut file = String::new();
    let summary = |line: &str| {
        let words: Vec<&str> = line
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        words
            .windows(2)
            .any(|w| w[0].bytes().all(|b| b.is_ascii_digit()) && w[1] == "passed")
    };
    for line in patch_text.lines() {
        if let Some(path) = line.strip_prefix("+++ ") {
            file = path.trim_start_matches("b/").to_owned();
            continue;
        }
        let Some(added) = line.strip_prefix('+') else {
            continue;
        };
        let mut note = |what: &str| {
            let sign = format!("{file}: {what}");
            if !signs.contains(&sign) {
                signs.push(sign);
            }
        };
        if added.contains("<pytest>true</pytest>") {
            note("adds the official success marker `<pytest>true</pytest>`");
        }
        if summary(added) {
            note("adds a pytest-style `N passed` summary");
        }
        if added.contains("_awe_test")
            || added.contains("beyondswe-")
            || added.contains("beyondswe_")
        {
            note("refers to grader internals");
        }
        let hook = [
            "pytest_runtest_makereport",
            "pytest_collection_modifyitems",
            "pytest_runtest_logreport",
            "pytest_sessionfinish",
        ]
        .into_iter()
        .find(|h| added.contains(h));
        if let Some(h) = hook
            && !restore_rules::is_test_path(&file)
        {
            note(&format!(
                "defines the pytest hook `{h}` outside the test files"
            ));
        }
    }
    signs
}

/// Entry-point names of the pytest plugins installed in the image (Python 3.6+).
const LIST_PLUGINS: &str = r#"
import json
names = []
try:
    from importlib import metadata
    eps = metadata.entry_points()
    group = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
    names = sorted(set(ep.name for ep in group))
except Exception:
    try:
        import pkg_resources
        names = sorted(set(ep.name for ep in pkg_resources.iter_entry_points("pytest11")))
    except Exception:
        names = []
print(json.dumps(names))
"#;

fn base_pytest_args(rootdir: &str) -> Vec<String> {
    vec![
        "-o".into(),
        "addopts=".into(),
        "-p".into(),
        "no:cacheprovider".into(),
        format!("--rootdir={rootdir}"),
        format!("--confcutdir={rootdir}"),
        "-q".into(),
    ]
}

/// The suite zip as a tree, read safely, without the official eval script (not run here).
fn suite_tree(zip: &Path) -> Result<RepoTree, String> {
    let mut tree = read_tree(zip, TreeLimits::default()).map_err(|e| e.to_string())?;
    tree.entries.retain(|e| e.path != "realswe_eval_script.py");
    if !tree
        .entries
        .iter()
        .any(|e| matches!(e.kind, EntryKind::File { .. }))
    {
        return Err(format!("{}: the suite has no files", zip.display()));
    }
    Ok(tree)
}

/// Where a record's suite zip is, if any.
pub fn suite_for(record: &Record, dir: Option<&Path>) -> Option<PathBuf> {
    dir.and_then(|d| crate::convert::find_test_suite(record, d))
}
