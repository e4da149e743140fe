//! Memory per reader: each reader of user files runs on an input of 1 MiB and of 8 MiB, and its
//! peak memory may grow by no more than its bound per byte added. The streaming readers
//! (`validate`, `convert to-harbor`, `audit`, `trajectory validate`) stay nearly flat; `ingest`,
//! which holds the predictions it writes, stays linear at a small factor. BENCHMARKS.md ("Memory
//! of the readers") has the table at larger sizes.
//!
//! The peak is the kernel's high-water mark of the child's own memory (`VmHWM` in
//! `/proc/PID/status`), read every millisecond until it exits: the mark never falls, so the last
//! reading misses at most what the reader grew in its final millisecond.

use super::support::fixtures;
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const MIB: usize = 1 << 20;

/// The child's peak resident memory in bytes, and whether it exited 0 or 1 (a reader's "done"
/// and "done, with problems found").
fn peak(args: &[&std::ffi::OsStr]) -> usize {
    let high = peak_if_read(args);
    assert!(high.is_some(), "{args:?}: no memory reading");
    high.unwrap_or_default()
}

/// [`peak`], or `None` when the child ended before its memory could be read once (within a
/// millisecond or so: too soon to have taken much).
pub(crate) fn peak_if_read(args: &[&std::ffi::OsStr]) -> Option<usize> {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("beyondswe"))
        .args(args)
        .env("BEYONDSWE_LOG", "off")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut high = 0;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_file)
            && let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        {
            high = high.max(kb * 1024);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(
        matches!(status.code(), Some(0 | 1)),
        "{args:?} ended with {status}"
    );
    (high > 0).then_some(high)
}

/// Lines made by `line(i)` until `size` bytes are written.
fn write_lines(path: &Path, size: usize, mut line: impl FnMut(usize) -> String) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let (mut written, mut i) = (0, 0);
    while written < size {
        let l = line(i);
        writeln!(out, "{l}").unwrap();
        written += l.len() + 1;
        i += 1;
    }
}

fn dataset(path: &Path, size: usize) {
    let text = std::fs::read_to_string(fixtures().join("dataset/fixtures.jsonl")).unwrap();
    let mut rec: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    write_lines(path, size, |i| {
        rec["instance_id"] = json!(format!("acme_calc_pr{}", i + 1000));
        rec.to_string()
    });
}

fn predictions(path: &Path, size: usize) {
    let patch = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
        .repeat(40);
    write_lines(path, size, |i| {
        json!({"instance_id": format!("acme_calc_pr{i}"), "model_name_or_path": "m", "model_patch": patch})
            .to_string()
    });
}

fn steps(n: usize, text: usize) -> Vec<Value> {
    (1..=n)
        .map(|k| {
            if k % 2 == 1 {
                return json!({"step_id": k, "source": "user", "message": "u".repeat(text)});
            }
            json!({"step_id": k, "source": "agent", "message": "m".repeat(text),
                   "tool_calls": [{"tool_call_id": format!("c{k}"), "function_name": "bash",
                                   "arguments": {"command": "grep -rn foo . | head"}}],
                   "observation": {"results": [{"source_call_id": format!("c{k}"), "content": "o".repeat(text)}]}})
        })
        .collect()
}

fn release(path: &Path, size: usize) {
    let steps = steps(40, 300);
    write_lines(path, size, |i| {
        json!({"task_name": format!("acme_calc_pr{i}"), "trial_name": format!("t{i}"), "reward": 0,
               "trajectory": {"schema_version": "ATIF-v1.6", "session_id": format!("s{i}"),
                              "agent": {"name": "a", "version": "1"}, "steps": steps}})
        .to_string()
    });
}

/// OpenHands evaluation output: a line per instance, its history long beside its small patch.
fn openhands(path: &Path, size: usize) {
    let history: Vec<Value> = (0..200)
        .map(|k| json!({"action": "run", "args": {"command": format!("echo {k} {}", "x".repeat(300))}}))
        .collect();
    write_lines(path, size, |i| {
        json!({"instance_id": format!("acme_calc_pr{i}"), "history": history,
               "test_result": {"git_patch": "diff --git a/x b/x\n"}, "metadata": {"llm_config": {"model": "m"}}})
        .to_string()
    });
}

fn trajectory(path: &Path, size: usize) {
    let doc = json!({"schema_version": "ATIF-v1.6", "session_id": "s",
                     "agent": {"name": "a", "version": "1"}, "steps": steps(size / 2100, 1000)});
    std::fs::write(path, doc.to_string()).unwrap();
}

type Maker = fn(&Path, usize);

/// One reader: its input, its command after the binary (`{in}` and `{dir}` filled in), and the
/// most its peak may grow per byte of input added.
struct Reader {
    name: &'static str,
    make: Maker,
    file: &'static str,
    args: &'static [&'static str],
    bound: f64,
}

const READERS: [Reader; 6] = [
    Reader {
        name: "validate",
        make: dataset,
        file: "d.jsonl",
        args: &["validate", "{in}"],
        bound: 0.25,
    },
    Reader {
        name: "convert to-harbor",
        make: dataset,
        file: "d.jsonl",
        args: &["convert", "to-harbor", "{in}", "{dir}/tasks", "--force"],
        bound: 0.5,
    },
    Reader {
        name: "ingest",
        make: predictions,
        file: "p.jsonl",
        args: &["ingest", "{in}", "-o", "{dir}/out.jsonl"],
        bound: 4.0,
    },
    // An agent's own output is read a line at a time: what is kept is each line's patch, not
    // its steps (the whole file was parsed into memory first: 139 MiB on a 60 MiB output).
    Reader {
        name: "ingest (OpenHands output)",
        make: openhands,
        file: "output.jsonl",
        args: &["ingest", "{in}", "-o", "{dir}/out.jsonl"],
        bound: 0.25,
    },
    Reader {
        name: "audit",
        make: release,
        file: "r.jsonl",
        args: &["audit", "{in}"],
        bound: 0.25,
    },
    Reader {
        name: "trajectory validate",
        make: trajectory,
        file: "t.json",
        args: &["trajectory", "validate", "{in}"],
        bound: 0.25,
    },
];

/// The reader's peak on an input of `size` bytes, and the input's exact size.
fn measure(r: &Reader, size: usize) -> (usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join(r.file);
    (r.make)(&input, size);
    let args: Vec<std::ffi::OsString> = r
        .args
        .iter()
        .map(|a| {
            a.replace("{in}", &input.display().to_string())
                .replace("{dir}", &dir.path().display().to_string())
                .into()
        })
        .collect();
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let bytes = std::fs::metadata(&input).unwrap().len() as usize;
    (peak(&args), bytes)
}

#[test]
fn every_reader_stays_within_its_memory_bound() {
    let mut report = Vec::new();
    let mut over = Vec::new();
    for r in &READERS {
        let (mut small, small_in) = measure(r, MIB);
        let (mut large, large_in) = measure(r, 8 * MIB);
        let slope = |small: usize, large: usize| {
            large.saturating_sub(small) as f64 / (large_in - small_in) as f64
        };
        // A peak is taken once; one that looks over its bound is taken again and each size's
        // higher peak kept: a small run that happened to peak low (18.0 MiB where it peaks at
        // 20.3, on a loaded machine) is not read as growth.
        if slope(small, large) > r.bound {
            small = small.max(measure(r, MIB).0);
            large = large.max(measure(r, 8 * MIB).0);
        }
        let per_byte = slope(small, large);
        let line = format!(
            "{}: {:.1} MiB on {:.1} MiB, {:.1} MiB on {:.1} MiB: {per_byte:.2} per byte added (bound {})",
            r.name,
            small as f64 / MIB as f64,
            small_in as f64 / MIB as f64,
            large as f64 / MIB as f64,
            large_in as f64 / MIB as f64,
            r.bound
        );
        if per_byte > r.bound {
            over.push(line.clone());
        }
        report.push(line);
    }
    eprintln!("{}", report.join("\n"));
    assert!(over.is_empty(), "over their bound:\n{}", over.join("\n"));
}

/// The trajectory reader streams: a trajectory eight times as long takes no more memory than the
/// short one plus a few MiB (the whole document, parsed, took about 3× its size).
#[test]
fn trajectory_validate_holds_one_step_at_a_time() {
    let r = &READERS[4];
    let (small, _) = measure(r, MIB);
    let (large, large_in) = measure(r, 16 * MIB);
    assert!(
        large < small + 4 * MIB,
        "{:.1} MiB on a {:.1} MiB trajectory, {:.1} MiB on a 1 MiB one",
        large as f64 / MIB as f64,
        large_in as f64 / MIB as f64,
        small as f64 / MIB as f64
    );
}
