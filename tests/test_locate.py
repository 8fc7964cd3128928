"""Where the first wrong value is computed (student_checks.locate): the probes, the
substitution that names a line, and the words. The corpus measurement is tests/test_slips.py."""
import ast
import glob
import importlib.util
import linecache
import os
import re

import numpy as np
import pytest
from helpers import REPO, cell_namespace

from assignments.gru_step_by_step import ASSIGNMENT as GRU

LSTM_CELL_BACKWARD = '''
def lstm_cell_backward(da_next, dc_next, cache):
    a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters = cache
    n_a = a_next.shape[0]
    z = np.concatenate([a_prev, xt], axis=0)
    dtanh = 1 - np.tanh(c_next) ** 2
    dc = dc_next + ot * dtanh * da_next
    dot = da_next * np.tanh(c_next) * ot * (1 - ot)
    dcct = dc * it * (1 - cct ** 2)
    dit = dc * cct * it * (1 - it)
    dft = dc * c_prev * ft * (1 - ft)
    W = {g: parameters["W" + g] for g in "fico"}
    dz = W["f"].T @ dft + W["i"].T @ dit + W["c"].T @ dcct + W["o"].T @ dot
    return {"dxt": dz[n_a:], "da_prev": dz[:n_a], "dc_prev": dc * ft,
            "dWf": dft @ z.T, "dbf": dft.sum(axis=1, keepdims=True),
            "dWi": dit @ z.T, "dbi": dit.sum(axis=1, keepdims=True),
            "dWc": dcct @ z.T, "dbc": dcct.sum(axis=1, keepdims=True),
            "dWo": dot @ z.T, "dbo": dot.sum(axis=1, keepdims=True)}
'''


def namespace(assignment, source, tag):
    return cell_namespace(assignment, source, "locate " + tag)


@pytest.fixture(scope="module")
def checks(release_checks_module):
    return release_checks_module


@pytest.fixture(scope="module")
def gru_checks():
    """The gru_checks.py that students get, loaded from release/."""
    path = os.path.join(REPO, "release", "gru_step_by_step", "gru_checks.py")
    spec = importlib.util.spec_from_file_location("released_gru_checks_for_locate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_probes_read_back_every_assignment_and_write_in_place(checks):
    source = ("def f(x, y):\n"
              "    a, (b, c) = x * 2, (y, y + 1)\n"
              "    d = {}\n"
              "    d['k'] = a\n"
              "    out = np.zeros((2, 3))\n"
              "    alias = out\n"
              "    for t in range(3):\n"
              "        if t >= 0:\n"
              "            out[:, t] = b[:, t] + c[:, t]\n"
              "    a += 1\n"
              "    return a, out, alias\n")
    ns = {"np": np}
    linecache.cache["<probes>"] = (len(source), None, source.splitlines(True), "<probes>")
    exec(compile(source, "<probes>", "exec"), ns)
    space, fn, lines = checks.probed_function(ns["f"])
    x, y = np.ones((2, 3)), np.arange(6.0).reshape(2, 3)
    got, seen = checks.run_probed(space, fn, lambda: (x.copy(), y.copy()))
    labels = [(line, label) for line, label, _, _ in seen]
    assert (2, "a") in labels and (2, "b") in labels and (2, "c") in labels and (4, "d['k']") in labels
    assert [k for line, label, k, _ in seen if (line, label) == (9, "out")] == [0, 1, 2]
    assert (10, "a") in labels
    np.testing.assert_array_equal(got[1], ns["f"](x, y)[1])
    # a value put in place of an array that another name shares is written into it, not rebound
    new = np.full((2, 3), 7.0)
    got, _ = checks.run_probed(space, fn, lambda: (x.copy(), y.copy()), {(9, "out"): {2: new}})
    assert got[1] is got[2] and (got[2] == 7.0).all()


@pytest.mark.parametrize("slip, line, quantity, part", [
    ("dtanh = 1 - np.tanh(c_next) ** 2", "dtanh = 1 - c_next ** 2", "dc", True),
    ("dcct = dc * it * (1 - cct ** 2)", "dcct = dc * it * (1 - cct)", "dcct", False),
    ("dft = dc * c_prev * ft * (1 - ft)", "dft = dc * c_next * ft * (1 - ft)", "dft", False),   # review D9
    ("dit = dc * cct * it * (1 - it)", "dit = dc_next * cct * it * (1 - it)", "dit", False),   # D10
    ("dcct = dc * it * (1 - cct ** 2)", "dcct = dc_next * it * (1 - cct ** 2)", "dcct", False),
])
def test_a_slip_is_named_at_its_line_with_its_quantity(checks, assignment, slip, line, quantity, part):
    source = LSTM_CELL_BACKWARD.replace(slip, line)
    ns = namespace(assignment, source, line)
    found = checks.locate("lstm_cell_backward", ns["lstm_cell_backward"], ns)
    number = source.splitlines().index("    " + line) + 1
    assert (found["quantity"], found["line"], found["text"], found["part"]) == (quantity, number, line, part)
    assert not found["left"]   # the right value there mends every wrong output


def test_the_words_name_the_line_the_quantity_and_its_equation(checks, assignment):
    source = LSTM_CELL_BACKWARD.replace("dtanh = 1 - np.tanh(c_next) ** 2", "dtanh = 1 - c_next ** 2")
    ns = namespace(assignment, source, "words")
    with pytest.raises(checks.CheckFailed) as failed:
        checks.check("lstm_cell_backward", ns)
    text = str(failed.value)
    assert "line 6, `dtanh = 1 - c_next ** 2`" in text
    assert "a part of dc: dc = dc_next + ot ⊙ (1 − tanh²(c_next)) ⊙ da_next" in text
    assert "every wrong output comes out right" in text


def test_the_gru_gate_in_the_wrong_place(gru_checks):
    source = '''
def gru_cell_forward(xt, a_prev, parameters):
    Wr, br, Wz, bz = parameters["Wr"], parameters["br"], parameters["Wz"], parameters["bz"]
    Wc, bc, Wy, by = parameters["Wc"], parameters["bc"], parameters["Wy"], parameters["by"]
    concat = np.concatenate([a_prev, xt], axis=0)
    rt = sigmoid(Wr @ concat + br)
    zt = sigmoid(Wz @ concat + bz)
    cct = np.tanh(rt * (Wc @ concat) + bc)
    a_next = zt * cct + (1 - zt) * a_prev
    return a_next, softmax(Wy @ a_next + by), (a_next, a_prev, xt, rt, zt, cct, parameters)
'''
    ns = namespace(GRU, source, "gru")
    found = gru_checks.locate("gru_cell_forward", ns["gru_cell_forward"], ns)
    assert (found["quantity"], found["line"], found["text"]) == ("cct", 8, "cct = np.tanh(rt * (Wc @ concat) + bc)")


LSTM_CELL_FORWARD_FUSED = '''
def lstm_cell_forward(xt, a_prev, c_prev, parameters):
    n_a = a_prev.shape[0]
    z = np.concatenate([a_prev, xt], axis=0)
    W = np.concatenate([parameters["Wf"], parameters["Wi"]], axis=0)
    b = np.concatenate([parameters["bf"], parameters["bi"]], axis=0)
    gates = sigmoid(W @ z + b)
    ft = gates[:n_a]
    it = gates[n_a:]
    cct = np.tanh(parameters["Wc"] @ z + parameters["bc"])
    c_next = ft * c_prev + it * cct
    ot = sigmoid(parameters["Wo"] @ z + parameters["bo"])
    a_next = ot * np.tanh(c_next)
    yt_pred = softmax(parameters["Wy"] @ a_next + parameters["by"])
    return a_next, c_next, yt_pred, (a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters)
'''


@pytest.mark.parametrize("edits, line, quantity", [
    # the forget and input gates computed at once, their halves taken the wrong way round
    ((("ft = gates[:n_a]", "it = gates[:n_a]"), ("it = gates[n_a:]", "ft = gates[n_a:]")), "it = gates[:n_a]", "it"),
    # the two gates exchanged where they act
    ((("c_next = ft * c_prev + it * cct", "c_next = it * c_prev + ft * cct"),), "c_next = it * c_prev + ft * cct",
     "c_next"),
])
def test_two_gates_exchanged_are_found_at_their_line(checks, assignment, edits, line, quantity):
    """Review A11: two gates fused and exchanged (no catalogued code names it) are located at
    the first line that computes a wrong value, which reads only right ones (the fused block
    [ft; it] is the reference's gates stacked)."""
    source = LSTM_CELL_FORWARD_FUSED
    assert checks.locate("lstm_cell_forward", namespace(assignment, source, "fused right")["lstm_cell_forward"]) is None
    for old, new in edits:
        assert old in source
        source = source.replace(old, new)
    ns = namespace(assignment, source, "fused " + line)
    found = checks.locate("lstm_cell_forward", ns["lstm_cell_forward"], ns)
    number = source.splitlines().index("    " + line) + 1
    assert (found["quantity"], found["line"], found["text"]) == (quantity, number, line)
    with pytest.raises(checks.CheckFailed) as failed:
        checks.check("lstm_cell_forward", ns)
    text = str(failed.value)
    assert f"line {number}, `{line}`" in text and "[" + "lstm_" not in text, text


def test_a_line_whose_inputs_are_wrong_is_never_named(checks, assignment):
    """The carried cell-state gradient is never updated: every step's dx is wrong, but the line
    that stores it is right, and there is no line to name (the missing one is not there)."""
    source = '''
def lstm_backward(da, caches):
    step_caches, x = caches
    n_a, m, T_x = da.shape
    dx = np.zeros((x.shape[0], m, T_x))
    da_prevt = np.zeros((n_a, m))
    dc_prevt = np.zeros((n_a, m))
    grads = {k: np.zeros_like(step_caches[0][9][k[1:]]) for k in ("dWf", "dbf", "dWi", "dbi", "dWc", "dbc", "dWo", "dbo")}
    for t in reversed(range(T_x)):
        g = lstm_cell_backward(da[:, :, t] + da_prevt, dc_prevt, step_caches[t])
        dx[:, :, t] = g["dxt"]
        da_prevt = g["da_prev"]
        for k in grads:
            grads[k] += g[k]
    return {"dx": dx, "da0": da_prevt, **grads}
'''
    ns = namespace(assignment, source, "stale")
    found = checks.locate("lstm_backward", ns["lstm_backward"], ns)
    assert found is None or found["lineno"] is None


def test_a_transposed_layout_claims_nothing(checks, assignment):
    """a_next transposed, yt_pred computed from its transpose (right): what the right output
    is computed from is not 'right' when it is returned wrong, so nothing is said of it."""
    source = '''
def rnn_cell_forward(xt, a_prev, parameters):
    a_next = np.tanh(xt.T @ parameters["Wax"].T + a_prev.T @ parameters["Waa"].T + parameters["ba"].T)
    yt_pred = softmax(parameters["Wya"] @ a_next.T + parameters["by"])
    return a_next, yt_pred, (a_next, a_prev, xt, parameters)
'''
    ns = namespace(assignment, source, "layout")
    found = checks.locate("rnn_cell_forward", ns["rnn_cell_forward"], ns)
    assert checks.where_words(checks._load()["functions"]["rnn_cell_forward"], found) == []


def _correct(path):
    with open(path, encoding="utf-8") as f:
        return re.search(r"^# expect:\s*correct", f.read(2000), re.M) is not None


CORRECT = [p for p in sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "learners", "*", "*.py"))) if _correct(p)]


@pytest.mark.parametrize("path", CORRECT, ids=[os.path.relpath(p, REPO) for p in CORRECT])
def test_a_correct_function_is_never_located(checks, assignment, path):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    name = os.path.basename(os.path.dirname(path))
    source = source.replace("from rnn_utils import sigmoid, softmax", "")
    ns = namespace(assignment, source, path)
    assert checks.locate(name, ns[name], ns) is None


def test_the_reference_is_never_located(checks, assignment):
    for ex in assignment.exercises:
        fn = getattr(assignment.reference, ex.name)
        assert checks.locate(ex.name, fn) is None, ex.name


def test_the_trace_is_numbers_and_names(checks):
    """check_data.json's trace holds values, the reference's names and its dependencies: no code."""
    data = checks._load()
    for name, trace in data["trace"].items():
        assert set(trace) == {"values", "entries", "depends", "order", "inputs_of"}
        for e in trace["entries"]:
            assert re.fullmatch(r"[A-Za-z_]\w*", e["name"]) and isinstance(e["part"], bool), e
        text = repr(trace["entries"]) + repr(trace["depends"]) + repr(trace["inputs_of"])
        assert "np." not in text and "@" not in text and "(" not in text, name
        for node in ast.walk(ast.parse(repr(trace["order"]))):
            assert not isinstance(node, (ast.Call, ast.BinOp))
