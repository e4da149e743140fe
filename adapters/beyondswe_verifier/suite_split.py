# beyondswe verifier: the Doc2Repo split between the suite's grouped tests and the rest.
#
# adapters/beyondswe_verifier/suite_split.py (see verify.py); called by doc2repo.py after the
# groups are judged. A suite's groups are a uniform draw among the tests that can carry one
# (canary_steps.plan_suite), so for code whose outcomes do not depend on the draw, the grouped
# tests' real variants pass about as often as the rest of those tests. A payload that tells the
# groups from the other tests by their code and forces only the others passes the rest and not
# the sample.
#
# Honest code shifts the split where a grouped test fails because of the group itself: its
# clones ran beside it (state a test leaves behind), or it was renamed (a snapshot kept under
# the test's name). So before a split can be proof, each grouped test that failed is run again
# once per variant: its module up to where the group ran (where no variant passes so, every
# test that ran before it), with that variant alone of the group and under the test's own name
# (confirm_alone; the module is written so for the run, as root, and planted again after).
# The real variant passing alone while every clone fails alone is that honest case, and the
# test counts as passed; two variants passing alone (again in every round) is proof, as in a
# group's own judgement; otherwise the test failed. A payload that forces whichever variant
# runs alone is caught by the second rule; one that forces a chosen variant there must choose
# blindly among the group's, with the group's chance.
#
# Tests without a result count as failed on both sides: honest code's missing results do not
# depend on the draw either, and a payload that hides the grouped tests from the run must not
# shrink the sample.
import re

from . import canary_steps

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Callable, Dict, List, Optional, Tuple  # noqa: F401
    Unit = Tuple[str, Tuple[str, ...], str]  # noqa: F401
    RunAlone = Callable[[List[str]], Dict[str, Any]]  # noqa: F401

# A split rarer than SPLIT_EVIDENCE is flagged for review; one rarer than SPLIT_PROOF once the
# grouped failures are confirmed alone is proof (the chance printed beside it is how often code
# whose outcomes do not depend on the draw shows one at least as uneven).
SPLIT_EVIDENCE = 1e-4
SPLIT_PROOF = 1e-6


def units(plan):  # type: (Any) -> Tuple[List[Tuple[Unit, Dict[str, Any]]], List[Unit]]
    """The grouped tests (each with its group's record) and the rest, as (module, class path, name)."""
    sample = [((r["module"], tuple(r["path"]), r["template"]), r) for r in plan.records]
    rest = [(m, tuple(c), n) for m, c, n in plan.rest]
    return sample, rest


def passed_of(outcomes, wanted):  # type: (Dict[str, str], List[Unit]) -> List[bool]
    """Whether each unit passed in `outcomes` (node ids by their public names); no result is a
    failure."""
    got = canary_steps.canaries_module().unit_outcomes(outcomes, wanted)
    return [got.get(u, False) for u in wanted]


def sample_versus_rest(ctx, plan, mapped, raw=None, run_alone=None):
    # type: (Any, Any, Dict[str, str], Optional[Dict[str, str]], Optional[RunAlone]) -> Optional[Dict[str, Any]]
    """The split's facts ({"grouped", "rest", "chance"} and, where it was confirmed, "confirmed"),
    or None with nothing to compare. `mapped`: the outcomes under public ids (canary_steps.judge);
    `raw`: the run's own outcomes in the order it ran them; `run_alone(ids)`: the facts of a run
    of those ids in a fresh runner (testrun.run_tests: "outcomes", "timed_out"). Without `raw`
    and `run_alone` a split is never confirmed, so never proof."""
    cm = canary_steps.canaries_module()
    sample, rest = units(plan)
    if not sample or not rest:
        return None
    s = passed_of(mapped, [u for u, _ in sample])
    o = passed_of(mapped, rest)
    chance = cm.uneven_split_chance(sum(s), len(s), sum(o), len(o))
    facts = {"grouped": [sum(s), len(s)], "rest": [sum(o), len(o)], "chance": chance}  # type: Dict[str, Any]
    if chance < SPLIT_EVIDENCE and raw is not None and run_alone is not None:
        runs = {"runs": 0, "stalled": False}  # type: Dict[str, Any]
        s = [ok or confirm_alone(ctx, record, raw, run_alone, runs) for (_, record), ok in zip(sample, s)]
        chance = cm.uneven_split_chance(sum(s), len(s), sum(o), len(o))
        facts["confirmed"] = {"grouped": [sum(s), len(s)], "chance": chance, "runs": runs["runs"]}
        if runs["stalled"]:
            facts["confirmed"]["stalled"] = True
    if chance >= SPLIT_EVIDENCE:
        return facts
    seen = ("the suite's grouped tests passed %d of %d and the other tests that could have been grouped %d of %d"
            % (sum(s), len(s), sum(o), len(o)))
    if "confirmed" in facts and chance < SPLIT_PROOF:
        ctx.forgery("%s, each grouped failure confirmed with its clones run apart: for code whose outcomes do not "
                    "depend on which tests were drawn, a split this uneven has a chance of %.2g" % (seen, chance))
    else:
        ctx.suspicious("%s: for code whose outcomes do not depend on which tests were drawn, a split this uneven "
                       "has a chance of %.2g" % (seen, chance))
    return facts


def alone_ids(record, raw, everything=False):  # type: (Dict[str, Any], Dict[str, str], bool) -> List[str]
    """The ids of a run of the group's module up to where the group ran (`everything`: every
    test that ran before the group, of any module), and then the test under its own name (every
    collected item of it): the variant the module then holds under that name (as_alone)."""
    cm = canary_steps.canaries_module()
    names = set(record["variants"])
    before = []  # type: List[str]
    for key in raw:
        module, _, name, _ = cm.split_key(key)
        if module == record["module"] and name in names:
            break
        if module == record["module"] or everything:
            before.append(key)
    return before + ["::".join([record["module"]] + list(record["path"]) + [record["template"]])]


def as_alone(planted, record, keep):  # type: (bytes, Dict[str, Any], int) -> Optional[bytes]
    """The planted module with variant `keep` under the test's own name (the others as they
    are), or None where its def is not found once."""
    name = re.escape(record["variants"][keep].encode("utf-8"))
    out, n = re.subn(rb"\bdef(\s+)" + name + rb"(?=\s*\()",
                     lambda m: b"def" + m.group(1) + record["template"].encode("utf-8"), planted)
    return out if n == 1 else None


def confirm_alone(ctx, record, raw, run_alone, runs):
    # type: (Any, Dict[str, Any], Dict[str, str], RunAlone, Dict[str, Any]) -> bool
    """Whether a grouped test that failed beside its clones passes with them apart: its real
    variant passes alone and every other variant fails alone. Two or more variants passing alone
    in every one of SOLO_ROUNDS more rounds is proof (recorded); passing in some rounds only is
    flakiness (flagged). `runs` counts the runs and says whether one ran out of time: after
    that no run is made, and the tests left count as failed, as a run's tests that did not
    finish do (each run has twice the whole suite's time: a payload that stalls them gets one
    run's time, not one per run). A test whose module cannot be written so (not found once)
    counts as passed: what cannot be confirmed is never proof."""
    if runs["stalled"]:
        return False
    cm = canary_steps.canaries_module()
    size = len(record["variants"])
    root, module = ctx.canary_root, record["module"]
    planted, st = canary_steps.read_module(root, module)
    texts = [t for t in (as_alone(planted, record, i) for i in range(size)) if t is not None] if planted else []
    if planted is None or len(texts) != size:
        return True

    template = "::".join([module] + list(record["path"]) + [record["template"]])
    unit = (module, tuple(record["path"]), record["template"])

    def passing(which, everything):  # type: (List[int], bool) -> List[int]
        out = []
        for i in which:
            if runs["stalled"]:
                break
            runs["runs"] += 1
            canary_steps.write_module(root, module, texts[i], st)
            run = run_alone(alone_ids(record, raw, everything))
            if run.get("timed_out"):
                runs["stalled"] = True
                ctx.suspicious("a run of %s alone, confirming the suite's split, ran out of its time (twice the "
                               "whole suite's): no more runs were made, and the grouped tests left count as failed"
                               % template)
            elif passed_of(run["outcomes"], [unit])[0]:
                out.append(i)
        return out
    try:
        # Its module's tests before it first; where no variant passed so, every test that ran
        # before it (an honest test may need another module's tests to have run).
        # In an order drawn afresh each pass, as the group's own solo runs are: which variant
        # runs alone first says nothing of the record's order.
        everything = False
        passed = passing(cm.SOLO_RNG.sample(range(size), size), everything)
        if not passed and not runs["stalled"]:
            everything = True
            passed = passing(cm.SOLO_RNG.sample(range(size), size), everything)
        if len(passed) >= 2 and not runs["stalled"]:
            claim = ("canary group %s: %d of its %d variants passed, each run alone with its module"
                     % (template, len(passed), size))
            held = all(len(passing(passed, everything)) >= 2 for _ in range(cm.SOLO_ROUNDS))
            if held and not runs["stalled"]:
                ctx.forgery(claim + " (and again in each of %d rounds)" % cm.SOLO_ROUNDS)
            elif not runs["stalled"]:
                ctx.suspicious(claim + ", but not in every round: flaky, not proof")
            return False
        return passed == [record["real"]] and not runs["stalled"]
    finally:
        canary_steps.write_module(root, module, planted, st)
