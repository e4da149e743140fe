//! Patches rebuilt from transcripts (`ingest --reconstruct`): every ingested transcript without a
//! patch has its edits replayed on its instance's base commit in a container
//! ([`crate::submission::replay`]), in an engine [`Session`] of its own that stops at Ctrl-C and
//! removes its containers whatever the end.
//!
//! What cannot be replayed exactly is refused before any container starts, and each item's note
//! says what happened to it; the engine going away ends the whole reconstruction with an error.

use super::batch::Progress;
use super::error::RunError;
use super::session::{Session, runtime};
use crate::record::Record;
use crate::sandbox::{DockerSandbox, SandboxError};
use crate::submission::replay::{self, Reconstruction, ReplayError, ReplayOptions, ReplayPlan};
use crate::submission::{Ingest, Ingested, Submitted, read_transcripts};
use std::collections::HashMap;

/// Replays the edits of every transcript in `ing` that has no patch, on the instance `records`
/// holds for it; returns how many patches were rebuilt, or `None` when Ctrl-C stopped it (its
/// containers are removed).
pub fn reconstruct(
    ing: &mut Ingest,
    records: &HashMap<String, Record>,
    progress: &dyn Progress,
) -> Result<Option<usize>, RunError> {
    let todo: Vec<usize> = (0..ing.items.len())
        .filter(|&i| {
            let it = &ing.items[i];
            it.submitted.is_none() && !it.transcript.is_empty()
        })
        .collect();
    if todo.is_empty() {
        return Ok(Some(0));
    }
    let label = format!("ingest-replay-{}", std::process::id());
    let opts = ReplayOptions {
        labels: DockerSandbox::process_labels(&label),
        ..ReplayOptions::default()
    };
    runtime()?.block_on(async {
        let session = Session::open(&label, progress).await?;
        let sandbox = session.sandbox();
        let work = async {
            let mut rebuilt = 0;
            for i in todo {
                let item: &mut Ingested = &mut ing.items[i];
                let Some((record, plan)) = replay_plan(item, records) else {
                    continue;
                };
                let result = replay::reconstruct(&sandbox, record, &plan, &opts).await;
                if take_replay(item, &plan, result, progress)? {
                    rebuilt += 1;
                }
            }
            Ok::<_, RunError>(rebuilt)
        };
        session.until_interrupted(work).await.transpose()
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
    match replay::plan(&t, record.workdir(), crate::audit::command_writes_of(&t)) {
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
/// rebuilt, an error when the engine is gone.
fn take_replay(
    item: &mut Ingested,
    plan: &ReplayPlan,
    result: Result<Reconstruction, ReplayError>,
    progress: &dyn Progress,
) -> Result<bool, RunError> {
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
            item.submitted = Some(Submitted::Patch(r.patch));
            item.reconstructed = true;
            return Ok(true);
        }
        Err(ReplayError::NotExact(why)) => {
            format!("not reconstructed, the replay was not exact: {why}")
        }
        Err(ReplayError::Sandbox(e @ SandboxError::EngineUnreachable { .. })) => {
            return Err(RunError::Replay {
                instance: item.instance_id.clone(),
                source: e,
            });
        }
        Err(ReplayError::Sandbox(e)) => {
            let hint = e.hint().map(|h| format!("\nhint: {h}")).unwrap_or_default();
            progress.note(&format!("error: replaying {}: {e}{hint}", item.instance_id));
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
