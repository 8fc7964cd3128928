"""The check cell and the grader agree (issue 31): a ✓ under an exercise means full marks on
the hidden cases, and a failed check means the judge fails it too. Measured, for both
assignments, on every function's reference and on every variant of every catalogued mistake:
the students' check as shipped in release/ (public cases) against the judge (hidden cases),
pass or fail, function by function. The learner corpus is held to the same rule file by file
in tests/test_learners.py."""
import contextlib
import importlib.util
import inspect
import io
import os

import numpy as np
import pytest
from helpers import REPO

from assignments.grading.judging import inprocess as local
from assignments.gru_step_by_step import ASSIGNMENT as GRU
from assignments.rnn_step_by_step import ASSIGNMENT as RNN

ASSIGNMENTS = {a.id: a for a in (RNN, GRU)}


def released_checks(assignment):
    path = os.path.join(REPO, "release", assignment.id, f"{assignment.short}_checks.py")
    spec = importlib.util.spec_from_file_location(f"agreement_{assignment.short}_checks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stray_parameters(assignment):
    """The `parameters` a notebook that ran its worked examples has lying around: the same
    keys and shapes as a cell's, other values (so that reading it instead of the cache shows)."""
    module = importlib.import_module(f"assignments.{assignment.id}.cases")
    for name in (e.name for e in assignment.exercises):
        for arg in module.inputs(module.EXAMPLES[name]):
            if isinstance(arg, dict) and all(isinstance(v, np.ndarray) for v in arg.values()):
                rng = np.random.RandomState(99)
                return {k: rng.randn(*v.shape) for k, v in arg.items()}
    return {}


def notebook(assignment, function, source):
    """A learner's notebook: the reference's functions as its cells, ``source`` run last."""
    ns = {"np": np}
    exec(inspect.getsource(assignment.reference), ns)
    ns["parameters"] = stray_parameters(assignment)
    exec(compile(source, f"<cell {function}>", "exec"), ns)
    return ns


def check_passes(checks, function, ns):
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            checks.check(function, ns)
        except checks.CheckFailed:
            return False
    return True


def corpus(assignment):
    """(label, function, source): each reference function, and each catalogued variant."""
    found = [(f"{e.name}: reference", e.name, inspect.getsource(getattr(assignment.reference, e.name)))
             for e in assignment.exercises]
    for m in assignment.catalog:
        for i in range(len(m.variants)):
            found.append((f"{m.code}[{i}]", m.function, assignment.mistakes.mutant_source(m.function, ((m.code, i),))))
    return found


def agreement(assignment):
    """{function: [(label, check passed, judge passed)]}"""
    checks = released_checks(assignment)
    rows = {}
    for label, function, source in corpus(assignment):
        ns = notebook(assignment, function, source)
        verdict = local.judge_all(assignment, ns, [function])[function]
        judged = verdict.passed and verdict.score == verdict.max_score
        rows.setdefault(function, []).append((label, check_passes(checks, function, ns), judged))
    return rows


@pytest.mark.parametrize("aid", sorted(ASSIGNMENTS))
def test_the_check_and_the_judge_agree_on_every_function(aid, capsys):
    assignment = ASSIGNMENTS[aid]
    rows = agreement(assignment)
    total = sum(len(r) for r in rows.values())
    agreed = sum(check == judged for r in rows.values() for _, check, judged in r)
    per = ", ".join(f"{f} {sum(c == j for _, c, j in r)}/{len(r)}" for f, r in rows.items())
    with capsys.disabled():
        print(f"\n[measure] check and judge agree on pass/fail, {aid}: {agreed}/{total} "
              f"(each reference and catalogued variant; {per})")
    # the corpus really holds both verdicts: each reference passes both, each variant fails the judge
    for function, r in rows.items():
        assert r[0] == (f"{function}: reference", True, True), r[0]
        assert not any(judged for _, _, judged in r[1:]), [label for label, _, judged in r[1:] if judged]
    disagreements = [(label, "check ✓, judge ✗" if check else "check ✗, judge ✓")
                     for r in rows.values() for label, check, judged in r if check != judged]
    assert disagreements == []
