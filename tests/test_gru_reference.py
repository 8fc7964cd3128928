"""The GRU reference against an independent implementation of the spec's equations written another way (scalar loops per
example, separate weight blocks, no concatenation), forward and backward."""
import importlib.util
import math
import os

import numpy as np
import pytest

from assignments.gru_step_by_step import cases, reference
from assignments.gru_step_by_step.exercises import BY_NAME, GRU_PARAMS

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# --- An independent implementation: one example at a time, one unit at a time ------------

def _sig(u):
    return 1.0 / (1.0 + math.exp(-u))


def _blocks(p, n_a):
    """Each weight split into the columns acting on the state and those acting on xt."""
    return {g: (p["W" + g][:, :n_a], p["W" + g][:, n_a:], p["b" + g][:, 0]) for g in "rzc"}


def indep_cell_forward(xt, a_prev, p):
    """Returns a_next, yt_pred, and the gates r, u (update) and candidate c, as arrays."""
    n_x, m = xt.shape
    n_a, n_y = a_prev.shape[0], p["Wy"].shape[0]
    B = _blocks(p, n_a)
    a_next, y = np.empty((n_a, m)), np.empty((n_y, m))
    r, u, c = np.empty((n_a, m)), np.empty((n_a, m)), np.empty((n_a, m))
    for j in range(m):
        a, x = a_prev[:, j], xt[:, j]
        for i in range(n_a):
            for gate, out in (("r", r), ("z", u)):
                Wa, Wx, b = B[gate]
                s = b[i]
                for k in range(n_a):
                    s += Wa[i, k] * a[k]
                for q in range(n_x):
                    s += Wx[i, q] * x[q]
                out[i, j] = _sig(s)
        Wa, Wx, b = B["c"]
        for i in range(n_a):
            s = b[i]
            for k in range(n_a):
                s += Wa[i, k] * (r[k, j] * a[k])
            for q in range(n_x):
                s += Wx[i, q] * x[q]
            c[i, j] = math.tanh(s)
            a_next[i, j] = a[i] + u[i, j] * (c[i, j] - a[i])     # move from a towards c by u
        logits = [p["by"][q, 0] + sum(p["Wy"][q, i] * a_next[i, j] for i in range(n_a)) for q in range(n_y)]
        top = max(logits)
        e = [math.exp(v - top) for v in logits]
        for q in range(n_y):
            y[q, j] = e[q] / sum(e)
    return a_next, y, r, u, c


def indep_cell_backward(da_next, xt, a_prev, p, grads):
    """Adds this step's parameter gradients into ``grads``; returns (dxt, da_prev)."""
    n_x, m = xt.shape
    n_a = a_prev.shape[0]
    B = _blocks(p, n_a)
    _, _, r, u, c = indep_cell_forward(xt, a_prev, p)
    dxt, da_prev = np.zeros((n_x, m)), np.zeros((n_a, m))
    for j in range(m):
        a, x, g = a_prev[:, j], xt[:, j], da_next[:, j]
        # gradients at the pre-activations of the candidate (gc), update gate (gu), reset gate (gr)
        gc = [g[i] * u[i, j] * (1 - c[i, j] * c[i, j]) for i in range(n_a)]
        gu = [g[i] * (c[i, j] - a[i]) * u[i, j] * (1 - u[i, j]) for i in range(n_a)]
        gs = [sum(B["c"][0][i, k] * gc[i] for i in range(n_a)) for k in range(n_a)]   # at r * a_prev
        gr = [gs[k] * a[k] * r[k, j] * (1 - r[k, j]) for k in range(n_a)]
        pre = {"r": gr, "z": gu, "c": gc}
        state_in = {"r": a, "z": a, "c": [r[k, j] * a[k] for k in range(n_a)]}
        for gate in "rzc":
            for i in range(n_a):
                grads["db" + gate][i, 0] += pre[gate][i]
                for k in range(n_a):
                    grads["dW" + gate][i, k] += pre[gate][i] * state_in[gate][k]
                for q in range(n_x):
                    grads["dW" + gate][i, n_a + q] += pre[gate][i] * x[q]
        for k in range(n_a):
            total = g[k] * (1 - u[k, j]) + gs[k] * r[k, j]
            for i in range(n_a):
                total += B["r"][0][i, k] * gr[i] + B["z"][0][i, k] * gu[i]
            da_prev[k, j] = total
        for q in range(n_x):
            dxt[q, j] = sum(B[gate][1][i, q] * pre[gate][i] for gate in "rzc" for i in range(n_a))
    return dxt, da_prev


def _zero_grads(p):
    return {"d" + name: np.zeros_like(p[name]) for name in GRU_PARAMS}


def indep(function, v):
    """The independent implementation of ``function`` on named draws ``v``, returned in the
    reference's output layout (cache entries only where they are arrays we recompute)."""
    p = {k: v[k] for k in BY_NAME["gru_cell_forward"].parameters}
    if function == "gru_cell_forward":
        return indep_cell_forward(v["xt"], v["a_prev"], p)
    if function == "gru_forward":
        x, state = v["x"], v["a0"]
        a = np.zeros((state.shape[0],) + x.shape[1:])
        y = np.zeros((p["Wy"].shape[0],) + x.shape[1:])
        for t in range(x.shape[2]):
            state, y[:, :, t] = indep_cell_forward(x[:, :, t], state, p)[:2]
            a[:, :, t] = state
        return a, y
    grads = _zero_grads(p)
    if function == "gru_cell_backward":
        dxt, da_prev = indep_cell_backward(v["da_next"], v["xt"], v["a_prev"], p, grads)
        return {"dxt": dxt, "da_prev": da_prev, **grads}
    x, da = v["x"], v["da"]
    states = [v["a0"]]
    for t in range(x.shape[2] - 1):
        states.append(indep_cell_forward(x[:, :, t], states[-1], p)[0])
    dx, carried = np.zeros(x.shape), np.zeros(v["a0"].shape)
    for t in range(x.shape[2] - 1, -1, -1):
        dx[:, :, t], carried = indep_cell_backward(da[:, :, t] + carried, x[:, :, t], states[t], p, grads)
    return {"dx": dx, "da0": carried, **grads}


RECIPES = [(f, r) for f in BY_NAME for r in [cases.EXAMPLES[f]] + cases.hidden_recipes(f) + cases.public_recipes(f)[1:]]


@pytest.mark.parametrize("function,recipe", RECIPES, ids=[f"{f}:{r.label}" for f, r in RECIPES])
def test_reference_reproduces_independent_implementation(function, recipe):
    values = cases.draw(recipe)
    ref = getattr(reference, function)(*cases.arguments(function, values))
    other = indep(function, values)
    if function == "gru_cell_forward":
        a_next, yt_pred, cache = ref
        ref = (a_next, yt_pred) + cache[3:6]        # rt, zt, cct
    elif function == "gru_forward":
        ref = ref[:2]
    if isinstance(ref, dict):
        assert list(ref) == list(BY_NAME[function].outputs)
        ref, other = [ref[k] for k in ref], [other[k] for k in ref]
    assert len(ref) == len(other)
    for mine, theirs in zip(ref, other):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-12)


# --- Conventions of the spec ---------------------------------------------------------------

def _cell_values(seed=5, n_x=3, n_a=4, n_y=2, m=3):
    return cases.draw(cases.Recipe("gru_cell_forward", seed, cases.generic_draws("gru_cell_forward", n_x, n_a, n_y, m, 1)))


@pytest.mark.parametrize("bias,keeps", [(60.0, "cct"), (-60.0, "a_prev")])
def test_update_gate_takes_the_candidate_and_its_complement_keeps_a_prev(bias, keeps):
    """a_next = zt * cct + (1 - zt) * a_prev: an update gate forced to 1 gives the candidate,
    forced to 0 gives the previous state back unchanged."""
    v = _cell_values()
    v["Wz"] = np.zeros_like(v["Wz"])
    v["bz"] = np.full_like(v["bz"], bias)
    a_next, _, cache = reference.gru_cell_forward(*cases.arguments("gru_cell_forward", v))
    expected = {"cct": cache[5], "a_prev": v["a_prev"]}[keeps]
    np.testing.assert_allclose(a_next, expected, rtol=0, atol=1e-20)
    assert not np.allclose(cache[5], v["a_prev"])


def test_a_next_is_the_spec_blend_of_its_cached_parts():
    v = _cell_values(seed=6)
    a_next, yt_pred, cache = reference.gru_cell_forward(*cases.arguments("gru_cell_forward", v))
    assert cache[0] is a_next and cache[1] is v["a_prev"] and cache[2] is v["xt"]
    rt, zt, cct = cache[3:6]
    np.testing.assert_allclose(a_next, zt * cct + (1 - zt) * v["a_prev"], rtol=1e-12)
    assert np.all((zt > 0) & (zt < 1)) and np.all((rt > 0) & (rt < 1)) and np.all(np.abs(cct) < 1)
    np.testing.assert_allclose(yt_pred.sum(axis=0), 1.0, rtol=1e-12)


def test_reset_gate_scales_a_prev_inside_the_candidate():
    """A reset gate forced to 0 hides a_prev from the candidate, which then reads xt alone."""
    v = _cell_values(seed=7)
    v["Wr"], v["br"] = np.zeros_like(v["Wr"]), np.full_like(v["br"], -60.0)
    cache = reference.gru_cell_forward(*cases.arguments("gru_cell_forward", v))[2]
    n_a = v["a_prev"].shape[0]
    np.testing.assert_allclose(cache[5], np.tanh(v["Wc"][:, n_a:] @ v["xt"] + v["bc"]), rtol=1e-12, atol=1e-20)


def test_cache_layouts():
    v = cases.draw(cases.EXAMPLES["gru_forward"])
    parameters = cases.arguments("gru_forward", v)[2]
    a, _, caches = reference.gru_forward(v["x"], v["a0"], parameters)
    steps, x = caches
    assert x is v["x"] and isinstance(steps, list) and len(steps) == v["x"].shape[2]
    assert steps[0][1] is v["a0"] and all(s[6] is parameters for s in steps)
    for t, step in enumerate(steps):
        assert len(step) == 7
        np.testing.assert_array_equal(step[0], a[:, :, t])
        np.testing.assert_array_equal(step[2], v["x"][:, :, t])
        if t:
            np.testing.assert_array_equal(step[1], a[:, :, t - 1])


def test_shipped_utils_match_the_reference_activations():
    path = os.path.join(REPO, "source", "gru_step_by_step", "gru_utils.py")
    spec = importlib.util.spec_from_file_location("gru_utils_under_test", path)
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    u = np.random.RandomState(3).randn(4, 6) * 5
    np.testing.assert_array_equal(utils.sigmoid(u), reference.sigmoid(u))
    np.testing.assert_array_equal(utils.softmax(u), reference.softmax(u))


# --- The source notebook agrees with the reference and the exercise table ------------------

def _notebook_cells():
    import json
    path = os.path.join(REPO, "source", "gru_step_by_step", "gru_step_by_step.ipynb")
    with open(path, encoding="utf-8") as f:
        return [("".join(c["source"]), c.get("metadata", {}).get("nbgrader", {}), c["cell_type"])
                for c in json.load(f)["cells"]]


def test_notebook_cells_follow_the_exercise_table():
    import inspect
    cells = _notebook_cells()
    answers = {meta["grade_id"]: src for src, meta, _ in cells if meta.get("solution")}
    tests = {meta["grade_id"]: (src, meta) for src, meta, _ in cells if meta.get("grade")}
    assert list(answers) == list(BY_NAME)
    assert list(tests) == ["test_" + name for name in BY_NAME]
    for name, ex in BY_NAME.items():
        body = "\n".join(inspect.getsource(getattr(reference, name)).splitlines()[1:])
        assert answers[name].startswith(f"def {name}(")
        assert "### BEGIN SOLUTION\n" + body + "\n    ### END SOLUTION" in answers[name]
        src, meta = tests["test_" + name]
        assert src.startswith(f'check("{name}")') and meta["points"] == ex.points and meta["locked"]
    assert sum(meta["points"] for _, meta in tests.values()) == 100


def test_notebook_expected_outputs_are_what_the_reference_prints():
    """Run every worked example with the reference functions and compare with the expected
    block that follows it."""
    import contextlib
    import io
    cells = _notebook_cells()
    namespace = {"np": np, **{name: getattr(reference, name) for name in BY_NAME}}
    checked = []
    for i, (src, _, kind) in enumerate(cells):
        for name in BY_NAME:
            if kind == "code" and src.startswith(f"# Worked example for {name} "):
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    exec(src, namespace)
                expected = cells[i + 1][0]
                assert expected.startswith(f"<!-- expected output of {name}:")
                assert "```\n" + out.getvalue() + "```" in expected
                checked.append(name)
    assert checked == list(BY_NAME)
