//! The trajectories a path holds, each read by its agent's reader and handed over one at a
//! time ([`for_each_item`]): a release (JSONL, one trajectory a line), a raw transcript (Claude
//! Code, Codex, Gemini CLI, Aider), a SWE-agent or mini-swe-agent trajectory file (on one line
//! or many), an ATIF trajectory, an OpenHands event stream (a JSON list of actions and
//! observations), a folder of any of those (read whole, every other file named with why), or a
//! Harbor jobs directory (each trial's raw agent log, else its ATIF trajectory). A release
//! line's trajectory is handed to the reader of its shape ([`read_line`], [`line_item`]). Every
//! one comes out alike, read, with what is known of it besides its steps ([`About`]: instance,
//! family, reward, attempt, prompt, file), whichever shape it was found in. The audit takes its
//! trajectories from here; it parses no agent's file and no line itself.

use super::folder::Entry;
use super::harbor_job::{NO_STEPS, TRAJECTORY, TrialSteps, trial_document, trial_steps};
use super::trajectory::{Agent, Trajectory, TrajectoryShape};
use super::{
    Folder, atif, aweagent, instance_from_file_name, is_codex_child_rollout, mini_swe_agent,
    openhands, read_transcript_files_as, read_transcripts_as, shape_of, sniff, swe_agent,
    transcript_from_values,
};
use crate::record::{Family, JsonLines, JsonlError};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A transcript given inline: a list of records, the file's text, or one result object.
fn inline_transcript(v: &Value, agent: Option<Agent>) -> Option<Trajectory> {
    match v {
        Value::Array(items) => transcript_from_values(items, agent),
        Value::String(text) => {
            let records: Vec<Value> = match serde_json::from_str::<Value>(text) {
                Ok(Value::Array(items)) => items,
                Ok(one @ Value::Object(_)) => vec![one],
                _ => text
                    .lines()
                    .filter_map(|l| serde_json::from_str(l.trim_start_matches('\u{feff}')).ok())
                    .collect(),
            };
            transcript_from_values(&records, agent)
        }
        Value::Object(_) => {
            shape_of([v]).and_then(|_| transcript_from_values(std::slice::from_ref(v), agent))
        }
        _ => None,
    }
}

/// The trajectory a release line (or one trajectory document) carries, read by its agent's
/// reader; `None` when no shape matches.
pub fn read_line(line: &Value) -> Option<Trajectory> {
    let traj = line.get("trajectory");
    if let Some(t) = traj.filter(|t| atif::is_atif(t, false)) {
        return Some(atif::read(t));
    }
    if atif::is_atif(line, true) {
        return Some(atif::read(line));
    }
    if let Some(Value::Array(steps)) = traj
        && swe_agent::is_traj_steps(steps)
    {
        return Some(swe_agent::read_traj(steps, line));
    }
    if mini_swe_agent::is_trajectory(line)
        && let Some(Value::Array(msgs)) = line.get("messages")
    {
        return Some(mini_swe_agent::read(msgs, line));
    }
    if let Some(Value::Array(steps)) = traj
        && aweagent::is_steps(steps)
    {
        return Some(aweagent::read_steps(steps, line));
    }
    if let Some(t) = traj.and_then(|t| inline_transcript(t, None)) {
        return Some(t);
    }
    if let Some(evs @ Value::Array(_)) = line.get("events")
        && let Some(t) = inline_transcript(evs, Some(Agent::Codex))
    {
        return Some(t);
    }
    if let Some(msgs @ Value::Array(_)) = line.get("messages")
        && let Some(t) = inline_transcript(msgs, Some(Agent::ClaudeCode))
    {
        return Some(t);
    }
    if let Some(Value::Array(h)) = line.get("history") {
        if swe_agent::is_history(h) {
            return Some(swe_agent::read_history(h, line));
        }
        return Some(openhands::read_history(
            h,
            line.get("instruction").and_then(Value::as_str),
        ));
    }
    None
}

/// Why a path holds nothing to audit.
#[derive(Debug, Error)]
pub enum SourceError {
    /// The path does not exist.
    #[error("{}: no such file or directory", .0.display())]
    Missing(PathBuf),
    /// A directory holding neither a Harbor trial nor a transcript (searched six levels deep).
    #[error(
        "{}: no Harbor trial (result.json with task_name) and no agent transcript or trajectory this audit reads in it (searched six levels deep)",
        .0.display()
    )]
    NothingToAudit(PathBuf),
    /// JSON lines that are neither a release (the first names no task) nor an agent's output
    /// the readers know.
    #[error(
        "{}: not a release (its first line has no task_name or instance_id) and no transcript or trajectory this audit reads (Claude Code, Codex, Gemini CLI, Aider, ATIF, SWE-agent, mini-swe-agent, OpenHands, AweAgent)",
        .0.display()
    )]
    NotATrajectory(PathBuf),
    /// A predictions file: a patch a line, no trajectory (said once, not once per line).
    #[error(
        "{}: a predictions file (instance_id and model_patch a line): patches with no trajectory, nothing to audit; audit the agent's own output (its transcripts, a Harbor job, a release from `release from-harbor`)",
        .0.display()
    )]
    Predictions(PathBuf),
    /// A folder whose only files an audit could take are predictions files (how many).
    #[error(
        "{}: its only files of an agent are predictions files ({n}): patches with no trajectory, nothing to audit; audit the agent's own output (its transcripts, a Harbor job, a release from `release from-harbor`)",
        .0.display(),
        n = .1
    )]
    OnlyPredictions(PathBuf, usize),
    /// A release file that cannot be opened or read; a bad line is reported with its line
    /// instead, and reading goes on.
    #[error(transparent)]
    Jsonl(#[from] JsonlError),
}

/// What is known of a trajectory besides its steps, whichever reader found it: a release line
/// (or a trajectory document read as one), a transcript file, a Harbor trial.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct About {
    /// The instance id (the line's, given, or from the file name), or the task name a Harbor
    /// trial gives.
    pub task_name: String,
    /// The family the line names (the dataset's, where given, wins).
    pub family: Option<Family>,
    /// The reward recorded with it, if any.
    pub reward: Option<f64>,
    /// Its attempt among the instance's, as ingest numbers them, where known.
    pub attempt: Option<u32>,
    /// A prompt recorded beside the steps.
    pub prompt: Option<String>,
    /// The file it was read from; empty for a line of a release.
    pub source: String,
}

/// One trajectory to audit, read by its agent's reader, or why there is none.
pub enum Item {
    /// A trajectory: a release line, a trajectory document (SWE-agent `.traj`, mini-swe-agent
    /// `.traj.json`, an OpenHands event list, ATIF), a raw transcript (a file, or a Harbor
    /// trial's agent log), or a trial's ATIF trajectory.
    Trajectory {
        /// What is known of it besides its steps.
        about: About,
        /// Its steps, as its agent's reader read them.
        transcript: Box<Trajectory>,
    },
    /// A trial of one of Harbor's own agents (`oracle`, `nop`) or a file that holds no
    /// trajectory: nothing to audit; the reason, for a person.
    NothingToAudit(String),
}

/// What a release line (or a trajectory document read as one) says of its trajectory besides
/// its steps: its instance and reward (`release::line_instance`, `line_reward`), family, prompt
/// and attempt; `None` where it names no instance. Its `source` is the caller's to set.
fn line_about(line: &Value) -> Option<About> {
    let family = line
        .get("task_type")
        .or(line.get("family"))
        .or(line.get("task"))
        .and_then(Value::as_str)
        .map(Family::from_spelling);
    Some(About {
        task_name: super::release::line_instance(line)?.to_owned(),
        family,
        reward: super::release::line_reward(line),
        attempt: line
            .get("attempt")
            .and_then(Value::as_u64)
            .and_then(|a| u32::try_from(a).ok()),
        prompt: line
            .get("prompt")
            .or(line.get("instruction"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        source: String::new(),
    })
}

/// A release line (or a trajectory document read as one) as an item: what it says of itself
/// ([`line_about`]) and its steps, each shape by its agent's reader; why not,
/// where it names no instance, left no steps, or holds no trajectory in a known shape (naming
/// the instance it does name).
pub fn line_item(line: &Value, source: &str) -> Result<Item, String> {
    let mut about = line_about(line).ok_or_else(|| "no task_name or instance_id".to_owned())?;
    about.source = source.to_owned();
    // A release of a trial that left no steps (`release from-harbor`: `trajectory` null) says
    // so, as the trial's own directory does.
    if line.get("trajectory").is_some_and(Value::is_null)
        && ["events", "messages", "history"]
            .iter()
            .all(|k| line.get(k).is_none())
    {
        return Err(format!(
            "{}: the trial left no steps (`trajectory` is null: {NO_STEPS})",
            about.task_name
        ));
    }
    let transcript = read_line(line).ok_or_else(|| {
        let keys: Vec<&str> = line
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        format!(
            "{}: no trajectory in a known shape (ATIF steps, Codex events or rollout, Claude Code messages or session, OpenHands history, AweAgent steps); keys found: {}",
            about.task_name,
            keys.join(", ")
        )
    })?;
    Ok(Item::Trajectory {
        about,
        transcript: Box::new(transcript),
    })
}

fn is_release_line(v: &Value) -> bool {
    v.get("task_name").is_some() || v.get("instance_id").is_some()
}

/// A SWE-bench prediction: an instance's patch (or repository), with no trajectory to read.
fn is_prediction_line(v: &Value) -> bool {
    v.get("instance_id").is_some()
        && (v.get("model_patch").is_some() || v.get("model_repo").is_some())
        && read_line(v).is_none()
}

/// A raw transcript file of the shape detection found: read it whole, name its instance; the
/// files it read (its sub-agents' too) are added to `read`.
fn transcript_item(
    path: &Path,
    shape: TrajectoryShape,
    instance: Option<&str>,
    read: &mut HashSet<PathBuf>,
) -> Result<Item, String> {
    let task_name = instance
        .map(str::to_owned)
        .or_else(|| instance_from_file_name(path))
        .ok_or_else(|| {
            format!(
                "{}: the file name does not say which instance this transcript is about (name it <instance_id>.jsonl, or pass --instance)",
                path.display()
            )
        })?;
    let (transcript, files) = read_transcript_files_as(path, shape).map_err(|e| e.to_string())?;
    read.extend(files);
    Ok(Item::Trajectory {
        about: About {
            task_name,
            source: path.display().to_string(),
            ..About::default()
        },
        transcript: Box::new(transcript),
    })
}

/// A Harbor trial: its agent's raw log when it left one, else its ATIF trajectory
/// ([`trial_steps`]). `instance`: as ingest names it, the task's `instance_id`, else Harbor's
/// task name (empty: neither). `attempt`: its number among the instance's trials.
fn trial_item(dir: &Path, result: &Value, instance: String, attempt: u32) -> Result<Item, String> {
    let task_name = (!instance.is_empty()).then_some(instance);
    let reward = crate::harbor::trial_reward(result);
    let trajectory = match trial_steps(dir, result) {
        TrialSteps::Log(files, shape) if task_name.is_some() => {
            let transcript = read_transcripts_as(&files, shape).map_err(|e| e.to_string())?;
            return Ok(Item::Trajectory {
                about: About {
                    task_name: task_name.unwrap_or_default(),
                    reward,
                    attempt: Some(attempt),
                    source: files[0].display().to_string(),
                    ..About::default()
                },
                transcript: Box::new(transcript),
            });
        }
        // A raw log with no task to name it by: the ATIF trajectory beside it, as a line.
        TrialSteps::Log(..) => dir.join(TRAJECTORY),
        TrialSteps::Trajectory(t) => t,
        TrialSteps::BuiltIn(agent) => {
            return Ok(Item::NothingToAudit(format!(
                "{}: Harbor's own `{agent}` agent runs no model and leaves no trajectory; nothing to audit",
                dir.display()
            )));
        }
        TrialSteps::Missing => return Err(format!("{}: {NO_STEPS}", dir.display())),
    };
    let t = trial_document(dir, &trajectory)?;
    let mut line = serde_json::Map::new();
    line.insert(
        "task_name".into(),
        task_name.map(Value::from).unwrap_or(Value::Null),
    );
    if let Some(r) = reward {
        line.insert("reward".into(), r.into());
    }
    line.insert("attempt".into(), attempt.into());
    line.insert("trajectory".into(), t);
    // Named by the file its steps were read from, as a trial's raw log is.
    line_item(&Value::Object(line), &trajectory.display().to_string())
}

/// Every trajectory under `path`, numbered from 1 (release lines by their line).
pub fn for_each_item(
    path: &Path,
    instance: Option<&str>,
    mut f: impl FnMut(u64, Result<Item, String>),
) -> Result<(), SourceError> {
    if path.is_dir() {
        let trials = crate::harbor::trial_dirs(path);
        if !trials.is_empty() {
            // In ingest's order: by instance, then by start time.
            for (n, t) in super::harbor_job::in_order(trials).into_iter().enumerate() {
                f(
                    n as u64 + 1,
                    trial_item(&t.dir, &t.result, t.instance, t.attempt),
                );
            }
            return Ok(());
        }
        return folder_items(path, instance, f);
    }
    if !path.exists() {
        return Err(SourceError::Missing(path.to_owned()));
    }
    if let Some(what) = super::unsupported_file(path) {
        f(1, Err(what));
        return Ok(());
    }
    let first = super::first_line_json(path);
    // A trajectory file (`<id>.traj`, `<id>.traj.json`, Harbor's `trajectory.json`) is one
    // document even when it is written on one line and names its instance.
    let named = trajectory_file_name(path).is_some()
        || path.file_name().is_some_and(|n| n == "trajectory.json");
    let release = !named && first.as_ref().is_some_and(is_release_line);
    if !release && let Ok(Some(shape)) = sniff(path) {
        f(
            1,
            transcript_item(path, shape, instance, &mut HashSet::new()),
        );
        return Ok(());
    }
    if !release {
        // Not release lines: one JSON document (a SWE-agent `.traj`, a mini-swe-agent
        // `.traj.json`, an OpenHands event list, an ATIF trajectory, on one line or many),
        // audited whole or refused once, never line by line.
        if let Some(item) = document_item(path, None, instance) {
            f(1, item);
            return Ok(());
        }
        // JSON lines of which none is a trajectory: not a release, and no agent's either. Said
        // once (where one is, each line is read and each bad one named).
        if first.is_some() && !holds_trajectory_lines(path) {
            return Err(SourceError::NotATrajectory(path.to_owned()));
        }
    }
    let mut lines = JsonLines::open(path)?;
    // A prediction among the lines (a patch, no trajectory) is passed over and counted: a file
    // of nothing else is one error, and a trajectory after a prediction is still audited.
    let mut predictions = Predictions::default();
    while let Some(item) = lines.next_value() {
        match item {
            Ok((n, v)) if is_prediction_line(&v) => predictions.pass_over(n),
            Ok((n, v)) => {
                predictions.others = true;
                f(n, line_item(&v, ""));
            }
            Err(e) => match e.line() {
                Some(n) => {
                    predictions.others = true;
                    f(n, Err(e.to_string()));
                }
                None => return Err(e.into()),
            },
        }
    }
    match predictions.first {
        Some(_) if !predictions.others => Err(SourceError::Predictions(path.to_owned())),
        Some(n) => {
            f(n, Ok(predictions.not_audited(path)));
            Ok(())
        }
        None => Ok(()),
    }
}

/// Whether any line of a file is a trajectory naming its task (a release's line, an OpenHands or
/// AweAgent output's).
fn holds_trajectory_lines(path: &Path) -> bool {
    let Ok(mut lines) = JsonLines::open(path) else {
        return false;
    };
    while let Some(item) = lines.next_value() {
        if let Ok((_, v)) = item
            && is_release_line(&v)
            && read_line(&v).is_some()
        {
            return true;
        }
    }
    false
}

/// Whether a file's name says JSON or JSON lines.
fn is_json_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e == "json" || e == "jsonl")
}

/// Whether every line of a file is a prediction (a line that is not JSON is not one: it is
/// reported where the file is read as lines).
fn only_predictions(path: &Path) -> bool {
    let Ok(mut lines) = JsonLines::open(path) else {
        return false;
    };
    while let Some(item) = lines.next_value() {
        match item {
            Ok((_, v)) if is_prediction_line(&v) => {}
            _ => return false,
        }
    }
    true
}

/// The predictions met among a file's lines of trajectories.
#[derive(Default)]
struct Predictions {
    /// The first one's number, and how many.
    first: Option<u64>,
    count: u64,
    /// Any line that was not a prediction.
    others: bool,
}

impl Predictions {
    fn pass_over(&mut self, n: u64) {
        self.first.get_or_insert(n);
        self.count += 1;
    }

    /// What the audit says of them: not audited, with why.
    fn not_audited(&self, file: &Path) -> Item {
        Item::NothingToAudit(format!(
            "{}: {} prediction line(s), patches with no trajectory: skipped",
            file.display(),
            self.count
        ))
    }
}

/// A folder of agent output, read whole: every transcript and trajectory file in it (six levels
/// deep) in its own format; every other file is named as not audited, with the reason.
fn folder_items(
    path: &Path,
    instance: Option<&str>,
    mut f: impl FnMut(u64, Result<Item, String>),
) -> Result<(), SourceError> {
    let folder = Folder::walk(path);
    // A Claude Code session's sub-agent files are read with the session.
    let files: Vec<&Entry> = folder
        .entries()
        .iter()
        .filter(|e| !super::is_subagent_file(e.path()))
        .collect();
    // Codex sub-agents' rollouts last: read with the rollout that spawned them when one does,
    // else on their own (a file's claim to be a sub-agent's never hides its steps).
    let (children, mut files): (Vec<&Entry>, Vec<&Entry>) = files
        .into_iter()
        .partition(|e| is_codex_child_rollout(e.path()));
    files.extend(children);
    let mut read = HashSet::new();
    let kind = |e: &Entry| {
        let p = e.path();
        // A link is not followed, and a FIFO or a device is never opened: each is named.
        if let Some(what) = crate::files::not_regular(p) {
            return FileKind::NotRegular(what);
        }
        if let Some(what) = super::unsupported_file(p) {
            FileKind::Unsupported(what)
        } else if let Some(shape) = e.shape() {
            FileKind::Transcript(shape)
        } else if trajectory_file_name(p).is_some() || e.openhands_events().is_some() {
            FileKind::Document
        } else {
            match super::first_line_json(p) {
                // One trajectory a line, each naming its instance: an OpenHands `output.jsonl`,
                // an AweAgent `trajectories.jsonl`, a release.
                Some(v) if is_release_line(&v) && read_line(&v).is_some() => FileKind::Lines,
                // Predictions, unless a line after the first carries a trajectory.
                Some(v) if is_prediction_line(&v) && only_predictions(p) => FileKind::Predictions,
                Some(v) if is_prediction_line(&v) => FileKind::Lines,
                // A first line of another kind (or none) hides no trajectory after it.
                _ if is_json_name(p) && holds_trajectory_lines(p) => FileKind::Lines,
                _ => FileKind::Other,
            }
        }
    };
    let kinds: Vec<FileKind> = files.iter().map(|e| kind(e)).collect();
    // A sub-agent's rollout is not counted: with its parent it is part of that trajectory.
    let auditable = files
        .iter()
        .zip(&kinds)
        .filter(|(e, k)| {
            matches!(
                k,
                FileKind::Transcript(_) | FileKind::Document | FileKind::Lines
            ) && !is_codex_child_rollout(e.path())
        })
        .count();
    let any = kinds.iter().any(|k| {
        matches!(
            k,
            FileKind::Transcript(_)
                | FileKind::Document
                | FileKind::Lines
                | FileKind::Unsupported(_)
        )
    });
    if !any {
        let preds = kinds
            .iter()
            .filter(|k| **k == FileKind::Predictions)
            .count();
        return Err(if preds > 0 {
            SourceError::OnlyPredictions(path.to_owned(), preds)
        } else {
            SourceError::NothingToAudit(path.to_owned())
        });
    }
    // `--instance` names the folder's one trajectory (a stray sub-agent's rollout with it).
    let one = (auditable <= 1).then_some(instance).flatten();
    let mut n = 0;
    for (entry, kind) in files.iter().zip(kinds) {
        let file = entry.path();
        if read.contains(file) {
            continue;
        }
        if kind == FileKind::Lines {
            lines_of(file, &mut n, &mut f);
            continue;
        }
        n += 1;
        let item = match kind {
            FileKind::Transcript(shape) => transcript_item(file, shape, one, &mut read),
            // An event stream's events were parsed when its kind was asked.
            FileKind::Document => document_item(
                file,
                entry
                    .openhands_events()
                    .map(|events| Value::Array(events.to_vec())),
                one,
            )
            .unwrap_or_else(|| {
                Err(format!(
                    "{}: not one JSON document; nothing to audit",
                    file.display()
                ))
            }),
            FileKind::Unsupported(what) => Err(format!("{}: {what}", file.display())),
            FileKind::NotRegular(what) => Ok(Item::NothingToAudit(format!(
                "{}: skipped: {what}",
                file.display()
            ))),
            FileKind::Lines => continue, // read line by line above
            FileKind::Predictions => Ok(Item::NothingToAudit(format!(
                "{}: skipped: a predictions file, patches with no trajectory",
                file.display()
            ))),
            FileKind::Other => Ok(Item::NothingToAudit(format!(
                "{}: skipped: not a transcript or trajectory this audit reads",
                file.display()
            ))),
        };
        f(n, item);
    }
    Ok(())
}

/// Each line of a file of trajectories in a folder, numbered on from `n`; a line that cannot be
/// read is an error naming the file and its line, and reading goes on.
fn lines_of(file: &Path, n: &mut u64, f: &mut impl FnMut(u64, Result<Item, String>)) {
    let mut lines = match JsonLines::open(file) {
        Ok(l) => l,
        Err(e) => {
            *n += 1;
            f(*n, Err(format!("{}: {e}", file.display())));
            return;
        }
    };
    let mut predictions = Predictions::default();
    while let Some(item) = lines.next_value() {
        match item {
            Ok((line, v)) if is_prediction_line(&v) => predictions.pass_over(line),
            Ok((_, v)) => {
                *n += 1;
                f(*n, line_item(&v, ""));
            }
            Err(e) => {
                *n += 1;
                f(*n, Err(format!("{}: {e}", file.display())));
                if e.line().is_none() {
                    break;
                }
            }
        }
    }
    if predictions.first.is_some() {
        *n += 1;
        f(*n, Ok(predictions.not_audited(file)));
    }
}

/// An OpenHands event stream: a JSON list of events (see
/// [`openhands::is_openhands_events`]).
fn is_openhands_events(v: &Value) -> bool {
    v.as_array()
        .is_some_and(|events| openhands::is_openhands_events(events))
}

/// What a file in a folder is to the audit.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FileKind {
    /// A transcript, of the shape its first records have.
    Transcript(TrajectoryShape),
    Document,
    /// One trajectory a line, each naming its instance.
    Lines,
    /// A patch a line (SWE-bench predictions) and nothing else: nothing to audit. A file whose
    /// first line is a prediction and a later one a trajectory is [`FileKind::Lines`].
    Predictions,
    /// An agent's output that is recognised and not read (Cline), with what it is.
    Unsupported(String),
    /// A link, a FIFO, a device: never opened; what it is.
    NotRegular(String),
    Other,
}

/// The instance a trajectory file's name gives: `<id>.traj` (SWE-agent), `<id>.traj.json`
/// (mini-swe-agent).
fn trajectory_file_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    name.strip_suffix(".traj.json")
        .or_else(|| name.strip_suffix(".traj"))
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
}

/// A file that is one JSON document: an item to audit when it is an object in a shape the audit
/// reads, with its instance from `instance`, its own `instance_id` or its file name; one error
/// naming the file when it is JSON of no such shape; `None` when it is not one JSON document.
/// `parsed` is the document when it was parsed already.
fn document_item(
    path: &Path,
    parsed: Option<Value>,
    instance: Option<&str>,
) -> Option<Result<Item, String>> {
    let mut v = match parsed {
        Some(v) => v,
        None => {
            let text = crate::record::read_text_capped(path).ok()?;
            serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?
        }
    };
    if is_openhands_events(&v) {
        // An OpenHands event stream: its actions and observations are a history.
        let mut line = serde_json::Map::new();
        line.insert("history".into(), v);
        v = Value::Object(line);
    } else if path.to_string_lossy().ends_with(".traj.json") && mini_swe_agent::is_message_list(&v)
    {
        // A mini-swe-agent trajectory saved as its messages alone (as ingest reads it).
        let mut line = serde_json::Map::new();
        line.insert("messages".into(), v);
        line.insert("trajectory_format".into(), "mini-swe-agent-1".into());
        v = Value::Object(line);
    }
    if !v.is_object() {
        return Some(Err(format!(
            "{}: one JSON document that is not an object; nothing to audit",
            path.display()
        )));
    }
    let Some(transcript) = read_line(&v) else {
        let keys: Vec<&str> = v
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        return Some(Err(format!(
            "{}: not a trajectory this audit reads (SWE-agent .traj, mini-swe-agent .traj.json, \
             an OpenHands event list, ATIF); keys found: {}",
            path.display(),
            keys.join(", ")
        )));
    };
    let obj = v.as_object_mut()?;
    // The trajectory's own instance id wins, as ingest takes it; `--instance` names the rest.
    let task = obj
        .get("instance_id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| instance.map(str::to_owned))
        .or_else(|| trajectory_file_name(path))
        .or_else(|| instance_from_file_name(path));
    let Some(task) = task else {
        return Some(Err(format!(
            "{}: the file does not say which instance it is about (pass --instance)",
            path.display()
        )));
    };
    obj.insert("task_name".into(), Value::String(task));
    let Some(mut about) = line_about(&v) else {
        return Some(Err(format!(
            "{}: no task_name or instance_id",
            path.display()
        )));
    };
    about.source = path.display().to_string();
    Some(Ok(Item::Trajectory {
        about,
        transcript: Box::new(transcript),
    }))
}
