//! Harbor's on-disk formats: task directories (`task.toml`, `tests/test_config.json`, the fixed
//! file names, the directory name an instance id gets and back), job and trial directories, a
//! trial's reward, and the releases made from them (job.rs), where installed agents leave their
//! logs (agent_logs.rs), ATIF trajectories (atif.rs), the dataset manifest with each task's
//! content digest (dataset_manifest.rs).
//!
//! Pure data and file layout; the mapping to and from BeyondSWE records is in `convert`. It never
//! uses `submission`, which reads Harbor trials through this module.
//!
//! Files:
//! - `agent_logs.rs`: Where Harbor's installed agents leave their raw logs in a trial's `agent/`
//!   directory.
//! - `atif.rs`: ATIF, the Agent Trajectory Interchange Format (`agent/trajectory.json`), v1.0–v1.8.
//! - `dataset_manifest.rs`: Harbor's dataset manifest, `dataset.toml`.
//! - `job.rs`: Harbor job directories (`config.json`, `result.json`, one directory per trial) and
//!   trajectory releases (one JSON line per trial) made from them, both ways.
//! - `task_config.rs`: `task.toml`: the model we write, and a tolerant reader for every Harbor
//!   version's files.
//! - `test_config.rs`: `tests/test_config.json`: what the in-container verifier needs to know about
//!   one instance.

mod agent_logs;
pub mod atif;
mod dataset_manifest;
mod job;
mod task_config;
mod test_config;

pub use agent_logs::{CLAUDE_CODE_LOG, CODEX_LOG, SESSIONS_DIR, trial_agent_log};
pub use dataset_manifest::{
    DATASET_TOML, Manifest, ManifestError, task_digest, write_dataset_toml,
};
pub use job::{
    BUILT_IN_AGENTS, JobError, ReleaseOptions, SUBMISSION_DIFF, TrialPatch, built_in_agent,
    find_trial_patch, is_log, job_files, job_of, release_line, trial_dir, trial_dirs,
    trial_instance, trial_instance_id, trial_patch, trial_reward, write_trial,
};
pub use task_config::{
    Author, CollectHook, EnvironmentToml, SCHEMA_VERSION, TaskTable, TaskToml, Timeout,
    VerifierToml, check_package_name, size_to_mb,
};
pub use test_config::TestConfig;

/// `[metadata]` key marking a task directory written by this tool, whose `tests/instance.json`
/// is then the complete record.
pub const CONVERTED_BY_KEY: &str = "converted_by";
/// The value of [`CONVERTED_BY_KEY`] in the tasks this tool writes.
pub const CONVERTED_BY: &str = "beyondswe";

/// The task directory name for an instance id: one that every Harbor version can name its image
/// after. Harbor 0.1.x tags the image it builds `hb__<directory>` without lowercasing it, and
/// Docker refuses capitals (`repository name must be lowercase`), so the name is the id in lower
/// case; any other character Docker refuses in a name component (anything but `a-z0-9`, `.`, `_`
/// and `-` between them) becomes `_`, and then a short digest of the id keeps two such ids apart.
/// The id itself stays in `task.toml` (`[metadata].instance_id`) and `tests/instance.json`, where
/// `convert from-harbor` reads it.
pub fn task_dir_name(id: &str) -> String {
    dir_name(id, true)
}

/// [`task_dir_name`]; `for_harbor_0_26` off gives the name this tool wrote before it kept
/// Harbor 0.26's trial names valid, so tasks converted then are still found by name.
fn dir_name(id: &str, for_harbor_0_26: bool) -> String {
    let lower = id.to_ascii_lowercase();
    let mut out = String::with_capacity(lower.len());
    // Separators Docker accepts between alphanumerics: `.`, `_`, `__`, one or more `-`.
    let mut sep = String::new();
    let flush = |out: &mut String, sep: &mut String| {
        if !sep.is_empty() {
            let ok = matches!(sep.as_str(), "." | "_" | "__") || sep.chars().all(|c| c == '-');
            if out.is_empty() {
                // Leading separators are dropped below (the name must start alphanumeric).
            } else if ok {
                out.push_str(sep);
            } else {
                out.push('_');
            }
            sep.clear();
        }
    };
    for c in lower.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            flush(&mut out, &mut sep);
            out.push(c);
        } else if matches!(c, '.' | '_' | '-') {
            sep.push(c);
        } else {
            sep.push('\u{0}');
        }
    }
    if out.is_empty() {
        out.push_str("task");
    }
    if for_harbor_0_26 {
        keep_trial_names_valid(&mut out);
    }
    if out != lower {
        use sha2::Digest;
        let digest = hex::encode(sha2::Sha256::digest(id.as_bytes()));
        out.push('-');
        out.push_str(&digest[..8]);
    }
    out
}

/// How many characters of a task's name Harbor 0.26 keeps in a trial's name
/// (`<name[:32] less trailing '_' and '-'>__<7 random characters>`), which it makes the Docker
/// Compose project's name and so the image tag `<project>__env-main`.
pub const HARBOR_TRIAL_NAME_PREFIX: usize = 32;

/// A name whose first [`HARBOR_TRIAL_NAME_PREFIX`] characters, trailing `_` and `-` stripped as
/// Harbor strips them, end in `.` would give Harbor a trial name `….__abcdefg`, which its
/// compose sanitiser turns into `…-__abcdefg`: a mixed separator Docker refuses in an image
/// tag, so the trial's environment never builds. That `.` becomes `_` (and the caller's digest
/// keeps the id's identity).
fn keep_trial_names_valid(name: &mut String) {
    let cut: String = name.chars().take(HARBOR_TRIAL_NAME_PREFIX).collect();
    let kept = cut.trim_end_matches(['_', '-']);
    if kept.ends_with('.') {
        name.replace_range(kept.len() - 1..kept.len(), "_");
    }
}

/// What `map` (keyed by instance id or task directory name, as [`task_name_index`] makes it)
/// holds for a trial's task name. Harbor 0.26 names the task of a `task.toml` with `[task] name`
/// by that package name, `org/<directory>`: the part after the organisation is looked up when
/// the whole name is not there.
pub fn lookup_task<'a, V>(
    map: &'a std::collections::HashMap<String, V>,
    name: &str,
) -> Option<&'a V> {
    map.get(name)
        .or_else(|| name.rsplit_once('/').and_then(|(_, local)| map.get(local)))
}

/// Harbor names a trial's task after its directory ([`task_dir_name`]), so a task name is an
/// instance id or the directory name `convert` gave one: this maps both to the id. A directory
/// name shared by two ids (they differ only in case) maps to neither.
pub fn task_name_index<'a>(
    ids: impl IntoIterator<Item = &'a str>,
) -> std::collections::HashMap<String, String> {
    let mut index = std::collections::HashMap::new();
    let mut aliases: std::collections::HashMap<String, Option<String>> =
        std::collections::HashMap::new();
    for id in ids {
        index.insert(id.to_owned(), id.to_owned());
        let mut names = vec![task_dir_name(id)];
        let earlier = dir_name(id, false);
        if earlier != names[0] {
            names.push(earlier);
        }
        for name in names.into_iter().filter(|n| n != id) {
            aliases
                .entry(name)
                .and_modify(|v| *v = None)
                .or_insert_with(|| Some(id.to_owned()));
        }
    }
    for (name, id) in aliases {
        if let Some(id) = id {
            index.entry(name).or_insert(id);
        }
    }
    index
}

/// File names inside a Harbor task directory.
pub mod paths {
    /// The task's configuration ([`TaskToml`](super::TaskToml)).
    pub const TASK_TOML: &str = "task.toml";
    /// The prompt the agent is given.
    pub const INSTRUCTION: &str = "instruction.md";
    /// The image's build context.
    pub const ENVIRONMENT: &str = "environment";
    /// Builds the task image from the instance's image.
    pub const DOCKERFILE: &str = "environment/Dockerfile";
    /// Doc2Repo: the specification, copied into the workdir as `repo_document.md`.
    pub const REPO_DOCUMENT: &str = "environment/repo_document.md";
    /// Checks out the base commit and removes all newer history at build time.
    pub const STRIP_HISTORY: &str = "environment/beyondswe_strip_history.sh";
    /// Runs one of the record's setup commands so that its exports carry over to the tests.
    pub const SETUP_STEP: &str = "environment/beyondswe_setup_step.sh";
    /// The restore rules ([`RESTORE_RULES`]), in the image beside the verifier's modules.
    pub const ENV_RESTORE_RULES: &str = "environment/beyondswe_restore_rules.json";
    /// Uploaded by Harbor to `/tests` only after the agent has finished.
    pub const TESTS: &str = "tests";
    /// The verifier's entry point, which Harbor runs; it writes the reward.
    pub const TEST_SH: &str = "tests/test.sh";
    /// The tests that decide the instance ([`TestConfig`](super::TestConfig)).
    pub const TEST_CONFIG: &str = "tests/test_config.json";
    /// The test patch, applied before the tests run.
    pub const F2P_PATCH: &str = "tests/f2p_patch.diff";
    /// The complete BeyondSWE record, which `convert from-harbor` reads back.
    pub const INSTANCE_JSON: &str = "tests/instance.json";
    /// Doc2Repo: the hidden test suite.
    pub const TEST_SUITE_ZIP: &str = "tests/test_suite.zip";
    /// The gold patch, for the verifier only: what it uses is allowed to the submission.
    pub const GOLD_PATCH: &str = "tests/gold_patch.diff";
    /// The gold check the grader ran for the task (`grade --via-harbor` on the local engine):
    /// the sites its canary groups may use, and the seed of its string sites' values.
    pub const GOLD_CHECK: &str = "tests/gold_check.json";
    /// Which repository paths the verifier resets, removes or protects before the tests run.
    pub const RESTORE_RULES: &str = "tests/beyondswe_restore_rules.json";
    /// What Harbor's `oracle` agent runs: applies the gold patch or unpacks the reference repo.
    pub const SOLVE_SH: &str = "solution/solve.sh";
    /// The gold patch, for `solve.sh`.
    pub const SOLUTION_PATCH: &str = "solution/gold.patch";
    /// Doc2Repo: the reference repository (`convert to-harbor --solutions`), as a tar archive.
    pub const SOLUTION_REPO: &str = "solution/repo.tar";
    /// `grade --via-harbor`: the submission graded, for `solve.sh`.
    pub const SOLUTION_SUBMISSION: &str = "solution/submission.patch";
}

#[cfg(test)]
mod tests {
    use super::task_dir_name;

    #[test]
    fn task_dir_names_are_docker_image_names() {
        for (id, want) in [
            ("acme_calc_pr7", "acme_calc_pr7"),
            ("aiven_aiven-client_pr399", "aiven_aiven-client_pr399"),
            ("pylons_pyramid__pr2964", "pylons_pyramid__pr2964"),
            ("PyCQA_pyflakes_pr801", "pycqa_pyflakes_pr801"),
        ] {
            assert_eq!(task_dir_name(id), want);
        }
        // Anything else Docker refuses is replaced, and a digest keeps the id's identity.
        for id in ["a b", "a___b", "-x", "x.", "é", "a/b", "a_.b", ""] {
            let name = task_dir_name(id);
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c)),
                "{id:?} -> {name}"
            );
            assert!(
                name.starts_with(|c: char| c.is_ascii_alphanumeric()),
                "{id:?} -> {name}"
            );
            assert!(
                name.ends_with(|c: char| c.is_ascii_alphanumeric()),
                "{id:?} -> {name}"
            );
            assert!(
                !name.contains("___") && !name.contains("._"),
                "{id:?} -> {name}"
            );
        }
        assert_ne!(task_dir_name("a b"), task_dir_name("a+b"));
    }

    /// One component of a Docker image name, as the distribution spec's grammar has it:
    /// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`.
    fn valid_component(name: &str) -> bool {
        let mut rest = name;
        let alnum = |s: &str| {
            s.find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
                .unwrap_or(s.len())
        };
        loop {
            let n = alnum(rest);
            if n == 0 {
                return false;
            }
            rest = &rest[n..];
            if rest.is_empty() {
                return true;
            }
            let sep = rest
                .find(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                .unwrap_or(rest.len());
            let s = &rest[..sep];
            if !(s == "." || s == "_" || s == "__" || s.chars().all(|c| c == '-')) {
                return false;
            }
            rest = &rest[sep..];
        }
    }

    /// The image tag Harbor 0.26 builds for a trial of task directory `name` (`generate_trial_name`,
    /// then `_sanitize_docker_compose_project_name(f"{trial}__env")`, then compose's
    /// `<project>-main`).
    fn harbor_image_tag(name: &str) -> String {
        let cut: String = name.chars().take(super::HARBOR_TRIAL_NAME_PREFIX).collect();
        let trial = format!("{}__thqvqbq", cut.trim_end_matches(['_', '-']));
        let project: String = format!("{trial}__env")
            .to_lowercase()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        format!("{project}-main")
    }

    #[test]
    fn harbor_builds_a_valid_image_tag_for_every_task_name() {
        // Harbor 0.26 cut `pytoolz_toolz_v0.11.2_to_v0.12.0`'s name at a `.`: `…-__thqvqbq__env-main`.
        let mut ids: Vec<String> = vec![
            "pytoolz_toolz_v0.11.2_to_v0.12.0".into(),
            "PyCQA_pyflakes_v3.0.0_to_v3.0.1".into(),
            "pylons_pyramid__pr2964".into(),
        ];
        // A dot at every place the cut can fall, after every kind of separator.
        for n in 1..40 {
            for tail in ["x", "_x", "__x", "-x", ".1", "1.2.3"] {
                ids.push(format!("{}.{tail}", "a".repeat(n)));
                ids.push(format!("{}_v0.{tail}", "b".repeat(n)));
            }
        }
        for id in &ids {
            let name = task_dir_name(id);
            let tag = harbor_image_tag(&name);
            assert!(valid_component(&tag), "{id:?} -> {name} -> {tag}");
        }
        assert!(!valid_component("pytoolz_toolz_v0-__thqvqbq__env-main"));
    }

    #[test]
    fn task_names_map_back_to_ids() {
        let index = super::task_name_index(["PyCQA_x_pr1", "acme_y_pr2", "Ab_pr3", "aB_pr3"]);
        assert_eq!(index["pycqa_x_pr1"], "PyCQA_x_pr1");
        assert_eq!(index["PyCQA_x_pr1"], "PyCQA_x_pr1");
        assert_eq!(index["acme_y_pr2"], "acme_y_pr2");
        assert!(!index.contains_key("ab_pr3"), "ambiguous");
    }
}
