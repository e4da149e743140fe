"""Load a Harbor job directory with Harbor's own models (run with a venv from harbor-venv.sh).

    python scripts/harbor_load_job.py JOB_DIR

Loads the job's config.json (JobConfig) and result.json (JobResult), and every trial's
config.json (TrialConfig), result.json (TrialResult) and agent/trajectory.json (Trajectory).
Prints one JSON line per file: {"file", "model", "ok", "error"?}; exits 0 only if every file
loaded. Harbor declares Python >= 3.12; on 3.11 typing.override and typing.TypedDict are taken
from typing_extensions before importing it.
"""
import json
import sys
from pathlib import Path

from harbor_compat import apply_typing_shim

apply_typing_shim()

from harbor.models.job.result import JobResult  # noqa: E402
from harbor.models.trajectories.trajectory import Trajectory  # noqa: E402
from harbor.models.trial.result import TrialResult  # noqa: E402

# The config models pull in Harbor's registry clients (0.1.45: supabase, which is not installed
# here); they are loaded where they import, and said so where they do not.
try:
    from harbor.models.job.config import JobConfig  # noqa: E402
except ImportError:
    JobConfig = None
try:
    from harbor.models.trial.config import TrialConfig  # noqa: E402
except ImportError:
    TrialConfig = None


def load(path, model):
    try:
        model.model_validate_json(Path(path).read_text())
        return {"file": str(path), "model": model.__name__, "ok": True}
    except Exception as exc:  # noqa: BLE001 - every failure is reported, not raised
        return {"file": str(path), "model": model.__name__, "ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}


def main(argv):
    job = Path(argv[1])
    rows = []
    for name, model in (("config.json", JobConfig), ("result.json", JobResult)):
        if model is not None and (job / name).is_file():
            rows.append(load(job / name, model))
    for trial in sorted(p for p in job.iterdir() if p.is_dir()):
        for name, model in (("config.json", TrialConfig), ("result.json", TrialResult), ("agent/trajectory.json", Trajectory)):
            if model is not None and (trial / name).is_file():
                rows.append(load(trial / name, model))
    for r in rows:
        print(json.dumps(r))
    return 0 if rows and all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
