//! Keeping the end of a long text: logs kept in results and errors hold their last bytes,
//! cut at a character boundary.

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
