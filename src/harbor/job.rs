//! Harbor job directories (`config.json`, `result.json`, one directory per trial) and trajectory
//! releases (one JSON line per trial) made from them, both ways.
//!
//! A release line keeps the trial's `result.json` and `config.json` verbatim (and the job's), so a
//! job rebuilt from a release has every field Harbor's models define; the flat fields beside them
//! (reward, agent, model, tokens, cost, timings, exception) are for people and tools that read the
//! release without Harbor.

use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum JobError {
    #[error("{}", crate::errors::io_message(path, source))]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Bad { path: PathBuf, message: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> JobError + '_ {
    move |source| JobError::Io {
        path: path.to_owned(),
        source,
    }
}

fn read_json(path: &Path) -> Result<Value, JobError> {
    let text = fs_err::read_to_string(path).map_err(io(path))?;
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

/// The patch a trial collected in `artifacts/` (see README): a conventional name first, else the
/// first `.diff`, then `.patch`, anywhere below it. Links are followed only while they stay inside
/// the trial directory: a patch that resolves outside it (a host file) is never read.
pub fn trial_patch(dir: &Path) -> Option<PathBuf> {
    find_trial_patch(dir).found
}

/// What [`trial_patch`] found, and the candidates it refused because they lead out of the trial.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrialPatch {
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

/// One release line for a trial directory.
pub fn release_line(
    dir: &Path,
    result: &Value,
    job: Option<&Value>,
    family: Option<&str>,
) -> Result<Value, JobError> {
    let mut m = Map::new();
    let put = |m: &mut Map<String, Value>, k: &str, v: Option<&Value>| {
        if let Some(v) = v {
            m.insert(k.to_owned(), v.clone());
        }
    };
    put(&mut m, "task_name", result.get("task_name"));
    put(&mut m, "trial_name", result.get("trial_name"));
    if let Some(f) = family {
        m.insert("family".into(), json!(f));
    }
    let rewards = get(result, &["verifier_result", "rewards"]);
    put(
        &mut m,
        "reward",
        rewards.and_then(|r| {
            r.get("reward")
                .or_else(|| r.as_object().and_then(|o| o.values().next()))
        }),
    );
    put(&mut m, "agent", get(result, &["agent_info", "name"]));
    put(
        &mut m,
        "model",
        get(result, &["config", "agent", "model_name"])
            .or(get(result, &["agent_info", "model_info", "name"])),
    );
    for k in [
        "n_input_tokens",
        "n_cache_tokens",
        "n_output_tokens",
        "cost_usd",
    ] {
        put(&mut m, k, get(result, &["agent_result", k]));
    }
    let mut timings = Map::new();
    for phase in [
        "environment_setup",
        "agent_setup",
        "agent_execution",
        "verifier",
    ] {
        if let Some(t) = get(result, &[phase]) {
            timings.insert(phase.into(), t.clone());
        }
    }
    m.insert("timings".into(), Value::Object(timings));
    m.insert(
        "exception".into(),
        result.get("exception_info").cloned().unwrap_or(Value::Null),
    );
    let traj = dir.join("agent/trajectory.json");
    m.insert(
        "trajectory".into(),
        if traj.is_file() {
            read_json(&traj)?
        } else {
            Value::Null
        },
    );
    if let Some(p) = trial_patch(dir) {
        let bytes = crate::submission::read_patch(&p, crate::submission::DEFAULT_MAX_PATCH_BYTES)
            .map_err(|e| JobError::Bad {
            path: p.clone(),
            message: e.to_string(),
        })?;
        match String::from_utf8(bytes) {
            Ok(text) => m.insert("patch".into(), json!(text)),
            Err(e) => m.insert(
                "patch_base64".into(),
                json!(crate::submission::base64_encode(e.as_bytes())),
            ),
        };
    }
    // Files beside the models, kept verbatim so a rebuilt job reads the same.
    let reward_txt = dir.join("verifier/reward.txt");
    if let Ok(t) = fs_err::read_to_string(&reward_txt) {
        m.insert("reward_txt".into(), json!(t));
    }
    if let Ok(t) = fs_err::read_to_string(dir.join("exception.txt")) {
        m.insert("exception_txt".into(), json!(t));
    }
    if let Ok(v) = read_json(&dir.join("artifacts/manifest.json")) {
        m.insert("artifacts_manifest".into(), v);
    }
    m.insert("trial_result".into(), result.clone());
    let config = dir.join("config.json");
    if config.is_file() {
        m.insert("trial_config".into(), read_json(&config)?);
    }
    if let Some(j) = job {
        m.insert("job".into(), j.clone());
    }
    Ok(Value::Object(m))
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

/// Writes one release line back as a trial directory (and its job's files) under `out`; returns
/// the trial directory.
pub fn write_trial(out: &Path, line: &Value) -> Result<PathBuf, JobError> {
    let bad = |message: &str| JobError::Bad {
        path: out.to_owned(),
        message: message.to_owned(),
    };
    let job_name = line
        .get("job")
        .and_then(|j| j.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("release");
    let safe = |s: &str| crate::report::safe_name(s);
    let job_dir = out.join(safe(job_name));
    if let Some(job) = line.get("job") {
        for (key, file) in [("config", "config.json"), ("result", "result.json")] {
            if let Some(v) = job.get(key).filter(|v| !v.is_null())
                && !job_dir.join(file).is_file()
            {
                write(&job_dir.join(file), &pretty(v))?;
            }
        }
    }
    let mut result = line.get("trial_result").cloned().unwrap_or_else(|| {
        // A release made elsewhere: a minimal result from the flat fields.
        let mut r = Map::new();
        for k in ["task_name", "trial_name"] {
            if let Some(v) = line.get(k) {
                r.insert(k.into(), v.clone());
            }
        }
        if let Some(rw) = line.get("reward") {
            r.insert("verifier_result".into(), json!({"rewards": {"reward": rw}}));
        }
        Value::Object(r)
    });
    // Releases made elsewhere may not name their trials: Harbor's own pattern, `task[:32]__` plus a
    // short suffix (here a digest of the line, so the name is stable).
    let generated;
    let trial_name = match result
        .get("trial_name")
        .or(line.get("trial_name"))
        .and_then(Value::as_str)
    {
        Some(t) => t,
        None => {
            let task = line
                .get("task_name")
                .or(line.get("instance_id"))
                .and_then(Value::as_str)
                .ok_or_else(|| bad("a release line without trial_name or task_name"))?;
            use sha2::Digest;
            let digest = hex::encode(sha2::Sha256::digest(line.to_string().as_bytes()));
            generated = format!(
                "{}__{}",
                task.chars().take(32).collect::<String>(),
                &digest[..7]
            );
            &generated
        }
    };
    let trial_name = trial_name.to_owned();
    if let Some(r) = result.as_object_mut()
        && !r.contains_key("trial_name")
    {
        r.insert("trial_name".into(), json!(trial_name));
    }
    let dir = job_dir.join(safe(&trial_name));
    write(&dir.join("result.json"), &pretty(&result))?;
    if let Some(c) = line.get("trial_config").filter(|v| !v.is_null()) {
        write(&dir.join("config.json"), &pretty(c))?;
    }
    if let Some(t) = line.get("trajectory").filter(|v| !v.is_null()) {
        write(&dir.join("agent/trajectory.json"), &pretty(t))?;
    }
    if let Some(t) = line.get("reward_txt").and_then(Value::as_str) {
        write(&dir.join("verifier/reward.txt"), t.as_bytes())?;
    } else if let Some(r) =
        get(&result, &["verifier_result", "rewards"]).and_then(|r| r.get("reward"))
    {
        write(&dir.join("verifier/reward.txt"), r.to_string().as_bytes())?;
    }
    if let Some(t) = line.get("exception_txt").and_then(Value::as_str) {
        write(&dir.join("exception.txt"), t.as_bytes())?;
    }
    if let Some(m) = line.get("artifacts_manifest").filter(|v| !v.is_null()) {
        write(&dir.join("artifacts/manifest.json"), &pretty(m))?;
    }
    if let Some(p) = line.get("patch").and_then(Value::as_str) {
        write(&dir.join("artifacts/patch.diff"), p.as_bytes())?;
    } else if let Some(b) = line.get("patch_base64").and_then(Value::as_str) {
        let bytes =
            crate::submission::base64_decode(b).ok_or_else(|| bad("patch_base64 is not base64"))?;
        write(&dir.join("artifacts/patch.diff"), &bytes)?;
    }
    Ok(dir)
}
