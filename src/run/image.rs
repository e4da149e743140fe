//! Images built from a build context through the engine API (`image build`): no registry is
//! needed when the Dockerfile is `FROM` a local image such as the offline base. Cached by tag
//! when asked (`if_missing`). And the prepared images kept under a size limit, least recently
//! used first (`image prune`, and at the end of every run).

use super::batch::Progress;
use super::error::RunError;
use super::session::{context_tar, runtime};
use crate::sandbox::{DockerSandbox, PreparedImage, Sandbox, SandboxError, prune_plan};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

/// One image to build.
#[derive(Debug, Clone)]
pub struct ImageSpec {
    /// The build context: a directory with a Dockerfile.
    pub context: PathBuf,
    /// The image tag, e.g. `beyondswe-fixture/calc:1`.
    pub tag: String,
    /// Labels put on the image (`--label KEY=VALUE`).
    pub labels: HashMap<String, String>,
    /// Skip the build when the tag already exists.
    pub if_missing: bool,
    /// How long the build may take.
    pub timeout: Duration,
}

/// Builds the image (or finds it present, with `if_missing`); returns its id.
pub fn build_image(spec: &ImageSpec, progress: &dyn Progress) -> Result<String, RunError> {
    let ImageSpec {
        context,
        tag,
        labels,
        if_missing,
        timeout,
    } = spec;
    if !context.join("Dockerfile").is_file() {
        return Err(RunError::NoDockerfile(context.clone()));
    }
    let tar = context_tar(context)?;
    runtime()?.block_on(async {
        let sandbox = DockerSandbox::connect().await?;
        if *if_missing && sandbox.image_id(tag).await?.is_some() {
            progress.note(&format!("{tag}: present, not rebuilt"));
        } else {
            tracing::info!(image = tag.as_str(), context = %context.display(), "building an image");
            sandbox
                .build_image(tag, tar, labels, *timeout)
                .await
                .map_err(|source| RunError::Image {
                    context: context.clone(),
                    tag: tag.clone(),
                    source,
                })?;
        }
        Ok(sandbox.image_id(tag).await?.unwrap_or_default())
    })
}

/// What pruning the prepared images did (or, dry, would do).
#[derive(Debug, Clone, Default)]
pub struct Pruned {
    /// The images removed (or to remove), dangling ones first, then least recently used first.
    pub removed: Vec<PreparedImage>,
    /// Images the plan named that the engine kept: a container uses them.
    pub in_use: Vec<PreparedImage>,
    /// What the removed images freed.
    pub freed_bytes: u64,
    /// The prepared images' total after pruning.
    pub remaining_bytes: u64,
}

/// Removes prepared images until their total is at most `max_bytes` (every dangling one, then
/// the least recently used); `dry_run` only says which.
pub async fn prune_prepared(
    sandbox: &DockerSandbox,
    max_bytes: u64,
    dry_run: bool,
) -> Result<Pruned, SandboxError> {
    let images = sandbox.prepared_images().await?;
    let total: u64 = images.iter().map(|i| i.bytes).sum();
    let mut pruned = Pruned {
        remaining_bytes: total,
        ..Pruned::default()
    };
    for img in prune_plan(&images, max_bytes) {
        if dry_run || sandbox.remove_image(&img.id).await? {
            pruned.freed_bytes += img.bytes;
            pruned.remaining_bytes = pruned.remaining_bytes.saturating_sub(img.bytes);
            pruned.removed.push(img.clone());
        } else {
            pruned.in_use.push(img.clone());
        }
    }
    Ok(pruned)
}

/// [`prune_prepared`] on its own connection (`image prune`).
pub fn prune_images(max_bytes: u64, dry_run: bool) -> Result<Pruned, RunError> {
    runtime()?.block_on(async {
        let sandbox = DockerSandbox::connect().await?;
        Ok(prune_prepared(&sandbox, max_bytes, dry_run).await?)
    })
}

#[cfg(test)]
mod tests {
    use crate::sandbox::{PreparedImage, prune_plan};

    fn img(id: &str, tagged: bool, mib: u64, used: &str) -> PreparedImage {
        PreparedImage {
            id: id.into(),
            tag: tagged.then(|| format!("beyondswe-prepared:{id}")),
            instance: None,
            bytes: mib << 20,
            last_used: used.into(),
        }
    }

    /// Dangling images go first whatever the limit; then the least recently used until the
    /// rest fits.
    #[test]
    fn pruning_takes_dangling_then_least_recently_used() {
        let images = [
            img("new", true, 300, "2026-12-02T10:00:00"),
            img("old", true, 300, "2026-11-01T10:00:00"),
            img("lost", false, 300, "2026-12-02T11:00:00"),
            img("mid", true, 300, "2026-11-20T10:00:00"),
        ];
        let ids = |max_mib: u64| -> Vec<String> {
            prune_plan(&images, max_mib << 20)
                .iter()
                .map(|i| i.id.clone())
                .collect()
        };
        assert_eq!(ids(10_000), ["lost"]);
        assert_eq!(ids(900), ["lost"]);
        assert_eq!(ids(899), ["lost", "old"]);
        assert_eq!(ids(300), ["lost", "old", "mid"]);
        assert_eq!(ids(0), ["lost", "old", "mid", "new"]);
    }
}
