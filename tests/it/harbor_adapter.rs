//! Harbor's adapter layout (`harbor/adapters/beyondswe/`): its entry point takes the flags
//! Harbor's adapter guide names and drives the binary; its task template is what the binary
//! writes; its parity files come from a parity run and its README's table says what they say.
//! No engine needed: the entry point only converts.

use super::support::{fixtures, repo_root};
use beyondswe::harbor::TaskToml;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn adapter_dir() -> PathBuf {
    repo_root().join("harbor/adapters/beyondswe")
}

/// `python3 -m beyondswe.main ARGS` from the adapter's source, the binary named by BEYONDSWE_BIN.
fn adapter(args: &[&str], out_dir: &Path) -> Output {
    Command::new("python3")
        .args(["-m", "beyondswe.main", "--dataset"])
        .arg(fixtures().join("dataset/fixtures.jsonl"))
        .arg("--test-suites")
        .arg(fixtures().join("test_suites"))
        .arg("--output-dir")
        .arg(out_dir)
        .args(args)
        .env("PYTHONPATH", adapter_dir().join("src"))
        .env("BEYONDSWE_BIN", env!("CARGO_BIN_EXE_beyondswe"))
        .output()
        .expect("python3 runs")
}

fn task_dirs(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.map(|e| e.unwrap())
                .filter(|e| e.path().join("task.toml").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn the_entry_point_takes_harbors_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("datasets/beyondswe");
    // --limit: the first N records, in the dataset's order.
    let o = adapter(&["--limit", "2"], &out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(task_dirs(&out), ["acme_calc_pr7", "acme_textkit_pr12"]);
    assert!(out.join("dataset.toml").is_file());
    let toml =
        TaskToml::parse(&std::fs::read_to_string(out.join("acme_calc_pr7/task.toml")).unwrap())
            .unwrap();
    assert_eq!(toml.verifier.environment_mode.as_deref(), Some("separate"));

    // --task-ids: only those; existing directories are kept without --overwrite.
    let marker = out.join("acme_calc_pr7/instruction.md");
    std::fs::write(&marker, "edited").unwrap();
    let o = adapter(
        &[
            "--task-ids",
            "acme_calc_pr7",
            "minidoc_ac79166631ba81556e3f40c05aa8d00fe9178ca6",
        ],
        &out,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("1 task(s) written") && stderr(&o).contains("1 already there"));
    assert_eq!(task_dirs(&out).len(), 3);
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "edited");

    // --overwrite replaces them.
    let o = adapter(&["--task-ids", "acme_calc_pr7", "--overwrite"], &out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(std::fs::read_to_string(&marker).unwrap(), "edited");

    // --verifier shared: the layout for Harbor 0.1.x.
    let shared = tmp.path().join("shared");
    let o = adapter(&["--limit", "1", "--verifier", "shared"], &shared);
    assert!(o.status.success(), "{}", stderr(&o));
    let toml =
        TaskToml::parse(&std::fs::read_to_string(shared.join("acme_calc_pr7/task.toml")).unwrap())
            .unwrap();
    assert_eq!(toml.verifier.environment_mode, None);
}

#[test]
fn the_entry_point_names_what_is_wrong() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = adapter(&["--task-ids", "no_such_instance"], &out);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no_such_instance"), "{}", stderr(&o));
    let o = adapter(&["--limit", "-1"], &out);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--limit"), "{}", stderr(&o));
    // No binary: says how to get one.
    let o = Command::new("python3")
        .args(["-m", "beyondswe.main", "--dataset"])
        .arg(fixtures().join("dataset/fixtures.jsonl"))
        .arg("--output-dir")
        .arg(&out)
        .env("PYTHONPATH", adapter_dir().join("src"))
        .env("PATH", "/usr/bin:/bin")
        .env_remove("BEYONDSWE_BIN")
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("BEYONDSWE_BIN"), "{}", stderr(&o));
    // A bad dataset line names the file and line.
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"instance_id\": \"a\"}\n[1, 2]\n").unwrap();
    let o = Command::new("python3")
        .args(["-m", "beyondswe.main", "--dataset"])
        .arg(&bad)
        .arg("--output-dir")
        .arg(&out)
        .env("PYTHONPATH", adapter_dir().join("src"))
        .env("BEYONDSWE_BIN", env!("CARGO_BIN_EXE_beyondswe"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("bad.jsonl:2"), "{}", stderr(&o));
}

/// `task-template/` is the binary's output for the calc fixture, file for file.
#[test]
fn the_task_template_is_what_the_binary_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let o = adapter(&["--task-ids", "acme_calc_pr7"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let template = adapter_dir().join("src/beyondswe/task-template");
    let mut n = 0;
    for e in walkdir::WalkDir::new(&template) {
        let e = e.unwrap();
        if !e.file_type().is_file() {
            continue;
        }
        let rel = e.path().strip_prefix(&template).unwrap();
        let written = tmp.path().join("acme_calc_pr7").join(rel);
        assert_eq!(
            std::fs::read(e.path()).unwrap(),
            std::fs::read(&written).unwrap_or_default(),
            "src/beyondswe/task-template/{} differs from what the binary writes (copy it again from a conversion of acme_calc_pr7)",
            rel.display()
        );
        n += 1;
    }
    // Harbor's template names these five; test_config.json is ours.
    assert_eq!(n, 6);
}

/// The committed parity files are `beyondswe parity`'s output (its fields and their invariants),
/// and the adapter README's table states their numbers.
#[test]
fn the_parity_files_are_a_parity_runs_and_the_readme_says_what_they_say() {
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(adapter_dir().join(name)).unwrap()).unwrap()
    };
    let parity = read("parity_experiment.json");
    let readme = std::fs::read_to_string(adapter_dir().join("README.md")).unwrap();
    let experiments = parity.as_array().unwrap();
    assert!(!experiments.is_empty());
    for e in experiments {
        let n = e["number_of_runs"].as_u64().unwrap() as usize;
        let m = &e["metrics"][0];
        let runs = |k: &str| -> Vec<f64> {
            m[k].as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        };
        let (orig, harbor) = (runs("original_runs"), runs("harbor_runs"));
        assert_eq!((orig.len(), harbor.len()), (n, n), "{e:#}");
        assert_eq!(m["original"], beyondswe::run::mean_sem(&orig).as_str());
        assert_eq!(m["harbor"], beyondswe::run::mean_sem(&harbor).as_str());
        let row = format!(
            "| {} | {} | mean reward | {n} | {} | {} | {} |",
            e["agent"].as_str().unwrap(),
            e["model"].as_str().unwrap(),
            e["parity_benchmark_size"],
            m["original"].as_str().unwrap(),
            m["harbor"].as_str().unwrap()
        );
        assert!(readme.contains(&row), "the README's table lacks:\n{row}");
    }
    let meta = read("adapter_metadata.json");
    assert_eq!(meta[0]["adapter_name"], "beyondswe");
    assert!(
        meta[0]["harbor_adapter"][0]["adapted_benchmark_size"]
            .as_u64()
            .unwrap()
            > 0
    );
}

/// The checks of Harbor's structural adapter review (its `scripts/validate_adapter.py`, which
/// `harbor adapter review` runs only inside a Harbor checkout), each as an assertion here: no
/// error, and no warning but the two the README names (builders without an e-mail address, PR
/// links not filled in).
#[test]
fn the_adapter_passes_harbors_structural_review_checks() {
    let d = adapter_dir();
    let text =
        |rel: &str| std::fs::read_to_string(d.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    for f in [
        "README.md",
        "parity_experiment.json",
        "adapter_metadata.json",
    ] {
        assert!(d.join(f).is_file(), "{f}");
    }
    assert!(!d.join("parity_experiments.json").exists());
    // src/<adapter id with _>/ holds adapter.py, main.py and task-template/ with Harbor's five.
    let pkg = d.join("src/beyondswe");
    for f in ["adapter.py", "main.py", "__init__.py"] {
        assert!(pkg.join(f).is_file(), "src/beyondswe/{f}");
    }
    assert!(!d.join("template").exists() && !d.join("task-template").exists());
    let tpl = pkg.join("task-template");
    for f in [
        "task.toml",
        "instruction.md",
        "environment/Dockerfile",
        "tests/test.sh",
        "solution/solve.sh",
    ] {
        assert!(tpl.join(f).is_file(), "task-template/{f}");
    }
    assert!(text("src/beyondswe/task-template/tests/test.sh").contains("/logs/verifier/reward"));
    // [task] with `name = "…"` and `authors = [` in its body, as the review reads them.
    let toml = text("src/beyondswe/task-template/task.toml");
    let body: String = toml
        .split("\n[task]\n")
        .nth(1)
        .expect("a [task] table")
        .lines()
        .take_while(|l| !l.trim_start().starts_with('['))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(body.lines().any(|l| l.starts_with("name = \"")), "{body}");
    assert!(body.lines().any(|l| l.starts_with("authors = [")), "{body}");
    // README: every section of the template, in its order; a 7-column parity table; a command
    // in the parity section; BibTeX under Citation; no placeholder left.
    let readme = text("README.md");
    let headings: Vec<&str> = readme.lines().filter(|l| l.starts_with("## ")).collect();
    let want = [
        "## Overview",
        "## What is",
        "## Adapter Features",
        "## Generated Task Structure",
        "## Run Evaluation",
        "## Usage",
        "## Comparison with Original Benchmark",
        "## Notes & Caveats",
        "## Installation / Prerequisites",
        "## Troubleshooting",
        "## Citation",
        "## Authors & Contributions",
        "## Acknowledgement",
    ];
    let mut at = 0;
    for w in want {
        let found = headings[at..].iter().position(|h| h.starts_with(w));
        assert!(
            found.is_some(),
            "README: `{w}` missing or out of order in {headings:?}"
        );
        at += found.unwrap_or(0) + 1;
    }
    let header = readme
        .lines()
        .find(|l| {
            let cols: Vec<&str> = l.split('|').map(str::trim).collect();
            ["Agent", "Model", "Metric"]
                .iter()
                .all(|c| cols.contains(c))
        })
        .expect("a parity table with Agent | Model | Metric");
    assert!(
        header.split('|').filter(|c| !c.trim().is_empty()).count() >= 7,
        "{header}"
    );
    let section = |name: &str| -> String {
        readme
            .split("\n## ")
            .find(|s| s.starts_with(name))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(section("Comparison with Original Benchmark").contains("```"));
    assert!(section("Citation").contains("@misc{") || section("Citation").contains("@article{"));
    assert!(!readme.contains("{{ADAPTER_ID}}") && !readme.contains("{{BENCHMARK_NAME}}"));
    // parity_experiment.json: the fields, the runs (two or more, as many as number_of_runs),
    // PR links a list or null, never an empty list or a string.
    let parity: Value = serde_json::from_str(&text("parity_experiment.json")).unwrap();
    let parity = parity.as_array().unwrap();
    assert!(!parity.is_empty());
    for e in parity {
        for k in ["adapter_name", "agent", "model", "date", "metrics"] {
            assert!(e.get(k).is_some(), "parity: {k} in {e:#}");
        }
        for k in ["adapter_pr", "dataset_pr", "parity_pr"] {
            match &e[k] {
                Value::Null => {}
                Value::Array(urls) => {
                    assert!(!urls.is_empty(), "parity: {k} is an empty list");
                    assert!(
                        urls.iter()
                            .all(|u| u.as_str().is_some_and(|u| u.starts_with("https://")))
                    );
                }
                other => panic!("parity: {k} = {other}"),
            }
        }
        assert!(e.get("number_of_trials").is_none());
        let n = e["number_of_runs"].as_u64().unwrap() as usize;
        for m in e["metrics"].as_array().unwrap() {
            assert!(m.get("benchmark_name").is_some() && m.get("metric").is_some());
            assert!(m.get("original").is_some() && m.get("harbor").is_some());
            for k in ["original_runs", "harbor_runs"] {
                let runs = m[k].as_array().unwrap();
                assert!(runs.len() >= 2 && runs.len() == n, "{k}: {runs:?}");
            }
        }
    }
    // adapter_metadata.json: the fields, the sizes, and agreement with the parity file.
    let meta: Value = serde_json::from_str(&text("adapter_metadata.json")).unwrap();
    let meta = meta.as_array().unwrap();
    assert!(!meta.is_empty());
    for m in meta {
        for k in [
            "adapter_name",
            "adapter_builders",
            "original_benchmark",
            "harbor_adapter",
        ] {
            assert!(m.get(k).is_some(), "metadata: {k}");
        }
        assert!(!m["adapter_builders"].as_array().unwrap().is_empty());
        assert!(
            parity
                .iter()
                .all(|p| p["adapter_name"] == m["adapter_name"])
        );
        for h in m["harbor_adapter"].as_array().unwrap() {
            for k in [
                "adapted_benchmark_size",
                "parity_benchmark_size",
                "parity_sampling_rate",
                "registry_benchmark_size",
            ] {
                assert!(h.get(k).is_some(), "metadata: harbor_adapter.{k}");
            }
            assert!(!h["parity_costs"].is_null());
            for p in parity {
                assert_eq!(p["parity_benchmark_size"], h["parity_benchmark_size"]);
                assert_eq!(p["adapted_benchmark_size"], h["adapted_benchmark_size"]);
            }
        }
    }
    // No canary string in any of the adapter's text files.
    for e in walkdir::WalkDir::new(&d) {
        let e = e.unwrap();
        if e.file_type().is_file()
            && let Ok(t) = std::fs::read_to_string(e.path())
        {
            assert!(!t.contains("canary GUID"), "{}", e.path().display());
        }
    }
}
