"""Our own corpus of the ways real learners write the eight functions
(tests/fixtures/learners/<function>/*.py, each written for this project after studying
public learner code; none of it is copied). Each file says what it expects in its header:
``# expect: correct``, ``# expect: wrong`` (no catalogued mistake applies) or
``# expect: code[, code]``. The judge and the students' check must give every correct
function full marks, fail every wrong one, never name a code the file does not have, and
name the catalogued ones; the named share is printed."""
import glob
import inspect
import os
import re

import numpy as np
import pytest
from helpers import REPO

from assignments.grading.judging import inprocess as local

ROOT = os.path.join(REPO, "tests", "fixtures", "learners")
FILES = sorted(glob.glob(os.path.join(ROOT, "*", "*.py")))
NAMED = {"judge": [0, 0], "check": [0, 0]}


def expectation(path):
    with open(path, encoding="utf-8") as f:
        head = f.read(2000)
    found = re.search(r"^# expect:\s*(.+)$", head, re.M)
    assert found, f"{path} has no '# expect:' line"
    value = found.group(1).strip()
    return value if value in ("correct", "wrong") else sorted(c.strip() for c in value.split(","))


def namespace(assignment, path):
    """The reference's functions as the notebook's other cells, this file's function over them,
    and what a notebook that ran its worked examples has lying around."""
    ns = {"np": np}
    exec(inspect.getsource(assignment.reference), ns)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    source = source.replace("from rnn_utils import sigmoid, softmax", "")
    exec(compile(source, path, "exec"), ns)
    return ns


def test_the_corpus_is_large_and_varied(assignment):
    kinds = [expectation(p) for p in FILES]
    assert len(FILES) >= 100
    assert sum(k == "correct" for k in kinds) >= 25
    codes = {c for k in kinds if isinstance(k, list) for c in k}
    assert codes <= {m.code for m in assignment.catalog}, codes - {m.code for m in assignment.catalog}


@pytest.mark.parametrize("path", FILES, ids=[os.path.relpath(p, ROOT) for p in FILES])
def test_learner_function(assignment, release_checks_module, path):
    function = os.path.basename(os.path.dirname(path))
    expect = expectation(path)
    ns = namespace(assignment, path)
    v = local.judge_all(assignment, ns, [function])[function]
    zh = local.judge_all(assignment, ns, [function], lang="zh-CN")[function]   # the zh-CN edition grades alike
    assert (zh.score, zh.passed, zh.diagnoses, zh.cases_passed, zh.outcome) == \
        (v.score, v.passed, v.diagnoses, v.cases_passed, v.outcome), (zh.feedback, v.feedback)
    try:
        release_checks_module.check(function, ns)
        said = ""
    except release_checks_module.CheckFailed as exc:
        said = str(exc)
    catalogued = {m.code for m in assignment.catalog}   # the check's words also show positions, e.g. dba[0][0]
    check_codes = sorted(set(re.findall(r"\[([a-z0-9_]+)\]", said)) & catalogued)
    if expect == "correct":
        assert v.passed and v.score == v.max_score, v.feedback
        assert said == "", said
        return
    assert not v.passed and said, (v.feedback, said)
    expected = set() if expect == "wrong" else set(expect)
    assert set(v.diagnoses) <= expected, f"judge named {v.diagnoses}, the file has {sorted(expected)}: {v.feedback}"
    assert set(check_codes) <= expected, f"check named {check_codes}, the file has {sorted(expected)}: {said}"
    if expected:
        NAMED["judge"][1] += 1
        NAMED["check"][1] += 1
        NAMED["judge"][0] += bool(set(v.diagnoses) & expected)
        NAMED["check"][0] += bool(set(check_codes) & expected)


def test_named_share(capsys):
    """At least 90% of the wrong functions whose mistake is catalogued are named, by both."""
    with capsys.disabled():
        for who, (named, total) in NAMED.items():
            print(f"\n[measure] learner corpus, {who}: {named}/{total} catalogued wrong functions named")
    for who, (named, total) in NAMED.items():
        assert total >= 40 and named >= 0.9 * total, (who, named, total)
