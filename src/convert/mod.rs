//! Converters between a BeyondSWE record and a Harbor task directory, both ways: writing a task
//! (to_harbor.rs: task.toml, instruction, environment, tests, solution, Doc2Repo suites, written
//! whole or not at all) and reading one back into a record (from_harbor.rs: our own layout and
//! the official BeyondSWE-harbor one), with the errors of both (error.rs); and whole Harbor
//! jobs directories to trajectory releases and back (release.rs). Whole datasets are converted
//! above this module, by `dataset::dataset_to_tasks` and `tasks_to_dataset`, which read them
//! through the one dataset source: `convert` never imports `dataset`.
//!
//! The release and job formats themselves are Harbor's own and live in `harbor::job`; the
//! restore rules (`keep_paths`) in `restore_rules`. Converters are synchronous and never start
//! a container.
//!
//! Files:
//! - `error.rs`: Errors of the record ⇄ Harbor converters; each names the instance or path it is
//!   about.
//! - `from_harbor.rs`: Harbor task directory → BeyondSWE record.
//! - `release.rs`: Whole Harbor jobs directories ⇄ trajectory releases.
//! - `to_harbor.rs`: BeyondSWE record → Harbor task directory.

mod error;
mod from_harbor;
mod release;
mod to_harbor;

pub use error::ConvertError;
pub use from_harbor::{TaskRead, is_task_dir, read_task, store_test_suite, task_dirs};
pub use release::{ReleaseError, Released, Restored, jobs_to_release, release_to_jobs};
pub use to_harbor::{
    DEFAULT_ORG, Oracle, Resources, ToHarborOptions, VerifierMode, check_dir_name,
    check_test_suite_name, find_solution, find_test_suite, suite_name_problem, write_oracle_task,
    write_task,
};
