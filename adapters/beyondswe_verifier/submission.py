# beyondswe verifier: the submission: captured as the agent left the workdir (Harbor), applied
# with `git apply` only, and the paths it added or changed.
#
# adapters/beyondswe_verifier/submission.py (see verify.py). The
# apply step of both families; the static step reads submission_paths().
import os
import shutil
import subprocess
import tempfile
import time

from . import common
from . import files
from . import gitobjects

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, List  # noqa: F401


def capture_submission(ctx, dest):  # type: (Any, str) -> int
    """The workdir as the agent left it, as a binary diff against the base commit (against the
    empty tree when there is no base), written to `dest` before any grading step touches the
    tree, so a Harbor trial carries what was graded and `beyondswe verify` can grade it again.
    Untracked and ignored files are in it; bytecode, `__pycache__` and files the image itself
    left unchanged (the prepare step's record) are not. A private index: the repository's own
    is never written."""
    workdir = ctx.workdir
    tmp = tempfile.mkdtemp(prefix="bsw-capture-", dir="/tmp")
    os.chmod(tmp, 0o700)
    try:
        base = ctx.spec.get("base_commit")
        if ctx.git.available() and base:
            git_dir = ctx.git.git_dir
        else:
            git_dir, base = os.path.join(tmp, "git"), None
        env = dict(ctx.git.env)
        env["GIT_INDEX_FILE"] = os.path.join(tmp, "index")

        def git(args, **kw):
            return subprocess.run(["git", "--git-dir", git_dir, "--work-tree", workdir] + gitobjects.GIT_OPTS
                                  + args, cwd=workdir, env=env, stderr=subprocess.PIPE, timeout=600, **kw)

        if base is None:
            proc = subprocess.run(["git", "init", "-q", "--bare", git_dir], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=60)
            if proc.returncode != 0:
                raise common.VerifyError("capture_failed", proc.stderr.decode("utf-8", "replace").strip())
            against = git(["hash-object", "-t", "tree", "-w", "--stdin"], input=b"", stdout=subprocess.PIPE)
            against = against.stdout.decode().strip()
        else:
            git(["read-tree", base], check=True)
            against = base
        proc = git(["add", "-A", "-f", "--", ".", ":(exclude,glob)**/__pycache__/**", ":(exclude,glob)**/*.pyc"])
        if proc.returncode != 0:
            raise common.VerifyError("capture_failed", proc.stderr.decode("utf-8", "replace").strip())
        image_files = []
        for rel, digest in sorted((ctx.state.get("baseline_untracked") or {}).items()):
            try:
                if files.file_sha256(os.path.join(workdir, rel)) == digest:
                    image_files.append(rel)
            except OSError:
                pass
        if image_files:
            listed = os.path.join(tmp, "image-files")
            with open(listed, "wb") as fh:
                fh.write(b"".join((":(literal)" + rel).encode("utf-8", "surrogateescape") + b"\0"
                                  for rel in image_files))
            git(["rm", "-q", "--cached", "--ignore-unmatch", "--pathspec-from-file=" + listed, "--pathspec-file-nul"])
        with open(dest, "wb") as out:
            proc = git(["diff", "--cached", "--binary", "--no-color", "--no-ext-diff", "--no-renames", against],
                       stdout=out)
        if proc.returncode != 0:
            raise common.VerifyError("capture_failed", proc.stderr.decode("utf-8", "replace").strip())
        return os.path.getsize(dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def step_apply(ctx):  # type: (Any) -> bool
    """`git apply`, strict, then whitespace-tolerant; nothing else. A patch that touches .git in
    any spelling is refused."""
    patch = ctx.spec.get("patch")
    if not patch:
        return True
    t = time.time()
    paths, err = gitobjects.patch_paths(ctx, patch)
    ctx.applied_paths = paths or []
    for p in paths or []:
        parts = [c.lower() for c in p.replace("\\", "/").split("/")]
        if ".git" in parts or any(c.startswith(".git") and c.rstrip(". ") == ".git" for c in parts):
            ctx.facts["apply"] = {"ok": False, "how": None, "log": "the patch touches `%s` inside .git" % p}
            ctx.timed("apply", t)
            return False
    if ctx.spec.get("collected"):
        replace_image_files(ctx, paths or [])
    attempts = [("git apply", ["apply", "--verbose", "--whitespace=nowarn", patch]),
                ("git apply --ignore-whitespace", ["apply", "--verbose", "--whitespace=nowarn",
                                                   "--ignore-space-change", "--ignore-whitespace", patch])]
    text = err
    for how, args in attempts:
        if ctx.git.available():
            proc = ctx.git.run(args, check=False)
        else:
            proc = subprocess.run(["git"] + gitobjects.GIT_OPTS + args, cwd=ctx.workdir, env=ctx.git.env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        text += (proc.stdout + proc.stderr).decode("utf-8", "replace")
        if proc.returncode == 0:
            ctx.facts["apply"] = {"ok": True, "how": how, "log": common.tail(text)}
            ctx.flags["applied_with"] = how
            ctx.timed("apply", t)
            return True
    ctx.facts["apply"] = {"ok": False, "how": None, "log": common.tail(text)}
    ctx.timed("apply", t)
    return False


def replace_image_files(ctx, paths):  # type: (Any, List[str]) -> None
    """A collected diff (capture_submission in the agent's container) holds a file the image had
    untracked and the agent changed as a new file: that is all a diff against the base can say of
    it. Here, in a fresh container of the same image, the image's own copy is still there and
    would make `git apply` refuse the whole patch; it is removed so the agent's copy takes its
    place, as the agent left it. Only files the prepare step recorded, unchanged, not in the
    base, and never through a link."""
    image = ctx.state.get("baseline_untracked") or {}
    listing = gitobjects.base_listing(ctx)
    replaced = []
    for rel in paths:
        if rel not in image or rel in listing or files.parent_is_link(ctx.workdir, rel):
            continue
        full = os.path.join(ctx.workdir, rel)
        try:
            if files.file_sha256(full) != image[rel]:
                continue
            os.unlink(full)
        except OSError:
            continue
        replaced.append(rel)
    if replaced:
        ctx.flags["image_files_replaced"] = replaced[:200]


def submission_paths(ctx):  # type: (Any) -> List[str]
    """The paths the submission added or changed: its patch's, or (Harbor) the captured diff's,
    or else every file not as the base and the image left it."""
    if ctx.spec.get("patch"):
        return ctx.applied_paths  # step_apply parsed them
    capture = ctx.spec.get("capture")
    if (ctx.facts.get("capture") or {}).get("ok") and capture and os.path.getsize(capture) > 0:
        return gitobjects.patch_paths(ctx, capture)[0] or []
    return changed_from_base(ctx)


def changed_from_base(ctx):  # type: (Any) -> List[str]
    """Every file of the workdir that is not as the base or the image left it: the tracked ones
    whose blob differs, the untracked ones the image did not have with that content."""
    listing = gitobjects.base_listing(ctx)
    image = ctx.state.get("baseline_untracked") or {}
    out = []
    for rel, kind in files.walk_tree(ctx.workdir).items():
        if kind == "dir":
            continue
        full = os.path.join(ctx.workdir, rel)
        if rel in listing:
            sha, mode = gitobjects.blob_sha(full, ctx.algo_len)
            if (sha, mode) != (listing[rel][1], listing[rel][0]):
                out.append(rel)
        elif rel not in image or kind != "file" or files.file_sha256(full) != image[rel]:
            out.append(rel)
    return out
