//! The grading pipeline: sandbox → prepare → apply → restore → test → verdict.
//!
//! Every submission gets a new container. Its image is the instance image after the prepare step
//! (base checked out, setup commands run, newer history stripped and proven gone); that prepared
//! image is committed once per instance and reused, keyed by the instance image's id, the base
//! commit, the setup commands and the strip script (`beyondswe-prepared:<key>`), so repeated
//! grading pays only for the submission. Every step is bounded in time, and every failure ends in
//! a verdict: the agent's
//! failures are `unresolved` with a reason, the infrastructure's are `error`. Nothing printed by
//! the code under test decides anything: outcomes come from the recorder's file (random path,
//! fresh nonce) and pytest's JUnit report, read back through the engine API and parsed here.

use super::results::{Matcher, RunnerResults};
use super::verdict::{Flags, Outcome, Reason, SuiteResult, TestOutcome, Verdict};
use crate::adapters::{self, shell_quote};
use crate::convert::keep_paths;
use crate::junit;
use crate::patch;
use crate::record::{Family, Record};
use crate::restore_rules;
use crate::sandbox::{
    ContainerSpec, ExecOutput, ExecSpec, INSTANCE_LABEL, Limits, Sandbox, SandboxError, TarBuilder,
    files_in_tar,
};
use crate::submission::{EntryKind, RepoTree, Submission, TreeLimits, read_tree};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where the prepare step keeps its facts inside the (prepared) image.
const STATE_DIR: &str = "/var/lib/beyondswe";
/// Bumped when the prepare step changes, so stale prepared images are not reused.
const PREPARE_VERSION: &str = "1";

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
    /// Reuse (and create) committed prepared images; off: prepare in every container.
    pub prepared_cache: bool,
}

impl Default for GradeOptions {
    fn default() -> Self {
        GradeOptions {
            limits: Limits::default(),
            test_timeout: Duration::from_secs(1800),
            setup_timeout: Duration::from_secs(300),
            labels: Vec::new(),
            prepared_cache: true,
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

    fn internal(e: impl std::fmt::Display) -> Stop {
        Stop::error(Reason::SandboxFailed, e.to_string())
    }
}

impl From<SandboxError> for Stop {
    fn from(e: SandboxError) -> Stop {
        let reason = match e {
            SandboxError::EngineUnreachable { .. } => Reason::EngineUnreachable,
            SandboxError::ImageMissing { .. } => Reason::ImageMissing,
            _ => Reason::SandboxFailed,
        };
        let hint = e.hint().map(|h| format!("\nhint: {h}")).unwrap_or_default();
        Stop::error(reason, format!("{e}{hint}"))
    }
}

const MAX_LOG: usize = 20_000;
const MAX_DOWNLOAD: usize = 128 * 1024 * 1024;

fn tail(s: &str) -> String {
    if s.len() <= MAX_LOG {
        return s.to_owned();
    }
    let mut start = s.len() - MAX_LOG;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    format!("[… {start} bytes cut]\n{}", &s[start..])
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

/// Finds the interpreter inside the container, in every script.
const FIND_PYTHON: &str = "PY=$(command -v python3 || command -v python) || { echo 'no python3 or python on PATH' >&2; exit 96; }";

/// Grades one submission. Never fails: problems become the verdict's `error` or `unresolved`.
pub async fn grade<S: Sandbox>(sandbox: &S, input: GradeInput<'_>, opts: &GradeOptions) -> Verdict {
    // A patch whose every line end was turned into CRLF in transit is put back first.
    let normalized;
    let mut crlf = false;
    let input = match input.submission {
        Submission::Patch(p) => {
            let (fixed, changed) = patch::normalize_transport(p);
            crlf = changed;
            normalized = Submission::Patch(fixed);
            GradeInput {
                submission: &normalized,
                ..input
            }
        }
        Submission::Tree(_) => input,
    };
    let record = input.record;
    let mut v = Verdict::new(record.instance_id(), record.family());
    let total = Instant::now();
    if input.submission.is_empty_patch() {
        v.set(Outcome::Unresolved, Reason::EmptyPatch, 0.0);
        return v;
    }
    if let Err(stop) = grade_in_container(sandbox, input, opts, &mut v).await {
        v.verdict = stop.verdict;
        v.reason = stop.reason;
        if v.family != Family::Doc2Repo || stop.verdict == Outcome::Error {
            v.score = 0.0;
        }
        if !stop.message.is_empty() {
            v.logs.error = tail(&stop.message);
        }
    }
    if crlf {
        v.logs.apply = format!(
            "(the patch's CRLF line endings were normalised before applying)\n{}",
            v.logs.apply
        );
    }
    v.timings
        .insert("total".into(), total.elapsed().as_secs_f64());
    v
}

async fn grade_in_container<S: Sandbox>(
    sandbox: &S,
    input: GradeInput<'_>,
    opts: &GradeOptions,
    v: &mut Verdict,
) -> Result<(), Stop> {
    let record = input.record;
    let image = input
        .image_override
        .or(record.image())
        .ok_or_else(|| Stop::error(Reason::ImageMissing, "the record names no image"))?;
    let image_id = sandbox.image_id(image).await?.ok_or_else(|| {
        Stop::from(SandboxError::ImageMissing {
            image: image.to_owned(),
        })
    })?;
    v.image_id = Some(image_id.clone());
    let mut labels: BTreeMap<String, String> = opts.labels.iter().cloned().collect();
    labels.insert(INSTANCE_LABEL.into(), record.instance_id().into());
    let spec = |image: &str| ContainerSpec {
        image: image.to_owned(),
        workdir: None,
        labels: labels.clone(),
        limits: opts.limits.clone(),
    };

    let run_image = if opts.prepared_cache {
        let t = Instant::now();
        let tag = ensure_prepared(sandbox, record, &image_id, &spec(image), opts).await?;
        v.timings
            .insert("prepare".into(), t.elapsed().as_secs_f64());
        tag
    } else {
        image.to_owned()
    };
    v.prepared_image = opts.prepared_cache.then(|| run_image.clone());

    let t = Instant::now();
    let container = sandbox.start(&spec(&run_image)).await?;
    v.timings.insert("start".into(), t.elapsed().as_secs_f64());
    let mut run = Run {
        sandbox,
        container: &container,
        record,
        opts,
        workdir: record.workdir().to_owned(),
        private: format!("/tmp/beyondswe-{}", random_token()),
        nonce: random_token(),
        v,
    };
    let result = run.steps(input).await;
    let result = match result {
        // A command that ran out of memory looks like a kill; say so.
        Err(stop)
            if stop.verdict != Outcome::Error
                && sandbox.state(&container).await.is_ok_and(|s| s.oom_killed) =>
        {
            Err(Stop::unresolved(Reason::OutOfMemory, stop.message))
        }
        other => other,
    };
    let t = Instant::now();
    if let Err(e) = sandbox.remove(&container).await {
        v.logs
            .error
            .push_str(&format!("\nremoving the container failed: {e}"));
    }
    v.timings.insert("remove".into(), t.elapsed().as_secs_f64());
    result
}

/// The prepared image's tag for this instance: made once, reused while its inputs are the same.
async fn ensure_prepared<S: Sandbox>(
    sandbox: &S,
    record: &Record,
    image_id: &str,
    spec: &ContainerSpec,
    opts: &GradeOptions,
) -> Result<String, Stop> {
    let mut key = Sha256::new();
    for part in [
        PREPARE_VERSION,
        image_id,
        record.base_commit().unwrap_or_default(),
        record.workdir(),
        adapters::STRIP_HISTORY_SH,
    ] {
        key.update(part.as_bytes());
        key.update([0]);
    }
    for cmd in record.pre_commands() {
        key.update(cmd.as_bytes());
        key.update([0]);
    }
    let key = hex::encode(key.finalize());
    // Content-addressed: instances with the same image, base and setup share one prepared image.
    let tag = format!("beyondswe-prepared:{}", &key[..24]);
    if sandbox.image_id(&tag).await?.is_some() {
        return Ok(tag);
    }
    let container = sandbox.start(spec).await?;
    let prepared = prepare(sandbox, &container, record, opts).await;
    let committed = match prepared {
        Ok(()) => {
            let labels = [
                ("beyondswe.prepared".to_owned(), "1".to_owned()),
                (INSTANCE_LABEL.to_owned(), record.instance_id().to_owned()),
            ]
            .into_iter()
            .collect();
            sandbox
                .commit(&container, &tag, &labels)
                .await
                .map(|_| ())
                .map_err(Stop::from)
        }
        Err(stop) => Err(stop),
    };
    let _ = sandbox.remove(&container).await;
    committed.map(|()| tag)
}

/// Checks out the base, runs the setup commands, strips newer history and proves it, and records
/// what is untracked at that point (it belongs to the image, not to any submission).
async fn prepare<S: Sandbox>(
    sandbox: &S,
    container: &S::Handle,
    record: &Record,
    opts: &GradeOptions,
) -> Result<(), Stop> {
    let workdir = record.workdir();
    let mut tar = TarBuilder::new();
    let state = STATE_DIR.trim_start_matches('/');
    tar.dir("var", 0o755)
        .and_then(|t| t.dir("var/lib", 0o755))
        .and_then(|t| t.dir(state, 0o700))
        .map_err(Stop::internal)?;
    tar.file(
        &format!("{state}/strip_history.sh"),
        adapters::STRIP_HISTORY_SH.as_bytes(),
        0o755,
    )
    .map_err(Stop::internal)?;
    sandbox
        .upload(container, "/", tar.finish().map_err(Stop::internal)?)
        .await?;

    let w = shell_quote(workdir);
    let exec = |script: String, limit: Duration| {
        ExecSpec::sh(script).timeout(limit + Duration::from_secs(60))
    };
    let is_repo = sandbox
        .exec(
            container,
            &exec(
                format!("mkdir -p {w} && cd {w} && git rev-parse --git-dir"),
                Duration::from_secs(60),
            ),
        )
        .await?;
    let mut log = String::new();
    let mut failed: Vec<String> = Vec::new();
    if !is_repo.success() {
        if record.family() != Family::Doc2Repo {
            return Err(Stop::error(
                Reason::PrepareFailed,
                format!("{workdir} is not a git repository in the image"),
            ));
        }
    } else {
        if let Some(base) = record.base_commit() {
            let out = sandbox
                .exec(
                    container,
                    &exec(
                        format!(
                            "cd {w} && git -c advice.detachedHead=false checkout -q -f {}",
                            shell_quote(base)
                        ),
                        Duration::from_secs(300),
                    ),
                )
                .await?;
            if !out.success() {
                return Err(Stop::error(
                    Reason::PrepareFailed,
                    format!("git checkout {base} failed:\n{}", out.combined()),
                ));
            }
        }
        let secs = opts.setup_timeout.as_secs().max(1);
        for cmd in record.pre_commands() {
            let script = format!(
                "cd {w} && if command -v timeout >/dev/null; then timeout -k 10 {secs} sh -c {c}; else sh -c {c}; fi",
                c = shell_quote(&cmd)
            );
            let out = sandbox
                .exec(container, &exec(script, opts.setup_timeout))
                .await?;
            log.push_str(&format!("$ {cmd}\n{}\n", out.combined()));
            if !out.success() {
                failed.push(cmd);
            }
        }
        let strip = sandbox
            .exec(
                container,
                &exec(
                    format!("sh {STATE_DIR}/strip_history.sh {w} && cd {w} && git ls-files --others -z > {STATE_DIR}/baseline-untracked"),
                    Duration::from_secs(1800),
                ),
            )
            .await?;
        log.push_str(&strip.combined());
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
    }
    let facts = serde_json::json!({"log": tail(&log), "pre_commands_failed": failed});
    let mut tar = TarBuilder::new();
    tar.file("prepare.json", facts.to_string().as_bytes(), 0o644)
        .map_err(Stop::internal)?;
    sandbox
        .upload(container, STATE_DIR, tar.finish().map_err(Stop::internal)?)
        .await?;
    Ok(())
}

struct Run<'a, S: Sandbox> {
    sandbox: &'a S,
    container: &'a S::Handle,
    record: &'a Record,
    opts: &'a GradeOptions,
    workdir: String,
    /// A directory only the grader knows: adapters, patches, results.
    private: String,
    /// Names this run's result files; the recorder writes it into them.
    nonce: String,
    v: &'a mut Verdict,
}

impl<S: Sandbox> Run<'_, S> {
    async fn sh(
        &self,
        script: String,
        limit: Duration,
        env: &[(&str, String)],
    ) -> Result<ExecOutput, Stop> {
        let mut spec = ExecSpec::sh(script)
            .in_dir(self.workdir.clone())
            .timeout(limit + Duration::from_secs(60));
        for (k, val) in env {
            spec = spec.env(*k, val.clone());
        }
        Ok(self.sandbox.exec(self.container, &spec).await?)
    }

    fn timed(&mut self, phase: &str, since: Instant) {
        *self.v.timings.entry(phase.into()).or_default() += since.elapsed().as_secs_f64();
    }

    fn file(&self, name: &str) -> String {
        format!("{}/{name}", self.private)
    }

    /// Puts the prepare step's facts where the final download picks them up (no extra round trip).
    fn copy_prepare_facts(&self) -> String {
        format!(
            "cp {STATE_DIR}/prepare.json {} 2>/dev/null",
            shell_quote(&self.file("out/"))
        )
    }

    async fn steps(&mut self, input: GradeInput<'_>) -> Result<(), Stop> {
        let t = Instant::now();
        if !self.opts.prepared_cache {
            prepare(self.sandbox, self.container, self.record, self.opts).await?;
            self.timed("prepare", t);
        }
        let t = Instant::now();
        self.upload_bundle(input).await?;
        self.timed("apply", t);
        if self.record.family() == Family::Doc2Repo {
            self.doc2repo(input).await
        } else {
            self.issue(input).await
        }
    }

    /// One upload with everything the run needs in its private directory.
    async fn upload_bundle(&mut self, input: GradeInput<'_>) -> Result<(), Stop> {
        let dir = self.private.trim_start_matches("/tmp/").to_owned();
        let mut tar = TarBuilder::new();
        // Directories before their files, so the engine creates them with these modes.
        tar.dir(&dir, 0o700)
            .and_then(|t| t.dir(&format!("{dir}/out"), 0o700))
            .map_err(Stop::internal)?;
        if self.record.family() == Family::Doc2Repo {
            tar.dir(&format!("{dir}/suite"), 0o755)
                .map_err(Stop::internal)?;
        }
        let mut add = |name: &str, data: &[u8]| {
            tar.file(&format!("{dir}/{name}"), data, 0o644)
                .map(|_| ())
                .map_err(Stop::internal)
        };
        add("beyondswe_verify.py", adapters::VERIFY_PY.as_bytes())?;
        add(
            "beyondswe_pytest_runner.py",
            adapters::PYTEST_RUNNER_PY.as_bytes(),
        )?;
        if let Submission::Patch(p) = input.submission {
            add("submission.patch", p)?;
        }
        if let Some(p) = self.record.f2p_patch() {
            add("f2p.patch", p.as_bytes())?;
        }
        if let Some(s) = self.record.f2p_script() {
            add("test_fail_to_pass.py", s.as_bytes())?;
        }
        let mut suite_ini = false;
        if self.record.family() == Family::Doc2Repo {
            let zip = input.test_suite.ok_or_else(|| {
                Stop::error(
                    Reason::TestSuiteMissing,
                    "no test suite zip for this Doc2Repo instance (pass --test-suites)",
                )
            })?;
            let suite = suite_tree(zip).map_err(|e| Stop::error(Reason::TestSuiteMissing, e))?;
            suite_ini = suite.entries.iter().any(|e| {
                ["pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"].contains(&e.path.as_str())
            });
            for e in &suite.entries {
                if let EntryKind::File { data, .. } = &e.kind {
                    add(&format!("suite/{}", e.path), data)?;
                }
            }
        }
        let rootdir = if self.record.family() == Family::Doc2Repo {
            self.file("suite")
        } else {
            self.workdir.clone()
        };
        let mut args = vec![
            "-o".to_owned(),
            "addopts=".into(),
            "-p".into(),
            "no:cacheprovider".into(),
            format!("--rootdir={rootdir}"),
            format!("--confcutdir={rootdir}"),
            "-q".into(),
            format!(
                "--junitxml={}",
                self.file(&format!("out/junit-{}.xml", self.nonce))
            ),
        ];
        if self.record.family() == Family::Doc2Repo && !suite_ini {
            args.extend(["-c".into(), "/dev/null".into()]);
        }
        let ids = if self.record.family() == Family::Doc2Repo {
            vec![self.file("suite")]
        } else {
            let f2p = self.record.fail_to_pass();
            let mut ids = f2p.clone();
            ids.extend(
                self.record
                    .pass_to_pass()
                    .into_iter()
                    .filter(|i| !f2p.contains(i)),
            );
            ids
        };
        let config = serde_json::json!({
            "args": args,
            "ids": ids,
            "results_path": self.file(&format!("out/results-{}.json", self.nonce)),
            "nonce": self.nonce,
            "prepend_cwd": true,
        });
        add("runner.json", config.to_string().as_bytes())?;
        let bundle = tar.finish().map_err(Stop::internal)?;
        self.sandbox.upload(self.container, "/tmp", bundle).await?;
        Ok(())
    }

    /// Applies a patch without ever leaving it half-applied: `git apply` (atomic), the same with
    /// whitespace tolerance, then GNU patch only after a dry run says every hunk applies. One exec.
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
        let q = shell_quote(&self.file("submission.patch"));
        let script = format!(
            "if git apply --verbose --whitespace=nowarn {q}; then echo '::applied git apply'; \
             elif git apply --verbose --whitespace=nowarn --ignore-space-change --ignore-whitespace {q}; then echo '::applied git apply --ignore-whitespace'; \
             elif patch --batch --forward -p1 --fuzz=3 --dry-run -i {q} && patch --batch --forward -p1 --fuzz=3 -i {q}; then echo '::applied patch --fuzz=3'; \
             else exit 1; fi"
        );
        let out = self.sh(script, self.opts.setup_timeout, &[]).await?;
        self.v.logs.apply = tail(&out.combined());
        match out
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("::applied "))
        {
            Some(how) if out.success() => {
                self.v.flags.applied_with = Some(how.to_owned());
                Ok(())
            }
            _ => Err(Stop::unresolved(
                Reason::PatchFailed,
                "the patch does not apply (every strategy failed; see logs.apply)",
            )),
        }
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
        let base = self.record.base_commit().unwrap_or("HEAD");
        let mut cmd = format!(
            "{copy}; {FIND_PYTHON}; \"$PY\" {verify} restore --workdir {w} --base {b} --baseline-untracked {STATE_DIR}/baseline-untracked",
            verify = shell_quote(&self.file("beyondswe_verify.py")),
            copy = self.copy_prepare_facts(),
            w = shell_quote(&self.workdir),
            b = shell_quote(base),
        );
        for k in keep {
            cmd.push_str(&format!(" --keep {}", shell_quote(&k)));
        }
        for p in f2p_paths {
            cmd.push_str(&format!(" --f2p-path {}", shell_quote(&p)));
        }
        if self.record.f2p_patch().is_some() {
            cmd.push_str(&format!(
                " --f2p-patch {}",
                shell_quote(&self.file("f2p.patch"))
            ));
        }
        if self.record.f2p_script().is_some() {
            cmd.push_str(&format!(
                " --f2p-script {}",
                shell_quote(&self.file("test_fail_to_pass.py"))
            ));
        }
        let out = self.sh(cmd, self.opts.setup_timeout, &[]).await?;
        if !out.success() {
            return Err(Stop::error(
                Reason::SandboxFailed,
                format!("restore step failed:\n{}", out.combined()),
            ));
        }
        #[derive(serde::Deserialize)]
        struct Restored {
            #[serde(flatten)]
            flags: Flags,
            f2p_patch_error: Option<String>,
        }
        let restored: Restored = serde_json::from_str(out.stdout.trim()).map_err(|e| {
            Stop::error(
                Reason::SandboxFailed,
                format!("restore output unreadable: {e}: {}", out.stdout),
            )
        })?;
        let f = &mut self.v.flags;
        f.tests_restored = restored.flags.tests_restored;
        f.files_removed = restored.flags.files_removed;
        f.config_reverted = restored.flags.config_reverted;
        f.kept_for_gold = restored.flags.kept_for_gold;
        if let Some(err) = restored.f2p_patch_error {
            return Err(Stop::error(
                Reason::F2pPatchFailed,
                format!("the dataset's f2p patch does not apply:\n{err}"),
            ));
        }
        self.timed("restore", t);

        let f2p = self.record.fail_to_pass();
        let p2p = self.record.pass_to_pass();
        if f2p.is_empty() && p2p.is_empty() {
            return Err(Stop::error(
                Reason::NoTestIds,
                "the instance has no FAIL_TO_PASS or PASS_TO_PASS ids",
            ));
        }
        let Some((results, junit_cases)) =
            self.run_tests(&self.workdir.clone(), Vec::new()).await?
        else {
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
        env: Vec<(&str, String)>,
    ) -> Result<Option<(RunnerResults, Vec<junit::JunitCase>)>, Stop> {
        let t = Instant::now();
        let secs = self.opts.test_timeout.as_secs().max(1);
        // The shell that starts the runner kills every other process of the container (but init
        // and the idle main process) the moment the runner exits: nothing the tests started can
        // outlive them and rewrite the results.
        let script = format!(
            "cd {cwd} || exit 97; {FIND_PYTHON}; \
             KEEP=$(cut -d' ' -f1 /proc/1/task/1/children 2>/dev/null); [ -n \"$KEEP\" ] || KEEP=1; \
             oom() {{ sed -n 's/^oom_kill //p' /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null | head -n 1; }}; \
             before=$(oom); \
             if command -v timeout >/dev/null; then timeout -k 10 {secs} \"$PY\" {runner} {config}; else \"$PY\" {runner} {config}; fi; code=$?; \
             for p in /proc/[0-9]*; do pid=${{p#/proc/}}; case \"$pid\" in 1|$$|\"$KEEP\") ;; *) kill -9 \"$pid\" 2>/dev/null;; esac; done; \
             echo \"::oom ${{before:-?}} $(oom)\" >&2; exit $code",
            cwd = shell_quote(cwd),
            runner = shell_quote(&self.file("beyondswe_pytest_runner.py")),
            config = shell_quote(&self.file("runner.json")),
        );
        let mut env_all: Vec<(&str, String)> = vec![
            ("PYTHONNOUSERSITE", "1".into()),
            ("PYTHONDONTWRITEBYTECODE", "1".into()),
            ("PYTEST_ADDOPTS", String::new()),
            ("PYTEST_PLUGINS", String::new()),
        ];
        env_all.extend(env);
        let out = self.sh(script, self.opts.test_timeout, &env_all).await?;
        self.timed("tests", t);
        let t = Instant::now();
        self.v.logs.test_output = tail(&out.combined());
        if out.combined().contains("<pytest>true</pytest>") {
            self.v.flags.suspicious.push(
                "the test output contains the official success marker `<pytest>true</pytest>`"
                    .into(),
            );
        }
        let files = self.download_out().await?;
        self.timed("collect", t);
        let results_bytes = files.get(&format!("results-{}.json", self.nonce));
        let junit_bytes = files.get(&format!("junit-{}.xml", self.nonce));
        if let Some(b) = files.get("prepare.json")
            && let Ok(facts) = serde_json::from_slice::<serde_json::Value>(b)
        {
            self.v.logs.prepare = facts["log"].as_str().unwrap_or_default().to_owned();
            self.v.flags.pre_commands_failed = facts["pre_commands_failed"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|c| c.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
        }
        if let Some(b) = files.get("install.log") {
            self.v.logs.install = tail(&String::from_utf8_lossy(b));
        }
        if let Some(b) = results_bytes {
            self.v.logs.results = tail(&String::from_utf8_lossy(b));
        }
        let results = match results_bytes.map(|b| RunnerResults::parse(b, &self.nonce)) {
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
        // The kernel's OOM-kill counter of the container, before and after the run (the last such
        // line: the shell prints it after every test process is gone).
        let oom = out
            .stderr
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("::oom "))
            .and_then(|l| {
                let mut it = l.split_whitespace().map(|n| n.parse::<u64>().ok());
                Some((it.next()??, it.next()??))
            })
            .is_some_and(|(before, after)| after > before)
            || self
                .sandbox
                .state(self.container)
                .await
                .is_ok_and(|s| s.oom_killed);
        // GNU timeout exits 124, or 137 when it had to SIGKILL; a 137 without the time spent is a
        // kill by something else (the OOM killer).
        let ran_long = out.duration + Duration::from_secs(1) >= self.opts.test_timeout;
        let timed_out =
            out.timed_out || out.exit_code == Some(124) || (out.exit_code == Some(137) && ran_long);
        if timed_out || oom {
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
            Some(b) => junit::parse(b).unwrap_or_else(|e| {
                self.v.logs.error = format!("JUnit report unreadable: {e}");
                Vec::new()
            }),
            None => Vec::new(),
        };
        Ok(Some((results, junit_cases)))
    }

    /// The files of the private `out/` directory, in one download.
    async fn download_out(&self) -> Result<BTreeMap<String, Vec<u8>>, Stop> {
        match self
            .sandbox
            .download(self.container, &self.file("out"), MAX_DOWNLOAD)
            .await?
        {
            Some(tar_bytes) => files_in_tar(&tar_bytes).map_err(Stop::internal),
            None => Ok(BTreeMap::new()),
        }
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
        let t = Instant::now();
        match input.submission {
            Submission::Patch(p) => self.apply_patch(p).await?,
            Submission::Tree(tree) => {
                let bytes = tree.to_tar().map_err(Stop::internal)?;
                self.sandbox
                    .upload(self.container, &self.workdir, bytes)
                    .await?;
                self.v.flags.applied_with = Some("repository tree".into());
            }
        }
        self.timed("apply", t);

        // Start-up hooks in the submission would run inside the test process: removed. Plugins
        // installed before the submission may load; the submission's may not. Then an offline
        // editable install (failure is recorded; the source then goes on the path).
        let t = Instant::now();
        let secs = self.opts.setup_timeout.as_secs().max(1);
        let script = format!(
            "{copy}; {FIND_PYTHON}; \
             find . -path ./.git -prune -o -type f \\( -name sitecustomize.py -o -name usercustomize.py -o -name '*.pth' \\) -print -exec rm -f {{}} + | sed 's/^/::removed /'; \
             echo \"::plugins $(\"$PY\" -c {list})\"; \
             if command -v timeout >/dev/null; then T=\"timeout -k 10 {secs}\"; else T=; fi; \
             $T \"$PY\" -m pip install --no-deps --no-build-isolation --no-index --disable-pip-version-check -q -e . > {log} 2>&1; \
             echo \"::install $?\"",
            list = shell_quote(LIST_PLUGINS),
            copy = self.copy_prepare_facts(),
            log = shell_quote(&self.file("out/install.log")),
        );
        let out = self
            .sh(
                script,
                self.opts.setup_timeout + Duration::from_secs(60),
                &[("PIP_NO_INPUT", "1".into())],
            )
            .await?;
        let mut plugins: Vec<String> = Vec::new();
        let mut installed = false;
        for line in out.stdout.lines() {
            if let Some(p) = line.strip_prefix("::removed ") {
                self.v
                    .flags
                    .files_removed
                    .push(p.trim_start_matches("./").to_owned());
            } else if let Some(p) = line.strip_prefix("::plugins ") {
                plugins = serde_json::from_str(p.trim()).unwrap_or_default();
            } else if let Some(code) = line.strip_prefix("::install ") {
                installed = code.trim() == "0";
            }
        }
        let mut env: Vec<(&str, String)> = vec![
            ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1".into()),
            ("BEYONDSWE_PLUGINS", plugins.join(",")),
        ];
        if !installed {
            self.v.flags.install_failed = true;
            env.push(("PYTHONPATH", format!("{w}:{w}/src", w = self.workdir)));
        }
        self.timed("restore", t);

        let suite_dir = self.file("suite");
        let Some((results, junit_cases)) = self.run_tests(&suite_dir, env).await? else {
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
