//! Which shell commands change files in the workspace, read the way a shell would run them
//! (shell.rs): a replay of a transcript's edits is exact only if no command changed files behind
//! the edit tools' backs.
//!
//! A command writes when it redirects output into a file, runs a program that writes files
//! (`sed -i`, `mv`, `cp`, `rm`, `tee`, `patch`, `git checkout`/`apply`/`stash`/…), or runs
//! inline code whose text writes files (`python -c "open(…, 'w')"`). Targets under `/tmp` and
//! `/dev` are outside the workspace and do not count. Tests and scripts the agent runs are
//! assumed not to change the repository unless their text shows a write; that is the one thing
//! this cannot see.

use super::program::basename;
use super::shell::split_commands;

/// Why `script` changes files in the workspace, or `None` when nothing shows it does.
pub fn command_writes(script: &str) -> Option<String> {
    if let Some(target) = redirect_target(script) {
        return Some(format!("writes its output into `{target}`"));
    }
    let commands = split_commands(script);
    for words in &commands {
        if let Some(why) = program_writes(words) {
            return Some(why);
        }
    }
    // Code fed to an interpreter on standard input (`python - <<'EOF' … EOF`).
    let interpreter = commands.iter().any(|w| {
        matches!(
            basename(&w[0]),
            "python" | "python3" | "python2" | "node" | "ruby" | "perl" | "php"
        )
    });
    if interpreter && script.contains("<<") && code_writes(script) {
        return Some("feeds an interpreter code that writes files".to_owned());
    }
    None
}

/// Outside the workspace: scratch space and devices.
fn harmless(path: &str) -> bool {
    path.starts_with("/tmp/") || path.starts_with("/dev/") || path == "/dev/null" || path.is_empty()
}

/// The first `>`/`>>` redirection into a file (not `2>&1`, not `/dev/null`), outside quotes.
fn redirect_target(script: &str) -> Option<String> {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let mut quote: Option<char> = None;
    let mut heredoc_until: Option<String> = None;
    while i < chars.len() {
        let c = chars[i];
        if let Some(end) = &heredoc_until {
            // Skip a heredoc's body: its text is data, not redirections.
            let line_end = chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |p| i + p);
            let line: String = chars[i..line_end].iter().collect();
            if line.trim() == end {
                heredoc_until = None;
            }
            i = line_end + 1;
            continue;
        }
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '\\') => i += 1,
            (None, '<') if chars.get(i + 1) == Some(&'<') => {
                if let Some((marker, nl)) = heredoc_start(&chars, i) {
                    // The rest of this line still counts (`cat > f <<EOF`).
                    let rest: String = chars[i + 2..nl].iter().collect();
                    if let Some(t) = redirect_target(&rest) {
                        return Some(t);
                    }
                    heredoc_until = Some(marker);
                    i = nl + 1;
                    continue;
                }
            }
            (None, '>') => {
                let (target, next) = output_redirect(&chars, i);
                if target.is_some() {
                    return target;
                }
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A heredoc operator at `chars[i]` (`<<EOF`, `<<'EOF'`, `<<-EOF`; not `<<<`): its end marker and
/// the line break its body starts after.
fn heredoc_start(chars: &[char], i: usize) -> Option<(String, usize)> {
    let mut j = i + 2;
    while chars.get(j).is_some_and(|c| *c == '-' || *c == ' ') {
        j += 1;
    }
    let marker = word_at(chars, j);
    if marker.is_empty() || chars.get(i + 2) == Some(&'<') {
        return None;
    }
    let nl = chars[j..].iter().position(|&c| c == '\n')?;
    Some((marker, j + nl))
}

/// An output redirection at `chars[i]` (`>`, `>>`, `>|`): its target when that is a file in the
/// workspace, and where reading goes on otherwise (past a descriptor such as `2>&1`, `>&2`, a
/// process substitution, or a harmless path).
fn output_redirect(chars: &[char], i: usize) -> (Option<String>, usize) {
    let mut j = i + 1;
    if chars.get(j) == Some(&'>') || chars.get(j) == Some(&'|') {
        j += 1;
    }
    if chars.get(j) == Some(&'&') {
        return (None, j + 1);
    }
    while chars.get(j).is_some_and(|c| *c == ' ') {
        j += 1;
    }
    let target = word_at(chars, j);
    if !harmless(&target) && !target.starts_with("$(") {
        return (Some(target), j);
    }
    (None, j)
}

/// The word starting at `chars[j]`, up to white space or an operator, without its quotes.
fn word_at(chars: &[char], j: usize) -> String {
    chars[j..]
        .iter()
        .take_while(|c| !c.is_whitespace() && !matches!(c, ';' | '&' | '|' | ')'))
        .filter(|c| !matches!(c, '\'' | '"'))
        .collect()
}

/// The operands of a command (its words after the first that are not options).
fn operands(words: &[String]) -> Vec<&str> {
    words[1..]
        .iter()
        .map(String::as_str)
        .filter(|w| !w.starts_with('-'))
        .collect()
}

fn any_in_workspace(paths: &[&str]) -> Option<String> {
    paths.iter().find(|p| !harmless(p)).map(|p| (*p).to_owned())
}

/// Code passed inline to an interpreter that writes files.
pub(super) fn code_writes(code: &str) -> bool {
    let c = code.replace(' ', "");
    let open_for_write = c.match_indices("open(").any(|(i, _)| {
        let call: String = c[i..].chars().take(200).collect();
        let end = call.find(')').unwrap_or(call.len());
        let args = &call[..end];
        [
            "'w'", "\"w\"", "'a'", "\"a\"", "'wb'", "\"wb\"", "'x'", "\"x\"", "'w+'", "'r+'",
            "mode=",
        ]
        .iter()
        .any(|m| args.contains(m))
    });
    open_for_write
        || [
            ".write_text(",
            ".write_bytes(",
            "shutil.",
            "os.remove(",
            "os.unlink(",
            "os.rename(",
            "os.replace(",
            ".unlink(",
            "writeFileSync",
            "fs.writeFile",
            "File.write",
        ]
        .iter()
        .any(|m| c.contains(m))
}

fn program_writes(words: &[String]) -> Option<String> {
    let prog = basename(words.first()?);
    let args = &words[1..];
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let shown = || words.join(" ");
    match prog {
        "sed"
            if args.iter().any(|a| {
                a == "--in-place"
                    || a.starts_with("--in-place=")
                    || (a.starts_with("-i")
                        || (a.starts_with('-') && !a.starts_with("--") && a.contains('i')))
            }) =>
        {
            Some(format!("edits files in place: `{}`", shown()))
        }
        "perl" | "ruby"
            if args
                .iter()
                .any(|a| a.starts_with("-i") || a.starts_with("-pi")) =>
        {
            Some(format!("edits files in place: `{}`", shown()))
        }
        "mv" | "cp" | "rm" | "rmdir" | "touch" | "ln" | "chmod" | "truncate" | "install"
        | "rsync" | "unlink" | "shred" => {
            any_in_workspace(&operands(words)).map(|p| format!("`{prog}` changes `{p}`"))
        }
        "tee" => any_in_workspace(&operands(words)).map(|p| format!("`tee` writes `{p}`")),
        "dd" => args
            .iter()
            .find_map(|a| a.strip_prefix("of="))
            .filter(|p| !harmless(p))
            .map(|p| format!("`dd` writes `{p}`")),
        "patch" | "ed" | "ex" => Some(format!("`{prog}` changes files: `{}`", shown())),
        "unzip" | "gunzip" | "bunzip2" | "unxz" => Some(format!("`{prog}` writes files")),
        "tar"
            if args
                .first()
                .is_some_and(|a| a.contains('x') && !a.starts_with("--"))
                || has("--extract")
                || has("-x") =>
        {
            Some("`tar` extracts files".to_owned())
        }
        "find" if has("-delete") || has("-fprint") => {
            Some(format!("`find` deletes or writes files: `{}`", shown()))
        }
        "find" if has("-exec") || has("-execdir") => {
            let at = args.iter().position(|a| a == "-exec" || a == "-execdir")?;
            let inner: Vec<String> = args[at + 1..]
                .iter()
                .take_while(|a| *a != ";" && *a != "+" && *a != "\\;")
                .cloned()
                .collect();
            if inner.is_empty() {
                return None;
            }
            program_writes(&inner).map(|why| format!("`find -exec` {why}"))
        }
        "git" => git_writes(args).map(|sub| format!("`git {sub}` changes the working tree")),
        "python" | "python3" | "python2" | "node" | "ruby" | "perl" | "php" => {
            let inline = args
                .iter()
                .position(|a| a == "-c" || a == "-e")
                .and_then(|i| args.get(i + 1));
            inline
                .filter(|code| code_writes(code))
                .map(|_| format!("runs inline code that writes files: `{}`", shown()))
        }
        "awk" | "gawk" if args.iter().any(|a| a.contains("inplace")) => {
            Some(format!("edits files in place: `{}`", shown()))
        }
        "apply_patch" | "applypatch" => Some("applies a patch".to_owned()),
        _ => None,
    }
}

/// The git subcommand when it changes the working tree.
fn git_writes(args: &[String]) -> Option<String> {
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        i += if matches!(args[i].as_str(), "-c" | "-C" | "--git-dir" | "--work-tree") {
            2
        } else {
            1
        };
    }
    let sub = args.get(i)?.as_str();
    let rest = &args[i + 1..];
    let writes = match sub {
        "apply" => !rest
            .iter()
            .any(|a| a == "--check" || a == "--stat" || a == "--numstat"),
        "checkout" | "switch" | "restore" | "reset" | "merge" | "rebase" | "cherry-pick"
        | "revert" | "am" | "pull" | "mv" | "rm" | "clean" => true,
        "stash" => !matches!(rest.first().map(String::as_str), Some("list" | "show")),
        _ => false,
    };
    writes.then(|| sub.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writers_are_named_and_readers_are_not() {
        for cmd in [
            "sed -i 's/a/b/' calc/ops.py",
            "cd /w && sed -i.bak -e 's/a/b/' x.py",
            "echo hi > notes.txt",
            "cat >> calc/ops.py <<'EOF'\nx = 1\nEOF",
            "git checkout -- calc/ops.py",
            "git stash",
            "bash -lc 'mv a.py b.py'",
            "python -c \"open('x.py', 'w').write('1')\"",
            "printf x | tee out.txt",
            "find . -name '*.orig' -delete",
            "find . -name '*.py' -exec sed -i 's/a/b/' {} +",
            "git apply fix.diff",
            "python3 - <<'EOF'\nfrom pathlib import Path\nPath('x.py').write_text('1')\nEOF",
        ] {
            assert!(command_writes(cmd).is_some(), "{cmd}");
        }
        for cmd in [
            "python -m pytest -q 2>&1 | tail -3",
            "grep -rn 'x > y' calc",
            "cat calc/ops.py",
            "sed -n '1,20p' calc/ops.py",
            "ls > /dev/null",
            "echo x > /tmp/scratch.txt",
            "git status && git diff",
            "git apply --check fix.diff",
            "python - <<'EOF'\nprint(1 > 0)\nEOF",
            "python3 - <<'EOF'\nprint(open('calc/ops.py').read())\nEOF",
            "rm -rf /tmp/build",
            "python -c 'print(open(\"x.py\").read())'",
            "cmd 2>&1 >/dev/null",
        ] {
            assert_eq!(command_writes(cmd), None, "{cmd}");
        }
    }
}
