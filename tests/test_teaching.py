"""What the notebook teaches with: its figures, its scaffolding, its gradient helpers, and
the optional "Watch it learn" section (which must learn, say why when it cannot, and never
run while grading)."""
import base64
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys
import time
from contextlib import redirect_stdout

import nbformat
import numpy as np
import pytest
from helpers import RELEASE, REPO
from nbclient import NotebookClient

from assignments.grading.authoring.submissions import answer_cells, fill
from assignments.grading.contract import cases as generic
from assignments.grading.sandbox.kernel import GradingKernelManager
from assignments.rnn_step_by_step import ASSIGNMENT, cases, figures, gradcheck, reference
from assignments.rnn_step_by_step.exercises import EXERCISES, GRADIENTS

mistakes = ASSIGNMENT.mistakes


@pytest.fixture(autouse=True)
def as_a_student(monkeypatch):
    """These tests run the notebook as a student does: never with nbgrader's signal that the
    autograder runs it (a grading run earlier in the same process may have left it set)."""
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)

SOURCE = os.path.join(REPO, "source", "rnn_step_by_step")
FIGURE = re.compile(r"\]\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)")


def shipped(name):
    """A module students get, loaded from release/ (where it finds its neighbours, as in
    the notebook's folder)."""
    spec = importlib.util.spec_from_file_location("released_" + name, os.path.join(RELEASE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, RELEASE)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(RELEASE)
    return module


def cells(folder):
    return nbformat.read(os.path.join(folder, "rnn_step_by_step.ipynb"), as_version=4).cells


# --- figures --------------------------------------------------------------------------------------

def test_release_embeds_the_figures_and_source_only_names_them():
    release_md = "\n".join(c.source for c in cells(RELEASE) if c.cell_type == "markdown")
    drawn = [base64.b64decode(b).decode("utf-8") for b in FIGURE.findall(release_md)]
    assert len(drawn) >= 4 and len(drawn) == len(figures.FIGURES)
    assert "figure:" not in release_md
    source_md = "\n".join(c.source for c in cells(SOURCE) if c.cell_type == "markdown")
    assert sorted(figures.FIGURE_URL.findall(source_md)) == sorted(figures.FIGURES)
    assert "data:image" not in source_md, "the drawn figures belong in the release only"
    for svg in drawn:
        assert svg.startswith("<?xml") and "<svg " in svg
        # an opaque white panel under everything: the figure reads the same in light and dark themes
        assert "fill: #ffffff" in svg.split("</defs>", 1)[-1][:2000]
        assert "<text" not in svg, "text must be drawn as paths, never with the reader's fonts"
    print(f"\n[measure] {len(drawn)} figures, {sum(map(len, drawn)) // 1000} kB of SVG in the release notebook")


def test_figures_are_the_same_bytes_when_drawn_again():
    assert {n: figures.draw(n) for n in figures.FIGURES} == {n: figures.draw(n) for n in figures.FIGURES}


def test_figures_use_matplotlibs_own_fonts_whatever_its_font_cache_says(monkeypatch):
    """matplotlib's font list is a cache shared by every matplotlib of that version in the
    user's home: one written by another environment, or by a system matplotlib without its
    bundled fonts, may list no DejaVu of ours. The figures still draw with ours, the same bytes."""
    import matplotlib
    from matplotlib import font_manager
    expected = {n: figures.draw(n) for n in ("rnn_cell", "lstm_cell")}
    data = os.path.realpath(matplotlib.get_data_path())
    fonts = font_manager.fontManager
    monkeypatch.setattr(fonts, "ttflist", [f for f in fonts.ttflist if not os.path.realpath(f.fname).startswith(data)])
    font_manager.FontManager._findfont_cached.cache_clear()
    assert {n: figures.draw(n) for n in expected} == expected
    font_manager.FontManager._findfont_cached.cache_clear()


def test_unknown_figure_is_refused():
    with pytest.raises(KeyError, match="figure:rnn_cel"):
        figures.embed("![the cell](figure:rnn_cel)")


# --- answer cells: nbgrader markup and scaffolding -------------------------------------------------

def test_answer_cells_stay_answer_cells_with_scaffolding_outside_the_solution():
    source = {c.metadata["nbgrader"]["grade_id"]: c for c in cells(SOURCE)
              if c.metadata.get("nbgrader", {}).get("solution")}
    release = {c.metadata["nbgrader"]["grade_id"]: c for c in cells(RELEASE)
               if c.metadata.get("nbgrader", {}).get("solution")}
    assert list(source) == list(release) == [e.name for e in EXERCISES]
    for name, cell in source.items():
        meta = cell.metadata["nbgrader"]
        assert meta["solution"] and not meta["grade"] and not meta["locked"]
        assert cell.source.count("### BEGIN SOLUTION") == cell.source.count("### END SOLUTION") == 1
        before = cell.source.split('"""', 2)[2].split("### BEGIN SOLUTION")[0]
        hints = [line.strip() for line in before.splitlines() if line.strip()]
        assert len(hints) >= 3 and all(h.startswith("#") for h in hints), f"{name}: {hints}"
        assert any(re.search(r"\(\s*(about )?\d+ lines?\)", h) for h in hints), f"{name} says how many lines"
        # students see the hints, then the stub
        student = release[name].source
        assert all(h in student for h in hints)
        assert student.index(hints[-1]) < student.index("raise NotImplementedError()")


# --- the gradient helpers --------------------------------------------------------------------------

def test_relative_error_refuses_arrays_of_different_shapes():
    utils = shipped("rnn_utils")
    with pytest.raises(ValueError, match=r"\(5,\) and \(5, 1\)"):
        utils.relative_error(np.ones(5), np.ones((5, 1)))
    assert utils.relative_error(np.zeros((2, 3)), np.zeros((2, 3))) == 0.0


def test_quoted_thresholds_hold_for_correct_code_and_for_catalogued_mistakes():
    """The notebook says: a correct gradient gives 1e-8 or less on its small examples,
    and above 1e-5 means a bug. Measured on every gradient of every backward pass."""
    utils = shipped("rnn_utils")
    worst_correct, least_wrong = 0.0, np.inf
    for name in GRADIENTS:
        for seed in range(8):
            args = generic.arguments(ASSIGNMENT, name, generic.draw(cases.Shape(seed, n_x=3, n_a=5, n_y=2, m=4, T_x=4).recipe(name)))
            values, f, dout = gradcheck.forward_problem(name, args)
            numeric = {k: utils.numerical_gradient(f, values[v], dout) for k, v in GRADIENTS[name].items()}
            right = mistakes.run(getattr(reference, name), args)
            worst_correct = max([worst_correct] + [utils.relative_error(right[k], numeric[k]) for k in numeric])
            if seed:
                continue
            for pick in mistakes.variants(name):
                try:
                    got = mistakes.run(mistakes.mutant(name, (pick,)), args)
                except Exception:
                    continue
                wrong = [k for k in numeric if isinstance(got, dict) and isinstance(got.get(k), np.ndarray)
                         and got[k].shape == numeric[k].shape and not np.allclose(got[k], right[k])]
                if wrong:
                    least_wrong = min(least_wrong, max(utils.relative_error(got[k], numeric[k]) for k in wrong))
    print(f"\n[measure] relative_error: correct gradients at most {worst_correct:.1e}; "
          f"every catalogued backward mistake at least {least_wrong:.1e}")
    assert worst_correct < 1e-8
    assert least_wrong > 1e-5


# --- Watch it learn --------------------------------------------------------------------------------

def test_training_says_why_it_cannot_train():
    train = shipped("rnn_train")

    def broken(da, caches):
        grads = reference.rnn_backward(da, caches)
        grads["dWaa"] = grads["dWaa"] * 0.9
        return grads

    def stub(*args):
        raise NotImplementedError()
    out = io.StringIO()
    with redirect_stdout(out):
        assert train.train("rnn", reference.rnn_forward, broken) is None
        assert train.train("lstm", stub, reference.lstm_backward) is None
    said = out.getvalue()
    assert "dWaa disagrees with a numerical gradient" in said and "Fix broken first" in said
    assert "write stub and lstm_backward" in said
    assert train.gradient_problem("rnn", reference.rnn_forward, reference.rnn_backward) is None
    assert train.gradient_problem("lstm", reference.lstm_forward, reference.lstm_backward) is None


def test_training_does_not_run_while_graded():
    run = subprocess.run([sys.executable, "-c", "import rnn_train; print(rnn_train.train('rnn', None, None))"],
                         cwd=RELEASE, env=dict(os.environ, NBGRADER_EXECUTION="autograde"),
                         capture_output=True, text=True, check=True)
    assert "not trained while the notebook is graded" in run.stdout and run.stdout.endswith("None\n")
    # the grading kernel is told it is grading, sandbox or not
    km = GradingKernelManager(sandbox=False)
    try:
        assert km.kernel_spec.env["NBGRADER_EXECUTION"] == "autograde"
    finally:
        km.cleanup_scratch()


def test_the_grader_skips_training(sample_class):
    """End to end: in the autograded notebook of a correct submission, the training cell
    ran and said it was skipped."""
    path = os.path.join(sample_class["out"], "autograded", "ada", "rnn_step_by_step", "rnn_step_by_step.ipynb")
    nb = nbformat.read(path, as_version=4)
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and "rnn_train.train(" in c.source]
    text = "".join(o.get("text", "") for o in cell.outputs)
    assert "RNN: not trained while the notebook is graded" in text
    assert "LSTM: not trained while the notebook is graded" in text
    assert "step" not in text and not any(o.output_type == "display_data" for o in cell.outputs)


@pytest.mark.slow   # end to end: `make test` runs it, `make test-quick` does not
def test_lstm_learns_where_the_rnn_cannot(capsys):
    train = shipped("rnn_train")
    start = time.perf_counter()
    with capsys.disabled(), redirect_stdout(io.StringIO()):
        rnn = train.train("rnn", reference.rnn_forward, reference.rnn_backward)
        lstm = train.train("lstm", reference.lstm_forward, reference.lstm_backward)
    elapsed = time.perf_counter() - start
    print(f"\n[measure] Watch it learn with the reference functions: {elapsed:.1f} s; final accuracy "
          f"RNN {np.mean(rnn[-100:]):.0%}, LSTM {np.mean(lstm[-100:]):.0%}")
    assert np.mean(lstm[-100:]) > 0.9
    assert np.mean(rnn[-100:]) < 0.5


# --- the whole notebook, as a student runs it ------------------------------------------------------

@pytest.mark.slow   # end to end: `make test` runs it, `make test-quick` does not
def test_whole_release_with_a_correct_solution_in_a_plain_kernel(tmp_path):
    for name in os.listdir(RELEASE):
        if not name.endswith(".ipynb"):
            shutil.copy(os.path.join(RELEASE, name), tmp_path)
    with open(os.path.join(REPO, "samples", "answers", "rnn_step_by_step", "ada.py"), encoding="utf-8") as f:
        nb = fill(os.path.join(RELEASE, "rnn_step_by_step.ipynb"), answer_cells(f.read()))
    start = time.perf_counter()
    NotebookClient(nb, timeout=300, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    elapsed = time.perf_counter() - start
    print(f"\n[measure] the whole release notebook, optional section included, with a correct "
          f"solution in a plain kernel: {elapsed:.1f} s")
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, errors[0]
    printed = "".join(o.get("text", "") for c in code for o in c.outputs)
    for e in EXERCISES:
        assert f"✓ {e.name}: all checks passed" in printed
    assert printed.count("✓ they agree") == 3 and "✗" not in printed
    (training,) = [c for c in code if "rnn_train.train(" in c.source]
    assert any("image/png" in o.get("data", {}) for o in training.outputs)
