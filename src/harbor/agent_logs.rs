//! Where Harbor's installed agents leave their raw logs in a trial's `agent/` directory.
//!
//! Harbor's `claude-code` agent tees `claude --output-format=stream-json` into
//! `agent/claude-code.txt` and points `CLAUDE_CONFIG_DIR` at `agent/sessions`, so the session file
//! is `agent/sessions/projects/<project>/<session>.jsonl` (newer Claude Code writes each
//! subagent's steps to `<session>/subagents/agent-*.jsonl`). Its `codex` agent tees
//! `codex exec --json` into `agent/codex.txt` and copies `$CODEX_HOME/sessions` to
//! `agent/sessions/YYYY/MM/DD/rollout-*.jsonl`. Older installed agents left each command's output
//! in `agent/command-<n>/stdout.txt`. Files are read only where their real path stays inside the
//! trial directory.

use std::path::{Path, PathBuf};

/// Harbor's `claude-code` agent's stream-json output, relative to the trial directory.
pub const CLAUDE_CODE_LOG: &str = "agent/claude-code.txt";
/// Harbor's `codex` agent's `--json` event output, relative to the trial directory.
pub const CODEX_LOG: &str = "agent/codex.txt";
/// Where Claude Code sessions (`projects/…`) and Codex rollouts (`YYYY/MM/DD/…`) are kept,
/// relative to the trial directory.
pub const SESSIONS_DIR: &str = "agent/sessions";

/// The agent's own log of a trial, as the files that make one transcript (in reading order), most
/// complete first: a Codex rollout; a Claude Code session without subagent files; the stdout
/// logs; a session with its subagents' files; an older command's stdout.
pub fn trial_agent_log(dir: &Path) -> Option<Vec<PathBuf>> {
    let root = dir.canonicalize().ok()?;
    let inside = |p: &Path| {
        p.canonicalize()
            .is_ok_and(|real| real.starts_with(&root) && real.is_file())
    };
    let sessions = dir.join(SESSIONS_DIR);
    let mut rollouts: Vec<PathBuf> = Vec::new();
    let mut claude_sessions: Vec<PathBuf> = Vec::new();
    let mut subagents: Vec<PathBuf> = Vec::new();
    for e in walkdir::WalkDir::new(&sessions)
        .max_depth(6)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let p = e.into_path();
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.ends_with(".jsonl") || !inside(&p) {
            continue;
        }
        let rel = p.strip_prefix(&sessions).unwrap_or(&p);
        if name.starts_with("rollout-") {
            rollouts.push(p);
        } else if rel.starts_with("projects") {
            if rel.components().any(|c| c.as_os_str() == "subagents") {
                subagents.push(p);
            } else {
                claude_sessions.push(p);
            }
        }
    }
    rollouts.sort();
    claude_sessions.sort();
    subagents.sort();
    if !rollouts.is_empty() {
        return Some(rollouts);
    }
    if claude_sessions.len() == 1 && subagents.is_empty() {
        return Some(claude_sessions);
    }
    for log in [CLAUDE_CODE_LOG, CODEX_LOG] {
        let p = dir.join(log);
        if inside(&p) {
            return Some(vec![p]);
        }
    }
    if claude_sessions.len() == 1 {
        claude_sessions.extend(subagents);
        return Some(claude_sessions);
    }
    let mut commands: Vec<PathBuf> = std::fs::read_dir(dir.join("agent"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("command-"))
        .map(|e| e.path().join("stdout.txt"))
        .filter(|p| inside(p))
        .collect();
    commands.sort();
    commands.pop().map(|p| vec![p])
}
