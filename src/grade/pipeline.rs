//! Grading one submission, the host's side: refuse what needs no container (an empty patch, a
//! patch that is not a diff or touches `.git`, a tree for an issue task); make the prepared
//! image once per instance; start a fresh container from it; upload the spec and the
//! submission; run the verifier once; map its one JSON result onto the verdict.
//!
//! The prepared image is the instance image after the prepare step (base checked out, setup
//! commands run, newer history stripped and proven gone, the image's own files recorded, the
//! verifier installed in a root-only state directory), committed as `beyondswe-prepared:<key>`,
//! keyed by the instance image's id, the base, the setup commands and the adapter files, so
//! repeated grading pays only for the submission. Every step is bounded in time, and every
//! failure ends in a verdict: the agent's failures are `unresolved` with a reason, the
//! infrastructure's are `error`. Nothing the code under test prints decides anything: the
//! verifier decides (`adapters/beyondswe_verifier/verify.py`), and its result comes back on its own stdout, which
//! it moves out of every child's reach first.

use super::result::VerifierResult;
use super::verdict::{Outcome, Reason, Verdict};
use crate::adapters::{self, STATE_DIR, shell_quote};
use crate::patch;
use crate::record::{Family, Record};
use crate::restore_rules;

use crate::sandbox::{
    CheckedOut, Checkout, ContainerSpec, ExecSpec, INSTANCE_LABEL, Limits, PREPARED_FROM_LABEL,
    PREPARED_LABEL, Sandbox, SandboxError, TarBuilder, check_out,
};
use crate::submission::{EntryKind, Submission, TreeLimits, read_tree};
use crate::verifier_spec::{DEFAULT_SETUP_TIMEOUT, GoldCheck, VerifierSpec, instance_config};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// Bumped when the prepare step changes, so stale prepared images are not reused.
const PREPARE_VERSION: &str = "5";
/// The setup step script, installed with the verifier in the state directory.
const SETUP_STEP: &str = "/var/lib/beyondswe/setup_step.sh";

/// How to grade.
#[derive(Debug, Clone)]
pub struct GradeOptions {
    /// Memory, CPU, process and disk limits of each grading container.
    pub limits: Limits,
    /// Bound on the test command.
    pub test_timeout: Duration,
    /// Bound on each setup command and on `pip install -e .`.
    pub setup_timeout: Duration,
    /// Labels put on every container (run id, process).
    pub labels: Vec<(String, String)>,
    /// Reuse (and create) committed prepared images; off: prepare in every container.
    pub prepared_cache: bool,
    /// Run the tests for an empty submission too (calibration: which tests pass with no fix);
    /// off, an empty patch is `unresolved` (`empty_patch`) without a container.
    pub test_empty_patch: bool,
    /// The submissions are the dataset's own (gold or empty patches). They are graded as any
    /// submission is, canary groups included (calibrate finds a group gold contradicts); the
    /// flag only keeps their verdicts apart in the resume keys.
    pub trusted_submissions: bool,
    /// Evidence (static, or seen in the tested process) makes the verdict `forgery_suspected`;
    /// off (the default), only proof changes a verdict.
    pub strict: bool,
    /// Plant canary groups (the default). Off only to measure what they cost (`benches/
    /// canaries.rs`): without them a verdict rests on the tested process alone. No command
    /// turns them off.
    pub canary_groups: bool,
}

impl Default for GradeOptions {
    fn default() -> Self {
        GradeOptions {
            limits: Limits::default(),
            test_timeout: Duration::from_secs(crate::DEFAULT_TIMEOUT_SECS),
            setup_timeout: DEFAULT_SETUP_TIMEOUT,
            labels: Vec::new(),
            prepared_cache: true,
            test_empty_patch: false,
            trusted_submissions: false,
            strict: false,
            canary_groups: true,
        }
    }
}

/// One instance and what to grade for it.
#[derive(Debug, Clone, Copy)]
pub struct GradeInput<'a> {
    /// The instance's dataset record.
    pub record: &'a Record,
    /// The patch or Doc2Repo tree to grade.
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

    /// Ends the verdict with this stop: a Doc2Repo score a failed step leaves stands unless the
    /// stop is an error.
    fn apply_to(self, v: &mut Verdict) {
        v.verdict = self.verdict;
        v.reason = self.reason;
        if v.family != Family::Doc2Repo || self.verdict == Outcome::Error {
            v.score = 0.0;
        }
        if !self.message.is_empty() {
            v.logs.error = tail(&self.message);
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
        let hint = e.hint().map(|h| format!("\nhint: {h}")).unwrap_or_default();
        Stop::error(reason, format!("{e}{hint}"))
    }
}

const MAX_LOG: usize = 20_000;

fn tail(s: &str) -> String {
    crate::text::tail_marked(s, MAX_LOG)
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

/// What the host decides of a submission before any container exists.
#[derive(Debug)]
pub enum HostChecked {
    /// The whole grading: the submission could not be read, is empty (and empty patches are
    /// not tested), does not parse, touches `.git`, or is a tree for an issue task.
    Decided(Verdict),
    /// The verifier must run: the verdict to fill in (with the covered paths the patch touches
    /// and its signs of forging) and the submission to grade.
    Verify(Checked),
}

/// A submission that passed the host's checks, as it is to be graded.
#[derive(Debug)]
pub struct Checked {
    /// The verdict the verifier's result is to complete.
    pub verdict: Verdict,
    /// The submission, its patch's line ends put back when every one was made CRLF in transit.
    pub submission: Submission,
    /// Whether the line ends were put back ([`note_crlf`] says so in the verdict).
    pub crlf: bool,
}

/// Says in the verdict's apply log that the host put back the patch's line ends.
pub fn note_crlf(crlf: bool, v: &mut Verdict) {
    if crlf {
        v.logs.apply = format!(
            "(the patch's CRLF line endings were normalised before applying)\n{}",
            v.logs.apply
        );
    }
}

/// The host's checks of a submission, the same wherever its verifier then runs (here, or in a
/// Harbor task's separate verifier).
pub fn host_checks(record: &Record, submission: &Submission, opts: &GradeOptions) -> HostChecked {
    let mut verdict = Verdict::new(record.instance_id(), record.family());
    // A patch whose every line end was turned into CRLF in transit is put back first.
    let (submission, crlf) = match submission {
        Submission::Patch(p) => {
            let (fixed, changed) = patch::normalize_transport(p);
            (Submission::Patch(fixed), changed)
        }
        Submission::Unreadable(why) => {
            verdict.set(Outcome::Unresolved, Reason::PatchFailed, 0.0);
            verdict.logs.apply = format!("the submission could not be read: {why}");
            return HostChecked::Decided(verdict);
        }
        Submission::Tree(_) => (submission.clone(), false),
    };
    if submission.is_empty_patch() && !opts.test_empty_patch {
        verdict.set(Outcome::Unresolved, Reason::EmptyPatch, 0.0);
        return HostChecked::Decided(verdict);
    }
    if let Err(stop) = check_submission(record, &submission, &mut verdict) {
        stop.apply_to(&mut verdict);
        note_crlf(crlf, &mut verdict);
        return HostChecked::Decided(verdict);
    }
    HostChecked::Verify(Checked {
        verdict,
        submission,
        crlf,
    })
}

/// Grades one submission. Never fails: problems become the verdict's `error` or `unresolved`.
pub async fn grade<S: Sandbox>(sandbox: &S, input: GradeInput<'_>, opts: &GradeOptions) -> Verdict {
    let total = Instant::now();
    let Checked {
        verdict: mut v,
        submission,
        crlf,
    } = match host_checks(input.record, input.submission, opts) {
        HostChecked::Decided(v) => return v,
        HostChecked::Verify(checked) => checked,
    };
    let input = GradeInput {
        submission: &submission,
        ..input
    };
    if let Err(stop) = grade_in_container(sandbox, input, opts, &mut v).await {
        stop.apply_to(&mut v);
    }
    note_crlf(crlf, &mut v);
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
    let spec = |image: &str| container_spec(record, opts, image);

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
    let check = gold_check(sandbox, input, &spec(&run_image), opts).await;
    if opts.canary_groups {
        v.timings
            .insert("gold_check".into(), t.elapsed().as_secs_f64());
    }
    let result = run_once(sandbox, input, &spec(&run_image), opts, v, &check, None)
        .await
        .map(drop);
    // The verifier says when its groups rest on the check; the host says why there is none.
    if let (Some(plan), Err(why)) = (v.canary_plan.as_mut(), &check)
        && plan.gold_check.is_none()
    {
        plan.gold_check = Some(why.clone());
    }
    result
}

/// The gold check of `record` (see [`GoldCheck`]), for a grading made elsewhere (a Harbor task's
/// verifier): its instance image prepared here as for a local grading, then the check read from
/// the user's cache or run. `Err` says why there is none.
pub async fn gold_check_for<S: Sandbox>(
    sandbox: &S,
    record: &Record,
    opts: &GradeOptions,
) -> Result<GoldCheck, String> {
    let image = record
        .image()
        .ok_or_else(|| "no gold check: the record names no image".to_owned())?;
    let no_check = |e: SandboxError| format!("no gold check: {e}");
    let image_id = sandbox
        .image_id(image)
        .await
        .map_err(no_check)?
        .ok_or_else(|| format!("no gold check: the image {image} is not on this engine"))?;
    let spec = |image: &str| container_spec(record, opts, image);
    let tag = ensure_prepared(sandbox, record, &image_id, &spec(image), opts)
        .await
        .map_err(|stop| {
            format!(
                "no gold check: preparing the image failed: {}",
                stop.message
            )
        })?;
    let submission = Submission::Patch(Vec::new());
    let input = GradeInput {
        record,
        submission: &submission,
        test_suite: None,
        image_override: None,
    };
    gold_check(sandbox, input, &spec(&tag), opts).await
}

/// One verifier run in a fresh container from `spec`'s image; the container is removed after.
/// `check_run`: this run is the gold check, with its seed; what it found is returned.
async fn run_once<S: Sandbox>(
    sandbox: &S,
    input: GradeInput<'_>,
    spec: &ContainerSpec,
    opts: &GradeOptions,
    v: &mut Verdict,
    check: &Result<GoldCheck, String>,
    check_run: Option<String>,
) -> Result<Option<GoldCheck>, Stop> {
    let record = input.record;
    let t = Instant::now();
    let container = sandbox.start(spec).await?;
    v.timings.insert("start".into(), t.elapsed().as_secs_f64());
    let mut run = Run {
        sandbox,
        container: &container,
        record,
        opts,
        workdir: record.workdir().to_owned(),
        private: format!("/tmp/beyondswe-{}", random_token()),
        v,
        check: check.as_ref().ok(),
        check_run,
        check_found: None,
    };
    let result = run.steps(input).await;
    let found = run.check_found.take();
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
    result.map(|()| found)
}

/// Bumped when what the gold check finds changes, so stale checks are not reused.
const GOLD_CHECK_VERSION: &str = "3";

/// The gold check of this instance (see [`GoldCheck`]): read from the user's cache, or run
/// once (one container from the prepared image, the gold patch as the submission, every value
/// of every checked site run) and cached there, keyed by everything it depends on. `Err` says
/// why there is none: no gold patch, a Doc2Repo suite, or a check that failed (then the groups
/// are built on any site, as without a check, and the failure is not retried in this process).
async fn gold_check<S: Sandbox>(
    sandbox: &S,
    input: GradeInput<'_>,
    spec: &ContainerSpec,
    opts: &GradeOptions,
) -> Result<GoldCheck, String> {
    let record = input.record;
    if !opts.canary_groups {
        return Err("no canary groups".into());
    }
    if let Some(why) = no_gold_check(record) {
        return Err(why.into());
    }
    let gold = record.gold_patch().unwrap_or_default();
    let image_id = sandbox
        .image_id(&spec.image)
        .await
        .map_err(|e| format!("no gold check: {e}"))?
        .unwrap_or_default();
    let mut key = Sha256::new();
    let ids = [record.fail_to_pass(), record.pass_to_pass()];
    for part in [
        GOLD_CHECK_VERSION,
        &image_id,
        gold,
        record.f2p_patch().unwrap_or_default(),
        record.f2p_script().unwrap_or_default(),
        record.workdir(),
    ]
    .into_iter()
    .chain(adapters::VERIFIER_MODULES.map(|(_, text)| text))
    .chain(ids.iter().flatten().map(String::as_str))
    {
        key.update(part.as_bytes());
        key.update([0]);
    }
    let key = hex::encode(key.finalize());
    let lock = check_lock(&key);
    let mut known = lock.lock().await;
    if let Some(found) = known.as_ref() {
        return found.clone();
    }
    let path = crate::files::user_cache_home()
        .join("beyondswe")
        .join("gold-checks")
        .join(format!("{}.json", &key[..32]));
    if let Some(found) = crate::files::read_own_text(&path, 64 << 20)
        .ok()
        .and_then(|text| serde_json::from_str::<GoldCheck>(&text).ok())
    {
        *known = Some(Ok(found.clone()));
        return Ok(found);
    }
    let gold_submission = Submission::Patch(gold.as_bytes().to_vec());
    let gold_input = GradeInput {
        submission: &gold_submission,
        ..input
    };
    let mut scratch = Verdict::new(record.instance_id(), record.family());
    let ran = run_once(
        sandbox,
        gold_input,
        spec,
        opts,
        &mut scratch,
        &Err(String::new()),
        Some(random_token()),
    )
    .await;
    let found = match ran {
        Ok(Some(found)) => {
            // A check whose run did not finish is used for this process only.
            let saved = if !found.finished {
                Ok(())
            } else {
                path.parent()
                    .map_or(Ok(()), fs_err::create_dir_all)
                    .and_then(|()| {
                        let data = serde_json::to_vec(&found).map_err(std::io::Error::other)?;
                        crate::files::write_atomic(&path, &data)
                    })
            };
            if let Err(e) = saved {
                tracing::warn!(
                    "the gold check of {} was not cached: {e}",
                    record.instance_id()
                );
            }
            Ok(found)
        }
        Ok(None) => Err(format!(
            "the gold check failed: the verifier reported no check ({:?}: {})",
            scratch.reason,
            scratch.logs.error.lines().next().unwrap_or_default()
        )),
        Err(stop) => Err(format!(
            "the gold check failed: {}",
            stop.message.lines().next().unwrap_or_default()
        )),
    };
    *known = Some(found.clone());
    found
}

/// Why `record` can have no gold check, if it can have none: a Doc2Repo suite, or no gold patch.
pub fn no_gold_check(record: &Record) -> Option<&'static str> {
    if record.family() == Family::Doc2Repo {
        Some(
            "no gold check: a Doc2Repo suite's groups change only literals compared with one call's result",
        )
    } else if record.gold_patch().is_none_or(|p| p.trim().is_empty()) {
        Some("no gold check: the record has no gold patch")
    } else {
        None
    }
}

/// One gold check of `key` at a time in this process, and its outcome once known.
fn check_lock(key: &str) -> KeyedSlot<Option<Result<GoldCheck, String>>> {
    static LOCKS: KeyedLocks<Option<Result<GoldCheck, String>>> = std::sync::OnceLock::new();
    keyed_lock(&LOCKS, key)
}

/// A grading container of `image` for `record`: the run's labels and the instance's, the limits.
fn container_spec(record: &Record, opts: &GradeOptions, image: &str) -> ContainerSpec {
    let mut labels: BTreeMap<String, String> = opts.labels.iter().cloned().collect();
    labels.insert(INSTANCE_LABEL.into(), record.instance_id().into());
    ContainerSpec {
        image: image.to_owned(),
        workdir: None,
        labels,
        limits: opts.limits.clone(),
    }
}

/// The lock that makes one preparation of `tag` at a time in this process; it holds whether this
/// process has marked the image used already (once is enough for pruning's order).
fn prepare_lock(tag: &str) -> KeyedSlot<bool> {
    static LOCKS: KeyedLocks<bool> = std::sync::OnceLock::new();
    keyed_lock(&LOCKS, tag)
}

/// One async lock per key, each guarding a value of its own, for the life of the process.
type KeyedSlot<T> = std::sync::Arc<tokio::sync::Mutex<T>>;
type KeyedLocks<T> =
    std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<String, KeyedSlot<T>>>>;

/// The lock of `key` among `locks`, made (holding `T::default()`) on first use.
fn keyed_lock<T: Default>(locks: &'static KeyedLocks<T>, key: &str) -> KeyedSlot<T> {
    let mut locks = locks
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    locks.entry(key.to_owned()).or_default().clone()
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
    // Every file the prepared image holds: a changed verifier module prepares a new image.
    let installed = adapters::VERIFIER_MODULES.map(|(_, text)| text);
    for part in [
        PREPARE_VERSION,
        image_id,
        record.base_commit().unwrap_or_default(),
        record.workdir(),
        adapters::STRIP_HISTORY_SH,
        adapters::SETUP_STEP_SH,
        adapters::RESTORE_RULES_JSON,
    ]
    .into_iter()
    .chain(installed)
    {
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
    // One preparation per image at a time in this process: a second grading of the same
    // instance (another attempt, or an instance sharing its image and setup) waits for the
    // first's image instead of preparing its own and leaving one of the two dangling.
    let lock = prepare_lock(&tag);
    let mut touched = lock.lock().await;
    if sandbox.image_id(&tag).await?.is_some() {
        // Used now: the least recently used prepared images are the first pruned. Once per
        // process, not at every grading.
        if !*touched {
            sandbox.touch_image(&tag).await?;
            *touched = true;
        }
        return Ok(tag);
    }
    let container = sandbox.start(spec).await?;
    let prepared = prepare(sandbox, &container, record, opts).await;
    let committed = match prepared {
        Ok(()) => {
            let labels = [
                (PREPARED_LABEL.to_owned(), "1".to_owned()),
                (PREPARED_FROM_LABEL.to_owned(), image_id.to_owned()),
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
    // A commit tags the image: it counts as used now.
    *touched = committed.is_ok();
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
    install_adapters(sandbox, container).await?;
    let setup = record.pre_commands();
    let checked = check_out(
        sandbox,
        container,
        &Checkout {
            workdir: record.workdir(),
            base: record.base_commit(),
            setup: &setup,
            setup_timeout: opts.setup_timeout,
            env_chain: Some((SETUP_STEP, adapters::SETUP_ENV)),
        },
    )
    .await?;
    let (log, failed) = match checked {
        CheckedOut::Done { log, failed } => {
            let strip_log = strip_history(sandbox, container, record.workdir()).await?;
            (format!("{log}{strip_log}"), failed)
        }
        // A Doc2Repo workdir may be empty: the submission is the whole repository.
        CheckedOut::NotARepository if record.family() == Family::Doc2Repo => {
            (String::new(), Vec::new())
        }
        CheckedOut::NotARepository => {
            return Err(Stop::error(
                Reason::PrepareFailed,
                format!("{} is not a git repository in the image", record.workdir()),
            ));
        }
        CheckedOut::CheckoutFailed(out) => {
            return Err(Stop::error(
                Reason::PrepareFailed,
                format!(
                    "git checkout {} failed:\n{out}",
                    record.base_commit().unwrap_or_default()
                ),
            ));
        }
    };
    record_baseline(sandbox, container, record).await?;
    let facts = serde_json::json!({"log": tail(&log), "pre_commands_failed": failed});
    let mut tar = TarBuilder::new();
    tar.file("setup.json", facts.to_string().as_bytes(), 0o600)
        .map_err(Stop::internal)?;
    sandbox
        .upload(container, STATE_DIR, tar.finish().map_err(Stop::internal)?)
        .await?;
    Ok(())
}

/// The verifier, its runner, the rules and the history strip, into the root-only state
/// directory of the image being prepared.
async fn install_adapters<S: Sandbox>(sandbox: &S, container: &S::Handle) -> Result<(), Stop> {
    let mut tar = TarBuilder::new();
    let state = STATE_DIR.trim_start_matches('/');
    tar.dir("var", 0o755)
        .and_then(|t| t.dir("var/lib", 0o755))
        .and_then(|t| t.dir(state, 0o700))
        .and_then(|t| t.dir(&format!("{state}/{}", adapters::PACKAGE), 0o700))
        .map_err(Stop::internal)?;
    let modules = adapters::VERIFIER_MODULES;
    for (name, data) in [
        ("strip_history.sh", adapters::STRIP_HISTORY_SH),
        ("setup_step.sh", adapters::SETUP_STEP_SH),
        (RULES_FILE, adapters::RESTORE_RULES_JSON),
    ]
    .into_iter()
    .chain(modules)
    {
        tar.file(&format!("{state}/{name}"), data.as_bytes(), 0o700)
            .map_err(Stop::internal)?;
    }
    sandbox
        .upload(container, "/", tar.finish().map_err(Stop::internal)?)
        .await?;
    Ok(())
}

/// Strips every commit newer than the base and proves none is left (exit 3: one is); the log.
async fn strip_history<S: Sandbox>(
    sandbox: &S,
    container: &S::Handle,
    workdir: &str,
) -> Result<String, Stop> {
    let limit = Duration::from_secs(crate::DEFAULT_TIMEOUT_SECS);
    let script = format!("sh {STATE_DIR}/strip_history.sh {}", shell_quote(workdir));
    let strip = sandbox
        .exec(
            container,
            &ExecSpec::sh(script).timeout(limit + Duration::from_secs(60)),
        )
        .await?;
    match strip.exit_code {
        Some(0) => Ok(strip.combined()),
        Some(3) => Err(Stop::error(Reason::HistoryLeak, strip.combined())),
        _ => Err(Stop::error(
            Reason::PrepareFailed,
            format!("history strip failed:\n{}", strip.combined()),
        )),
    }
}

/// What belongs to the image (untracked files and their hashes, the pytest plugins, the
/// interpreter's clean sys.path), recorded before any submission is in the container.
async fn record_baseline<S: Sandbox>(
    sandbox: &S,
    container: &S::Handle,
    record: &Record,
) -> Result<(), Stop> {
    let base = record
        .base_commit()
        .map(|b| format!(" --base {}", shell_quote(b)))
        .unwrap_or_default();
    // In the environment the setup commands left: the prepare step records it for the tests,
    // and hands the workdir to the user the tests of this image's gradings run as (this image
    // is the grader's own: no agent works in it).
    let script = format!(
        "{source}; {FIND_PYTHON}; cd / && \"$PY\" -I {STATE_DIR}/beyondswe_verify.py prepare --workdir {w}{base} --state-dir {STATE_DIR} --own-workdir yes",
        source = adapters::source_setup_env(),
        w = shell_quote(record.workdir())
    );
    let facts = sandbox
        .exec(
            container,
            &ExecSpec::sh(script).timeout(Duration::from_secs(660)),
        )
        .await?;
    if !facts.success() {
        return Err(Stop::error(
            Reason::PrepareFailed,
            format!(
                "recording the image's baseline failed:\n{}",
                facts.combined()
            ),
        ));
    }
    Ok(())
}

struct Run<'a, S: Sandbox> {
    sandbox: &'a S,
    container: &'a S::Handle,
    record: &'a Record,
    opts: &'a GradeOptions,
    workdir: String,
    /// A root-only directory only the grader knows: the verifier, its spec, the patches, the
    /// Doc2Repo suite, the result.
    private: String,
    v: &'a mut Verdict,
    /// The gold check the groups rest on, given to the verifier.
    check: Option<&'a GoldCheck>,
    /// This run is the gold check: its seed, and what it found.
    check_run: Option<String>,
    check_found: Option<GoldCheck>,
}

/// Names of the adapter files inside the private directory (the verifier finds its siblings).
const RULES_FILE: &str = "beyondswe_restore_rules.json";
/// The verifier's result is small; anything bigger was not written by it.
const MAX_RESULT: usize = 32 * 1024 * 1024;

impl<S: Sandbox> Run<'_, S> {
    fn timed(&mut self, phase: &str, since: Instant) {
        *self.v.timings.entry(phase.into()).or_default() += since.elapsed().as_secs_f64();
    }

    fn file(&self, name: &str) -> String {
        format!("{}/{name}", self.private)
    }

    /// Upload, one verifier run, one result: every in-container step is `adapters/beyondswe_verifier/verify.py`'s,
    /// the same code Harbor's `tests/test.sh` runs.
    async fn steps(&mut self, input: GradeInput<'_>) -> Result<(), Stop> {
        let t = Instant::now();
        if !self.opts.prepared_cache {
            prepare(self.sandbox, self.container, self.record, self.opts).await?;
            self.timed("prepare", t);
        }
        let t = Instant::now();
        self.upload_bundle(input).await?;
        if let Submission::Tree(tree) = input.submission {
            // Streamed from the tree's spool: memory stays flat whatever the tree's size.
            let tree = tree.clone();
            self.sandbox
                .upload_stream(
                    self.container,
                    &self.workdir,
                    Box::new(move |out| tree.write_tar(out).map(drop)),
                )
                .await?;
            self.v.flags.applied_with = Some("repository tree".into());
        }
        self.timed("upload", t);

        let t = Instant::now();
        let limit = self.opts.setup_timeout + self.opts.test_timeout + Duration::from_secs(120);
        // The verifier, its runner and rules are the prepared image's (in the root-only state
        // directory, the same version: the prepared image is keyed by the adapter files), and
        // the verifier is imported from the bytecode the prepare step compiled.
        let script = format!(
            "{FIND_PYTHON}; cd / && exec \"$PY\" -I -S -c {launch} grade --spec {spec}",
            launch = shell_quote(&format!(
                "import sys; sys.path.insert(0, '{STATE_DIR}'); import beyondswe_verify as v; \
                 sys.exit(v.main(['{verify_file}'] + sys.argv[1:]))",
                verify_file = adapters::VERIFY_FILE,
            )),
            spec = shell_quote(&self.file("spec.json")),
        );
        // The result comes back on the verifier's stdout: it moves fd 1 out of every child's
        // reach before anything of the submission runs (see `cmd_grade`).
        let mut exec = ExecSpec::sh(script).in_dir("/").timeout(limit);
        exec.max_output = MAX_RESULT;
        let out = self.sandbox.exec(self.container, &exec).await?;
        self.timed("verifier", t);
        if out.timed_out {
            return Err(Stop::unresolved(
                Reason::Timeout,
                format!("the verifier did not finish within {} s", limit.as_secs()),
            ));
        }
        if out.stdout.trim().is_empty() {
            return Err(Stop::error(
                Reason::VerifierFailed,
                format!(
                    "the verifier wrote no result (exit {:?}):\n{}",
                    out.exit_code, out.stderr
                ),
            ));
        }
        let mut parsed = VerifierResult::parse(out.stdout.as_bytes())
            .map_err(|e| Stop::error(Reason::VerifierFailed, format!("{e}\n{}", out.stderr)))?;
        self.check_found = parsed.canary_check.take();
        parsed.apply_to(self.v, tail);
        Ok(())
    }

    /// One upload with everything the verifier needs, into its root-only directory.
    async fn upload_bundle(&mut self, input: GradeInput<'_>) -> Result<(), Stop> {
        let dir = self.private.trim_start_matches("/tmp/").to_owned();
        let mut tar = TarBuilder::new();
        tar.dir(&dir, 0o700).map_err(Stop::internal)?;
        let mut add = |name: &str, data: &[u8]| {
            tar.file(&format!("{dir}/{name}"), data, 0o600)
                .map(|_| ())
                .map_err(Stop::internal)
        };
        let record = self.record;
        let mut spec = VerifierSpec {
            instance: instance_config(record, self.opts.test_timeout),
            setup_timeout_sec: Some(self.opts.setup_timeout.as_secs().max(1)),
            // Gold and empty gradings plant the groups too, as every grading does: calibrate
            // then finds a group that contradicts itself under gold.
            canaries: self.opts.canary_groups,
            strict: self.opts.strict,
            max_file_bytes: self.opts.limits.disk_bytes(),
            state_dir: STATE_DIR.to_owned(),
            private_paths: vec![self.private.clone(), STATE_DIR.to_owned()],
            result: Some("-".to_owned()),
            canary_check: self.check.cloned(),
            canary_check_run: self.check_run.clone(),
            ..Default::default()
        };
        if let Submission::Patch(p) = input.submission
            && !input.submission.is_empty_patch()
        {
            add("submission.patch", p)?;
            spec.patch = Some(self.file("submission.patch"));
        }
        // The gold patch's own constructs are allowed to the submission (static evidence).
        if let Some(p) = record.gold_patch().filter(|p| !p.trim().is_empty()) {
            add("gold.patch", p.as_bytes())?;
            spec.gold_patch = Some(self.file("gold.patch"));
        }
        if let Some(p) = record.f2p_patch() {
            add("f2p.patch", p.as_bytes())?;
            spec.f2p_patch = Some(self.file("f2p.patch"));
        }
        if let Some(s) = record.f2p_script() {
            add("test_fail_to_pass.py", s.as_bytes())?;
            spec.f2p_script = Some(self.file("test_fail_to_pass.py"));
        }
        if record.family() == Family::Doc2Repo {
            let zip = input.test_suite.ok_or_else(|| {
                Stop::error(
                    Reason::TestSuiteMissing,
                    "no test suite zip for this Doc2Repo instance (pass --test-suites)",
                )
            })?;
            check_suite(zip).map_err(|e| Stop::error(Reason::TestSuiteMissing, e))?;
            let data = fs_err::read(zip)
                .map_err(|e| Stop::error(Reason::TestSuiteMissing, e.to_string()))?;
            add("suite.zip", &data)?;
            spec.suite_zip = Some(self.file("suite.zip"));
        }
        let spec = serde_json::to_vec(&spec).map_err(Stop::internal)?;
        add("spec.json", &spec)?;
        let bundle = tar.finish().map_err(Stop::internal)?;
        self.sandbox.upload(self.container, "/tmp", bundle).await?;
        Ok(())
    }
}

/// What the host refuses before any container starts: a patch that does not parse or touches
/// `.git` (the verifier refuses that too, as git itself parses the patch), and a tree for an
/// issue task. Notes the covered paths a patch touches and the signs of forging it carries.
fn check_submission(record: &Record, submission: &Submission, v: &mut Verdict) -> Result<(), Stop> {
    match submission {
        // Only with `test_empty_patch`: nothing to apply, the tests run on the base.
        _ if submission.is_empty_patch() => Ok(()),
        Submission::Patch(p) => check_patch(p, v),
        Submission::Tree(_) if record.family() != Family::Doc2Repo => Err(Stop::unresolved(
            Reason::PatchFailed,
            "issue tasks are graded from a patch, not a repository tree",
        )),
        Submission::Tree(_) => Ok(()),
        Submission::Unreadable(why) => Err(Stop::unresolved(Reason::PatchFailed, why.clone())),
    }
}

fn check_patch(patch_bytes: &[u8], v: &mut Verdict) -> Result<(), Stop> {
    let text = String::from_utf8_lossy(patch_bytes);
    let parsed = patch::parse(&text)
        .map_err(|e| Stop::unresolved(Reason::PatchFailed, format!("not a unified diff: {e}")))?;
    let touched = parsed.touched_paths();
    if let Some(p) = touched
        .iter()
        .find(|p| p.split('/').any(|c| c.eq_ignore_ascii_case(".git")))
    {
        return Err(Stop::unresolved(
            Reason::PatchFailed,
            format!("the patch touches `{p}` inside .git"),
        ));
    }
    v.flags.tests_touched = touched
        .into_iter()
        .filter(|p| restore_rules::is_covered(p))
        .collect();
    v.flags.suspicious.extend(forgery_signs(&text));
    Ok(())
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

/// Checks the suite zip on the host: readable, safe paths, at least one file.
fn check_suite(zip: &Path) -> Result<(), String> {
    let tree = read_tree(zip, TreeLimits::default()).map_err(|e| e.to_string())?;
    if !tree
        .entries
        .iter()
        .any(|e| e.path != "realswe_eval_script.py" && matches!(e.kind, EntryKind::File { .. }))
    {
        return Err(format!("{}: the suite has no files", zip.display()));
    }
    Ok(())
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
