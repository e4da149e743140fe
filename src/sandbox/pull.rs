//! Instance images pulled from their registries through the engine (`POST /images/create`), as
//! every harness users know does: the reference split into name and tag, the user's Docker
//! credentials (`$DOCKER_CONFIG/config.json` or `~/.docker/config.json`, with its credential
//! helpers), the free space where the engine keeps images checked before a pull, progress as
//! lines (no terminal needed), and the engine's failure sorted into what a user can act on: not
//! found, denied, rate limited, no registry reachable, no space.

use super::SandboxError;
use super::docker::DockerSandbox;
use bollard::auth::DockerCredentials;
use bollard::query_parameters::CreateImageOptionsBuilder;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// When an instance image is pulled from its registry (`--pull`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PullPolicy {
    /// Only when the engine does not have it.
    #[default]
    Missing,
    /// Every time, so a moved tag is followed.
    Always,
    /// Never: a missing image is an error.
    Never,
}

impl PullPolicy {
    /// Every policy, in `--help`'s order.
    pub const ALL: [PullPolicy; 3] = [PullPolicy::Missing, PullPolicy::Always, PullPolicy::Never];

    /// The name `--pull` takes.
    pub fn name(self) -> &'static str {
        match self {
            PullPolicy::Missing => "missing",
            PullPolicy::Always => "always",
            PullPolicy::Never => "never",
        }
    }
}

/// Why a pull failed, as a user acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PullFailure {
    /// The registry has no such repository or tag.
    NotFound,
    /// The registry wants credentials, or refused the ones given.
    Denied,
    /// The registry asks to slow down.
    RateLimited,
    /// No registry answered (no network, wrong host, registry down).
    Unreachable,
    /// The engine's disk is full, or too full to start.
    NoSpace,
    /// Anything else the engine said.
    Other,
}

impl PullFailure {
    /// Sorts what the engine said (its HTTP status, when it gave one, and its message).
    pub fn classify(status: Option<u16>, message: &str) -> PullFailure {
        let m = message.to_ascii_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| m.contains(w));
        if status == Some(429) || has(&["toomanyrequests", "rate limit", "too many requests"]) {
            PullFailure::RateLimited
        } else if has(&["no space left on device"]) {
            PullFailure::NoSpace
        } else if has(&[
            "connection refused",
            "no such host",
            "i/o timeout",
            "network is unreachable",
            "no route to host",
            "tls handshake timeout",
            "context deadline exceeded",
            "client.timeout exceeded",
            "connection reset by peer",
            "server misbehaving",
            "http response to https client",
        ]) {
            PullFailure::Unreachable
        } else if matches!(status, Some(401 | 403))
            || has(&[
                "unauthorized",
                "authentication required",
                "denied",
                "forbidden",
                "no basic auth credentials",
            ])
        {
            PullFailure::Denied
        } else if status == Some(404)
            || has(&[
                "manifest unknown",
                "not found",
                "repository does not exist",
                "name unknown",
            ])
        {
            PullFailure::NotFound
        } else {
            PullFailure::Other
        }
    }

    /// The name used in messages and in the summary.
    pub fn as_str(self) -> &'static str {
        match self {
            PullFailure::NotFound => "not found",
            PullFailure::Denied => "denied",
            PullFailure::RateLimited => "rate limited",
            PullFailure::Unreachable => "no registry reachable",
            PullFailure::NoSpace => "no space",
            PullFailure::Other => "failed",
        }
    }

    /// What the user can do about it.
    pub fn hint(self) -> &'static str {
        match self {
            PullFailure::NotFound => {
                "check the image name in the dataset (`docker pull IMAGE` shows the same), or build it and grade with --pull never"
            }
            PullFailure::Denied => {
                "log in to the registry (`docker login REGISTRY`): the grader uses the same credentials, from ~/.docker/config.json or $DOCKER_CONFIG"
            }
            PullFailure::RateLimited => {
                "wait and run again (finished gradings are kept), log in to raise the limit, or use a mirror"
            }
            PullFailure::Unreachable => {
                "check the network and the registry's address; with the images already loaded, grade with --pull never"
            }
            PullFailure::NoSpace => {
                "free space where the engine keeps images (`docker system df`, `beyondswe image prune`)"
            }
            PullFailure::Other => "run `docker pull IMAGE` to see the engine's full answer",
        }
    }

    /// The user can fix it (a wrong name, missing credentials, a full disk); the others are
    /// the network's or the registry's.
    pub fn is_users(self) -> bool {
        matches!(
            self,
            PullFailure::NotFound | PullFailure::Denied | PullFailure::NoSpace
        )
    }
}

/// An image reference split as the engine's pull takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// The repository with its registry host, if it names one (`127.0.0.1:5000/org/app`).
    pub name: String,
    /// The tag or `sha256:` digest; `latest` when the reference has neither (an empty tag
    /// would pull every tag of the repository).
    pub tag: String,
    /// The registry's host as credentials are stored under it (`docker.io` for Docker Hub).
    pub registry: String,
}

impl ImageRef {
    /// Splits `reference`; `None` when it is empty or holds whitespace.
    pub fn parse(reference: &str) -> Option<ImageRef> {
        if reference.is_empty() || reference.chars().any(|c| c.is_whitespace()) {
            return None;
        }
        let (name, tag) = match reference.split_once('@') {
            Some((name, digest)) => (name, digest.to_owned()),
            None => {
                let slash = reference.rfind('/').map_or(0, |i| i + 1);
                match reference[slash..].rfind(':') {
                    Some(i) => (
                        &reference[..slash + i],
                        reference[slash + i + 1..].to_owned(),
                    ),
                    None => (reference, "latest".to_owned()),
                }
            }
        };
        if name.is_empty() || tag.is_empty() {
            return None;
        }
        let first = name.split('/').next().unwrap_or_default();
        let registry = if name.contains('/')
            && (first.contains('.') || first.contains(':') || first == "localhost")
        {
            first.to_owned()
        } else {
            "docker.io".to_owned()
        };
        Some(ImageRef {
            name: name.to_owned(),
            tag,
            registry,
        })
    }

    /// The key `docker login` stores the registry's credentials under.
    pub fn credential_key(&self) -> &str {
        if self.registry == "docker.io" {
            "https://index.docker.io/v1/"
        } else {
            &self.registry
        }
    }
}

/// The Docker client's configuration directory: `$DOCKER_CONFIG`, else `~/.docker`.
pub fn docker_config_dir() -> Option<PathBuf> {
    std::env::var_os("DOCKER_CONFIG")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".docker")))
}

/// The credentials `docker login` stored for `image`'s registry in `config_dir`, through its
/// credential helper when it names one. `Ok(None)`: none stored (the pull goes anonymous).
pub fn credentials_for(
    image: &ImageRef,
    config_dir: &Path,
) -> Result<Option<DockerCredentials>, String> {
    use docker_credential::{CredentialRetrievalError as E, DockerCredential};
    let path = config_dir.join("config.json");
    let text = match crate::files::read_bounded(&path, 4 << 20) {
        Ok(t) => t,
        Err(crate::files::BoundedReadError::Io(e))
            if e.source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(None);
        }
        Err(e) => return Err(e.to_string()),
    };
    let key = image.credential_key();
    match docker_credential::get_credential_from_reader(text.as_slice(), key) {
        Ok(DockerCredential::UsernamePassword(username, password)) => Ok(Some(DockerCredentials {
            username: Some(username),
            password: Some(password),
            serveraddress: Some(key.to_owned()),
            ..DockerCredentials::default()
        })),
        Ok(DockerCredential::IdentityToken(token)) => Ok(Some(DockerCredentials {
            identitytoken: Some(token),
            serveraddress: Some(key.to_owned()),
            ..DockerCredentials::default()
        })),
        Err(E::NoCredentialConfigured) => Ok(None),
        Err(e) => Err(format!(
            "{}: the credentials for {}: {e}",
            path.display(),
            image.registry
        )),
    }
}

/// The credentials of each registry, looked up once for a batch of pulls: the Docker config is
/// read, and its credential helper run, once per registry rather than once per image.
#[derive(Debug, Default)]
pub struct Logins {
    by_registry: std::sync::Mutex<HashMap<String, Result<Option<DockerCredentials>, String>>>,
}

impl Logins {
    /// The credentials for `image`'s registry ([`credentials_for`] in [`docker_config_dir`]).
    fn for_image(&self, image: &ImageRef) -> Result<Option<DockerCredentials>, String> {
        let mut known = self.by_registry.lock().unwrap_or_else(|e| e.into_inner());
        known
            .entry(image.registry.clone())
            .or_insert_with(|| match docker_config_dir() {
                Some(dir) => credentials_for(image, &dir),
                None => Ok(None),
            })
            .clone()
    }
}

/// A pull starts only with at least this much free where the engine keeps its images (when
/// that place is on this machine): instance images are commonly 1 to 5 GiB.
/// `BEYONDSWE_PULL_MIN_FREE_GB` sets another floor ([`min_free_for_pull`]).
pub const MIN_FREE_FOR_PULL: u64 = 2 << 30;

/// The free space a pull needs: `BEYONDSWE_PULL_MIN_FREE_GB` (GiB, fractions allowed) when set
/// to a number, else [`MIN_FREE_FOR_PULL`].
pub fn min_free_for_pull() -> u64 {
    std::env::var("BEYONDSWE_PULL_MIN_FREE_GB")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|g| g.is_finite() && *g >= 0.0)
        .map_or(MIN_FREE_FOR_PULL, |g| (g * f64::from(1u32 << 30)) as u64)
}

/// A pull with no news from the engine for this long is given up.
const PULL_STALL: Duration = Duration::from_secs(300);
/// Progress lines come at most this often.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// Layers' bytes as a pull reports them: downloaded of total, per layer.
#[derive(Debug, Default)]
struct Layers(HashMap<String, (u64, u64)>);

impl Layers {
    fn update(&mut self, info: &bollard::models::CreateImageInfo) {
        let (Some(id), Some(status)) = (&info.id, &info.status) else {
            return;
        };
        let entry = self.0.entry(id.clone()).or_default();
        let detail = info.progress_detail.as_ref();
        let (current, total) = (
            detail.and_then(|d| d.current).unwrap_or(0).max(0) as u64,
            detail.and_then(|d| d.total).unwrap_or(0).max(0) as u64,
        );
        match status.as_str() {
            "Downloading" => {
                entry.1 = entry.1.max(total);
                entry.0 = current;
            }
            "Download complete" | "Pull complete" | "Already exists" => entry.0 = entry.1,
            _ => {}
        }
    }

    fn sums(&self) -> (u64, u64) {
        self.0
            .values()
            .fold((0, 0), |(d, t), (a, b)| (d + a, t + b))
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / f64::from(1u32 << 20))
}

impl DockerSandbox {
    /// Free bytes where the engine keeps images, when that place is on this machine (a local
    /// socket); `None` when it cannot be known from here (a remote engine, a VM).
    pub async fn engine_free_space(&self) -> Option<(PathBuf, u64)> {
        if !self.endpoint().starts_with("unix://") {
            return None;
        }
        let info = tokio::time::timeout(Duration::from_secs(15), self.docker().info())
            .await
            .ok()?
            .ok()?;
        let root = PathBuf::from(info.docker_root_dir?);
        let free = fs4::available_space(&root).ok()?;
        Some((root, free))
    }

    /// Pulls `image` through the engine with the user's credentials (from `logins`), saying
    /// progress through `note` (a line at the start, one at most every 10 s, one at the end).
    pub async fn pull(
        &self,
        image: &str,
        logins: &Logins,
        note: &(dyn Fn(&str) + Sync),
    ) -> Result<(), SandboxError> {
        let failed = |why: PullFailure, message: String| SandboxError::Pull {
            image: image.to_owned(),
            why,
            message,
        };
        let Some(r) = ImageRef::parse(image) else {
            return Err(failed(
                PullFailure::NotFound,
                "not an image reference".to_owned(),
            ));
        };
        let floor = min_free_for_pull();
        if let Some((root, free)) = self.engine_free_space().await
            && free < floor
        {
            return Err(failed(
                PullFailure::NoSpace,
                format!(
                    "{} free in {} where the engine keeps images; a pull needs at least {}",
                    mib(free),
                    root.display(),
                    mib(floor)
                ),
            ));
        }
        let credentials = logins
            .for_image(&r)
            .map_err(|e| failed(PullFailure::Denied, e))?;
        let options = CreateImageOptionsBuilder::default()
            .from_image(&r.name)
            .tag(&r.tag)
            .build();
        let started = Instant::now();
        note(&format!("pulling {image}"));
        let mut stream = self.docker().create_image(Some(options), None, credentials);
        let mut layers = Layers::default();
        let mut said = Instant::now();
        loop {
            let item = match tokio::time::timeout(PULL_STALL, stream.next()).await {
                Err(_) => {
                    return Err(SandboxError::Timeout {
                        op: "pull image",
                        secs: PULL_STALL.as_secs(),
                    });
                }
                Ok(None) => break,
                Ok(Some(item)) => item,
            };
            let info = item.map_err(|e| {
                let status = match &e {
                    bollard::errors::Error::DockerResponseServerError { status_code, .. } => {
                        Some(*status_code)
                    }
                    _ => None,
                };
                let message = match e {
                    bollard::errors::Error::DockerResponseServerError { message, .. }
                    | bollard::errors::Error::DockerStreamError { error: message } => message,
                    other => other.to_string(),
                };
                failed(PullFailure::classify(status, &message), message)
            })?;
            layers.update(&info);
            if said.elapsed() >= PROGRESS_EVERY {
                said = Instant::now();
                let (done, total) = layers.sums();
                note(&format!(
                    "pulling {image}: {} of {} ({} layer(s))",
                    mib(done),
                    mib(total),
                    layers.0.len()
                ));
            }
        }
        let (_, total) = layers.sums();
        note(&format!(
            "pulled {image} ({}, {:.0} s)",
            mib(total),
            started.elapsed().as_secs_f64()
        ));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_split_into_name_tag_and_registry() {
        let r = |s: &str| {
            ImageRef::parse(s).map(|r| {
                let key = r.credential_key().to_owned();
                (r.name, r.tag, r.registry, key)
            })
        };
        let hub = "https://index.docker.io/v1/";
        assert_eq!(
            r("ubuntu"),
            Some((
                "ubuntu".into(),
                "latest".into(),
                "docker.io".into(),
                hub.into()
            ))
        );
        assert_eq!(
            r("org/app:1.2"),
            Some((
                "org/app".into(),
                "1.2".into(),
                "docker.io".into(),
                hub.into()
            ))
        );
        assert_eq!(
            r("127.0.0.1:5000/beyondswe/calc:1"),
            Some((
                "127.0.0.1:5000/beyondswe/calc".into(),
                "1".into(),
                "127.0.0.1:5000".into(),
                "127.0.0.1:5000".into()
            ))
        );
        assert_eq!(
            r("localhost/x"),
            Some((
                "localhost/x".into(),
                "latest".into(),
                "localhost".into(),
                "localhost".into()
            ))
        );
        assert_eq!(
            r("ghcr.io/a/b@sha256:abc"),
            Some((
                "ghcr.io/a/b".into(),
                "sha256:abc".into(),
                "ghcr.io".into(),
                "ghcr.io".into()
            ))
        );
        // A port is not a tag.
        assert_eq!(r("reg:5000/app").map(|r| r.1), Some("latest".into()));
        assert_eq!(r(""), None);
        assert_eq!(r("a b"), None);
        assert_eq!(r("app:"), None);
    }

    #[test]
    fn the_engines_answers_sort_into_what_a_user_does() {
        use PullFailure::*;
        let c = PullFailure::classify;
        assert_eq!(
            c(Some(404), "manifest for x:1 not found: manifest unknown"),
            NotFound
        );
        assert_eq!(
            c(
                None,
                "pull access denied for x, repository does not exist or may require 'docker login'"
            ),
            Denied
        );
        assert_eq!(
            c(
                Some(500),
                "Head \"https://r/v2/x/manifests/1\": unauthorized: authentication required"
            ),
            Denied
        );
        assert_eq!(
            c(
                Some(500),
                "toomanyrequests: You have reached your pull rate limit"
            ),
            RateLimited
        );
        assert_eq!(
            c(
                Some(500),
                "Get \"http://127.0.0.1:5999/v2/\": dial tcp 127.0.0.1:5999: connect: connection refused"
            ),
            Unreachable
        );
        assert_eq!(
            c(None, "dial tcp: lookup nowhere.invalid: no such host"),
            Unreachable
        );
        assert_eq!(
            c(None, "write /var/lib/docker/tmp/x: no space left on device"),
            NoSpace
        );
        assert_eq!(c(Some(500), "something new"), Other);
        assert!(NotFound.is_users() && Denied.is_users() && !Unreachable.is_users());
    }

    #[test]
    fn credentials_come_from_the_users_docker_config() {
        let dir = tempfile::tempdir().unwrap();
        let r = ImageRef::parse("127.0.0.1:5000/beyondswe/calc:1").unwrap();
        // No config: anonymous.
        assert!(matches!(credentials_for(&r, dir.path()), Ok(None)));
        // `docker login` writes user:password base64 under the registry's host.
        fs_err::write(
            dir.path().join("config.json"),
            r#"{"auths":{"127.0.0.1:5000":{"auth":"dXNlcjpzM2NyZXQ="},"https://index.docker.io/v1/":{"identitytoken":"tok"}}}"#,
        )
        .unwrap();
        let c = credentials_for(&r, dir.path()).unwrap().unwrap();
        assert_eq!(
            (c.username.as_deref(), c.password.as_deref()),
            (Some("user"), Some("s3cret"))
        );
        let hub = ImageRef::parse("org/app:1").unwrap();
        let c = credentials_for(&hub, dir.path()).unwrap().unwrap();
        assert_eq!(c.identitytoken.as_deref(), Some("tok"));
        // A registry with nothing stored pulls anonymously.
        let other = ImageRef::parse("ghcr.io/a/b:1").unwrap();
        assert!(matches!(credentials_for(&other, dir.path()), Ok(None)));
        // A broken config names its file.
        fs_err::write(dir.path().join("config.json"), "{not json").unwrap();
        let e = credentials_for(&r, dir.path()).unwrap_err();
        assert!(e.contains("config.json"), "{e}");
    }

    #[test]
    fn a_credential_helper_is_asked_when_the_config_names_one() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(
            dir.path().join("config.json"),
            r#"{"credHelpers":{"127.0.0.1:5000":"beyondswe-test-missing-helper"}}"#,
        )
        .unwrap();
        let r = ImageRef::parse("127.0.0.1:5000/x:1").unwrap();
        // The helper is not installed: an error naming the config, not an anonymous pull.
        let e = credentials_for(&r, dir.path()).unwrap_err();
        assert!(e.contains("127.0.0.1:5000"), "{e}");
    }
}
