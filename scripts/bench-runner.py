#!/usr/bin/env python3
"""The runner's own cost against a plain pytest run, outside any container.

    scripts/bench-runner.py --repo DIR --ids IDS.json [--python PY] [--path src] \
        [--against REV] [--rounds 5]

Runs, in turn and `--rounds` times, the same test ids in DIR (a checkout of a real project, its
dependencies and pytest installed for PY):
- plain pytest: `pytest.main(args + ids)` with DIR (and each --path) first on sys.path, as the
  official evaluator's injected runner does;
- this tree's runner (adapters/beyondswe_verifier/pytest_runner.py and its second file), fed as the verifier feeds it (configuration on stdin,
  result channel on a pipe read to its end);
- with --against REV, the runner of that revision too.
Both sides write a JUnit file, with the same pytest options. Prints the medians and the ratios.

Why outside a container: on a storage driver in user space (fuse-overlayfs) every file an
unprivileged process opens costs a permission round trip that root skips, and a fresh
container's first run pays for every file it reads; both swamp the runner's own cost there.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLAIN = "import sys, pytest; sys.path[0:0] = sys.argv[1].split(':'); sys.exit(pytest.main(sys.argv[2:]))"


# The runner's files as the verifier lays them out in a run's directory: (name there, file of the
# package). Before the runner had a second file, a revision has only the first.
sys.path.insert(0, os.path.join(ROOT, "adapters"))
from beyondswe_verifier.testrun import RUNNER_FILES  # noqa: E402


def lay_out(rev, dest):
    """The runner's files of `rev` (None: this tree) in `dest`, as a run's directory holds them;
    the runner's path. Before the verifier was a package they sat at the top of adapters/."""
    os.makedirs(dest)
    for name, source in RUNNER_FILES:
        data = None
        if rev is None:
            path = os.path.join(ROOT, "adapters", "beyondswe_verifier", source)
            if os.path.exists(path):
                with open(path, "rb") as f:
                    data = f.read()
        else:
            for rel in ("adapters/beyondswe_verifier/" + source, "adapters/" + source):
                got = subprocess.run(["git", "-C", ROOT, "show", "%s:%s" % (rev, rel)],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                if got.returncode == 0:
                    data = got.stdout
                    break
        if data is None:
            if name == RUNNER_FILES[0][0]:
                raise SystemExit("no pytest runner at %s" % (rev or "this tree"))
            continue
        with open(os.path.join(dest, name), "wb") as f:
            f.write(data)
    return os.path.join(dest, RUNNER_FILES[0][0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--ids", required=True, help="a JSON list of test ids")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--path", action="append", default=[], help="more sys.path entries (src layout)")
    ap.add_argument("--against", default=None, help="a git revision whose runner is timed too")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    repo = os.path.abspath(args.repo)
    ids = json.load(open(args.ids))
    tmp = tempfile.mkdtemp(prefix="bench-runner-")
    runners = {"this tree": lay_out(None, os.path.join(tmp, "this-tree"))}
    if args.against:
        runners[args.against] = lay_out(args.against, os.path.join(tmp, "rev-" + args.against.replace("/", "_")))
    paths = [repo] + [os.path.join(repo, p) for p in args.path]
    pytest_args = ["-o", "addopts=", "-p", "no:cacheprovider", "--rootdir=" + repo, "-q", "-rN"]

    def plain():
        subprocess.run([args.python, "-c", PLAIN, ":".join(paths)] + pytest_args
                       + ["--junitxml=" + os.path.join(tmp, "plain.xml")] + ids,
                       cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def ours(runner):
        cfg = {"args": pytest_args + ["--junitxml=" + os.path.join(tmp, "ours.xml")], "ids": ids,
               "repo_paths": [repo], "test_paths": [], "private_paths": [], "prepend_paths": [repo],
               "image_paths": paths[1:]}
        r, w = os.pipe()
        p = subprocess.Popen([args.python, "-I", runner, str(w)], cwd=repo, stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(w,))
        os.close(w)
        p.stdin.write(json.dumps(cfg).encode())
        p.stdin.close()
        reports = 0
        with os.fdopen(r, "rb") as f:
            for line in f:
                reports += json.loads(line).get("e") == "report"
        p.wait()
        if reports < len(ids):
            sys.exit("%s reported %d phases for %d ids: not a comparable run" % (runner, reports, len(ids)))

    sides = [("plain pytest", plain)] + [(name, (lambda r: lambda: ours(r))(path)) for name, path in runners.items()]
    times = dict((name, []) for name, _ in sides)
    for i in range(args.rounds):
        for name, fn in sides:
            t = time.time()
            fn()
            times[name].append(time.time() - t)
        print("round %d/%d" % (i + 1, args.rounds), file=sys.stderr)
    med = dict((k, sorted(v)[len(v) // 2]) for k, v in times.items())
    base = med["plain pytest"]
    print("| tests | " + " | ".join("%s s" % k for k, _ in sides) + " | "
          + " | ".join("%s / plain" % k for k, _ in sides[1:]) + " |")
    print("|---:|" + "---:|" * (2 * len(sides) - 1))
    print("| %d | " % len(ids) + " | ".join("%.3f" % med[k] for k, _ in sides) + " | "
          + " | ".join("**%.2f×**" % (med[k] / base) for k, _ in sides[1:]) + " |")


if __name__ == "__main__":
    main()
