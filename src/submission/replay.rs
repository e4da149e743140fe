//! Rebuilding a patch from a transcript: the file edits a Claude Code or Codex transcript shows
//! (`Edit`, `MultiEdit`, `Write`; `apply_patch` envelopes and the older events' per-file changes)
//! replayed on the instance's base commit inside a container, and the repository's own
//! `git diff --binary` of the result returned as the patch.
//!
//! A replay is exact or it is refused. [`plan`] refuses, before any container starts, a
//! transcript with calls it could not read, file changes recorded without their content, a shell
//! command that changed files (the caller says which do), an edit with no recorded outcome, or
//! paths that leave the repository. [`apply`] then makes each edit exactly as the tool defines it
//! (an `Edit`'s old string must occur once unless `replace_all`; envelopes match as Codex matches)
//! and checks, where the tool recorded what the file held before (`originalFile`), that the replay
//! saw the same text. Failed edits are skipped, as they changed nothing. This is the one module of
//! `submission` that runs containers, through the [`Sandbox`] trait only.

use super::agents::{
    ActionKind, EditOp, EditOutcome, FileEdit, Trajectory, TrajectoryShape, apply_chunks,
};
use crate::adapters::shell_quote;
use crate::record::Record;
use crate::sandbox::{
    CheckedOut, Checkout, ContainerSpec, ExecSpec, INSTANCE_LABEL, Limits, Sandbox, SandboxError,
    TarBuilder, check_out,
};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::time::Duration;
use thiserror::Error;

/// Why a replay would not be exact, and where.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("step {step}: {why}")]
pub struct NotExact {
    /// The transcript step, as in [`Action::step`](crate::submission::Action::step).
    pub step: usize,
    /// What the replay could not reproduce there.
    pub why: String,
}

fn not_exact(step: usize, why: impl Into<String>) -> NotExact {
    NotExact {
        step,
        why: why.into(),
    }
}

/// One edit to replay, its paths relative to the repository root.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedEdit {
    /// The transcript step of the edit call.
    pub step: usize,
    /// The tool's name as the agent called it.
    pub tool: String,
    /// The changes, in order, with repository-relative paths (those outside it left out).
    pub ops: Vec<EditOp>,
    /// What the tool said the (single) file held before: checked against the replay.
    pub original: Option<Option<String>>,
}

/// The edits of a transcript, in order, ready to replay.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplayPlan {
    /// The edits to make, in transcript order; failed ones are not among them.
    pub edits: Vec<PlannedEdit>,
    /// Edits left out, and why (failed, outside the repository).
    pub notes: Vec<String>,
}

impl ReplayPlan {
    /// Every repository path the edits read or write, sorted.
    pub fn paths(&self) -> Vec<String> {
        let set: BTreeSet<String> = self
            .edits
            .iter()
            .flat_map(|e| e.ops.iter().flat_map(|o| o.paths()))
            .map(str::to_owned)
            .collect();
        set.into_iter().collect()
    }
}

/// `path` normalised (`.`/`..` resolved); `None` if it climbs above its start.
fn normalize(path: &str) -> Option<Vec<&str>> {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            p => out.push(p),
        }
    }
    Some(out)
}

/// Where a path the agent named is in the repository: `Ok(None)` outside it (a scratch file).
fn relative(
    path: &str,
    base: Option<&str>,
    roots: &[&str],
    step: usize,
) -> Result<Option<String>, NotExact> {
    let absolute = if path.starts_with('/') {
        path.to_owned()
    } else {
        match base {
            Some(b) if b.starts_with('/') => format!("{b}/{path}"),
            // Relative to an unknown directory: the repository root (where the agents start).
            _ => format!("{}/{path}", roots.first().copied().unwrap_or("")),
        }
    };
    let parts = normalize(&absolute)
        .ok_or_else(|| not_exact(step, format!("`{path}` climbs out of the file system root")))?;
    for root in roots {
        let Some(r) = normalize(root).filter(|r| !r.is_empty()) else {
            continue;
        };
        if parts.len() > r.len() && parts[..r.len()] == r[..] {
            let rel = parts[r.len()..].join("/");
            if rel == ".git" || rel.starts_with(".git/") {
                return Err(not_exact(step, format!("`{path}` is inside .git/")));
            }
            return Ok(Some(rel));
        }
    }
    Ok(None)
}

fn relocate(
    op: &EditOp,
    base: Option<&str>,
    roots: &[&str],
    step: usize,
) -> Result<Option<EditOp>, NotExact> {
    let rel = |p: &str| relative(p, base, roots, step);
    let moved = |m: &Option<String>| -> Result<Option<String>, NotExact> {
        match m {
            Some(m) => match rel(m)? {
                Some(r) => Ok(Some(r)),
                None => Err(not_exact(
                    step,
                    format!("moves a file out of the repository, to `{m}`"),
                )),
            },
            None => Ok(None),
        }
    };
    let Some(path) = rel(op.paths()[0])? else {
        return Ok(None);
    };
    Ok(Some(match op {
        EditOp::Replace {
            old,
            new,
            replace_all,
            ..
        } => EditOp::Replace {
            path,
            old: old.clone(),
            new: new.clone(),
            replace_all: *replace_all,
        },
        EditOp::Write { content, .. } => EditOp::Write {
            path,
            content: content.clone(),
        },
        EditOp::Add { content, .. } => EditOp::Add {
            path,
            content: content.clone(),
        },
        EditOp::Delete { .. } => EditOp::Delete { path },
        EditOp::Update {
            move_to, chunks, ..
        } => EditOp::Update {
            path,
            move_to: moved(move_to)?,
            chunks: chunks.clone(),
        },
        EditOp::UnifiedDiff { diff, move_to, .. } => EditOp::UnifiedDiff {
            path,
            diff: diff.clone(),
            move_to: moved(move_to)?,
        },
    }))
}

/// The edits to replay, or why a replay would not be exact. `workdir` is the repository in the
/// instance image; `writes` says why a shell command, by its step and text, changes files
/// (`None`: it does not; [`crate::audit::command_writes_of`] reads the files it runs that the
/// trajectory wrote too).
pub fn plan(
    t: &Trajectory,
    workdir: &str,
    writes: impl Fn(usize, &str) -> Option<String>,
) -> Result<ReplayPlan, NotExact> {
    if t.shape == TrajectoryShape::ClaudeResult {
        return Err(not_exact(
            1,
            "a `--output-format json` result records no tool calls, so no edit to replay",
        ));
    }
    if let Some(u) = t.unread.first() {
        return Err(not_exact(
            u.step,
            format!("a `{}` call could not be read: {}", u.tool, u.why),
        ));
    }
    if let Some(o) = t.opaque_edits.first() {
        return Err(not_exact(o.step, format!("{}: {}", o.tool, o.what)));
    }
    let roots: Vec<&str> = std::iter::once(workdir).chain(t.cwd.as_deref()).collect();
    let by_action: BTreeMap<usize, usize> = t
        .edits
        .iter()
        .enumerate()
        .map(|(i, e)| (e.action, i))
        .collect();
    let mut out = ReplayPlan::default();
    for (i, a) in t.actions.iter().enumerate() {
        if a.kind == ActionKind::Command
            && let Some(why) = writes(a.step, &a.text)
        {
            return Err(not_exact(
                a.step,
                format!(
                    "a shell command changed files ({why}), which no replay of the edits can reproduce"
                ),
            ));
        }
        if let Some(&e) = by_action.get(&i) {
            plan_edit(&t.edits[e], &roots, &mut out)?;
        }
    }
    if out.edits.is_empty() {
        return Err(not_exact(
            t.actions.last().map_or(1, |a| a.step),
            "the transcript shows no file edit in the repository: nothing to replay",
        ));
    }
    Ok(out)
}

/// One edit of the transcript into the plan: a failed one is skipped with a note, one without a
/// result or changed by the user makes the replay inexact, paths outside the repository are
/// left out with a note.
fn plan_edit(edit: &FileEdit, roots: &[&str], out: &mut ReplayPlan) -> Result<(), NotExact> {
    match edit.outcome {
        EditOutcome::Failed => {
            out.notes.push(format!(
                "step {}: the {} failed, so it changed nothing; skipped",
                edit.step, edit.tool
            ));
            return Ok(());
        }
        EditOutcome::Unknown => {
            return Err(not_exact(
                edit.step,
                format!("no result recorded for the {} (interrupted?)", edit.tool),
            ));
        }
        EditOutcome::Applied => {}
    }
    if edit.user_modified {
        return Err(not_exact(
            edit.step,
            "the user changed the edit before it was made",
        ));
    }
    let mut ops = Vec::new();
    let mut outside = Vec::new();
    for op in &edit.ops {
        match relocate(op, edit.cwd.as_deref(), roots, edit.step)? {
            Some(o) => ops.push(o),
            None => outside.push(op.paths()[0].to_owned()),
        }
    }
    if !outside.is_empty() {
        out.notes.push(format!(
            "step {}: {} outside the repository left out",
            edit.step,
            outside.join(", ")
        ));
    }
    if !ops.is_empty() {
        out.edits.push(PlannedEdit {
            step: edit.step,
            tool: edit.tool.clone(),
            ops,
            original: edit.original.clone(),
        });
    }
    Ok(())
}

/// A file as the replay sees it: its bytes (`None`: absent).
pub type Files = BTreeMap<String, Option<Vec<u8>>>;

fn text<'a>(files: &'a Files, path: &str, step: usize) -> Result<&'a str, NotExact> {
    let bytes = files
        .get(path)
        .and_then(Option::as_deref)
        .ok_or_else(|| not_exact(step, format!("`{path}` does not exist")))?;
    std::str::from_utf8(bytes).map_err(|_| not_exact(step, format!("`{path}` is not UTF-8 text")))
}

/// Applies one unified diff of one file (hunks only, as Codex records them) at exactly the lines
/// its headers name.
pub fn apply_unified(old: &str, diff: &str) -> Result<String, String> {
    // Lines with their line break, so a last line without one stays without.
    let lines: Vec<&str> = old.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut pos = 0usize;
    let mut hunks = 0;
    let mut diff_lines = diff.lines().peekable();
    while let Some(header) = diff_lines.next() {
        let Some(rest) = header.strip_prefix("@@ -") else {
            if header.starts_with("--- ") || header.starts_with("+++ ") || header.is_empty() {
                continue;
            }
            return Err(format!("expected a hunk header, found `{header}`"));
        };
        hunks += 1;
        let start: usize = rest
            .split([',', ' '])
            .next()
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("bad hunk header `{header}`"))?;
        // `-0,0` (an empty file) starts before the first line.
        let begin = start.saturating_sub(1);
        if begin < pos || begin > lines.len() {
            return Err(format!("hunk `{header}` is out of order or past the end"));
        }
        out.extend(lines[pos..begin].iter().copied());
        pos = begin;
        while let Some(l) = diff_lines.peek() {
            if l.starts_with("@@ ") {
                break;
            }
            let l = diff_lines.next().unwrap_or_default();
            let no_eol = diff_lines
                .peek()
                .is_some_and(|n| n.starts_with("\\ No newline"));
            if no_eol {
                diff_lines.next();
            }
            let (tag, body) = l.split_at(l.len().min(1));
            let want = |s: &str| {
                if no_eol {
                    s.to_owned()
                } else {
                    format!("{s}\n")
                }
            };
            match tag {
                " " | "-" | "" => {
                    let have = lines
                        .get(pos)
                        .ok_or_else(|| format!("hunk `{header}` runs past the end of the file"))?;
                    if *have != want(body) {
                        return Err(format!(
                            "hunk `{header}`: line {} is `{}`, the diff expects `{body}`",
                            pos + 1,
                            have.trim_end_matches('\n')
                        ));
                    }
                    if tag != "-" {
                        out.push_str(have);
                    }
                    pos += 1;
                }
                "+" => out.push_str(&want(body)),
                _ => {
                    return Err(format!(
                        "a diff line must start with ` `, `-` or `+`: `{l}`"
                    ));
                }
            }
        }
    }
    if hunks == 0 {
        return Err("the diff has no hunk".into());
    }
    out.extend(lines[pos..].iter().copied());
    Ok(out)
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

fn apply_op(files: &mut Files, op: &EditOp, step: usize) -> Result<(), NotExact> {
    let set = |files: &mut Files, p: &str, s: String| {
        files.insert(p.to_owned(), Some(s.into_bytes()));
    };
    match op {
        EditOp::Replace {
            path,
            old,
            new,
            replace_all,
        } => {
            let exists = files.get(path).is_some_and(Option::is_some);
            if old.is_empty() {
                // An empty old string creates the file (Claude Code refuses it on a file with
                // content).
                if exists && !text(files, path, step)?.is_empty() {
                    return Err(not_exact(
                        step,
                        format!("an Edit with an empty old string on `{path}`, which has content"),
                    ));
                }
                set(files, path, new.clone());
                return Ok(());
            }
            let current = text(files, path, step)?;
            let n = count(current, old);
            let next = match (n, replace_all) {
                (0, _) => {
                    return Err(not_exact(
                        step,
                        format!("the old string is not in `{path}` as the replay has it"),
                    ));
                }
                (_, true) => current.replace(old.as_str(), new),
                (1, false) => current.replacen(old.as_str(), new, 1),
                (n, false) => {
                    return Err(not_exact(
                        step,
                        format!("the old string occurs {n} times in `{path}`"),
                    ));
                }
            };
            set(files, path, next);
        }
        EditOp::Write { path, content } | EditOp::Add { path, content } => {
            set(files, path, content.clone());
        }
        EditOp::Delete { path } => {
            if !files.get(path).is_some_and(Option::is_some) {
                return Err(not_exact(
                    step,
                    format!("deletes `{path}`, which does not exist"),
                ));
            }
            files.insert(path.clone(), None);
        }
        EditOp::Update {
            path,
            move_to,
            chunks,
        } => {
            let next = apply_chunks(text(files, path, step)?, chunks)
                .map_err(|e| not_exact(step, format!("`{path}`: {e}")))?;
            finish_update(files, path, move_to.as_deref(), next);
        }
        EditOp::UnifiedDiff {
            path,
            diff,
            move_to,
        } => {
            let next = apply_unified(text(files, path, step)?, diff)
                .map_err(|e| not_exact(step, format!("`{path}`: {e}")))?;
            finish_update(files, path, move_to.as_deref(), next);
        }
    }
    Ok(())
}

fn finish_update(files: &mut Files, path: &str, move_to: Option<&str>, next: String) {
    match move_to {
        Some(dest) if dest != path => {
            files.insert(path.to_owned(), None);
            files.insert(dest.to_owned(), Some(next.into_bytes()));
        }
        _ => {
            files.insert(path.to_owned(), Some(next.into_bytes()));
        }
    }
}

/// Makes every planned edit on `files` (which must hold every path of the plan, present or
/// absent), checking each against what its tool said the file held before.
pub fn apply(files: &mut Files, plan: &ReplayPlan) -> Result<(), NotExact> {
    for e in &plan.edits {
        if let Some(original) = &e.original
            && let [op] = e.ops.as_slice()
        {
            let path = op.paths()[0];
            let have = files.get(path).cloned().flatten();
            let same = match (original, &have) {
                (None, None) => true,
                (Some(o), Some(h)) => o.as_bytes() == h.as_slice(),
                _ => false,
            };
            if !same {
                return Err(not_exact(
                    e.step,
                    format!(
                        "`{path}` is not what the {} saw before its edit: something the replay cannot see changed it",
                        e.tool
                    ),
                ));
            }
        }
        for op in &e.ops {
            apply_op(files, op, e.step)?;
        }
    }
    Ok(())
}

/// How to run a replay container.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Memory, CPU, process and disk limits of the replay container.
    pub limits: Limits,
    /// Labels for the container (run, process), so a sweep finds it.
    pub labels: Vec<(String, String)>,
    /// Bound on each setup command.
    pub setup_timeout: Duration,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            limits: Limits::default(),
            labels: Vec::new(),
            setup_timeout: crate::verifier_spec::DEFAULT_SETUP_TIMEOUT,
        }
    }
}

/// A patch rebuilt from a transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Reconstruction {
    /// `git diff --binary` from the base (after the setup commands) to the replayed files.
    pub patch: Vec<u8>,
    /// The files the patch changes.
    pub files: Vec<String>,
    /// What a person should know: edits left out, setup commands that failed, an empty patch.
    pub notes: Vec<String>,
}

/// Why a replay gave no patch.
#[derive(Debug, Error)]
pub enum ReplayError {
    /// The engine failed: unreachable, the instance's image missing, a container that would not
    /// start.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// On the checked-out files the edits could not be made as the tools made them: an `Edit`'s
    /// old string not found once, a file unlike what the tool saw before its edit, a path that is
    /// a link or a directory in the repository.
    #[error("not exact: {0}")]
    NotExact(#[from] NotExact),
    /// A step in the container failed, or the record names no image.
    #[error("{instance}: {step} failed: {message}")]
    Failed {
        /// The instance being replayed.
        instance: String,
        /// The step: `start`, `prepare`, `checkout`, `read`, `snapshot`, `write` or `diff`.
        step: &'static str,
        /// The command's output, or what went wrong.
        message: String,
    },
}

const MAX_FILE: usize = 64 * 1024 * 1024;

fn token() -> String {
    let mut b = [0u8; 8];
    let _ = getrandom::fill(&mut b);
    hex::encode(b)
}

/// The regular file in a downloaded tar: `Ok(None)` when the archive holds something else.
fn file_of_tar(tar_bytes: &[u8]) -> std::io::Result<Option<(Vec<u8>, u32)>> {
    let mut archive = tar::Archive::new(tar_bytes);
    if let Some(entry) = archive.entries()?.next() {
        let mut entry = entry?;
        if !entry.header().entry_type().is_file() {
            return Ok(None);
        }
        let mode = entry.header().mode().unwrap_or(0o644);
        let mut data = Vec::new();
        entry.read_to_end(&mut data)?;
        return Ok(Some((data, mode)));
    }
    Ok(None)
}

/// Replays `plan` on `record`'s base commit in a fresh container and returns the diff.
pub async fn reconstruct<S: Sandbox>(
    sandbox: &S,
    record: &Record,
    plan: &ReplayPlan,
    opts: &ReplayOptions,
) -> Result<Reconstruction, ReplayError> {
    let failed = |step: &'static str, message: String| ReplayError::Failed {
        instance: record.instance_id().to_owned(),
        step,
        message,
    };
    let image = record
        .image()
        .ok_or_else(|| failed("start", "the record names no image".into()))?;
    if sandbox.image_id(image).await?.is_none() {
        return Err(SandboxError::ImageMissing {
            image: image.to_owned(),
        }
        .into());
    }
    let mut labels: BTreeMap<String, String> = opts.labels.iter().cloned().collect();
    labels.insert(INSTANCE_LABEL.into(), record.instance_id().into());
    let container = sandbox
        .start(&ContainerSpec {
            image: image.to_owned(),
            workdir: None,
            labels,
            limits: opts.limits.clone(),
        })
        .await?;
    let result = replay_in(sandbox, &container, record, plan, opts).await;
    let _ = sandbox.remove(&container).await;
    result
}

async fn replay_in<S: Sandbox>(
    sandbox: &S,
    container: &S::Handle,
    record: &Record,
    plan: &ReplayPlan,
    opts: &ReplayOptions,
) -> Result<Reconstruction, ReplayError> {
    let workdir = record.workdir().trim_end_matches('/').to_owned();
    let r = Replay {
        sandbox,
        container,
        record,
        w: shell_quote(&workdir),
        workdir,
        state: format!("/tmp/beyondswe-replay-{}", token()),
    };
    let mut notes = plan.notes.clone();
    notes.extend(r.check_out_base(opts).await?);
    let (before, modes) = r.read_touched(plan).await?;
    let mut files = before.clone();
    apply(&mut files, plan)?;
    r.run(
        "snapshot",
        format!(
            "mkdir -p {} && cd {} && {}",
            r.state,
            r.w,
            snapshot(&r.state, "t0", &before)
        ),
        Duration::from_secs(600),
    )
    .await?;
    r.write_files(&before, &files, &modes).await?;
    let patch = r.diff(&files).await?;
    let changed: Vec<String> = files
        .iter()
        .filter(|(p, c)| before.get(*p) != Some(c))
        .map(|(p, _)| p.clone())
        .collect();
    if patch.is_empty() {
        notes.push("the edits leave every file as it was: the patch is empty".into());
    }
    Ok(Reconstruction {
        patch,
        files: changed,
        notes,
    })
}

/// git as the replay runs it: bytes as they are, paths as they are.
const GIT: &str =
    "git -c core.autocrlf=false -c core.safecrlf=false -c core.quotepath=off --literal-pathspecs";

fn quoted(paths: &[&String]) -> String {
    paths
        .iter()
        .map(|p| shell_quote(p))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A script writing the tree of the touched paths as they are to `state/name`: present ones
/// added (ignored or not), absent ones removed, everything else as at HEAD.
fn snapshot(state: &str, name: &str, files: &Files) -> String {
    let present: Vec<&String> = files
        .iter()
        .filter(|(_, c)| c.is_some())
        .map(|(p, _)| p)
        .collect();
    let absent: Vec<&String> = files
        .iter()
        .filter(|(_, c)| c.is_none())
        .map(|(p, _)| p)
        .collect();
    let mut s = format!("export GIT_INDEX_FILE={state}/{name}.index && {GIT} read-tree HEAD");
    if !present.is_empty() {
        s.push_str(&format!(" && {GIT} add -f -- {}", quoted(&present)));
    }
    if !absent.is_empty() {
        s.push_str(&format!(
            " && {GIT} rm -q --cached --ignore-unmatch -- {}",
            quoted(&absent)
        ));
    }
    s.push_str(&format!(" && {GIT} write-tree > {state}/{name}"));
    s
}

/// One replay's container and the steps it goes through.
struct Replay<'a, S: Sandbox> {
    sandbox: &'a S,
    container: &'a S::Handle,
    record: &'a Record,
    workdir: String,
    /// `workdir`, quoted for the shell.
    w: String,
    /// A scratch directory for the index files, trees and the diff.
    state: String,
}

impl<S: Sandbox> Replay<'_, S> {
    fn failed(&self, step: &'static str, message: String) -> ReplayError {
        ReplayError::Failed {
            instance: self.record.instance_id().to_owned(),
            step,
            message,
        }
    }

    /// Runs `script`; a failure is `step`'s, with the command's output.
    async fn run(
        &self,
        step: &'static str,
        script: String,
        limit: Duration,
    ) -> Result<(), ReplayError> {
        let spec = ExecSpec::sh(script).timeout(limit + Duration::from_secs(60));
        let out = self.sandbox.exec(self.container, &spec).await?;
        if out.success() {
            Ok(())
        } else {
            Err(self.failed(step, out.combined()))
        }
    }

    /// The base checked out and the setup commands run (the agent worked after them); a note
    /// for each setup command that failed.
    async fn check_out_base(&self, opts: &ReplayOptions) -> Result<Vec<String>, ReplayError> {
        let setup = self.record.pre_commands();
        let checked = check_out(
            self.sandbox,
            self.container,
            &Checkout {
                workdir: &self.workdir,
                base: self.record.base_commit(),
                setup: &setup,
                setup_timeout: opts.setup_timeout,
                env_chain: None,
            },
        )
        .await?;
        match checked {
            CheckedOut::NotARepository => Err(self.failed(
                "prepare",
                format!("{} is not a git repository in the image", self.workdir),
            )),
            CheckedOut::CheckoutFailed(out) => Err(self.failed("checkout", out)),
            CheckedOut::Done { failed, .. } => Ok(failed
                .iter()
                .map(|cmd| format!("setup command failed (as it may in grading): {cmd}"))
                .collect()),
        }
    }

    /// The files the plan touches as the base has them (`None`: absent), with their modes; a
    /// link or a directory where a file is edited makes the replay inexact.
    async fn read_touched(
        &self,
        plan: &ReplayPlan,
    ) -> Result<(Files, BTreeMap<String, u32>), ReplayError> {
        let mut files: Files = BTreeMap::new();
        let mut modes: BTreeMap<String, u32> = BTreeMap::new();
        for p in plan.paths() {
            let tar = self
                .sandbox
                .download(self.container, &format!("{}/{p}", self.workdir), MAX_FILE)
                .await?;
            let content = match tar {
                None => None,
                Some(bytes) => {
                    let file =
                        file_of_tar(&bytes).map_err(|e| self.failed("read", e.to_string()))?;
                    let Some((data, mode)) = file else {
                        let step = plan
                            .edits
                            .iter()
                            .find(|e| e.ops.iter().any(|o| o.paths().contains(&p.as_str())))
                            .map_or(1, |e| e.step);
                        return Err(not_exact(
                            step,
                            format!("`{p}` is not a regular file in the repository (a link or a directory)"),
                        )
                        .into());
                    };
                    modes.insert(p.clone(), mode);
                    Some(data)
                }
            };
            files.insert(p, content);
        }
        Ok((files, modes))
    }

    /// The replayed files into the workdir: deleted ones removed, the others written with the
    /// modes they had.
    async fn write_files(
        &self,
        before: &Files,
        files: &Files,
        modes: &BTreeMap<String, u32>,
    ) -> Result<(), ReplayError> {
        let deleted: Vec<&String> = files
            .iter()
            .filter(|(p, c)| c.is_none() && before.get(*p).is_some_and(Option::is_some))
            .map(|(p, _)| p)
            .collect();
        let written: Vec<(&String, &Vec<u8>)> = files
            .iter()
            .filter_map(|(p, c)| c.as_ref().map(|c| (p, c)))
            .collect();
        let mut prep = format!("cd {}", self.w);
        if !deleted.is_empty() {
            prep.push_str(&format!(" && rm -f -- {}", quoted(&deleted)));
        }
        let dirs: BTreeSet<String> = written
            .iter()
            .filter_map(|(p, _)| p.rsplit_once('/').map(|(d, _)| d.to_owned()))
            .collect();
        if !dirs.is_empty() {
            let dirs: Vec<&String> = dirs.iter().collect();
            prep.push_str(&format!(" && mkdir -p -- {}", quoted(&dirs)));
        }
        self.run("write", prep, Duration::from_secs(60)).await?;
        if written.is_empty() {
            return Ok(());
        }
        let mut tar = TarBuilder::new();
        for (p, c) in &written {
            let mode = modes.get(*p).copied().unwrap_or(0o644) & 0o7777;
            tar.file(p, c, mode)
                .map_err(|e| self.failed("write", e.to_string()))?;
        }
        let bytes = tar
            .finish()
            .map_err(|e| self.failed("write", e.to_string()))?;
        self.sandbox
            .upload(self.container, &self.workdir, bytes)
            .await?;
        Ok(())
    }

    /// The diff from the base's snapshot to the replayed files', made by the container's git.
    async fn diff(&self, files: &Files) -> Result<Vec<u8>, ReplayError> {
        let state = &self.state;
        let script = format!(
            "cd {} && {} && {GIT} diff --binary --full-index --no-renames --no-color --no-ext-diff $(cat {state}/t0) $(cat {state}/t1) > {state}/patch.diff",
            self.w,
            snapshot(state, "t1", files)
        );
        self.run("diff", script, Duration::from_secs(600)).await?;
        let tar = self
            .sandbox
            .download(self.container, &format!("{state}/patch.diff"), MAX_FILE)
            .await?
            .ok_or_else(|| self.failed("diff", "no patch.diff was written".into()))?;
        let (patch, _) = file_of_tar(&tar)
            .map_err(|e| self.failed("diff", e.to_string()))?
            .ok_or_else(|| self.failed("diff", "patch.diff is not a file".into()))?;
        Ok(patch)
    }
}

#[cfg(test)]
mod tests {
    use super::super::agents::transcript_from_values;
    use super::*;
    use serde_json::json;

    fn files(entries: &[(&str, Option<&str>)]) -> Files {
        entries
            .iter()
            .map(|(p, c)| (p.to_string(), c.map(|c| c.as_bytes().to_vec())))
            .collect()
    }

    fn edit_line(id: &str, name: &str, input: serde_json::Value) -> serde_json::Value {
        json!({"type": "assistant", "session_id": "s", "message": {"content": [{"type": "tool_use", "id": id, "name": name, "input": input}]}})
    }

    fn ok_line(id: &str) -> serde_json::Value {
        json!({"type": "user", "session_id": "s", "message": {"content": [{"type": "tool_result", "tool_use_id": id, "content": "ok"}]}})
    }

    fn stream(lines: Vec<serde_json::Value>) -> Trajectory {
        let mut all = vec![
            json!({"type": "system", "subtype": "init", "session_id": "s", "cwd": "/w", "model": "m"}),
        ];
        all.extend(lines);
        transcript_from_values(&all, None).unwrap()
    }

    #[test]
    fn claude_edits_replay_exactly_or_not_at_all() {
        let t = stream(vec![
            edit_line(
                "1",
                "Edit",
                json!({"file_path": "/w/a.py", "old_string": "x = 1", "new_string": "x = 2"}),
            ),
            ok_line("1"),
            edit_line(
                "2",
                "MultiEdit",
                json!({"file_path": "/w/a.py", "edits": [{"old_string": "y", "new_string": "z", "replace_all": true}]}),
            ),
            ok_line("2"),
            edit_line(
                "3",
                "Write",
                json!({"file_path": "/tmp/scratch.py", "content": "print(1)"}),
            ),
            ok_line("3"),
            edit_line(
                "4",
                "Write",
                json!({"file_path": "new/b.py", "content": "b\n"}),
            ),
            ok_line("4"),
        ]);
        let p = plan(&t, "/w", |_, _| None).unwrap();
        assert_eq!(p.paths(), ["a.py", "new/b.py"]);
        assert!(p.notes[0].contains("/tmp/scratch.py"), "{:?}", p.notes);
        let mut f = files(&[("a.py", Some("x = 1\ny y\n")), ("new/b.py", None)]);
        apply(&mut f, &p).unwrap();
        assert_eq!(f["a.py"].as_deref(), Some(&b"x = 2\nz z\n"[..]));
        assert_eq!(f["new/b.py"].as_deref(), Some(&b"b\n"[..]));
        // The old string twice without replace_all: refused.
        let mut f = files(&[("a.py", Some("x = 1\nx = 1\n")), ("new/b.py", None)]);
        assert!(apply(&mut f, &p).unwrap_err().why.contains("2 times"));
    }

    #[test]
    fn what_cannot_be_exact_is_refused_before_any_container() {
        let edit = edit_line(
            "1",
            "Edit",
            json!({"file_path": "/w/a.py", "old_string": "a", "new_string": "b"}),
        );
        // No result for the edit.
        let e = plan(&stream(vec![edit.clone()]), "/w", |_, _| None).unwrap_err();
        assert!(e.why.contains("no result"), "{e}");
        // A shell command that changed files.
        let bash = edit_line("2", "Bash", json!({"command": "sed -i 's/a/b/' a.py"}));
        let e = plan(
            &stream(vec![edit.clone(), ok_line("1"), bash]),
            "/w",
            |_, c| c.contains("sed -i").then(|| "edits in place".to_owned()),
        )
        .unwrap_err();
        assert!(e.why.contains("shell command changed files"), "{e}");
        // Into .git/.
        let git = edit_line(
            "3",
            "Write",
            json!({"file_path": "/w/.git/config", "content": ""}),
        );
        let e = plan(&stream(vec![git, ok_line("3")]), "/w", |_, _| None).unwrap_err();
        assert!(e.why.contains(".git"), "{e}");
        // A failed edit is skipped; with nothing else, there is nothing to replay.
        let failed = json!({"type": "user", "session_id": "s", "message": {"content": [{"type": "tool_result", "tool_use_id": "1", "is_error": true, "content": "<tool_use_error>String to replace not found in file.</tool_use_error>"}]}});
        let e = plan(&stream(vec![edit, failed]), "/w", |_, _| None).unwrap_err();
        assert!(e.why.contains("nothing to replay"), "{e}");
    }

    /// A script the agent wrote and then ran is read for its writes: a Python file whose code
    /// writes files, or a shell script that edits in place, makes the replay inexact at the
    /// step that ran it; one that only reads does not, nor does a file the agent never wrote.
    #[test]
    fn a_written_script_that_writes_files_makes_the_replay_inexact() {
        let edit = edit_line(
            "1",
            "Edit",
            json!({"file_path": "/w/a.py", "old_string": "a", "new_string": "b"}),
        );
        for (name, body, run, writes) in [
            (
                "fix.py",
                "open('a.py', 'w').write('c')\n",
                "python fix.py",
                true,
            ),
            ("fix.sh", "sed -i 's/b/c/' a.py\n", "bash fix.sh", true),
            (
                "look.py",
                "print(open('a.py').read())\n",
                "python look.py",
                false,
            ),
            ("never.py", "", "python other.py", false),
        ] {
            let t = stream(vec![
                edit.clone(),
                ok_line("1"),
                edit_line(
                    "2",
                    "Write",
                    json!({"file_path": format!("/tmp/{name}"), "content": body}),
                ),
                ok_line("2"),
                edit_line("3", "Bash", json!({"command": format!("cd /tmp && {run}")})),
                ok_line("3"),
            ]);
            let got = plan(&t, "/w", crate::audit::command_writes_of(&t));
            if writes {
                let e = got.unwrap_err();
                assert!(e.why.contains(name), "{name}: {e}");
                assert_eq!(e.step, 6, "{name}");
            } else {
                assert!(got.is_ok(), "{name}: {:?}", got.err());
            }
        }
    }

    #[test]
    fn the_original_file_must_be_what_the_replay_has() {
        let t = transcript_from_values(
            &[
                json!({"type": "assistant", "sessionId": "s", "uuid": "a", "parentUuid": null, "cwd": "/w", "message": {"model": "m", "content": [{"type": "tool_use", "id": "1", "name": "Edit", "input": {"file_path": "/w/a.py", "old_string": "a", "new_string": "b"}}]}}),
                json!({"type": "user", "sessionId": "s", "uuid": "u", "parentUuid": "a", "message": {"content": [{"type": "tool_result", "tool_use_id": "1", "content": "ok"}]}, "toolUseResult": {"filePath": "/w/a.py", "originalFile": "a c\n", "userModified": false}}),
            ],
            None,
        )
        .unwrap();
        let p = plan(&t, "/w", |_, _| None).unwrap();
        let mut f = files(&[("a.py", Some("a b\n"))]);
        assert!(
            apply(&mut f, &p)
                .unwrap_err()
                .why
                .contains("not what the Edit saw")
        );
        let mut f = files(&[("a.py", Some("a c\n"))]);
        apply(&mut f, &p).unwrap();
        assert_eq!(f["a.py"].as_deref(), Some(&b"b c\n"[..]));
    }

    #[test]
    fn unified_diffs_apply_at_their_lines_only() {
        let old = "one\ntwo\nthree\n";
        assert_eq!(
            apply_unified(old, "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n").unwrap(),
            "one\nTWO\nthree\n"
        );
        assert!(apply_unified(old, "@@ -2,2 +2,2 @@\n one\n-two\n+x\n").is_err());
        assert_eq!(
            apply_unified(
                "a\nb",
                "@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+c\n"
            )
            .unwrap(),
            "a\nc\n"
        );
    }
}
