//! `beyondswe audit PATH`: cheating checks on every trajectory, streamed. PATH is a release
//! (JSONL, one trajectory a line), a raw Claude Code or Codex transcript, a directory of
//! transcripts, or a Harbor jobs directory (each trial's raw agent log, else its ATIF trajectory).

use super::{exit, note, out};
use anyhow::Result;
use beyondswe::audit::{
    AuditOptions, Class, TaskInfo, Trajectory, TrajectoryAudit, audit_line, audit_transcript,
    rescore,
};
use beyondswe::dataset::load_all;
use beyondswe::record::{Family, JsonLines};
use beyondswe::report::round2;
use beyondswe::submission::{
    Transcript, instance_from_file_name, read_transcript, read_transcripts, sniff,
};
use clap::Args;
use serde_json::Value;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(crate) struct AuditArgs {
    /// A release (JSONL, one trajectory per line), a Claude Code or Codex transcript, a directory
    /// of transcripts, or a Harbor jobs directory.
    pub(crate) path: PathBuf,
    /// The instance a single transcript file is about (else its file name says).
    #[arg(long)]
    pub(crate) instance: Option<String>,
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

/// One trajectory to audit: a release line, or a raw transcript with what is known about it.
pub(crate) enum Item {
    Line(Value),
    /// A trial of one of Harbor's own agents (`oracle`, `nop`): no model ran, so there is no
    /// trajectory, and nothing to audit; the reason, for a person.
    NothingToAudit(String),
    Transcript {
        task_name: String,
        reward: Option<f64>,
        source: String,
        transcript: Box<Transcript>,
    },
}

/// The first non-empty line of a file, parsed (a release line names its task; a transcript's
/// records do not).
fn first_record(path: &Path) -> Option<Value> {
    let file = fs_err::File::open(path).ok()?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).ok()? == 0 {
            return None;
        }
        if !buf.iter().all(u8::is_ascii_whitespace) {
            return serde_json::from_slice(buf.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&buf)).ok();
        }
    }
}

fn is_release_line(v: &Value) -> bool {
    v.get("task_name").is_some() || v.get("instance_id").is_some()
}

/// A raw transcript file: read it whole, name its instance.
fn transcript_item(path: &Path, instance: Option<&str>) -> Result<Item, String> {
    let task_name = instance
        .map(str::to_owned)
        .or_else(|| instance_from_file_name(path))
        .ok_or_else(|| {
            format!(
                "{}: the file name does not say which instance this transcript is about (name it <instance_id>.jsonl, or pass --instance)",
                path.display()
            )
        })?;
    let transcript = read_transcript(path).map_err(|e| e.to_string())?;
    Ok(Item::Transcript {
        task_name,
        reward: None,
        source: path.display().to_string(),
        transcript: Box::new(transcript),
    })
}

/// A Harbor trial: its agent's raw log when it left one, else its ATIF trajectory.
fn trial_item(dir: &Path, result: &Value) -> Result<Item, String> {
    let task_name = result.get("task_name").and_then(Value::as_str);
    if let Some(files) = beyondswe::harbor::trial_agent_log(dir)
        && files
            .first()
            .is_some_and(|f| matches!(sniff(f), Ok(Some(_))))
        && let Some(task) = task_name
    {
        let transcript = read_transcripts(&files).map_err(|e| e.to_string())?;
        return Ok(Item::Transcript {
            task_name: task.to_owned(),
            reward: beyondswe::harbor::trial_reward(result),
            source: files[0].display().to_string(),
            transcript: Box::new(transcript),
        });
    }
    let mut line = serde_json::Map::new();
    line.insert(
        "task_name".into(),
        result.get("task_name").cloned().unwrap_or(Value::Null),
    );
    if let Some(r) = beyondswe::harbor::trial_reward(result) {
        line.insert("reward".into(), r.into());
    }
    let traj = dir.join("agent/trajectory.json");
    if let Some(agent) = beyondswe::harbor::built_in_agent(result)
        && !traj.exists()
    {
        return Ok(Item::NothingToAudit(format!(
            "{}: Harbor's own `{agent}` agent runs no model and leaves no trajectory; nothing to audit",
            dir.display()
        )));
    }
    let text = fs_err::read_to_string(&traj).map_err(|_| {
        format!(
            "{}: no agent log (agent/claude-code.txt, agent/codex.txt, agent/sessions/) and no agent/trajectory.json",
            dir.display()
        )
    })?;
    let t = serde_json::from_str::<Value>(&text)
        .map_err(|e| format!("{}: agent/trajectory.json is not JSON: {e}", dir.display()))?;
    line.insert("trajectory".into(), t);
    Ok(Item::Line(Value::Object(line)))
}

/// Every trajectory under `path`, numbered from 1 (release lines by their line).
pub(crate) fn for_each_item(
    path: &Path,
    instance: Option<&str>,
    mut f: impl FnMut(u64, Result<Item, String>),
) -> Result<()> {
    if path.is_dir() {
        let trials = beyondswe::harbor::trial_dirs(path);
        if !trials.is_empty() {
            for (n, (dir, result)) in trials.into_iter().enumerate() {
                f(n as u64 + 1, trial_item(&dir, &result));
            }
            return Ok(());
        }
        let mut files: Vec<PathBuf> = walkdir::WalkDir::new(path)
            .max_depth(6)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(walkdir::DirEntry::into_path)
            .filter(|p| matches!(sniff(p), Ok(Some(_))))
            .collect();
        files.sort();
        if files.is_empty() {
            anyhow::bail!(
                "{}: no Harbor trial (result.json with task_name) and no Claude Code or Codex transcript in it",
                path.display()
            );
        }
        let one = (files.len() == 1).then_some(instance).flatten();
        for (n, file) in files.iter().enumerate() {
            f(n as u64 + 1, transcript_item(file, one));
        }
        return Ok(());
    }
    if !path.exists() {
        anyhow::bail!("{}: no such file or directory", path.display());
    }
    let release = first_record(path).is_some_and(|v| is_release_line(&v));
    if !release && matches!(sniff(path), Ok(Some(_))) {
        f(1, transcript_item(path, instance));
        return Ok(());
    }
    let mut lines = JsonLines::open(path)?;
    while let Some(item) = lines.next_value() {
        match item {
            Ok((n, v)) => f(n, Ok(Item::Line(v))),
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
    let infos: HashMap<String, TaskInfo> = load_all(d, None)?
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
        .collect();
    // Harbor trials name their task after its directory (lower case): those names too.
    Ok(
        beyondswe::harbor::task_name_index(infos.keys().map(String::as_str))
            .into_iter()
            .filter_map(|(name, id)| infos.get(&id).map(|info| (name, info.clone())))
            .collect(),
    )
}

pub(crate) fn run(args: &AuditArgs) -> Result<i32> {
    let infos = task_infos(args.dataset.as_deref())?;
    let opts = AuditOptions {
        search_disallowed: args.search_disallowed,
    };
    let mut audits: Vec<TrajectoryAudit> = Vec::new();
    let mut bad = 0usize;
    let mut text = String::new();
    let mut skipped = 0usize;
    for_each_item(&args.path, args.instance.as_deref(), |n, item| {
        if let Ok(Item::NothingToAudit(why)) = &item {
            // Each said by name: a trial that is not audited is never silently clean.
            skipped += 1;
            note(format!("{}:{n}: not audited: {why}", args.path.display()));
            return;
        }
        match item.and_then(|item| audit_item(n, item, &infos, opts)) {
            Ok(mut a) => {
                // Keep the findings, not huge texts, in memory.
                for e in &mut a.evidence {
                    truncate_at_char(&mut e.excerpt, 600);
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
        text.push_str(&audit_table(&audits));
        text.push('\n');
        text.push_str(&class_counts(&audits));
        text.push_str(&corrected_scores(&audits, args.count_tier_b));
    }
    out(text)?;
    if skipped > 0 {
        note(format!(
            "{skipped} trial(s) of Harbor's own agents (oracle, nop) have no trajectory: not audited, nothing to audit there"
        ));
    }
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

/// Audits one item with what the dataset says of its task.
fn audit_item(
    n: u64,
    item: Item,
    infos: &HashMap<String, TaskInfo>,
    opts: AuditOptions,
) -> Result<TrajectoryAudit, String> {
    match item {
        Item::Line(v) => {
            let name = v
                .get("task_name")
                .or(v.get("instance_id"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let info = infos.get(name).cloned().unwrap_or_default();
            audit_line(n, &v, &info, opts)
        }
        Item::Transcript {
            task_name,
            reward,
            source,
            transcript,
        } => {
            let info = infos.get(&task_name).cloned().unwrap_or_default();
            let about = Trajectory {
                task_name,
                reward,
                source: source.clone(),
                ..Trajectory::default()
            };
            audit_transcript(n, about, &transcript, &info, opts)
                .map_err(|e| format!("{source}: {e}"))
        }
        // Taken out by the caller before it gets here.
        Item::NothingToAudit(why) => Err(why),
    }
}

/// One row per trajectory: line, task, class, reward and the first findings.
fn audit_table(audits: &[TrajectoryAudit]) -> String {
    let mut text = format!(
        "{:<6} {:<52} {:<17} {:>6}  {}\n",
        "LINE", "TASK", "CLASS", "REWARD", "FINDINGS"
    );
    for a in audits {
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
            findings(a)
        ));
    }
    text
}

/// The blocklist hits, the first other finding and the first unread call, in a few words.
fn findings(a: &TrajectoryAudit) -> String {
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
    if let Some(u) = a.unread.first() {
        findings.push(format!(
            "{} tool call(s) not read (step {} {}: {})",
            a.unread.len(),
            u.step,
            u.tool,
            u.why
        ));
    }
    findings.join("; ")
}

/// How many trajectories fall in each class, and how many hit the blocklist.
fn class_counts(audits: &[TrajectoryAudit]) -> String {
    let mut text = String::new();
    for class in [
        Class::TierA,
        Class::TierBCandidate,
        Class::SearchOnly,
        Class::PromptSupplied,
        Class::Incomplete,
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
    text
}

/// Published and corrected scores per family.
fn corrected_scores(audits: &[TrajectoryAudit], count_tier_b: bool) -> String {
    let mut text = format!(
        "{:<11} {:>6} {:>10} {:>10} {:>7} {:>7}\n",
        "FAMILY", "TRAJ", "PUBLISHED", "CORRECTED", "TIER A", "TIER B"
    );
    for r in rescore(audits, count_tier_b) {
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
        text.push_str(
            "(trajectories without a known family are left out of the scores; pass --dataset)\n",
        );
    }
    text
}

/// Cuts `s` to at most `max` bytes at a character boundary (`String::truncate` panics inside a
/// multi-byte character, and excerpts are the agent's own text).
fn truncate_at_char(s: &mut String, max: usize) {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
}
