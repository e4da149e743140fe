# beyondswe verifier: the canaries in the tree: planned and planted among the real tests
# (beyondswe_canaries.py plans and judges them), placed among the run's ids, and judged after
# the run.
#
# adapters/canary_steps.py, installed as beyondswe_canary_steps.py (see adapters/verify.py).
# Used by both families, before the test user gets the tree and after its run.
import os

try:  # by its installed name, else by its name in adapters/ (the unit tests)
    import beyondswe_common as common
except ImportError:
    import common

files = common.sibling("files")


def canaries_module():
    return common.sibling("canaries")


def plan_canaries(ctx, modules, rng, plant=True, after_only=False):
    """Plans a twin and a poison of one test in each of `modules` ((path under ctx.canary_root,
    preferred (class path, name) pairs)), and plants them unless `plant` is false (the dataset's
    own patches: the plan is only counted, for calibrate). Returns the records and the plan's
    facts: how many templates were found, of which shapes, and why none where none."""
    cm = canaries_module()
    records, shapes, modules_read = [], [], 0
    for path, preferred in modules:
        full = os.path.join(ctx.canary_root, path)
        try:
            with open(full, "rb") as fh:
                source = fh.read()
            st = os.stat(full)
        except OSError:
            continue
        modules_read += 1
        try:
            planned = cm.plan(source, rng, preferred, after_only)
        except Exception as exc:  # noqa: BLE001 - a module the planner cannot handle gets no canary
            ctx.suspicious("no canary could be planned in %s: %r" % (path, exc))
            planned = None
        if planned is None:
            continue
        data, record = planned
        record["module"] = path
        shapes.append(record["shape"])
        records.append(record)
        if plant:
            files.safe_write(ctx.canary_root, path, data, "100755" if st.st_mode & 0o100 else "100644")
            os.utime(full, (st.st_atime, st.st_mtime))
    plan = {"planted": plant, "templates": len(records), "shapes": shapes, "modules": modules_read}
    if not records:
        plan["none_because"] = ("no test module of the ids could be read" if not modules_read else
                                "no test of the modules read can be cloned (a top-level assertion "
                                "to negate, no return or yield, not bound to its own name)")
    return (records if plant else []), plan


def canary_modules_for_ids(f2p, p2p):
    """Test modules of the ids, F2P's first, each with its preferred templates: the (class path,
    name) pairs its F2P ids name, then those its P2P ids name."""
    modules = []
    seen = {}
    for tier, ids in enumerate((f2p, p2p)):
        for test_id in ids:
            path, _, rest = test_id.partition("::")
            if not path.endswith(".py") or not rest:
                continue
            parts = rest.split("[", 1)[0].split("::")
            if path not in seen:
                seen[path] = ([], [])
                modules.append((path, seen[path]))
            seen[path][tier].append((tuple(parts[:-1]), parts[-1]))
    return modules


def with_canary_ids(rng, ids, records):
    """The run's ids with each canary at a random place after its template (or after the last
    id of its module): where the ids are, nothing tells a canary by its place."""
    cm = canaries_module()
    out = list(ids)
    for r in records:
        tmpl, twin, poison = cm.node_ids(r["module"], r)
        for cid in (twin, poison):
            after = [i for i, x in enumerate(out) if x == tmpl or x.startswith(tmpl + "[")]
            if not after:
                after = [i for i, x in enumerate(out) if x.startswith(r["module"] + "::")] or [len(out) - 1]
            out.insert(rng.randint(after[0] + 1, len(out)), cid)
    return out


def judge_canaries(ctx, records, outcomes, solo=None):
    """Facts about the canaries (beyondswe_canaries.judge), their proof recorded as forgery and
    their flaky contradictions as suspicious."""
    cm = canaries_module()
    facts = []
    for rec in records:
        fact = cm.judge(rec["module"], rec, outcomes, solo)
        for b in fact["proof"]:
            ctx.forgery(b)
        for f in fact["flaky"]:
            ctx.suspicious(f)
        facts.append(fact)
    return facts


def solo_runner(run_one):
    """solo(ids) for the canaries' judge: each id run alone in a fresh runner (`run_one(ids)`)."""
    def solo(ids):
        out = {}
        for test_id in ids:
            out.update(run_one([test_id]))
        return out
    return solo
