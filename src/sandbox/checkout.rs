//! An instance's repository at its base commit inside a container, its setup commands run
//! after: where the grader's prepare step and the transcript replay both start.

use super::{ExecSpec, Sandbox, SandboxError};
use crate::adapters::shell_quote;
use std::time::Duration;

/// What to check out.
#[derive(Debug, Clone, Copy)]
pub struct Checkout<'a> {
    /// The repository in the image (made if missing, so a Doc2Repo workdir can be empty).
    pub workdir: &'a str,
    /// The commit to check out; `None` leaves the workdir at whatever the image has.
    pub base: Option<&'a str>,
    /// Setup commands, run in the workdir after the checkout (`pre_commands`).
    pub setup: &'a [String],
    /// Bound on each setup command.
    pub setup_timeout: Duration,
    /// Chain the setup commands' exports through this file (`adapters/setup_step.sh`, at
    /// `.0`, keeping them in `.1`), as one shell session would; `None` runs each command in a
    /// shell of its own.
    pub env_chain: Option<(&'a str, &'a str)>,
}

/// How it went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckedOut {
    /// The workdir is not a git repository (nothing was run).
    NotARepository,
    /// `git checkout` of the base failed: its output.
    CheckoutFailed(String),
    /// At the base, setup run: each command with its output, and those that failed (the
    /// official harness goes on past them too).
    Done {
        /// Each setup command (`$ cmd`) followed by its output.
        log: String,
        /// The setup commands that exited non-zero, as written.
        failed: Vec<String>,
    },
}

/// Checks out `what.base` in `what.workdir` and runs the setup commands.
pub async fn check_out<S: Sandbox>(
    sandbox: &S,
    container: &S::Handle,
    what: &Checkout<'_>,
) -> Result<CheckedOut, SandboxError> {
    let w = shell_quote(what.workdir);
    let sh = |script: String, limit: Duration| {
        ExecSpec::sh(script).timeout(limit + Duration::from_secs(60))
    };
    let is_repo = sandbox
        .exec(
            container,
            &sh(
                format!("mkdir -p {w} && cd {w} && git rev-parse --git-dir"),
                Duration::from_secs(60),
            ),
        )
        .await?;
    if !is_repo.success() {
        return Ok(CheckedOut::NotARepository);
    }
    if let Some(base) = what.base {
        let script = format!(
            "cd {w} && git -c advice.detachedHead=false checkout -q -f {}",
            shell_quote(base)
        );
        let out = sandbox
            .exec(container, &sh(script, Duration::from_secs(300)))
            .await?;
        if !out.success() {
            return Ok(CheckedOut::CheckoutFailed(out.combined()));
        }
    }
    let secs = what.setup_timeout.as_secs().max(1);
    let mut log = String::new();
    let mut failed = Vec::new();
    for cmd in what.setup {
        let run = match what.env_chain {
            Some((step, env)) => format!(
                "sh {} {} {}",
                shell_quote(step),
                shell_quote(env),
                shell_quote(cmd)
            ),
            None => format!("sh -c {}", shell_quote(cmd)),
        };
        let script = format!(
            "cd {w} && if command -v timeout >/dev/null; then timeout -k 10 {secs} {run}; else {run}; fi"
        );
        let out = sandbox
            .exec(container, &sh(script, what.setup_timeout))
            .await?;
        log.push_str(&format!("$ {cmd}\n{}\n", out.combined()));
        if !out.success() {
            failed.push(cmd.clone());
        }
    }
    Ok(CheckedOut::Done { log, failed })
}
