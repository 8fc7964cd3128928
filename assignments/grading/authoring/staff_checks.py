"""What course staff must be able to trust about a release, as checks that return problems.

``python -m assignments check-release`` runs them all; the tests run each one. An empty
list means the check passed.
Rule (authoring/): runs in the course staff's process, never on a learner's code.
"""
import filecmp
import inspect
import os
import re
import shutil
import tempfile

import nbformat

from ..contract.assignment import CHECK_DATA
from ..run import pipeline
from . import docs, notebook, release

MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
           "BEGIN MARK SCHEME")


def _files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
                  if "__pycache__" not in d and ".ipynb_checkpoints" not in d)


def drift(assignment, repo):
    """The committed source notebook and release/ are exactly what `release` would write now
    (source/ holds no generated helper files in git: the build writes them there too)."""
    aid = assignment.id
    generated = {assignment.checks_module + ".py", CHECK_DATA} | ({assignment.utils_module + ".py"} if assignment.utils_module else set())
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(repo, "source", aid), os.path.join(tmp, "source", aid))
        release.build(assignment, os.path.join(tmp, "source"), os.path.join(tmp, "release"))
        for part in ("source", "release"):
            ours, fresh = os.path.join(repo, part, aid), os.path.join(tmp, part, aid)
            skip = generated if part == "source" else set()
            mine, theirs = ([f for f in _files(d) if f not in skip] for d in (ours, fresh))
            if mine != theirs:
                problems.append(f"{part}/{aid} has files {mine}, a rebuild has {theirs}")
                continue
            for name in mine:
                if not filecmp.cmp(os.path.join(ours, name), os.path.join(fresh, name), shallow=False):
                    problems.append(f"{part}/{aid}/{name} differs from a fresh build: run "
                                    f"`python -m assignments release` and commit the result")
    return problems + docs.drift(assignment, repo)


def leaks(assignment, release_dir):
    """No solution, hidden test, reference code or grading package reaches students."""
    problems = []
    graded = [getattr(assignment.reference, e.name) for e in assignment.exercises]
    # every statement of the reference solution that computes something (the notebook's text
    # gives the API away on purpose: sizes, cache layouts; the helpers shipped beside it by design)
    helpers = tuple(f"{name}(" for name in assignment.reference_helpers) + tuple(f"{e.name}(" for e in assignment.exercises)
    computes = ("@", "np.", "*", "+=") + helpers
    statements = {line.strip() for fn in graded for line in inspect.getsource(fn).splitlines()[1:]
                  if len(line.strip()) > 16 and any(c in line for c in computes)}
    for name in _files(release_dir):
        with open(os.path.join(release_dir, name), encoding="utf-8", errors="replace") as f:
            text = f.read()
        if name.endswith(".ipynb"):
            nb = nbformat.reads(text, as_version=4)
            text = "\n".join(c.source for c in nb.cells)
        for marker in MARKERS:
            if marker in text:
                problems.append(f"{name} contains '{marker}'")
        for pattern in (r"\bassignments\.", r"from assignments\b", r"import assignments\b", r"HIDDEN_SHAPES", r"hidden_cases"):
            if re.search(pattern, text):
                problems.append(f"{name} refers to the grading package ({pattern})")
        found = [s for s in statements if s in text]
        if found:
            problems.append(f"{name} contains {len(found)} statements of the reference solution, e.g. {found[0]!r}")
    return problems


def expected_values(assignment, notebook_path):
    """Every worked example's printed 'expected output' is what the reference prints."""
    generated = notebook
    nb = nbformat.read(notebook_path, as_version=4)
    problems, seen = [], set()
    reference = generated.reference_functions(assignment)
    for i, cell in enumerate(nb.cells):
        for ex in assignment.exercises:
            if cell.source.startswith(generated.EXPECTED_MARK.format(name=ex.name)):
                seen.add(ex.name)
                example = next(c for c in reversed(nb.cells[:i]) if c.cell_type == "code"
                               and c.source.startswith(generated.EXAMPLE_MARK.format(name=ex.name)))
                shown = re.search(r"```\n(.*?)\n```", cell.source, re.S).group(1)
                printed = generated.run_example(example.source, reference).rstrip("\n")
                if shown != printed:
                    problems.append(f"the expected output of {ex.name} says\n{shown}\nbut the reference prints\n{printed}")
    problems += [f"no expected output for {e.name}" for e in assignment.exercises if e.name not in seen]
    return problems


def solution_and_stub(assignment, repo):
    """Graded for real, the source notebook earns every point and the untouched release
    earns none, each test failing cleanly as 'not written yet'."""
    aid, name = assignment.id, assignment.notebook + ".ipynb"
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for student, part in (("solution", "source"), ("stub", "release")):
            os.makedirs(os.path.join(tmp, "in", student, aid))
            shutil.copy(os.path.join(repo, part, aid, name), os.path.join(tmp, "in", student, aid, name))
        results = pipeline.grade(assignment, os.path.join(tmp, "in"), os.path.join(tmp, "out"))
    subs = {s["student"]: s for s in results["submissions"]}
    sol, stub = subs["solution"], subs["stub"]
    if sol["status"] != "graded" or sol["score"] != results["max_score"]:
        problems.append(f"the solution scores {sol['score']} ({sol['status']}): " +
                        "; ".join(e["feedback"] for e in sol["exercises"] if not e["passed"]))
    if stub["status"] != "graded" or stub["score"] != 0:
        problems.append(f"the stub scores {stub['score']} ({stub['status']})")
    for e in stub["exercises"]:
        if e["score"] != 0 or "not written yet" not in e["feedback"]:
            problems.append(f"the stub's {e['id']} scores {e['score']} with feedback {e['feedback']!r}")
    return problems


def all_checks(assignment, repo):
    release_dir = os.path.join(repo, "release", assignment.id)
    notebook = os.path.join(release_dir, assignment.notebook + ".ipynb")
    return {
        "release/ is what `release` builds from source/": drift(assignment, repo),
        "no solution, hidden test or reference in release/": leaks(assignment, release_dir),
        "every expected value shown is the reference's": expected_values(assignment, notebook),
        "the solution earns every point, the stub none": solution_and_stub(assignment, repo),
    }
