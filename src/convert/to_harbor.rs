//! BeyondSWE record → Harbor task directory.
//!
//! Owns the layout we write (see README "Harbor task directories") and the rule that a task
//! directory appears completely or not at all: everything is written into a hidden temporary
//! directory beside the target and renamed into place.

use super::error::{ConvertError, io_err};
use crate::adapters;
use crate::harbor::{
    CONVERTED_BY, CONVERTED_BY_KEY, CollectHook, EnvironmentToml, TaskTable, TaskToml, Timeout,
    VerifierToml, paths, task_dir_name,
};
use crate::record::{Family, Record};
use crate::submission::{TreeLimits, read_tree};
use crate::verifier_spec::instance_config;
use fs_err as fs;
use sha2::Digest;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Table;

/// Resources and timeouts written into `task.toml`.
#[derive(Debug, Clone)]
pub struct Resources {
    /// `[environment] cpus`.
    pub cpus: u32,
    /// `[environment] memory_mb`.
    pub memory_mb: u64,
    /// `[environment] storage_mb`.
    pub storage_mb: u64,
    /// `[agent] timeout_sec`: how long the agent's session may last.
    pub agent_timeout_sec: f64,
    /// `[verifier] timeout_sec`: how long `tests/test.sh` may run, setup and tests together.
    pub verifier_timeout_sec: f64,
    /// `[environment] build_timeout_sec`: how long building `environment/` may take.
    pub build_timeout_sec: f64,
    /// Seconds the tests themselves may run, inside the verifier (`test_timeout_sec` of
    /// `tests/test_config.json`, as `--timeout` offline).
    pub test_timeout_sec: u64,
}

impl Default for Resources {
    /// 2 CPUs (the official runs used 4, which Docker refuses on a 2-core machine: `Range of
    /// CPUs is from 0.01 to 2.00`; Harbor's `--override-cpus` raises it per run), 8 GiB, a 4-hour
    /// session, tests capped at 30 minutes.
    fn default() -> Self {
        Resources {
            cpus: 2,
            memory_mb: 8192,
            storage_mb: 20480,
            agent_timeout_sec: 14400.0,
            verifier_timeout_sec: 3600.0,
            build_timeout_sec: crate::DEFAULT_TIMEOUT_SECS as f64,
            test_timeout_sec: crate::DEFAULT_TIMEOUT_SECS,
        }
    }
}

/// Where Harbor runs a task's verifier.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum VerifierMode {
    /// Harbor ≥ 0.26 (`[verifier] environment_mode = "separate"`): a fresh container of the
    /// task's image, fed only the diff a `[[verifier.collect]]` hook wrote in the agent's
    /// container. Nothing else the agent did (as root, outside its work) reaches the verifier.
    #[default]
    Separate,
    /// Harbor 0.1.x, which has no separate verifier: `tests/test.sh` runs in the agent's own
    /// container and captures what the agent left first. A root agent owns that container
    /// (README: "What the shared layout cannot stop").
    Shared,
}

impl VerifierMode {
    /// `separate` or `shared`, as `task.toml` and `tests/test.sh` spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            VerifierMode::Separate => "separate",
            VerifierMode::Shared => "shared",
        }
    }
}

/// How records become task directories.
#[derive(Debug, Clone, Default)]
pub struct ToHarborOptions {
    /// Directory holding Doc2Repo suite zips (named by the record's `test_suite`).
    pub test_suites: Option<PathBuf>,
    /// Replace task directories that already exist.
    pub force: bool,
    /// Write `[environment].docker_image` (the record's image). Harbor then starts that image as
    /// it is and never builds `environment/`, so the history strip does not run: only for images
    /// that are already stripped. Off by default: Harbor builds `environment/`, whose Dockerfile
    /// strips every commit, tag and ref newer than the base before any agent starts.
    pub prebuilt_image: bool,
    /// Doc2Repo reference solutions: `<dir>/<instance_id>` as a directory, or
    /// `<instance_id>.tar`, `.tar.gz`, `.tgz` or `.zip`; installed by `solution/solve.sh`.
    pub solutions: Option<PathBuf>,
    /// Resources and timeouts for `task.toml` and the verifier.
    pub resources: Resources,
    /// The organisation in each task's Harbor package name, `ORG/<task directory name>`
    /// (`[task] name`); `None`: [`DEFAULT_ORG`].
    pub org: Option<String>,
    /// Where Harbor runs the verifier: separate by default; shared for Harbor 0.1.x.
    pub verifier_mode: VerifierMode,
    /// The verifier turns evidence into `forgery_suspected` (`grade --strict`): `"strict": true`
    /// in `tests/test_config.json`; by default only proof changes a verdict.
    pub strict: bool,
    /// Gold checks by instance id, each written as its task's `tests/gold_check.json`: the
    /// task's verifier then builds canary groups only on the sites the check found sound.
    pub gold_checks: std::collections::BTreeMap<String, crate::verifier_spec::GoldCheck>,
}

/// What a task's oracle solution is when it is not the dataset's: a submission to grade through
/// Harbor (`grade --via-harbor`).
#[derive(Debug, Clone)]
pub enum Oracle {
    /// A patch, applied as the verifier applies one; whether it applied is written to the
    /// trial's `agent/` directory ([`adapters::APPLY_RECORD`]).
    Patch(Vec<u8>),
    /// A repository tree for a Doc2Repo task, as a tar archive.
    Tree(Vec<u8>),
}

/// What a task's `solution/` holds.
enum Solution<'a> {
    /// The dataset's: its gold patch, or a Doc2Repo reference repository as a tar archive.
    Dataset(Option<Vec<u8>>),
    /// A submission to grade.
    Oracle(&'a Oracle),
}

/// The organisation of the package names when none is given.
pub const DEFAULT_ORG: &str = "beyondswe";

impl ToHarborOptions {
    /// The organisation the package names carry.
    pub fn org(&self) -> &str {
        self.org.as_deref().unwrap_or(DEFAULT_ORG)
    }
}

/// Checks that an instance id is usable as one directory name on every platform we care about.
pub fn check_dir_name(id: &str) -> Result<(), ConvertError> {
    let reason = if id.is_empty() {
        Some("it is empty")
    } else if id == "." || id == ".." {
        Some("it is `.` or `..`")
    } else if id.starts_with('.') {
        Some("it starts with `.` (hidden, and reserved for temporary directories)")
    } else if id.contains(['/', '\\', '\0']) {
        Some("it contains `/`, `\\` or NUL")
    } else if id.len() > 200 {
        Some("it is longer than 200 bytes")
    } else if id.chars().any(char::is_control) {
        Some("it contains control characters")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(ConvertError::InvalidInstanceId {
            id: id.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// Why a suite name is not a plain file name (an absolute path, `..`, a directory), if it is not.
/// Suite names come from the record; a path would make the converters read or write outside
/// the suites directory.
pub fn suite_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name == "." || name == ".." {
        Some("it is `.` or `..`")
    } else if name.starts_with('/') {
        Some("it is an absolute path")
    } else if name.contains(['/', '\\']) {
        Some("it names a path through directories, not a file name")
    } else if name.chars().any(char::is_control) {
        Some("it contains control characters")
    } else {
        None
    }
}

/// Checks a record's `test_suite` field (when it has one) is a plain file name; `place` says where
/// the record is (`data.jsonl:3: instance `x``, `task/tests/instance.json`).
pub fn check_test_suite_name(record: &Record, place: &str) -> Result<(), ConvertError> {
    match record.test_suite() {
        Some(name) => match suite_name_problem(name) {
            Some(reason) => Err(ConvertError::SuiteName {
                place: place.to_owned(),
                name: name.to_owned(),
                reason,
            }),
            None => Ok(()),
        },
        None => Ok(()),
    }
}

/// Finds a Doc2Repo record's suite zip in `dir`: the record's `test_suite` name, else
/// `<instance_id>.zip`. Only plain file names are looked up, so the result is always inside `dir`
/// (callers report a bad name with [`check_test_suite_name`]).
pub fn find_test_suite(record: &Record, dir: &Path) -> Option<PathBuf> {
    record
        .test_suite()
        .map(str::to_owned)
        .into_iter()
        .chain(std::iter::once(format!("{}.zip", record.instance_id())))
        .filter(|name| suite_name_problem(name).is_none())
        .map(|name| dir.join(name))
        .find(|p| p.is_file())
}

/// A Doc2Repo record's reference solution in `dir`: `<instance_id>` as a directory, else
/// `<instance_id>.tar`, `.tar.gz`, `.tgz` or `.zip`.
pub fn find_solution(record: &Record, dir: &Path) -> Option<PathBuf> {
    let id = record.instance_id();
    if check_dir_name(id).is_err() {
        return None;
    }
    let as_dir = dir.join(id);
    if as_dir.is_dir() {
        return Some(as_dir);
    }
    ["tar", "tar.gz", "tgz", "zip"]
        .iter()
        .map(|ext| dir.join(format!("{id}.{ext}")))
        .find(|p| p.is_file())
}

/// The instance a task directory was written for (its `[metadata].instance_id`), if readable:
/// a `task.toml` that is a link, a FIFO, a device or over the small-file cap names none.
fn owner_of(dir: &Path) -> Option<String> {
    let text =
        crate::files::read_own_text(&dir.join(paths::TASK_TOML), crate::files::SMALL_FILE_MAX)
            .ok()?;
    TaskToml::parse(&text)
        .ok()?
        .meta_str("instance_id")
        .map(str::to_owned)
}

/// Writes one task directory `out_dir/<task_dir_name(instance_id)>`; returns its path.
pub fn write_task(
    record: &Record,
    out_dir: &Path,
    opts: &ToHarborOptions,
) -> Result<PathBuf, ConvertError> {
    check_dir_name(record.instance_id())?;
    check_test_suite_name(record, &format!("instance `{}`", record.instance_id()))?;
    let suite = suite_zip(record, opts)?;
    let solution = Solution::Dataset(solution_tar(record, opts)?);
    write_task_as(
        record,
        out_dir,
        &task_dir_name(record.instance_id()),
        suite.as_deref(),
        solution,
        opts,
    )
}

/// Writes a task directory `out_dir/<name>` (a name Docker takes for an image: lowercase
/// alphanumerics and `._-`) whose oracle solution is `oracle` instead of the dataset's, for
/// Harbor to grade one submission; returns its path. `[task] name` is `ORG/<name>`; `suite` is
/// a Doc2Repo record's suite zip.
pub fn write_oracle_task(
    record: &Record,
    out_dir: &Path,
    name: &str,
    oracle: &Oracle,
    suite: Option<&Path>,
    opts: &ToHarborOptions,
) -> Result<PathBuf, ConvertError> {
    if record.family() == Family::Doc2Repo && suite.is_none() {
        return Err(ConvertError::MissingTestSuite {
            id: record.instance_id().to_owned(),
            what: "not given".into(),
        });
    }
    if task_dir_name(name) != name {
        return Err(ConvertError::InvalidInstanceId {
            id: name.to_owned(),
            reason: "a task made for one submission needs a name Docker takes for an image",
        });
    }
    write_task_as(record, out_dir, name, suite, Solution::Oracle(oracle), opts)
}

fn write_task_as(
    record: &Record,
    out_dir: &Path,
    name: &str,
    suite: Option<&Path>,
    solution: Solution<'_>,
    opts: &ToHarborOptions,
) -> Result<PathBuf, ConvertError> {
    let id = record.instance_id();
    let image = record
        .image()
        .ok_or_else(|| ConvertError::MissingImage { id: id.to_owned() })?;
    let target = out_dir.join(name);
    check_target(&target, id, opts.force)?;
    fs::create_dir_all(out_dir).map_err(io_err(out_dir))?;
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}.tmp-"))
        .tempdir_in(out_dir)
        .map_err(io_err(out_dir))?;
    write_task_files(record, image, name, tmp.path(), suite, solution, opts)?;
    install_dir(tmp, &target)?;
    Ok(target)
}

/// A Doc2Repo record's suite zip, which it cannot do without; `None` for other families.
fn suite_zip(record: &Record, opts: &ToHarborOptions) -> Result<Option<PathBuf>, ConvertError> {
    if record.family() != Family::Doc2Repo {
        return Ok(None);
    }
    let id = record.instance_id();
    let dir = opts
        .test_suites
        .as_deref()
        .ok_or_else(|| ConvertError::MissingTestSuite {
            id: id.to_owned(),
            what: "not given (pass --test-suites DIR)".into(),
        })?;
    let zip = find_test_suite(record, dir).ok_or_else(|| ConvertError::MissingTestSuite {
        id: id.to_owned(),
        what: format!(
            "`{}` not found in {}",
            record.test_suite().unwrap_or("<test_suite field missing>"),
            dir.display()
        ),
    })?;
    Ok(Some(zip))
}

/// A Doc2Repo record's reference solution from `--solutions`, read safely, as a tar archive.
fn solution_tar(record: &Record, opts: &ToHarborOptions) -> Result<Option<Vec<u8>>, ConvertError> {
    let (Some(dir), Family::Doc2Repo) = (&opts.solutions, record.family()) else {
        return Ok(None);
    };
    let Some(path) = find_solution(record, dir) else {
        return Ok(None);
    };
    let tree = read_tree(&path, TreeLimits::default()).map_err(|e| ConvertError::Solution {
        id: record.instance_id().to_owned(),
        path: path.clone(),
        message: e.to_string(),
    })?;
    let tar = tree.to_tar().map_err(io_err(&path))?;
    Ok(Some(tar))
}

/// Whether `target` may be written: not another instance's directory, and replaced only with
/// `force`.
fn check_target(target: &Path, id: &str, force: bool) -> Result<(), ConvertError> {
    if !target.exists() {
        return Ok(());
    }
    match owner_of(target) {
        Some(other) if other != id => Err(ConvertError::TaskDirTaken {
            id: id.to_owned(),
            other,
            path: target.to_owned(),
        }),
        _ if !force => Err(ConvertError::TaskExists {
            path: target.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// Moves a finished temporary directory to `target`, replacing an old one only after the new one
/// is complete.
fn install_dir(tmp: tempfile::TempDir, target: &Path) -> Result<(), ConvertError> {
    let parent = target.parent().unwrap_or(Path::new("."));
    let staged = tmp.keep();
    if target.exists() {
        let old = tempfile::Builder::new()
            .prefix(".old-")
            .tempdir_in(parent)
            .map_err(io_err(parent))?;
        let old_path = old.path().join("task");
        fs::rename(target, &old_path).map_err(io_err(target))?;
        if let Err(e) = fs::rename(&staged, target) {
            // Put the old directory back rather than leave nothing.
            let _ = fs::rename(&old_path, target);
            let _ = fs::remove_dir_all(&staged);
            return Err(io_err(target)(e));
        }
        drop(old);
    } else if let Err(e) = fs::rename(&staged, target) {
        let _ = fs::remove_dir_all(&staged);
        return Err(io_err(target)(e));
    }
    Ok(())
}

fn write(dir: &Path, rel: &str, contents: &[u8]) -> Result<(), ConvertError> {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    fs::write(&path, contents).map_err(io_err(&path))
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<(), ConvertError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).map_err(io_err(path))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> Result<(), ConvertError> {
    Ok(())
}

fn write_task_files(
    record: &Record,
    image: &str,
    name: &str,
    dir: &Path,
    suite: Option<&Path>,
    solution: Solution<'_>,
    opts: &ToHarborOptions,
) -> Result<(), ConvertError> {
    write(
        dir,
        paths::TASK_TOML,
        task_toml(record, image, name, opts)
            .to_toml_string()
            .as_bytes(),
    )?;
    write(dir, paths::INSTRUCTION, instruction(record).as_bytes())?;
    write_environment(record, image, dir)?;
    write_tests(record, dir, suite, opts)?;
    write_solution(record, dir, solution)
}

/// environment/: the Dockerfile, the history strip, the verifier's modules that its `prepare`
/// imports and its rules for the image (and for Doc2Repo the specification).
fn write_environment(record: &Record, image: &str, dir: &Path) -> Result<(), ConvertError> {
    write(dir, paths::DOCKERFILE, dockerfile(record, image).as_bytes())?;
    for (rel, text) in [
        (paths::STRIP_HISTORY, adapters::STRIP_HISTORY_SH),
        (paths::SETUP_STEP, adapters::SETUP_STEP_SH),
        (paths::ENV_RESTORE_RULES, adapters::RESTORE_RULES_JSON),
    ] {
        write(dir, rel, text.as_bytes())?;
    }
    for (name, text) in adapters::PREPARE_MODULES {
        write(
            dir,
            &format!("{}/{name}", paths::ENVIRONMENT),
            text.as_bytes(),
        )?;
    }
    if record.family() == Family::Doc2Repo {
        write(
            dir,
            paths::REPO_DOCUMENT,
            record.repo_document().unwrap_or_default().as_bytes(),
        )?;
    }
    Ok(())
}

/// tests/: the test config, the record, the test patch, `test.sh` and the verifier, the suite zip.
fn write_tests(
    record: &Record,
    dir: &Path,
    suite: Option<&Path>,
    opts: &ToHarborOptions,
) -> Result<(), ConvertError> {
    let mut config = instance_config(record, Duration::from_secs(opts.resources.test_timeout_sec));
    if opts.strict {
        config.extra.insert("strict".into(), true.into());
    }
    // The gold check, named by its digest in the config: the verifier takes no other file.
    if let Some(check) = opts.gold_checks.get(record.instance_id()) {
        let data = json_pretty(check);
        config.extra.insert(
            "gold_check_sha256".into(),
            hex::encode(sha2::Sha256::digest(&data)).into(),
        );
        write(dir, paths::GOLD_CHECK, &data)?;
    }
    write(dir, paths::TEST_CONFIG, &json_pretty(&config))?;
    write(dir, paths::INSTANCE_JSON, &json_pretty(record.raw()))?;
    if let Some(p) = record.f2p_patch() {
        write(dir, paths::F2P_PATCH, p.as_bytes())?;
    }
    if let Some(p) = record.gold_patch().filter(|p| !p.trim().is_empty()) {
        write(dir, paths::GOLD_PATCH, p.as_bytes())?;
    }
    write(
        dir,
        paths::TEST_SH,
        adapters::test_sh(opts.verifier_mode.as_str(), !opts.prebuilt_image).as_bytes(),
    )?;
    write(
        dir,
        paths::RESTORE_RULES,
        adapters::RESTORE_RULES_JSON.as_bytes(),
    )?;
    // The verifier: its entry point and its package, one directory, under their installed paths.
    for (name, text) in adapters::VERIFIER_MODULES {
        write(dir, &format!("{}/{name}", paths::TESTS), text.as_bytes())?;
    }
    make_executable(&dir.join(paths::TEST_SH))?;
    if let Some(src) = suite {
        let dst = dir.join(paths::TEST_SUITE_ZIP);
        fs::copy(src, &dst).map_err(io_err(src))?;
    }
    Ok(())
}

/// solution/: a submission to grade, or a Doc2Repo reference repository, else the gold patch.
/// Without any, Harbor's oracle agent has nothing to run (README: "Tasks without a solution").
fn write_solution(record: &Record, dir: &Path, solution: Solution<'_>) -> Result<(), ConvertError> {
    let workdir = record.workdir();
    let solve_sh = if let Solution::Oracle(Oracle::Patch(patch)) = solution {
        write(dir, paths::SOLUTION_SUBMISSION, patch)?;
        adapters::solve_submission_sh(workdir)
    } else if let Solution::Oracle(Oracle::Tree(tar)) | Solution::Dataset(Some(tar)) = &solution {
        write(dir, paths::SOLUTION_REPO, tar)?;
        adapters::solve_repo_sh(workdir)
    } else if let Some(gold) = record.gold_patch() {
        write(dir, paths::SOLUTION_PATCH, gold.as_bytes())?;
        adapters::solve_sh(workdir)
    } else {
        return Ok(());
    };
    write(dir, paths::SOLVE_SH, solve_sh.as_bytes())?;
    make_executable(&dir.join(paths::SOLVE_SH))
}

fn json_pretty<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(value).unwrap_or_default();
    out.push(b'\n');
    out
}

fn task_toml(record: &Record, image: &str, name: &str, opts: &ToHarborOptions) -> TaskToml {
    let family = record.family();
    let mut meta = Table::new();
    let mut put = |k: &str, v: &str| {
        meta.insert(k.to_owned(), toml::Value::String(v.to_owned()));
    };
    put("benchmark", "beyondswe");
    put(CONVERTED_BY_KEY, CONVERTED_BY);
    put("instance_id", record.instance_id());
    put("family", family.as_str());
    if let Some(spelling) = record.task().spelling {
        put("task", &spelling);
    }
    if let Some(repo) = record.repo() {
        put("repo", &repo.full_name());
    }
    if let Some(base) = record.base_commit() {
        put("base_commit", base);
    }
    put("image", image);
    put("workdir", record.workdir());
    put("language", record.language());
    let mut tags = vec!["beyondswe".to_owned(), family.tag().to_owned()];
    if let Some(lang) = Some(record.language()).filter(|l| *l != "python") {
        tags.push(lang.to_owned());
    } else {
        tags.push("python".into());
    }
    meta.insert(
        "tags".into(),
        toml::Value::Array(tags.into_iter().map(toml::Value::String).collect()),
    );
    if let Some(n) = record.test_suite_num() {
        meta.insert(
            "test_suite_num".into(),
            toml::Value::Integer(n.min(i64::MAX as u64) as i64),
        );
    }
    // The viewer's facets: the family is the category; BeyondSWE labels no difficulty.
    meta.insert(
        "category".into(),
        toml::Value::String(family.as_str().to_owned()),
    );
    meta.insert(
        "difficulty".into(),
        toml::Value::String("unknown".to_owned()),
    );
    let res = &opts.resources;
    TaskToml {
        version: crate::harbor::SCHEMA_VERSION.into(),
        task: Some(TaskTable {
            name: format!("{}/{name}", opts.org()),
            description: format!(
                "BeyondSWE {} instance {}",
                family.as_str(),
                record.instance_id()
            ),
            keywords: vec!["beyondswe".to_owned(), family.tag().to_owned()],
            authors: vec![crate::harbor::Author {
                name: BENCHMARK_AUTHORS.to_owned(),
                email: None,
            }],
        }),
        metadata: meta,
        verifier: verifier_table(record, opts),
        agent: Timeout {
            timeout_sec: Some(res.agent_timeout_sec),
        },
        environment: EnvironmentToml {
            docker_image: opts.prebuilt_image.then(|| image.to_owned()),
            build_timeout_sec: Some(res.build_timeout_sec),
            cpus: Some(f64::from(res.cpus)),
            memory_mb: Some(res.memory_mb),
            storage_mb: Some(res.storage_mb),
            ..EnvironmentToml::default()
        },
    }
}

/// Seconds the collect hook may take to diff the workdir: a Doc2Repo tree is written from
/// scratch and can be large (Harbor's default, 60 s, is not enough).
const COLLECT_TIMEOUT_SEC: f64 = 600.0;

/// `[verifier]`: the time limit; in separate mode the fresh container and the hook that carries
/// the agent's work into it (run as root: the agent may have left the workdir unreadable).
fn verifier_table(record: &Record, opts: &ToHarborOptions) -> VerifierToml {
    let timeout_sec = Some(opts.resources.verifier_timeout_sec);
    match opts.verifier_mode {
        VerifierMode::Shared => VerifierToml {
            timeout_sec,
            ..VerifierToml::default()
        },
        VerifierMode::Separate => VerifierToml {
            timeout_sec,
            environment_mode: Some(VerifierMode::Separate.as_str().to_owned()),
            collect: vec![CollectHook {
                command: adapters::collect_command(record.workdir(), record.base_commit()),
                timeout_sec: Some(COLLECT_TIMEOUT_SEC),
                user: Some("root".to_owned()),
            }],
        },
    }
}

/// The authors the tasks credit: the benchmark's, as its paper and dataset name them.
const BENCHMARK_AUTHORS: &str = "The BeyondSWE authors (AweAI Team; arXiv 2603.03194)";

/// The line an issue task's `instruction.md` starts with: where the repository is. The statement
/// follows after [`STATEMENT_AFTER`]; `from_harbor` takes it off again.
pub(crate) fn issue_preamble(workdir: &str) -> String {
    format!(
        "The repository is checked out in `{workdir}`. Resolve the issue below by changing the \
         code there."
    )
}

/// What separates the preamble of an issue task's instruction from the statement.
pub(crate) const STATEMENT_AFTER: &str = "\n\n---\n\n";

fn instruction(record: &Record) -> String {
    if record.family() == Family::Doc2Repo {
        let workdir = record.workdir();
        format!(
            "Build the Python repository described in the specification below, from scratch, in \
             `{workdir}`.\n\nThe same specification is in `{workdir}/repo_document.md`. Implement \
             the package so that it installs with `pip install -e .` from `{workdir}` and behaves \
             exactly as specified; a hidden test suite checks it.\n\n---\n\n{}",
            record.repo_document().unwrap_or_default()
        )
    } else {
        format!(
            "{}{STATEMENT_AFTER}{}",
            issue_preamble(record.workdir()),
            record.problem_statement().unwrap_or_default()
        )
    }
}

/// `FROM` the instance image, check out the base, run the setup commands, strip newer history.
fn dockerfile(record: &Record, image: &str) -> String {
    let workdir = record.workdir();
    let json = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let mut out = format!(
        "# Generated by beyondswe for {id}.\n# Starts from the instance image, checks out the base \
         commit, runs the dataset's setup commands\n# and removes every commit newer than the base \
         (beyondswe_strip_history.sh).\nFROM {image}\nWORKDIR {workdir}\n",
        id = record.instance_id()
    );
    if let Some(base) = record.base_commit() {
        out.push_str(&format!(
            "RUN [\"git\", \"-c\", \"advice.detachedHead=false\", \"checkout\", \"-q\", \"-f\", {}]\n",
            json(base)
        ));
    }
    // The setup commands as one shell session would run them: what one exports, the next and
    // the tests see (the prepare step below records it).
    let setup = record.pre_commands();
    if !setup.is_empty() {
        out.push_str(&format!(
            "COPY beyondswe_setup_step.sh /opt/beyondswe/setup_step.sh\nRUN [\"mkdir\", \"-p\", \"-m\", \"700\", \"{}\"]\n",
            adapters::STATE_DIR
        ));
    }
    for cmd in &setup {
        out.push_str(&format!(
            "RUN [\"sh\", \"/opt/beyondswe/setup_step.sh\", \"{}\", {}]\n",
            adapters::SETUP_ENV,
            json(cmd)
        ));
    }
    out.push_str("COPY beyondswe_strip_history.sh /opt/beyondswe/strip_history.sh\n");
    out.push_str(&format!(
        "RUN [\"sh\", \"/opt/beyondswe/strip_history.sh\", {}]\n",
        json(workdir)
    ));
    if record.family() == Family::Doc2Repo {
        let dest = format!("{}/repo_document.md", workdir.trim_end_matches('/'));
        out.push_str(&format!("COPY [\"repo_document.md\", {}]\n", json(&dest)));
    }
    // What belongs to the image (the specification copy included), recorded before any agent
    // runs, for the verifier's scrub and its capture of the submission.
    // The entry point and the rules beside the package, which is copied as one directory.
    let copied: Vec<&str> = adapters::PREPARE_MODULES
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !name.contains('/'))
        .chain(["beyondswe_restore_rules.json"])
        .collect();
    out.push_str(&format!("COPY {} /opt/beyondswe/\n", copied.join(" ")));
    out.push_str(&format!(
        "COPY {p} /opt/beyondswe/{p}/\n",
        p = adapters::PACKAGE
    ));
    let base = record
        .base_commit()
        .map(|b| format!(", \"--base\", {}", json(b)))
        .unwrap_or_default();
    // In the environment the setup commands left, which the prepare step records for the tests.
    out.push_str(&format!(
        "RUN [\"sh\", \"-c\", {script}, \"sh\", \"prepare\", \"--workdir\", {}{base}, \"--state-dir\", {state}]\n",
        json(workdir),
        script = json(&format!(
            "{}; exec python3 -I /opt/beyondswe/beyondswe_verify.py \"$@\"",
            adapters::source_setup_env()
        )),
        state = json(adapters::STATE_DIR),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(id: &str, task: &str, patch: Option<&str>) -> Record {
        let mut v = json!({
            "instance_id": id, "task": task, "image": "beyondswe-fixture/x:1",
            "base_commit": "0123456789abcdef0123456789abcdef01234567", "workdir": "/workspace/x",
            "problem_statement": "Fix it.", "FAIL_TO_PASS": ["tests/test_x.py::test_a"],
            "REPO_DOCUMENT_CONTENT": "# spec", "test_suite": "s.zip", "test_suite_num": 2,
        });
        if let Some(p) = patch {
            v["patch"] = json!(p);
        }
        Record::from_value(v).unwrap()
    }

    fn suites(dir: &Path) -> PathBuf {
        let d = dir.join("suites");
        fs::create_dir_all(&d).unwrap();
        fs::write(
            d.join("s.zip"),
            b"PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
        )
        .unwrap();
        d
    }

    fn toml_of(dir: &Path) -> TaskToml {
        TaskToml::parse(&fs::read_to_string(dir.join(paths::TASK_TOML)).unwrap()).unwrap()
    }

    #[test]
    fn a_gold_check_goes_to_its_tasks_tests_only() {
        let tmp = tempfile::tempdir().unwrap();
        let check = crate::verifier_spec::GoldCheck {
            seed: "5eed".into(),
            tests: [("tests/test_x.py::test_a".to_owned(), vec![[3, 11]])].into(),
            classes: [(
                "tests/test_x.py::test_a::4:23".to_owned(),
                vec!["TypeError".to_owned()],
            )]
            .into(),
            finished: true,
        };
        let opts = ToHarborOptions {
            gold_checks: [("Acme_X_pr1".to_owned(), check.clone())].into(),
            ..ToHarborOptions::default()
        };
        let sub = Oracle::Patch(b"the submission".to_vec());
        for (id, name) in [("Acme_X_pr1", "s1-x"), ("Acme_X_pr2", "s2-x")] {
            let rec = record(id, "CrossRepo", Some("the gold patch"));
            let dir = write_oracle_task(&rec, tmp.path(), name, &sub, None, &opts).unwrap();
            let written = fs::read(dir.join(paths::GOLD_CHECK)).ok();
            let expected = (id == "Acme_X_pr1").then_some(check.clone());
            // The config names the file by its digest, and only where there is one.
            let config: serde_json::Value =
                serde_json::from_slice(&fs::read(dir.join(paths::TEST_CONFIG)).unwrap()).unwrap();
            assert_eq!(
                config.get("gold_check_sha256").and_then(|v| v.as_str()),
                written
                    .as_ref()
                    .map(|b| hex::encode(sha2::Sha256::digest(b)))
                    .as_deref()
            );
            assert_eq!(
                written.map(
                    |b| serde_json::from_slice::<crate::verifier_spec::GoldCheck>(&b).unwrap()
                ),
                expected
            );
        }
    }

    #[test]
    fn an_oracle_task_grades_the_submission_it_is_given() {
        let tmp = tempfile::tempdir().unwrap();
        let rec = record("Acme_X_pr1", "CrossRepo", Some("the gold patch"));
        let sub = Oracle::Patch(b"the submission".to_vec());
        let opts = ToHarborOptions::default();
        let dir =
            write_oracle_task(&rec, tmp.path(), "s00003-acme_x_pr1", &sub, None, &opts).unwrap();
        assert_eq!(dir, tmp.path().join("s00003-acme_x_pr1"));
        assert_eq!(
            toml_of(&dir).task.unwrap().name,
            "beyondswe/s00003-acme_x_pr1"
        );
        assert_eq!(
            fs::read(dir.join(paths::SOLUTION_SUBMISSION)).unwrap(),
            b"the submission"
        );
        assert!(!dir.join(paths::SOLUTION_PATCH).exists());
        let solve = fs::read_to_string(dir.join(paths::SOLVE_SH)).unwrap();
        assert!(solve.contains(adapters::APPLY_RECORD), "{solve}");
        assert!(solve.contains("'/workspace/x'"), "{solve}");
        // The verifier still knows the gold patch (what it uses is allowed to the submission).
        assert!(dir.join(paths::GOLD_PATCH).exists());

        // A tree is unpacked; a Doc2Repo task needs its suite; the name must be an image name.
        let d2r = record("minidoc_1", "Doc2Repo", None);
        let tree = Oracle::Tree(b"tar".to_vec());
        let err =
            write_oracle_task(&d2r, tmp.path(), "s1-minidoc_1", &tree, None, &opts).unwrap_err();
        assert!(
            matches!(err, ConvertError::MissingTestSuite { .. }),
            "{err}"
        );
        let zip = suites(tmp.path()).join("s.zip");
        let dir =
            write_oracle_task(&d2r, tmp.path(), "s1-minidoc_1", &tree, Some(&zip), &opts).unwrap();
        assert_eq!(fs::read(dir.join(paths::SOLUTION_REPO)).unwrap(), b"tar");
        assert!(dir.join(paths::TEST_SUITE_ZIP).exists());
        for bad in ["S1-Upper", "a/b", "", "-x"] {
            assert!(
                write_oracle_task(&rec, tmp.path(), bad, &sub, None, &opts).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn default_task_has_no_prebuilt_image_and_fits_two_cores() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = write_task(
            &record("acme_x_pr1", "CrossRepo", Some("diff")),
            tmp.path(),
            &ToHarborOptions::default(),
        )
        .unwrap();
        let t = toml_of(&dir);
        assert_eq!(
            t.environment.docker_image, None,
            "Harbor must build environment/"
        );
        assert_eq!(t.environment.cpus, Some(2.0));
        assert_eq!(t.meta_str("image"), Some("beyondswe-fixture/x:1"));
        let opts = ToHarborOptions {
            prebuilt_image: true,
            force: true,
            ..ToHarborOptions::default()
        };
        let dir = write_task(&record("acme_x_pr1", "CrossRepo", None), tmp.path(), &opts).unwrap();
        assert_eq!(
            toml_of(&dir).environment.docker_image.as_deref(),
            Some("beyondswe-fixture/x:1")
        );
    }

    #[test]
    fn the_verifier_is_separate_by_default_and_shared_on_request() {
        let tmp = tempfile::tempdir().unwrap();
        let rec = record("acme_x_pr1", "CrossRepo", Some("diff"));
        let dir = write_task(&rec, tmp.path(), &ToHarborOptions::default()).unwrap();
        let v = toml_of(&dir).verifier;
        assert_eq!(v.environment_mode.as_deref(), Some("separate"));
        assert_eq!(v.collect.len(), 1, "{v:?}");
        let hook = &v.collect[0];
        assert_eq!(hook.user.as_deref(), Some("root"));
        assert!(
            hook.timeout_sec.unwrap() > 60.0,
            "Harbor's 60 s default is too short"
        );
        // The diff lands in the directory Harbor carries into the verifier, against the base,
        // by the recorded interpreter; a stale diff is removed first.
        for part in [
            "rm -f /logs/artifacts/submission.diff",
            "capture --workdir '/workspace/x' --base '0123456789abcdef0123456789abcdef01234567'",
            "< /var/lib/beyondswe/verifier-python",
        ] {
            assert!(hook.command.contains(part), "{part}: {}", hook.command);
        }
        let test_sh = fs::read_to_string(dir.join(paths::TEST_SH)).unwrap();
        assert!(test_sh.contains("mode=separate\n"), "{test_sh}");
        assert!(test_sh.contains("recorded=yes\n"), "{test_sh}");
        assert!(
            !test_sh.contains("command -v"),
            "no interpreter through PATH"
        );

        let opts = ToHarborOptions {
            verifier_mode: VerifierMode::Shared,
            force: true,
            ..ToHarborOptions::default()
        };
        let dir = write_task(&rec, tmp.path(), &opts).unwrap();
        let v = toml_of(&dir).verifier;
        assert_eq!(v.environment_mode, None, "Harbor 0.1.x shares anyway");
        assert!(v.collect.is_empty());
        let test_sh = fs::read_to_string(dir.join(paths::TEST_SH)).unwrap();
        assert!(test_sh.contains("mode=shared\n"), "{test_sh}");
    }

    #[test]
    fn an_image_the_record_pins_by_digest_stays_pinned() {
        let tmp = tempfile::tempdir().unwrap();
        let digest = format!("beyondswe/x@sha256:{}", "ab".repeat(32));
        let mut v = record("acme_x_pr1", "CrossRepo", Some("diff"))
            .raw()
            .clone();
        v.insert("image".into(), serde_json::json!(digest));
        let rec = Record::from_value(serde_json::Value::Object(v)).unwrap();
        let dir = write_task(&rec, tmp.path(), &ToHarborOptions::default()).unwrap();
        let dockerfile = fs::read_to_string(dir.join(paths::DOCKERFILE)).unwrap();
        assert!(
            dockerfile.contains(&format!("\nFROM {digest}\n")),
            "{dockerfile}"
        );
    }

    #[test]
    fn directory_is_lower_case_and_the_id_survives() {
        let tmp = tempfile::tempdir().unwrap();
        let rec = record("PyCQA_pyflakes_pr801", "CrossRepo", Some("diff"));
        let dir = write_task(&rec, tmp.path(), &ToHarborOptions::default()).unwrap();
        assert_eq!(dir.file_name().unwrap(), "pycqa_pyflakes_pr801");
        assert_eq!(
            toml_of(&dir).meta_str("instance_id"),
            Some("PyCQA_pyflakes_pr801")
        );
        let back = crate::convert::read_task(&dir).unwrap().record;
        assert_eq!(back.instance_id(), "PyCQA_pyflakes_pr801");
        // Another id with the same directory is refused, even with --force.
        let other = record("pycqa_pyflakes_pr801", "CrossRepo", Some("diff"));
        let opts = ToHarborOptions {
            force: true,
            ..ToHarborOptions::default()
        };
        let err = write_task(&other, tmp.path(), &opts)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("holds instance `PyCQA_pyflakes_pr801`"),
            "{err}"
        );
        // The same id again is the usual "exists" unless --force.
        let err = write_task(&rec, tmp.path(), &ToHarborOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("already exists"), "{err}");
        write_task(&rec, tmp.path(), &opts).unwrap();
    }

    #[test]
    fn doc2repo_solution_from_a_directory_or_an_archive() {
        let tmp = tempfile::tempdir().unwrap();
        let sols = tmp.path().join("solutions");
        fs::create_dir_all(sols.join("Mini_a/mini")).unwrap();
        fs::write(sols.join("Mini_a/mini/__init__.py"), b"X = 1\n").unwrap();
        fs::write(sols.join("Mini_a/setup.py"), b"\xff\x00binary-safe").unwrap();
        let opts = ToHarborOptions {
            test_suites: Some(suites(tmp.path())),
            solutions: Some(sols.clone()),
            ..ToHarborOptions::default()
        };
        let dir = write_task(
            &record("Mini_a", "Doc2Repo", None),
            &tmp.path().join("t"),
            &opts,
        )
        .unwrap();
        let solve = fs::read_to_string(dir.join(paths::SOLVE_SH)).unwrap();
        assert!(solve.contains("tar -xf /solution/repo.tar"), "{solve}");
        assert!(solve.contains("'/workspace/x'"), "{solve}");
        let tar = fs::read(dir.join(paths::SOLUTION_REPO)).unwrap();
        let mut names = Vec::new();
        for e in tar::Archive::new(&tar[..]).entries().unwrap() {
            names.push(e.unwrap().path().unwrap().display().to_string());
        }
        assert!(names.contains(&"mini/__init__.py".to_owned()), "{names:?}");
        assert!(names.contains(&"setup.py".to_owned()), "{names:?}");

        // An archive named by the id works the same; a bad archive names the file.
        fs::rename(sols.join("Mini_a"), tmp.path().join("moved")).unwrap();
        fs::write(sols.join("Mini_a.zip"), b"not a zip").unwrap();
        let err = write_task(
            &record("Mini_a", "Doc2Repo", None),
            &tmp.path().join("t2"),
            &opts,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("Mini_a.zip"), "{err}");

        // No solution and no gold patch: no solve.sh (the CLI warns).
        let opts = ToHarborOptions {
            solutions: None,
            ..opts
        };
        let dir = write_task(
            &record("Mini_a", "Doc2Repo", None),
            &tmp.path().join("t3"),
            &opts,
        )
        .unwrap();
        assert!(!dir.join(paths::SOLVE_SH).exists());
    }
}
