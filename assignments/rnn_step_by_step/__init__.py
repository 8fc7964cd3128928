"""The RNN/LSTM assignment: what the generic grading machinery needs to know about it.

`assignments.grading` reads these names: ASSIGNMENT_ID, NOTEBOOK, SOURCE_DIR, EXERCISES,
checks (the shipped comparison module), spec(), reference, cases, mistakes.
"""
import importlib.util
import os

from . import cases, mistakes, reference
from .exercises import BY_NAME, EXERCISES, LSTM_CACHE, MAX_SCORE, RNN_CACHE

ASSIGNMENT_ID = "rnn_step_by_step"
NOTEBOOK = "rnn_step_by_step"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE_DIR = os.path.join(ROOT, "source", ASSIGNMENT_ID)
CHECKS_FILE = os.path.join(SOURCE_DIR, "rnn_checks.py")


def _load_checks():
    """The shipped check module, loaded from source/ (never from a submission)."""
    spec = importlib.util.spec_from_file_location("rnn_step_by_step_checks", CHECKS_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


checks = _load_checks()


def spec(name):
    """What the comparison needs to know about one function's outputs."""
    ex = BY_NAME[name]
    return {"name": name, "args": list(ex.args), "outputs": list(ex.outputs),
            "returns_dict": ex.returns_dict, "callees": list(ex.callees),
            "cache_fields": list(RNN_CACHE if ex.cell_kind == "rnn" else LSTM_CACHE)}


def hidden_cases(name):
    """[(description, arguments)] for the hidden tests of ``name``; drawn only when grading."""
    return [(f"a hidden case with {s.describe(name)}", cases.inputs(s.recipe(name)))
            for s in cases.HIDDEN_SHAPES]


def expected(name, args):
    return mistakes.run(getattr(reference, name), args)


def callee_source(name):
    """Source text that defines the reference ``name`` (and the helpers it needs), to stand
    in for a learner's version while a caller of it is judged."""
    import inspect
    parts = ["import numpy as np"] + [inspect.getsource(f) for f in
                                      (reference.sigmoid, reference.softmax, getattr(reference, name))]
    return "\n\n".join(parts)


def refresh_source(source_dir=SOURCE_DIR):
    """Rewrite what in source/ is generated from this package: the notebook's solutions,
    worked examples and expected outputs, and the checks' data file."""
    import nbformat
    from . import check_data, notebook
    path = os.path.join(source_dir, NOTEBOOK + ".ipynb")
    nb = notebook.refresh(nbformat.read(path, as_version=4))
    nbformat.write(nb, path)
    with open(os.path.join(source_dir, "check_data.json"), "w", encoding="utf-8") as f:
        f.write(check_data.build())
