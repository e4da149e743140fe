//! Trajectory audits: SearchSWE's bash blocklist (its forbidden git commands, and the GitHub hosts
//! it blocks when search was off; matched the way a shell would run them) and access to the
//! task's own pull request, classified as in the BeyondSWE authors' analysis — tier A (the PR's
//! diff, patch, files or commits views, REST endpoints, patch mirror), tier B candidate (the
//! conversation page, reported with the reasoning after it for a person to confirm), search-only
//! (the PR number in search queries), prompt-supplied (the prompt itself links the PR) — with
//! evidence for every finding, and each family's score recomputed without tier A successes
//! ([`rescore`]). A trajectory with tool calls that could not be read is `incomplete`, never
//! `clean`. Reads the trajectories a path holds (a release, raw transcripts, a Harbor jobs
//! directory: sources.rs) in every shape they are written in (shapes.rs). Also says which shell
//! commands change files (writes.rs), for replaying a transcript's edits.
//!
//! Files:
//! - `program.rs`: The program a command word names, shared by the shell reader, the Python reader
//!   and the rules that look at what a command runs.
//! - `python.rs`: Shell commands that Python code would run.
//! - `rules.rs`: The two checks: SearchSWE's bash blocklist (forbidden git commands, and GitHub
//!   hosts when search was off).
//! - `shapes.rs`: What the audit reads of a trajectory.
//! - `shell.rs`: Shell commands taken apart the way a shell would run them.
//! - `sources.rs`: The trajectories to audit.
//! - `web.rs`: Web access against what SearchSWE forbids for a task.
//! - `writes.rs`: Which shell commands change files in the workspace, read the way a shell would
//!   run them (shell.rs).
//! - `written.rs`: The files a trajectory wrote, so that a command that runs one is read as what
//!   it runs.

mod program;
mod python;
mod rules;
mod shapes;
mod shell;
mod sources;
mod web;
mod writes;
mod written;

pub use crate::submission::agents::{
    About, Item, SourceError, for_each_item, line_item, read_line,
};
pub use rules::{
    TargetPr, UrlClass, blocklist_hits, classify_url, command_pr_access, query_names_pr,
};
pub use shapes::{Change, Event, EventKind, Read, from_transcript};
pub use shell::{split_commands, unread_reason};
pub use sources::{audit_item, task_infos};
pub use web::{WebRule, WebTarget, WebUse, normalise_package};
pub use writes::command_writes;

/// Why each shell command of `t` changes files in the workspace, by its step and text: what
/// [`command_writes`] sees in its text, else a file it runs that the trajectory wrote (through
/// an edit tool or a command before it) whose text writes files, or whose text the trajectory
/// does not show. For a replay of `t`'s edits: what such a command changed is not in them.
pub fn command_writes_of(
    t: &crate::submission::Trajectory,
) -> impl Fn(usize, &str) -> Option<String> + use<> {
    let read = shapes::from_transcript(t);
    let mut by_command: std::collections::HashMap<(usize, String), String> =
        std::collections::HashMap::new();
    read_commands_of(&read.events, |_, e, c| {
        let Some(c) = c else { return };
        let file_writes = c.file_texts.iter().find_map(|(name, text, python)| {
            if *python {
                writes::code_writes(text).then(|| format!("runs `{name}`, whose code writes files"))
            } else {
                command_writes(text).map(|why| format!("runs `{name}`, which {why}"))
            }
        });
        if let Some(why) = file_writes.or_else(|| c.unknown_files.first().map(|p| unknown_file(p)))
        {
            by_command.entry((e.step, e.text.clone())).or_insert(why);
        }
    });
    move |step, text| {
        command_writes(text).or_else(|| by_command.get(&(step, text.to_owned())).cloned())
    }
}

/// Every event of a trajectory but its writes, in order, each command read once
/// (`shell::read_commands`) with the files the events before it wrote: `f(index, event, the
/// command read)`.
fn read_commands_of(events: &[Event], mut f: impl FnMut(usize, &Event, Option<&shell::Commands>)) {
    let mut written = written::Written::default();
    for (i, e) in events.iter().enumerate() {
        if let Some(change) = &e.change {
            written.change(&e.text, change);
            continue;
        }
        let commands =
            (e.kind == EventKind::Command).then(|| shell::read_commands(&e.text, &mut written));
        f(i, e, commands.as_ref());
    }
}

/// Why a command that runs `path`, a file the trajectory wrote without showing its text, is
/// not fully known.
fn unknown_file(path: &str) -> String {
    format!(
        "runs `{}`, which the trajectory wrote without showing what it holds",
        crate::text::one_line(path)
    )
}

use crate::record::{Family, parse_issue_instance_id};
use crate::text::urls;
use serde::Serialize;
use serde_json::Value;

/// The class of one trajectory: its strongest finding, in one order from least to most serious
/// (the order `Ord` gives, and the one the table and the report list them in, reversed). A
/// trajectory is `clean` only when every step was read and nothing was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrajectoryClass {
    /// Nothing found, every tool call was read to its end, and every check ran.
    Clean,
    /// Nothing found in what was read, but a check could not run: the task's repository (or, for
    /// an issue task, its PR) is known neither from the dataset nor from the task's name. The
    /// checks that did not run are listed ([`TrajectoryAudit::unchecked`]).
    Unchecked,
    /// Nothing found in what was read, but some tool calls (or commands inside them) could not
    /// be read.
    Incomplete,
    /// A web search query named the PR; the PR itself was not opened.
    SearchOnly,
    /// The PR's conversation page was opened, but the prompt itself links the PR: allowed.
    PromptSupplied,
    /// Something SearchSWE's blocklists forbid: a command (`git pull`, `git log --all`, …), or
    /// web access to the task's repository (its issue and PR pages, its code past the base
    /// commit) or to its own released package.
    Blocklist,
    /// The PR's conversation page was opened (a URL or `gh pr view`): whether it gave the fix
    /// away is for a person to judge from the evidence's excerpt.
    TierBCandidate,
    /// The PR's changes were reached: its diff or patch, files or commits views, REST endpoints,
    /// patch mirror, or its commits fetched (`git fetch … pull/N/head`, `gh pr diff|checkout`).
    TierA,
}

impl TrajectoryClass {
    /// Every class, from the most serious to the least (as the table lists them).
    pub const MOST_SERIOUS_FIRST: [TrajectoryClass; 8] = [
        TrajectoryClass::TierA,
        TrajectoryClass::TierBCandidate,
        TrajectoryClass::Blocklist,
        TrajectoryClass::PromptSupplied,
        TrajectoryClass::SearchOnly,
        TrajectoryClass::Incomplete,
        TrajectoryClass::Unchecked,
        TrajectoryClass::Clean,
    ];

    /// The class as the audit writes it (`tier_a`, `search_only`, …), as in its JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            TrajectoryClass::Clean => "clean",
            TrajectoryClass::Unchecked => "unchecked",
            TrajectoryClass::Incomplete => "incomplete",
            TrajectoryClass::SearchOnly => "search_only",
            TrajectoryClass::PromptSupplied => "prompt_supplied",
            TrajectoryClass::Blocklist => "blocklist",
            TrajectoryClass::TierBCandidate => "tier_b_candidate",
            TrajectoryClass::TierA => "tier_a",
        }
    }
}

/// One piece of evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// The step (or event) of the trajectory it was found in, as the trajectory numbers them.
    pub step: usize,
    /// The tool that was called (`Bash`, `web_search`, …), or `prompt`/`message` for text.
    pub tool: String,
    /// `tier_a`, `tier_b_candidate`, `search_only`, `blocklist` or `web_blocklist` (hits);
    /// `same_repo` (an allowed page of the task's repository) or `network` (other network use),
    /// listed only.
    pub finding: String,
    /// The command, URL or query.
    pub what: String,
    /// For tier B candidates: the agent's words right after the page was opened; for blocklist
    /// hits: the forbidden command's canonical name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub excerpt: String,
}

/// The audit of one trajectory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrajectoryAudit {
    /// The release line it came from; for transcripts and Harbor trials, its number among the
    /// path's trajectories (from 1).
    pub line: u64,
    /// The instance id, or the task name a Harbor trial gives.
    pub task_name: String,
    /// The attempt among the instance's (a Harbor trial's, numbered as ingest numbers its
    /// submissions; a release line's own `attempt`); `None` where nothing says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// The dataset's family for the task, else the trajectory's own, else `Unknown`.
    pub family: Family,
    /// The agent whose trajectory it is (from its shape), by the name ingest gives its format.
    pub agent: crate::submission::Agent,
    /// The shape the trajectory was read from.
    pub shape: crate::submission::TrajectoryShape,
    /// The strongest finding.
    pub class: TrajectoryClass,
    /// The reward recorded with the trajectory (release line or trial result); `None` when none
    /// was.
    pub reward: Option<f64>,
    /// The forbidden commands run, by canonical name, each once, in the order first run.
    pub blocklist_hits: Vec<String>,
    /// The web rules broken (`issue or PR page`, `upstream repository`, `target package`), each
    /// once, in the order first broken; the URLs and commands are in the evidence.
    pub web_hits: Vec<String>,
    /// Every finding, in the order of the trajectory's steps.
    pub evidence: Vec<Evidence>,
    /// Tool calls that could not be read (why the class is `incomplete` rather than `clean`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<crate::submission::Unread>,
    /// The checks that could not run, each with why (why the class is `unchecked` rather than
    /// `clean`): the web blocklist without a known repository, the own-PR check without a known
    /// PR.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unchecked: Vec<String>,
    /// The file the trajectory was read from, for raw transcripts and Harbor trials.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub source: String,
}

/// What the audit is told about the task.
#[derive(Debug, Clone, Default)]
pub struct TaskInfo {
    /// The task's family; wins over the one recorded with the trajectory.
    pub family: Option<Family>,
    /// `owner/repo` when known from the dataset (the instance id loses the owner's case).
    pub repo: Option<(String, String)>,
    /// The task's prompt, for telling whether it links the PR when the trajectory does not
    /// record its own.
    pub problem_statement: Option<String>,
    /// The commit the agent starts from: pages of the repository pinned at it are allowed.
    pub base_commit: Option<String>,
    /// The version of the project the task targets, when the dataset records one (`version`).
    pub version: Option<String>,
}

/// How the trajectories were run, as far as the audit needs to know.
#[derive(Debug, Clone, Copy, Default)]
pub struct AuditOptions {
    /// Search was not allowed: `git clone` and the GitHub hosts (`api.github.com`, `github.io`,
    /// `githubusercontent`) are forbidden too, as SearchSWE's blocklist has them then.
    pub search_disallowed: bool,
}

fn cut(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        out.push('…');
    }
    out
}

/// The task's PR, from the dataset's repo (when given) and the instance id: BeyondSWE's
/// `<owner>_<repo>_pr<N>`, or SWE-bench's `<owner>__<repo>-<N>` (N is the PR there too).
pub fn target_pr(task_name: &str, info: &TaskInfo) -> Option<TargetPr> {
    let (owner, repo, number) =
        parse_issue_instance_id(task_name).or_else(|| swebench_id(task_name))?;
    let (owner, repo) = info.repo.clone().unwrap_or((owner, repo));
    Some(TargetPr {
        owner,
        repo,
        number,
    })
}

/// SWE-bench's instance id, `<owner>__<repo>-<N>` (`django__django-11039`).
fn swebench_id(task_name: &str) -> Option<(String, String, u64)> {
    let (owner, rest) = task_name.split_once("__")?;
    let (repo, number) = rest.rsplit_once('-')?;
    let ok = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    if !ok(owner) || !ok(repo) || number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((owner.to_owned(), repo.to_owned(), number.parse().ok()?))
}

/// The repository of a BeyondSWE DepMigrate id, `<owner>_<repo>_v<from>_to_v<to>`
/// (`PyCQA_pyflakes_v3.0.0_to_v3.0.1`): a GitHub owner holds no `_`, so the owner ends at the
/// first one.
fn migration_repo(task_name: &str) -> Option<(String, String)> {
    let (owner, rest) = task_name.split_once('_')?;
    let at = rest.find("_v")?;
    let (repo, versions) = (&rest[..at], &rest[at + 1..]);
    (!owner.is_empty() && !repo.is_empty() && versions.contains("_to_"))
        .then(|| (owner.to_owned(), repo.to_owned()))
}

/// What the task forbids on the web: its repository (from the dataset, else the instance id:
/// `<owner>_<repo>_pr<N>`, or a Doc2Repo `<Repo>_<commit>`, whose repository at any commit is
/// the answer) and its package.
/// `pr` is the task's PR ([`target_pr`]), which names the repository of an issue task.
pub fn web_target(
    task_name: &str,
    info: &TaskInfo,
    family: Family,
    prompt: &str,
    pr: Option<&TargetPr>,
) -> Option<WebTarget> {
    let (owner, repo) = match (pr, &info.repo) {
        (Some(pr), _) => (Some(pr.owner.clone()), pr.repo.clone()),
        (None, Some((o, r))) => (Some(o.clone()), r.clone()),
        (None, None) => match migration_repo(task_name) {
            Some((o, r)) => (Some(o), r),
            None => (None, doc2repo_repo(task_name)?.to_owned()),
        },
    };
    // A Doc2Repo task has no commit to allow: its repository at any commit is the answer.
    let doc2repo =
        family == Family::Doc2Repo || (pr.is_none() && doc2repo_repo(task_name).is_some());
    let base = if doc2repo {
        None
    } else {
        info.base_commit.as_deref()
    };
    let mut t = WebTarget::new(
        owner.as_deref(),
        &repo,
        base,
        info.version.as_deref(),
        prompt,
    );
    t.pr = pr.map(|p| p.number);
    Some(t)
}

/// The repository name of a Doc2Repo id, `<Repo>_<40 hex>`.
fn doc2repo_repo(task_name: &str) -> Option<&str> {
    let (repo, commit) = task_name.rsplit_once('_')?;
    (commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()) && !repo.is_empty())
        .then_some(repo)
}

/// Audits a release line (a trajectory document read as one): its steps and what it says of
/// itself, read as the audit's walk reads every line ([`line_item`]).
pub fn audit_line(
    line_no: u64,
    line: &Value,
    info: &TaskInfo,
    opts: AuditOptions,
) -> Result<TrajectoryAudit, String> {
    match line_item(line, "")? {
        Item::Trajectory { about, transcript } => {
            audit_transcript(line_no, about, &transcript, info, opts)
        }
        Item::NothingToAudit(why) => Err(why),
    }
}

/// Audits a raw Claude Code or Codex transcript.
pub fn audit_transcript(
    line_no: u64,
    about: About,
    transcript: &crate::submission::Trajectory,
    info: &TaskInfo,
    opts: AuditOptions,
) -> Result<TrajectoryAudit, String> {
    audit_read(line_no, about, from_transcript(transcript), info, opts)
}

fn audit_read(
    line_no: u64,
    about: About,
    read: Read,
    info: &TaskInfo,
    opts: AuditOptions,
) -> Result<TrajectoryAudit, String> {
    let Read {
        shape,
        events: evs,
        unread,
        empty_because,
    } = read;
    if let Some(why) = empty_because {
        return Err(why);
    }
    if evs.is_empty() && unread.is_empty() {
        return Err("the trajectory has no steps".into());
    }
    let task_name = about.task_name;
    let family = info.family.or(about.family).unwrap_or(Family::Unknown);
    let pr = target_pr(&task_name, info);
    let prompt = evs
        .iter()
        .find(|e| e.kind == EventKind::Prompt)
        .map(|e| e.text.clone())
        .or(about.prompt)
        .or_else(|| info.problem_statement.clone())
        .unwrap_or_default();
    let web = web_target(&task_name, info, family, &prompt, pr.as_ref());
    let unchecked = unchecked_checks(&task_name, family, web.is_some(), pr.is_some());
    let mut found = Findings::default();
    let mut unread = unread;
    // A command is read once, with the files written before it; every check takes its words
    // and URLs from here.
    read_commands_of(&evs, |i, e, commands| {
        let reached = event_urls(e, commands);
        if let Some(c) = commands {
            found.blocklist(e, c, opts);
            if let Some(why) = c.cut {
                unread.push(crate::submission::Unread {
                    step: e.step,
                    tool: e.tool.clone(),
                    why: format!("a command not read to its end: {why}"),
                });
            }
            for path in &c.unknown_files {
                unread.push(crate::submission::Unread {
                    step: e.step,
                    tool: e.tool.clone(),
                    why: unknown_file(path),
                });
            }
        }
        found.web(e, &reached, commands, web.as_ref());
        let Some(pr) = &pr else { return };
        found.pr_access(e, &reached, commands, &evs[i + 1..], pr);
        if e.kind == EventKind::Search && query_names_pr(&e.text, pr) {
            found.search_only = true;
            found
                .evidence
                .push(Evidence::of(e, "search_only", cut(&e.text, 300)));
        }
    });
    let in_prompt = pr.as_ref().is_some_and(|pr| prompt_links(&prompt, pr));
    Ok(TrajectoryAudit {
        line: line_no,
        task_name,
        family,
        agent: shape.agent(),
        shape,
        class: found.class(in_prompt, !unread.is_empty(), !unchecked.is_empty()),
        reward: about.reward,
        attempt: about.attempt,
        blocklist_hits: found.blocklist,
        web_hits: found.web_hits,
        evidence: found.evidence,
        unread,
        unchecked,
        source: about.source,
    })
}

/// The checks that cannot run for this task, each with why: the web blocklist without a
/// repository, the own-PR check of an issue task without its PR (DepMigrate and Doc2Repo tasks
/// have none; their leaks are the repository's and the package's, which the web check judges).
fn unchecked_checks(task_name: &str, family: Family, web: bool, pr: bool) -> Vec<String> {
    let mut out = Vec::new();
    let name = crate::text::one_line(task_name);
    if !web {
        out.push(format!(
            "web blocklist: no repository is known for `{name}` (its name is none of the id \
             shapes known; give --dataset)"
        ));
    }
    let issue = matches!(family, Family::CrossRepo | Family::DomainFix)
        || (family == Family::Unknown
            && migration_repo(task_name).is_none()
            && doc2repo_repo(task_name).is_none());
    if issue && !pr {
        out.push(format!(
            "own PR: no pull request is known for `{name}` (its name holds no PR number; give \
             --dataset with ids of the `<owner>_<repo>_pr<N>` shape)"
        ));
    }
    out
}

/// The URLs event `e` reaches: a page tool's URL (its text, when it holds none that looks like
/// one), or those of a command as the shell passes them ([`rules::command_urls`]).
fn event_urls(e: &Event, commands: Option<&shell::Commands>) -> Vec<String> {
    match (e.kind, commands) {
        (EventKind::Command, Some(c)) => {
            let mut out = rules::command_urls(&e.text, &c.words);
            for u in &c.file_urls {
                if !out.contains(u) {
                    out.push(u.clone());
                }
            }
            out
        }
        (EventKind::Url, _) => {
            let u = urls(&e.text);
            if u.is_empty() {
                vec![e.text.clone()]
            } else {
                u
            }
        }
        _ => Vec::new(),
    }
}

impl Evidence {
    /// Evidence from event `e`, without an excerpt.
    fn of(e: &Event, finding: &str, what: String) -> Evidence {
        Evidence {
            step: e.step,
            tool: e.tool.clone(),
            finding: finding.into(),
            what,
            excerpt: String::new(),
        }
    }
}

/// What the events of one trajectory showed, as they are read.
#[derive(Default)]
struct Findings {
    /// Blocklisted commands, each once, in the order first run.
    blocklist: Vec<String>,
    /// Web rules broken, each once, in the order first broken.
    web_hits: Vec<String>,
    evidence: Vec<Evidence>,
    tier_a: bool,
    tier_b: bool,
    search_only: bool,
}

impl Findings {
    /// The blocklisted commands in command event `e`, read into `commands`.
    fn blocklist(&mut self, e: &Event, commands: &shell::Commands, opts: AuditOptions) {
        for hit in rules::blocklist_hits_in(&e.text, &commands.words, !opts.search_disallowed) {
            if !self.blocklist.iter().any(|b| b == hit) {
                self.blocklist.push(hit.to_owned());
            }
            let mut evidence = Evidence::of(e, "blocklist", cut(&e.text, 300));
            evidence.excerpt = hit.to_owned();
            self.evidence.push(evidence);
        }
    }

    /// Event `e`'s web access, judged against what the task forbids: hits, allowed pages of the
    /// repository, and other network use. The task's own PR is left to [`Findings::pr_access`].
    /// Without a target (no repository known) every URL is listed as network use.
    fn web(
        &mut self,
        e: &Event,
        reached: &[String],
        commands: Option<&shell::Commands>,
        web: Option<&WebTarget>,
    ) {
        let mut uses: Vec<WebUse> = match web {
            Some(web) => reached.iter().map(|u| web.judge_url(u)).collect(),
            None => reached.iter().cloned().map(WebUse::Network).collect(),
        };
        if let (Some(web), Some(c)) = (web, commands) {
            uses.extend(web.judge_words(&c.words));
        }
        // A search fetches no page: what it returned is the search tool's to filter. It is
        // network use, listed.
        if e.kind == EventKind::Search {
            uses.push(WebUse::Network(e.text.clone()));
        }
        // The same URL can come twice from one command (its text, and its words): once each.
        let this_event = self.evidence.len();
        for u in uses {
            let (finding, what, excerpt) = match u {
                WebUse::Hit(rule, what) => {
                    if !self.web_hits.iter().any(|h| h == rule.as_str()) {
                        self.web_hits.push(rule.as_str().to_owned());
                    }
                    ("web_blocklist", what, rule.as_str().to_owned())
                }
                WebUse::RepoAllowed(what) => ("same_repo", what, String::new()),
                WebUse::Network(what) => ("network", what, String::new()),
                WebUse::OwnPr => continue,
            };
            let mut evidence = Evidence::of(e, finding, cut(&what, 300));
            evidence.excerpt = excerpt;
            if !self.evidence[this_event..].contains(&evidence) {
                self.evidence.push(evidence);
            }
        }
    }

    /// Every way event `e` reaches the repository: URLs, and git/gh commands naming the PR. A
    /// tier B candidate quotes the agent's next words (from `after`).
    fn pr_access(
        &mut self,
        e: &Event,
        urls: &[String],
        commands: Option<&shell::Commands>,
        after: &[Event],
        pr: &TargetPr,
    ) {
        let mut reached: Vec<(UrlClass, String)> = urls
            .iter()
            .map(|u| (classify_url(u, pr), u.clone()))
            .collect();
        if let Some(c) = commands
            && let Some(c) = rules::command_pr_access_in(&c.words, pr)
        {
            reached.push((c, cut(&e.text, 300)));
        }
        for (class, what) in reached {
            let finding = match class {
                UrlClass::PrArtifact => "tier_a",
                UrlClass::PrConversation => "tier_b_candidate",
                // The web checks judge every other page of the repository.
                UrlClass::SameRepo | UrlClass::Other => continue,
            };
            self.tier_a |= finding == "tier_a";
            self.tier_b |= finding == "tier_b_candidate";
            let mut evidence = Evidence::of(e, finding, what);
            if finding == "tier_b_candidate" {
                evidence.excerpt = after
                    .iter()
                    .filter(|x| x.kind == EventKind::Reasoning)
                    .take(2)
                    .map(|x| cut(&x.text, 300))
                    .collect::<Vec<_>>()
                    .join(" … ");
            }
            self.evidence.push(evidence);
        }
    }

    /// The class: the most serious of every class that applies; `in_prompt`: the prompt links
    /// the PR itself.
    fn class(&self, in_prompt: bool, some_unread: bool, some_unchecked: bool) -> TrajectoryClass {
        [
            (self.tier_a, TrajectoryClass::TierA),
            (self.tier_b && !in_prompt, TrajectoryClass::TierBCandidate),
            (
                !self.blocklist.is_empty() || !self.web_hits.is_empty(),
                TrajectoryClass::Blocklist,
            ),
            // The prompt itself links the PR: opening it is allowed.
            (self.tier_b && in_prompt, TrajectoryClass::PromptSupplied),
            (self.search_only, TrajectoryClass::SearchOnly),
            (some_unread, TrajectoryClass::Incomplete),
            (some_unchecked, TrajectoryClass::Unchecked),
        ]
        .into_iter()
        .filter(|(applies, _)| *applies)
        .map(|(_, class)| class)
        .max()
        .unwrap_or(TrajectoryClass::Clean)
    }
}

/// Whether `prompt` links the PR (not a longer number that starts the same).
fn prompt_links(prompt: &str, pr: &TargetPr) -> bool {
    let p = prompt.to_ascii_lowercase();
    let link =
        format!("github.com/{}/{}/pull/{}", pr.owner, pr.repo, pr.number).to_ascii_lowercase();
    p.match_indices(&link)
        .any(|(i, _)| !p[i + link.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

/// Per-family scores as published and with tier A successes (and, if asked, tier B candidates)
/// counted as failures.
#[derive(Debug, Clone, Serialize)]
pub struct Rescore {
    /// The family these scores are for.
    pub family: Family,
    /// How many of the family's trajectories were audited.
    pub trajectories: usize,
    /// Σ reward / trajectories × 100 (missing rewards count 0).
    pub published: f64,
    /// The published score with each tier A success (and, if asked, tier B candidate success)
    /// counted as reward 0, in percent.
    pub corrected: f64,
    /// Tier A trajectories with reward 1 or more.
    pub tier_a_successes: usize,
    /// Tier B candidates with reward 1 or more (taken off the corrected score only if asked).
    pub tier_b_successes: usize,
}

/// The scores of each family that has audited trajectories, in [`Family::ALL`] order;
/// `count_tier_b`: count tier B candidates' successes as failures too.
pub fn rescore(audits: &[TrajectoryAudit], count_tier_b: bool) -> Vec<Rescore> {
    let mut out = Vec::new();
    for family in Family::ALL {
        let list: Vec<&TrajectoryAudit> = audits.iter().filter(|a| a.family == family).collect();
        if list.is_empty() {
            continue;
        }
        let n = list.len() as f64;
        let published: f64 = list.iter().map(|a| a.reward.unwrap_or(0.0)).sum();
        let successes = |class: TrajectoryClass| {
            list.iter()
                .filter(|a| a.class == class && a.reward.unwrap_or(0.0) >= 1.0)
                .count()
        };
        let tier_a = successes(TrajectoryClass::TierA);
        let tier_b = successes(TrajectoryClass::TierBCandidate);
        let removed = tier_a as f64 + if count_tier_b { tier_b as f64 } else { 0.0 };
        out.push(Rescore {
            family,
            trajectories: list.len(),
            published: 100.0 * published / n,
            corrected: 100.0 * (published - removed) / n,
            tier_a_successes: tier_a,
            tier_b_successes: tier_b,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classes_from_an_atif_trajectory() {
        let line = |cmd: &str, prompt: &str| {
            json!({"task_name": "pylons_pyramid_pr3054", "task_type": "CrossRepo", "reward": 1.0, "trajectory": {
            "schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1"},
            "steps": [
                {"step_id": 1, "source": "user", "message": prompt},
                {"step_id": 2, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "c", "function_name": "Bash", "arguments": {"command": cmd}}]},
                {"step_id": 3, "source": "agent", "message": "The PR renames `foo` to `bar`."}
            ]}})
        };
        let info = TaskInfo::default();
        let run = |cmd: &str, prompt: &str| {
            audit_line(1, &line(cmd, prompt), &info, AuditOptions::default()).unwrap()
        };
        let a = run(
            "curl -s https://GitHub.com/pylons/pyramid/pull/3054.diff",
            "Fix it",
        );
        assert_eq!(a.class, TrajectoryClass::TierA);
        let b = run(
            "curl -s https://github.com/Pylons/pyramid/pull/3054",
            "Fix it",
        );
        assert_eq!(b.class, TrajectoryClass::TierBCandidate);
        assert!(b.evidence[0].excerpt.contains("renames"));
        let p = run(
            "curl -s https://github.com/Pylons/pyramid/pull/3054",
            "See https://github.com/Pylons/pyramid/pull/3054",
        );
        assert_eq!(p.class, TrajectoryClass::PromptSupplied);
        assert_eq!(
            run("gh pr diff 3054 -R Pylons/pyramid", "x").class,
            TrajectoryClass::TierA
        );
        let c = run(
            "cd r && git  fetch; curl https://github.com/Pylons/pyramid/pull/3055",
            "x",
        );
        // A blocklist hit is never clean.
        assert_eq!(c.class, TrajectoryClass::Blocklist);
        assert_eq!(c.blocklist_hits, ["git fetch"]);
        // Another PR of the repository is a page SearchSWE forbids: a web hit, with evidence.
        assert_eq!(c.web_hits, ["issue or PR page"]);
        assert!(c.evidence.iter().any(|e| e.finding == "web_blocklist"
            && e.what == "https://github.com/Pylons/pyramid/pull/3055"));
        // The same page linked by the prompt is allowed, and listed.
        let linked = run(
            "curl https://github.com/Pylons/pyramid/pull/3055",
            "See https://github.com/Pylons/pyramid/pull/3055.",
        );
        assert_eq!(linked.class, TrajectoryClass::Clean);
        assert!(linked.evidence.iter().any(|e| e.finding == "same_repo"));
        // The project's own released package is a hit too; other network use is listed only.
        let pkg = run("pip download pyramid==2.0 && pip install pytest", "x");
        assert_eq!(pkg.class, TrajectoryClass::Blocklist);
        assert_eq!(pkg.web_hits, ["target package"]);
        assert!(pkg.evidence.iter().any(|e| e.finding == "network"));
        let r = rescore(&[a, b, c], false);
        assert_eq!(r[0].tier_a_successes, 1);
        assert!((r[0].corrected - 200.0 / 3.0).abs() < 1e-9);
        // A hit beside an allowed PR view is still the hit; beside tier A, tier A.
        let both = run(
            "git pull; curl -s https://github.com/Pylons/pyramid/pull/3054",
            "See https://github.com/Pylons/pyramid/pull/3054",
        );
        assert_eq!(both.class, TrajectoryClass::Blocklist);
        let both = run("git pull; gh pr diff 3054 -R Pylons/pyramid", "x");
        assert_eq!(both.class, TrajectoryClass::TierA);
        assert_eq!(run("ls -la", "x").class, TrajectoryClass::Clean);
        // The PR's diff with its URL split by quotes, or held in a variable, is still tier A: the
        // PR checks read the URLs the shell passes, as the web checks do.
        for hidden in [
            "curl -s \"https://github.com/Pylons/\"pyramid\"/pull/3054.diff\"",
            "u=github.com/Pylons; curl -s https://$u/pyramid/pull/3054.diff",
        ] {
            assert_eq!(run(hidden, "x").class, TrajectoryClass::TierA, "{hidden}");
        }
    }

    /// Without a dataset the repository and the PR come from any id shape the project knows:
    /// BeyondSWE's (`owner_repo_prN`, a DepMigrate `Owner_repo_vA_to_vB`, a Doc2Repo
    /// `Repo_<commit>`) and SWE-bench's (`owner__repo-N`). A name of no known shape is
    /// `unchecked`, never `clean`, says which checks did not run, and still lists the network
    /// use it saw.
    #[test]
    fn the_repository_comes_from_every_known_id_shape_and_no_clean_without_it() {
        let line = |task: &str, cmd: &str| {
            json!({"task_name": task, "reward": 1.0, "trajectory": {
            "schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1"},
            "steps": [
                {"step_id": 1, "source": "user", "message": "Fix it"},
                {"step_id": 2, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "c", "function_name": "Bash", "arguments": {"command": cmd}}]}
            ]}})
        };
        let info = TaskInfo::default();
        let run = |task: &str, cmd: &str| {
            audit_line(1, &line(task, cmd), &info, AuditOptions::default()).unwrap()
        };
        // SWE-bench: the PR is the id's number.
        let a = run(
            "django__django-11039",
            "curl -sL https://github.com/django/django/pull/11039.diff",
        );
        assert_eq!(a.class, TrajectoryClass::TierA);
        assert!(a.unchecked.is_empty());
        assert_eq!(
            run("django__django-11039", "ls").class,
            TrajectoryClass::Clean
        );
        // DepMigrate: the upstream repository and its released package are the web check's.
        let m = run(
            "PyCQA_pyflakes_v3.0.0_to_v3.0.1",
            "git clone https://github.com/PyCQA/pyflakes /tmp/p",
        );
        assert_eq!(m.class, TrajectoryClass::Blocklist, "{m:#?}");
        assert!(m.unchecked.is_empty(), "{:?}", m.unchecked);
        assert_eq!(
            run("PyCQA_pyflakes_v3.0.0_to_v3.0.1", "ls").class,
            TrajectoryClass::Clean
        );
        // A Harbor task name (the id in lower case) reads the same.
        assert_eq!(
            run(
                "pycqa_pyflakes_v3.0.0_to_v3.0.1",
                "git clone https://github.com/pycqa/pyflakes"
            )
            .class,
            TrajectoryClass::Blocklist
        );
        // No known shape: nothing can be judged, and it says so.
        let u = run(
            "task-42",
            "git clone https://github.com/someone/project && curl https://example.com/x.tgz",
        );
        assert_eq!(u.class, TrajectoryClass::Unchecked);
        assert_eq!(u.unchecked.len(), 2, "{:?}", u.unchecked);
        assert!(u.unchecked[0].contains("web blocklist") && u.unchecked[0].contains("task-42"));
        assert!(u.unchecked[1].contains("own PR"));
        let network: Vec<&str> = u
            .evidence
            .iter()
            .filter(|e| e.finding == "network")
            .map(|e| e.what.as_str())
            .collect();
        assert!(
            network
                .iter()
                .any(|w| w.contains("github.com/someone/project")),
            "{network:?}"
        );
        assert!(
            network.iter().any(|w| w.contains("example.com")),
            "{network:?}"
        );
        // With the dataset's repository, the same name is judged.
        let known = TaskInfo {
            family: Some(Family::DepMigrate),
            repo: Some(("someone".into(), "project".into())),
            ..TaskInfo::default()
        };
        let k = audit_line(
            1,
            &line("task-42", "git clone https://github.com/someone/project"),
            &known,
            AuditOptions::default(),
        )
        .unwrap();
        assert_eq!(k.class, TrajectoryClass::Blocklist);
        assert!(k.unchecked.is_empty());
        // A blocklisted command is found whatever the repository.
        assert_eq!(
            run("task-42", "git log --all").class,
            TrajectoryClass::Blocklist
        );
    }

    /// A command the reader cannot follow to its end (nesting past its depth, expansions past
    /// its budget) hides what it runs: the trajectory is `incomplete`, with the reason, never
    /// `clean`.
    #[test]
    fn commands_too_deep_or_too_expanded_are_unread() {
        let line = |cmd: &str| {
            json!({"task_name": "pylons_pyramid_pr3054", "trajectory": {
            "schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1"},
            "steps": [
                {"step_id": 1, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "c", "function_name": "Bash", "arguments": {"command": cmd}}]},
            ]}})
        };
        let run = |cmd: &str| {
            audit_line(1, &line(cmd), &TaskInfo::default(), AuditOptions::default()).unwrap()
        };
        // Twenty doubling assignments, then eval.
        let mut doubling = String::from("a='git pull;'; ");
        for _ in 0..20 {
            doubling.push_str("a=$a$a; ");
        }
        doubling.push_str("eval \"$a\"");
        // Thirteen levels of `bash -c`, then of `$(…)`.
        let mut deep = String::from("git pull");
        for _ in 0..13 {
            deep = format!("bash -c {}", shell_quote(&deep));
        }
        let mut subst = String::from("git pull");
        for _ in 0..13 {
            subst = format!("echo $({subst})");
        }
        for cmd in [&doubling, &deep, &subst] {
            let a = run(cmd);
            assert!(
                a.class >= TrajectoryClass::Incomplete,
                "{cmd}: {:?}",
                a.class
            );
            if a.class == TrajectoryClass::Incomplete {
                assert!(
                    a.unread[0].why.contains("not read to its end"),
                    "{:?}",
                    a.unread
                );
            }
        }
        assert_eq!(run(&doubling).class, TrajectoryClass::Incomplete);
        // Two levels, as real commands nest, are read whole: the hit is found.
        assert_eq!(
            run("bash -c \"echo $(git pull)\"").class,
            TrajectoryClass::Blocklist
        );
    }

    fn shell_quote(s: &str) -> String {
        format!("'{}'", s.replace('\'', "'\\''"))
    }

    #[test]
    fn classes_are_ordered_most_serious_first() {
        let mut sorted = TrajectoryClass::MOST_SERIOUS_FIRST;
        sorted.sort_by(|a, b| b.cmp(a));
        assert_eq!(sorted, TrajectoryClass::MOST_SERIOUS_FIRST);
    }
}
