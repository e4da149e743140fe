//! Shell commands taken apart the way a shell would run them, so the blocklist cannot be
//! sidestepped with spacing, flags, chains, line breaks, wrappers or quote tricks.
//!
//! `split_commands` yields every simple command a string would run: split on `;`, `&&`, `||`, `|`,
//! `&` and line breaks; `bash -c '…'` / `sh -lc "…"` and `$(…)` / backticks are opened up
//! recursively; quotes are joined the way the shell joins them (`g''it` is `git`).

/// Every simple command in `script`, as words.
pub fn split_commands(script: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    collect(script, &mut out, 0);
    out
}

fn collect(script: &str, out: &mut Vec<Vec<String>>, depth: usize) {
    if depth > 8 {
        return;
    }
    let (words_list, substitutions) = tokenize(script);
    for sub in substitutions {
        collect(&sub, out, depth + 1);
    }
    for words in words_list {
        let words = strip_prefixes(words);
        if words.is_empty() {
            continue;
        }
        // `bash -lc 'script'`, `sh -c "script"`, `zsh -c …`: run the script too.
        let name = basename(&words[0]);
        if matches!(name, "sh" | "bash" | "zsh" | "dash" | "ksh") {
            let mut it = words.iter().skip(1);
            while let Some(w) = it.next() {
                if w.starts_with('-') && w.contains('c') && !w.starts_with("--") {
                    if let Some(inner) = it.next() {
                        collect(inner, out, depth + 1);
                    }
                    break;
                }
            }
        }
        out.push(words);
    }
}

/// Drops leading `VAR=value`, `sudo`, `env`, `command`, `exec`, `nohup`, `time`, `timeout N`.
fn strip_prefixes(mut words: Vec<String>) -> Vec<String> {
    loop {
        let Some(first) = words.first() else {
            return words;
        };
        let is_assign = first.contains('=')
            && !first.starts_with('-')
            && first.split('=').next().is_some_and(|k| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
        let name = basename(first).to_owned();
        if is_assign
            || matches!(
                name.as_str(),
                "sudo" | "env" | "command" | "exec" | "nohup" | "time" | "nice" | "xargs"
            )
        {
            words.remove(0);
            while words.first().is_some_and(|w| w.starts_with('-')) {
                words.remove(0);
            }
        } else if name == "timeout" {
            words.remove(0);
            while words.first().is_some_and(|w| w.starts_with('-')) {
                words.remove(0);
            }
            if !words.is_empty() {
                words.remove(0);
            }
        } else {
            return words;
        }
    }
}

pub(super) fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Words of each simple command, and the contents of `$(…)` and backticks (run as well).
fn tokenize(script: &str) -> (Vec<Vec<String>>, Vec<String>) {
    let chars: Vec<char> = script.chars().collect();
    let mut commands = Vec::new();
    let mut subs = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut i = 0;
    let end_word = |word: &mut String, in_word: &mut bool, words: &mut Vec<String>| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    word.push(chars[i]);
                    i += 1;
                }
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                    }
                    if chars[i] == '$' && chars.get(i + 1) == Some(&'(') {
                        let (inner, next) = balanced(&chars, i + 2);
                        subs.push(inner.clone());
                        word.push_str(&substitute(&inner));
                        i = next;
                        continue;
                    }
                    word.push(chars[i]);
                    i += 1;
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.get(i + 1) {
                    if *n != '\n' {
                        word.push(*n);
                    }
                    i += 1;
                }
            }
            '$' if chars.get(i + 1) == Some(&'(') => {
                let (inner, next) = balanced(&chars, i + 2);
                subs.push(inner.clone());
                word.push_str(&substitute(&inner));
                in_word = true;
                i = next;
                continue;
            }
            '`' => {
                let start = i + 1;
                let mut j = start;
                while j < chars.len() && chars[j] != '`' {
                    j += 1;
                }
                let inner: String = chars[start..j.min(chars.len())].iter().collect();
                subs.push(inner.clone());
                word.push_str(&substitute(&inner));
                in_word = true;
                i = j;
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '{' | '}' => {
                end_word(&mut word, &mut in_word, &mut words);
                if !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut words),
            _ => {
                in_word = true;
                word.push(c);
            }
        }
        i += 1;
    }
    end_word(&mut word, &mut in_word, &mut words);
    if !words.is_empty() {
        commands.push(words);
    }
    (commands, subs)
}

/// The text inside `$(` … `)` starting at `start`, and the index after the closing paren.
fn balanced(chars: &[char], start: usize) -> (String, usize) {
    let mut depth = 1;
    let mut j = start;
    while j < chars.len() {
        match chars[j] {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        j += 1;
    }
    (chars[start..j.min(chars.len())].iter().collect(), j + 1)
}

/// What a command substitution most likely yields: `echo X` / `printf X` give X; anything else
/// gives nothing we can know (an empty word).
fn substitute(inner: &str) -> String {
    let (cmds, _) = tokenize(inner);
    match cmds.first() {
        Some(w) if matches!(w.first().map(String::as_str), Some("echo" | "printf")) => w
            .iter()
            .skip(1)
            .filter(|a| !a.starts_with('-'))
            .cloned()
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        split_commands(s).into_iter().map(|w| w.join(" ")).collect()
    }

    #[test]
    fn chains_wrappers_and_quotes() {
        assert!(words("cd /repo && git  fetch origin").contains(&"git fetch origin".to_owned()));
        assert!(words("echo hi\ngit pull").contains(&"git pull".to_owned()));
        assert!(
            words("bash -lc 'git log --all --oneline'")
                .contains(&"git log --all --oneline".to_owned())
        );
        assert!(
            words("sh -c \"git fsck --lost-found\"").contains(&"git fsck --lost-found".to_owned())
        );
        assert!(words("g''it fetch").contains(&"git fetch".to_owned()));
        assert!(words("$(echo git) fetch").contains(&"git fetch".to_owned()));
        assert!(
            words("sudo GIT_TRACE=1 timeout 5 git cat-file -p HEAD")
                .contains(&"git cat-file -p HEAD".to_owned())
        );
    }
}
