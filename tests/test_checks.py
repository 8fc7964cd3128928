"""The public checks students run under each exercise (the rnn_checks.py in release/)."""
import importlib.util
import inspect
import json
import os
import re
import time

import nbformat
import numpy as np
import pytest
from helpers import RELEASE, REPO
from nbclient import NotebookClient

from assignments.rnn_step_by_step import ASSIGNMENT as A
from assignments.rnn_step_by_step import reference
from assignments.rnn_step_by_step.exercises import EXERCISES

NAMES = [e.name for e in EXERCISES]


def failure(checks, name, namespace):
    with pytest.raises(checks.CheckFailed) as info:
        checks.check(name, namespace)
    return str(info.value)


@pytest.mark.parametrize("name", NAMES)
def test_reference_passes(release_checks_module, reference_functions, name, capsys):
    release_checks_module.check(name, reference_functions)
    assert f"✓ {name}: all checks passed" in capsys.readouterr().out


@pytest.mark.parametrize("name", NAMES)
def test_missing_and_stub_get_plain_words(release_checks_module, reference_functions, name):
    assert "is not defined yet" in failure(release_checks_module, name, {})

    def stub(*args):
        raise NotImplementedError()
    assert "not written yet" in failure(release_checks_module, name, dict(reference_functions, **{name: stub}))


def test_shape_mistake_names_output_and_shapes(release_checks_module, reference_functions):
    def transposed(xt, a_prev, parameters):
        a_next, y, cache = reference_functions["rnn_cell_forward"](xt, a_prev, parameters)
        return a_next.T, y, cache
    text = failure(release_checks_module, "rnn_cell_forward", dict(reference_functions, rnn_cell_forward=transposed))
    assert "a_next (returned value 1 of 3) has shape (10, 5); expected (5, 10)" in text


def test_wrong_order_is_named(release_checks_module, reference_functions):
    def swapped(x, a0, parameters):
        a, y, c, caches = reference_functions["lstm_forward"](x, a0, parameters)
        return a, c, y, caches
    text = failure(release_checks_module, "lstm_forward", dict(reference_functions, lstm_forward=swapped))
    assert "y holds what c should" in text


def test_exception_points_at_the_line(release_checks_module, reference_functions, tmp_path):
    cell = tmp_path / "cell.py"   # a kernel cell has a file name too, so tracebacks show its lines
    cell.write_text("import numpy as np\n\ndef rnn_cell_forward(xt, a_prev, parameters):\n"
                    "    return np.dot(parameters['Wax'], a_prev)\n")
    namespace = {}
    exec(compile(cell.read_text(), str(cell), "exec"), namespace)
    text = failure(release_checks_module, "rnn_cell_forward", namespace)
    assert "raised ValueError" in text and "line 4" in text and "np.dot(parameters['Wax'], a_prev)" in text


def test_broken_callee_is_pointed_out(release_checks_module, reference_functions, notebook_namespace):
    """Learners chase the wrong bug when a correct caller uses a broken cell."""
    def bad_cell(xt, a_prev, parameters):
        a_next, y, cache = reference_functions["rnn_cell_forward"](xt, a_prev, parameters)
        return a_next * 0.5, y, cache
    notebook_namespace["rnn_cell_forward"] = bad_cell
    text = failure(release_checks_module, "rnn_forward", notebook_namespace)
    assert "Fix rnn_cell_forward first" in text


def test_an_unwritten_callee_is_named_not_the_caller(release_checks_module, notebook_namespace):
    """Run All with one cell left as released: a correct rnn_backward over an rnn_cell_backward
    that still raises NotImplementedError() is not told that it is the one not written."""
    def stub(da_next, cache):
        raise NotImplementedError()
    notebook_namespace["rnn_cell_backward"] = stub
    text = failure(release_checks_module, "rnn_backward", notebook_namespace)
    assert text.startswith("rnn_backward calls rnn_cell_backward, which is not written yet"), text
    assert "rnn_backward is not written yet" not in text


def test_a_first_step_hint_keeps_the_upstream_gradient(release_checks_module, notebook_namespace):
    """The carried gradient started as da[:, :, T_x-1] rather than zeros, so the first step is
    given the upstream gradient twice. At that step da_next should be da[:, :, T_x-1] (the
    upstream gradient plus zeros): a hint that says only "not zeros" makes a learner who obeys
    drop the upstream gradient."""
    source = inspect.getsource(reference.rnn_backward)
    assert "da_prevt = np.zeros((n_a, m))" in source
    exec(source.replace("da_prevt = np.zeros((n_a, m))", "da_prevt = da[:, :, T_x - 1]"), notebook_namespace)
    text = failure(release_checks_module, "rnn_backward", notebook_namespace)
    assert "passed at the first step" in text, text
    assert "is not zeros" not in text, text
    assert "not da[:, :, T_x-1] (the upstream gradient da of that step) plus zeros" in text, text


def test_all_checks_are_fast(release_checks_module, reference_functions, capsys):
    """Measured, not asserted against a clock: printed for the closing note/README."""
    start = time.perf_counter()
    for name in NAMES:
        release_checks_module.check(name, reference_functions)
    elapsed = time.perf_counter() - start
    with capsys.disabled():
        print(f"\n[measure] all 8 public checks on correct code: {elapsed * 1000:.0f} ms in total")


def test_shipped_gradient_helper_agrees_with_reference(reference_functions):
    import importlib.util
    spec = importlib.util.spec_from_file_location("rnn_utils_released", os.path.join(RELEASE, "rnn_utils.py"))
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    rng = np.random.RandomState(3)
    xt, a_prev, da = rng.randn(3, 4), rng.randn(5, 4), rng.randn(5, 4)
    p = {"Wax": rng.randn(5, 3), "Waa": rng.randn(5, 5), "Wya": rng.randn(2, 5), "ba": rng.randn(5, 1), "by": rng.randn(2, 1)}
    fwd, bwd = reference_functions["rnn_cell_forward"], reference_functions["rnn_cell_backward"]
    analytic = bwd(da, fwd(xt, a_prev, p)[2])["dWaa"]
    numeric = utils.numerical_gradient(lambda: fwd(xt, a_prev, p)[0], p["Waa"], da)
    assert utils.relative_error(analytic, numeric) < 1e-6
    assert utils.relative_error(analytic * 1.01, numeric) > 1e-3


def run_notebook(path):
    """Run a notebook as a student's Jupyter does: a plain python3 kernel in its folder."""
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": os.path.dirname(path)}}).execute()
    return nb


@pytest.mark.slow   # end to end: `make test` runs it, `make test-quick` does not
def test_source_notebook_runs_clean_and_every_check_passes():
    nb = run_notebook(os.path.join(REPO, "source", "rnn_step_by_step", "rnn_step_by_step.ipynb"))
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors[0]
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert all(f"✓ {n}: all checks passed" in printed for n in NAMES)


def test_untouched_release_fails_every_check_cleanly():
    nb = run_notebook(os.path.join(RELEASE, "rnn_step_by_step.ipynb"))
    checks = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert len(checks) == len(NAMES)
    for cell in checks:
        (error,) = [o for o in cell.outputs if o.output_type == "error"]
        assert error.ename == "CheckFailed" and "not written yet" in error.evalue
    # the optional training says what to do instead of failing
    (training,) = [c for c in nb.cells if c.cell_type == "code" and "rnn_train.train(" in c.source]
    said = "".join(o.get("text", "") for o in training.outputs)
    assert "RNN: not trained: write rnn_forward and rnn_backward" in said
    assert "LSTM: not trained: write lstm_forward and lstm_backward" in said
    assert not [o for o in training.outputs if o.output_type == "error"]


def test_closeness_is_numpys_isclose():
    """The checks' own closeness test answers as np.isclose does, infinities and NaN included."""
    from assignments.grading.shipped import student_checks as sc
    vals = [np.nan, np.inf, -np.inf, 0.0, 1e-8, -1e-8, 1e-7, 2e-7, 1.0, 1.0 + 1e-6, 1.0 + 2e-5, 1e300, -1e300, 5e-324]
    a = np.array([vals] * len(vals))
    assert np.array_equal(sc._isclose(a, a.T), np.isclose(a, a.T, rtol=sc.RTOL, atol=sc.ATOL))
    x = np.random.default_rng(0).normal(size=(5, 10, 4))
    y = x + np.random.default_rng(1).normal(size=x.shape) * 1e-5
    assert np.array_equal(sc._isclose(x, y), np.isclose(x, y, rtol=sc.RTOL, atol=sc.ATOL))


def test_the_quick_all_close_never_hides_a_difference():
    """compare() skips the leaf-by-leaf comparison when student_checks._all_close says that
    everything is close: it must say so only when _compare finds nothing, on nested outputs
    right, slightly off, reshaped, retyped, missing keys, NaN and the like."""
    from assignments.grading.shipped import student_checks as sc
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((5, 2, 3))
    exp = {"x": (a, [b, b * 2]), "y": np.full((), 1.5), "z": None, "w": "text"}
    variants = {
        "same": {"x": (a.copy(), [b.copy(), b * 2]), "y": np.ones(()) * 1.5, "z": None, "w": 3, "extra": 1},
        "within tolerance": {"x": (a * (1 + 1e-7), [b, b * 2]), "y": 1.5, "z": None, "w": "text"},
        "off": {"x": (a + 1e-3, [b, b * 2]), "y": 1.5, "z": None, "w": "text"},
        "nan": {"x": (np.where(a > 0, np.nan, a), [b, b * 2]), "y": 1.5, "z": None, "w": "text"},
        "transposed": {"x": (a.T, [b, b * 2]), "y": 1.5, "z": None, "w": "text"},
        "a list for a tuple": {"x": [a, [b, b * 2]], "y": 1.5, "z": None, "w": "text"},
        "one item short": {"x": (a, [b]), "y": 1.5, "z": None, "w": "text"},
        "no key": {"x": (a, [b, b * 2]), "z": None, "w": "text"},
        "not None": {"x": (a, [b, b * 2]), "y": 1.5, "z": 0, "w": "text"},
        "strings": {"x": (a.astype(str), [b, b * 2]), "y": 1.5, "z": None, "w": "text"},
        "ints": {"x": (np.round(a).astype(int), [b, b * 2]), "y": 1.5, "z": None, "w": "text"},
        "bools right": {"x": (a, [b, b * 2]), "y": True, "z": None, "w": "text"},
    }
    exp_bools = dict(exp, y=np.ones(()))
    verdicts = {}
    for label, got in variants.items():
        e = exp_bools if label == "bools right" else exp
        found = []
        sc._compare(got, e, "out", None, False, found)
        quick = sc._all_close(got, e)
        assert not (quick and found), (label, found)
        verdicts[label] = quick
    accepted = ("same", "within tolerance", "a list for a tuple", "bools right")   # as _compare accepts them
    assert [k for k, v in verdicts.items() if v] == list(accepted)


def test_an_integer_array_is_said_to_be_one(release_checks_module, notebook_namespace):
    """`a` made with dtype=int is filled, then every value is cut to a whole number: it is not
    "all zeros: is it ever filled in?" but an array of integers (review N11)."""
    source = inspect.getsource(reference.rnn_forward)
    assert "a = np.zeros((n_a, m, T_x))" in source
    exec(source.replace("a = np.zeros((n_a, m, T_x))", "a = np.zeros((n_a, m, T_x), dtype=int)"), notebook_namespace)
    text = failure(release_checks_module, "rnn_forward", notebook_namespace)
    assert "a (returned value 1 of 3) is wrong" in text and "It is an array of integers (int" in text, text
    assert "is it ever filled in" not in text, text


def test_a_named_mistake_is_not_second_guessed_on_every_line(release_checks_module, notebook_namespace):
    """The upstream gradient ignored leaves every gradient at zero: the named code says why, and
    the lines of what differs do not each ask whether it is ever filled in (review N11). With no
    code named, an output of zeros still gets the question."""
    exec(A.mistakes.mutant_source("rnn_backward", ("rnn_upstream_da_ignored",)), notebook_namespace)
    text = failure(release_checks_module, "rnn_backward", notebook_namespace)
    assert "[rnn_upstream_da_ignored]" in text and "dx is wrong" in text, text
    assert "is it ever filled in" not in text, text
    source = inspect.getsource(reference.rnn_cell_forward)
    exec(source.replace("return a_next, yt_pred, cache", "return a_next, yt_pred * 0, cache"), notebook_namespace)
    text = failure(release_checks_module, "rnn_cell_forward", notebook_namespace)
    assert "It is all zeros: is it ever filled in?" in text, text


def test_a_place_in_the_caches_is_named_once(release_checks_module, notebook_namespace):
    """"caches[0] (one cache per time step)[1] (time step 1)[0] (a_next)[4][6]" said once as
    indices and once as what they hold (review N11)."""
    source = inspect.getsource(reference.rnn_forward)
    assert "caches.append(cache)" in source
    exec(source.replace("caches.append(cache)", "caches.append((2 * cache[0],) + cache[1:])"), notebook_namespace)
    text = failure(release_checks_module, "rnn_forward", notebook_namespace)
    assert "caches[0][1][0] (a_next of time step 1) is wrong in" in text, text
    assert re.search(r"at caches\[0\]\[1\]\[0\]\[\d+\]\[\d+\] \(yours", text), text
    assert "one cache per time step" not in text and ")[" not in text, text


@pytest.mark.parametrize("name", [e.name for e in EXERCISES])
def test_the_wordless_comparison_names_the_same_wrong_outputs(release_checks_module, name):
    """``compare(..., words=False)`` stops at each output's first difference without its words:
    the wrong outputs it names are compare's own, for every kind of difference an output can
    have. ``differs``, the repair search's and the catalog's, says whether there is one."""
    import copy
    import json

    from assignments.grading.contract.trace import examined
    m = release_checks_module
    job = json.loads(json.dumps(examined(A, name)))
    spec, case = job["spec"], job["public"][0]
    expected = m.decode(case["expected"])
    right = expected if spec["returns_dict"] else list(expected)

    def leaves(x, path=()):
        if isinstance(x, np.ndarray):
            yield path
        elif isinstance(x, (list, tuple)):
            for i, v in enumerate(x):
                yield from leaves(v, path + (i,))
        elif isinstance(x, dict):
            for k, v in x.items():
                yield from leaves(v, path + (k,))

    def changed(path, how):
        out = copy.deepcopy(right)
        holder = out
        for p in path[:-1]:
            holder = holder[p]
        if isinstance(holder, tuple):
            return None
        holder[path[-1]] = how(holder[path[-1]])
        return out

    hows = [lambda a: a + 1e-3, lambda a: a.T, lambda a: a.astype(int), lambda a: a.tolist(), lambda a: None,
            lambda a: np.where(np.arange(a.size).reshape(a.shape) == 0, np.nan, a), lambda a: a * 1.0000001]
    tried = 0
    for path in leaves(right):
        for how in hows:
            got = changed(path, how)
            if got is None:
                continue
            tried += 1
            wrong = m.compare(spec, got, expected)[1]
            assert m.compare(spec, got, expected, words=False) == ([], wrong) and m.differs(spec, got, expected) == bool(wrong)
    assert tried and not m.differs(spec, right, expected)
    for got in (None, 3.0, right if spec["returns_dict"] else right[:-1], {}):
        wrong = m.compare(spec, got, expected)[1]
        assert m.compare(spec, got, expected, words=False)[1] == wrong and m.differs(spec, got, expected) == bool(wrong)


def test_the_loops_closeness_is_numpys_allclose(release_checks_module):
    """The loop's protocol compares each recorded call with its neighbours' with ``_close``,
    a few array operations in place of np.allclose's dozen: the same answer on floats near the
    tolerance, NaN and infinities, integers and booleans."""
    m = release_checks_module
    rng = np.random.default_rng(0)
    base = rng.standard_normal((4, 5))
    tol = m.ATOL + m.RTOL * np.abs(base)
    others = [base, base + 0.5 * tol, base + 2 * tol, base * (1 + 1e-9), -base, base.astype(np.float32),
              np.where(base > 1, np.nan, base), np.where(base > 1, np.inf, base), np.zeros((4, 5)),
              np.round(base * 3).astype(int), base > 0]
    tried = 0
    for a in others:
        for b in others:
            tried += 1
            assert m._close(a, b) == bool(np.allclose(a, b, rtol=m.RTOL, atol=m.ATOL)), (a, b)
    assert tried == len(others) ** 2 and m._close(base, base) and not m._close(base, base + 2 * tol)
    assert not m._close(base, base.T) and not m._close(base, list(base))


def test_a_check_decodes_only_the_data_it_reads(reference_functions, capsys):
    """check_data.json says where each function's cases, known mistakes and trace are (its
    "offsets"): a right function's check decodes its own cases and its callees' only, and
    each value it decodes is the file's, read whole."""
    spec = importlib.util.spec_from_file_location("rnn_checks_lazily", os.path.join(RELEASE, "rnn_checks.py"))
    checks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checks)
    data = checks._load()
    assert {s for s, v in data.items() if isinstance(v, checks._ByFunction)} == {"cases", "mistakes", "trace"}
    checks.check("rnn_forward", dict(reference_functions))
    assert "all checks passed" in capsys.readouterr().out
    assert set(data["cases"]._read) == {"rnn_forward", "rnn_cell_forward"}
    assert not data["mistakes"]._read and not data["trace"]._read
    # read whole (the file is one JSON object), every section and function is what a check reads
    with open(os.path.join(RELEASE, "check_data.json"), encoding="utf-8") as f:
        whole = json.load(f)
    assert set(whole) == set(data) | {"offsets"}
    for section, value in data.items():
        assert (dict(value) if isinstance(value, checks._ByFunction) else value) == whole[section], section
