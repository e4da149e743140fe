//! The `beyondswe` binary: parses the command line, runs one subcommand, maps errors to exit codes
//! (through `cli::exit`, the one place that decides them).

mod cli;

use clap::FromArgMatches;
use cli::{Cli, Command, exit, note};

fn main() {
    // The command tree with every command's examples (cli/examples.rs).
    let matches = cli::examples::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    init_logging(cli.verbose, cli.quiet);
    cli::set_quiet(cli.quiet);
    let result = match cli.command {
        Command::Convert(cmd) => cli::convert::run(cmd),
        Command::Validate(args) => cli::validate::run(&args),
        Command::Schemas(cmd) => cli::schemas::run(&cmd),
        Command::Demo(args) => cli::demo::run(&args, cli.quiet),
        Command::GradeOne(args) => cli::grade_one::run(&args),
        Command::Grade(args) => cli::grade::run(&args, cli.quiet),
        Command::Calibrate(args) => cli::calibrate::run(&args, cli.quiet),
        Command::Report(args) => cli::grade::report(&args),
        Command::Compare(args) => cli::grade::compare(&args),
        Command::Merge(args) => cli::grade::merge(&args),
        Command::Image(cmd) => cli::image::run(&cmd),
        Command::Capture(args) => cli::capture::run(&args),
        Command::Ingest(args) => cli::ingest::run(&args),
        Command::Audit(args) => cli::audit::run(&args),
        Command::Trajectory(cmd) => cli::trajectory::run(&cmd),
        Command::Release(cmd) => cli::release::run(&cmd),
        Command::Verify(args) => cli::verify::run(&args, cli.quiet),
        Command::Parity(args) => cli::parity::run(&args, cli.quiet),
    };
    let code = match result {
        Ok(code) => code,
        Err(err) => {
            note(format!("error: {}", exit::message(&err)));
            exit::of_error(&err)
        }
    };
    std::process::exit(code);
}

fn init_logging(verbose: u8, quiet: bool) {
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, _) => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("BEYONDSWE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    use std::io::IsTerminal;
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .without_time()
        .init();
}
