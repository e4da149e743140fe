# beyondswe verdict: the one place a verdict is made, from the facts the verifier's steps record.
#
# adapters/beyondswe_verifier/decide.py, a module of the verifier package: verify.py calls
# decide() once its steps are done. A pure
# function of a JSON-like dict; unit tests: adapters/tests/test_decide.py, and the table in
# tests/it/verifier.rs that also checks every reason against the Rust verdict's.
#
# Only proof changes a verdict: a canary group with two passing variants or a variant with no
# result or two (canary_steps.judge, each confirmed alone), which no honest code produces.
# What the static step and the runner see inside the tested process is evidence for review
# (flags.suspicious, static.hits): it changes nothing, unless the spec asks for `strict`.
#
# Order of the rules, first match wins: an error of the grader; a patch that did not apply;
# proof of forgery; with `strict`, any evidence (suspected); for Doc2Repo the manifest's pass
# rate is the score whatever comes after; limits (disk, memory, time); no results; then the
# tests' own outcome, the real variant of every group standing for its test.

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Dict, Tuple  # noqa: F401

PASS = ("passed", "xpassed")


def decide(f):  # type: (Dict[str, Any]) -> Tuple[str, str, float]
    """The verdict from the facts; the only place one is made. Returns (verdict, reason, score)."""
    doc = f.get("family", "").lower() == "doc2repo"
    if f.get("error"):
        return "error", f["error"]["reason"], 0.0
    apply = f.get("apply")
    if apply is not None and not apply.get("ok"):
        return "unresolved", "patch_failed", 0.0
    if f["flags"].get("forgery"):
        return "unresolved", "forgery_detected", 0.0
    static = f.get("static") or {}
    if f.get("strict") and (static.get("hits") or f["flags"].get("suspicious")):
        return "unresolved", "forgery_suspected", 0.0
    run = f.get("run") or {}
    score = 0.0
    suite = f.get("suite")
    if doc and suite:
        denom = suite["expected"] if suite["expected"] > 0 else suite["collected"]
        score = min(1.0, float(suite["passed"]) / denom) if denom else 0.0
        suite["all_passed"] = bool(denom) and suite["passed"] >= denom
    if f.get("disk_limit"):
        return "unresolved", "disk_limit", score
    if run.get("oom"):
        return "unresolved", "out_of_memory", score
    if run.get("timed_out"):
        return "unresolved", "timeout", score
    if not run.get("started"):
        return "unresolved", "no_results", 0.0
    if doc:
        if suite and suite.get("all_passed"):
            return "resolved", "all_tests_passed", score
        return "unresolved", "tests_failed", score
    outcomes = list(f.get("fail_to_pass", {}).values()) + list(f.get("pass_to_pass", {}).values())
    # pytest exits 1 because the groups' mutants fail; 2 and up mean it did not finish.
    if outcomes and all(o in PASS for o in outcomes) and run.get("exit") in (0, 1):
        return "resolved", "all_tests_passed", 1.0
    if "disputed" in outcomes:
        return "unresolved", "results_disagree", 0.0
    return "unresolved", "tests_failed", 0.0
