//! The CLI end to end: commands, exit codes, error messages, generated files (insta snapshots).

use super::support::{fixtures, tree};
use assert_cmd::cargo::cargo_bin_cmd;
use std::path::Path;

fn bin() -> assert_cmd::Command {
    cargo_bin_cmd!("beyondswe")
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

/// A FIFO at `path` (made with mkfifo(1)).
fn mkfifo(path: &Path) {
    assert!(
        std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap()
            .success(),
        "mkfifo {}",
        path.display()
    );
}

fn variants() -> std::path::PathBuf {
    fixtures().join("dataset/variants.jsonl")
}

#[test]
fn to_harbor_then_from_harbor_round_trips_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks");
    let back = dir.path().join("back.jsonl");
    bin()
        .args(["convert", "to-harbor"])
        .arg(variants())
        .arg(&tasks)
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .assert()
        .success()
        .stdout(predicates::str::contains("converted 6 instance(s)"));
    bin()
        .args(["convert", "from-harbor"])
        .arg(&tasks)
        .arg(&back)
        .arg("--test-suites")
        .arg(dir.path().join("suites"))
        .assert()
        .success();
    let mut a: Vec<serde_json::Value> = std::fs::read_to_string(variants())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut b: Vec<serde_json::Value> = std::fs::read_to_string(&back)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let key = |v: &serde_json::Value| v["instance_id"].as_str().unwrap().to_owned();
    a.sort_by_key(key);
    b.sort_by_key(key);
    assert_eq!(a, b);
    assert!(dir.path().join("suites/variant_suite.zip").is_file());
}

/// `convert to-harbor --strict` makes tasks whose verifier takes evidence as `forgery_suspected`
/// (`"strict": true` in `tests/test_config.json`); without it the key is absent. The records
/// read back are the same either way.
#[test]
fn strict_tasks_say_so_in_their_test_config_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    for strict in [true, false] {
        let tasks = dir.path().join(format!("tasks-{strict}"));
        let mut cmd = bin();
        cmd.args(["convert", "to-harbor"])
            .arg(variants())
            .arg(&tasks)
            .arg("--test-suites")
            .arg(fixtures().join("test_suites"));
        if strict {
            cmd.arg("--strict");
        }
        cmd.assert().success();
        let mut configs = 0;
        for task in std::fs::read_dir(&tasks).unwrap() {
            let config = task.unwrap().path().join("tests/test_config.json");
            if !config.is_file() {
                continue;
            }
            configs += 1;
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
            assert_eq!(v.get("strict"), strict.then_some(&serde_json::json!(true)));
        }
        assert_eq!(configs, 6);
        let back = dir.path().join(format!("back-{strict}.jsonl"));
        bin()
            .args(["convert", "from-harbor"])
            .arg(&tasks)
            .arg(&back)
            .arg("--test-suites")
            .arg(dir.path().join(format!("suites-{strict}")))
            .assert()
            .success();
        let ids = |p: &Path| {
            let mut v: Vec<serde_json::Value> = std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            v.sort_by_key(|r| r["instance_id"].as_str().unwrap().to_owned());
            v
        };
        assert_eq!(ids(&back), ids(&variants()));
    }
}

#[test]
fn existing_task_is_refused_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let run = |force: bool| {
        let mut cmd = bin();
        cmd.args(["convert", "to-harbor"])
            .arg(variants())
            .arg(dir.path())
            .arg("--test-suites")
            .arg(fixtures().join("test_suites"))
            .args(["--ids", "acme_widget_pr12"]);
        if force {
            cmd.arg("--force");
        }
        cmd.assert()
    };
    run(false).success();
    std::fs::write(dir.path().join("acme_widget_pr12/marker"), "old").unwrap();
    run(false).code(1).stderr(predicates::str::contains(
        "already exists (pass --force to replace it)",
    ));
    assert!(dir.path().join("acme_widget_pr12/marker").exists());
    run(true).success();
    assert!(!dir.path().join("acme_widget_pr12/marker").exists());
    // No temporary directories are left behind: the task and the dataset's manifest only.
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["acme_widget_pr12", "dataset.toml"]);
}

#[test]
fn first_bad_line_stops_and_keep_going_converts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.jsonl");
    let good = std::fs::read_to_string(variants()).unwrap();
    let first = good.lines().next().unwrap();
    write(
        &data,
        &format!(
            "{first}\n{{\"instance_id\": \"x\", \"task\": \"crossrepo\", \"test_suite_num\": \"ten\"}}\n{{oops\n{}\n",
            good.lines().nth(1).unwrap()
        ),
    );
    let out = dir.path().join("out");
    bin()
        .args(["convert", "to-harbor"])
        .arg(&data)
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "data.jsonl:2: field `test_suite_num`",
        ))
        .stderr(predicates::str::contains("\"ten\""))
        .stderr(predicates::str::contains("--keep-going"));
    assert_eq!(
        tree(&out)
            .iter()
            .filter(|p| p.ends_with("task.toml"))
            .count(),
        1
    );

    bin()
        .args(["convert", "to-harbor", "--keep-going", "--force"])
        .arg(&data)
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "data.jsonl:2: field `test_suite_num`",
        ))
        .stderr(predicates::str::contains("data.jsonl:3:"));
    assert_eq!(
        tree(&out)
            .iter()
            .filter(|p| p.ends_with("task.toml"))
            .count(),
        2
    );
}

#[test]
fn missing_image_duplicate_ids_and_missing_suites_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.jsonl");
    write(
        &data,
        concat!(
            "{\"instance_id\":\"a_b_pr1\",\"task\":\"crossrepo\"}\n",
            "{\"instance_id\":\"a_c_pr2\",\"task\":\"crossrepo\",\"image\":\"x/y:1\"}\n",
            "{\"instance_id\":\"a_c_pr2\",\"task\":\"crossrepo\",\"image\":\"x/y:1\"}\n",
            "{\"instance_id\":\"Doc_0000000000000000000000000000000000000000\",\"task\":\"doc2repo\",\"image\":\"x/y:1\",\"test_suite\":\"nope.zip\",\"test_suite_num\":3}\n",
        ),
    );
    bin()
        .args(["convert", "to-harbor", "--keep-going"])
        .arg(&data)
        .arg(dir.path().join("out"))
        .arg("--test-suites")
        .arg(dir.path())
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "data.jsonl:1: instance `a_b_pr1`: no image",
        ))
        .stderr(predicates::str::contains(format!(
            "data.jsonl:3: duplicate instance_id `a_c_pr2`: {0}:2 and {0}:3",
            data.display()
        )))
        .stderr(predicates::str::contains("`nope.zip` not found"));
}

#[test]
fn unwritable_output_is_an_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    write(&blocker, "not a dir");
    bin()
        .args(["convert", "to-harbor"])
        .arg(variants())
        .arg(blocker.join("out"))
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            blocker.join("out").display().to_string(),
        ));
}

#[test]
fn broken_task_toml_is_named_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks");
    bin()
        .args(["convert", "to-harbor"])
        .arg(variants())
        .arg(&tasks)
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .assert()
        .success();
    write(
        &tasks.join("acme_widget_pr12/task.toml"),
        "[environment]\ncpus = \"many\"\n",
    );
    let out = dir.path().join("back.jsonl");
    bin()
        .args(["convert", "from-harbor"])
        .arg(&tasks)
        .arg(&out)
        .arg("--test-suites")
        .arg(dir.path().join("s"))
        .assert()
        .code(1)
        .stderr(predicates::str::contains("acme_widget_pr12/task.toml"))
        .stderr(predicates::str::contains("line 2"));
    assert!(!out.exists());
    // Without --test-suites the Doc2Repo suites would be lost: refused.
    bin()
        .args(["convert", "from-harbor", "--keep-going"])
        .arg(&tasks)
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "pass --test-suites DIR to keep it",
        ));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 3);
}

#[test]
fn validate_lists_every_problem() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.jsonl");
    write(
        &data,
        concat!(
            "{\"instance_id\":\"a_b_pr1\",\"task\":\"refactor\",\"image\":\"i\",\"base_commit\":\"c\",\"problem_statement\":\"p\",\"FAIL_TO_PASS\":\"[\\\"t.py::a\\\"]\",\"patch\":\"diff --git a/x b/x\\n--- a/x\\n+++ b/x\\n@@ -1,2 +1,2 @@\\n-a\\n\"}\n",
            "{\"instance_id\":\"a_b_pr1\",\"task\":\"crossrepo\"}\n",
            "not json\n",
            "{\"instance_id\":\"D_0000000000000000000000000000000000000000\",\"task\":\"Doc2Repo\",\"image\":\"i\",\"test_suite\":\"s.zip\",\"test_suite_num\":0}\n",
        ),
    );
    let assert = bin()
        .current_dir(dir.path())
        .args(["validate", "data.jsonl", "--test-suites", "."])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "4 record(s), 11 error(s), 2 warning(s)",
        ));
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    insta::assert_snapshot!(stdout);
}

#[test]
fn validate_accepts_the_fixtures_and_their_harbor_form() {
    bin()
        .arg("validate")
        .arg(variants())
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .assert()
        .success();
    let dir = tempfile::tempdir().unwrap();
    bin()
        .args(["convert", "to-harbor"])
        .arg(variants())
        .arg(dir.path())
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .assert()
        .success();
    bin().arg("validate").arg(dir.path()).assert().success();
}

/// One generated task directory per family, file by file.
#[test]
fn generated_task_directories() {
    let dir = tempfile::tempdir().unwrap();
    bin()
        .args(["convert", "to-harbor"])
        .arg(variants())
        .arg(dir.path())
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .assert()
        .success();
    for id in [
        "acme_widget_pr12",
        "pylons_pyramid_pr3054",
        "abravalheri_validate-pyproject_pr105",
        "PXMeter_7283384f03718625c13ee447b16db5206b45596b",
    ] {
        let task = dir.path().join(beyondswe::harbor::task_dir_name(id));
        let mut listing = String::new();
        for rel in tree(&task) {
            listing.push_str(&format!("== {rel}\n"));
            // The embedded adapters are snapshotted once, by name, not per task.
            if rel.starts_with("tests/beyondswe_")
                || rel.starts_with("environment/beyondswe_")
                || rel.ends_with("strip_history.sh")
                || rel.ends_with(".zip")
                || rel == "tests/test.sh"
            {
                continue;
            }
            listing.push_str(&std::fs::read_to_string(task.join(&rel)).unwrap());
            listing.push('\n');
        }
        insta::assert_snapshot!(id, listing);
    }
}

#[test]
fn schemas_are_up_to_date() {
    bin()
        .args(["schemas", "check"])
        .arg(super::support::repo_root().join("schemas"))
        .assert()
        .success();
}

/// The README's main command: builds the images, checks the round trip, grades the demo run.
#[test]
#[ignore = "needs the Docker engine (scripts/test.sh runs it)"]
fn demo_converts_and_grades_the_bundled_data() {
    super::support::require_docker();
    super::support::fixture_images();
    let dir = tempfile::tempdir().unwrap();
    // From outside the checkout: the demo data is the binary's own.
    bin()
        .current_dir(dir.path())
        .arg("demo")
        .arg("--results-dir")
        .arg(dir.path())
        .assert()
        .success()
        .stderr(predicates::str::contains("11/11 records identical"))
        .stdout(predicates::str::contains("AVG"))
        .stdout(predicates::str::contains("acme_calc_pr73"))
        .stdout(predicates::str::contains("[flagged]"));
}

/// The Doc2Repo records of variants.jsonl with their `test_suite` replaced by `name`.
fn doc2repo_with_suite(name: &str) -> String {
    std::fs::read_to_string(variants())
        .unwrap()
        .lines()
        .filter(|l| l.contains("variant_suite.zip"))
        .take(1)
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["test_suite"] = name.into();
            format!("{v}\n")
        })
        .collect()
}

/// `test_suite` names a file in the suites directory: a path (absolute, `..`, through a
/// directory) is refused with the file, line and value, and nothing is copied.
#[test]
fn to_harbor_refuses_a_test_suite_that_is_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let suites = dir.path().join("suites");
    std::fs::create_dir_all(&suites).unwrap();
    // A file the record must not be able to pull into a task.
    write(&dir.path().join("secret.zip"), "not for the task");
    let secret = dir.path().join("secret.zip");
    for name in [
        "../secret.zip",
        secret.to_str().unwrap(),
        "sub/../../secret.zip",
    ] {
        let data = dir.path().join("data.jsonl");
        write(&data, &doc2repo_with_suite(name));
        let out = dir.path().join("out");
        bin()
            .args(["convert", "to-harbor"])
            .arg(&data)
            .arg(&out)
            .arg("--test-suites")
            .arg(&suites)
            .assert()
            .code(1)
            .stderr(predicates::str::contains("data.jsonl:1"))
            .stderr(predicates::str::contains(format!(
                "`test_suite` is `{name}`"
            )));
        assert!(
            tree(&out).iter().all(|p| !p.ends_with("test_suite.zip")),
            "{name}: {:?}",
            tree(&out)
        );
        // validate names it too.
        bin()
            .arg("validate")
            .arg(&data)
            .arg("--test-suites")
            .arg(&suites)
            .assert()
            .code(1)
            .stdout(predicates::str::contains("test_suite"))
            .stdout(predicates::str::contains("not a plain file name"));
    }
}

/// `convert from-harbor --test-suites` writes each suite under the name `tests/instance.json`
/// gives: a path there is refused, naming the file and the value, and nothing is written outside
/// the suites directory.
#[test]
fn from_harbor_refuses_a_test_suite_that_is_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks");
    let data = dir.path().join("data.jsonl");
    write(&data, &doc2repo_with_suite("variant_suite.zip"));
    bin()
        .args(["convert", "to-harbor"])
        .arg(&data)
        .arg(&tasks)
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .assert()
        .success();
    let instance =
        tasks.join("pxmeter_7283384f03718625c13ee447b16db5206b45596b/tests/instance.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&instance).unwrap()).unwrap();
    v["test_suite"] = "../../escaped.zip".into();
    write(&instance, &serde_json::to_string_pretty(&v).unwrap());
    let suites = dir.path().join("a/suites");
    bin()
        .args(["convert", "from-harbor"])
        .arg(&tasks)
        .arg(dir.path().join("back.jsonl"))
        .arg("--test-suites")
        .arg(&suites)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("tests/instance.json"))
        .stderr(predicates::str::contains("`../../escaped.zip`"));
    assert!(!dir.path().join("escaped.zip").exists());
    assert!(!dir.path().join("a/escaped.zip").exists());
    bin()
        .arg("validate")
        .arg(&tasks)
        .assert()
        .code(1)
        .stdout(predicates::str::contains("`../../escaped.zip`"));
}

/// A patch is read from a regular file, never more than `--max-patch-mb`: `/dev/zero` and a FIFO
/// are refused at once by name instead of reading forever or hanging.
#[test]
fn patch_files_are_regular_files_within_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("patch.fifo");
    mkfifo(&fifo);
    let big = dir.path().join("big.diff");
    let mut text = String::from("--- a/x\n+++ b/x\n@@ -1 +1,40000 @@\n-x\n");
    text.push_str(&"+yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n".repeat(40_000));
    write(&big, &text);
    for (patch, extra, want) in [
        (
            Path::new("/dev/zero"),
            None,
            "/dev/zero: a character device, not a regular file",
        ),
        (
            fifo.as_path(),
            None,
            "a named pipe (FIFO), not a regular file",
        ),
        (big.as_path(), Some("1"), "larger than the limit of 1 MiB"),
    ] {
        let mut cmd = bin();
        cmd.args(["grade-one", "--dataset"])
            .arg(variants())
            .args(["--instance", "acme_widget_pr12", "--patch"])
            .arg(patch)
            .timeout(std::time::Duration::from_secs(20));
        if let Some(mb) = extra {
            cmd.args(["--max-patch-mb", mb]);
        }
        cmd.assert()
            .code(1)
            .stderr(predicates::str::contains(want))
            .stderr(predicates::str::contains(patch.display().to_string()));
    }
    // Captured diffs beside transcripts are held to the same cap, before any grading starts.
    let run = dir.path().join("cc");
    std::fs::create_dir_all(run.join("patches")).unwrap();
    std::fs::copy(
        fixtures().join("agents/claude-code/acme_calc_pr7.json"),
        run.join("acme_calc_pr7.json"),
    )
    .unwrap();
    std::fs::copy(&big, run.join("patches/acme_calc_pr7.diff")).unwrap();
    bin()
        .args([
            "grade",
            "--run-id",
            "cap",
            "--max-patch-mb",
            "1",
            "--dataset",
        ])
        .arg(fixtures().join("dataset/fixtures.jsonl"))
        .arg("--results-dir")
        .arg(dir.path().join("runs"))
        .arg("--predictions")
        .arg(&run)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(1)
        .stderr(predicates::str::contains("patches/acme_calc_pr7.diff"))
        .stderr(predicates::str::contains("--max-patch-mb"));
}

/// A Doc2Repo record has no gold repository: without `--solutions` the task has no oracle and
/// `convert` and `validate` say so; with one, `solve.sh` installs it. `--prebuilt-image` is the only
/// way to get `docker_image` into task.toml.
#[test]
fn doc2repo_solutions_and_the_prebuilt_image_opt_in() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.jsonl");
    let text = std::fs::read_to_string(variants()).unwrap();
    let mut line: serde_json::Value = serde_json::from_str(text.lines().nth(4).unwrap()).unwrap();
    let id = line["instance_id"].as_str().unwrap().to_owned();
    line.as_object_mut().unwrap().remove("patch");
    write(&data, &format!("{line}\n"));
    let tasks = dir.path().join("tasks");
    bin()
        .args(["convert", "to-harbor"])
        .arg(&data)
        .arg(&tasks)
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .assert()
        .success()
        .stdout(predicates::str::contains("no oracle"))
        .stderr(predicates::str::contains("pass --solutions DIR"));
    let task = tasks.join(beyondswe::harbor::task_dir_name(&id));
    assert!(!task.join("solution/solve.sh").exists());
    bin()
        .arg("validate")
        .arg(&tasks)
        .assert()
        .stdout(predicates::str::contains("solution/solve.sh is missing"));

    let solutions = dir.path().join("solutions");
    std::fs::create_dir_all(solutions.join(&id).join("pkg")).unwrap();
    std::fs::write(solutions.join(&id).join("pkg/__init__.py"), "").unwrap();
    bin()
        .args(["convert", "to-harbor", "--force", "--prebuilt-image"])
        .arg(&data)
        .arg(&tasks)
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .arg("--solutions")
        .arg(&solutions)
        .assert()
        .success()
        .stderr(predicates::prelude::PredicateBooleanExt::not(
            predicates::str::contains("warning"),
        ));
    assert!(task.join("solution/solve.sh").is_file());
    assert!(task.join("solution/repo.tar").is_file());
    let toml = std::fs::read_to_string(task.join("task.toml")).unwrap();
    assert!(toml.contains("docker_image = "), "{toml}");
}

/// Ids and task names come from datasets and agents: an escape sequence in one (a new terminal
/// title, a cleared screen, a CSI) and a newline (a forged row) reach neither the terminal nor
/// the table as such; JSON output keeps the exact string.
#[test]
fn hostile_ids_reach_the_terminal_as_text() {
    let tmp = tempfile::tempdir().unwrap();
    let evil = "evil\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\nFORGED ROW";
    let line = serde_json::json!({"instance_id": evil, "task": "CrossRepo"}).to_string();
    let dataset = tmp.path().join("evil.jsonl");
    write(&dataset, &format!("{line}\n"));
    let out = bin().arg("validate").arg(&dataset).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "a control character reached the terminal: {text:?}"
    );
    assert!(
        !text.lines().any(|l| l.starts_with("FORGED ROW")),
        "a newline in an id made a row of its own:\n{text}"
    );
    assert!(text.contains("evil\\u001b]0;pwned\\u0007"), "{text}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        !stderr
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{stderr:?}"
    );

    let out = bin()
        .arg("validate")
        .arg(&dataset)
        .arg("--json")
        .output()
        .unwrap();
    // One problem per line, each naming the instance by its exact id.
    let problems: Vec<serde_json::Value> = serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(!problems.is_empty());
    for p in &problems {
        assert_eq!(p["instance"], evil, "JSON keeps the exact id: {p}");
    }
}

/// One writer per run: while another process holds a run directory, `grade` into it is refused
/// and told who holds it, before any grading; once the holder is gone the lock is free.
#[test]
fn a_second_writer_of_a_run_is_refused_and_told_who_holds_it() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("runs/held");
    std::fs::create_dir_all(&run).unwrap();
    let mut holder = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(run.join(".lock"))
        .unwrap();
    holder.lock().unwrap();
    std::io::Write::write_all(
        &mut holder,
        b"pid 4242 on elsewhere since 2026-12-02T00:00:00Z\n",
    )
    .unwrap();
    let grade = || {
        bin()
            .args(["grade", "--dataset"])
            .arg(variants())
            .args(["--gold", "--run-id", "held", "--results-dir"])
            .arg(tmp.path().join("runs"))
            .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
            .output()
            .unwrap()
    };
    let out = grade();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("another process is writing this run (pid 4242 on elsewhere"),
        "{stderr}"
    );
    assert!(!run.join("results.jsonl").exists(), "nothing was written");
    drop(holder);
    // The lock is this process's open file, which a child another test spawns at this moment
    // shares until it execs: on a loaded machine the release can take a moment to be seen.
    let mut stderr = String::new();
    for _ in 0..20 {
        stderr = String::from_utf8_lossy(&grade().stderr).into_owned();
        if !stderr.contains("another process") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    assert!(!stderr.contains("another process"), "{stderr}");
}

/// A task directory whose files link out of it (without `tests/instance.json`, so the reader
/// rebuilds the record from them) puts no host file into the record, the suites or a grading:
/// each link is named, the task refused, the others converted.
#[test]
fn task_files_that_link_out_of_the_task_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let tasks = tmp.path().join("tasks");
    bin()
        .args(["convert", "to-harbor"])
        .arg(fixtures().join("dataset/fixtures.jsonl"))
        .arg(&tasks)
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .assert()
        .success();
    let secret = tmp.path().join("host-secret.txt");
    write(&secret, "HOST SECRET\n");
    let calc = tasks.join("acme_calc_pr7");
    let doc = tasks.join("minidoc_ac79166631ba81556e3f40c05aa8d00fe9178ca6");
    for (task, rel) in [
        (&calc, "instruction.md"),
        (&calc, "tests/f2p_patch.diff"),
        (&doc, "tests/test_suite.zip"),
    ] {
        std::fs::remove_file(task.join("tests/instance.json")).ok();
        std::fs::remove_file(task.join(rel)).ok();
        std::os::unix::fs::symlink(&secret, task.join(rel)).unwrap();
    }
    let out_jsonl = tmp.path().join("back.jsonl");
    let suites = tmp.path().join("suites");
    let out = bin()
        .args(["convert", "from-harbor"])
        .arg(&tasks)
        .arg(&out_jsonl)
        .arg("--test-suites")
        .arg(&suites)
        .arg("--keep-going")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("instruction.md: a link out of the task directory"),
        "{stderr}"
    );
    assert!(
        stderr.contains("test_suite.zip: a link out of the task directory"),
        "{stderr}"
    );
    let back = std::fs::read_to_string(&out_jsonl).unwrap_or_default();
    assert!(!back.contains("HOST SECRET"), "{back}");
    assert!(
        back.contains("acme_textkit_pr12"),
        "the other task is converted: {back}"
    );
    for e in walkdir::WalkDir::new(&suites).into_iter().flatten() {
        if e.file_type().is_file() {
            assert_ne!(std::fs::read(e.path()).unwrap(), b"HOST SECRET\n");
        }
    }
}

/// Input with no end: a device named as input (`/dev/zero`: no line end, ever) is refused at
/// once, naming what it is; a stream handed over on standard input stops every reader at the
/// line cap, in bounded memory (the test's address-space limit is far below what reading it
/// whole takes), with an error that says the limit and how to raise it.
#[test]
fn input_without_end_stops_at_the_line_cap_in_bounded_memory() {
    let bin = env!("CARGO_BIN_EXE_beyondswe");
    for args in [
        "validate /dev/zero",
        "ingest /dev/zero -o /dev/null",
        "ingest /dev/zero --format predictions -o /dev/null",
        "audit /dev/zero",
        // A trajectory is read as a stream, so NUL bytes are not JSON from the first; a string
        // with no end is what reaches the cap.
        "trajectory validate /dev/stdin < /dev/zero",
        "trajectory validate /dev/stdin <<EOF\n{\"notes\": \"$(head -c 5000000 /dev/zero | tr '\\0' a)\nEOF",
    ] {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v 1500000; exec {bin} {args}"))
            .env("BEYONDSWE_MAX_LINE_MB", "4")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(1), "{args}: {text}");
        if args.ends_with("< /dev/zero") {
            assert!(text.contains("not valid JSON"), "{args}: {text}");
            continue;
        }
        if args.split_whitespace().nth(1) == Some("/dev/zero") {
            assert!(text.contains("a character device"), "{args}: {text}");
            continue;
        }
        assert!(text.contains("longer than 4 MiB"), "{args}: {text}");
        assert!(text.contains("BEYONDSWE_MAX_LINE_MB"), "{args}: {text}");
    }
}

/// `validate` catches what `convert` or the grader would trip on later: FAIL_TO_PASS text that
/// starts like a JSON list but is not one, ids that are numbers, and two ids that differ only
/// in case (one task directory for both).
#[test]
fn validate_catches_malformed_test_id_lists_and_ids_clashing_in_case() {
    let tmp = tempfile::tempdir().unwrap();
    let base = serde_json::json!({
        "task": "CrossRepo", "image": "x/y:1", "base_commit": "a".repeat(40),
        "problem_statement": "Fix it.", "patch": "", "PASS_TO_PASS": "[]",
    });
    let with = |id: &str, f2p: serde_json::Value| {
        let mut v = base.clone();
        v["instance_id"] = id.into();
        v["FAIL_TO_PASS"] = f2p;
        v.to_string()
    };
    let lines = [
        with("o_r_pr1", "[[[not json".into()),
        with("o_r_pr2", serde_json::json!([1, 2, 3])),
        with("o_r_pr3", "[\"t.py::a\", [\"nested\"]]".into()),
        with("Acme_r_pr4", serde_json::json!(["t.py::a"])),
        with("acme_r_pr4", serde_json::json!(["t.py::a"])),
    ];
    let dataset = tmp.path().join("d.jsonl");
    write(&dataset, &(lines.join("\n") + "\n"));
    let out = bin()
        .arg("validate")
        .arg(&dataset)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let problems: Vec<serde_json::Value> = serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let about = |id: &str, field: &str, text: &str| {
        problems.iter().any(|p| {
            p["instance"] == id
                && p["field"] == field
                && p["message"].as_str().unwrap_or_default().contains(text)
        })
    };
    assert!(
        about(
            "o_r_pr1",
            "FAIL_TO_PASS",
            "starts like a JSON list but is not one"
        ),
        "{problems:#?}"
    );
    assert!(
        about("o_r_pr2", "FAIL_TO_PASS", "item 1 is 1, not a test id"),
        "{problems:#?}"
    );
    assert!(
        about("o_r_pr3", "FAIL_TO_PASS", "item 2 is"),
        "{problems:#?}"
    );
    assert!(
        about("acme_r_pr4", "instance_id", "differ only in case"),
        "{problems:#?}"
    );
    assert!(
        !about("Acme_r_pr4", "instance_id", "differ only in case"),
        "{problems:#?}"
    );
}

/// Predictions the way the SWE-bench harness takes them: `"model_patch": null` (SWE-agent's
/// failed runs) and a missing patch are empty patches; a bad line, a line that is not JSON and a
/// second prediction for one attempt are each named with their line while the good lines are
/// kept; the exit code says some line was bad.
#[test]
fn a_bad_predictions_line_is_named_and_the_rest_are_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let preds = tmp.path().join("preds.jsonl");
    write(
        &preds,
        &[
            r#"{"instance_id": "a", "model_name_or_path": "m", "model_patch": "diff --git a/x b/x\n"}"#,
            r#"{"instance_id": "b", "model_name_or_path": "m", "model_patch": null}"#,
            r#"{"instance_id": "c", "model_name_or_path": "m"}"#,
            r#"{"instance_id": "d", "model_name_or_path": "m", "model_patch": 42}"#,
            r#"this line is not json"#,
            r#"{"instance_id": "a", "model_name_or_path": "m", "model_patch": "again"}"#,
        ]
        .join("\n"),
    );
    let out_path = tmp.path().join("out.jsonl");
    let out = bin()
        .arg("ingest")
        .arg(&preds)
        .arg("-o")
        .arg(&out_path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for named in [
        "preds.jsonl:4: field `model_patch`: expected a string, found 42",
        "preds.jsonl:5",
        "two predictions for `a`: ",
    ] {
        assert!(stderr.contains(named), "{named}:\n{stderr}");
    }
    let kept: Vec<serde_json::Value> = std::fs::read_to_string(&out_path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = kept
        .iter()
        .map(|v| v["instance_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["a", "b", "c"], "{kept:#?}");
    assert_eq!(kept[1]["model_patch"], "", "null is an empty patch");
    assert_eq!(
        kept[2]["model_patch"], "",
        "a missing patch is an empty patch"
    );
}

/// The official evaluator's BEYONDSWE_TEST_SUITE_DIR stands for --test-suites, and the hint
/// without either names no folder that is not there.
#[test]
fn the_official_test_suite_variable_is_honoured() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("no-suites-here");
    std::fs::create_dir_all(&empty).unwrap();
    let dataset = fixtures().join("dataset/fixtures.jsonl");
    let with = |dir: &Path| {
        bin()
            .arg("validate")
            .arg(&dataset)
            .env("BEYONDSWE_TEST_SUITE_DIR", dir)
            .output()
            .unwrap()
    };
    assert_eq!(with(&fixtures().join("test_suites")).status.code(), Some(0));
    let out = with(&empty);
    assert_eq!(out.status.code(), Some(1), "the suite is looked for there");
    let out = bin()
        .arg("validate")
        .arg(&dataset)
        .env_remove("BEYONDSWE_TEST_SUITE_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("BEYONDSWE_TEST_SUITE_DIR"), "{stderr}");
    assert!(
        !stderr.contains("e.g."),
        "no folder that is not there: {stderr}"
    );
}

/// SWE-bench's habits: `--instance-ids` and `--max-workers` are taken, ids are split at commas
/// and spaces, an id the dataset lacks gets a "did you mean", and a run that would grade nothing
/// is refused (exit 1) before any run directory exists, the engine never asked.
#[test]
fn swebench_flags_are_taken_and_unknown_ids_are_refused_with_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("runs");
    let out = bin()
        .args([
            "grade",
            "--predictions",
            "gold",
            "--run-id",
            "r",
            "--max-workers",
            "2",
        ])
        .arg("--dataset")
        .arg(fixtures().join("dataset/fixtures.jsonl"))
        .arg("--results-dir")
        .arg(&results)
        .args([
            "--instance-ids",
            "acme_calc_pr8,acme_textkit_pr12x other_id",
        ])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("--ids names no instance of"), "{stderr}");
    assert!(
        stderr.contains("acme_calc_pr8 (did you mean acme_calc_pr7?)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("acme_textkit_pr12x (did you mean acme_textkit_pr12?)"),
        "{stderr}"
    );
    assert!(stderr.contains("other_id"), "{stderr}");
    assert!(
        !results.exists(),
        "a run directory was made: {:?}",
        tree(dir.path())
    );
    // --solutions belongs to a gold run.
    bin()
        .args(["grade", "--empty", "--run-id", "r", "--solutions", "x"])
        .arg("--dataset")
        .arg(fixtures().join("dataset/fixtures.jsonl"))
        .arg("--results-dir")
        .arg(&results)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--solutions"));
}

/// The README and the CLI are one: every flag a README heading shows for a command is one that
/// command's `--help` lists (old spellings are hidden aliases, never shown there).
#[test]
fn every_flag_the_readme_shows_is_in_its_commands_help() {
    let readme = std::fs::read_to_string(super::support::repo_root().join("README.md")).unwrap();
    let mut checked = 0;
    let mut bad = Vec::new();
    for heading in readme.lines().filter(|l| l.starts_with("### `beyondswe")) {
        // Each backticked `beyondswe …` (or a following `release to-harbor …`) in the heading.
        for (n, part) in heading.split('`').enumerate() {
            if n % 2 == 0 || part.trim().is_empty() {
                continue;
            }
            let words: Vec<&str> = part
                .trim_start_matches("beyondswe ")
                .split_whitespace()
                .collect();
            let path: Vec<&str> = words
                .iter()
                .take_while(|w| {
                    w.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !w.starts_with('-')
                })
                .copied()
                .collect();
            if path.is_empty() || path.contains(&"…") {
                continue;
            }
            let help = bin().args(&path).arg("--help").output().unwrap();
            let help = String::from_utf8_lossy(&help.stdout).into_owned();
            for w in &words {
                let flag: String = w
                    .trim_start_matches(['[', '('])
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                if flag.starts_with('-') && flag.len() > 1 {
                    checked += 1;
                    let shown = help
                        .lines()
                        .any(|l| l.trim_start().split([',', ' ', '=']).any(|t| t == flag));
                    if !shown {
                        bad.push(format!("`beyondswe {}`: {flag}", path.join(" ")));
                    }
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} flags found in the README's headings"
    );
    assert!(
        bad.is_empty(),
        "README flags the CLI does not list:\n{}",
        bad.join("\n")
    );
}

/// The old spellings still work, as hidden aliases of the one name each concept has.
#[test]
fn old_spellings_are_hidden_aliases() {
    let v = fixtures().join("dataset/variants.jsonl");
    let run = |args: &[&str]| {
        let out = bin().args(args).arg(&v).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let new = run(&["validate", "--format", "json"]);
    assert_eq!(run(&["validate", "--json"]), new);
    assert!(new.1.trim_start().starts_with('{'), "{}", new.1);
    let help = bin().args(["validate", "--help"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&help.stdout).contains("--json"));
    let help = bin().args(["image", "prune", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    assert!(
        help.contains("--max-prepared-gb") && !help.contains("--max-gb"),
        "{help}"
    );
    // Harbor's task.toml takes whole CPUs: a fraction is refused with why.
    let out = bin()
        .args(["convert", "to-harbor"])
        .arg(&v)
        .arg(tempfile::tempdir().unwrap().path().join("t"))
        .args(["--cpus", "1.5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("whole CPUs"));
}

/// The files a run directory holds under fixed names (`run.json`, `results.jsonl`,
/// `report.json`) are read bounded and checked by every command that reads them (`report`, and
/// `merge` on a part): a FIFO, a link to `/dev/zero`, a link out of the run to a file that reads
/// well, and a file larger than any the tool writes are each refused by name, at once, instead
/// of hanging, being read whole or being read from elsewhere.
#[test]
fn every_commands_fixed_name_run_files_are_regular_bounded_and_in_place() {
    let root = tempfile::tempdir().unwrap();
    let meta = serde_json::to_string(&beyondswe::report::RunMeta::default()).unwrap();
    // A part as merge needs it: run.json, an empty store and a saved report.
    let good_run = |dir: &Path| {
        std::fs::create_dir_all(dir).unwrap();
        write(&dir.join("run.json"), &meta);
        write(&dir.join("results.jsonl"), "");
        write(&dir.join("report.json"), "{}");
    };
    let outside = root.path().join("outside");
    good_run(&outside);
    let mut n = 0;
    for command in ["report", "merge"] {
        for file in ["run.json", "results.jsonl", "report.json"] {
            for kind in ["fifo", "device", "link out", "oversized"] {
                n += 1;
                let run = root.path().join(format!("run{n}"));
                good_run(&run);
                let target = run.join(file);
                std::fs::remove_file(&target).unwrap();
                let want = match kind {
                    "fifo" => {
                        mkfifo(&target);
                        "named pipe".to_owned()
                    }
                    "device" => {
                        std::os::unix::fs::symlink("/dev/zero", &target).unwrap();
                        "symbolic link".to_owned()
                    }
                    "link out" => {
                        std::os::unix::fs::symlink(outside.join(file), &target).unwrap();
                        "symbolic link".to_owned()
                    }
                    _ => {
                        let f = std::fs::File::create(&target).unwrap();
                        f.set_len(70 << 20).unwrap();
                        if file == "results.jsonl" {
                            "longer than 64 MiB".to_owned()
                        } else {
                            "larger than the limit".to_owned()
                        }
                    }
                };
                let mut cmd = bin();
                match command {
                    "report" => cmd.arg("report").arg(&run),
                    _ => {
                        let other = root.path().join(format!("other{n}"));
                        good_run(&other);
                        cmd.arg("merge")
                            .arg("-o")
                            .arg(root.path().join(format!("merged{n}")))
                            .arg(&run)
                            .arg(&other)
                    }
                };
                let out = cmd
                    .timeout(std::time::Duration::from_secs(20))
                    .output()
                    .unwrap();
                let stderr = String::from_utf8_lossy(&out.stderr);
                let case = format!("{command} with {kind} as {file}");
                assert!(out.status.code().is_some(), "{case}: killed or hung");
                assert_ne!(out.status.code(), Some(0), "{case}: {stderr}");
                assert!(
                    stderr.contains(&want) && stderr.contains(file),
                    "{case}: {stderr}"
                );
            }
        }
    }
}

/// `convert to-harbor` into a folder that holds other things: a plain directory is named and
/// left out of `dataset.toml`, a foreign task whose `task.toml` links to a host file, whose
/// environment holds a sparse file of 20 GB or is a link to a folder elsewhere, or that is
/// itself a link, is left out and named without reading any of it, and the converted tasks are
/// listed: exit 0, nothing lost. A task's `task.toml` that became a FIFO is not read.
#[test]
fn the_manifest_leaves_out_what_is_no_readable_task_and_lists_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tasks");
    std::fs::create_dir_all(out.join("plain")).unwrap();
    write(&out.join("plain/notes.txt"), "not a task\n");
    std::fs::create_dir_all(out.join("linked")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", out.join("linked/task.toml")).unwrap();
    let sparse = out.join("sparse");
    std::fs::create_dir_all(sparse.join("environment")).unwrap();
    write(
        &sparse.join("task.toml"),
        "[task]\nname = \"other/sparse\"\n",
    );
    let f = std::fs::File::create(sparse.join("environment/blob.bin")).unwrap();
    f.set_len(20 << 30).unwrap();
    // A task elsewhere, linked in whole; and a task whose environment links to a folder
    // elsewhere that holds a FIFO (followed, it would hang the digest).
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(elsewhere.join("env")).unwrap();
    write(
        &elsewhere.join("task.toml"),
        "[task]\nname = \"other/away\"\n",
    );
    mkfifo(&elsewhere.join("env/pipe"));
    std::os::unix::fs::symlink(&elsewhere, out.join("away")).unwrap();
    std::fs::create_dir_all(out.join("envlink")).unwrap();
    write(
        &out.join("envlink/task.toml"),
        "[task]\nname = \"other/envlink\"\n",
    );
    std::os::unix::fs::symlink(elsewhere.join("env"), out.join("envlink/environment")).unwrap();
    let convert = || {
        bin()
            .args(["convert", "to-harbor"])
            .arg(variants())
            .arg(&out)
            .arg("--test-suites")
            .arg(fixtures().join("test_suites"))
            .args(["--ids", "acme_widget_pr12"])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap()
    };
    let run = convert();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    for (name, why) in [
        ("plain", "no task.toml"),
        ("linked", "no task.toml"),
        ("sparse", "larger than 2 GiB"),
        ("away", "a link, not a task directory"),
        ("envlink", "a link in place of a task's folder"),
    ] {
        assert!(
            stderr
                .lines()
                .any(|l| l.contains(&format!("tasks/{name}")) && l.contains(why)),
            "{name}: {stderr}"
        );
    }
    let manifest = std::fs::read_to_string(out.join("dataset.toml")).unwrap();
    assert!(manifest.contains("acme_widget_pr12"), "{manifest}");
    assert!(!manifest.contains("sparse"), "{manifest}");
    assert!(
        !manifest.contains("away") && !manifest.contains("envlink"),
        "{manifest}"
    );
    // The converted task's own task.toml replaced by a FIFO: converting again reads no owner
    // from it (it would have hung) and refuses to write over a directory it cannot place.
    let converted = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("widget"))
        .unwrap();
    std::fs::remove_file(converted.join("task.toml")).unwrap();
    mkfifo(&converted.join("task.toml"));
    let again = convert();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.code().is_some(), "killed or hung: {stderr}");
    assert_ne!(again.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("exists"), "{stderr}");
}

/// Every input a user names (a dataset in JSONL or Parquet, predictions, an agent's output, a
/// release, a trajectory, a calibration table) and every file found in a folder given as input
/// is opened through one function: a FIFO or a device in its place is refused at once, naming
/// what it is, where it would have hung the command (an open waits for a writer) or read
/// forever; a FIFO among an agent folder's files is named as not read, and the rest is read; a
/// transcript's captured diff that is a link to a file elsewhere is not read.
#[test]
fn user_named_inputs_that_are_no_regular_files_are_refused_at_once() {
    let root = tempfile::tempdir().unwrap();
    let fifo = |name: &str| {
        let p = root.path().join(name);
        mkfifo(&p);
        p
    };
    let device = |name: &str| {
        let p = root.path().join(name);
        std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
        p
    };
    let out = root.path().join("out");
    let cases: Vec<(&str, Vec<std::ffi::OsString>, &str)> = vec![
        (
            "validate a JSONL FIFO",
            vec!["validate".into(), fifo("d.jsonl").into()],
            "named pipe",
        ),
        (
            "validate a Parquet FIFO",
            vec!["validate".into(), fifo("d.parquet").into()],
            "named pipe",
        ),
        (
            "validate a device",
            vec!["validate".into(), device("z.jsonl").into()],
            "character device",
        ),
        (
            "convert a FIFO",
            vec![
                "convert".into(),
                "to-harbor".into(),
                fifo("c.jsonl").into(),
                out.clone().into(),
            ],
            "named pipe",
        ),
        (
            "ingest a FIFO",
            vec![
                "ingest".into(),
                fifo("preds.jsonl").into(),
                "-o".into(),
                out.join("p.jsonl").into(),
            ],
            "named pipe",
        ),
        (
            "audit a FIFO",
            vec![
                "audit".into(),
                "--json".into(),
                fifo("session.jsonl").into(),
            ],
            "named pipe",
        ),
        (
            "a release from a FIFO",
            vec![
                "release".into(),
                "to-harbor".into(),
                fifo("release.jsonl").into(),
                out.join("jobs").into(),
            ],
            "named pipe",
        ),
        (
            "a trajectory FIFO",
            vec![
                "trajectory".into(),
                "validate".into(),
                fifo("trajectory.json").into(),
            ],
            "named pipe",
        ),
    ];
    for (case, args, want) in cases {
        let run = bin()
            .args(&args)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(run.status.code().is_some(), "{case}: killed or hung");
        assert_ne!(run.status.code(), Some(0), "{case}: {stderr}");
        assert!(
            stderr.contains(want) || stdout.contains(want),
            "{case}: {stderr}{stdout}"
        );
    }
    // A FIFO among an agent folder's files: named, not read, and the rest read.
    let folder = root.path().join("agent");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(
        fixtures().join("predictions/demo.jsonl"),
        folder.join("predictions.jsonl"),
    )
    .unwrap();
    std::fs::copy(
        fixtures().join(
            "agents/transcripts/claude-code-session/3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9.jsonl",
        ),
        folder.join("acme_textkit_pr12.jsonl"),
    )
    .unwrap();
    for name in ["acme_calc_pr7.jsonl", "trajectory.json", "events.json"] {
        mkfifo(&folder.join(name));
    }
    // The transcript's captured diff, planted as a link to a file of this machine's: not read.
    let secret = root.path().join("secret.txt");
    write(&secret, "SECRET-OF-THIS-MACHINE\n");
    std::fs::create_dir_all(folder.join("patches")).unwrap();
    std::os::unix::fs::symlink(&secret, folder.join("patches/acme_textkit_pr12.diff")).unwrap();
    for command in ["ingest", "audit"] {
        let mut cmd = bin();
        cmd.arg(command).arg(&folder);
        if command == "ingest" {
            cmd.arg("-o").arg(root.path().join("from-folder.jsonl"));
        } else {
            cmd.arg("--json");
        }
        let run = cmd
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&run.stderr),
            String::from_utf8_lossy(&run.stdout)
        );
        assert!(
            run.status.code().is_some(),
            "{command} of a folder: killed or hung"
        );
        for name in ["acme_calc_pr7.jsonl", "trajectory.json", "events.json"] {
            assert!(
                said.lines()
                    .any(|l| l.contains(name) && l.contains("named pipe")),
                "{command} of a folder does not name {name}: {said}"
            );
        }
        assert!(
            said.contains("acme_textkit_pr12"),
            "{command} of a folder did not read the transcript: {said}"
        );
        if command == "ingest" {
            let preds =
                std::fs::read_to_string(root.path().join("from-folder.jsonl")).unwrap_or_default();
            assert!(!preds.contains("SECRET-OF-THIS-MACHINE"), "{preds}");
            assert!(said.contains("transcript only"), "{said}");
        }
    }
}

/// A merge's output keeps a marker until the merge is whole: what a killed merge (or one that
/// ran out of disk) leaves is refused by `report` and by a merge that takes it as a part,
/// naming it, instead of being shown as a whole run.
#[test]
fn a_merge_that_did_not_finish_is_no_run() {
    let root = tempfile::tempdir().unwrap();
    let meta = serde_json::to_string(&beyondswe::report::RunMeta::default()).unwrap();
    let half = root.path().join(".merged.merging-999999999");
    std::fs::create_dir_all(&half).unwrap();
    write(&half.join("run.json"), &meta);
    write(&half.join("results.jsonl"), "");
    write(&half.join("report.json"), "{}");
    write(&half.join(beyondswe::report::UNFINISHED_MERGE), "");
    let whole = root.path().join("whole");
    std::fs::create_dir_all(&whole).unwrap();
    for f in ["run.json", "results.jsonl", "report.json"] {
        std::fs::copy(half.join(f), whole.join(f)).unwrap();
    }
    for args in [
        vec!["report".into(), half.clone().into_os_string()],
        vec![
            "merge".into(),
            "-o".into(),
            root.path().join("again").into_os_string(),
            half.clone().into_os_string(),
            whole.clone().into_os_string(),
        ],
    ] {
        let out = bin()
            .args(&args)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.contains("did not finish"), "{args:?}: {stderr}");
    }
    let out = bin().arg("report").arg(&whole).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
