//! Aider's chat history (`.aider.chat.history.md`): Markdown, one session after another, each
//! starting `# aider chat started at <time>`. The user's input is written a line at a time after
//! `#### `; aider's own output (the model it runs, commands it runs, edits it applied, commits it
//! made) after `> `; the model's replies as they are.
//!
//! Read from it: the first input that is not a command is the prompt; `/run CMD` and `!CMD`
//! inputs and `> Running CMD` outputs are commands (one event where aider echoes the command it
//! was asked to run); `/web URL` is a page; each SEARCH/REPLACE block of a reply is an edit of
//! the file named on the line before its fence, `Applied edit to PATH` marks it made and
//! `Failed to apply edit` failed; in the whole-file formats (`whole`, and `editor-whole` behind an
//! architect, as `… with whole edit format` says) a path on its own line before a fenced block
//! (backticks, or `<source>`) writes that file whole; an `Applied edit to PATH` with no edit of
//! PATH read is an unread step (an edit format this reader does not know, such as `udiff`);
//! `Main model:` (or the older `Model:`) names the model. Where
//! the repository's commits are at hand they are the better record of the edits; these are for
//! when they are not.

use super::transcript::{ActionKind, EditOp, EditOutcome, FileEdit, Transcript, TranscriptShape};

/// Whether `text` is an Aider chat history: its first non-blank line opens a session.
pub(crate) fn is_aider_history(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim_start().starts_with("# aider chat started at"))
}

/// The transcript of an Aider chat history.
pub(crate) fn read_aider(text: &str) -> Transcript {
    let mut t = Transcript::new(TranscriptShape::AiderHistory);
    let mut reply: Vec<&str> = Vec::new();
    let mut reply_start = 0;
    let mut last_command: Option<String> = None;
    let mut input: Vec<&str> = Vec::new();
    let mut input_start = 0;
    // The session's edit format writes whole files (`whole`, `editor-whole`).
    let mut whole = false;
    let lines: Vec<&str> = text.lines().collect();
    for (i, raw) in lines.iter().enumerate() {
        let step = i + 1;
        let line = raw.trim_end();
        if let Some(rest) = line.strip_prefix("####") {
            flush_reply(&mut t, &mut reply, reply_start, whole);
            if input.is_empty() {
                input_start = step;
            }
            input.push(rest.strip_prefix(' ').unwrap_or(rest));
            continue;
        }
        flush_input(&mut t, &mut input, input_start, &mut last_command);
        // Aider's own output is `> ` and its text; `>>>>>>> REPLACE` ends an edit block.
        if let Some(out) = line
            .strip_prefix("> ")
            .or_else(|| (line == ">").then_some(""))
        {
            flush_reply(&mut t, &mut reply, reply_start, whole);
            let out = out.trim();
            if let Some((_, format)) = out.split_once(" with ")
                && let Some(format) = format.strip_suffix(" edit format")
                && (out.starts_with("Model: ")
                    || out.starts_with("Main model: ")
                    || out.starts_with("Editor model: "))
            {
                // An architect's editor names, after it, the format its edits are written in.
                whole = matches!(format.trim(), "whole" | "editor-whole");
            }
            tool_output(&mut t, step, out, &mut last_command);
            continue;
        }
        if line.starts_with("# aider chat started at") {
            flush_reply(&mut t, &mut reply, reply_start, whole);
            whole = false;
            continue;
        }
        if reply.is_empty() {
            if line.trim().is_empty() {
                continue;
            }
            reply_start = step;
        }
        reply.push(raw);
    }
    flush_input(&mut t, &mut input, input_start, &mut last_command);
    flush_reply(&mut t, &mut reply, reply_start, whole);
    t
}

/// One input of the user's (its `#### ` lines joined).
fn flush_input(
    t: &mut Transcript,
    input: &mut Vec<&str>,
    step: usize,
    last_command: &mut Option<String>,
) {
    if input.is_empty() {
        return;
    }
    let text = input.join("\n");
    input.clear();
    let trimmed = text.trim();
    if let Some(cmd) = trimmed
        .strip_prefix("/run ")
        .or_else(|| trimmed.strip_prefix("/test "))
        .or_else(|| trimmed.strip_prefix('!'))
    {
        command(t, step, "/run", cmd.trim(), last_command);
    } else if let Some(url) = trimmed.strip_prefix("/web ") {
        t.act(step, "/web", ActionKind::Url, url.trim());
    } else if trimmed.starts_with('/') {
        // Aider's own commands (`/add`, `/drop`, `/undo`, …): nothing run, nothing fetched.
        t.act(
            step,
            trimmed.split_whitespace().next().unwrap_or("/"),
            ActionKind::Other,
            "",
        );
    } else if !trimmed.is_empty() {
        if t.prompt.is_none() {
            t.prompt = Some(trimmed.to_owned());
            t.act(step, "prompt", ActionKind::Prompt, trimmed);
        } else {
            t.act(step, "user", ActionKind::Message, trimmed);
        }
    }
}

/// A command run, once: aider echoes as `Running CMD` the command it was just asked to run.
fn command(t: &mut Transcript, step: usize, tool: &str, cmd: &str, last: &mut Option<String>) {
    if cmd.is_empty() {
        return;
    }
    if last.as_deref() == Some(cmd) {
        *last = None;
        return;
    }
    t.tool_calls += 1;
    t.act(step, tool, ActionKind::Command, cmd);
    *last = Some(cmd.to_owned());
}

/// One line of aider's own output (after `> `).
fn tool_output(t: &mut Transcript, step: usize, out: &str, last_command: &mut Option<String>) {
    if let Some(cmd) = out.strip_prefix("Running ") {
        command(t, step, "run", cmd.trim(), last_command);
    } else if let Some(rest) = out
        .strip_prefix("Main model: ")
        .or_else(|| out.strip_prefix("Model: "))
    {
        if t.model.is_none() {
            let model = rest.split(" with ").next().unwrap_or(rest).trim();
            if !model.is_empty() {
                t.model = Some(model.to_owned());
            }
        }
    } else if let Some(path) = out.strip_prefix("Applied edit to ") {
        let path = path.trim();
        let read = t.edits.iter().any(|e| {
            e.outcome == EditOutcome::Unknown && e.ops.iter().any(|op| op.paths().contains(&path))
        });
        if read {
            mark(t, path, EditOutcome::Applied);
        } else {
            t.unread(
                step,
                "edit",
                format!(
                    "aider applied an edit to {path} whose text was not found in the reply before \
                     it (an edit format this reader does not read)"
                ),
            );
        }
    } else if out.starts_with("Failed to apply edit") || out.contains("SearchReplaceNoExactMatch") {
        let path = out.rsplit(' ').next().unwrap_or_default();
        mark(t, path, EditOutcome::Failed);
    } else if let Some(url) = out.strip_prefix("Scraping ") {
        // `Scraping URL...`: the page the user's `/web` already named.
        let url = url.trim().trim_end_matches("...");
        if !t
            .actions
            .iter()
            .any(|a| a.kind == ActionKind::Url && a.text == url)
        {
            t.act(step, "/web", ActionKind::Url, url);
        }
    }
}

/// The edits of `path` not yet marked, marked `outcome` (all of them when `path` names none).
fn mark(t: &mut Transcript, path: &str, outcome: EditOutcome) {
    for e in t
        .edits
        .iter_mut()
        .filter(|e| e.outcome == EditOutcome::Unknown)
    {
        if path.is_empty() || e.ops.iter().any(|op| op.paths().contains(&path)) {
            e.outcome = outcome;
        }
    }
}

/// The end of a whole-file block opened by `line` (`` ``` `` fences, `<source>` tags), or `None`
/// when `line` opens none.
fn fence_close(line: &str) -> Option<String> {
    let l = line.trim();
    if l.starts_with("```") {
        let ticks = l.chars().take_while(|c| *c == '`').count();
        Some("`".repeat(ticks))
    } else if l == "<source>" || l.starts_with("<source ") {
        Some("</source>".to_owned())
    } else {
        None
    }
}

/// Whether a line names a file on its own, as the whole-file formats write it before the block.
fn names_a_file(line: &str) -> bool {
    let l = line.trim().trim_matches('`');
    !l.is_empty()
        && !l.contains(char::is_whitespace)
        && !l.ends_with(':')
        && (l.contains('.') || l.contains('/'))
        && !l.starts_with(['#', '>', '-', '*', '<'])
}

/// A whole-file block at `i` (a file's name, then a fenced block on the next line), as the
/// edit, and the index past its end.
fn whole_file(reply: &[&str], i: usize) -> Option<(String, String, usize)> {
    let close = fence_close(reply.get(i + 1)?)?;
    if !names_a_file(reply[i]) {
        return None;
    }
    let end = (i + 2..reply.len()).find(|&k| reply[k].trim_end() == close)?;
    let body = &reply[i + 2..end];
    if body
        .first()
        .is_some_and(|l| l.trim_end() == "<<<<<<< SEARCH")
    {
        return None;
    }
    let content = if body.is_empty() {
        String::new()
    } else {
        body.join("\n") + "\n"
    };
    Some((
        reply[i].trim().trim_matches('`').to_owned(),
        content,
        end + 1,
    ))
}

/// One edit of a reply, as a step and a tool call; its outcome comes from aider's output after.
fn push_edit(t: &mut Transcript, step: usize, op: EditOp) {
    let path = op
        .paths()
        .first()
        .map(|p| (*p).to_owned())
        .unwrap_or_default();
    let action = t.act(step, "edit", ActionKind::Edit, &path);
    t.tool_calls += 1;
    t.edits.push(FileEdit {
        step,
        tool: "edit".into(),
        call_id: None,
        ops: vec![op],
        outcome: EditOutcome::Unknown,
        original: None,
        user_modified: false,
        cwd: None,
        action,
    });
}

/// A reply of the model's: its words, and each SEARCH/REPLACE block (or, in a whole-file
/// format, each whole-file block) as an edit.
fn flush_reply(t: &mut Transcript, reply: &mut Vec<&str>, step: usize, whole: bool) {
    if reply.is_empty() {
        return;
    }
    let text = reply.join("\n");
    let trimmed = text.trim();
    if !trimmed.is_empty() {
        t.act(step, "message", ActionKind::Message, trimmed);
    }
    let mut i = 0;
    while i < reply.len() {
        if whole && let Some((path, content, next)) = whole_file(reply, i) {
            push_edit(t, step + i, EditOp::Write { path, content });
            i = next;
            continue;
        }
        if reply[i].trim_end() == "<<<<<<< SEARCH" {
            // The file is named on the line before the fence that opens the block.
            let path = (0..i)
                .rev()
                .map(|j| reply[j].trim())
                .find(|l| !l.is_empty() && !l.starts_with("```"))
                .unwrap_or_default()
                .trim_matches('`')
                .to_owned();
            let mut j = i + 1;
            let mut old = Vec::new();
            while j < reply.len() && reply[j].trim_end() != "=======" {
                old.push(reply[j]);
                j += 1;
            }
            let mut k = j + 1;
            let mut new = Vec::new();
            while k < reply.len() && !reply[k].trim_end().starts_with(">>>>>>> REPLACE") {
                new.push(reply[k]);
                k += 1;
            }
            if k >= reply.len() || path.is_empty() {
                t.unread(
                    step + i,
                    "edit",
                    "a SEARCH/REPLACE block without its file or its end",
                );
                break;
            }
            let join = |ls: &[&str]| {
                if ls.is_empty() {
                    String::new()
                } else {
                    ls.join("\n") + "\n"
                }
            };
            push_edit(
                t,
                step + i,
                EditOp::Replace {
                    path,
                    old: join(&old),
                    new: join(&new),
                    replace_all: false,
                },
            );
            i = k + 1;
            continue;
        }
        i += 1;
    }
    reply.clear();
}
