//! Converters: BeyondSWE record ⇄ Harbor task directory.
//!
//! Trajectory releases ⇄ Harbor job directories will join them. Converters are synchronous and
//! never start a container.

mod error;
mod from_harbor;
mod to_harbor;

pub use error::ConvertError;
pub use from_harbor::{TaskRead, is_task_dir, read_task, store_test_suite, task_dirs};
pub use to_harbor::{
    Resources, ToHarborOptions, check_dir_name, check_test_suite_name, find_solution,
    find_test_suite, suite_name_problem, write_task,
};
