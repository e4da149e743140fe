# beyondswe verifier: the spec it is given, one name and one default per option.
#
# adapters/beyondswe_verifier/spec.py. The spec's type is VerifierSpec in
# src/verifier_spec.rs; its JSON Schema, schemas/verifier_spec.schema.json, is generated from it.
# tests/it/verifier.rs holds KEYS (names and types) and the defaults below to that schema and to
# the Rust constants. The offline grader writes the whole spec; a Harbor task holds its instance
# part as tests/test_config.json, which from_test_config() completes with the task's own files.
# Python 3.6+, standard library only.
import hashlib
import json
import os

from . import common
from . import files

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Dict, Optional  # noqa: F401


# Seconds the tests may run, and each setup command or Doc2Repo install: the Rust side's
# DEFAULT_TIMEOUT_SECS and DEFAULT_SETUP_TIMEOUT, for a test_config.json written without them.
DEFAULT_TEST_TIMEOUT_SEC = 1800
DEFAULT_SETUP_TIMEOUT_SEC = 300

# A Harbor task's gold check, beside its test_config.json (see canary_steps.gold_check).
GOLD_CHECK = "gold_check.json"

# What a Harbor task's tests/test_config.json holds, by type.
INSTANCE_KEYS = {
    "fail_to_pass": "string_list", "pass_to_pass": "string_list", "instance_id": "string",
    "family": "string", "workdir": "string", "base_commit": "string", "test_suite_num": "integer",
    "f2p_paths": "string_list", "keep_paths": "string_list", "test_timeout_sec": "integer",
}

# Every key a spec may carry, by type (null allowed for all but lists and booleans).
KEYS = dict(INSTANCE_KEYS, **{
    "setup_timeout_sec": "integer", "canaries": "boolean", "max_file_bytes": "integer", "state_dir": "string",
    "private_paths": "string_list", "result": "string", "patch": "string", "gold_patch": "string",
    "f2p_patch": "string", "f2p_script": "string", "suite_zip": "string", "tests_dir": "string",
    "capture": "string", "shared_container": "boolean", "collected": "boolean", "strict": "boolean",
    "canary_check": "object", "canary_check_run": "string",
})


def _fits(kind, value):  # type: (str, Any) -> bool
    if kind == "string_list":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == "boolean":
        return isinstance(value, bool)
    if value is None:
        return True
    if kind == "object":
        return isinstance(value, dict)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, str)


def check(spec):  # type: (Any) -> Dict[str, Any]
    """Refuses a spec that is not one: a key no version of the grader writes, or a value of the
    wrong type, is the grader's bug, never a verdict."""
    if not isinstance(spec, dict):
        raise common.VerifyError("verifier_failed", "the spec is not a JSON object")
    unknown = sorted(k for k in spec if k not in KEYS)
    if unknown:
        raise common.VerifyError("verifier_failed",
                                 "the spec has keys the verifier does not know: %s" % ", ".join(unknown))
    wrong = sorted(k for k, v in spec.items() if not _fits(KEYS[k], v))
    if wrong:
        raise common.VerifyError("verifier_failed", "spec values of the wrong type: %s" % ", ".join(
            "%s (expected %s, got %r)" % (k, KEYS[k].replace("_", " "), spec[k]) for k in wrong))
    if not spec.get("state_dir"):
        raise common.VerifyError("verifier_failed", "the spec names no state_dir")
    return spec


def test_timeout(spec):  # type: (Dict[str, Any]) -> int
    return spec.get("test_timeout_sec") or DEFAULT_TEST_TIMEOUT_SEC


def setup_timeout(spec):  # type: (Dict[str, Any]) -> int
    return spec.get("setup_timeout_sec") or DEFAULT_SETUP_TIMEOUT_SEC


def from_test_config(cfg, tests, logs, state_dir, capture_name):
    # type: (Dict[str, Any], str, str, str, str) -> Dict[str, Any]
    """The spec of a Harbor task: the instance part of its test_config.json and its `strict`
    (other tools' keys left out), the task's own files under `tests`, and what holds under Harbor (the agent had
    the container first; canaries always planted)."""
    spec = dict((k, cfg[k]) for k in INSTANCE_KEYS if cfg.get(k) is not None)
    if cfg.get("strict") is True:
        # The task was made with `--strict`: evidence makes a verdict forgery_suspected.
        spec["strict"] = True
    spec.setdefault("workdir", "/workspace")
    spec.update({"state_dir": state_dir, "private_paths": [tests, state_dir], "tests_dir": tests,
                 "canaries": True, "capture": os.path.join(logs, capture_name), "shared_container": True})
    for key, name in (("f2p_patch", "f2p_patch.diff"), ("gold_patch", "gold_patch.diff")):
        path = os.path.join(tests, name)
        if os.path.isfile(path) and os.path.getsize(path) > 0:
            spec[key] = path
    if os.path.isfile(os.path.join(tests, "test_suite.zip")):
        spec["suite_zip"] = os.path.join(tests, "test_suite.zip")
    found = task_gold_check(cfg, tests)
    if found is not None:
        spec["canary_check"] = found
    return spec


def task_gold_check(cfg, tests):  # type: (Dict[str, Any], str) -> Optional[Dict[str, Any]]
    """The gold check the grader made with the task (with the seed of its string sites, as
    secret as the hidden tests beside it): tests/gold_check.json, taken only when its SHA-256 is
    the one test_config.json names (`gold_check_sha256`). A file the config does not name is
    not the task's (under Harbor 0.1.x the agent had /tests before the task's files were copied
    in, and a check of its own, with no sites, would leave every test without a group)."""
    want = cfg.get("gold_check_sha256")
    if not isinstance(want, str) or not want:
        return None
    try:
        data = files.read_regular(os.path.join(tests, GOLD_CHECK))
    except (OSError, ValueError):
        return None
    if hashlib.sha256(data).hexdigest() != want:
        return None
    try:
        found = json.loads(data.decode("utf-8"))
    except ValueError:
        return None
    return found if isinstance(found, dict) and isinstance(found.get("seed"), str) else None
