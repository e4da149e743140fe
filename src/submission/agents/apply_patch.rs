//! Codex's `apply_patch` envelope: parsing it, and applying its update chunks to a file's text the
//! way Codex does, so a replay produces the file Codex wrote.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path        (then `+` lines)
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path     (optional)
//! @@ optional context line
//!  context / -old / +new lines
//! *** End of File           (optional: the chunk ends the file)
//! *** End Patch
//! ```
//!
//! Matching follows Codex: the old lines are looked for from the current position, first exactly,
//! then ignoring trailing and then surrounding white space; a file Codex writes always ends with a
//! line break. What Codex would match only after normalising Unicode punctuation is refused here,
//! so a replay never guesses.

use super::trajectory::{Chunk, EditOp};

/// Parses an envelope into file operations, or says what is wrong with it (line numbers from 1).
pub(super) fn parse(envelope: &str) -> Result<Vec<EditOp>, String> {
    let text = envelope.trim();
    let lines: Vec<&str> = text.lines().collect();
    let body = envelope_body(&lines)?;
    let mut ops = Vec::new();
    // `i` indexes `body`; line numbers in messages count the `*** Begin Patch` line too.
    let mut i = 0;
    while i < body.len() {
        let line = body[i].trim_end();
        let n = i + 2;
        if let Some(path) = line.strip_prefix("*** Add File: ") {
            i += 1;
            ops.push(EditOp::Add {
                path: path.trim().to_owned(),
                content: added_content(body, &mut i)?,
            });
        } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
            ops.push(EditOp::Delete {
                path: path.trim().to_owned(),
            });
            i += 1;
        } else if let Some(path) = line.strip_prefix("*** Update File: ") {
            i += 1;
            let mut move_to = None;
            if let Some(dest) = body.get(i).and_then(|l| l.strip_prefix("*** Move to: ")) {
                move_to = Some(dest.trim().to_owned());
                i += 1;
            }
            let chunks = update_chunks(body, &mut i)?;
            if chunks.is_empty() {
                return Err(format!(
                    "line {n}: `*** Update File: {path}` changes nothing"
                ));
            }
            ops.push(EditOp::Update {
                path: path.trim().to_owned(),
                move_to,
                chunks,
            });
        } else if line.is_empty() {
            i += 1;
        } else {
            return Err(format!(
                "line {n}: expected `*** Add File:`, `*** Delete File:` or `*** Update File:`, found `{line}`"
            ));
        }
    }
    if ops.is_empty() {
        return Err("the patch changes no file".into());
    }
    Ok(ops)
}

/// The lines between `*** Begin Patch` and `*** End Patch`.
fn envelope_body<'a>(lines: &'a [&'a str]) -> Result<&'a [&'a str], String> {
    let (Some(first), Some(last)) = (lines.first(), lines.last()) else {
        return Err("empty patch".into());
    };
    if first.trim() != "*** Begin Patch" {
        return Err(format!(
            "line 1: expected `*** Begin Patch`, found `{first}`"
        ));
    }
    if last.trim() != "*** End Patch" {
        return Err(format!(
            "line {}: expected `*** End Patch`, found `{last}`",
            lines.len()
        ));
    }
    Ok(&lines[1..lines.len() - 1])
}

/// An added file's `+` lines from `body[*i]` up to the next `*** ` line, as its content.
fn added_content(body: &[&str], i: &mut usize) -> Result<String, String> {
    let mut content = String::new();
    while *i < body.len() && !body[*i].starts_with("*** ") {
        let Some(added) = body[*i].strip_prefix('+') else {
            return Err(format!(
                "line {}: a line of an added file must start with `+`: `{}`",
                *i + 2,
                body[*i]
            ));
        };
        content.push_str(added);
        content.push('\n');
        *i += 1;
    }
    Ok(content)
}

impl Chunk {
    fn new(context: Option<String>) -> Chunk {
        Chunk {
            context,
            old_lines: Vec::new(),
            new_lines: Vec::new(),
            end_of_file: false,
        }
    }
}

/// An update's chunks from `body[*i]` up to the next `*** ` line other than `*** End of File`.
fn update_chunks(body: &[&str], i: &mut usize) -> Result<Vec<Chunk>, String> {
    let mut chunks: Vec<Chunk> = Vec::new();
    while let Some(&l) = body.get(*i) {
        let n = *i + 2;
        let end_of_file = l.starts_with("*** End of File");
        if l.starts_with("*** ") && !end_of_file {
            break;
        }
        *i += 1;
        if end_of_file {
            match chunks.last_mut() {
                Some(c) => c.end_of_file = true,
                None => return Err(format!("line {n}: `*** End of File` before any change")),
            }
            continue;
        }
        if let Some(ctx) = l.strip_prefix("@@") {
            let ctx = ctx.strip_prefix(' ').unwrap_or(ctx);
            chunks.push(Chunk::new((!ctx.is_empty()).then(|| ctx.to_owned())));
            continue;
        }
        if chunks.is_empty() {
            // Codex accepts a first chunk without its `@@` line.
            chunks.push(Chunk::new(None));
        }
        let Some(chunk) = chunks.last_mut() else {
            return Err(format!("line {n}: no chunk"));
        };
        match l.chars().next() {
            None => {
                chunk.old_lines.push(String::new());
                chunk.new_lines.push(String::new());
            }
            Some(' ') => {
                chunk.old_lines.push(l[1..].to_owned());
                chunk.new_lines.push(l[1..].to_owned());
            }
            Some('-') => chunk.old_lines.push(l[1..].to_owned()),
            Some('+') => chunk.new_lines.push(l[1..].to_owned()),
            Some(_) => {
                return Err(format!(
                    "line {n}: a change line must start with ` `, `-` or `+`: `{l}`"
                ));
            }
        }
    }
    Ok(chunks)
}

/// The envelope inside a shell command Codex runs as `apply_patch` itself: `apply_patch <<'EOF'
/// … EOF` (optionally after `cd DIR &&`). Returns the envelope and the directory.
pub(super) fn from_heredoc(script: &str) -> Option<(String, Option<String>)> {
    let mut rest = script.trim();
    let mut dir = None;
    if let Some(after) = rest.strip_prefix("cd ")
        && let Some((d, tail)) = after.split_once("&&")
    {
        dir = Some(d.trim().trim_matches(['\'', '"']).to_owned());
        rest = tail.trim_start();
    }
    let rest = rest
        .strip_prefix("apply_patch")
        .or_else(|| rest.strip_prefix("applypatch"))?
        .trim_start();
    let rest = rest
        .strip_prefix("<<")?
        .trim_start_matches('-')
        .trim_start();
    let (marker_raw, body) = rest.split_once('\n')?;
    let marker = marker_raw.trim().trim_matches(['\'', '"']);
    if marker.is_empty() {
        return None;
    }
    let end = body
        .lines()
        .position(|l| l.trim() == marker)
        .map(|n| body.lines().take(n).collect::<Vec<_>>().join("\n"))?;
    Some((end, dir))
}

/// Where `pattern` starts in `lines` at or after `start`, with Codex's levels of leniency (exact,
/// trailing white space, surrounding white space). With `eof`, the end of the file is tried first.
fn seek(lines: &[String], pattern: &[String], start: usize, eof: bool) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start);
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let last = lines.len() - pattern.len();
    let from = if eof && last >= start { last } else { start };
    let levels: [fn(&str, &str) -> bool; 3] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
    ];
    for eq in levels {
        for i in from..=last {
            if lines[i..i + pattern.len()]
                .iter()
                .zip(pattern)
                .all(|(a, b)| eq(a, b))
            {
                return Some(i);
            }
        }
    }
    None
}

/// The new text of a file after the update chunks, or why they do not apply.
pub fn apply_chunks(text: &str, chunks: &[Chunk]) -> Result<String, String> {
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    if lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    let mut replacements: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut pos = 0usize;
    for (n, chunk) in chunks.iter().enumerate() {
        if let Some(ctx) = &chunk.context {
            let found = seek(&lines, std::slice::from_ref(ctx), pos, false)
                .ok_or_else(|| format!("chunk {}: context line `{ctx}` not found", n + 1))?;
            pos = found + 1;
        }
        if chunk.old_lines.is_empty() {
            let at = if lines.last().is_some_and(String::is_empty) {
                lines.len() - 1
            } else {
                lines.len()
            };
            replacements.push((at, 0, chunk.new_lines.clone()));
            continue;
        }
        let mut old = chunk.old_lines.clone();
        let mut new = chunk.new_lines.clone();
        let mut found = seek(&lines, &old, pos, chunk.end_of_file);
        if found.is_none() && old.last().is_some_and(String::is_empty) {
            old.pop();
            if new.last().is_some_and(String::is_empty) {
                new.pop();
            }
            found = seek(&lines, &old, pos, chunk.end_of_file);
        }
        let at = found.ok_or_else(|| {
            format!(
                "chunk {}: the lines to replace were not found exactly: `{}`",
                n + 1,
                old.first().map(String::as_str).unwrap_or("")
            )
        })?;
        replacements.push((at, old.len(), new));
        pos = at + old.len();
    }
    replacements.sort_by_key(|r| r.0);
    for (at, len, new) in replacements.into_iter().rev() {
        lines.splice(at..at + len, new);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_with_every_kind_of_change() {
        let ops = parse(
            "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** Delete File: b.txt\n*** Update File: c.py\n*** Move to: d.py\n@@ def f():\n-    return 1\n+    return 2\n*** End of File\n*** End Patch\n",
        )
        .unwrap();
        assert_eq!(ops.len(), 3);
        assert_eq!(
            ops[0],
            EditOp::Add {
                path: "a.txt".into(),
                content: "hello\n".into()
            }
        );
        let EditOp::Update {
            move_to, chunks, ..
        } = &ops[2]
        else {
            panic!("{ops:?}")
        };
        assert_eq!(move_to.as_deref(), Some("d.py"));
        assert!(chunks[0].end_of_file);
        assert_eq!(chunks[0].context.as_deref(), Some("def f():"));
        assert!(parse("*** Begin Patch\n*** Frobnicate: x\n*** End Patch").is_err());
        assert!(parse("*** Update File: x\n-a\n+b\n").is_err());
    }

    #[test]
    fn chunks_apply_like_codex() {
        let text = "def f():\n    return 1\n\ndef g():\n    return 1\n";
        let ops = parse("*** Begin Patch\n*** Update File: m.py\n@@ def g():\n-    return 1\n+    return 2\n*** End Patch").unwrap();
        let EditOp::Update { chunks, .. } = &ops[0] else {
            panic!()
        };
        assert_eq!(
            apply_chunks(text, chunks).unwrap(),
            "def f():\n    return 1\n\ndef g():\n    return 2\n"
        );
        // A file without a final line break gets one, as Codex writes it.
        assert_eq!(
            apply_chunks(
                "a\nb",
                &[Chunk {
                    context: None,
                    old_lines: vec!["b".into()],
                    new_lines: vec!["c".into()],
                    end_of_file: false
                }]
            )
            .unwrap(),
            "a\nc\n"
        );
        assert!(
            apply_chunks(
                "a\n",
                &[Chunk {
                    context: None,
                    old_lines: vec!["zzz".into()],
                    new_lines: vec![],
                    end_of_file: false
                }]
            )
            .is_err()
        );
    }

    #[test]
    fn heredoc_invocations_are_recognised() {
        let (env, dir) = from_heredoc(
            "cd /w && apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEOF\n",
        )
        .unwrap();
        assert_eq!(dir.as_deref(), Some("/w"));
        assert!(env.starts_with("*** Begin Patch") && env.ends_with("*** End Patch"));
        assert!(from_heredoc("cat <<EOF\nx\nEOF").is_none());
    }
}
