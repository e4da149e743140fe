# beyondswe verifier: the disk limit's measure: the places of the root file system the test user
# can write to, and what it has written there (and in the workdir) since a moment, blocks of the
# files it owns plus deleted files its processes keep open.
#
# adapters/beyondswe_verifier/disk.py (see verify.py). Used by the prepare
# step (writable_roots, recorded once) and by processes.py (DiskWatch, polled while the test
# user's commands run). Unit tests: adapters/tests/test_disk.py.
import json
import os
import stat
import subprocess
import sys

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Callable, List, Optional, Sequence, Set, Tuple  # noqa: F401


def writable_roots():  # type: () -> List[str]
    """Directories of the root file system that anyone may write to (/tmp, /var/tmp, ...): with
    the workdir, the only places the test user can put files. /proc, /sys and /dev are other
    file systems (and /dev/shm is memory, bounded by the memory limit)."""
    out = []  # type: List[str]
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

    def __init__(self,
                 uid,  # type: int
                 limit,  # type: Optional[int]
                 roots,  # type: Optional[List[str]]
                 since,  # type: float
                 pids_of,  # type: Callable[[int], List[int]]
                 demote,  # type: Callable[[int, int], Callable[[], None]]
                 ):
        # type: (...) -> None
        """`roots` None: the world-writable directories are found when first needed. `pids_of(uid)`
        and `demote(uid, gid)` are processes.py's: the uid's processes, and the preexec_fn that
        runs a command as that uid."""
        self.uid, self.limit, self.roots, self.since = uid, limit, roots, since
        self.pids_of, self.demote = pids_of, demote
        self.extra = ()  # type: Sequence[str]
        self.free_at_start = self.free()

    @staticmethod
    def free():  # type: () -> Optional[int]
        try:
            st = os.statvfs("/")
            return st.f_bavail * st.f_frsize
        except OSError:
            return None

    def over(self):  # type: () -> Optional[int]
        """Bytes written, when over the limit; else None."""
        if not self.limit:
            return None
        now = self.free()
        if now is not None and self.free_at_start is not None and self.free_at_start - now <= self.limit:
            return None
        written = self.written()
        return written if written > self.limit else None

    def written(self):  # type: () -> int
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

    def held_deleted(self, seen):  # type: (Set[Tuple[int, int]]) -> int
        """Blocks of deleted files the test user's processes keep open. Their descriptors are
        visible to their own uid only (the container has no CAP_SYS_PTRACE), so a short-lived
        scanner with that uid lists them."""
        pids = self.pids_of(self.uid)
        if not pids:
            return 0
        try:
            proc = subprocess.run([sys.executable, "-I", "-S", "-c", HELD_DELETED, json.dumps(pids)],
                                  cwd="/", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30,
                                  env={"PATH": "/usr/bin:/bin"}, preexec_fn=self.demote(self.uid, self.uid))
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
