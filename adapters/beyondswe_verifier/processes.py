# beyondswe verifier: processes and the test user: killing every process of a uid at once (and
# whatever the agent left running), the unprivileged user drawn for each grading, the disk limit
# on what it writes (measured by disk.py), and running its commands with every privilege dropped
# and every process it left killed at the end.
#
# adapters/beyondswe_verifier/processes.py (see verify.py). Used by
# the lock step, the Doc2Repo install and the test run. `resource` is imported when this module
# is, with the verifier: demote() runs as a preexec_fn, which must not import.
import os
import random
import signal
import subprocess
import threading
import time

try:
    import resource  # imported here: a preexec_fn must not import
except ImportError:  # not on every platform
    resource = None  # type: ignore[assignment]

from . import common
from . import disk

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple  # noqa: F401


TEST_USER = "beyondswe-test"


MAX_EVENTS_BYTES = 64 * 1024 * 1024


DISK_POLL_S = 0.25


def ancestors():  # type: () -> Set[int]
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


def pids_of(uid=None):  # type: (Optional[int]) -> List[int]
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        if uid is not None:
            try:
                with open("/proc/%s/status" % name) as fh:
                    line = next(ln for ln in fh if ln.startswith("Uid:"))
                if int(line.split()[1]) != uid:
                    continue
            except (OSError, StopIteration, ValueError, IndexError):
                continue
        out.append(int(name))
    return out


def kill_uid_atomically(uid):  # type: (int) -> None
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


def kill_all(uid=None, keep=()):  # type: (Optional[int], Iterable[int]) -> int
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


def main_processes():  # type: () -> Set[int]
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


def kill_leftovers():  # type: () -> int
    """Every process that is not this one, an ancestor, or the container's main process."""
    return kill_all(None, ancestors() | main_processes())


TEST_UIDS = (200000, 1 << 30)


def fresh_test_uid():  # type: () -> int
    """A uid (and gid) no passwd or group entry of the image uses, drawn at random."""
    used_u, used_g = used_ids()
    rng = random.SystemRandom()
    uid = rng.randint(*TEST_UIDS)
    while uid in used_u or uid in used_g:
        uid = rng.randint(*TEST_UIDS)
    return uid


def used_ids():  # type: () -> Tuple[Set[int], Set[int]]
    try:
        import pwd
        import grp
        return set(p.pw_uid for p in pwd.getpwall()), set(g.gr_gid for g in grp.getgrall())
    except ImportError:
        return set(), set()


def usable_uid(uid, used_u, used_g):  # type: (Any, Set[int], Set[int]) -> bool
    """Whether `uid` (the prepare record's) can be the tests' user: an integer in the range
    test users are drawn from, and no passwd or group entry's (an agent that had the container
    may have written one, or the record)."""
    return (isinstance(uid, int) and not isinstance(uid, bool) and TEST_UIDS[0] <= uid <= TEST_UIDS[1]
            and uid not in used_u and uid not in used_g)


def ensure_test_user(prepared=None):  # type: (Any) -> Tuple[int, int]
    """A uid/gid with no other use in the image, in /etc/passwd so tools that look it up work.
    Drawn at random (containers share the kernel's per-uid accounting, so a fixed uid would let
    one grading's processes count against another's), once per prepared image when the prepare
    step drew it and gave it the workdir (`prepared`): each grading's container is its own, so
    only gradings of one instance at the same moment share it."""
    # Never an entry that is already there: under Harbor the agent could have written one.
    used_u, used_g = used_ids()
    uid = prepared if usable_uid(prepared, used_u, used_g) else fresh_test_uid()
    name = "%s-%d" % (TEST_USER, uid)
    try:
        with open("/etc/group", "a") as fh:
            fh.write("%s:x:%d:\n" % (name, uid))
        with open("/etc/passwd", "a") as fh:
            fh.write("%s:x:%d:%d::/nonexistent:/bin/sh\n" % (name, uid, uid))
    except OSError:
        pass
    return uid, uid


def cgroup_oom_kills():  # type: () -> Optional[int]
    for path, key in (("/sys/fs/cgroup/memory.events", "oom_kill"),
                      ("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill")):
        try:
            with open(path) as fh:
                for line in fh:
                    parts = line.split()
                    if len(parts) == 2 and parts[0] == key:
                        return int(parts[1])
        except (OSError, ValueError):
            continue
    return None


def disk_watch(ctx, extra_roots=()):  # type: (Any, Iterable[str]) -> Optional[Any]
    """The disk limit's watch over what the test user writes (disk.DiskWatch), or None without
    a limit: the workdir and `extra_roots` beside the world-writable places."""
    limit = ctx.spec.get("max_file_bytes")
    if not limit:
        return None
    watch = disk.DiskWatch(ctx.uid, limit, ctx.state.get("writable_roots"), time.time() - 1, pids_of, demote)
    watch.extra = [ctx.workdir] + list(extra_roots)
    return watch


def demote(uid, gid, max_file_bytes=None):  # type: (int, int, Optional[int]) -> Callable[[], None]
    """preexec_fn: drop every privilege before the submission's code runs. (No RLIMIT_NPROC:
    the kernel counts it per uid across containers; the container's pids limit bounds forks.)
    No file may outgrow the container's disk limit (the host's watchdog bounds the total)."""

    def run():  # type: () -> None
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


class Drain(threading.Thread):
    """Reads a pipe to its end, keeping at most `cap` bytes (the tail, or the head when
    `keep_head`), and counting what it dropped."""

    def __init__(self, fd, cap, keep_head=False):  # type: (int, int, bool) -> None
        threading.Thread.__init__(self)
        self.daemon = True
        self.fd = fd
        self.cap = cap
        self.keep_head = keep_head
        self.chunks = []  # type: List[bytes]
        self.size = 0
        self.dropped = 0

    def run(self):  # type: () -> None
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

    def data(self):  # type: () -> bytes
        return b"".join(self.chunks)


def run_as_test_user(ctx,  # type: Any
                     argv,  # type: List[str]
                     cwd,  # type: str
                     env,  # type: Dict[str, str]
                     timeout,  # type: float
                     stdin_data=b"",  # type: bytes
                     event_fd=False,  # type: bool
                     out_cap=256 * 1024,  # type: int
                     extra_roots=()  # type: Iterable[str]
                     ):  # type: (...) -> Dict[str, Any]
    """Runs argv as the test user; returns dict(exit, timed_out, seconds, output, output_dropped,
    events_raw, events_dropped, oom, disk_written). Every process of the user is killed when it
    ends, or as soon as it has written more than the disk limit (then `ctx.facts["disk_limit"]`
    says so)."""
    watch = disk_watch(ctx, extra_roots)
    proc, out, ev, start, oom_before = start_as_test_user(ctx, argv, cwd, env, event_fd, out_cap)
    try:
        proc.stdin.write(stdin_data)  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
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


def start_as_test_user(ctx,  # type: Any
                       argv,  # type: List[str]
                       cwd,  # type: str
                       env,  # type: Dict[str, str]
                       event_fd,  # type: bool
                       out_cap  # type: int
                       ):  # type: (...) -> Tuple[subprocess.Popen[bytes], Drain, Optional[Drain], float, Optional[int]]
    """Starts argv as the test user, its output on a pipe this process drains; with `event_fd`
    the write end of the result channel is inherited and passed as the last argument. Returns
    (process, output drain, result channel drain or None, start time, OOM kills before)."""
    r_ev = w_ev = None
    pass_fds = ()  # type: Tuple[int, ...]
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
        raise common.VerifyError("test_user_failed",
                                 "could not start %s as the test user: %r" % (argv[0], exc)) from exc
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


def wait_within_limits(ctx,  # type: Any
                       proc,  # type: subprocess.Popen[bytes]
                       watch,  # type: Optional[Any]
                       deadline  # type: float
                       ):  # type: (...) -> Tuple[Optional[int], bool, Optional[int]]
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


def end_test_user_run(ctx,  # type: Any
                      proc,  # type: subprocess.Popen[bytes]
                      code,  # type: Optional[int]
                      out,  # type: Drain
                      ev  # type: Optional[Drain]
                      ):  # type: (...) -> None
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
