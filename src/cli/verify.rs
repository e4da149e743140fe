//! `beyondswe verify RELEASE_OR_JOBS_DIR --dataset DATASET`: grade every published patch and
//! compare the reward the release claims with the one measured.

use super::args::{DatasetArgs, LimitArgs, ResultsArgs, ScopeArgs};
use super::grade::{exit_code, grade_and_show};
use super::{exit, note, out};
use anyhow::Result;
use beyondswe::files::write_atomic;
use beyondswe::record::{Family, JsonLines};
use beyondswe::report::{Format, Stored, attempt_label, read_run, round2};
use beyondswe::run::{RunSpec, Submissions};
use clap::Args;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// A release (JSONL) or a Harbor jobs directory.
    pub(crate) path: PathBuf,
    #[command(flatten)]
    pub(crate) dataset: DatasetArgs,
    /// The run's name; its results go to RESULTS_DIR/RUN_ID.
    #[arg(long, default_value = "verify")]
    pub(crate) run_id: String,
    #[command(flatten)]
    pub(crate) results: ResultsArgs,
    #[command(flatten)]
    pub(crate) scope: ScopeArgs,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

/// Release lines → predictions (with the claimed reward); lines without a patch are reported.
fn release_predictions(path: &std::path::Path, dest: &std::path::Path) -> Result<usize> {
    let mut lines = JsonLines::open(path)?;
    let mut attempts: HashMap<String, u32> = HashMap::new();
    let mut text = String::new();
    let mut n = 0;
    while let Some(item) = lines.next_value() {
        let (line, v) = match item {
            Ok(x) => x,
            Err(e) => {
                note(format!("warning: {e}"));
                continue;
            }
        };
        // The instance id when the release names it (Harbor's task name is the directory name).
        let Some(task) = v
            .get("instance_id")
            .or(v.get("task_name"))
            .and_then(Value::as_str)
        else {
            note(format!("warning: {}:{line}: no task_name", path.display()));
            continue;
        };
        let attempt = attempts.entry(task.to_owned()).or_insert(0);
        *attempt += 1;
        let patch = v
            .get("patch")
            .or(v.get("model_patch"))
            .and_then(Value::as_str);
        let b64 = v.get("patch_base64").and_then(Value::as_str);
        if patch.is_none() && b64.is_none() {
            note(format!(
                "{}:{line}: `{task}` carries no patch; not verifiable",
                path.display()
            ));
            continue;
        }
        let mut p = json!({"instance_id": task, "attempt": *attempt, "model_name_or_path": v.get("model").cloned().unwrap_or(Value::Null)});
        if let Some(t) = patch {
            p["model_patch"] = json!(t);
        } else if let Some(b) = b64 {
            p["model_patch_base64"] = json!(b);
        }
        if let Some(r) = v.get("reward") {
            p["reward"] = r.clone();
        }
        text.push_str(&p.to_string());
        text.push('\n');
        n += 1;
    }
    write_atomic(dest, text.as_bytes())?;
    Ok(n)
}

pub(crate) fn run(args: &VerifyArgs, quiet: bool) -> Result<i32> {
    let tmp = tempfile::tempdir()?;
    let predictions = if args.path.is_dir() {
        args.path.clone()
    } else {
        let p = tmp.path().join("release-predictions.jsonl");
        release_predictions(&args.path, &p)?;
        p
    };
    let spec = RunSpec {
        dataset: args.dataset.spec(&args.scope),
        submissions: Submissions::Predictions {
            path: predictions,
            format: None,
            patches: None,
        },
        store: args.results.store(&args.run_id),
        jobs: args.scope.jobs(),
        limits: args.limits.limits(),
        calibration: None,
        accept_suspected: Vec::new(),
    };
    let code = exit_code(&grade_and_show(&spec, Format::Table, quiet)?);
    let (_, stored) = read_run(&spec.store.dir())?;
    out(render(&stored))?;
    let disagree = stored.iter().filter(|s| disagrees(s)).count();
    Ok(if code != exit::SUCCESS {
        code
    } else if disagree > 0 {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
}

fn disagrees(s: &Stored) -> bool {
    s.claimed_reward
        .is_some_and(|c| (c - s.verdict.score).abs() > 1e-6)
}

fn render(stored: &[Stored]) -> String {
    let mut s = String::from("\nCLAIMED VS MEASURED\n");
    let mut by_family: BTreeMap<Family, (usize, f64, f64)> = BTreeMap::new();
    for st in stored.iter().filter(|s| s.claimed_reward.is_some()) {
        let e = by_family.entry(st.verdict.family).or_default();
        e.0 += 1;
        e.1 += st.claimed_reward.unwrap_or(0.0);
        e.2 += st.verdict.score;
    }
    s.push_str(&format!(
        "{:<11} {:>6} {:>9} {:>9}\n",
        "FAMILY", "N", "CLAIMED", "MEASURED"
    ));
    for (f, (n, c, m)) in &by_family {
        s.push_str(&format!(
            "{:<11} {:>6} {:>9.2} {:>9.2}\n",
            f.as_str(),
            n,
            round2(100.0 * c / *n as f64),
            round2(100.0 * m / *n as f64)
        ));
    }
    let list: Vec<&Stored> = stored.iter().filter(|s| disagrees(s)).collect();
    s.push_str(&format!("\n{} disagreement(s)\n", list.len()));
    for st in list {
        let reason = st.verdict.reason.as_str();
        s.push_str(&format!(
            "  {}: claimed {}, measured {:.4} ({reason})\n",
            attempt_label(&st.verdict.instance_id, st.attempt),
            st.claimed_reward.unwrap_or_default(),
            st.verdict.score
        ));
    }
    s
}
