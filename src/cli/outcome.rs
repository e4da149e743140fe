//! What the grading commands (`grade`, `verify`, `demo`) print when a run ends: the report's
//! summary on stdout, where its files are on stderr, and the run's exit code.

use super::{exit, note, out};
use anyhow::Result;
use beyondswe::report::{self, Format};
use beyondswe::run::RunOutcome;

/// Prints a finished run's summary and says where the results are; returns its exit code.
pub(crate) fn show(done: &RunOutcome, format: Format) -> Result<i32> {
    out(report::render(&done.report, format))?;
    note(format!(
        "results in {}; open {} in a browser",
        done.run_dir.display(),
        done.html().display()
    ));
    if done.interrupted {
        note(
            "interrupted: no new gradings started; containers removed; the results so far are kept",
        );
    }
    if done.planned == 0 && !done.interrupted {
        note(
            "error: nothing was graded: no submission names an instance in scope (check --ids, \
             the predictions' instance_id and the dataset)",
        );
    } else if !done.input_problems.is_empty() {
        note(format!(
            "error: {} input problem(s), named above; everything else was graded",
            done.input_problems.len()
        ));
    }
    Ok(exit_code(done))
}

/// 128 plus the signal when one stopped it, 3 when any verdict is an infrastructure error, 1
/// when nothing was graded, some input could not be used, or an error was the input's (an image
/// not there, a suite not given: `Reason::users_fix`), else 0.
fn exit_code(done: &RunOutcome) -> i32 {
    let errors = done
        .report
        .instances
        .iter()
        .filter(|i| i.verdict == beyondswe::grade::Outcome::Error);
    let (users, machine): (Vec<_>, Vec<_>) = errors.partition(|i| i.reason.users_fix().is_some());
    if done.interrupted {
        exit::interrupted()
    } else if !machine.is_empty() {
        exit::INFRASTRUCTURE
    } else if done.planned == 0 || !done.input_problems.is_empty() || !users.is_empty() {
        exit::FAILURE
    } else {
        exit::SUCCESS
    }
}
