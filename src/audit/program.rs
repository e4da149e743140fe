//! The program a command word names, shared by the shell reader, the Python reader and the rules
//! that look at what a command runs. It holds no reading of its own, so every reader can use it
//! without depending on another.

/// The program a word names: the part after the last `/` (`/usr/bin/git` is `git`).
pub(super) fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}
