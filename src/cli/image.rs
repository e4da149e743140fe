//! `beyondswe image build CONTEXT --tag TAG`: build an image through the engine API (no registry
//! needed when the Dockerfile is `FROM` a local image such as the offline base).

use super::{exit, note, out};
use anyhow::{Context, Result, bail};
use beyondswe::run::runtime;
use beyondswe::sandbox::{DockerSandbox, Sandbox};
use beyondswe::submission::{TreeLimits, read_tree};
use clap::Subcommand;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Subcommand)]
pub(crate) enum ImageCommand {
    /// Build an image from a directory with a Dockerfile.
    Build {
        /// The build context (a directory with a Dockerfile).
        context: PathBuf,
        /// The image tag, e.g. beyondswe-fixture/calc:1.
        #[arg(long)]
        tag: String,
        /// Labels, as KEY=VALUE.
        #[arg(long = "label")]
        labels: Vec<String>,
        /// Skip the build when the tag already exists.
        #[arg(long)]
        if_missing: bool,
        /// Seconds the build may take.
        #[arg(long, default_value_t = beyondswe::DEFAULT_TIMEOUT_SECS)]
        timeout: u64,
    },
}

pub(crate) fn run(cmd: &ImageCommand) -> Result<i32> {
    let ImageCommand::Build {
        context,
        tag,
        labels,
        if_missing,
        timeout,
    } = cmd;
    if !context.join("Dockerfile").is_file() {
        bail!("{}: no Dockerfile in the build context", context.display());
    }
    let mut label_map = HashMap::new();
    for l in labels {
        let Some((k, v)) = l.split_once('=') else {
            return Err(exit::Usage(format!("--label {l}: expected KEY=VALUE")).into());
        };
        label_map.insert(k.to_owned(), v.to_owned());
    }
    let tree = read_tree(context, TreeLimits::default())?;
    let tar = tree.to_tar().context("packing the build context")?;
    runtime()?.block_on(async {
        let sandbox = DockerSandbox::connect().await?;
        if *if_missing && sandbox.image_id(tag).await?.is_some() {
            note(format!("{tag}: present, not rebuilt"));
        } else {
            tracing::info!(image = tag.as_str(), context = %context.display(), "building an image");
            sandbox
                .build_image(tag, tar, &label_map, Duration::from_secs(*timeout))
                .await
                .with_context(|| format!("building {} as {tag}", context.display()))?;
        }
        let id = sandbox.image_id(tag).await?.unwrap_or_default();
        out(format!("{tag} {id}\n"))?;
        Ok(exit::SUCCESS)
    })
}
