"""The GRU assignment: the second of the course, after the RNN and the LSTM.

Its notebook and shipped helper (gru_utils.py) are in source/gru_step_by_step/; this package
holds what the engine reads through the contract (grading/assignment.py): the reference, the
graded functions, the seeded cases and the catalog of mistakes.
"""
from ..grading.assignment import COMMON_CASE_HINTS, Assignment
from . import cases, mistakes, reference
from .exercises import EXERCISES

CASE_HINTS = {
    **COMMON_CASE_HINTS,
    "a0=0": ("It is right only when the initial hidden state is zero (a0 = 0): look at how a0 "
             "reaches the first step.",
             "It fails only when the initial hidden state is zero (a0 = 0): look for code that "
             "divides by the state or treats a zero state as missing."),
}


class GRUStepByStep(Assignment):
    id = "gru_step_by_step"
    notebook = "gru_step_by_step"
    checks_module = "gru_checks"
    exercises = EXERCISES
    reference = reference
    reference_helpers = ("sigmoid", "softmax")
    catalog = mistakes.CATALOG
    case_hints = CASE_HINTS

    def hidden_cases(self, name):
        return [(f"a hidden case with {s.describe(name)}", cases.inputs(s.recipe(name)), s.facts(name))
                for s in cases.HIDDEN_SHAPES]

    def public_cases(self, name):
        return ([("the worked example above", cases.EXAMPLES[name])]
                + [(f"a small example with {s.describe(name)}", s.recipe(name)) for s in cases.PUBLIC_SHAPES])

    def example(self, name):
        return cases.EXAMPLES[name]

    def finish_release_notebook(self, nb):
        """Draw the notebook's figures into the release: each ``figure:<name>`` image of the
        source notebook becomes the SVG itself (source/ keeps the short name)."""
        from . import figures
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = figures.embed(cell.source)


ASSIGNMENT = GRUStepByStep()
