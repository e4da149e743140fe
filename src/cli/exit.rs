//! Exit codes, decided here and nowhere else, and how an error that ends a command is printed.
//!
//! 0: everything succeeded. 1: the input had problems (a missing or unreadable file, bad lines,
//! validation errors, a submission that is not one, an image that is not there or not in its
//! registry, credentials refused). 2: the command line was wrong (clap's own
//! errors, and [`Usage`]). 3: infrastructure: the Docker engine unreachable or failing, an image
//! that no registry answered for, a verdict of `error`, the machine out of disk, the async runtime not starting.
//! 130, 143, 129: stopped by SIGINT (Ctrl-C), SIGTERM or SIGHUP (128 plus the signal), after the
//! run's containers were removed and its store left consistent.
//!
//! An error is printed once, as `error: ` and its chain of causes joined by `: `; a cause whose
//! text the message already holds is left out, so that a library error whose message carries its
//! source (and an `anyhow` context that names the same path) never prints anything twice.

use beyondswe::run::RunError;
use beyondswe::sandbox::SandboxError;

pub(crate) const SUCCESS: i32 = 0;
pub(crate) const FAILURE: i32 = 1;
pub(crate) const USAGE: i32 = 2;
pub(crate) const INFRASTRUCTURE: i32 = 3;
/// The exit code of a command whose work a signal stopped: 128 plus the signal (130 for Ctrl-C).
pub(crate) fn interrupted() -> i32 {
    128 + beyondswe::run::stop_signal().unwrap_or(2)
}

/// A command line that parses but cannot be run as given (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Usage(pub(crate) String);

/// A failure of the machinery rather than of the input (exit code 3).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Infrastructure(pub(crate) String);

/// The exit code of a command that ended with `err`.
pub(crate) fn of_error(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        if cause.is::<Usage>() {
            return USAGE;
        }
        if let Some(e) = cause.downcast_ref::<SandboxError>() {
            return if e.is_users() {
                FAILURE
            } else {
                INFRASTRUCTURE
            };
        }
        if cause.is::<Infrastructure>()
            || cause
                .downcast_ref::<RunError>()
                .is_some_and(RunError::is_infrastructure)
        {
            return INFRASTRUCTURE;
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::StorageFull
                    | std::io::ErrorKind::FileTooLarge
                    | std::io::ErrorKind::QuotaExceeded
            )
        {
            return INFRASTRUCTURE;
        }
    }
    FAILURE
}

/// The message of an error and its causes, each said once.
pub(crate) fn message(err: &anyhow::Error) -> String {
    beyondswe::errors::message(err.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_said_once_and_codes_follow_the_cause() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        #[derive(Debug, thiserror::Error)]
        #[error("data.jsonl: {source}")]
        struct Lib {
            #[source]
            source: std::io::Error,
        }
        let err = anyhow::Error::new(Lib { source: io }).context("reading the dataset");
        assert_eq!(
            message(&err),
            "reading the dataset: data.jsonl: no such file"
        );
        assert_eq!(of_error(&err), FAILURE);
        let usage = anyhow::Error::new(Usage("give at least one file".into()));
        assert_eq!(of_error(&usage.context("trajectory validate")), USAGE);
        // An image not there (with --pull never) is the user's to fix; a registry that does
        // not answer is not.
        let missing =
            anyhow::Error::new(SandboxError::ImageMissing { image: "x".into() }).context("grading");
        assert_eq!(of_error(&missing), FAILURE);
        let pull = |why| SandboxError::Pull {
            image: "x".into(),
            why,
            message: "m".into(),
        };
        let down = RunError::ImagesUnavailable(vec![(
            "x".into(),
            pull(beyondswe::sandbox::PullFailure::Unreachable),
        )]);
        assert_eq!(of_error(&anyhow::Error::new(down)), INFRASTRUCTURE);
        let typo = RunError::ImagesUnavailable(vec![(
            "x".into(),
            pull(beyondswe::sandbox::PullFailure::NotFound),
        )]);
        assert_eq!(of_error(&anyhow::Error::new(typo)), FAILURE);
        let full = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::StorageFull));
        assert_eq!(of_error(&full.context("writing results")), INFRASTRUCTURE);
        // A report file that cannot be written for want of disk, through a run's error.
        let report = RunError::Write(std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            "failed to write file `runs/r/report.json`: No space left on device",
        ));
        assert_eq!(of_error(&anyhow::Error::new(report)), INFRASTRUCTURE);
        let unreachable = RunError::Sandbox(SandboxError::EngineUnreachable {
            endpoint: "unix:///x".into(),
            message: "gone".into(),
        });
        assert_eq!(of_error(&anyhow::Error::new(unreachable)), INFRASTRUCTURE);
        let bad = RunError::Write(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        assert_eq!(of_error(&anyhow::Error::new(bad)), FAILURE);
    }
}
