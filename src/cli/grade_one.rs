//! `beyondswe grade-one`: grade one submission for one instance in a fresh container.

use super::args::{DatasetArgs, LimitArgs};
use super::progress::Bar;
use super::{exit, note, out};
use anyhow::{Result, bail};
use beyondswe::dataset::find_instance;
use beyondswe::grade::{Outcome, TestOutcome, Verdict};
use beyondswe::record::Family;
use beyondswe::run::{self, RunLimits};
use beyondswe::submission::{self, Submission, SubmissionError, Submitted};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(crate) struct GradeOneArgs {
    #[command(flatten)]
    pub(crate) dataset: DatasetArgs,
    /// The instance id.
    #[arg(long)]
    pub(crate) instance: String,
    /// The submission as a unified diff (an empty file is an empty patch).
    #[arg(long, conflicts_with = "repo", required_unless_present = "repo")]
    pub(crate) patch: Option<PathBuf>,
    /// Doc2Repo: the submitted repository, as a directory or a .tar, .tar.gz or .zip archive.
    #[arg(long)]
    pub(crate) repo: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) output_format: super::args::TableOrJson,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

/// Reads the submission (`--patch` or `--repo`) within the limits; `--repo` only for Doc2Repo.
fn read_submission(args: &GradeOneArgs, limits: &RunLimits, family: Family) -> Result<Submission> {
    let source = match (&args.patch, &args.repo) {
        (Some(path), _) => Submitted::PatchFile(path.clone()),
        (None, Some(path)) => Submitted::Repo(path.clone()),
        (None, None) => bail!("give --patch FILE or --repo DIR|ARCHIVE"),
    };
    match submission::read_submission(&source, &args.instance, family, &limits.read) {
        Err(SubmissionError::RepoNotDoc2Repo { instance, family }) => {
            bail!("--repo is for Doc2Repo instances; `{instance}` is {family}: pass --patch")
        }
        read => Ok(read?),
    }
}

pub(crate) fn run(args: &GradeOneArgs) -> Result<i32> {
    let limits = args.limits.limits();
    let dataset = &args.dataset;
    let instance = find_instance(
        &dataset.dataset,
        &args.instance,
        dataset.test_suites.as_deref(),
    )?;
    let submission = read_submission(args, &limits, instance.record.family())?;
    let Some(verdict) = run::grade_one(&instance, &submission, &limits, &Bar::new(true))? else {
        note("interrupted: containers removed");
        return Ok(exit::interrupted());
    };
    if args.output_format.json() {
        out(format!("{}\n", serde_json::to_string_pretty(&verdict)?))?;
    } else {
        out(render(&verdict))?;
    }
    if verdict.verdict == Outcome::Error && !verdict.logs.error.is_empty() {
        note(format!(
            "error: {}",
            verdict.logs.error.lines().next().unwrap_or_default()
        ));
    }
    // An error the input caused (an image not there, a suite not given) is the user's to fix:
    // exit 1 with the fix; any other error is the machine's, 3.
    let users_fix = verdict.reason.users_fix();
    if verdict.verdict == Outcome::Error
        && let Some(fix) = users_fix
    {
        note(format!("hint: {fix}"));
    }
    Ok(match (verdict.verdict, users_fix) {
        (Outcome::Error, Some(_)) => exit::FAILURE,
        (Outcome::Error, None) => exit::INFRASTRUCTURE,
        _ => exit::SUCCESS,
    })
}

fn outcome_word(o: TestOutcome) -> &'static str {
    match o {
        TestOutcome::Passed => "passed",
        TestOutcome::Failed => "FAILED",
        TestOutcome::Error => "ERROR",
        TestOutcome::Skipped => "skipped",
        TestOutcome::Xfailed => "xfailed",
        TestOutcome::NotRun => "not run",
        TestOutcome::Disputed => "DISPUTED",
    }
}

/// The verdict as a short human-readable report.
pub(crate) fn render(v: &Verdict) -> String {
    let (verdict, reason) = (v.verdict.as_str(), v.reason.as_str());
    let mut s = format!(
        "{}  {}  {verdict}  score {:.4}  ({reason})\n",
        beyondswe::text::one_line(&v.instance_id),
        v.family,
        v.score
    );
    for (title, tests) in [
        ("FAIL_TO_PASS", &v.fail_to_pass),
        ("PASS_TO_PASS", &v.pass_to_pass),
    ] {
        if !tests.is_empty() {
            s.push_str(&format!("{title}\n"));
            for (id, o) in tests {
                s.push_str(&format!("  {:<8} {id}\n", outcome_word(*o)));
            }
        }
    }
    if let Some(suite) = &v.suite {
        s.push_str(&format!(
            "suite: {} of {} passed ({} collected)\n",
            suite.passed, suite.expected, suite.collected
        ));
    }
    let f = &v.flags;
    for (name, list) in [
        ("tests touched", &f.tests_touched),
        ("tests restored", &f.tests_restored),
        ("files removed", &f.files_removed),
        ("config reverted", &f.config_reverted),
        ("kept for gold", &f.kept_for_gold),
        ("setup failed", &f.pre_commands_failed),
        ("not watched", &f.unwatched),
    ] {
        if !list.is_empty() {
            s.push_str(&format!("{name}: {}\n", list.join(", ")));
        }
    }
    if f.install_failed {
        s.push_str("pip install -e . failed; graded with the source on the path\n");
    }
    let timings: Vec<String> = v
        .timings
        .iter()
        .map(|(k, t)| format!("{k} {t:.2}s"))
        .collect();
    s.push_str(&format!("timings: {}\n", timings.join(", ")));
    s
}
