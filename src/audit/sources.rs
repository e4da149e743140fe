//! The trajectories to audit, as the agents' readers find them in a path
//! (`submission::agents::trajectories`), each with what the dataset says of its task
//! ([`task_infos`]), audited ([`audit_item`]). The audit parses no agent's file itself.
//! Reading only: what is printed is the caller's.

use super::{AuditOptions, TaskInfo, TrajectoryAudit, audit_transcript};
use crate::dataset::{DatasetError, load_all};
use crate::submission::agents::Item;
use std::collections::HashMap;
use std::path::Path;

/// What the dataset says of each task, by instance id and by the directory name Harbor names
/// its task after; empty without a dataset.
pub fn task_infos(dataset: Option<&Path>) -> Result<HashMap<String, TaskInfo>, DatasetError> {
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
                base_commit: r.base_commit().map(str::to_owned),
                version: r.raw().get("version").and_then(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .or_else(|| v.as_f64().map(|f| f.to_string()))
                }),
            };
            (r.instance_id().to_owned(), info)
        })
        .collect();
    // Harbor trials name their task after its directory (lower case): those names too.
    Ok(
        crate::harbor::task_name_index(infos.keys().map(String::as_str))
            .into_iter()
            .filter_map(|(name, id)| infos.get(&id).map(|info| (name, info.clone())))
            .collect(),
    )
}

/// Audits one item with what the dataset says of its task. An error names the file it was read
/// from, where it was read from one.
pub fn audit_item(
    n: u64,
    item: Item,
    infos: &HashMap<String, TaskInfo>,
    opts: AuditOptions,
) -> Result<TrajectoryAudit, String> {
    match item {
        Item::Trajectory { about, transcript } => {
            let info = crate::harbor::lookup_task(infos, &about.task_name)
                .cloned()
                .unwrap_or_default();
            let source = about.source.clone();
            audit_transcript(n, about, &transcript, &info, opts).map_err(|e| {
                if source.is_empty() {
                    e
                } else {
                    format!("{source}: {e}")
                }
            })
        }
        // Taken out by the caller before it gets here.
        Item::NothingToAudit(why) => Err(why),
    }
}
