"""The GRU assignment: the second of the course, after the RNN and the LSTM.

Its notebook is in source/gru_step_by_step/ (its helper gru_utils.py is generated from
assignments/shared/utils.py); this package holds what the engine reads through the contract (grading/contract/assignment.py): the reference, the
graded functions, the seeded cases and the catalog of mistakes.
"""
import os

from ..grading.contract.assignment import COMMON_CASE_HINTS, Assignment
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
    utils_module = "gru_utils"
    utils_template = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "shared", "utils.py")
    notebook_title = "the GRU notebook"
    cases = cases
    exercises = EXERCISES
    reference = reference
    reference_helpers = ("sigmoid", "softmax")
    catalog = mistakes.CATALOG
    case_hints = CASE_HINTS


ASSIGNMENT = GRUStepByStep()
