//! Images built from a build context through the engine API (`image build`): no registry is
//! needed when the Dockerfile is `FROM` a local image such as the offline base. Cached by tag
//! when asked (`if_missing`).

use super::batch::Progress;
use super::error::RunError;
use super::session::{context_tar, runtime};
use crate::sandbox::{DockerSandbox, Sandbox};
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
