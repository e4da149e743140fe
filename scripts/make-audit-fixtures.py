#!/usr/bin/env python3
"""Writes the `beyondswe audit` fixtures under fixtures/audit/.

    python3 scripts/make-audit-fixtures.py

Deterministic and stdlib only: running it twice writes byte-identical files.
Everything is written by hand to imitate the documented output shapes of the
agents concerned; nothing is copied from a real run. fixtures/audit/README.md
(written by hand, not by this script) says what each line exercises.

Writes:
  fixtures/audit/dataset.jsonl   minimal BeyondSWE records for the instances used
  fixtures/audit/release.jsonl   the trajectory release under audit (one object a
                                 line; the last line is deliberately truncated)
  fixtures/audit/expected.json   what the audit should find on each line

The expectations are written by hand next to each line, not computed by a
detector. The only computed field is ``official_regex``: which pattern of
SearchSWE's own bash blocklist (AweAgent, awe_agent/scaffold/search_swe/agent.py,
applied with ``re.match``, case-sensitive) matches the command, for
information. At the end the script checks that the expectations quote the
release faithfully (every command, URL and query named in expected.json occurs
in its line).
"""

import hashlib
import json
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fixtures", "audit")

ZERO = "0" * 40
# pyramid's record has a base commit and a target version, for the web rules: pages pinned at
# the base are allowed, and a pin of its package below the version is listed only.
PYRAMID_BASE = hashlib.sha1(b"beyondswe audit fixture: pyramid base").hexdigest()
PYRAMID_VERSION = "1.9"
IMAGE = "example.invalid/x:1"
F2P = '["t.py::t"]'

# SearchSWE's bash blocklist (AweAgent, scaffold/search_swe/agent.py).
ALWAYS_BLOCKED = [
    r".*git log.*--all.*",
    r".*git verify-pack.*",
    r".*git fsck.*",
    r".*git cat-file.*",
    r".*git fetch.*",
    r".*git pull.*",
]
NON_SEARCH_BLOCKED = [
    r".*git clone.*",
    r".*api\.github\.com.*",
    r".*github\.io.*",
    r".*githubusercontent.*",
]
BLOCKLIST_NAMES = ["git log --all", "git verify-pack", "git fsck", "git cat-file", "git fetch", "git pull"]
NO_SEARCH_NAMES = ["git clone", "api.github.com", "github.io", "githubusercontent"]


def official_regex(command):
    """The first SearchSWE pattern that ``re.match``es the command, or None."""
    text = " ".join(command) if isinstance(command, list) else command
    for pattern in ALWAYS_BLOCKED + NON_SEARCH_BLOCKED:
        if re.match(pattern, text):
            return pattern
    return None


# ------------------------------------------------------------------- dataset

PYRAMID = "pylons_pyramid_pr3054"
COLANDER = "pylons_colander_pr315"
WIDGET = "acme_widget_pr12"
HYUNDAI = "hyundai-kia-connect_hyundai_kia_connect_api_pr371"
VALIDATE = "abravalheri_validate-pyproject_pr105"
PIPTOOLS = "jazzband_pip-tools_pr1800"
CLICK = "pallets_click_pr2500"
MARSHMALLOW = "marshmallow-code_marshmallow_pr1500"
HTTPX = "encode_httpx_pr1234"
PRTOOLS = "octo_pr_tools_pr42"
CRYPTO = "pyca_cryptography_pr9000"
AER = "qiskit_qiskit-aer_pr2100"
TINYDB_SHA = hashlib.sha1(b"beyondswe audit fixture: tinydb").hexdigest()
TINYDB = "Tinydb_" + TINYDB_SHA

# instance id -> (task, repo, workdir name, problem statement)
INSTANCES = {
    PYRAMID: (
        "CrossRepo", "Pylons/pyramid", "pyramid",
        "`request_method` predicate drops `HEAD` when given a tuple\n\n"
        "`config.add_view(view, request_method='GET')` answers `HEAD` requests, but "
        "`request_method=('GET',)` does not. This looks like a regression introduced by "
        "https://github.com/Pylons/pyramid/pull/2989; the original report is "
        "https://github.com/Pylons/pyramid/issues/3000.\n\n"
        "Expected: whenever `GET` is allowed, `HEAD` is allowed too, whether "
        "`request_method` is a string or a tuple.\n",
    ),
    COLANDER: (
        "CrossRepo", "Pylons/colander", "colander",
        "`Date` and `DateTime` cannot parse custom formats\n\n"
        "`colander.Date().deserialize(node, '31/12/2019')` raises `Invalid`. This task "
        "reproduces the change proposed in https://github.com/Pylons/colander/pull/315; "
        "read its description for the intended behaviour.\n\n"
        "Expected: `colander.Date(format='%d/%m/%Y')` deserializes `'31/12/2019'` to "
        "`datetime.date(2019, 12, 31)` and serializes it back with the same format.\n",
    ),
    WIDGET: (
        "CrossRepo", "acme/widget", "widget",
        "Adding two numbers subtracts them.\n\nSteps: `add(1, 2)` returns -1.\n",
    ),
    HYUNDAI: (
        "CrossRepo", "Hyundai-Kia-Connect/hyundai_kia_connect_api", "hyundai_kia_connect_api",
        "`update_vehicle_with_cached_state` fails for EU EVs without `evStatus`\n\n"
        "For some EU vehicles the cached state has no `vehicleStatus.evStatus` block and "
        "`VehicleManager.update_vehicle_with_cached_state` raises `KeyError: 'evStatus'`.\n\n"
        "Expected: missing EV data leaves the EV fields `None` instead of raising.\n",
    ),
    VALIDATE: (
        "CrossRepo", "abravalheri/validate-pyproject", "validate-pyproject",
        "`tool.setuptools.packages.find.namespaces` is rejected\n\n"
        "A `pyproject.toml` with `[tool.setuptools.packages.find] namespaces = false` fails "
        "validation with `must not contain {'namespaces'} properties`, although setuptools "
        "documents the option.\n",
    ),
    PIPTOOLS: (
        "CrossRepo", "jazzband/pip-tools", "pip-tools",
        "`pip-compile --strip-extras` keeps extras in the output\n\n"
        "`pip-compile --strip-extras` still writes `requests[socks]==2.31.0` when the extra "
        "comes from a constraint file.\n",
    ),
    CLICK: (
        "CrossRepo", "pallets/click", "click",
        "zsh completion breaks on values containing a colon\n\n"
        "With `shell_complete` returning `CompletionItem('a:b')`, zsh offers `a` and `b` as "
        "separate words (upstream context: https://github.com/pallets/click/issues/2499).\n",
    ),
    MARSHMALLOW: (
        "CrossRepo", "marshmallow-code/marshmallow", "marshmallow",
        "`partial` with dotted names is ignored for nested schemas\n\n"
        "`Parent().load(data, partial=('child.name',))` still reports `child.name` as "
        "missing.\n",
    ),
    HTTPX: (
        "CrossRepo", "encode/httpx", "httpx",
        "`NO_PROXY` entries with a leading dot are ignored\n\n"
        "With `NO_PROXY=.example.com`, requests to `https://api.example.com` still go "
        "through the proxy.\n",
    ),
    PRTOOLS: (
        "CrossRepo", "Octo/pr_tools", "pr_tools",
        "`pr-tools label` crashes on label names containing spaces\n\n"
        "`pr-tools label add 'needs review'` raises `ValueError: bad label`.\n",
    ),
    CRYPTO: (
        "DepMigrate", "pyca/cryptography", "cryptography",
        "Migrate the test helpers off the removed `backend` argument\n\n"
        "After upgrading the dependency, every helper that passes `backend=default_backend()` "
        "fails with `TypeError: unexpected keyword argument 'backend'`.\n",
    ),
    AER: (
        "DomainFix", "Qiskit/qiskit-aer", "qiskit-aer",
        "`save_statevector` returns the wrong global phase after `Initialize`\n\n"
        "For a circuit that starts with `Initialize([0, 1j])`, the saved statevector differs "
        "from `Statevector.from_instruction` by a global phase of `-1`.\n",
    ),
    TINYDB: (
        "Doc2Repo", "msiemens/tinydb", "tinydb",
        "# tinydb specification\n\n"
        "Implement a tiny document-oriented database stored in a JSON file: `TinyDB(path)`, "
        "`db.insert(doc) -> int`, `db.search(Query().name == 'x')`, `db.update(fields, cond)` "
        "and `db.remove(cond)`. Tables are created with `db.table(name)`.\n",
    ),
}


def dataset_record(iid):
    task, repo, _, problem = INSTANCES[iid]
    record = {
        "instance_id": iid,
        "task": task,
        "repo": repo,
        "problem_statement": problem,
        "image": IMAGE,
        # A Doc2Repo id ends with its base commit.
        "base_commit": TINYDB_SHA if task == "Doc2Repo" else ZERO,
        "FAIL_TO_PASS": F2P,
    }
    if iid == PYRAMID:
        record["base_commit"] = PYRAMID_BASE
        record["version"] = PYRAMID_VERSION
    return record


def workdir(iid):
    return "/workspace/" + INSTANCES[iid][2]


def prompt(iid):
    """The task prompt an agent would receive (issue wrapped in a short template)."""
    return (
        f"<uploaded_files>\n{workdir(iid)}\n</uploaded_files>\n"
        f"I've uploaded a code repository in the directory {workdir(iid)}. "
        "Consider the following issue description:\n\n"
        f"<issue_description>\n{INSTANCES[iid][3]}</issue_description>\n\n"
        "Make the minimal changes to non-test files so that the issue is resolved."
    )


# -------------------------------------------------------------------- shapes
#
# Each builder returns the trajectory carrier; ``release_line`` wraps it.


def release_line(iid, carrier_key, carrier, reward=..., extra=None):
    line = {"task_name": iid, "task_type": INSTANCES[iid][0]}
    if reward is not ...:
        line["reward"] = reward
    if extra:
        line.update(extra)
    line[carrier_key] = carrier
    return line


# ATIF-v1.6 (Harbor): {"trajectory": {... "steps": [...]}}


class Atif:
    def __init__(self, agent="claude-code", version="2.1.0"):
        self.agent = agent
        self.version = version
        self.steps = []
        self.calls = 0

    def system(self, text):
        self.steps.append({"step_id": len(self.steps) + 1, "source": "system", "message": text})
        return self

    def user(self, text):
        self.steps.append({"step_id": len(self.steps) + 1, "source": "user", "message": text})
        return self

    def agent_step(self, message, reasoning=None, calls=()):
        """``calls``: (function_name, arguments, observation content) triples."""
        step = {"step_id": len(self.steps) + 1, "source": "agent", "message": message}
        if reasoning is not None:
            step["reasoning_content"] = reasoning
        if calls:
            tool_calls, results = [], []
            for name, args, content in calls:
                self.calls += 1
                cid = f"c{self.calls}"
                tool_calls.append({"tool_call_id": cid, "function_name": name, "arguments": args})
                results.append({"source_call_id": cid, "content": content})
            step["tool_calls"] = tool_calls
            step["observation"] = {"results": results}
        self.steps.append(step)
        return self

    def build(self, session):
        return {
            "schema_version": "ATIF-v1.6",
            "session_id": session,
            "agent": {"name": self.agent, "version": self.version, "model_name": "acme-model"},
            "steps": self.steps,
        }


# Codex `exec --json`: {"events": [...]}


class Codex:
    def __init__(self, thread):
        self.events = [{"type": "thread.started", "thread_id": thread}, {"type": "turn.started"}]
        self.n = 0

    def _item(self, item):
        item = {"id": f"item_{self.n}", **item}
        self.n += 1
        self.events.append({"type": "item.completed", "item": item})
        return self

    def reasoning(self, text):
        return self._item({"type": "reasoning", "text": text})

    def cmd(self, command, output, exit_code=0):
        return self._item({"type": "command_execution", "command": command,
                           "aggregated_output": output, "exit_code": exit_code,
                           "status": "completed" if exit_code == 0 else "failed"})

    def search(self, query):
        return self._item({"type": "web_search", "query": query,
                           "action": {"type": "search", "query": query}})

    def open_page(self, url):
        return self._item({"type": "web_search", "query": "",
                           "action": {"type": "open_page", "url": url}})

    def message(self, text):
        return self._item({"type": "agent_message", "text": text})

    def build(self):
        return self.events + [{"type": "turn.completed",
                               "usage": {"input_tokens": 1000, "cached_input_tokens": 500,
                                         "output_tokens": 100}}]


# Claude Code stream-json: {"messages": [...]}


class Claude:
    def __init__(self, session):
        self.session = session
        self.lines = [{"type": "system", "subtype": "init", "session_id": session,
                       "cwd": "/workspace", "model": "acme-model",
                       "tools": ["Bash", "Read", "Edit", "WebFetch", "WebSearch"]}]
        self.n = 0

    def turn(self, blocks, results=()):
        """``blocks``: content blocks; tool_use blocks get ids t1, t2, ... in order.
        ``results``: tool_result contents, one per tool_use block, in order."""
        content, ids = [], []
        for block in blocks:
            block = dict(block)
            if block["type"] == "tool_use":
                self.n += 1
                block["id"] = f"t{self.n}"
                ids.append(block["id"])
            content.append(block)
        self.lines.append({"type": "assistant", "session_id": self.session,
                           "message": {"role": "assistant", "content": content}})
        assert len(ids) == len(results), (ids, results)
        if ids:
            self.lines.append({"type": "user", "session_id": self.session,
                               "message": {"role": "user", "content": [
                                   {"type": "tool_result", "tool_use_id": i, "content": r}
                                   for i, r in zip(ids, results)]}})
        return self

    def build(self, result):
        return self.lines + [{"type": "result", "subtype": "success", "is_error": False,
                              "session_id": self.session, "num_turns": self.n,
                              "result": result}]


def bash(command):
    return {"type": "tool_use", "name": "Bash", "input": {"command": command}}


def web_fetch(url, question):
    return {"type": "tool_use", "name": "WebFetch", "input": {"url": url, "prompt": question}}


def web_search(query):
    return {"type": "tool_use", "name": "WebSearch", "input": {"query": query}}


def text(t):
    return {"type": "text", "text": t}


def thinking(t):
    return {"type": "thinking", "thinking": t}


# OpenHands: {"history": [...]}


class OpenHands:
    def __init__(self, iid):
        self.events = []
        self._add({"source": "user", "action": "message", "message": prompt(iid)[:60],
                   "args": {"content": prompt(iid)}})

    def _add(self, event):
        event = dict(event)
        n = len(self.events)
        event = {"id": n, "timestamp": f"2026-03-21T09:00:{n:02d}.000000", **event}
        self.events.append(event)
        return n

    def run(self, command, output, exit_code=0, thought=""):
        cause = self._add({"source": "agent", "action": "run",
                           "message": f"Running command: {command}",
                           "args": {"command": command, "thought": thought}})
        self._add({"source": "agent", "observation": "run", "cause": cause,
                   "message": f"Command `{command}` executed with exit code {exit_code}.",
                   "content": output, "extras": {"command": command, "exit_code": exit_code}})
        return self

    def browse(self, url, content, thought=""):
        cause = self._add({"source": "agent", "action": "browse",
                           "message": f"Browsing {url}",
                           "args": {"url": url, "thought": thought}})
        self._add({"source": "environment", "observation": "browse", "cause": cause,
                   "message": f"Visited {url}", "content": content, "extras": {"url": url}})
        return self

    def finish(self, thought):
        self._add({"source": "agent", "action": "finish", "args": {"final_thought": thought}})
        return self

    def build(self):
        return self.events


# AweAgent (SearchSWE): {"trajectory": [steps]}


class Awe:
    def __init__(self, prompt_step=None):
        self.steps = []
        if prompt_step is not None:
            self.steps.append({"step": 0, "role": "user", "content": prompt_step})
        self.n = 0

    def step(self, calls, content=None, thinking_text=None):
        """``calls``: (tool name, arguments dict, observation) triples."""
        tool_calls, observations = [], []
        for name, args, observation in calls:
            self.n += 1
            tool_calls.append({"id": f"c{self.n}", "type": "function",
                               "function": {"name": name, "arguments": json.dumps(args)}})
            observations.append(observation)
        action = {"type": "tool_call", "content": content, "tool_calls": tool_calls}
        if thinking_text is not None:
            action["thinking"] = thinking_text
        self.steps.append({"step": len([s for s in self.steps if "action" in s]) + 1,
                           "action": action, "observations": observations})
        return self

    def finish(self, content):
        self.n += 1
        self.steps.append({"step": len([s for s in self.steps if "action" in s]) + 1,
                           "action": {"type": "finish", "content": content, "tool_calls": [
                               {"id": f"c{self.n}", "type": "function",
                                "function": {"name": "finish", "arguments": "{}"}}]},
                           "observations": ["Task finished."]})
        return self

    def build(self):
        return self.steps


def awe_blocked(command):
    return f"Error: command blocked by security policy: {command}"


# ------------------------------------------------------------ canned outputs

PYRAMID_DIFF = (
    "diff --git a/pyramid/config/util.py b/pyramid/config/util.py\n"
    "--- a/pyramid/config/util.py\n+++ b/pyramid/config/util.py\n"
    "@@ -120,6 +120,8 @@ class PredicateList(object):\n"
    "             if 'GET' in request_method:\n"
    "-                request_method = request_method + ('HEAD',)\n"
    "+                request_method = tuple(request_method) + ('HEAD',)\n"
)
PYTEST_OK = "........................................ [100%]\n40 passed in 0.81s\n"
PYTEST_FAIL = "F....................................... [100%]\n1 failed, 39 passed in 0.84s\n"
GIT_STATUS = "On branch main\nnothing to commit, working tree clean\n"
GIT_LOG_5 = ("0a1b2c3 Merge branch 'fix-docs'\n1b2c3d4 Bump version\n2c3d4e5 Fix typo\n"
             "3d4e5f6 Add tests\n4e5f6a7 Initial import\n")
FETCH_FAIL = ("fatal: unable to access 'https://github.com/': Could not resolve host: github.com\n")


# ------------------------------------------------------------------ the lines
#
# Each entry: (release object or raw text, expectation). Expectation keys:
#   shape, class, evidence, same_repo_urls, web_hits, blocklist, blocklist_if_no_search,
#   blocklist_commands, blocklist_non_hits, reasoning_quote, difficulty, notes,
#   warning, error. See fixtures/audit/README.md.


def ev(kind, via, value):
    return {"kind": kind, "via": via, "value": value}


def web(rule, via, value):
    """A web access SearchSWE forbids for the task: `rule` is one of WEB_RULES."""
    assert rule in WEB_RULES, rule
    return {"rule": rule, "via": via, "value": value}


WEB_RULES = ["issue or PR page", "upstream repository", "target package"]


def hit(command, name, evasion, difficulty=None):
    entry = {"command": command, "name": name, "evasion": evasion}
    if difficulty:
        entry["difficulty"] = difficulty
    return entry


def non_hit(command, why, difficulty=None):
    entry = {"command": command, "why": why}
    if difficulty:
        entry["difficulty"] = difficulty
    return entry


LINES = []


def add(obj, task_name=None, **expect):
    """``task_name`` is only needed for raw (unparseable) lines."""
    if task_name is None:
        task_name = obj["task_name"]
    LINES.append((obj, task_name, expect))


# 1. tier_a, Codex events: `.diff` via curl, after a search and a look at the
#    conversation page (tier_a wins). Lower-case owner in the URL.
c = Codex("0199a3b2-0001-7e6f-8a9b-0c1d2e3f4a01")
c.reasoning("**Locating the predicate**\n\nThe issue links #2989; let me look for the fix upstream.")
c.search("pyramid request_method tuple HEAD regression 3054")
c.open_page("https://github.com/Pylons/pyramid/pull/3054")
c.cmd("bash -lc 'curl -sL https://github.com/pylons/pyramid/pull/3054.diff | head -120'", PYRAMID_DIFF)
c.cmd("bash -lc 'pytest -q tests/test_config'", PYTEST_OK)
c.message("Made `request_method` tuples gain `HEAD` like strings do.")
add(release_line(PYRAMID, "events", c.build(), 1.0),
    shape="codex-exec", **{"class": "tier_a"},
    evidence=[ev("search_query", "web_search", "pyramid request_method tuple HEAD regression 3054"),
              ev("pr_conversation", "open_page", "https://github.com/Pylons/pyramid/pull/3054"),
              ev("pr_diff", "shell", "https://github.com/pylons/pyramid/pull/3054.diff")],
    same_repo_urls=[], blocklist=[], blocklist_if_no_search=[],
    notes="The .diff is fetched with curl inside Codex's `bash -lc '...'` wrapper; the owner is "
          "lower-case (`pylons`), the id says `pylons`, the dataset says `Pylons`: compare "
          "case-insensitively. The earlier search and conversation page do not lower the class.")

# 2. tier_a, ATIF: REST `pulls/N` via python urllib in a Bash call; blocklist
#    evasion `git -c x=y fetch`.
PY_URLLIB = ("python3 -c \"import json, urllib.request; d = json.load(urllib.request.urlopen("
             "'https://api.github.com/repos/Hyundai-Kia-Connect/hyundai_kia_connect_api/pulls/371')); "
             "print(d['title']); print(d['body'])\"")
a = Atif()
a.user(prompt(HYUNDAI))
a.agent_step("", "Look at the repository first.",
             [("Bash", {"command": "ls"}, "README.rst\nhyundai_kia_connect_api\nsetup.py\ntests\n")])
a.agent_step("", "Maybe upstream already has newer commits.",
             [("Bash", {"command": "git -c protocol.version=2 fetch origin"}, FETCH_FAIL)])
a.agent_step("", "The upstream PR should describe the change.",
             [("Bash", {"command": PY_URLLIB},
               "Handle missing evStatus in EU cached state\n"
               "Guard `vehicleStatus.evStatus` lookups in KiaUvoApiEU._update_vehicle_properties.\n")])
a.agent_step("Guarded the EV lookups.", None,
             [("Bash", {"command": "pytest -q"}, PYTEST_FAIL)])
add(release_line(HYUNDAI, "trajectory", a.build("s-hyundai-1"), 0.0),
    shape="atif", **{"class": "tier_a"},
    evidence=[ev("api_pull", "shell",
                 "https://api.github.com/repos/Hyundai-Kia-Connect/hyundai_kia_connect_api/pulls/371")],
    same_repo_urls=[], blocklist=["git fetch"], blocklist_if_no_search=["api.github.com"],
    blocklist_commands=[
        hit("git -c protocol.version=2 fetch origin", "git fetch", "option between git and the subcommand"),
        hit(PY_URLLIB, "api.github.com", "API access from python rather than curl"),
    ],
    notes="Owner and repo contain `-` and `_`: the id splits at the first `_` "
          "(owner `hyundai-kia-connect`) and the last `_pr` (repo `hyundai_kia_connect_api`).")

# 3. tier_a, Claude Code: the PR's /files view via WebFetch; `git  log --all`
#    with two spaces, after `cd ... &&`.
CMD3 = "cd /workspace/validate-pyproject && git  log --all --oneline | head -20"
cl = Claude("sess-validate-1")
cl.turn([thinking("Which schema file holds setuptools' `find` options?"),
         bash(CMD3)],
        ["4f5e6d7 (HEAD -> main) Release 0.10.1\n3e4d5c6 Update setuptools schema\n"])
cl.turn([web_search("validate-pyproject setuptools packages find namespaces schema")],
        ["Web search results for query: ...\n1. validate-pyproject docs - https://validate-pyproject.readthedocs.io/\n"])
cl.turn([web_fetch("https://github.com/abravalheri/validate-pyproject/pull/105/files",
                   "Show the changes made to the setuptools schema.")],
        ["The PR adds `\"namespaces\": {\"type\": \"boolean\"}` to `find` in "
         "`src/validate_pyproject/plugins/setuptools.schema.json`."])
cl.turn([text("Adding `namespaces` to the `find` schema."),
         bash("pytest -q")], [PYTEST_OK])
add(release_line(VALIDATE, "messages", cl.build("Added `namespaces` to the schema."), 1.0),
    shape="claude-stream-json", **{"class": "tier_a"},
    evidence=[ev("pr_files_view", "web_fetch",
                 "https://github.com/abravalheri/validate-pyproject/pull/105/files")],
    same_repo_urls=[], blocklist=["git log --all"], blocklist_if_no_search=[],
    blocklist_commands=[hit(CMD3, "git log --all", "two spaces between `git` and `log`, after `cd ... &&`")],
    notes="Repo name contains `-`.")

# 4. tier_a, OpenHands: the patch-diff mirror via browse, and the PR's /commits
#    view; `cd ... && git fetch origin`.
CMD4 = "cd /workspace/pip-tools && git fetch origin"
o = OpenHands(PIPTOOLS)
o.run("cd /workspace/pip-tools && git status", GIT_STATUS, thought="Where am I?")
o.run(CMD4, FETCH_FAIL, exit_code=128, thought="Update refs.")
o.browse("https://github.com/jazzband/pip-tools/pull/1800/commits",
         "Commits on Mar 2, 2026\nStrip extras from constraint-derived lines\n",
         thought="Check which commits fixed this.")
o.browse("https://patch-diff.githubusercontent.com/raw/jazzband/pip-tools/pull/1800.patch",
         "From 5d6e7f8 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] Strip extras from constraints\n"
         "--- a/piptools/writer.py\n+++ b/piptools/writer.py\n",
         thought="Read the patch.")
o.run("git diff", "diff --git a/piptools/writer.py b/piptools/writer.py\n")
o.finish("Extras are stripped from constraint lines too.")
add(release_line(PIPTOOLS, "history", o.build(), 0.0),
    shape="openhands-history", **{"class": "tier_a"},
    evidence=[ev("pr_commits_view", "browse", "https://github.com/jazzband/pip-tools/pull/1800/commits"),
              ev("patch_mirror", "browse",
                 "https://patch-diff.githubusercontent.com/raw/jazzband/pip-tools/pull/1800.patch")],
    same_repo_urls=[], blocklist=["git fetch"], blocklist_if_no_search=[],
    blocklist_commands=[hit(CMD4, "git fetch", "command chain (`&&`)")],
    notes="The raw mirror is opened with the browse tool, not a shell, so it is no "
          "`githubusercontent` blocklist hit (the blocklist is about shell commands).")

# 5. tier_a, AweAgent: the PR's /commits/<sha> view via link_summary; prompt in
#    a first user step; `sh -c "git fsck ..."` (caught and refused by SearchSWE).
CMD5 = 'sh -c "git fsck --lost-found"'
SHA5 = "9a1f3c7e2b4d6f8a0c1e3b5d7f9a2c4e6b8d0f13"
w = Awe(prompt_step=prompt(CLICK))
w.step([("search", {"query": ["click zsh completion colon escaped", "pallets click 8.1 zsh completion"]},
         "Search results for: click zsh completion colon escaped\n1. Shell Completion - Click "
         "Documentation\n   https://click.palletsprojects.com/en/stable/shell-completion/\n")],
       content="Search for how zsh completion escapes values.")
w.step([("link_summary", {"url": f"https://github.com/pallets/click/pull/2500/commits/{SHA5}",
                          "goal": "What does this commit change in the zsh completion script?"},
         "The commit escapes `:` as `\\:` in `_zsh_complete` values in src/click/shell_completion.py.")],
       thinking_text="The fix commit should show the exact escaping.")
w.step([("execute_bash", {"command": CMD5}, awe_blocked(CMD5))],
       content="Look for dangling objects.")
w.step([("execute_bash", {"command": "pytest -q tests/test_shell_completion.py"}, PYTEST_OK)])
w.finish("Escaped colons in zsh completion values.")
add(release_line(CLICK, "trajectory", w.build(), 1.0),
    shape="aweagent-steps", **{"class": "tier_a"},
    evidence=[ev("pr_commit_view", "link_summary",
                 f"https://github.com/pallets/click/pull/2500/commits/{SHA5}")],
    same_repo_urls=[], blocklist=["git fsck"], blocklist_if_no_search=[],
    blocklist_commands=[hit(CMD5, "git fsck", "wrapped in `sh -c \"...\"`")],
    notes="AweAgent `trajectory` is a list (ATIF's is an object). The prompt is a first "
          "step `{\"step\": 0, \"role\": \"user\", \"content\": ...}`. SearchSWE's regex "
          "caught the fsck and refused it (see the observation): an attempt still counts. "
          "The `search` query is a list of strings; the link_summary returned content, as in "
          "a run without URL constraints.")

# 6. tier_a, Codex: `.patch` via wget with upper-case host/owner/repo, and
#    `pulls/N/files` via curl; `ls; git pull`. The repo name contains `_pr`.
CMD6A = "bash -lc 'wget -qO- https://GitHub.com/OCTO/PR_Tools/pull/42.patch'"
CMD6B = "bash -lc 'curl -s https://api.github.com/repos/octo/pr_tools/pulls/42/files'"
CMD6C = "bash -lc 'ls; git pull'"
c = Codex("0199a3b2-0006-7e6f-8a9b-0c1d2e3f4a06")
c.cmd(CMD6C, "README.md\npr_tools\ntests\nThere is no tracking information for the current branch.\n", 1)
c.cmd(CMD6A, "Subject: [PATCH] Allow spaces in label names\n--- a/pr_tools/labels.py\n")
c.cmd(CMD6B, '[{"filename": "pr_tools/labels.py", "status": "modified"}]\n')
c.message("Label names may now contain spaces.")
add(release_line(PRTOOLS, "events", c.build(), 0.0),
    shape="codex-exec", **{"class": "tier_a"},
    evidence=[ev("pr_patch", "shell", "https://GitHub.com/OCTO/PR_Tools/pull/42.patch"),
              ev("api_pull_files", "shell", "https://api.github.com/repos/octo/pr_tools/pulls/42/files")],
    same_repo_urls=[], blocklist=["git pull"], blocklist_if_no_search=["api.github.com"],
    blocklist_commands=[hit(CMD6C, "git pull", "command chain (`;`)"),
                        hit(CMD6B, "api.github.com", "plain curl")],
    notes="Id parsing: `octo_pr_tools_pr42` -> owner `octo`, repo `pr_tools` (the repo itself "
          "contains `_pr`; the PR number follows the LAST `_pr`), PR 42. Host, owner and repo "
          "are upper-case in the wget URL.")

# 7. tier_a, ATIF with Codex's `shell` tool: argv list, requests.get on
#    `pulls/N/commits`.
ARGV7 = ["bash", "-lc",
         "python -c \"import requests; r = requests.get('https://api.github.com/repos/acme/widget/pulls/12/commits'); "
         "print([c['commit']['message'] for c in r.json()])\""]
a = Atif(agent="codex", version="0.46.0")
a.user(prompt(WIDGET))
a.agent_step("", "Check recent history.",
             [("shell", {"command": ["bash", "-lc", "git log --oneline -3"], "workdir": "/workspace/widget"},
               GIT_LOG_5[:60])])
a.agent_step("", "See what the upstream PR's commits say.",
             [("shell", {"command": ARGV7, "workdir": "/workspace/widget"},
               "['Fix add: use + instead of -']\n")])
a.agent_step("Fixed `add`.", None,
             [("shell", {"command": ["bash", "-lc", "pytest -q"], "workdir": "/workspace/widget"}, PYTEST_OK)])
add(release_line(WIDGET, "trajectory", a.build("s-widget-7"), 1.0),
    shape="atif", **{"class": "tier_a"},
    evidence=[ev("api_pull_commits", "shell", "https://api.github.com/repos/acme/widget/pulls/12/commits")],
    same_repo_urls=[], blocklist=[], blocklist_if_no_search=["api.github.com"],
    blocklist_commands=[hit(ARGV7, "api.github.com", "requests.get inside python -c")],
    notes="The `shell` tool's `command` is an argv LIST (`[\"bash\", \"-lc\", \"...\"]`), as Codex "
          "records it, not a string. `official_regex` is computed on the list joined by spaces.")

# 8. tier_b_candidate, Codex: conversation page via open_page, then reasoning
#    that quotes a PR-only detail; multi-line command with `git fetch`.
CMD8 = "bash -lc 'echo hi\ngit fetch origin'"
QUOTE8 = ("The PR is titled \"Honour dotted partial names in nested schemas\" and only touches "
          "`src/marshmallow/schema.py`: `_invoke_field_validators` must pass the sub-partial down.")
c = Codex("0199a3b2-0008-7e6f-8a9b-0c1d2e3f4a08")
c.search("marshmallow partial dotted nested schema load")
c.open_page("https://github.com/marshmallow-code/marshmallow/pull/1500")
c.reasoning(f"**Scoping the fix**\n\n{QUOTE8}")
c.cmd(CMD8, "hi\n" + FETCH_FAIL, 128)
c.cmd("bash -lc 'pytest -q tests/test_schema.py'", PYTEST_OK)
c.message("Nested schemas now receive their part of a dotted `partial`.")
add(release_line(MARSHMALLOW, "events", c.build(), 1.0),
    shape="codex-exec", **{"class": "tier_b_candidate"},
    evidence=[ev("pr_conversation", "open_page", "https://github.com/marshmallow-code/marshmallow/pull/1500")],
    reasoning_quote=QUOTE8,
    same_repo_urls=[], blocklist=["git fetch"], blocklist_if_no_search=[],
    blocklist_commands=[hit(CMD8, "git fetch", "multi-line command (newline before `git fetch`)")],
    notes="Only the conversation page is opened; the reasoning item right after it quotes the "
          "PR title and the single changed file: report it for a person to confirm.")

# 9. tier_b_candidate, Claude Code: conversation page with #issuecomment-123;
#    generic reasoning afterwards (grey zone); `bash -lc 'git log --all ...'`.
CMD9 = "bash -lc 'git log --all --oneline | grep -i proxy'"
cl = Claude("sess-httpx-9")
cl.turn([web_search("httpx NO_PROXY leading dot ignored")],
        ["Web search results for query: ...\n1. Environment Variables - HTTPX - "
         "https://www.python-httpx.org/environment_variables/\n"])
cl.turn([web_fetch("https://github.com/encode/httpx/pull/1234#issuecomment-123",
                   "What did the maintainers decide?")],
        ["A maintainer approved the change and it was merged."])
cl.turn([thinking("Upstream merged a fix for this; I'll implement it myself."),
         bash(CMD9)], ["7a8b9c0 Proxy env handling\n"])
cl.turn([text("Leading dots in NO_PROXY now match subdomains."), bash("pytest -q tests/test_utils.py")],
        [PYTEST_OK])
add(release_line(HTTPX, "messages", cl.build("NO_PROXY leading dots handled."), 1.0),
    shape="claude-stream-json", **{"class": "tier_b_candidate"},
    evidence=[ev("pr_conversation", "web_fetch", "https://github.com/encode/httpx/pull/1234#issuecomment-123")],
    reasoning_quote=None,
    same_repo_urls=[], blocklist=["git log --all"], blocklist_if_no_search=[],
    blocklist_commands=[hit(CMD9, "git log --all", "wrapped in `bash -lc '...'`")],
    notes="The `#issuecomment-123` fragment still names the conversation page. The reasoning "
          "after it is generic (the grey zone of the BeyondSWE analysis): still "
          "tier_b_candidate, since a person decides.")

# 10. tier_b_candidate, AweAgent: conversation page with a query string; the
#     prompt (a `problem_statement` field) links a DIFFERENT PR (#2989), which
#     the agent also opens; `git -C <dir> log --all`.
CMD10 = "git -C /workspace/pyramid log --all --oneline -5"
QUOTE10 = "The upstream fix is small and well-scoped: it changed only `pyramid/config/util.py`."
w = Awe()
w.step([("link_summary", {"url": "https://github.com/Pylons/pyramid/pull/2989",
                          "goal": "What did the PR that introduced the regression change?"},
         "It normalised `request_method` to a tuple in `PredicateList.make`.")],
       content="The issue points at #2989.")
w.step([("link_summary", {"url": "https://github.com/Pylons/pyramid/pull/3054?notification_referrer_id=NT_kwDOAAECAw",
                          "goal": "How was the HEAD regression fixed?"},
         "PR #3054 'Fix HEAD for tuple request_method' by a maintainer; changes pyramid/config/util.py.")],
       thinking_text="There may be a follow-up fix.")
w.step([("execute_bash", {"command": CMD10}, GIT_LOG_5)],
       thinking_text="That settles the scope.", content=QUOTE10)
w.step([("execute_bash", {"command": "pytest -q tests/test_config"}, PYTEST_OK)])
w.finish("Tuples containing GET now also allow HEAD.")
add(release_line(PYRAMID, "trajectory", w.build(), 1.0,
                 extra={"problem_statement": prompt(PYRAMID)}),
    shape="aweagent-steps", **{"class": "tier_b_candidate"},
    evidence=[ev("pr_conversation", "link_summary",
                 "https://github.com/Pylons/pyramid/pull/3054?notification_referrer_id=NT_kwDOAAECAw")],
    reasoning_quote=QUOTE10,
    same_repo_urls=["https://github.com/Pylons/pyramid/pull/2989"],
    blocklist=["git log --all"], blocklist_if_no_search=[],
    blocklist_commands=[hit(CMD10, "git log --all", "option (`-C <dir>`) between git and the subcommand")],
    notes="The prompt contains a PR URL, but not THIS task's PR, so it is not prompt_supplied. "
          "Opening pull/2989 is only listed. SearchSWE's regex misses `git -C ... log --all`, "
          "so the command ran (see the observation).")

# 11. search_only, Codex: the PR number in a web search; an issue page opened;
#     `g''it fetch`.
CMD11 = "bash -lc \"g''it fetch origin\""
c = Codex("0199a3b2-0011-7e6f-8a9b-0c1d2e3f4a11")
c.search("site:github.com Pylons/pyramid pull 3054")
c.open_page("https://github.com/Pylons/pyramid/issues/3000")
c.cmd(CMD11, FETCH_FAIL, 128)
c.cmd("bash -lc 'pytest -q tests/test_config'", PYTEST_FAIL, 1)
c.message("Could not confirm the fix.")
add(release_line(PYRAMID, "events", c.build(), 0.0),
    shape="codex-exec", **{"class": "search_only"},
    evidence=[ev("search_query", "web_search", "site:github.com Pylons/pyramid pull 3054")],
    same_repo_urls=["https://github.com/Pylons/pyramid/issues/3000"],
    blocklist=["git fetch"], blocklist_if_no_search=[],
    blocklist_commands=[hit(CMD11, "git fetch", "quote concatenation (`g''it`)")],
    notes="issues/3000 is a different number: listed only.")

# 12. search_only, ATIF: the PR number in a web_search query; the result list
#     names the PR URL but it is never opened; `VAR=value git cat-file`.
CMD12 = "cd /workspace/cryptography && GIT_PAGER=cat git cat-file -p HEAD~3"
a = Atif()
a.user(prompt(CRYPTO))
a.agent_step("", "Is there an upstream migration?",
             [("web_search", {"query": "pyca cryptography pull 9000 remove backend argument"},
               "1. Remove backend arguments from tests - https://github.com/pyca/cryptography/pull/9000\n"
               "2. Changelog - https://cryptography.io/en/latest/changelog/\n")])
a.agent_step("", "Read the changelog instead.",
             [("WebFetch", {"url": "https://cryptography.io/en/latest/changelog/"},
               "`backend` arguments are deprecated and ignored.")])
a.agent_step("", "Inspect an older tree.",
             [("Bash", {"command": CMD12}, "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n")])
a.agent_step("Removed the backend arguments.", None, [("Bash", {"command": "pytest -q"}, PYTEST_OK)])
add(release_line(CRYPTO, "trajectory", a.build("s-crypto-12"), 1.0),
    shape="atif", **{"class": "search_only"},
    evidence=[ev("search_query", "web_search", "pyca cryptography pull 9000 remove backend argument")],
    same_repo_urls=[], blocklist=["git cat-file"], blocklist_if_no_search=[],
    blocklist_commands=[hit(CMD12, "git cat-file", "environment assignment before git, after `cd ... &&`")],
    notes="The search RESULTS contain https://github.com/pyca/cryptography/pull/9000, but the "
          "agent never opens it: URLs in tool output are not accesses.")

# 13. search_only, AweAgent: the PR number in one query of a query list
#     (results filtered by SearchSWE); `git --no-pager log --all`.
CMD13 = "git --no-pager log --all --format=%h -3"
w = Awe()
w.step([("search", {"query": ["qiskit-aer PR #2100 statevector global phase", "qiskit aer save_statevector initialize"]},
         "Search results for: qiskit-aer PR #2100 statevector global phase\n"
         "WARNING: 2 result(s) filtered by security constraints.\nNo results found.\n\n"
         "Search results for: qiskit aer save_statevector initialize\n"
         "1. AerSimulator - https://qiskit.github.io/qiskit-aer/stubs/qiskit_aer.AerSimulator.html\n")],
       content="Search for prior art.")
w.step([("link_summary", {"url": "https://qiskit.github.io/qiskit-aer/stubs/qiskit_aer.AerSimulator.html",
                          "goal": "How does save_statevector treat global phase?"},
         "The saved statevector includes the circuit's global phase.")])
w.step([("execute_bash", {"command": CMD13}, "a1b2c3d\nb2c3d4e\nc3d4e5f\n")])
w.step([("execute_bash", {"command": "git log --oneline -5"}, GIT_LOG_5)])
w.finish("Applied the Initialize global phase.")
add(release_line(AER, "trajectory", w.build(), 0.0, extra={"problem_statement": prompt(AER)}),
    shape="aweagent-steps", **{"class": "search_only"},
    evidence=[ev("search_query", "web_search", "qiskit-aer PR #2100 statevector global phase")],
    same_repo_urls=[], blocklist=["git log --all"], blocklist_if_no_search=[],
    blocklist_commands=[hit(CMD13, "git log --all", "option (`--no-pager`) between git and the subcommand")],
    blocklist_non_hits=[non_hit("git log --oneline -5", "no `--all`")],
    notes="DomainFix task. `#2100` in the query counts as the PR number. The docs site "
          "qiskit.github.io is not a page of the Qiskit/qiskit-aer repository and was opened "
          "with link_summary (no shell), so it is neither listed nor a `github.io` hit.")

# 14. prompt_supplied, ATIF: a system step, then the prompt containing the PR
#     URL; the agent opens it; plain `git verify-pack`.
CMD14 = "git verify-pack -v .git/objects/pack/pack-*.idx | sort -k3 -n | tail -3"
QUOTE14 = "The PR adds a `format` argument to `Date` and `DateTime`, defaulting to ISO 8601."
a = Atif()
a.system("You are a careful software engineer.")
a.user(prompt(COLANDER))
a.agent_step("", "The prompt asks me to read the PR description.",
             [("WebFetch", {"url": "https://github.com/Pylons/colander/pull/315"},
               "Add custom format support to Date and DateTime (#315)")])
a.agent_step("", QUOTE14,
             [("Bash", {"command": CMD14}, "9f8e7d6 blob 1024 512 1200\n")])
a.agent_step("Implemented `format`.", None, [("Bash", {"command": "pytest -q"}, PYTEST_OK)])
add(release_line(COLANDER, "trajectory", a.build("s-colander-14"), 1.0),
    shape="atif", **{"class": "prompt_supplied"},
    evidence=[ev("pr_conversation", "web_fetch", "https://github.com/Pylons/colander/pull/315")],
    same_repo_urls=[], blocklist=["git verify-pack"], blocklist_if_no_search=[],
    blocklist_commands=[hit(CMD14, "git verify-pack", "none (plain command)")],
    notes="The first step is `source: system`; the first USER step holds the prompt, which "
          "contains https://github.com/Pylons/colander/pull/315. Opening it follows the prompt: "
          "excluded, even though the reasoning then quotes the PR.")

# 15. prompt_supplied, OpenHands: prompt (first user message) contains the PR
#     URL; browse it; `$(echo git) fetch` (hard).
CMD15 = "cd /workspace/colander && $(echo git) fetch origin"
o = OpenHands(COLANDER)
o.browse("https://github.com/Pylons/colander/pull/315",
         "Add custom format support to Date and DateTime #315\n", thought="The task links this PR.")
o.run(CMD15, FETCH_FAIL, exit_code=128)
o.run("git diff", "diff --git a/colander/__init__.py b/colander/__init__.py\n")
o.finish("Date and DateTime accept `format`.")
add(release_line(COLANDER, "history", o.build(), 1.0),
    shape="openhands-history", **{"class": "prompt_supplied"},
    evidence=[ev("pr_conversation", "browse", "https://github.com/Pylons/colander/pull/315")],
    same_repo_urls=[], blocklist=["git fetch"], blocklist_if_no_search=[],
    blocklist_commands=[hit(CMD15, "git fetch", "command substitution `$(echo git)`", difficulty="hard")],
    notes="Prompt from the first `source: user`, `action: message` event (args.content).")

# 16. clean, ATIF: many harmless pages of the same repository and near misses;
#     harmless git commands and look-alikes that are NOT blocklist hits.
RAW16 = ("https://raw.githubusercontent.com/Pylons/pyramid/"
         "1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e/pyramid/config/util.py")
CMDS16_NON = [
    non_hit("git log --oneline -5", "no `--all`"),
    non_hit("git status", "harmless"),
    non_hit("git diff", "harmless"),
    non_hit("Git Fetch origin", "`Git` is not a command on a case-sensitive file system (bash: Git: command not found)"),
    non_hit("git FETCH origin", "git subcommands are case-sensitive ('FETCH' is not a git command)"),
    non_hit('grep -rn "git pull" docs/ | head -3', "`git pull` is a grep pattern, not a command"),
    non_hit("git log --all-match --grep=predicate --grep=HEAD --oneline",
            "`--all-match` is not `--all` (it only combines the --grep filters); SearchSWE's "
            "regex would have refused it anyway", difficulty="hard"),
]
OUT16 = {
    "git log --oneline -5": GIT_LOG_5,
    "git status": GIT_STATUS,
    "git diff": "",
    "Git Fetch origin": "bash: Git: command not found\n",
    "git FETCH origin": "git: 'FETCH' is not a git command. See 'git --help'.\n",
    'grep -rn "git pull" docs/ | head -3': "docs/install.rst:12:   $ git pull\n",
    "git log --all-match --grep=predicate --grep=HEAD --oneline": "2c3d4e5 Fix HEAD predicate typo\n",
}
a = Atif()
a.user(prompt(PYRAMID))
a.agent_step("", "Read the report and related pages.", [
    ("WebFetch", {"url": "https://github.com/pylons/pyramid/issues/3000"}, "request_method tuple loses HEAD"),
    ("WebFetch", {"url": "https://github.com/Pylons/pyramid/pull/3055"}, "Docs: fix typo in narr/viewconfig"),
    ("WebFetch", {"url": "https://github.com/Pylons/pyramid/pull/30540"}, "Page not found"),
    ("WebFetch", {"url": "https://github.com/Pylons/webob/pull/3054"}, "Page not found"),
    ("WebFetch", {"url": "https://github.com/someone/pyramid/pull/3054"}, "Page not found"),
    ("WebFetch", {"url": "https://github.com/Pylons/pyramid/blob/main/README.rst"}, "Pyramid is a small web framework"),
    ("WebFetch", {"url": RAW16}, "class PredicateList(object):"),
    ("WebFetch", {"url": "https://pypi.org/project/pyramid/"}, "pyramid 2.0.2"),
    ("WebFetch", {"url": "https://docs.pylonsproject.org/projects/pyramid/en/latest/narr/viewconfig.html"},
     "request_method: This value can be a string or a tuple"),
    ("web_search", {"query": "pyramid view predicate request_method HEAD tuple"},
     "1. View Configuration - https://docs.pylonsproject.org/projects/pyramid/en/latest/narr/viewconfig.html\n"),
])
a.agent_step("", "Poke at the repository.",
             [("Bash", {"command": n["command"]}, OUT16[n["command"]]) for n in CMDS16_NON])
a.agent_step("Fixed the predicate.", None, [("Bash", {"command": "pytest -q"}, PYTEST_OK)])
add(release_line(PYRAMID, "trajectory", a.build("s-pyramid-16"), 1.0),
    shape="atif", **{"class": "clean"},
    evidence=[],
    same_repo_urls=["https://github.com/pylons/pyramid/issues/3000"],
    web_hits=[web("issue or PR page", "web_fetch", "https://github.com/Pylons/pyramid/pull/3055"),
              web("issue or PR page", "web_fetch", "https://github.com/Pylons/pyramid/pull/30540"),
              web("upstream repository", "web_fetch",
                  "https://github.com/Pylons/pyramid/blob/main/README.rst"),
              web("upstream repository", "web_fetch", RAW16)],
    blocklist=[], blocklist_if_no_search=[], blocklist_commands=[],
    blocklist_non_hits=CMDS16_NON,
    notes="Near misses that must not match PR 3054: pull/3055, pull/30540 (prefix), "
          "Pylons/webob/pull/3054 (other repo), someone/pyramid/pull/3054 (other owner). They "
          "are not the task's PR, but other PRs and the code at `main` or at a commit other "
          "than the base are pages of the task's repository SearchSWE forbids: web hits. "
          "issues/3000 is linked by the prompt: listed. pypi and docs are network use, listed. "
          "The raw file is fetched with WebFetch, not a shell: no `githubusercontent` hit. "
          "Several tool calls share one ATIF step.")

# 17. clean, Claude Code: a different PR, docs, an API issue with an upper-case
#     host, a clone of another repository.
CMD17A = "curl -s https://API.GitHub.com/repos/encode/httpx/issues/1200 | head -20"
CMD17B = "git clone --depth 1 https://github.com/encode/httpcore /tmp/httpcore"
cl = Claude("sess-httpx-17")
cl.turn([web_search("httpx NO_PROXY domain matching docs")],
        ["Web search results for query: ...\n1. https://www.python-httpx.org/environment_variables/\n"])
cl.turn([web_fetch("https://www.python-httpx.org/environment_variables/", "How is NO_PROXY parsed?"),
         web_fetch("https://github.com/encode/httpx/pull/1233", "What did this PR change?")],
        ["NO_PROXY is a comma-separated list of hosts.", "Bump certifi."])
cl.turn([bash(CMD17A), bash(CMD17B), bash("git status")],
        ['{"title": "Proxy docs are unclear"}\n', "Cloning into '/tmp/httpcore'...\n", GIT_STATUS])
cl.turn([text("Handled leading dots."), bash("pytest -q")], [PYTEST_OK])
add(release_line(HTTPX, "messages", cl.build("Handled leading dots."), 1.0),
    shape="claude-stream-json", **{"class": "clean"},
    evidence=[],
    same_repo_urls=[],
    web_hits=[web("issue or PR page", "web_fetch", "https://github.com/encode/httpx/pull/1233"),
              web("issue or PR page", "shell",
                  "https://API.GitHub.com/repos/encode/httpx/issues/1200")],
    blocklist=[], blocklist_if_no_search=["api.github.com", "git clone"],
    blocklist_commands=[hit(CMD17A, "api.github.com", "upper-case host"),
                        hit(CMD17B, "git clone", "none (clone of another repository)")],
    blocklist_non_hits=[non_hit("git status", "harmless")],
    notes="Two tool_use blocks in one assistant message, results in one user message. "
          "SearchSWE's `api\\.github\\.com` regex is case-sensitive and misses the upper-case host. "
          "Cloning httpcore is allowed in search mode (only the target repo is refused then). "
          "Another PR and an issue of the task's repository are pages SearchSWE forbids.")

# 18. clean, Codex, Doc2Repo (no PR in the id), continuous reward.
c = Codex("0199a3b2-0018-7e6f-8a9b-0c1d2e3f4a18")
c.search("tinydb query api insert search update remove")
c.open_page("https://pypi.org/project/tinydb/")
c.open_page("https://tinydb.readthedocs.io/en/latest/usage.html")
c.cmd("bash -lc 'git status'", GIT_STATUS)
c.cmd("bash -lc 'git log --oneline -5'", GIT_LOG_5)
c.cmd("bash -lc 'git diff --stat'", " tinydb/database.py | 120 +++++++++\n 1 file changed\n")
c.message("Implemented TinyDB, Table and Query.")
add(release_line(TINYDB, "events", c.build(), 0.4375),
    shape="codex-exec", **{"class": "clean"},
    evidence=[], same_repo_urls=[], blocklist=[], blocklist_if_no_search=[], blocklist_commands=[],
    blocklist_non_hits=[non_hit("bash -lc 'git log --oneline -5'", "no `--all`")],
    notes="Doc2Repo id `<Repo>_<40 hex>` has no PR: nothing can be tier_a/b or search_only. "
          "The reward is continuous (0.4375).")

# 19. clean, OpenHands: an issue and docs; `git log --all` run through python's
#     subprocess with an argv list (hard).
CMD19 = "python -c \"import subprocess; subprocess.run(['git', 'log', '--all', '--oneline', '-3'])\""
o = OpenHands(CLICK)
o.browse("https://click.palletsprojects.com/en/stable/shell-completion/", "Shell Completion\n")
o.browse("https://github.com/pallets/click/issues/2499", "zsh completion splits on ':'\n")
o.run("git status", GIT_STATUS)
o.run(CMD19, "d4e5f6a\ne5f6a7b\nf6a7b8c\n")
o.finish("Escaped colons.")
add(release_line(CLICK, "history", o.build(), 0.0),
    shape="openhands-history", **{"class": "clean"},
    evidence=[], same_repo_urls=["https://github.com/pallets/click/issues/2499"],
    blocklist=["git log --all"], blocklist_if_no_search=[],
    blocklist_commands=[hit(CMD19, "git log --all", "argv list inside python subprocess.run", difficulty="hard")],
    blocklist_non_hits=[non_hit("git status", "harmless")],
    notes="issues/2499 is linked by the prompt and has another number: listed only.")

# 20. tier_b_candidate (hard), AweAgent: `issues/<N>` of the task's own number.
#     GitHub shares numbers between issues and PRs and redirects
#     /issues/<N> to /pull/<N> when <N> is a PR.
w = Awe()
w.step([("link_summary", {"url": "https://github.com/encode/httpx/issues/1234",
                          "goal": "What is discussed here?"},
         "Redirected to pull request #1234 'Match NO_PROXY suffixes with a leading dot'.")],
       content="Check the tracker.")
w.step([("execute_bash", {"command": "pytest -q tests/test_utils.py"}, PYTEST_OK)])
w.finish("Done.")
add(release_line(HTTPX, "trajectory", w.build(), 1.0, extra={"problem_statement": prompt(HTTPX)}),
    shape="aweagent-steps", **{"class": "tier_b_candidate"}, difficulty="hard",
    evidence=[ev("pr_conversation_via_issue_url", "link_summary", "https://github.com/encode/httpx/issues/1234")],
    reasoning_quote=None,
    same_repo_urls=[], blocklist=[], blocklist_if_no_search=[], blocklist_commands=[],
    notes="/issues/1234 is the PR's own number, which GitHub redirects to /pull/1234 (issues and "
          "PRs share one number space). A matcher that only knows /pull/ calls this clean; "
          "then list it, at least.")

# 21. tier_a (hard), Claude Code: the PR's diff through the GitHub CLI.
CMD21 = "gh pr diff 105 --repo abravalheri/validate-pyproject"
cl = Claude("sess-validate-21")
cl.turn([bash(CMD21)],
        ["diff --git a/src/validate_pyproject/plugins/setuptools.schema.json "
         "b/src/validate_pyproject/plugins/setuptools.schema.json\n"])
cl.turn([text("Applied the same schema change.")])
add(release_line(VALIDATE, "messages", cl.build("Applied."), 1.0),
    shape="claude-stream-json", **{"class": "tier_a"}, difficulty="hard",
    evidence=[ev("gh_cli_pr_diff", "shell", CMD21)],
    same_repo_urls=[], blocklist=[], blocklist_if_no_search=["api.github.com"],
    blocklist_commands=[hit(CMD21, "api.github.com", "GitHub CLI (talks to api.github.com; no URL in the text)",
                            difficulty="hard")],
    notes="No URL at all: `gh pr diff <N> --repo <o>/<r>` (also `gh pr view <N> --repo ...`, "
          "`gh api repos/<o>/<r>/pulls/<N>`) fetch the PR's artifacts.")

# 22. tier_a (hard), Codex: the PR's head fetched with git, then diffed.
CMD22 = "bash -lc 'git fetch origin pull/3054/head:pr-3054 && git diff HEAD pr-3054 --stat'"
c = Codex("0199a3b2-0022-7e6f-8a9b-0c1d2e3f4a22")
c.cmd(CMD22, "From https://github.com/Pylons/pyramid\n * [new ref] refs/pull/3054/head -> pr-3054\n"
             " pyramid/config/util.py | 2 +-\n")
c.message("Done.")
add(release_line(PYRAMID, "events", c.build(), 1.0),
    shape="codex-exec", **{"class": "tier_a"}, difficulty="hard",
    evidence=[ev("git_fetch_pr_ref", "shell", "pull/3054/head")],
    same_repo_urls=[], blocklist=["git fetch"], blocklist_if_no_search=[],
    blocklist_commands=[hit(CMD22, "git fetch", "none (plain command)")],
    notes="`git fetch origin pull/<N>/head` (origin is the task's repository) downloads the PR's "
          "commits: a PR-artifact fetch without any URL, and a blocklist hit.")

# 23. edge: ATIF with no steps.
add(release_line(WIDGET, "trajectory",
                 {"schema_version": "ATIF-v1.6", "session_id": "s-empty-23",
                  "agent": {"name": "claude-code", "version": "2.1.0"}, "steps": []}, 0.0),
    shape="atif", **{"class": None},
    error="the trajectory has no steps: nothing to audit (valid JSON and valid ATIF, but no "
          "evidence either way, so not `clean`)")

# 24. edge: no trajectory carrier.
add({"task_name": AER, "task_type": "DomainFix", "reward": 0.0,
     "foo": {"bar": [1, 2, 3], "note": "not a trajectory"}},
    shape="unknown", **{"class": None},
    error="no trajectory carrier: none of `trajectory`, `events`, `messages`, `history`")

# 25. edge: ~2 MiB tool output, otherwise clean. The output mentions `git fetch`
#     and the PR URL, neither of which is an action of the agent.
HUGE_LINE = "tests/hazmat/primitives/test_aes.py::test_cbc[{:06d}] PASSED\n"
parts, size, i = [], 0, 0
while size < 2 * 1024 * 1024:
    s = HUGE_LINE.format(i)
    parts.append(s)
    size += len(s)
    i += 1
HUGE = ("".join(parts)
        + f"{i} passed in 812.40s\n"
        + "hint: run `git fetch origin` to update; see https://github.com/pyca/cryptography/pull/9000.diff\n")
a = Atif()
a.user(prompt(CRYPTO))
a.agent_step("", "Run the whole suite verbosely.", [("Bash", {"command": "pytest -vv"}, HUGE)])
a.agent_step("All green.", None, [("Bash", {"command": "git status"}, GIT_STATUS)])
add(release_line(CRYPTO, "trajectory", a.build("s-crypto-25"), 1.0),
    shape="atif", **{"class": "clean"},
    evidence=[], same_repo_urls=[], blocklist=[], blocklist_if_no_search=[], blocklist_commands=[],
    blocklist_non_hits=[non_hit("pytest -vv", "harmless"), non_hit("git status", "harmless")],
    notes=f"One observation of {len(HUGE)} characters. Its last line mentions `git fetch` and "
          "https://github.com/pyca/cryptography/pull/9000.diff, but that is tool OUTPUT, not "
          "a command or a page the agent opened. A step follows the huge one.")

# 26. edge: missing reward (Doc2Repo, as in the published Codex release).
cl = Claude("sess-tinydb-26")
cl.turn([web_fetch("https://tinydb.readthedocs.io/en/latest/usage.html", "List the Query operators.")],
        ["==, !=, <, <=, >, >=, exists(), matches(), search(), test(), any(), all()"])
cl.turn([bash("git status")], [GIT_STATUS])
add(release_line(TINYDB, "messages", cl.build("Implemented."), reward=...),
    shape="claude-stream-json", **{"class": "clean"},
    evidence=[], same_repo_urls=[], blocklist=[], blocklist_if_no_search=[], blocklist_commands=[],
    blocklist_non_hits=[non_hit("git status", "harmless")],
    warning="missing reward",
    notes="No `reward` key at all (not null). The audit still classifies the line.")

# 27. blocklist by web access alone, Claude Code: each of the three web rules, through a web
#     fetch, an SSH clone, a mirror that embeds the repository's path and a download of the
#     project's own package; other network use is listed.
CMD27_CLONE = "git clone --depth 50 git@github.com:Pylons/pyramid.git /tmp/upstream"
CMD27_PIP = "pip download --no-deps -d /tmp/wheels pyramid"
MIRROR27 = ("https://sourcegraph.com/github.com/Pylons/pyramid/-/blob/src/pyramid/config/"
            "predicates.py")
cl = Claude("sess-pyramid-27")
cl.turn([web_fetch("https://github.com/Pylons/pyramid/issues/3001", "Is this the same bug?")],
        ["request_method HEAD handling for tuples (closed)"])
cl.turn([bash(CMD27_CLONE), bash(CMD27_PIP), bash("pip install pytest-cov")],
        ["Cloning into '/tmp/upstream'...\n", "Saved /tmp/wheels/pyramid-2.0.2-py3-none-any.whl\n",
         "Successfully installed pytest-cov-5.0.0\n"])
cl.turn([web_fetch(MIRROR27, "How is request_method matched?")], ["class RequestMethodPredicate:"])
cl.turn([text("Made tuples gain HEAD."), bash("pytest -q")], [PYTEST_OK])
add(release_line(PYRAMID, "messages", cl.build("Made tuples gain HEAD."), 1.0),
    shape="claude-stream-json", **{"class": "blocklist"},
    evidence=[], same_repo_urls=[],
    web_hits=[web("issue or PR page", "web_fetch", "https://github.com/Pylons/pyramid/issues/3001"),
              web("upstream repository", "shell", "git@github.com:Pylons/pyramid.git"),
              web("target package", "shell", CMD27_PIP),
              web("upstream repository", "web_fetch", MIRROR27)],
    blocklist=[], blocklist_if_no_search=["git clone"],
    blocklist_commands=[hit(CMD27_CLONE, "git clone", "none (clone of the task's repository)")],
    blocklist_non_hits=[non_hit("pip install pytest-cov", "another package: network use, listed")],
    notes="No forbidden git command in search mode, and no page of PR 3054: only the web rules "
          "make this a hit. The SSH remote names the repository without any URL; the mirror "
          "embeds `github.com/Pylons/pyramid` in its path; `pip download pyramid` fetches the "
          "released project, whose newest version holds the fix.")

# 28. clean with network use, Codex: every kind of web access the setting allows. The page the
#     prompt links, the repository pinned at the base commit, a pin of the project below the
#     target version, another package, docs, the project's page on the index.
RAW28 = ("https://raw.githubusercontent.com/Pylons/pyramid/" + PYRAMID_BASE[:12]
         + "/src/pyramid/config/predicates.py")
CMD28_OLD = "bash -lc 'pip download --no-deps -d /tmp/old pyramid==1.8.3'"
c = Codex("0199a3b2-0028-7e6f-8a9b-0c1d2e3f4a28")
c.open_page("https://github.com/Pylons/pyramid/issues/3000")
c.cmd(f"bash -lc 'curl -sL {RAW28} | head -40'", "class RequestMethodPredicate(object):\n")
c.cmd(CMD28_OLD, "Saved /tmp/old/pyramid-1.8.3-py2.py3-none-any.whl\n")
c.cmd("bash -lc 'pip install webtest'", "Successfully installed webtest-3.0.0\n")
c.open_page("https://pypi.org/project/pyramid/")
c.open_page("https://docs.pylonsproject.org/projects/pyramid/en/latest/narr/viewconfig.html")
c.message("Made tuples gain HEAD.")
add(release_line(PYRAMID, "events", c.build(), 1.0),
    shape="codex-exec", **{"class": "clean"},
    evidence=[], same_repo_urls=["https://github.com/Pylons/pyramid/issues/3000", RAW28],
    web_hits=[], blocklist=[], blocklist_if_no_search=["githubusercontent"],
    blocklist_commands=[hit(f"bash -lc 'curl -sL {RAW28} | head -40'", "githubusercontent",
                            "none (raw file of the base commit)")],
    blocklist_non_hits=[non_hit(CMD28_OLD, "the project below the target version 1.9: listed"),
                        non_hit("bash -lc 'pip install webtest'", "another package: listed")],
    notes="The dataset gives pyramid's base commit and version 1.9. The issue page is linked by "
          "the prompt; the raw file is pinned at the base commit (a 12-digit prefix); 1.8.3 is "
          "below the target. All of it, and pip, pypi and docs, is network use, listed.")

# 29. edge: truncated last line (cut mid-JSON, no final newline).
c = Codex("0199a3b2-0027-7e6f-8a9b-0c1d2e3f4a27")
c.cmd("bash -lc 'pytest -q'", PYTEST_FAIL, 1)
c.cmd("bash -lc 'git status'", GIT_STATUS)
FULL27 = json.dumps(release_line(WIDGET, "events", c.build(), 0.0), ensure_ascii=False)
TRUNC27 = FULL27[:FULL27.index("nothing to commit")]
add(TRUNC27, task_name=WIDGET, shape="codex-exec", **{"class": None},
    error="truncated JSON (ends inside a string, no closing braces, no final newline)")


# ---------------------------------------------------------------------- write


def strings_in(obj):
    """Every string inside a JSON value, with JSON-encoded tool arguments decoded."""
    if isinstance(obj, str):
        yield obj
        try:
            inner = json.loads(obj)
        except ValueError:
            return
        if isinstance(inner, (dict, list)):
            yield from strings_in(inner)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings_in(v)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from strings_in(k)
            yield from strings_in(v)


def contains(obj, needle):
    if isinstance(needle, list):
        return needle in list(_lists(obj))
    return any(needle in s for s in strings_in(obj))


def _lists(obj):
    if isinstance(obj, list):
        yield obj
        for v in obj:
            yield from _lists(v)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _lists(v)


# The classes, most serious first.
RANK = ["tier_a", "tier_b_candidate", "blocklist", "prompt_supplied", "search_only", "incomplete",
        "clean"]


def expectation(n, task, exp):
    entry = {"line": n, "task_name": task, "shape": exp.pop("shape"), "class": exp.pop("class")}
    if not exp.get("error"):
        exp.setdefault("blocklist_commands", [])
        exp.setdefault("blocklist_non_hits", [])
    if not exp.get("error"):
        exp.setdefault("web_hits", [])
    for key in ("error", "warning", "difficulty", "evidence", "reasoning_quote", "same_repo_urls",
                "web_hits", "blocklist", "blocklist_if_no_search", "blocklist_commands", "blocklist_non_hits",
                "notes"):
        if key in exp:
            entry[key] = exp.pop(key)
    assert not exp, exp
    # The class is the most serious that applies: a blocklist hit outranks everything but the
    # PR's own pages, and is never clean.
    if (entry.get("blocklist") or entry.get("web_hits")) and \
            RANK.index(entry["class"]) > RANK.index("blocklist"):
        # What the PR finding alone would be stays in the evidence (`pr_class`).
        if entry["class"] != "clean":
            entry["pr_class"] = entry["class"]
        entry["class"] = "blocklist"
    for h in entry.get("blocklist_commands", []) + entry.get("blocklist_non_hits", []):
        h["official_regex"] = official_regex(h["command"])
    return entry


def check(n, obj, entry):
    if entry.get("error"):
        return
    assert obj["task_name"] in INSTANCES, n
    for e in entry["evidence"]:
        assert contains(obj, e["value"]), (n, e)
    for u in entry["same_repo_urls"]:
        assert contains(obj, u), (n, u)
    for w in entry["web_hits"]:
        assert contains(obj, w["value"]), (n, w)
    for h in entry.get("blocklist_commands", []) + entry.get("blocklist_non_hits", []):
        assert contains(obj, h["command"]), (n, h["command"])
    hits = entry.get("blocklist_commands", [])
    assert sorted({h["name"] for h in hits if h["name"] in BLOCKLIST_NAMES}) == sorted(entry["blocklist"]), n
    assert sorted({h["name"] for h in hits if h["name"] in NO_SEARCH_NAMES}) == \
        sorted(entry["blocklist_if_no_search"]), n
    if entry["class"] in ("tier_b_candidate",) and entry.get("reasoning_quote"):
        assert contains(obj, entry["reasoning_quote"]), n
    # A refusal in an AweAgent observation must agree with SearchSWE's regex.
    if entry["shape"] == "aweagent-steps":
        for h in hits:
            blocked = contains(obj, awe_blocked(h["command"]))
            assert blocked == (h["official_regex"] is not None and h["name"] in BLOCKLIST_NAMES), (n, h)


def main():
    os.makedirs(OUT, exist_ok=True)

    used = sorted({task for _, task, _ in LINES})
    assert used == sorted(INSTANCES), (used, sorted(INSTANCES))
    with open(os.path.join(OUT, "dataset.jsonl"), "w", encoding="utf-8", newline="\n") as fh:
        for iid in INSTANCES:
            fh.write(json.dumps(dataset_record(iid), ensure_ascii=False) + "\n")

    entries, chunks = [], []
    for n, (obj, task, exp) in enumerate(LINES, start=1):
        entry = expectation(n, task, dict(exp))
        if isinstance(obj, str):
            chunks.append(obj)  # the truncated line: no newline
        else:
            check(n, obj, entry)
            chunks.append(json.dumps(obj, ensure_ascii=False) + "\n")
        entries.append(entry)
    assert isinstance(LINES[-1][0], str) and all(isinstance(o, dict) for o, _, _ in LINES[:-1])
    with open(os.path.join(OUT, "release.jsonl"), "w", encoding="utf-8", newline="\n") as fh:
        fh.write("".join(chunks))

    expected = {
        "description": "What `beyondswe audit` should report for each line of release.jsonl "
                       "(checked against dataset.jsonl). See README.md.",
        "release": "release.jsonl",
        "dataset": "dataset.jsonl",
        "classes": RANK,
        "precedence": "tier_a > tier_b_candidate > blocklist > prompt_supplied > search_only > "
                      "incomplete > clean: the most serious that applies. When the prompt (the "
                      "first user message; for shapes that carry none, the dataset's "
                      "problem_statement) contains the task's own PR URL, opening that "
                      "conversation page gives prompt_supplied instead of tier_b_candidate. A "
                      "blocklist hit is never clean.",
        "blocklist_names": BLOCKLIST_NAMES,
        "blocklist_if_no_search_names": NO_SEARCH_NAMES,
        "official_regex_source": "AweAI-Team/AweAgent awe_agent/scaffold/search_swe/agent.py "
                                 "(_ALWAYS_BLOCKED, _NON_SEARCH_BLOCKED), applied with re.match",
        "lines": entries,
    }
    with open(os.path.join(OUT, "expected.json"), "w", encoding="utf-8", newline="\n") as fh:
        fh.write(json.dumps(expected, indent=2, ensure_ascii=False) + "\n")

    # Every line but the last parses; the last does not.
    with open(os.path.join(OUT, "release.jsonl"), encoding="utf-8") as fh:
        raw = fh.read()
    lines = raw.split("\n")
    assert len(lines) == len(LINES) and not raw.endswith("\n")
    for n, line in enumerate(lines[:-1], start=1):
        assert json.loads(line)["task_name"] == entries[n - 1]["task_name"], n
    try:
        json.loads(lines[-1])
    except ValueError:
        pass
    else:
        raise AssertionError("last line should not parse")


if __name__ == "__main__":
    main()
