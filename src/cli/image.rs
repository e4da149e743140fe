//! `beyondswe image build CONTEXT --tag TAG`: build an image through the engine API (no registry
//! needed when the Dockerfile is `FROM` a local image such as the offline base). `image pull`:
//! a dataset's instance images (or the images named) from their registries, before a run.
//! `image prune`: the prepared images kept under a size.

use super::progress::Bar;
use super::{exit, out};
use anyhow::Result;
use beyondswe::run::{self, ImageSpec};
use beyondswe::sandbox::{PullPolicy, SandboxError};
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
    /// Pull instance images from their registries, with your Docker credentials (`docker
    /// login`): the images named, or every image of a dataset's instances. `grade` pulls what
    /// is missing by itself; this fetches ahead, e.g. before a run without network.
    #[command(
        after_help = "Examples:\n  beyondswe image pull --dataset beyondswe.jsonl\n  beyondswe image pull --dataset beyondswe.jsonl --ids pallets__flask-4045 --pull always\n  beyondswe image pull registry.example.com/org/instance:1"
    )]
    Pull {
        /// Image references to pull.
        images: Vec<String>,
        /// Pull the image of every instance of this dataset (JSONL, Parquet, Harbor task
        /// directories, or a Hugging Face dataset name).
        #[arg(long)]
        dataset: Option<PathBuf>,
        /// With --dataset, only these instance ids (spaces or commas between them).
        #[arg(long, alias = "instance-ids", num_args = 1.., requires = "dataset")]
        ids: Vec<String>,
        /// `missing`: only images the engine does not have; `always`: every one, so a moved
        /// tag is followed.
        #[arg(long, default_value = "missing", value_parser = super::args::pull_policy())]
        pull: PullPolicy,
    },
    /// Remove the images the grader prepared (every dangling one, then the least recently used)
    /// until they hold at most --max-prepared-gb; the next grading of their instances prepares again.
    Prune {
        /// Keep at most this many GiB of prepared images (0, the default: remove them all).
        #[arg(long, alias = "max-gb", default_value_t = 0.0, value_parser = super::args::gib)]
        max_prepared_gb: f64,
        /// Only list what would be removed.
        #[arg(long)]
        dry_run: bool,
    },
}

pub(crate) fn run(cmd: &ImageCommand) -> Result<i32> {
    let (context, tag, labels, if_missing, timeout) = match cmd {
        ImageCommand::Build {
            context,
            tag,
            labels,
            if_missing,
            timeout,
        } => (context, tag, labels, if_missing, timeout),
        ImageCommand::Prune {
            max_prepared_gb,
            dry_run,
        } => return prune(*max_prepared_gb, *dry_run),
        ImageCommand::Pull {
            images,
            dataset,
            ids,
            pull: policy,
        } => return pull(images, dataset.as_ref(), ids, *policy),
    };
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

/// `image pull`: one line per image on stdout (`pulled`, `present` or `failed`, tab, the image,
/// and why for a failure); exit 1 when an image is the user's to fix, 3 when the registry is
/// down.
fn pull(
    named: &[String],
    dataset: Option<&PathBuf>,
    ids: &[String],
    policy: PullPolicy,
) -> Result<i32> {
    if policy == PullPolicy::Never {
        return Err(exit::Usage("image pull --pull never: nothing to do".into()).into());
    }
    let mut images = named.to_vec();
    let progress = Bar::new(true);
    if let Some(path) = dataset {
        let mut spec = run::DatasetSpec::new(path.clone());
        spec.ids = super::args::split_ids(ids);
        let (instances, _) = run::load_instances(&spec, &progress)?;
        images.extend(
            instances
                .iter()
                .filter(|i| i.environment_to_build.is_none())
                .filter_map(|i| i.record.image().map(str::to_owned)),
        );
    }
    if images.is_empty() {
        return Err(
            exit::Usage("image pull: name the images, or give --dataset FILE".into()).into(),
        );
    }
    let done = run::pull_images(&images, policy, &progress)?;
    let mut text = String::new();
    for i in &done.pulled {
        text.push_str(&format!("pulled\t{i}\n"));
    }
    for i in &done.present {
        text.push_str(&format!("present\t{i}\n"));
    }
    for (i, e) in &done.failed {
        text.push_str(&format!("failed\t{i}\t{e}\n"));
    }
    out(text)?;
    for h in SandboxError::distinct_hints(done.failed.iter().map(|(_, e)| e)) {
        super::note(format!("hint: {h}"));
    }
    super::note(format!(
        "{} pulled, {} present, {} failed",
        done.pulled.len(),
        done.present.len(),
        done.failed.len()
    ));
    Ok(match done.failed.iter().all(|(_, e)| e.is_users()) {
        _ if done.failed.is_empty() => exit::SUCCESS,
        true => exit::FAILURE,
        false => exit::INFRASTRUCTURE,
    })
}

/// `image prune`: one line per image removed (or, dry, to remove) on stdout, the totals on
/// stderr.
fn prune(max_prepared_gb: f64, dry_run: bool) -> Result<i32> {
    let max_bytes = (max_prepared_gb * f64::from(1u32 << 30)) as u64;
    let p = run::prune_images(max_bytes, dry_run)?;
    let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
    let mut text = String::new();
    for i in &p.removed {
        text.push_str(&format!(
            "{}\t{}\t{:.1} MiB\tlast used {}\t{}\n",
            if dry_run { "would remove" } else { "removed" },
            i.tag.as_deref().unwrap_or("(dangling)"),
            mib(i.bytes),
            i.last_used,
            i.instance.as_deref().unwrap_or("-")
        ));
    }
    out(text)?;
    for i in &p.in_use {
        super::note(format!(
            "kept {}: a container uses it",
            i.tag.as_deref().unwrap_or(&i.id)
        ));
    }
    super::note(format!(
        "{} {} prepared image(s), {:.1} MiB; {:.1} MiB of prepared images left",
        if dry_run { "would remove" } else { "removed" },
        p.removed.len(),
        mib(p.freed_bytes),
        mib(p.remaining_bytes)
    ));
    Ok(exit::SUCCESS)
}
