"""The RNN/LSTM assignment: eight functions, forward and backward, step by step.

Its notebook and shipped helper (rnn_utils.py) are in source/rnn_step_by_step/; this package
holds what the engine reads through the contract (grading/assignment.py).
"""
from ..grading.assignment import Assignment
from . import cases, mistakes, reference
from .exercises import EXERCISES

# What it tells a learner when a fact about the cases separates the passing ones from the
# failing ones: (when only such cases pass, when only such cases fail).
CASE_HINTS = {
    "T_x=1": ("It is right only when the sequence has a single time step: look at what should "
              "carry over from one time step to the next.",
              "It fails only when the sequence has a single time step (T_x = 1): look for code that "
              "assumes at least two steps."),
    "m=1": ("It is right only with a single example (m = 1): check how the batch axis (axis 1) is "
            "handled, for instance in sums and in shapes.",
            "It fails only with a single example (m = 1): look for code that drops or confuses the "
            "batch axis when it has size 1 (np.squeeze, sums over the wrong axis)."),
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

    def gradient_check_lines(self, name, args, got, wrong):
        from . import gradcheck
        return gradcheck.lines(name, args, got, wrong)


ASSIGNMENT = RNNStepByStep()
