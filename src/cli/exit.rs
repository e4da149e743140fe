//! Exit codes, in one place.
//!
//! 0: everything succeeded. 1: the input had problems (bad lines, validation errors) or a step
//! failed. 2: the command line was wrong (clap's own code). 3: infrastructure
//! (Docker engine unreachable, an image missing, a verdict of `error`).

pub(crate) const SUCCESS: i32 = 0;
pub(crate) const FAILURE: i32 = 1;
pub(crate) const INFRASTRUCTURE: i32 = 3;
