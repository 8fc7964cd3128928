"""The engine: it names no assignment, and each of its rooms follows one rule.

  contract/   what an assignment gives the engine (Assignment, Exercise, cases, the catalog's
              Mistake, loop protocols); imports nothing else of the engine but shipped/
  shipped/    code that leaves the grading process as text, into a release (the students'
              checks, the notebook's utilities) or into the sandbox (the harness, the
              zygote): standard library and numpy only (tests/test_rooms.py imports each
              with everything else blocked)
  authoring/  building the course from its sources: the notebook's generated cells, the
              checks' data, the release, the mistakes' pages, the staff's checks
  sandbox/    where a learner's code runs: the kernel manager, the zygote's client, cgroups,
              the system-call filter
  judging/    judging a submission's functions: the judge, its channel to the harness, the
              nbgrader preprocessor that ties them to a served-cells executor
  upstream/   everything that relies on the internals of nbgrader, nbconvert, nbclient,
              jupyter_client or IPython; fingerprints.json records what it relies on, and
              one setting (nbgrader_config.py) switches every piece back to stock nbgrader
  run/        grading a class: staging, dispatching to workers, recording grades, the
              course folder nbgrader's commands read
  reports/    what instructors read: the class report, its charts, the LMS files, the pages'
              templates
"""
import os
import sys

GRADING = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(GRADING)    # assignments/: the engine and the assignments' packages
REPO = os.path.dirname(PACKAGE)       # the course folder: source/, release/, nbgrader_config.py
SHIPPED = os.path.join(GRADING, "shipped")
TEMPLATES = os.path.join(GRADING, "reports", "templates")

# Importing jsonschema (through nbformat) compiles rfc3987-syntax's IRI grammars: ~2.4 s of
# CPU per process, for a string format no notebook schema uses. jsonschema skips that
# format when the package cannot be imported (see benchmarks/grading.py for the effect).
if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)
