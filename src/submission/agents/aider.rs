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
//! line, with the failed block echoed back, which is no edit, and read up to aider's own closing
//! words) not made for the blocks it names and made for the others; an edit still unreported
//! when the user speaks again, or when the model replies again after aider's report on its last
//! reply (`Tokens: …`), was not made. Behind an architect (the main model's, `/chat-mode
//! architect`, or `/architect Q` for one message), only the editor's replies (to an input that
//! repeats the architect's advice) make edits; `/ask` answers make none. A whole-file block the
//! reply never closes runs to its end, as aider writes it. An `Applied edit to PATH` with no edit of
//! PATH read is an unread step (an edit format this reader does not know, such as `udiff`). A
//! `####` line is the user's input where no reply is open, or where it ends with aider's line
//! break (two spaces) in a file that keeps them; otherwise it is a heading of the reply.
//! `Main model:` (or the older `Model:`) names the model. Where
//! the repository's commits are at hand they are the better record of the edits; these are for
//! when they are not.

use super::trajectory::{ActionKind, EditOp, EditOutcome, FileEdit, Trajectory, TrajectoryShape};

/// Whether `text` is an Aider chat history: its first non-blank line opens a session.
pub(crate) fn is_aider_history(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim_start().starts_with("# aider chat started at"))
}

/// The transcript of an Aider chat history.
pub(crate) fn read_aider(text: &str) -> Trajectory {
    let lines: Vec<&str> = text.lines().collect();
    let mut r = Reader {
        t: Trajectory::new(TrajectoryShape::AiderHistory),
        reply: Vec::new(),
        reply_start: 0,
        input: Vec::new(),
        input_start: 0,
        last_command: None,
        whole: false,
        mode: Mode::Code,
        once: None,
        editor_turn: false,
        last_reply: String::new(),
        reported: false,
        echo: None,
        // Whether the file keeps aider's line breaks on its inputs (older histories, or
        // editors, strip them).
        marked: lines
            .iter()
            .any(|l| l.starts_with("####") && l.ends_with("  ")),
    };
    for (i, raw) in lines.iter().enumerate() {
        r.line(i + 1, raw);
    }
    if let Some(echo) = r.echo.take() {
        failed_blocks(&mut r.t, &echo.body);
    }
    r.flush_input();
    r.flush_reply();
    r.t
}

/// What the reader carries from line to line.
struct Reader<'a> {
    t: Trajectory,
    /// The model's reply being read, and its first line's step.
    reply: Vec<&'a str>,
    reply_start: usize,
    /// The user's input being read (its `#### ` lines), and its first line's step.
    input: Vec<&'a str>,
    input_start: usize,
    last_command: Option<String>,
    /// The session's edits are whole files (`whole`, `editor-whole`).
    whole: bool,
    /// The session's chat mode (the main model's format, `/chat-mode`, `/ask` alone): an
    /// architect's replies are advice, and only its editor's (the reply to an input that
    /// repeats the architect's reply) make edits; an ask's make none.
    mode: Mode,
    /// A mode for one message (`/ask Q`, `/architect Q`), with that message.
    once: Option<(Mode, String)>,
    editor_turn: bool,
    /// The last reply's words, to tell an architect's advice handed to its editor.
    last_reply: String,
    /// Aider's report on a reply (`Tokens: …`) came since the last reply.
    reported: bool,
    /// Aider's message about SEARCH blocks that failed to match, being read.
    echo: Option<Echo<'a>>,
    marked: bool,
}

impl<'a> Reader<'a> {
    fn line(&mut self, step: usize, raw: &'a str) {
        let line = raw.trim_end();
        if let Some(echo) = self.echo.as_mut() {
            match echo.feed(raw) {
                EchoStep::Keep => return,
                EchoStep::EndAfter => {
                    let echo = self.echo.take().unwrap_or_default();
                    failed_blocks(&mut self.t, &echo.body);
                    return;
                }
                EchoStep::EndBefore => {
                    let echo = self.echo.take().unwrap_or_default();
                    failed_blocks(&mut self.t, &echo.body);
                }
            }
        }
        // The user's input, or a heading of the model's reply: an input follows aider's own
        // output, another input, or a session's start, never a reply's text; and where the
        // file keeps aider's line breaks, aider ended each input line with one (two spaces).
        let input_line = self.reply.is_empty() || (self.marked && raw.ends_with("  "));
        if let Some(rest) = line.strip_prefix("####").filter(|_| input_line) {
            self.flush_reply();
            if self.input.is_empty() {
                self.input_start = step;
            }
            self.input.push(rest.strip_prefix(' ').unwrap_or(rest));
            return;
        }
        self.flush_input();
        // Aider's own output is `> ` and its text; `>>>>>>> REPLACE` ends an edit block.
        if let Some(out) = line
            .strip_prefix("> ")
            .or_else(|| (line == ">").then_some(""))
        {
            self.flush_reply();
            self.output(step, out.trim());
            return;
        }
        if line.starts_with("# aider chat started at") {
            self.flush_reply();
            unreported(&mut self.t);
            self.whole = false;
            self.mode = Mode::Code;
            self.once = None;
            return;
        }
        if self.reply.is_empty() {
            if line.trim().is_empty() {
                return;
            }
            self.reply_start = step;
        }
        self.reply.push(raw);
    }

    /// One line of aider's own output (after `> `).
    fn output(&mut self, step: usize, out: &str) {
        if let Some((_, format)) = out.split_once(" with ")
            && let Some(format) = format.strip_suffix(" edit format")
        {
            let format = format.trim();
            if out.starts_with("Model: ") || out.starts_with("Main model: ") {
                self.mode = if format == "architect" {
                    Mode::Architect
                } else {
                    Mode::Code
                };
                self.whole = matches!(format, "whole" | "editor-whole");
            } else if out.starts_with("Editor model: ") {
                // An architect's editor names, after it, the format its edits are written in.
                self.whole = matches!(format, "whole" | "editor-whole");
            }
        }
        if out.starts_with("Tokens: ") {
            self.reported = true;
        }
        tool_output(&mut self.t, step, out, &mut self.last_command);
        if out.starts_with('#')
            && out.contains("SEARCH/REPLACE block")
            && out.ends_with("failed to match!")
        {
            self.echo = Some(Echo::default());
        }
    }

    /// One input of the user's (its `#### ` lines joined).
    fn flush_input(&mut self) {
        if self.input.is_empty() {
            return;
        }
        let text = self.input.join("\n");
        self.input.clear();
        // Aider reports every edit it makes (`Applied edit to PATH`) before the user speaks
        // again: an edit with no report by then was not made (its file could not be added to
        // the chat, the reply was interrupted), and a later report of the same file is another
        // edit's.
        unreported(&mut self.t);
        self.last_command = None;
        self.turn(&text);
        read_input(
            &mut self.t,
            text.trim(),
            self.input_start,
            &mut self.last_command,
        );
    }

    /// A reply of the model's: its words, and its edits as the session's format reads them:
    /// each SEARCH/REPLACE block, or in a whole-file format each fenced block (aider takes every
    /// fence there for a file, named on the line before it). An architect's own replies make
    /// none.
    fn flush_reply(&mut self) {
        if self.reply.is_empty() {
            return;
        }
        let text = self.reply.join("\n");
        let trimmed = text.trim();
        if trimmed.is_empty() {
            self.reply.clear();
            return;
        }
        // A new reply after aider's report on the last one: the last one's edits with no
        // report were not made (aider sent the model an error instead). A reply cut by a
        // quoted line of its own is not a new one.
        if std::mem::take(&mut self.reported) {
            unreported(&mut self.t);
        }
        self.last_command = None;
        self.t
            .act(self.reply_start, "message", ActionKind::Message, trimmed);
        let editor = std::mem::take(&mut self.editor_turn);
        if editor {
            self.once = None;
        }
        let mode = self.once.as_ref().map_or(self.mode, |(m, _)| *m);
        if mode == Mode::Code || editor {
            reply_edits(&mut self.t, &self.reply, self.reply_start, self.whole);
        }
        self.last_reply = trimmed.to_owned();
        self.reply.clear();
    }

    /// What an input says of the replies after it: `/ask`, `/architect`, `/code` and
    /// `/chat-mode` switch the mode (with a message, for that message only: aider writes the
    /// message again as the next input); an architect's advice handed to its editor comes back
    /// as the editor's input, whose reply makes the edits. Any other input ends a one-message
    /// mode.
    fn turn(&mut self, text: &str) {
        let text = text.trim();
        let (word, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        let rest = rest.trim();
        let mode = match word {
            "/ask" => Some(Mode::Ask),
            "/architect" => Some(Mode::Architect),
            "/code" => Some(Mode::Code),
            "/chat-mode" => match rest {
                "ask" | "help" | "context" => Some(Mode::Ask),
                "architect" => Some(Mode::Architect),
                _ => Some(Mode::Code),
            },
            _ => None,
        };
        if let Some(mode) = mode {
            if rest.is_empty() || word == "/chat-mode" {
                self.mode = mode;
                self.once = None;
            } else {
                self.once = Some((mode, rest.to_owned()));
            }
            return;
        }
        let mode = self.once.as_ref().map_or(self.mode, |(m, _)| *m);
        self.editor_turn = mode == Mode::Architect && words(text) == words(&self.last_reply);
        let echo = self
            .once
            .as_ref()
            .is_some_and(|(_, message)| words(text) == words(message));
        if !echo && !self.editor_turn {
            self.once = None;
        }
    }
}

/// Which replies make edits: `Code` (the main model's), `Ask` (none), `Architect` (only its
/// editor's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Code,
    Ask,
    Architect,
}

/// `text`'s words, for comparing two texts whatever their line breaks and spacing.
fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

/// Aider's message about SEARCH blocks that did not match, written unquoted after its first
/// line: the failed blocks echoed, the lines aider suggests, and its fixed closing words.
#[derive(Default)]
struct Echo<'a> {
    body: Vec<&'a str>,
    /// Inside an echoed SEARCH/REPLACE block, or a fenced block of suggested lines: nothing
    /// there ends the message.
    in_block: bool,
    in_fence: bool,
    /// Past "The SEARCH section must exactly match …": only aider's own closing lines follow.
    closing: bool,
}

enum EchoStep {
    /// The line is the message's.
    Keep,
    /// The line is the message's last.
    EndAfter,
    /// The message ended before this line, which is read as any other.
    EndBefore,
}

impl<'a> Echo<'a> {
    fn feed(&mut self, raw: &'a str) -> EchoStep {
        let line = raw.trim_end();
        if self.in_block || self.in_fence {
            self.body.push(raw);
            if self.in_block && line.starts_with(">>>>>>> REPLACE") {
                self.in_block = false;
            } else if self.in_fence && line.starts_with("```") {
                self.in_fence = false;
            }
            return EchoStep::Keep;
        }
        if line.starts_with("Just reply with fixed versions of the") {
            self.body.push(raw);
            return EchoStep::EndAfter;
        }
        if self.closing
            && !(line.is_empty()
                || line.starts_with("# The other ")
                || line.starts_with("Don't re-send them"))
        {
            return EchoStep::EndBefore;
        }
        if line.starts_with("> ")
            || line == ">"
            || line.starts_with("####")
            || line.starts_with("# aider chat started at")
        {
            return EchoStep::EndBefore;
        }
        if line == "<<<<<<< SEARCH" {
            self.in_block = true;
        } else if line.starts_with("```") {
            self.in_fence = true;
        } else if line.starts_with("The SEARCH section must exactly match") {
            self.closing = true;
        }
        self.body.push(raw);
        EchoStep::Keep
    }
}

/// Aider's message about the SEARCH blocks of the last reply that did not match: each block it
/// names (`… failed to exactly match lines in PATH`, then the block) was not made, and when it
/// says the others were applied, every other edit of that reply was; nothing in it is an edit.
fn failed_blocks(t: &mut Trajectory, body: &[&str]) {
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

/// The words of one input: a command run, a page, one of aider's own commands, the prompt or a
/// later message.
fn read_input(t: &mut Trajectory, trimmed: &str, step: usize, last_command: &mut Option<String>) {
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

/// A command run, once: aider may echo as `Running CMD` (tool `run`) the command the input just
/// before asked it to run (`last`, cleared by every input and reply). The same command asked
/// for again is run again.
fn command(t: &mut Trajectory, step: usize, tool: &str, cmd: &str, last: &mut Option<String>) {
    if cmd.is_empty() {
        return;
    }
    if tool == "run" && last.take().as_deref() == Some(cmd) {
        return;
    }
    t.tool_calls += 1;
    t.act(step, tool, ActionKind::Command, cmd);
    *last = (tool != "run").then(|| cmd.to_owned());
}

/// One line of aider's own output (after `> `).
fn tool_output(t: &mut Trajectory, step: usize, out: &str, last_command: &mut Option<String>) {
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
fn unreported(t: &mut Trajectory) {
    for e in t.edits.iter_mut() {
        if e.outcome == EditOutcome::Unknown {
            e.outcome = EditOutcome::Failed;
        }
    }
}

/// The edits of `path` not yet marked, marked `outcome` (all of them when `path` names none).
fn mark(t: &mut Trajectory, path: &str, outcome: EditOutcome) {
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
/// of a reply: the file named on the line before, the content, and the index past its end. A
/// block the reply never closes runs to the reply's end (aider writes what it has).
fn whole_file(reply: &[&str], i: usize) -> Option<(String, String, usize)> {
    let close = fence_close(reply[i])?;
    let end = (i + 1..reply.len())
        .find(|&k| reply[k].trim_end().starts_with(close.as_str()))
        .unwrap_or(reply.len());
    let mut body = &reply[i + 1..end];
    if end == reply.len() {
        // The history's own blank lines after a cut reply are not the file's.
        while body.last().is_some_and(|l| l.trim().is_empty()) {
            body = &body[..body.len() - 1];
        }
    }
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
fn push_edit(t: &mut Trajectory, step: usize, op: EditOp) {
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

/// The edits of a reply (see [`Reader::flush_reply`]).
fn reply_edits(t: &mut Trajectory, reply: &[&str], step: usize, whole: bool) {
    let mut i = 0;
    while i < reply.len() {
        if whole {
            if fence_close(reply[i]).is_none() {
                i += 1;
                continue;
            }
            let Some((path, content, next)) = whole_file(reply, i) else {
                i += 1;
                continue;
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
            // The file is named on the line before the fence that opens the block, as aider
            // strips it (bold, backticks, a heading's `#`, a colon).
            let path = (0..i)
                .rev()
                .map(|j| reply[j].trim())
                .find(|l| !l.is_empty() && !l.starts_with("```"))
                .map(block_file_name)
                .unwrap_or_default();
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
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "\n# aider chat started at 2025-05-24 16:38:38\n\n> Aider v0.82.2  \n> Main model: m with whole edit format  \n\n";

    fn commands(t: &Trajectory) -> Vec<&str> {
        t.commands().map(|a| a.text.as_str()).collect()
    }

    /// The same command asked for again runs again (aider 0.82 echoes nothing after `/run`); a
    /// `Running CMD` right after the input that asked for it is that input's echo.
    #[test]
    fn a_command_asked_for_again_is_run_again_and_an_echo_is_not() {
        let text = format!(
            "{HEAD}#### /run make test  \n> Add 0.1k tokens of command output to the chat? (Y)es/(N)o [Yes]: n  \n\n\
             #### /run make test  \n\n#### /run make test  \n> Running make test  \n\n#### !make test  \n"
        );
        let t = read_aider(&text);
        assert_eq!(commands(&t), ["make test"; 4]);
    }

    /// `/ask` answers and `/architect` advice make no edits, even in a whole-file session whose
    /// answers hold fenced code; the editor's reply to the advice does; and a plain message
    /// after them is the session's mode again.
    #[test]
    fn ask_answers_and_architect_advice_make_no_edits_and_the_editor_s_reply_does() {
        let advice = "Change the handler.\n\nbackend/main.py\n```\nprint('advice')\n```";
        let text = format!(
            "{HEAD}#### /ask how do I run it?  \n\n#### how do I run it?  \n\nRun it so:\n\n```\nuv run main.py\n```\n\n\
             > Tokens: 1k sent, 1k received.  \n\n\
             #### /architect fix the server  \n\n#### fix the server  \n\n{advice}\n\n> Tokens: 1k sent, 1k received.  \n\n\
             #### Change the handler.  \n####   \n#### backend/main.py  \n#### ```  \n#### print('advice')  \n#### ```  \n\n\
             backend/main.py\n```\nprint('fixed')\n```\n\n> Applied edit to backend/main.py  \n\n\
             #### add a test  \n\ntests/test_main.py\n```\ndef test_x():\n    pass\n```\n\n> Applied edit to tests/test_main.py  \n"
        );
        let t = read_aider(&text);
        let written: Vec<&str> = t.edits.iter().flat_map(|e| e.ops[0].paths()).collect();
        assert_eq!(
            written,
            ["backend/main.py", "tests/test_main.py"],
            "{:?}",
            t.unread
        );
        assert!(t.unread.is_empty(), "{:?}", t.unread);
    }

    /// A whole-file block the reply never closes is written as far as it goes, as aider writes
    /// it: its `Applied edit` is that edit's.
    #[test]
    fn a_whole_file_block_never_closed_is_the_rest_of_the_reply() {
        let text = format!(
            "{HEAD}#### write it  \n\nbackend/main.py\n```\nimport os\nprint(os.name)\n\n> Applied edit to backend/main.py  \n"
        );
        let t = read_aider(&text);
        assert!(t.unread.is_empty(), "{:?}", t.unread);
        assert_eq!(t.edits.len(), 1);
        assert_eq!(t.edits[0].outcome, EditOutcome::Applied);
        match &t.edits[0].ops[0] {
            EditOp::Write { content, .. } => assert_eq!(content, "import os\nprint(os.name)\n"),
            other => panic!("{other:?}"),
        }
    }
}
