#!/usr/bin/env python3
"""Load every task directory under TASKS_DIR with Harbor's own task loader.

Run with the python of a venv made by scripts/harbor-venv.sh:

    python scripts/harbor_load_tasks.py [--require-valid] TASKS_DIR

Every immediate subdirectory of TASKS_DIR (sorted by name) is loaded with
``harbor.models.task.task.Task(task_dir=path)`` and one JSON object per task is
printed on stdout, one per line:

    {"dir": name, "ok": true, "valid": bool, "name": ..., "docker_image": ...,
     "verifier_timeout_sec": ..., "agent_timeout_sec": ...,
     "build_timeout_sec": ..., "cpus": ..., "memory_mb": ..., "storage_mb": ...,
     "instruction_len": ..., "metadata": {...}, "schema_version": ...,
     "warnings": [...], "harbor_version": "X.Y.Z"}
    {"dir": name, "ok": false, "valid": bool, "error": "<Type>: <message>",
     "harbor_version": "X.Y.Z"}

``valid`` is Harbor's own validity check of the directory:
``TaskPaths.is_valid()`` where it exists (0.1.x: task.toml, environment/,
instruction.md and tests/test.sh exist), else ``Task.is_valid_dir()``
(0.2x: config parses, docker_image or environment/ present, input trees
contained, instruction.md and an OS-matching tests/test.* present).

Exit status: 0 if every task loaded (and, with --require-valid, every task
is valid); 1 if any did not; 2 on usage errors, an empty TASKS_DIR, or when
Harbor itself cannot be imported.

Harbor declares Python >= 3.12; on 3.11 ``typing.override`` and
``typing.TypedDict`` are taken from typing_extensions before importing it.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import inspect
import json
import sys
import typing
import warnings
from pathlib import Path

from harbor_compat import apply_typing_shim, describe_error





def _jsonable(value: typing.Any) -> typing.Any:
    """Round-trip through JSON so TOML dates etc. become strings."""
    return json.loads(json.dumps(value, default=str))


def _get(obj: typing.Any, *names: str) -> typing.Any:
    """First present attribute among ``names`` (dotted paths allowed)."""
    for dotted in names:
        cur = obj
        try:
            for part in dotted.split("."):
                cur = getattr(cur, part)
        except AttributeError:
            continue
        return cur
    return None


def _is_valid(task_cls: typing.Any, paths_cls: typing.Any, task_dir: Path) -> bool | None:
    try:
        paths = paths_cls(task_dir)
        if hasattr(paths, "is_valid"):  # harbor 0.1.x
            return bool(paths.is_valid())
        if hasattr(task_cls, "is_valid_dir"):  # harbor 0.2x
            return bool(task_cls.is_valid_dir(task_dir))
    except Exception:  # noqa: BLE001 - a crashing check is "not valid"
        return False
    return None  # this version has no such check


def _load(task_cls: typing.Any, task_dir: Path) -> typing.Any:
    params = inspect.signature(task_cls.__init__).parameters
    if "task_dir" in params:
        return task_cls(task_dir=task_dir)
    return task_cls(task_dir)


def main(argv: list[str]) -> int:
    args = list(argv)
    require_valid = False
    if "--require-valid" in args:
        args.remove("--require-valid")
        require_valid = True
    if len(args) != 1:
        print(
            "usage: harbor_load_tasks.py [--require-valid] TASKS_DIR",
            file=sys.stderr,
        )
        return 2
    tasks_dir = Path(args[0])
    if not tasks_dir.is_dir():
        print(f"not a directory: {tasks_dir}", file=sys.stderr)
        return 2

    apply_typing_shim()
    try:
        from harbor.models.task.paths import TaskPaths
        from harbor.models.task.task import Task
    except Exception as exc:  # noqa: BLE001
        print(f"cannot import harbor's task loader: {describe_error(exc)}", file=sys.stderr)
        return 2
    harbor_version = importlib.metadata.version("harbor")

    task_dirs = sorted(p for p in tasks_dir.iterdir() if p.is_dir())
    if not task_dirs:
        print(f"no task directories in {tasks_dir}", file=sys.stderr)
        return 2

    failures = 0
    for task_dir in task_dirs:
        valid = _is_valid(Task, TaskPaths, task_dir)
        record: dict[str, typing.Any] = {"dir": task_dir.name}
        try:
            # Harbor should not print, but keep stdout pure JSON lines anyway.
            with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings(
                record=True
            ) as caught:
                warnings.simplefilter("always")
                task = _load(Task, task_dir)
            cfg = task.config
            env = cfg.environment
            record.update(
                ok=True,
                valid=valid,
                name=task.name,
                docker_image=_get(env, "docker_image"),
                verifier_timeout_sec=_get(cfg, "verifier.timeout_sec"),
                agent_timeout_sec=_get(cfg, "agent.timeout_sec"),
                build_timeout_sec=_get(env, "build_timeout_sec"),
                cpus=_get(env, "cpus"),
                memory_mb=_get(env, "memory_mb"),
                storage_mb=_get(env, "storage_mb"),
                instruction_len=len(task.instruction),
                metadata=_jsonable(cfg.metadata),
                # 0.1.x: `version`; 0.2x renamed it to `schema_version`
                # (and maps a `version` key in task.toml onto it).
                schema_version=_get(cfg, "schema_version", "version"),
                warnings=[
                    f"{w.category.__name__}: {w.message}" for w in caught
                ],
            )
        except Exception as exc:  # noqa: BLE001
            record.update(ok=False, valid=valid, error=describe_error(exc))
        record["harbor_version"] = harbor_version
        if not record["ok"] or (require_valid and record["valid"] is not True):
            failures += 1
        print(json.dumps(record, sort_keys=False), flush=True)

    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
