//! `beyondswe image build CONTEXT --tag TAG`: build an image through the engine API (no registry
//! needed when the Dockerfile is `FROM` a local image such as the offline base).

use super::progress::Bar;
use super::{exit, out};
use anyhow::Result;
use beyondswe::run::{self, ImageSpec};
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
    let mut label_map = HashMap::new();
    for l in labels {
        let Some((k, v)) = l.split_once('=') else {
            return Err(exit::Usage(format!("--label {l}: expected KEY=VALUE")).into());
        };
        label_map.insert(k.to_owned(), v.to_owned());
    }
    let spec = ImageSpec {
        context: context.clone(),
        tag: tag.clone(),
        labels: label_map,
        if_missing: *if_missing,
        timeout: Duration::from_secs(*timeout),
    };
    let id = run::build_image(&spec, &Bar::new(true))?;
    out(format!("{tag} {id}\n"))?;
    Ok(exit::SUCCESS)
}
