"""The RNN/LSTM assignment: eight functions, forward and backward, step by step.

Its notebook and shipped helper (rnn_utils.py) are in source/rnn_step_by_step/; this package
holds what the engine reads through the contract (grading/assignment.py).
"""
from ..grading.assignment import COMMON_CASE_HINTS, Assignment
from . import cases, mistakes, reference
from .exercises import EXERCISES

# What it tells a learner when a fact about the cases separates the passing ones from the
# failing ones: (when only such cases pass, when only such cases fail).
CASE_HINTS = {
    **COMMON_CASE_HINTS,
    "dc_next=0": ("It is right only when no gradient arrives on the cell state (dc_next = 0): look at every "
                  "place where dc_next should contribute.",
                  "It fails only when dc_next = 0: look for code that assumes a non-zero gradient on the "
                  "cell state."),
}


class RNNStepByStep(Assignment):
    id = "rnn_step_by_step"
    notebook = "rnn_step_by_step"
    checks_module = "rnn_checks"
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

    def gradient_check_lines(self, name, args, got, wrong):
        from . import gradcheck
        return gradcheck.lines(name, args, got, wrong)


ASSIGNMENT = RNNStepByStep()
