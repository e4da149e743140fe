//! Argument groups the grading commands share (`#[command(flatten)]`), each turned into the
//! library's settings before any work starts.

use beyondswe::report::Format;
use beyondswe::run::{DatasetSpec, RunLimits, StoreSpec, default_jobs};
use beyondswe::sandbox::{Limits, PullPolicy};
use beyondswe::submission::AgentFormat;
use beyondswe::submission::{
    DEFAULT_MAX_PATCH_BYTES, DEFAULT_MAX_TREE_BYTES, ReadLimits, TreeLimits,
};
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use std::path::PathBuf;
use std::time::Duration;

/// The dataset and its Doc2Repo suites.
#[derive(Debug, Args, Clone)]
pub(crate) struct DatasetArgs {
    /// The dataset: a BeyondSWE JSONL file, its Parquet copy, a directory of Harbor task
    /// directories, or a Hugging Face dataset name (`AweAI-Team/BeyondSWE`) in the local cache.
    #[arg(long)]
    pub(crate) dataset: PathBuf,
    /// Directory with the Doc2Repo test-suite zips (the official evaluator's
    /// BEYONDSWE_TEST_SUITE_DIR when not given).
    #[arg(long, env = "BEYONDSWE_TEST_SUITE_DIR")]
    pub(crate) test_suites: Option<PathBuf>,
}

impl DatasetArgs {
    /// The dataset with only the instances of `scope`.
    pub(crate) fn spec(&self, scope: &ScopeArgs) -> DatasetSpec {
        DatasetSpec {
            path: self.dataset.clone(),
            test_suites: self.test_suites.clone(),
            ids: scope.ids(),
        }
    }
}

/// Which instances, and how many gradings at once.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct ScopeArgs {
    /// Gradings at once (default: the number of cores; SWE-bench's `--max-workers` works too).
    #[arg(long, alias = "max-workers")]
    pub(crate) jobs: Option<usize>,
    /// Only these instance ids, separated by spaces or commas (SWE-bench's `--instance-ids`
    /// works too).
    #[arg(long, alias = "instance-ids", num_args = 1..)]
    pub(crate) ids: Vec<String>,
}

impl ScopeArgs {
    pub(crate) fn jobs(&self) -> usize {
        self.jobs.unwrap_or_else(default_jobs).max(1)
    }

    /// The ids as given, each value split at commas and whitespace (`--ids A,B` and `--ids
    /// "A B"` name two), empty pieces dropped.
    pub(crate) fn ids(&self) -> Vec<String> {
        split_ids(&self.ids)
    }
}

/// Instance ids from command-line values that may each hold several, separated by commas or
/// whitespace.
pub(crate) fn split_ids(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| v.split(|c: char| c == ',' || c.is_whitespace()))
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `--format table|json`, for a command that prints a table for people or JSON for programs;
/// `--json` is kept as the old spelling of `--format json`.
#[derive(Debug, Args, Clone)]
pub(crate) struct TableOrJson {
    /// What to print: `table` for people, `json` for programs.
    #[arg(long = "format", value_name = "FORMAT", value_parser = ["table", "json"], default_value = "table")]
    format: String,
    /// The same as --format json.
    #[arg(long, hide = true)]
    json: bool,
}

impl TableOrJson {
    /// JSON was asked for.
    pub(crate) fn json(&self) -> bool {
        self.json || self.format == "json"
    }
}

/// Where the results store is.
#[derive(Debug, Args, Clone)]
pub(crate) struct ResultsArgs {
    /// The run's results go to RESULTS_DIR/RUN_ID.
    #[arg(long, default_value = "runs")]
    pub(crate) results_dir: PathBuf,
    /// Reuse a results directory made for another dataset.
    #[arg(long)]
    pub(crate) force: bool,
    /// Resume a run that another grader version made (its verdicts may differ: CHANGELOG.md).
    #[arg(long)]
    pub(crate) allow_mixed: bool,
}

impl ResultsArgs {
    pub(crate) fn store(&self, run_id: &str) -> StoreSpec {
        StoreSpec {
            results_dir: self.results_dir.clone(),
            run_id: run_id.to_owned(),
            force: self.force,
            allow_mixed: self.allow_mixed,
        }
    }
}

/// Container limits, the test timeout, and how much of a submission is read.
#[derive(Debug, Args, Clone)]
pub(crate) struct LimitArgs {
    /// Seconds the test command may run.
    #[arg(long, default_value_t = beyondswe::DEFAULT_TIMEOUT_SECS)]
    pub(crate) timeout: u64,
    /// Memory per container, in MB.
    #[arg(long, default_value_t = Limits::default().memory_mb)]
    pub(crate) memory_mb: u64,
    /// CPUs per container.
    #[arg(long, default_value_t = Limits::default().cpus)]
    pub(crate) cpus: f64,
    /// Processes per container (stops fork bombs).
    #[arg(long, default_value_t = Limits::default().pids)]
    pub(crate) pids: i64,
    /// What a container may write, in MiB (0: no limit): a storage quota where the engine's
    /// storage driver has one, else a watchdog on the container's size; over it is `disk_limit`.
    #[arg(long, default_value_t = Limits::default().disk_mb)]
    pub(crate) disk_mb: u64,
    /// Largest patch file read from disk (--patch, --patches DIR, Harbor trial artifacts), in MiB.
    #[arg(long, default_value_t = DEFAULT_MAX_PATCH_BYTES / MIB)]
    pub(crate) max_patch_mb: u64,
    /// Largest size a Doc2Repo repository (directory or archive) may expand to, in MiB; its
    /// files wait in a temporary file on disk, never in memory.
    #[arg(long, default_value_t = DEFAULT_MAX_TREE_BYTES / MIB)]
    pub(crate) max_repo_mb: u64,
    /// Keep the prepared images under this many GiB: at the end of the run the least recently
    /// used are removed first (0: no limit; `image prune` does it by hand).
    #[arg(long, default_value_t = (beyondswe::run::DEFAULT_MAX_PREPARED_BYTES >> 30) as f64, value_parser = gib)]
    pub(crate) max_prepared_gb: f64,
    /// When to pull an instance image from its registry: `missing` (not on the engine),
    /// `always`, or `never`. Pulls use your Docker credentials (`docker login`).
    #[arg(long, default_value = "missing", value_parser = pull_policy())]
    pub(crate) pull: PullPolicy,
}

/// A size in GiB: a number, 0 or more (fractions allowed).
pub(crate) fn gib(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(n) if n.is_finite() && n >= 0.0 => Ok(n),
        _ => Err(format!("`{s}`: expected a size in GiB, 0 or more")),
    }
}

/// Sizes on the command line are in MiB.
pub(crate) const MIB: u64 = 1024 * 1024;

impl LimitArgs {
    pub(crate) fn limits(&self) -> RunLimits {
        RunLimits {
            container: Limits {
                memory_mb: self.memory_mb,
                cpus: self.cpus,
                pids: self.pids,
                disk_mb: self.disk_mb,
            },
            test_timeout: Duration::from_secs(self.timeout),
            read: ReadLimits {
                max_patch_bytes: self.max_patch_mb.saturating_mul(MIB),
                tree: TreeLimits {
                    max_total_bytes: self.max_repo_mb.saturating_mul(MIB),
                    ..TreeLimits::default()
                },
            },
            max_prepared_bytes: (self.max_prepared_gb * f64::from(1u32 << 30)) as u64,
            pull: self.pull,
        }
    }
}

/// A parser for one of a library enum's names (the library has no clap): `--help` lists them
/// and clap refuses any other.
fn one_of<T: Copy + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(all.iter().map(|&v| name(v))).try_map(move |s: String| {
        all.iter()
            .copied()
            .find(|&v| name(v) == s)
            .ok_or_else(|| format!("unknown value `{s}`"))
    })
}

/// `--format` of a report: table, json, markdown or html.
pub(crate) fn report_format() -> impl TypedValueParser<Value = Format> {
    one_of(&Format::ALL, Format::as_str)
}

/// `--agent-format` of `grade` and `ingest`: an agent output format.
pub(crate) fn agent_format() -> impl TypedValueParser<Value = AgentFormat> {
    one_of(&AgentFormat::ALL, AgentFormat::name)
}

/// `--pull`: when an instance image is pulled.
pub(crate) fn pull_policy() -> impl TypedValueParser<Value = PullPolicy> {
    one_of(&PullPolicy::ALL, PullPolicy::name)
}

/// A calendar date written `YYYY-MM-DD` (`--date`): a month of the year and a day of that
/// month, leap years counted.
pub(crate) fn date(s: &str) -> Result<String, String> {
    let bad = |why: &str| Err(format!("{s:?} is not a date YYYY-MM-DD: {why}"));
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return bad("expected three numbers joined by `-`");
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return bad("expected four, two and two digits");
    }
    let num = |t: &str| {
        t.parse::<u32>()
            .ok()
            .filter(|_| t.bytes().all(|b| b.is_ascii_digit()))
    };
    let (Some(y), Some(m), Some(d)) = (num(y), num(m), num(d)) else {
        return bad("expected digits");
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return bad("the month is not 01 to 12"),
    };
    if d == 0 || d > days {
        return bad(&format!("month {m:02} of {y} has days 01 to {days}"));
    }
    Ok(s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name parses back to its value, and an agent format's name is the one it is
    /// written under in JSON.
    #[test]
    fn every_name_parses_to_its_value() {
        let cmd = clap::Command::new("t");
        for f in AgentFormat::ALL {
            let parsed = agent_format().parse_ref(&cmd, None, std::ffi::OsStr::new(f.name()));
            assert_eq!(parsed.unwrap(), f);
            assert_eq!(serde_json::to_value(f).unwrap(), f.name());
        }
        for f in Format::ALL {
            let parsed = report_format().parse_ref(&cmd, None, std::ffi::OsStr::new(f.as_str()));
            assert_eq!(parsed.unwrap(), f);
        }
        for p in PullPolicy::ALL {
            let parsed = pull_policy().parse_ref(&cmd, None, std::ffi::OsStr::new(p.name()));
            assert_eq!(parsed.unwrap(), p);
        }
        let bad = agent_format().parse_ref(&cmd, None, std::ffi::OsStr::new("copilot"));
        assert!(bad.is_err());
    }
}

/// A `--run-id`: one directory name under `--results-dir`, never a path out of it.
pub(crate) fn run_id(s: &str) -> Result<String, String> {
    let problem = if s.is_empty() {
        Some("it is empty")
    } else if s == "." || s == ".." {
        Some("it is `.` or `..`")
    } else if s.contains(['/', '\\']) {
        Some("it holds `/` or `\\`: a run id is one directory name under --results-dir")
    } else if s.chars().any(char::is_control) {
        Some("it holds control characters")
    } else if s.len() > 200 {
        Some("it is longer than 200 bytes")
    } else {
        None
    };
    match problem {
        Some(why) => Err(format!("{s:?} cannot be a run id: {why}")),
        None => Ok(s.to_owned()),
    }
}

#[cfg(test)]
mod run_id_tests {
    use super::run_id;

    #[test]
    fn a_run_id_is_one_directory_name() {
        for ok in ["r1", "gpt-5.1_run", "a b", "..x"] {
            assert_eq!(run_id(ok).as_deref(), Ok(ok));
        }
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "a/b",
            "/abs",
            "a\\b",
            "a\nb",
            "a\u{1b}[2J",
        ] {
            assert!(run_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn dates_are_days_of_the_calendar() {
        for ok in ["2026-12-05", "2024-02-29", "2000-02-29", "1999-12-31"] {
            assert_eq!(super::date(ok).as_deref(), Ok(ok));
        }
        for bad in [
            "2026-13-45",
            "2026-02-29",
            "1900-02-29",
            "2026-04-31",
            "2026-1-05",
            "26-12-05",
            "2026-12-5x",
            "",
            "2026/12/05",
            "+026-12-05",
        ] {
            let e = super::date(bad).unwrap_err();
            assert!(e.contains("YYYY-MM-DD"), "{bad}: {e}");
        }
    }
}
