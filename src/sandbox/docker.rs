//! The Docker Engine backend of [`Sandbox`], on bollard.
//!
//! Connects through DOCKER_HOST or the default socket (Podman's Docker-compatible socket works the
//! same way), negotiates the API version so old engines answer, and bounds every call with a
//! host-side timeout. Containers carry labels naming the run, the instance, and the process that
//! made them, so that a later start can sweep what a crashed run left behind without touching
//! containers of runs that are still alive.

use super::{
    ContainerSpec, ContainerState, ExecOutput, ExecSpec, Sandbox, SandboxError, TarProducer,
};
use crate::text::TailBuf;
use bollard::Docker;
use bollard::container::LogOutput;
use bollard::exec::{StartExecOptions, StartExecResults};
use bollard::models::{ContainerConfig, ContainerCreateBody, ExecConfig, HostConfig};
use bollard::query_parameters::{
    BuildImageOptionsBuilder, CommitContainerOptionsBuilder, DownloadFromContainerOptionsBuilder,
    ListContainersOptionsBuilder, ListImagesOptionsBuilder, RemoveContainerOptionsBuilder,
    RemoveImageOptionsBuilder, TagImageOptionsBuilder, UploadToContainerOptionsBuilder,
};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// Label on every container this tool creates.
pub const MANAGED_LABEL: &str = "beyondswe.managed";
/// Label naming the run a container belongs to (swept with the run).
pub const RUN_LABEL: &str = "beyondswe.run";
/// Label naming the instance a container grades or replays.
pub const INSTANCE_LABEL: &str = "beyondswe.instance";
/// Label of the images the grader prepares (one per instance image, base and setup).
pub const PREPARED_LABEL: &str = "beyondswe.prepared";
/// Label of a prepared image naming the image it was prepared from (its own size is the
/// difference).
pub const PREPARED_FROM_LABEL: &str = "beyondswe.prepared.from";
const HOST_LABEL: &str = "beyondswe.host";
const PID_LABEL: &str = "beyondswe.pid";

/// Bound on calls that should answer at once (create, start, inspect, remove, upload).
const API_TIMEOUT: Duration = Duration::from_secs(120);
/// Bound on a streamed upload (a repository of up to `--max-repo-mb`).
const UPLOAD_TIMEOUT: Duration = Duration::from_secs(1800);
/// A streamed upload holds at most this many chunks of this size in memory.
const UPLOAD_CHUNKS: usize = 4;
const UPLOAD_CHUNK: usize = 256 * 1024;

/// The writer a [`TarProducer`] writes into: full chunks go to the upload as they fill.
struct ChunkWriter {
    tx: tokio::sync::mpsc::Sender<std::io::Result<Vec<u8>>>,
    buf: Vec<u8>,
}

impl ChunkWriter {
    fn send(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(UPLOAD_CHUNK));
        self.tx
            .blocking_send(Ok(chunk))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the upload ended"))
    }
}

impl std::io::Write for ChunkWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let n = data.len().min(UPLOAD_CHUNK - self.buf.len());
        self.buf.extend_from_slice(&data[..n]);
        if self.buf.len() >= UPLOAD_CHUNK {
            self.send()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A [`Sandbox`] on a Docker Engine (or Podman's Docker-compatible socket); cheap to clone, the
/// clones share one connection.
#[derive(Clone)]
pub struct DockerSandbox {
    docker: Docker,
    endpoint: String,
    /// Whether the storage driver takes a writable-layer quota (`--storage-opt size=`): unknown
    /// until the first container with a disk limit is created, then what the engine said.
    quota: Arc<AtomicU8>,
}

const QUOTA_UNKNOWN: u8 = 0;
const QUOTA_YES: u8 = 1;
const QUOTA_NO: u8 = 2;

impl std::fmt::Debug for DockerSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DockerSandbox")
            .field("endpoint", &self.endpoint)
            .finish()
    }
}

fn api(op: &'static str) -> impl Fn(bollard::errors::Error) -> SandboxError {
    move |e| SandboxError::Api {
        op,
        message: e.to_string(),
    }
}

async fn bounded<T>(
    op: &'static str,
    limit: Duration,
    fut: impl Future<Output = Result<T, bollard::errors::Error>>,
) -> Result<T, SandboxError> {
    match tokio::time::timeout(limit, fut).await {
        Ok(r) => r.map_err(api(op)),
        Err(_) => Err(SandboxError::Timeout {
            op,
            secs: limit.as_secs(),
        }),
    }
}

fn is_not_found(e: &bollard::errors::Error) -> bool {
    matches!(
        e,
        bollard::errors::Error::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

fn hostname() -> String {
    fs_err::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_owned())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}

/// A prepared image, as pruning weighs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedImage {
    /// The image id.
    pub id: String,
    /// Its `beyondswe-prepared:<key>` tag; `None` for a dangling one (another preparation of the
    /// same key took the tag).
    pub tag: Option<String>,
    /// The instance it was first prepared for.
    pub instance: Option<String>,
    /// What removing it frees: its size less the image it was prepared from.
    pub bytes: u64,
    /// When it was last used (made, or reused by a grading), RFC 3339 to the second.
    pub last_used: String,
}

/// The prepared images pruning removes to bring their total to at most `max_bytes`: every
/// dangling one, then the least recently used first.
pub fn prune_plan(images: &[PreparedImage], max_bytes: u64) -> Vec<&PreparedImage> {
    let mut out: Vec<&PreparedImage> = images.iter().filter(|i| i.tag.is_none()).collect();
    let mut kept: Vec<&PreparedImage> = images.iter().filter(|i| i.tag.is_some()).collect();
    kept.sort_by(|a, b| a.last_used.cmp(&b.last_used).then(a.id.cmp(&b.id)));
    let mut total: u64 = kept.iter().map(|i| i.bytes).sum();
    for i in kept {
        if total <= max_bytes {
            break;
        }
        total = total.saturating_sub(i.bytes);
        out.push(i);
    }
    out
}

impl DockerSandbox {
    /// Every image the grader prepared, with what removing it frees and when it was last used.
    pub async fn prepared_images(&self) -> Result<Vec<PreparedImage>, SandboxError> {
        let filters = HashMap::from([("label".to_owned(), vec![PREPARED_LABEL.to_owned()])]);
        let options = ListImagesOptionsBuilder::default()
            .filters(&filters)
            .build();
        let list = bounded(
            "list images",
            API_TIMEOUT,
            self.docker.list_images(Some(options)),
        )
        .await?;
        let mut sizes: HashMap<String, u64> = HashMap::new();
        let mut out = Vec::new();
        for img in list {
            let info = bounded(
                "inspect image",
                API_TIMEOUT,
                self.docker.inspect_image(&img.id),
            )
            .await?;
            let size = u64::try_from(img.size).unwrap_or(0);
            let from = img.labels.get(PREPARED_FROM_LABEL).cloned();
            let base = match from {
                Some(from) => match sizes.get(&from) {
                    Some(s) => *s,
                    None => {
                        // The source image may be gone: then the whole size is this one's.
                        let s = bounded(
                            "inspect image",
                            API_TIMEOUT,
                            self.docker.inspect_image(&from),
                        )
                        .await
                        .ok()
                        .and_then(|i| i.size)
                        .and_then(|s| u64::try_from(s).ok())
                        .unwrap_or(0);
                        sizes.insert(from, s);
                        s
                    }
                },
                None => 0,
            };
            let tag = img
                .repo_tags
                .iter()
                .find(|t| t.starts_with("beyondswe-prepared:"))
                .cloned();
            let tagged = info
                .metadata
                .and_then(|m| m.last_tag_time)
                .filter(|t| t.len() >= 19 && !t.starts_with("0001"));
            let created = crate::text::rfc3339_of(img.created);
            let last_used = match tagged {
                Some(t) if t[..19] > created[..19] => t[..19].to_owned(),
                _ => created[..19].to_owned(),
            };
            out.push(PreparedImage {
                id: img.id,
                tag,
                instance: img.labels.get(INSTANCE_LABEL).cloned(),
                bytes: size.saturating_sub(base),
                last_used,
            });
        }
        Ok(out)
    }

    /// Removes a prepared image; `false` when the engine keeps it (a container uses it).
    pub async fn remove_image(&self, id: &str) -> Result<bool, SandboxError> {
        let options = RemoveImageOptionsBuilder::default().build();
        match tokio::time::timeout(
            API_TIMEOUT,
            self.docker.remove_image(id, Some(options), None),
        )
        .await
        {
            Ok(Ok(_)) => Ok(true),
            Ok(Err(e)) if is_not_found(&e) => Ok(true),
            Ok(Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 409, ..
            })) => Ok(false),
            Ok(Err(e)) => Err(api("remove image")(e)),
            Err(_) => Err(SandboxError::Timeout {
                op: "remove image",
                secs: API_TIMEOUT.as_secs(),
            }),
        }
    }

    /// The exit code of a finished exec: the stream ends a moment before the engine records it,
    /// so it is asked for a few times (for up to two seconds).
    async fn exit_code(&self, exec_id: &str) -> Result<Option<i64>, SandboxError> {
        for _ in 0..100 {
            let info = bounded(
                "inspect exec",
                API_TIMEOUT,
                self.docker.inspect_exec(exec_id),
            )
            .await?;
            if info.running != Some(true) {
                return Ok(info.exit_code);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(None)
    }

    /// Connects to the engine and checks that it answers.
    pub async fn connect() -> Result<DockerSandbox, SandboxError> {
        let endpoint =
            std::env::var("DOCKER_HOST").unwrap_or_else(|_| "unix:///var/run/docker.sock".into());
        let unreachable = |message: String| SandboxError::EngineUnreachable {
            endpoint: endpoint.clone(),
            message,
        };
        let docker = Docker::connect_with_defaults()
            .map_err(|e| unreachable(e.to_string()))?
            .with_timeout(API_TIMEOUT);
        let docker =
            match tokio::time::timeout(Duration::from_secs(15), docker.negotiate_version()).await {
                Ok(Ok(d)) => d,
                Ok(Err(e)) => return Err(unreachable(e.to_string())),
                Err(_) => return Err(unreachable("no answer within 15 s".into())),
            };
        match tokio::time::timeout(Duration::from_secs(15), docker.ping()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(unreachable(e.to_string())),
            Err(_) => return Err(unreachable("no answer within 15 s".into())),
        }
        Ok(DockerSandbox {
            docker,
            endpoint,
            quota: Arc::new(AtomicU8::new(QUOTA_UNKNOWN)),
        })
    }

    /// Where the engine was reached: `DOCKER_HOST`, or the default socket.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The engine's client, for the calls of this module's siblings (pulls).
    pub(super) fn docker(&self) -> &Docker {
        &self.docker
    }

    /// The labels every container of this process carries.
    pub fn process_labels(run_id: &str) -> Vec<(String, String)> {
        vec![
            (MANAGED_LABEL.into(), "1".into()),
            (RUN_LABEL.into(), run_id.into()),
            (HOST_LABEL.into(), hostname()),
            (PID_LABEL.into(), std::process::id().to_string()),
        ]
    }

    /// Removes containers left by grader processes of this host that are no longer alive (and,
    /// with `run_id`, any container of that run). Returns how many were removed.
    pub async fn sweep(&self, run_id: Option<&str>) -> Result<usize, SandboxError> {
        let list = self.labelled(&format!("{MANAGED_LABEL}=1")).await?;
        let me = hostname();
        let mut removed = 0;
        for c in list {
            let labels = c.labels.unwrap_or_default();
            let same_run = run_id.is_some_and(|r| labels.get(RUN_LABEL).is_some_and(|l| l == r));
            let orphan = labels.get(HOST_LABEL) == Some(&me)
                && labels
                    .get(PID_LABEL)
                    .and_then(|p| p.parse::<u32>().ok())
                    .is_some_and(|pid| {
                        pid != std::process::id()
                            && !std::path::Path::new(&format!("/proc/{pid}")).exists()
                    });
            if (same_run || orphan)
                && let Some(id) = c.id
            {
                self.remove(&id).await?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Containers of one run (tests use it to prove nothing is left running).
    pub async fn containers_of_run(&self, run_id: &str) -> Result<Vec<String>, SandboxError> {
        let list = self.labelled(&format!("{RUN_LABEL}={run_id}")).await?;
        Ok(list.into_iter().filter_map(|c| c.id).collect())
    }

    /// Every container (running or not) carrying `label` (`key=value`).
    async fn labelled(
        &self,
        label: &str,
    ) -> Result<Vec<bollard::models::ContainerSummary>, SandboxError> {
        let mut filters = HashMap::new();
        filters.insert("label", vec![label.to_owned()]);
        let options = ListContainersOptionsBuilder::default()
            .all(true)
            .filters(&filters)
            .build();
        bounded(
            "list containers",
            API_TIMEOUT,
            self.docker.list_containers(Some(options)),
        )
        .await
    }

    /// Builds an image from a build context given as a tar archive; returns the build output.
    pub async fn build_image(
        &self,
        tag: &str,
        context_tar: Vec<u8>,
        labels: &HashMap<String, String>,
        timeout: Duration,
    ) -> Result<String, SandboxError> {
        let options = BuildImageOptionsBuilder::default()
            .t(tag)
            .rm(true)
            .forcerm(true)
            .labels(labels)
            .build();
        let mut stream =
            self.docker
                .build_image(options, None, Some(bollard::body_full(context_tar.into())));
        let mut log = String::new();
        let work = async {
            while let Some(item) = stream.next().await {
                let info = item.map_err(api("build image"))?;
                if let Some(s) = info.stream {
                    log.push_str(&s);
                }
                if let Some(detail) = info.error_detail {
                    return Err(SandboxError::Api {
                        op: "build image",
                        message: format!(
                            "{}\n{}",
                            detail.message.unwrap_or_default(),
                            crate::text::tail(&log, 4000)
                        ),
                    });
                }
            }
            Ok(())
        };
        match tokio::time::timeout(timeout, work).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(SandboxError::Timeout {
                    op: "build image",
                    secs: timeout.as_secs(),
                });
            }
        }
        Ok(log)
    }

    /// Returns (only) once the container has stopped for a cause other than running out of
    /// memory (that is the step's own doing, and said by the caller): what happened to it.
    /// Looked at every two seconds.
    async fn stopped_from_outside(&self, container: &str) -> String {
        loop {
            tokio::time::sleep(Duration::from_secs(2)).await;
            if let Some(why) = self.stopped_now(container).await {
                return why;
            }
        }
    }

    /// What stopped the container, when it is no longer running for a cause other than running
    /// out of memory; `None` while it runs (or when the engine cannot say: no proof).
    async fn stopped_now(&self, container: &str) -> Option<String> {
        let info = match bounded(
            "inspect container",
            API_TIMEOUT,
            self.docker.inspect_container(container, None),
        )
        .await
        {
            Ok(info) => info,
            Err(SandboxError::Api { message, .. }) if message.contains("No such container") => {
                return Some(
                    "the container was removed from outside the grader while the step ran"
                        .to_owned(),
                );
            }
            Err(_) => return None,
        };
        let state = info.state.unwrap_or_default();
        (state.running == Some(false) && state.oom_killed != Some(true)).then(|| {
            format!(
                "the container stopped while the step ran (killed or stopped from outside the \
                 grader; exit code {})",
                state.exit_code.unwrap_or(-1)
            )
        })
    }
}

/// A memory file system in every container, for pytest's capture files (the verifier hands it
/// to the runner when it is mounted; `capture_dir` in `testrun.py`): on a storage driver in user
/// space (fuse-overlayfs) each test's capture writes and reads cost a round trip to a process,
/// about 1.7 ms a test. Its size is the memory limit, whose budget it counts against; the
/// tests' own temporary files stay where the image puts them.
const CAPTURE_TMPFS: &str = "/run/beyondswe-capture";

impl Sandbox for DockerSandbox {
    type Handle = String;

    async fn image_id(&self, image: &str) -> Result<Option<String>, SandboxError> {
        match tokio::time::timeout(API_TIMEOUT, self.docker.inspect_image(image)).await {
            Ok(Ok(info)) => Ok(info.id),
            Ok(Err(e)) if is_not_found(&e) => Ok(None),
            Ok(Err(e)) => Err(api("inspect image")(e)),
            Err(_) => Err(SandboxError::Timeout {
                op: "inspect image",
                secs: API_TIMEOUT.as_secs(),
            }),
        }
    }

    async fn start(&self, spec: &ContainerSpec) -> Result<String, SandboxError> {
        let limits = &spec.limits;
        let memory = (limits.memory_mb * 1024 * 1024) as i64;
        // A writable-layer quota where the storage driver has one (overlay2 on xfs with pquota,
        // btrfs, zfs, devicemapper). Other drivers refuse the option (remembered, so it is asked
        // once); the verifier's own watch on what the test user writes applies either way.
        let storage_opt = (limits.disk_mb > 0 && self.quota.load(Ordering::Relaxed) != QUOTA_NO)
            .then(|| HashMap::from([("size".to_owned(), format!("{}M", limits.disk_mb))]));
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            entrypoint: Some(vec!["sleep".into()]),
            cmd: Some(vec!["infinity".into()]),
            working_dir: spec.workdir.clone(),
            labels: Some(spec.labels.clone().into_iter().collect()),
            network_disabled: Some(true),
            host_config: Some(HostConfig {
                network_mode: Some("none".into()),
                memory: Some(memory),
                memory_swap: Some(memory),
                nano_cpus: Some((limits.cpus * 1e9) as i64),
                pids_limit: Some(limits.pids),
                security_opt: Some(vec!["no-new-privileges".into()]),
                init: Some(true),
                storage_opt: storage_opt.clone(),
                tmpfs: Some(HashMap::from([(
                    CAPTURE_TMPFS.to_owned(),
                    format!(
                        "rw,nosuid,nodev,noexec,mode=1777,size={}m",
                        limits.memory_mb
                    ),
                )])),
                ..HostConfig::default()
            }),
            ..ContainerCreateBody::default()
        };
        let create = |body: ContainerCreateBody| {
            tokio::time::timeout(API_TIMEOUT, self.docker.create_container(None, body))
        };
        let mut answer = create(body.clone()).await;
        if storage_opt.is_some() {
            let refused = matches!(&answer, Ok(Err(e)) if e.to_string().to_lowercase().contains("storage-opt")
                || e.to_string().to_lowercase().contains("storage opt"));
            if refused {
                self.quota.store(QUOTA_NO, Ordering::Relaxed);
                let mut body = body;
                if let Some(h) = body.host_config.as_mut() {
                    h.storage_opt = None;
                }
                answer = create(body).await;
            } else if matches!(answer, Ok(Ok(_))) {
                self.quota.store(QUOTA_YES, Ordering::Relaxed);
            }
        }
        let created = match answer {
            Ok(Ok(c)) => c,
            Ok(Err(e)) if is_not_found(&e) => {
                return Err(SandboxError::ImageMissing {
                    image: spec.image.clone(),
                });
            }
            Ok(Err(e)) => return Err(api("create container")(e)),
            Err(_) => {
                return Err(SandboxError::Timeout {
                    op: "create container",
                    secs: API_TIMEOUT.as_secs(),
                });
            }
        };
        if let Err(e) = bounded(
            "start container",
            API_TIMEOUT,
            self.docker.start_container(&created.id, None),
        )
        .await
        {
            let _ = self.remove(&created.id).await;
            return Err(e);
        }
        Ok(created.id)
    }

    async fn exec(&self, container: &String, spec: &ExecSpec) -> Result<ExecOutput, SandboxError> {
        let started = Instant::now();
        let config = ExecConfig {
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            tty: Some(false),
            cmd: Some(spec.cmd.clone()),
            env: Some(spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect()),
            working_dir: spec.workdir.clone(),
            // The grader's own steps run as root whatever the image's USER; the verifier drops
            // to an unprivileged user for the submission's code.
            user: Some("0:0".to_owned()),
            ..ExecConfig::default()
        };
        let exec = bounded(
            "create exec",
            API_TIMEOUT,
            self.docker.create_exec(container, config),
        )
        .await?;
        let start = StartExecOptions {
            detach: false,
            tty: false,
            output_capacity: Some(64 * 1024),
        };
        let max = spec.max_output;
        let (mut out, mut err) = (TailBuf::new(max), TailBuf::new(max));
        let drain = tokio::time::timeout(spec.timeout, async {
            match self
                .docker
                .start_exec(&exec.id, Some(start))
                .await
                .map_err(api("start exec"))?
            {
                StartExecResults::Attached { mut output, .. } => {
                    while let Some(frame) = output.next().await {
                        match frame.map_err(api("read exec output"))? {
                            LogOutput::StdOut { message } | LogOutput::Console { message } => {
                                out.push(&message)
                            }
                            LogOutput::StdErr { message } => err.push(&message),
                            LogOutput::StdIn { .. } => {}
                        }
                    }
                    Ok(())
                }
                StartExecResults::Detached => Ok(()),
            }
        });
        // A container stopped or killed from outside the grader while the step runs is the
        // infrastructure's failure, said at once, not a step that ran into its timeout.
        let drained = tokio::select! {
            d = drain => d,
            why = self.stopped_from_outside(container) => {
                return Err(SandboxError::Api { op: "exec", message: why });
            }
        };
        let timed_out = match drained {
            Ok(r) => {
                r?;
                false
            }
            Err(_) => true,
        };
        let exit_code = if timed_out {
            None
        } else {
            self.exit_code(&exec.id).await?
        };
        // A step killed by a signal (or with no exit code) may have ended because its container
        // was stopped under it, which closes the stream: the same infrastructure failure. The
        // engine marks the container stopped a moment after; it is looked at for two seconds.
        if !timed_out && matches!(exit_code, None | Some(137) | Some(143)) {
            for _ in 0..10 {
                if let Some(why) = self.stopped_now(container).await {
                    return Err(SandboxError::Api {
                        op: "exec",
                        message: why,
                    });
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        Ok(ExecOutput {
            exit_code,
            stdout: out.finish(),
            stderr: err.finish(),
            timed_out,
            duration: started.elapsed(),
        })
    }

    async fn upload(
        &self,
        container: &String,
        dir: &str,
        tar: Vec<u8>,
    ) -> Result<(), SandboxError> {
        let options = UploadToContainerOptionsBuilder::default().path(dir).build();
        bounded(
            "upload",
            API_TIMEOUT,
            self.docker.upload_to_container(
                container,
                Some(options),
                bollard::body_full(tar.into()),
            ),
        )
        .await
    }

    async fn upload_stream(
        &self,
        container: &String,
        dir: &str,
        produce: TarProducer,
    ) -> Result<(), SandboxError> {
        let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<Vec<u8>>>(UPLOAD_CHUNKS);
        let producer = tokio::task::spawn_blocking(move || {
            let mut out = ChunkWriter {
                tx: tx.clone(),
                buf: Vec::with_capacity(UPLOAD_CHUNK),
            };
            let done = produce(&mut out).and_then(|()| out.send());
            if let Err(e) = &done {
                let _ = tx.blocking_send(Err(std::io::Error::new(e.kind(), e.to_string())));
            }
            done
        });
        let body = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|chunk| (chunk.map(Into::into), rx))
        });
        let options = UploadToContainerOptionsBuilder::default().path(dir).build();
        let sent = bounded(
            "upload",
            UPLOAD_TIMEOUT,
            self.docker.upload_to_container(
                container,
                Some(options),
                bollard::body_try_stream(body),
            ),
        )
        .await;
        let produced = producer.await.map_err(|e| SandboxError::Archive {
            op: "upload",
            message: format!("the archive writer stopped: {e}"),
        })?;
        produced.map_err(|e| SandboxError::Archive {
            op: "upload",
            message: e.to_string(),
        })?;
        sent
    }

    async fn download(
        &self,
        container: &String,
        path: &str,
        max_bytes: usize,
    ) -> Result<Option<Vec<u8>>, SandboxError> {
        let options = DownloadFromContainerOptionsBuilder::default()
            .path(path)
            .build();
        let mut stream = self
            .docker
            .download_from_container(container, Some(options));
        let mut data = Vec::new();
        let work = async {
            while let Some(chunk) = stream.next().await {
                match chunk {
                    Ok(bytes) => {
                        if data.len() + bytes.len() > max_bytes {
                            return Err(SandboxError::Archive {
                                op: "download",
                                message: format!("{path} is larger than {max_bytes} bytes"),
                            });
                        }
                        data.extend_from_slice(&bytes);
                    }
                    Err(e) if is_not_found(&e) => return Ok(false),
                    Err(e) => return Err(api("download")(e)),
                }
            }
            Ok(true)
        };
        match tokio::time::timeout(API_TIMEOUT, work).await {
            Ok(Ok(true)) => Ok(Some(data)),
            Ok(Ok(false)) => Ok(None),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(SandboxError::Timeout {
                op: "download",
                secs: API_TIMEOUT.as_secs(),
            }),
        }
    }

    async fn state(&self, container: &String) -> Result<ContainerState, SandboxError> {
        let info = bounded(
            "inspect container",
            API_TIMEOUT,
            self.docker.inspect_container(container, None),
        )
        .await?;
        let state = info.state.unwrap_or_default();
        Ok(ContainerState {
            oom_killed: state.oom_killed.unwrap_or(false),
        })
    }

    async fn touch_image(&self, tag: &str) -> Result<(), SandboxError> {
        let (repo, tag_part) = tag.rsplit_once(':').unwrap_or((tag, "latest"));
        let options = TagImageOptionsBuilder::default()
            .repo(repo)
            .tag(tag_part)
            .build();
        bounded(
            "tag image",
            API_TIMEOUT,
            self.docker.tag_image(tag, Some(options)),
        )
        .await
    }

    async fn commit(
        &self,
        container: &String,
        tag: &str,
        labels: &std::collections::BTreeMap<String, String>,
    ) -> Result<String, SandboxError> {
        let (repo, tag_part) = tag.rsplit_once(':').unwrap_or((tag, "latest"));
        // Labels both in the body (Docker) and as `changes` (Podman before 4.8 ignores the body).
        let changes: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("LABEL {k:?}={v:?}"))
            .collect();
        let options = CommitContainerOptionsBuilder::default()
            .container(container)
            .repo(repo)
            .tag(tag_part)
            .pause(true)
            .changes(&changes.join("\n"))
            .build();
        let config = ContainerConfig {
            labels: Some(labels.clone().into_iter().collect()),
            ..ContainerConfig::default()
        };
        let id = bounded(
            "commit container",
            Duration::from_secs(600),
            self.docker.commit_container(options, config),
        )
        .await?;
        Ok(id.id)
    }

    async fn remove(&self, container: &String) -> Result<(), SandboxError> {
        let options = RemoveContainerOptionsBuilder::default()
            .force(true)
            .v(true)
            .build();
        match tokio::time::timeout(
            API_TIMEOUT,
            self.docker.remove_container(container, Some(options)),
        )
        .await
        {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) if is_not_found(&e) => Ok(()),
            Ok(Err(e)) => Err(api("remove container")(e)),
            Err(_) => Err(SandboxError::Timeout {
                op: "remove container",
                secs: API_TIMEOUT.as_secs(),
            }),
        }
    }
}
