//! Keeping the end of a long text: logs kept in results and errors hold their last bytes,
//! cut at a character boundary. And text made safe for a terminal: ids, task names and logs
//! come from datasets and agents, and a control character in them must not reach the terminal
//! as one. And the URLs a text names, for the readers of agents' steps and the audit. And a
//! time as RFC 3339 text, for reports and the engine's image dates alike.

/// The last `max` bytes of `s` at most, starting on a character boundary.
pub fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// [`tail`], saying how much was cut when anything was.
pub fn tail_marked(s: &str, max: usize) -> String {
    let kept = tail(s, max);
    if kept.len() == s.len() {
        return s.to_owned();
    }
    format!("[… {} bytes cut]\n{kept}", s.len() - kept.len())
}

/// A byte buffer that keeps only (about) its last `max` bytes while data streams in.
#[derive(Debug, Default)]
pub struct TailBuf {
    buf: Vec<u8>,
    max: usize,
}

impl TailBuf {
    /// An empty buffer that will keep the last `max` bytes.
    pub fn new(max: usize) -> Self {
        TailBuf {
            buf: Vec::new(),
            max,
        }
    }

    /// Append `data`, dropping the oldest bytes once well over the limit.
    pub fn push(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
        // Cut only once twice the limit is held, so a stream of small writes is not quadratic.
        if self.buf.len() > self.max * 2 {
            let cut = self.buf.len() - self.max;
            self.buf.drain(..cut);
        }
    }

    /// The last `max` bytes, as text (invalid UTF-8 replaced).
    pub fn finish(mut self) -> String {
        if self.buf.len() > self.max {
            let cut = self.buf.len() - self.max;
            self.buf.drain(..cut);
        }
        String::from_utf8_lossy(&self.buf).into_owned()
    }
}

/// Every URL-looking substring of `text` (with or without a scheme, for GitHub hosts).
pub fn urls(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lower = text.to_ascii_lowercase();
    let mut starts: Vec<usize> = Vec::new();
    for needle in [
        "http://",
        "https://",
        "github.com/",
        "githubusercontent.com/",
        "api.github.com/",
    ] {
        let mut from = 0;
        while let Some(pos) = lower[from..].find(needle) {
            starts.push(from + pos);
            from += pos + needle.len();
        }
    }
    starts.sort_unstable();
    let mut covered_until = 0;
    for s in starts {
        if s < covered_until {
            continue;
        }
        // Extend left over a host prefix (`patch-diff.` before `githubusercontent.com/`).
        let mut begin = s;
        while begin > 0 {
            let c = text.as_bytes()[begin - 1];
            if c.is_ascii_alphanumeric() || c == b'.' || c == b'-' {
                begin -= 1;
            } else {
                break;
            }
        }
        let end = text[s..]
            .find(|c: char| {
                c.is_whitespace()
                    || matches!(
                        c,
                        '\'' | '"' | '`' | '<' | '>' | ')' | ']' | '}' | ',' | '\\' | ';'
                    )
            })
            .map_or(text.len(), |e| s + e);
        out.push(text[begin..end].to_owned());
        covered_until = end;
    }
    out
}

/// `secs` since the Unix epoch as RFC 3339, UTC, to the second.
pub fn rfc3339_of(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod terminal_tests {
    use super::*;

    #[test]
    fn no_control_character_reaches_the_terminal() {
        let hostile = "id\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\r\nnext\tcol\u{7f}";
        let t = for_terminal(hostile);
        assert!(
            !t.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{t:?}"
        );
        assert!(t.contains("\\u001b]0;pwned\\u0007"), "{t}");
        assert!(t.contains('\n'));
        let l = one_line(hostile);
        assert!(!l.chars().any(char::is_control), "{l:?}");
        assert!(l.contains("\\r\\nnext\\tcol"), "{l}");
        // In a JSON string the escapes read back as the characters.
        let back: String =
            serde_json::from_str(&format!("\"{}\"", one_line("a\u{1b}b\u{9b}"))).unwrap();
        assert_eq!(back, "a\u{1b}b\u{9b}");
        assert!(matches!(
            for_terminal("plain é"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_cut_on_char_boundaries() {
        assert_eq!(tail("héllo", 4), "llo");
        assert_eq!(tail("abc", 10), "abc");
        assert_eq!(tail_marked("abcdef", 2), "[… 4 bytes cut]\nef");
        let mut t = TailBuf::new(3);
        for chunk in [b"ab".as_slice(), b"cd", b"ef", b"g"] {
            t.push(chunk);
        }
        assert_eq!(t.finish(), "efg");
    }
}

/// Whether a terminal acts on `c` rather than showing it: the C0 controls, DEL and the C1
/// controls (U+0080–U+009F, among them a one-character CSI).
fn is_terminal_control(c: char) -> bool {
    c.is_control()
}

/// `c` as text a terminal shows and JSON reads back as the same character: `\u001b`.
fn push_escaped(out: &mut String, c: char) {
    out.push_str(&format!("\\u{:04x}", u32::from(c)));
}

/// `s` for a terminal: every control character but the newline and the tab written as `\uXXXX`
/// (valid inside a JSON string, where it reads back as the same character), so no escape
/// sequence from a dataset or an agent reaches the terminal. Borrowed when there is none.
pub fn for_terminal(s: &str) -> std::borrow::Cow<'_, str> {
    if !s
        .chars()
        .any(|c| is_terminal_control(c) && c != '\n' && c != '\t')
    {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_terminal_control(c) && c != '\n' && c != '\t' {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `s` as one line of a table: [`for_terminal`], and the newline and the tab escaped too, so an
/// id cannot start a row of its own.
pub fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(is_terminal_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_terminal_control(c) => push_escaped(&mut out, c),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}
