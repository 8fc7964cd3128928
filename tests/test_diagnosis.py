"""Diagnosis by behaviour: the mistake is named from what the code does (how a loop drives its
cell, which exception a function raises, which cell fails to compile), not from one spelling
of it. Each fixture below is a way real learners write the mistake, in several spellings."""
import inspect

import numpy as np
import pytest
from helpers import check_says

from assignments.grading.judging import inprocess as local

HEAD = '''
def lstm_backward(da, caches):
    (caches, x) = caches
    (a1, c1, a0, c0, f1, i1, cc1, o1, x1, parameters) = caches[0]
    n_a, m, T_x = da.shape
    n_x, m = x1.shape
    dx = np.zeros((n_x, m, T_x))
    da_prevt = np.zeros((n_a, m))
    dc_prevt = np.zeros((n_a, m))
    g = {k: np.zeros_like(parameters[k[1:]]) for k in ("dWf", "dWi", "dWc", "dWo", "dbf", "dbi", "dbc", "dbo")}
    for t in reversed(range(T_x)):
'''
TAIL = '''
        dx[:, :, t] = gradients["dxt"]
        for k in g:
            g[k] += gradients[k]
    da0 = gradients["da_prev"]
    return dict(dx=dx, da0=da0, **g)
'''
# The most common real bug: the carried gradients are never what the previous step returned.
STALE_LOOPS = {
    "never_updated": "        gradients = lstm_cell_backward(da[:, :, t] + da_prevt, dc_prevt, caches[t])",
    "updated_not_added": ("        gradients = lstm_cell_backward(da[:, :, t], dc_prevt * 0, caches[t])\n"
                          "        da_prevt = gradients['da_prev']\n        dc_prevt = gradients['dc_prev']"),
    "reset_in_loop": ("        da_prevt = np.zeros((n_a, m))\n        dc_prevt = np.zeros((n_a, m))\n"
                      "        gradients = lstm_cell_backward(da[:, :, t] + da_prevt, dc_prevt, caches[t])"),
    "fed_da_alone": "        gradients = lstm_cell_backward(da[:, :, t], np.zeros((n_a, m)), caches[t])",
}


def namespace(assignment, *sources):
    ns = {"np": np}
    exec(inspect.getsource(assignment.reference), ns)
    for s in sources:
        exec(s, ns)
    return ns


@pytest.mark.parametrize("spelling", sorted(STALE_LOOPS))
def test_stale_carried_gradients_are_named(assignment, release_checks_module, spelling):
    ns = namespace(assignment, HEAD + STALE_LOOPS[spelling] + TAIL)
    v = local.judge_all(assignment, ns, ["lstm_backward"])["lstm_backward"]
    assert v.diagnoses == ["lstm_stale_da_prev", "lstm_stale_dc_prev"], v.feedback
    said = check_says(release_checks_module, "lstm_backward", ns)
    assert "[lstm_stale_da_prev]" in said and "[lstm_stale_dc_prev]" in said, said


def test_weights_from_notebook_globals_are_named(assignment, release_checks_module):
    src = inspect.getsource(assignment.reference.lstm_cell_backward).replace(
        'Wf, Wi, Wc, Wo = parameters["Wf"], parameters["Wi"], parameters["Wc"], parameters["Wo"]', "pass")
    ns = namespace(assignment, src)
    v = local.judge_all(assignment, ns, ["lstm_cell_backward"])["lstm_cell_backward"]
    assert v.diagnoses == ["lstm_uses_globals"] and v.score == 0
    assert "[lstm_uses_globals]" in check_says(release_checks_module, "lstm_cell_backward", ns)
    fwd = inspect.getsource(assignment.reference.rnn_cell_forward).replace('Wax, Waa, Wya = parameters["Wax"], '
                                                                            'parameters["Waa"], parameters["Wya"]', "")
    ns = namespace(assignment, fwd)
    assert local.judge_all(assignment, ns, ["rnn_cell_forward"])["rnn_cell_forward"].diagnoses == ["rnn_uses_globals"]


def test_a_correct_caller_over_a_broken_cell_is_sent_to_the_cell(assignment, release_checks_module):
    broken = assignment.mistakes.mutant_source("lstm_cell_backward", ("lstm_dc_prev_missing_da_term",))
    ns = namespace(assignment, broken)
    said = check_says(release_checks_module, "lstm_backward", ns)
    assert "Fix lstm_cell_backward first" in said and "[" not in said, said
    assert local.judge_all(assignment, ns, ["lstm_backward"])["lstm_backward"].passed   # judged with a correct cell


def test_a_cell_that_does_not_compile_shows_its_line(release_checks_module, assignment):
    ns = namespace(assignment)
    del ns["rnn_forward"]
    ns["In"] = ["", "def rnn_forward(x, a0, parameters):\n    a = np.zeros((3, 4)\n    return a\n"]
    said = check_says(release_checks_module, "rnn_forward", ns)
    assert "does not compile" in said and "line 2" in said and "^" in said, said


def test_removed_numpy_names_are_explained(release_checks_module, assignment):
    src = inspect.getsource(assignment.reference.rnn_cell_forward).replace("a_next = np.tanh(", "a_next = np.float(1) * np.tanh(")
    said = check_says(release_checks_module, "rnn_cell_forward", namespace(assignment, src))
    assert "removed from NumPy" in said, said


def test_an_all_zero_output_earns_no_partial_credit(assignment):
    stub = '''
def lstm_backward(da, caches):
    (caches, x) = caches
    n_a, m, T_x = da.shape
    p = caches[0][9]
    out = {"dx": np.zeros((x.shape[0], m, T_x)), "da0": np.zeros((n_a, m))}
    out.update({"d" + k: np.zeros_like(p[k]) for k in ("Wf", "bf", "Wi", "bi", "Wc", "bc", "Wo", "bo")})
    return out
'''
    v = local.judge_all(assignment, namespace(assignment, stub), ["lstm_backward"])["lstm_backward"]
    assert v.score == 0, v.feedback


def test_every_catalogued_variant_is_named_alone(assignment):
    """The catalog's own variants (exact edits of the reference), through protocol and outputs."""
    wrong = []
    for m in assignment.catalog:
        if m.detector:
            continue
        for i in range(len(m.variants)):
            ns = namespace(assignment, assignment.mistakes.mutant_source(m.function, ((m.code, i),)))
            v = local.judge_all(assignment, ns, [m.function])[m.function]
            if v.passed or v.diagnoses != [m.code]:
                wrong.append((m.code, i, v.diagnoses))
    assert wrong == []


def cell_with(assignment, *edits):
    source = inspect.getsource(assignment.reference.lstm_cell_backward)
    for old, new in edits:
        assert old in source
        source = source.replace(old, new)
    return source


@pytest.mark.parametrize("edits,codes", [
    # the c gate's columns wrong in dxt, spelled with the input size
    ([("Wc[:, n_a:].T @ dcct", "Wc[:, :xt.shape[0]].T @ dcct")], ["lstm_dxt_wrong_slice"]),
    # two gates' columns wrong
    ([("Wc[:, n_a:].T @ dcct", "Wc[:, :xt.shape[0]].T @ dcct"), ("Wo[:, n_a:].T @ dot", "Wo[:, :xt.shape[0]].T @ dot")],
     ["lstm_dxt_wrong_slice"]),
    # every gate's derivative factor missing
    ([("dcct = dc * it * (1 - cct ** 2)", "dcct = dc * it"), ("dit = dc * cct * it * (1 - it)", "dit = dc * cct"),
      ("dft = dc * c_prev * ft * (1 - ft)", "dft = dc * c_prev"), ("dot = da_next * tanh_c * ot * (1 - ot)", "dot = da_next * tanh_c")],
     ["lstm_gate_derivatives_missing"]),
    # a mistake in the biases and one in the candidate's derivative: different outputs each
    ([("dbo = np.sum(dot, axis=1, keepdims=True)", "dbo = np.sum(dWo, axis=1, keepdims=True)"),
      ("dbf = np.sum(dft, axis=1, keepdims=True)", "dbf = np.sum(dWf, axis=1, keepdims=True)"),
      ("dc_prev = dc * ft", "dc_prev = dc_next * ft")],
     ["lstm_db_from_dW", "lstm_dc_prev_missing_da_term"]),
    # the two slips the notebook warns about in the cell state's gradient, each beside another
    ([("dbi = np.sum(dit, axis=1, keepdims=True)", "dbi = np.sum(dWi, axis=1, keepdims=True)"),
      ("dc_prev = dc * ft", "dc_prev = dc")],
     ["lstm_db_from_dW", "lstm_dc_prev_missing_ft"]),
    ([("dc = dc_next + ot * (1 - tanh_c ** 2) * da_next", "dc = dc_next"), ("(1 - cct ** 2)", "(1 - np.tanh(cct) ** 2)")],
     ["lstm_candidate_derivative", "lstm_dc_missing_da_path"]),
])
def test_cell_mistakes_are_named_output_by_output(assignment, edits, codes):
    ns = namespace(assignment, cell_with(assignment, *edits))
    v = local.judge_all(assignment, ns, ["lstm_cell_backward"])["lstm_cell_backward"]
    assert not v.passed and v.diagnoses == codes, v.feedback


def two_wrong_slices(assignment):
    """An lstm_cell_backward with two slices wrong: named only from a pair of variants."""
    return namespace(assignment, cell_with(assignment, ("Wc[:, n_a:].T @ dcct", "Wc[:, :xt.shape[0]].T @ dcct"),
                                           ("Wo[:, n_a:].T @ dot", "Wo[:, :xt.shape[0]].T @ dot")))


def counted(monkeypatch, owner, name):
    """A list that gets an item at each call of ``owner.name`` (which still runs)."""
    calls, original = [], getattr(owner, name)
    monkeypatch.setattr(owner, name, lambda *a, **k: calls.append(1) or original(*a, **k))
    return calls


def test_a_pairs_changed_outputs_are_kept_for_the_class(assignment, monkeypatch):
    """A mistake in two places is named from pairs of variants; which outputs a pair changes
    is the same for every submission, so a judge works it out once: the next submission with
    the same mistakes gets the same names with fewer comparisons, and a judge that forgot
    them (CHANGED_KEPT reached) names them alike."""
    from assignments.grading.judging import judge as judging
    ns = two_wrong_slices(assignment)
    compared = counted(monkeypatch, assignment.checks, "compare")

    def named(j):
        compared.clear()
        return j.judge("lstm_cell_backward", local.caller(assignment, ns)).diagnoses, len(compared)
    j = judging.Judge(assignment)
    first, fresh = named(j)
    assert first == ["lstm_dxt_wrong_slice"]
    assert sum(len(picks) == 2 for _, _, picks in j._changed) > 50
    later = judging.Judge(assignment)   # a judge that has what j worked out, but no diagnosis remembered
    later._changed.update(j._changed)
    again, kept = named(later)
    assert again == first and kept < fresh - 50, (kept, fresh)
    monkeypatch.setattr(judging, "CHANGED_KEPT", 3)
    forgetful = judging.Judge(assignment)
    assert named(forgetful)[0] == named(forgetful)[0] == first and len(forgetful._changed) <= 3


def test_a_pairs_outputs_are_worked_out_once_for_the_class(assignment, monkeypatch):
    """The outputs of a pair of mistakes on a hidden case are the same for every submission:
    the next submission whose mistakes are searched through the same pairs runs none of them
    again (a class of 1,000 asked for each of its ~1,500 pairs about 15 times), and a judge
    that forgot them (PAIRS_KEPT reached) names the mistakes alike."""
    from assignments.grading.judging import judge as judging
    ns = two_wrong_slices(assignment)
    ran = counted(monkeypatch, assignment.mistakes, "run")

    def named(j):
        ran.clear()
        j.diagnoses.found.clear()   # each judged as a new submission's outputs would be
        return j.judge("lstm_cell_backward", local.caller(assignment, ns)).diagnoses, len(ran)
    j = judging.Judge(assignment)
    first, fresh = named(j)
    assert first == ["lstm_dxt_wrong_slice"] and fresh > 50 and len(j._pairs) > 50
    assert named(j) == (first, 0)
    monkeypatch.setattr(judging, "PAIRS_KEPT", 3)
    forgetful = judging.Judge(assignment)
    assert named(forgetful)[0] == named(forgetful)[0] == first and len(forgetful._pairs) <= 3


def test_measure_the_slowest_check_on_a_wrong_function(assignment, release_checks_module, capsys):
    """Prints the slowest students' check over every catalogued variant (the budget is 50 ms;
    timed assertions flake, so it is printed, not asserted)."""
    import time
    release_checks_module._load()   # once per session: reading check_data.json (about 20 ms)
    worst = (0.0, "")
    for m in assignment.catalog:
        for i in range(len(m.variants)):
            ns = namespace(assignment, assignment.mistakes.mutant_source(m.function, ((m.code, i),)))
            start = time.perf_counter()
            said = check_says(release_checks_module, m.function, ns)
            worst = max(worst, (time.perf_counter() - start, f"{m.code}[{i}]"))
            assert said != "passed"
    with capsys.disabled():
        print(f"\n[measure] slowest students' check on a wrong function: {worst[0] * 1000:.0f} ms ({worst[1]})")


def test_the_check_names_cell_mistakes_output_by_output(assignment, release_checks_module):
    src = cell_with(assignment, ("dbo = np.sum(dot, axis=1, keepdims=True)", "dbo = np.sum(dWo, axis=1, keepdims=True)"),
                    ("dc_prev = dc * ft", "dc_prev = dc_next * ft"))
    said = check_says(release_checks_module, "lstm_cell_backward", namespace(assignment, src))
    assert "[lstm_db_from_dW]" in said and "[lstm_dc_prev_missing_da_term]" in said, said


def _released_checks(assignment):
    """The <assignment>_checks.py that students get, loaded from release/."""
    import importlib.util
    import os

    from helpers import REPO
    path = os.path.join(REPO, "release", assignment.id, assignment.checks_module + ".py")
    spec = importlib.util.spec_from_file_location(f"released_{assignment.checks_module}_for_diagnosis", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["rnn_backward", "lstm_backward", "gru_backward"])
def test_only_the_first_step_fed_without_its_upstream_gradient_is_said_of_the_first_step(assignment, name):
    """An off-by-one that adds da[:, :, t-1] to the carried gradient after each step, instead of
    da[:, :, t] before it: every step but the first is given the right da_next; the first is given
    zeros. "Each step is fed only the gradient carried..." (the upstream code) would be false for
    every step but the first: the check says what the first step should be given, and neither
    the check nor the judge names the code (review N3)."""
    from assignments.gru_step_by_step import ASSIGNMENT as GRU
    a = GRU if name.startswith("gru") else assignment
    source = inspect.getsource(getattr(a.reference, name))
    step = "grads" if name == "rnn_backward" else "step"
    for old, new in (("(da[:, :, t] + da_prevt, ", "(da_prevt, "),
                     (f'da_prevt = {step}["da_prev"]', f'da_prevt = {step}["da_prev"] + da[:, :, t - 1]'),
                     ("da0 = da_prevt", f'da0 = {step}["da_prev"]')):
        assert old in source, old
        source = source.replace(old, new)
    ns = namespace(a, source)
    said = check_says(_released_checks(a), name, ns)
    code = name.split("_")[0] + "_upstream_da_ignored"
    assert f"[{code}]" not in said, said
    assert "the da_next passed at the first step is not da[:, :, T_x-1] (the upstream gradient da of that step) " \
           "plus zeros" in said, said
    v = local.judge_all(a, ns, [name])[name]
    assert not v.passed and code not in v.diagnoses, v.feedback
    # the same slip at every step is still named
    every = inspect.getsource(getattr(a.reference, name)).replace("(da[:, :, t] + da_prevt, ", "(da_prevt, ")
    assert f"[{code}]" in check_says(_released_checks(a), name, namespace(a, every))


@pytest.mark.parametrize("name, old, new", [
    ("rnn_cell_forward", 'Wax, Waa, Wya = parameters["Wax"], parameters["Waa"], parameters["Wya"]',
     'Wax, Waa, Wya = parameters_tmp["Wax"], parameters_tmp["Waa"], parameters_tmp["Wya"]'),
    ("rnn_cell_backward", 'Wax, Waa = parameters["Wax"], parameters["Waa"]',
     'Wax, Waa = parameters_tmp["Wax"], parameters_tmp["Waa"]'),
    ("rnn_backward", "parameters = caches[0][3]", "parameters = parameters_tmp"),
])
def test_an_rnn_function_reading_the_notebooks_parameters_is_named(assignment, release_checks_module, name, old, new):
    """The worked example's parameters_tmp read instead of the argument: right on the worked
    example, a bare ValueError on the small one. As for the LSTM and the GRU, the check and the
    judge name the mistake (review N4)."""
    source = inspect.getsource(getattr(assignment.reference, name))
    assert old in source
    ns = namespace(assignment, source.replace(old, new))
    ns["parameters_tmp"] = release_checks_module.decode(release_checks_module._load()["cases"]["rnn_cell_forward"][0]
                                                        ["inputs"])[2]
    said = check_says(release_checks_module, name, ns)
    assert "[rnn_uses_globals]" in said, said
    assert local.judge_all(assignment, ns, [name])[name].diagnoses == ["rnn_uses_globals"]


def test_a_forward_pass_reading_the_notebooks_weights_is_not_told_of_a_cache(assignment, release_checks_module):
    """lstm_forward has no cache to take its weights from (review N4): the words are the GRU's."""
    source = inspect.getsource(assignment.reference.lstm_forward)
    old = 'n_y, n_a = parameters["Wy"].shape'
    assert old in source
    ns = namespace(assignment, source.replace(old, "n_y, n_a = Wy.shape"))
    ns["Wy"] = np.zeros((2, 5))   # the worked example's shape
    said = check_says(release_checks_module, "lstm_forward", ns)
    assert "[lstm_uses_globals]" in said and "instead of the cache" not in said, said
    assert "instead of the arguments" in said, said


@pytest.mark.parametrize("name, old, new, kept", [
    ("rnn_backward", 'dWaa += grads["dWaa"]', 'dWaa = grads["dWaa"]', "dWaa"),
    ("lstm_backward", "grads[name] += step[name]",
     "grads[name] = step[name] if name == \"dWi\" else grads[name] + step[name]", "dWi"),
    ("gru_backward", "grads[name] += step[name]",
     "grads[name] = step[name] if name == \"dbz\" else grads[name] + step[name]", "dbz"),
])
def test_a_gradient_left_unaccumulated_is_named_alone(assignment, name, old, new, kept):
    """One weight's gradient replaced instead of added at each step, the others summed: the
    words name that one, not every weight's (review N6); with all of them replaced, all."""
    from assignments.gru_step_by_step import ASSIGNMENT as GRU
    a = GRU if name.startswith("gru") else assignment
    code = name.split("_")[0] + "_grads_not_accumulated"
    source = inspect.getsource(getattr(a.reference, name))
    assert old in source
    ns = namespace(a, source.replace(old, new))
    said = check_says(_released_checks(a), name, ns)
    v = local.judge_all(a, ns, [name])[name]
    assert v.diagnoses == [code], v.feedback
    for words in (said, v.feedback):
        assert f"[{code}]" in words and f"is kept in {kept}. " in words, words
    every = namespace(a, a.mistakes.mutant_source(name, (code,)))
    said = check_says(_released_checks(a), name, every)
    outputs = [o for o in a.spec(name)["outputs"] if o.startswith("d") and o not in ("dx", "da0")]
    assert f"is kept in {', '.join(outputs)}. " in said, said
