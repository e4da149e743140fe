//! `beyondswe ingest PATH -o predictions.jsonl`: normalised predictions from what an agent wrote;
//! with `--reconstruct`, patches rebuilt from transcripts by replaying their edits in containers.

use super::args::MIB;
use super::progress::Bar;
use super::{exit, note};
use anyhow::Result;
use beyondswe::dataset::load_all;
use beyondswe::files::write_atomic;
use beyondswe::record::Record;
use beyondswe::run;
use beyondswe::submission::{
    AgentFormat, DEFAULT_MAX_PATCH_BYTES, Ingest, IngestOptions, Submitted, ingest_with,
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
    #[arg(long, alias = "format", value_parser = super::args::agent_format())]
    pub(crate) agent_format: Option<AgentFormat>,
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
    /// Largest patch file read (captured diffs, Harbor trial artifacts), in MiB, as the grading
    /// commands' --max-patch-mb; a larger one is reported, naming the file.
    #[arg(long, default_value_t = DEFAULT_MAX_PATCH_BYTES / MIB)]
    pub(crate) max_patch_mb: u64,
    /// Where to write the predictions (JSONL).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
}

/// One prediction line: the SWE-bench fields plus where it came from.
pub(crate) fn prediction_line(item: &beyondswe::submission::Ingested) -> Option<Value> {
    let mut m = Map::new();
    m.insert("instance_id".into(), json!(item.instance_id));
    m.insert("model_name_or_path".into(), json!(item.model));
    match &item.submitted {
        Some(Submitted::Patch(p)) => match std::str::from_utf8(p) {
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
        Some(Submitted::Repo(repo)) => {
            m.insert("model_repo".into(), json!(repo.display().to_string()));
        }
        // Ingest reads every patch file it finds into bytes: a file reference is only ever a
        // person's `grade-one --patch`.
        Some(Submitted::PatchFile(_)) | None => return None,
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

pub(crate) fn run(args: &IngestArgs) -> Result<i32> {
    let mut ing = ingest_with(
        &args.path,
        &IngestOptions {
            format: args.agent_format,
            patches: args.patches.clone(),
            instance: args.instance.clone(),
            max_patch_bytes: Some(args.max_patch_mb.saturating_mul(MIB)),
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
            if let Some(id) = beyondswe::harbor::lookup_task(&names, &item.instance_id) {
                item.instance_id.clone_from(id);
            }
        }
    }
    if args.reconstruct
        && let Some(records) = &records
    {
        match run::reconstruct(&mut ing, records, &Bar::new(true))? {
            Some(n) if n > 0 => note(format!(
                "{n} patch(es) reconstructed from transcripts (marked `reconstructed`)"
            )),
            Some(_) => {}
            None => {
                note("interrupted: containers removed");
                return Ok(exit::interrupted());
            }
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
