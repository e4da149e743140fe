# beyondswe verifier: every grading step that runs inside a task container, for both callers.
#
# In the repository this is adapters/verify.py; in an image or a Harbor task it is installed as
# beyondswe_verify.py beside beyondswe_pytest_runner.py (adapters/pytest_runner.py),
# beyondswe_static_evidence.py, beyondswe_manifest.py, beyondswe_canaries.py, beyondswe_decide.py
# (imported through sibling()) and beyondswe_restore_rules.json (adapters/restore_rules.json),
# the names used below. Python unit tests of the modules: adapters/tests/. On the host,
# src/grade/pipeline.rs runs `grade`, src/grade/result.rs reads its result, src/restore_rules.rs
# reads the same rules, and tests/it/verifier.rs checks `classify` against it, `decide` over a
# table of cases, and runs the unit tests.
#
#   python3 -I -S beyondswe_verify.py grade --spec SPEC.json
#       the offline grader: SPEC names the submission's patch (or a tree already uploaded), the
#       instance's ids and files, and where to write the one JSON result it reads back.
#   python3 -I -S beyondswe_verify.py harbor --tests-dir /tests --logs-dir /logs/verifier
#       Harbor's tests/test.sh (adapters/test.sh): the same steps on the agent's workspace;
#       writes reward.txt and report.json (the same JSON result).
#   python3 -I beyondswe_verify.py prepare --workdir W --base C --state-dir D
#       once per instance image, before any submission: what belongs to the image (untracked files
#       and their hashes, the pytest plugins installed, the interpreter's clean sys.path).
#
# Steps of `grade` (each records facts; `decide` turns the facts into the verdict, once):
#   lock      stop every leftover process, make the grader's directories root-only
#   apply     the submission's patch with `git apply` only (strict, then whitespace-tolerant)
#   scrub     remove what loads code behind the sources' back: start-up hooks in any form,
#             metadata with entry points, bytecode and extension modules the base did not have,
#             top-level modules shadowing pytest, pluggy or the standard library
#   restore   test files, conftest files and pytest configuration back to the base commit, read
#             from git objects whose hashes are checked (replace refs and planted objects fail)
#   static    the submission's added and changed source read as root before any of it runs
#             (beyondswe_static_evidence.py): ways into the test machinery or the interpreter
#             that neither the base nor the gold patch uses make the verdict forgery_suspected
#   install   Doc2Repo: the submission installs itself as the unprivileged user; only then is the
#             hidden suite unpacked, read-only; only the ids of its manifest (beyondswe_manifest.py,
#             read from the archive before the install) count
#   canaries  clones of real tests planted among them (beyondswe_canaries.py): a twin that must
#             agree with its original and a poison, one of its assertions negated, that cannot
#             pass where it passed; names, places and bodies like the suite's own
#   run       pytest as an unprivileged user through beyondswe_pytest_runner.py; outcomes arrive
#             over a pipe only this process reads; every process of that user is killed after
#   decide    the verdict from the facts
#
# Every git command runs with a clean environment, hooks and fsmonitor off, and the repository's
# own configuration replaced by a minimal one. Python 3.6+, standard library only.
import hashlib
import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

try:
    import resource  # imported here: a preexec_fn must not import
except ImportError:  # not on every platform
    resource = None

LOADED_AT = time.time()
HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER_NAME = "beyondswe_pytest_runner.py"
RULES_NAME = "beyondswe_restore_rules.json"
RESULT_FORMAT = "beyondswe-verify-result-1"
TEST_USER = "beyondswe-test"
MAX_LOG = 20000
MAX_EVENTS_BYTES = 64 * 1024 * 1024
DISK_POLL_S = 0.25


def log(msg):
    sys.stderr.write("beyondswe-verify: %s\n" % msg)
    sys.stderr.flush()


def tail(text, n=MAX_LOG):
    if text is None:
        return ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return text if len(text) <= n else "[... %d chars cut]\n%s" % (len(text) - n, text[-n:])


def load_rules():
    with open(os.path.join(HERE, RULES_NAME), encoding="utf-8") as fh:
        return json.load(fh)


RULES = load_rules()


# ---------------------------------------------------------------------------------------------
# The rules table

def classify(path):
    """What the restore rules make of a repository path: startup, loader, config,
    section_config, test, or None. The same answers as src/restore_rules.rs (tested)."""
    parts = path.split("/")
    name = parts[-1]
    for part in parts:
        if part.split(".", 1)[0] in RULES["startup_stems"]:
            return "startup"
    if any(name.endswith(s) for s in RULES["startup_suffixes"]):
        return "startup"
    for part in parts[:-1]:
        if part in RULES["bytecode_dirs"] or any(part.endswith(s) for s in RULES["metadata_dir_suffixes"]):
            return "loader"
    if any(name.endswith(s) for s in RULES["bytecode_suffixes"] + RULES["extension_suffixes"] + RULES["link_suffixes"]):
        return "loader"
    if name in RULES["config_files"]:
        return "config"
    if name in RULES["section_config_files"]:
        return "section_config"
    if any(p.lower() in RULES["test_dirs"] for p in parts[:-1]):
        return "test"
    if name in RULES["conftest_names"]:
        return "test"
    if name.endswith(".py") and (any(name.startswith(p) for p in RULES["test_file_prefixes"])
                                 or any(name.endswith(s) for s in RULES["test_file_suffixes"])):
        return "test"
    return None


def is_test_path(path):
    """Whether the restore rules call `path` a test file."""
    return classify(path) == "test"


def module_name_of(entry):
    """The importable name a top-level directory entry provides (`pytest.py` -> pytest)."""
    return entry.split(".", 1)[0]


def stdlib_names():
    names = set(getattr(sys, "stdlib_module_names", ()))
    if not names:
        names = set(sys.builtin_module_names)
        for d in (os.path.dirname(os.__file__), os.path.join(os.path.dirname(os.__file__), "lib-dynload")):
            try:
                for e in os.listdir(d):
                    names.add(module_name_of(e))
            except OSError:
                pass
    return names


# ---------------------------------------------------------------------------------------------
# Files, without following links

def lexists(path):
    return os.path.lexists(path)


def remove_entry(path):
    st = os.lstat(path)
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def ensure_real_dirs(root, rel_dir):
    """Makes every component of root/rel_dir a real directory (a link or file in the way is
    removed), so a write below it cannot leave the tree."""
    cur = root
    for part in [p for p in rel_dir.split("/") if p]:
        cur = os.path.join(cur, part)
        if lexists(cur):
            st = os.lstat(cur)
            if stat.S_ISDIR(st.st_mode):
                continue
            os.unlink(cur)
        os.mkdir(cur, 0o755)


def safe_write(root, rel, data, mode):
    """Writes root/rel as a regular file (mode 100644/100755) or symlink (120000) with `data`."""
    ensure_real_dirs(root, os.path.dirname(rel))
    full = os.path.join(root, rel)
    if lexists(full):
        remove_entry(full)
    if mode == "120000":
        os.symlink(data.decode("utf-8", "surrogateescape"), full)
        return
    fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(full, 0o755 if mode == "100755" else 0o644)


def list_dir(root, rel):
    """root/rel (root itself for "") and the names in it; none when it cannot be listed."""
    full = os.path.join(root, rel) if rel else root
    try:
        return full, os.listdir(full)
    except OSError:
        return full, []


def walk_tree(root, skip_git=True):
    """rel path -> 'file' | 'link' | 'other' for everything below root (no link is followed);
    directories are yielded too, as 'dir'."""
    out = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        full, names = list_dir(root, rel)
        for name in names:
            if skip_git and not rel and name == ".git":
                continue
            r = rel + "/" + name if rel else name
            try:
                st = os.lstat(os.path.join(full, name))
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                out[r] = "dir"
                stack.append(r)
            elif stat.S_ISLNK(st.st_mode):
                out[r] = "link"
            elif stat.S_ISREG(st.st_mode):
                out[r] = "file"
            else:
                out[r] = "other"
    return out


def file_sha256(path):
    h = hashlib.sha256()
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        h.update(b"link:" + os.readlink(path).encode("utf-8", "surrogateescape"))
        return h.hexdigest()
    if not stat.S_ISREG(st.st_mode):
        return "other"
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# git, safely

# Harbor: the submission as the verifier found it, in the verifier's log directory.
SUBMISSION_DIFF = "submission.diff"

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
    def __init__(self, workdir):
        self.workdir = workdir
        self.env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")}
        self.env.update(GIT_ENV)
        self.git_dir = os.path.join(workdir, ".git")

    def available(self):
        return os.path.isdir(self.git_dir) and not os.path.islink(self.git_dir)

    def run(self, args, input=None, timeout=600, check=True):
        proc = subprocess.run(["git", "--git-dir", self.git_dir, "--work-tree", self.workdir] + GIT_OPTS + list(args),
                              cwd=self.workdir, env=self.env, input=input, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout)
        if check and proc.returncode != 0:
            raise VerifyError("git_failed", "git %s: %s" % (" ".join(args), proc.stderr.decode("utf-8", "replace").strip()))
        return proc

    def sanitize_config(self):
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
        if lexists(hooks):
            remove_entry(hooks)
        # Attributes could name filter drivers; alternates could point object reads elsewhere.
        for extra in ("info/attributes", "objects/info/alternates"):
            p = os.path.join(self.git_dir, extra)
            if lexists(p):
                remove_entry(p)
        if lexists(path):
            remove_entry(path)
        with open(path, "w") as fh:
            fh.write(text)
        return hashlib.sha256(original).hexdigest()


class Objects(object):
    """Reads git objects through `git cat-file --batch` and checks each one's hash, so a planted
    or replaced object cannot stand in for the base's files."""

    def __init__(self, git):
        self.git = git
        self.proc = subprocess.Popen(["git", "--git-dir", git.git_dir] + GIT_OPTS + ["cat-file", "--batch"],
                                     cwd=git.workdir, env=git.env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:  # noqa: BLE001
            self.proc.kill()

    def read(self, sha, want=None):
        self.proc.stdin.write(sha.encode("ascii") + b"\n")
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().decode("ascii", "replace").split()
        if len(header) != 3:
            raise VerifyError("base_object_missing", "git object %s is missing" % sha)
        kind, size = header[1], int(header[2])
        data = self.proc.stdout.read(size)
        self.proc.stdout.read(1)
        algo = "sha256" if len(sha) == 64 else "sha1"
        h = hashlib.new(algo, ("%s %d\0" % (kind, size)).encode("ascii") + data).hexdigest()
        if h != sha.lower():
            raise VerifyError("base_object_forged", "git object %s does not hash to its name (got %s)" % (sha, h))
        if want and kind != want:
            raise VerifyError("base_object_forged", "git object %s is a %s, not a %s" % (sha, kind, want))
        return kind, data

    def commit_tree(self, commit):
        _, data = self.read(commit, "commit")
        first = data.split(b"\n", 1)[0].decode("ascii", "replace")
        if not first.startswith("tree "):
            raise VerifyError("base_object_forged", "commit %s has no tree" % commit)
        return first[5:].strip()

    def tree_entries(self, sha):
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

    def listing(self, commit):
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

    def blob(self, sha):
        return self.read(sha, "blob")[1]


def blob_sha(path, algo_len):
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


class VerifyError(Exception):
    """A step could not be done; `reason` names it for the verdict."""

    def __init__(self, reason, message, infrastructure=True):
        Exception.__init__(self, message)
        self.reason = reason
        self.message = message
        self.infrastructure = infrastructure


# ---------------------------------------------------------------------------------------------
# Processes and the test user

def ancestors():
    out = set()
    pid = os.getpid()
    while pid > 1:
        out.add(pid)
        try:
            with open("/proc/%d/stat" % pid) as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    out.add(1)
    return out


def pids_of(uid=None):
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        if uid is not None:
            try:
                with open("/proc/%s/status" % name) as fh:
                    line = next(l for l in fh if l.startswith("Uid:"))
                if int(line.split()[1]) != uid:
                    continue
            except (OSError, StopIteration, ValueError, IndexError):
                continue
        out.append(int(name))
    return out


def kill_uid_atomically(uid):
    """Every process of `uid` at once: a child that becomes `uid` calls kill(-1, SIGKILL), which
    the kernel delivers to every process that uid may signal in one pass under the task list's
    lock (a process with SIGKILL pending cannot fork), and repeats until kill(-1, 0) finds none.
    A fork chain that outruns a scan of /proc cannot outrun this. (Whether a signal may be sent
    depends on the uid alone: the child drops its groups and keeps root's gid, which no check
    of kill(2) reads.)"""
    try:
        pid = os.fork()
    except OSError:
        return  # the scan of /proc is all there is
    if pid == 0:  # the child: only system calls until _exit
        code = 1
        try:
            os.setgroups([])
            os.setresuid(uid, uid, uid)
            code = 2
            for _ in range(10000):
                try:
                    os.kill(-1, signal.SIGKILL)
                except ProcessLookupError:  # nothing left this uid may signal
                    code = 0
                    break
                except OSError:
                    break
        finally:
            os._exit(code)
    try:
        os.waitpid(pid, 0)
    except OSError:
        pass


def kill_all(uid=None, keep=()):
    """SIGKILLs every process (of `uid`, if given) but `keep`, until none is left: for a uid,
    atomically first (kill_uid_atomically), then by a scan of /proc for anything left."""
    keep = set(keep)
    killed = 0
    if uid is not None and uid != 0:
        kill_uid_atomically(uid)
    for _ in range(100):
        victims = [p for p in pids_of(uid) if p not in keep]
        if not victims:
            break
        for p in victims:
            try:
                os.kill(p, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        time.sleep(0.02)
    return killed


def main_processes():
    """The container's main process: pid 1, and when pid 1 is an init (docker's --init, tini,
    catatonit, dumb-init) or a shell the child it started first. Harbor's Docker backend starts
    `sh -c "sleep infinity"`, where dash forks the sleep: killing it ends pid 1 and with it the
    container, the verifier included."""
    keep = set([1])
    try:
        with open("/proc/1/comm") as fh:
            comm = fh.read().strip()
    except OSError:
        return keep
    if comm not in ("docker-init", "tini", "catatonit", "dumb-init", "init", "sh", "dash", "bash"):
        return keep
    first = None
    for pid in pids_of():
        try:
            with open("/proc/%d/stat" % pid) as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == 1:
                started = int(fields[19])
                if first is None or started < first[0]:
                    first = (started, pid)
        except (OSError, ValueError, IndexError):
            continue
    if first is not None:
        keep.add(first[1])
    return keep


def kill_leftovers():
    """Every process that is not this one, an ancestor, or the container's main process."""
    return kill_all(None, ancestors() | main_processes())


def ensure_test_user():
    """A uid/gid with no other use in the image, in /etc/passwd so tools that look it up work.
    Drawn at random for each grading: containers share the kernel's per-uid accounting, so a
    fixed uid would let one grading's processes count against another's."""
    # Never an entry that is already there: under Harbor the agent could have written one.
    try:
        import pwd
        import grp
        used_u = set(p.pw_uid for p in pwd.getpwall())
        used_g = set(g.gr_gid for g in grp.getgrall())
    except ImportError:
        used_u, used_g = set(), set()
    rng = random.SystemRandom()
    uid = rng.randint(200000, 1 << 30)
    while uid in used_u or uid in used_g:
        uid = rng.randint(200000, 1 << 30)
    name = "%s-%d" % (TEST_USER, uid)
    try:
        with open("/etc/group", "a") as fh:
            fh.write("%s:x:%d:\n" % (name, uid))
        with open("/etc/passwd", "a") as fh:
            fh.write("%s:x:%d:%d::/nonexistent:/bin/sh\n" % (name, uid, uid))
    except OSError:
        pass
    return uid, uid


def chown_tree(root, uid, gid, skip_git=True):
    os.lchown(root, uid, gid)
    for rel, kind in walk_tree(root, skip_git).items():
        try:
            os.lchown(os.path.join(root, rel), uid, gid)
        except OSError:
            pass


def lock_paths(root, rels):
    """The files `rels` become root's and read-only; every directory from root down to them
    becomes root's with the sticky bit (others may add files but not replace these), and gets a
    root-owned empty __pycache__ so no bytecode can be planted for them."""
    dirs = set()
    for rel in rels:
        full = os.path.join(root, rel)
        try:
            st = os.lstat(full)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            os.chown(full, 0, 0)
            os.chmod(full, (st.st_mode & 0o111) | 0o644)
        d = os.path.dirname(rel)
        while True:
            dirs.add(d)
            if not d:
                break
            d = os.path.dirname(d)
    for d in sorted(dirs):
        full = os.path.join(root, d) if d else root
        if os.path.islink(full) or not os.path.isdir(full):
            continue
        os.chown(full, 0, 0)
        os.chmod(full, 0o1777)
        cache = os.path.join(full, "__pycache__")
        if lexists(cache):
            remove_entry(cache)
        os.mkdir(cache, 0o755)


def cgroup_oom_kills():
    for path, key in (("/sys/fs/cgroup/memory.events", "oom_kill"), ("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill")):
        try:
            with open(path) as fh:
                for line in fh:
                    parts = line.split()
                    if len(parts) == 2 and parts[0] == key:
                        return int(parts[1])
        except (OSError, ValueError):
            continue
    return None


# ---------------------------------------------------------------------------------------------
# The disk limit: what the test user writes while it runs

def writable_roots():
    """Directories of the root file system that anyone may write to (/tmp, /var/tmp, ...): with
    the workdir, the only places the test user can put files. /proc, /sys and /dev are other
    file systems (and /dev/shm is memory, bounded by the memory limit)."""
    out = []
    try:
        root_dev = os.lstat("/").st_dev
    except OSError:
        return out
    for top, dirs, _files in os.walk("/"):
        if top == "/":
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
        keep = []
        for d in dirs:
            path = os.path.join(top, d)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if st.st_dev != root_dev or not stat.S_ISDIR(st.st_mode):
                continue
            if st.st_mode & stat.S_IWOTH:
                out.append(path)  # everything below is reached from here
            else:
                keep.append(d)
        dirs[:] = keep
    return out


class DiskWatch(object):
    """Measures what the test user has written since `since`: blocks of the files it owns that
    changed after that moment (ctime cannot be set back), under the places it can write, plus
    files it deleted but keeps open. Walking is the costly part, so it only walks once the
    file system's free space has dropped by more than the limit (then someone may be over)."""

    def __init__(self, uid, limit, roots, since):
        """`roots` None: the world-writable directories are found when first needed."""
        self.uid, self.limit, self.roots, self.since = uid, limit, roots, since
        self.extra = ()
        self.free_at_start = self.free()

    @staticmethod
    def free():
        try:
            st = os.statvfs("/")
            return st.f_bavail * st.f_frsize
        except OSError:
            return None

    def over(self):
        """Bytes written, when over the limit; else None."""
        if not self.limit:
            return None
        now = self.free()
        if now is not None and self.free_at_start is not None and self.free_at_start - now <= self.limit:
            return None
        written = self.written()
        return written if written > self.limit else None

    def written(self):
        if self.roots is None:
            self.roots = writable_roots()
        seen = set()
        total = 0
        stack = list(self.roots) + list(self.extra)
        while stack:
            top = stack.pop()
            try:
                entries = list(os.scandir(top))
            except OSError:
                continue
            for e in entries:
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    stack.append(e.path)
                    continue
                if st.st_uid != self.uid or st.st_ctime < self.since:
                    continue
                key = (st.st_dev, st.st_ino)
                if key not in seen:
                    seen.add(key)
                    total += st.st_blocks * 512
        return total + self.held_deleted(seen)

    def held_deleted(self, seen):
        """Blocks of deleted files the test user's processes keep open. Their descriptors are
        visible to their own uid only (the container has no CAP_SYS_PTRACE), so a short-lived
        scanner with that uid lists them."""
        pids = pids_of(self.uid)
        if not pids:
            return 0
        try:
            proc = subprocess.run([sys.executable, "-I", "-S", "-c", HELD_DELETED, json.dumps(pids)],
                                  cwd="/", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30,
                                  env={"PATH": "/usr/bin:/bin"}, preexec_fn=demote(self.uid, self.uid))
            found = json.loads(proc.stdout.decode("ascii") or "[]")
        except (OSError, ValueError, subprocess.SubprocessError):
            return 0
        total = 0
        for dev, ino, size in found:
            if (dev, ino) not in seen:
                seen.add((dev, ino))
                total += int(size)
        return total


HELD_DELETED = r"""
import json, os, stat, sys
out = []
for pid in json.loads(sys.argv[1]):
    d = "/proc/%d/fd" % pid
    try:
        fds = os.listdir(d)
    except OSError:
        continue
    for fd in fds:
        p = os.path.join(d, fd)
        try:
            if not os.readlink(p).endswith(" (deleted)"):
                continue
            st = os.stat(p)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            # Some file systems (fuse-overlayfs) report no blocks for a deleted file: its size.
            out.append([st.st_dev, st.st_ino, max(st.st_blocks * 512, st.st_size)])
sys.stdout.write(json.dumps(out))
"""


def disk_watch(ctx, extra_roots=()):
    limit = ctx.spec.get("max_file_bytes")
    if not limit:
        return None
    watch = DiskWatch(ctx.uid, limit, ctx.state.get("writable_roots"), time.time() - 1)
    watch.extra = [ctx.workdir] + list(extra_roots)
    return watch


def demote(uid, gid, max_file_bytes=None):
    """preexec_fn: drop every privilege before the submission's code runs. (No RLIMIT_NPROC:
    the kernel counts it per uid across containers; the container's pids limit bounds forks.)
    No file may outgrow the container's disk limit (the host's watchdog bounds the total)."""

    def run():
        try:
            with open("/proc/self/oom_score_adj", "w") as fh:
                fh.write("1000")
        except OSError:
            pass
        if max_file_bytes and resource is not None:
            try:
                resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))
            except (ValueError, OSError):
                pass
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    return run


# ---------------------------------------------------------------------------------------------
# The image's environment: recorded once by the prepare step, reproduced for every test run

# Names a shell or `docker exec` sets for its own process: never part of the image's record.
SHELL_ONLY_VARS = frozenset(["PWD", "OLDPWD", "SHLVL", "_", "HOSTNAME", "TERM"])
# Variables that load code or change how an interpreter or pytest starts. From the prepare
# record they are the image's own configuration and kept; a verifier without that record cannot
# tell whose they are, and drops them (PYTHONPATH aside: the runner adds its entries only after
# pytest and the plugins are imported).
CODE_LOADING_PREFIXES = ("PYTHON", "PYTEST", "LD_PRELOAD", "LD_AUDIT")


def image_env_now():
    """This process's environment as the image's record: under `prepare` that is the image's
    configured `ENV` plus what the setup commands exported (the caller sourced the chain)."""
    return dict((k, v) for k, v in os.environ.items()
                if k not in SHELL_ONLY_VARS and not k.startswith("BEYONDSWE"))


def fallback_env():
    """Without a prepare record (a Harbor image used as it is): this process's environment, less
    every variable that loads code, since nothing says the image set it."""
    return dict((k, v) for k, v in image_env_now().items()
                if not k.startswith(CODE_LOADING_PREFIXES) or k == "PYTHONPATH")


def pick_python(env):
    """The interpreter the image's PATH picks, as the official evaluator's `python` would find
    it: the first PATH directory holding `python` or `python3` (a venv or conda prefix first on
    PATH wins over /usr/bin). Not resolved through links: a venv's `bin/python` is what makes
    it that venv. (path, version), or (None, None) when PATH holds neither."""
    for d in (env.get("PATH") or "/usr/local/bin:/usr/bin:/bin").split(os.pathsep):
        if not d or not os.path.isabs(d):
            continue
        for name in ("python", "python3"):
            path = os.path.join(d, name)
            version = os.path.isfile(path) and os.access(path, os.X_OK) and python_version(path)
            if version:
                return path, version
    return None, None


def python_version(path):
    """"3.11" for a Python 3.6+ interpreter, else None (a `python` that is Python 2, or broken)."""
    try:
        proc = subprocess.run([path, "-I", "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={"PATH": "/usr/bin:/bin"}, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    out = proc.stdout.decode("ascii", "replace").strip()
    parts = out.split(".")
    if proc.returncode != 0 or len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return out if (int(parts[0]), int(parts[1])) >= (3, 6) else None


def python_record(env):
    """The prepare step's record of the test interpreter: path, version, hash of its binary."""
    path, version = pick_python(env)
    if path is None:
        return None
    return {"path": path, "version": version, "sha256": file_sha256(os.path.realpath(path))}


def image_pythonpath(env, workdir):
    """The image's PYTHONPATH entries, absolute (relative ones are taken from the workdir, where
    the tests run), in order, each once."""
    out = []
    for p in (env.get("PYTHONPATH") or "").split(os.pathsep):
        if not p:
            continue
        p = os.path.normpath(os.path.join(workdir, p))
        if p not in out:
            out.append(p)
    return out


def child_env(ctx, home, extra=None):
    """The environment of every process the submission's code runs in: the image's (its `ENV`
    and what the setup commands exported, as the prepare step recorded it), with the test user's
    own HOME, and plugin autoloading off (the runner loads the image's plugins itself)."""
    env = dict(ctx.image_env)
    for k in ("HOSTNAME", "TERM"):
        if k in os.environ:
            env.setdefault(k, os.environ[k])
    env.update({"HOME": home, "USER": TEST_USER, "LOGNAME": TEST_USER, "PYTHONDONTWRITEBYTECODE": "1",
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PIP_NO_INPUT": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(extra or {})
    return env


class Drain(threading.Thread):
    """Reads a pipe to its end, keeping at most `cap` bytes (the tail, or the head when
    `keep_head`), and counting what it dropped."""

    def __init__(self, fd, cap, keep_head=False):
        threading.Thread.__init__(self)
        self.daemon = True
        self.fd = fd
        self.cap = cap
        self.keep_head = keep_head
        self.chunks = []
        self.size = 0
        self.dropped = 0

    def run(self):
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except OSError:
                break
            if not data:
                break
            if self.keep_head and self.size >= self.cap:
                self.dropped += len(data)
                continue
            self.chunks.append(data)
            self.size += len(data)
            while not self.keep_head and self.size > self.cap and len(self.chunks) > 1:
                self.size -= len(self.chunks[0])
                self.dropped += len(self.chunks[0])
                self.chunks.pop(0)
        os.close(self.fd)

    def data(self):
        return b"".join(self.chunks)


def run_as_test_user(ctx, argv, cwd, env, timeout, stdin_data=b"", event_fd=False, out_cap=256 * 1024,
                     extra_roots=()):
    """Runs argv as the test user; returns dict(exit, timed_out, seconds, output, output_dropped,
    events_raw, events_dropped, oom, disk_written). Every process of the user is killed when it
    ends, or as soon as it has written more than the disk limit (then `ctx.facts["disk_limit"]`
    says so)."""
    watch = disk_watch(ctx, extra_roots)
    proc, out, ev, start, oom_before = start_as_test_user(ctx, argv, cwd, env, event_fd, out_cap)
    try:
        proc.stdin.write(stdin_data)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    code, timed_out, disk_written = wait_within_limits(ctx, proc, watch, start + timeout)
    end_test_user_run(ctx, proc, code, out, ev)
    oom_after = cgroup_oom_kills()
    return {
        "exit": code, "timed_out": timed_out, "seconds": round(time.time() - start, 3),
        "output": out.data().decode("utf-8", "replace"), "output_dropped": out.dropped,
        "events_raw": ev.data() if ev is not None else b"", "events_dropped": ev.dropped if ev is not None else 0,
        "oom": oom_before is not None and oom_after is not None and oom_after > oom_before,
        "disk_written": disk_written,
    }


def start_as_test_user(ctx, argv, cwd, env, event_fd, out_cap):
    """Starts argv as the test user, its output on a pipe this process drains; with `event_fd`
    the write end of the result channel is inherited and passed as the last argument. Returns
    (process, output drain, result channel drain or None, start time, OOM kills before)."""
    r_ev = w_ev = None
    pass_fds = ()
    if event_fd:
        r_ev, w_ev = os.pipe()
        os.set_inheritable(w_ev, True)
        pass_fds = (w_ev,)
        argv = argv + [str(w_ev)]
    r_out, w_out = os.pipe()
    oom_before = cgroup_oom_kills()
    start = time.time()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=w_out, stderr=w_out,
                                pass_fds=pass_fds, preexec_fn=demote(ctx.uid, ctx.gid, ctx.spec.get("max_file_bytes")),
                                close_fds=True)
    except (OSError, subprocess.SubprocessError) as exc:
        for fd in (r_out, w_out, r_ev, w_ev):
            if fd is not None:
                os.close(fd)
        raise VerifyError("test_user_failed", "could not start %s as the test user: %r" % (argv[0], exc))
    os.close(w_out)
    if w_ev is not None:
        os.close(w_ev)
    out = Drain(r_out, out_cap)
    out.start()
    ev = None
    if r_ev is not None:
        ev = Drain(r_ev, MAX_EVENTS_BYTES, keep_head=True)
        ev.start()
    return proc, out, ev, start, oom_before


def wait_within_limits(ctx, proc, watch, deadline):
    """Waits until the process ends, the test user has written more than the disk limit (then
    every process of the user is killed and `ctx.facts["disk_limit"]` says so) or the deadline
    passes. Returns (exit code or None, timed out, bytes written when over the limit)."""
    timed_out = False
    code = None
    disk_written = None
    while True:
        try:
            code = proc.wait(timeout=max(0.01, min(DISK_POLL_S, deadline - time.time())))
            break
        except subprocess.TimeoutExpired:
            pass
        if watch is not None:
            disk_written = watch.over()
            if disk_written is not None:
                kill_all(ctx.uid)
                ctx.facts["disk_limit"] = {"limit_bytes": watch.limit, "written_bytes": disk_written}
                break
        if time.time() >= deadline:
            timed_out = True
            break
    return code, timed_out, disk_written


def end_test_user_run(ctx, proc, code, out, ev):
    """Nothing the submission started may outlive it, hold the pipes, or write after the end."""
    kill_all(ctx.uid)
    if code is None:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    out.join(10)
    if ev is not None:
        ev.join(10)


# ---------------------------------------------------------------------------------------------
# The steps

class Ctx(object):
    """What the steps share: the spec, the facts gathered so far, the test user."""

    def __init__(self, spec):
        self.spec = spec
        self.workdir = spec.get("workdir") or "/workspace"
        self.family = spec.get("family") or ""
        self.doc2repo = self.family.lower() == "doc2repo"
        self.facts = {"flags": {"tests_restored": [], "files_removed": [], "config_reverted": [],
                                "kept_for_gold": [], "suspicious": [], "forgery": []},
                      "logs": {}, "timings": {}}
        self.uid = self.gid = None
        self.git = Git(self.workdir)
        self.base_listing = None
        self.algo_len = 40
        self.state = {}
        self.private = [p for p in spec.get("private_paths", []) if p]
        # The image's environment and interpreter (settle_environment, after the prepare
        # record is read).
        self.image_env = {}
        self.image_paths = []
        self.python = sys.executable
        # Doc2Repo: the hidden suite's manifest (beyondswe_manifest.py), read before the install.
        self.manifest = None
        # What `git apply` said the submission's patch touches (step_apply).
        self.applied_paths = []
        # Someone had the container before the verifier (Harbor's agent, as root): nothing it
        # could have rewritten (the prepare record, the interpreter) is taken on trust.
        self.shared_container = bool(spec.get("shared_container"))

    @property
    def flags(self):
        return self.facts["flags"]

    def timed(self, name, since):
        self.facts["timings"][name] = round(self.facts["timings"].get(name, 0) + time.time() - since, 3)

    def suspicious(self, msg):
        if msg not in self.flags["suspicious"]:
            self.flags["suspicious"].append(msg)

    def forgery(self, msg):
        if msg not in self.flags["forgery"]:
            self.flags["forgery"].append(msg)


def step_lock(ctx):
    """Leftover processes are killed (Harbor: the agent's daemons), the grader's files made
    root-only, the test user made, the prepare step's facts read."""
    killed = kill_leftovers()
    if killed:
        ctx.facts["leftover_processes_killed"] = killed
    for p in ctx.private:
        if os.path.isdir(p) and not os.path.islink(p):
            os.chown(p, 0, 0)
            os.chmod(p, 0o700)
    state_dir = ctx.spec.get("state_dir")
    if state_dir:
        path = os.path.join(state_dir, "prepare.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as fh:
                ctx.state = json.load(fh)
        setup = os.path.join(state_dir, "setup.json")
        if os.path.isfile(setup):
            with open(setup, encoding="utf-8") as fh:
                ctx.facts["setup"] = json.load(fh)
    ctx.facts["prepared"] = bool(ctx.state)
    ctx.uid, ctx.gid = ensure_test_user()
    if ctx.git.available():
        before = ctx.git.sanitize_config()
        expected = ctx.state.get("git_config_sha256")
        if expected and before != expected:
            ctx.suspicious(".git/config was changed after the prepare step (replaced by a minimal one)")


def settle_environment(ctx):
    """The tests' environment and interpreter: the prepare step's record of the image (never
    the agent's shell, never a file in the workdir); without one, this process's environment
    less what loads code, and the interpreter its PATH picks."""
    recorded = ctx.state.get("env")
    ctx.image_env = dict(recorded) if isinstance(recorded, dict) else fallback_env()
    py = ctx.state.get("python") or {}
    path = py.get("path")
    if path and os.path.isfile(path):
        # Offline the container is fresh from the prepared image: only where someone had the
        # container before (Harbor's agent) is the interpreter's binary hashed again.
        if (ctx.shared_container and py.get("sha256")
                and file_sha256(os.path.realpath(path)) != py["sha256"]):
            ctx.suspicious("the test interpreter %s is not the one the prepare step recorded" % path)
        ctx.python = path
    else:
        ctx.python = ctx.spec.get("python") or pick_python(ctx.image_env)[0] or sys.executable
    ctx.image_paths = image_pythonpath(ctx.image_env, ctx.workdir)
    ctx.facts["environment"] = {"recorded": isinstance(recorded, dict), "python": ctx.python,
                                "pythonpath": ctx.image_paths}


def capture_submission(ctx, dest):
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
            return subprocess.run(["git", "--git-dir", git_dir, "--work-tree", workdir] + GIT_OPTS + args,
                                  cwd=workdir, env=env, stderr=subprocess.PIPE, timeout=600, **kw)

        if base is None:
            proc = subprocess.run(["git", "init", "-q", "--bare", git_dir], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=60)
            if proc.returncode != 0:
                raise VerifyError("capture_failed", proc.stderr.decode("utf-8", "replace").strip())
            against = git(["hash-object", "-t", "tree", "-w", "--stdin"], input=b"", stdout=subprocess.PIPE)
            against = against.stdout.decode().strip()
        else:
            git(["read-tree", base], check=True)
            against = base
        proc = git(["add", "-A", "-f", "--", ".", ":(exclude,glob)**/__pycache__/**", ":(exclude,glob)**/*.pyc"])
        if proc.returncode != 0:
            raise VerifyError("capture_failed", proc.stderr.decode("utf-8", "replace").strip())
        image_files = []
        for rel, digest in sorted((ctx.state.get("baseline_untracked") or {}).items()):
            try:
                if file_sha256(os.path.join(workdir, rel)) == digest:
                    image_files.append(rel)
            except OSError:
                pass
        if image_files:
            listed = os.path.join(tmp, "image-files")
            with open(listed, "wb") as fh:
                fh.write(b"".join((":(literal)" + rel).encode("utf-8", "surrogateescape") + b"\0" for rel in image_files))
            git(["rm", "-q", "--cached", "--ignore-unmatch", "--pathspec-from-file=" + listed, "--pathspec-file-nul"])
        with open(dest, "wb") as out:
            proc = git(["diff", "--cached", "--binary", "--no-color", "--no-ext-diff", "--no-renames", against],
                       stdout=out)
        if proc.returncode != 0:
            raise VerifyError("capture_failed", proc.stderr.decode("utf-8", "replace").strip())
        return os.path.getsize(dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def base_listing(ctx):
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


def patch_paths(ctx, patch):
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
        if text and not re.match(r"^\d+\s+\d+$", text) and not text.startswith(("create mode", "delete mode", "mode change", "rename", "copy")):
            paths.append(text)
    return paths, ""


def step_apply(ctx):
    """`git apply`, strict, then whitespace-tolerant; nothing else. A patch that touches .git in
    any spelling is refused."""
    patch = ctx.spec.get("patch")
    if not patch:
        return True
    t = time.time()
    paths, err = patch_paths(ctx, patch)
    ctx.applied_paths = paths or []
    for p in paths or []:
        parts = [c.lower() for c in p.replace("\\", "/").split("/")]
        if ".git" in parts or any(c.startswith(".git") and c.rstrip(". ") == ".git" for c in parts):
            ctx.facts["apply"] = {"ok": False, "how": None, "log": "the patch touches `%s` inside .git" % p}
            ctx.timed("apply", t)
            return False
    attempts = [("git apply", ["apply", "--verbose", "--whitespace=nowarn", patch]),
                ("git apply --ignore-whitespace", ["apply", "--verbose", "--whitespace=nowarn",
                                                   "--ignore-space-change", "--ignore-whitespace", patch])]
    text = err
    for how, args in attempts:
        if ctx.git.available():
            proc = ctx.git.run(args, check=False)
        else:
            proc = subprocess.run(["git"] + GIT_OPTS + args, cwd=ctx.workdir, env=ctx.git.env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        text += (proc.stdout + proc.stderr).decode("utf-8", "replace")
        if proc.returncode == 0:
            ctx.facts["apply"] = {"ok": True, "how": how, "log": tail(text)}
            ctx.flags["applied_with"] = how
            ctx.timed("apply", t)
            return True
    ctx.facts["apply"] = {"ok": False, "how": None, "log": tail(text)}
    ctx.timed("apply", t)
    return False


def import_dirs(ctx):
    """Directories of the repository the interpreter imports top-level names from."""
    dirs = [""]
    if os.path.isdir(os.path.join(ctx.workdir, "src")):
        dirs.append("src")
    for p in ctx.state.get("clean_sys_path", []) + ctx.image_paths:
        rp = os.path.realpath(p)
        root = os.path.realpath(ctx.workdir)
        if rp.startswith(root + os.sep):
            rel = os.path.relpath(rp, root)
            if rel not in dirs:
                dirs.append(rel)
    return dirs


def step_scrub(ctx, root=None, label="", loaders=True):
    """Removes untracked loaders: start-up hooks (any form), metadata, bytecode, extension
    modules and egg-links the base did not have, and top-level names shadowing pytest, pluggy or
    the standard library. Each removal is flagged. `loaders=False` (after a Doc2Repo install:
    the metadata and bytecode pip made from the submission's own sources) leaves the metadata,
    bytecode and extensions, which load nothing but the submission's code."""
    t = time.time()
    root = root or ctx.workdir
    in_workdir = root == ctx.workdir
    listing = base_listing(ctx) if in_workdir else {}
    baseline = ctx.state.get("baseline_untracked", {}) if in_workdir else {}
    blind = in_workdir and not ctx.state
    tree = walk_tree(root)
    removed = []
    gone = set()
    # Shallowest first: a directory removed takes everything below it along.
    for rel in sorted(tree, key=lambda r: (r.count("/"), r)):
        if any(rel.startswith(g + "/") for g in gone):
            continue
        if rel in listing:
            continue
        if tree[rel] == "dir":
            if scrubs_dir(root, rel, baseline, blind, loaders):
                remove_entry(os.path.join(root, rel))
                gone.add(rel)
                removed.append(rel + "/")
            continue
        if scrubs_file(root, rel, baseline, blind, loaders):
            remove_entry(os.path.join(root, rel))
            removed.append(rel)
    dirs = import_dirs(ctx) if in_workdir else [""]
    remove_shadowing_names(root, dirs, tree, listing, baseline, gone, removed)
    prefix = label + ":" if label else ""
    ctx.flags["files_removed"].extend(prefix + r for r in removed)
    ctx.timed("scrub", t)


def scrubs_dir(root, rel, baseline, blind, loaders):
    """Whether the scrub removes the untracked directory root/rel: a start-up hook in directory
    form, or (with `loaders`) bytecode or metadata that is not the image's own, unchanged."""
    name = rel.rsplit("/", 1)[-1]
    metadata = any(name.endswith(s) for s in RULES["metadata_dir_suffixes"])
    startup_dir = name.split(".", 1)[0] in RULES["startup_stems"]
    if not loaders and not startup_dir:
        return False
    if not (startup_dir or name in RULES["bytecode_dirs"] or metadata):
        return False
    in_baseline = in_listing(baseline, rel)
    if in_baseline and not dir_changed(root, rel, baseline):
        return False
    if metadata and blind and not declares_pytest_plugin(os.path.join(root, rel)):
        # No record of what the image had (a Harbor image used as it is): metadata
        # that loads no pytest plugin may be the image's own editable install.
        return False
    return True


def scrubs_file(root, rel, baseline, blind, loaders):
    """Whether the scrub removes the untracked file root/rel: a start-up hook, or (with
    `loaders`) a loader (bytecode, an extension module, an egg-link, a file in a metadata or
    bytecode directory) that is not the image's own, unchanged."""
    kind = classify(rel)
    if not (kind == "startup" or (kind == "loader" and loaders)):
        return False
    if kind == "loader" and rel in baseline and baseline[rel] == file_sha256(os.path.join(root, rel)):
        return False
    if blind and kind == "loader" and rel.endswith(tuple(RULES["extension_suffixes"])):
        # Without the record an image's in-place build cannot be told apart; extension
        # modules that shadow tests or pytest are removed below all the same.
        return False
    return True


def remove_shadowing_names(root, dirs, tree, listing, baseline, gone, removed):
    """Removes the untracked top-level modules and packages in the import directories `dirs`
    that would shadow a protected module (pytest, pluggy and their kin, the grader's own) or the
    standard library; adds them to `gone` and `removed`."""
    protected = set(RULES["protected_modules"]) | stdlib_names()
    for d in dirs:
        full, names = list_dir(root, d)
        for name in names:
            rel = d + "/" + name if d else name
            if rel in listing or rel in gone or name == ".git" or module_name_of(name) not in protected:
                continue
            if not (name.endswith((".py", ".pyc", ".so", ".pyd")) or os.path.isdir(os.path.join(full, name))):
                continue
            if rel in baseline:
                continue
            if any(p.startswith(rel + "/") for p in listing):
                continue
            remove_entry(os.path.join(full, name))
            gone.add(rel)
            removed.append(rel + ("/" if tree.get(rel) == "dir" else ""))


def declares_pytest_plugin(path):
    """Whether a metadata directory declares a pytest11 entry point (or cannot be read)."""
    for name in ("entry_points.txt",):
        f = os.path.join(path, name)
        if os.path.islink(f):
            return True
        if os.path.isfile(f):
            try:
                with open(f, "rb") as fh:
                    if b"pytest11" in fh.read(1 << 20):
                        return True
            except OSError:
                return True
    return False


def dir_changed(root, rel, baseline):
    for path, digest in baseline.items():
        if path.startswith(rel + "/"):
            full = os.path.join(root, path)
            if not lexists(full) or file_sha256(full) != digest:
                return True
    for r, kind in walk_tree(os.path.join(root, rel), False).items():
        if kind != "dir" and (rel + "/" + r) not in baseline:
            return True
    return False


SECTION_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def split_sections(text):
    blocks = [[None, []]]
    for line in text.splitlines(True):
        m = SECTION_HEADER.match(line)
        if m:
            blocks.append([m.group(1).strip().strip('"'), [line]])
        else:
            blocks[-1][1].append(line)
    return blocks


def is_pytest_section(name, filename):
    if name is None:
        return False
    if filename == "setup.cfg":
        return name in ("tool:pytest", "pytest")
    return name == "tool.pytest" or name.startswith("tool.pytest.")


def revert_sections(current, base, filename):
    kept = [b for b in split_sections(current) if not is_pytest_section(b[0], filename)]
    base_sections = [b for b in split_sections(base or "") if is_pytest_section(b[0], filename)]
    text = "".join("".join(lines) for _, lines in kept)
    if base_sections:
        if text and not text.endswith("\n"):
            text += "\n"
        text += "".join("".join(lines) for _, lines in base_sections)
    return text


def pytest_config_of(text, path):
    """The pytest settings a pyproject.toml or setup.cfg really carries, as parsed; None when
    the file does not parse (or no parser is available, before Python 3.11 for TOML)."""
    name = path.rsplit("/", 1)[-1]
    try:
        if name == "pyproject.toml":
            import tomllib
            data = tomllib.loads(text)
            return json.dumps(data.get("tool", {}).get("pytest"), sort_keys=True, default=str)
        import configparser
        cp = configparser.RawConfigParser()
        cp.read_string(text)
        return json.dumps(dict((sec, dict(cp.items(sec))) for sec in cp.sections()
                               if sec in ("tool:pytest", "pytest")), sort_keys=True)
    except Exception:  # noqa: BLE001
        return None


def shadow_siblings(root, rel):
    """Untracked entries Python would import instead of the test module root/rel: a package or
    namespace directory, bytecode or an extension module of the same name beside it."""
    d, name = os.path.split(rel)
    stem = name[:-3] if name.endswith(".py") else name
    out = []
    for e in list_dir(root, d)[1]:
        if e == name:
            continue
        if e == stem or (e.startswith(stem + ".") and e.endswith((".so", ".pyd", ".pyc", ".pyw"))):
            out.append(os.path.join(d, e) if d else e)
    return out


def step_restore(ctx):
    """Covered paths back to the base (from hash-checked objects); untracked covered files
    removed; the dataset's f2p patch and script applied on the pristine baseline."""
    t = time.time()
    listing = base_listing(ctx)
    keep = set(ctx.spec.get("keep_paths", []))
    f2p = set(ctx.spec.get("f2p_paths", []))
    restored_ok = restore_tracked(ctx, listing, keep, f2p)
    remove_untracked_covered(ctx, listing, keep, f2p)
    ctx.facts["locked"] = [p for p in restored_ok if classify(p) in ("test", "config", "section_config")]
    remove_shadows_of_locked(ctx, listing)
    apply_f2p_patch(ctx)
    write_f2p_script(ctx, listing)
    ctx.timed("restore", t)


def restore_tracked(ctx, listing, keep, f2p):
    """Every covered path of the base back to its blob (pytest sections only, for a file with
    sections of its own); returns the covered paths that are now as the base has them."""
    objects = Objects(ctx.git) if listing else None
    restored_ok = []
    try:
        for path in sorted(listing):
            kind = classify(path)
            if kind is None and path not in f2p:
                continue
            mode, oid = listing[path]
            current, cur_mode = blob_sha(os.path.join(ctx.workdir, path), ctx.algo_len)
            if current == oid and cur_mode == mode and not parent_is_link(ctx.workdir, path):
                restored_ok.append(path)
                continue
            if path in keep and path not in f2p:
                ctx.flags["kept_for_gold"].append(path)
                continue
            data = objects.blob(oid)
            if kind == "section_config" and path not in f2p and current is not None and cur_mode != "120000":
                revert_pytest_sections(ctx, path, data, cur_mode)
                restored_ok.append(path)
                continue
            safe_write(ctx.workdir, path, data, mode)
            (ctx.flags["config_reverted"] if kind == "config" else ctx.flags["tests_restored"]).append(path)
            restored_ok.append(path)
    finally:
        if objects is not None:
            objects.close()
    return restored_ok


def revert_pytest_sections(ctx, path, data, cur_mode):
    """The pytest sections of a pyproject.toml or setup.cfg back to the base's (`data`), the
    rest of the file as the submission has it."""
    with open(os.path.join(ctx.workdir, path), "rb") as fh:
        text = fh.read().decode("utf-8", "surrogateescape")
    base_text = data.decode("utf-8", "surrogateescape")
    new = revert_sections(text, base_text, path.rsplit("/", 1)[-1])
    if pytest_config_of(new, path) != pytest_config_of(base_text, path):
        # pytest settings the section rule cannot see (dotted keys, a [tool] table):
        # the whole file goes back to the base.
        new = base_text
    if new != text:
        safe_write(ctx.workdir, path, new.encode("utf-8", "surrogateescape"), cur_mode)
        ctx.flags["config_reverted"].append(path)


def remove_untracked_covered(ctx, listing, keep, f2p):
    """Covered files the base does not have are removed, but for those the image itself had
    (never configuration, start-up hooks or conftests) and those kept for the gold patch."""
    baseline = ctx.state.get("baseline_untracked", {})
    for rel, kind in sorted(walk_tree(ctx.workdir).items()):
        if kind == "dir" or rel in listing:
            continue
        c = classify(rel)
        if c is None and rel not in f2p:
            continue
        if not lexists(os.path.join(ctx.workdir, rel)):
            continue
        name = rel.rsplit("/", 1)[-1]
        if rel in baseline and c not in ("config", "startup") and name not in RULES["conftest_names"]:
            continue
        if rel in keep and rel not in f2p:
            ctx.flags["kept_for_gold"].append(rel)
            continue
        remove_entry(os.path.join(ctx.workdir, rel))
        ctx.flags["files_removed"].append(rel)


def remove_shadows_of_locked(ctx, listing):
    """Untracked entries that Python would import instead of a locked test module."""
    for p in ctx.facts["locked"]:
        if p.endswith(".py"):
            for sib in shadow_siblings(ctx.workdir, p):
                if not in_listing(listing, sib) and lexists(os.path.join(ctx.workdir, sib)):
                    remove_entry(os.path.join(ctx.workdir, sib))
                    ctx.flags["files_removed"].append(sib)


def apply_f2p_patch(ctx):
    """The dataset's f2p patch, on the restored tree; the paths it touches are locked too."""
    patch = ctx.spec.get("f2p_patch")
    if patch:
        proc = ctx.git.run(["apply", "--verbose", "--whitespace=nowarn", patch], check=False)
        if proc.returncode != 0:
            raise VerifyError("f2p_patch_failed", "the dataset's f2p patch does not apply:\n" +
                              tail((proc.stdout + proc.stderr).decode("utf-8", "replace"), 4000))
        ctx.facts["locked"].extend(patch_paths(ctx, patch)[0] or [])


def write_f2p_script(ctx, listing):
    """The dataset's f2p script as test_fail_to_pass.py, locked, with nothing beside it that
    Python would import in its place."""
    script = ctx.spec.get("f2p_script")
    if script:
        with open(script, "rb") as fh:
            safe_write(ctx.workdir, "test_fail_to_pass.py", fh.read(), "100644")
        ctx.facts["locked"].append("test_fail_to_pass.py")
        for sib in shadow_siblings(ctx.workdir, "test_fail_to_pass.py"):
            if in_listing(listing, sib):
                continue
            remove_entry(os.path.join(ctx.workdir, sib))
            ctx.flags["files_removed"].append(sib)


def in_listing(listing, rel):
    """Whether the base tracks `rel` as a file or as a directory of files."""
    return rel in listing or any(k.startswith(rel + "/") for k in listing)


def parent_is_link(root, rel):
    cur = root
    for part in rel.split("/")[:-1]:
        cur = os.path.join(cur, part)
        if os.path.islink(cur) or not os.path.isdir(cur):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# Canaries (beyondswe_canaries.py): clones of real tests the tests' process cannot tell apart

def canaries_module():
    return sibling("beyondswe_canaries", "canaries")


def plan_canaries(ctx, modules, rng, plant=True, after_only=False):
    """Plans a twin and a poison of one test in each of `modules` ((path under ctx.canary_root,
    preferred (class path, name) pairs)), and plants them unless `plant` is false (the dataset's
    own patches: the plan is only counted, for calibrate). Returns the records and the plan's
    facts: how many templates were found, of which shapes, and why none where none."""
    cm = canaries_module()
    records, shapes, modules_read = [], [], 0
    for path, preferred in modules:
        full = os.path.join(ctx.canary_root, path)
        try:
            with open(full, "rb") as fh:
                source = fh.read()
            st = os.stat(full)
        except OSError:
            continue
        modules_read += 1
        try:
            planned = cm.plan(source, rng, preferred, after_only)
        except Exception as exc:  # noqa: BLE001 - a module the planner cannot handle gets no canary
            ctx.suspicious("no canary could be planned in %s: %r" % (path, exc))
            planned = None
        if planned is None:
            continue
        data, record = planned
        record["module"] = path
        shapes.append(record["shape"])
        records.append(record)
        if plant:
            safe_write(ctx.canary_root, path, data, "100755" if st.st_mode & 0o100 else "100644")
            os.utime(full, (st.st_atime, st.st_mtime))
    plan = {"planted": plant, "templates": len(records), "shapes": shapes, "modules": modules_read}
    if not records:
        plan["none_because"] = ("no test module of the ids could be read" if not modules_read else
                                "no test of the modules read can be cloned (a top-level assertion "
                                "to negate, no return or yield, not bound to its own name)")
    return (records if plant else []), plan


def canary_modules_for_ids(f2p, p2p):
    """Test modules of the ids, F2P's first, each with its preferred templates: the (class path,
    name) pairs its F2P ids name, then those its P2P ids name."""
    modules = []
    seen = {}
    for tier, ids in enumerate((f2p, p2p)):
        for test_id in ids:
            path, _, rest = test_id.partition("::")
            if not path.endswith(".py") or not rest:
                continue
            parts = rest.split("[", 1)[0].split("::")
            if path not in seen:
                seen[path] = ([], [])
                modules.append((path, seen[path]))
            seen[path][tier].append((tuple(parts[:-1]), parts[-1]))
    return modules


def with_canary_ids(rng, ids, records):
    """The run's ids with each canary at a random place after its template (or after the last
    id of its module): where the ids are, nothing tells a canary by its place."""
    cm = canaries_module()
    out = list(ids)
    for r in records:
        tmpl, twin, poison = cm.node_ids(r["module"], r)
        for cid in (twin, poison):
            after = [i for i, x in enumerate(out) if x == tmpl or x.startswith(tmpl + "[")]
            if not after:
                after = [i for i, x in enumerate(out) if x.startswith(r["module"] + "::")] or [len(out) - 1]
            out.insert(rng.randint(after[0] + 1, len(out)), cid)
    return out


def judge_canaries(ctx, records, outcomes, solo=None):
    """Facts about the canaries (beyondswe_canaries.judge), their proof recorded as forgery and
    their flaky contradictions as suspicious."""
    cm = canaries_module()
    facts = []
    for rec in records:
        fact = cm.judge(rec["module"], rec, outcomes, solo)
        for b in fact["proof"]:
            ctx.forgery(b)
        for f in fact["flaky"]:
            ctx.suspicious(f)
        facts.append(fact)
    return facts


def solo_runner(run_one):
    """solo(ids) for the canaries' judge: each id run alone in a fresh runner (`run_one(ids)`)."""
    def solo(ids):
        out = {}
        for test_id in ids:
            out.update(run_one([test_id]))
        return out
    return solo


# ---------------------------------------------------------------------------------------------
# Running the tests

def unescape_id(test_id):
    if "\\" not in test_id:
        return test_id
    try:
        return test_id.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except Exception:  # noqa: BLE001
        return test_id


def junit_key(node_id):
    file_part, _, rest = node_id.partition("::")
    module = (file_part[:-3] if file_part.endswith(".py") else file_part).replace("/", ".")
    if not rest:
        return module
    i = rest.find("[")
    names, params = (rest, "") if i < 0 else (rest[:i], rest[i:])
    return "%s.%s%s" % (module, names.replace("::", "."), params)


def junit_outcomes(path):
    """key -> outcome from pytest's JUnit report (written by the test process; a cross-check)."""
    try:
        if os.path.getsize(path) > 64 * 1024 * 1024:
            return None
        import xml.etree.ElementTree as ET
        tree = ET.parse(path)
    except Exception:  # noqa: BLE001
        return None
    out = {}
    for case in tree.iter("testcase"):
        key = unescape_id("%s.%s" % (case.get("classname", ""), case.get("name", "")))
        tags = set(child.tag for child in case)
        if "failure" in tags or "error" in tags:
            outcome = "failed"
        elif "skipped" in tags:
            outcome = "skipped"
        else:
            outcome = "passed"
        if out.get(key, "passed") == "passed":
            out[key] = outcome
    return out


RANK = {"failed": 5, "error": 5, "skipped": 3, "passed": 1}


def aggregate(events_raw, ctx):
    """Events from the runner's pipe -> (outcome per node id, collect errors, end exit code,
    start event, collected event, failure message per node id). Malformed lines and
    contradicting reports are proof of tampering: only the runner writes to that pipe."""
    phases = {}
    order = []
    collect_errors = []
    end = None
    start = None
    collected = None
    for kind, ev in channel_events(events_raw, ctx):
        if kind == "start":
            if start is not None:
                ctx.forgery("the result channel was started twice")
            start = ev
        elif kind == "report":
            record_report(ctx, phases, order, ev)
        elif kind == "collect_error":
            collect_errors.append({"nodeid": ev.get("nodeid"), "message": str(ev.get("message", ""))[-2000:]})
        elif kind == "collected":
            collected = ev
            check_plugins(ctx, ev.get("plugins", []))
        elif kind == "finding":
            msg = "%s: %s" % (ev.get("kind"), ev.get("detail"))
            (ctx.forgery if ev.get("proof") else ctx.suspicious)(msg)
        elif kind == "end":
            if end is not None:
                ctx.forgery("the result channel was ended twice")
            end = ev.get("exit")
    outcomes = dict((node, outcome_of_phases(phases[node])) for node in order)
    return outcomes, collect_errors, end, start, collected, dict((n, phases[n]["message"]) for n in order if phases[n]["message"])


def channel_events(events_raw, ctx):
    """(kind, event) for each line of the result channel, in order; a line the runner did not
    write is proof of tampering (recorded as it is reached)."""
    for raw in events_raw.split(b"\n"):
        if not raw.strip():
            continue
        try:
            ev = json.loads(raw.decode("ascii"))
            kind = ev["e"]
        except Exception:  # noqa: BLE001
            ctx.forgery("the result channel carried a line the runner did not write: %r" % raw[:200])
            continue
        yield kind, ev


def record_report(ctx, phases, order, ev):
    """One test report into `phases` (node id -> outcome per phase, xfail, first message): the
    worse outcome of a phase reported twice counts, and the contradiction is proof."""
    node, when = str(ev.get("nodeid")), str(ev.get("when"))
    outcome = str(ev.get("outcome"))
    if outcome == "rerun":
        return
    entry = phases.get(node)
    if entry is None:
        entry = phases[node] = {"xfail": False, "message": ""}
        order.append(node)
    if when in entry and entry[when] != outcome:
        ctx.forgery("%s: two %s reports (%s, then %s)" % (node, when, entry[when], outcome))
    prev = entry.get(when)
    if prev is None or RANK.get(outcome, 5) > RANK.get(prev, 5):
        entry[when] = outcome
    entry["xfail"] = entry["xfail"] or bool(ev.get("xfail"))
    if ev.get("message") and not entry["message"]:
        entry["message"] = str(ev["message"])[-2000:]


def outcome_of_phases(entry):
    """A test's outcome from its phases' reports."""
    if entry.get("setup") == "failed" or entry.get("teardown") == "failed":
        return "error"
    if entry.get("setup") == "skipped":
        return "skipped"
    if entry.get("call") == "passed":
        return "xpassed" if entry["xfail"] else "passed"
    if entry.get("call") == "failed":
        return "failed"
    if entry.get("call") == "skipped":
        return "xfailed" if entry["xfail"] else "skipped"
    return "error"


def check_plugins(ctx, plugins):
    """Conftest modules must be files the restore step left (a conftest made during the run is
    proof); other plugin files inside the repository are reported."""
    allowed = set(os.path.realpath(os.path.join(ctx.canary_root, p)) for p in ctx.facts.get("conftests", []))
    repo = os.path.realpath(ctx.workdir)
    for f in plugins:
        if not f or f == "None":
            continue
        real = os.path.realpath(f) if f.startswith("/") else f
        if os.path.basename(real) == "conftest.py":
            if real not in allowed:
                ctx.forgery("a conftest the restore step did not leave was loaded: %s" % f)
        elif real.startswith(repo + os.sep) and not real.startswith(os.path.realpath(ctx.spec.get("runner_dir", "/nonexistent"))):
            ctx.suspicious("a pytest plugin from the repository was registered: %s" % f)


def run_tests(ctx, ids, cwd, rootdir, extra_args, test_paths, prepend, timeout):
    """Runs pytest as the test user through the runner; returns the run's facts."""
    t = time.time()
    rundir = tempfile.mkdtemp(prefix="bsw-", dir="/tmp")
    os.chmod(rundir, 0o755)
    ctx.spec["runner_dir"] = rundir
    runner = os.path.join(rundir, RUNNER_NAME)
    shutil.copyfile(os.path.join(HERE, RUNNER_NAME), runner)
    os.chmod(runner, 0o644)
    home = os.path.join(rundir, "home")
    os.mkdir(home, 0o700)
    os.chown(home, ctx.uid, ctx.gid)
    jdir = os.path.join(rundir, "j%d" % random.SystemRandom().randint(10 ** 8, 10 ** 9))
    os.mkdir(jdir, 0o700)
    os.chown(jdir, ctx.uid, ctx.gid)
    junit = os.path.join(jdir, "junit.xml")
    args = ["-o", "addopts=", "-p", "no:cacheprovider", "--rootdir=" + rootdir, "--confcutdir=" + rootdir,
            "-q", "-rN", "--continue-on-collection-errors", "--junitxml=" + junit] + extra_args
    config = {
        "args": args, "ids": ids, "repo_paths": ctx.repo_paths, "test_paths": test_paths,
        "private_paths": ctx.private + ([ctx.spec["tests_dir"]] if ctx.spec.get("tests_dir") else []),
        "protected_modules": RULES["protected_modules"], "plugins": ctx.plugins,
        "prepend_paths": prepend, "image_paths": ctx.image_paths, "short_messages": ctx.doc2repo,
    }
    python = ctx.python
    res = run_as_test_user(ctx, [python, "-I", runner], cwd, child_env(ctx, home), timeout,
                           json.dumps(config).encode("utf-8"), event_fd=True)
    ctx.facts["timings"]["runner"] = res["seconds"]
    outcomes, collect_errors, end, start, collected, messages = aggregate(res["events_raw"], ctx)
    if res["events_dropped"]:
        ctx.forgery("the result channel carried %d bytes more than any run writes" % res["events_dropped"])
    if start is None and res["exit"] is not None and not res["timed_out"]:
        ctx.facts["runner_start_missing"] = True
    if start is not None and not start.get("audit_hook"):
        ctx.suspicious("this Python has no audit hooks (3.8+): code writes were not watched")
    if end is not None and res["exit"] is not None and (end & 0xFF) != (res["exit"] & 0xFF):
        ctx.forgery("the runner reported exit code %s but the process exited %s" % (end, res["exit"]))
    jout = junit_outcomes(junit) if lexists(junit) and not os.path.islink(junit) else None
    shutil.rmtree(rundir, ignore_errors=True)
    ctx.timed("tests", t)
    if start is not None:
        ctx.facts["timings"]["runner_ready"] = start.get("ready_s")
    return {"outcomes": outcomes, "collect_errors": collect_errors, "end": end, "exit": res["exit"],
            "timed_out": res["timed_out"], "oom": res["oom"], "junit": jout, "output": res["output"],
            "messages": messages, "collected": (collected or {}).get("count"), "started": start is not None}


def match(ids, outcomes):
    exact = outcomes
    loose = dict((unescape_id(k), v) for k, v in outcomes.items())
    out = {}
    for test_id in ids:
        if test_id in exact:
            out[test_id] = exact[test_id]
        else:
            out[test_id] = loose.get(unescape_id(test_id), "not_run")
    return out


def junit_says_passed(junit, node_id):
    if junit is None:
        return False
    return junit.get(unescape_id(junit_key(node_id))) == "passed"


def required_outcomes(run, ids):
    """Outcome per required id; a pass that pytest's own JUnit report does not confirm is
    `disputed`."""
    out = match(ids, run["outcomes"])
    for test_id, outcome in out.items():
        if outcome in ("passed", "xpassed") and not junit_says_passed(run["junit"], resolve_node(test_id, run["outcomes"])):
            out[test_id] = "disputed"
    return out


def resolve_node(test_id, outcomes):
    if test_id in outcomes:
        return test_id
    u = unescape_id(test_id)
    for k in outcomes:
        if unescape_id(k) == u:
            return k
    return test_id


# ---------------------------------------------------------------------------------------------
# Plugins and the clean interpreter

LIST_PLUGINS = r"""
import json, sys
out = []
try:
    from importlib import metadata
    eps = metadata.entry_points()
    group = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
    for ep in group:
        out.append({"name": ep.name, "module": ep.value.split(":", 1)[0].strip()})
except Exception:
    try:
        import pkg_resources
        for ep in pkg_resources.iter_entry_points("pytest11"):
            out.append({"name": ep.name, "module": ep.module_name})
    except Exception:
        pass
seen = set()
uniq = []
for p in out:
    if p["module"] not in seen:
        seen.add(p["module"])
        uniq.append(p)
print(json.dumps({"plugins": uniq, "sys_path": sys.path}))
"""


def clean_interpreter_facts(python):
    """Plugins and sys.path as the image's interpreter sees them from outside the repository."""
    proc = subprocess.run([python, "-I", "-c", LIST_PLUGINS], cwd="/", stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, timeout=120)
    try:
        data = json.loads(proc.stdout.decode("utf-8").strip().splitlines()[-1])
    except Exception:  # noqa: BLE001
        data = {"plugins": [], "sys_path": []}
    return data


# ---------------------------------------------------------------------------------------------
# The two families

def load_clean_facts(ctx):
    """The plugins and sys.path of the clean image: recorded by the prepare step; without it
    (a Harbor image used as it is) asked now, after the scrub, from outside the repository."""
    if "plugins" not in ctx.state:
        clean = clean_interpreter_facts(ctx.python)
        ctx.state["plugins"] = clean.get("plugins", [])
        ctx.state["clean_sys_path"] = clean.get("sys_path", [])
    ctx.plugins = ctx.state["plugins"]


def grade_issue(ctx):
    spec = ctx.spec
    gold_kinds = gold_static_kinds(ctx)
    if not step_apply(ctx):
        return
    step_scrub(ctx)
    load_clean_facts(ctx)
    step_restore(ctx)
    step_static(ctx, gold_kinds)
    f2p, p2p = spec.get("fail_to_pass", []), spec.get("pass_to_pass", [])
    ids = f2p + [i for i in p2p if i not in f2p]
    if not ids:
        raise VerifyError("no_test_ids", "the instance has no FAIL_TO_PASS or PASS_TO_PASS ids")
    ctx.canary_root = ctx.workdir
    rng = random.SystemRandom()
    t = time.time()
    records, ctx.facts["canary_plan"] = plan_canaries(ctx, canary_modules_for_ids(f2p, p2p)[:2], rng,
                                                      plant=spec.get("canaries", True))
    ctx.timed("canaries", t)
    t = time.time()
    locked = set(ctx.facts.get("locked", []))
    locked.update(r["module"] for r in records)
    tree = walk_tree(ctx.workdir)
    conftests = [p for p, k in tree.items() if k == "file" and p.rsplit("/", 1)[-1] in RULES["conftest_names"]]
    ctx.facts["conftests"] = conftests
    locked.update(conftests)
    lock_sub_owned(ctx, sorted(locked))
    ctx.timed("hand_over", t)
    run_ids = with_canary_ids(rng, ids, records)
    test_files = [os.path.join(ctx.workdir, p) for p in sorted(locked) if p.endswith(".py")]
    timeout = spec.get("timeout", 1800)
    run = run_tests(ctx, run_ids, ctx.workdir, ctx.workdir, [], test_files, [ctx.workdir], timeout)

    def run_one(one):
        return run_tests(ctx, one, ctx.workdir, ctx.workdir, [], test_files, [ctx.workdir], timeout)["outcomes"]
    ctx.facts["canaries"] = judge_canaries(ctx, records, run["outcomes"], solo_runner(run_one))
    req = required_outcomes(run, ids)
    ctx.facts["fail_to_pass"] = dict((i, req[i]) for i in f2p)
    ctx.facts["pass_to_pass"] = dict((i, req[i]) for i in p2p)
    record_run(ctx, run)


def lock_sub_owned(ctx, locked):
    """The workdir becomes the test user's, but for .git and the locked test baseline."""
    chown_tree(ctx.workdir, ctx.uid, ctx.gid)
    lock_paths(ctx.workdir, locked)
    hide_git(ctx)


def hide_git(ctx):
    """.git becomes root's only for the tests: its objects hold the test files as they were
    before the canaries went in, and a diff against them would tell the canaries apart. The
    test user's git refuses a repository another user owns anyway."""
    if ctx.git.available():
        os.chown(ctx.git.git_dir, 0, 0)
        os.chmod(ctx.git.git_dir, 0o700)


MODULE_NOT_FOUND = re.compile(r"No module named '([^']+)'")
CANNOT_IMPORT = re.compile(r"ImportError: (cannot import name '[^']+' from '[^']+')")
# pytest's answer to an id that names no test it collected; it then runs no test at all.
ID_NOT_FOUND = re.compile(r"^ERROR: not found: (.+)$", re.M)


def failure_cause(run, root=""):
    """One cause that explains failing tests, for a person (never for the verdict): the module
    the tests could not import, as `module not found: X`, or the name they could not import;
    else a test id pytest could not find (it then runs none: an id made at collection time, such
    as a timestamp in a parameter, or a test renamed), relative to `root`. None when the messages
    say neither."""
    messages = [e.get("message") or "" for e in run["collect_errors"]] + list(run["messages"].values())
    if not run["started"]:
        messages.append(run["output"])  # the runner itself could not start: its traceback
    for pattern, label in ((MODULE_NOT_FOUND, "module not found: %s"), (CANNOT_IMPORT, "import error: %s")):
        for text in messages:
            m = pattern.search(text)
            if m:
                return label % m.group(1)
    missing = []
    prefix = root.rstrip("/") + "/" if root else None
    for found in ID_NOT_FOUND.findall(run.get("output") or ""):
        found = found.strip()
        if prefix and found.startswith(prefix):
            found = found[len(prefix):]
        if found not in missing:
            missing.append(found)
    if missing:
        more = " (and %d more)" % (len(missing) - 1) if len(missing) > 1 else ""
        return "test id not found, so pytest ran no test: %s%s" % (missing[0], more)
    return None


def record_run(ctx, run):
    cause = failure_cause(run, ctx.workdir)
    if cause:
        ctx.facts["cause"] = cause
    ctx.facts["run"] = {"exit": run["exit"], "end": run["end"], "timed_out": run["timed_out"],
                        "oom": run["oom"], "junit": run["junit"] is not None, "started": run["started"],
                        "collected": run["collected"], "collect_errors": run["collect_errors"][:50]}
    ctx.facts["logs"]["test_output"] = tail(run["output"]) if not ctx.doc2repo else doc2repo_summary(run)


def doc2repo_summary(run):
    """Doc2Repo logs name tests and short reasons only: the hidden suite's source never leaves."""
    lines = ["%s %s" % (o, n) for n, o in sorted(run["outcomes"].items())]
    for e in run["collect_errors"][:50]:
        lines.append("collect error %s: %s" % (e.get("nodeid"), (e.get("message") or "").strip().splitlines()[-1:] or ""))
    return tail("\n".join(lines))


def grade_doc2repo(ctx):
    spec = ctx.spec
    suite_zip = spec.get("suite_zip")
    if not suite_zip or not os.path.isfile(suite_zip):
        raise VerifyError("test_suite_missing", "no test suite for this Doc2Repo instance")
    # What the suite can produce, read from the archive before anything of the submission runs.
    try:
        ctx.manifest = manifest_module().manifest_of_zip(suite_zip)
    except Exception as exc:  # noqa: BLE001 - an unreadable zip is refused when it is unpacked
        ctx.manifest = None
        ctx.suspicious("the suite's manifest could not be read: %s" % exc)
    gold_kinds = gold_static_kinds(ctx)
    if spec.get("patch") and not step_apply(ctx):
        return
    step_scrub(ctx)
    load_clean_facts(ctx)
    step_static(ctx, gold_kinds)
    target, home = step_install(ctx)
    # Only now is the hidden suite unpacked, root's until the run.
    suite = tempfile.mkdtemp(prefix="bsw-suite-", dir="/tmp")
    os.chmod(suite, 0o700)
    extract_suite(suite_zip, suite)
    ctx.canary_root = suite
    records, ctx.facts["canary_plan"] = plan_suite_canaries(ctx, suite)
    lock_suite(ctx, suite)
    extra = []
    if not any(os.path.exists(os.path.join(suite, n)) for n in ("pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini")):
        extra = ["-c", os.devnull]
    prepend = [target, ctx.workdir] + ([os.path.join(ctx.workdir, "src")] if os.path.isdir(os.path.join(ctx.workdir, "src")) else [])
    ctx.repo_paths = ctx.repo_paths + [target, home]
    chown_tree(ctx.workdir, ctx.uid, ctx.gid)
    hide_git(ctx)
    timeout = spec.get("timeout", 1800)
    run = run_tests(ctx, [suite], suite, suite, extra, [suite], prepend, timeout)

    def run_one(one):
        return run_tests(ctx, one, suite, suite, extra, [suite], prepend, timeout)["outcomes"]
    ctx.facts["canaries"] = judge_canaries(ctx, records, run["outcomes"], solo_runner(run_one))
    shutil.rmtree(suite, ignore_errors=True)
    record_suite(ctx, run, records)
    record_run(ctx, run)


def step_install(ctx):
    """The submission installs itself as the test user into a directory of its own; then every
    process it left is killed, and what the install wrote is scrubbed like the tree was.
    Returns (the install's target directory, the test user's home for it)."""
    t = time.time()
    chown_tree(ctx.workdir, ctx.uid, ctx.gid)
    target = tempfile.mkdtemp(prefix="bsw-site-", dir="/tmp")
    os.chmod(target, 0o755)
    os.chown(target, ctx.uid, ctx.gid)
    home = tempfile.mkdtemp(prefix="bsw-home-", dir="/tmp")
    os.chown(home, ctx.uid, ctx.gid)
    install = run_as_test_user(ctx, [ctx.python, "-I", "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                                     "--no-index", "--disable-pip-version-check", "-q", "--target", target, "."],
                               ctx.workdir, child_env(ctx, home), ctx.spec.get("setup_timeout", 300))
    ok = install["exit"] == 0 and not install["timed_out"]
    ctx.facts["install"] = {"ok": ok, "exit": install["exit"], "timed_out": install["timed_out"]}
    ctx.facts["logs"]["install"] = tail(install["output"])
    if not ok:
        ctx.flags["install_failed"] = True
    for d in (ctx.workdir, target):
        os.chown(d, 0, 0)
    step_scrub(ctx, loaders=False)
    step_scrub(ctx, target, "site", loaders=False)
    ctx.timed("install", t)
    return target, home


def plan_suite_canaries(ctx, suite):
    """Canaries in two of the suite's test modules, drawn at random; the suite runs in its
    files' order, so each goes after its template."""
    modules = [(p, []) for p, k in sorted(walk_tree(suite).items())
               if k == "file" and classify(p) == "test" and p.endswith(".py")
               and (p.rsplit("/", 1)[-1].startswith("test") or p.endswith("_test.py"))]
    rng = random.SystemRandom()
    rng.shuffle(modules)
    return plan_canaries(ctx, modules[:2], rng, plant=ctx.spec.get("canaries", True), after_only=True)


def lock_suite(ctx, suite):
    """Every file and directory of the suite (its canaries planted) becomes root's and
    read-only to the test user: nothing can be added to it, replaced or removed."""
    tree = walk_tree(suite)
    suite_files = [p for p, k in tree.items() if k == "file"]
    ctx.facts["conftests"] = [p for p in suite_files if p.rsplit("/", 1)[-1] in RULES["conftest_names"]]
    lock_paths(suite, suite_files)
    for rel in [""] + [p for p, k in tree.items() if k == "dir"]:
        full = os.path.join(suite, rel) if rel else suite
        if os.path.isdir(full) and not os.path.islink(full):
            os.chown(full, 0, 0)
            os.chmod(full, 0o755)


def record_suite(ctx, run, records):
    """The suite's facts from the run, canaries left out and only the ids the suite's manifest
    names counted: how many passed (a pass JUnit confirms), how many ran, and each test's
    outcome by name. A collected id the manifest does not name, or more ids than the suite has,
    is proof of forgery."""
    cm = canaries_module()
    clones = set()
    for r in records:
        clones |= cm.canary_keys(r["module"], r, run["outcomes"])
    real = dict((k, v) for k, v in run["outcomes"].items() if k not in clones)
    expected = ctx.spec.get("test_suite_num") or 0
    if ctx.manifest is not None:
        mf = manifest_module()
        kept, extra, over = mf.judge(ctx.manifest, sorted(real), expected)
        if extra:
            ctx.forgery("collected %d test(s) the hidden suite does not have: %s"
                        % (len(extra), ", ".join(extra[:5])))
        if over:
            ctx.forgery("collected %d more test(s) of the suite than it has (%d)" % (over, expected))
        real = dict((k, real[k]) for k in kept)
    passed = sum(1 for k, v in real.items() if v in ("passed", "xpassed") and junit_says_passed(run["junit"], k))
    # Per-test outcomes by name (names only, as in the log): a pass JUnit does not confirm is disputed.
    outcomes = dict((k, v if v not in ("passed", "xpassed") else
                     ("passed" if junit_says_passed(run["junit"], k) else "disputed")) for k, v in real.items())
    ctx.facts["suite"] = {"passed": passed, "collected": len(real), "expected": expected,
                          "collect_errors": len(run["collect_errors"]), "outcomes": outcomes}


def extract_suite(zip_path, dest):
    import zipfile  # Doc2Repo only: kept off every issue grading's start-up
    with zipfile.ZipFile(zip_path) as zf:
        names = set()
        for info in zf.infolist():
            name = info.filename
            if name.startswith("/") or ".." in name.split("/") or "\\" in name or name in names:
                raise VerifyError("test_suite_unreadable", "unsafe or repeated path in the test suite: %r" % name)
            names.add(name)
        for info in zf.infolist():
            if info.filename.endswith("/") or info.filename == "realswe_eval_script.py":
                continue
            data = zf.read(info)
            safe_write(dest, info.filename, data, "100644")


# ---------------------------------------------------------------------------------------------
# Static evidence (beyondswe_static_evidence.py): what the submission's code reaches for, read
# as root before any of it runs

def sibling(installed, repository):
    """A module of the verifier's package beside this file: by its installed name
    (beyondswe_*.py), or by its name in adapters/ (the unit tests)."""
    import importlib
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    try:
        return importlib.import_module(installed)
    except ImportError:
        return importlib.import_module(repository)


def static_module():
    return sibling("beyondswe_static_evidence", "static_evidence")


def manifest_module():
    return sibling("beyondswe_manifest", "manifest")


def scan_base(ctx, rels, is_test=lambda rel: False):
    """Static hits in the base commit's versions of `rels` (those it has as files), read from
    hash-checked git objects: never from the workdir, which the agent had first under Harbor."""
    listing = base_listing(ctx)
    wanted = [(rel, listing[rel][1]) for rel in sorted(set(rels))
              if rel in listing and listing[rel][0] in ("100644", "100755")]
    if not wanted:
        return []
    objects = Objects(ctx.git)
    try:
        return static_module().scan_sources([(rel, lambda oid=oid: objects.blob(oid)) for rel, oid in wanted],
                                            is_test)[0]
    finally:
        objects.close()


def static_baseline(ctx):
    """kind -> first use, over the base repository's own code: its Python files, tests left out
    (pytest is what tests are made of)."""
    code = [p for p in base_listing(ctx) if p.endswith(".py") and not is_test_path(p)]
    return static_module().kinds_of(scan_base(ctx, code))


def gold_static_kinds(ctx):
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
        paths, _ = patch_paths(ctx, gold)
        listing = base_listing(ctx)
        wanted = [p for p in paths or [] if p in listing and listing[p][0] in ("100644", "100755")]
        if wanted:
            objects = Objects(ctx.git)
            try:
                for rel in wanted:
                    safe_write(tmp, rel, objects.blob(listing[rel][1]), listing[rel][0])
            finally:
                objects.close()
        env = dict(ctx.git.env)
        env["GIT_CEILING_DIRECTORIES"] = "/tmp"
        proc = subprocess.run(["git"] + GIT_OPTS + ["apply", "--whitespace=nowarn", gold], cwd=tmp, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        if proc.returncode != 0:
            ctx.facts.setdefault("static", {})["gold_error"] = tail(proc.stderr.decode("utf-8", "replace"), 2000)
            return {}
        files = [p for p, k in walk_tree(tmp, skip_git=False).items() if k == "file"]
        hits, _ = se.scan_tree(tmp, files, is_test_path)
        return se.kinds_of(hits)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        ctx.timed("static", t)


def changed_from_base(ctx):
    """Every file of the workdir that is not as the base or the image left it: the tracked ones
    whose blob differs, the untracked ones the image did not have with that content."""
    listing = base_listing(ctx)
    image = ctx.state.get("baseline_untracked") or {}
    out = []
    for rel, kind in walk_tree(ctx.workdir).items():
        if kind == "dir":
            continue
        full = os.path.join(ctx.workdir, rel)
        if rel in listing:
            sha, mode = blob_sha(full, ctx.algo_len)
            if (sha, mode) != (listing[rel][1], listing[rel][0]):
                out.append(rel)
        elif rel not in image or kind != "file" or file_sha256(full) != image[rel]:
            out.append(rel)
    return out


def submission_paths(ctx):
    """The paths the submission added or changed: its patch's, or (Harbor) the captured diff's,
    or else every file not as the base and the image left it."""
    if ctx.spec.get("patch"):
        return ctx.applied_paths  # step_apply parsed them
    capture = ctx.spec.get("capture")
    if (ctx.facts.get("capture") or {}).get("ok") and capture and os.path.getsize(capture) > 0:
        return patch_paths(ctx, capture)[0] or []
    return changed_from_base(ctx)


def step_static(ctx, gold_kinds):
    """Reads the submission's files as they will run (after apply, scrub and restore; the tests
    it changed are the base's again and are not read): each use of a construct that reaches into
    the tests' machinery or the interpreter is a hit, and a hit of a kind that neither the base
    repository nor the gold patch uses makes the verdict `forgery_suspected`."""
    t = time.time()
    se = static_module()
    gone = set(ctx.flags["tests_restored"]) | set(ctx.flags["files_removed"])
    paths = [p for p in submission_paths(ctx) if p not in gone]
    hits, errors = se.scan_tree(ctx.workdir, paths, is_test_path)
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


# ---------------------------------------------------------------------------------------------
# The verdict

def decide(facts):
    """The verdict from the facts (beyondswe_decide.decide): (verdict, reason, score)."""
    return sibling("beyondswe_decide", "decide").decide(facts)


def grade(spec):
    """Runs every step; always returns a result (errors included)."""
    ctx = Ctx(spec)
    t = time.time()
    ctx.repo_paths = [ctx.workdir]
    ctx.facts["timings"]["interpreter"] = round(max(0.0, LOADED_AT - process_started_at()), 3)
    try:
        t_lock = time.time()
        step_lock(ctx)
        settle_environment(ctx)
        ctx.timed("lock", t_lock)
        ctx.state.setdefault("clean_sys_path", (ctx.state.get("clean") or {}).get("sys_path", []))
        capture = spec.get("capture")
        if capture:
            # What the agent left, before any step changes it; never part of the verdict.
            try:
                ctx.facts["capture"] = {"ok": True, "bytes": capture_submission(ctx, capture)}
            except (VerifyError, OSError, subprocess.SubprocessError) as exc:
                if lexists(capture):
                    os.remove(capture)
                ctx.facts["capture"] = {"ok": False, "error": str(getattr(exc, "message", exc))[:500]}
        if ctx.doc2repo:
            grade_doc2repo(ctx)
        else:
            grade_issue(ctx)
    except VerifyError as exc:
        if exc.infrastructure:
            ctx.facts["error"] = {"reason": exc.reason, "message": exc.message}
        else:
            ctx.suspicious(exc.message)
    except Exception as exc:  # noqa: BLE001 - a crash is the grader's failure, never a score
        import traceback
        ctx.facts["error"] = {"reason": "verifier_crashed", "message": traceback.format_exc()[-4000:]}
        log("crashed: %r" % exc)
    finally:
        try:
            if ctx.uid is not None:
                kill_all(ctx.uid)
        except Exception:  # noqa: BLE001
            pass
    ctx.facts["family"] = ctx.family
    ctx.timed("verify", t)
    verdict, reason, score = decide(ctx.facts)
    if reason == "forgery_suspected":
        # What a reviewer who accepts the evidence would get (`--accept-suspected`).
        ctx.facts["static"]["if_accepted"] = list(decide(dict(ctx.facts, static={})))
    result = {"format": RESULT_FORMAT, "instance_id": spec.get("instance_id"), "family": ctx.family,
              "verdict": verdict, "reason": reason, "score": score}
    if verdict == "resolved":
        ctx.facts.pop("cause", None)
    result.update(ctx.facts)
    if "apply" in result:
        result["logs"]["apply"] = result["apply"].get("log", "")
    if ctx.facts.get("error"):
        result["logs"]["error"] = ctx.facts["error"]["message"]
    elif ctx.facts.get("disk_limit"):
        d = ctx.facts["disk_limit"]
        result["logs"]["error"] = ("the submission's processes wrote %d MiB, over the disk limit of %d MiB "
                                   "(--disk-mb), and were stopped" % (d["written_bytes"] >> 20, d["limit_bytes"] >> 20))
    return result


def process_started_at():
    """When this process started (wall clock), from /proc: the interpreter's own start-up cost
    is then a timing like the others. Now, where /proc cannot tell."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        return time.time() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return time.time()


def write_json(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False)
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# Commands

def cmd_grade(args):
    """`"result": "-"` sends the result to this process's stdout, which only the grader reads:
    fd 1 is moved to a private descriptor that no child inherits, and /dev/null takes its place,
    so nothing else ever writes there."""
    with open(args.spec, encoding="utf-8") as fh:
        spec = json.load(fh)
    out_fd = None
    if spec.get("result") == "-":
        out_fd = os.dup(1)  # not inheritable
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    result = grade(spec)
    if out_fd is None:
        write_json(spec["result"], result)
        return 0
    view = memoryview(json.dumps(result, ensure_ascii=True).encode("ascii"))
    while view:
        view = view[os.write(out_fd, view):]
    os.close(out_fd)
    return 0


def cmd_prepare(args):
    """What belongs to the image, recorded once before any submission: untracked files (with
    hashes), the pytest plugins installed, the interpreter's clean sys.path, the git config."""
    ctx = Ctx({"workdir": args.workdir, "base_commit": args.base})
    # The image's environment as its configuration and the setup commands left it (the caller
    # sourced the setup chain's exports), and the interpreter its PATH picks: what every test
    # run gets back, whatever the agent's shell or the workdir say later.
    env = image_env_now()
    python = python_record(env)
    out = {"baseline_untracked": {}, "env": env, "python": python,
           "clean": clean_interpreter_facts(python["path"] if python else sys.executable)}
    out["plugins"] = out["clean"]["plugins"]
    out["clean_sys_path"] = out["clean"]["sys_path"]
    out["writable_roots"] = writable_roots()
    out["static_baseline"] = {}
    if ctx.git.available():
        listing = base_listing(ctx)
        out["static_baseline"] = static_baseline(ctx)
        for rel, kind in walk_tree(args.workdir).items():
            if kind != "dir" and rel not in listing:
                out["baseline_untracked"][rel] = file_sha256(os.path.join(args.workdir, rel))
        with open(os.path.join(ctx.git.git_dir, "config"), "rb") as fh:
            out["git_config_sha256_before"] = hashlib.sha256(fh.read()).hexdigest()
        ctx.git.sanitize_config()
        with open(os.path.join(ctx.git.git_dir, "config"), "rb") as fh:
            out["git_config_sha256"] = hashlib.sha256(fh.read()).hexdigest()
    if not os.path.isdir(args.state_dir):
        os.makedirs(args.state_dir, 0o700)
    os.chmod(args.state_dir, 0o700)
    write_json(os.path.join(args.state_dir, "prepare.json"), out)
    # Compiled once here, so that each grading imports the verifier instead of compiling it.
    import py_compile
    try:
        py_compile.compile(os.path.abspath(__file__), doraise=True)
    except (py_compile.PyCompileError, OSError) as exc:
        log("could not compile the verifier ahead: %r" % exc)
    sys.stdout.write(json.dumps({"baseline_untracked": len(out["baseline_untracked"]),
                                 "plugins": [p["module"] for p in out["plugins"]],
                                 "python": python, "pythonpath": image_pythonpath(env, args.workdir)}) + "\n")
    return 0


def cmd_harbor(args):
    logs = args.logs_dir
    if not os.path.isdir(logs):
        os.makedirs(logs)
    # Nothing the agent left in the verifier's directory stands for the verifier's output.
    for name in ("reward.txt", "reward.json", "report.json", SUBMISSION_DIFF):
        if lexists(os.path.join(logs, name)):
            remove_entry(os.path.join(logs, name))
    tests = args.tests_dir
    os.chmod(tests, 0o700)
    with open(os.path.join(tests, "test_config.json"), encoding="utf-8") as fh:
        cfg = json.load(fh)
    instance = {}
    if os.path.isfile(os.path.join(tests, "instance.json")):
        with open(os.path.join(tests, "instance.json"), encoding="utf-8") as fh:
            instance = json.load(fh)
    spec = {
        "instance_id": cfg.get("instance_id"), "family": cfg.get("family"),
        "workdir": cfg.get("workdir") or "/workspace", "base_commit": cfg.get("base_commit"),
        "fail_to_pass": cfg.get("fail_to_pass", []), "pass_to_pass": cfg.get("pass_to_pass", []),
        "keep_paths": cfg.get("keep_paths", []), "f2p_paths": cfg.get("f2p_paths", []),
        "timeout": cfg.get("test_timeout_sec") or 1800, "test_suite_num": cfg.get("test_suite_num"),
        "state_dir": "/var/lib/beyondswe", "private_paths": [tests, "/var/lib/beyondswe"],
        "tests_dir": tests, "canaries": True, "capture": os.path.join(logs, SUBMISSION_DIFF),
        "shared_container": True,
    }
    patch = os.path.join(tests, "f2p_patch.diff")
    if os.path.isfile(patch) and os.path.getsize(patch) > 0:
        spec["f2p_patch"] = patch
    gold = os.path.join(tests, "gold_patch.diff")
    if os.path.isfile(gold) and os.path.getsize(gold) > 0:
        spec["gold_patch"] = gold
    script = (instance or {}).get("f2p_script") or ""
    if script.strip():
        path = os.path.join(tests, "test_fail_to_pass.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(script)
        spec["f2p_script"] = path
    if os.path.isfile(os.path.join(tests, "test_suite.zip")):
        spec["suite_zip"] = os.path.join(tests, "test_suite.zip")
    result = grade(spec)
    reward = None if result["verdict"] == "error" else result["score"]
    result["reward"] = reward
    write_json(os.path.join(logs, "report.json"), result)
    if reward is None:
        log("no reward written: %s (%s)" % (result.get("reason"), result.get("logs", {}).get("error", "")))
        return 2
    with open(os.path.join(logs, "reward.txt"), "w") as fh:
        fh.write(("%d" % reward) if reward in (0.0, 1.0) else ("%.6f" % reward))
    log("%s: %s, reward %s" % (result["verdict"], result["reason"], reward))
    return 0


def cmd_classify(args):
    """Prints the rules' answer for each path given on stdin (one per line), for the drift test."""
    out = {}
    for line in sys.stdin.read().splitlines():
        if line:
            out[line] = classify(line)
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


def cmd_decide(args):
    """Prints decide() for each fact set in a JSON list on stdin, for the table test."""
    cases = json.loads(sys.stdin.read())
    sys.stdout.write(json.dumps([list(decide(c)) for c in cases]) + "\n")
    return 0


USAGE = """usage: beyondswe_verify.py COMMAND [--OPTION VALUE ...]
  grade    --spec SPEC.json
  harbor   [--tests-dir /tests] [--logs-dir /logs/verifier]
  prepare  --workdir W [--base C] [--state-dir /var/lib/beyondswe]
  classify | decide   (JSON on stdin, for the tests)
"""

REQUIRED = object()
COMMANDS = {
    # command: (handler, {option: default})
    "grade": ("cmd_grade", {"spec": REQUIRED}),
    "harbor": ("cmd_harbor", {"tests_dir": "/tests", "logs_dir": "/logs/verifier"}),
    "prepare": ("cmd_prepare", {"workdir": REQUIRED, "base": None, "state_dir": "/var/lib/beyondswe"}),
    "classify": ("cmd_classify", {}),
    "decide": ("cmd_decide", {}),
}


class Args(object):
    pass


def main(argv):
    """A small parser of its own: argparse alone costs each grading 10 ms of start-up."""
    if len(argv) < 2 or argv[1] not in COMMANDS:
        sys.stderr.write(USAGE)
        return 2
    handler, options = COMMANDS[argv[1]]
    args = Args()
    for name, default in options.items():
        setattr(args, name, default)
    rest = argv[2:]
    while rest:
        key = rest.pop(0)
        name = key[2:].replace("-", "_") if key.startswith("--") else None
        if name not in options or not rest:
            sys.stderr.write("beyondswe_verify.py %s: bad option %r\n%s" % (argv[1], key, USAGE))
            return 2
        setattr(args, name, rest.pop(0))
    missing = [n for n in options if getattr(args, n) is REQUIRED]
    if missing:
        sys.stderr.write("beyondswe_verify.py %s: --%s is required\n" % (argv[1], missing[0].replace("_", "-")))
        return 2
    return globals()[handler](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
