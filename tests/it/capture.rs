//! `capture` round trip: applying the captured patch to the base reproduces the workspace byte for
//! byte, with binary files, renames, deletions, modes, symlinks, and ignored and untracked files.

use super::support::git;
use assert_cmd::cargo::cargo_bin_cmd;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Every file under `dir` except VCS internals and `.rej`/`.orig`: (path, kind, mode, bytes).
fn snapshot(dir: &Path) -> Vec<(String, String, u32, Vec<u8>)> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let e = e.unwrap();
        let rel = e
            .path()
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel.is_empty()
            || rel == ".git"
            || rel.starts_with(".git/")
            || rel.ends_with(".rej")
            || rel.ends_with(".orig")
        {
            continue;
        }
        let meta = std::fs::symlink_metadata(e.path()).unwrap();
        if meta.file_type().is_symlink() {
            out.push((
                rel,
                "link".into(),
                0,
                std::fs::read_link(e.path())
                    .unwrap()
                    .to_string_lossy()
                    .as_bytes()
                    .to_vec(),
            ));
        } else if meta.is_file() {
            out.push((
                rel,
                "file".into(),
                meta.permissions().mode() & 0o111,
                std::fs::read(e.path()).unwrap(),
            ));
        }
    }
    out
}

#[test]
fn applying_the_capture_to_the_base_reproduces_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("pkg")).unwrap();
    std::fs::write(ws.join("pkg/mod.py"), "x = 1\n").unwrap();
    std::fs::write(ws.join("pkg/old_name.py"), "moved = True\n".repeat(20)).unwrap();
    std::fs::write(ws.join("gone.txt"), "bye\n").unwrap();
    std::fs::write(ws.join("run.sh"), "echo hi\n").unwrap();
    std::fs::write(ws.join(".gitignore"), "*.log\nbuild/\n").unwrap();
    std::os::unix::fs::symlink("pkg/mod.py", ws.join("link_to_mod")).unwrap();
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "-A"]);
    git(&ws, &["commit", "-qm", "base"]);
    let base = git(&ws, &["rev-parse", "HEAD"]).trim().to_owned();

    // The agent's work.
    std::fs::write(ws.join("pkg/mod.py"), "x = 2\r\ny = 'caf\u{e9}'\n").unwrap();
    std::fs::write(
        ws.join("pkg/data.bin"),
        (0..=255u8).cycle().take(5000).collect::<Vec<u8>>(),
    )
    .unwrap();
    std::fs::write(ws.join("pkg/latin1.txt"), b"caf\xe9\n").unwrap();
    std::fs::rename(ws.join("pkg/old_name.py"), ws.join("pkg/new_name.py")).unwrap();
    std::fs::remove_file(ws.join("gone.txt")).unwrap();
    std::fs::set_permissions(ws.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_file(ws.join("link_to_mod")).unwrap();
    std::os::unix::fs::symlink("pkg/new_name.py", ws.join("link_to_mod")).unwrap();
    std::os::unix::fs::symlink("data.bin", ws.join("pkg/new_link")).unwrap();
    std::fs::create_dir_all(ws.join("build")).unwrap();
    std::fs::write(
        ws.join("build/generated.py"),
        "ignored but part of the work\n",
    )
    .unwrap();
    std::fs::write(ws.join("debug.log"), "ignored too\n").unwrap();
    std::fs::write(ws.join("pkg/mod.py.orig"), "leftover\n").unwrap();
    std::fs::write(ws.join("pkg/mod.py.rej"), "leftover\n").unwrap();
    git(&ws, &["add", "pkg/mod.py"]); // a staged change must not confuse the capture

    let patch = dir.path().join("work.diff");
    cargo_bin_cmd!("beyondswe")
        .arg("capture")
        .arg(&ws)
        .args(["--base", &base, "-o"])
        .arg(&patch)
        .assert()
        .success();
    let text = std::fs::read(&patch).unwrap();
    assert!(
        !String::from_utf8_lossy(&text).contains(".rej"),
        "leftovers captured"
    );

    // The workspace's own index is untouched.
    assert_eq!(
        git(&ws, &["diff", "--cached", "--name-only"]).trim(),
        "pkg/mod.py"
    );

    let copy = dir.path().join("copy");
    git(dir.path(), &["clone", "-q", ws.to_str().unwrap(), "copy"]);
    git(&copy, &["checkout", "-q", &base]);
    git(
        &copy,
        &["apply", "--whitespace=nowarn", patch.to_str().unwrap()],
    );
    assert_eq!(snapshot(&copy), snapshot(&ws));

    // --respect-gitignore leaves ignored files out.
    let out = cargo_bin_cmd!("beyondswe")
        .arg("capture")
        .arg(&ws)
        .args(["--base", &base, "--respect-gitignore", "-o", "-"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(!text.contains("debug.log") && !text.contains("build/generated.py"));
    assert!(text.contains("pkg/new_name.py"));

    // A base that does not exist is an error naming the workspace.
    cargo_bin_cmd!("beyondswe")
        .arg("capture")
        .arg(&ws)
        .args(["--base", "deadbeef", "-o", "-"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("rev-parse"));
}

/// `capture` writes nothing into the workspace's repository (its objects go to a temporary
/// object directory), and a huge sparse file is left out by its size, unread, and named.
#[test]
fn capture_leaves_the_repository_alone_and_huge_files_out() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("a.py"), "x = 1\n").unwrap();
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "-A"]);
    git(&ws, &["commit", "-qm", "base"]);
    let base = git(&ws, &["rev-parse", "HEAD"]).trim().to_owned();
    let objects = |ws: &Path| {
        walkdir::WalkDir::new(ws.join(".git/objects"))
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .count()
    };
    let before = objects(&ws);
    std::fs::write(ws.join("a.py"), "x = 2\n").unwrap();
    std::fs::write(ws.join("new.py"), "y = 3\n".repeat(1000)).unwrap();
    let disk = std::fs::File::create(ws.join("disk.img")).unwrap();
    disk.set_len(1 << 40).unwrap();
    let started = std::time::Instant::now();
    let out = cargo_bin_cmd!("beyondswe")
        .arg("capture")
        .arg(&ws)
        .args(["--base", &base, "-o", "-"])
        .assert()
        .success();
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(text.contains("new.py") && text.contains("a.py"), "{text}");
    assert!(!text.contains("disk.img"), "{text}");
    assert!(
        stderr.contains("left out disk.img: 1099511627776 bytes"),
        "{stderr}"
    );
    assert_eq!(
        objects(&ws),
        before,
        "capture wrote objects into the workspace"
    );
}
