//! `beyondswe grade-one`: grade one submission for one instance in a fresh container.

use super::{exit, note, out};
use anyhow::{Context, Result, bail};
use beyondswe::dataset::{Instance, find_instance};
use beyondswe::grade::{self, GradeInput, GradeOptions, Outcome, TestOutcome, Verdict};
use beyondswe::patch;
use beyondswe::record::Family;
use beyondswe::sandbox::{DockerSandbox, Limits, Sandbox};
use beyondswe::submission::{
    self, DEFAULT_MAX_PATCH_BYTES, DEFAULT_MAX_TREE_BYTES, Submission, TreeLimits,
};
use clap::Args;
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub(crate) struct GradeOneArgs {
    /// The dataset: a BeyondSWE JSONL file or a directory of Harbor task directories.
    #[arg(long)]
    pub(crate) dataset: PathBuf,
    /// The instance id.
    #[arg(long)]
    pub(crate) instance: String,
    /// The submission as a unified diff (an empty file is an empty patch).
    #[arg(long, conflicts_with = "repo", required_unless_present = "repo")]
    pub(crate) patch: Option<PathBuf>,
    /// Doc2Repo: the submitted repository, as a directory or a .tar, .tar.gz or .zip archive.
    #[arg(long)]
    pub(crate) repo: Option<PathBuf>,
    /// Directory with the Doc2Repo test-suite zips.
    #[arg(long)]
    pub(crate) test_suites: Option<PathBuf>,
    /// Print the verdict as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

/// Container limits and timeouts, shared by the grading commands.
#[derive(Debug, Args, Clone)]
pub(crate) struct LimitArgs {
    /// Seconds the test command may run.
    #[arg(long, default_value_t = beyondswe::DEFAULT_TIMEOUT_SECS)]
    pub(crate) timeout: u64,
    /// Memory per container, in MB.
    #[arg(long, default_value_t = Limits::default().memory_mb)]
    pub(crate) memory_mb: u64,
    /// CPUs per container.
    #[arg(long, default_value_t = Limits::default().cpus)]
    pub(crate) cpus: f64,
    /// Processes per container (stops fork bombs).
    #[arg(long, default_value_t = Limits::default().pids)]
    pub(crate) pids: i64,
    /// What a container may write, in MiB (0: no limit): a storage quota where the engine's
    /// storage driver has one, else a watchdog on the container's size; over it is `disk_limit`.
    #[arg(long, default_value_t = Limits::default().disk_mb)]
    pub(crate) disk_mb: u64,
    /// Largest patch file read from disk (--patch, --patches DIR, Harbor trial artifacts), in MiB.
    #[arg(long, default_value_t = DEFAULT_MAX_PATCH_BYTES / (1024 * 1024))]
    pub(crate) max_patch_mb: u64,
    /// Largest size a Doc2Repo repository (directory or archive) may expand to, in MiB; its
    /// files wait in a temporary file on disk, never in memory.
    #[arg(long, default_value_t = DEFAULT_MAX_TREE_BYTES / (1024 * 1024))]
    pub(crate) max_repo_mb: u64,
}

impl Default for LimitArgs {
    fn default() -> Self {
        LimitArgs {
            timeout: beyondswe::DEFAULT_TIMEOUT_SECS,
            memory_mb: Limits::default().memory_mb,
            cpus: Limits::default().cpus,
            pids: Limits::default().pids,
            disk_mb: Limits::default().disk_mb,
            max_patch_mb: DEFAULT_MAX_PATCH_BYTES / (1024 * 1024),
            max_repo_mb: DEFAULT_MAX_TREE_BYTES / (1024 * 1024),
        }
    }
}

impl LimitArgs {
    /// `--max-patch-mb` in bytes.
    pub(crate) fn max_patch_bytes(&self) -> u64 {
        self.max_patch_mb.saturating_mul(1024 * 1024)
    }

    /// `--max-repo-mb` as tree limits.
    pub(crate) fn tree_limits(&self) -> TreeLimits {
        TreeLimits {
            max_total_bytes: self.max_repo_mb.saturating_mul(1024 * 1024),
            ..TreeLimits::default()
        }
    }

    pub(crate) fn options(&self, run_id: &str) -> GradeOptions {
        GradeOptions {
            limits: Limits {
                memory_mb: self.memory_mb,
                cpus: self.cpus,
                pids: self.pids,
                disk_mb: self.disk_mb,
            },
            test_timeout: Duration::from_secs(self.timeout),
            labels: DockerSandbox::process_labels(run_id),
            ..GradeOptions::default()
        }
    }
}

/// Reads the submission and checks it suits the family.
pub(crate) fn read_submission(args: &GradeOneArgs, family: Family) -> Result<Submission> {
    if let Some(path) = &args.patch {
        let bytes = submission::read_patch(path, args.limits.max_patch_bytes())?;
        let sub = Submission::Patch(bytes);
        if !sub.is_empty_patch()
            && let Submission::Patch(bytes) = &sub
            && let Err(e) = patch::parse(&String::from_utf8_lossy(bytes))
        {
            bail!("{}: not a unified diff: {e}", path.display());
        }
        return Ok(sub);
    }
    let Some(path) = &args.repo else {
        bail!("give --patch FILE or --repo DIR|ARCHIVE");
    };
    if family != Family::Doc2Repo {
        bail!(
            "--repo is for Doc2Repo instances; `{}` is {family}: pass --patch",
            args.instance
        );
    }
    Ok(Submission::Tree(submission::read_tree(
        path,
        args.limits.tree_limits(),
    )?))
}

pub(crate) fn run(args: &GradeOneArgs) -> Result<i32> {
    let instance = find_instance(&args.dataset, &args.instance, args.test_suites.as_deref())?;
    let submission = read_submission(args, instance.record.family())?;
    let runtime = super::runtime()?;
    let verdict = runtime.block_on(grade_with_ctrl_c(&instance, &submission, &args.limits))?;
    let Some(verdict) = verdict else {
        note("interrupted: containers removed");
        return Ok(exit::INTERRUPTED);
    };
    if args.json {
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
    Ok(if verdict.verdict == Outcome::Error {
        exit::INFRASTRUCTURE
    } else {
        exit::SUCCESS
    })
}

/// Connects, sweeps, builds the environment if needed, grades; Ctrl-C removes this run's
/// containers and returns `None`.
pub(crate) async fn grade_with_ctrl_c(
    instance: &Instance,
    submission: &Submission,
    limits: &LimitArgs,
) -> Result<Option<Verdict>> {
    let sandbox = connect().await?;
    let run_id = format!("one-{}", std::process::id());
    sweep_left_over(&sandbox).await;
    let opts = limits.options(&run_id);
    let image = match &instance.environment_to_build {
        Some(dir) => Some(
            build_environment(&sandbox, &instance.record.instance_id().to_lowercase(), dir).await?,
        ),
        None => None,
    };
    let input = GradeInput {
        record: &instance.record,
        submission,
        test_suite: instance.test_suite.as_deref(),
        image_override: image.as_deref(),
    };
    tracing::info!(instance = instance.record.instance_id(), "grading");
    let traced = grade::Traced(&sandbox);
    tokio::select! {
        v = grade::grade(&traced, input, &opts) => {
            tracing::info!(
                instance = v.instance_id.as_str(),
                verdict = ?v.verdict,
                reason = ?v.reason,
                score = v.score,
                "graded"
            );
            Ok(Some(v))
        }
        _ = tokio::signal::ctrl_c() => {
            let _ = sandbox.sweep(Some(&run_id)).await;
            Ok(None)
        }
    }
}

pub(crate) async fn connect() -> Result<DockerSandbox> {
    let sandbox = DockerSandbox::connect().await?;
    tracing::debug!("connected to the Docker engine");
    Ok(sandbox)
}

/// Removes what dead graders of this host left behind (said on stderr when there was any).
pub(crate) async fn sweep_left_over(sandbox: &DockerSandbox) {
    let swept = sandbox.sweep(None).await.unwrap_or(0);
    tracing::debug!(removed = swept, "swept containers left by dead graders");
    if swept > 0 {
        note(format!("removed {swept} container(s) left by earlier runs"));
    }
}

/// Builds a Harbor task's `environment/` (tagged by its content, so it is built once).
pub(crate) async fn build_environment(
    sandbox: &DockerSandbox,
    name: &str,
    dir: &std::path::Path,
) -> Result<String> {
    let tree = submission::read_tree(dir, TreeLimits::default())?;
    let tar = tree.to_tar()?;
    let digest = hex::encode(Sha256::digest(&tar));
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let tag = format!("beyondswe-env/{safe}:{}", &digest[..12]);
    if sandbox.image_id(&tag).await?.is_none() {
        note(format!("building {} as {tag}", dir.display()));
        tracing::info!(image = tag.as_str(), context = %dir.display(), "building an image");
        let labels = [("beyondswe.environment".to_owned(), name.to_owned())]
            .into_iter()
            .collect();
        sandbox
            .build_image(
                &tag,
                tar,
                &labels,
                Duration::from_secs(beyondswe::DEFAULT_TIMEOUT_SECS),
            )
            .await
            .with_context(|| format!("building {}", dir.display()))?;
        tracing::info!(image = tag.as_str(), "built");
    } else {
        tracing::debug!(
            image = tag.as_str(),
            "environment image present; not rebuilt"
        );
    }
    Ok(tag)
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
        v.instance_id, v.family, v.score
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
