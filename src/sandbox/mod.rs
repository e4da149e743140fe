//! The container boundary: a [`Sandbox`] trait and its Docker Engine backend.
//!
//! A sandbox starts a fresh container per submission with no network and resource limits, runs
//! commands with separate stdout/stderr, exit code and a host-side timeout, moves files in and out
//! as tar through the engine API, and removes the container on every path out.
//!
//! Only this module speaks the engine's API (bollard, in [`DockerSandbox`]). The rest of the
//! library uses containers through the [`Sandbox`] trait, in async code: `grade` grades one
//! submission in a container, `submission::replay` replays a transcript's edits in one, and
//! `run` connects one [`DockerSandbox`] per run, builds the Harbor environments its jobs need and
//! sweeps the containers its graders leave. The CLI's `image build` and `ingest --reconstruct`
//! connect one of their own.
//!
//! Files:
//! - `checkout.rs`: An instance's repository at its base commit inside a container, its setup
//!   commands run after: where the grader's prepare step and the transcript replay both start.
//! - `docker.rs`: The Docker Engine backend of `Sandbox`, on bollard.
//! - `pull.rs`: Instance images pulled from their registries through the engine (`POST
//!   /images/create`), as every harness users know does.
//! - `scripted.rs`: An in-memory `Sandbox` that follows a script.
//! - `tar_io.rs`: Small tar helpers for moving files through the engine API.

mod checkout;
mod docker;
mod pull;
#[cfg(test)]
pub(crate) mod scripted;
mod tar_io;

pub use checkout::{CheckedOut, Checkout, check_out};
pub use docker::{
    DockerSandbox, INSTANCE_LABEL, MANAGED_LABEL, PREPARED_FROM_LABEL, PREPARED_LABEL,
    PreparedImage, RUN_LABEL, prune_plan,
};
pub use pull::{
    ImageRef, Logins, MIN_FREE_FOR_PULL, PullFailure, PullPolicy, credentials_for,
    docker_config_dir, min_free_for_pull,
};
pub use tar_io::{TarBuilder, files_in_tar};

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;
use thiserror::Error;

/// Resource limits of a grading container.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Memory in MiB, with no swap beyond it; a process that goes over is killed.
    pub memory_mb: u64,
    /// CPU time, in CPUs (fractions allowed).
    pub cpus: f64,
    /// How many processes and threads may exist at once.
    pub pids: i64,
    /// What the container may write (its writable layer), in MiB; 0 for no limit. Enforced as a
    /// storage quota where the engine's storage driver has one, else by a watchdog on the
    /// container's size (and, in the container, as the largest file the tests may write).
    pub disk_mb: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_mb: 8192,
            cpus: 2.0,
            pids: 1024,
            disk_mb: 2048,
        }
    }
}

impl Limits {
    /// `disk_mb` in bytes; `None` for no limit.
    pub fn disk_bytes(&self) -> Option<u64> {
        (self.disk_mb > 0).then(|| self.disk_mb.saturating_mul(1024 * 1024))
    }
}

/// What container to start.
#[derive(Debug, Clone)]
pub struct ContainerSpec {
    /// Image reference; it must already be on the engine (a run pulls what is missing before
    /// its gradings start).
    pub image: String,
    /// Working directory of the container; `None` keeps the image's.
    pub workdir: Option<String>,
    /// Container labels (run, instance, process), so leftovers can be found and swept.
    pub labels: BTreeMap<String, String>,
    /// Memory, CPU, process and disk limits.
    pub limits: Limits,
}

/// One command to run in a container.
#[derive(Debug, Clone)]
pub struct ExecSpec {
    /// Program and arguments, run without a shell.
    pub cmd: Vec<String>,
    /// Directory to run in; `None` for the container's working directory.
    pub workdir: Option<String>,
    /// Environment variables added for this command, as `(name, value)`.
    pub env: Vec<(String, String)>,
    /// Host-side bound on the whole call (the container is unusable after it expires).
    pub timeout: Duration,
    /// Bytes kept per stream; the tail is kept, the head dropped.
    pub max_output: usize,
}

impl ExecSpec {
    /// Runs `cmd` (program, then arguments) with a 300 s timeout and 256 KiB kept per stream.
    pub fn new<S: Into<String>>(cmd: impl IntoIterator<Item = S>) -> ExecSpec {
        ExecSpec {
            cmd: cmd.into_iter().map(Into::into).collect(),
            workdir: None,
            env: Vec::new(),
            timeout: Duration::from_secs(300),
            max_output: 256 * 1024,
        }
    }

    /// `sh -c script`.
    pub fn sh(script: impl Into<String>) -> ExecSpec {
        ExecSpec::new(["sh".to_owned(), "-c".to_owned(), script.into()])
    }

    /// Runs in `dir` instead of the container's working directory.
    pub fn in_dir(mut self, dir: impl Into<String>) -> Self {
        self.workdir = Some(dir.into());
        self
    }

    /// Replaces the host-side timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Adds one environment variable.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }
}

/// What a command did.
#[derive(Debug, Clone, Default)]
pub struct ExecOutput {
    /// `None` when the command did not finish (host-side timeout).
    pub exit_code: Option<i64>,
    /// Standard output, its last `max_output` bytes at most (invalid UTF-8 replaced).
    pub stdout: String,
    /// Standard error, its last `max_output` bytes at most (invalid UTF-8 replaced).
    pub stderr: String,
    /// The host-side timeout expired before the command finished.
    pub timed_out: bool,
    /// Wall-clock time of the whole call.
    pub duration: Duration,
}

impl ExecOutput {
    /// Whether the command finished with exit code 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// stdout and stderr, for logs.
    pub fn combined(&self) -> String {
        let mut s = self.stdout.clone();
        if !self.stderr.is_empty() {
            if !s.is_empty() && !s.ends_with('\n') {
                s.push('\n');
            }
            s.push_str(&self.stderr);
        }
        s
    }
}

/// The state of a container after something went wrong.
#[derive(Debug, Clone, Default)]
pub struct ContainerState {
    /// The kernel killed a process in it for going over the memory limit.
    pub oom_killed: bool,
}

/// Why the container engine did not do what was asked. These are infrastructure failures: a
/// grading they stop ends as an `error` verdict, never counted against the submission.
#[derive(Debug, Error)]
pub enum SandboxError {
    /// No engine answers at the Docker endpoint (not running, wrong `DOCKER_HOST`, no
    /// permission on the socket).
    #[error(
        "the Docker engine is not reachable at {endpoint}: {message}\nhint: start the Docker engine (e.g. `sudo systemctl start docker`), or point DOCKER_HOST at it (a Podman socket works too: unix:///run/user/$UID/podman/podman.sock)"
    )]
    EngineUnreachable {
        /// `DOCKER_HOST`, or the default socket.
        endpoint: String,
        /// What the connection attempt reported.
        message: String,
    },
    /// The image is not on the engine (and was not pulled: `--pull never`, or its pull failed).
    #[error("image `{image}` is not on the engine")]
    ImageMissing {
        /// The image reference asked for.
        image: String,
    },
    /// Pulling the image from its registry failed.
    #[error("pulling `{image}`: {} ({message})", why.as_str())]
    Pull {
        /// The image reference.
        image: String,
        /// What kind of failure, as a user acts on it.
        why: PullFailure,
        /// What the engine or the credential lookup said.
        message: String,
    },
    /// The engine refused or failed a call.
    #[error("{op}: {message}")]
    Api {
        /// The operation, e.g. "create container".
        op: &'static str,
        /// The engine's error.
        message: String,
    },
    /// The engine did not answer a call in time.
    #[error("{op}: no answer from the engine within {secs} s")]
    Timeout {
        /// The operation, e.g. "upload".
        op: &'static str,
        /// The bound that expired, in seconds.
        secs: u64,
    },
    /// A tar archive going in or out could not be made, or a download was over its size cap.
    #[error("{op}: {message}")]
    Archive {
        /// "upload" or "download".
        op: &'static str,
        /// What went wrong.
        message: String,
    },
}

impl SandboxError {
    /// The user's to fix (an image name that is wrong or not there with `--pull never`,
    /// credentials, a full disk), not the machinery's.
    pub fn is_users(&self) -> bool {
        match self {
            SandboxError::ImageMissing { .. } => true,
            SandboxError::Pull { why, .. } => why.is_users(),
            _ => false,
        }
    }

    /// The hints of `errors`, each once, in the order first given.
    pub fn distinct_hints<'a>(
        errors: impl IntoIterator<Item = &'a SandboxError>,
    ) -> Vec<&'static str> {
        let mut hints = Vec::new();
        for h in errors.into_iter().filter_map(SandboxError::hint) {
            if !hints.contains(&h) {
                hints.push(h);
            }
        }
        hints
    }

    /// A line a user can act on.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            SandboxError::EngineUnreachable { .. } => Some(
                "start the Docker engine (e.g. `sudo systemctl start docker`), or point DOCKER_HOST at it (a Podman socket works too: unix:///run/user/$UID/podman/podman.sock)",
            ),
            SandboxError::ImageMissing { .. } => Some(
                "pull it (`beyondswe image pull IMAGE`, or grade with --pull missing, the default), build it (`beyondswe image build`) or `docker load` it; `docker images` lists what the engine has",
            ),
            SandboxError::Pull { why, .. } => Some(why.hint()),
            _ => None,
        }
    }
}

/// Writes a tar archive into the writer it is given (see [`Sandbox::upload_stream`]).
pub type TarProducer = Box<dyn FnOnce(&mut dyn std::io::Write) -> std::io::Result<()> + Send>;

/// A place to run submissions: fresh containers, commands, files in and out.
pub trait Sandbox: Send + Sync {
    /// A started container.
    type Handle: Send + Sync + Clone + std::fmt::Debug;

    /// The image's id (digest), `None` if the engine does not have it.
    fn image_id(
        &self,
        image: &str,
    ) -> impl Future<Output = Result<Option<String>, SandboxError>> + Send;

    /// Creates and starts a new container that idles until removed.
    fn start(
        &self,
        spec: &ContainerSpec,
    ) -> impl Future<Output = Result<Self::Handle, SandboxError>> + Send;

    /// Runs one command in the container and waits for it to end or its timeout to expire.
    fn exec(
        &self,
        container: &Self::Handle,
        spec: &ExecSpec,
    ) -> impl Future<Output = Result<ExecOutput, SandboxError>> + Send;

    /// Extracts a tar archive into `dir`, which must exist (put new directories in the archive).
    fn upload(
        &self,
        container: &Self::Handle,
        dir: &str,
        tar: Vec<u8>,
    ) -> impl Future<Output = Result<(), SandboxError>> + Send;

    /// Streams a tar archive into `dir` (which must exist): `produce` writes it, on a blocking
    /// thread, into a writer whose chunks go to the engine as they come, so memory stays flat
    /// whatever the archive's size.
    fn upload_stream(
        &self,
        container: &Self::Handle,
        dir: &str,
        produce: TarProducer,
    ) -> impl Future<Output = Result<(), SandboxError>> + Send;

    /// The tar archive of `path` (file or directory), at most `max_bytes`; `None` if it does not
    /// exist.
    fn download(
        &self,
        container: &Self::Handle,
        path: &str,
        max_bytes: usize,
    ) -> impl Future<Output = Result<Option<Vec<u8>>, SandboxError>> + Send;

    /// Whether the container was killed for memory (asked after a step failed).
    fn state(
        &self,
        container: &Self::Handle,
    ) -> impl Future<Output = Result<ContainerState, SandboxError>> + Send;

    /// Saves the container's file system as image `tag` (with `labels`); returns the image id.
    fn commit(
        &self,
        container: &Self::Handle,
        tag: &str,
        labels: &BTreeMap<String, String>,
    ) -> impl Future<Output = Result<String, SandboxError>> + Send;

    /// Marks image `tag` as used now (the engine's last-tagged time), so that pruning takes the
    /// least recently used prepared images first.
    fn touch_image(&self, tag: &str) -> impl Future<Output = Result<(), SandboxError>> + Send {
        let _ = tag;
        async { Ok(()) }
    }

    /// Removes the container (killing what runs in it).
    fn remove(
        &self,
        container: &Self::Handle,
    ) -> impl Future<Output = Result<(), SandboxError>> + Send;
}
