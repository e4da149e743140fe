//! Reading a transcript record by record into a [`Trajectory`]: the reader for its agent
//! (Claude Code, Codex, Gemini CLI; Aider's Markdown read whole) chosen from its shape, whole
//! files sniffed and fed line by line. A record's shape is told by the agents' own markers
//! (each agent's file holds its own), asked here in order ([`classify_record`], [`shape_of`]).

use super::trajectory::{Agent, Trajectory, TrajectoryShape, TranscriptError};
use serde_json::Value;

use std::path::{Path, PathBuf};

/// Which agent a single record belongs to and in which shape, when it says so: each agent's
/// file holds its own markers, asked in this order (a Gemini CLI recording has `sessionId`
/// too, which alone would read as Claude Code's; a Codex rollout's lines, as Claude Code's).
pub fn classify_record(v: &Value) -> Option<TrajectoryShape> {
    let obj = v.as_object()?;
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
    super::gemini::record_shape(obj)
        .or_else(|| super::codex::record_shape(obj, ty))
        .or_else(|| super::claude_code::record_shape(obj, ty))
}

/// The shape of a transcript from its first records (`None`: not a transcript).
pub fn shape_of<'a>(records: impl IntoIterator<Item = &'a Value>) -> Option<TrajectoryShape> {
    let mut seen: Vec<TrajectoryShape> = Vec::new();
    let mut prologue = false;
    for v in records.into_iter().take(200) {
        if super::codex::legacy_prologue(v) {
            prologue = true;
            continue;
        }
        if let Some(s) = classify_record(v) {
            seen.push(s);
        }
    }
    // The strongest marker wins: rollouts, item events and sessions all contain lines that alone
    // would read as something else.
    for s in [
        TrajectoryShape::GeminiChat,
        TrajectoryShape::CodexRollout,
        TrajectoryShape::CodexExec,
        TrajectoryShape::CodexExecLegacy,
        TrajectoryShape::ClaudeSession,
        TrajectoryShape::ClaudeStreamJson,
    ] {
        if seen.contains(&s) {
            return Some(s);
        }
    }
    if seen.contains(&TrajectoryShape::ClaudeResult) {
        // One result object is the `--output-format json` file; a result after messages ends a
        // stream.
        return Some(if seen.len() == 1 {
            TrajectoryShape::ClaudeResult
        } else {
            TrajectoryShape::ClaudeStreamJson
        });
    }
    prologue.then_some(TrajectoryShape::CodexExecLegacy)
}

/// Reads transcript records one at a time.
#[derive(Debug)]
pub struct TrajectoryBuilder {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Claude(super::claude_code::ClaudeReader),
    Codex(super::codex::CodexReader),
    Gemini(super::gemini::GeminiReader),
    /// Read whole, not record by record: Aider's Markdown history ([`read_transcripts`]), and the
    /// one-document trajectories of the other agents (their own files' readers); records add
    /// nothing.
    Whole(Trajectory),
}

impl TrajectoryBuilder {
    /// A reader for a transcript of this shape.
    pub fn new(shape: TrajectoryShape) -> TrajectoryBuilder {
        TrajectoryBuilder {
            inner: match shape.agent() {
                Agent::ClaudeCode => Inner::Claude(super::claude_code::ClaudeReader::new(shape)),
                Agent::Codex => Inner::Codex(super::codex::CodexReader::new(shape)),
                Agent::GeminiCli => Inner::Gemini(super::gemini::GeminiReader::new(shape)),
                Agent::Aider
                | Agent::SweAgent
                | Agent::MiniSweAgent
                | Agent::Openhands
                | Agent::Aweagent
                | Agent::Harbor => Inner::Whole(Trajectory::new(shape)),
            },
        }
    }

    /// One record, at `step` (its line, from 1).
    pub fn push(&mut self, step: usize, record: &Value) {
        match &mut self.inner {
            Inner::Claude(r) => r.push(step, record),
            Inner::Codex(r) => r.push(step, record),
            Inner::Gemini(r) => r.push(step, record),
            Inner::Whole(_) => {}
        }
    }

    /// A line that is not JSON: a record cut short is a call that could not be read; anything
    /// else (stderr interleaved with stdout) is counted as noise.
    pub fn bad_line(&mut self, step: usize, line: &[u8]) {
        let parts = self.parts();
        let trimmed = line.trim_ascii_start();
        if trimmed.starts_with(b"{") || trimmed.starts_with(b"[") {
            parts.unread(step, "?", "the line is not valid JSON (cut short?)");
        } else {
            parts.noise_lines += 1;
        }
    }

    /// The transcript as read so far.
    fn parts(&mut self) -> &mut Trajectory {
        match &mut self.inner {
            Inner::Claude(r) => r.parts(),
            Inner::Codex(r) => r.parts(),
            Inner::Gemini(r) => r.parts(),
            Inner::Whole(t) => t,
        }
    }

    /// The threads of sub-agents started so far whose own records were not pushed (Codex; none
    /// for the other agents, whose sub-agents are read from their session's own files).
    fn unread_threads(&self) -> Vec<String> {
        match &self.inner {
            Inner::Codex(r) => r.unread_threads(),
            _ => Vec::new(),
        }
    }

    /// The transcript read from the records pushed so far.
    pub fn finish(self) -> Trajectory {
        match self.inner {
            Inner::Claude(r) => r.finish(),
            Inner::Codex(r) => r.finish(),
            Inner::Gemini(r) => r.finish(),
            Inner::Whole(t) => t,
        }
    }
}

/// A transcript from records already in memory (a release line's inline transcript); steps are
/// indices from 1. `agent` narrows the detection (`messages` are Claude Code's, `events` Codex's).
pub fn transcript_from_values(values: &[Value], agent: Option<Agent>) -> Option<Trajectory> {
    let shape = match (shape_of(values), agent) {
        (Some(s), Some(a)) if s.agent() != a => return None,
        (Some(s), _) => s,
        (None, Some(Agent::ClaudeCode)) => TrajectoryShape::ClaudeStreamJson,
        (None, Some(Agent::Codex)) => TrajectoryShape::CodexExec,
        (None, Some(Agent::GeminiCli)) => TrajectoryShape::GeminiChat,
        (None, Some(_)) => return None,
        (None, None) => return None,
    };
    let mut b = TrajectoryBuilder::new(shape);
    for (i, v) in values.iter().enumerate() {
        b.push(i + 1, v);
    }
    Some(b.finish())
}

/// Whether `path` says it is a Codex sub-agent's rollout (`rollout-*.jsonl` whose first record is
/// a `session_meta` with `source: {"subagent": {"thread_spawn": …}}`). That is the file's own
/// claim: a folder reads such a file with the rollout that spawned it when one does, and on its
/// own otherwise, so a claim alone never hides a rollout's steps.
pub fn is_codex_child_rollout(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.starts_with("rollout-")
        && name.ends_with(".jsonl")
        && super::first_line_json_within(path, CHILD_META_MAX).is_some_and(|v| {
            super::value_at(&v, &["payload", "source", "subagent", "thread_spawn"]).is_some()
        })
}

/// The most read of a rollout's first line to tell a sub-agent's (its `session_meta`).
const CHILD_META_MAX: usize = 16 << 20;

/// Reads a transcript file: JSONL (one record a line), or one JSON value (a result object, or the
/// `--verbose` array of messages). Lines are read one at a time. A Claude Code session is read
/// with its sub-agents' files (`<session>/subagents/agent-*.jsonl` beside `<session>.jsonl`).
pub fn read_transcript(path: &Path) -> Result<Trajectory, TranscriptError> {
    read_transcript_files(path).map(|(t, _)| t)
}

/// [`read_transcript`], with every file it read (the transcript's, then its sub-agents').
pub fn read_transcript_files(path: &Path) -> Result<(Trajectory, Vec<PathBuf>), TranscriptError> {
    let shape = shape_or_refuse(path)?;
    read_transcript_files_as(path, shape)
}

/// [`read_transcript_files`] of a file whose shape detection already found: it is not sniffed
/// again.
pub fn read_transcript_files_as(
    path: &Path,
    shape: TrajectoryShape,
) -> Result<(Trajectory, Vec<PathBuf>), TranscriptError> {
    let mut paths = vec![path.to_owned()];
    paths.extend(subagent_files(path));
    if shape.agent() != Agent::Codex {
        return Ok((read_transcripts_as(&paths, shape)?, paths));
    }
    // A Codex rollout is read on with the rollouts of the sub-agents it started, when they are
    // found among the sessions beside it: each file once.
    let mut b = TrajectoryBuilder::new(shape);
    feed_all(&mut b, &paths, 0)?;
    let children = codex_child_rollouts(path, &b.unread_threads());
    feed_all(&mut b, &children, paths.len())?;
    paths.extend(children);
    Ok((b.finish(), paths))
}

/// The rollouts of the sub-agents a Codex rollout started and did not read: the files named
/// `rollout-…-<thread id>.jsonl` among its sessions (`sessions/YYYY/MM/DD/`, searched from
/// `sessions/` down when the rollout sits in such a tree, else its own folder).
fn codex_child_rollouts(path: &Path, ids: &[String]) -> Vec<PathBuf> {
    if ids.is_empty() {
        return Vec::new();
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let dated = dir.ancestors().take(3).all(|d| {
        d.file_name()
            .is_some_and(|n| n.to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
    });
    let root = if dated {
        dir.ancestors().nth(3).unwrap_or(dir)
    } else {
        dir
    };
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .max_depth(4)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(walkdir::DirEntry::into_path)
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            p != path
                && name.starts_with("rollout-")
                && ids.iter().any(|id| name.ends_with(&format!("-{id}.jsonl")))
        })
        .collect();
    out.sort();
    out
}

/// The sub-agents' files Claude Code keeps for session `<dir>/<id>.jsonl`: `<dir>/<id>/subagents/
/// *.jsonl`, in name order (none for other files).
pub(crate) fn subagent_files(session: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(stem)) = (session.parent(), session.file_stem()) else {
        return Vec::new();
    };
    if session.extension().is_none_or(|e| e != "jsonl") {
        return Vec::new();
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(stem).join("subagents"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| crate::files::is_own_file(p) && p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}

/// Whether `path` is a Claude Code session's sub-agent file (`<dir>/<id>/subagents/x.jsonl`
/// with `<dir>/<id>.jsonl`): it is always read with that session, so a folder walk skips it.
pub fn is_subagent_file(path: &Path) -> bool {
    let Some(sub) = path.parent() else {
        return false;
    };
    if sub.file_name().is_none_or(|n| n != "subagents") {
        return false;
    }
    let Some(session_dir) = sub.parent() else {
        return false;
    };
    let (Some(dir), Some(name)) = (session_dir.parent(), session_dir.file_name()) else {
        return false;
    };
    dir.join(format!("{}.jsonl", name.to_string_lossy()))
        .is_file()
}

/// Reads a transcript written across several files (a Claude Code session and its subagents'
/// files), in the order given; the shape comes from the first.
pub fn read_transcripts(paths: &[PathBuf]) -> Result<Trajectory, TranscriptError> {
    let first = paths.first().ok_or_else(no_file)?;
    read_transcripts_as(paths, shape_or_refuse(first)?)
}

/// A transcript of no file at all.
fn no_file() -> TranscriptError {
    TranscriptError::NotATranscript {
        path: PathBuf::new(),
        expected: "a transcript".into(),
        found: "no file".into(),
    }
}

/// The shape of a transcript file, or why it is none.
fn shape_or_refuse(path: &Path) -> Result<TrajectoryShape, TranscriptError> {
    sniff(path)?.ok_or_else(|| TranscriptError::NotATranscript {
        path: path.to_owned(),
        expected: "a Claude Code or Codex transcript".into(),
        found: "no record of either agent's shapes".into(),
    })
}

/// [`read_transcripts`] of files whose shape (the first's) detection already found.
pub fn read_transcripts_as(
    paths: &[PathBuf],
    shape: TrajectoryShape,
) -> Result<Trajectory, TranscriptError> {
    let first = paths.first().ok_or_else(no_file)?;
    if shape == TrajectoryShape::AiderHistory {
        let text = crate::record::read_text_capped(first).map_err(io(first))?;
        return Ok(super::aider::read_aider(&text));
    }
    if shape == TrajectoryShape::Atif {
        // One document (on one line or many), read whole by the ATIF reader.
        return match whole_document(first)? {
            Ok(v) => Ok(super::atif::read(&v)),
            Err((_, why)) => Err(TranscriptError::NotATranscript {
                path: first.clone(),
                expected: "an ATIF trajectory".into(),
                found: why,
            }),
        };
    }
    let mut b = TrajectoryBuilder::new(shape);
    feed_all(&mut b, paths, 0)?;
    Ok(b.finish())
}

/// Feeds `paths` to `b` in order, the transcript's own file first: every file after the first
/// (`first` is the index of `paths[0]` among all the transcript's files) is a sub-agent's.
fn feed_all(
    b: &mut TrajectoryBuilder,
    paths: &[PathBuf],
    first: usize,
) -> Result<(), TranscriptError> {
    for (i, path) in paths.iter().enumerate() {
        let before = b.parts().actions.len();
        feed(path, b)?;
        if first + i > 0 {
            for a in &mut b.parts().actions[before..] {
                a.sidechain = true;
            }
        }
    }
    Ok(())
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TranscriptError + '_ {
    move |source| TranscriptError::Io(crate::errors::PathError::new(path.to_owned(), source))
}

#[cfg(test)]
thread_local! {
    /// How often this thread sniffed a file (detection happens once per file).
    pub(crate) static SNIFFS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// The files this thread read whole into a transcript, in order.
    pub(crate) static FED: std::cell::RefCell<Vec<PathBuf>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The shape of a file from its first records, reading no more than needed.
pub fn sniff(path: &Path) -> Result<Option<TrajectoryShape>, TranscriptError> {
    #[cfg(test)]
    SNIFFS.with(|n| n.set(n.get() + 1));
    let file = crate::files::open_input_io(path).map_err(io(path))?;
    let mut reader = std::io::BufReader::new(file);
    {
        use std::io::BufRead;
        let head = reader.fill_buf().map_err(io(path))?;
        let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
        if super::aider::is_aider_history(&text) {
            return Ok(Some(TrajectoryShape::AiderHistory));
        }
    }
    let mut head: Vec<Value> = Vec::new();
    let mut first_is_json: Option<bool> = None;
    let mut first_text = Vec::new();
    let mut buf = Vec::new();
    let mut lines = 0;
    while lines < 200 {
        let n = crate::record::read_line_or_stop(&mut reader, &mut buf, lines as u64 + 1)
            .map_err(io(path))?;
        if n == 0 {
            break;
        }
        lines += 1;
        if first_text.len() < 8 * 1024 * 1024 {
            first_text.extend_from_slice(&buf);
        }
        let parsed = serde_json::from_slice::<Value>(strip_bom(&buf)).ok();
        if first_is_json.is_none() && !buf.iter().all(u8::is_ascii_whitespace) {
            first_is_json = Some(parsed.is_some());
        }
        head.extend(parsed);
    }
    // One pretty-printed JSON value (a byte-order mark before it is not part of it): no line is
    // a record, or its first line is none and the lines that parse alone (an inner object
    // written on a line of its own) make no transcript.
    if head.is_empty() || (first_is_json == Some(false) && shape_of(&head).is_none()) {
        return match whole_document(path)? {
            Ok(v) => Ok(match &v {
                Value::Array(items) => shape_of(items),
                other if super::atif::is_atif(other, true) => Some(TrajectoryShape::Atif),
                other => shape_of([other]),
            }),
            // JSON that cannot be read is said so, with why (nested deeper than the parser
            // goes, cut short); other text is simply not a transcript.
            Err((looks_like_json, why)) if looks_like_json => {
                Err(TranscriptError::NotATranscript {
                    path: path.to_owned(),
                    expected: "one JSON document".into(),
                    found: why,
                })
            }
            Err(_) => Ok(None),
        };
    }
    if head.len() == 1
        && let Value::Array(items) = &head[0]
    {
        return Ok(shape_of(items));
    }
    // Harbor's `agent/trajectory.json` written on one line.
    if head.len() == 1 && super::atif::is_atif(&head[0], true) {
        return Ok(Some(TrajectoryShape::Atif));
    }
    Ok(shape_of(&head))
}

/// A file read whole (within the line cap) as one JSON document, a leading byte-order mark
/// skipped; `Err((looks like JSON, why))` when it does not parse: nested deeper than the parser
/// goes (serde_json's 128 levels), cut short, or not JSON at all.
fn whole_document(path: &Path) -> Result<Result<Value, (bool, String)>, TranscriptError> {
    let text = crate::record::read_text_capped(path).map_err(io(path))?;
    let body = text.trim_start_matches('\u{feff}');
    let looks = body.trim_start().starts_with(['{', '[']);
    Ok(serde_json::from_str(body).map_err(|e| {
        let why = if e.to_string().contains("recursion limit") {
            format!("it nests deeper than the 128 levels a JSON document is read to ({e})")
        } else {
            format!("not valid JSON ({e})")
        };
        (looks, why)
    }))
}

fn strip_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line)
}

/// Pushes every record of `path` into `b`.
fn feed(path: &Path, b: &mut TrajectoryBuilder) -> Result<(), TranscriptError> {
    #[cfg(test)]
    FED.with(|f| f.borrow_mut().push(path.to_owned()));
    let file = crate::files::open_input_io(path).map_err(io(path))?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    let mut line = 0usize;
    let mut parsed_any = false;
    let mut pending_bad: Vec<(usize, Vec<u8>)> = Vec::new();
    loop {
        let n = crate::record::read_line_or_stop(&mut reader, &mut buf, line as u64 + 1)
            .map_err(io(path))?;
        if n == 0 {
            break;
        }
        line += 1;
        let text = strip_bom(&buf);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Value>(text) {
            Ok(Value::Array(items)) => {
                parsed_any = true;
                for (i, v) in items.iter().enumerate() {
                    b.push(i + 1, v);
                }
            }
            Ok(v) => {
                parsed_any = true;
                b.push(line, &v);
            }
            Err(_) => pending_bad.push((line, text.to_vec())),
        }
    }
    if !parsed_any {
        // Not JSONL: one pretty-printed value.
        let v: Value =
            whole_document(path)?.map_err(|(_, why)| TranscriptError::NotATranscript {
                path: path.to_owned(),
                expected: "JSON or JSONL".into(),
                found: why,
            })?;
        match v {
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    b.push(i + 1, v);
                }
            }
            v => b.push(1, &v),
        }
        return Ok(());
    }
    for (n, text) in pending_bad {
        b.bad_line(n, &text);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rollout_line(ty: &str, payload: Value) -> String {
        json!({"timestamp": "2026-11-02T10:00:00Z", "type": ty, "payload": payload}).to_string()
    }

    /// A Codex rollout that started a sub-agent is read on with the sub-agent's rollout found
    /// beside it: each file once, the child's steps as a sub-agent's, the link read. (The
    /// parent was read whole twice, once alone and once with its child.)
    #[test]
    fn a_codex_rollout_and_its_sub_agents_are_each_read_once() {
        let tmp = tempfile::tempdir().unwrap();
        let day = tmp.path().join("sessions/2026/11/02");
        fs_err::create_dir_all(&day).unwrap();
        let (parent_id, child_id) = ("019a-parent", "019a-child");
        let parent = [
            rollout_line(
                "session_meta",
                json!({"id": parent_id, "cwd": "/calc", "source": "exec"}),
            ),
            rollout_line(
                "response_item",
                json!({"type": "function_call", "name": "spawn_agent",
                "call_id": "s", "arguments": json!({"message": "look"}).to_string()}),
            ),
            rollout_line(
                "response_item",
                json!({"type": "function_call_output", "call_id": "s",
                "output": json!({"agent_id": child_id}).to_string()}),
            ),
        ]
        .join("\n");
        let child = [
            rollout_line("session_meta", json!({"id": child_id, "cwd": "/calc",
                "source": {"subagent": {"thread_spawn": {"parent_thread_id": parent_id, "depth": 1}}}})),
            rollout_line("response_item", json!({"type": "function_call", "name": "exec_command",
                "call_id": "c", "arguments": json!({"cmd": "git log --all"}).to_string()})),
        ]
        .join("\n");
        let p = day.join(format!("rollout-2026-11-02T10-00-00-{parent_id}.jsonl"));
        let c = day.join(format!("rollout-2026-11-02T10-00-05-{child_id}.jsonl"));
        fs_err::write(&p, parent).unwrap();
        fs_err::write(&c, child).unwrap();
        FED.with(|f| f.borrow_mut().clear());
        let (t, files) = read_transcript_files(&p).unwrap();
        assert_eq!(files, [p.clone(), c.clone()]);
        assert_eq!(FED.with(|f| f.borrow().clone()), [p, c]);
        assert!(t.subagents.iter().all(|l| l.read), "{:?}", t.subagents);
        assert!(
            t.actions
                .iter()
                .any(|a| a.sidechain && a.text.contains("git log --all")),
            "{:?}",
            t.actions
        );
    }

    #[test]
    fn shapes_are_told_apart_by_their_strongest_marker() {
        let rollout = [
            json!({"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}),
            json!({"timestamp": "t", "type": "response_item", "payload": {"type": "message"}}),
        ];
        assert_eq!(shape_of(&rollout), Some(TrajectoryShape::CodexRollout));
        let legacy = [
            json!({"model": "gpt-5", "workdir": "/w", "approval": "never"}),
            json!({"prompt": "fix it"}),
            json!({"id": "0", "msg": {"type": "task_started"}}),
        ];
        assert_eq!(shape_of(&legacy), Some(TrajectoryShape::CodexExecLegacy));
        let stream = [
            json!({"type": "system", "subtype": "hook_started", "session_id": "s"}),
            json!({"type": "system", "subtype": "init", "session_id": "s", "model": "m"}),
            json!({"type": "rate_limit_event", "rate_limit_info": {}, "session_id": "s"}),
        ];
        assert_eq!(shape_of(&stream), Some(TrajectoryShape::ClaudeStreamJson));
        let session = [
            json!({"type": "summary", "summary": "x", "leafUuid": "u"}),
            json!({"type": "user", "sessionId": "s", "uuid": "u", "parentUuid": null}),
        ];
        assert_eq!(shape_of(&session), Some(TrajectoryShape::ClaudeSession));
        let result = [
            json!({"type": "result", "subtype": "success", "result": "ok", "num_turns": 3, "session_id": "s"}),
        ];
        assert_eq!(shape_of(&result), Some(TrajectoryShape::ClaudeResult));
        assert_eq!(shape_of(&[json!({"hello": "world"})]), None);
    }
}
