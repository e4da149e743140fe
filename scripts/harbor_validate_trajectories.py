#!/usr/bin/env python3
"""Validate ATIF trajectory files with Harbor's own trajectory validator.

Run with the python of a venv made by scripts/harbor-venv.sh:

    python scripts/harbor_validate_trajectories.py [--no-validate-images] PATH...

Each PATH is an ATIF file (``agent/trajectory.json`` in a Harbor trial
directory); a directory stands for every ``*.json`` file below it (recursive,
sorted).  Each file is checked exactly the way Harbor's own checker
(``python -m harbor.utils.trajectory_validator FILE``) does it:
``harbor.utils.trajectory_validator.TrajectoryValidator().validate(Path(FILE))``,
i.e. the pydantic ``harbor.models.trajectories.Trajectory`` model (with its
validators) plus the check that local image (and, since Harbor's ATIF-v1.8
support, audio) paths exist, resolved relative to the file's directory.
``--no-validate-images`` skips that existence check, like the CLI's flag.

One JSON object per file is printed on stdout, one per line, in input order:

    {"file": PATH, "ok": bool, "errors": ["..."], "harbor_version": "X.Y.Z"}

``errors`` holds Harbor's own messages (``TrajectoryValidator.errors``).  If the
validator itself raises (it can, e.g. on a ``steps`` array holding non-objects,
because its media-path walk assumes dicts), the file is reported as not ok
with an extra ``"validator raised <Type>: <message>"`` entry -- Harbor's CLI
also exits 1 in that case.

Exit status: 0 if every file is valid; 1 if any is not; 2 on usage errors
(no paths, a path that does not exist, a directory without JSON files) or
when Harbor's validator cannot be imported.

Harbor declares Python >= 3.12; on 3.11 ``typing.override`` and
``typing.TypedDict`` are taken from typing_extensions before importing it.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import sys
from pathlib import Path

from harbor_compat import apply_typing_shim, describe_error

USAGE = "usage: harbor_validate_trajectories.py [--no-validate-images] PATH..."





def _expand(args: list[str]) -> list[str] | None:
    files: list[str] = []
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            found = sorted(str(p) for p in path.rglob("*.json") if p.is_file())
            if not found:
                print(f"no *.json files under {arg}", file=sys.stderr)
                return None
            files.extend(found)
        elif path.exists():
            files.append(arg)
        else:
            print(f"no such file: {arg}", file=sys.stderr)
            return None
    return files


def main(argv: list[str]) -> int:
    args = list(argv)
    validate_images = True
    if "--no-validate-images" in args:
        args.remove("--no-validate-images")
        validate_images = False
    if not args or any(a.startswith("-") and not Path(a).exists() for a in args):
        print(USAGE, file=sys.stderr)
        return 2
    files = _expand(args)
    if files is None:
        return 2

    apply_typing_shim()
    try:
        from harbor.utils.trajectory_validator import TrajectoryValidator
    except Exception as exc:  # noqa: BLE001
        print(f"cannot import harbor's trajectory validator: {describe_error(exc)}", file=sys.stderr)
        return 2
    harbor_version = importlib.metadata.version("harbor")

    failures = 0
    for file in files:
        validator = TrajectoryValidator()
        try:
            # Harbor should not print, but keep stdout pure JSON lines anyway.
            with contextlib.redirect_stdout(sys.stderr):
                ok = validator.validate(Path(file), validate_images=validate_images)
            errors = list(validator.get_errors())
        except Exception as exc:  # noqa: BLE001 - Harbor's CLI also fails here
            ok = False
            errors = list(validator.errors) + [f"validator raised {describe_error(exc)}"]
        ok = bool(ok) and not errors
        if not ok:
            failures += 1
        record = {
            "file": file,
            "ok": ok,
            "errors": errors,
            "harbor_version": harbor_version,
        }
        print(json.dumps(record, ensure_ascii=False), flush=True)

    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
