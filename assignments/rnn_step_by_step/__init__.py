"""The RNN/LSTM assignment: what the generic grading machinery needs to know about it.

`assignments.grading` reads these names: ASSIGNMENT_ID, NOTEBOOK, SOURCE_DIR, EXERCISES,
BY_NAME, MAX_SCORE, checks (the shipped comparison module), spec(), reference, cases,
mistakes, notebook (the generated cells), hidden_cases(), expected(), callee_source(),
helper_files(), refresh_source(), gradient_check_lines(), CASE_HINTS; and, if present,
finish_release_source() (what the release build adds to its copy of source/).
"""
import importlib.util
import os

from . import cases, mistakes, notebook, reference
from .exercises import BY_NAME, EXERCISES, LSTM_CACHE, MAX_SCORE, RNN_CACHE

ASSIGNMENT_ID = "rnn_step_by_step"
NOTEBOOK = "rnn_step_by_step"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE_DIR = os.path.join(ROOT, "source", ASSIGNMENT_ID)
CHECKS_FILE = os.path.join(SOURCE_DIR, "rnn_checks.py")


def shipped_module(filename):
    """A module students get, loaded from source/ (never from a submission)."""
    spec = importlib.util.spec_from_file_location("rnn_step_by_step_" + filename[:-3], os.path.join(SOURCE_DIR, filename))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


checks = shipped_module("rnn_checks.py")


def helper_files():
    """The files that ship beside the notebook (what a grading kernel may see)."""
    return sorted(f for f in os.listdir(SOURCE_DIR) if not f.endswith(".ipynb") and not f.startswith((".", "__")))


def spec(name):
    """What the comparison needs to know about one function's outputs."""
    ex = BY_NAME[name]
    return {"name": name, "args": list(ex.args), "outputs": list(ex.outputs),
            "returns_dict": ex.returns_dict, "callees": list(ex.callees),
            "cache_fields": list(RNN_CACHE if ex.cell_kind == "rnn" else LSTM_CACHE), "protocol": ex.protocol}


def hidden_cases(name):
    """The hidden tests of ``name`` as (description, arguments, facts); drawn only when grading."""
    return [(f"a hidden case with {s.describe(name)}", cases.inputs(s.recipe(name)), s.facts(name))
            for s in cases.HIDDEN_SHAPES]


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
    from . import check_data
    path = os.path.join(source_dir, NOTEBOOK + ".ipynb")
    nb = notebook.refresh(nbformat.read(path, as_version=4))
    nbformat.write(nb, path)
    with open(os.path.join(source_dir, "check_data.json"), "w", encoding="utf-8") as f:
        f.write(check_data.build())


def finish_release_source(source_copy):
    """Draw the notebook's figures into the release: each ``figure:<name>`` image of the
    copy of the source notebook becomes the SVG itself (source/ keeps the short name)."""
    import nbformat
    from . import figures
    path = os.path.join(source_copy, NOTEBOOK + ".ipynb")
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = figures.embed(cell.source)
    nbformat.write(nb, path)


def gradient_check_lines(name, args, got, wrong):
    from . import gradcheck
    return gradcheck.lines(name, args, got, wrong)
