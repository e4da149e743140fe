//! Integration tests: one binary, one module per area.

#![allow(
    unreachable_pub,
    clippy::unwrap_used,
    clippy::disallowed_methods,
    clippy::print_stderr,
    clippy::print_stdout
)]

mod adversarial;
mod agent_shapes;
mod agents;
mod atif;
mod audit;
mod calibrate;
mod capture;
mod cli;
mod datasets;
mod errors;
mod grade_docker;
mod harbor_adapter;
mod harbor_docker;
mod harbor_loader;
mod harbor_run;
mod layers;
mod memory;
mod module_docs;
mod never_panic;
mod pulls;
mod report_html;
mod report_junit;
mod roundtrip;
mod runs_docker;
mod shapes;
mod support;
mod transcripts;
mod verifier;
