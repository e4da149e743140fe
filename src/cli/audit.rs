//! `beyondswe audit RELEASE_OR_JOBS_DIR`: cheating checks on every trajectory, streamed.

use super::{exit, note, out};
use anyhow::Result;
use beyondswe::audit::{AuditOptions, Class, TaskInfo, TrajectoryAudit, audit_line, rescore};
use beyondswe::dataset::load_all;
use beyondswe::record::{Family, JsonLines};
use beyondswe::report::round2;
use clap::Args;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(crate) struct AuditArgs {
    /// A release (JSONL, one trajectory per line) or a Harbor jobs directory.
    pub(crate) path: PathBuf,
    /// The dataset: families, repositories (owner case) and prompts of the tasks.
    #[arg(long)]
    pub(crate) dataset: Option<PathBuf>,
    /// One JSON object per trajectory instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
    /// Search was not allowed in the run: `git clone` is forbidden too.
    #[arg(long)]
    pub(crate) search_disallowed: bool,
    /// Count tier B candidates as failures too in the corrected scores (after confirming them).
    #[arg(long)]
    pub(crate) count_tier_b: bool,
}

/// The lines of a release, or one synthetic line per Harbor trial.
pub(crate) fn for_each_line(
    path: &Path,
    mut f: impl FnMut(u64, Result<Value, String>),
) -> Result<()> {
    if path.is_dir() {
        for (n, (dir, result)) in beyondswe::harbor::trial_dirs(path).into_iter().enumerate() {
            let mut line = serde_json::Map::new();
            line.insert(
                "task_name".into(),
                result.get("task_name").cloned().unwrap_or(Value::Null),
            );
            if let Some(r) = result
                .get("verifier_result")
                .and_then(|v| v.get("rewards"))
                .and_then(|r| r.get("reward"))
            {
                line.insert("reward".into(), r.clone());
            }
            match fs_err::read_to_string(dir.join("agent/trajectory.json")) {
                Ok(text) => match serde_json::from_str::<Value>(&text) {
                    Ok(t) => {
                        line.insert("trajectory".into(), t);
                        f(n as u64 + 1, Ok(Value::Object(line)));
                    }
                    Err(e) => f(
                        n as u64 + 1,
                        Err(format!(
                            "{}: agent/trajectory.json is not JSON: {e}",
                            dir.display()
                        )),
                    ),
                },
                Err(_) => f(
                    n as u64 + 1,
                    Err(format!("{}: no agent/trajectory.json", dir.display())),
                ),
            }
        }
        return Ok(());
    }
    let mut lines = JsonLines::open(path)?;
    while let Some(item) = lines.next_value() {
        match item {
            Ok((n, v)) => f(n, Ok(v)),
            Err(e) => match e.line() {
                Some(n) => f(n, Err(e.to_string())),
                None => return Err(e.into()),
            },
        }
    }
    Ok(())
}

pub(crate) fn task_infos(dataset: Option<&Path>) -> Result<HashMap<String, TaskInfo>> {
    let Some(d) = dataset else {
        return Ok(HashMap::new());
    };
    Ok(load_all(d, None)?
        .into_iter()
        .map(|i| {
            let r = &i.record;
            let info = TaskInfo {
                family: Some(r.family()),
                repo: r
                    .repo()
                    .and_then(|x| x.owner.clone().map(|o| (o, x.name.clone()))),
                problem_statement: r.problem_statement().map(str::to_owned),
            };
            (r.instance_id().to_owned(), info)
        })
        .collect())
}

pub(crate) fn run(args: &AuditArgs) -> Result<i32> {
    let infos = task_infos(args.dataset.as_deref())?;
    let opts = AuditOptions {
        search_disallowed: args.search_disallowed,
    };
    let mut audits: Vec<TrajectoryAudit> = Vec::new();
    let mut bad = 0usize;
    let mut text = String::new();
    for_each_line(&args.path, |n, line| {
        let result = line.and_then(|v| {
            let name = v
                .get("task_name")
                .or(v.get("instance_id"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let info = infos.get(name).cloned().unwrap_or_default();
            audit_line(n, &v, &info, opts)
        });
        match result {
            Ok(mut a) => {
                // Keep the findings, not huge texts, in memory.
                for e in &mut a.evidence {
                    e.excerpt.truncate(600);
                }
                if args.json {
                    text.push_str(&serde_json::to_string(&a).unwrap_or_default());
                    text.push('\n');
                }
                audits.push(a);
            }
            Err(e) => {
                bad += 1;
                note(format!("{}:{n}: {e}", args.path.display()));
            }
        }
    })?;
    if !args.json {
        text.push_str(&format!(
            "{:<6} {:<52} {:<17} {:>6}  {}\n",
            "LINE", "TASK", "CLASS", "REWARD", "FINDINGS"
        ));
        for a in &audits {
            let mut findings: Vec<String> = a
                .blocklist_hits
                .iter()
                .map(|b| format!("blocklist: {b}"))
                .collect();
            if let Some(e) = a
                .evidence
                .iter()
                .find(|e| e.finding != "blocklist" && e.finding != "same_repo")
            {
                findings.push(format!("step {} {}: {}", e.step, e.tool, e.what));
            }
            let reward = a
                .reward
                .map(|r| format!("{r:.2}"))
                .unwrap_or_else(|| "-".into());
            text.push_str(&format!(
                "{:<6} {:<52} {:<17} {:>6}  {}\n",
                a.line,
                a.task_name,
                a.class.as_str(),
                reward,
                findings.join("; ")
            ));
        }
        text.push('\n');
        for class in [
            Class::TierA,
            Class::TierBCandidate,
            Class::SearchOnly,
            Class::PromptSupplied,
            Class::Clean,
        ] {
            text.push_str(&format!(
                "{:<17} {}\n",
                class.as_str(),
                audits.iter().filter(|a| a.class == class).count()
            ));
        }
        text.push_str(&format!(
            "{:<17} {}\n\n",
            "blocklist hits",
            audits
                .iter()
                .filter(|a| !a.blocklist_hits.is_empty())
                .count()
        ));
        text.push_str(&format!(
            "{:<11} {:>6} {:>10} {:>10} {:>7} {:>7}\n",
            "FAMILY", "TRAJ", "PUBLISHED", "CORRECTED", "TIER A", "TIER B"
        ));
        for r in rescore(&audits, args.count_tier_b) {
            text.push_str(&format!(
                "{:<11} {:>6} {:>10.2} {:>10.2} {:>7} {:>7}\n",
                r.family.as_str(),
                r.trajectories,
                round2(r.published),
                round2(r.corrected),
                r.tier_a_successes,
                r.tier_b_successes
            ));
        }
        if audits.iter().any(|a| a.family == Family::Unknown) {
            text.push_str("(trajectories without a known family are left out of the scores; pass --dataset)\n");
        }
    }
    out(text)?;
    if bad > 0 {
        note(format!(
            "{bad} line(s) could not be audited (see above); every other line was"
        ));
    }
    Ok(if bad > 0 {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
}
