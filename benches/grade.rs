//! Grading overhead: everything the grader does per submission except the pytest command itself,
//! beside the floor measured in the same run (a bare container create + start + remove, and one
//! exec round trip).
//!
//! Run with `cargo bench --bench grade` (needs the Docker engine; builds the offline base and
//! fixture images first if they are missing). Prints per-phase medians per fixture instance and a
//! Markdown summary on stdout, progress on stderr. `-- N` sets the repetitions (default 7).

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::unwrap_used)]

mod common;

use beyondswe::grade::{self, GradeInput, GradeOptions, Outcome, Verdict};
use beyondswe::sandbox::{ContainerSpec, DockerSandbox, ExecSpec, Limits, Sandbox};
use common::{build_images, engine, gold_submissions, median, repetitions};
use std::collections::BTreeMap;
use std::time::Instant;

async fn floor(sandbox: &DockerSandbox, runs: usize) -> (f64, f64) {
    let spec = ContainerSpec {
        image: "beyondswe/base:2".into(),
        workdir: None,
        labels: DockerSandbox::process_labels("bench-floor")
            .into_iter()
            .collect(),
        limits: Limits::default(),
    };
    let (mut lifecycle, mut exec) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = Instant::now();
        let c = sandbox.start(&spec).await.expect("start");
        let started = t.elapsed();
        for _ in 0..5 {
            let t = Instant::now();
            let out = sandbox
                .exec(&c, &ExecSpec::new(["true"]))
                .await
                .expect("exec");
            assert!(out.success());
            exec.push(t.elapsed().as_secs_f64());
        }
        let t = Instant::now();
        sandbox.remove(&c).await.expect("remove");
        lifecycle.push((started + t.elapsed()).as_secs_f64());
    }
    (median(lifecycle), median(exec))
}

fn overhead(v: &Verdict) -> f64 {
    v.timings.get("total").copied().unwrap_or_default()
        - v.timings.get("tests").copied().unwrap_or_default()
}

fn main() {
    let runs = repetitions(7);
    build_images();
    let (rt, sandbox) = engine();
    let opts = GradeOptions {
        labels: DockerSandbox::process_labels("bench-grade"),
        ..GradeOptions::default()
    };
    eprintln!(
        "floor: {runs} bare containers, {} exec round trips…",
        runs * 5
    );
    let (lifecycle, exec_rt) = rt.block_on(floor(&sandbox, runs));

    let mut rows = Vec::new();
    let mut all_overheads = Vec::new();
    for (rec, sub, suite) in gold_submissions() {
        eprintln!("grading {} × {runs}…", rec.instance_id());
        let input = GradeInput {
            record: &rec,
            submission: &sub,
            test_suite: suite.as_deref(),
            image_override: None,
        };
        // Cold: no prepared image yet (it is made and committed by this grade).
        let v = rt.block_on(grade::grade(&sandbox, input, &opts));
        if let Some(tag) = &v.prepared_image {
            let _ = std::process::Command::new("docker")
                .args(["rmi", "-f", tag])
                .output();
        }
        let v = rt.block_on(grade::grade(&sandbox, input, &opts));
        assert_eq!(
            v.verdict,
            Outcome::Resolved,
            "{}: {:?} {}",
            rec.instance_id(),
            v.reason,
            v.logs.error
        );
        let cold = overhead(&v);
        let mut phases: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        let mut overheads = Vec::new();
        for _ in 0..runs {
            let v = rt.block_on(grade::grade(&sandbox, input, &opts));
            assert_eq!(v.verdict, Outcome::Resolved);
            for (k, t) in &v.timings {
                phases.entry(k.clone()).or_default().push(*t);
            }
            overheads.push(overhead(&v));
        }
        all_overheads.extend(overheads.iter().copied());
        let med: BTreeMap<String, f64> = phases.into_iter().map(|(k, v)| (k, median(v))).collect();
        rows.push((
            rec.instance_id().to_owned(),
            rec.family(),
            med,
            median(overheads),
            cold,
        ));
    }

    // Host-side phases (start, upload, collect, remove) and the verifier's own (apply, scrub,
    // restore, install, tests: the test user's runner from start to kill).
    let phases = [
        "start", "upload", "apply", "scrub", "restore", "install", "tests", "verifier", "collect",
        "remove", "total",
    ];
    println!("## Grading overhead ({runs} runs per instance, medians in seconds)\n");
    println!(
        "| instance | family | {} | overhead | cold overhead |",
        phases.join(" | ")
    );
    println!("|---|---|{}---|---|", "---|".repeat(phases.len()));
    for (id, family, med, over, cold) in &rows {
        let cells: Vec<String> = phases
            .iter()
            .map(|p| format!("{:.3}", med.get(*p).copied().unwrap_or(0.0)))
            .collect();
        println!(
            "| {id} | {family} | {} | **{over:.3}** | {cold:.3} |",
            cells.join(" | ")
        );
    }
    println!(
        "\n`overhead` = total − tests with the prepared image cached (the normal case after an instance's first grade); `cold overhead` = the first grade of the instance, which also prepares (checkout, setup, history strip) and commits the prepared image."
    );
    let over = median(all_overheads);
    println!();
    println!("| figure | seconds |");
    println!("|---|---|");
    println!("| median grading overhead per submission (total − tests) | **{over:.3}** |");
    println!("| floor: bare container create + start + remove | {lifecycle:.3} |");
    println!("| floor: one exec round trip | {exec_rt:.3} |");
    println!(
        "| overhead / floor (create+start+remove) | {:.1}× |",
        over / lifecycle
    );
    println!("\nGoal: overhead ≤ 0.5 s median per instance.");
}
