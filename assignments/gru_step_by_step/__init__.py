"""The GRU assignment: the second of the course, after the RNN and the LSTM.

Its notebook is in source/gru_step_by_step/ (its helper gru_utils.py is generated from
assignments/shared/utils.py). This package is the files the engine reads through the
contract (grading/contract/assignment.py's PACKAGE_FILES): exercises.py, reference.py,
cases.py and mistakes.py; and its own figures.py, which only this class uses.
"""
from ..grading.contract.assignment import COMMON_CASE_HINTS, Assignment
from ..grading.contract.messages import N_, notebook_language

CASE_HINTS = {
    **COMMON_CASE_HINTS,
    "a0=0": (N_("It is right only when the initial hidden state is zero (a0 = 0): look at how a0 "
                "reaches the first step."),
             N_("It fails only when the initial hidden state is zero (a0 = 0): look for code that "
                "divides by the state or treats a zero state as missing.")),
}


class GRUStepByStep(Assignment):
    id = "gru_step_by_step"
    short = "gru"
    notebook_title = "the GRU notebook"
    reference_helpers = ("sigmoid", "softmax")
    activations = ("sigmoid",)
    normalisers = ("softmax",)
    case_hints = CASE_HINTS

    def finish_release_notebook(self, nb):
        """Draw the notebook's figures into the release: each ``figure:<name>`` image of the
        source notebook becomes the SVG itself (source/ keeps the short name)."""
        from . import figures
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = figures.embed(cell.source, lang=notebook_language(nb.metadata))


ASSIGNMENT = GRUStepByStep()
