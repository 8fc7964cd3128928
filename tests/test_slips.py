"""Our own corpus of uncatalogued slips (tests/fixtures/slips/<function>/*.py): each file is
one function written as a learner would, with one slip. Its header says what the slip is, the
reference's quantity that first goes wrong, the wrong line and the line as it should be.

Checked here: every slip is real (wrong on the worked example and on the hidden cases, right
with its line put back) and uncatalogued (neither the judge nor the students' check names a
code for it); the students' check names the right quantity for at least 90% of them and the
right line for at least 80%, and never a right line; the grader finds a verified repair for
at least 90%. The shares are printed ([measure] lines); benchmarks/hints.py times them.
"""
import glob
import importlib.util
import io
import os
import re
from contextlib import redirect_stdout

import pytest
from helpers import REPO, cell_namespace

from assignments.grading.contract.assignment import load
from assignments.grading.judging import inprocess as local

ROOT = os.path.join(REPO, "tests", "fixtures", "slips")
FILES = sorted(glob.glob(os.path.join(ROOT, "*", "*.py")))
ASSIGNMENTS = {aid: load(aid) for aid in ("rnn_step_by_step", "gru_step_by_step")}
JUDGED = {}   # path -> its verdict with location and repair, kept by the validity test for the repair share


def header(text, key):
    found = re.search(rf"^# {key}:\s*(.*)$", text, re.M)
    assert found, f"no '# {key}:' line"
    return found.group(1).strip()


def read(path):
    """(function, assignment, the file's text, its header, the wrong line's number)."""
    name = os.path.basename(os.path.dirname(path))
    a = next(a for a in ASSIGNMENTS.values() if name in a.by_name)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    h = {k: header(text, k) for k in ("slip", "quantity", "line", "was")}
    numbers = [i for i, line in enumerate(text.splitlines(), 1) if line.strip() == h["line"]]
    assert len(numbers) == 1, f"{path}: the slip's line must occur exactly once"
    return name, a, text, h, numbers[0]


def namespace(a, text, tag):
    return cell_namespace(a, text, "slip " + tag)


def mended(text, h):
    return "\n".join(line.replace(h["line"], h["was"]) if line.strip() == h["line"] else line
                     for line in text.splitlines()) + "\n"


@pytest.fixture(scope="module")
def checks():
    """Each assignment's released students' checks."""
    found = {}
    for aid, a in ASSIGNMENTS.items():
        path = os.path.join(REPO, "release", aid, a.checks_module + ".py")
        spec = importlib.util.spec_from_file_location(f"slips_{a.checks_module}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found[aid] = module
    return found


def test_the_corpus_covers_every_function():
    by_function = {os.path.basename(os.path.dirname(p)) for p in FILES}
    assert len(FILES) >= 72
    assert by_function == {e.name for a in ASSIGNMENTS.values() for e in a.exercises}
    for name in by_function:
        assert len(glob.glob(os.path.join(ROOT, name, "*.py"))) >= 6, name


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=[os.path.relpath(p, ROOT) for p in FILES])
def test_a_slip_is_real_and_uncatalogued(checks, path):
    name, a, text, h, _ = read(path)
    right = local.judge_all(a, namespace(a, mended(text, h), path + " (mended)"), [name])[name]
    assert right.passed, right.feedback
    ns = namespace(a, text, path)
    v = JUDGED[path] = local.judge_all(a, ns, [name], examine=True)[name]   # with its repair: measured below
    assert not v.passed and v.outcome == "judged" and v.diagnoses == [], (v.diagnoses, v.outcome)
    with pytest.raises(checks[a.id].CheckFailed) as failed, redirect_stdout(io.StringIO()):
        checks[a.id].check(name, ns)
    assert not re.search(r"^\s+\[[a-z][a-z0-9_]+\] ", str(failed.value), re.M), str(failed.value)
    assert checks[a.id].compare(a.spec(name), ns[name](*checks[a.id].decode(
        checks[a.id]._load()["cases"][name][0]["inputs"])), checks[a.id].decode(
        checks[a.id]._load()["cases"][name][0]["expected"]))[1], "right on the worked example"


def test_the_check_names_the_quantity_and_the_line_and_never_a_right_line(checks, capsys):
    quantity = line = 0
    pointed_wrong = []
    for path in FILES:
        name, a, text, h, number = read(path)
        ns = namespace(a, text, path)
        found = checks[a.id].locate(name, ns[name], ns) or {}
        quantity += found.get("quantity") == h["quantity"]
        line += found.get("line") == number
        if found.get("line") not in (None, number):
            pointed_wrong.append((os.path.relpath(path, ROOT), found.get("line"), found.get("text")))
    with capsys.disabled():
        print(f"\n[measure] slips: {len(FILES)}; the check names the quantity for {quantity / len(FILES):.1%}, "
              f"the line for {line / len(FILES):.1%}, a right line for {len(pointed_wrong)}")
    assert pointed_wrong == []
    assert quantity >= 0.9 * len(FILES) and line >= 0.8 * len(FILES)


@pytest.mark.slow
def test_the_grader_repairs_nine_slips_in_ten(capsys):
    repaired, larger = [], []
    for path in FILES:
        name, a, text, h, _ = read(path)
        v = JUDGED.get(path) or local.judge_all(a, namespace(a, text, path), [name], examine=True)[name]
        if v.repair:
            repaired.append(path)
            if _changed(v.repair["before"], v.repair["after"]) > _changed(h["was"], h["line"]):
                larger.append(os.path.relpath(path, ROOT))
    with capsys.disabled():
        print(f"\n[measure] verified repairs: {len(repaired)} of {len(FILES)} ({len(repaired) / len(FILES):.1%}); "
              f"larger than the slip: {len(larger)} {larger}")
    assert len(repaired) >= 0.9 * len(FILES)


def _changed(before, after):
    from assignments.grading.shipped.repair import changed_tokens, written
    return changed_tokens(written(before), written(after))
