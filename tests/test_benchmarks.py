"""benchmarks/grading.py --class: the class it grades is built the same on every run, with a
sixth of its functions wrong, every submission a valid notebook (built only, never graded)."""
import collections
import importlib.util
import os

import nbformat
from helpers import REPO

spec = importlib.util.spec_from_file_location("grading_benchmark", os.path.join(REPO, "benchmarks", "grading.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def files(root):
    found = {}
    for d, _, names in os.walk(root):
        for name in names:
            path = os.path.join(d, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, root)] = f.read()
    return found


def test_the_class_is_the_same_on_every_run_and_a_sixth_wrong(tmp_path):
    n = 60
    plan = bench.build_mixed_class(str(tmp_path / "a"), n)
    bench.build_mixed_class(str(tmp_path / "b"), n)
    first, second = files(tmp_path / "a"), files(tmp_path / "b")
    assert len(first) == n and first == second

    functions = [e.name for e in bench.assignment.exercises]
    wrong = sum(len(bad) for *_, bad in plan)
    assert abs(wrong / (n * len(functions)) - 1 / 6) < 0.01, wrong
    assert any(not bad for *_, bad in plan) and any(len(bad) > 2 for *_, bad in plan)   # not spread evenly
    # each wrong function is one of the corpus's wrong ones, each correct one a correct one
    bases, correct, wrong_cells = bench.class_corpus()
    per_function = collections.Counter()
    for student, cells, labels, bad in plan:
        for fn in functions:
            text = cells[fn].removesuffix(f"\n# written by {student}\n")
            if fn in bad:
                assert (labels[fn], text) in wrong_cells[fn]
                per_function[fn] += 1
            else:
                assert (labels[fn], text) in correct[fn] or any(text == base[fn] for _, base in bases)
    assert len(per_function) >= 6, per_function

    for rel, data in first.items():
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        nbformat.validate(nb)
        student = rel.split(os.sep)[1]
        answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells
                   if c.metadata.get("nbgrader", {}).get("solution")}
        cells = next(cells for s, cells, _, _ in plan if s == student)
        assert answers == cells   # every answer cell holds the learner's own text
    # another seed, another class
    assert bench.class_plan(n, seed=1) != plan
