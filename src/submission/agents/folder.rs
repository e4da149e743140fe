//! A folder of agent output, walked once ([`Folder::walk`]): every entry that is not a folder,
//! six levels down, version control's own files left out, in path order. Detection asks it
//! which agents' files it holds, each agent's reader takes its files from it, the audit
//! classifies the same list, and the account of what was read and what was not counts it: one
//! walk, and each file's transcript shape sniffed and each event stream parsed at most once.

use super::{AgentFormat, TrajectoryShape};
use serde_json::Value;
use std::cell::OnceCell;
use std::path::{Path, PathBuf};

/// How deep a folder is read: Codex rollouts sit in `sessions/YYYY/MM/DD/`, SWE-agent runs in
/// `<runs>/<run>/<id>/<id>.traj`, OpenHands output in `outputs/<dataset>/<agent>/<model>/`.
pub(super) const DEPTH: usize = 6;

/// One entry of a [`Folder`]: a file, a link, a FIFO or a device.
pub struct Entry {
    path: PathBuf,
    name: String,
    depth: usize,
    regular: bool,
    shape: OnceCell<Option<TrajectoryShape>>,
    events: OnceCell<Option<Vec<Value>>>,
    lines: OnceCell<Option<AgentFormat>>,
}

impl Entry {
    /// Its path (under the folder's).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many folders down it is (1: in the folder itself).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Whether it is a regular file: a link is not followed, and a FIFO or a device is never
    /// opened.
    pub fn is_file(&self) -> bool {
        self.regular
    }

    /// Its name, lossily (taken once, at the walk).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The shape its first records show, sniffed the first time it is asked.
    pub fn shape(&self) -> Option<TrajectoryShape> {
        if !self.regular {
            return None;
        }
        *self
            .shape
            .get_or_init(|| super::sniff(&self.path).ok().flatten())
    }

    /// Its OpenHands events when it is an event stream, parsed the first time it is asked.
    pub fn openhands_events(&self) -> Option<&[Value]> {
        if !self.regular {
            return None;
        }
        self.events
            .get_or_init(|| super::openhands_events(&self.path))
            .as_deref()
    }

    /// The agent whose submissions it holds one a line, when it is a `.jsonl` file of them
    /// (OpenHands output, AweAgent trajectories: [`super::lines_format`]), read the first time it
    /// is asked. A transcript (its [`Entry::shape`]) is not read again for it: its records name
    /// no instance, and it would be read to its end.
    pub fn lines_format(&self) -> Option<AgentFormat> {
        if !self.regular || !self.name.ends_with(".jsonl") || self.shape().is_some() {
            return None;
        }
        *self.lines.get_or_init(|| super::lines_format(&self.path))
    }
}

/// A folder of agent output, walked once.
pub struct Folder {
    root: PathBuf,
    entries: Vec<Entry>,
}

impl Folder {
    /// Walks `root` ([`DEPTH`] levels, `.git` left out, links not followed); an entry that
    /// cannot be read is left out, as a folder that vanishes under the walk.
    pub fn walk(root: &Path) -> Folder {
        let mut entries: Vec<Entry> = walkdir::WalkDir::new(root)
            .max_depth(DEPTH)
            .into_iter()
            .filter_entry(|e| e.file_name() != ".git")
            .filter_map(Result::ok)
            .filter(|e| !e.file_type().is_dir())
            .map(|e| Entry {
                name: e.file_name().to_string_lossy().into_owned(),
                depth: e.depth(),
                regular: e.file_type().is_file(),
                path: e.into_path(),
                shape: OnceCell::new(),
                events: OnceCell::new(),
                lines: OnceCell::new(),
            })
            .collect();
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        Folder {
            root: root.to_owned(),
            entries,
        }
    }

    /// The folder walked.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every entry, in path order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The regular files at most `depth` levels down, in path order.
    pub fn files(&self, depth: usize) -> impl Iterator<Item = &Entry> {
        self.entries
            .iter()
            .filter(move |e| e.regular && e.depth <= depth)
    }

    /// The regular files at most `depth` levels down whose name ends with `suffix`.
    pub fn files_with<'a>(
        &'a self,
        suffix: &'a str,
        depth: usize,
    ) -> impl Iterator<Item = &'a Entry> + 'a {
        self.files(depth)
            .filter(move |e| e.name().ends_with(suffix))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_keeps_files_and_links_in_path_order_without_git_and_past_the_depth() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let deep = root.join("a/b/c/d/e/f");
        fs_err::create_dir_all(&deep).expect("dirs");
        fs_err::create_dir_all(root.join(".git/objects")).expect("git");
        for p in [
            "z.json",
            "a.txt",
            "a/x.traj",
            "a/b/c/d/e/in.json",
            "a/b/c/d/e/f/out.json",
        ] {
            fs_err::write(root.join(p), "{}").expect("write");
        }
        fs_err::write(root.join(".git/objects/o.json"), "{}").expect("write");
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("z.json"), root.join("link.json")).expect("link");
        let folder = Folder::walk(root);
        let names: Vec<String> = folder
            .entries()
            .iter()
            .map(|e| {
                e.path()
                    .strip_prefix(root)
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            })
            .collect();
        let mut expected = vec!["a/b/c/d/e/in.json", "a/x.traj", "a.txt", "z.json"];
        if cfg!(unix) {
            expected.insert(3, "link.json");
        }
        assert_eq!(names, expected);
        // The link is listed, never a file to open.
        assert_eq!(folder.files(DEPTH).count(), 4);
        assert_eq!(
            folder
                .files_with(".json", 2)
                .map(|e| e.name())
                .collect::<Vec<_>>(),
            vec!["z.json"]
        );
    }

    #[test]
    fn a_file_is_sniffed_and_an_event_stream_parsed_once_whoever_asks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/agents/claude-code/acme_textkit_pr12.jsonl"
        );
        fs_err::copy(fixture, root.join("t.jsonl")).expect("copy");
        fs_err::write(
            root.join("events.json"),
            r#"[{"action": "run", "args": {"command": "ls"}}, {"observation": "run"}]"#,
        )
        .expect("write");
        let folder = Folder::walk(root);
        let [events, transcript] = folder.entries() else {
            panic!("two entries expected");
        };
        let shape = transcript.shape();
        assert!(shape.is_some());
        assert_eq!(events.openhands_events().map(<[Value]>::len), Some(2));
        // Detection and the readers ask again after the files changed: the first answers stand.
        fs_err::write(root.join("t.jsonl"), "not a transcript").expect("write");
        fs_err::write(root.join("events.json"), "[]").expect("write");
        assert_eq!(transcript.shape(), shape);
        assert_eq!(events.openhands_events().map(<[Value]>::len), Some(2));
    }
}
