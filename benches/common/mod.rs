//! What the engine-backed benches share: the fixture images, the engine, the gold submission of
//! every fixture instance, the repetitions asked for and the median.

#![allow(dead_code, clippy::unwrap_used)]

use beyondswe::record::{Family, Record, RecordReader};
use beyondswe::sandbox::DockerSandbox;
use beyondswe::submission::{Submission, TreeLimits, read_tree};
use std::path::PathBuf;

pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// The first number among the bench's arguments (`cargo bench --bench B -- N`), else `default`.
pub(crate) fn repetitions(default: usize) -> usize {
    std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(default)
}

/// The offline base and fixture images, built where missing (cached by tag).
pub(crate) fn build_images() {
    eprintln!("building images (cached by tag)…");
    let bin = root().join("target/release/beyondswe");
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(root().join("scripts/build-fixture-images.sh"));
    if bin.is_file() {
        cmd.env("BEYONDSWE_BIN", bin);
    }
    let status = cmd
        .stdout(std::process::Stdio::null())
        .status()
        .expect("bash runs");
    assert!(status.success(), "scripts/build-fixture-images.sh failed");
}

/// A runtime and the engine, for a bench that calls the async library.
pub(crate) fn engine() -> (tokio::runtime::Runtime, DockerSandbox) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let sandbox = rt
        .block_on(DockerSandbox::connect())
        .expect("Docker engine");
    (rt, sandbox)
}

/// Doc2Repo's reference repository among the fixtures.
pub(crate) fn minidoc_gold_tree() -> PathBuf {
    root().join("fixtures/submissions/minidoc_gold")
}

/// (instance, its gold submission, its hidden suite) for every fixture instance, or for every
/// instance of `BEYONDSWE_BENCH_DATASET` where that names a dataset (issue instances whose images
/// the engine has, such as those `scripts/make-bench-project.py` makes from real projects).
pub(crate) fn gold_submissions() -> Vec<(Record, Submission, Option<PathBuf>)> {
    // `BEYONDSWE_BENCH_SUITES`: where a bench dataset's Doc2Repo suites are (a suite made by
    // scripts/make-wide-suite.py), else the fixtures'.
    let suites = std::env::var_os("BEYONDSWE_BENCH_SUITES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("fixtures/test_suites"));
    let dataset = std::env::var_os("BEYONDSWE_BENCH_DATASET")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("fixtures/dataset/fixtures.jsonl"));
    RecordReader::open(&dataset)
        .expect("fixtures")
        .map(|r| r.expect("fixture record").1)
        .map(|rec| {
            let sub = if rec.family() == Family::Doc2Repo {
                Submission::Tree(
                    read_tree(&minidoc_gold_tree(), TreeLimits::default()).expect("gold tree"),
                )
            } else {
                Submission::Patch(rec.gold_patch().expect("gold").as_bytes().to_vec())
            };
            let suite = beyondswe::convert::find_test_suite(&rec, &suites);
            (rec, sub, suite)
        })
        .collect()
}
