# beyondswe verifier: every grading step that runs inside a task container, as one package.
# verify.py holds the commands and lists every module; ../beyondswe_verify.py is the entry point.
# Importing the package runs nothing.
