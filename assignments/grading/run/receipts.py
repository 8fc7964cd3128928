"""Receipts: what each submission's grade was made from, as sha256 digests, written beside
its entry in results.json. A rerun compares the receipt a submission would get now with the
one it has, and grades again only the submissions whose receipt would change; when grades
move, changes.json says who gained or lost what, and which input of the receipt caused it.

The inputs of a receipt (``INPUTS``), each ``sha256:<hex>``:

  submission    the files of the submission's folder that grading reads: its notebooks, and
                the files beside them that staging copies (timestamp.txt, ...)
  release       the release the run builds from source/ (the notebook's cells, their points
                and checksums, the helper files)
  hidden_cases  the hidden inputs of every function, and its points, outputs and weights
  reference     the reference solution's text and its outputs on the hidden cases
  catalog       the catalogued mistakes and what the learner is told about them
  grader        the course's version, constraints.txt, the Python that runs it and the
                engine's own code (assignments/grading, assignments/shared, the
                assignment's other modules)
  sandbox       the settings of the sandbox, the judge and nbgrader's steps that can move a
                grade (time, memory and output limits, preprocessors...), and whether the
                sandbox was used

Floats are hashed rounded to 40 significant bits, about 12 decimal digits (negative zero
made positive), so the last bits in which two CPUs' maths libraries may differ do not change
a digest: receipts are the same on any machine that grades the same way. The rounding uses
exact operations only, on whole arrays at once (formatting 50,000 numbers as text took most
of a rerun's 0.1 s of class inputs).
Rule (run/): only the grading process writes the class's gradebook and folders."""
import dataclasses
import hashlib
import json
import os
import platform
import time

import numpy as np

from .. import GRADING, PACKAGE, REPO, project

INPUTS = ("submission", "release", "hidden_cases", "reference", "catalog", "grader", "sandbox")

# The configuration sections whose settings can move a grade or a feedback page.
SETTINGS = ("GradingKernelManager", "JudgedExecute", "LimitOutput", "Autograde", "OverwriteCells",
            "ClearSolutions", "GenerateFeedback", "Exporter", "AssignLatePenalties")
MACHINE_ONLY = {("GradingKernelManager", "scratch_root")}   # a path: where, not how


BITS = 40   # the significant bits of a float that a digest keeps: about 12 decimal digits


class Hasher:
    """sha256 over a value's canonical form: dicts and sets sorted, sequences in order, floats
    and float arrays rounded to ``BITS`` significant bits."""

    def __init__(self):
        self.h = hashlib.sha256()
        self.numbers = []   # the floats met, in order: hashed together by ``digest``

    def text(self, s):
        data = s.encode("utf-8")
        self.h.update(b"%d:" % len(data) + data)

    def add(self, value):
        if isinstance(value, np.ndarray):
            self.text(f"array {value.dtype.kind} {value.shape}")
            if value.dtype.kind in "fc":
                self.numbers.append(np.ascontiguousarray(value, dtype=np.complex128 if value.dtype.kind == "c"
                                                         else np.float64).view(np.float64).ravel())
            else:
                self.text(repr(value.tolist()))
        elif isinstance(value, bytes):
            self.h.update(b"bytes %d:" % len(value) + value)
        elif isinstance(value, (bool, type(None), int, str)) or isinstance(value, np.integer):
            self.text(f"{type(value).__name__} {value!r}")
        elif isinstance(value, (float, np.floating)):
            self.text("float")
            self.numbers.append(float(value))
        elif isinstance(value, dict):
            self.text(f"dict {len(value)}")
            for key in sorted(value, key=repr):
                self.add(key)
                self.add(value[key])
        elif isinstance(value, (set, frozenset)):
            self.text(f"set {len(value)}")
            for item in sorted(value, key=repr):
                self.add(item)
        elif isinstance(value, (list, tuple)):
            self.text(f"seq {len(value)}")
            for item in value:
                self.add(item)
        elif dataclasses.is_dataclass(value):
            self.text(type(value).__name__)
            self.add({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
        else:
            raise TypeError(f"a receipt cannot hash a {type(value).__name__}")
        return self

    def floats(self, x):
        """Float64 values rounded to ``BITS`` significant bits: each one's binary exponent and
        its rounded mantissa as integers, negative zero as zero, NaN and the infinities by
        name. Only exact operations (frexp, a power-of-two scale, rounding half to even), so
        every CPU gets the same integers from the same floats."""
        x = x + 0.0
        finite = np.isfinite(x)
        mantissa, exponent = np.frexp(np.where(finite, x, 0.0))
        rounded = np.rint(mantissa * 2.0 ** BITS)
        carry = np.abs(rounded) == 2.0 ** BITS   # rounded up to the next power of two
        rounded, exponent = np.where(carry, rounded / 2, rounded), np.where(carry, exponent + 1, exponent)
        kind = np.where(finite, 0, np.where(np.isnan(x), 1, np.where(x > 0, 2, 3)))
        self.h.update(b"floats %d:" % x.size)
        for part in (rounded.astype("<i8"), exponent.astype("<i4"), kind.astype("<i1")):
            self.h.update(part.tobytes())

    def digest(self):
        """The digest of what was added: its structure and texts, then its floats (a complex
        as its two parts), all at once."""
        if self.numbers:
            self.floats(np.concatenate([np.atleast_1d(np.asarray(n, dtype=np.float64)) for n in self.numbers]))
            self.numbers = []
        return "sha256:" + self.h.hexdigest()


def of(value):
    return Hasher().add(value).digest()


def files_digest(root, skip=lambda rel: False):
    """The digest of every file's relative path and bytes under ``root`` (``__pycache__`` and
    what ``skip`` names left out)."""
    h = Hasher()
    for folder, dirs, names in sorted(os.walk(root)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            if name.endswith(".pyc") or skip(rel):
                continue
            with open(path, "rb") as f:
                h.text(rel)
                h.add(f.read())
    return h.digest()


def submission_digest(folder, max_file_bytes):
    """The files staging reads from a submission's folder: every notebook, and the other
    regular files up to ``max_file_bytes`` (pipeline.stage copies those)."""
    h = Hasher()
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        if name.endswith(".ipynb") or os.path.getsize(path) <= max_file_bytes:
            with open(path, "rb") as f:
                h.text(name)
                h.add(f.read())
    return h.digest()


class DigestMemo:
    """``submission_digest`` remembered from run to run (a JSON file in the run's cache
    folder), by what ``os.stat`` says of the folder and of each of its entries: path, size,
    modification and change times in nanoseconds, inode, mode. Any difference, or an entry
    added or gone, means hashing again; a digest is not remembered when something in the
    folder changed less than ``RACY`` seconds before it was taken (a second write in the
    same tick of the clock would leave the times as they were). ``verify`` grades into a new folder, so it always hashes the files themselves."""

    RACY = 2.0

    def __init__(self, path):
        self.path, self.found, self.used = path, {}, {}
        try:
            with open(path, encoding="utf-8") as f:
                self.found = {k: (v[0], v[1]) for k, v in json.load(f).items()}
        except (OSError, ValueError, TypeError, AttributeError, IndexError, KeyError):
            self.found = {}

    @staticmethod
    def stat(folder):
        """What the folder's digest is trusted by, and the newest change time in it (None
        when something there is not a plain file or folder)."""
        rows, newest = [], 0
        for name in sorted(os.listdir(folder)) + [""]:
            st = os.lstat(os.path.join(folder, name)) if name else os.stat(folder)
            rows.append([name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode])
            newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
        return rows, newest

    def digest(self, folder, max_file_bytes):
        key = f"{os.path.abspath(folder)} {max_file_bytes}"
        rows, newest = self.stat(folder)
        kept = self.found.get(key)
        if kept is not None and kept[0] == rows:
            self.used[key] = kept
            return kept[1]
        found = submission_digest(folder, max_file_bytes)
        if rows == self.stat(folder)[0] and newest < time.time_ns() - self.RACY * 1e9:   # settled, and unchanged while read
            self.used[key] = (rows, found)
        return found

    def save(self):
        """Write the file, with the folders of this run only."""
        if self.used == self.found:
            return
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with open(self.path + ".part", "w", encoding="utf-8") as f:
            f.write(json.dumps({k: list(v) for k, v in self.used.items()}))
        os.replace(self.path + ".part", self.path)


def _grader_digest(assignment):
    """The course's version, its locked environment, the Python, and the engine's code."""
    h = Hasher()
    h.text(course_version())
    constraints = os.path.join(REPO, "constraints.txt")
    h.add(open(constraints, "rb").read() if os.path.isfile(constraints) else b"")
    h.text(f"{platform.python_implementation()} {platform.python_version()}")
    own = {f"{name}.py" for name, _ in _package_files(assignment)}
    for root, skip in ((GRADING, lambda rel: False), (os.path.join(PACKAGE, "shared"), lambda rel: False),
                       (os.path.join(PACKAGE, assignment.id), lambda rel: rel in own)):
        h.text(files_digest(root, skip))
    return h.digest()


def _package_files(assignment):
    from ..contract.assignment import PACKAGE_FILES
    return list(PACKAGE_FILES.values())


def course_version():
    """The course's version: pyproject.toml's, or the installed distribution's."""
    return project("version")


def settings(config, sandbox):
    """The settings that can move a grade, as set in ``config`` (defaults are the code's, in
    the grader's digest), and whether the sandbox is used."""
    found = {"sandbox": bool(sandbox)}
    for section in SETTINGS:
        values = config[section] if section in config else {}
        found[section] = {k: (v if isinstance(v, (str, int, float, bool, list, tuple, dict, type(None))) else repr(v))
                          for k, v in values.items() if (section, k) not in MACHINE_ONLY}
    return json.loads(json.dumps(found, sort_keys=True, default=repr))


def class_inputs(assignment, release_folder, config, sandbox, judge=None):
    """The inputs of the receipt that are the same for the whole class: {input: digest}."""
    from ..judging.judge import Judge
    judge = judge or Judge(assignment)
    cases, outputs = Hasher(), Hasher()
    for ex in assignment.exercises:
        cases.add(ex)
        found = judge.cases(ex.name)
        cases.add([(description, args, facts) for description, args, facts in found])
        outputs.add([judge.expected(ex.name, i) for i in range(len(found))])
    reference_file = assignment.reference.__file__
    outputs.add(open(reference_file, "rb").read())
    return {"release": files_digest(release_folder), "hidden_cases": cases.digest(), "reference": outputs.digest(),
            "catalog": of([list(assignment.catalog), assignment.case_hints, list(assignment.reference_helpers)]),
            "grader": _grader_digest(assignment), "sandbox": of(settings(config, sandbox))}


def receipt(submission, inputs):
    """A submission's receipt: its own digest and the class's, in INPUTS' order."""
    return {name: submission if name == "submission" else inputs[name] for name in INPUTS}


def changed_inputs(old, new):
    """The inputs whose digests differ between two receipts (every one, when ``old`` has none)."""
    if not isinstance(old, dict):
        return list(INPUTS)
    return [name for name in INPUTS if old.get(name) != new.get(name)]


def grade_changes(earlier, results, graded):
    """Who gained or lost what: for each student of ``graded`` whose earlier entry (in
    ``earlier``, {student: entry}) differs from the new one (in ``results``) in status, score
    or the codes of a function, the old and new of each, and the inputs of the receipt that
    changed. New students are not changes."""
    now = {s["student"]: s for s in results["submissions"]}
    found = []
    for student in sorted(graded):
        old, new = earlier.get(student), now.get(student)
        if old is None or new is None:
            continue
        before = {e.get("id"): e for e in old.get("exercises", []) if isinstance(e, dict)}
        functions = [{"id": e["id"], "old_score": before.get(e["id"], {}).get("score"), "new_score": e["score"],
                      "old_codes": before.get(e["id"], {}).get("diagnoses", []), "new_codes": e["diagnoses"]}
                     for e in new["exercises"]
                     if (before.get(e["id"], {}).get("score"), before.get(e["id"], {}).get("diagnoses", []))
                     != (e["score"], e["diagnoses"])]
        if functions or old.get("status") != new["status"] or old.get("score") != new["score"]:
            found.append({"student": student, "inputs_changed": changed_inputs(old.get("receipt"), new.get("receipt")),
                          "old_status": old.get("status"), "new_status": new["status"],
                          "old_score": old.get("score"), "new_score": new["score"], "functions": functions})
    return found


def write_changes(path, assignment_id, changes):
    """changes.json: the grade changes of the latest run that changed grades."""
    with open(path + ".part", "w", encoding="utf-8") as f:
        json.dump({"assignment": assignment_id, "students": changes}, f, indent=2)
        f.write("\n")
    os.replace(path + ".part", path)


def summary(changes):
    """The changes in a few lines, one per student."""
    lines = [f"grades changed for {len(changes)} student{'s' if len(changes) != 1 else ''}:"]
    for c in changes:
        moved = ", ".join(f"{f['id']} {_points(f['old_score'])} -> {_points(f['new_score'])}"
                          + (f" [{' '.join(f['new_codes']) or 'no code'}]" if f["old_codes"] != f["new_codes"] else "")
                          for f in c["functions"])
        status = f" ({c['old_status']} -> {c['new_status']})" if c["old_status"] != c["new_status"] else ""
        lines.append(f"  {c['student']}: {_points(c['old_score'])} -> {_points(c['new_score'])}{status}"
                     f"{': ' + moved if moved else ''}; changed: {', '.join(c['inputs_changed']) or 'nothing in the receipt'}")
    return "\n".join(lines)


def _points(value):
    return "none" if value is None else f"{value:g}"
