"""The GRU assignment: the second of the course, after the RNN and the LSTM.

Assignment-specific content only: the reference (reference.py), the graded functions
(exercises.py), the seeded cases (cases.py) and the catalog of mistakes (mistakes.py). The
notebook is source/gru_step_by_step/gru_step_by_step.ipynb, shipped with gru_utils.py.
"""
import os

import assignments.rnn_step_by_step as _rnn

from . import cases, mistakes, reference  # noqa: F401 (the package's contents)
from .exercises import BY_NAME, EXERCISES, GRADIENTS, GRU_CACHE, MAX_SCORE  # noqa: F401 (the package's contents)

ASSIGNMENT_ID = "gru_step_by_step"
NOTEBOOK = "gru_step_by_step"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE_DIR = os.path.join(ROOT, "source", ASSIGNMENT_ID)

# What it tells a learner when a fact about the cases separates the passing ones from the
# failing ones: (when only such cases pass, when only such cases fail). The T_x = 1 and m = 1
# hints are the RNN assignment's (generic, to move to assignments/grading/ with it).
CASE_HINTS = {
    **{fact: _rnn.CASE_HINTS[fact] for fact in ("T_x=1", "m=1")},
    "a0=0": (("It is right only when the initial hidden state is zero (a0 = 0): look at how a0 "
              "reaches the first step."),
             ("It fails only when the initial hidden state is zero (a0 = 0): look for code that "
              "divides by the state or treats a zero state as missing.")),
}
