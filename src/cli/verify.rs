//! `beyondswe verify RELEASE_OR_JOBS_DIR --dataset DATASET`: grade every published patch and
//! compare the reward the release claims with the one measured.

use super::args::{DatasetArgs, LimitArgs, ResultsArgs, ScopeArgs};
use super::progress::Bar;
use super::{exit, out, outcome};
use anyhow::Result;
use beyondswe::record::Family;
use beyondswe::report::{Format, Stored, attempt_label, round2};
use beyondswe::run::{self, VerifySpec, disagrees};
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// A release (JSONL) or a Harbor jobs directory.
    pub(crate) path: PathBuf,
    #[command(flatten)]
    pub(crate) dataset: DatasetArgs,
    /// The run's name; its results go to RESULTS_DIR/RUN_ID.
    #[arg(long, default_value = "verify", value_parser = super::args::run_id)]
    pub(crate) run_id: String,
    #[command(flatten)]
    pub(crate) results: ResultsArgs,
    #[command(flatten)]
    pub(crate) scope: ScopeArgs,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

pub(crate) fn run(args: &VerifyArgs, quiet: bool) -> Result<i32> {
    let spec = VerifySpec {
        release: args.path.clone(),
        dataset: args.dataset.spec(&args.scope),
        store: args.results.store(&args.run_id),
        jobs: args.scope.jobs(),
        limits: args.limits.limits(),
    };
    let verified = run::verify(&spec, &Bar::new(quiet))?;
    let code = outcome::show(&verified.run, Format::Table)?;
    out(render(&verified.stored))?;
    Ok(if code != exit::SUCCESS {
        code
    } else if verified.disagreements().next().is_some() {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
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
            beyondswe::text::one_line(&attempt_label(&st.verdict.instance_id, st.attempt)),
            st.claimed_reward.unwrap_or_default(),
            st.verdict.score
        ));
    }
    s
}
