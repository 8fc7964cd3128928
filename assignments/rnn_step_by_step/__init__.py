"""The RNN/LSTM assignment: eight functions, forward and backward, step by step.

Its notebook is in source/rnn_step_by_step/ (its helper rnn_utils.py is generated from
assignments/shared/utils.py). This package is the files the engine reads through the
contract (grading/contract/assignment.py's PACKAGE_FILES): exercises.py, reference.py,
cases.py and mistakes.py; and its own figures.py and gradcheck.py, which only this class uses.
"""
from ..grading.contract.assignment import COMMON_CASE_HINTS, Assignment
from ..grading.contract.messages import N_, notebook_language

# What it tells a learner when a fact about the cases separates the passing ones from the
# failing ones: (when only such cases pass, when only such cases fail).
CASE_HINTS = {
    **COMMON_CASE_HINTS,
    "dc_next=0": (N_("It is right only when no gradient arrives on the cell state (dc_next = 0): look at every "
                     "place where dc_next should contribute."),
                  N_("It fails only when dc_next = 0: look for code that assumes a non-zero gradient on the "
                     "cell state.")),
}


class RNNStepByStep(Assignment):
    id = "rnn_step_by_step"
    short = "rnn"
    notebook_title = "the RNN/LSTM notebook"
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

    def gradient_check_lines(self, name, args, got, wrong):
        from . import gradcheck
        return gradcheck.lines(name, args, got, wrong, tr=self.checks.tr)


ASSIGNMENT = RNNStepByStep()
