"""Grade a class: stage the submissions, autograde each with nbgrader, then write feedback,
grades.csv and results.json.

Submissions are only ever read: each is copied into a private staging area first, so
``submitted/`` is never modified, and a notebook that cannot be read is reported and
skipped without stopping the others. Every run regrades from scratch (``force``), so a
rerun is safe and gives the same results.
"""
import json
import logging
import os
import re
import shutil

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters import Autograde, GenerateAssignment, GenerateFeedback
from nbgrader.plugins.export import CsvExportPlugin

from . import inspect_submission
from .course import coursedir, load_config
from .kernel import sandbox_problem

WORK = ".nbgrader"          # the run's private course folder, under --out
MAX_FILE_BYTES = 20 * 2**20  # a submission's extra files larger than this are not copied


# nbgrader globs and matches student ids as patterns: other characters could match others
STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]*$")


class SandboxUnavailable(RuntimeError):
    """Grading untrusted code needs the sandbox; say why it cannot run and how to opt out."""


def submitted_root(submissions):
    """Accept both DIR/submitted/<student>/... and DIR/<student>/... ."""
    inner = os.path.join(submissions, "submitted")
    return inner if os.path.isdir(inner) else submissions


def find_students(root, assignment_id):
    return sorted(s for s in os.listdir(root)
                  if os.path.isdir(os.path.join(root, s, assignment_id)) and not s.startswith("."))


def stage(assignment, src, dest, release_nb):
    """Copy one submission to ``dest``. Returns (error message or None, flags)."""
    notebooks = sorted(f for f in os.listdir(src) if f.endswith(".ipynb"))
    expected = assignment.NOTEBOOK + ".ipynb"
    chosen = expected if expected in notebooks else (notebooks[0] if len(notebooks) == 1 else None)
    if chosen is None:
        found = ", ".join(notebooks) or "no .ipynb file"
        return f"expected {expected} in the submission, found {found}", []
    try:
        nb = nbformat.read(os.path.join(src, chosen), as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # not JSON, not a notebook, a newer format...
        return f"{chosen} is not a readable Jupyter notebook ({type(exc).__name__}: {str(exc)[:200]})", []
    flags = inspect_submission.tampering(nb, release_nb) + inspect_submission.attempts(nb, release_nb)
    os.makedirs(dest)
    nbformat.write(inspect_submission.repair(nb, release_nb), os.path.join(dest, expected))
    for name in os.listdir(src):
        path = os.path.join(src, name)
        if name.endswith(".ipynb") or not os.path.isfile(path) or os.path.islink(path):
            continue
        if os.path.getsize(path) <= MAX_FILE_BYTES:
            shutil.copyfile(path, os.path.join(dest, name))
    return None, flags


def grade(assignment, submissions, out, sandbox=True, overrides=None):
    """Grade every submission; ``sandbox=False`` runs kernels without bubblewrap (flagged).
    ``overrides`` (a traitlets Config) is laid over nbgrader_config.py, e.g. shorter limits."""
    out = os.path.abspath(out)
    if sandbox:
        problem = sandbox_problem()
        if problem:
            raise SandboxUnavailable(f"{problem}. Submissions are untrusted code: grading refuses to run "
                                     f"them outside the sandbox. To grade anyway, pass --no-sandbox "
                                     f"(every result is then flagged 'unsandboxed').")
    aid = assignment.ASSIGNMENT_ID
    work = os.path.join(out, WORK)
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    config = load_config(out, os.path.join(out, "gradebook.db"),
                         source_directory=f"{WORK}/source", release_directory=f"{WORK}/release",
                         submitted_directory=f"{WORK}/submitted",
                         autograded_directory="autograded", feedback_directory="feedback")
    for name in ("GenerateAssignment", "Autograde", "GenerateFeedback"):
        config[name].force = True
    config.GradingKernelManager.sandbox = sandbox
    config.GradingKernelManager.scratch_root = os.path.join(work, "kernels")
    os.makedirs(os.path.join(work, "kernels"))
    if overrides is not None:
        config.merge(overrides)
    shutil.copytree(assignment.SOURCE_DIR, os.path.join(work, "source", aid),
                    ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    GenerateAssignment(coursedir=coursedir(config, aid), config=config).start()

    root = submitted_root(os.path.abspath(submissions))
    release_nb = nbformat.read(os.path.join(work, "release", aid, assignment.NOTEBOOK + ".ipynb"), as_version=4)
    records = {}
    for student in find_students(root, aid):
        if not STUDENT_ID.match(student):
            records[student] = {"student": student, "status": "unreadable", "flags": [],
                                "message": "the student folder's name may only use letters, digits and . _ @ + -"}
            continue
        problem, flags = stage(assignment, os.path.join(root, student, aid),
                               os.path.join(work, "submitted", student, aid), release_nb)
        records[student] = {"student": student, "status": "unreadable" if problem else "pending",
                            "message": problem or "", "flags": flags + ([] if sandbox else ["unsandboxed"])}

    graded = [s for s, r in records.items() if r["status"] == "pending"]
    for student in graded:
        errors = _ErrorLog()
        logging.getLogger("traitlets").addHandler(errors)
        try:
            Autograde(coursedir=coursedir(config, aid, student), config=config).start()
        except Exception as exc:
            records[student].update(status="error", message=f"autograde failed: {errors.cause() or exc}")
        finally:
            logging.getLogger("traitlets").removeHandler(errors)
    done = [s for s in graded if records[s]["status"] == "pending"]
    for student in done:
        try:
            GenerateFeedback(coursedir=coursedir(config, aid, student), config=config).start()
        except Exception as exc:
            records[student]["message"] = f"feedback could not be written: {exc}"

    with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
        for student, record in records.items():
            if record["status"] != "pending":
                forget(gb, out, aid, student)
        CsvExportPlugin(to=os.path.join(out, "grades.csv"), student=sorted(records)).export(gb)
        results = {"assignment": aid, "max_score": float(assignment.MAX_SCORE),
                   "submissions": [collect(assignment, gb, out, records[s]) for s in sorted(records)]}
    with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    return results


class _ErrorLog(logging.Handler):
    """nbgrader logs why a submission failed and raises a generic exception: keep the why."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.lines = []

    def emit(self, record):
        self.lines += [line for line in record.getMessage().splitlines() if line.strip()]

    def cause(self):
        found = [line.strip() for line in self.lines if re.match(r"^\w+(\.\w+)*(Error|Exception)\b", line.strip())]
        return found[-1][:300] if found else ""


def forget(gb, out, aid, student):
    """A submission this run could not grade: keep the student (grades.csv shows 0) but
    drop what an earlier run graded, in the gradebook and on disk."""
    gb.update_or_create_student(student)
    try:
        gb.remove_submission(aid, student)
    except MissingEntry:
        pass
    for folder in ("autograded", "feedback"):
        shutil.rmtree(os.path.join(out, folder, student, aid), ignore_errors=True)


def collect(assignment, gb, out, record):
    """One submission's entry in results.json, from the gradebook and the verdicts that the
    judge stored in the autograded notebook."""
    aid, student = assignment.ASSIGNMENT_ID, record["student"]
    entry = dict(record, score=0.0, flags=list(record["flags"]), exercises=[])
    verdicts, events = {}, []
    path = os.path.join(out, "autograded", student, aid, assignment.NOTEBOOK + ".ipynb")
    if record["status"] == "pending" and os.path.exists(path):
        nb = nbformat.read(path, as_version=4)
        verdicts = {c.metadata["judge"]["id"]: c.metadata["judge"] for c in nb.cells
                    if "judge" in c.metadata and c.metadata.get("nbgrader", {}).get("grade_id")
                    == "test_" + c.metadata["judge"].get("id")}
        events = nb.metadata.get("grader", {}).get("events", [])
    entry["flags"] += [f"{e['kind']}:{e['where']}" for e in events]
    for ex in assignment.EXERCISES:
        v = verdicts.get(ex.name, {})
        score = 0.0
        if record["status"] == "pending":
            try:
                score = gb.find_grade("test_" + ex.name, assignment.NOTEBOOK, aid, student).score
            except MissingEntry:
                pass
        entry["exercises"].append({
            "id": ex.name, "score": float(score), "max_score": float(ex.points),
            "passed": float(score) == float(ex.points), "diagnoses": v.get("diagnoses", []),
            "feedback": v.get("feedback", "Not graded: " + ("see the submission's message." if record["message"] else "no verdict."))})
    entry["score"] = round(sum(e["score"] for e in entry["exercises"]), 2)
    if record["status"] == "pending":
        entry["status"] = "incomplete" if events else "graded"   # every kernel event is a fault
    entry["flags"] = sorted(set(entry["flags"]), key=entry["flags"].index)
    return entry
