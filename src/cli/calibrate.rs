//! `beyondswe calibrate`: grade every instance's gold patch N times and its empty patch once (its
//! tests run), in fresh containers, resumably, and write which instances and tests can be
//! trusted (`calibration.json`).

use super::args::{DatasetArgs, LimitArgs, ResultsArgs, ScopeArgs};
use super::progress::Bar;
use super::{exit, note, out};
use anyhow::Result;
use beyondswe::calibration::{Calibration, CalibrationClass};
use beyondswe::files::write_atomic;
use beyondswe::run::{self, CalibrateSpec, Calibrated};
use clap::Args;
use sha2::{Digest, Sha256};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(crate) struct CalibrateArgs {
    #[command(flatten)]
    pub(crate) dataset: DatasetArgs,
    /// Gold gradings per instance.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) repeat: u32,
    #[command(flatten)]
    pub(crate) scope: ScopeArgs,
    /// Where to write the calibration (JSON; schema in schemas/calibration.schema.json).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// The gradings are kept in RESULTS_DIR/RUN_ID/{gold,empty} (resumable, like `grade`).
    #[arg(long, default_value = "calibration", value_parser = super::args::run_id)]
    pub(crate) run_id: String,
    #[command(flatten)]
    pub(crate) results: ResultsArgs,
    #[command(flatten)]
    pub(crate) output_format: super::args::TableOrJson,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

pub(crate) fn run(args: &CalibrateArgs, quiet: bool) -> Result<i32> {
    let spec = CalibrateSpec {
        dataset: args.dataset.spec(&args.scope),
        repeat: args.repeat,
        store: args.results.store(&args.run_id),
        jobs: args.scope.jobs(),
        limits: args.limits.limits(),
    };
    let run_dir = spec.store.dir();
    let calibration = match run::calibrate(&spec, &Bar::new(quiet))? {
        Calibrated::Done(c) => c,
        Calibrated::Interrupted => {
            note(format!(
                "interrupted: no new gradings started; containers removed; the gradings so far are kept in {} (run the same command to resume); {} not written",
                run_dir.display(),
                args.output.display()
            ));
            return Ok(exit::interrupted());
        }
    };
    let mut bytes = serde_json::to_vec_pretty(&calibration)?;
    bytes.push(b'\n');
    write_atomic(&args.output, &bytes)?;
    if args.output_format.json() {
        out(String::from_utf8_lossy(&bytes))?;
    } else {
        out(table(&calibration))?;
    }
    note(format!(
        "calibration written to {} (sha256 {}); gradings in {}",
        args.output.display(),
        hex::encode(Sha256::digest(&bytes)),
        run_dir.display()
    ));
    Ok(if calibration.summary.error > 0 {
        exit::INFRASTRUCTURE
    } else {
        exit::SUCCESS
    })
}

fn runs_cell(r: &beyondswe::calibration::RunCounts) -> String {
    let finished = r.runs - r.errors;
    let mut s = format!("{}/{finished}", r.resolved);
    if r.errors > 0 {
        s.push_str(&format!(" (+{} error)", r.errors));
    }
    s
}

/// The summary table: one line per instance, then the class counts.
fn table(c: &Calibration) -> String {
    let header = ["INSTANCE", "FAMILY", "CLASS", "GOLD", "EMPTY", "DETAIL"].map(String::from);
    let rows: Vec<[String; 6]> = c
        .instances
        .iter()
        .map(|i| {
            let detail = match i.class {
                CalibrationClass::Broken => format!(
                    "{}never passing under gold: {}{}",
                    if i.gold.causes.is_empty() {
                        String::new()
                    } else {
                        format!("{}; ", i.gold.causes.join(", "))
                    },
                    if i.failing_tests.is_empty() {
                        "(none ran)".to_owned()
                    } else {
                        shown(&i.failing_tests)
                    },
                    if i.gold.reasons.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", i.gold.reasons.join(", "))
                    }
                ),
                CalibrationClass::Flaky => format!("flaky: {}", shown(&i.flaky_tests)),
                CalibrationClass::Trivial => {
                    format!("passing without a fix: {}", shown(&i.passing_without_fix))
                }
                CalibrationClass::Error => {
                    format!("no gold grading finished: {}", i.gold.reasons.join(", "))
                }
                CalibrationClass::NoReference => "no gold patch".to_owned(),
                CalibrationClass::Ok if !i.failing_tests.is_empty() => {
                    format!("failing under gold: {}", shown(&i.failing_tests))
                }
                CalibrationClass::Ok => String::new(),
            };
            let detail = if i.gold.uses.is_empty() {
                detail
            } else {
                format!("{detail} (gold uses: {})", i.gold.uses.join(", "))
                    .trim_start()
                    .to_owned()
            };
            let detail = i.warnings.iter().fold(detail, |d, w| {
                format!("{d} (warning: {w})").trim_start().to_owned()
            });
            [
                beyondswe::text::one_line(&i.instance_id).into_owned(),
                i.family.as_str().to_owned(),
                i.class.as_str().to_owned(),
                runs_cell(&i.gold),
                runs_cell(&i.empty),
                detail,
            ]
        })
        .collect();
    let mut widths = [0usize; 6];
    for r in std::iter::once(&header).chain(rows.iter()) {
        for (w, cell) in widths.iter_mut().zip(r.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut s = String::new();
    for r in std::iter::once(&header).chain(rows.iter()) {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, cell)| format!("{cell:<w$}", w = widths[i]))
            .collect();
        s.push_str(line.join("  ").trim_end());
        s.push('\n');
    }
    let n = &c.summary;
    s.push_str(&format!(
        "\nok {}  broken {}  flaky {}  trivial {}  error {}  no_reference {}  (gold graded {} times each)\n",
        n.ok, n.broken, n.flaky, n.trivial, n.error, n.no_reference, c.repeat
    ));
    s
}

/// Test ids for one table cell: the first few, then how many more (calibration.json has them
/// all), so that a table line stays a line.
fn shown(ids: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = ids
        .iter()
        .take(SHOWN)
        .map(|i| beyondswe::text::one_line(i).into_owned())
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        text.push_str(&format!(
            " and {} more (all in the calibration file)",
            ids.len() - SHOWN
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn a_long_list_of_ids_stays_on_one_short_line() {
        let ids: Vec<String> = (0..201).map(|i| format!("tests/t.py::test_{i}")).collect();
        let cell = shown(&ids);
        assert!(
            cell.ends_with("and 196 more (all in the calibration file)"),
            "{cell}"
        );
        assert!(cell.len() < 200, "{cell}");
        assert_eq!(shown(&ids[..2]), "tests/t.py::test_0, tests/t.py::test_1");
    }
}
