//! The files a trajectory wrote, as far as what they hold is known, so that a command that runs
//! one later (`bash fix.sh`, `python repro.py`, `./run`, `source env.sh`, `pytest t.py`) is read
//! as what it runs: the edits of its edit tools (shapes.rs turns them into [`Change`]s) and the
//! writes of its commands (shell.rs: `cat > f <<EOF`, `echo … > f`, `tee`, `cp`, `mv`). A file
//! a command runs that the trajectory did not write is the project's own and is not read, as
//! writes.rs assumes of the tests and scripts an agent runs; one it wrote without showing the
//! text makes the command unread.

use super::Change;
use std::collections::HashMap;

/// How many bytes of written files one trajectory's commands may run in all before the reader
/// stops opening them (a real trajectory runs a few scripts of a few kilobytes).
pub(super) const FILE_BUDGET: usize = 64 << 20;

/// The most text kept of one file; past it the file's text is unknown (so running it is
/// unread), and appending to a file many times costs no more than that.
const FILE_TEXT_MAX: usize = 1 << 20;

/// How many bytes of text all writes together may keep; past it what is written is unknown
/// (copies of one file many times over cost memory only up to here).
const KEPT_MAX: usize = 64 << 20;

/// How many bytes of files' text replacements may read in all (each reads its file's text).
const COPY_BUDGET: usize = 256 << 20;

/// The most files kept; past it a file run that is not among them may be one of those not
/// kept, so it is unknown (never taken for the project's own).
const FILES_MAX: usize = 10_000;

/// What is known of one file.
#[derive(Debug, Clone)]
struct Entry {
    /// The path as the trajectory wrote it (without a leading `./`).
    path: String,
    /// The text known to be in it; `None` when unknown.
    text: Option<String>,
    /// When it was last written, in order of writes.
    seq: u64,
}

/// The files written so far (see the module's documentation), by file name, so that a path
/// is found among those of its name whatever directory it was written with.
#[derive(Debug, Clone, Default)]
pub(super) struct Written {
    by_name: HashMap<String, Vec<Entry>>,
    files: usize,
    seq: u64,
    /// More files were written than are kept ([`FILES_MAX`]).
    overflowed: bool,
    /// Bytes of written files read so far ([`FILE_BUDGET`]).
    pub(super) spent: usize,
    /// Bytes of text read by replacements so far ([`COPY_BUDGET`]).
    copied: usize,
    /// Bytes of text kept so far, all writes counted ([`KEPT_MAX`]).
    kept: usize,
}

/// The answer for a file the trajectory wrote without its text being known.
const UNKNOWN: &Option<String> = &None;

impl Written {
    /// `path` now holds `text` (`None`: something unknown).
    pub(super) fn put(&mut self, path: &str, text: Option<String>) {
        let path = clean_path(path);
        if path.is_empty() || path.starts_with("/dev/") {
            return;
        }
        let text = text.filter(|t| t.len() <= FILE_TEXT_MAX && self.keep(t.len()));
        self.seq += 1;
        let seq = self.seq;
        let list = self.by_name.entry(file_name(path).to_owned()).or_default();
        if let Some(e) = list.iter_mut().find(|e| e.path == path) {
            e.text = text;
            e.seq = seq;
        } else if self.files < FILES_MAX {
            self.files += 1;
            list.push(Entry {
                path: path.to_owned(),
                text,
                seq,
            });
        } else {
            self.overflowed = true;
        }
    }

    /// `path` written with `text`: in its place, or added to it when `append` (`>>`, `tee -a`).
    pub(super) fn write(&mut self, path: &str, text: Option<String>, append: bool) {
        if append {
            self.add(path, text);
        } else {
            self.put(path, text);
        }
    }

    /// `text` is added to what `path` holds (a part of it changed, or output appended), in
    /// place.
    pub(super) fn add(&mut self, path: &str, text: Option<String>) {
        self.seq += 1;
        let seq = self.seq;
        let room = KEPT_MAX.saturating_sub(self.kept);
        let Some(e) = self.latest_mut(path) else {
            self.put(path, text);
            return;
        };
        e.seq = seq;
        let added = match (&mut e.text, text) {
            (Some(before), Some(t))
                if before.len() + t.len() < FILE_TEXT_MAX && t.len() <= room =>
            {
                before.push('\n');
                before.push_str(&t);
                t.len()
            }
            (known, _) => {
                *known = None;
                0
            }
        };
        self.kept += added;
    }

    /// `old` replaced by `new` in `path` (every occurrence when `all`); where the file's whole
    /// text is not known, `new` is added to what is. Each replacement reads the file's text:
    /// past [`COPY_BUDGET`] in all, the file's text becomes unknown instead.
    pub(super) fn replace(&mut self, path: &str, old: &str, new: &str, all: bool) {
        let budget_left = COPY_BUDGET.saturating_sub(self.copied);
        let Some(Some(before)) = self.get(path) else {
            self.add(path, Some(new.to_owned()));
            return;
        };
        let read = before.len();
        let after = if read > budget_left {
            None
        } else if old.is_empty() || !before.contains(old) {
            Some(None)
        } else if all {
            Some(Some(before.replace(old, new)))
        } else {
            Some(Some(before.replacen(old, new, 1)))
        };
        self.copied += read.min(budget_left);
        match after {
            None => self.put(path, None),
            Some(None) => self.add(path, Some(new.to_owned())),
            Some(after) => self.put(path, after),
        }
    }

    /// Applies an edit tool's change of `path`.
    pub(super) fn change(&mut self, path: &str, change: &Change) {
        match change {
            Change::Whole(text) => self.put(path, Some(text.clone())),
            Change::Part(text) => self.add(path, Some(text.clone())),
            Change::Replace { old, new, all } => self.replace(path, old, new, *all),
            Change::MovedTo(to) => self.rename(path, to),
            Change::Deleted => self.remove(path),
            Change::Unknown => self.put(path, None),
        }
    }

    /// `path` no longer exists.
    pub(super) fn remove(&mut self, path: &str) {
        let path = clean_path(path);
        if let Some(list) = self.by_name.get_mut(file_name(path)) {
            let before = list.len();
            list.retain(|e| !same_file(&e.path, path));
            self.files -= before - list.len();
        }
    }

    /// `from` moved to `to`.
    pub(super) fn rename(&mut self, from: &str, to: &str) {
        if let Some(text) = self.get(from).cloned() {
            self.remove(from);
            self.put(to, text);
        }
    }

    /// Whether `len` more bytes of text may be kept ([`KEPT_MAX`]); counts them if so.
    fn keep(&mut self, len: usize) -> bool {
        let ok = self.kept.saturating_add(len) <= KEPT_MAX;
        if ok {
            self.kept += len;
        }
        ok
    }

    /// The entry of the latest write of any path naming `path`.
    fn latest_mut(&mut self, path: &str) -> Option<&mut Entry> {
        let path = clean_path(path);
        self.by_name
            .get_mut(file_name(path))?
            .iter_mut()
            .filter(|e| same_file(&e.path, path))
            .max_by_key(|e| e.seq)
    }

    /// Every path written with file name `name` (`conftest.py`), its text known or not.
    pub(super) fn paths_named(&self, name: &str) -> Vec<String> {
        self.by_name
            .get(name)
            .into_iter()
            .flatten()
            .map(|e| e.path.clone())
            .collect()
    }

    /// What the trajectory wrote at `path`, the latest write of any path naming it:
    /// `Some(None)` when what it wrote there is unknown (or may be among the files not kept),
    /// `None` when it wrote nothing there.
    pub(super) fn get(&self, path: &str) -> Option<&Option<String>> {
        let path = clean_path(path);
        let found = self
            .by_name
            .get(file_name(path))
            .and_then(|list| {
                list.iter()
                    .filter(|e| same_file(&e.path, path))
                    .max_by_key(|e| e.seq)
            })
            .map(|e| &e.text);
        match found {
            None if self.overflowed && !path.is_empty() => Some(UNKNOWN),
            found => found,
        }
    }
}

/// The last component of a path.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A path without the `./` that names the working directory (or the `~/` that names home).
pub(super) fn clean_path(path: &str) -> &str {
    let mut p = path.trim();
    // `~/x.sh`: the home directory is not known here; the name under it is.
    p = p.strip_prefix("~/").unwrap_or(p);
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p
}

/// Whether two paths as an agent wrote them name one file: equal, or one is the other under a
/// directory (`/testbed/fix.sh` and `fix.sh`: the working directory is not always known).
fn same_file(a: &str, b: &str) -> bool {
    let under = |long: &str, short: &str| {
        long.len() > short.len()
            && long.ends_with(short)
            && long.as_bytes()[long.len() - short.len() - 1] == b'/'
    };
    !a.is_empty() && !b.is_empty() && (a == b || under(a, b) || under(b, a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{AuditOptions, TaskInfo, TrajectoryAudit, TrajectoryClass, audit_line};
    use serde_json::{Value, json};

    #[test]
    fn paths_name_one_file_relative_or_absolute() {
        let mut w = Written::default();
        w.put("/testbed/fix.sh", Some("git log --all".into()));
        assert_eq!(w.get("./fix.sh"), Some(&Some("git log --all".into())));
        assert_eq!(w.get("fix.sh"), Some(&Some("git log --all".into())));
        // Another file whose name ends the same is not this one.
        assert_eq!(w.get("prefix.sh"), None);
        assert_eq!(w.get("/dev/null"), None);
        w.replace("fix.sh", "--all", "--oneline", false);
        assert_eq!(w.get("fix.sh"), Some(&Some("git log --oneline".into())));
        // A replacement in a file whose text is not known adds what it puts there.
        w.replace("src/app.py", "a", "import os", false);
        assert_eq!(w.get("src/app.py"), Some(&Some("import os".into())));
        w.rename("fix.sh", "/tmp/run.sh");
        assert_eq!(w.get("fix.sh"), None);
        assert_eq!(
            w.get("/tmp/run.sh"),
            Some(&Some("git log --oneline".into()))
        );
        w.add("/tmp/run.sh", None);
        assert_eq!(w.get("/tmp/run.sh"), Some(&None));
        w.remove("run.sh");
        assert_eq!(w.get("/tmp/run.sh"), None);
    }

    /// Many files, long files and many edits stay bounded: what is not kept is unknown, never
    /// taken for the project's own file.
    #[test]
    fn what_is_kept_is_bounded_and_the_rest_unknown() {
        let mut w = Written::default();
        for i in 0..FILES_MAX + 1 {
            w.put(&format!("d{i}/x.sh"), Some("true".into()));
        }
        assert_eq!(w.get("d0/x.sh"), Some(&Some("true".into())));
        assert_eq!(
            w.get("never/written.sh"),
            Some(&None),
            "past the limit, unknown"
        );
        let mut w = Written::default();
        let line = "y".repeat(1000);
        for _ in 0..100_000 {
            w.add("log.sh", Some(line.clone()));
        }
        assert_eq!(w.get("log.sh"), Some(&None), "past 1 MiB, unknown");
        let mut w = Written::default();
        w.put("big.py", Some("a".repeat(FILE_TEXT_MAX - 10)));
        for _ in 0..100_000 {
            w.replace("big.py", "a", "b", false);
        }
        assert_eq!(
            w.get("big.py"),
            Some(&None),
            "past the replacements' budget, unknown"
        );
        let mut w = Written::default();
        for i in 0..200 {
            w.put(&format!("copy{i}.sh"), Some("z".repeat(FILE_TEXT_MAX - 1)));
        }
        assert_eq!(w.get("copy0.sh").map(Option::is_some), Some(true));
        assert_eq!(
            w.get("copy199.sh"),
            Some(&None),
            "past 64 MiB kept, unknown"
        );
    }

    /// An ATIF release line of an issue task: the prompt, then one call per step.
    fn line(calls: &[Value]) -> Value {
        let mut steps = vec![json!({"step_id": 1, "source": "user", "message": "Fix it"})];
        for (i, call) in calls.iter().enumerate() {
            steps.push(
                json!({"step_id": i + 2, "source": "agent", "message": "", "tool_calls": [call]}),
            );
        }
        json!({"task_name": "pylons_pyramid_pr3054", "task_type": "CrossRepo", "trajectory": {
            "schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1"},
            "steps": steps}})
    }

    fn bash(command: &str) -> Value {
        json!({"function_name": "Bash", "arguments": {"command": command}})
    }

    fn write(path: &str, content: &str) -> Value {
        json!({"function_name": "write_file", "arguments": {"file_path": path, "content": content}})
    }

    fn audit(calls: &[Value]) -> TrajectoryAudit {
        audit_line(
            1,
            &line(calls),
            &TaskInfo::default(),
            AuditOptions::default(),
        )
        .unwrap()
    }

    /// A forbidden command or a URL in a file the agent wrote counts where a command runs the
    /// file, however it was written and run; the file alone is no finding.
    #[test]
    fn a_file_the_agent_wrote_is_read_where_it_runs() {
        let script = "#!/bin/sh\ngit log --all --oneline | head\n";
        let written = audit(&[write("/testbed/look.sh", script)]);
        assert_eq!(written.class, TrajectoryClass::Clean);
        for run in [
            "bash look.sh",
            "sh ./look.sh",
            "cd /testbed && ./look.sh",
            "source look.sh",
            ". /testbed/look.sh",
        ] {
            let a = audit(&[write("/testbed/look.sh", script), bash(run)]);
            assert_eq!(a.class, TrajectoryClass::Blocklist, "{run}");
            assert_eq!(a.blocklist_hits, ["git log --all"], "{run}");
            assert_eq!(a.evidence[0].step, 3, "{run}: the step that ran it");
        }
        // Written by a command: a heredoc, echo, tee, copied and moved.
        for (make, run) in [
            (
                "cat > /tmp/f.sh <<'EOF'\ngit fetch origin\nEOF",
                "bash /tmp/f.sh",
            ),
            ("echo 'git fetch origin' > f.sh && chmod +x f.sh", "./f.sh"),
            (
                "printf 'git fetch origin\\n' | tee f.sh >/dev/null",
                "sh f.sh",
            ),
            (
                "echo 'git fetch origin' > a.sh; cp a.sh /tmp/",
                "bash /tmp/a.sh",
            ),
            ("echo 'git fetch origin' > a.sh; mv a.sh b.sh", "bash b.sh"),
        ] {
            let a = audit(&[bash(make), bash(run)]);
            assert_eq!(a.blocklist_hits, ["git fetch"], "{make} / {run}");
            // In one command too.
            let a = audit(&[bash(&format!("{make}\n{run}"))]);
            assert_eq!(
                a.blocklist_hits,
                ["git fetch"],
                "{make} / {run}, one command"
            );
        }
        // Fed to a shell, or printed into one.
        for run in [
            "bash < look.sh",
            "cat look.sh | sh",
            "sh -c \"$(cat /testbed/look.sh)\"",
            "python3 - < look.py",
        ] {
            let a = audit(&[
                write("/testbed/look.sh", script),
                write("look.py", "import os\nos.system('git log --all')\n"),
                bash(run),
            ]);
            assert_eq!(a.blocklist_hits, ["git log --all"], "{run}");
        }
        // Named by Python that runs it; a shell command that only names it runs nothing.
        let fetch = "import os\nos.system('git fetch')\n";
        for run in [
            "python -c \"exec(open('x.py').read())\"",
            "python3 -c 'import runpy; runpy.run_path(\"x.py\")'",
        ] {
            let a = audit(&[write("x.py", fetch), bash(run)]);
            assert_eq!(a.blocklist_hits, ["git fetch"], "{run}");
        }
        let a = audit(&[
            write("x.py", fetch),
            bash("git add 'x.py' && git diff -- 'x.py'"),
        ]);
        assert_eq!(a.class, TrajectoryClass::Clean, "{:?}", a.evidence);
        // Run on the way: a makefile's recipes, a conftest.py pytest loads.
        let make = "all:\n\tgit fetch origin\n";
        for (path, run) in [("Makefile", "make"), ("build.mk", "make -f build.mk all")] {
            let a = audit(&[write(path, make), bash(run)]);
            assert_eq!(a.blocklist_hits, ["git fetch"], "{run}");
        }
        let conftest = "import subprocess\nsubprocess.run(['git', 'fetch'])\n";
        let a = audit(&[
            write("/testbed/tests/conftest.py", conftest),
            bash("cd /testbed && python -m pytest -q"),
        ]);
        assert_eq!(a.blocklist_hits, ["git fetch"]);
        // Read by a program that runs nothing, a file whose text is unknown is no unread step.
        let a = audit(&[
            bash("make > out.txt"),
            bash("grep -c x < out.txt; cat out.txt"),
        ]);
        assert_eq!(a.class, TrajectoryClass::Clean, "{:?}", a.unread);
        // Moved away, the old name runs the project's own file (not read).
        let a = audit(&[
            bash("echo 'git fetch' > a.sh; mv a.sh b.sh"),
            bash("bash a.sh"),
        ]);
        assert_eq!(a.class, TrajectoryClass::Clean);
        // An edit that replaces the forbidden line before the run.
        let a = audit(&[
            write("look.sh", script),
            json!({"function_name": "Edit", "arguments": {"file_path": "look.sh", "old_string": "log --all", "new_string": "status"}}),
            bash("bash look.sh"),
        ]);
        assert_eq!(a.class, TrajectoryClass::Clean, "{:?}", a.evidence);
    }

    /// A Python file is read for what it runs and the URLs its strings hold, not its comments
    /// or docstrings; also when pytest runs it.
    #[test]
    fn a_python_file_the_agent_wrote_is_read_where_it_runs() {
        let fetch = "import urllib.request\nURL = 'https://github.com/Pylons/pyramid/' + 'pull/3054.diff'\nurllib.request.urlopen('https://github.com/Pylons/pyramid/pull/3054.diff')\n";
        let a = audit(&[write("fetch.py", fetch), bash("python3 fetch.py")]);
        assert_eq!(a.class, TrajectoryClass::TierA, "{:?}", a.evidence);
        let shells =
            "import subprocess\n\ndef test_x():\n    subprocess.run(['git', 'log', '--all'])\n";
        for run in [
            "pytest -q test_repro.py::test_x",
            "python -m pytest test_repro.py",
            "python test_repro.py",
        ] {
            let a = audit(&[write("tests/test_repro.py", shells), bash(run)]);
            assert_eq!(a.blocklist_hits, ["git log --all"], "{run}");
        }
        let honest = "\"\"\"Reproduces https://github.com/Pylons/pyramid/pull/3054 locally.\"\"\"\n# see https://github.com/Pylons/pyramid/pull/3054.diff\nprint(1)\n";
        let a = audit(&[write("repro.py", honest), bash("python repro.py")]);
        assert_eq!(a.class, TrajectoryClass::Clean, "{:?}", a.evidence);
    }

    /// The file editor of OpenHands, AweAgent and SWE-agent, called as a tool with JSON
    /// arguments or typed as a command: its files are read where they run, and its operations
    /// are no shell commands.
    #[test]
    fn the_file_editor_s_files_are_read_where_they_run() {
        let editor =
            |args: Value| json!({"function_name": "str_replace_editor", "arguments": args});
        let a = audit(&[
            editor(
                json!({"command": "create", "path": "/testbed/r.sh", "file_text": "git status\n"}),
            ),
            editor(
                json!({"command": "str_replace", "path": "/testbed/r.sh", "old_str": "status", "new_str": "pull"}),
            ),
            editor(json!({"command": "view", "path": "/testbed/r.sh"})),
            bash("bash r.sh"),
        ]);
        assert_eq!(a.blocklist_hits, ["git pull"], "{:?}", a.evidence);
        assert_eq!(
            a.evidence.len(),
            1,
            "the editor's operations are no commands: {:?}",
            a.evidence
        );
        let a = audit(&[
            bash(
                "str_replace_editor create /testbed/r.py --file_text 'import os\nos.system(\"git log --all\")\n'",
            ),
            bash("cd /testbed && python r.py"),
        ]);
        assert_eq!(a.blocklist_hits, ["git log --all"], "{:?}", a.evidence);
        let a = audit(&[
            editor(json!({"command": "create", "path": "r.sh", "file_text": "echo hi\n"})),
            editor(json!({"command": "undo_edit", "path": "r.sh"})),
            bash("sh r.sh"),
        ]);
        assert_eq!(
            a.class,
            TrajectoryClass::Incomplete,
            "an undo leaves what the file holds unknown"
        );
    }

    /// SWE-agent 0.x writes files with `create` and block edits of the file it opened last.
    #[test]
    fn swe_agent_block_edits_are_read_where_the_file_runs() {
        let traj = json!({"instance_id": "pylons_pyramid_pr3054", "trajectory": [
            {"thought": "", "action": "create reproduce.py"},
            {"thought": "", "action": "edit 1:1\nimport os\nos.system('git fetch origin')\nend_of_edit"},
            {"thought": "", "action": "python reproduce.py"}
        ], "history": [{"role": "user", "content": "Fix it"}]});
        let a = audit_line(1, &traj, &TaskInfo::default(), AuditOptions::default()).unwrap();
        assert_eq!(a.blocklist_hits, ["git fetch"], "{:?}", a.evidence);
    }

    /// A file written without its text shown, then run: what ran is unknown, so the trajectory
    /// is incomplete, never clean; a file the trajectory never wrote is the project's.
    #[test]
    fn a_file_run_whose_text_is_unknown_is_unread() {
        let opaque = json!({"function_name": "write_file", "arguments": {"file_path": "x.sh", "edits": [{"op": "?"}]}});
        let a = audit(&[opaque, bash("bash x.sh")]);
        assert_eq!(a.class, TrajectoryClass::Incomplete);
        assert!(a.unread[0].why.contains("`x.sh`"), "{:?}", a.unread);
        let a = audit(&[bash("make gen > run.sh"), bash("sh run.sh")]);
        assert_eq!(a.class, TrajectoryClass::Incomplete);
        let a = audit(&[bash(
            "bash build.sh && ./scripts/test.sh && python setup.py -q",
        )]);
        assert_eq!(a.class, TrajectoryClass::Clean);
        // A file that runs itself (or names itself) is read once, as it holds nothing new.
        let a = audit(&[
            write("loop.sh", "bash loop.sh\ngit fetch\n"),
            bash("bash loop.sh"),
        ]);
        assert_eq!(a.blocklist_hits, ["git fetch"]);
        assert!(a.unread.is_empty(), "{:?}", a.unread);
        let usage = "import sys\nprint('usage: python repro.py N')\n";
        let a = audit(&[write("repro.py", usage), bash("python repro.py")]);
        assert_eq!(a.class, TrajectoryClass::Clean, "{:?}", a.unread);
    }
}
