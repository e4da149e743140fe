//! `beyondswe schemas write|check [DIR]`: the JSON Schemas generated from the Rust types.

use super::{exit, note, out};
use anyhow::Result;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub(crate) enum SchemasCommand {
    /// Regenerate the schema files.
    Write {
        /// Where the schema files go.
        #[arg(default_value = "schemas")]
        dir: PathBuf,
    },
    /// Fail when a schema file is missing or stale.
    Check {
        /// Where the schema files are.
        #[arg(default_value = "schemas")]
        dir: PathBuf,
    },
}

pub(crate) fn run(cmd: &SchemasCommand) -> Result<i32> {
    match cmd {
        SchemasCommand::Write { dir } => {
            for name in beyondswe::schema::write(dir)? {
                out(format!("{}\n", dir.join(name).display()))?;
            }
            Ok(exit::SUCCESS)
        }
        SchemasCommand::Check { dir } => {
            let stale = beyondswe::schema::stale(dir);
            if stale.is_empty() {
                note(format!("{}: schemas are up to date", dir.display()));
                Ok(exit::SUCCESS)
            } else {
                note(format!(
                    "{}: stale or missing: {}\nhint: run `cargo run -- schemas write {}` and commit the result",
                    dir.display(),
                    stale.join(", "),
                    dir.display()
                ));
                Ok(exit::FAILURE)
            }
        }
    }
}
