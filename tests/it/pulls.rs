//! Instance images pulled from a real registry: a registry server started on 127.0.0.1 (Debian's
//! `docker-registry`, installed by scripts/registry.sh), a fixture image with a layer of its own
//! pushed to it and removed from the engine, then graded with no step but `grade`; then the
//! registry stopped, and the same run refused with a clear error before any run directory.

use super::support::{docker, fixture_images, fixtures, repo_root, require_docker, run_ok};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A registry server on a free port of 127.0.0.1, its storage in a temporary directory; stopped
/// when dropped.
struct Registry {
    child: Option<Child>,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Registry {
    fn start() -> Registry {
        Registry::start_with(None)
    }

    /// A registry that takes pulls and pushes only from `user` with `password` (HTTP basic
    /// auth against an htpasswd file, as `docker login` speaks it).
    fn start_with_login(user: &str, password: &str) -> Registry {
        Registry::start_with(Some((user, password)))
    }

    fn start_with(login: Option<(&str, &str)>) -> Registry {
        let bin = run_ok(Command::new("bash").arg(repo_root().join("scripts/registry.sh")));
        let bin = PathBuf::from(bin.trim());
        let dir = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = dir.path().join("config.yml");
        let auth = match login {
            None => String::new(),
            Some((user, password)) => {
                let hash = bcrypt::hash_with_result(password, 4)
                    .unwrap()
                    .format_for_version(bcrypt::Version::TwoY);
                let file = dir.path().join("htpasswd");
                std::fs::write(&file, format!("{user}:{hash}\n")).unwrap();
                format!(
                    "auth:\n  htpasswd:\n    realm: beyondswe-test\n    path: {}\n",
                    file.display()
                )
            }
        };
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n{auth}",
                dir.path().join("data").display()
            ),
        )
        .unwrap();
        let child = Command::new(bin)
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the registry server starts");
        let registry = Registry {
            child: Some(child),
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !registry.answers() {
            assert!(
                Instant::now() < deadline,
                "the registry on 127.0.0.1:{port} did not answer within 30 s"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        registry
    }

    /// Whether `GET /v2/` answers 200.
    fn answers(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let req = format!(
            "GET /v2/ HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            self.port
        );
        if s.write_all(req.as_bytes()).is_err() {
            return false;
        }
        // 200, or 401 from a registry that wants a login: either way it serves.
        let mut head = [0u8; 12];
        s.read_exact(&mut head).is_ok() && (head.ends_with(b"200") || head.ends_with(b"401"))
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An image with a layer no other image has (so a pull downloads it), built from the calc
/// fixture, pushed to `registry` and removed from the engine; its reference.
fn pushed_image(registry: &Registry, work: &Path) -> String {
    let stamp = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let context = work.join("context");
    std::fs::create_dir_all(&context).unwrap();
    std::fs::write(
        context.join("Dockerfile"),
        format!("FROM beyondswe-fixture/calc:1\nRUN echo {stamp} > /pull-marker\n"),
    )
    .unwrap();
    let image = format!("127.0.0.1:{}/beyondswe-pull/calc:{stamp}", registry.port);
    run_ok(
        Command::new(env!("CARGO_BIN_EXE_beyondswe"))
            .args(["image", "build"])
            .arg(&context)
            .args(["--tag", &image]),
    );
    docker(&["push", "-q", &image]);
    docker(&["rmi", &image]);
    image
}

/// The demo's calc instances with their image moved to `image`, and the gold submissions.
fn dataset_on(image: &str, work: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixtures().join("dataset/demo.jsonl")).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if ["acme_calc_pr7", "acme_calc_pr71"].contains(&v["instance_id"].as_str().unwrap()) {
            v["image"] = Value::String(image.to_owned());
            out.push_str(&format!("{v}\n"));
        }
    }
    let path = work.join("dataset.jsonl");
    std::fs::write(&path, out).unwrap();
    path
}

fn grade(dataset: &Path, results: &Path, run: &str, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_beyondswe"))
        .args(["grade", "--gold", "--jobs", "2", "--timeout", "120"])
        .arg("--dataset")
        .arg(dataset)
        .arg("--results-dir")
        .arg(results)
        .args(["--run-id", run])
        .args(extra)
        .output()
        .unwrap()
}

/// Whether the engine has `image`.
fn on_engine(image: &str) -> bool {
    Command::new("docker")
        .args(["image", "inspect", image])
        .output()
        .unwrap()
        .status
        .success()
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// A dataset whose image is only in a registry grades with no step but `grade`; with the
/// registry stopped the run is refused, names the image and why, exits 3 and leaves no run
/// directory; `--pull never` says the image is missing and exits 1 (the user's to fix).
#[test]
#[ignore = "needs the Docker engine and a registry server (scripts/test.sh runs it)"]
fn a_dataset_whose_images_are_only_in_a_registry_grades_through_a_pull() {
    require_docker();
    fixture_images();
    let work = tempfile::tempdir().unwrap();
    let mut registry = Registry::start();
    let image = pushed_image(&registry, work.path());
    assert!(
        !on_engine(&image),
        "the image is off the engine before the run"
    );
    let dataset = dataset_on(&image, work.path());
    let results = work.path().join("runs");

    let out = grade(&dataset, &results, "pulled", &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.contains(&format!("pulling {image}")), "{stderr}");
    assert!(stderr.contains(&format!("pulled {image}")), "{stderr}");
    let report: Value =
        serde_json::from_slice(&std::fs::read(results.join("pulled/report.json")).unwrap())
            .unwrap();
    assert_eq!(report["swebench"]["resolved_instances"], 2, "{report:#}");
    docker(&["image", "inspect", &image]);

    // With the image there, `image pull --dataset` pulls nothing.
    let out = Command::new(env!("CARGO_BIN_EXE_beyondswe"))
        .args(["image", "pull", "--dataset"])
        .arg(&dataset)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("present\t{image}\n"));

    // The registry gone and the image off the engine: refused before anything is made.
    registry.stop();
    docker(&["rmi", &image]);
    let out = grade(&dataset, &results, "down", &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&image), "{stderr}");
    assert!(stderr.contains("no registry reachable"), "{stderr}");
    assert!(stderr.contains("hint: "), "{stderr}");
    assert!(
        !results.join("down").exists(),
        "a run that could not start leaves no directory"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_beyondswe"))
        .args(["image", "pull", "--dataset"])
        .arg(&dataset)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with(&format!("failed\t{image}\t")),
        "{}",
        text(&out.stdout)
    );

    // `--pull never`: the missing image is the user's to fix (exit 1, with the fix).
    let out = grade(&dataset, &results, "never", &["--pull", "never"]);
    let all = format!("{}\n{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("image_missing"), "{all}");
    assert!(all.contains("beyondswe image pull"), "{all}");
}

/// A name no registry has is `not found`, the user's to fix: exit 1, with the hint.
#[test]
#[ignore = "needs the Docker engine and a registry server (scripts/test.sh runs it)"]
fn an_image_the_registry_does_not_have_is_not_found() {
    require_docker();
    let registry = Registry::start();
    let image = format!("127.0.0.1:{}/beyondswe-pull/nothing:1", registry.port);
    let out = Command::new(env!("CARGO_BIN_EXE_beyondswe"))
        .args(["image", "pull", &image])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        text(&out.stdout).contains("not found"),
        "{}",
        text(&out.stdout)
    );
    assert!(stderr.contains("hint: check the image name"), "{stderr}");
}

/// Runs scripts/build-base-image.sh as a user without root (an `id` on PATH that says uid 1000),
/// with an empty cache, building `tag` from `from` with a short package list.
fn build_base_without_root(from: &str, tag: &str, work: &Path) -> std::process::Output {
    let shim = work.join("shim");
    std::fs::create_dir_all(&shim).unwrap();
    let id = shim.join("id");
    std::fs::write(
        &id,
        "#!/bin/sh\n[ \"$1\" = -u ] && { echo 1000; exit 0; }\nexec /usr/bin/id \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&id, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        shim.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("bash")
        .arg(repo_root().join("scripts/build-base-image.sh"))
        .env("PATH", path)
        .env("BEYONDSWE_BASE_FROM", from)
        .env("BEYONDSWE_BASE_TAG", tag)
        .env("BEYONDSWE_BASE_PACKAGES", "python3 git")
        .env("BEYONDSWE_CACHE_DIR", work.join("cache"))
        .output()
        .unwrap()
}

/// The demo's first step on an ordinary machine: the base image is built FROM a Debian image
/// pulled from a registry, with no root; with no registry answering, the offline build is tried
/// and says it needs root.
#[test]
#[ignore = "needs the Docker engine and a registry server (scripts/test.sh runs it)"]
fn the_base_image_builds_from_a_registry_without_root() {
    require_docker();
    fixture_images();
    let work = tempfile::tempdir().unwrap();
    let mut registry = Registry::start();
    // A Debian image in the registry: the offline base serves as one.
    let debian = format!("127.0.0.1:{}/debian:bookworm-slim", registry.port);
    docker(&["tag", "beyondswe/base:2", &debian]);
    docker(&["push", "-q", &debian]);
    docker(&["rmi", &debian]);
    let tag = format!("beyondswe-test/base:{}", std::process::id());
    let out = build_base_without_root(&debian, &tag, work.path());
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(text(&out.stdout).trim(), tag);
    assert!(stderr.contains(&format!("built FROM {debian}")), "{stderr}");
    assert!(!stderr.contains("debootstrap"), "{stderr}");
    let label = docker(&[
        "image",
        "inspect",
        "-f",
        "{{index .Config.Labels \"beyondswe.base\"}}",
        &tag,
    ]);
    assert_eq!(label.trim(), "1");
    let git = docker(&[
        "run",
        "--rm",
        &tag,
        "git",
        "config",
        "--system",
        "user.name",
    ]);
    assert_eq!(git.trim(), "beyondswe");
    docker(&["rmi", &tag]);

    // No registry: the offline build is the way left, and it needs root.
    registry.stop();
    docker(&["rmi", &debian]);
    let out = build_base_without_root(&debian, &tag, work.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no registry answered"), "{stderr}");
    assert!(stderr.contains("needs root"), "{stderr}");
    assert!(stderr.contains("hint: "), "{stderr}");
}

/// A registry that wants a login: without credentials the pull is `denied` (exit 1, the hint
/// says `docker login`); with the user's Docker config (as `docker login` wrote it, found through
/// DOCKER_CONFIG) the same pull succeeds.
#[test]
#[ignore = "needs the Docker engine and a registry server (scripts/test.sh runs it)"]
fn a_registry_that_wants_a_login_is_pulled_from_with_the_users_credentials() {
    require_docker();
    fixture_images();
    let work = tempfile::tempdir().unwrap();
    let registry = Registry::start_with_login("grader", "s3cret-pass");
    let image = format!(
        "127.0.0.1:{}/beyondswe-pull/calc:auth-{}",
        registry.port,
        std::process::id()
    );
    // The Docker CLI logs in with a config of its own and pushes.
    let config = work.path().join("docker-config");
    std::fs::create_dir_all(&config).unwrap();
    let mut login = Command::new("docker")
        .arg("--config")
        .arg(&config)
        .args(["login", "-u", "grader", "--password-stdin"])
        .arg(format!("127.0.0.1:{}", registry.port))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    login
        .stdin
        .take()
        .unwrap()
        .write_all(b"s3cret-pass")
        .unwrap();
    let out = login.wait_with_output().unwrap();
    assert!(out.status.success(), "docker login: {}", text(&out.stderr));
    docker(&["tag", "beyondswe-fixture/calc:1", &image]);
    run_ok(
        Command::new("docker")
            .arg("--config")
            .arg(&config)
            .args(["push", "-q", &image]),
    );
    docker(&["rmi", &image]);

    // `image pull` with a Docker config, and a free-space floor in GiB when given.
    let pull_with = |docker_config: &Path, min_free_gb: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_beyondswe"));
        cmd.args(["image", "pull", &image])
            .env("DOCKER_CONFIG", docker_config);
        if let Some(gb) = min_free_gb {
            cmd.env("BEYONDSWE_PULL_MIN_FREE_GB", gb);
        }
        cmd.output().unwrap()
    };
    let pull = |docker_config: &Path| pull_with(docker_config, None);
    // What the command printed, stdout then stderr, and whether it says every one of `words`.
    let says = |out: &std::process::Output, words: &[&str]| {
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(
            words.iter().all(|w| all.contains(w)),
            "{words:?} in:\n{all}"
        );
    };
    let nobody = work.path().join("no-login");
    std::fs::create_dir_all(&nobody).unwrap();
    let out = pull(&nobody);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    says(&out, &["denied", "docker login"]);
    // A disk with less free than the floor: refused before anything is fetched (exit 1, the
    // user's to fix), with what is free and where.
    let out = pull_with(&config, Some("1000000"));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    says(&out, &["no space", "free in"]);
    assert!(!on_engine(&image), "nothing was pulled");
    let out = pull(&config);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("pulled\t{image}\n"));
    docker(&["rmi", &image]);
}
