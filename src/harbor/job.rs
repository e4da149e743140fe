//! Harbor job directories (`config.json`, `result.json`, one directory per trial) and trajectory
//! releases (one JSON line per trial) made from them, both ways.
//!
//! A release line carries every file of its trial byte for byte (`files`: UTF-8 text as `text`,
//! anything else as `base64`; files over the size cap, symbolic links and, on request, logs are
//! listed with their size and SHA-256 and an `omitted` reason) and every directory (`dirs`), and
//! the first line of each job carries the job directory's own files the same way (`job.files`), so
//! `to-harbor` rebuilds the job directory identically. The parsed fields beside them (reward, agent,
//! model, tokens, cost, timings, exception, the ATIF trajectory, the patch, the trial's and job's
//! `result.json`/`config.json`) are for people and tools that read the release without Harbor.

use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a job or trial directory could not be read into a release line, or written back.
#[derive(Debug, Error)]
pub enum JobError {
    /// A file or directory could not be read or written.
    #[error(transparent)]
    Io(#[from] crate::errors::PathError),
    /// A file, directory or release line is not what a job holds (a `result.json` that is not
    /// JSON, a file name that is not UTF-8, a release entry that would leave its trial, a line
    /// without a trial name).
    #[error("{path}: {message}")]
    Bad {
        /// The file or entry.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A trial's patch that cannot be read (over `max_patch_bytes`, not a regular file).
    #[error(transparent)]
    Patch(#[from] crate::patch::PatchFileError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> JobError + '_ {
    move |source| JobError::Io(crate::errors::PathError::new(path.to_owned(), source))
}

/// A job's or trial's own small JSON file (`result.json`, `config.json`, a manifest).
fn read_json(path: &Path) -> Result<Value, JobError> {
    read_json_max(path, crate::files::SMALL_FILE_MAX)
}

/// A JSON file of at most `max` bytes (a trajectory may be large; nothing is read unbounded).
/// Harbor writes these files itself: a link in their place is refused, so a job cannot carry
/// a host file into a release.
fn read_json_max(path: &Path, max: u64) -> Result<Value, JobError> {
    let text = crate::files::read_own_text(path, max).map_err(io(path))?;
    serde_json::from_str(&text).map_err(|e| JobError::Bad {
        path: path.to_owned(),
        message: format!("not valid JSON: {e}"),
    })
}

/// Trial directories under a jobs path (depth ≤ 4): those whose `result.json` names a
/// `task_name` and a `trial_name`, sorted by path.
pub fn trial_dirs(path: &Path) -> Vec<(PathBuf, Value)> {
    let mut trials: Vec<(PathBuf, Value)> = walkdir::WalkDir::new(path)
        .max_depth(4)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.file_name() == "result.json")
        .filter_map(|e| {
            let v = read_json(e.path()).ok()?;
            (v.get("task_name").is_some() && v.get("trial_name").is_some())
                .then(|| (e.path().parent().unwrap_or(Path::new(".")).to_owned(), v))
        })
        .collect();
    trials.sort_by(|a, b| a.0.cmp(&b.0));
    trials
}

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter()
        .try_fold(v, |v, k| v.get(*k))
        .filter(|v| !v.is_null())
}

/// The reward a trial's `result.json` records, the one rule every reader uses: in
/// `verifier_result.rewards`, the value of `reward` (Harbor's key for `verifier/reward.txt`) when
/// it is a number, else the first value that is a number (a verifier's `reward.json` may name its
/// one reward otherwise). `None` when there is no numeric reward, or no `verifier_result`.
pub fn trial_reward(result: &Value) -> Option<f64> {
    reward_number(result).and_then(Value::as_f64)
}

/// Harbor's built-in agents: the reference solution (`oracle`) and doing nothing (`nop`). They
/// run no model, so they leave no trajectory to audit.
pub const BUILT_IN_AGENTS: [&str; 2] = ["oracle", "nop"];

/// The built-in agent a trial ran, when every place `result.json` names the agent
/// (`agent_info.name`, `config.agent.name`) names the same built-in one and no model is named:
/// a trial whose record says anything else is not taken for one (a trajectory cannot be hidden
/// by renaming its agent in one field).
pub fn built_in_agent(result: &Value) -> Option<&str> {
    let names = [
        get(result, &["agent_info", "name"]),
        get(result, &["config", "agent", "name"]),
    ];
    let mut named = names.iter().flatten().map(|v| v.as_str());
    let first = named.next()??;
    let model = get(result, &["config", "agent", "model_name"])
        .or(get(result, &["agent_info", "model_info", "name"]))
        .filter(|m| !m.is_null());
    (BUILT_IN_AGENTS.contains(&first) && named.all(|n| n == Some(first)) && model.is_none())
        .then_some(first)
}

/// [`trial_reward`] as the JSON number it is written as (`1` stays `1`, not `1.0`).
fn reward_number(result: &Value) -> Option<&Value> {
    let rewards = get(result, &["verifier_result", "rewards"])?.as_object()?;
    rewards
        .get("reward")
        .filter(|v| v.is_number())
        .or_else(|| rewards.values().find(|v| v.is_number()))
}

/// The instance id a trial ran, when its task directory is still where the trial's `result.json`
/// says (`task_id.path`, else `config.task.path`): that task's `[metadata].instance_id`. Harbor's
/// `task_name` is the directory name, which is lower case (see [`super::task_dir_name`]).
pub fn trial_instance_id(result: &Value) -> Option<String> {
    let path = get(result, &["task_id", "path"])
        .or(get(result, &["config", "task", "path"]))
        .and_then(Value::as_str)?;
    let text = crate::files::read_text(
        &Path::new(path).join(super::paths::TASK_TOML),
        crate::files::SMALL_FILE_MAX,
    )
    .ok()?;
    super::TaskToml::parse(&text)
        .ok()?
        .meta_str("instance_id")
        .map(str::to_owned)
}

/// The instance a trial ran: its task's `instance_id` ([`trial_instance_id`]), else Harbor's
/// task name; empty when the result names neither.
pub fn trial_instance(result: &Value) -> String {
    trial_instance_id(result).unwrap_or_else(|| {
        result
            .get("task_name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    })
}

/// Where our `tests/test.sh` leaves the submission as it found it (relative to the trial).
pub const SUBMISSION_DIFF: &str = "verifier/submission.diff";

/// The patch of a trial: the verifier's capture ([`SUBMISSION_DIFF`]), else what the trial
/// collected in `artifacts/` (see README): a conventional name first, else the first `.diff`,
/// then `.patch`, anywhere below it. Links are followed only while they stay inside
/// the trial directory: a patch that resolves outside it (a host file) is never read.
pub fn trial_patch(dir: &Path) -> Option<PathBuf> {
    find_trial_patch(dir).found
}

/// What [`trial_patch`] found, and the candidates it refused because they lead out of the trial.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrialPatch {
    /// The patch file the trial's artifacts hold, when there is one.
    pub found: Option<PathBuf>,
    /// `(candidate, where it leads)` for every link out of the trial directory.
    pub refused: Vec<(PathBuf, PathBuf)>,
}

/// Like [`trial_patch`], with the refused candidates named.
pub fn find_trial_patch(dir: &Path) -> TrialPatch {
    let mut out = TrialPatch::default();
    let Ok(root) = dir.canonicalize() else {
        return out;
    };
    // A regular file whose real path is inside the trial directory.
    let inside = |p: &Path, refused: &mut Vec<(PathBuf, PathBuf)>| -> bool {
        let Ok(real) = p.canonicalize() else {
            return false;
        };
        if !real.starts_with(&root) {
            refused.push((p.to_owned(), real));
            return false;
        }
        real.is_file()
    };
    // What the verifier captured before grading (tests/test.sh): what Harbor graded.
    let captured = dir.join(SUBMISSION_DIFF);
    if fs_err::symlink_metadata(&captured).is_ok() && inside(&captured, &mut out.refused) {
        out.found = Some(captured);
        return out;
    }
    let artifacts = dir.join("artifacts");
    for name in ["patch.diff", "model.patch", "patch.patch", "git.diff"] {
        let p = artifacts.join(name);
        if fs_err::symlink_metadata(&p).is_ok() && inside(&p, &mut out.refused) {
            out.found = Some(p);
            return out;
        }
    }
    let mut found: Vec<PathBuf> = walkdir::WalkDir::new(&artifacts)
        .max_depth(3)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| !e.file_type().is_dir())
        .map(walkdir::DirEntry::into_path)
        .filter(|p| p.extension().is_some_and(|x| x == "diff" || x == "patch"))
        .collect();
    found.sort_by_key(|p| (p.extension().is_some_and(|x| x == "patch"), p.clone()));
    out.found = found.into_iter().find(|p| inside(p, &mut out.refused));
    out
}

/// What a release keeps of each file.
#[derive(Debug, Clone, Copy)]
pub struct ReleaseOptions {
    /// Files larger than this are listed (size, SHA-256) but not carried.
    pub max_file_bytes: u64,
    /// Carry logs ([`is_log`]); when false they are listed but not carried.
    pub logs: bool,
    /// The largest trial patch read into the `patch` field (`--max-patch-mb`); over it the
    /// release stops with an error naming the file.
    pub max_patch_bytes: u64,
}

impl Default for ReleaseOptions {
    fn default() -> Self {
        ReleaseOptions {
            max_file_bytes: 64 << 20,
            logs: true,
            max_patch_bytes: crate::patch::DEFAULT_MAX_PATCH_BYTES,
        }
    }
}

/// Whether a path (relative to its trial or job directory) is a log that `--no-logs` leaves out:
/// `*.log` (Harbor's `job.log`, `trial.log`), the verifier's captured output
/// (`verifier/test-stdout.txt`, `verifier/test-stderr.txt`), the agent's text logs
/// (`agent/**/*.txt`: `oracle.txt`, `claude-code.txt`, `command-N/stdout.txt`, …) and
/// `artifacts/logs/`.
pub fn is_log(rel: &str) -> bool {
    rel.ends_with(".log")
        || rel == "verifier/test-stdout.txt"
        || rel == "verifier/test-stderr.txt"
        || (rel.starts_with("agent/") && rel.ends_with(".txt"))
        || rel.starts_with("artifacts/logs/")
}

/// The largest file a release line still hashes when it leaves the file out: reading more would
/// make one trial's release take minutes (a sparse file of 1 TB is read as 1 TB of zeros).
const MAX_HASHED_BYTES: u64 = 256 << 20;

/// Every file and directory below `root` as release entries, leaving out the subtrees in `skip`
/// (trial directories, seen from their job): `(files, dirs)`, sorted by path.
fn tree_entries(
    root: &Path,
    skip: &[PathBuf],
    opts: ReleaseOptions,
) -> Result<(Vec<Value>, Vec<Value>), JobError> {
    use sha2::Digest;
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    let mut walk = walkdir::WalkDir::new(root)
        .min_depth(1)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = walk.next() {
        let entry = entry.map_err(|e| JobError::Bad {
            path: root.to_owned(),
            message: format!("cannot walk the directory: {e}"),
        })?;
        let path = entry.path();
        if skip.iter().any(|s| s == path) {
            if entry.file_type().is_dir() {
                walk.skip_current_dir();
            }
            continue;
        }
        let ft = entry.file_type();
        let rel = match rel_path(root, path)? {
            Ok(rel) => rel,
            Err(lossy) => {
                // A name JSON cannot carry: named (lossily) and left out, with what is below it.
                let mut m = Map::new();
                m.insert("path".into(), json!(lossy));
                m.insert("omitted".into(), json!("name_not_utf8"));
                files.push(Value::Object(m));
                if ft.is_dir() {
                    walk.skip_current_dir();
                }
                continue;
            }
        };
        if ft.is_dir() {
            dirs.push(json!(rel));
            continue;
        }
        let meta = fs_err::symlink_metadata(path).map_err(io(path))?;
        let size = meta.len();
        let omitted = if ft.is_symlink() {
            Some("symlink")
        } else if !ft.is_file() {
            Some("not_a_regular_file")
        } else if size > opts.max_file_bytes {
            Some("too_large")
        } else if !opts.logs && is_log(&rel) {
            Some("log")
        } else {
            None
        };
        let mut m = Map::new();
        m.insert("path".into(), json!(rel));
        match omitted {
            None => {
                let bytes =
                    crate::files::read_input(path, opts.max_file_bytes).map_err(io(path))?;
                put_bytes(&mut m, bytes, "text", "base64");
            }
            Some(reason) => {
                m.insert("size".into(), json!(size));
                // Hashed only up to MAX_HASHED_BYTES: a huge or sparse file (1 TB of holes) is
                // left out by its size, before any read.
                if ft.is_file() && size <= MAX_HASHED_BYTES {
                    let mut h = sha2::Sha256::new();
                    let mut f = crate::files::open_input_io(path).map_err(io(path))?;
                    std::io::copy(&mut f, &mut h).map_err(io(path))?;
                    m.insert("sha256".into(), json!(hex::encode(h.finalize())));
                }
                m.insert("omitted".into(), json!(reason));
            }
        }
        files.push(Value::Object(m));
    }
    Ok((files, dirs))
}

/// `path` relative to `root`, `/`-separated: `Ok(Err(lossy))` when a name on the way is not
/// UTF-8 (a release line cannot name it exactly).
fn rel_path(root: &Path, path: &Path) -> Result<Result<String, String>, JobError> {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let mut parts = Vec::new();
    let mut exact = true;
    for c in rel.components() {
        match c {
            std::path::Component::Normal(p) => match p.to_str() {
                Some(s) => parts.push(s.to_owned()),
                None => {
                    exact = false;
                    parts.push(p.to_string_lossy().into_owned());
                }
            },
            _ => {
                return Err(JobError::Bad {
                    path: path.to_owned(),
                    message: "not below the directory being released".into(),
                });
            }
        }
    }
    let joined = parts.join("/");
    Ok(if exact { Ok(joined) } else { Err(joined) })
}

/// The job directory's own files (everything but its trial directories) as `{files, dirs}`, for
/// the first release line of that job.
pub fn job_files(
    job_dir: &Path,
    trial_dirs: &[PathBuf],
    opts: ReleaseOptions,
) -> Result<Value, JobError> {
    let (files, dirs) = tree_entries(job_dir, trial_dirs, opts)?;
    Ok(json!({"files": files, "dirs": dirs}))
}

/// One release line for a trial directory.
pub fn release_line(
    dir: &Path,
    result: &Value,
    job: Option<&Value>,
    family: Option<&str>,
    opts: ReleaseOptions,
) -> Result<Value, JobError> {
    let mut m = Map::new();
    put_identity(&mut m, result, family);
    put_usage(&mut m, result);
    put_trajectory_and_patch(&mut m, dir, opts.max_patch_bytes)?;
    put_files_beside(&mut m, dir);
    m.insert("trial_result".into(), result.clone());
    let config = dir.join("config.json");
    if config.is_file() {
        m.insert("trial_config".into(), read_json(&config)?);
    }
    if let Some(j) = job {
        m.insert("job".into(), j.clone());
    }
    let (files, dirs) = tree_entries(dir, &[], opts)?;
    m.insert("files".into(), Value::Array(files));
    m.insert("dirs".into(), Value::Array(dirs));
    Ok(Value::Object(m))
}

fn put(m: &mut Map<String, Value>, key: &str, v: Option<&Value>) {
    if let Some(v) = v {
        m.insert(key.to_owned(), v.clone());
    }
}

/// Bytes as `text_key` when they are UTF-8, else base64 as `base64_key` (JSON strings cannot
/// carry raw bytes).
fn put_bytes(m: &mut Map<String, Value>, bytes: Vec<u8>, text_key: &str, base64_key: &str) {
    match String::from_utf8(bytes) {
        Ok(text) => m.insert(text_key.into(), json!(text)),
        Err(e) => m.insert(
            base64_key.into(),
            json!(crate::base64::encode(e.as_bytes())),
        ),
    };
}

/// Which task and trial, the instance and family, the reward, agent and model.
fn put_identity(m: &mut Map<String, Value>, result: &Value, family: Option<&str>) {
    put(m, "task_name", result.get("task_name"));
    if let Some(id) = trial_instance_id(result) {
        m.insert("instance_id".into(), json!(id));
    }
    put(m, "trial_name", result.get("trial_name"));
    if let Some(f) = family {
        m.insert("family".into(), json!(f));
    }
    put(m, "reward", reward_number(result));
    put(m, "agent", get(result, &["agent_info", "name"]));
    put(
        m,
        "model",
        get(result, &["config", "agent", "model_name"])
            .or(get(result, &["agent_info", "model_info", "name"])),
    );
}

/// Tokens and cost, the timings of each phase, and the exception.
fn put_usage(m: &mut Map<String, Value>, result: &Value) {
    for k in [
        "n_input_tokens",
        "n_cache_tokens",
        "n_output_tokens",
        "cost_usd",
    ] {
        put(m, k, get(result, &["agent_result", k]));
    }
    let mut timings = Map::new();
    for phase in [
        "environment_setup",
        "agent_setup",
        "agent_execution",
        "verifier",
    ] {
        put(&mut timings, phase, get(result, &[phase]));
    }
    m.insert("timings".into(), Value::Object(timings));
    m.insert(
        "exception".into(),
        result.get("exception_info").cloned().unwrap_or(Value::Null),
    );
}

/// The ATIF trajectory (null without one) and the trial's patch ([`trial_patch`], read bounded
/// by `max_patch_bytes`), parsed.
fn put_trajectory_and_patch(
    m: &mut Map<String, Value>,
    dir: &Path,
    max_patch_bytes: u64,
) -> Result<(), JobError> {
    let traj = dir.join("agent/trajectory.json");
    m.insert(
        "trajectory".into(),
        if traj.is_file() {
            read_json_max(&traj, crate::record::max_line_bytes() as u64)?
        } else {
            Value::Null
        },
    );
    if let Some(p) = trial_patch(dir) {
        let bytes = crate::patch::read_file(&p, max_patch_bytes)?;
        put_bytes(m, bytes, "patch", "patch_base64");
    }
    Ok(())
}

/// Files beside the models, kept verbatim so a rebuilt job reads the same (never through a
/// link: a job's `exception.txt` linked to a host file would publish it).
fn put_files_beside(m: &mut Map<String, Value>, dir: &Path) {
    if let Ok(t) = crate::files::read_own_text(
        &dir.join("verifier/reward.txt"),
        crate::files::SMALL_FILE_MAX,
    ) {
        m.insert("reward_txt".into(), json!(t));
    }
    if let Ok(t) =
        crate::files::read_own_text(&dir.join("exception.txt"), crate::files::SMALL_FILE_MAX)
    {
        m.insert("exception_txt".into(), json!(t));
    }
    if let Ok(v) = read_json(&dir.join("artifacts/manifest.json")) {
        m.insert("artifacts_manifest".into(), v);
    }
}

/// The job a trial belongs to: `{name, config, result}` from the trial's parent directory.
pub fn job_of(trial_dir: &Path) -> Option<Value> {
    let dir = trial_dir.parent()?;
    let config = read_json(&dir.join("config.json")).ok();
    let result = read_json(&dir.join("result.json")).ok();
    if config.is_none() && result.is_none() {
        return None;
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Some(json!({"name": name, "config": config, "result": result}))
}

fn write(path: &Path, data: &[u8]) -> Result<(), JobError> {
    if let Some(parent) = path.parent() {
        fs_err::create_dir_all(parent).map_err(io(parent))?;
    }
    fs_err::write(path, data).map_err(io(path))
}

fn pretty(v: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).unwrap_or_default();
    out.push(b'\n');
    out
}

/// A release entry's path as a relative path below its directory: plain components only.
fn entry_path(root: &Path, rel: &str) -> Result<PathBuf, JobError> {
    let bad = |why: &str| JobError::Bad {
        path: root.to_owned(),
        message: format!("release entry `{rel}`: {why}"),
    };
    if rel.is_empty() || rel.starts_with('/') || rel.contains('\\') || rel.contains('\0') {
        return Err(bad("not a relative path"));
    }
    let mut out = root.to_owned();
    for part in rel.split('/') {
        if part.is_empty() || part == "." || part == ".." {
            return Err(bad("`.`, `..` or an empty component"));
        }
        out.push(part);
        // Never write through a link that is already there.
        if fs_err::symlink_metadata(&out).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(bad("a symbolic link is in the way"));
        }
    }
    Ok(out)
}

/// Writes a release's `files` and `dirs` below `root`; omitted files are not written.
fn write_entries(root: &Path, files: Option<&Value>, dirs: Option<&Value>) -> Result<(), JobError> {
    let bad = |message: String| JobError::Bad {
        path: root.to_owned(),
        message,
    };
    for d in dirs.and_then(Value::as_array).into_iter().flatten() {
        let rel = d
            .as_str()
            .ok_or_else(|| bad(format!("`dirs` holds {d}, not a path")))?;
        let path = entry_path(root, rel)?;
        fs_err::create_dir_all(&path).map_err(io(&path))?;
    }
    // A path named twice would be written over: the release is refused, not half-kept.
    let mut seen = std::collections::HashSet::new();
    for f in files.and_then(Value::as_array).into_iter().flatten() {
        let rel = f
            .get("path")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("a `files` entry without a path: {f}")))?;
        let path = entry_path(root, rel)?;
        if !seen.insert(path.clone()) {
            return Err(bad(format!(
                "release entry `{rel}` is listed twice; a trial's files are each written once"
            )));
        }
        let bytes = if let Some(t) = f.get("text").and_then(Value::as_str) {
            t.as_bytes().to_vec()
        } else if let Some(b) = f.get("base64").and_then(Value::as_str) {
            crate::base64::decode(b)
                .ok_or_else(|| bad(format!("release entry `{rel}`: `base64` is not base64")))?
        } else if f.get("omitted").is_some() {
            continue;
        } else {
            return Err(bad(format!(
                "release entry `{rel}`: no `text`, `base64` or `omitted`"
            )));
        };
        write(&path, &bytes)?;
    }
    Ok(())
}

/// Writes one release line back as a trial directory (and its job's files) under `out`; returns
/// the trial directory.
pub fn write_trial(out: &Path, line: &Value) -> Result<PathBuf, JobError> {
    let (job_dir, dir) = trial_dir(out, line)?;
    write_job_models(&job_dir, line)?;
    let mut result = trial_result_of(line);
    let trial_name = trial_name_of(line, &result).ok_or_else(|| JobError::Bad {
        path: out.to_owned(),
        message: "a release line without trial_name or task_name".to_owned(),
    })?;
    if let Some(r) = result.as_object_mut()
        && !r.contains_key("trial_name")
    {
        r.insert("trial_name".into(), json!(trial_name));
    }
    // The trial is written in a hidden directory beside it and renamed into place: a line
    // refused half-way (a path listed twice, bad base64) or a run killed leaves no half trial.
    fs_err::create_dir_all(&job_dir).map_err(io(&job_dir))?;
    let staging = tempfile::Builder::new()
        .prefix(".beyondswe-trial-")
        .tempdir_in(&job_dir)
        .map_err(io(&job_dir))?;
    if let Some(files) = line.get("files") {
        // A lossless release: every file as it was.
        if let Some(job_tree) = line.get("job").filter(|j| j.get("files").is_some()) {
            write_entries(&job_dir, job_tree.get("files"), job_tree.get("dirs"))?;
        }
        write_entries(staging.path(), Some(files), line.get("dirs"))?;
    } else {
        write_parsed_fields(out, staging.path(), line, &result)?;
    }
    // A trial written by an earlier run into the same place is replaced whole.
    if fs_err::symlink_metadata(&dir).is_ok() {
        fs_err::remove_dir_all(&dir)
            .or_else(|_| fs_err::remove_file(&dir))
            .map_err(io(&dir))?;
    }
    fs_err::rename(staging.path(), &dir).map_err(io(&dir))?;
    Ok(dir)
}

/// Where [`write_trial`] writes a release line: `(job directory, trial directory)` under `out`.
/// The job's and the trial's names must each be one directory name of their own: a name such as
/// `..` would put the trial's files over its job's.
pub fn trial_dir(out: &Path, line: &Value) -> Result<(PathBuf, PathBuf), JobError> {
    let job_name = line
        .get("job")
        .and_then(|j| j.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("release");
    let result = trial_result_of(line);
    let trial_name = trial_name_of(line, &result).ok_or_else(|| JobError::Bad {
        path: out.to_owned(),
        message: "a release line without trial_name or task_name".to_owned(),
    })?;
    let component = |what: &str, name: &str| -> Result<String, JobError> {
        let safe = crate::files::safe_name(name);
        if safe.is_empty() || name == "." || name == ".." || name.contains(['/', '\\']) {
            return Err(JobError::Bad {
                path: out.to_owned(),
                message: format!(
                    "{what} {:?} is not one directory name (no `/`, `..` or empty names)",
                    crate::text::one_line(name)
                ),
            });
        }
        Ok(safe)
    };
    let job_dir = out.join(component("job name", job_name)?);
    let dir = job_dir.join(component("trial name", &trial_name)?);
    Ok((job_dir, dir))
}

/// The job's `config.json` and `result.json` from the line's `job`, where not written yet.
fn write_job_models(job_dir: &Path, line: &Value) -> Result<(), JobError> {
    let Some(job) = line.get("job") else {
        return Ok(());
    };
    for (key, file) in [("config", "config.json"), ("result", "result.json")] {
        if let Some(v) = job.get(key).filter(|v| !v.is_null())
            && !job_dir.join(file).is_file()
        {
            write(&job_dir.join(file), &pretty(v))?;
        }
    }
    Ok(())
}

/// The trial's `result.json`: the line's `trial_result`, or for a release made elsewhere a
/// minimal one from the flat fields.
fn trial_result_of(line: &Value) -> Value {
    if let Some(r) = line.get("trial_result") {
        return r.clone();
    }
    let mut r = Map::new();
    for k in ["task_name", "trial_name"] {
        put(&mut r, k, line.get(k));
    }
    if let Some(rw) = line.get("reward") {
        r.insert("verifier_result".into(), json!({"rewards": {"reward": rw}}));
    }
    Value::Object(r)
}

/// The trial's name. Releases made elsewhere may not name their trials: Harbor's own pattern,
/// `task[:32]__` plus a short suffix (here a digest of the line, so the name is stable). `None`
/// without a trial or task name.
fn trial_name_of(line: &Value, result: &Value) -> Option<String> {
    if let Some(t) = result
        .get("trial_name")
        .or(line.get("trial_name"))
        .and_then(Value::as_str)
    {
        return Some(t.to_owned());
    }
    let task = line
        .get("task_name")
        .or(line.get("instance_id"))
        .and_then(Value::as_str)?;
    use sha2::Digest;
    let digest = hex::encode(sha2::Sha256::digest(line.to_string().as_bytes()));
    Some(format!(
        "{}__{}",
        task.chars().take(32).collect::<String>(),
        &digest[..7]
    ))
}

/// A release without `files` (made elsewhere): the trial rebuilt from its parsed fields.
fn write_parsed_fields(
    out: &Path,
    dir: &Path,
    line: &Value,
    result: &Value,
) -> Result<(), JobError> {
    let json_file = |key: &str, rel: &str| -> Result<(), JobError> {
        match line.get(key).filter(|v| !v.is_null()) {
            Some(v) => write(&dir.join(rel), &pretty(v)),
            None => Ok(()),
        }
    };
    write(&dir.join("result.json"), &pretty(result))?;
    json_file("trial_config", "config.json")?;
    json_file("trajectory", "agent/trajectory.json")?;
    if let Some(t) = line.get("reward_txt").and_then(Value::as_str) {
        write(&dir.join("verifier/reward.txt"), t.as_bytes())?;
    } else if let Some(r) = reward_number(result) {
        write(&dir.join("verifier/reward.txt"), r.to_string().as_bytes())?;
    }
    if let Some(t) = line.get("exception_txt").and_then(Value::as_str) {
        write(&dir.join("exception.txt"), t.as_bytes())?;
    }
    json_file("artifacts_manifest", "artifacts/manifest.json")?;
    if let Some(p) = line.get("patch").and_then(Value::as_str) {
        write(&dir.join("artifacts/patch.diff"), p.as_bytes())?;
    } else if let Some(b) = line.get("patch_base64").and_then(Value::as_str) {
        let bytes = crate::base64::decode(b).ok_or_else(|| JobError::Bad {
            path: out.to_owned(),
            message: "patch_base64 is not base64".to_owned(),
        })?;
        write(&dir.join("artifacts/patch.diff"), &bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {

    /// A trial is taken for Harbor's own agent only when every field naming the agent says so
    /// and no model is named.
    #[test]
    fn built_in_agents_are_named_consistently_or_not_at_all() {
        let cases = [
            (json!({"agent_info": {"name": "oracle"}}), Some("oracle")),
            (
                json!({"config": {"agent": {"name": "nop", "model_name": null}}}),
                Some("nop"),
            ),
            (
                json!({"agent_info": {"name": "oracle"}, "config": {"agent": {"name": "oracle"}}}),
                Some("oracle"),
            ),
            // Renamed in one place only, or with a model: a model agent's trial.
            (
                json!({"agent_info": {"name": "oracle"}, "config": {"agent": {"name": "claude-code"}}}),
                None,
            ),
            (
                json!({"agent_info": {"name": "oracle"}, "config": {"agent": {"name": "oracle", "model_name": "m"}}}),
                None,
            ),
            (
                json!({"agent_info": {"name": "nop", "model_info": {"name": "m"}}}),
                None,
            ),
            (json!({"agent_info": {"name": "claude-code"}}), None),
            (json!({"agent_info": {"name": 3}}), None),
            (json!({}), None),
        ];
        for (result, want) in cases {
            assert_eq!(built_in_agent(&result), want, "{result}");
        }
    }

    use super::*;

    /// A trial whose `exception.txt` and `verifier/reward.txt` are links to a host file
    /// publishes neither in its release line, and one whose trajectory is such a link is
    /// refused naming it.
    #[test]
    fn a_release_line_reads_no_file_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let secret = tmp.path().join("secret.txt");
        fs_err::write(&secret, "host secret\n").unwrap();
        let trial = tmp.path().join("trial");
        fs_err::create_dir_all(trial.join("verifier")).unwrap();
        fs_err::create_dir_all(trial.join("agent")).unwrap();
        std::os::unix::fs::symlink(&secret, trial.join("exception.txt")).unwrap();
        std::os::unix::fs::symlink(&secret, trial.join("verifier/reward.txt")).unwrap();
        let result = json!({"task_name": "t", "trial_name": "t__1"});
        let line = release_line(&trial, &result, None, None, ReleaseOptions::default()).unwrap();
        let text = line.to_string();
        assert!(!text.contains("host secret"), "{text}");
        assert!(line.get("exception_txt").is_none() && line.get("reward_txt").is_none());
        std::os::unix::fs::symlink(&secret, trial.join("agent/trajectory.json")).unwrap();
        let err = release_line(&trial, &result, None, None, ReleaseOptions::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("trajectory.json") && err.contains("symbolic link"),
            "{err}"
        );
    }
    use std::collections::BTreeMap;

    /// Every file (bytes) and directory below `root`.
    fn snapshot(root: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
        walkdir::WalkDir::new(root)
            .min_depth(1)
            .into_iter()
            .map(|e| e.unwrap())
            .map(|e| {
                let rel = rel_path(root, e.path()).unwrap().unwrap();
                let data = e
                    .file_type()
                    .is_file()
                    .then(|| fs_err::read(e.path()).unwrap());
                (rel, data)
            })
            .collect()
    }

    fn job(root: &Path) -> PathBuf {
        let job = root.join("2026-12-01__10-00-00");
        let trial = job.join("acme_x_pr1__AbCdEfG");
        let w = |rel: &str, data: &[u8]| {
            let p = trial.join(rel);
            fs_err::create_dir_all(p.parent().unwrap()).unwrap();
            fs_err::write(p, data).unwrap();
        };
        let big = vec![7u8; 4096];
        for (rel, data) in [
            (
                "result.json",
                &b"{\n    \"task_name\": \"acme_x_pr1\",\n    \"trial_name\": \"acme_x_pr1__AbCdEfG\",\n    \"verifier_result\": {\"rewards\": {\"reward\": 1.0}}\n}"[..],
            ),
            ("config.json", b"{\"task\":{\"path\":\"/nowhere\"}}"),
            ("trial.log", b"started\n"),
            ("lock.json", b"{}"),
            ("agent/oracle.txt", b"ok\r\n"),
            ("agent/trajectory.json", b"{\"schema_version\": \"ATIF-v1.6\"}"),
            ("verifier/reward.txt", b"1"),
            ("verifier/test-stdout.txt", b"1 passed\n"),
            ("verifier/report.json", b"{ \"verdict\" : \"resolved\" }"),
            ("artifacts/logs/x.bin", b"\x00\xff\xfe binary"),
            ("artifacts/big.bin", &big),
        ] {
            w(rel, data);
        }
        fs_err::create_dir_all(trial.join("artifacts/empty")).unwrap();
        for (name, data) in [
            ("config.json", &b"{\"job_name\": \"j\"}"[..]),
            ("result.json", b"{\"n_total_trials\": 1}"),
            ("job.log", b"job log\n"),
            ("lock.json", b"[]"),
        ] {
            fs_err::write(job.join(name), data).unwrap();
        }
        job
    }

    fn release(job: &Path, opts: ReleaseOptions) -> Value {
        let (dir, result) = trial_dirs(job).remove(0);
        let mut j = job_of(&dir).unwrap();
        let tree = job_files(job, std::slice::from_ref(&dir), opts).unwrap();
        j["files"] = tree["files"].clone();
        j["dirs"] = tree["dirs"].clone();
        let line = release_line(&dir, &result, Some(&j), None, opts).unwrap();
        // Through JSON text, as a release file carries it.
        serde_json::from_str(&line.to_string()).unwrap()
    }

    #[test]
    fn a_release_rebuilds_the_job_byte_for_byte() {
        let tmp = tempfile::tempdir().unwrap();
        let job = job(tmp.path());
        let line = release(&job, ReleaseOptions::default());
        let out = tmp.path().join("out");
        write_trial(&out, &line).unwrap();
        assert_eq!(snapshot(&job), snapshot(&out.join("2026-12-01__10-00-00")));
        // The parsed fields are still there for readers without Harbor.
        assert_eq!(line["reward"], 1.0);
        assert_eq!(line["trajectory"]["schema_version"], "ATIF-v1.6");
    }

    /// A trial's patch is read within the limit the release is given, and one over it stops the
    /// release with an error naming the file.
    #[test]
    fn the_trial_patch_is_read_within_the_limit_given() {
        let tmp = tempfile::tempdir().unwrap();
        let job = job(tmp.path());
        let (dir, result) = trial_dirs(&job).remove(0);
        let patch = dir.join(SUBMISSION_DIFF);
        let text = format!("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+{}\n", "b".repeat(3000));
        fs_err::write(&patch, &text).unwrap();
        let limit = |max_patch_bytes| ReleaseOptions {
            max_patch_bytes,
            ..ReleaseOptions::default()
        };
        let line = release_line(&dir, &result, None, None, limit(4096)).unwrap();
        assert_eq!(line["patch"], text.as_str());
        let err = release_line(&dir, &result, None, None, limit(2048))
            .expect_err("over the limit")
            .to_string();
        assert!(err.starts_with(&patch.display().to_string()), "{err}");
        assert!(err.contains("larger than the limit of 2048 bytes"), "{err}");
        assert!(err.contains("--max-patch-mb"), "{err}");
    }

    #[test]
    fn the_cap_and_no_logs_list_what_they_leave_out() {
        let tmp = tempfile::tempdir().unwrap();
        let job = job(tmp.path());
        let opts = ReleaseOptions {
            max_file_bytes: 1024,
            logs: false,
            ..ReleaseOptions::default()
        };
        let line = release(&job, opts);
        let omitted: BTreeMap<String, String> = line["files"]
            .as_array()
            .unwrap()
            .iter()
            .chain(line["job"]["files"].as_array().unwrap())
            .filter_map(|f| {
                Some((
                    f["path"].as_str()?.to_owned(),
                    f.get("omitted")?.as_str()?.to_owned(),
                ))
            })
            .collect();
        let want: BTreeMap<String, String> = [
            ("agent/oracle.txt", "log"),
            ("artifacts/big.bin", "too_large"),
            ("artifacts/logs/x.bin", "log"),
            ("job.log", "log"),
            ("trial.log", "log"),
            ("verifier/test-stdout.txt", "log"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect();
        assert_eq!(omitted, want);
        let big = line["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == "artifacts/big.bin")
            .unwrap();
        assert_eq!(big["size"], 4096);
        assert_eq!(big["sha256"].as_str().unwrap().len(), 64);
        let out = tmp.path().join("out");
        let dir = write_trial(&out, &line).unwrap();
        assert!(dir.join("result.json").is_file() && !dir.join("trial.log").exists());
    }

    #[test]
    fn one_reward_rule_for_every_result_shape() {
        for (result, want) in [
            (
                json!({"verifier_result": {"rewards": {"reward": 1.0}}}),
                Some(1.0),
            ),
            (
                json!({"verifier_result": {"rewards": {"reward": 1}}}),
                Some(1.0),
            ),
            (
                json!({"verifier_result": {"rewards": {"score": 0.5}}}),
                Some(0.5),
            ),
            (
                json!({"verifier_result": {"rewards": {"pass": 0, "reward": 0.25}}}),
                Some(0.25),
            ),
            (
                json!({"verifier_result": {"rewards": {"a": 0.1, "b": 0.2}}}),
                Some(0.1),
            ),
            (
                json!({"verifier_result": {"rewards": {"reward": "1", "score": 0.5}}}),
                Some(0.5),
            ),
            (
                json!({"verifier_result": {"rewards": {"reward": "1"}}}),
                None,
            ),
            (
                json!({"verifier_result": {"rewards": {"reward": null}}}),
                None,
            ),
            (json!({"verifier_result": {"rewards": {}}}), None),
            (json!({"verifier_result": {"rewards": null}}), None),
            (json!({"verifier_result": {"rewards": 1.0}}), None),
            (json!({"verifier_result": {}}), None),
            (json!({"verifier_result": null}), None),
            (json!({"task_name": "t"}), None),
        ] {
            assert_eq!(trial_reward(&result), want, "{result}");
        }
        // Written back as the number it was.
        let r = json!({"verifier_result": {"rewards": {"reward": 1}}});
        assert_eq!(reward_number(&r).unwrap().to_string(), "1");
    }

    #[test]
    fn release_entries_cannot_leave_their_directory() {
        let tmp = tempfile::tempdir().unwrap();
        for rel in ["../x", "/etc/x", "a/../../x", "", "a//b"] {
            let line = json!({"trial_name": "t", "files": [{"path": rel, "text": "x"}]});
            let err = write_trial(tmp.path(), &line).unwrap_err().to_string();
            assert!(err.contains("release entry"), "{rel}: {err}");
        }
        #[cfg(unix)]
        {
            // A link left in the trial's place by an earlier run is not written through: the
            // trial is written aside and replaces it whole.
            let job = tmp.path().join("release/t");
            let outside = tmp.path().join("outside");
            fs_err::create_dir_all(&job).unwrap();
            fs_err::create_dir_all(&outside).unwrap();
            std::os::unix::fs::symlink(&outside, job.join("link")).unwrap();
            let line = json!({"trial_name": "t", "files": [{"path": "link/x", "text": "x"}]});
            write_trial(tmp.path(), &line).unwrap();
            assert!(!outside.join("x").exists());
            assert!(
                !fs_err::symlink_metadata(job.join("link"))
                    .unwrap()
                    .is_symlink()
            );
            assert_eq!(fs_err::read_to_string(job.join("link/x")).unwrap(), "x");
        }
    }

    #[test]
    fn a_path_listed_twice_is_refused_not_written_over() {
        let tmp = tempfile::tempdir().unwrap();
        let line = json!({"trial_name": "t", "files": [
            {"path": "agent/log.txt", "text": "first"},
            {"path": "agent/log.txt", "text": "second"}
        ]});
        let err = write_trial(tmp.path(), &line).unwrap_err().to_string();
        assert!(
            err.contains("agent/log.txt") && err.contains("twice"),
            "{err}"
        );
    }
}
