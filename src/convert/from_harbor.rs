//! Harbor task directory → BeyondSWE record.
//!
//! Reads our own task directories and the official BeyondSWE-harbor layout
//! (research/harbor-spec.md §6). `tests/instance.json`, when present, is the record; every other
//! file only fills fields that it lacks, so a directory without `instance.json` still yields a
//! full record: id and family from `task.toml`, the statement from `instruction.md`, the spec from
//! `environment/repo_document.md`, the test ids from `tests/test_config.json`, the patches from
//! `tests/f2p_patch.diff` and `solution/gold.patch`.

use super::error::{ConvertError, io_err};
use crate::harbor::{CONVERTED_BY, CONVERTED_BY_KEY, TaskToml, TestConfig, paths};
use crate::record::{Family, Record, read_to_string_limited};
use fs_err as fs;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Largest text file read from a task directory (statements, patches, specs).
const MAX_TEXT: u64 = 512 * 1024 * 1024;

/// A record read back from a task directory, with what the directory bundles beside it: the
/// suite zip (Doc2Repo) and the environment to build.
#[derive(Debug)]
pub struct TaskRead {
    /// The record the task directory describes.
    pub record: Record,
    /// The Doc2Repo suite zip the task bundles under `tests/`, when there is one.
    pub test_suite_zip: Option<PathBuf>,
    /// `environment/`, when `task.toml` names no `docker_image` and it holds a `Dockerfile`:
    /// the image must be built from it.
    pub environment_to_build: Option<PathBuf>,
    /// Fields filled from files other than `instance.json`.
    pub filled: Vec<&'static str>,
}

/// `dir/rel` when it exists and lies inside `dir` once every link on the way is followed; an
/// error naming the link when it leads out of the task; `None` when it is not there.
fn task_file(dir: &Path, rel: &str) -> Result<Option<PathBuf>, ConvertError> {
    let path = dir.join(rel);
    if fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    let root = dir.canonicalize().map_err(io_err(dir))?;
    match path.canonicalize() {
        Ok(real) if real.starts_with(&root) => Ok(Some(path)),
        Ok(real) => Err(ConvertError::LinkOutOfTask { path, target: real }),
        // A dangling link: it leads nowhere a reader could follow.
        Err(_) => Ok(None),
    }
}

/// The text of `dir/rel` (bounded), never through a link out of the task.
fn read_text(dir: &Path, rel: &str) -> Result<Option<String>, ConvertError> {
    let Some(path) = task_file(dir, rel)? else {
        return Ok(None);
    };
    if !path.is_file() {
        return Ok(None);
    }
    read_to_string_limited(&path, MAX_TEXT)
        .map(Some)
        .map_err(io_err(&path))
}

/// Whether `dir` looks like a task directory (has `task.toml`).
pub fn is_task_dir(dir: &Path) -> bool {
    dir.join(paths::TASK_TOML).is_file()
}

/// The task directories under `root` (or `root` itself if it is one), sorted by name; hidden
/// directories (our temporary ones among them) are skipped.
pub fn task_dirs(root: &Path) -> Result<Vec<PathBuf>, ConvertError> {
    if is_task_dir(root) {
        return Ok(vec![root.to_owned()]);
    }
    let mut dirs = Vec::new();
    for entry in fs::read_dir(root).map_err(io_err(root))? {
        let entry = entry.map_err(io_err(root))?;
        let path = entry.path();
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if !hidden && path.is_dir() {
            dirs.push(path);
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// Reads one task directory into a record.
pub fn read_task(dir: &Path) -> Result<TaskRead, ConvertError> {
    let task = read_task_toml(dir)?;
    let instance_path = dir.join(paths::INSTANCE_JSON);
    let map = read_instance_json(dir, &instance_path)?;
    let config = read_test_config(dir)?;
    // Our own directories carry the complete record in instance.json: take it as it is, so the
    // round trip is exact. Other producers' instance.json may be partial: fill what it lacks.
    let complete = task.meta_str(CONVERTED_BY_KEY) == Some(CONVERTED_BY) && instance_path.is_file();
    let mut f = Filler {
        map,
        filled: Vec::new(),
        complete,
    };
    let instance_id = fill_from_metadata(&mut f, dir, &task, config.as_ref())?;
    fill_statement(&mut f, dir)?;
    fill_tests(&mut f, &task, config.as_ref());
    fill_patches(&mut f, dir)?;
    let test_suite_zip = task_file(dir, paths::TEST_SUITE_ZIP)?.filter(|z| z.is_file());
    if test_suite_zip.is_some() {
        f.fill("test_suite", string(&format!("{instance_id}.zip")));
    }

    let source_path = if instance_path.is_file() {
        instance_path
    } else {
        dir.to_owned()
    };
    let record = Record::from_map(f.map).map_err(|source| ConvertError::Record {
        path: source_path.clone(),
        source,
    })?;
    super::to_harbor::check_test_suite_name(&record, &source_path.display().to_string())?;
    let env = task_file(dir, paths::ENVIRONMENT)?;
    let environment_to_build = env
        .filter(|env| task.environment.docker_image.is_none() && env.join("Dockerfile").is_file());
    Ok(TaskRead {
        record,
        test_suite_zip,
        environment_to_build,
        filled: f.filled,
    })
}

fn read_task_toml(dir: &Path) -> Result<TaskToml, ConvertError> {
    let toml_path = dir.join(paths::TASK_TOML);
    let toml_text = read_text(dir, paths::TASK_TOML)?.ok_or_else(|| ConvertError::NotATaskDir {
        path: dir.to_owned(),
        missing: paths::TASK_TOML,
    })?;
    TaskToml::parse(&toml_text).map_err(|e| ConvertError::TaskToml {
        path: toml_path,
        source: Box::new(e),
    })
}

/// `tests/instance.json` as a JSON object; empty when the file is not there.
fn read_instance_json(dir: &Path, path: &Path) -> Result<Map<String, Value>, ConvertError> {
    let Some(text) = read_text(dir, paths::INSTANCE_JSON)? else {
        return Ok(Map::new());
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ConvertError::Json {
            path: path.to_owned(),
            message: "expected a JSON object".into(),
        }),
        Err(e) => Err(ConvertError::Json {
            path: path.to_owned(),
            message: format!("not valid JSON: {e}"),
        }),
    }
}

fn read_test_config(dir: &Path) -> Result<Option<TestConfig>, ConvertError> {
    let path = dir.join(paths::TEST_CONFIG);
    let Some(text) = read_text(dir, paths::TEST_CONFIG)? else {
        return Ok(None);
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| ConvertError::Json {
            path: path.to_owned(),
            message: format!("not a test_config.json: {e}"),
        })
}

/// The record being rebuilt, and which fields came from files other than `instance.json`.
struct Filler {
    map: Map<String, Value>,
    filled: Vec<&'static str>,
    /// Our own complete `instance.json`: nothing is filled.
    complete: bool,
}

impl Filler {
    /// Sets `key` to `value` unless the record is complete or already has the key.
    fn fill(&mut self, key: &'static str, value: Option<Value>) {
        if let Some(v) = value
            && !self.complete
            && !self.map.contains_key(key)
        {
            self.map.insert(key.to_owned(), v);
            self.filled.push(key);
        }
    }
}

fn string(v: &str) -> Option<Value> {
    Some(Value::String(v.to_owned()))
}

/// Id, family, repo, base commit, workdir, image and language from `task.toml`, the test config
/// and the Dockerfile; returns the instance id (the directory name when nothing names one).
fn fill_from_metadata(
    f: &mut Filler,
    dir: &Path,
    task: &TaskToml,
    config: Option<&TestConfig>,
) -> Result<String, ConvertError> {
    let meta = |k: &str| task.meta_str(k).map(str::to_owned);
    let dir_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let instance_id = meta("instance_id")
        .or_else(|| config.and_then(|c| c.instance_id.clone()))
        .unwrap_or(dir_name);
    f.fill("instance_id", string(&instance_id));
    let task_spelling = meta("task")
        .or_else(|| meta("family"))
        .or_else(|| config.and_then(|c| c.family.clone()))
        .or_else(|| family_from_tags(task).map(|f| f.as_str().to_owned()));
    f.fill("task", task_spelling.as_deref().and_then(string));
    f.fill("repo", meta("repo").as_deref().and_then(string));
    let base = meta("base_commit").or_else(|| config.and_then(|c| c.base_commit.clone()));
    f.fill("base_commit", base.as_deref().and_then(string));
    let workdir = config
        .and_then(|c| c.workdir.clone())
        .or_else(|| meta("workdir"));
    f.fill("workdir", workdir.as_deref().and_then(string));
    let image = task
        .environment
        .docker_image
        .clone()
        .or_else(|| meta("image"))
        .or(dockerfile_from(dir)?);
    f.fill("image", image.as_deref().and_then(string));
    if let Some(lang) = meta("language") {
        f.fill("language", string(&lang));
    }
    Ok(instance_id)
}

/// The statement (`instruction.md`), or for Doc2Repo the specification (`repo_document.md`).
fn fill_statement(f: &mut Filler, dir: &Path) -> Result<(), ConvertError> {
    let family = f
        .map
        .get("task")
        .and_then(Value::as_str)
        .map_or(Family::Unknown, Family::from_spelling);
    if family == Family::Doc2Repo {
        let spec = read_text(dir, paths::REPO_DOCUMENT)?;
        if !f.map.contains_key("problem_statement") {
            f.fill("REPO_DOCUMENT_CONTENT", spec.map(Value::String));
        }
    } else {
        let statement = read_text(dir, paths::INSTRUCTION)?.map(|text| {
            // Ours start with where the repository is; the statement is what follows.
            let workdir = f.map.get("workdir").and_then(Value::as_str).unwrap_or("");
            let ours = format!(
                "{}{}",
                super::to_harbor::issue_preamble(workdir),
                super::to_harbor::STATEMENT_AFTER
            );
            match text.strip_prefix(&ours) {
                Some(rest) => rest.to_owned(),
                None => text,
            }
        });
        f.fill("problem_statement", statement.map(Value::String));
    }
    Ok(())
}

/// Test ids and the Doc2Repo suite size from the test config and `task.toml`.
fn fill_tests(f: &mut Filler, task: &TaskToml, config: Option<&TestConfig>) {
    if let Some(c) = config {
        let list = |ids: &[String]| Value::Array(ids.iter().cloned().map(Value::String).collect());
        if !c.fail_to_pass.is_empty() || !f.map.contains_key("FAIL_TO_PASS") {
            f.fill("FAIL_TO_PASS", Some(list(&c.fail_to_pass)));
        }
        f.fill("PASS_TO_PASS", Some(list(&c.pass_to_pass)));
        f.fill("test_suite_num", c.test_suite_num.map(Value::from));
    }
    if let Some(n) = task
        .metadata
        .get("test_suite_num")
        .and_then(toml::Value::as_integer)
    {
        f.fill("test_suite_num", Some(Value::from(n)));
    }
}

/// The test patch and the gold patch (unless the record names a `fix_patch`).
fn fill_patches(f: &mut Filler, dir: &Path) -> Result<(), ConvertError> {
    f.fill(
        "f2p_patch",
        read_text(dir, paths::F2P_PATCH)?.map(Value::String),
    );
    if !f.map.contains_key("fix_patch") {
        f.fill(
            "patch",
            read_text(dir, paths::SOLUTION_PATCH)?.map(Value::String),
        );
    }
    Ok(())
}

fn family_from_tags(task: &TaskToml) -> Option<Family> {
    task.metadata
        .get("tags")?
        .as_array()?
        .iter()
        .filter_map(toml::Value::as_str)
        .map(Family::from_spelling)
        .find(|f| *f != Family::Unknown)
}

/// The image of the first `FROM` line of a Dockerfile (flags such as `--platform` skipped).
fn dockerfile_from(dir: &Path) -> Result<Option<String>, ConvertError> {
    let Some(text) = read_text(dir, paths::DOCKERFILE)? else {
        return Ok(None);
    };
    Ok(text.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        if !words.next()?.eq_ignore_ascii_case("FROM") {
            return None;
        }
        words.find(|w| !w.starts_with("--")).map(str::to_owned)
    }))
}

/// Copies a task's suite zip into `dir` under `name`, refusing to overwrite a different file and
/// any name that is not a plain file name (it would be written outside `dir`).
pub fn store_test_suite(zip: &Path, dir: &Path, name: &str) -> Result<PathBuf, ConvertError> {
    if let Some(reason) = super::to_harbor::suite_name_problem(name) {
        return Err(ConvertError::SuiteName {
            place: zip.display().to_string(),
            name: name.to_owned(),
            reason,
        });
    }
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let dst = dir.join(name);
    if dst.exists() {
        let same = fs::read(&dst).map_err(io_err(&dst))? == fs::read(zip).map_err(io_err(zip))?;
        if same {
            return Ok(dst);
        }
        return Err(ConvertError::SuiteCollision {
            path: dst,
            name: name.to_owned(),
        });
    }
    crate::files::copy_atomic(zip, &dst).map_err(io_err(&dst))?;
    Ok(dst)
}
