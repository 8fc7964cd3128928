"""After grading: the class's mistake clusters (judging/clusters.py) and the copying evidence
(reports/similarity.py), written beside results.json as clusters.json and similarity.json,
with a side-by-side page per flagged pair (reports/pairs.py).

Both read the grades, never write them: results.json is written before this runs and is
not touched. The code compared is each submission's answer cells, as staged for grading;
a folder of known solutions (``--known-solutions``: notebooks or .py files collected by the
instructor) joins the comparison, a match against one being reported as ``known:FILE``.
Rule (run/): only the grading process writes the class's gradebook and folders.
"""
import inspect
import json
import os
import shutil

import nbformat

from ..judging import clusters
from ..reports import pairs, similarity
from . import folders

FILES = ("similarity.json", "clusters.json")
PAGES = pairs.PAGES   # the folder of the pairs' pages, beside them


def answer_cells(nb, names):
    """{function: source} of a notebook: its nbgrader answer cells by grade_id, or, in a
    notebook without nbgrader's metadata, its code cut where each function is defined."""
    found = {}
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "code" and grade_id in names and grade_id not in found:
            found[grade_id] = cell.source
    if found:
        return found
    code = "\n\n".join(c.source for c in nb.cells if c.cell_type == "code")
    return similarity.split_functions(_python_only(code), names)


def _python_only(code):
    """A notebook's code without IPython's magics and shell escapes."""
    return "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))


def read_code(path, names):
    """{function: source} of a notebook or a .py file ({} when it cannot be read)."""
    try:
        if path.endswith(".ipynb"):
            return answer_cells(nbformat.read(path, as_version=4), names)
        with open(path, encoding="utf-8") as f:
            return similarity.split_functions(f.read(), names)
    except Exception:
        return {}


def known_solutions(folder, names):
    """{file: {function: source}} of the known solutions under ``folder`` (its sub-folders too)."""
    found = {}
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if name.endswith((".ipynb", ".py")):
                path = os.path.join(root, name)
                code = read_code(path, names)
                if code:
                    found[os.path.relpath(path, folder)] = code
    return found


def class_code(assignment, config, students):
    """{student: {function: source}} of the autograded notebooks (every graded student's,
    those of an earlier run too)."""
    names = set(assignment.by_name)
    found = {}
    for student in students:
        path = os.path.join(folders.folder(config, "autograded", student, assignment.id), assignment.notebook + ".ipynb")
        if os.path.isfile(path):
            found[student] = read_code(path, names)
    return found


def reference_code(assignment):
    return {n: inspect.getsource(getattr(assignment.mistakes.reference, n)) for n in assignment.by_name}


def signatures(results):
    """{student: {function: signature}} of the wrong functions no catalogued mistake names."""
    return {s["student"]: {e["id"]: e["signature"] for e in s["exercises"]
                           if e.get("signature") and not e["diagnoses"]} for s in results["submissions"]}


def write(assignment, results, own, config, release_nb, known_folder=None, jobs=1):
    """clusters.json, similarity.json and the pairs' pages into ``own``; returns (clusters, similarity)."""
    names = set(assignment.by_name)
    code = class_code(assignment, config, [s["student"] for s in results["submissions"] if s["status"] != "unreadable"])
    release = {n: s for n, s in answer_cells(release_nb, names).items()}
    release = {e.name: release.get(e.name, "") for e in assignment.exercises}
    reference = reference_code(assignment)
    known = known_solutions(known_folder, names) if known_folder else {}
    found = clusters.clusters(results, code, assignment)
    data = similarity.compare(assignment.id, code, release, reference, known=known,
                              signatures=signatures(results), jobs=jobs)
    owners = dict(code, **{similarity.KNOWN + k: v for k, v in known.items()})
    shutil.rmtree(os.path.join(own, pairs.PAGES), ignore_errors=True)   # an earlier run's
    pages = pairs.write(own, data, owners, list(release.values()) + list(reference.values()))
    for p in data["pairs"]:
        p["page"] = pages.get((p["a"], p["b"]), "")
    for name, value in zip(FILES, (data, found)):
        with open(os.path.join(own, name), "w", encoding="utf-8") as f:
            json.dump(value, f, indent=1)
            f.write("\n")
    return found, data


def load(folder):
    """(clusters, similarity) beside a results.json, or None for each that is not there."""
    out = []
    for name in ("clusters.json", "similarity.json"):
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                out.append(json.load(f))
        except (OSError, ValueError):
            out.append(None)
    return tuple(out)
