"""BeyondSWE -> Harbor tasks, by the beyondswe binary.

Every task file comes from `beyondswe convert to-harbor` (the Rust toolkit this adapter ships
with): the same converter its tests run through real Harbor. This class only picks the records
(--limit, --task-ids), keeps or replaces existing task directories (--overwrite) and finds the
binary.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path


class AdapterError(Exception):
    """A clear reason the adapter cannot go on (a missing binary, a bad dataset line)."""


def find_binary():
    """The beyondswe binary: $BEYONDSWE_BIN, else the first `beyondswe` on PATH that is not this
    adapter's own entry point (which has the same name)."""
    given = os.environ.get("BEYONDSWE_BIN")
    if given:
        if not os.access(given, os.X_OK):
            raise AdapterError("BEYONDSWE_BIN=%s is not an executable file" % given)
        return given
    own = {os.path.realpath(sys.argv[0])} if sys.argv and sys.argv[0] else set()
    prefix = os.path.realpath(sys.prefix)
    for d in os.environ.get("PATH", "").split(os.pathsep):
        path = os.path.join(d, "beyondswe")
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            continue
        real = os.path.realpath(path)
        if real in own or real.startswith(prefix + os.sep):
            continue
        return path
    raise AdapterError(
        "the beyondswe binary was not found: build it (`cargo install --path .` in the beyondswe "
        "repository) or set BEYONDSWE_BIN")


def dataset_ids(path):
    """The instance ids of a BeyondSWE JSONL file, in order."""
    ids = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                iid = json.loads(line).get("instance_id")
            except (ValueError, AttributeError) as exc:
                raise AdapterError("%s:%d: not a JSON object (%s)" % (path, n, exc))
            if not isinstance(iid, str) or not iid:
                raise AdapterError("%s:%d: field instance_id: expected a non-empty string, got %r"
                                   % (path, n, iid))
            ids.append(iid)
    return ids


INSTANCE_ID = re.compile(r'^instance_id\s*=\s*"((?:[^"\\]|\\.)*)"\s*$', re.M)


def existing_ids(output_dir):
    """Instance ids of the task directories already in `output_dir` ([metadata] instance_id)."""
    out = {}
    if not output_dir.is_dir():
        return out
    for d in output_dir.iterdir():
        toml = d / "task.toml"
        if d.is_dir() and toml.is_file():
            m = INSTANCE_ID.search(toml.read_text(encoding="utf-8", errors="replace"))
            if m:
                out[json.loads('"%s"' % m.group(1))] = d
    return out


class BeyondSWEAdapter(object):
    """Writes one Harbor task directory per BeyondSWE record."""

    def __init__(self, output_dir, overwrite=False, limit=None, task_ids=None, dataset=None,
                 test_suites=None, solutions=None, verifier="separate", org="beyondswe"):
        if dataset is None:
            raise AdapterError("--dataset is required: the BeyondSWE JSONL file")
        self.output_dir = Path(output_dir)
        self.overwrite = overwrite
        self.limit = limit
        self.task_ids = list(task_ids or [])
        self.dataset = Path(dataset)
        self.test_suites = test_suites
        self.solutions = solutions
        self.verifier = verifier
        self.org = org

    def selected_ids(self):
        ids = dataset_ids(self.dataset)
        if self.task_ids:
            known = set(ids)
            missing = [i for i in self.task_ids if i not in known]
            if missing:
                raise AdapterError("not in %s: %s" % (self.dataset, ", ".join(missing)))
            wanted = set(self.task_ids)
            ids = [i for i in ids if i in wanted]
        if self.limit is not None:
            ids = ids[:self.limit]
        return ids

    def run(self):
        """Converts the selected records; returns (written, skipped) instance ids."""
        ids = self.selected_ids()
        have = existing_ids(self.output_dir)
        skipped = [] if self.overwrite else [i for i in ids if i in have]
        todo = [i for i in ids if i not in skipped]
        if not todo:
            return [], skipped
        cmd = [find_binary(), "convert", "to-harbor", str(self.dataset), str(self.output_dir),
               "--verifier", self.verifier, "--org", self.org, "--ids"] + todo
        if self.overwrite:
            cmd.append("--force")
        if self.test_suites:
            cmd += ["--test-suites", str(self.test_suites)]
        if self.solutions:
            cmd += ["--solutions", str(self.solutions)]
        proc = subprocess.run(cmd)
        if proc.returncode != 0:
            raise AdapterError("beyondswe convert to-harbor failed (exit %d); its message is above"
                               % proc.returncode)
        return todo, skipped


__all__ = ["AdapterError", "BeyondSWEAdapter", "find_binary"]
