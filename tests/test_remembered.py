"""judging/remembered.py: a class's repeated wrong behaviour is searched once per grading
process, and named exactly as a search of its own would name it."""
import numpy as np

from assignments.grading.judging import inprocess as local
from assignments.grading.judging.classwide import Journal, Shared
from assignments.grading.judging.judge import Judge
from assignments.grading.judging.remembered import outcomes_key


def without_bias(xt, a_prev, parameters):   # rnn_missing_bias: ba left out
    p = parameters
    a_next = np.tanh(p["Waa"] @ a_prev + p["Wax"] @ xt)
    z = p["Wya"] @ a_next + p["by"]
    yt = np.exp(z - z.max(axis=0)) / np.exp(z - z.max(axis=0)).sum(axis=0)
    return a_next, yt, (a_next, a_prev, xt, parameters)


def from_a_prev(xt, a_prev, parameters):   # rnn_output_from_a_prev
    p = parameters
    a_next = np.tanh(p["Waa"] @ a_prev + p["Wax"] @ xt + p["ba"])
    z = p["Wya"] @ a_prev + p["by"]
    yt = np.exp(z - z.max(axis=0)) / np.exp(z - z.max(axis=0)).sum(axis=0)
    return a_next, yt, (a_next, a_prev, xt, parameters)


def verdict(judge, functions, wrong):
    return judge.judge("rnn_cell_forward", local.caller(judge.a, dict(functions, rnn_cell_forward=wrong))).to_json()


def test_a_repeated_wrong_behaviour_is_searched_once_and_named_as_its_own_search(assignment, reference_functions):
    j = Judge(assignment)
    first = verdict(j, reference_functions, without_bias)
    assert first["diagnoses"] == ["rnn_missing_bias"]
    assert verdict(j, reference_functions, without_bias) == first
    assert (j.diagnoses.searched, j.diagnoses.reused) == (1, 1)
    other = verdict(j, reference_functions, from_a_prev)   # another behaviour: searched
    assert other["diagnoses"] == ["rnn_output_from_a_prev"] and (j.diagnoses.searched, j.diagnoses.reused) == (2, 1)
    fresh = Judge(assignment)   # what a judge that never saw them says
    assert verdict(fresh, reference_functions, without_bias) == first
    assert verdict(fresh, reference_functions, from_a_prev) == other


def test_a_behaviour_one_worker_searched_is_not_searched_by_another_of_the_class(assignment, reference_functions, tmp_path):
    """A local pool's workers hand their diagnoses to the grading process, which journals them;
    another worker that read the journal names the same behaviour without searching, as the
    first did. One that did not read it searches."""
    journal = Journal(str(tmp_path / "learned.jsonl"))
    ada_w, ben_w = Shared(), Shared()
    for w in (ada_w, ben_w):
        w.follow(journal.path)
    on_ada, on_ben, alone = Judge(assignment), Judge(assignment), Judge(assignment)
    on_ada.diagnoses.shared, on_ben.diagnoses.shared = ada_w, ben_w
    first = verdict(on_ada, reference_functions, without_bias)
    journal.add(ada_w.take(), "ada")
    ben_w.follow(journal.path)
    assert verdict(on_ben, reference_functions, without_bias) == first
    assert (on_ben.diagnoses.searched, on_ben.diagnoses.reused) == (0, 1) and ben_w.take() == []
    assert verdict(alone, reference_functions, without_bias) == first and alone.diagnoses.searched == 1
    journal.close()


def test_outputs_one_bit_apart_are_searched_apart(assignment, reference_functions):
    j = Judge(assignment)
    verdict(j, reference_functions, without_bias)

    def nudged(xt, a_prev, parameters):
        a_next, yt, cache = without_bias(xt, a_prev, parameters)
        return np.nextafter(a_next, np.inf), yt, cache
    verdict(j, reference_functions, nudged)
    assert (j.diagnoses.searched, j.diagnoses.reused) == (2, 0)


def test_an_output_known_by_its_repr_alone_is_never_remembered(assignment):
    class Opaque:
        def __repr__(self):
            return "the same words for any value"

    class Case:
        status, text, observed, got = "ok", "", {}, Opaque()
    assert outcomes_key(assignment.checks.encode, "rnn_cell_forward", [Case()]) is None
    Case.got = np.ones(3)
    assert outcomes_key(assignment.checks.encode, "rnn_cell_forward", [Case()]) is not None
