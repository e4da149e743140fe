# beyondswe verifier: the restore step: test files, conftest files and pytest configuration back
# to the base commit, read from hash-checked git objects (only the pytest sections of a
# pyproject.toml or setup.cfg of the submission's own), untracked covered files removed, and
# the dataset's f2p patch and script applied on that baseline.
#
# adapters/beyondswe_verifier/restore.py (see verify.py). The issue
# family's step; the rules are files.classify's.
import json
import os
import re
import time

from . import common
from . import files
from . import gitobjects

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Dict, List, Optional, Set, Tuple  # noqa: F401


def step_restore(ctx):  # type: (Any) -> None
    """Covered paths back to the base (from hash-checked objects); untracked covered files
    removed; the dataset's f2p patch and script applied on the pristine baseline."""
    t = time.time()
    listing = gitobjects.base_listing(ctx)
    keep = set(ctx.spec.get("keep_paths", []))
    f2p = set(ctx.spec.get("f2p_paths", []))
    restored_ok = restore_tracked(ctx, listing, keep, f2p)
    remove_untracked_covered(ctx, listing, keep, f2p)
    ctx.facts["locked"] = lockable(restored_ok)
    remove_shadows_of_locked(ctx, listing)
    apply_f2p_patch(ctx)
    write_f2p_script(ctx, listing)
    ctx.timed("restore", t)


def lockable(paths):  # type: (List[str]) -> List[str]
    """The paths of `paths` that are locked against the test user: tests and configuration."""
    return [p for p in paths if files.classify(p) in ("test", "config", "section_config")]


def signature(path):  # type: (str) -> Optional[Tuple[int, int, int, int, int, int]]
    """What lstat says of path that any write, rename or change of mode would change (the
    kernel sets ctime; nothing can set it back), or None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def matches_base(ctx, path, mode, oid):  # type: (Any, str, str, str) -> Tuple[bool, Optional[str], Optional[str]]
    """Whether the workdir has `path` as the base has it (blob `oid`, `mode`), through no link;
    also the blob id and mode it has now."""
    current, cur_mode = gitobjects.blob_sha(os.path.join(ctx.workdir, path), ctx.algo_len)
    ok = current == oid and cur_mode == mode and not files.parent_is_link(ctx.workdir, path)
    return ok, current, cur_mode


def prepared_clean_paths(ctx):  # type: (Any) -> List[str]
    """At prepare (the offline grader's prepared image): the covered paths of the base that the
    image has as the base has them, and through no link."""
    listing = gitobjects.base_listing(ctx)
    return [p for p in sorted(listing) if files.classify(p) is not None and matches_base(ctx, p, *listing[p])[0]]


# A covered file is taken as the prepared image's only if its inode changed last this long before
# the container started: long before anything in the container, or the engine's upload into
# it, could have written it (file times come from a clock that lags by up to a tick).
IMAGE_CTIME_MARGIN_S = 2.0


def note_prepared_clean(ctx):  # type: (Any) -> None
    """Before anything of the grading writes the workdir: the signature of every covered file
    the prepare step found as the base has it and whose inode last changed before the container
    started (so it is the prepared image's own). Offline, the container is fresh from the
    prepared image, so a file whose signature is the same after the apply and the scrub is still
    the base's, and the restore need not read it. Never where someone had the container first
    (Harbor's shared container): there every file is read."""
    ctx.prepared_clean = {}
    clean = ctx.state.get("restore_clean")
    started = common.process_started_at(1)
    if ctx.shared_container or not isinstance(clean, list) or started is None:
        return
    t = time.time()
    before = int((started - IMAGE_CTIME_MARGIN_S) * 1e9)
    for p in clean:
        sig = signature(os.path.join(ctx.workdir, p)) if isinstance(p, str) else None
        if sig is not None and sig[5] < before:
            ctx.prepared_clean[p] = sig
    ctx.timed("note_clean", t)


def restore_tracked(ctx, listing, keep, f2p):
    # type: (Any, Dict[str, Tuple[str, str]], Set[str], Set[str]) -> List[str]
    """Every covered path of the base back to its blob (pytest sections only, for a file with
    sections of its own); returns the covered paths that are now as the base has them."""
    objects = gitobjects.Objects(ctx.git) if listing else None  # type: Any
    restored_ok = []
    prepared = ctx.prepared_clean
    try:
        for path in sorted(listing):
            kind = files.classify(path)
            if kind is None and path not in f2p:
                continue
            mode, oid = listing[path]
            sig = prepared.get(path)
            if (sig is not None and signature(os.path.join(ctx.workdir, path)) == sig
                    and not files.parent_is_link(ctx.workdir, path)):
                restored_ok.append(path)
                continue
            ok, current, cur_mode = matches_base(ctx, path, mode, oid)
            if ok:
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
            files.safe_write(ctx.workdir, path, data, mode)
            (ctx.flags["config_reverted"] if kind == "config" else ctx.flags["tests_restored"]).append(path)
            restored_ok.append(path)
    finally:
        if objects is not None:
            objects.close()
    return restored_ok


def revert_pytest_sections(ctx, path, data, cur_mode):  # type: (Any, str, bytes, Optional[str]) -> None
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
        files.safe_write(ctx.workdir, path, new.encode("utf-8", "surrogateescape"), cur_mode)
        ctx.flags["config_reverted"].append(path)


def remove_untracked_covered(ctx, listing, keep, f2p):
    # type: (Any, Dict[str, Tuple[str, str]], Set[str], Set[str]) -> None
    """Covered files the base does not have are removed, but for those the image itself had
    (never configuration, start-up hooks or conftests) and those kept for the gold patch."""
    baseline = ctx.state.get("baseline_untracked", {})
    for rel, kind in sorted(files.walk_tree(ctx.workdir).items()):
        if kind == "dir" or rel in listing:
            continue
        c = files.classify(rel)
        if c is None and rel not in f2p:
            continue
        if not files.lexists(os.path.join(ctx.workdir, rel)):
            continue
        name = rel.rsplit("/", 1)[-1]
        if rel in baseline and c not in ("config", "startup") and name not in files.RULES["conftest_names"]:
            continue
        if rel in keep and rel not in f2p:
            ctx.flags["kept_for_gold"].append(rel)
            continue
        files.remove_entry(os.path.join(ctx.workdir, rel))
        ctx.flags["files_removed"].append(rel)


def remove_shadows_of_locked(ctx, listing):  # type: (Any, Dict[str, Tuple[str, str]]) -> None
    """Untracked entries that Python would import instead of a locked test module."""
    for p in ctx.facts["locked"]:
        if p.endswith(".py"):
            for sib in shadow_siblings(ctx.workdir, p):
                if not files.in_listing(listing, sib) and files.lexists(os.path.join(ctx.workdir, sib)):
                    files.remove_entry(os.path.join(ctx.workdir, sib))
                    ctx.flags["files_removed"].append(sib)


def apply_f2p_patch(ctx):  # type: (Any) -> None
    """The dataset's f2p patch, on the restored tree; the paths it touches are locked too."""
    patch = ctx.spec.get("f2p_patch")
    if patch:
        proc = ctx.git.run(["apply", "--verbose", "--whitespace=nowarn", patch], check=False)
        if proc.returncode != 0:
            raise common.VerifyError("f2p_patch_failed", "the dataset's f2p patch does not apply:\n" +
                                     common.tail((proc.stdout + proc.stderr).decode("utf-8", "replace"), 4000))
        ctx.facts["locked"].extend(gitobjects.patch_paths(ctx, patch)[0] or [])


def write_f2p_script(ctx, listing):  # type: (Any, Dict[str, Tuple[str, str]]) -> None
    """The dataset's f2p script as test_fail_to_pass.py, locked, with nothing beside it that
    Python would import in its place."""
    script = ctx.spec.get("f2p_script")
    if script:
        with open(script, "rb") as fh:
            files.safe_write(ctx.workdir, "test_fail_to_pass.py", fh.read(), "100644")
        ctx.facts["locked"].append("test_fail_to_pass.py")
        for sib in shadow_siblings(ctx.workdir, "test_fail_to_pass.py"):
            if files.in_listing(listing, sib):
                continue
            files.remove_entry(os.path.join(ctx.workdir, sib))
            ctx.flags["files_removed"].append(sib)


def shadow_siblings(root, rel):  # type: (str, str) -> List[str]
    """Untracked entries Python would import instead of the test module root/rel: a package or
    namespace directory, bytecode or an extension module of the same name beside it."""
    d, name = os.path.split(rel)
    stem = name[:-3] if name.endswith(".py") else name
    out = []
    for e in files.list_dir(root, d)[1]:
        if e == name:
            continue
        if e == stem or (e.startswith(stem + ".") and e.endswith((".so", ".pyd", ".pyc", ".pyw"))):
            out.append(os.path.join(d, e) if d else e)
    return out


SECTION_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def split_sections(text):  # type: (str) -> List[List[Any]]
    blocks = [[None, []]]  # type: List[List[Any]]
    for line in text.splitlines(True):
        m = SECTION_HEADER.match(line)
        if m:
            blocks.append([m.group(1).strip().strip('"'), [line]])
        else:
            blocks[-1][1].append(line)
    return blocks


def is_pytest_section(name, filename):  # type: (Optional[str], str) -> bool
    if name is None:
        return False
    if filename == "setup.cfg":
        return name in ("tool:pytest", "pytest")
    return name == "tool.pytest" or name.startswith("tool.pytest.")


def revert_sections(current, base, filename):  # type: (str, Optional[str], str) -> str
    kept = [b for b in split_sections(current) if not is_pytest_section(b[0], filename)]
    base_sections = [b for b in split_sections(base or "") if is_pytest_section(b[0], filename)]
    text = "".join("".join(lines) for _, lines in kept)
    if base_sections:
        if text and not text.endswith("\n"):
            text += "\n"
        text += "".join("".join(lines) for _, lines in base_sections)
    return text


def pytest_config_of(text, path):  # type: (str, str) -> Optional[str]
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
