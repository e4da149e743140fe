# beyondswe verifier: the canary groups in the tree: planned and planted as root before the test
# user gets the tree (beyondswe_canaries.py builds them), their variants put in the run's place
# of the tests they hide, judged after the run, and the real variants' outcomes mapped back to
# the dataset's ids.
#
# adapters/beyondswe_verifier/canary_steps.py (see verify.py).
# Used by both families. The key (which variant of each group is real) exists only in the
# records this module returns, in the verifier's memory: nothing written into the container
# names it, and the result names it only after every process of the test user is gone.
import os
import re
import stat
import sys

from . import files

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    import random  # noqa: F401
    from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Tuple  # noqa: F401

# PASS_TO_PASS tests drawn into groups at each grading where no FAIL_TO_PASS test can carry one
# (with P2P_K mutants each: then they are what catches a payload that forges every outcome), and
# the Doc2Repo suite's: DOC_GROUPS tests, or one in DOC_SHARE of those that can carry a group
# where that is more, with DOC_K mutants each. Every variant is a test run (a failing one,
# mostly), so groups are built only where they buy proof.
P2P_GROUPS, P2P_K = 2, 2
DOC_GROUPS, DOC_K, DOC_SHARE = 6, 3, 40


def suite_groups(candidates):  # type: (int) -> int
    """How many of a suite's `candidates` tests that can carry a group are drawn: DOC_GROUPS, or
    one in DOC_SHARE of a larger suite (at DOC_K mutants each, 7.5% more runs of those tests),
    where the split between them and the rest (suite_split.py) needs a larger sample to say
    anything."""
    return max(DOC_GROUPS, candidates // DOC_SHARE)

# The gold check (plan_check): the PASS_TO_PASS tests it checks (the groups a grading draws
# come from these), and the sites of each test it checks (a grading picks among those that
# held). Each checked site costs a test run per value a group there can hold.
CHECK_P2P, CHECK_SITES = 8, 3

# What a grading's canary_plan says of groups built on the gold check's sites.
CHECKED = "checked under the gold patch"

# The most .py files read for the classes a check or a judge knows (tree_hierarchy): far above a
# project with its libraries (this machine's whole site-packages: 21,500).
MAX_HIERARCHY_FILES = 200000


def canaries_module():  # type: () -> Any
    from . import canaries
    return canaries


def reading_module():  # type: () -> Any
    from . import canary_reading
    return canary_reading


def helpers_over(root, wrappers):  # type: (str, bool) -> Callable[[str], Any]
    """A function giving each test module's helper_sites.Helpers over the tree at `root`, all
    sharing one cache of the tree's parsed modules."""
    from . import helper_sites as hs
    parsed = {}  # type: Dict[str, Any]
    return lambda path: hs.for_tree(root, path, wrappers, read_module, parsed)


def split_id(test_id):  # type: (str) -> Optional[Tuple[str, Tuple[str, ...], str, str]]
    """(module, class path, name, parameters) of a dataset id, or None when it names no test
    function of a .py module."""
    path, _, rest = test_id.partition("::")
    if not path.endswith(".py") or not rest:
        return None
    base, bracket, params = rest.partition("[")
    parts = base.split("::")
    return path, tuple(parts[:-1]), parts[-1], bracket + params


def read_module(root, path):  # type: (str, str) -> Tuple[Optional[bytes], Optional[os.stat_result]]
    full = os.path.join(root, path)
    try:
        with open(full, "rb") as fh:
            return fh.read(), os.stat(full)
    except OSError:
        return None, None


def write_module(root, path, data, st):  # type: (str, str, bytes, Any) -> None
    files.safe_write(root, path, data, "100755" if st.st_mode & 0o100 else "100644")
    os.utime(os.path.join(root, path), (st.st_atime, st.st_mtime))


class Plan(object):
    """The groups of one grading: their records (the key included), what the plan found, and
    how the dataset's ids map to the variants that stand in for them."""

    def __init__(self):  # type: () -> None
        self.records = []  # type: List[Dict[str, Any]]
        # Doc2Repo: the tests that could have carried a group and were not drawn (sample_versus_rest)
        self.rest = []  # type: List[Tuple[str, Tuple[str, ...], str]]
        self.facts = {"planted": False, "groups": 0, "f2p_groups": 0, "sizes": [], "f2p_sizes": [],
                      "f2p_ungrouped": [], "modules": 0, "shapes": [], "forge_chance": 1.0}  # type: Dict[str, Any]


def gold_check(ctx):  # type: (Any) -> Any
    """The gold check a grading's groups rest on (canaries.GoldCheck), from the spec's
    `canary_check` ({"seed", "tests", "classes"}), or None where the grader ran none. A class
    group's chance is told from the submission's own classes (own_classes, canary_classes.apart)."""
    found = ctx.spec.get("canary_check")
    if not isinstance(found, dict) or not isinstance(found.get("seed"), str):
        return None
    return canaries_module().GoldCheck(found["seed"], found.get("tests") or {}, found.get("classes") or {},
                                       own=own_classes(ctx))


def own_classes(ctx):  # type: (Any) -> Callable[[], Any]
    """The classes of the submission's tree (the workdir as the tests will run it), read once
    when a class site or a judge first asks: at planning time, before any of its code runs,
    and the same for the judge after the run."""
    if ctx.own_classes is None:
        ctx.own_classes = lazy_hierarchy([ctx.workdir])
    return ctx.own_classes


def plan_issue(ctx, f2p, p2p, rng, plant=True, check=None):
    # type: (Any, List[str], List[str], random.Random, bool, Any) -> Plan
    """Groups for every FAIL_TO_PASS test that can carry one (k mutants each, k from the number
    of them, see canaries.ks_for) and, where none can, for up to P2P_GROUPS PASS_TO_PASS tests
    drawn at random, planted in ctx.canary_root (unless `plant` is false: counted only). A test whose name an id
    of another module also names is left alone (its module's variants would not be found
    there). With a gold `check`, only the tests and sites it found sound carry groups."""
    cm = canaries_module()
    out = Plan()
    any_call = reading_module().ANY_CALL
    targets = issue_targets(ctx, cm, f2p, p2p, check, lambda path: any_call if check is not None else None)
    f2p_targets = targets["f2p"]
    f2p_keys = set(f2p_targets)
    p2p_targets = [] if f2p_targets else [t for t in targets["p2p"] if t not in f2p_keys]
    rng.shuffle(p2p_targets)
    p2p_targets = p2p_targets[:P2P_GROUPS]
    # Which test's group is the larger when the sizes differ: drawn afresh, like the key.
    ks = cm.ks_for(len(f2p_targets))
    rng.shuffle(ks)
    per_module = {}  # type: Dict[str, List[Tuple[Tuple[str, ...], str, Any]]]
    for t, k in zip(f2p_targets, ks):
        per_module.setdefault(t[0], []).append((t[1], t[2], k))
    for t in p2p_targets:
        per_module.setdefault(t[0], []).append((t[1], t[2], P2P_K))
    plant_modules(ctx, cm, out, per_module, targets["sources"], rng, plant, None, check)
    parsed = targets["parsed"]
    for r in out.records:
        r["tier"] = "f2p" if any(t[0] == r["module"] and cm.stands_for(r, t[1], t[2]) for t in f2p_targets) \
            else "p2p"
    f2p_records = [r for r in out.records if r["tier"] == "f2p"]
    sizes = [r["k"] + 1 for r in f2p_records]
    out.facts["f2p_groups"] = len(sizes)
    out.facts["f2p_sizes"] = sizes
    out.facts["f2p_ungrouped"] = [i for i in f2p if not parsed.get(i) or not any(
        r["module"] == parsed[i][0] and cm.stands_for(r, parsed[i][1], parsed[i][2]) for r in f2p_records)]
    out.facts["forge_chance"] = cm.forge_chance_of(f2p_records)
    if check is not None:
        out.facts["gold_check"] = CHECKED
    if not sizes:
        out.facts["none_because"] = too_old() or (
            "no FAIL_TO_PASS test compares its result with a literal in a top-level assertion or a helper's "
            "expected argument, or expects an exception class with others of its kind unrelated to it, that a "
            "group can be built on" + (
                " and that held under the gold patch" if check is not None else ""))
    return out


def too_old():  # type: () -> Optional[str]
    """Why no group can be planted with this interpreter, or None: the groups need the end
    positions of a literal, which syntax trees carry from Python 3.8 and the tokens give from 3.6
    (end_positions.py); an older tree has no Constant node to stand for its literals."""
    if sys.version_info >= (3, 6):
        return None
    return ("this image's Python (%d.%d) is older than 3.6, whose syntax trees the groups are read from: no "
            "group can be planted" % sys.version_info[:2])


def plan_check(ctx, f2p, p2p, rng, seed):  # type: (Any, List[str], List[str], random.Random, str) -> Plan
    """The gold check's plan (the submission is the gold patch): every FAIL_TO_PASS test that can
    carry a group, and up to CHECK_P2P PASS_TO_PASS tests, each with up to CHECK_SITES of its
    sites and every value a grading's group there can hold (any k a FAIL_TO_PASS group may get;
    P2P_K for the others), planted in ctx.canary_root. Run them all, then check_facts. The tree
    is the gold one: a helper a test calls is read there (helper_sites), and a literal it
    compares may be wrapped in a call, since the check shows whether the wrapped values differ."""
    cm = canaries_module()
    check = cm.GoldCheck(seed, {})
    out = Plan()
    helpers = helpers_over(ctx.canary_root, True)
    targets = issue_targets(ctx, cm, f2p, p2p, None, helpers)
    f2p_keys = set(targets["f2p"])
    p2p_targets = [t for t in targets["p2p"] if t not in f2p_keys]
    rng.shuffle(p2p_targets)
    ks = sorted(set(k for n in range(1, len(targets["f2p"]) + 1) for k in cm.ks_for(n)))
    per_module = {}  # type: Dict[str, List[Tuple[Tuple[str, ...], str, Any]]]
    for t in targets["f2p"]:
        per_module.setdefault(t[0], []).append((t[1], t[2], ks))
    for t in p2p_targets[:CHECK_P2P]:
        per_module.setdefault(t[0], []).append((t[1], t[2], [P2P_K]))
    hierarchy = lazy_hierarchy([ctx.canary_root] + [p for p in ctx.state.get("clean_sys_path", [])
                                                    if p and os.path.isdir(p)])
    plant_modules(ctx, cm, out, per_module, targets["sources"], rng, True, None,
                  planner=lambda data, path, planned: cm.plan_check(data, planned, check, path, rng, CHECK_SITES,
                                                                    helpers=helpers(path), hierarchy=hierarchy))
    return out


def lazy_hierarchy(roots):  # type: (List[str]) -> Callable[[], Any]
    """tree_hierarchy(roots), read when first asked and kept: a check or a judge with no site
    on an expected class reads no file for it."""
    found = []  # type: List[Any]

    def get():  # type: () -> Any
        if not found:
            found.append(tree_hierarchy(roots))
        return found[0]
    return get


def tree_hierarchy(roots):  # type: (List[str]) -> Any
    """The classes of the gold tree and of the image's clean sys.path (the standard library's
    Python, every installed library's) with the interpreter's builtins
    (canary_classes.Hierarchy), read from every .py file under `roots` outside .git: a class a
    library derives from two others (numpy's AxisError from ValueError and IndexError) keeps
    that pair out of one group. Each directory is read once, and at most MAX_HIERARCHY_FILES
    files in all (small_regular each)."""
    from . import canary_classes
    found = canary_classes.Hierarchy()
    seen = set()  # type: Set[str]
    files_read = 0
    for root in roots:
        for top, dirs, names in os.walk(root):
            real = os.path.realpath(top)
            if real in seen:
                dirs[:] = []
                continue
            seen.add(real)
            dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")]
            for name in names:
                if name.endswith(".py"):
                    if files_read >= MAX_HIERARCHY_FILES:
                        return found
                    files_read += 1
                    data = small_regular(os.path.join(top, name), canary_classes.MAX_SOURCE)
                    if data is not None:
                        found.add_source(data)
    return found


def small_regular(path, cap):  # type: (str, int) -> Optional[bytes]
    """The bytes of a regular file of at most `cap` bytes, read without following a link or
    blocking on a FIFO; None for anything else. The judge reads the submission's tree after its
    tests ran, as root: a `x.py` linked to /dev/zero or a 10 GB file is skipped, not read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > cap:
            return None
        return fh.read(cap + 1)[:cap]


def check_facts(plan, run, seed):  # type: (Plan, Dict[str, Any], str) -> Dict[str, Any]
    """What a grading's spec carries of the gold check (`canary_check`): the seed, and each
    checked test's sites that held (see canaries.checked_sites)."""
    cm = canaries_module()
    tests, found_classes = {}, {}
    for r in plan.records:
        key = "::".join([r["module"]] + r["path"] + [r["template"]])
        tests[key] = cm.checked_sites(r, run["outcomes"])
        for at, names in cm.checked_classes(r, run["outcomes"]).items():
            found_classes[key + "::" + at] = names
    return {"seed": seed, "tests": tests, "classes": found_classes, "finished": finished(run)}


def issue_targets(ctx, cm, f2p, p2p, check, helpers):
    # type: (Any, Any, List[str], List[str], Any, Callable[[str], Any]) -> Dict[str, Any]
    """The FAIL_TO_PASS and PASS_TO_PASS tests that can carry a group, as (module, class path,
    name), with the modules read (`sources`) and the ids split (`parsed`). `helpers(path)`: the
    module's canary_reading.Module.helpers."""
    parsed = dict((i, split_id(i)) for i in f2p + p2p)
    by_name = {}  # type: Dict[str, Set[str]]
    for s in parsed.values():
        if s:
            by_name.setdefault(s[2], set()).add(s[0])
    sources, parsed_modules = {}, {}
    rm = reading_module()

    def module(path):
        """The module at `path`, read and parsed once (None where it cannot carry groups)."""
        if path not in sources:
            sources[path] = read_module(ctx.canary_root, path)
            data = sources[path][0]
            m = rm.parse(data, helpers(path)) if data is not None else None
            parsed_modules[path] = m if rm.eligible(m) else None
        return parsed_modules[path]

    def usable(test_ids):
        seen, out_ = set(), []
        for test_id in test_ids:
            s = parsed.get(test_id)
            if not s or len(by_name.get(s[2], ())) > 1 or (s[0], s[1], s[2]) in seen:
                continue
            seen.add((s[0], s[1], s[2]))
            m = module(s[0])
            if m is None or not rm.carries(m, s[1], s[2]):
                continue
            if check is not None:
                found = rm.find_def(m, s[1], s[2])
                if found is None or not check.sites(s[0], found[0], found[1][found[2]].name):
                    continue
            out_.append((s[0], s[1], s[2]))
        return out_

    return {"f2p": usable(f2p), "p2p": usable(p2p), "sources": sources, "parsed": parsed}


def plant_modules(ctx,  # type: Any
                  cm,  # type: Any
                  out,  # type: Plan
                  per_module,  # type: Dict[str, List[Tuple[Tuple[str, ...], str, Any]]]
                  sources,  # type: Mapping[str, Tuple[Optional[bytes], Optional[os.stat_result]]]
                  rng,  # type: random.Random
                  plant,  # type: bool
                  avoid,  # type: Optional[Callable[[str], bool]]
                  check=None,  # type: Any
                  planner=None,  # type: Optional[Callable[[bytes, str, List[Tuple[Tuple[str, ...], str, Any]]], Any]]
                  ):
    # type: (...) -> None
    """Plans each module's targets in one pass (with `planner(data, path, targets)`, else
    canaries.plan) and writes the module once."""
    if planner is None:
        planner = lambda data, path, targets: cm.plan(data, targets, rng, avoid, check, path)  # noqa: E731
    for path in sorted(per_module):
        data, st = sources.get(path) or read_module(ctx.canary_root, path)
        if data is None:
            continue
        out.facts["modules"] += 1
        try:
            planned = planner(data, path, per_module[path])
        except Exception as exc:  # noqa: BLE001 - a module the planner cannot handle gets no group
            ctx.suspicious("no canary group could be planned in %s: %r" % (path, exc))
            planned = None
        if planned is None:
            continue
        new, records = planned
        for r in records:
            r["module"] = path
            out.records.append(r)
            out.facts["shapes"].append(r["shape"])
        if plant:
            write_module(ctx.canary_root, path, new, st)
    out.facts["planted"] = bool(plant and out.records)
    out.facts["groups"] = len(out.records)
    out.facts["sizes"] = [r["k"] + 1 for r in out.records]
    if not plant:
        out.records = []


IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def plan_suite(ctx, suite, test_modules, rng, plant=True):  # type: (Any, str, List[str], random.Random, bool) -> Plan
    """Groups for up to suite_groups() tests of a Doc2Repo suite drawn at random among those
    that can carry one, DOC_K mutants each; every variant's name is new to the whole suite (a class
    of one module may be inherited in another)."""
    cm = canaries_module()
    out = Plan()
    helpers = helpers_over(suite, False)
    sources, taken, pool = {}, set(), []
    for path in test_modules:
        data, st = read_module(suite, path)
        if data is None:
            continue
        sources[path] = (data, st)
        taken.update(IDENT.findall(data))
        for cpath, name in cm.module_candidates(data, helpers(path)):
            pool.append((path, cpath, name))
    rng.shuffle(pool)
    drawn = suite_groups(len(pool))
    out.rest = pool[drawn:]
    per_module = {}  # type: Dict[str, List[Tuple[Tuple[str, ...], str, Any]]]
    for path, cpath, name in pool[:drawn]:
        per_module.setdefault(path, []).append((cpath, name, DOC_K))
    avoid = lambda n: n.encode("ascii") in taken  # noqa: E731
    plant_modules(ctx, cm, out, per_module, sources, rng, plant, avoid,
                  planner=lambda data, path, planned: cm.plan(data, planned, rng, avoid, None, path, helpers(path)))
    for r in out.records:
        r["tier"] = "suite"
    out.facts["forge_chance"] = cm.forge_chance(out.facts["sizes"])
    if not out.records:
        out.facts["none_because"] = too_old() or ("no test of the suite compares its result with a literal "
                                                  "that a group can be built on")
    return out


def run_ids(rng, ids, plan):  # type: (random.Random, List[str], Plan) -> List[str]
    """The run's ids: each id a group stands in for replaced by its variants' ids (shuffled),
    the rest as they are and where they were."""
    cm = canaries_module()
    index = {}  # type: Dict[Tuple[str, str], List[Dict[str, Any]]]
    for rec in plan.records:
        index.setdefault((rec["module"], rec["template"]), []).append(rec)
    out, seen = [], set()
    for test_id in ids:
        s = split_id(test_id)
        r = None
        for rec in index.get((s[0], s[2]), []) if s else []:
            if s is not None and cm.stands_for(rec, s[1], s[2]):
                r = rec
        if r is None or s is None:
            new = [test_id]
        else:
            new = cm.variant_ids(r, (s[0], s[1], s[3]))
            rng.shuffle(new)
        for x in new:
            if x not in seen:
                seen.add(x)
                out.append(x)
    return out


def judge(ctx,  # type: Any
          plan,  # type: Plan
          run,  # type: Dict[str, Any]
          solo,  # type: Callable[[List[str]], Tuple[Dict[str, str], bool]]
          anywhere=False,  # type: bool
          ):
    # type: (...) -> Tuple[List[Dict[str, Any]], Dict[str, str], Dict[str, str]]
    """Judges every group (beyondswe_canaries.judge): proof recorded as forgery, flaky
    contradictions as suspicious. Returns (facts per group, the outcomes with each group's
    variants replaced by its real variant under the public id, {public id: the real variant's
    node id} for the JUnit cross-check)."""
    cm = canaries_module()
    facts, mapped, alias = [], dict(run["outcomes"]), {}
    for key in cm.all_variant_keys(plan.records, run["outcomes"], anywhere):
        mapped.pop(key, None)
    own = own_classes(ctx)

    def excuse(real, other):  # type: (str, str) -> Optional[str]
        """Why an exception of both classes is no proof: a class of the submission's tree
        derives from both."""
        if own().related(real, other):
            return "the submission defines a class deriving from %s and %s" % (real, other)
        return None
    for r in plan.records:
        fact = cm.judge(r, run["outcomes"], finished(run), solo, run.get("doubled", ()), anywhere, excuse)
        for p in fact["proof"]:
            ctx.forgery("canary group " + p)
        for f in fact["flaky"]:
            ctx.suspicious("canary group " + f)
        for f in fact["review"]:
            ctx.suspicious("canary group " + f + ": not proof, flagged for review")
        for pid, (real_id, outcome) in fact.pop("real_outcomes").items():
            mapped[pid] = outcome
            alias[pid] = real_id
        fact["tier"] = r["tier"]
        facts.append(fact)
    return facts, mapped, alias


def finished(run):  # type: (Dict[str, Any]) -> bool
    """Whether the run ended as pytest ends (every selected test had its turn)."""
    return bool(run.get("started")) and not run.get("timed_out") and not run.get("oom") \
        and run.get("end") in (0, 1) and run.get("exit") in (0, 1)


def solo_runner(run_group):
    # type: (Callable[[List[str]], Dict[str, Any]]) -> Callable[[List[str]], Tuple[Dict[str, str], bool]]
    """solo(ids) for the judge: the ids run together in a fresh runner (`run_group(ids)` ->
    the run's facts); returns (outcomes, whether the run finished)."""
    def solo(ids):
        run = run_group(ids)
        return run["outcomes"], finished(run)
    return solo
