//! `beyondswe demo`: the main job on the bundled demo data.
//!
//! Builds what it needs (the base image FROM a Debian image pulled from a registry, or, when no
//! registry answers, offline from Debian packages with root; the fixture images its dataset
//! names FROM it, and no other), checks that the bundled dataset survives a
//! JSONL → Harbor → JSONL round trip, then grades a bundled predictions file that mixes good, bad
//! and tampering submissions, in parallel, and prints the summary. A second run resumes and
//! finishes at once.
//!
//! The demo data and the image scripts are embedded in the binary and written to a temporary
//! directory laid out as the checkout is, so an installed binary (`cargo install --path .`) runs
//! the demo from anywhere.

use super::progress::Bar;
use super::{exit, note, out, outcome};
use anyhow::{Context, Result, bail};
use beyondswe::report::{Format, read_run};
use beyondswe::run::{self, DatasetSpec, RunLimits, RunSpec, StoreSpec, Submissions};
use clap::Args;
use include_dir::{Dir, include_dir};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the demo reads, as the checkout holds it (each tree is written back to the same path;
/// `build.rs` rebuilds the binary when any of it changes).
static EMBEDDED: [(&str, Dir<'static>); 5] = [
    (
        "fixtures/dataset",
        include_dir!("$CARGO_MANIFEST_DIR/fixtures/dataset"),
    ),
    (
        "fixtures/predictions",
        include_dir!("$CARGO_MANIFEST_DIR/fixtures/predictions"),
    ),
    (
        "fixtures/test_suites",
        include_dir!("$CARGO_MANIFEST_DIR/fixtures/test_suites"),
    ),
    (
        "fixtures/submissions",
        include_dir!("$CARGO_MANIFEST_DIR/fixtures/submissions"),
    ),
    (
        "fixtures/images",
        include_dir!("$CARGO_MANIFEST_DIR/fixtures/images"),
    ),
];

/// The image scripts the demo runs.
const SCRIPTS: [(&str, &str); 3] = [
    (
        "scripts/build-fixture-images.sh",
        include_str!("../../scripts/build-fixture-images.sh"),
    ),
    (
        "scripts/build-base-image.sh",
        include_str!("../../scripts/build-base-image.sh"),
    ),
    (
        "scripts/debian-mirror.sh",
        include_str!("../../scripts/debian-mirror.sh"),
    ),
];

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Where the run's results go.
    #[arg(long, default_value = "demo-runs")]
    pub(crate) results_dir: PathBuf,
    /// Gradings at once.
    #[arg(long, default_value_t = 2)]
    pub(crate) jobs: usize,
}

/// Writes the embedded demo data under `root`.
fn unpack(root: &Path) -> Result<()> {
    for (at, dir) in &EMBEDDED {
        let base = root.join(at);
        fs_err::create_dir_all(&base)?;
        dir.extract(&base)
            .with_context(|| format!("writing the demo data to {}", base.display()))?;
    }
    fs_err::create_dir_all(root.join("scripts"))?;
    for (at, text) in SCRIPTS {
        use std::os::unix::fs::PermissionsExt;
        let path = root.join(at);
        fs_err::write(&path, text)?;
        // The scripts run one another.
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

pub(crate) fn run(args: &DemoArgs, quiet: bool) -> Result<i32> {
    let data = tempfile::tempdir()?;
    let root = data.path();
    unpack(root)?;
    let fixtures = root.join("fixtures");

    note(
        "1/3 images: the base (FROM a Debian image from a registry, or offline from Debian packages) and the fixture images FROM it (cached by tag)",
    );
    let dataset = fixtures.join("dataset/demo.jsonl");
    let exe = std::env::current_exe().context("locating this binary")?;
    let status = std::process::Command::new("bash")
        .arg(root.join("scripts/build-fixture-images.sh"))
        .args(fixture_images(&dataset)?)
        .env("BEYONDSWE_BIN", exe)
        .stdout(std::process::Stdio::null())
        .status()
        .context("running scripts/build-fixture-images.sh")?;
    if !status.success() {
        bail!("building the images failed (see above); is the Docker engine running?");
    }

    note("2/3 convert: the demo dataset to Harbor task directories and back");
    let suites = fixtures.join("test_suites");
    let (same, total) = beyondswe::dataset::round_trip(&dataset, &suites, root, &mut |n| note(n))?;
    note(format!(
        "    {same}/{total} records identical after the round trip"
    ));

    note("3/3 grade: good, bad and tampering submissions, each in a fresh container");
    let predictions = fixtures.join("predictions/demo.jsonl");
    let mut spec = RunSpec::new(
        DatasetSpec {
            test_suites: Some(suites),
            ..DatasetSpec::new(dataset)
        },
        Submissions::Predictions {
            path: predictions.clone(),
            format: None,
            patches: None,
        },
        StoreSpec {
            results_dir: args.results_dir.clone(),
            run_id: "demo".into(),
            force: true,
            allow_mixed: true,
        },
    );
    spec.jobs = args.jobs.max(1);
    spec.limits = RunLimits {
        test_timeout: Duration::from_secs(120),
        ..RunLimits::default()
    };
    let code = outcome::show(&run::grade_run(&spec, &Bar::new(quiet))?, Format::Table)?;
    let (_, stored) = read_run(&spec.store.dir())?;
    let notes = demo_notes(&predictions)?;
    let mut table = String::from(
        "\nINSTANCE                                          VERDICT     REASON            SUBMISSION\n",
    );
    for s in &stored {
        let v = &s.verdict;
        let (verdict, reason) = (v.verdict.as_str(), v.reason.as_str());
        let mut what = notes.get(&v.instance_id).cloned().unwrap_or_default();
        if v.flags.tampering() {
            what.push_str("  [flagged]");
        }
        table.push_str(&format!(
            "{:<49} {verdict:<11} {reason:<17} {what}\n",
            v.instance_id
        ));
    }
    out(table)?;
    Ok(if same != total { exit::FAILURE } else { code })
}

/// The fixture images a dataset names (`beyondswe-fixture/NAME:VERSION`, built from
/// fixtures/images/NAME), each once: the demo builds those only, not every fixture image (one of
/// those copies its Python from the building machine's pyenv).
fn fixture_images(dataset: &Path) -> Result<Vec<String>> {
    let mut names = std::collections::BTreeSet::new();
    for item in beyondswe::record::RecordReader::open(dataset)? {
        let (_, record) = item?;
        let name = record
            .image()
            .and_then(|i| i.strip_prefix("beyondswe-fixture/"))
            .and_then(|i| i.split(':').next());
        names.extend(name.map(str::to_owned));
    }
    Ok(names.into_iter().collect())
}

fn demo_notes(path: &Path) -> Result<std::collections::HashMap<String, String>> {
    let text = fs_err::read_to_string(path)?;
    let mut notes = std::collections::HashMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line)?;
        notes.insert(
            v["instance_id"].as_str().unwrap_or_default().to_owned(),
            v["note"].as_str().unwrap_or_default().to_owned(),
        );
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded data is the checkout's, file for file, and holds what the demo reads.
    #[test]
    fn the_embedded_demo_data_is_the_checkouts() {
        let dir = tempfile::tempdir().unwrap();
        unpack(dir.path()).unwrap();
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut n = 0;
        for entry in walkdir::WalkDir::new(dir.path()) {
            let entry = entry.unwrap();
            if entry.file_type().is_file() {
                let rel = entry.path().strip_prefix(dir.path()).unwrap();
                let theirs = fs_err::read(checkout.join(rel)).unwrap();
                assert_eq!(
                    fs_err::read(entry.path()).unwrap(),
                    theirs,
                    "{}",
                    rel.display()
                );
                n += 1;
            }
        }
        assert!(n > 10, "{n} files");
        for needed in [
            "fixtures/dataset/demo.jsonl",
            "fixtures/predictions/demo.jsonl",
            "fixtures/submissions/minidoc_partial",
            "fixtures/images/calc/Dockerfile",
            "scripts/build-fixture-images.sh",
            "scripts/build-base-image.sh",
            "scripts/debian-mirror.sh",
        ] {
            assert!(dir.path().join(needed).exists(), "{needed}");
        }
    }

    /// The demo builds the fixture images its dataset grades on, each a build context in the
    /// embedded data, and no other.
    #[test]
    fn the_demo_builds_only_the_images_its_dataset_names() {
        let dir = tempfile::tempdir().unwrap();
        unpack(dir.path()).unwrap();
        let names = fixture_images(&dir.path().join("fixtures/dataset/demo.jsonl")).unwrap();
        assert_eq!(names, ["calc", "minidoc", "textkit"]);
        for name in &names {
            let dockerfile = dir
                .path()
                .join("fixtures/images")
                .join(name)
                .join("Dockerfile");
            assert!(dockerfile.is_file(), "{name}");
        }
    }
}
