# beyondswe verifier: the scrub step: removes what loads code behind the sources' back: start-up
# hooks in any form, metadata with entry points, bytecode and extension modules the base did not
# have, top-level modules shadowing pytest, pluggy or the standard library.
#
# adapters/beyondswe_verifier/scrub.py (see verify.py). Run after apply
# in both families, and on the tree and the install's target after a Doc2Repo install.
import os
import time

from . import files
from . import gitobjects

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Dict, List, Optional, Set, Tuple  # noqa: F401


def step_scrub(ctx, root=None, label="", loaders=True):  # type: (Any, Optional[str], str, bool) -> None
    """Removes untracked loaders: start-up hooks (any form), metadata, bytecode, extension
    modules and egg-links the base did not have, and top-level names shadowing pytest, pluggy or
    the standard library. Each removal is flagged. `loaders=False` (after a Doc2Repo install:
    the metadata and bytecode pip made from the submission's own sources) leaves the metadata,
    bytecode and extensions, which load nothing but the submission's code."""
    t = time.time()
    root = root or ctx.workdir
    in_workdir = root == ctx.workdir
    listing = gitobjects.base_listing(ctx) if in_workdir else {}
    baseline = ctx.state.get("baseline_untracked", {}) if in_workdir else {}
    blind = in_workdir and not ctx.state
    tree = files.walk_tree(root)
    removed = []
    gone = set()  # type: Set[str]
    # Shallowest first: a directory removed takes everything below it along.
    for rel in sorted(tree, key=lambda r: (r.count("/"), r)):
        if any(rel.startswith(g + "/") for g in gone):
            continue
        if rel in listing:
            continue
        if tree[rel] == "dir":
            if scrubs_dir(root, rel, baseline, blind, loaders):
                files.remove_entry(os.path.join(root, rel))
                gone.add(rel)
                removed.append(rel + "/")
            continue
        if scrubs_file(root, rel, baseline, blind, loaders):
            files.remove_entry(os.path.join(root, rel))
            removed.append(rel)
    dirs = import_dirs(ctx) if in_workdir else [""]
    remove_shadowing_names(root, dirs, tree, listing, baseline, gone, removed)
    prefix = label + ":" if label else ""
    ctx.flags["files_removed"].extend(prefix + r for r in removed)
    ctx.timed("scrub", t)


def import_dirs(ctx):  # type: (Any) -> List[str]
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


def scrubs_dir(root, rel, baseline, blind, loaders):  # type: (str, str, Dict[str, str], bool, bool) -> bool
    """Whether the scrub removes the untracked directory root/rel: a start-up hook in directory
    form, or (with `loaders`) bytecode or metadata that is not the image's own, unchanged."""
    name = rel.rsplit("/", 1)[-1]
    metadata = any(name.endswith(s) for s in files.RULES["metadata_dir_suffixes"])
    startup_dir = name.split(".", 1)[0] in files.RULES["startup_stems"]
    if not loaders and not startup_dir:
        return False
    if not (startup_dir or name in files.RULES["bytecode_dirs"] or metadata):
        return False
    if name in files.RULES["bytecode_dirs"] and files.empty_root_dir(os.path.join(root, rel)):
        # What lock_paths leaves beside a locked test module (a prepared image has them):
        # nothing in it, and no one but root may add anything.
        return False
    in_baseline = files.in_listing(baseline, rel)
    if in_baseline and not dir_changed(root, rel, baseline):
        return False
    if metadata and blind and not declares_pytest_plugin(os.path.join(root, rel)):
        # No record of what the image had (a Harbor image used as it is): metadata
        # that loads no pytest plugin may be the image's own editable install.
        return False
    return True


def scrubs_file(root, rel, baseline, blind, loaders):  # type: (str, str, Dict[str, str], bool, bool) -> bool
    """Whether the scrub removes the untracked file root/rel: a start-up hook, or (with
    `loaders`) a loader (bytecode, an extension module, an egg-link, a file in a metadata or
    bytecode directory) that is not the image's own, unchanged."""
    kind = files.classify(rel)
    if not (kind == "startup" or (kind == "loader" and loaders)):
        return False
    if kind == "loader" and rel in baseline and baseline[rel] == files.file_sha256(os.path.join(root, rel)):
        return False
    if blind and kind == "loader" and rel.endswith(tuple(files.RULES["extension_suffixes"])):
        # Without the record an image's in-place build cannot be told apart; extension
        # modules that shadow tests or pytest are removed below all the same.
        return False
    return True


def remove_shadowing_names(root, dirs, tree, listing, baseline, gone, removed):
    # type: (str, List[str], Dict[str, str], Dict[str, Tuple[str, str]], Dict[str, str], Set[str], List[str]) -> None
    """Removes the untracked top-level modules and packages in the import directories `dirs`
    that would shadow a protected module (pytest, pluggy and their kin, the grader's own) or the
    standard library; adds them to `gone` and `removed`."""
    protected = set(files.RULES["protected_modules"]) | files.stdlib_names()
    for d in dirs:
        full, names = files.list_dir(root, d)
        for name in names:
            rel = d + "/" + name if d else name
            if rel in listing or rel in gone or name == ".git" or files.module_name_of(name) not in protected:
                continue
            if not (name.endswith((".py", ".pyc", ".so", ".pyd")) or os.path.isdir(os.path.join(full, name))):
                continue
            if rel in baseline:
                continue
            if any(p.startswith(rel + "/") for p in listing):
                continue
            files.remove_entry(os.path.join(full, name))
            gone.add(rel)
            removed.append(rel + ("/" if tree.get(rel) == "dir" else ""))


def declares_pytest_plugin(path):  # type: (str) -> bool
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


def dir_changed(root, rel, baseline):  # type: (str, str, Dict[str, str]) -> bool
    for path, digest in baseline.items():
        if path.startswith(rel + "/"):
            full = os.path.join(root, path)
            if not files.lexists(full) or files.file_sha256(full) != digest:
                return True
    for r, kind in files.walk_tree(os.path.join(root, rel), False).items():
        if kind != "dir" and (rel + "/" + r) not in baseline:
            return True
    return False
