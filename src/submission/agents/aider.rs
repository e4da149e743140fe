//! Aider's chat history (`.aider.chat.history.md`): Markdown, one session after another, each
//! starting `# aider chat started at <time>`. The user's input is written a line at a time after
//! `#### `; aider's own output (the model it runs, commands it runs, edits it applied, commits it
//! made) after `> `; the model's replies as they are.
//!
//! Read from it: the first input that is not a command is the prompt; `/run CMD` and `!CMD`
//! inputs and `> Running CMD` outputs are commands (one event where aider echoes the command it
//! was asked to run); `/web URL` is a page. Edits are read as aider parses them: each
//! SEARCH/REPLACE block of a reply is an edit of the file named on the line before its fence; in
//! the whole-file formats (`whole`, and `editor-whole` behind an architect, as `… with whole edit
//! format` says) every fence at a line's start (backticks, or `<source>`) writes the file named
//! on the line before it, stripped as aider strips it. Their outcomes are aider's reports:
//! `Applied edit to PATH` made, `Skipping edits to PATH` (a file the user declined to create)
//! not made, a "SEARCH/REPLACE block failed to match" message (written unquoted after its first
//! line, with the failed block echoed back, which is no edit) not made for the blocks it names and
//! made for the others; an edit still unreported when the model replies again or the user
//! speaks was not made. An `Applied edit to PATH` with no edit of PATH read is an unread step (an
//! edit format this reader does not know, such as `udiff`). A `####` line is the user's input
//! where it ends with aider's line break (two spaces), or, in a file that keeps none, where no
//! reply is open; otherwise it is a heading of the reply.
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
    // Lines of aider's message about SEARCH blocks that failed to match, which aider writes
    // unquoted after its first line (`> # 1 SEARCH/REPLACE block failed to match!`).
    let mut echo: Option<Vec<&str>> = None;
    let lines: Vec<&str> = text.lines().collect();
    // Whether the file keeps aider's line breaks on its inputs (older histories, or editors,
    // strip them).
    let marked = lines
        .iter()
        .any(|l| l.starts_with("####") && l.ends_with("  "));
    for (i, raw) in lines.iter().enumerate() {
        let step = i + 1;
        let line = raw.trim_end();
        if let Some(body) = echo.as_mut() {
            let marker = line.starts_with("> ")
                || line == ">"
                || line.starts_with("####")
                || line.starts_with("# aider chat started at");
            if !marker {
                body.push(line);
                // The message's last line is written with aider's line break (two spaces).
                if raw.ends_with("  ") || line.starts_with("Just reply with fixed versions of the")
                {
                    failed_blocks(&mut t, &echo.take().unwrap_or_default());
                }
                continue;
            }
            failed_blocks(&mut t, &echo.take().unwrap_or_default());
        }
        // The user's input, or a heading of the model's reply: aider ends each input line with
        // its line break (two spaces) where the file keeps them, and otherwise an input follows
        // aider's own output, another input, or a session's start, never a reply's text.
        let input_line = if marked {
            raw.ends_with("  ")
        } else {
            reply.is_empty()
        };
        if let Some(rest) = line.strip_prefix("####").filter(|_| input_line) {
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
            if out.starts_with('#')
                && out.contains("SEARCH/REPLACE block")
                && out.ends_with("failed to match!")
            {
                echo = Some(Vec::new());
            }
            continue;
        }
        if line.starts_with("# aider chat started at") {
            flush_reply(&mut t, &mut reply, reply_start, whole);
            unreported(&mut t);
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
    if let Some(body) = echo {
        failed_blocks(&mut t, &body);
    }
    flush_input(&mut t, &mut input, input_start, &mut last_command);
    flush_reply(&mut t, &mut reply, reply_start, whole);
    t
}

/// Aider's message about the SEARCH blocks of the last reply that did not match: each block it
/// names (`… failed to exactly match lines in PATH`, then the block) was not made, and when it
/// says the others were applied, every other edit of that reply was; nothing in it is an edit.
fn failed_blocks(t: &mut Transcript, body: &[&str]) {
    const NAMED: &str = "failed to exactly match lines in ";
    let mut i = 0;
    while i < body.len() {
        if let Some((_, path)) = body[i].split_once(NAMED)
            && let Some((old, _, next)) = search_block(body, i + 1)
        {
            let path = path.trim();
            if let Some(e) = t.edits.iter_mut().rev().find(|e| {
                e.outcome == EditOutcome::Unknown
                    && e.ops.iter().any(|op| {
                        matches!(op, EditOp::Replace { path: p, old: o, .. } if p == path && *o == old)
                    })
            }) {
                e.outcome = EditOutcome::Failed;
            }
            i = next;
            continue;
        }
        i += 1;
    }
    if body
        .iter()
        .any(|l| l.starts_with("# The other ") && l.contains("applied successfully"))
    {
        mark(t, "", EditOutcome::Applied);
    }
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
    // Aider reports every edit it makes (`Applied edit to PATH`) before the user speaks again
    // or the model replies again: an edit with no report by then was not made (its file could
    // not be added to the chat, the reply was interrupted), and a later report of the same file
    // is another edit's.
    unreported(t);
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
    } else if let Some(path) = out.strip_prefix("Skipping edits to ") {
        // The user declined to create the file a whole-file block named.
        mark(t, path.trim(), EditOutcome::Failed);
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

/// Every edit with no outcome yet, marked not made.
fn unreported(t: &mut Transcript) {
    for e in t.edits.iter_mut() {
        if e.outcome == EditOutcome::Unknown {
            e.outcome = EditOutcome::Failed;
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
/// when `line` opens none. As aider reads them, a fence starts its line (an indented one is
/// text of the reply).
fn fence_close(line: &str) -> Option<String> {
    let l = line.trim_end();
    if l.starts_with("```") {
        let ticks = l.chars().take_while(|c| *c == '`').count();
        Some("`".repeat(ticks))
    } else if l == "<source>" || l.starts_with("<source ") {
        Some("</source>".to_owned())
    } else {
        None
    }
}

/// The file a whole-file block writes, as aider reads it from the line before the fence (bold,
/// backticks, a heading's `#` and a trailing colon taken off); empty when that line names none.
fn block_file_name(line: &str) -> String {
    let name = line
        .trim()
        .trim_matches('*')
        .trim_end_matches(':')
        .trim_matches('`')
        .trim_start_matches('#')
        .trim();
    if name.len() > 250 {
        String::new()
    } else {
        name.to_owned()
    }
}

/// A whole-file block opened by the fence at `i`, as aider's whole-file formats read every fence
/// of a reply: the file named on the line before, the content, and the index past its end;
/// `None` when the block is never closed.
fn whole_file(reply: &[&str], i: usize) -> Option<(String, String, usize)> {
    let close = fence_close(reply[i])?;
    let end = (i + 1..reply.len()).find(|&k| reply[k].trim_end().starts_with(close.as_str()))?;
    let body = &reply[i + 1..end];
    let name = i
        .checked_sub(1)
        .map(|p| block_file_name(reply[p]))
        .unwrap_or_default();
    let content = if body.is_empty() {
        String::new()
    } else {
        body.join("\n") + "\n"
    };
    Some((name, content, end + 1))
}

/// The SEARCH/REPLACE block opened at `at` (a `<<<<<<< SEARCH` line): its SEARCH and REPLACE
/// texts and the index past `>>>>>>> REPLACE`.
fn search_block(lines: &[&str], at: usize) -> Option<(String, String, usize)> {
    if lines.get(at)?.trim_end() != "<<<<<<< SEARCH" {
        return None;
    }
    let start = at + 1;
    let mid = (start..lines.len()).find(|&k| lines[k].trim_end() == "=======")?;
    let end =
        (mid + 1..lines.len()).find(|&k| lines[k].trim_end().starts_with(">>>>>>> REPLACE"))?;
    let join = |ls: &[&str]| {
        if ls.is_empty() {
            String::new()
        } else {
            ls.join("\n") + "\n"
        }
    };
    Some((
        join(&lines[start..mid]),
        join(&lines[mid + 1..end]),
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

/// A reply of the model's: its words, and its edits as the session's format reads them: each
/// SEARCH/REPLACE block, or in a whole-file format each fenced block (aider takes every fence
/// there for a file, named on the line before it).
fn flush_reply(t: &mut Transcript, reply: &mut Vec<&str>, step: usize, whole: bool) {
    if reply.is_empty() {
        return;
    }
    let text = reply.join("\n");
    let trimmed = text.trim();
    if !trimmed.is_empty() {
        // A new reply: aider has reported on the edits of the last one.
        unreported(t);
        t.act(step, "message", ActionKind::Message, trimmed);
    }
    let mut i = 0;
    while i < reply.len() {
        if whole {
            if fence_close(reply[i]).is_none() {
                i += 1;
                continue;
            }
            let Some((path, content, next)) = whole_file(reply, i) else {
                t.unread(step + i, "edit", "a whole-file block that is never closed");
                break;
            };
            if path.is_empty() {
                t.unread(
                    step + i,
                    "edit",
                    "a whole-file block with no file named on the line before it",
                );
            } else {
                push_edit(t, step + i, EditOp::Write { path, content });
            }
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
            let Some((old, new, next)) = search_block(reply, i).filter(|_| !path.is_empty()) else {
                t.unread(
                    step + i,
                    "edit",
                    "a SEARCH/REPLACE block without its file or its end",
                );
                break;
            };
            push_edit(
                t,
                step + i,
                EditOp::Replace {
                    path,
                    old,
                    new,
                    replace_all: false,
                },
            );
            i = next;
            continue;
        }
        i += 1;
    }
    reply.clear();
}
