"""`uv run beyondswe --dataset beyondswe.jsonl [--output-dir DIR] [--limit N] [--overwrite]
[--task-ids ID ...]`: BeyondSWE tasks in Harbor's layout (Harbor's adapter entry point)."""
import argparse
import sys
from pathlib import Path

from .adapter import AdapterError, BeyondSWEAdapter

# adapters/beyondswe/src/beyondswe/main.py in a Harbor checkout: its datasets/ directory.
DEFAULT_OUTPUT = Path(__file__).resolve().parents[4] / "datasets" / "beyondswe"


def parse(argv):
    p = argparse.ArgumentParser(prog="beyondswe", description=__doc__)
    p.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT,
                   help="where the task directories go (default: %(default)s)")
    p.add_argument("--limit", type=int, default=None, help="only the first N records")
    p.add_argument("--overwrite", action="store_true", help="replace task directories that exist")
    p.add_argument("--task-ids", nargs="+", default=None, metavar="ID", help="only these instance ids")
    p.add_argument("--dataset", type=Path, required=True, help="the BeyondSWE JSONL file")
    p.add_argument("--test-suites", type=Path, default=None, help="the Doc2Repo suite zips")
    p.add_argument("--solutions", type=Path, default=None, help="Doc2Repo reference repositories")
    p.add_argument("--verifier", choices=["separate", "shared"], default="separate",
                   help="separate (Harbor >= 0.26, default) or shared (Harbor 0.1.x)")
    p.add_argument("--org", default="beyondswe", help="the org of the tasks' package names")
    args = p.parse_args(argv)
    if args.limit is not None and args.limit < 0:
        p.error("--limit must be 0 or more, not %d" % args.limit)
    return args


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    adapter = BeyondSWEAdapter(args.output_dir, overwrite=args.overwrite, limit=args.limit,
                               task_ids=args.task_ids, dataset=args.dataset,
                               test_suites=args.test_suites, solutions=args.solutions,
                               verifier=args.verifier, org=args.org)
    try:
        written, skipped = adapter.run()
    except (AdapterError, OSError) as exc:
        sys.stderr.write("beyondswe adapter: %s\n" % exc)
        return 1
    sys.stderr.write("beyondswe adapter: %d task(s) written to %s, %d already there (--overwrite "
                     "replaces them)\n" % (len(written), args.output_dir, len(skipped)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
