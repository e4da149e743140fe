//! What the canary groups cost: the test phase of every fixture instance's gold grading with the
//! groups planted and without them, interleaved in one run on the same prepared images (the
//! goal: at most 10% more). The test phase is what the verifier spends planting the groups and
//! running the tests (`canaries` + `tests` in its timings: the runner from start to kill).
//!
//! Then what the gold check costs once per instance (the grader runs it before an instance's first
//! grading and caches it): the check's time beside a whole warm grading of the same instance.
//! The bench empties the gold-check cache (`~/.cache/beyondswe/gold-checks`) first, so every
//! check is made in this run.
//!
//! Run with `cargo bench --bench canaries` (needs the Docker engine; builds the offline base and
//! fixture images first if they are missing). `-- N` sets the rounds (default 5). Prints
//! Markdown tables on stdout, progress on stderr.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::unwrap_used)]

mod common;

use beyondswe::grade::{self, GradeInput, GradeOptions, Outcome, Verdict};
use beyondswe::sandbox::DockerSandbox;
use common::{build_images, engine, gold_submissions, median, repetitions};

fn test_phase(v: &Verdict) -> f64 {
    ["canaries", "tests"]
        .iter()
        .map(|k| v.timings.get(*k).copied().unwrap_or_default())
        .sum()
}

fn main() {
    let rounds = repetitions(5);
    build_images();
    let (rt, sandbox) = engine();
    let with = GradeOptions {
        labels: DockerSandbox::process_labels("bench-canaries"),
        ..GradeOptions::default()
    };
    let without = GradeOptions {
        canary_groups: false,
        ..with.clone()
    };
    let checks = beyondswe::files::user_cache_home().join("beyondswe/gold-checks");
    if checks.is_dir() {
        fs_err::remove_dir_all(&checks).unwrap();
    }
    let mut check_rows = Vec::new();
    println!("## The canary groups' cost ({rounds} interleaved rounds, medians in seconds)\n");
    println!(
        "| instance | groups (sizes) | tests with groups | tests without | **with / without** |"
    );
    println!("|---|---|---:|---:|---:|");
    let mut ratios = Vec::new();
    for (rec, sub, suite) in gold_submissions() {
        let input = GradeInput {
            record: &rec,
            submission: &sub,
            test_suite: suite.as_deref(),
            image_override: None,
        };
        eprintln!("{} × {rounds}, with and without groups…", rec.instance_id());
        // Warm-up: prepares (or reuses) the image, once each way; the first makes the check.
        let mut check = None;
        for opts in [&with, &without] {
            let v = rt.block_on(grade::grade(&sandbox, input, opts));
            if check.is_none() {
                check = Some((
                    v.timings.get("gold_check").copied().unwrap_or_default(),
                    v.canary_plan.as_ref().and_then(|p| p.gold_check.clone()),
                ));
            }
            assert_eq!(
                v.verdict,
                Outcome::Resolved,
                "{}: {:?}",
                rec.instance_id(),
                v.reason
            );
        }
        let (mut on, mut off, mut sizes) = (Vec::new(), Vec::new(), String::new());
        let mut whole = Vec::new();
        for round in 0..rounds {
            // Alternate which goes first, so neither always runs on a warmer cache.
            let order = if round % 2 == 0 {
                [true, false]
            } else {
                [false, true]
            };
            for planted in order {
                let opts = if planted { &with } else { &without };
                let v = rt.block_on(grade::grade(&sandbox, input, opts));
                assert_eq!(
                    v.verdict,
                    Outcome::Resolved,
                    "{}: {:?}",
                    rec.instance_id(),
                    v.reason
                );
                eprintln!(
                    "  groups {planted}: {:?}",
                    ["canaries", "tests", "runner", "runner_ready"].map(|k| v
                        .timings
                        .get(k)
                        .copied()
                        .unwrap_or_default())
                );
                if planted {
                    let plan = v.canary_plan.as_ref().expect("a canary plan");
                    sizes = format!("{:?}", plan.sizes);
                    on.push(test_phase(&v));
                    whole.push(v.timings.get("total").copied().unwrap_or_default());
                } else {
                    off.push(test_phase(&v));
                }
            }
        }
        let (on, off) = (median(on), median(off));
        ratios.push(on / off);
        let (check_s, what) = check.unwrap_or_default();
        check_rows.push((
            rec.instance_id().to_owned(),
            check_s,
            median(whole),
            what.unwrap_or_default(),
        ));
        println!(
            "| {} | {sizes} | {on:.3} | {off:.3} | **{:.2}×** |",
            rec.instance_id(),
            on / off
        );
    }
    println!(
        "\nMedian over the instances: **{:.2}×** (goal: at most 1.10×).",
        median(ratios)
    );
    println!("\n## The gold check, once per instance (seconds)\n");
    println!(
        "| instance | the check | a warm grading, whole (median) | check / grading | groups rest on |"
    );
    println!("|---|---:|---:|---:|---|");
    for (id, check_s, whole, what) in check_rows {
        println!(
            "| {id} | {check_s:.3} | {whole:.3} | {:.2}× | {what} |",
            check_s / whole
        );
    }
}
