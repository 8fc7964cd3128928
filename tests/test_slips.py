"""A corpus of realistic uncatalogued slips (tests/fixtures/slips/<function>/*.py), one per
file, each a whole learner-style function with exactly one wrong line, and the measure of the
students' check's locator on it (issue 40).

Each file's header::

    # slip: <what is wrong>
    # quantity: <the first reference quantity whose value goes wrong>
    # line: <the wrong line, stripped>
    # was: <the same line corrected, in the learner's style>

The corpus part checks that every slip is wrong on the worked example (the students' check)
and on the hidden cases (the judge), that no catalogued code is named for it, that its line
occurs once and that the file with ``was`` in place of ``line`` gets full marks. The measuring
part needs ``locate`` in assignments/grading/shipped/student_checks.py and is skipped until it
exists; it prints the shares (run with ``-s``)."""
import glob
import importlib
import importlib.util
import inspect
import os
import re

import numpy as np
import pytest
from helpers import REPO

from assignments.grading.judging import inprocess as local
from assignments.gru_step_by_step import ASSIGNMENT as GRU
from assignments.rnn_step_by_step import ASSIGNMENT as RNN

ROOT = os.path.join(REPO, "tests", "fixtures", "slips")
FILES = sorted(glob.glob(os.path.join(ROOT, "*", "*.py")))
ASSIGNMENTS = (RNN, GRU)
OWNER = {e.name: a for a in ASSIGNMENTS for e in a.exercises}
FIELDS = ("slip", "quantity", "line", "was")
TARGET = {"quantity": 0.90, "line": 0.80}
MEASURED = {}          # path -> (quantity right, line right, located)


def header(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = {}
    for field in FIELDS:
        m = re.search(rf"^# {field}:[ \t]*(.+)$", text, re.M)
        assert m, f"{path} has no '# {field}:' line"
        found[field] = m.group(1).strip()
    return found, text


def body_lines(text):
    """The file's lines that are code (the header's comment lines left out)."""
    return [ln for ln in text.splitlines() if not ln.startswith("# ")]


def strip_imports(source):
    for utils in ("rnn_utils", "gru_utils"):
        source = re.sub(rf"^from {utils} import .*$", "", source, flags=re.M)
    return source


_CHECKS = {}


def released_checks(assignment):
    if assignment.id not in _CHECKS:
        path = os.path.join(REPO, "release", assignment.id, f"{assignment.short}_checks.py")
        spec = importlib.util.spec_from_file_location(f"slips_{assignment.short}_checks", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _CHECKS[assignment.id] = module
    return _CHECKS[assignment.id]


def namespace(assignment, source, filename):
    """The reference's functions as the notebook's other cells, ``source`` run over them."""
    ns = {"np": np}
    exec(inspect.getsource(assignment.reference), ns)
    exec(compile(strip_imports(source), filename, "exec"), ns)
    return ns


def verdicts(assignment, function, ns):
    v = local.judge_all(assignment, ns, [function])[function]
    checks = released_checks(assignment)
    try:
        checks.check(function, ns)
        said = ""
    except checks.CheckFailed as exc:
        said = str(exc)
    codes = sorted(set(re.findall(r"\[([a-z0-9_]+)\]", said)) & {m.code for m in assignment.catalog})
    return v, said, codes


def test_the_corpus_is_large_and_covers_every_function():
    by_function = {}
    for p in FILES:
        by_function.setdefault(os.path.basename(os.path.dirname(p)), []).append(p)
    names = [e.name for a in ASSIGNMENTS for e in a.exercises]
    assert set(by_function) <= set(names), set(by_function) - set(names)
    print("\n[slips] corpus: " + ", ".join(f"{n} {len(by_function.get(n, []))}" for n in names)
          + f"; {len(FILES)} in all")
    assert len(FILES) >= 72
    assert all(len(by_function.get(n, [])) >= 6 for n in names), {n: len(by_function.get(n, [])) for n in names}


@pytest.mark.parametrize("path", FILES, ids=[os.path.relpath(p, ROOT) for p in FILES])
def test_slip_is_a_real_uncatalogued_one_line_mistake(path):
    function = os.path.basename(os.path.dirname(path))
    assignment = OWNER[function]
    h, text = header(path)
    code = "\n".join(body_lines(text))
    assert sum(ln.strip() == h["line"] for ln in code.splitlines()) == 1, \
        f"the line {h['line']!r} does not occur exactly once as a line of {path}"
    assert h["line"] != h["was"]
    ns = namespace(assignment, text, path)
    assert callable(ns.get(function)) and ns[function].__code__.co_filename == path
    v, said, codes = verdicts(assignment, function, ns)
    assert not v.passed and v.score < v.max_score, f"the judge passes the slip: {v.feedback}"
    assert said, "the students' check passes the slip on the worked example"
    assert not v.diagnoses, f"the judge names catalogued {v.diagnoses}: {v.feedback}"
    assert not codes, f"the check names catalogued {codes}: {said}"
    # the quantity is a name the reference uses (a local, a gradient's key, an output's name;
    # a sequence function's gradients are keyed as its cell's are)
    known = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", inspect.getsource(assignment.reference)))
    assert h["quantity"] in known, f"{h['quantity']!r} is not one of {function}'s reference quantities"
    # with the line corrected the function is right
    fixed_lines = [ln.replace(ln.strip(), h["was"]) if ln.strip() == h["line"] else ln for ln in text.splitlines()]
    fixed = "\n".join(fixed_lines) + "\n"
    ns = namespace(assignment, fixed, path + ":was")
    v, said, codes = verdicts(assignment, function, ns)
    assert v.passed and v.score == v.max_score, f"with 'was' in place of 'line' still wrong: {v.feedback}"
    assert said == "", said


def _locate():
    """``locate(assignment)`` -> the release's students' check's ``locate`` (the shipped
    student_checks.py as students get it, beside its check_data.json)."""
    module = importlib.import_module("assignments.grading.shipped.student_checks")
    if not hasattr(module, "locate"):
        pytest.skip("assignments/grading/shipped/student_checks.py has no locate() yet "
                    "(the measuring part only; the corpus is checked above)")
    return lambda assignment: released_checks(assignment).locate


@pytest.mark.parametrize("path", FILES, ids=[os.path.relpath(p, ROOT) for p in FILES])
def test_locate_on_slip(path):
    locate = _locate()
    function = os.path.basename(os.path.dirname(path))
    assignment = OWNER[function]
    h, text = header(path)
    ns = namespace(assignment, text, path)
    fn = ns[function]
    found = locate(assignment)(function, fn, ns) or {}
    src = inspect.getsource(fn).splitlines()
    lineno = found.get("lineno")
    located_text = src[lineno - 1].strip() if isinstance(lineno, int) and 1 <= lineno <= len(src) else None
    quantity_right = found.get("quantity") == h["quantity"]
    line_right = located_text == h["line"]
    MEASURED[path] = (quantity_right, line_right, found)
    assert located_text is None or line_right, \
        f"locate points at a right line {lineno}: {located_text!r} (the slip is {h['line']!r}); {found}"


def test_locate_shares(capsys):
    _locate()
    if len(MEASURED) < len(FILES):
        pytest.skip("run the whole module to measure the shares")
    total = len(MEASURED)
    shares = {"quantity": sum(q for q, _, _ in MEASURED.values()) / total,
              "line": sum(ln for _, ln, _ in MEASURED.values()) / total}
    with capsys.disabled():
        for what, share in shares.items():
            right = round(share * total)
            print(f"\n[measure] slips: {what} named right for {right}/{total} = {share:.1%} "
                  f"(target {TARGET[what]:.0%})")
        for path, (q, ln, found) in sorted(MEASURED.items()):
            if not (q and ln):
                print(f"[measure]   {os.path.relpath(path, ROOT)}: quantity {'ok' if q else 'WRONG'}, "
                      f"line {'ok' if ln else 'WRONG'}: {found}")
    for what, share in shares.items():
        assert share >= TARGET[what], (what, share)


def _correct_files():
    found = sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "correct", "*.py")))
    for p in sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "learners", "*", "*.py"))):
        with open(p, encoding="utf-8") as f:
            if re.search(r"^# expect:\s*correct\s*$", f.read(2000), re.M):
                found.append(p)
    return found


CORRECT = _correct_files()


@pytest.mark.parametrize("path", CORRECT, ids=[os.path.relpath(p, REPO) for p in CORRECT])
def test_locate_never_points_into_a_correct_function(path):
    locate = _locate()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for assignment in ASSIGNMENTS:
        try:
            ns = namespace(assignment, text, path)
        except Exception:   # a file written for the other notebook
            continue
        for e in assignment.exercises:
            fn = ns.get(e.name)
            if not callable(fn) or getattr(fn, "__code__", None) is None or fn.__code__.co_filename != path:
                continue
            found = locate(assignment)(e.name, fn, ns)
            assert not found or found.get("lineno") is None, f"{e.name} in a correct file located: {found}"
