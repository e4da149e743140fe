//! An in-memory [`Sandbox`] that follows a script, for unit tests of what the host side decides
//! (a patch that is refused, a verifier that times out, runs out of memory, writes nothing or
//! disagrees). Nothing runs: each command's output is the script's, matched by a piece of its
//! text. The real engine is tested by the integration tests; this never stands in for them.

use super::{
    ContainerSpec, ContainerState, ExecOutput, ExecSpec, Sandbox, SandboxError, TarProducer,
};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What starting a container of a matching image does.
pub(crate) enum OnStart {
    Fail(fn() -> SandboxError),
    Panic,
}

/// A scripted engine: the images it has, how starts and commands go, and a journal of the calls.
#[derive(Default)]
pub(crate) struct Scripted {
    images: Mutex<BTreeMap<String, String>>,
    starts: Vec<(String, OnStart)>,
    execs: Vec<(String, ExecOutput)>,
    oom_killed: bool,
    next: AtomicUsize,
    journal: Mutex<Vec<String>>,
}

impl Scripted {
    pub(crate) fn new() -> Scripted {
        Scripted::default()
    }

    /// The engine has `image`.
    pub(crate) fn image(self, image: &str) -> Scripted {
        let id = format!("sha256:{}", image.len());
        self.lock_images().insert(image.to_owned(), id);
        self
    }

    /// Starting an image whose name contains `image` fails or panics.
    pub(crate) fn on_start(mut self, image: &str, what: OnStart) -> Scripted {
        self.starts.push((image.to_owned(), what));
        self
    }

    /// A command whose text contains `piece` gives `out`; the first match wins, and a command
    /// nothing matches succeeds with no output.
    pub(crate) fn on_exec(mut self, piece: &str, out: ExecOutput) -> Scripted {
        self.execs.push((piece.to_owned(), out));
        self
    }

    /// Every container reports that the kernel killed something in it for want of memory.
    pub(crate) fn oom_killed(mut self) -> Scripted {
        self.oom_killed = true;
        self
    }

    /// The calls so far, one line each (`start IMAGE`, `exec FIRST-WORDS`, `commit TAG`, …).
    pub(crate) fn journal(&self) -> Vec<String> {
        self.journal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// How many journal lines start with `what`.
    pub(crate) fn count(&self, what: &str) -> usize {
        self.journal()
            .iter()
            .filter(|l| l.starts_with(what))
            .count()
    }

    fn note(&self, line: String) {
        self.journal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(line);
    }

    fn lock_images(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.images.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A command's output: exit code, stdout, and whether the host gave up waiting.
pub(crate) fn output(exit_code: Option<i64>, stdout: &str, timed_out: bool) -> ExecOutput {
    ExecOutput {
        exit_code,
        stdout: stdout.to_owned(),
        timed_out,
        ..ExecOutput::default()
    }
}

impl Sandbox for Scripted {
    type Handle = String;

    async fn image_id(&self, image: &str) -> Result<Option<String>, SandboxError> {
        Ok(self.lock_images().get(image).cloned())
    }

    async fn start(&self, spec: &ContainerSpec) -> Result<String, SandboxError> {
        self.note(format!("start {}", spec.image));
        if let Some((_, what)) = self.starts.iter().find(|(i, _)| spec.image.contains(i)) {
            match what {
                OnStart::Fail(error) => return Err(error()),
                OnStart::Panic => panic!("the scripted engine breaks on {}", spec.image),
            }
        }
        Ok(format!("c{}", self.next.fetch_add(1, Ordering::SeqCst)))
    }

    async fn exec(&self, _c: &String, spec: &ExecSpec) -> Result<ExecOutput, SandboxError> {
        let text = spec.cmd.join(" ");
        let first: String = text
            .split_whitespace()
            .take(6)
            .collect::<Vec<_>>()
            .join(" ");
        self.note(format!("exec {first}"));
        Ok(self
            .execs
            .iter()
            .find(|(piece, _)| text.contains(piece.as_str()))
            .map(|(_, out)| out.clone())
            .unwrap_or_else(|| output(Some(0), "", false)))
    }

    async fn upload(&self, _c: &String, dir: &str, _tar: Vec<u8>) -> Result<(), SandboxError> {
        self.note(format!("upload {dir}"));
        Ok(())
    }

    async fn upload_stream(
        &self,
        _c: &String,
        dir: &str,
        produce: TarProducer,
    ) -> Result<(), SandboxError> {
        self.note(format!("upload-stream {dir}"));
        produce(&mut std::io::sink()).map_err(|e| SandboxError::Archive {
            op: "upload",
            message: e.to_string(),
        })
    }

    async fn download(
        &self,
        _c: &String,
        path: &str,
        _max: usize,
    ) -> Result<Option<Vec<u8>>, SandboxError> {
        self.note(format!("download {path}"));
        Ok(None)
    }

    async fn state(&self, _c: &String) -> Result<ContainerState, SandboxError> {
        Ok(ContainerState {
            oom_killed: self.oom_killed,
        })
    }

    async fn commit(
        &self,
        _c: &String,
        tag: &str,
        _labels: &BTreeMap<String, String>,
    ) -> Result<String, SandboxError> {
        self.note(format!("commit {tag}"));
        let id = format!("sha256:prepared-{tag}");
        self.lock_images().insert(tag.to_owned(), id.clone());
        Ok(id)
    }

    async fn remove(&self, c: &String) -> Result<(), SandboxError> {
        self.note(format!("remove {c}"));
        Ok(())
    }
}
