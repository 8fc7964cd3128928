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
  measure/    where a submission's CPU goes, step by step (timings.csv, the benchmarks);
              never a grade's input
"""
import os
import re
import sys

GRADING = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(GRADING)    # assignments/: the engine and the assignments' packages
REPO = os.path.dirname(PACKAGE)       # the course folder: source/, release/, nbgrader_config.py
SHIPPED = os.path.join(GRADING, "shipped")
TEMPLATES = os.path.join(GRADING, "reports", "templates")

def project(field: str) -> str:
    """A field of the course's project (``name`` or ``version``): pyproject.toml's when the
    course is a clone (read as text: tomllib is 3.11's, the course runs on 3.10), else the
    installed distribution's. The engine names no course: where it needs the course's name
    (the notebook metadata's key, the catalogs' project), it reads it here."""
    path = os.path.join(REPO, "pyproject.toml")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            found = re.search(rf'^{field}\s*=\s*"([^"]+)"', f.read(), re.M)
        if found:
            return found.group(1)
    from importlib.metadata import metadata, packages_distributions
    dist = metadata(packages_distributions()[__name__.split(".")[0]][0])
    return str(dist["Name" if field == "name" else "Version"])


# Importing jsonschema (through nbformat) compiles rfc3987-syntax's IRI grammars: ~2.4 s of
# CPU per process, for a string format no notebook schema uses. jsonschema skips that
# format when the package cannot be imported (see benchmarks/grading.py for the effect).
if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)   # type: ignore[arg-type]  # None: import fails


# The modules' names before the rooms, which nbgrader_config.py files already name (class
# paths such as assignments.grading.preprocessors.JudgedExecute): they still import, with a
# DeprecationWarning naming the new place.
MOVED = {
    "assignment": "contract.assignment",
    "autograde": "upstream.autograde",
    "cases": "contract.cases",
    "cgroups": "sandbox.cgroups",
    "channel": "judging.channel",
    "charts": "reports.charts",
    "check_data": "authoring.check_data",
    "course": "run.course",
    "dispatch": "run.dispatch",
    "docs": "authoring.docs",
    "exporters": "upstream.exporters",
    "feedback": "upstream.feedback",
    "folders": "run.folders",
    "getgrades": "upstream.getgrades",
    "harness": "shipped.harness",
    "inspect_submission": "run.inspect_submission",
    "judge": "judging.judge",
    "kernel": "sandbox.kernel",
    "lms": "reports.lms",
    "local": "judging.inprocess",
    "mutation": "contract.mutation",
    "notebook": "authoring.notebook",
    "notebook_json": "upstream.notebook_json",
    "overwritecells": "upstream.overwritecells",
    "overwritekernelspec": "upstream.overwritekernelspec",
    "pipeline": "run.pipeline",
    "preprocessors": "judging.judged_execute",
    "progress": "run.progress",
    "protocols": "contract.protocols",
    "record": "run.record",
    "release": "authoring.release",
    "release_checks": "authoring.staff_checks",
    "report": "reports.report",
    "saveautogrades": "upstream.saveautogrades",
    "seccomp": "sandbox.seccomp",
    "speedups": "upstream.speedups",
    "student_checks": "shipped.student_checks",
    "submissions": "authoring.submissions",
    "worker": "run.worker",
    "zygote": "shipped.zygote",
}


def _install_old_names():
    import importlib
    import importlib.abc
    import importlib.util
    import warnings

    class OldNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname, path=None, target=None):
            prefix, _, name = fullname.rpartition(".")
            if prefix == __name__ and name in MOVED:
                return importlib.util.spec_from_loader(fullname, self)
            return None

        def create_module(self, spec):
            new = f"{__name__}.{MOVED[spec.name.rpartition('.')[2]]}"
            warnings.warn(f"{spec.name} is now {new}: update the class paths of your nbgrader_config.py",
                          DeprecationWarning, stacklevel=2)
            return importlib.import_module(new)

        def exec_module(self, module):
            pass

    if not any(type(f).__name__ == "OldNames" for f in sys.meta_path):
        sys.meta_path.append(OldNames())


_install_old_names()
