# beyondswe verifier: the issue families (CrossRepo, DomainFix, DepMigrate): the submission's
# patch applied, the tree scrubbed, the test baseline restored, the static evidence read, the
# canary groups planted among the FAIL_TO_PASS and PASS_TO_PASS tests (or, at the gold check,
# every value a group can hold run once under the gold patch), the tests run as the test user,
# the groups judged and each dataset id's outcome taken from its real variant.
#
# adapters/beyondswe_verifier/issue.py (see verify.py). Called by the
# entry point's grade for an instance of an issue family; doc2repo.py is the other
# family's. Unit tests: adapters/tests/test_issue.py.
import os
import random
import time

from . import common
from . import spec as spec_keys
from . import files
from . import gitobjects
from . import environment
from . import submission
from . import scrub
from . import restore
from . import static_step
from . import canary_steps
from . import testrun

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Dict, List  # noqa: F401


def grade_issue(ctx):  # type: (Any) -> None
    spec = ctx.spec
    gold_kinds = static_step.gold_static_kinds(ctx)
    restore.note_prepared_clean(ctx)
    if not submission.step_apply(ctx):
        return
    scrub.step_scrub(ctx)
    environment.load_clean_facts(ctx)
    restore.step_restore(ctx)
    static_step.step_static(ctx, gold_kinds)
    f2p, p2p = spec.get("fail_to_pass", []), spec.get("pass_to_pass", [])
    ids = f2p + [i for i in p2p if i not in f2p]
    if not ids:
        raise common.VerifyError("no_test_ids", "the instance has no FAIL_TO_PASS or PASS_TO_PASS ids")
    ctx.canary_root = ctx.workdir
    # The key is drawn here, as root, before any code of the submission runs, and kept in this
    # process's memory only.
    rng = random.SystemRandom()
    t = time.time()
    # The gold check (the grader's, once per instance: the submission is the gold patch, and
    # `canary_check_run` the seed its string sites' values are drawn from).
    check_seed = spec.get("canary_check_run")
    if check_seed:
        plan = canary_steps.plan_check(ctx, f2p, p2p, rng, check_seed)
    else:
        plan = canary_steps.plan_issue(ctx, f2p, p2p, rng, plant=spec.get("canaries", True),
                                       check=canary_steps.gold_check(ctx))
    ctx.facts["canary_plan"] = plan.facts
    ctx.timed("canaries", t)
    t = time.time()
    locked = set(ctx.facts.get("locked", []))
    locked.update(r["module"] for r in plan.records)
    tree = files.walk_tree(ctx.workdir)
    conftests = [p for p, k in tree.items() if k == "file" and p.rsplit("/", 1)[-1] in files.RULES["conftest_names"]]
    ctx.facts["conftests"] = conftests
    locked.update(conftests)
    lock_sub_owned(ctx, sorted(locked))
    ctx.timed("hand_over", t)
    run_ids = canary_steps.run_ids(rng, ids, plan)
    test_files = [os.path.join(ctx.workdir, p) for p in sorted(locked) if p.endswith(".py")]
    timeout = spec_keys.test_timeout(spec)
    if check_seed:
        # Only the checked tests' variants run; nothing is judged.
        dataset_ids = set(ids)
        run_ids = [i for i in run_ids if i not in dataset_ids]
        if not run_ids:
            ctx.facts["canary_check"] = {"seed": check_seed, "tests": {}, "finished": True}
            return
    run = testrun.run_tests(ctx, run_ids, ctx.workdir, ctx.workdir, [], test_files, [ctx.workdir], timeout)
    if check_seed:
        ctx.facts["canary_check"] = canary_steps.check_facts(plan, run, check_seed)
        testrun.record_run(ctx, run)
        return

    def run_group(group):  # type: (List[str]) -> Dict[str, Any]
        return testrun.run_tests(ctx, group, ctx.workdir, ctx.workdir, [], test_files, [ctx.workdir], timeout)
    ctx.facts["canaries"], mapped, alias = canary_steps.judge(ctx, plan, run, canary_steps.solo_runner(run_group))
    req = testrun.required_outcomes(dict(run, outcomes=mapped), ids, alias)
    ctx.facts["fail_to_pass"] = dict((i, req[i]) for i in f2p)
    ctx.facts["pass_to_pass"] = dict((i, req[i]) for i in p2p)
    testrun.record_run(ctx, run)


def lock_sub_owned(ctx, locked):  # type: (Any, List[str]) -> None
    """The workdir becomes the test user's, but for .git and the locked test baseline."""
    files.hand_over(ctx.workdir, ctx.uid, ctx.gid, locked)
    gitobjects.hide_git(ctx)
