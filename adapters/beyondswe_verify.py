# beyondswe verifier's entry point: `python3 -I beyondswe_verify.py COMMAND ...` (the commands
# are in beyondswe_verifier/verify.py, which also lists every module of the package).
#
# Installed under this name beside the package directory beyondswe_verifier/ and the restore
# rules, in the verifier's root-only directory. -I leaves the script's directory off sys.path,
# so this puts it first, before the package is imported: the verifier imports nothing of its own
# from anywhere else. Python 3.6+, standard library only.
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if not sys.path or sys.path[0] != HERE:
    sys.path.insert(0, HERE)

from beyondswe_verifier.verify import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv))
