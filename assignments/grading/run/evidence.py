"""After grading: the class's mistake clusters (judging/clusters.py) and the copying evidence
(reports/similarity.py), written beside results.json as clusters.json and similarity.json,
with a side-by-side page per flagged pair (reports/pairs.py).

Both read the grades, never write them: results.json is written before this runs and is
not touched. The code compared is each submission's answer cells, as staged for grading;
a folder of known solutions (``--known-solutions``: notebooks or .py files collected by the
instructor) joins the comparison, a match against one being reported as ``known:FILE``.
A run keeps what it read in a ``Cache`` (OUT/.nbgrader/cache/), which the next run reads
first: each notebook's answer cells by the digest of its bytes, each cell's evidence items
by the digest of its text, and each draft the clusters searched for. A rerun after one new
submission reads and tokenises that one notebook alone, and runs no mutant again. What is
not kept is what depends on the whole class: which items are rare, and so every pair's
score. Each new submission changes the rarity of the items it holds, hence the scores of
pairs that do not involve it, so a pair's result cannot be kept as it was; counting
holders and summing rarity over the class's cached items is a fraction of a second for two
hundred submissions, against tens of seconds for reading and tokenising them, so it is done
again from the items every run, exactly as a first run does it; a rerun that grades in this
process counts them in a thread while its kernel runs (``foresee``), from the answers as
staged, and uses that count only if the code read after grading is the same. The outputs are
the same bytes with or without the cache (tests/test_receipts.py checks it).
Rule (run/): only the grading process writes the class's gradebook and folders.
"""
import hashlib
import inspect
import json
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor

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


def read_code(path, names, cache=None, digest=None):
    """{function: source} of a notebook or a .py file ({} when it cannot be read); a
    ``Cache`` gives a notebook's answer cells by its bytes' digest when an earlier run read them.
    ``digest``: a list that receives that digest."""
    if cache is not None and path.endswith(".ipynb"):
        known = cache.digest_by_stat(path)
        if known is not None:
            if digest is not None:
                digest.append(known)
            return cache.keep_notebook(known)
    try:
        before = _stat(path)
        with open(path, "rb") as f:
            data = f.read()
        if not path.endswith(".ipynb"):
            return similarity.split_functions(data.decode("utf-8"), names)
    except Exception:
        return {}
    key = hashlib.sha256(data).hexdigest()
    if cache is not None:
        cache.remember_stat(path, before, key)
    if digest is not None:
        digest.append(key)
    if cache is not None and key in cache.notebooks:
        return cache.keep_notebook(key)
    try:
        found = answer_cells(nbformat.reads(data.decode("utf-8"), as_version=4), names)
    except Exception:
        found = {}
    if cache is not None:
        cache.notebooks[key] = found
        cache.keep_notebook(key)
    return found


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


def class_code(assignment, config, students, cache=None):
    """{student: {function: source}} of the autograded notebooks (every graded student's,
    those of an earlier run too); a notebook ``Cache.read_ahead`` read, and that has not
    changed since, is not read again."""
    names = set(assignment.by_name)
    found = {}
    ahead = cache.ahead if cache is not None else {}
    for student, graded in folders.folders(config, "autograded", students, assignment.id).items():
        path = os.path.join(graded, assignment.notebook + ".ipynb")
        if path in ahead and ahead[path][0] == _stat(path):
            found[student] = ahead[path][1]
            cache.used_notebooks.add(ahead[path][2])
            cache.remember_stat(path, ahead[path][0], ahead[path][2])
        elif os.path.isfile(path):
            found[student] = read_code(path, names, cache)
    return found


def _stat(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def reference_code(assignment):
    return {n: inspect.getsource(getattr(assignment.mistakes.reference, n)) for n in assignment.by_name}


def signatures(results):
    """{student: {function: signature}} of the wrong functions no catalogued mistake names."""
    return {s["student"]: {e["id"]: e["signature"] for e in s["exercises"]
                           if e.get("signature") and not e["diagnoses"]} for s in results["submissions"]}


def release_code(assignment, release_nb):
    """{function: the release's code of it}, in the assignment's order."""
    release = answer_cells(release_nb, set(assignment.by_name))
    return {e.name: release.get(e.name, "") for e in assignment.exercises}


def foresee(assignment, config, release_nb, known_folder, cache, kept, staged):
    """Start what the copying evidence takes from the code alone (``similarity.rare_items``)
    in a thread, for a rerun whose process would otherwise wait while its kernel runs the new
    submissions: the code of ``kept`` (students) as ``class_code`` reads it, and that of
    ``staged`` ({student: their staged notebook's bytes}) from those bytes, whose answer
    cells autograding leaves as they are. ``write`` takes the answer when the code it reads
    after grading turns out the same. Returns a Future."""
    def work():
        names = set(assignment.by_name)
        code = class_code(assignment, config, sorted(kept), cache)
        for student, data in staged.items():
            try:
                code[student] = answer_cells(nbformat.reads(data.decode("utf-8"), as_version=4), names)
            except Exception:
                continue
        code = {s: code[s] for s in sorted(code)}   # the order of results.json, which write reads in
        known = known_solutions(known_folder, names) if known_folder else {}
        return similarity.rare_items(code, release_code(assignment, release_nb), reference_code(assignment), known,
                                     cache=cache.cells)
    pool = ThreadPoolExecutor(1, thread_name_prefix="foresee")
    future = pool.submit(work)
    pool.shutdown(wait=False)   # its thread ends with the work
    return future


def write(assignment, results, own, config, release_nb, known_folder=None, cache=None, foreseen=None, jobs=1):
    """clusters.json, similarity.json and the pairs' pages into ``own``; returns (clusters,
    similarity). ``cache``: a ``Cache``, read and then saved for the next run. ``foreseen``:
    ``foresee``'s Future, waited for before anything else touches the cache."""
    names = set(assignment.by_name)
    cache = cache or Cache(None, "")
    try:
        rare = foreseen.result() if foreseen is not None else None
    except Exception:   # computed again below, and then any error is the run's
        rare = None
    code = class_code(assignment, config, [s["student"] for s in results["submissions"] if s["status"] != "unreadable"],
                      cache)
    release = release_code(assignment, release_nb)
    reference = reference_code(assignment)
    known = known_solutions(known_folder, names) if known_folder else {}
    found = clusters.clusters(results, code, assignment, drafter=cache.drafts)
    data = similarity.compare(assignment.id, code, release, reference, known=known,
                              signatures=signatures(results), jobs=jobs, cache=cache.cells, foreseen=rare)
    cache.save([src for subs in list(code.values()) + list(known.values()) for src in subs.values()])
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


class Cache:
    """What a run read, for the next run (see the module's docstring), in one JSON file
    under the run's cache folder. ``key`` names everything the items depend on besides the
    texts they are read from: the receipt's class inputs (the release, which gives the
    boilerplate, the hidden cases, reference and catalog, which give the drafts, and the
    engine's code, which includes the settings); a file with another key, or that cannot
    be read, is ignored. ``fresh``: ignore the file (it is still written). Only what the run
    used is saved, so the file holds one class's worth."""

    def __init__(self, path, key, fresh=False):
        self.path, self.key = path, key
        self.notebooks, self.cells, self.found_drafts = {}, {}, {}
        self.used_notebooks, self.used_drafts = set(), set()
        self.ahead = {}   # {notebook's path: (its stat, its code, its digest)}, read by read_ahead
        self.stats, self.used_stats = {}, {}   # {notebook's path: [its stat..., its digest]}: see digest_by_stat
        self.loaded = None
        if path and not fresh:
            self._load()

    def _load(self):
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
            if data.get("key") != self.key:
                return
            notebooks = dict(data["notebooks"])
            cells = {k: {kind: frozenset(items) for kind, items in doc.items()} for k, doc in data["cells"].items()}
            drafts = {k: (v[0], int(v[1])) for k, v in data["drafts"].items()}
            stats = {k: list(v) for k, v in data.get("stats", {}).items() if len(v) == 5 and v[4] in notebooks}
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
            return
        self.notebooks, self.cells, self.found_drafts, self.stats = notebooks, cells, drafts, stats
        self.loaded = (sorted(notebooks), sorted(cells), sorted(drafts), stats)

    RACY = 2.0   # seconds: a file changed more recently than this may change again within its clock tick

    def digest_by_stat(self, path):
        """The digest of a notebook an earlier run read, when ``os.stat`` says it is the same
        file, unchanged (size, modification and change times in nanoseconds, inode): a rerun
        then reads none of the class's autograded notebooks but the new ones. None otherwise."""
        found = self.stats.get(path)
        if found is None or found[:4] != list(_stat(path) or ()) or found[4] not in self.notebooks:
            return None
        self.used_stats[path] = found
        return found[4]

    def remember_stat(self, path, before, key):
        """Remember ``path``'s digest by its stat taken before it was read, if it has not
        changed since and had settled (see ``RACY``)."""
        if before is not None and _stat(path) == before and before[1] < time.time_ns() - self.RACY * 1e9:
            self.used_stats[path] = [*before, key]

    def read_ahead(self, assignment, config, students):
        """Read the code of ``students``' autograded notebooks now, while the run waits (for its
        zygote to boot), rather than after grading: those of students the run does not grade
        again are the same then. ``class_code`` takes what has not changed since."""
        names = set(assignment.by_name)
        for graded in folders.folders(config, "autograded", students, assignment.id).values():
            path = os.path.join(graded, assignment.notebook + ".ipynb")
            before, digest = _stat(path), []
            if before is not None:
                code = read_code(path, names, self, digest)
                if digest and _stat(path) == before:
                    self.ahead[path] = (before, code, digest[0])
        self.used_notebooks.clear()   # counted again when class_code takes them

    def take(self, path, data, code):
        """A notebook this run has just written at ``path`` (its bytes ``data``, its answer cells
        ``code``): ``class_code`` takes its code as it is then, instead of reading and parsing
        the notebook again after grading, while the class waits."""
        key = hashlib.sha256(data).hexdigest()
        self.notebooks[key] = code
        self.ahead[path] = (_stat(path), code, key)

    def keep_notebook(self, key):
        self.used_notebooks.add(key)
        return self.notebooks[key]

    def drafts(self, assignment, function, signatures, budget):
        """clusters.drafts' answer, remembered with the mutants it ran: drafts depend on the
        assignment (in ``key``), the function, the groups' signatures and the budget left when
        their search began, which is also what is spent from the budget again."""
        key = f"{function} {' '.join(signatures)} {budget[0]}"
        if key not in self.found_drafts:
            left = budget[0]
            found = clusters.drafts(assignment, function, signatures, budget=budget)
            self.found_drafts[key] = (json.loads(json.dumps(found)), left - budget[0])
        else:
            budget[0] -= self.found_drafts[key][1]
        self.used_drafts.add(key)
        return self.found_drafts[key][0]

    def save(self, sources):
        """Write the file, with the items of ``sources`` (the cells of this run) only; not
        when it holds them already (what a key names never changes)."""
        used = {similarity.source_key(src) for src in sources if src and src.strip()}
        stats = {p: v for p, v in self.used_stats.items() if v[4] in self.used_notebooks}
        keep = (sorted(self.used_notebooks), sorted(used & set(self.cells)), sorted(self.used_drafts), stats)
        if not self.path or keep == self.loaded:
            return
        data = {"key": self.key, "notebooks": {k: self.notebooks[k] for k in keep[0]},
                "cells": {k: {kind: sorted(items) for kind, items in self.cells[k].items()} for k in keep[1]},
                "drafts": {k: list(self.found_drafts[k]) for k in keep[2]},
                "stats": dict(sorted(stats.items()))}
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with open(self.path + ".part", "w", encoding="utf-8") as f:
            f.write(json.dumps(data))   # at once: json.dump's chunks go through the pure-Python encoder
        os.replace(self.path + ".part", self.path)


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
