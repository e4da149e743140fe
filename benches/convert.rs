//! Conversion benchmark: `beyondswe convert to-harbor` and `convert from-harbor` against `cp -r`.
//!
//! Run with `cargo bench --bench convert` (or `cargo bench --bench convert -- 500` for chosen
//! record counts). It works in a temporary directory under `target/tmp`, or under
//! `$BEYONDSWE_BENCH_DIR` to measure another filesystem; the 5,000-record size needs about 20 GB
//! there, because nothing is deleted until the end (see [`Runs`]). For each record count it
//!
//! 1. generates a deterministic BeyondSWE dataset: the paper's family mix (200 CrossRepo :
//!    72 DomainFix : 178 DepMigrate : 50 Doc2Repo per 500 records), ~30 KB problem statements
//!    with Unicode text, ~50 KB gold patches and a few KB of f2p patch as valid unified diffs,
//!    and 50 Doc2Repo test-suite zips of at least 200 KB, shared by name between the Doc2Repo
//!    records;
//! 2. checks it with `beyondswe validate` (untimed);
//! 3. times `to-harbor` against `cp -r` of the task tree, then `from-harbor` of that tree
//!    against `cp -r` again: one warm-up run of each command, then [`RUNS`] rounds that run the
//!    converter and `cp -r` back to back (median wall time; largest peak RSS from
//!    `/usr/bin/time -f %M`). Every run writes into a new directory on the same filesystem, and
//!    dirty pages are synced before it, outside the timing. The page cache is not dropped (that
//!    needs root): the figures are warm-cache figures, and the ratios to `cp -r` are what to
//!    compare across machines;
//! 4. checks that the round trip gave back one line per input record (untimed).
//!
//! It prints progress on stderr and a Markdown table with the goals on stdout.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use fs_err as fs;
use serde_json::json;
use std::ffi::OsString;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Record counts measured when none are given on the command line.
const DEFAULT_SIZES: [usize; 2] = [500, 5_000];
/// Timed runs per command (after one warm-up run); the median is reported.
const RUNS: usize = 3;
/// Families per block of 500 records, in the BeyondSWE proportions.
const MIX: [(&str, usize); 4] = [
    ("CrossRepo", 200),
    ("DomainFix", 72),
    ("DepMigrate", 178),
    ("Doc2Repo", 50),
];
/// Distinct Doc2Repo test suites; records beyond that share them by name.
const SUITES: usize = 50;
const STATEMENT_BYTES: usize = 30 * 1024;
const GOLD_PATCH_BYTES: usize = 50 * 1024;
const F2P_PATCH_BYTES: usize = 3 * 1024;
const SUITE_BYTES: usize = 200 * 1024;
const SEED: u64 = 0x5EED_BE70_0D5E;

/// Goals: at most this many times the `cp -r` time of the same tree …
const MAX_RATIO: f64 = 2.0;
/// … a peak RSS below this many MiB …
const MAX_RSS_MIB: f64 = 50.0;
/// … that grows by less than this fraction from the smallest to the largest record count.
const MAX_RSS_GROWTH: f64 = 0.10;

const TIME: &str = "/usr/bin/time";
const MIB: f64 = 1024.0 * 1024.0;

fn main() {
    let sizes = sizes_from_args();
    let bin = binary();
    let base = std::env::var_os("BEYONDSWE_BENCH_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")), PathBuf::from);
    let work = tempfile::Builder::new()
        .prefix("convert-bench-")
        .tempdir_in(&base)
        .expect("create the bench's temporary directory");
    eprintln!("working in {}", work.path().display());
    let suites = work.path().join("suites");
    write_suites(&suites);
    let rows: Vec<Row> = sizes
        .iter()
        .map(|&records| bench_size(&bin, work.path(), &suites, records))
        .collect();
    print_table(&rows);
    print_goals(&rows);
}

/// Record counts from the command line in increasing order (numbers only; cargo adds `--bench`),
/// else the defaults.
fn sizes_from_args() -> Vec<usize> {
    let mut sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|arg| arg.parse().ok())
        .collect();
    if sizes.is_empty() {
        return DEFAULT_SIZES.to_vec();
    }
    sizes.sort_unstable();
    sizes
}

/// The `beyondswe` binary cargo built for this bench (`target/release/beyondswe`).
fn binary() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_beyondswe"));
    assert!(
        bin.is_file(),
        "{} is missing: run `cargo build --release` first",
        bin.display()
    );
    assert!(
        Path::new(TIME).is_file(),
        "{TIME} is needed to measure peak RSS"
    );
    bin
}

// ---------------------------------------------------------------------------------------------
// One record count
// ---------------------------------------------------------------------------------------------

/// Everything measured for one record count.
struct Row {
    records: usize,
    dataset_bytes: u64,
    tree: TreeStats,
    to_harbor: Comparison,
    from_harbor: Comparison,
}

/// A conversion and `cp -r` of the same task tree, measured one after the other.
#[derive(Debug, Clone, Copy)]
struct Comparison {
    tool: Measurement,
    cp: Measurement,
}

impl Comparison {
    fn ratio(self) -> f64 {
        self.tool.secs / self.cp.secs
    }
}

fn bench_size(bin: &Path, work: &Path, suites: &Path, records: usize) -> Row {
    eprintln!("\n== {records} records");
    let runs = Runs::new(work.join(format!("runs-{records}")));
    let dataset = work.join(format!("dataset-{records}.jsonl"));
    write_dataset(&dataset, records);
    let dataset_bytes = fs::metadata(&dataset).expect("stat the dataset").len();
    validate(bin, &dataset, suites);

    // A first to-harbor run writes the tree that cp -r and from-harbor read.
    let first = runs.fresh_dir();
    let tasks = first.join("tasks");
    run_once(
        "to-harbor",
        &convert(bin, "to-harbor", &dataset, &tasks, suites),
        &first,
    );
    let tree = tree_stats(&tasks);
    eprintln!(
        "dataset {:.1} MB → tree {:.1} MB in {} files",
        dataset_bytes as f64 / MIB,
        tree.bytes as f64 / MIB,
        tree.files
    );
    let cp = |out: &Path| cp_r(&tasks, &out.join("copy"));

    let (to_harbor, _) = runs.compare(
        "to-harbor",
        |out| convert(bin, "to-harbor", &dataset, &out.join("tasks"), suites),
        cp,
    );
    let (from_harbor, out) = runs.compare(
        "from-harbor",
        |out| {
            let (jsonl, suites) = (out.join("back.jsonl"), out.join("suites"));
            convert(bin, "from-harbor", &tasks, &jsonl, &suites)
        },
        cp,
    );
    check_round_trip(
        &dataset,
        &out.join("back.jsonl"),
        &out.join("suites"),
        records,
    );
    Row {
        records,
        dataset_bytes,
        tree,
        to_harbor,
        from_harbor,
    }
}

/// `beyondswe convert <direction> <input> <output> --test-suites <suites>`.
fn convert(
    bin: &Path,
    direction: &str,
    input: &Path,
    output: &Path,
    suites: &Path,
) -> Vec<OsString> {
    vec![
        bin.into(),
        "convert".into(),
        direction.into(),
        input.into(),
        output.into(),
        "--test-suites".into(),
        suites.into(),
    ]
}

fn cp_r(from: &Path, to: &Path) -> Vec<OsString> {
    vec!["cp".into(), "-r".into(), from.into(), to.into()]
}

/// `beyondswe validate` must accept the generated dataset (patches parse, suites exist).
fn validate(bin: &Path, dataset: &Path, suites: &Path) {
    let output = Command::new(bin)
        .arg("validate")
        .arg(dataset)
        .arg("--test-suites")
        .arg(suites)
        .output()
        .expect("run beyondswe validate");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the generated dataset does not validate:\n{}{stderr}",
        String::from_utf8_lossy(&output.stdout)
    );
    eprint!("validate: {stderr}");
}

/// The round trip gives one line per input line and keeps every distinct suite.
fn check_round_trip(dataset: &Path, back: &Path, back_suites: &Path, records: usize) {
    let lines = |path: &Path| {
        let bytes = fs::read(path).expect("read a JSONL file");
        bytes.iter().filter(|&&b| b == b'\n').count()
    };
    let (input, output) = (lines(dataset), lines(back));
    assert_eq!(
        input, output,
        "from-harbor wrote {output} lines for {input} input lines"
    );
    let expected = doc2repo_count(records).min(SUITES);
    // With no Doc2Repo record (a small size) there is no suite to write, nor a directory.
    let suites = if expected == 0 && !back_suites.exists() {
        0
    } else {
        fs::read_dir(back_suites)
            .expect("list the suites from-harbor wrote")
            .count()
    };
    assert_eq!(suites, expected, "from-harbor kept {suites} suites");
    eprintln!("round trip: {output} lines, {suites} suites — ok");
}

// ---------------------------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
struct Measurement {
    /// Wall time of one run, or the median of several.
    secs: f64,
    /// Peak resident set size of one run, or the largest of several.
    peak_rss_kib: u64,
}

impl Measurement {
    fn rss_mib(self) -> f64 {
        self.peak_rss_kib as f64 * 1024.0 / MIB
    }
}

/// Gives every run of every command its own new output directory under `root`.
///
/// Nothing is deleted while measuring: on ext4 without a journal (the root filesystem of the VM
/// the figures in BENCHMARKS.md come from), creating files shortly after deleting many is several
/// times slower (inode allocation skips recently deleted inodes one by one), which would penalise
/// whatever runs after a clean-up. The bench's temporary directory is removed once, at the end.
struct Runs {
    root: PathBuf,
    next: std::cell::Cell<usize>,
}

impl Runs {
    fn new(root: PathBuf) -> Self {
        fs::create_dir_all(&root).expect("create the runs directory");
        Runs {
            root,
            next: std::cell::Cell::new(0),
        }
    }

    /// A new, empty directory for one run.
    fn fresh_dir(&self) -> PathBuf {
        let n = self.next.get();
        self.next.set(n + 1);
        let dir = self.root.join(format!("run-{n:03}"));
        fs::create_dir(&dir).expect("create a run directory");
        dir
    }

    /// Times `tool` against `cp`: one warm-up run of each, then [`RUNS`] rounds of one run of
    /// each, alternating which goes first, so that both see the same state of the machine.
    /// Returns the medians and the output directory of the tool's last run.
    fn compare(
        &self,
        name: &str,
        tool: impl Fn(&Path) -> Vec<OsString>,
        cp: impl Fn(&Path) -> Vec<OsString>,
    ) -> (Comparison, PathBuf) {
        let run = |name: &str, argv: &dyn Fn(&Path) -> Vec<OsString>| {
            let out = self.fresh_dir();
            (run_once(name, &argv(&out), &out), out)
        };
        run(name, &tool);
        run("cp -r", &cp);
        let (mut tool_runs, mut cp_runs, mut last) = (Vec::new(), Vec::new(), PathBuf::new());
        for round in 0..RUNS {
            let cp_first = round % 2 == 1;
            if cp_first {
                cp_runs.push(run("cp -r", &cp).0);
            }
            let (measurement, out) = run(name, &tool);
            tool_runs.push(measurement);
            last = out;
            if !cp_first {
                cp_runs.push(run("cp -r", &cp).0);
            }
        }
        let comparison = Comparison {
            tool: median(name, &tool_runs),
            cp: median("cp -r", &cp_runs),
        };
        eprintln!("{name} / cp -r = {:.2}", comparison.ratio());
        (comparison, last)
    }
}

/// The median wall time and the largest peak RSS of some runs.
fn median(name: &str, runs: &[Measurement]) -> Measurement {
    let mut secs: Vec<f64> = runs.iter().map(|m| m.secs).collect();
    secs.sort_by(f64::total_cmp);
    let median = Measurement {
        secs: secs[secs.len() / 2],
        peak_rss_kib: runs.iter().map(|m| m.peak_rss_kib).max().unwrap_or(0),
    };
    let all: Vec<String> = secs.iter().map(|s| format!("{s:.2}")).collect();
    eprintln!(
        "{name:<12} median {:.2} s (runs {}), peak RSS {:.1} MB",
        median.secs,
        all.join(", "),
        median.rss_mib()
    );
    median
}

/// Flushes dirty pages (untimed), then runs `argv` under `/usr/bin/time`, which writes the peak
/// RSS into `out`.
fn run_once(name: &str, argv: &[OsString], out: &Path) -> Measurement {
    sync();
    let rss_file = out.join("peak-rss.txt");
    let start = Instant::now();
    let output = Command::new(TIME)
        .args(["-f", "%M", "-o"])
        .arg(&rss_file)
        .args(argv)
        .output()
        .expect("run /usr/bin/time");
    let secs = start.elapsed().as_secs_f64();
    assert!(
        output.status.success(),
        "{name} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Measurement {
        secs,
        peak_rss_kib: read_peak_rss(&rss_file),
    }
}

/// `/usr/bin/time -f %M` writes the peak RSS in KiB as the last line.
fn read_peak_rss(path: &Path) -> u64 {
    let text = fs::read_to_string(path).expect("read the /usr/bin/time output");
    let last = text.lines().last().unwrap_or_default().trim();
    last.parse()
        .unwrap_or_else(|_| panic!("unexpected /usr/bin/time output {text:?}"))
}

fn sync() {
    let status = Command::new("sync").status().expect("run sync");
    assert!(status.success(), "sync failed");
}

struct TreeStats {
    bytes: u64,
    files: usize,
}

fn tree_stats(root: &Path) -> TreeStats {
    let mut stats = TreeStats { bytes: 0, files: 0 };
    for entry in walkdir::WalkDir::new(root) {
        let entry = entry.expect("walk the task tree");
        if entry.file_type().is_file() {
            stats.files += 1;
            stats.bytes += entry.metadata().expect("stat a task file").len();
        }
    }
    stats
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

fn print_table(rows: &[Row]) {
    println!();
    println!(
        "| records | dataset MB | tree MB | files | to-harbor s | cp -r s | ratio | peak RSS MB \
         | from-harbor s | cp -r s | ratio | peak RSS MB |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        println!(
            "| {} | {:.1} | {:.1} | {} | {} | {} |",
            r.records,
            r.dataset_bytes as f64 / MIB,
            r.tree.bytes as f64 / MIB,
            r.tree.files,
            cells(r.to_harbor),
            cells(r.from_harbor),
        );
    }
}

/// `tool s | cp -r s | ratio | peak RSS MB` of one direction.
fn cells(c: Comparison) -> String {
    format!(
        "{:.2} | {:.2} | {:.2}× | {:.1}",
        c.tool.secs,
        c.cp.secs,
        c.ratio(),
        c.tool.rss_mib()
    )
}

fn print_goals(rows: &[Row]) {
    let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
        return;
    };
    println!(
        "\nGoals: ratio ≤ {MAX_RATIO}×, peak RSS < {MAX_RSS_MIB} MB and not growing with the \
         record count (< {:.0}% from {} to {} records). MB = MiB.",
        MAX_RSS_GROWTH * 100.0,
        first.records,
        last.records
    );
    let to_harbor: Vec<Comparison> = rows.iter().map(|r| r.to_harbor).collect();
    let from_harbor: Vec<Comparison> = rows.iter().map(|r| r.from_harbor).collect();
    print_goal("to-harbor", &to_harbor);
    print_goal("from-harbor", &from_harbor);
}

/// The goals for one direction, over the record counts in increasing order.
fn print_goal(name: &str, runs: &[Comparison]) {
    let (Some(first), Some(last)) = (runs.first(), runs.last()) else {
        return;
    };
    let worst_ratio = runs.iter().map(|c| c.ratio()).fold(0.0, f64::max);
    let worst_rss = runs.iter().map(|c| c.tool.rss_mib()).fold(0.0, f64::max);
    let growth = last.tool.rss_mib() / first.tool.rss_mib() - 1.0;
    println!(
        "- {name}: worst ratio {worst_ratio:.2}× ({}), worst peak RSS {worst_rss:.1} MB ({}), \
         RSS growth {:+.0}% ({})",
        verdict(worst_ratio <= MAX_RATIO),
        verdict(worst_rss < MAX_RSS_MIB),
        growth * 100.0,
        verdict(growth < MAX_RSS_GROWTH),
    );
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}

// ---------------------------------------------------------------------------------------------
// Dataset generation
// ---------------------------------------------------------------------------------------------

/// SplitMix64: small, seeded and good enough for generating text.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn hex(&mut self, len: usize) -> String {
        (0..len)
            .map(|_| char::from(b"0123456789abcdef"[self.below(16)]))
            .collect()
    }
}

#[rustfmt::skip]
const WORDS: [&str; 64] = [
    "parser", "value", "config", "request", "session", "token", "buffer", "stream", "handler",
    "cache", "index", "schema", "record", "column", "table", "query", "result", "error", "option",
    "layout", "render", "widget", "event", "signal", "thread", "worker", "queue", "timeout",
    "retry", "client", "server", "payload", "header", "encoding", "decoder", "encoder", "locale",
    "format", "number", "string", "field", "model", "import", "module", "package", "version",
    "release", "deprecated", "argument", "keyword", "default", "missing", "invalid", "returns",
    "raises", "when", "the", "with", "and", "instead", "of", "after", "before", "because",
];
#[rustfmt::skip]
const UNICODE_WORDS: [&str; 16] = [
    "café", "naïve", "Größe", "données", "日本語", "テスト", "Ελληνικά", "русский", "→", "—", "😀", "✓",
    "€3.50", "−2", "Ω", "中文字符",
];

fn word(rng: &mut Rng) -> &'static str {
    if rng.below(10) == 0 {
        rng.pick(&UNICODE_WORDS)
    } else {
        rng.pick(&WORDS)
    }
}

fn ident(rng: &mut Rng) -> String {
    format!("{}_{}", rng.pick(&WORDS), rng.pick(&WORDS))
}

fn sentence(rng: &mut Rng) -> String {
    let words: Vec<&str> = (0..rng.range(6, 18)).map(|_| word(rng)).collect();
    let mut text = words.join(" ");
    if let Some(first) = text.get(..1) {
        let upper = first.to_ascii_uppercase();
        text.replace_range(..1, &upper);
    }
    text.push('.');
    text
}

fn paragraph(rng: &mut Rng) -> String {
    let sentences: Vec<String> = (0..rng.range(3, 7)).map(|_| sentence(rng)).collect();
    sentences.join(" ")
}

/// One line of plausible Python, indented, sometimes with Unicode in strings and comments.
fn code_line(rng: &mut Rng) -> String {
    let indent = "    ".repeat(rng.range(1, 3));
    match rng.below(6) {
        0 => format!(
            "{indent}{} = {}({}, {})",
            ident(rng),
            ident(rng),
            ident(rng),
            rng.below(1000)
        ),
        1 => format!(
            "{indent}if {} is not None and {} > {}:",
            ident(rng),
            ident(rng),
            rng.below(100)
        ),
        2 => format!("{indent}return self.{}({:?})", ident(rng), word(rng)),
        3 => format!("{indent}# {}", sentence(rng)),
        4 => format!(
            "{indent}raise ValueError(f\"{} {{{}!r}}\")",
            sentence(rng),
            ident(rng)
        ),
        _ => format!("{indent}self.{} = {}", ident(rng), ident(rng)),
    }
}

fn code_block(rng: &mut Rng) -> String {
    let lines: Vec<String> = (0..rng.range(5, 15)).map(|_| code_line(rng)).collect();
    format!("```python\n{}\n```", lines.join("\n"))
}

fn traceback(rng: &mut Rng) -> String {
    let mut text = String::from("```\nTraceback (most recent call last):\n");
    for _ in 0..rng.range(3, 8) {
        text.push_str(&format!(
            "  File \"/workspace/src/mod_{}.py\", line {}, in {}\n{}\n",
            rng.below(200),
            rng.range(1, 900),
            ident(rng),
            code_line(rng)
        ));
    }
    text.push_str(&format!("ValueError: {}\n```", sentence(rng)));
    text
}

/// An issue: a title, then paragraphs, code and tracebacks up to `target` bytes.
fn problem_statement(rng: &mut Rng, target: usize) -> String {
    let mut text = format!("{}\n\n", sentence(rng));
    while text.len() < target {
        let part = match rng.below(5) {
            0 => code_block(rng),
            1 => traceback(rng),
            _ => paragraph(rng),
        };
        text.push_str(&part);
        text.push_str("\n\n");
    }
    text
}

/// A Doc2Repo specification: numbered sections of prose and code up to `target` bytes.
fn specification(rng: &mut Rng, name: &str, target: usize) -> String {
    let mut text = format!("# {name} specification\n\n{}\n\n", paragraph(rng));
    let mut section = 1;
    while text.len() < target {
        text.push_str(&format!(
            "## {section}. {}\n\n{}\n\n{}\n\n",
            sentence(rng),
            paragraph(rng),
            code_block(rng)
        ));
        section += 1;
    }
    text
}

/// One hunk: context, a change block, context; the header counts come from the lines.
fn hunk(rng: &mut Rng, old_start: usize, new_start: usize) -> (String, usize, usize) {
    let mut lines = Vec::new();
    let context = |rng: &mut Rng| format!(" {}", code_line(rng));
    lines.extend((0..3).map(|_| context(rng)));
    lines.extend((0..rng.range(0, 8)).map(|_| format!("-{}", code_line(rng))));
    lines.extend((0..rng.range(1, 15)).map(|_| format!("+{}", code_line(rng))));
    lines.extend((0..3).map(|_| context(rng)));
    let old = lines.iter().filter(|l| !l.starts_with('+')).count();
    let new = lines.iter().filter(|l| !l.starts_with('-')).count();
    let text = format!(
        "@@ -{old_start},{old} +{new_start},{new} @@ def {}():\n{}\n",
        ident(rng),
        lines.join("\n")
    );
    (text, old, new)
}

/// A modification of `path` with a few hunks.
fn file_diff(rng: &mut Rng, path: &str) -> String {
    let mut text = format!(
        "diff --git a/{path} b/{path}\nindex {}..{} 100644\n--- a/{path}\n+++ b/{path}\n",
        rng.hex(7),
        rng.hex(7)
    );
    let mut old_start = rng.range(1, 40);
    let mut new_start = old_start;
    for _ in 0..rng.range(2, 6) {
        let (hunk, old, new) = hunk(rng, old_start, new_start);
        text.push_str(&hunk);
        let gap = rng.range(5, 80);
        old_start += old + gap;
        new_start += new + gap;
    }
    text
}

/// A new file `path` of `lines` lines.
fn new_file_diff(rng: &mut Rng, path: &str, lines: usize) -> String {
    let body: Vec<String> = (0..lines).map(|_| format!("+{}", code_line(rng))).collect();
    format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..{}\n--- /dev/null\n\
         +++ b/{path}\n@@ -0,0 +1,{lines} @@\n{}\n",
        rng.hex(7),
        body.join("\n")
    )
}

/// A patch of modifications to `<dir>/<prefix>N.py` files, at least `target` bytes long.
fn patch(rng: &mut Rng, dir: &str, prefix: &str, target: usize) -> String {
    let mut text = String::new();
    let mut file = rng.below(100);
    while text.len() < target {
        file += 1 + rng.below(5);
        text.push_str(&file_diff(rng, &format!("{dir}/{prefix}{file}.py")));
    }
    text
}

/// A whole-repository patch of new files (Doc2Repo's gold solution).
fn new_repo_patch(rng: &mut Rng, package: &str, target: usize) -> String {
    let mut text = String::new();
    let mut file = 0;
    while text.len() < target {
        let path = format!("{package}/part_{file}.py");
        let lines = rng.range(40, 200);
        text.push_str(&new_file_diff(rng, &path, lines));
        file += 1;
    }
    text
}

/// `min..=max` test ids as the dataset stores them: a JSON-encoded list in a string.
fn test_ids(rng: &mut Rng, min: usize, max: usize) -> String {
    let ids: Vec<String> = (0..rng.range(min, max))
        .map(|_| {
            let file = format!("tests/test_mod_{}.py", rng.below(60));
            match rng.below(4) {
                0 => format!("{file}::Test{}::test_{}", rng.below(30), ident(rng)),
                1 => format!(
                    "{file}::test_{}[{}-{}]",
                    ident(rng),
                    word(rng),
                    rng.below(9)
                ),
                _ => format!("{file}::test_{}", ident(rng)),
            }
        })
        .collect();
    serde_json::to_string(&ids).expect("serialize test ids")
}

fn family_of(index: usize) -> &'static str {
    let period: usize = MIX.iter().map(|(_, n)| n).sum();
    let mut slot = index % period;
    for (task, count) in MIX {
        if slot < count {
            return task;
        }
        slot -= count;
    }
    unreachable!("slot < period")
}

fn doc2repo_count(records: usize) -> usize {
    (0..records).filter(|&i| family_of(i) == "Doc2Repo").count()
}

/// Record `index` of every dataset: the same seed gives the same record at every size.
fn issue_record(index: usize, task: &str) -> serde_json::Value {
    let mut rng = Rng::new(SEED ^ index as u64);
    let owner = format!("org{}", rng.below(40));
    let name = format!("{}-{}", rng.pick(&WORDS), rng.pick(&WORDS));
    let id = format!("{owner}_{name}_pr{index}");
    let pre_commands = if task == "DepMigrate" {
        "pip install -e . && pip install 'newdep>=2'"
    } else {
        ""
    };
    let f2p_script = if task == "DepMigrate" && rng.below(3) == 0 {
        [code_line(&mut rng), code_line(&mut rng)].join("\n")
    } else {
        String::new()
    };
    json!({
        "instance_id": id,
        "task": task,
        "repo": format!("{owner}/{name}"),
        "base_commit": rng.hex(40),
        "workdir": format!("/workspace/{name}"),
        "image": format!("registry.example/beyondswe:{id}"),
        "language": "python",
        "problem_statement": problem_statement(&mut rng, STATEMENT_BYTES),
        "patch": patch(&mut rng, "src", "mod_", GOLD_PATCH_BYTES),
        "FAIL_TO_PASS": test_ids(&mut rng, 1, 20),
        "PASS_TO_PASS": test_ids(&mut rng, 20, 300),
        "f2p_patch": patch(&mut rng, "tests", "test_mod_", F2P_PATCH_BYTES),
        "f2p_script": f2p_script,
        "pre_commands": pre_commands,
    })
}

/// A Doc2Repo record; its suite is `suite_K.zip`, `K` = the record's rank among Doc2Repo records
/// modulo [`SUITES`].
fn doc2repo_record(index: usize, rank: usize) -> serde_json::Value {
    let mut rng = Rng::new(SEED ^ index as u64);
    let name = format!("{}{}", rng.pick(&WORDS), index);
    let commit = rng.hex(40);
    let spec = specification(&mut rng, &name, STATEMENT_BYTES);
    json!({
        "instance_id": format!("{name}_{commit}"),
        "task": "Doc2Repo",
        "repo": format!("docs/{name}"),
        "base_commit": commit,
        "workdir": format!("/workspace/{name}"),
        "image": format!("registry.example/beyondswe:{name}"),
        "language": "python",
        "problem_statement": spec,
        "REPO_DOCUMENT_CONTENT": spec,
        "patch": new_repo_patch(&mut rng, &name, GOLD_PATCH_BYTES),
        "FAIL_TO_PASS": "[]",
        "PASS_TO_PASS": "[]",
        "f2p_patch": "",
        "f2p_script": "",
        "pre_commands": "",
        "test_suite": suite_name(rank % SUITES),
        "test_suite_num": rng.range(10, 400),
    })
}

fn suite_name(k: usize) -> String {
    format!("suite_{k:02}.zip")
}

fn write_dataset(path: &Path, records: usize) {
    let started = Instant::now();
    let file = fs::File::create(path).expect("create the dataset");
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut rank = 0;
    for index in 0..records {
        let record = match family_of(index) {
            "Doc2Repo" => {
                rank += 1;
                doc2repo_record(index, rank - 1)
            }
            task => issue_record(index, task),
        };
        serde_json::to_writer(&mut out, &record).expect("write a record");
        out.write_all(b"\n").expect("write a record");
    }
    out.flush().expect("flush the dataset");
    eprintln!(
        "generated {records} records in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// [`SUITES`] test-suite zips of about [`SUITE_BYTES`] each: stored (uncompressed) Python test
/// files, so the archive really has that size.
fn write_suites(dir: &Path) {
    fs::create_dir_all(dir).expect("create the suites dir");
    for k in 0..SUITES {
        let mut rng = Rng::new(SEED ^ (0xD0C << 32) ^ k as u64);
        let file = fs::File::create(dir.join(suite_name(k))).expect("create a suite zip");
        let mut zip = zip::ZipWriter::new(file);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        let mut written = 0;
        let mut part = 0;
        while written < SUITE_BYTES {
            let lines: Vec<String> = (0..400).map(|_| code_line(&mut rng)).collect();
            let body = format!(
                "import pytest\n\n\ndef test_{part}():\n{}\n",
                lines.join("\n")
            );
            zip.start_file(format!("tests/test_part_{part}.py"), options)
                .expect("start a suite file");
            zip.write_all(body.as_bytes()).expect("write a suite file");
            written += body.len();
            part += 1;
        }
        zip.finish().expect("finish a suite zip");
    }
}
