//! `beyondswe ingest PATH -o predictions.jsonl`: normalised predictions from what an agent wrote;
//! with `--reconstruct`, patches rebuilt from transcripts by replaying their edits in containers.

use super::{exit, note};
use anyhow::{Context, Result};
use beyondswe::dataset::load_all;
use beyondswe::files::write_atomic;
use beyondswe::record::Record;
use beyondswe::sandbox::{DockerSandbox, SandboxError};
use beyondswe::submission::replay::{self, Reconstruction, ReplayError, ReplayOptions, ReplayPlan};
use beyondswe::submission::{
    AgentFormat, Ingest, IngestOptions, Ingested, ingest_with, read_transcripts,
};
use clap::Args;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(crate) struct IngestArgs {
    /// An agent's output: a file or a run/job directory.
    pub(crate) path: PathBuf,
    /// The format (default: detected).
    #[arg(long, value_parser = super::args::agent_format())]
    pub(crate) format: Option<AgentFormat>,
    /// Check the instance ids against this dataset.
    #[arg(long)]
    pub(crate) dataset: Option<PathBuf>,
    /// Claude Code / Codex: directory of captured diffs named `<instance_id>.diff` (default:
    /// `patches/` beside the transcripts).
    #[arg(long)]
    pub(crate) patches: Option<PathBuf>,
    /// The instance a single transcript file is about (session files and rollouts are named by
    /// the agent's session, not the instance).
    #[arg(long)]
    pub(crate) instance: Option<String>,
    /// For transcripts without a captured patch: replay the file edits they show on each
    /// instance's base commit in a container and take the repository's diff (needs --dataset and
    /// a Docker engine). Refused, and nothing graded, when the replay cannot be exact.
    #[arg(long, requires = "dataset")]
    pub(crate) reconstruct: bool,
    /// Where to write the predictions (JSONL).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
}

/// One prediction line: the SWE-bench fields plus where it came from.
pub(crate) fn prediction_line(item: &beyondswe::submission::Ingested) -> Option<Value> {
    let mut m = Map::new();
    m.insert("instance_id".into(), json!(item.instance_id));
    m.insert("model_name_or_path".into(), json!(item.model));
    match (&item.patch, &item.repo) {
        (Some(p), _) => match std::str::from_utf8(p) {
            Ok(text) => {
                m.insert("model_patch".into(), json!(text));
            }
            // JSON strings cannot carry raw bytes: non-UTF-8 patches travel as base64.
            Err(_) => {
                m.insert(
                    "model_patch_base64".into(),
                    json!(beyondswe::base64::encode(p)),
                );
            }
        },
        (None, Some(repo)) => {
            m.insert("model_repo".into(), json!(repo.display().to_string()));
        }
        (None, None) => return None,
    }
    if item.reconstructed {
        m.insert("reconstructed".into(), json!(true));
    }
    m.insert("attempt".into(), json!(item.attempt));
    m.insert("source_format".into(), json!(item.format.name()));
    m.insert("source_path".into(), json!(item.source));
    if let Some(r) = item.reward {
        m.insert("reward".into(), json!(r));
    }
    if let Some(n) = &item.note {
        m.insert("note".into(), json!(n));
    }
    Some(Value::Object(m))
}

/// Reports what an ingest found on stderr: problems, transcripts without patches, unknown ids.
pub(crate) fn describe(path: &Path, ing: &Ingest, known: Option<&HashSet<String>>) {
    for line in ing.describe(path, known) {
        note(line);
    }
}

/// Replays the edits of every transcript that has no patch; returns how many were rebuilt, or
/// the exit code when the engine failed.
fn reconstruct(ing: &mut Ingest, records: &HashMap<String, Record>) -> Result<Result<usize, i32>> {
    let todo: Vec<usize> = (0..ing.items.len())
        .filter(|&i| {
            let it = &ing.items[i];
            it.patch.is_none() && it.repo.is_none() && !it.transcript.is_empty()
        })
        .collect();
    if todo.is_empty() {
        return Ok(Ok(0));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let run_label = format!("ingest-replay-{}", std::process::id());
    let opts = ReplayOptions {
        labels: DockerSandbox::process_labels(&run_label),
        ..ReplayOptions::default()
    };
    runtime.block_on(async {
        let sandbox = match DockerSandbox::connect().await {
            Ok(s) => s,
            Err(e) => {
                note(format!("error: {e}"));
                return Ok(Err(exit::INFRASTRUCTURE));
            }
        };
        let mut rebuilt = 0;
        for i in todo {
            let item: &mut Ingested = &mut ing.items[i];
            let Some((record, plan)) = replay_plan(item, records) else {
                continue;
            };
            let result = tokio::select! {
                r = replay::reconstruct(&sandbox, record, &plan, &opts) => r,
                _ = tokio::signal::ctrl_c() => {
                    let _ = sandbox.sweep(Some(&run_label)).await;
                    note("interrupted: containers removed");
                    return Ok(Err(130));
                }
            };
            match take_replay(item, &plan, result) {
                Ok(true) => rebuilt += 1,
                Ok(false) => {}
                Err(code) => return Ok(Err(code)),
            }
        }
        Ok(Ok(rebuilt))
    })
}

/// The record and the replay plan of an item, or `None` (with a note on the item saying why)
/// when it cannot be replayed exactly, before any container starts.
fn replay_plan<'r>(
    item: &mut Ingested,
    records: &'r HashMap<String, Record>,
) -> Option<(&'r Record, ReplayPlan)> {
    let Some(record) = records.get(&item.instance_id) else {
        item.note = Some(join(
            item.note.take(),
            "not reconstructed: the instance is not in the dataset",
        ));
        return None;
    };
    let t = match read_transcripts(&item.transcript) {
        Ok(t) => t,
        Err(e) => {
            item.note = Some(join(item.note.take(), &format!("not reconstructed: {e}")));
            return None;
        }
    };
    match replay::plan(&t, record.workdir(), beyondswe::audit::command_writes) {
        Ok(p) => Some((record, p)),
        Err(why) => {
            item.note = Some(join(
                item.note.take(),
                &format!("not reconstructed, a replay would not be exact: {why}"),
            ));
            None
        }
    }
}

/// Puts a replay's patch (or why there is none) on the item: `Ok(true)` when a patch was
/// rebuilt, `Err(code)` when the engine is gone.
fn take_replay(
    item: &mut Ingested,
    plan: &ReplayPlan,
    result: Result<Reconstruction, ReplayError>,
) -> Result<bool, i32> {
    let why = match result {
        Ok(r) => {
            let mut msg = format!(
                "reconstructed: {} edit(s) of {} replayed on the base commit in a container (not a captured patch)",
                plan.edits.len(),
                item.transcript[0].display()
            );
            for n in &r.notes {
                msg.push_str("; ");
                msg.push_str(n);
            }
            // The hint about capturing a patch no longer applies.
            let summary = item.note.take().map(|n| {
                n.split("; transcript only")
                    .next()
                    .unwrap_or_default()
                    .to_owned()
            });
            item.note = Some(join(summary, &msg));
            item.patch = Some(r.patch);
            item.reconstructed = true;
            return Ok(true);
        }
        Err(ReplayError::NotExact(why)) => {
            format!("not reconstructed, the replay was not exact: {why}")
        }
        Err(ReplayError::Sandbox(e)) => {
            let hint = e.hint().map(|h| format!("\nhint: {h}")).unwrap_or_default();
            note(format!("error: replaying {}: {e}{hint}", item.instance_id));
            if matches!(e, SandboxError::EngineUnreachable { .. }) {
                return Err(exit::INFRASTRUCTURE);
            }
            format!("not reconstructed: {e}")
        }
        Err(e @ ReplayError::Failed { .. }) => format!("not reconstructed: {e}"),
    };
    item.note = Some(join(item.note.take(), &why));
    Ok(false)
}

fn join(old: Option<String>, new: &str) -> String {
    match old {
        Some(o) if !o.is_empty() => format!("{o}; {new}"),
        _ => new.to_owned(),
    }
}

pub(crate) fn run(args: &IngestArgs) -> Result<i32> {
    let mut ing = ingest_with(
        &args.path,
        &IngestOptions {
            format: args.format,
            patches: args.patches.clone(),
            instance: args.instance.clone(),
            max_patch_bytes: None,
        },
    )?;
    let records: Option<HashMap<String, Record>> = match &args.dataset {
        Some(d) => Some(
            load_all(d, None)?
                .into_iter()
                .map(|i| (i.record.instance_id().to_owned(), i.record))
                .collect(),
        ),
        None => None,
    };
    // Harbor trials name their task after its directory (lower case): back to the dataset's ids.
    if let Some(records) = &records {
        let names = beyondswe::harbor::task_name_index(records.keys().map(String::as_str));
        for item in &mut ing.items {
            if let Some(id) = names.get(&item.instance_id) {
                item.instance_id.clone_from(id);
            }
        }
    }
    if args.reconstruct
        && let Some(records) = &records
    {
        match reconstruct(&mut ing, records)? {
            Ok(n) if n > 0 => note(format!(
                "{n} patch(es) reconstructed from transcripts (marked `reconstructed`)"
            )),
            Ok(_) => {}
            Err(code) => return Ok(code),
        }
    }
    let known: Option<HashSet<String>> = records.map(|r| r.into_keys().collect());
    describe(&args.path, &ing, known.as_ref());
    let mut text = String::new();
    for item in &ing.items {
        if let Some(line) = prediction_line(item) {
            text.push_str(&line.to_string());
            text.push('\n');
        }
    }
    write_atomic(&args.output, text.as_bytes())?;
    Ok(if ing.problems.is_empty() {
        exit::SUCCESS
    } else {
        exit::FAILURE
    })
}
