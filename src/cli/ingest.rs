//! `beyondswe ingest PATH -o predictions.jsonl`: normalised predictions from what an agent wrote.

use super::{exit, note};
use anyhow::Result;
use beyondswe::dataset::load_all;
use beyondswe::report::write_atomic;
use beyondswe::submission::{AgentFormat, Ingest, IngestOptions, base64_encode, ingest_with};
use clap::Args;
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(crate) struct IngestArgs {
    /// An agent's output: a file or a run/job directory.
    pub(crate) path: PathBuf,
    /// The format (default: detected).
    #[arg(long, value_enum)]
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
                m.insert("model_patch_base64".into(), json!(base64_encode(p)));
            }
        },
        (None, Some(repo)) => {
            m.insert("model_repo".into(), json!(repo.display().to_string()));
        }
        (None, None) => return None,
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
    let format = ing.format.map_or("?", AgentFormat::name);
    let with_patch = ing
        .items
        .iter()
        .filter(|i| i.patch.is_some() || i.repo.is_some())
        .count();
    note(format!(
        "{}: {format}: {} submission(s), {with_patch} with a patch",
        path.display(),
        ing.items.len()
    ));
    for p in &ing.problems {
        note(format!("warning: {p}"));
    }
    let missing = ing.without_patch();
    if !missing.is_empty() {
        note(format!(
            "{} instance(s) have a transcript but no patch (not graded):",
            missing.len()
        ));
        for i in missing {
            note(format!(
                "  {} ({}){}",
                i.instance_id,
                i.source,
                i.note
                    .as_ref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default()
            ));
        }
    }
    if let Some(known) = known {
        let unknown: Vec<&str> = ing
            .items
            .iter()
            .map(|i| i.instance_id.as_str())
            .filter(|id| !known.contains(*id))
            .collect();
        if !unknown.is_empty() {
            note(format!(
                "warning: not in the dataset: {}",
                unknown.join(", ")
            ));
        }
    }
}

pub(crate) fn run(args: &IngestArgs) -> Result<i32> {
    let ing = ingest_with(
        &args.path,
        &IngestOptions {
            format: args.format,
            patches: args.patches.clone(),
            instance: args.instance.clone(),
        },
    )?;
    let known = match &args.dataset {
        Some(d) => Some(
            load_all(d, None)?
                .into_iter()
                .map(|i| i.record.instance_id().to_owned())
                .collect::<HashSet<_>>(),
        ),
        None => None,
    };
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
