//! Shell commands that Python code would run: `os.system("…")`, `os.popen("…")`,
//! `subprocess.run("…", shell=True)` (and `call`, `check_call`, `check_output`, `Popen`,
//! `getoutput`), argument lists such as `subprocess.Popen(["bash", "-c", "…"])` or
//! `["git", "log", "--all"]` anywhere, and IPython's `!command` lines and `%%bash` cells.
//!
//! This module only finds them, in one forward pass over the code (string literals are read once,
//! each call looks a bounded distance ahead for `shell=True`); the shell reader runs what it finds.
//! It never executes or imports anything.

/// What a piece of Python would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Run {
    /// A string handed to a shell (`os.system`, `shell=True`, `!cmd`, `%%bash`).
    Shell(String),
    /// An argument list run without a shell.
    Argv(Vec<String>),
}

/// How far past a call's first argument `shell=True` is looked for.
const SHELL_TRUE_WINDOW: usize = 512;

/// Functions whose string argument is a shell command line.
const SHELL_CALLS: [&str; 5] = [
    "system",
    "popen",
    "getoutput",
    "getstatusoutput",
    "create_subprocess_shell",
];
/// Functions that run an argument list, or a string through a shell with `shell=True`.
const SUBPROCESS_CALLS: [&str; 6] = [
    "run",
    "call",
    "check_call",
    "check_output",
    "Popen",
    "spawn",
];
/// First items of a list literal that make it a command worth reading.
const PROGRAMS: [&str; 13] = [
    "git", "gh", "sh", "bash", "zsh", "dash", "ksh", "env", "sudo", "timeout", "nohup", "xargs",
    "exec",
];

/// Everything `code` would run, in order.
pub(super) fn runs(code: &str) -> Vec<Run> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    ipython_lines(code, &mut out);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'#' {
            // A comment runs to the end of the line.
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if let Some((_, end)) = literal_at(b, i) {
            i = end;
            continue;
        }
        if c == b'(' {
            let name = callee(b, i);
            let last = name.rsplit('.').next().unwrap_or(name);
            if SHELL_CALLS.contains(&last) || SUBPROCESS_CALLS.contains(&last) {
                let start = skip_space(b, i + 1);
                if let Some((arg, end)) = argument(b, start) {
                    match arg {
                        Arg::Str(s) if SHELL_CALLS.contains(&last) || shell_true(b, end) => {
                            out.push(Run::Shell(s));
                        }
                        Arg::Str(_) => {}
                        Arg::List(words) | Arg::Split(words) => {
                            if !words.is_empty() {
                                out.push(Run::Argv(words));
                            }
                        }
                    }
                    i = end;
                    continue;
                }
            }
        }
        // A list literal anywhere (`cmd = ["git", "log", "--all"]`); tuples only as call
        // arguments, since `print("git", "fetch")` runs nothing.
        if c == b'['
            && let Some((words, end)) = string_list(b, i)
        {
            if words
                .first()
                .is_some_and(|w| PROGRAMS.contains(&super::program::basename(w)))
            {
                out.push(Run::Argv(words));
            }
            i = end;
            continue;
        }
        i += 1;
    }
    out
}

/// The string literals of `code` outside comments (adjacent ones joined:
/// `"https://github.com/" "o/r"`), each with whether it is a statement of its own (a docstring).
fn literals(code: &str) -> Vec<(String, bool)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if let Some((text, end)) = strings(b, i) {
            let line_start = b[..i]
                .iter()
                .rposition(|c| *c == b'\n')
                .map_or(0, |p| p + 1);
            let alone_before = b[line_start..i].iter().all(u8::is_ascii_whitespace);
            let alone_after = b[end..]
                .iter()
                .take_while(|c| **c != b'\n')
                .all(u8::is_ascii_whitespace);
            out.push((text, alone_before && alone_after));
            i = end;
            continue;
        }
        i += 1;
    }
    out
}

/// What a Python file's strings name, from one pass over its literals (not comments, and not a
/// literal that is a statement of its own: a docstring fetches and runs nothing).
#[derive(Debug, Default)]
pub(super) struct Strings {
    /// The URLs in them: what the file may open.
    pub urls: Vec<String>,
    /// The Python files they name (`exec(open("x.py").read())`, `runpy.run_path("x.py")`):
    /// what the file may run.
    pub py_paths: Vec<String>,
}

/// What `code`'s strings name ([`Strings`]).
pub(super) fn named(code: &str) -> Strings {
    let mut out = Strings::default();
    for (text, alone) in literals(code) {
        if alone {
            continue;
        }
        for u in crate::text::urls(&text) {
            if !out.urls.contains(&u) {
                out.urls.push(u);
            }
        }
        let t = text.trim();
        if t.ends_with(".py")
            && !t.contains(char::is_whitespace)
            && !out.py_paths.iter().any(|p| p == t)
        {
            out.py_paths.push(t.to_owned());
        }
    }
    out
}

/// IPython: a line `!cmd` runs `cmd` in a shell; a cell starting `%%bash`/`%%sh` is a script.
fn ipython_lines(code: &str, out: &mut Vec<Run>) {
    let mut lines = code.lines();
    if let Some(first) = code.lines().next().map(str::trim)
        && matches!(
            first,
            "%%bash" | "%%sh" | "%%script bash" | "%%script sh" | "%%system"
        )
    {
        lines.next();
        out.push(Run::Shell(lines.collect::<Vec<_>>().join("\n")));
        return;
    }
    for line in lines {
        let t = line.trim_start();
        if let Some(cmd) = t.strip_prefix('!').or_else(|| t.strip_prefix("%system ")) {
            out.push(Run::Shell(cmd.trim_start_matches('!').to_owned()));
        }
    }
}

/// The dotted name just before the `(` at `open` (`subprocess.run`, `os.system`, `sp.Popen`).
fn callee(b: &[u8], open: usize) -> &str {
    let mut start = open;
    while start > 0 && (b[start - 1].is_ascii_alphanumeric() || matches!(b[start - 1], b'_' | b'.'))
    {
        start -= 1;
    }
    // ASCII only, so the bytes are a valid string.
    std::str::from_utf8(&b[start..open]).unwrap_or_default()
}

fn skip_space(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'\\') {
        i += 1;
    }
    i
}

enum Arg {
    Str(String),
    List(Vec<String>),
    /// `"git log".split()` / `shlex.split("git log")`.
    Split(Vec<String>),
}

/// A call's first argument, when it is a string (implicit concatenation included), a list or
/// tuple of strings, or a split string; and the index after it.
fn argument(b: &[u8], i: usize) -> Option<(Arg, usize)> {
    if let Some(rest) = b.get(i..)
        && rest.starts_with(b"shlex.split(")
    {
        let (s, end) = strings(b, skip_space(b, i + "shlex.split(".len()))?;
        return Some((Arg::Split(split_words(&s)), end));
    }
    if let Some((s, end)) = strings(b, i) {
        if b.get(end..).is_some_and(|r| r.starts_with(b".split()")) {
            return Some((Arg::Split(split_words(&s)), end + ".split()".len()));
        }
        return Some((Arg::Str(s), end));
    }
    let (words, end) = string_list(b, i)?;
    Some((Arg::List(words), end))
}

fn split_words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_owned).collect()
}

/// Whether `shell=True` follows within the call (a bounded look ahead, so the pass stays linear).
fn shell_true(b: &[u8], from: usize) -> bool {
    let end = (from + SHELL_TRUE_WINDOW).min(b.len());
    let window: Vec<u8> = b[from..end]
        .iter()
        .copied()
        .take_while(|c| *c != b')')
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    window.windows(10).any(|w| w == b"shell=True")
}

/// One or more adjacent string literals (`"git " "log"`), joined.
fn strings(b: &[u8], i: usize) -> Option<(String, usize)> {
    let (mut s, mut end) = literal_at(b, i)?;
    loop {
        let next = skip_space(b, end);
        match literal_at(b, next) {
            Some((more, e)) => {
                s.push_str(&more);
                end = e;
            }
            None => return Some((s, end)),
        }
    }
}

/// A list or tuple literal made only of string literals: its items and the index after it.
fn string_list(b: &[u8], open: usize) -> Option<(Vec<String>, usize)> {
    let close = match b.get(open)? {
        b'[' => b']',
        b'(' => b')',
        _ => return None,
    };
    let mut items = Vec::new();
    let mut i = skip_space(b, open + 1);
    loop {
        if b.get(i) == Some(&close) {
            return (!items.is_empty()).then_some((items, i + 1));
        }
        let (s, end) = strings(b, i)?;
        items.push(s);
        i = skip_space(b, end);
        match b.get(i)? {
            b',' => i = skip_space(b, i + 1),
            c if *c == close => return Some((items, i + 1)),
            _ => return None,
        }
    }
}

/// A Python string literal starting at `i` (prefixes `r`, `b`, `u`, `f` and their pairs, single,
/// double and triple quotes, escapes): its value and the index after it. A literal without its
/// closing quote ends at the line's end (triple quotes: at the end of the code).
fn literal_at(b: &[u8], i: usize) -> Option<(String, usize)> {
    let mut q = i;
    let mut raw = false;
    // A prefix is at most two letters and must not be the tail of a longer name.
    while q < b.len() && q - i < 2 && matches!(b[q].to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f')
    {
        raw |= b[q].eq_ignore_ascii_case(&b'r');
        q += 1;
    }
    let quote = *b.get(q)?;
    if quote != b'\'' && quote != b'"' {
        return None;
    }
    if q > i && i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let triple = b
        .get(q..q + 3)
        .is_some_and(|t| t.iter().all(|c| *c == quote));
    let mut j = q + if triple { 3 } else { 1 };
    let mut out: Vec<u8> = Vec::new();
    while j < b.len() {
        let c = b[j];
        if triple {
            if b.get(j..j + 3)
                .is_some_and(|t| t.iter().all(|c| *c == quote))
            {
                return Some((String::from_utf8_lossy(&out).into_owned(), j + 3));
            }
        } else if c == quote {
            return Some((String::from_utf8_lossy(&out).into_owned(), j + 1));
        } else if c == b'\n' {
            break;
        }
        if c == b'\\' && j + 1 < b.len() {
            let n = b[j + 1];
            if raw {
                out.extend_from_slice(&[c, n]);
                j += 2;
                continue;
            }
            j += 2;
            match n {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                b'\n' => {}
                b'x' => match b.get(j..j + 2).and_then(hex_byte) {
                    Some(v) => {
                        out.push(v);
                        j += 2;
                    }
                    None => out.extend_from_slice(b"\\x"),
                },
                b'\\' | b'\'' | b'"' => out.push(n),
                other => out.extend_from_slice(&[b'\\', other]),
            }
            continue;
        }
        out.push(c);
        j += 1;
    }
    Some((String::from_utf8_lossy(&out).into_owned(), j))
}

fn hex_byte(two: &[u8]) -> Option<u8> {
    u8::from_str_radix(std::str::from_utf8(two).ok()?, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(s: &str) -> Run {
        Run::Shell(s.into())
    }

    fn argv(w: &[&str]) -> Run {
        Run::Argv(w.iter().map(|s| (*s).to_owned()).collect())
    }

    #[test]
    fn calls_that_run_shell_commands() {
        for (code, want) in [
            (
                "import os; os.system('git log --all')",
                shell("git log --all"),
            ),
            ("os.popen(\"git fetch\").read()", shell("git fetch")),
            (
                "subprocess.run(\"git log --all\", shell=True)",
                shell("git log --all"),
            ),
            (
                "subprocess.check_output('git ' 'fetch',\n    text=True, shell = True)",
                shell("git fetch"),
            ),
            (
                "subprocess.Popen([\"bash\",\"-c\",\"git log --all\"])",
                argv(&["bash", "-c", "git log --all"]),
            ),
            ("sp.call(('git', 'fetch'))", argv(&["git", "fetch"])),
            ("run('git fetch'.split())", argv(&["git", "fetch"])),
            (
                "cmd = ['git', 'log', '--all']",
                argv(&["git", "log", "--all"]),
            ),
            ("os.system(r'git\\x20fetch')", shell("git\\x20fetch")),
            ("os.system('git\\x20fetch')", shell("git fetch")),
            ("!git fetch origin", shell("git fetch origin")),
            ("%%bash\ngit fetch\n", shell("git fetch")),
        ] {
            assert_eq!(runs(code), vec![want], "{code}");
        }
    }

    #[test]
    fn what_does_not_run() {
        for code in [
            "subprocess.run('git log --all')",
            "print('os.system(\"git fetch\")')",
            "# os.system('git fetch')",
            "x = ['a', 'b']",
            "items = ['git']+other",
            "print('git', 'fetch')",
            "os.system(cmd)",
        ] {
            assert!(
                runs(code).iter().all(|r| !matches!(r, Run::Shell(_))),
                "{code}: {:?}",
                runs(code)
            );
        }
        assert_eq!(runs("subprocess.run('git log --all')"), vec![]);
        assert_eq!(runs("print('os.system(\"git fetch\")')"), vec![]);
    }

    #[test]
    fn unterminated_and_odd_text_does_not_panic() {
        for code in [
            "os.system('",
            "os.system(\"\"\"",
            "[",
            "['git',",
            "(((",
            "r'",
            "é'x",
            "\\",
        ] {
            let _ = runs(code);
        }
    }
}
