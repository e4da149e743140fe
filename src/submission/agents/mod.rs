//! What third-party agents write, turned into submissions ([`Ingested`], each with what was
//! [`Submitted`], if anything): SWE-bench predictions, SWE-agent and mini-swe-agent runs, OpenHands
//! `output.jsonl`, AweAgent runs, Claude Code and Codex transcripts in every shape they are written
//! in (trajectory.rs, claude_code.rs, codex.rs; paired with captured diffs, since they carry no
//! patch, or replayed by `replay`), Harbor job directories and trajectory releases.
//!
//! Every reader keeps going after a bad record and reports it with its file and line; a run with
//! nothing recognisable says which formats were tried and why each did not match, and a format
//! given on the command line is checked against the content.
//!
//! Files:
//! - `aider.rs`: Aider's chat history (`.aider.chat.history.md`): Markdown, one session after
//!   another, each starting `# aider chat started at <time>`.
//! - `apply_patch.rs`: Codex's `apply_patch` envelope: parsing it, and applying its update chunks
//!   to a file's text the way Codex does, so a replay produces the file Codex wrote.
//! - `atif.rs`: Harbor's ATIF trajectories (`schema_version`, `agent`, `steps`), as Harbor's own
//!   agents write them to `agent/trajectory.json` and as a release line carries them.
//! - `aweagent.rs`: AweAgent (the official BeyondSWE harness).
//! - `claude_code.rs`: Claude Code's three shapes, which share one message format.
//! - `code_mode.rs`: Codex's code mode: the model writes a JavaScript program (an `exec` call) and
//!   the tool calls are the program's `tools.NAME(ARGUMENT)` calls.
//! - `codex.rs`: Codex's three shapes.
//! - `folder.rs`: A folder of agent output, walked once for detection, every reader and the
//!   account of its files.
//! - `gemini.rs`: Gemini CLI's chat recordings
//!   (`~/.gemini/tmp/<project_hash>/chats/session-*.json`).
//! - `harbor_job.rs`: Harbor job directories: one trial directory per attempt.
//! - `mini_swe_agent.rs`: mini-swe-agent: its runs are laid out as SWE-agent's
//!   (`<id>/<id>.traj.json`, `preds.json`; read by `swe_agent.rs`), and its steps are chat
//!   `messages`.
//! - `openhands.rs`: OpenHands: its evaluation output (`output.jsonl`, the patch in
//!   `test_result.git_patch`, the events in `history`) and its event streams (a JSON list of
//!   actions and observations, no patch), detected, read into submissions, and their steps read.
//! - `reading.rs`: Reading a transcript record by record into a `Trajectory`.
//! - `release.rs`: Trajectory releases, one JSON line per trial: each line a submission, for
//!   `ingest`, `verify` and the audit alike.
//! - `swe_agent.rs`: SWE-agent (0.x, its EnIGMA mode, and 1.x) and its sibling mini-swe-agent share
//!   a run's layout.
//! - `trajectories.rs`: The trajectories a path holds, each read by its agent's reader and handed
//!   over one at a time (`for_each_item`).
//! - `trajectory.rs`: One agent's trajectory, whichever agent wrote it and in whichever shape, as
//!   the rest of the tool needs it.
//! - `unsupported.rs`: Agents whose output is recognised but not read.

mod aider;
mod apply_patch;
pub mod atif;
pub mod aweagent;
mod claude_code;
mod code_mode;
mod codex;
mod folder;
mod gemini;
mod harbor_job;
pub mod mini_swe_agent;
pub mod openhands;
mod reading;
pub mod release;
pub mod swe_agent;
mod trajectories;
mod trajectory;
mod unsupported;

pub use apply_patch::apply_chunks;
pub use folder::Folder;
pub use openhands::{is_openhands_events, openhands_events};
pub use reading::{
    TrajectoryBuilder, classify_record, is_codex_child_rollout, is_subagent_file, read_transcript,
    read_transcript_files, read_transcript_files_as, read_transcripts, read_transcripts_as,
    shape_of, sniff, transcript_from_values,
};
pub use trajectories::{About, Item, SourceError, for_each_item, line_item, read_line};
pub use trajectory::{
    Action, ActionKind, Agent, Chunk, EditOp, EditOutcome, FileEdit, OpaqueEdit, StepCounts,
    SubAgentLink, Trajectory, TrajectoryShape, TranscriptError, Unread, shell_join,
};
pub use unsupported::{unsupported_file, unsupported_in};

use super::Submitted;
use super::predictions::{PredictionsRead, read_predictions_keeping_going};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The kinds of agent output [`ingest`] reads (`--format`, detected by [`detect`] when not
/// given).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentFormat {
    /// SWE-bench-style predictions (`instance_id`, `model_name_or_path`, `model_patch`) as JSONL,
    /// a JSON list or a JSON object keyed by instance id.
    Predictions,
    /// A SWE-agent run: `*.traj` trajectories (`info.submission`), with `preds.json`.
    SweAgent,
    /// A mini-swe-agent run: `*.traj.json` trajectories (`info.submission`), with `preds.json`.
    MiniSweAgent,
    /// OpenHands `output.jsonl` (`test_result.git_patch`).
    Openhands,
    /// Claude Code transcripts, one per instance and named after it, paired with captured diffs.
    ClaudeCode,
    /// Codex CLI transcripts, one per instance and named after it, paired with captured diffs.
    Codex,
    /// Gemini CLI chat recordings, one per instance and named after it, paired with captured
    /// diffs.
    GeminiCli,
    /// Aider chat histories (`.aider.chat.history.md`, or `<instance_id>.md`), paired with
    /// captured diffs.
    Aider,
    /// An AweAgent run: `trajectories.jsonl` (`patch`, `score`) and `run_config.json`.
    Aweagent,
    /// A Harbor job directory: one trial directory per attempt (`result.json`, the collected
    /// patch).
    HarborJob,
    /// ATIF trajectories as Harbor's agents write them (`agent/trajectory.json`), one per
    /// instance and named after it (or one file with `--instance`), paired with captured diffs.
    Atif,
    /// A trajectory release: one JSON line per trial (`release from-harbor`, published
    /// trajectory sets), its patch as `patch` or `patch_base64`.
    Release,
}

impl AgentFormat {
    /// Every format, for the command line's choices.
    pub const ALL: [AgentFormat; 12] = [
        AgentFormat::Predictions,
        AgentFormat::SweAgent,
        AgentFormat::MiniSweAgent,
        AgentFormat::Openhands,
        AgentFormat::ClaudeCode,
        AgentFormat::Codex,
        AgentFormat::GeminiCli,
        AgentFormat::Aider,
        AgentFormat::Aweagent,
        AgentFormat::HarborJob,
        AgentFormat::Atif,
        AgentFormat::Release,
    ];

    /// The format's kebab-case name, as `--format` takes it and JSON writes it.
    pub fn name(self) -> &'static str {
        match self {
            AgentFormat::Predictions => "predictions",
            AgentFormat::SweAgent => "swe-agent",
            AgentFormat::MiniSweAgent => "mini-swe-agent",
            AgentFormat::Openhands => "openhands",
            AgentFormat::ClaudeCode => "claude-code",
            AgentFormat::Codex => "codex",
            AgentFormat::GeminiCli => "gemini-cli",
            AgentFormat::Aider => "aider",
            AgentFormat::Aweagent => "aweagent",
            AgentFormat::HarborJob => "harbor-job",
            AgentFormat::Atif => "atif",
            AgentFormat::Release => "release",
        }
    }

    /// The agent whose transcripts this format reads, one file per instance (`None` for the
    /// formats that are not transcripts), and back ([`AgentFormat::of_transcript`]): the one
    /// pairing of the two enums.
    pub fn transcript_agent(self) -> Option<Agent> {
        match self {
            AgentFormat::ClaudeCode => Some(Agent::ClaudeCode),
            AgentFormat::Codex => Some(Agent::Codex),
            AgentFormat::GeminiCli => Some(Agent::GeminiCli),
            AgentFormat::Aider => Some(Agent::Aider),
            AgentFormat::Atif => Some(Agent::Harbor),
            _ => None,
        }
    }

    /// The transcript format that reads `agent`'s transcripts, if one does.
    pub fn of_transcript(agent: Agent) -> Option<AgentFormat> {
        Self::ALL
            .into_iter()
            .find(|f| f.transcript_agent() == Some(agent))
    }
}

/// One submission found in an agent's output.
#[derive(Debug, Clone, PartialEq)]
pub struct Ingested {
    /// The instance, as the output names it (for a Harbor job, the task's name).
    pub instance_id: String,
    /// 1-based attempt number: repeated records for one instance become further attempts.
    pub attempt: u32,
    /// The model or agent as the output names it; empty when it names none.
    pub model: String,
    /// What the agent submitted: a patch, or (predictions' `model_repo`) a Doc2Repo
    /// repository; `None`: a transcript without a patch (nothing to grade).
    pub submitted: Option<Submitted>,
    /// The format it was read as.
    pub format: AgentFormat,
    /// `file`, `file:line`, or a trial directory.
    pub source: String,
    /// The reward the harness recorded (Harbor), to compare with ours.
    pub reward: Option<f64>,
    /// A remark for a person: the agent's exit status or error, a CRLF fix, why there is no
    /// patch, how the patch was reconstructed; `None` when there is none.
    pub note: Option<String>,
    /// The agent's raw transcript: every file it was read from, in reading order (the session,
    /// then its sub-agents'), for replaying its edits.
    pub transcript: Vec<PathBuf>,
    /// The patch was rebuilt by replaying the transcript's edits, not captured.
    pub reconstructed: bool,
    /// The steps read of its trajectory, counted, by the reader the audit reads them with;
    /// `None` where the output carries no steps (predictions) or they were not read.
    pub steps: Option<StepCounts>,
}

/// How to read an agent's output.
#[derive(Debug, Clone, Default)]
pub struct IngestOptions {
    /// The format (detected when `None`; checked against the content when given).
    pub format: Option<AgentFormat>,
    /// Captured diffs named `<instance_id>.diff` or `.patch` (default: `patches/` beside the
    /// transcripts).
    pub patches: Option<PathBuf>,
    /// The instance a single transcript file is about (else its file name says).
    pub instance: Option<String>,
    /// The largest patch file read (captured diffs, Harbor trial artifacts); `None`:
    /// [`DEFAULT_MAX_PATCH_BYTES`](crate::submission::DEFAULT_MAX_PATCH_BYTES), as `--patch`.
    pub max_patch_bytes: Option<u64>,
}

impl IngestOptions {
    /// The cap on a patch file's size that these options set.
    pub fn patch_cap(&self) -> u64 {
        self.max_patch_bytes
            .unwrap_or(crate::submission::DEFAULT_MAX_PATCH_BYTES)
    }
}

/// Everything read from one path, with the problems met on the way.
#[derive(Debug, Clone, Default)]
pub struct Ingest {
    /// Every submission found, with or without a patch.
    pub items: Vec<Ingested>,
    /// Bad records and missing pieces: each names its file (and line). Any makes the input
    /// faulty (the exit code says so).
    pub problems: Vec<String>,
    /// What is worth knowing but faults nothing (a model name the output does not give).
    pub warnings: Vec<String>,
    /// The format the path was read as; `None` only in an empty [`Ingest::default`].
    pub format: Option<AgentFormat>,
    /// Every file a reader read (or took as a whole's part), for the account of a folder.
    pub files_read: std::collections::BTreeSet<PathBuf>,
    /// Folders read as one thing (Harbor trials): every file under them is accounted for.
    pub dirs_read: Vec<PathBuf>,
    /// A folder's files, counted: `(read, not read)`; the ones not read are named in
    /// [`Ingest::warnings`] with why. `None` for a single file.
    pub files_counted: Option<(usize, usize)>,
}

impl Ingested {
    /// The submitted patch, when the submission is one.
    pub fn patch(&self) -> Option<&[u8]> {
        match &self.submitted {
            Some(Submitted::Patch(p)) => Some(p),
            _ => None,
        }
    }

    /// A first-attempt submission without a recorded reward.
    fn new(
        instance_id: String,
        model: String,
        patch: Option<Vec<u8>>,
        format: AgentFormat,
        source: String,
        note: Option<String>,
    ) -> Ingested {
        Ingested {
            instance_id,
            attempt: 1,
            model,
            submitted: patch.map(Submitted::Patch),
            format,
            source,
            reward: None,
            note,
            transcript: Vec::new(),
            reconstructed: false,
            steps: None,
        }
    }
}

impl Ingest {
    /// What reading an agent's output found, for a person: the format and counts, each problem, and
    /// the transcripts without a patch (with `known`, ids outside it are said to be unknown).
    pub fn describe(
        &self,
        path: &Path,
        known: Option<&std::collections::HashSet<String>>,
    ) -> Vec<String> {
        let format = self.format.map_or("?", AgentFormat::name);
        // An empty patch (a run that ended without submitting) is graded as `empty_patch`: it
        // is counted apart, not as a patch.
        let empty = |i: &&Ingested| match &i.submitted {
            Some(Submitted::Patch(p)) => p.iter().all(u8::is_ascii_whitespace),
            _ => false,
        };
        let empty_patches = self.items.iter().filter(empty).count();
        let with_patch =
            self.items.iter().filter(|i| i.submitted.is_some()).count() - empty_patches;
        let mut head = format!(
            "{}: {format}: {} submission(s), {with_patch} with a patch",
            path.display(),
            self.items.len()
        );
        if empty_patches > 0 {
            head.push_str(&format!(
                ", {empty_patches} with an empty one (graded as empty_patch)"
            ));
        }
        if let Some((read, unread)) = self.files_counted {
            head.push_str(&format!("; {} file(s): {read} read", read + unread));
            if unread > 0 {
                head.push_str(&format!(", {unread} not read (each named below)"));
            }
        }
        let mut lines = vec![head];
        lines.extend(
            self.problems
                .iter()
                .chain(&self.warnings)
                .map(|p| format!("warning: {p}")),
        );
        let missing = self.without_patch();
        if !missing.is_empty() {
            lines.push(format!(
                "{} instance(s) have a transcript but no patch (not graded):",
                missing.len()
            ));
            for i in missing {
                let note = i
                    .note
                    .as_ref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default();
                lines.push(format!("  {} ({}){note}", i.instance_id, i.source));
            }
        }
        if let Some(known) = known {
            let unknown: Vec<&str> = self
                .items
                .iter()
                .map(|i| i.instance_id.as_str())
                .filter(|id| !known.contains(*id))
                .collect();
            if !unknown.is_empty() {
                lines.push(format!(
                    "warning: not in the dataset: {}",
                    unknown.join(", ")
                ));
            }
        }
        lines
    }

    /// Instances that have a transcript but no patch.
    pub fn without_patch(&self) -> Vec<&Ingested> {
        self.items
            .iter()
            .filter(|i| i.submitted.is_none())
            .collect()
    }
}

/// Why an agent's output could not be read as a whole (a bad record is a problem in
/// [`Ingest::problems`] instead).
#[derive(Debug, Error)]
pub enum IngestError {
    /// A file or directory of the output could not be read.
    #[error(transparent)]
    Io(#[from] crate::errors::PathError),
    /// The path given does not exist.
    #[error("{path}: no such file or directory")]
    Missing {
        /// The path given.
        path: PathBuf,
    },
    /// No format matched the path (with no `--format` given).
    #[error("{path}: not a format beyondswe reads; tried:\n{tried}")]
    Unknown {
        /// The path given.
        path: PathBuf,
        /// Each format tried and why it did not match, one per line.
        tried: String,
    },
    /// The output is an agent's this tool recognises and does not read (Cline).
    #[error("{0}")]
    Unsupported(String),
    /// The output is of its format but unusable as a whole: a JSON file that is not JSON, a
    /// Harbor job without trial directories.
    #[error("{path}: {message}")]
    Bad {
        /// The file or directory.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The format given with `--format` does not match the content (checked for transcripts).
    #[error("{path}: expected {expected} (--format {format}), found {found}")]
    Mismatch {
        /// The path given.
        path: PathBuf,
        /// The format given, by name.
        format: &'static str,
        /// What that format's files look like.
        expected: String,
        /// What the path holds instead.
        found: String,
    },
    /// A single transcript file given could not be opened or read.
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
    /// Its message names the file (and line) already.
    #[error(transparent)]
    Predictions(#[from] crate::submission::predictions::PredictionsError),
    /// A patch file the output points to (a captured diff, a Harbor trial's patch) is not a
    /// regular file, is over the limit, or cannot be read.
    #[error(transparent)]
    Patch(#[from] crate::submission::SubmissionError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> IngestError + '_ {
    move |source| IngestError::Io(crate::errors::PathError::new(path.to_owned(), source))
}

/// A path that is not there is named as such, never as an unknown format.
fn exists(path: &Path) -> Result<(), IngestError> {
    match std::fs::symlink_metadata(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(IngestError::Missing {
            path: path.to_owned(),
        }),
        Err(source) => Err(IngestError::Io(crate::errors::PathError::new(
            path.to_owned(),
            source,
        ))),
    }
}

fn read_json(path: &Path) -> Result<Value, IngestError> {
    let text = crate::record::read_text_capped(path).map_err(io(path))?;
    serde_json::from_str(&text).map_err(|e| IngestError::Bad {
        path: path.to_owned(),
        message: format!("not valid JSON: {e}"),
    })
}

/// Each line of a JSONL file, one at a time (a file of agent output is never held whole), to
/// `f` with its number, read as every JSONL file is (`record::JsonLines`: a BOM, `\r` line
/// ends and blank lines taken in stride); a bad line is a problem (`file:line: why`), and
/// reading goes on; a line over the cap ends the file.
fn each_jsonl(
    path: &Path,
    ing: &mut Ingest,
    mut f: impl FnMut(&mut Ingest, usize, Value),
) -> Result<(), IngestError> {
    use crate::record::{JsonLines, JsonlError};
    let mut lines = match JsonLines::open(path) {
        Ok(lines) => lines,
        Err(JsonlError::Io(e)) => return Err(IngestError::Io(e)),
        Err(other) => {
            return Err(IngestError::Bad {
                path: path.to_owned(),
                message: other.to_string(),
            });
        }
    };
    while let Some(item) = lines.next_value() {
        match item {
            Ok((line, v)) => f(ing, line as usize, v),
            Err(JsonlError::Io(e)) => return Err(IngestError::Io(e)),
            Err(JsonlError::LineTooLong { line, .. }) => {
                ing.problems.push(format!(
                    "{}: {}",
                    path.display(),
                    crate::record::line_too_long_message(line)
                ));
                break;
            }
            Err(JsonlError::Syntax { line, message, .. }) => ing.problems.push(format!(
                "{}:{line}: skipped: not valid JSON ({message})",
                path.display()
            )),
            Err(other) => ing.problems.push(format!("{}: {other}", path.display())),
        }
    }
    Ok(())
}

fn first_line_json(path: &Path) -> Option<Value> {
    first_line_json_within(path, crate::record::max_line_bytes())
}

/// [`first_line_json`], the line read to at most `max` bytes.
fn first_line_json_within(path: &Path, max: usize) -> Option<Value> {
    let file = crate::files::open_input(path).ok()?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    loop {
        match crate::record::read_line_capped(&mut reader, &mut buf, max).ok()?? {
            0 => return None,
            _ if buf.iter().all(u8::is_ascii_whitespace) => continue,
            _ => {
                let line = buf.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&buf);
                return serde_json::from_slice(line).ok();
            }
        }
    }
}

/// The first record of a JSON-lines file that names its instance (`instance_id`, or a Harbor
/// task: `task_name`), read only as far as it: a line before the records (a log line, a header
/// object, a line that is not JSON) hides no agent's lines after it, as the audit reads them.
fn first_instance_record(path: &Path) -> Option<Value> {
    let mut lines = crate::record::JsonLines::open(path).ok()?;
    while let Some(item) = lines.next_value() {
        match item {
            Ok((_, v)) if v.get("instance_id").is_some() || v.get("task_name").is_some() => {
                return Some(v);
            }
            Ok(_) => {}
            Err(e) if e.line().is_some() => {}
            Err(_) => return None,
        }
    }
    None
}

/// The agent whose output a JSON-lines file is, one submission a line (a trajectory release,
/// OpenHands `output.jsonl`, AweAgent `trajectories.jsonl`), from its first record that names
/// an instance, whatever the file is called and whatever comes before that record.
fn lines_format(path: &Path) -> Option<AgentFormat> {
    record_format(&first_instance_record(path)?)
}

/// Whose line a record is, where one line is one submission: a trajectory release's (it names
/// a Harbor task), OpenHands output's (`test_result`), AweAgent's (`patch` with `trajectory` or
/// `stats`).
fn record_format(v: &Value) -> Option<AgentFormat> {
    if release::is_line(v) {
        Some(AgentFormat::Release)
    } else if v.get("test_result").is_some() {
        Some(AgentFormat::Openhands)
    } else if aweagent::is_file(Some(v)).0 {
        Some(AgentFormat::Aweagent)
    } else {
        None
    }
}

/// The value at `path` (object keys, in order) in `v`.
fn value_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    value_at(v, path)?.as_str()
}

/// [`detect`], for a folder every format it holds ([`dir_checks`]; a Harbor job is one thing).
fn detect_all(
    path: &Path,
    folder: Option<&Folder>,
) -> Result<(Vec<AgentFormat>, Detected), IngestError> {
    let Some(folder) = folder else {
        return detect_keeping(path, None).map(|(f, parsed)| (vec![f], parsed));
    };
    let checks = dir_checks(folder);
    let present: Vec<AgentFormat> = checks.iter().filter(|c| c.1).map(|c| c.0).collect();
    match present.first() {
        Some(AgentFormat::HarborJob) => Ok((vec![AgentFormat::HarborJob], Detected::default())),
        Some(_) => Ok((present, Detected::default())),
        None => {
            let mut tried = Tried::default();
            for (format, present, why) in checks {
                let _ = tried.check(format, present, why);
            }
            Err(not_read(path, Some(folder), tried))
        }
    }
}

/// Which format `path` is, with the reasons the others were ruled out.
pub fn detect(path: &Path) -> Result<AgentFormat, IngestError> {
    let folder = path.is_dir().then(|| Folder::walk(path));
    detect_keeping(path, folder.as_ref()).map(|(format, _)| format)
}

/// What detecting a file's format read of it, handed on to its reader so that nothing is read
/// twice to be told apart: a predictions file's parse, a transcript's shape.
#[derive(Default)]
struct Detected {
    predictions: Option<PredictionsRead>,
    shape: Option<TrajectoryShape>,
}

/// [`detect`], with what it read kept for the reader ([`Detected`]).
/// `folder` is `path`'s walk when it is a folder.
fn detect_keeping(
    path: &Path,
    folder: Option<&Folder>,
) -> Result<(AgentFormat, Detected), IngestError> {
    exists(path)?;
    let mut tried = Tried::default();
    let mut parsed = Detected::default();
    let found = match folder {
        Some(folder) => dir_format(folder, &mut tried),
        None => file_format(path, &mut tried, &mut parsed),
    };
    match found {
        ControlFlow::Break(format) => Ok((format, parsed)),
        ControlFlow::Continue(()) => Err(not_read(path, folder, tried)),
    }
}

/// Why nothing at `path` was read: an unsupported agent's output named as such, else every
/// format tried.
fn not_read(path: &Path, folder: Option<&Folder>, tried: Tried) -> IngestError {
    let unsupported = match folder {
        Some(folder) => unsupported_in(folder),
        None => unsupported_file(path).map(|w| format!("{}: {w}", path.display())),
    };
    match unsupported {
        Some(what) => IngestError::Unsupported(what),
        None => IngestError::Unknown {
            path: path.to_owned(),
            tried: tried.0.join("\n"),
        },
    }
}

/// The formats ruled out so far, each with why (`  format: why`).
#[derive(Default)]
struct Tried(Vec<String>);

impl Tried {
    /// `Break(format)` when the content is `format`; else notes why not and goes on.
    fn check(&mut self, format: AgentFormat, ok: bool, why: &str) -> ControlFlow<AgentFormat> {
        if ok {
            return ControlFlow::Break(format);
        }
        self.0.push(format!("  {}: {why}", format.name()));
        ControlFlow::Continue(())
    }
}

/// A directory's format, from the files in it, strongest markers first.
fn dir_format(folder: &Folder, tried: &mut Tried) -> ControlFlow<AgentFormat> {
    for (format, present, why) in dir_checks(folder) {
        tried.check(format, present, why)?;
    }
    ControlFlow::Continue(())
}

/// What a folder is checked for, in the order [`detect`] tries it: each format, whether the
/// folder holds it, and why not when it does not. `preds.json` beside SWE-agent or mini-swe-agent
/// trajectories is theirs, not predictions of their own.
fn dir_checks(folder: &Folder) -> Vec<(AgentFormat, bool, &'static str)> {
    let (harbor, harbor_why) = harbor_job::in_dir(folder.root());
    if harbor {
        // A job is read whole as one (every file under its trials is its own): nothing else in
        // it is sniffed to be told apart.
        return vec![(AgentFormat::HarborJob, harbor, harbor_why)];
    }
    let shapes: Vec<TrajectoryShape> = transcript_files(folder)
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    let agent = |a: Agent| shapes.iter().any(|s| s.agent() == a);
    let (mini, mini_why) = mini_swe_agent::in_dir(folder);
    let (swe, swe_why) = swe_agent::in_dir(folder);
    let (awe, awe_why) = aweagent::in_dir(folder);
    let (oh, oh_why) = openhands::in_dir(folder);
    let (rel, rel_why) = release::in_dir(folder);
    vec![
        (AgentFormat::HarborJob, harbor, harbor_why),
        (AgentFormat::MiniSweAgent, mini, mini_why),
        (AgentFormat::SweAgent, swe, swe_why),
        (AgentFormat::Aweagent, awe, awe_why),
        (AgentFormat::Openhands, oh, oh_why),
        (AgentFormat::Release, rel, rel_why),
        (
            AgentFormat::Codex,
            agent(Agent::Codex),
            "no Codex transcript (exec --json events, older exec events, session rollouts)",
        ),
        (
            AgentFormat::GeminiCli,
            agent(Agent::GeminiCli),
            "no Gemini CLI chat recording",
        ),
        (
            AgentFormat::Aider,
            agent(Agent::Aider),
            "no Aider chat history",
        ),
        (
            AgentFormat::Atif,
            agent(Agent::Harbor),
            "no ATIF trajectory (`schema_version` and `steps`)",
        ),
        (
            AgentFormat::ClaudeCode,
            agent(Agent::ClaudeCode),
            "no Claude Code transcript (stream-json, a result object, session files)",
        ),
        (
            AgentFormat::Predictions,
            !prediction_files(folder).is_empty(),
            "no predictions file (preds.json, all_preds.jsonl, *predictions*.jsonl, or JSONL \
             whose records carry `model_patch`) that no SWE-agent run owns",
        ),
    ]
}

/// A file's format, from its name and then its first records.
fn file_format(path: &Path, tried: &mut Tried, parsed: &mut Detected) -> ControlFlow<AgentFormat> {
    if mini_swe_agent::is_file(path) {
        return ControlFlow::Break(AgentFormat::MiniSweAgent);
    }
    if swe_agent::is_file(path) {
        return ControlFlow::Break(AgentFormat::SweAgent);
    }
    let first = first_line_json(path);
    // A first line that names no instance may stand before an agent's lines: the first record
    // that names one says whose they are (read after the transcripts are ruled out below).
    let keyed = first
        .as_ref()
        .is_some_and(|v| v.get("instance_id").is_some());
    tried.check(
        AgentFormat::Release,
        first.as_ref().is_some_and(release::is_line),
        release::NOT_A_LINE,
    )?;
    let (oh, oh_why) = openhands::is_file(path, first.as_ref());
    tried.check(AgentFormat::Openhands, oh, oh_why)?;
    let (awe, awe_why) = aweagent::is_file(first.as_ref());
    tried.check(AgentFormat::Aweagent, awe, awe_why)?;
    let sniffed = sniff(path);
    let shape = sniffed.as_ref().ok().copied().flatten();
    parsed.shape = shape;
    let found = match &sniffed {
        Ok(Some(s)) => s.describe().to_owned(),
        Err(e) => e.to_string(),
        Ok(None) => "no transcript record".to_owned(),
    };
    tried.check(
        AgentFormat::Codex,
        shape.is_some_and(|s| s.agent() == Agent::Codex),
        &format!("not a Codex transcript ({found})"),
    )?;
    tried.check(
        AgentFormat::GeminiCli,
        shape.is_some_and(|s| s.agent() == Agent::GeminiCli),
        &format!("not a Gemini CLI chat recording ({found})"),
    )?;
    tried.check(
        AgentFormat::Aider,
        shape.is_some_and(|s| s.agent() == Agent::Aider),
        &format!("not an Aider chat history ({found})"),
    )?;
    tried.check(
        AgentFormat::Atif,
        shape.is_some_and(|s| s.agent() == Agent::Harbor),
        &format!("not an ATIF trajectory ({found})"),
    )?;
    tried.check(
        AgentFormat::ClaudeCode,
        shape.is_some_and(|s| s.agent() == Agent::ClaudeCode),
        &format!("not a Claude Code transcript ({found})"),
    )?;
    if !keyed && let Some(format) = lines_format(path) {
        return ControlFlow::Break(format);
    }
    // Predictions when at least one entry is one (the others are reported when it is read).
    let preds = read_predictions_keeping_going(path);
    let why = match &preds {
        Ok(p) if p.predictions.is_empty() => match p.bad.first() {
            Some(e) => e.to_string(),
            None => "no prediction in it".to_owned(),
        },
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    };
    match preds {
        Ok(p) if !p.predictions.is_empty() => {
            // Handed on to the reader: a predictions file is parsed once.
            parsed.predictions = Some(p);
            ControlFlow::Break(AgentFormat::Predictions)
        }
        _ => tried.check(AgentFormat::Predictions, false, &why),
    }
}

/// The names a transcript file ends in (`.log`: a CLI's output sent to a file).
const TRANSCRIPT_SUFFIXES: [&str; 5] = [".jsonl", ".json", ".txt", ".md", ".log"];

/// A folder's transcript files (six levels down: rollouts sit in `sessions/YYYY/MM/DD/`), with
/// their shapes, in path order.
fn transcript_files(folder: &Folder) -> Vec<(PathBuf, TrajectoryShape)> {
    folder
        .files(folder::DEPTH)
        // A session's sub-agent files are read with the session.
        .filter(|e| !reading::is_subagent_file(e.path()))
        .filter(|e| {
            let name = e.name();
            TRANSCRIPT_SUFFIXES.iter().any(|s| name.ends_with(s))
                && !name.ends_with(".traj.json")
                && !name.ends_with(".meta.json")
        })
        .filter_map(|e| Some((e.path().to_owned(), e.shape()?)))
        .collect()
}

/// Whether a transcript's file name is the agent's own (a session id, a rollout, Harbor's log
/// names) rather than an instance id.
pub fn agent_file_name(stem: &str) -> bool {
    let uuid = stem.len() == 36
        && stem.chars().enumerate().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
    uuid || stem.starts_with("rollout-")
        || stem.starts_with("agent-")
        || matches!(stem, "claude-code" | "codex" | "stdout" | "trajectory")
}

/// The instance id a transcript file names: `<instance_id>.jsonl` (or `.json`, `.txt`).
pub fn instance_from_file_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    if name.starts_with(".aider") {
        // `.aider.chat.history.md` names no instance.
        return None;
    }
    let stem = TRANSCRIPT_SUFFIXES
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(&name);
    (!stem.is_empty() && !agent_file_name(stem)).then(|| stem.to_owned())
}

/// Reads `path` in `format` (detected when `None`). `patches` pairs transcripts with captured
/// diffs named `<instance_id>.diff` or `.patch` (default: `patches/` beside the transcripts).
pub fn ingest(
    path: &Path,
    format: Option<AgentFormat>,
    patches: Option<&Path>,
) -> Result<Ingest, IngestError> {
    ingest_with(
        path,
        &IngestOptions {
            format,
            patches: patches.map(Path::to_owned),
            ..IngestOptions::default()
        },
    )
}

/// The transcript format a file sniffs as, if any (no predictions parse).
fn transcript_format(path: &Path) -> Option<AgentFormat> {
    AgentFormat::of_transcript(sniff(path).ok()??.agent())
}

fn is_transcript_format(f: AgentFormat) -> bool {
    f.transcript_agent().is_some()
}

/// Reads `path` as `opts` say.
pub fn ingest_with(path: &Path, opts: &IngestOptions) -> Result<Ingest, IngestError> {
    exists(path)?;
    // A folder is walked once, for detection, every reader and the account of its files.
    let folder = path.is_dir().then(|| Folder::walk(path));
    // A folder holding several agents' output is read whole, each part in its own format.
    let (formats, mut parsed) = match opts.format {
        Some(forced) => {
            // A format given by hand must match what is there (only a transcript's is checked,
            // so a predictions file is not parsed to be told apart).
            let detected = if is_transcript_format(forced) || path.is_dir() {
                detect_keeping(path, folder.as_ref()).ok()
            } else {
                transcript_format(path).map(|f| (f, Detected::default()))
            };
            let found = detected.as_ref().map(|(f, _)| *f);
            if let Some(found) = found
                && found != forced
                && (is_transcript_format(forced) || is_transcript_format(found))
            {
                let what = if path.is_file()
                    && let Ok(Some(shape)) = sniff(path)
                {
                    shape.describe().to_owned()
                } else {
                    format!("{} output", found.name())
                };
                return Err(IngestError::Mismatch {
                    path: path.to_owned(),
                    format: forced.name(),
                    expected: expected_of(forced),
                    found: what,
                });
            }
            // What detection read is handed on where it found the format given.
            let parsed = match detected {
                Some((f, parsed)) if f == forced => parsed,
                _ => Detected::default(),
            };
            (vec![forced], parsed)
        }
        None => detect_all(path, folder.as_ref())?,
    };
    let format = formats[0];
    let mut ing = Ingest {
        format: Some(format),
        ..Ingest::default()
    };
    if formats.len() > 1 {
        ing.warnings.push(format!(
            "{}: holds the output of several agents; each part is read in its own format: {}",
            path.display(),
            formats
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for &format in &formats {
        read_format(
            path,
            folder.as_ref(),
            format,
            &formats,
            opts,
            std::mem::take(&mut parsed),
            &mut ing,
        )?;
    }
    if let Some(folder) = &folder {
        account_for_files(folder, &mut ing);
    }
    number_repeats(&mut ing);
    for item in &mut ing.items {
        name_unknown_model(item, &mut ing.warnings);
        if let Some(Submitted::Patch(p)) = &mut item.submitted {
            let (fixed, changed) = crate::patch::normalize_transport(p);
            if changed {
                *p = fixed;
                item.note = Some(join_note(
                    item.note.take(),
                    "CRLF line endings of the whole patch normalised",
                ));
            }
        }
    }
    Ok(ing)
}

/// Names every file of a folder no reader read, with why, and counts them: a folder is read
/// whole. Version control's own files are not the output's.
fn account_for_files(folder: &Folder, ing: &mut Ingest) {
    let mut read = 0;
    let mut unread = Vec::new();
    for e in folder.entries() {
        let p = e.path();
        if ing.files_read.contains(p) || ing.dirs_read.iter().any(|d| p.starts_with(d)) {
            read += 1;
        } else {
            unread.push(p.to_owned());
        }
    }
    for p in &unread {
        // A file a reader already named (a transcript with no instance, a bad JSON file) is
        // not named twice.
        let shown = p.display().to_string();
        if !ing.problems.iter().any(|m| m.contains(&shown)) {
            ing.warnings
                .push(format!("{shown}: not read: {}", why_not_read(p)));
        }
    }
    ing.files_counted = Some((read, unread.len()));
}

/// Why a file of a folder was not read, for the account.
fn why_not_read(p: &Path) -> String {
    if let Some(what) = crate::files::not_regular(p) {
        return what;
    }
    if let Some(what) = unsupported_file(p) {
        return what;
    }
    if p.extension().is_some_and(|e| e == "diff" || e == "patch") {
        return "a captured diff whose instance has no transcript here".into();
    }
    match sniff(p) {
        Ok(Some(shape)) => format!(
            "{}, but the file name does not say which instance it is about (name it <instance_id>{})",
            shape.describe(),
            p.extension()
                .map(|e| format!(".{}", e.to_string_lossy()))
                .unwrap_or_default()
        ),
        _ => "not an agent's output, a predictions file or a captured diff this tool reads".into(),
    }
}

/// Reads `path` in one format into `ing`; `all`: every format it is read in (a transcript of
/// another of them is that format's, not a problem of this one's).
/// `folder` is `path`'s walk when it is a folder.
fn read_format(
    path: &Path,
    folder: Option<&Folder>,
    format: AgentFormat,
    all: &[AgentFormat],
    opts: &IngestOptions,
    parsed: Detected,
    ing: &mut Ingest,
) -> Result<(), IngestError> {
    match format {
        AgentFormat::Predictions => predictions(path, folder, parsed.predictions, ing)?,
        AgentFormat::SweAgent => {
            swe_agent::ingest(path, folder, ".traj", format, opts.instance.as_deref(), ing)?
        }
        AgentFormat::MiniSweAgent => {
            mini_swe_agent::ingest(path, folder, opts.instance.as_deref(), ing)?
        }
        AgentFormat::Openhands => openhands::ingest(path, folder, ing)?,
        AgentFormat::Aweagent => aweagent::ingest(path, folder, ing)?,
        AgentFormat::Release => release::ingest(path, folder, ing)?,
        AgentFormat::ClaudeCode
        | AgentFormat::Codex
        | AgentFormat::GeminiCli
        | AgentFormat::Aider
        | AgentFormat::Atif => {
            if let Some(agent) = format.transcript_agent() {
                transcripts(path, folder, format, agent, all, opts, parsed.shape, ing)?
            }
        }
        AgentFormat::HarborJob => harbor_job::ingest(path, opts.patch_cap(), ing)?,
    }
    Ok(())
}

/// Repeated records for one instance (repeated runs written into one output) become further
/// attempts; an exact repeat of a submission is dropped. Both are reported. Harbor jobs and
/// releases number their own attempts; predictions files refuse duplicates outright.
fn number_repeats(ing: &mut Ingest) {
    // Per instance and model (one run's repeats; two agents' equal patches are two
    // submissions): each kept submission's patch and where it came from.
    type Seen = Vec<(Option<Submitted>, String)>;
    let mut seen: BTreeMap<(String, String), Seen> = BTreeMap::new();
    let mut kept = Vec::new();
    for mut item in std::mem::take(&mut ing.items) {
        if matches!(
            item.format,
            AgentFormat::HarborJob | AgentFormat::Predictions | AgentFormat::Release
        ) {
            kept.push(item);
            continue;
        }
        let earlier = seen
            .entry((item.instance_id.clone(), item.model.clone()))
            .or_default();
        // Two transcripts without a patch are two runs, not a repeat.
        if let Some((_, first)) = earlier
            .iter()
            .find(|(p, _)| p.is_some() && *p == item.submitted)
        {
            ing.problems.push(format!(
                "{}: the same submission for `{}` as {first}; dropped",
                item.source, item.instance_id
            ));
            continue;
        }
        if let Some((_, first)) = earlier.first() {
            ing.problems.push(format!(
                "{}: another submission for `{}` (first at {first}): graded as attempt {}",
                item.source,
                item.instance_id,
                earlier.len() + 1
            ));
        }
        item.attempt = earlier.len() as u32 + 1;
        earlier.push((item.submitted.clone(), item.source.clone()));
        kept.push(item);
    }
    ing.items = kept;
}

/// The bytes of a patch file an agent left, if there is one, read with the same checks as
/// `--patch`: a regular file, at most `max_bytes`.
fn read_optional(path: Option<&PathBuf>, max_bytes: u64) -> Result<Option<Vec<u8>>, IngestError> {
    path.map(|p| crate::submission::read_patch(p, max_bytes))
        .transpose()
        .map_err(IngestError::from)
}

fn join_note(old: Option<String>, new: &str) -> String {
    match old {
        Some(o) => format!("{o}; {new}"),
        None => new.to_owned(),
    }
}

/// Predictions: one file (`parsed` when detection parsed it already), or every predictions file
/// of a folder ([`prediction_files`]).
fn predictions(
    path: &Path,
    folder: Option<&Folder>,
    mut parsed: Option<PredictionsRead>,
    ing: &mut Ingest,
) -> Result<(), IngestError> {
    let files = match folder {
        Some(folder) => prediction_files(folder),
        None => vec![path.to_owned()],
    };
    for file in files {
        let read = match parsed.take() {
            Some(read) => read,
            None => read_predictions_keeping_going(&file)?,
        };
        ing.files_read.insert(file);
        ing.problems
            .extend(read.bad.iter().map(|e| format!("skipped: {e}")));
        for p in read.predictions {
            ing.items.push(Ingested {
                instance_id: p.instance_id,
                attempt: p.attempt,
                model: p.model,
                submitted: Some(p.submitted),
                format: AgentFormat::Predictions,
                source: p.location,
                reward: p.reward,
                note: None,
                transcript: Vec::new(),
                reconstructed: false,
                steps: None,
            });
        }
    }
    Ok(())
}

/// The predictions files of a folder (five levels down) that no SWE-agent or mini-swe-agent
/// run owns: `preds.json`, `all_preds.jsonl` (a leaderboard submission's), and any `.json` or
/// `.jsonl` whose name says predictions or whose first record carries a `model_patch` or
/// `model_repo` (OpenHands' `output.swebench.jsonl`).
fn prediction_files(folder: &Folder) -> Vec<PathBuf> {
    let owned = swe_agent::owned_preds(folder);
    folder
        .files(swe_agent::DEPTH)
        // An agent's lines of submissions under a predictions name are that agent's output.
        .filter(|e| e.lines_format().is_none())
        .map(|e| e.path())
        .filter(|p| !owned.contains(*p) && is_predictions_file(p))
        .map(Path::to_owned)
        .collect()
}

/// Whether a file is SWE-bench-style predictions, by its name or its first record.
fn is_predictions_file(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if !(name.ends_with(".json") || name.ends_with(".jsonl")) || name.ends_with(".traj.json") {
        return false;
    }
    if name.contains("preds") || name.contains("predictions") {
        return true;
    }
    name.ends_with(".jsonl")
        && first_line_json(p).is_some_and(|v| {
            v.get("instance_id").is_some()
                && (v.get("model_patch").is_some() || v.get("model_repo").is_some())
        })
}

/// A submission that names no model is recorded as `<agent>/unknown`, with a warning (not a
/// fault of the input): every prediction carries a model name, and runs keep one model each.
fn name_unknown_model(item: &mut Ingested, warnings: &mut Vec<String>) {
    if item.model.trim().is_empty() {
        item.model = format!("{}/unknown", item.format.name());
        warnings.push(format!(
            "{}: {}: no model name in the output or its preds.json; recorded as `{}`",
            item.source, item.instance_id, item.model
        ));
    }
}

/// The directory a single file was given in.
fn parent_dir(path: &Path) -> PathBuf {
    path.parent().unwrap_or(Path::new(".")).to_owned()
}

/// A JSONL line's `instance_id`; a line without one is a problem, named by `source`, and skipped.
fn instance_id<'v>(v: &'v Value, source: &str, problems: &mut Vec<String>) -> Option<&'v str> {
    let id = v.get("instance_id").and_then(Value::as_str);
    if id.is_none() {
        problems.push(format!("{source}: no instance_id; skipped"));
    }
    id
}

fn expected_of(format: AgentFormat) -> String {
    match format.transcript_agent() {
        Some(agent) => agent.shapes().to_owned(),
        None => format!("{} output", format.name()),
    }
}

/// Claude Code and Codex transcripts, `<instance_id>.json(l)` in any of the agents' shapes,
/// paired with `<id>.diff`/`.patch` when one was captured.
#[allow(clippy::too_many_arguments)]
fn transcripts(
    path: &Path,
    folder: Option<&Folder>,
    format: AgentFormat,
    agent: Agent,
    all: &[AgentFormat],
    opts: &IngestOptions,
    detected: Option<TrajectoryShape>,
    ing: &mut Ingest,
) -> Result<(), IngestError> {
    let (dir, files) = if let Some(folder) = folder {
        (
            path.to_owned(),
            agent_transcripts(folder, format, agent, all, ing)?,
        )
    } else {
        // The shape detection found, else (a format given by hand) the file's own.
        let shape = match detected {
            Some(shape) => Some(shape),
            None => sniff(path)?,
        };
        match shape {
            Some(shape) if shape.agent() == agent => {
                (parent_dir(path), vec![(path.to_owned(), shape)])
            }
            other => {
                return Err(IngestError::Mismatch {
                    path: path.to_owned(),
                    format: format.name(),
                    expected: agent.shapes().to_owned(),
                    found: other
                        .map(|s| s.describe().to_owned())
                        .unwrap_or_else(|| "no record of either agent's shapes".into()),
                });
            }
        }
    };
    // `--instance` names the one transcript given, or a folder's one of any agent (sub-agents'
    // rollouts aside), as the audit takes it.
    let single = match folder {
        Some(folder) => {
            transcript_files(folder)
                .iter()
                .filter(|(f, _)| !is_codex_child_rollout(f))
                .count()
                == 1
        }
        None => files.len() == 1,
    };
    // Codex sub-agents' rollouts last: one a rollout read with its own is not read again; one
    // that no rollout read (its claim to be a sub-agent's is only its own) is read on its own.
    let (children, mut files): (Vec<_>, Vec<_>) = files
        .into_iter()
        .partition(|(f, _)| path.is_dir() && is_codex_child_rollout(f));
    files.extend(children);
    for (file, shape) in files {
        if ing.files_read.contains(&file) {
            continue;
        }
        // `--patches`, else `patches/` beside the transcript, else beside the folder given.
        let patch_dir = opts.patches.clone().unwrap_or_else(|| {
            let beside = parent_dir(&file).join("patches");
            if beside.is_dir() {
                beside
            } else {
                dir.join("patches")
            }
        });
        let id = match (&opts.instance, single) {
            (Some(id), true) => Some(id.clone()),
            _ => instance_from_file_name(&file),
        };
        let Some(id) = id else {
            ing.problems.push(format!(
                "{}: the file name does not say which instance this transcript is about (name it <instance_id>.jsonl, or pass --instance for one transcript); skipped",
                file.display()
            ));
            continue;
        };
        transcript_item(file, shape, id, format, &patch_dir, opts.patch_cap(), ing)?;
    }
    Ok(())
}

/// The transcripts of `agent` in a directory; the other agent's are skipped as problems.
fn agent_transcripts(
    folder: &Folder,
    format: AgentFormat,
    agent: Agent,
    all: &[AgentFormat],
    ing: &mut Ingest,
) -> Result<Vec<(PathBuf, TrajectoryShape)>, IngestError> {
    let mut files = Vec::new();
    for (p, shape) in transcript_files(folder) {
        if shape.agent() == agent {
            files.push((p, shape));
        } else if AgentFormat::of_transcript(shape.agent()).is_some_and(|f| all.contains(&f)) {
            // Read in its own format.
        } else {
            ing.problems.push(format!(
                "{}: {}, not {}; skipped",
                p.display(),
                shape.describe(),
                agent.shapes()
            ));
        }
    }
    if files.is_empty() {
        return Err(IngestError::Mismatch {
            path: folder.root().to_owned(),
            format: format.name(),
            expected: agent.shapes().to_owned(),
            found: "no such file in the directory".into(),
        });
    }
    Ok(files)
}

/// One transcript about instance `id`, with the captured diff from `patch_dir` when there is one
/// (at most `max_patch` bytes); a transcript that cannot be read, and calls in it that could not,
/// are problems.
fn transcript_item(
    file: PathBuf,
    shape: TrajectoryShape,
    id: String,
    format: AgentFormat,
    patch_dir: &Path,
    max_patch: u64,
    ing: &mut Ingest,
) -> Result<(), IngestError> {
    let (t, read) = match read_transcript_files_as(&file, shape) {
        Ok(r) => r,
        Err(e) => {
            ing.problems.push(format!("{e}; skipped"));
            return Ok(());
        }
    };
    for u in &t.unread {
        ing.problems.push(format!(
            "{}:{}: {} call not read: {}",
            file.display(),
            u.step,
            u.tool,
            u.why
        ));
    }
    let diff = ["diff", "patch"]
        .iter()
        .map(|ext| patch_dir.join(format!("{id}.{ext}")))
        .find(|p| crate::files::is_own_file(p));
    let patch = read_optional(diff.as_ref(), max_patch)?;
    let counts = t.counts();
    let summary = counts.to_string();
    let note = match &diff {
        Some(p) => format!("{summary}; patch from {}", p.display()),
        None => format!(
            "{summary}; transcript only: no {}/<id>.diff (capture one with `beyondswe capture WORKSPACE --base COMMIT`, or replay the edits with `ingest --reconstruct --dataset`)",
            patch_dir.display()
        ),
    };
    let mut item = Ingested::new(
        id,
        t.model_name(),
        patch,
        format,
        file.display().to_string(),
        Some(note),
    );
    ing.files_read.extend(read.iter().cloned());
    ing.files_read.extend(diff);
    // Every file the transcript was read from (its sub-agents' too): a replay reads them
    // together, as here, or a sub-agent's steps would be missing from it.
    item.transcript = read;
    item.steps = Some(counts);
    ing.items.push(item);
    Ok(())
}

#[cfg(test)]
mod detection_tests {
    use super::reading::SNIFFS;
    use super::*;

    fn fixture(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/agents")
            .join(rel)
    }

    /// Sniffs made by `f` on this thread.
    fn sniffs(f: impl FnOnce()) -> usize {
        SNIFFS.with(|n| n.set(0));
        f();
        SNIFFS.with(|n| n.get())
    }

    fn ingested(path: &Path, opts: &IngestOptions) -> usize {
        let ing = ingest_with(path, opts).expect("read");
        assert!(!ing.items.is_empty(), "{ing:?}");
        ing.items.len()
    }

    /// Detection reads a transcript's first records once, and its reader takes the shape it
    /// found: a file alone (detected, or its format given) and a folder's files, by ingest and
    /// by the audit's walk alike; a Harbor job's files are not sniffed to tell it apart. (A file
    /// alone was sniffed three times by ingest, twice by the audit; a job's every JSON file once.)
    #[test]
    fn a_transcript_is_sniffed_once_whatever_reads_it() {
        let rollout = fixture("codex/acme_calc_pr7.jsonl");
        assert_eq!(
            sniffs(|| assert_eq!(ingested(&rollout, &IngestOptions::default()), 1)),
            1
        );
        let forced = IngestOptions {
            format: Some(AgentFormat::Codex),
            ..IngestOptions::default()
        };
        assert_eq!(sniffs(|| assert_eq!(ingested(&rollout, &forced), 1)), 1);
        let folder = fixture("claude-code");
        let files = Folder::walk(&folder)
            .files(folder::DEPTH)
            .filter(|e| {
                e.path()
                    .extension()
                    .is_some_and(|x| x == "json" || x == "jsonl")
            })
            .count();
        assert_eq!(
            sniffs(|| assert_eq!(ingested(&folder, &IngestOptions::default()), 2)),
            files
        );
        // A Harbor job is detected as one before anything in it is sniffed; its trials here
        // left ATIF trajectories, no raw log, so nothing is.
        let job = fixture("harbor-job");
        assert_eq!(
            sniffs(|| assert_eq!(ingested(&job, &IngestOptions::default()), 4)),
            0
        );
        assert_eq!(
            sniffs(|| {
                let mut n = 0;
                for_each_item(&rollout, None, |_, item| {
                    assert!(item.is_ok());
                    n += 1;
                })
                .expect("audited");
                assert_eq!(n, 1);
            }),
            1
        );
    }
}
