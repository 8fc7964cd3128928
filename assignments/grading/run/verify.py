"""Answering an appeal: grade some submissions of a results.json again, in a folder of their
own with a fresh gradebook, and check that each entry comes out byte for byte as it was
recorded, receipt included. A difference in the receipt names the inputs that changed since
(a new submission, an edited hidden case...); a difference elsewhere with the same receipt
means the entry was not made from those inputs by this grader: edited by hand, or a score
given by hand in formgrader (which verify, with a gradebook of its own, does not see).
Rule (run/): only the grading process writes the class's gradebook and folders."""
import json
import os
import random
import shutil
import tempfile

from ..contract import assignment as contract
from . import pipeline, receipts


class BadRequest(ValueError):
    """verify cannot start: a results.json it cannot read, an unknown student..."""


def load(path):
    """The results.json at ``path``: (its assignment, {student: entry})."""
    try:
        with open(path, encoding="utf-8") as f:
            results = json.load(f)
    except OSError as exc:
        raise BadRequest(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise BadRequest(f"{path} is not JSON: {exc}") from None
    if not isinstance(results, dict) or not isinstance(results.get("submissions"), list) \
            or not isinstance(results.get("assignment"), str):
        raise BadRequest(f"{path} is not a results.json (no assignment and submissions)")
    if results["assignment"] not in contract.known():
        raise BadRequest(f"{path} is of assignment {results['assignment']!r}, not one of this course's "
                         f"({', '.join(contract.known())})")
    entries = {s.get("student"): s for s in results["submissions"] if isinstance(s, dict)}
    return results["assignment"], entries


def choose(entries, students=None, sample=None, seed=None):
    """The students to grade again: ``students``, or ``sample`` of them drawn at random
    (``seed`` makes the draw repeatable), or every one."""
    if students:
        unknown = sorted(set(students) - set(entries))
        if unknown:
            raise BadRequest(f"no entry for {', '.join(unknown)} in the results")
        return sorted(set(students))
    if sample is not None:
        if sample < 1:
            raise BadRequest(f"--sample must be at least 1, not {sample}")
        return sorted(random.Random(seed).sample(sorted(entries), min(sample, len(entries))))
    return sorted(entries)


def differences(recorded, regraded, where=""):
    """Where two entries differ, as lines naming the field, the recorded and the regraded
    value (each as JSON text: 100 and 100.0 differ, as they do in the file)."""
    if isinstance(recorded, dict) and isinstance(regraded, dict):
        if where == ".receipt":
            changed = receipts.changed_inputs(recorded, regraded)
            return [f"receipt: {', '.join(changed)} changed since it was graded"] if changed else []
        found = []
        for key in list(recorded) + [k for k in regraded if k not in recorded]:
            if key not in recorded or key not in regraded:
                found.append(f"{(where + '.' + key)[1:]}: {'not recorded' if key not in recorded else 'not regraded'}")
            else:
                found += differences(recorded[key], regraded[key], f"{where}.{key}")
        return found
    if isinstance(recorded, list) and isinstance(regraded, list) and all(
            isinstance(e, dict) and "id" in e for e in recorded + regraded):
        return differences({e["id"]: e for e in recorded}, {e["id"]: e for e in regraded}, where)
    if json.dumps(recorded) != json.dumps(regraded):
        return [f"{where[1:]}: recorded {json.dumps(recorded)[:120]}, regraded {json.dumps(regraded)[:120]}"]
    return []


def course_root(results_path, assignment_id):
    """The folder ``grade --out`` wrote ``results_path`` into."""
    folder = os.path.dirname(os.path.abspath(results_path))
    if os.path.basename(folder) == assignment_id and os.path.basename(os.path.dirname(folder)) == "results":
        return os.path.dirname(os.path.dirname(folder))
    return folder


def verify(results_path, submissions, students=None, sample=None, seed=None, sandbox=True, workers=None):
    """Grade the chosen students again; returns (students checked, lines saying what differs)."""
    aid, entries = load(results_path)
    chosen = choose(entries, students, sample, seed)
    root = pipeline.submitted_root(os.path.abspath(submissions))
    present = set(pipeline.find_students(root, aid, set(chosen))) if os.path.isdir(root) else set()
    problems = [f"{s}: no submission of {aid} in {root}" for s in chosen if s not in present]
    if not present:
        return chosen, problems
    tmp = tempfile.mkdtemp(prefix="verify-")
    try:
        own = os.path.join(course_root(results_path, aid), "nbgrader_config.py")
        if os.path.isfile(own):   # the class was graded with its folder's settings: so is the check
            shutil.copyfile(own, os.path.join(tmp, "nbgrader_config.py"))
        run = pipeline.grade_class(contract.load(aid), submissions, tmp, sandbox=sandbox, workers=workers,
                                   db_url="sqlite:///" + os.path.join(tmp, "gradebook.db"), students=sorted(present))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    again = {s["student"]: s for s in run.results["submissions"]}
    for student in sorted(present):
        if json.dumps(entries[student], indent=2) != json.dumps(again[student], indent=2):
            problems += [f"{student}: {line}" for line in differences(entries[student], again[student])
                         or ["the entry's text differs (key order or spacing)"]]
    return chosen, problems
