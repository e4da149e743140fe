//! Web access against what SearchSWE forbids for a task: the task's repository on the web (its
//! issue and pull request pages, and its code or history past the base commit, on GitHub, its
//! API, raw hosts, GitLab, or any mirror path that embeds `github.com/<owner>/<repo>`), and the
//! released package of the task's own project (`pip install`/`download` by name, or its files on
//! the package index). A match is a hit; every other URL, clone or install is network use, listed
//! and not flagged. Pages the prompt itself links, and the repository pinned at the base commit,
//! are listed as the repository's own pages, not hits.

use super::program::basename;
use super::rules::{TargetPr, UrlClass, classify_url, command_urls};
use super::shell::split_commands;
use crate::text::urls;

/// What the task forbids on the web.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebTarget {
    /// The repository's owner, lower case; `None` when only its name is known (a Doc2Repo id
    /// without a dataset): any owner then matches, as SearchSWE's rules have it.
    pub owner: Option<String>,
    /// The repository's name, lower case.
    pub repo: String,
    /// The commit the agent starts from, lower case: pages pinned at it show nothing newer.
    /// `None` for Doc2Repo, where the repository at any commit is the answer.
    pub base_commit: Option<String>,
    /// The project's package name on the index, normalised (PEP 503).
    pub package: String,
    /// The version the task targets, when the dataset says (`version`): a pin strictly below it
    /// is listed, not flagged.
    pub version: Option<String>,
    /// URLs the prompt links (lower case, without fragment or trailing `/`): opening them is
    /// allowed.
    pub prompt_urls: Vec<String>,
    /// The task's own pull request, whose pages the PR checks class (tier A or B).
    pub pr: Option<u64>,
}

/// Which of the setting's rules a web access breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebRule {
    /// An issue or pull request page of the task's repository (other than the task's own PR,
    /// which the PR checks class on their own).
    IssueOrPrPage,
    /// The task's repository: its code or history past the base commit, a clone, an archive.
    Upstream,
    /// The released package of the task's own project.
    TargetPackage,
}

impl WebRule {
    /// The name the audit lists the hit under (`web_hits`).
    pub fn as_str(self) -> &'static str {
        match self {
            WebRule::IssueOrPrPage => "issue or PR page",
            WebRule::Upstream => "upstream repository",
            WebRule::TargetPackage => "target package",
        }
    }
}

/// How one web access is judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebUse {
    /// Forbidden by the setting, with what made it so.
    Hit(WebRule, String),
    /// A page of the task's repository that is allowed (the prompt links it, or it is pinned at
    /// the base commit): listed, with its URL.
    RepoAllowed(String),
    /// Any other network use: listed, with the URL or command.
    Network(String),
    /// A page of the task's own pull request, which the PR checks class (tier A or B).
    OwnPr,
}

/// PEP 503's normal form: lower case, runs of `-`, `_` and `.` as one `-`.
pub fn normalise_package(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// A URL as compared with the prompt's: lower case, no scheme, no `www.`, no fragment, no
/// trailing `/` or sentence punctuation.
fn comparable(url: &str) -> String {
    let lower = percent_decoded(url).to_ascii_lowercase();
    let rest = lower.split_once("://").map_or(lower.as_str(), |(_, r)| r);
    let rest = rest.trim_start_matches("www.");
    let rest = rest.split('#').next().unwrap_or(rest);
    rest.trim_end_matches(['/', '.', ',', ':', ';', '!'])
        .to_owned()
}

/// `url` with its `%XX` escapes decoded (`github.com/Pylons/%70yramid` is the repository).
fn percent_decoded(url: &str) -> String {
    let bytes = url.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).and_then(|b| hex(*b)),
                bytes.get(i + 2).and_then(|b| hex(*b)),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl WebTarget {
    /// The target of a task in repository `owner/repo`.
    pub fn new(
        owner: Option<&str>,
        repo: &str,
        base_commit: Option<&str>,
        version: Option<&str>,
        prompt: &str,
    ) -> WebTarget {
        WebTarget {
            owner: owner.map(str::to_ascii_lowercase),
            repo: repo.to_ascii_lowercase(),
            base_commit: base_commit
                .map(str::to_ascii_lowercase)
                .filter(|c| c.len() >= 7 && c.bytes().all(|b| b.is_ascii_hexdigit())),
            package: normalise_package(repo),
            version: version.map(str::to_owned),
            prompt_urls: urls(prompt).iter().map(|u| comparable(u)).collect(),
            pr: None,
        }
    }

    fn owner_matches(&self, owner: &str) -> bool {
        self.owner.as_deref().is_none_or(|o| o == owner)
    }

    fn repo_matches(&self, repo: &str) -> bool {
        repo.trim_end_matches(".git") == self.repo
    }

    /// Whether a path segment names the base commit (a hex prefix of at least 7 digits).
    fn pinned_at_base(&self, parts: &[&str]) -> bool {
        let Some(base) = &self.base_commit else {
            return false;
        };
        parts.iter().any(|p| {
            p.len() >= 7 && p.bytes().all(|b| b.is_ascii_hexdigit()) && base.starts_with(p)
        })
    }

    /// Judges one URL the agent fetched.
    pub fn judge_url(&self, url: &str) -> WebUse {
        if let (Some(owner), Some(number)) = (&self.owner, self.pr) {
            let pr = TargetPr {
                owner: owner.clone(),
                repo: self.repo.clone(),
                number,
            };
            if matches!(
                classify_url(url, &pr),
                UrlClass::PrArtifact | UrlClass::PrConversation
            ) {
                return WebUse::OwnPr;
            }
        }
        let c = comparable(url);
        let (host, path) = c.split_once('/').unwrap_or((c.as_str(), ""));
        let path = path.split('?').next().unwrap_or(path);
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        if let Some(rule) = self.repo_rule(host, &parts, &c) {
            if self.prompt_urls.contains(&c) {
                return WebUse::RepoAllowed(url.to_owned());
            }
            // The task's code as the agent already has it shows nothing past the base; a
            // Doc2Repo task has no such commit.
            if rule == WebRule::Upstream && self.pinned_at_base(&parts) {
                return WebUse::RepoAllowed(url.to_owned());
            }
            return WebUse::Hit(rule, url.to_owned());
        }
        if self.package_file(host, &parts) {
            return WebUse::Hit(WebRule::TargetPackage, url.to_owned());
        }
        WebUse::Network(url.to_owned())
    }

    /// The rule a URL of the task's repository breaks, when it is one (`host` and `parts`
    /// lower case).
    fn repo_rule(&self, host: &str, parts: &[&str], whole: &str) -> Option<WebRule> {
        let page = |rest: &[&str]| match rest.first() {
            Some(&("issues" | "pull" | "pulls")) => WebRule::IssueOrPrPage,
            _ => WebRule::Upstream,
        };
        let at = |i: usize| parts.get(i).copied().unwrap_or("");
        match host {
            "github.com" | "gitlab.com"
                if self.owner_matches(at(0)) && self.repo_matches(at(1)) =>
            {
                // GitLab puts `/-/` before its pages.
                let rest: Vec<&str> = parts[2..].iter().copied().filter(|p| *p != "-").collect();
                Some(page(&rest))
            }
            "api.github.com"
                if at(0) == "repos" && self.owner_matches(at(1)) && self.repo_matches(at(2)) =>
            {
                Some(page(&parts[3..]))
            }
            // SearchSWE refuses raw files of any fork of the repository.
            "raw.githubusercontent.com" if self.repo_matches(at(1)) => Some(WebRule::Upstream),
            "codeload.github.com" | "patch-diff.githubusercontent.com" => {
                let p: Vec<&str> = parts.iter().skip_while(|x| **x == "raw").copied().collect();
                (p.len() >= 2 && self.owner_matches(p[0]) && self.repo_matches(p[1]))
                    .then(|| page(&p[2..]))
            }
            _ => {
                // A mirror or proxy whose path embeds the repository (`sourcegraph.com/github.com/
                // o/r`, a fetch proxy); SearchSWE's patterns match anywhere in the URL.
                let at = whole.find("github.com/")?;
                let inner: Vec<&str> = whole[at + "github.com/".len()..]
                    .split(['/', '?'])
                    .filter(|p| !p.is_empty())
                    .collect();
                (inner.len() >= 2 && self.owner_matches(inner[0]) && self.repo_matches(inner[1]))
                    .then(|| page(&inner[2..]))
            }
        }
    }

    /// Whether a URL is a file of the project's own package on the index.
    fn package_file(&self, host: &str, parts: &[&str]) -> bool {
        if !matches!(
            host,
            "files.pythonhosted.org" | "pypi.org" | "pypi.python.org"
        ) {
            return false;
        }
        if parts.first() != Some(&"packages") {
            return false;
        }
        parts.last().is_some_and(|file| {
            let n = normalise_package(file);
            n.strip_prefix(&self.package)
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        })
    }

    /// Every web access of one shell command: its URLs ([`command_urls`]), `git clone` over
    /// SSH, GitHub CLI calls on the repository, and installs or downloads by package name.
    pub fn judge_command(&self, script: &str) -> Vec<WebUse> {
        let commands = split_commands(script);
        let mut out: Vec<WebUse> = command_urls(script, &commands)
            .iter()
            .map(|u| self.judge_url(u))
            .collect();
        out.extend(self.judge_words(&commands));
        out
    }

    /// The web access of commands that no URL shows: SSH remotes, the GitHub CLI, installs.
    pub(super) fn judge_words(&self, commands: &[Vec<String>]) -> Vec<WebUse> {
        let mut out = Vec::new();
        for words in commands {
            out.extend(self.ssh_remotes(words));
            out.extend(self.gh(words));
            out.extend(self.installs(words));
        }
        out
    }

    /// `git@github.com:o/r.git` and `ssh://git@github.com/o/r` remotes.
    fn ssh_remotes(&self, words: &[String]) -> Vec<WebUse> {
        words
            .iter()
            .filter_map(|w| {
                let lower = w.to_ascii_lowercase();
                let (_, rest) = lower.split_once("github.com:")?;
                let mut p = rest.split('/');
                let (o, r) = (p.next()?, p.next()?);
                (self.owner_matches(o) && self.repo_matches(r))
                    .then(|| WebUse::Hit(WebRule::Upstream, w.clone()))
            })
            .collect()
    }

    /// The GitHub CLI on the task's repository: `gh repo clone|view o/r`, `gh issue …`, `gh pr
    /// …` (in the repository's clone, or with `-R o/r`), `gh api repos/o/r/…`. The task's own PR
    /// is the PR checks' to class; any other issue or PR is a hit.
    fn gh(&self, words: &[String]) -> Vec<WebUse> {
        if words.first().map(|w| basename(w)) != Some("gh") {
            return Vec::new();
        }
        let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
        let names_repo = |w: &str| {
            let w = w
                .trim_start_matches("https://")
                .trim_start_matches("github.com/");
            let mut p = w.split('/');
            matches!((p.next(), p.next()), (Some(o), Some(r)) if self.owner_matches(o) && self.repo_matches(r))
        };
        let flag_repo = lower
            .windows(2)
            .find(|w| w[0] == "-r" || w[0] == "--repo")
            .map(|w| w[1].clone());
        let here = flag_repo.as_deref().is_none_or(names_repo);
        let what = words.join(" ");
        let hit = |rule| vec![WebUse::Hit(rule, what.clone())];
        match (
            lower.get(1).map(String::as_str),
            lower.get(2).map(String::as_str),
        ) {
            (Some("repo"), Some("clone" | "view" | "fork"))
                if lower.get(3).is_some_and(|w| names_repo(w)) =>
            {
                hit(WebRule::Upstream)
            }
            (Some("issue"), Some(_)) if here => hit(WebRule::IssueOrPrPage),
            // The task's own PR is the PR checks' to class; any other, or a list, is a page.
            (Some("pr"), Some(_))
                if here
                    && !self
                        .pr
                        .is_some_and(|n| lower.iter().skip(3).any(|w| *w == n.to_string())) =>
            {
                hit(WebRule::IssueOrPrPage)
            }
            (Some("api"), _) => lower
                .iter()
                .skip(2)
                .find(|w| w.trim_start_matches('/').starts_with("repos/"))
                .and_then(|p| {
                    let url = format!("https://api.github.com/{}", p.trim_start_matches('/'));
                    match self.judge_url(&url) {
                        WebUse::Hit(rule, _) => Some(WebUse::Hit(rule, what.clone())),
                        _ => None,
                    }
                })
                .into_iter()
                .collect(),
            _ => Vec::new(),
        }
    }

    /// `pip install|download`, `python -m pip …`, `uv pip …`, `uv add`, `poetry add`, `pdm add`
    /// of the project's own package by name. Other packages are network use, listed.
    fn installs(&self, words: &[String]) -> Vec<WebUse> {
        let Some(reqs) = requirements(words) else {
            return Vec::new();
        };
        reqs.into_iter()
            .filter_map(|req| {
                let (name, pin) = split_requirement(&req)?;
                if normalise_package(name) != self.package {
                    return Some(WebUse::Network(words.join(" ")));
                }
                let older = match (pin, &self.version) {
                    (Some(pin), Some(target)) => version_below(pin, target),
                    _ => false,
                };
                Some(if older {
                    WebUse::Network(words.join(" "))
                } else {
                    WebUse::Hit(WebRule::TargetPackage, words.join(" "))
                })
            })
            .collect()
    }
}

/// Options of the installers that take a separate argument.
const INSTALL_OPTS_WITH_ARG: [&str; 26] = [
    // conda and mamba
    "-n",
    "--name",
    "--channel",
    "-p",
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "-d",
    "--dest",
    "--prefix",
    "--root",
    "--python-version",
    "--platform",
    "--only-binary",
    "--no-binary",
    "--python",
    "--group",
    "--implementation",
];

/// The requirement words of an install or download command, or `None` for another command.
fn requirements(words: &[String]) -> Option<Vec<String>> {
    let prog = basename(words.first()?);
    let rest: &[String] = if prog.starts_with("pip") {
        &words[1..]
    } else if prog.starts_with("python") {
        let m = words.iter().position(|w| w == "-m")?;
        if !words.get(m + 1)?.starts_with("pip") {
            return None;
        }
        &words[m + 2..]
    } else if prog == "uv" && words.get(1).map(String::as_str) == Some("pip") {
        &words[2..]
    } else if matches!(
        prog,
        "uv" | "poetry" | "pdm" | "conda" | "mamba" | "micromamba"
    ) {
        &words[1..]
    } else {
        return None;
    };
    let sub = rest.first()?;
    if !matches!(sub.as_str(), "install" | "download" | "add") {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 1;
    while i < rest.len() {
        let w = &rest[i];
        if w.starts_with('-') {
            // `-e` takes a path or URL: URLs are judged as URLs, paths are local.
            i += if INSTALL_OPTS_WITH_ARG.contains(&w.as_str()) || w == "-e" || w == "--editable" {
                2
            } else {
                1
            };
            continue;
        }
        out.push(w.clone());
        i += 1;
    }
    Some(out)
}

/// A requirement's project name and its `==` pin, if any; `None` for local paths, URLs and
/// files (judged as URLs or not network at all).
fn split_requirement(req: &str) -> Option<(&str, Option<&str>)> {
    if req.contains('/') || req.starts_with('.') || req.contains("://") || req.ends_with(".whl") {
        return None;
    }
    let end = req
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(req.len());
    let name = &req[..end];
    if name.is_empty() {
        return None;
    }
    let rest = req[end..].trim_start_matches(|c| c != '=' && c != '<' && c != '>' && c != '~');
    let pin = rest
        .strip_prefix("==")
        .map(|v| v.split([',', ';', ' ']).next().unwrap_or(v).trim());
    Some((name, pin.filter(|v| !v.contains('*'))))
}

/// Whether version `a` is strictly below `b`, comparing their leading numeric parts
/// (`1.9.2` < `1.10`); a version without one is never below.
fn version_below(a: &str, b: &str) -> bool {
    let nums = |v: &str| -> Vec<u64> {
        v.trim_start_matches('v')
            .split('.')
            .map_while(|p| {
                let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().ok()
            })
            .collect()
    };
    let (x, y) = (nums(a), nums(b));
    !x.is_empty() && !y.is_empty() && x < y
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> WebTarget {
        let mut t = WebTarget::new(
            Some("Pylons"),
            "pyramid",
            Some("1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e"),
            Some("1.9"),
            "See https://github.com/Pylons/pyramid/issues/3000 and https://github.com/Pylons/pyramid/pull/2989.",
        );
        t.pr = Some(3054);
        t
    }

    fn rule(u: &WebUse) -> Option<WebRule> {
        match u {
            WebUse::Hit(r, _) => Some(*r),
            _ => None,
        }
    }

    #[test]
    fn urls_of_the_repository_by_rule() {
        let t = target();
        let cases: &[(&str, Option<WebRule>)] = &[
            (
                "https://github.com/Pylons/pyramid/issues/3001",
                Some(WebRule::IssueOrPrPage),
            ),
            (
                "https://GITHUB.com/pylons/pyramid/pull/3055/files",
                Some(WebRule::IssueOrPrPage),
            ),
            (
                "https://api.github.com/repos/Pylons/pyramid/issues/12",
                Some(WebRule::IssueOrPrPage),
            ),
            (
                "https://gitlab.com/pylons/pyramid/-/issues/4",
                Some(WebRule::IssueOrPrPage),
            ),
            ("https://github.com/Pylons/pyramid", Some(WebRule::Upstream)),
            (
                "https://github.com/Pylons/pyramid.git",
                Some(WebRule::Upstream),
            ),
            (
                "https://github.com/Pylons/pyramid/blob/main/src/pyramid/util.py",
                Some(WebRule::Upstream),
            ),
            (
                "https://github.com/Pylons/pyramid/archive/refs/tags/2.0.tar.gz",
                Some(WebRule::Upstream),
            ),
            (
                "https://raw.githubusercontent.com/someone/pyramid/main/x.py",
                Some(WebRule::Upstream),
            ),
            (
                "https://codeload.github.com/Pylons/pyramid/tar.gz/main",
                Some(WebRule::Upstream),
            ),
            (
                "https://sourcegraph.com/github.com/Pylons/pyramid/-/blob/x.py",
                Some(WebRule::Upstream),
            ),
            (
                "https://files.pythonhosted.org/packages/ab/cd/pyramid-2.0.2-py3-none-any.whl",
                Some(WebRule::TargetPackage),
            ),
            // The prompt links these.
            ("https://github.com/pylons/pyramid/issues/3000#x", None),
            ("https://github.com/Pylons/pyramid/pull/2989/", None),
            // Pinned at the base commit.
            (
                "https://raw.githubusercontent.com/Pylons/pyramid/1b2c3d4e/src/x.py",
                None,
            ),
            (
                "https://github.com/Pylons/pyramid/blob/1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e/x.py",
                None,
            ),
            // Near misses: other repositories, the project's page, docs.
            ("https://github.com/Pylons/pyramid_tm/issues/1", None),
            ("https://github.com/Pylons/webob/pull/3054", None),
            ("https://github.com/someone/pyramid/pull/3054", None),
            ("https://pypi.org/project/pyramid/", None),
            (
                "https://files.pythonhosted.org/packages/ab/cd/pyramid_tm-2.5.tar.gz",
                None,
            ),
            ("https://docs.pylonsproject.org/projects/pyramid/", None),
            ("https://pylons.github.io/pyramid/", None),
        ];
        for (url, want) in cases {
            assert_eq!(rule(&t.judge_url(url)), *want, "{url}");
        }
        assert_eq!(
            t.judge_url("https://github.com/Pylons/pyramid/pull/2989"),
            WebUse::RepoAllowed("https://github.com/Pylons/pyramid/pull/2989".into())
        );
        assert_eq!(
            t.judge_url("https://pypi.org/project/pyramid/"),
            WebUse::Network("https://pypi.org/project/pyramid/".into())
        );
    }

    #[test]
    fn commands_that_reach_the_repository_or_its_package() {
        let t = target();
        let rules =
            |cmd: &str| -> Vec<WebRule> { t.judge_command(cmd).iter().filter_map(rule).collect() };
        for (cmd, want) in [
            (
                "git clone git@github.com:Pylons/pyramid.git /tmp/p",
                vec![WebRule::Upstream],
            ),
            ("gh repo clone Pylons/pyramid", vec![WebRule::Upstream]),
            ("gh issue view 3001", vec![WebRule::IssueOrPrPage]),
            ("gh pr view 3055", vec![WebRule::IssueOrPrPage]),
            ("gh pr diff 3054", vec![]),
            ("gh issue view 3001 -R Pylons/webob", vec![]),
            (
                "gh api repos/Pylons/pyramid/pulls/3055",
                vec![WebRule::IssueOrPrPage],
            ),
            ("gh api repos/Pylons/pyramid/pulls/3054/files", vec![]),
            (
                "curl https://github.com/Pylons/pyramid/pull/3054.diff",
                vec![],
            ),
            ("pip install pyramid", vec![WebRule::TargetPackage]),
            (
                "pip3 download --no-deps -d /tmp pyramid==2.0",
                vec![WebRule::TargetPackage],
            ),
            (
                "python -m pip install -U 'pyramid[testing]>=1.9'",
                vec![WebRule::TargetPackage],
            ),
            ("uv pip install Pyramid", vec![WebRule::TargetPackage]),
            (
                "conda install -y -c conda-forge -n base pyramid=2.0",
                vec![WebRule::TargetPackage],
            ),
            (
                "pip install \"pyramid>=2\" --no-binary :all:",
                vec![WebRule::TargetPackage],
            ),
            // Older than the target, local, another package: listed only.
            ("pip install pyramid==1.8.3", vec![]),
            ("pip install -e .", vec![]),
            ("pip install -r requirements.txt pytest", vec![]),
            ("pip install pyramid_tm", vec![]),
            ("grep -rn 'pip install pyramid' docs", vec![]),
            // Evasions: quotes split the URL, a variable holds part of it, escapes hide it.
            (
                "curl \"https://github.com/Pylons/\"pyramid\"/issues/7\"",
                vec![WebRule::IssueOrPrPage],
            ),
            (
                "u=github.com/Pylons; curl https://$u/pyramid/blob/main/setup.py",
                vec![WebRule::Upstream],
            ),
            (
                "curl https://github.com/Pylons/%70yramid/issues/7",
                vec![WebRule::IssueOrPrPage],
            ),
        ] {
            assert_eq!(rules(cmd), want, "{cmd}");
        }
        assert!(
            t.judge_command("pip install pytest")
                .contains(&WebUse::Network("pip install pytest".into()))
        );
    }

    #[test]
    fn a_doc2repo_task_has_no_allowed_commit_and_any_owner() {
        let t = WebTarget::new(None, "tinydb", None, None, "");
        assert!(matches!(
            t.judge_url("https://github.com/msiemens/tinydb/blob/abcdef1/x.py"),
            WebUse::Hit(WebRule::Upstream, _)
        ));
        assert!(matches!(
            t.judge_command("pip download tinydb")[0],
            WebUse::Hit(WebRule::TargetPackage, _)
        ));
    }

    #[test]
    fn versions_compare_by_number() {
        assert!(version_below("1.9.2", "1.10"));
        assert!(!version_below("1.10", "1.9"));
        assert!(!version_below("2.0", "2.0"));
        assert!(!version_below("main", "2.0"));
        assert_eq!(
            normalise_package("Hyundai_Kia.Connect--api"),
            "hyundai-kia-connect-api"
        );
    }
}
