//! Shell commands taken apart the way a shell would run them, so neither the audit's checks (the
//! blocklist, PR access through `git` and `gh`) nor the search for commands that write files
//! (writes.rs) can be sidestepped with spacing, flags, chains, line breaks, wrappers, quote tricks
//! or indirection.
//!
//! [`split_commands`] yields every simple command a string would run: the text is split on `;`,
//! `&&`, `||`, `|`, `&`, parentheses, braces and line breaks, with quotes joined the way the shell
//! joins them (`g''it` is `git`, `$'\x67it'` too) and redirections set aside. What runs further
//! is opened up as well: `$(…)`, backticks and `<(…)`; `bash -c '…'`; `eval …`; a script a shell
//! reads from its input (`echo '…' | sh`, `bash -s`, heredocs, here-strings, `base64 -d`);
//! variables set earlier in the script (`x=git; $x log --all`), split into words as the shell
//! splits them; Python given to `python -c` or on its input (see `python.rs`).
//!
//! The reader makes one forward pass over each text (a substitution is read in place, never
//! copied out and read again), nesting is cut at [`MAX_DEPTH`], and what expansions may produce
//! is bounded by a budget proportional to the input, so time and memory stay linear in the size
//! of the command whatever it holds (unclosed `$(` chains, doubling variables). It only reads: it
//! never runs anything.

use super::Change;
use super::program::basename;
use super::python::{self, Run};
use super::written::{FILE_BUDGET, Written, clean_path};
use std::collections::HashMap;

/// How deep substitutions, `sh -c` scripts, `eval`, scripts fed to a shell and Python calls may
/// nest before the reader stops opening them (a real command nests two or three levels).
pub(super) const MAX_DEPTH: usize = 12;

const SHELLS: [&str; 6] = ["sh", "bash", "zsh", "dash", "ksh", "busybox"];

/// A script as the shell would run it: its simple commands, and why reading stopped short, if
/// it did. Read once per command; every check takes its words from here.
#[derive(Debug, Clone, Default)]
pub(super) struct Commands {
    /// Every simple command, as words (those of the files it runs that the trajectory wrote
    /// included).
    pub words: Vec<Vec<String>>,
    /// Why the script could not be read to its end: nesting past [`MAX_DEPTH`], or expansions
    /// past the budget. What such a script runs beyond that point is unknown, so an audit that
    /// found nothing in it cannot call it clean.
    pub cut: Option<&'static str>,
    /// Files it runs that the trajectory wrote without showing what they hold: what they run is
    /// unknown.
    pub unknown_files: Vec<String>,
    /// URLs in the string literals of the Python files it runs that the trajectory wrote (a
    /// shell file's URLs are in its words).
    pub file_urls: Vec<String>,
    /// The files it runs that the trajectory wrote, with their text and whether it was read as
    /// Python (a makefile's as its recipes): what they change is outside the edits a replay has.
    pub file_texts: Vec<(String, String, bool)>,
}

/// `script` read once, with the files the trajectory wrote so far (`written`, which the
/// script's own writes update): its commands and whether it was read to its end.
pub(super) fn read_commands(script: &str, written: &mut Written) -> Commands {
    let mut r = Reader::new(script, std::mem::take(written));
    r.script(script, 0);
    r.python_runs(script, 0);
    *written = std::mem::take(&mut r.written);
    Commands {
        words: r.out,
        cut: r.cut,
        unknown_files: r.unknown_files,
        file_urls: r.file_urls,
        file_texts: r.file_texts,
    }
}

/// Every simple command in `script`, as words.
pub fn split_commands(script: &str) -> Vec<Vec<String>> {
    read(script).out
}

/// Why `script` could not be read to its end, when it could not ([`Commands::cut`]).
pub fn unread_reason(script: &str) -> Option<&'static str> {
    read(script).cut
}

fn read(script: &str) -> Reader {
    let mut r = Reader::new(script, Written::default());
    r.script(script, 0);
    // Tool calls that run Python code directly (`run_ipython`, a `code` argument) are read as
    // Python too.
    r.python_runs(script, 0);
    r
}

/// Why reading stopped short of the end.
const TOO_DEEP: &str = "nested more than 12 levels deep (substitutions, `sh -c`, `eval`, scripts \
                        fed to a shell, Python calls)";
const TOO_LARGE: &str = "its expansions grow past what the reader follows (variables that \
                         double, long substitutions)";

const TOO_MANY_FILES: &str = "the files it runs that the trajectory wrote are more than the reader \
                              follows (64 MiB in all)";

struct Reader {
    out: Vec<Vec<String>>,
    vars: HashMap<String, String>,
    aliases: HashMap<String, String>,
    /// Bytes that expansions (variables, substitutions) may still produce.
    budget: usize,
    /// Why reading stopped short somewhere ([`TOO_DEEP`], [`TOO_LARGE`], [`TOO_MANY_FILES`]).
    cut: Option<&'static str>,
    /// The files the trajectory wrote so far.
    written: Written,
    /// See [`Commands::unknown_files`].
    unknown_files: Vec<String>,
    /// See [`Commands::file_urls`].
    file_urls: Vec<String>,
    /// See [`Commands::file_texts`].
    file_texts: Vec<(String, String, bool)>,
    /// The written files being read, outermost first.
    reading: Vec<String>,
}

/// One simple command as read.
#[derive(Debug, Default)]
struct Cmd {
    words: Vec<String>,
    /// A pipe feeds it the previous command's output.
    piped: bool,
    /// Its input when the text holds it: a heredoc or a here-string.
    stdin: Option<String>,
    /// A heredoc of this command is still to be read (keep it even without words).
    awaits_heredoc: bool,
    /// The file its output goes to (`> f`: false, `>> f`: true for appending).
    output: Option<(String, bool)>,
    /// The file its input comes from (`< f`).
    input: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    End,
    Paren,
    Backtick,
}

#[derive(Debug, Clone, Copy)]
enum Redirect {
    /// `<`, or a descriptor duplicated (`>&2`).
    Input,
    /// `>`, `>|` (false) or `>>` (true: appending) into a file.
    Output(bool),
    HereString,
    Heredoc {
        strip_tabs: bool,
    },
}

/// Where a shell or Python gets its program from.
enum Input {
    Arg(String),
    Stdin,
    /// A file (`None`: a module, `python -m`, or no operand after `-c`).
    File(Option<String>),
}

/// What language a file is run as.
#[derive(Clone, Copy)]
enum Lang {
    Shell,
    Python,
    /// By its name and first line (`./run`).
    Either,
    /// A makefile: its recipes (the lines that start with a tab) are shell commands.
    Make,
}

/// The state of the line being read.
#[derive(Default)]
struct Line {
    cmds: Vec<Cmd>,
    cur: Cmd,
    word: Vec<u8>,
    in_word: bool,
    redirect: Option<Redirect>,
    heredocs: Vec<(usize, String, bool)>,
}

impl Line {
    fn end_word(&mut self) {
        if !self.in_word {
            return;
        }
        self.in_word = false;
        let word = String::from_utf8_lossy(&std::mem::take(&mut self.word)).into_owned();
        match self.redirect.take() {
            None => self.cur.words.push(word),
            // `>&2`, `<&-`: a descriptor, not a file.
            Some(_) if word == "-" || word.bytes().all(|b| b.is_ascii_digit()) => {}
            Some(Redirect::Input) => self.cur.input = Some(word),
            Some(Redirect::Output(append)) => self.cur.output = Some((word, append)),
            Some(Redirect::HereString) => self.cur.stdin = Some(format!("{word}\n")),
            Some(Redirect::Heredoc { strip_tabs }) => {
                self.cur.awaits_heredoc = true;
                self.heredocs.push((self.cmds.len(), word, strip_tabs));
            }
        }
    }

    /// Appends an unquoted expansion: split into words on white space, as the shell does
    /// (except in an assignment, `x=$(…)`, which keeps it whole).
    fn push_split(&mut self, value: &str) {
        if self.in_word
            && assignment_prefix(&self.word)
            && self
                .cur
                .words
                .iter()
                .all(|w| is_assignment(w) || declares(w))
        {
            self.word.extend_from_slice(value.as_bytes());
            return;
        }
        if value.starts_with(|c: char| c.is_ascii_whitespace()) {
            self.end_word();
        }
        for (k, piece) in value.split_ascii_whitespace().enumerate() {
            if k > 0 {
                self.end_word();
            }
            self.word.extend_from_slice(piece.as_bytes());
            self.in_word = true;
        }
        if value.ends_with(|c: char| c.is_ascii_whitespace()) {
            self.end_word();
        }
    }
}

/// `NAME=` at the start of a word.
fn assignment_prefix(word: &[u8]) -> bool {
    match word.iter().position(|b| *b == b'=') {
        Some(eq) => {
            eq > 0
                && !word[0].is_ascii_digit()
                && word[..eq]
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
        }
        None => false,
    }
}

fn is_assignment(word: &str) -> bool {
    assignment_prefix(word.as_bytes())
}

/// Builtins whose `NAME=value` arguments set variables.
fn declares(word: &str) -> bool {
    matches!(
        word,
        "export" | "declare" | "typeset" | "local" | "readonly"
    )
}

impl Reader {
    fn new(script: &str, written: Written) -> Reader {
        Reader {
            out: Vec::new(),
            vars: HashMap::new(),
            aliases: HashMap::new(),
            budget: script.len().saturating_mul(4).saturating_add(64 * 1024),
            cut: None,
            written,
            unknown_files: Vec::new(),
            file_urls: Vec::new(),
            file_texts: Vec::new(),
            reading: Vec::new(),
        }
    }

    /// Reads a whole script (a `-c` argument, an `eval`, what a shell reads on its input).
    fn script(&mut self, text: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.cut.get_or_insert(TOO_DEEP);
            return;
        }
        let mut i = 0;
        self.parse(text.as_bytes(), &mut i, Stop::End, depth);
    }

    /// Runs what Python code would run.
    /// Runs what Python code would run, and reads the Python files the trajectory wrote that
    /// it names (`exec(open("x.py").read())`, `runpy.run_path("x.py")`).
    fn python(&mut self, code: &str, depth: usize) {
        self.python_file(code, depth, false);
    }

    /// [`Reader::python`], reading the code's strings once; `file`: the code is a file the
    /// trajectory wrote, whose strings' URLs are what it may open ([`Commands::file_urls`]).
    fn python_file(&mut self, code: &str, depth: usize, file: bool) {
        self.python_runs(code, depth);
        let strings = python::named(code);
        if file {
            for u in strings.urls {
                if !self.file_urls.contains(&u) {
                    self.file_urls.push(u);
                }
            }
        }
        for path in strings.py_paths {
            self.run_file(&path, Lang::Python, depth);
        }
    }

    /// Runs what Python code would run (a command's text read as Python, for tools that run
    /// code: the files it names are not read, since a shell command that names one does not
    /// run it).
    fn python_runs(&mut self, code: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.cut.get_or_insert(TOO_DEEP);
            return;
        }
        for run in python::runs(code) {
            match run {
                Run::Shell(s) => self.script(&s, depth + 1),
                Run::Argv(words) => {
                    self.command(strip_prefixes(words), None, None, depth + 1);
                }
            }
        }
    }

    /// Takes `value` out of the expansion budget (nothing once it is spent).
    fn spend(&mut self, value: String) -> String {
        if value.len() <= self.budget {
            self.budget -= value.len();
            value
        } else {
            self.budget = 0;
            self.cut.get_or_insert(TOO_LARGE);
            String::new()
        }
    }

    /// Reads from `b[*i]` until the end, or the `)` / backtick that closes a substitution;
    /// returns what the commands it read print, as far as that is known (for `$(…)`).
    ///
    /// One arm per byte that means something to the shell; an arm that reads further than its
    /// byte leaves `*i` past what it read and goes on with `continue`, the others are stepped
    /// past at the bottom of the loop.
    fn parse(&mut self, b: &[u8], i: &mut usize, stop: Stop, depth: usize) -> String {
        let mut line = Line::default();
        let mut printed = String::new();
        let mut parens = 0usize;
        while *i < b.len() {
            let c = b[*i];
            match c {
                b' ' | b'\t' | b'\r' => line.end_word(),
                b'\n' if !line.in_word && line.cur.words.is_empty() && line.cur.piped => {
                    // `cmd |` at the end of a line: the pipeline goes on on the next one.
                }
                b'\n' => {
                    self.finish_cmd(&mut line);
                    *i += 1;
                    read_heredocs(b, i, &mut line);
                    self.end_line(&mut line, &mut printed, depth);
                    continue;
                }
                b';' => self.finish_cmd(&mut line),
                b'&' => self.ampersand(b, i, &mut line),
                b'|' => self.pipe(b, i, &mut line),
                b'(' => {
                    self.finish_cmd(&mut line);
                    parens += 1;
                }
                b')' => {
                    if stop == Stop::Paren && parens == 0 {
                        *i += 1;
                        break;
                    }
                    parens = parens.saturating_sub(1);
                    self.finish_cmd(&mut line);
                }
                b'`' => {
                    *i += 1;
                    if stop == Stop::Backtick {
                        break;
                    }
                    let value = self.nested(b, i, Stop::Backtick, depth);
                    line.push_split(&value);
                    continue;
                }
                b'{' | b'}' if !line.in_word => self.finish_cmd(&mut line),
                b'#' if !line.in_word => {
                    while *i < b.len() && b[*i] != b'\n' {
                        *i += 1;
                    }
                    continue;
                }
                b'\'' => single_quoted(b, i, &mut line),
                b'"' => {
                    *i += 1;
                    self.double_quoted_word(b, i, &mut line, depth);
                    continue;
                }
                b'\\' => {
                    escaped(b, i, &mut line);
                    continue;
                }
                b'$' => {
                    self.dollar_word(b, i, &mut line, depth);
                    continue;
                }
                b'<' | b'>' => {
                    self.redirection(b, i, &mut line, depth);
                    continue;
                }
                _ => {
                    line.word.push(c);
                    line.in_word = true;
                }
            }
            *i += 1;
        }
        self.finish_cmd(&mut line);
        self.end_line(&mut line, &mut printed, depth);
        let trimmed = printed.trim_end_matches('\n').len();
        printed.truncate(trimmed);
        printed
    }

    /// `&` and `&&` end a command; `&>file` and `&>>file` redirect its output. Leaves `*i` on the
    /// operator's last byte.
    fn ampersand(&mut self, b: &[u8], i: &mut usize, line: &mut Line) {
        if b.get(*i + 1) == Some(&b'>') {
            line.end_word();
            *i += 1;
            let mut append = false;
            while b.get(*i + 1) == Some(&b'>') {
                *i += 1;
                append = true;
            }
            line.redirect = Some(Redirect::Output(append));
        } else {
            self.finish_cmd(line);
            if b.get(*i + 1) == Some(&b'&') {
                *i += 1;
            }
        }
    }

    /// `|` and `|&` feed the next command; `||` only ends this one. Leaves `*i` on the operator's
    /// last byte.
    fn pipe(&mut self, b: &[u8], i: &mut usize, line: &mut Line) {
        self.finish_cmd(line);
        match b.get(*i + 1) {
            Some(b'|') => *i += 1,
            Some(b'&') => {
                *i += 1;
                line.cur.piped = true;
            }
            _ => line.cur.piped = true,
        }
    }

    /// `"…"` from just after the opening quote, added to the word being read.
    fn double_quoted_word(&mut self, b: &[u8], i: &mut usize, line: &mut Line, depth: usize) {
        line.in_word = true;
        let mut word = std::mem::take(&mut line.word);
        self.double_quoted(b, i, &mut word, depth);
        line.word = word;
    }

    /// `$'…'`, `$"…"`, or an expansion (`$x`, `${…}`, `$(…)`, …) at `b[*i]`; a `$` that starts
    /// none of them is a letter of the word.
    fn dollar_word(&mut self, b: &[u8], i: &mut usize, line: &mut Line, depth: usize) {
        match b.get(*i + 1) {
            Some(b'\'') => {
                *i += 2;
                line.in_word = true;
                ansi_c_quoted(b, i, &mut line.word);
            }
            Some(b'"') => {
                *i += 2;
                self.double_quoted_word(b, i, line, depth);
            }
            _ => match self.dollar(b, i, depth) {
                Some(value) => line.push_split(&value),
                None => {
                    line.word.push(b'$');
                    line.in_word = true;
                    *i += 1;
                }
            },
        }
    }

    /// A redirection operator at `b[*i]`: `<`, `>`, `>>`, `>&`, `>|`, a heredoc (`<<`, `<<-`),
    /// a here-string (`<<<`), or a process substitution (`<(…)`, `>(…)`, read in place).
    fn redirection(&mut self, b: &[u8], i: &mut usize, line: &mut Line, depth: usize) {
        // A file descriptor number before the operator (`2>&1`) is not a word.
        if line.in_word && line.word.iter().all(u8::is_ascii_digit) {
            line.word.clear();
            line.in_word = false;
        }
        line.end_word();
        if b.get(*i + 1) == Some(&b'(') {
            *i += 2;
            self.nested(b, i, Stop::Paren, depth);
            return;
        }
        let op_len = if b[*i] == b'<' && b.get(*i + 1) == Some(&b'<') {
            if b.get(*i + 2) == Some(&b'<') {
                line.redirect = Some(Redirect::HereString);
                3
            } else if b.get(*i + 2) == Some(&b'-') {
                line.redirect = Some(Redirect::Heredoc { strip_tabs: true });
                3
            } else {
                line.redirect = Some(Redirect::Heredoc { strip_tabs: false });
                2
            }
        } else {
            let next = b.get(*i + 1).copied();
            line.redirect = Some(match (b[*i], next) {
                (b'>', Some(b'>')) => Redirect::Output(true),
                (b'>', _) => Redirect::Output(false),
                _ => Redirect::Input,
            });
            1 + usize::from(matches!(next, Some(b'>' | b'&' | b'|')))
        };
        *i += op_len;
    }

    /// A substitution read in place (or skipped past once nesting is too deep).
    fn nested(&mut self, b: &[u8], i: &mut usize, stop: Stop, depth: usize) -> String {
        if depth >= MAX_DEPTH {
            self.cut.get_or_insert(TOO_DEEP);
            *i = skip_past(b, *i, stop);
            return String::new();
        }
        let value = self.parse(b, i, stop, depth + 1);
        self.spend(value)
    }

    /// `"…"` from just after the opening quote: `$…` and backticks expand (not split), `\`
    /// escapes only `$`, `` ` ``, `"`, `\` and the line break.
    fn double_quoted(&mut self, b: &[u8], i: &mut usize, word: &mut Vec<u8>, depth: usize) {
        while *i < b.len() {
            match b[*i] {
                b'"' => {
                    *i += 1;
                    return;
                }
                b'\\' => {
                    match b.get(*i + 1) {
                        Some(n @ (b'$' | b'`' | b'"' | b'\\')) => word.push(*n),
                        Some(b'\n') => {}
                        Some(n) => word.extend_from_slice(&[b'\\', *n]),
                        None => word.push(b'\\'),
                    }
                    *i += 2;
                }
                b'`' => {
                    *i += 1;
                    let value = self.nested(b, i, Stop::Backtick, depth);
                    word.extend_from_slice(value.as_bytes());
                }
                b'$' => match self.dollar(b, i, depth) {
                    Some(value) => word.extend_from_slice(value.as_bytes()),
                    None => {
                        word.push(b'$');
                        *i += 1;
                    }
                },
                other => {
                    word.push(other);
                    *i += 1;
                }
            }
        }
    }

    /// An expansion at `b[*i] == '$'`: `$(…)`, `${…}`, `$NAME`, `$1`/`$@`/…; `None` when the `$`
    /// is a plain character.
    fn dollar(&mut self, b: &[u8], i: &mut usize, depth: usize) -> Option<String> {
        match *b.get(*i + 1)? {
            b'(' => {
                *i += 2;
                Some(self.nested(b, i, Stop::Paren, depth))
            }
            b'{' => {
                let start = *i + 2;
                let mut j = start;
                let mut braces = 1;
                while j < b.len() {
                    match b[j] {
                        b'{' => braces += 1,
                        b'}' => {
                            braces -= 1;
                            if braces == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                let inner = String::from_utf8_lossy(&b[start..j.min(b.len())]).into_owned();
                *i = (j + 1).min(b.len());
                Some(self.parameter(&inner))
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = *i + 1;
                let mut j = start;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                *i = j;
                let name = String::from_utf8_lossy(&b[start..j]).into_owned();
                Some(self.lookup(&name))
            }
            c if c.is_ascii_digit()
                || matches!(c, b'@' | b'*' | b'#' | b'?' | b'$' | b'!' | b'-') =>
            {
                *i += 2;
                Some(String::new())
            }
            _ => None,
        }
    }

    /// `${NAME}`, `${NAME:-word}`, `${NAME-word}`, `${NAME:=word}`; other operators give the value.
    fn parameter(&mut self, inner: &str) -> String {
        let name_end = inner
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(inner.len());
        let (name, op) = inner.split_at(name_end);
        let value = self.lookup(name);
        for prefix in [":-", "-", ":=", "="] {
            if let Some(default) = op.strip_prefix(prefix) {
                return if value.is_empty() {
                    self.spend(default.to_owned())
                } else {
                    value
                };
            }
        }
        value
    }

    fn lookup(&mut self, name: &str) -> String {
        let value = self.vars.get(name).cloned().unwrap_or_default();
        self.spend(value)
    }

    /// Ends the command being read; a command of assignments only sets variables for the rest of
    /// the script (`x=git; $x log`), as `export`/`declare`/`alias` do.
    fn finish_cmd(&mut self, line: &mut Line) {
        line.end_word();
        line.redirect = None;
        let cmd = std::mem::take(&mut line.cur);
        if cmd.words.is_empty() && cmd.stdin.is_none() && !cmd.awaits_heredoc {
            line.cur.piped = cmd.piped;
            return;
        }
        let declares = cmd.words.first().is_some_and(|w| declares(w));
        let assigns = &cmd.words[usize::from(declares)..];
        if cmd.words.first().map(String::as_str) == Some("alias") {
            for w in &cmd.words[1..] {
                if let Some((k, v)) = w.split_once('=') {
                    self.aliases.insert(k.to_owned(), v.to_owned());
                }
            }
        } else if !assigns.is_empty()
            && assigns
                .iter()
                .all(|w| is_assignment(w) || (declares && w.starts_with('-')))
        {
            for w in assigns.iter().filter(|w| is_assignment(w)) {
                if let Some((k, v)) = w.split_once('=') {
                    self.vars.insert(k.to_owned(), v.to_owned());
                }
            }
        }
        line.cmds.push(cmd);
    }

    /// Runs the commands of a finished line, pipes and heredocs now known.
    fn end_line(&mut self, line: &mut Line, printed: &mut String, depth: usize) {
        let cmds = std::mem::take(&mut line.cmds);
        line.heredocs.clear();
        let mut previous: Option<String> = None;
        let mut iter = cmds.into_iter().peekable();
        while let Some(cmd) = iter.next() {
            let piped = if cmd.piped { previous.take() } else { None };
            let words = strip_prefixes(cmd.words);
            // A file fed to a shell or to Python is a script it runs (`sh < f`).
            let runs_input = words.first().is_some_and(|w| {
                let name = basename(w);
                SHELLS.contains(&name) || is_python(name)
            });
            let from_file = match (&cmd.stdin, &piped, &cmd.input) {
                (None, None, Some(f)) if runs_input => self.file_text(f),
                _ => None,
            };
            let stdin = cmd.stdin.or(piped).or(from_file);
            let output = self.command(words, stdin, cmd.output, depth);
            let feeds_next = iter.peek().is_some_and(|n| n.piped);
            match output {
                Some(o) if !feeds_next => {
                    printed.push_str(&o);
                    printed.push('\n');
                }
                o => previous = o,
            }
        }
    }

    /// Records one command and opens what it runs; returns what it prints when that is known.
    /// `output`: the file its output is redirected into, if any (appending or not).
    fn command(
        &mut self,
        mut words: Vec<String>,
        stdin: Option<String>,
        output: Option<(String, bool)>,
        depth: usize,
    ) -> Option<String> {
        if let Some(expansion) = words.first().and_then(|w| self.aliases.get(w)).cloned() {
            let rest = words.split_off(1);
            words = expansion.split_whitespace().map(str::to_owned).collect();
            words.extend(rest);
            words = strip_prefixes(words);
        }
        let name = basename(words.first()?).to_owned();
        let printed = if name == "cat" && words.len() > 1 {
            self.cat_files(&words)
        } else {
            printed_by(&name, &words, stdin.as_deref())
        };
        self.record_writes(&name, &words, stdin.as_deref(), printed.as_ref(), output);
        if SHELLS.contains(&name.as_str()) {
            let args = if name == "busybox" {
                &words[1.min(words.len())..]
            } else {
                &words[..]
            };
            match shell_input(args) {
                Input::Arg(s) => self.script(&s, depth + 1),
                Input::Stdin => {
                    if let Some(s) = &stdin {
                        self.script(s, depth + 1);
                    }
                }
                Input::File(Some(path)) => self.run_file(&path, Lang::Shell, depth),
                Input::File(None) => {}
            }
        } else if name == "eval" {
            let text = words[1..].join(" ");
            self.script(&text, depth + 1);
        } else if name == "source" || name == "." {
            if let Some(path) = words.get(1) {
                self.run_file(path, Lang::Shell, depth);
            }
        } else if is_python(&name) {
            match python_input(&words) {
                Input::Arg(code) => self.python(&code, depth + 1),
                Input::Stdin => {
                    if let Some(code) = &stdin {
                        self.python(code, depth + 1);
                    }
                }
                Input::File(Some(path)) => self.run_file(&path, Lang::Python, depth),
                // A module (`python -m pytest repro_test.py`): the Python files it is given.
                Input::File(None) => self.run_python_args(&words, depth),
            }
        } else if matches!(name.as_str(), "pytest" | "py.test") {
            self.run_python_args(&words, depth);
        } else if name == "make" {
            self.run_makefile(&words, depth);
        } else if words[0].contains('/') {
            let path = words[0].clone();
            self.run_file(&path, Lang::Either, depth);
        }
        self.out.push(words);
        printed
    }

    /// The files a command writes, as far as the text shows what goes into them: its output
    /// redirected (what `echo`, `printf`, `cat` of a heredoc print; unknown for other
    /// programs), `tee`'s files, and `cp`/`mv` of a file the trajectory wrote.
    fn record_writes(
        &mut self,
        name: &str,
        words: &[String],
        stdin: Option<&str>,
        printed: Option<&String>,
        output: Option<(String, bool)>,
    ) {
        if let Some((path, append)) = output {
            self.written.write(&path, printed.cloned(), append);
        }
        let operands: Vec<&String> = words[1..].iter().filter(|w| !w.starts_with('-')).collect();
        match name {
            "tee" => {
                let append = words[1..].iter().any(|w| w == "-a" || w == "--append");
                for path in operands {
                    self.written.write(path, stdin.map(str::to_owned), append);
                }
            }
            "cp" | "mv" | "install" => {
                let [from, to] = operands[..] else { return };
                let to = if to.ends_with('/') {
                    format!("{to}{}", basename(from))
                } else {
                    to.clone()
                };
                if name == "mv" {
                    self.written.rename(from, &to);
                } else if let Some(text) = self.written.get(from).cloned() {
                    self.written.put(&to, text);
                }
            }
            // SWE-agent's file editor, run as a command in its shell.
            "str_replace_editor" => {
                let (Some(op), Some(path)) = (words.get(1), words.get(2)) else {
                    return;
                };
                let flag = |f: &str| {
                    let at = words.iter().position(|w| w == f)?;
                    words.get(at + 1).cloned()
                };
                let change = match (op.as_str(), flag("--new_str")) {
                    ("create", _) => flag("--file_text").map_or(Change::Unknown, Change::Whole),
                    ("str_replace", Some(new)) => Change::Replace {
                        old: flag("--old_str").unwrap_or_default(),
                        new,
                        all: false,
                    },
                    ("insert", Some(new)) => Change::Part(new),
                    ("str_replace" | "insert" | "undo_edit", _) => Change::Unknown,
                    _ => return,
                };
                self.written.change(path, &change);
            }
            _ => {}
        }
    }

    /// The text of a file the trajectory wrote, for a command that reads it (`sh < f`, `cat f`),
    /// charged to [`FILE_BUDGET`]; `None` when it did not write it, and when what it wrote is
    /// unknown (then listed in [`Commands::unknown_files`], since it may be run).
    fn file_text(&mut self, path: &str) -> Option<String> {
        let text = match self.written.get(path)? {
            Some(text) => text.clone(),
            None => {
                let path = clean_path(path).to_owned();
                if !self.unknown_files.contains(&path) {
                    self.unknown_files.push(path);
                }
                return None;
            }
        };
        if self.written.spent.saturating_add(text.len()) > FILE_BUDGET {
            self.cut.get_or_insert(TOO_MANY_FILES);
            return None;
        }
        self.written.spent += text.len();
        Some(text)
    }

    /// What `cat FILE…` prints, when every file it is given is one the trajectory wrote and
    /// its text is known.
    fn cat_files(&mut self, words: &[String]) -> Option<String> {
        let files: Vec<&String> = words[1..].iter().filter(|w| !w.starts_with('-')).collect();
        if files.is_empty()
            || files
                .iter()
                .any(|f| !matches!(self.written.get(f), Some(Some(_))))
        {
            return None;
        }
        let mut out = String::new();
        for f in files {
            out.push_str(&self.file_text(f)?);
        }
        Some(out)
    }

    /// Reads a file the command runs, when the trajectory wrote it: its text as a shell script
    /// or as Python (`Lang::Either`: Python when its name ends in `.py` or its first line names
    /// Python); a file it wrote without showing the text is listed as unknown.
    fn run_file(&mut self, path: &str, lang: Lang, depth: usize) {
        // A file being read that runs itself again holds nothing new.
        if self.reading.iter().any(|p| p == clean_path(path)) {
            return;
        }
        if depth >= MAX_DEPTH && self.written.get(path).is_some() {
            self.cut.get_or_insert(TOO_DEEP);
            return;
        }
        let Some(text) = self.file_text(path) else {
            return;
        };
        self.reading.push(clean_path(path).to_owned());
        let python = match lang {
            Lang::Python => true,
            Lang::Shell | Lang::Make => false,
            Lang::Either => {
                path.ends_with(".py")
                    || text
                        .lines()
                        .next()
                        .is_some_and(|l| l.starts_with("#!") && l.contains("python"))
            }
        };
        let name = clean_path(path).to_owned();
        if python {
            self.python_file(&text, depth + 1, true);
            self.file_texts.push((name, text, true));
        } else {
            let script = if matches!(lang, Lang::Make) {
                let recipes: Vec<&str> =
                    text.lines().filter_map(|l| l.strip_prefix('\t')).collect();
                recipes.join("\n")
            } else {
                text
            };
            self.script(&script, depth + 1);
            self.file_texts.push((name, script, false));
        }
        self.reading.pop();
    }

    /// The Python files among a test runner's or module's operands that the trajectory wrote,
    /// and every `conftest.py` it wrote (pytest runs those it finds on its way to the tests).
    fn run_python_args(&mut self, words: &[String], depth: usize) {
        let pytest = words
            .iter()
            .take(3)
            .any(|w| matches!(basename(w), "pytest" | "py.test"));
        let mut files: Vec<String> = words[1..]
            .iter()
            .map(|w| w.split("::").next().unwrap_or(w))
            .filter(|p| p.ends_with(".py"))
            .map(str::to_owned)
            .collect();
        if pytest {
            files.extend(self.written.paths_named("conftest.py"));
        }
        for path in files {
            self.run_file(&path, Lang::Python, depth);
        }
    }

    /// `make`: the recipes (lines that start with a tab) of the makefile it reads, when the
    /// trajectory wrote it (`-f FILE`, else `GNUmakefile`, `makefile` or `Makefile` in the
    /// working directory).
    fn run_makefile(&mut self, words: &[String], depth: usize) {
        let given = words
            .iter()
            .position(|w| w == "-f" || w == "--file")
            .and_then(|at| words.get(at + 1).cloned());
        let path = given.or_else(|| {
            ["GNUmakefile", "makefile", "Makefile"]
                .into_iter()
                .find(|n| self.written.get(n).is_some())
                .map(str::to_owned)
        });
        if let Some(path) = path {
            self.run_file(&path, Lang::Make, depth);
        }
    }
}

/// `'…'` from its opening quote: every byte up to the closing one, as it is. Leaves `*i` on the
/// closing quote.
fn single_quoted(b: &[u8], i: &mut usize, line: &mut Line) {
    line.in_word = true;
    *i += 1;
    while *i < b.len() && b[*i] != b'\'' {
        line.word.push(b[*i]);
        *i += 1;
    }
}

/// `\` outside quotes: the next byte as a letter of the word, or nothing for a line break.
fn escaped(b: &[u8], i: &mut usize, line: &mut Line) {
    if let Some(&n) = b.get(*i + 1).filter(|n| **n != b'\n') {
        line.word.push(n);
        line.in_word = true;
    }
    *i += 2;
}

/// The heredoc bodies of the line just ended, read from `b[*i]` on.
fn read_heredocs(b: &[u8], i: &mut usize, line: &mut Line) {
    for (index, delim, strip_tabs) in std::mem::take(&mut line.heredocs) {
        let mut body = String::new();
        while *i < b.len() {
            let end = b[*i..]
                .iter()
                .position(|c| *c == b'\n')
                .map_or(b.len(), |p| *i + p);
            let mut text = &b[*i..end];
            *i = (end + 1).min(b.len());
            if strip_tabs {
                while let [b'\t', rest @ ..] = text {
                    text = rest;
                }
            }
            if text == delim.as_bytes() || text.strip_suffix(b"\r") == Some(delim.as_bytes()) {
                break;
            }
            body.push_str(&String::from_utf8_lossy(text));
            body.push('\n');
        }
        if let Some(cmd) = line.cmds.get_mut(index) {
            cmd.stdin = Some(body);
        }
    }
}

/// `$'…'` from just after the opening quote: C escapes, `\xHH` and octal included.
fn ansi_c_quoted(b: &[u8], i: &mut usize, word: &mut Vec<u8>) {
    while *i < b.len() {
        let c = b[*i];
        *i += 1;
        match c {
            b'\'' => return,
            b'\\' => {
                let Some(&n) = b.get(*i) else { return };
                *i += 1;
                match n {
                    b'n' => word.push(b'\n'),
                    b't' => word.push(b'\t'),
                    b'r' => word.push(b'\r'),
                    b'a' => word.push(7),
                    b'b' => word.push(8),
                    b'e' | b'E' => word.push(27),
                    b'x' => {
                        let digits = b[*i..]
                            .iter()
                            .take(2)
                            .take_while(|d| d.is_ascii_hexdigit())
                            .count();
                        let text = std::str::from_utf8(&b[*i..*i + digits]).unwrap_or_default();
                        match u8::from_str_radix(text, 16) {
                            Ok(v) => word.push(v),
                            Err(_) => word.extend_from_slice(b"\\x"),
                        }
                        *i += digits;
                    }
                    b'0'..=b'7' => {
                        let digits = b[*i - 1..]
                            .iter()
                            .take(3)
                            .take_while(|d| (b'0'..=b'7').contains(*d))
                            .count();
                        let text =
                            std::str::from_utf8(&b[*i - 1..*i - 1 + digits]).unwrap_or_default();
                        word.push(u16::from_str_radix(text, 8).map_or(0, |v| v as u8));
                        *i += digits - 1;
                    }
                    other => word.push(other),
                }
            }
            other => word.push(other),
        }
    }
}

/// The index just past the `)` or backtick closing the substitution that starts at `i`, without
/// reading it (nesting too deep): parentheses are counted, quotes are not.
fn skip_past(b: &[u8], mut i: usize, stop: Stop) -> usize {
    let mut depth = 1usize;
    while i < b.len() {
        match (stop, b[i]) {
            (_, b'\\') => i += 1,
            (Stop::Backtick, b'`') => return i + 1,
            (Stop::Paren, b'(') => depth += 1,
            (Stop::Paren, b')') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// What a command prints, when the text says: `echo`/`printf` their arguments, `cat` and
/// `base64 -d` their input.
fn printed_by(name: &str, words: &[String], stdin: Option<&str>) -> Option<String> {
    let args = words.get(1..).unwrap_or_default();
    match name {
        "echo" => {
            let text: Vec<&str> = args
                .iter()
                .map(String::as_str)
                .skip_while(|a| {
                    a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| "neE".contains(c))
                })
                .collect();
            Some(unescape(&text.join(" ")))
        }
        "printf" => {
            let (format, rest) = args.split_first()?;
            let mut rest = rest.iter();
            let mut out = String::new();
            let mut chars = format.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '%' {
                    match chars.next() {
                        Some('%') => out.push('%'),
                        Some(_) => out.push_str(rest.next().map_or("", String::as_str)),
                        None => out.push('%'),
                    }
                } else {
                    out.push(c);
                }
            }
            Some(unescape(&out))
        }
        "cat" if args.iter().all(|a| a.starts_with('-')) => stdin.map(str::to_owned),
        "base64"
            if args
                .iter()
                .any(|a| a == "-d" || a == "--decode" || a == "-D") =>
        {
            stdin
                .and_then(crate::base64::decode)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        }
        _ => None,
    }
}

/// `\n`, `\t` and `\\` as `echo -e` and `printf` read them.
fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Where a shell's script comes from: `-c SCRIPT`, its input (`-s`, `-`, no operand) or a file.
fn shell_input(words: &[String]) -> Input {
    let mut from_stdin = false;
    let mut it = words.iter().skip(1);
    while let Some(w) = it.next() {
        if w == "--" {
            return if from_stdin {
                Input::Stdin
            } else {
                Input::File(it.next().cloned())
            };
        }
        if w == "-" {
            return Input::Stdin;
        }
        if (w.starts_with('-') || w.starts_with('+')) && !w.starts_with("--") && w.len() > 1 {
            if w.starts_with('-') && w.contains('c') {
                return it
                    .next()
                    .map_or(Input::File(None), |s| Input::Arg(s.clone()));
            }
            from_stdin |= w.contains('s');
            if w.ends_with('o') || w.ends_with('O') {
                it.next();
            }
            continue;
        }
        if w.starts_with("--") {
            if w == "--rcfile" || w == "--init-file" {
                it.next();
            }
            continue;
        }
        return if from_stdin {
            Input::Stdin
        } else {
            Input::File(Some(w.clone()))
        };
    }
    Input::Stdin
}

fn is_python(name: &str) -> bool {
    ["python", "pypy"].iter().any(|p| {
        name.strip_prefix(p)
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

/// Where Python's program comes from: `-c CODE`, its input (`-`, no operand), a module or a file.
fn python_input(words: &[String]) -> Input {
    let mut it = words.iter().skip(1);
    while let Some(w) = it.next() {
        if w == "-" {
            return Input::Stdin;
        }
        if let Some(flags) = w
            .strip_prefix('-')
            .filter(|f| !f.is_empty() && !f.starts_with('-'))
        {
            if let Some(at) = flags.find('c') {
                let code = &flags[at + 1..];
                return if code.is_empty() {
                    it.next()
                        .map_or(Input::File(None), |s| Input::Arg(s.clone()))
                } else {
                    Input::Arg(code.to_owned())
                };
            }
            if flags.contains('m') {
                return Input::File(None);
            }
            if flags == "W" || flags == "X" {
                it.next();
            }
            continue;
        }
        if w.starts_with("--") {
            continue;
        }
        return Input::File(Some(w.clone()));
    }
    Input::Stdin
}

/// Drops what only wraps the real command: `VAR=value`, `sudo`, `env`, `command`, `exec`,
/// `nohup`, `time`, `nice`, `xargs`, `timeout N`, `if`/`then`/`do`/`!`, with their options.
/// One pass over the words (a command of a million `env`s is still read in linear time).
fn strip_prefixes(mut words: Vec<String>) -> Vec<String> {
    let mut k = 0;
    while k < words.len() {
        let w = words[k].as_str();
        if (is_assignment(w) && !w.starts_with('-'))
            || matches!(
                w,
                "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "!"
            )
        {
            k += 1;
            continue;
        }
        let name = basename(w);
        let takes_arg: &[&str] = match name {
            "sudo" | "doas" => &[
                "-u", "-g", "-h", "-p", "-C", "-D", "-R", "-T", "-U", "-r", "-t",
            ],
            "env" => &["-u", "-C", "--unset", "--chdir"],
            "nice" => &["-n", "--adjustment"],
            "xargs" => &[
                "-I",
                "-d",
                "-E",
                "-L",
                "-n",
                "-P",
                "-s",
                "-a",
                "--delimiter",
            ],
            "timeout" => &["-s", "-k", "--signal", "--kill-after"],
            "command" | "exec" | "nohup" | "time" | "builtin" | "setsid" | "stdbuf" => &["-a"],
            _ => break,
        };
        k += 1;
        while k < words.len() && words[k].starts_with('-') {
            k += 1 + usize::from(takes_arg.contains(&words[k].as_str()));
        }
        if name == "timeout" && k < words.len() {
            // The duration.
            k += 1;
        }
    }
    words.drain(..k.min(words.len()));
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        split_commands(s).into_iter().map(|w| w.join(" ")).collect()
    }

    fn runs(s: &str, cmd: &str) -> bool {
        words(s).iter().any(|w| w == cmd)
    }

    #[test]
    fn chains_wrappers_and_quotes() {
        assert!(runs("cd /repo && git  fetch origin", "git fetch origin"));
        assert!(runs("echo hi\ngit pull", "git pull"));
        assert!(runs(
            "bash -lc 'git log --all --oneline'",
            "git log --all --oneline"
        ));
        assert!(runs(
            "sh -c \"git fsck --lost-found\"",
            "git fsck --lost-found"
        ));
        assert!(runs("g''it fetch", "git fetch"));
        assert!(runs("$(echo git) fetch", "git fetch"));
        assert!(runs(
            "sudo GIT_TRACE=1 timeout 5 git cat-file -p HEAD",
            "git cat-file -p HEAD"
        ));
    }

    #[test]
    fn what_a_shell_would_run_too() {
        for (script, cmd) in [
            ("eval 'git log --all'", "git log --all"),
            ("eval git log --all", "git log --all"),
            ("echo 'git log --all' | sh", "git log --all"),
            ("echo 'git log --all' | bash", "git log --all"),
            ("echo 'git log --all' | bash -s", "git log --all"),
            ("printf 'git %s --all\\n' log | sh -", "git log --all"),
            ("x=git; $x log --all", "git log --all"),
            ("x=git\n${x} log --all", "git log --all"),
            ("export G=\"git log\"; $G --all", "git log --all"),
            ("c='git log --all'; $c", "git log --all"),
            ("bash -c \"$(echo git log --all)\"", "git log --all"),
            ("x=$(echo git log); $x --all", "git log --all"),
            ("sh <<'EOF'\ngit log --all\nEOF\n", "git log --all"),
            ("cat <<EOF | bash\ngit fetch\nEOF", "git fetch"),
            ("bash <<< 'git fetch'", "git fetch"),
            (
                "python -c \"import os; os.system('git log --all')\"",
                "git log --all",
            ),
            (
                "python3 -c 'import subprocess; subprocess.run(\"git log --all\", shell=True)'",
                "git log --all",
            ),
            (
                "python3 -c 'import subprocess; subprocess.Popen([\"bash\",\"-c\",\"git log --all\"])'",
                "git log --all",
            ),
            (
                "python3 - <<'PY'\nimport os\nos.system(\"git fetch origin\")\nPY\n",
                "git fetch origin",
            ),
            (
                "cat <<EOF | python\nimport subprocess\nsubprocess.call('git fetch', shell=True)\nEOF",
                "git fetch",
            ),
            ("echo Z2l0IGZldGNo | base64 -d | sh", "git fetch"),
            ("$'\\x67it' fetch", "git fetch"),
            ("if git fetch; then echo ok; fi", "git fetch"),
            ("git log --all 2>&1 | head", "git log --all"),
            ("diff <(git log --all) x", "git log --all"),
            ("alias g=git; g fetch", "git fetch"),
            ("nice -n 5 git fetch", "git fetch"),
            ("`echo git` fetch", "git fetch"),
            ("x=git; bash -c \"$x fetch\"", "git fetch"),
        ] {
            assert!(
                runs(script, cmd),
                "{script:?} should run {cmd:?}: {:?}",
                words(script)
            );
        }
    }

    #[test]
    fn what_is_only_text() {
        for (script, cmd) in [
            ("echo git fetch", "git fetch"),
            ("echo 'git fetch' > notes.txt", "git fetch"),
            ("grep 'git fetch' notes.txt", "git fetch"),
            ("# git fetch", "git fetch"),
            ("x=git log; $x fetch", "git fetch"),
            ("cat <<'EOF' > x.sh\ngit fetch\nEOF", "git fetch"),
        ] {
            assert!(
                !runs(script, cmd),
                "{script:?} must not run {cmd:?}: {:?}",
                words(script)
            );
        }
    }

    #[test]
    fn runaway_input_stays_bounded() {
        for script in [
            "$(".repeat(20_000),
            "`".repeat(20_000),
            "${".repeat(20_000),
            "\"$(".repeat(20_000),
            "bash -c \"".repeat(2_000),
            "eval ".repeat(20_000),
            "env ".repeat(20_000) + "git fetch",
            format!("a=xxxxxxxxxxxxxxxx{}", "; a=$a$a".repeat(60)),
            "<<EOF ".repeat(20_000),
            "'".repeat(20_001),
        ] {
            let t = std::time::Instant::now();
            let _ = split_commands(&script);
            assert!(
                t.elapsed().as_secs_f64() < 2.0,
                "{}",
                &script[..20.min(script.len())]
            );
        }
        assert!(runs(
            &format!("{}git fetch", "env ".repeat(20_000)),
            "git fetch"
        ));
    }
}
