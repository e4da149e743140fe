# beyondswe verifier: the static step: the submission's added and changed source read as root
# before any of it runs (beyondswe_static_evidence.py); ways into the test machinery or the
# interpreter that neither the base nor the gold patch uses make the verdict forgery_suspected.
#
# adapters/beyondswe_verifier/static_step.py (see verify.py). Run by
# both families; the prepare command records the base's baseline through static_baseline().
import os
import shutil
import subprocess
import tempfile
import time

from . import common
from . import files
from . import gitobjects
from . import submission

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Callable, Dict, Iterable, List  # noqa: F401


def static_module():  # type: () -> Any
    from . import static_evidence
    return static_evidence


def step_static(ctx, gold_kinds):  # type: (Any, Dict[str, str]) -> None
    """Reads the submission's files as they will run (after apply, scrub and restore; the tests
    it changed are the base's again and are not read): each use of a construct that reaches into
    the tests' machinery or the interpreter is a hit, and a hit of a kind that neither the base
    repository nor the gold patch uses makes the verdict `forgery_suspected`."""
    t = time.time()
    se = static_module()
    gone = set(ctx.flags["tests_restored"]) | set(ctx.flags["files_removed"])
    paths = [p for p in submission.submission_paths(ctx) if p not in gone]
    hits, errors = se.scan_tree(ctx.workdir, paths, files.is_test_path)
    base = ctx.state.get("static_baseline")
    if not isinstance(base, dict) or ctx.shared_container:
        # No prepare record, or one the agent could have rewritten: from the base's objects.
        base = static_baseline(ctx)
    allowed = set(base) | set(gold_kinds)
    unexplained = se.judge(hits, allowed)
    facts = ctx.facts.setdefault("static", {})
    facts.update({
        "files": len(paths), "hits": [h.as_json() for h in unexplained[:200]],
        "allowed": [h.as_json() for h in hits if h.kind in allowed][:200],
        "baseline": dict(sorted(base.items())), "gold": sorted(gold_kinds),
    })
    if errors:
        facts["unparsed"] = errors[:20]
    ctx.timed("static", t)


def scan_base(ctx, rels, is_test=lambda rel: False):
    # type: (Any, Iterable[str], Callable[[str], bool]) -> List[Any]
    """Static hits in the base commit's versions of `rels` (those it has as files), read from
    hash-checked git objects: never from the workdir, which the agent had first under Harbor."""
    listing = gitobjects.base_listing(ctx)
    wanted = [(rel, listing[rel][1]) for rel in sorted(set(rels))
              if rel in listing and listing[rel][0] in ("100644", "100755")]
    if not wanted:
        return []
    objects = gitobjects.Objects(ctx.git)
    try:
        return static_module().scan_sources([(rel, lambda oid=oid: objects.blob(oid)) for rel, oid in wanted],
                                            is_test)[0]
    finally:
        objects.close()


def static_baseline(ctx):  # type: (Any) -> Dict[str, str]
    """kind -> first use, over the base repository's own code: its Python files, tests left out
    (pytest is what tests are made of)."""
    code = [p for p in gitobjects.base_listing(ctx) if p.endswith(".py") and not files.is_test_path(p)]
    return static_module().kinds_of(scan_base(ctx, code))


def gold_static_kinds(ctx):  # type: (Any) -> Dict[str, str]
    """kind -> first use in the files the gold patch leaves (Doc2Repo: the reference repository),
    read from a scratch copy: the gold patch applied to the base's versions of its files, taken
    from git objects (a file the agent changed first must not lend the gold patch its code)."""
    gold = ctx.spec.get("gold_patch")
    if not gold or not os.path.isfile(gold):
        return {}
    t = time.time()
    se = static_module()
    tmp = tempfile.mkdtemp(prefix="bsw-gold-", dir="/tmp")
    os.chmod(tmp, 0o700)
    try:
        paths, _ = gitobjects.patch_paths(ctx, gold)
        listing = gitobjects.base_listing(ctx)
        wanted = [p for p in paths or [] if p in listing and listing[p][0] in ("100644", "100755")]
        if wanted:
            objects = gitobjects.Objects(ctx.git)
            try:
                for rel in wanted:
                    files.safe_write(tmp, rel, objects.blob(listing[rel][1]), listing[rel][0])
            finally:
                objects.close()
        env = dict(ctx.git.env)
        env["GIT_CEILING_DIRECTORIES"] = "/tmp"
        proc = subprocess.run(["git"] + gitobjects.GIT_OPTS + ["apply", "--whitespace=nowarn", gold], cwd=tmp,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        if proc.returncode != 0:
            ctx.facts.setdefault("static", {})["gold_error"] = common.tail(proc.stderr.decode("utf-8", "replace"), 2000)
            return {}
        gold_files = [p for p, k in files.walk_tree(tmp, skip_git=False).items() if k == "file"]
        hits, _ = se.scan_tree(tmp, gold_files, files.is_test_path)
        return se.kinds_of(hits)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        ctx.timed("static", t)
