//! Audit throughput on a generated 320 MB release, as a ratio to a plain `jq -c .` pass over the
//! same file in the same run, with peak memory.
//!
//! Run with `cargo bench --bench audit` (needs `jq` and `/usr/bin/time`; `-- MB` sets the size).
//!
//! `cargo bench --bench audit -- shell` instead times `beyondswe audit` on one trajectory whose
//! only command is 10k, 100k and 1M unclosed `$(`, side by side: the ratios between sizes show
//! whether the shell reader stays linear. `BEYONDSWE_BIN` times another build of the binary.
//! Lines are ATIF trajectories of ~200 steps with shell commands, web fetches and searches, and
//! tool outputs of a few KB each (about 650 KB a line, like the published Codex release).

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::unwrap_used)]

use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

fn line(i: usize) -> String {
    let task = format!("pylons_pyramid_pr{}", 1000 + i);
    let mut steps =
        vec![json!({"step_id": 1, "source": "user", "message": "Fix the renderer. ".repeat(50)})];
    let output = "x".repeat(3000);
    for s in 0..200 {
        let (tool, args) = match s % 5 {
            0 => (
                "Bash",
                json!({"command": format!("cd /workspace && git  log --oneline -5 && grep -rn renderer src | head -{s}")}),
            ),
            1 => (
                "WebFetch",
                json!({"url": format!("https://github.com/Pylons/pyramid/issues/{s}")}),
            ),
            2 => (
                "WebSearch",
                json!({"query": format!("pyramid renderer bug {s}")}),
            ),
            3 if i.is_multiple_of(7) && s == 3 => (
                "Bash",
                json!({"command": format!("curl -sL https://github.com/pylons/pyramid/pull/{}.diff", 1000 + i)}),
            ),
            _ => (
                "Bash",
                json!({"command": "python -m pytest -q tests/test_renderers.py"}),
            ),
        };
        steps.push(json!({
            "step_id": s + 2, "source": "agent", "message": "Looking at the renderer.",
            "reasoning_content": "The renderer picks the wrong template. ".repeat(4),
            "tool_calls": [{"tool_call_id": format!("c{s}"), "function_name": tool, "arguments": args}],
            "observation": {"results": [{"source_call_id": format!("c{s}"), "content": output}]}
        }));
    }
    json!({"task_name": task, "task_type": "CrossRepo", "reward": (i % 2) as f64,
           "trajectory": {"schema_version": "ATIF-v1.6", "session_id": format!("s{i}"), "agent": {"name": "codex", "version": "0.118.0"}, "steps": steps}})
    .to_string()
}

fn timed(cmd: &mut Command) -> (f64, f64) {
    let rss = tempfile::NamedTempFile::new().unwrap();
    let mut wrapped = Command::new("/usr/bin/time");
    wrapped
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(rss.path())
        .arg(cmd.get_program())
        .args(cmd.get_args());
    let t = Instant::now();
    let status = wrapped
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    assert!(
        status.success() || status.code() == Some(1),
        "{:?} failed",
        cmd.get_program()
    );
    let kb: f64 = fs_err::read_to_string(rss.path())
        .unwrap()
        .trim()
        .lines()
        .last()
        .unwrap()
        .parse()
        .unwrap();
    (secs, kb / 1024.0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `beyondswe audit` on one ATIF trajectory whose command is `$(` repeated `n` times.
fn unclosed_substitutions(bin: &Path, dir: &Path) {
    println!("## Audit of unclosed `$(` chains\n");
    println!("| `$(` repeated | command bytes | median s | × previous size | peak RSS MB |");
    println!("|---:|---:|---:|---:|---:|");
    let mut previous: Option<f64> = None;
    for n in [10_000usize, 100_000, 1_000_000] {
        let command = "$(".repeat(n);
        let line = json!({"task_name": "o_r_pr1", "task_type": "CrossRepo", "reward": 0.0,
            "trajectory": {"schema_version": "ATIF-v1.6", "session_id": "s",
                "agent": {"name": "a", "version": "1"},
                "steps": [
                    {"step_id": 1, "source": "user", "message": "Fix it"},
                    {"step_id": 2, "source": "agent", "message": "", "tool_calls": [
                        {"tool_call_id": "c", "function_name": "Bash",
                         "arguments": {"command": command}}]}]}});
        let file = dir.join(format!("unclosed-{n}.jsonl"));
        fs_err::write(&file, format!("{line}\n")).unwrap();
        let runs: Vec<(f64, f64)> = (0..3)
            .map(|_| timed(Command::new(bin).args(["audit", "--json"]).arg(&file)))
            .collect();
        let secs = median(runs.iter().map(|r| r.0).collect());
        let rss = runs.iter().map(|r| r.1).fold(0.0, f64::max);
        let ratio = previous.map_or("–".to_owned(), |p| format!("{:.1}", secs / p));
        println!(
            "| {n} | {} | {secs:.3} | {ratio} | {rss:.1} |",
            command.len()
        );
        previous = Some(secs);
    }
    println!("\nlinear: 10× the input should take about 10× the time (goal: 100k under 1 s)");
}

fn main() {
    let bin_override = std::env::var_os("BEYONDSWE_BIN").map(std::path::PathBuf::from);
    if std::env::args().skip(1).any(|a| a == "shell") {
        let bin = bin_override.unwrap_or_else(|| env!("CARGO_BIN_EXE_beyondswe").into());
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        unclosed_substitutions(&bin, dir.path());
        return;
    }
    let mb: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(320);
    let bin = Path::new(env!("CARGO_BIN_EXE_beyondswe"));
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = dir.path().join("release.jsonl");
    let mut w = std::io::BufWriter::new(fs_err::File::create(&file).unwrap());
    let (mut size, mut n) = (0usize, 0usize);
    while size < mb * 1024 * 1024 {
        let l = line(n);
        size += l.len() + 1;
        writeln!(w, "{l}").unwrap();
        n += 1;
    }
    w.flush().unwrap();
    drop(w);
    eprintln!("release: {n} lines, {:.0} MB", size as f64 / 1048576.0);
    let (mut a, mut j, mut a_rss, mut j_rss) = (Vec::new(), Vec::new(), 0f64, 0f64);
    for round in 0..4 {
        let mut audit = Command::new(bin);
        audit.args(["audit", "--json"]).arg(&file);
        let mut jq = Command::new("jq");
        jq.arg("-c").arg(".").arg(&file);
        let order: [&mut Command; 2] = if round % 2 == 0 {
            [&mut audit, &mut jq]
        } else {
            [&mut jq, &mut audit]
        };
        let mut results = Vec::new();
        for c in order {
            results.push((c.get_program() == bin.as_os_str(), timed(c)));
        }
        if round == 0 {
            continue; // warm-up
        }
        for (is_audit, (secs, rss)) in results {
            if is_audit {
                a.push(secs);
                a_rss = a_rss.max(rss);
            } else {
                j.push(secs);
                j_rss = j_rss.max(rss);
            }
        }
    }
    let (a, j) = (median(a), median(j));
    println!(
        "## Audit throughput ({n} trajectories, {:.0} MB)\n",
        size as f64 / 1048576.0
    );
    println!("| command | median s | MB/s | peak RSS MB |");
    println!("|---|---:|---:|---:|");
    println!(
        "| `beyondswe audit --json` | {a:.2} | {:.0} | {a_rss:.1} |",
        size as f64 / 1048576.0 / a
    );
    println!(
        "| `jq -c .` | {j:.2} | {:.0} | {j_rss:.1} |",
        size as f64 / 1048576.0 / j
    );
    println!(
        "\naudit / jq = {:.2} (goal ≤ 1.0); audit peak RSS {a_rss:.1} MB (goal < 100 MB)",
        a / j
    );
}
