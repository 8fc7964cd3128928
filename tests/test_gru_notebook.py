"""What the GRU notebook gives students to work with, beyond its text: skeleton comments over
each stub, as the first notebook has, and a verdict on its numerical gradient check."""
import os
import re

import nbformat
from helpers import REPO

from assignments.gru_step_by_step.exercises import EXERCISES

AID = "gru_step_by_step"


def cells(folder):
    return nbformat.read(os.path.join(REPO, folder, AID, AID + ".ipynb"), as_version=4).cells


def answer_cells(folder):
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in cells(folder)
            if c.metadata.get("nbgrader", {}).get("solution")}


def test_each_stub_has_skeleton_comments_outside_its_solution_region():
    """The release replaces the solution region with the stub, so comments inside it would
    never reach a student: they sit between the docstring and the region, and say how many
    lines each part takes."""
    source, release = answer_cells("source"), answer_cells("release")
    assert list(source) == list(release) == [e.name for e in EXERCISES]
    for name, text in source.items():
        before = text.split('"""', 2)[2].split("### BEGIN SOLUTION")[0]
        hints = [line.strip() for line in before.splitlines() if line.strip()]
        assert len(hints) >= 4 and all(h.startswith("#") for h in hints), f"{name}: {hints}"
        assert sum(bool(re.search(r"\((about )?\d+ lines?\)$", h)) for h in hints) >= 4, f"{name} says how many lines"
        stub = release[name]
        assert all(h in stub for h in hints)
        assert stub.index(hints[-1]) < stub.index("raise NotImplementedError()")


def test_the_numerical_check_gives_a_verdict():
    """A bare relative error (6.9e-11) means nothing to a learner who has not read the
    thresholds: the cell says whether the two gradients agree, at the threshold the text gives."""
    (cell,) = [c for c in cells("release") if c.cell_type == "code" and "numerical_gradient(" in c.source]
    assert '"✓ they agree" if error < 1e-8 else "✗ look for the mistake"' in cell.source
    text = "\n".join(c.source for c in cells("release") if c.cell_type == "markdown")
    assert "`1e-8` or less means they agree" in text
