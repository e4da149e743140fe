# beyondswe verifier: git, safely: every command with a clean environment, hooks and fsmonitor
# off and the repository's own configuration replaced by a minimal one; objects read through
# `git cat-file --batch` with each one's hash checked, so that a planted or replaced object cannot
# stand in for the base's files; the base commit's listing; the paths a patch touches; .git
# hidden from the test user.
#
# adapters/beyondswe_verifier/gitobjects.py (see verify.py). Used by
# the apply, scrub, restore and static steps, the hand-over to the test user and the prepare
# command.
import hashlib
import os
import re
import stat
import subprocess

from . import common
from . import files

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Dict, List, Optional, Sequence, Tuple  # noqa: F401


GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_ATTR_NOSYSTEM": "1",
    "GIT_NO_REPLACE_OBJECTS": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0",
    "HOME": "/nonexistent", "LC_ALL": "C", "XDG_CONFIG_HOME": "/nonexistent",
}


GIT_OPTS = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.quotepath=off",
            "-c", "safe.directory=*", "-c", "protocol.allow=never", "-c", "core.pager=cat",
            "-c", "core.untrackedCache=false", "-c", "core.splitIndex=false", "-c", "core.sshCommand=false",
            "-c", "diff.external=", "-c", "core.autocrlf=false", "-c", "core.symlinks=true"]


class Git(object):
    def __init__(self, workdir):  # type: (str) -> None
        self.workdir = workdir
        self.env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")}
        self.env.update(GIT_ENV)
        self.git_dir = os.path.join(workdir, ".git")

    def available(self):  # type: () -> bool
        return os.path.isdir(self.git_dir) and not os.path.islink(self.git_dir)

    def run(self,
            args,  # type: Sequence[str]
            input=None,  # type: Optional[bytes]
            timeout=600,  # type: Optional[float]
            check=True  # type: bool
            ):  # type: (...) -> subprocess.CompletedProcess[bytes]
        proc = subprocess.run(["git", "--git-dir", self.git_dir, "--work-tree", self.workdir] + GIT_OPTS + list(args),
                              cwd=self.workdir, env=self.env, input=input, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout)
        if check and proc.returncode != 0:
            raise common.VerifyError("git_failed", "git %s: %s" % (" ".join(args),
                                                                   proc.stderr.decode("utf-8", "replace").strip()))
        return proc

    def sanitize_config(self):  # type: () -> str
        """Replaces .git/config by the few keys git needs to read the objects; returns the
        sha256 of what was there. Hooks, fsmonitor, filters, aliases and includes are gone."""
        path = os.path.join(self.git_dir, "config")
        try:
            with open(path, "rb") as fh:
                original = fh.read()
        except OSError:
            original = b""
        keep = {"repositoryformatversion": "0", "bare": "false"}
        ext = {}
        section = None
        for line in original.decode("utf-8", "replace").splitlines():
            s = line.strip()
            m = re.match(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]', s)
            if m:
                section = m.group(1).lower()
                continue
            m = re.match(r"^([A-Za-z0-9-]+)\s*=\s*(.*)$", s)
            if not m:
                continue
            key, value = m.group(1).lower(), m.group(2).strip()
            if section == "core" and key == "repositoryformatversion" and value in ("0", "1"):
                keep["repositoryformatversion"] = value
            if section == "extensions" and key in ("objectformat",) and value in ("sha1", "sha256"):
                ext[key] = value
        text = "[core]\n\trepositoryformatversion = %s\n\tbare = false\n" % keep["repositoryformatversion"]
        if ext:
            text += "[extensions]\n" + "".join("\t%s = %s\n" % kv for kv in sorted(ext.items()))
        hooks = os.path.join(self.git_dir, "hooks")
        if files.lexists(hooks):
            files.remove_entry(hooks)
        # Attributes could name filter drivers; alternates could point object reads elsewhere.
        for extra in ("info/attributes", "objects/info/alternates"):
            p = os.path.join(self.git_dir, extra)
            if files.lexists(p):
                files.remove_entry(p)
        if files.lexists(path):
            files.remove_entry(path)
        with open(path, "w") as fh:
            fh.write(text)
        return hashlib.sha256(original).hexdigest()


class Objects(object):
    """Reads git objects through `git cat-file --batch` and checks each one's hash, so a planted
    or replaced object cannot stand in for the base's files."""

    def __init__(self, git):  # type: (Git) -> None
        self.git = git
        self.proc = subprocess.Popen(["git", "--git-dir", git.git_dir] + GIT_OPTS + ["cat-file", "--batch"],
                                     cwd=git.workdir, env=git.env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # type: Any

    def close(self):  # type: () -> None
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:  # noqa: BLE001
            self.proc.kill()
        finally:
            self.proc.stdout.close()

    def read(self, sha, want=None):  # type: (str, Optional[str]) -> Tuple[str, bytes]
        self.proc.stdin.write(sha.encode("ascii") + b"\n")
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().decode("ascii", "replace").split()
        if len(header) != 3:
            raise common.VerifyError("base_object_missing", "git object %s is missing" % sha)
        kind, size = header[1], int(header[2])
        data = self.proc.stdout.read(size)
        self.proc.stdout.read(1)
        algo = "sha256" if len(sha) == 64 else "sha1"
        h = hashlib.new(algo, ("%s %d\0" % (kind, size)).encode("ascii") + data).hexdigest()
        if h != sha.lower():
            raise common.VerifyError("base_object_forged",
                                     "git object %s does not hash to its name (got %s)" % (sha, h))
        if want and kind != want:
            raise common.VerifyError("base_object_forged", "git object %s is a %s, not a %s" % (sha, kind, want))
        return kind, data

    def commit_tree(self, commit):  # type: (str) -> str
        _, data = self.read(commit, "commit")
        first = data.split(b"\n", 1)[0].decode("ascii", "replace")
        if not first.startswith("tree "):
            raise common.VerifyError("base_object_forged", "commit %s has no tree" % commit)
        return first[5:].strip()

    def tree_entries(self, sha):  # type: (str) -> List[Tuple[str, str, str]]
        _, data = self.read(sha, "tree")
        n = 32 if len(sha) == 64 else 20
        out = []
        i = 0
        while i < len(data):
            sp = data.index(b" ", i)
            nul = data.index(b"\0", sp)
            mode = data[i:sp].decode("ascii")
            name = data[sp + 1:nul].decode("utf-8", "surrogateescape")
            oid = data[nul + 1:nul + 1 + n].hex()
            out.append((mode.zfill(6), name, oid))
            i = nul + 1 + n
        return out

    def listing(self, commit):  # type: (str) -> Dict[str, Tuple[str, str]]
        """path -> (mode, blob sha) for every file of the commit."""
        out = {}
        stack = [("", self.commit_tree(commit))]
        while stack:
            prefix, tree = stack.pop()
            for mode, name, oid in self.tree_entries(tree):
                path = prefix + name
                if mode == "040000":
                    stack.append((path + "/", oid))
                elif mode != "160000":
                    out[path] = (mode, oid)
        return out

    def blob(self, sha):  # type: (str) -> bytes
        return self.read(sha, "blob")[1]


def blob_sha(path, algo_len):  # type: (str, int) -> Tuple[Optional[str], Optional[str]]
    """The git blob id of a working-tree entry, or None if it is not a file or link."""
    try:
        st = os.lstat(path)
    except OSError:
        return None, None
    if stat.S_ISLNK(st.st_mode):
        data = os.readlink(path).encode("utf-8", "surrogateescape")
        mode = "120000"
    elif stat.S_ISREG(st.st_mode):
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            data = fh.read()
        mode = "100755" if st.st_mode & 0o100 else "100644"
    else:
        return None, None
    algo = "sha256" if algo_len == 64 else "sha1"
    return hashlib.new(algo, ("blob %d\0" % len(data)).encode("ascii") + data).hexdigest(), mode


def base_listing(ctx):  # type: (Any) -> Dict[str, Tuple[str, str]]
    if ctx.base_listing is None:
        base = ctx.spec.get("base_commit")
        if not base or not ctx.git.available():
            ctx.base_listing = {}
        else:
            if not re.match(r"^[0-9a-fA-F]{40}([0-9a-fA-F]{24})?$", base):
                base = ctx.git.run(["rev-parse", "--verify", base + "^{commit}"]).stdout.decode().strip()
            ctx.algo_len = len(base)
            objects = Objects(ctx.git)
            try:
                ctx.base_listing = objects.listing(base.lower())
            finally:
                objects.close()
    return ctx.base_listing


def patch_paths(ctx, patch):  # type: (Any, str) -> Tuple[Optional[List[str]], str]
    """Every path `git apply` would touch, as git itself parses the patch."""
    proc = ctx.git.run(["apply", "--numstat", "-z", "--summary", patch], check=False) if ctx.git.available() else None
    if proc is None:
        proc = subprocess.run(["git"] + GIT_OPTS + ["apply", "--numstat", "-z", patch], cwd=ctx.workdir,
                              env=ctx.git.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        return None, proc.stderr.decode("utf-8", "replace")
    paths = []
    for item in proc.stdout.split(b"\0"):
        text = item.decode("utf-8", "surrogateescape")
        if "\t" in text:
            text = text.rsplit("\t", 1)[-1]
        text = text.strip()
        summary = ("create mode", "delete mode", "mode change", "rename", "copy")
        if text and not re.match(r"^\d+\s+\d+$", text) and not text.startswith(summary):
            paths.append(text)
    return paths, ""


def hide_git(ctx):  # type: (Any) -> None
    """.git becomes root's only for the tests: its objects hold the test files as they were
    before the canaries went in, and a diff against them would tell the canaries apart. The
    test user's git refuses a repository another user owns anyway."""
    if ctx.git.available():
        os.chown(ctx.git.git_dir, 0, 0)
        os.chmod(ctx.git.git_dir, 0o700)
