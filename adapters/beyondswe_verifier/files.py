# beyondswe verifier: the restore rules' answer for a repository path (classify, the table in
# beyondswe_restore_rules.json), and files as the verifier handles them: never through a link,
# written only below real directories, hashed, handed to the test user or locked against it.
#
# adapters/beyondswe_verifier/files.py (see verify.py). Used by every
# step; src/restore_rules.rs reads the same table and tests/it/verifier.rs checks that both
# classify alike.
import hashlib
import json
import os
import shutil
import stat
import sys

from . import common

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Collection, Dict, Iterable, List, Optional, Set, Tuple  # noqa: F401


RULES_NAME = "beyondswe_restore_rules.json"


def load_rules():  # type: () -> Dict[str, Any]
    """The table beside the verifier: by its installed name, or by its name in adapters/ (the
    unit tests)."""
    path = os.path.join(common.HERE, RULES_NAME)
    if not os.path.exists(path):
        path = os.path.join(common.HERE, "restore_rules.json")
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


RULES = load_rules()


def classify(path):  # type: (str) -> Optional[str]
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


def is_test_path(path):  # type: (str) -> bool
    """Whether the restore rules call `path` a test file."""
    return classify(path) == "test"


def module_name_of(entry):  # type: (str) -> str
    """The importable name a top-level directory entry provides (`pytest.py` -> pytest)."""
    return entry.split(".", 1)[0]


def stdlib_names():  # type: () -> Set[str]
    """The standard library's top-level module names: the interpreter's list (3.10+), else the
    modules and packages in its folders. Only those: the folders hold more (the bytecode cache,
    site-packages, the build configuration), and a name taken from there would make the scrub
    remove a repository's own `__pycache__` as shadowing the standard library."""
    names = set(getattr(sys, "stdlib_module_names", ()))
    if not names:
        names = set(sys.builtin_module_names)
        for d in (os.path.dirname(os.__file__), os.path.join(os.path.dirname(os.__file__), "lib-dynload")):
            try:
                for e in os.listdir(d):
                    if e.endswith((".py", ".pyc", ".so")) or os.path.isfile(os.path.join(d, e, "__init__.py")):
                        names.add(module_name_of(e))
            except OSError:
                pass
    return names


def lexists(path):  # type: (str) -> bool
    return os.path.lexists(path)


def remove_entry(path):  # type: (str) -> None
    st = os.lstat(path)
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def ensure_real_dirs(root, rel_dir):  # type: (str, str) -> None
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


def safe_write(root, rel, data, mode):  # type: (str, str, bytes, Optional[str]) -> None
    """Writes root/rel as a regular file (mode 100644/100755; None: 100644) or symlink (120000)
    with `data`."""
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


def list_dir(root, rel):  # type: (str, str) -> Tuple[str, List[str]]
    """root/rel (root itself for "") and the names in it; none when it cannot be listed."""
    full = os.path.join(root, rel) if rel else root
    try:
        return full, os.listdir(full)
    except OSError:
        return full, []


def walk_tree(root, skip_git=True):  # type: (str, bool) -> Dict[str, str]
    """rel path -> 'file' | 'link' | 'other' for everything below root (no link is followed);
    directories are yielded too, as 'dir'. The kinds come from the directory listing (no stat
    of each entry, where the file system gives them)."""
    out = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        full = os.path.join(root, rel) if rel else root
        try:
            it = os.scandir(full)
        except OSError:
            continue
        with it:
            for entry in it:
                name = entry.name
                if skip_git and not rel and name == ".git":
                    continue
                r = rel + "/" + name if rel else name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        out[r] = "dir"
                        stack.append(r)
                    elif entry.is_symlink():
                        out[r] = "link"
                    elif entry.is_file(follow_symlinks=False):
                        out[r] = "file"
                    else:
                        out[r] = "other"
                except OSError:
                    continue
    return out


def file_sha256(path):  # type: (str) -> str
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


def read_regular(path):  # type: (str) -> bytes
    """The bytes of a regular file, read without following a link; ValueError for anything else
    (a link, a directory, a device, a FIFO that would block)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ValueError("%s is not a regular file" % path)
        return fh.read()


def in_listing(listing, rel):  # type: (Collection[str], str) -> bool
    """Whether the base tracks `rel` as a file or as a directory of files."""
    return rel in listing or any(k.startswith(rel + "/") for k in listing)


def parent_is_link(root, rel):  # type: (str, str) -> bool
    cur = root
    for part in rel.split("/")[:-1]:
        cur = os.path.join(cur, part)
        if os.path.islink(cur) or not os.path.isdir(cur):
            return True
    return False


def chown_tree(root, uid, gid, skip_git=True, keep=()):  # type: (str, int, int, bool, Collection[str]) -> None
    """Everything below root (but .git and the paths in `keep`, rel paths that stay as they are:
    what lock_paths locks) becomes uid:gid. Only what is not theirs yet is changed: a change of
    owner copies the whole file up into the container's layer, and a prepared image whose workdir
    the prepare step gave to the grading's user (`prepare --own-workdir`) leaves only what the
    submission, the restore and the canaries wrote."""
    stack = [""]
    while stack:
        rel = stack.pop()
        full = os.path.join(root, rel) if rel else root
        try:
            st = os.lstat(full)
        except OSError:
            continue
        if (st.st_uid != uid or st.st_gid != gid) and rel not in keep:
            try:
                os.lchown(full, uid, gid)
            except OSError:
                pass
        if not stat.S_ISDIR(st.st_mode):
            continue
        try:
            names = os.listdir(full)
        except OSError:
            continue
        for name in names:
            if skip_git and not rel and name == ".git":
                continue
            stack.append(rel + "/" + name if rel else name)


def lock_dirs(rels):  # type: (Iterable[str]) -> Set[str]
    """Every directory from the root ("") down to the files `rels`."""
    dirs = set()
    for rel in rels:
        d = os.path.dirname(rel)
        while True:
            dirs.add(d)
            if not d:
                break
            d = os.path.dirname(d)
    return dirs


def lock_set(rels):  # type: (Collection[str]) -> Set[str]
    """Every rel path lock_paths(root, rels) makes root's: the files, the directories down to
    them and those directories' __pycache__. chown_tree leaves them be (`keep`), so a file that
    is root's already (a prepared image locks the base's test files once) is not handed over and
    taken back, each a copy of the whole file."""
    out = set(rels)
    for d in lock_dirs(rels):
        out.add(d)
        out.add(d + "/__pycache__" if d else "__pycache__")
    return out


def hand_over(root, uid, gid, locked):  # type: (str, int, int, Collection[str]) -> None
    """The tree below root (but .git) becomes uid:gid's, but for `locked`, which lock_paths makes
    root's: what is as it should be already is left as it is."""
    chown_tree(root, uid, gid, keep=lock_set(locked))
    lock_paths(root, locked)


def lock_paths(root, rels):  # type: (str, Collection[str]) -> None
    """The files `rels` become root's and read-only; every directory from root down to them
    becomes root's and gets a root-owned empty __pycache__ so no bytecode can be planted for
    them. Those directories are closed to everyone else (no module can be added beside a test
    to shadow what it imports, for the whole run); the root itself keeps the sticky bit (others
    may add files there but not replace these), since tests write into their working
    directory. What is so already is left as it is (a prepared image locks the base's test
    files once)."""
    for rel in rels:
        full = os.path.join(root, rel)
        try:
            st = os.lstat(full)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            if st.st_uid != 0 or st.st_gid != 0:
                os.chown(full, 0, 0)
            want = (st.st_mode & 0o111) | 0o644
            if stat.S_IMODE(st.st_mode) != want:
                os.chmod(full, want)
    for d in sorted(lock_dirs(rels)):
        full = os.path.join(root, d) if d else root
        try:
            st = os.lstat(full)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            continue
        if st.st_uid != 0 or st.st_gid != 0:
            os.chown(full, 0, 0)
        want = 0o1777 if not d else 0o755
        if stat.S_IMODE(st.st_mode) != want:
            os.chmod(full, want)
        cache = os.path.join(full, "__pycache__")
        if empty_root_dir(cache):
            continue
        if lexists(cache):
            remove_entry(cache)
        os.mkdir(cache, 0o755)


def empty_root_dir(path):  # type: (str) -> bool
    """Whether path is an empty directory (not a link) of root's that no one else may write."""
    try:
        st = os.lstat(path)
        return (stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and st.st_gid == 0
                and not st.st_mode & 0o022 and not os.listdir(path))
    except OSError:
        return False
