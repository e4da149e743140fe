//! Shared helpers for the integration tests.

use std::path::{Path, PathBuf};

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixtures() -> PathBuf {
    repo_root().join("fixtures")
}

/// Every file under `dir`, relative, sorted.
pub fn tree(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            e.path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    out.sort();
    out
}

/// Runs a command that must succeed; its stdout (the failure shows the command, stdout and
/// stderr).
pub fn run_ok(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs the docker CLI; panics with its stderr on failure.
pub fn docker(args: &[&str]) -> String {
    let out = std::process::Command::new("docker")
        .args(args)
        .output()
        .expect("docker CLI runs");
    assert!(
        out.status.success(),
        "docker {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Fails the test when the Docker engine is not reachable. The tests that call it are
/// `#[ignore]`d, so a plain `cargo test` leaves them out and says so; when they run (scripts/test.sh,
/// CI, `--include-ignored`) they were asked for, and a missing engine is a failure, never a skip.
pub fn require_docker() {
    let out = std::process::Command::new("docker")
        .args(["version", "--format", "{{.Server.Version}}"])
        .output();
    match out {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "this test needs the Docker engine, which is not reachable: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => panic!("this test needs the Docker engine; the docker CLI does not run: {e}"),
    }
}

/// Builds the offline base and fixture images (cached by tag; the first build takes about two
/// minutes). Serialised across tests.
pub fn fixture_images() {
    static ONCE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        let out = std::process::Command::new("bash")
            .arg(repo_root().join("scripts/build-fixture-images.sh"))
            .env("BEYONDSWE_BIN", env!("CARGO_BIN_EXE_beyondswe"))
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "scripts/build-fixture-images.sh failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// A container removed when dropped, whatever happens in the test.
pub struct Container(pub String);

impl Container {
    pub fn run(image: &str) -> Container {
        let id = docker(&[
            "run",
            "-d",
            "--network",
            "none",
            "--label",
            "beyondswe.test=1",
            image,
            "sleep",
            "infinity",
        ]);
        Container(id.trim().to_owned())
    }

    /// `sh -c script` inside the container: (exit code, stdout + stderr).
    pub fn sh(&self, script: &str) -> (i32, String) {
        let out = std::process::Command::new("docker")
            .args(["exec", &self.0, "sh", "-c", script])
            .output()
            .expect("docker exec runs");
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        (out.status.code().unwrap_or(-1), text)
    }

    pub fn copy_in(&self, src: &Path, dest: &str) {
        docker(&[
            "cp",
            &src.display().to_string(),
            &format!("{}:{dest}", self.0),
        ]);
    }
}

impl Container {
    /// `docker cp` from the container to the host.
    pub fn copy_out(&self, src: &str, dest: &Path) {
        docker(&[
            "cp",
            &format!("{}:{src}", self.0),
            &dest.display().to_string(),
        ]);
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = std::process::Command::new("docker")
            .args(["rm", "-f", &self.0])
            .output();
    }
}

/// Runs git in `dir` with a fixed identity; panics with its stderr on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "core.autocrlf=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits until a container with `label` (`key=value`) exists.
pub fn wait_for_container(label: &str) {
    let filter = format!("label={label}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while docker(&["ps", "-q", "--filter", &filter]).trim().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "no container with {label} appeared"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A headless Chromium, installed from the Debian packages by `scripts/browser.sh` when missing;
/// the test fails when none can be had (the browser tests are `#[ignore]`d like the Docker ones).
pub fn browser() -> PathBuf {
    static BROWSER: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    let found = BROWSER.get_or_init(|| {
        let out = std::process::Command::new("bash")
            .arg(repo_root().join("scripts/browser.sh"))
            .output()
            .map_err(|e| format!("cannot run scripts/browser.sh: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "scripts/browser.sh failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    });
    match found {
        Ok(p) => p.clone(),
        Err(why) => panic!("this test needs a headless browser: {why}"),
    }
}

/// What a page became in the browser: the DOM after its scripts ran, and every console message
/// (uncaught errors included).
pub struct Loaded {
    pub dom: String,
    pub console: Vec<String>,
}

/// Loads a local HTML file in headless Chromium (no network: every host resolves to nothing),
/// with `fragment` (`#…` or empty) after its URL.
pub fn load_in_browser(browser: &Path, page: &Path, fragment: &str) -> Loaded {
    let profile = tempfile::tempdir().unwrap();
    let url = format!(
        "file://{}{fragment}",
        page.canonicalize().unwrap().display()
    );
    let out = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .expect("the browser runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the browser failed on {url}: {stderr}"
    );
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect();
    Loaded {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        console,
    }
}

/// Copies the tree `from` to `to` (directories and files; links copied as the files they name).
pub fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let dest = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}
