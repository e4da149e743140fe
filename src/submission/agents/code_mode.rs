//! Codex's code mode: the model writes a JavaScript program (an `exec` call) and the tool calls
//! are the program's `tools.NAME(ARGUMENT)` calls. A program is read when every one of them is
//! plain: `tools`, a tool's name and one argument built of literals (objects, arrays, strings,
//! template strings without `${…}`, numbers, `true`, `false`, `null`), of `const` names bound
//! once to such literals, and of `...` spreads of them. Anything that could reach a tool
//! otherwise makes the whole program unread, with why: `tools` used in any other way, a name
//! that reaches code or the global object (`eval`, `Function`, `globalThis`, `this`, `import`,
//! `constructor`, …), or a regular expression that spells `tools`. Read conservatively: a
//! program this reader cannot vouch for is never taken for one with no calls.

use serde_json::{Map, Number, Value};
use std::collections::HashMap;

/// One tool call of a program: the tool's name and its argument as JSON.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ProgramCall {
    pub(super) tool: String,
    pub(super) argument: Value,
}

/// The longest program read (its patches' text included); a longer one is unread.
const MAX_PROGRAM: usize = 16 << 20;

/// Names a program may not use: each reaches code from data or the global object, through
/// which `tools` can be reached without being named.
const REACHING: &[&str] = &[
    "eval",
    "Function",
    "AsyncFunction",
    "globalThis",
    "global",
    "self",
    "window",
    "this",
    "import",
    "require",
    "Reflect",
    "Proxy",
    "constructor",
    "prototype",
    "__proto__",
    "with",
    "setTimeout",
    "setInterval",
    "setImmediate",
    "queueMicrotask",
    "process",
    "module",
    "exports",
    "Deno",
    "Bun",
    "WebAssembly",
    "Worker",
];

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Str(String),
    Num(f64),
    /// A template string without `${…}`.
    Template(String),
    /// A template string with `${…}`: computed.
    Computed,
    Regex(String),
    Punct(&'static str),
    Other(char),
}

/// The calls of `program`, or why it cannot be read.
pub(super) fn read_program(program: &str) -> Result<Vec<ProgramCall>, String> {
    if program.len() > MAX_PROGRAM {
        return Err(format!(
            "a program of {} bytes, over the {MAX_PROGRAM} read",
            program.len()
        ));
    }
    let tokens = tokenize(program)?;
    for t in &tokens {
        match t {
            Token::Ident(name) if REACHING.contains(&name.as_str()) => {
                return Err(format!("the program uses `{name}`"));
            }
            Token::Regex(body) if body.contains("tools") => {
                return Err("a regular expression of the program spells `tools`".into());
            }
            _ => {}
        }
    }
    if let Some(name) = unknown_name(&tokens) {
        return Err(format!(
            "the program uses `{name}`, which is neither its own nor a name this reader knows"
        ));
    }
    let consts = constants(&tokens);
    let mut calls = Vec::new();
    let mut uses = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if *t != Token::Ident("tools".into()) {
            continue;
        }
        let (Some(Token::Punct(".")), Some(Token::Ident(tool)), Some(Token::Punct("("))) =
            (tokens.get(i + 1), tokens.get(i + 2), tokens.get(i + 3))
        else {
            return Err("the program uses `tools` otherwise than to call a tool by name".into());
        };
        let mut at = i + 4;
        let argument = if tokens.get(at) == Some(&Token::Punct(")")) {
            Value::Null
        } else {
            let value = literal(&tokens, &mut at, &consts, &mut uses)
                .ok_or_else(|| format!("the argument of `tools.{tool}` is computed"))?;
            if tokens.get(at) != Some(&Token::Punct(")")) {
                return Err(format!("`tools.{tool}` takes more than one plain argument"));
            }
            value
        };
        calls.push(ProgramCall {
            tool: tool.clone(),
            argument,
        });
    }
    // A constant stands for its literal only where nothing else names it: a parameter, a
    // destructured or inner binding of the same name would hold another value.
    let mut named: HashMap<&str, usize> = HashMap::new();
    for t in &tokens {
        if let Token::Ident(n) = t {
            *named.entry(n.as_str()).or_default() += 1;
        }
    }
    let mut used: HashMap<&str, usize> = HashMap::new();
    for u in &uses {
        *used.entry(u.as_str()).or_default() += 1;
    }
    for (name, n) in &used {
        if named.get(name).copied().unwrap_or_default() != 1 + n {
            return Err(format!(
                "the argument of a tool is computed: `{name}` is bound or used elsewhere too"
            ));
        }
    }
    Ok(calls)
}

/// The names a program may use without declaring them: JavaScript's own words and the runtime's
/// harmless globals. Any other free name (a global this reader does not know) could reach a
/// tool unnamed.
const KNOWN: &[&str] = &[
    "await",
    "async",
    "break",
    "case",
    "catch",
    "const",
    "continue",
    "default",
    "do",
    "else",
    "false",
    "finally",
    "for",
    "if",
    "in",
    "instanceof",
    "let",
    "new",
    "null",
    "of",
    "return",
    "switch",
    "throw",
    "true",
    "try",
    "typeof",
    "undefined",
    "var",
    "void",
    "while",
    "NaN",
    "Infinity",
    "delete",
    "function",
    "class",
    "extends",
    "static",
    "get",
    "set",
    "yield",
    "tools",
    "text",
    "store",
    "load",
    "image",
    "console",
    "JSON",
    "Math",
    "String",
    "Number",
    "Boolean",
    "Array",
    "Object",
    "Date",
    "RegExp",
    "Map",
    "Set",
    "Promise",
    "Error",
    "TypeError",
    "parseInt",
    "parseFloat",
    "isNaN",
    "isFinite",
    "encodeURIComponent",
    "decodeURIComponent",
    "encodeURI",
    "decodeURI",
    "BigInt",
    "Symbol",
];

/// The first free name of the program that is neither declared in it nor [`KNOWN`]. Declared:
/// a name after `const`, `let`, `var`, `function`, `class`, before `=>` or `=`, in the
/// parentheses of a parameter list (followed by `=>`, after `function NAME` or `catch`), or
/// directly in a destructuring pattern after `const`, `let`, `var`. One pass over the brackets,
/// then one over the names: linear in the program.
fn unknown_name(tokens: &[Token]) -> Option<String> {
    let brackets = Brackets::of(tokens);
    let mut declared: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (i, t) in tokens.iter().enumerate() {
        let Token::Ident(name) = t else { continue };
        let prev = i.checked_sub(1).and_then(|j| tokens.get(j));
        let after_keyword = matches!(prev, Some(Token::Ident(k))
            if matches!(k.as_str(), "const" | "let" | "var" | "function" | "class"));
        // `NAME =>` is a parameter; `NAME = …` binds (`const a = 1, b = 2`, or a global made
        // by assigning, which reaches nothing).
        let bound = matches!(tokens.get(i + 1), Some(Token::Punct("=>" | "=")));
        if after_keyword || bound || brackets.binds(tokens, i) {
            declared.insert(name);
        }
    }
    tokens.iter().enumerate().find_map(|(i, t)| {
        let Token::Ident(name) = t else { return None };
        let property = i > 0 && matches!(tokens[i - 1], Token::Punct("." | "?."));
        let key = tokens.get(i + 1) == Some(&Token::Punct(":"))
            && matches!(tokens.get(i.wrapping_sub(1)), Some(Token::Punct("{" | ",")));
        (!property && !key && !declared.contains(name.as_str()) && !KNOWN.contains(&name.as_str()))
            .then(|| name.clone())
    })
}

/// Each token's innermost open bracket, and where each bracket closes.
struct Brackets {
    inside: Vec<Option<usize>>,
    closes: HashMap<usize, usize>,
}

impl Brackets {
    fn of(tokens: &[Token]) -> Brackets {
        let mut stack: Vec<usize> = Vec::new();
        let mut inside = Vec::with_capacity(tokens.len());
        let mut closes = HashMap::new();
        for (i, t) in tokens.iter().enumerate() {
            if let Token::Punct(")" | "]" | "}") = t
                && let Some(open) = stack.pop()
            {
                closes.insert(open, i);
            }
            inside.push(stack.last().copied());
            if let Token::Punct("(" | "[" | "{") = t {
                stack.push(i);
            }
        }
        Brackets { inside, closes }
    }

    /// Whether the name at `i` is bound by the brackets around it: a parameter list, or a
    /// destructuring pattern right after `const`, `let` or `var`.
    fn binds(&self, tokens: &[Token], i: usize) -> bool {
        let Some(open) = self.inside[i] else {
            return false;
        };
        let before = |n: usize| open.checked_sub(n).and_then(|j| tokens.get(j));
        match tokens[open] {
            Token::Punct("(") => {
                let arrow = self
                    .closes
                    .get(&open)
                    .is_some_and(|c| tokens.get(c + 1) == Some(&Token::Punct("=>")));
                let named =
                    |t: Option<&Token>, k: &str| matches!(t, Some(Token::Ident(n)) if n == k);
                arrow
                    || named(before(1), "catch")
                    || named(before(1), "function")
                    || named(before(2), "function")
            }
            _ => {
                matches!(before(1), Some(Token::Ident(k)) if matches!(k.as_str(), "const" | "let" | "var"))
            }
        }
    }
}

/// The `const NAME = LITERAL` bindings of the program; a name bound twice (in two scopes) is
/// left out, as is one whose value is not a literal.
fn constants(tokens: &[Token]) -> HashMap<String, Value> {
    let mut seen: HashMap<String, Option<Value>> = HashMap::new();
    for i in 0..tokens.len() {
        let (Token::Ident(kw), Some(Token::Ident(name)), Some(Token::Punct("="))) =
            (&tokens[i], tokens.get(i + 1), tokens.get(i + 2))
        else {
            continue;
        };
        if kw != "const" {
            continue;
        }
        let mut at = i + 3;
        let value = literal(tokens, &mut at, &HashMap::new(), &mut Vec::new());
        let ends = matches!(tokens.get(at), None | Some(Token::Punct(";")));
        // Declared twice: neither value stands (the uses' count in read_program refuses it).
        let twice = seen.contains_key(name);
        seen.insert(name.clone(), value.filter(|_| ends && !twice));
    }
    seen.into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
}

/// A literal value at `tokens[*at..]`, moving `*at` past it; `None` when it is computed. Each
/// constant taken in is pushed onto `uses`.
fn literal(
    tokens: &[Token],
    at: &mut usize,
    consts: &HashMap<String, Value>,
    uses: &mut Vec<String>,
) -> Option<Value> {
    literal_at(tokens, at, consts, uses, 0)
}

/// Literals nested deeper than this are not read (the reader recurses once per level).
const MAX_NESTING: usize = 64;

fn literal_at(
    tokens: &[Token],
    at: &mut usize,
    consts: &HashMap<String, Value>,
    uses: &mut Vec<String>,
    depth: usize,
) -> Option<Value> {
    if depth > MAX_NESTING {
        return None;
    }
    let t = tokens.get(*at)?.clone();
    *at += 1;
    match t {
        Token::Str(s) | Token::Template(s) => Some(Value::String(s)),
        Token::Num(n) => Number::from_f64(n).map(Value::Number).or(Some(Value::Null)),
        Token::Punct("-") => match tokens.get(*at) {
            Some(Token::Num(n)) => {
                *at += 1;
                Number::from_f64(-n).map(Value::Number)
            }
            _ => None,
        },
        Token::Ident(name) => match name.as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            "null" | "undefined" => Some(Value::Null),
            _ => {
                let value = consts.get(&name).cloned()?;
                uses.push(name);
                Some(value)
            }
        },
        Token::Punct("[") => {
            let mut items = Vec::new();
            loop {
                if tokens.get(*at) == Some(&Token::Punct("]")) {
                    *at += 1;
                    return Some(Value::Array(items));
                }
                items.push(literal_at(tokens, at, consts, uses, depth + 1)?);
                match tokens.get(*at) {
                    Some(Token::Punct(",")) => *at += 1,
                    Some(Token::Punct("]")) => {}
                    _ => return None,
                }
            }
        }
        Token::Punct("{") => {
            let mut map = Map::new();
            loop {
                match tokens.get(*at)?.clone() {
                    Token::Punct("}") => {
                        *at += 1;
                        return Some(Value::Object(map));
                    }
                    Token::Punct("...") => {
                        *at += 1;
                        let Value::Object(spread) =
                            literal_at(tokens, at, consts, uses, depth + 1)?
                        else {
                            return None;
                        };
                        map.extend(spread);
                    }
                    Token::Ident(key) | Token::Str(key) => {
                        *at += 1;
                        if tokens.get(*at) == Some(&Token::Punct(":")) {
                            *at += 1;
                            let value = literal_at(tokens, at, consts, uses, depth + 1)?;
                            map.insert(key, value);
                        } else {
                            // `{ name }`: the constant of that name.
                            map.insert(key.clone(), consts.get(&key)?.clone());
                            uses.push(key);
                        }
                    }
                    _ => return None,
                }
                match tokens.get(*at) {
                    Some(Token::Punct(",")) => *at += 1,
                    Some(Token::Punct("}")) => {}
                    _ => return None,
                }
            }
        }
        _ => None,
    }
}

const PUNCTS: &[&str] = &[
    "...", "===", "!==", "**=", "=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--",
    "+=", "-=", "*=", "/=", "(", ")", "[", "]", "{", "}", ";", ",", ".", ":", "?", "=", "+", "-",
    "*", "/", "%", "<", ">", "!", "&", "|", "^", "~",
];

fn tokenize(src: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            let end = (i + 2..chars.len().saturating_sub(1))
                .find(|&j| chars[j] == '*' && chars[j + 1] == '/')
                .ok_or("a comment that never ends")?;
            i = end + 2;
        } else if c == '"' || c == '\'' {
            let (s, next) = string(&chars, i + 1, c)?;
            out.push(Token::Str(s));
            i = next;
        } else if c == '`' {
            let (t, next) = template(&chars, i + 1)?;
            out.push(t);
            i = next;
        } else if c == '/' && regex_may_start(out.last()) {
            let (body, next) = regex(&chars, i + 1)?;
            out.push(Token::Regex(body));
            i = next;
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '.' || chars[i] == '_')
            {
                i += 1;
            }
            let text: String = chars[start..i].iter().filter(|c| **c != '_').collect();
            out.push(Token::Num(
                number(&text).ok_or_else(|| format!("a number `{text}`"))?,
            ));
        } else if c.is_alphabetic() || c == '_' || c == '$' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
            {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else if c == '\\' {
            // An escape in a name (`\u0074ools`) spells a name without showing it.
            return Err("a name written with an escape".into());
        } else if let Some(p) = PUNCTS.iter().find(|p| {
            p.chars()
                .enumerate()
                .all(|(k, pc)| chars.get(i + k) == Some(&pc))
        }) {
            out.push(Token::Punct(p));
            i += p.chars().count();
        } else {
            out.push(Token::Other(c));
            i += 1;
        }
    }
    Ok(out)
}

/// Whether a `/` after `prev` starts a regular expression (else it divides).
fn regex_may_start(prev: Option<&Token>) -> bool {
    match prev {
        None => true,
        Some(Token::Punct(p)) => !matches!(*p, ")" | "]" | "}" | "++" | "--"),
        Some(Token::Ident(k)) => matches!(
            k.as_str(),
            "return"
                | "typeof"
                | "case"
                | "do"
                | "else"
                | "in"
                | "of"
                | "new"
                | "delete"
                | "void"
                | "throw"
                | "yield"
                | "await"
        ),
        Some(_) => false,
    }
}

fn number(text: &str) -> Option<f64> {
    let lower = text.to_ascii_lowercase();
    let lower = lower.strip_suffix('n').unwrap_or(&lower);
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(digits) = lower.strip_prefix(prefix) {
            return u64::from_str_radix(digits, radix).ok().map(|n| n as f64);
        }
    }
    lower.parse().ok()
}

/// A quoted string's value from `chars[start..]` up to `quote`; the index after it.
fn string(chars: &[char], start: usize, quote: char) -> Result<(String, usize), String> {
    let mut out = String::new();
    let mut i = start;
    while i < chars.len() {
        match chars[i] {
            c if c == quote => return Ok((out, i + 1)),
            '\\' => i = escape(chars, i + 1, &mut out)?,
            '\n' => return Err("a string that never ends on its line".into()),
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Err("a string that never ends".into())
}

/// A template string from `chars[start..]`: its value, or `Computed` when it holds `${…}`.
fn template(chars: &[char], start: usize) -> Result<(Token, usize), String> {
    let mut out = String::new();
    let mut computed = false;
    let mut depth = 0usize;
    let mut i = start;
    while i < chars.len() {
        match chars[i] {
            '`' if depth == 0 => {
                let token = if computed {
                    Token::Computed
                } else {
                    Token::Template(out)
                };
                return Ok((token, i + 1));
            }
            '\\' => i = escape(chars, i + 1, &mut out)?,
            '$' if depth == 0 && chars.get(i + 1) == Some(&'{') => {
                computed = true;
                depth = 1;
                i += 2;
            }
            '{' if depth > 0 => {
                depth += 1;
                i += 1;
            }
            '}' if depth > 0 => {
                depth -= 1;
                i += 1;
            }
            '`' => return Err("a template string nested in a template".into()),
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Err("a template string that never ends".into())
}

/// A regular expression's body from `chars[start..]`; the index after its flags.
fn regex(chars: &[char], start: usize) -> Result<(String, usize), String> {
    let mut i = start;
    let mut class = false;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '[' => {
                class = true;
                i += 1;
            }
            ']' => {
                class = false;
                i += 1;
            }
            '/' if !class => {
                let body = chars[start..i].iter().collect();
                i += 1;
                while i < chars.len() && chars[i].is_ascii_alphabetic() {
                    i += 1;
                }
                return Ok((body, i));
            }
            '\n' => return Err("a regular expression that never ends on its line".into()),
            _ => i += 1,
        }
    }
    Err("a regular expression that never ends".into())
}

/// One escape after a backslash at `chars[i-1]`, pushed onto `out`; the index after it.
fn escape(chars: &[char], i: usize, out: &mut String) -> Result<usize, String> {
    let c = *chars.get(i).ok_or("an escape at the end")?;
    let hex = |from: usize, n: usize| -> Option<u32> {
        let s: String = chars.get(from..from + n)?.iter().collect();
        u32::from_str_radix(&s, 16).ok()
    };
    let (ch, next) = match c {
        'n' => (Some('\n'), i + 1),
        't' => (Some('\t'), i + 1),
        'r' => (Some('\r'), i + 1),
        'b' => (Some('\u{8}'), i + 1),
        'f' => (Some('\u{c}'), i + 1),
        'v' => (Some('\u{b}'), i + 1),
        '0' if !chars.get(i + 1).is_some_and(char::is_ascii_digit) => (Some('\0'), i + 1),
        '\n' => (None, i + 1),
        'x' => (
            Some(
                hex(i + 1, 2)
                    .and_then(char::from_u32)
                    .ok_or("a bad \\x escape")?,
            ),
            i + 3,
        ),
        'u' if chars.get(i + 1) == Some(&'{') => {
            let end = (i + 2..chars.len())
                .find(|&j| chars[j] == '}')
                .ok_or("a bad \\u{} escape")?;
            let n = hex(i + 2, end - i - 2).ok_or("a bad \\u{} escape")?;
            (
                Some(char::from_u32(n).ok_or("a bad \\u{} escape")?),
                end + 1,
            )
        }
        'u' => {
            let n = hex(i + 1, 4).ok_or("a bad \\u escape")?;
            // A surrogate pair: two escapes make one character.
            if (0xD800..0xDC00).contains(&n)
                && chars.get(i + 5) == Some(&'\\')
                && chars.get(i + 6) == Some(&'u')
                && let Some(low) = hex(i + 7, 4).filter(|l| (0xDC00..0xE000).contains(l))
            {
                let code = 0x10000 + ((n - 0xD800) << 10) + (low - 0xDC00);
                (char::from_u32(code), i + 11)
            } else {
                (Some(char::from_u32(n).unwrap_or('\u{FFFD}')), i + 5)
            }
        }
        other => (Some(other), i + 1),
    };
    if let Some(ch) = ch {
        out.push(ch);
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn calls(src: &str) -> Vec<(String, Value)> {
        read_program(src)
            .unwrap()
            .into_iter()
            .map(|c| (c.tool, c.argument))
            .collect()
    }

    #[test]
    fn plain_calls_are_read_with_their_arguments() {
        let src = "const r = await tools.exec_command({\"cmd\":\"git status\",\"workdir\":\"/w\",\"yield_time_ms\":1000,tty:true});\ntext(r.output); if (r.session_id) text(`SESSION_ID=${r.session_id}`);\n";
        assert_eq!(
            calls(src),
            [(
                "exec_command".to_owned(),
                json!({"cmd": "git status", "workdir": "/w", "yield_time_ms": 1000.0, "tty": true})
            )]
        );
        let web = "const r = await tools.web__run({\"open\":[{\"ref_id\":\"https://x.example/a\"}],\"response_length\":\"long\"}); text(r);";
        assert_eq!(
            calls(web)[0].1["open"][0]["ref_id"],
            json!("https://x.example/a")
        );
    }

    #[test]
    fn constants_and_spreads_are_taken_in() {
        let src = "const patch = \"*** Begin Patch\\n*** Add File: a.txt\\n+hi\\n*** End Patch\\n\";\ntext(await tools.apply_patch(patch));";
        assert_eq!(
            calls(src),
            [(
                "apply_patch".to_owned(),
                json!("*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n")
            )]
        );
        let spread = "const common={workdir:'/w',yield_time_ms:10000};\nlet r=await tools.exec_command({...common,cmd:'ls -la'}); text(`x=${r.output}`);\nr=await tools.exec_command({...common,cmd:`pwd`});";
        assert_eq!(
            calls(spread),
            [
                (
                    "exec_command".to_owned(),
                    json!({"workdir": "/w", "yield_time_ms": 10000.0, "cmd": "ls -la"})
                ),
                (
                    "exec_command".to_owned(),
                    json!({"workdir": "/w", "yield_time_ms": 10000.0, "cmd": "pwd"})
                )
            ]
        );
        // A regular expression in the program is read past.
        let re = "const r = await tools.exec_command({cmd:'ps'});\nconst lines=r.output.split('\\n').filter(x=>/edgerunner|Chrome.*headless/.test(x)); text(lines.join('\\n'));";
        assert_eq!(calls(re).len(), 1);
        // A `/` after `}` divides (an object divided by the call): the call runs, and is read.
        let divided = "const x = {} / tools.exec_command({cmd:'curl x'}) / 1;";
        assert_eq!(calls(divided)[0].1["cmd"], json!("curl x"));
    }

    #[test]
    fn anything_that_could_hide_a_call_makes_the_program_unread() {
        for (src, why) in [
            (
                "for (const p of ['a','b']) { await tools.exec_command({cmd: `cat ${p}`}); }",
                "computed",
            ),
            (
                "const t = tools; await t.exec_command({cmd:'curl x'});",
                "otherwise",
            ),
            (
                "await globalThis['to'+'ols'].exec_command({cmd:'curl x'});",
                "globalThis",
            ),
            ("await eval('tools').exec_command({cmd:'curl x'});", "eval"),
            (
                "(()=>{}).constructor('return tools')().exec_command({cmd:'x'});",
                "constructor",
            ),
            (
                "const c = 'ls'; await tools.exec_command({cmd: c + ' && curl x'});",
                "computed",
            ),
            (
                "const cmd = 'ls'; ['curl x'].forEach((cmd) => tools.exec_command({cmd}));",
                "elsewhere",
            ),
            (
                "const cmd = 'ls'; function f(cmd) { return tools.exec_command({cmd}); } f('curl x');",
                "elsewhere",
            ),
            (
                "const p = 'ls'; const {p: q} = {p: 'curl x'}; await tools.exec_command({cmd: p});",
                "elsewhere",
            ),
            (
                "let cmd = 'ls'; cmd = 'curl x'; await tools.exec_command({cmd});",
                "computed",
            ),
            (
                "const x = (1, /tools.exec_command({cmd:'curl x'})/);",
                "regular expression",
            ),
            ("await \\u0074ools.exec_command({cmd:'curl x'});", "escape"),
            ("await codex.tools.exec_command({cmd:'curl x'});", "`codex`"),
            (
                "const run = callTool; await run('exec_command', {cmd:'curl x'});",
                "`callTool`",
            ),
            ("await codex.tools.exec_command({cmd:'curl x'});", "`codex`"),
            (
                "const run = callTool; await run('exec_command', {cmd:'curl x'});",
                "`callTool`",
            ),
            (
                "await tools[\"exec_command\"]({cmd:'curl x'});",
                "otherwise",
            ),
            (
                "const cmd = 'a'; { const cmd = 'curl x'; await tools.exec_command({cmd}); }",
                "computed",
            ),
            (
                "const cmd = 'a'; try { JSON.parse('x') } catch (cmd) { await tools.exec_command({cmd}); }",
                "elsewhere",
            ),
        ] {
            let err = read_program(src).unwrap_err();
            assert!(err.contains(why), "{src}: {err}");
        }
    }

    #[test]
    fn hostile_programs_are_refused_at_once() {
        let deep = format!(
            "const x = {}1{}; await tools.exec_command({{cmd: 'ls', x}});",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(read_program(&deep).unwrap_err().contains("computed"));
        let flat = "a ".repeat(200_000);
        assert!(read_program(&flat).unwrap_err().contains("`a`"));
        let parens = format!("{}x{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(read_program(&parens).is_err());
        let names = format!(
            "const c = 'ls';{}",
            " await tools.exec_command({cmd: c});".repeat(20_000)
        );
        assert_eq!(read_program(&names).unwrap().len(), 20_000);
        let long = format!("const p = \"{}\";", "x".repeat(MAX_PROGRAM));
        assert!(read_program(&long).unwrap_err().contains("over the"));
    }

    #[test]
    fn escapes_decode_as_javascript_does() {
        let src =
            r#"await tools.exec_command({cmd: "a\tb\u0041\u{1F600}\x41\'\"\\ \uD83D\uDE00"});"#;
        assert_eq!(
            calls(src)[0].1["cmd"],
            json!("a\tbA\u{1F600}A'\"\\ \u{1F600}")
        );
    }
}
