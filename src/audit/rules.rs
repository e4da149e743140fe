//! The two checks: SearchSWE's bash blocklist (forbidden git commands, and GitHub hosts when
//! search was off), and access to the task's own pull request (URLs, git and `gh` commands, web
//! search queries).

use super::program::basename;
use super::shell::split_commands;
use crate::text::urls;

/// git global options that take a separate argument.
const GIT_OPTS_WITH_ARG: [&str; 6] = [
    "-c",
    "-C",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--exec-path",
];

/// The forbidden commands `script` would run, by canonical name (`git log --all`, `git fetch`,
/// …). `search_allowed: false` adds `git clone` and any mention of `api.github.com` (also any
/// `gh` command), `github.io` or `githubusercontent`.
pub fn blocklist_hits(script: &str, search_allowed: bool) -> Vec<&'static str> {
    blocklist_hits_in(script, &split_commands(script), search_allowed)
}

/// [`blocklist_hits`] of `script` already read into `commands` (commands run from Python,
/// `subprocess.run(["git", "log", "--all"])`, among them).
pub(super) fn blocklist_hits_in(
    script: &str,
    commands: &[Vec<String>],
    search_allowed: bool,
) -> Vec<&'static str> {
    let mut hits = Vec::new();
    if !search_allowed {
        let lower = script.to_ascii_lowercase();
        let gh = commands.iter().any(|w| basename(&w[0]) == "gh");
        for (needle, name) in [
            ("api.github.com", "api.github.com"),
            ("github.io", "github.io"),
            ("githubusercontent", "githubusercontent"),
        ] {
            if (lower.contains(needle) || (gh && name == "api.github.com")) && !hits.contains(&name)
            {
                hits.push(name);
            }
        }
    }
    for words in commands {
        if basename(&words[0]) != "git" {
            continue;
        }
        let mut i = 1;
        while i < words.len() && words[i].starts_with('-') {
            let w = words[i].as_str();
            i += if GIT_OPTS_WITH_ARG.contains(&w) { 2 } else { 1 };
        }
        let Some(sub) = words.get(i) else { continue };
        let args = &words[i + 1..];
        let hit = match sub.as_str() {
            "log" if args.iter().any(|a| a == "--all") => Some("git log --all"),
            "verify-pack" => Some("git verify-pack"),
            "fsck" => Some("git fsck"),
            "cat-file" => Some("git cat-file"),
            "fetch" => Some("git fetch"),
            "pull" => Some("git pull"),
            "clone" if !search_allowed => Some("git clone"),
            _ => None,
        };
        if let Some(h) = hit
            && !hits.contains(&h)
        {
            hits.push(h);
        }
    }
    hits
}

/// PR access through git or the GitHub CLI: `git fetch origin pull/N/head` fetches the PR's
/// commits (tier A); `gh pr diff|checkout N` too; `gh pr view N` shows the conversation.
pub fn command_pr_access(script: &str, pr: &TargetPr) -> Option<UrlClass> {
    command_pr_access_in(&split_commands(script), pr)
}

/// [`command_pr_access`] of a script already read into `commands`.
pub(super) fn command_pr_access_in(commands: &[Vec<String>], pr: &TargetPr) -> Option<UrlClass> {
    let n = pr.number.to_string();
    let mut best: Option<UrlClass> = None;
    let mut note = |c: UrlClass| {
        if best != Some(UrlClass::PrArtifact) {
            best = Some(c);
        }
    };
    for words in commands {
        let prog = basename(&words[0]);
        if prog == "git" && words.iter().any(|w| w == "fetch" || w == "pull") {
            let refs = [
                format!("pull/{n}/head"),
                format!("pull/{n}/merge"),
                format!("refs/pull/{n}/head"),
                format!("refs/pull/{n}/merge"),
            ];
            if words
                .iter()
                .any(|w| refs.iter().any(|r| w.split(':').next() == Some(r.as_str())))
            {
                note(UrlClass::PrArtifact);
            }
        }
        if prog == "gh"
            && words.get(1).map(String::as_str) == Some("pr")
            && words
                .iter()
                .skip(3)
                .chain(words.get(2))
                .any(|w| *w == n || w.ends_with(&format!("/pull/{n}")))
        {
            match words.get(2).map(String::as_str) {
                Some("diff" | "checkout" | "co") => note(UrlClass::PrArtifact),
                Some("view") => note(UrlClass::PrConversation),
                _ => {}
            }
        }
        if prog == "gh"
            && words.get(1).map(String::as_str) == Some("api")
            && let Some(path) = words.iter().skip(2).find(|w| w.contains("/pulls/"))
        {
            let c = classify_url(
                &format!("https://api.github.com/{}", path.trim_start_matches('/')),
                pr,
            );
            if c == UrlClass::PrArtifact {
                note(c);
            }
        }
    }
    best
}

/// Where a URL points, relative to the task's pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlClass {
    /// The PR's diff or patch, its files or commits views, the REST endpoints, the patch mirror.
    PrArtifact,
    /// The PR's conversation page.
    PrConversation,
    /// Another page of the same repository (listed, not flagged).
    SameRepo,
    /// Anything else.
    Other,
}

/// The pull request an issue task is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetPr {
    /// The repository's owner: the dataset's spelling when known, else the instance id's (URLs are
    /// matched case-insensitively either way).
    pub owner: String,
    /// The repository's name.
    pub repo: String,
    /// The pull request's number.
    pub number: u64,
}

impl TargetPr {
    /// The PR's conversation page on github.com.
    pub fn url(&self) -> String {
        format!(
            "https://github.com/{}/{}/pull/{}",
            self.owner, self.repo, self.number
        )
    }
}

/// The URLs a command reaches: those in its text, and those its words hold once the shell has
/// joined quotes and expanded variables (`curl "https://github.com/o/"r"/pull/1.diff"`,
/// `u=github.com/o; curl https://$u/r`), each once.
pub(super) fn command_urls(script: &str, commands: &[Vec<String>]) -> Vec<String> {
    let mut out = urls(script);
    for u in commands.iter().flatten().flat_map(|w| urls(w)) {
        if !out.contains(&u) {
            out.push(u);
        }
    }
    out
}

/// Classifies a URL against the task's PR (case-insensitively).
pub fn classify_url(url: &str, pr: &TargetPr) -> UrlClass {
    let lower = url.to_ascii_lowercase();
    let without_scheme = lower.split("://").last().unwrap_or(&lower);
    let without_www = without_scheme.trim_start_matches("www.");
    let (host, path) = without_www.split_once('/').unwrap_or((without_www, ""));
    let path = path.split(['#', '?']).next().unwrap_or("");
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let (o, r, n) = (
        pr.owner.to_ascii_lowercase(),
        pr.repo.to_ascii_lowercase(),
        pr.number.to_string(),
    );
    let same_repo = parts.len() >= 2 && parts[0] == o && parts[1].trim_end_matches(".git") == r;
    match host {
        "github.com" if same_repo => {
            // GitHub redirects issues/N to pull/N when N is a pull request.
            if parts.len() == 4 && parts[2] == "issues" && parts[3] == n {
                return UrlClass::PrConversation;
            }
            if parts.len() >= 4 && parts[2] == "pull" {
                let num = parts[3];
                if num == format!("{n}.patch") || num == format!("{n}.diff") {
                    return UrlClass::PrArtifact;
                }
                if num == n {
                    return match parts.get(4) {
                        None => UrlClass::PrConversation,
                        Some(&("files" | "commits" | "commit")) => UrlClass::PrArtifact,
                        Some(_) => UrlClass::PrConversation,
                    };
                }
            }
            UrlClass::SameRepo
        }
        "patch-diff.githubusercontent.com" => {
            // raw/<o>/<r>/pull/<n>.patch
            let p: Vec<&str> = parts.iter().skip_while(|x| **x == "raw").copied().collect();
            if p.len() >= 4
                && p[0] == o
                && p[1] == r
                && p[2] == "pull"
                && (p[3] == format!("{n}.patch") || p[3] == format!("{n}.diff"))
            {
                UrlClass::PrArtifact
            } else if p.len() >= 2 && p[0] == o && p[1] == r {
                UrlClass::SameRepo
            } else {
                UrlClass::Other
            }
        }
        "api.github.com" => {
            if parts.len() >= 3 && parts[0] == "repos" && parts[1] == o && parts[2] == r {
                if parts.len() >= 5 && parts[3] == "pulls" && parts[4] == n {
                    UrlClass::PrArtifact
                } else {
                    UrlClass::SameRepo
                }
            } else {
                UrlClass::Other
            }
        }
        "raw.githubusercontent.com" | "codeload.github.com"
            if parts.len() >= 2 && parts[0] == o && parts[1] == r =>
        {
            UrlClass::SameRepo
        }
        _ => UrlClass::Other,
    }
}

/// Whether a web search query names the PR: its number (as `N`, `#N`, `pull/N`) together with
/// the repository, or with the words pull/PR.
pub fn query_names_pr(query: &str, pr: &TargetPr) -> bool {
    let q = query.to_ascii_lowercase();
    let n = pr.number.to_string();
    let has_number = q
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| w == n || w == format!("pr{n}"));
    let mentions = q.contains(&pr.repo.to_ascii_lowercase())
        || q.contains("pull")
        || q.contains(" pr")
        || q.starts_with("pr");
    has_number && mentions
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pr() -> TargetPr {
        TargetPr {
            owner: "pylons".into(),
            repo: "pyramid".into(),
            number: 3054,
        }
    }

    #[test]
    fn blocklist_evasions_are_caught() {
        for (cmd, hit) in [
            ("git  log --all --oneline", "git log --all"),
            (
                "git -c core.pager=cat -C /repo log --oneline --all",
                "git log --all",
            ),
            ("cd /repo && git fetch origin", "git fetch"),
            ("ls; git pull", "git pull"),
            ("echo hi\ngit fetch origin", "git fetch"),
            ("bash -lc 'git log --all --oneline'", "git log --all"),
            ("sh -c \"git fsck --lost-found\"", "git fsck"),
            ("g''it fetch", "git fetch"),
            ("$(echo git) fetch", "git fetch"),
            ("/usr/bin/git verify-pack -v x.idx", "git verify-pack"),
            ("git cat-file -p abc", "git cat-file"),
        ] {
            assert_eq!(blocklist_hits(cmd, true), vec![hit], "{cmd}");
        }
        for clean in [
            "git log --oneline -5",
            "git status",
            "echo git fetch",
            "Git Fetch",
            "grep 'git fetch' notes.txt",
            "git clone x",
        ] {
            assert!(blocklist_hits(clean, true).is_empty(), "{clean}");
        }
        assert_eq!(
            blocklist_hits("git clone https://x", false),
            vec!["git clone"]
        );
    }

    #[test]
    fn pr_urls_by_tier() {
        let p = pr();
        for (u, c) in [
            (
                "https://github.com/Pylons/pyramid/pull/3054.diff",
                UrlClass::PrArtifact,
            ),
            (
                "github.com/pylons/pyramid/pull/3054.patch",
                UrlClass::PrArtifact,
            ),
            (
                "https://github.com/Pylons/pyramid/pull/3054/files",
                UrlClass::PrArtifact,
            ),
            (
                "https://github.com/Pylons/pyramid/pull/3054/commits/abc",
                UrlClass::PrArtifact,
            ),
            (
                "https://api.github.com/repos/pylons/pyramid/pulls/3054/files",
                UrlClass::PrArtifact,
            ),
            (
                "https://patch-diff.githubusercontent.com/raw/Pylons/pyramid/pull/3054.patch",
                UrlClass::PrArtifact,
            ),
            (
                "https://github.com/Pylons/pyramid/pull/3054",
                UrlClass::PrConversation,
            ),
            (
                "https://github.com/Pylons/pyramid/pull/3054#issuecomment-1",
                UrlClass::PrConversation,
            ),
            (
                "https://github.com/Pylons/pyramid/pull/3055",
                UrlClass::SameRepo,
            ),
            (
                "https://github.com/Pylons/pyramid/issues/3000",
                UrlClass::SameRepo,
            ),
            (
                "https://github.com/Pylons/pyramid-extra/pull/3054.diff",
                UrlClass::Other,
            ),
            ("https://pypi.org/project/pyramid/", UrlClass::Other),
        ] {
            assert_eq!(classify_url(u, &p), c, "{u}");
        }
        assert_eq!(
            urls("curl -sL 'https://github.com/a/b/pull/1.diff'|head"),
            ["https://github.com/a/b/pull/1.diff"]
        );
        assert!(query_names_pr(
            "site:github.com Pylons/pyramid pull 3054",
            &p
        ));
        assert!(!query_names_pr("pyramid renderer docs", &p));
    }
}
