"""A repair of a wrong function: searched in the learner's kernel (shipped/repair.py), kept by
the judge only when it passes every hidden case, shown as nbgrader_config.py's Repair.show
allows. The corpus measurement is tests/test_slips.py."""
import inspect
import json
import os

import nbformat
import pytest
from helpers import REPO, cell_namespace

from assignments.grading.authoring.submissions import answer_cells, fill
from assignments.grading.judging import inprocess as local
from assignments.grading.judging.judge import Judge
from assignments.grading.judging.located import read_location
from assignments.rnn_step_by_step import ASSIGNMENT as A

RIGHT = "    dcct = dc * it * (1 - cct ** 2)\n"
SLIP = "    dcct = dc * it * (1 - cct)\n"


def lstm_cell_backward_source(line=SLIP):
    source = inspect.getsource(A.reference.lstm_cell_backward)
    assert RIGHT in source
    return source.replace(RIGHT, line)


def submitted(tmp_path, source):
    """A class of one (sam): Ada's answers with ``source`` as lstm_cell_backward; its folder."""
    with open(os.path.join(REPO, "samples", "answers", A.id, "ada.py"), encoding="utf-8") as f:
        answers = answer_cells(f.read())
    answers["lstm_cell_backward"] = source
    folder = tmp_path / "in" / "submitted" / "sam" / A.id
    folder.mkdir(parents=True)
    nbformat.write(fill(os.path.join(REPO, "release", A.id, A.notebook + ".ipynb"), answers),
                   str(folder / (A.notebook + ".ipynb")))
    return str(tmp_path / "in")


def namespace(source, tag):
    return cell_namespace(A, source, "repair " + tag)


@pytest.mark.parametrize("show", ["line", "quantity", "edit"])
def test_a_slip_is_repaired_and_shown_as_configured(show):
    ns = namespace(lstm_cell_backward_source(), show)
    v = local.judge_all(A, ns, ["lstm_cell_backward"], examine=True, show=show)["lstm_cell_backward"]
    assert not v.passed and v.diagnoses == []
    assert v.repair["before"] == SLIP.strip() and v.repair["after"] == RIGHT.strip()
    assert v.location["quantity"] == "dcct" and v.location["text"] == SLIP.strip()
    said = v.feedback
    assert f"`{SLIP.strip()}`" in said
    assert ("That line should compute dcct: δc̃ = dcct = dc ⊙ it ⊙ (1 − cct²)" in said) == (show != "line")
    assert ("A change that makes it pass every hidden case" in said) == (show == "edit")


def test_the_words_are_chinese_in_the_chinese_edition():
    ns = namespace(lstm_cell_backward_source(), "zh")
    v = local.judge_all(A, ns, ["lstm_cell_backward"], lang="zh-CN", examine=True)["lstm_cell_backward"]
    assert "第一个错误的值是在第" in v.feedback and "这一行应当算出 dcct" in v.feedback


def test_a_right_function_is_not_examined():
    ns = namespace(lstm_cell_backward_source(RIGHT), "right")
    asked = []
    j = Judge(A)
    v = j.judge("lstm_cell_backward", local.caller(A, ns), examine=lambda name, job: asked.append(name) or [])
    assert v.passed and asked == [] and v.location is None and v.repair is None


def test_only_a_candidate_that_passes_every_hidden_case_is_kept():
    """What the kernel proposes is learner code: the judge runs it on the hidden cases and keeps
    it only if it passes them all. A candidate that raises, one that is wrong, one that is only
    right on the public cases, and malformed ones are dropped; the score never moves."""
    ns = namespace(lstm_cell_backward_source(), "candidates")
    right = lstm_cell_backward_source(RIGHT)
    public_only = right.replace("    return {", "    if dxt.shape[1] != 10:\n        dxt = dxt * 2\n    return {")
    proposals = [
        {"line": 1, "before": "x", "after": "y", "source": "def lstm_cell_backward(*a):\n    raise ValueError\n"},
        {"line": 1, "before": "x", "after": "y", "source": lstm_cell_backward_source("    dcct = dc * it\n")},
        {"line": 1, "before": "x", "after": "y", "source": public_only},
        {"line": "1", "before": "x", "after": "y", "source": right},      # malformed: dropped unread
    ]
    j = Judge(A)
    plain = j.judge("lstm_cell_backward", local.caller(A, ns))
    v = j.judge("lstm_cell_backward", local.caller(A, ns), examine=lambda name, job: [{"found": None, "repairs": proposals}])
    assert v.repair is None and (v.score, v.passed) == (plain.score, plain.passed)
    kept = proposals[:1] + [{"line": 9, "before": SLIP.strip(), "after": RIGHT.strip(), "source": right}]
    v = j.judge("lstm_cell_backward", local.caller(A, ns), examine=lambda name, job: [{"found": None, "repairs": kept}])
    assert v.repair["line"] == 9 and (v.score, v.passed) == (plain.score, plain.passed)


@pytest.mark.parametrize("found", [
    "dc", {"quantity": "__import__", "lineno": 3, "text": "x", "part": False, "mends": [], "left": [], "right": [],
           "known": [], "suspects": []},
    {"quantity": "dc", "lineno": True, "text": "x", "part": False, "mends": [], "left": [], "right": [], "known": [],
     "suspects": []},
    {"quantity": "dc", "lineno": 3, "text": "x", "part": "no", "mends": [], "left": [], "right": [], "known": [],
     "suspects": []},
    {"quantity": "dc", "lineno": 3, "text": "x", "part": False, "mends": ["<script>"], "left": [], "right": [],
     "known": [], "suspects": []},
])
def test_a_location_the_kernel_made_up_is_dropped(found):
    examined = json.loads(json.dumps(__import__("assignments.grading.contract.trace", fromlist=["x"])
                                     .examined(A, "lstm_cell_backward")))
    assert read_location(examined["spec"], examined["trace"], found) is None


@pytest.mark.sandbox
def test_the_search_runs_in_the_sandbox_only(tmp_path):
    """The wrong function writes a file at a path of the host each time it runs: the search
    for a repair runs it hundreds of times, in the learner's kernel, where the path is not the
    host's. The grade still carries the location and the repair."""
    from assignments.grading.run import pipeline
    marker = tmp_path / "ran-on-the-host"
    slip = lstm_cell_backward_source().replace(
        "    n_a = a_next.shape[0]\n",
        f"    n_a = a_next.shape[0]\n    try:\n        open({str(marker)!r}, 'a').close()\n    except OSError:\n"
        "        pass\n")
    results = pipeline.grade(A, submitted(tmp_path, slip), str(tmp_path / "out"))
    e = next(e for e in results["submissions"][0]["exercises"] if e["id"] == "lstm_cell_backward")
    assert not marker.exists()
    assert e["location"]["quantity"] == "dcct" and e["repair"]["after"] == RIGHT.strip()


def test_a_submissions_search_shares_one_bound_and_a_cut_says_so(tmp_path):
    """``Repair.submission_tries`` bounds the candidates of all a submission's wrong functions:
    at 0, the sandboxed kernel still locates the slip, runs no candidate, and the entry is
    flagged ``repair_cut``; the score is the same as with the search."""
    from traitlets.config import Config

    from assignments.grading.run import pipeline
    none_left = Config()
    none_left.Repair.submission_tries = 0
    entry = pipeline.grade(A, submitted(tmp_path, lstm_cell_backward_source()), str(tmp_path / "out"),
                           overrides=none_left)["submissions"][0]
    e = next(e for e in entry["exercises"] if e["id"] == "lstm_cell_backward")
    assert e["location"]["quantity"] == "dcct" and not e.get("repair")
    assert entry["flags"] == ["repair_cut:lstm_cell_backward"] and entry["status"] == "graded"
    assert entry["score"] == A.max_score - A.by_name["lstm_cell_backward"].points + e["score"]


def test_the_bound_of_a_submission_is_what_its_functions_left():
    """Each examine job gets min(Repair.tries, what the submission has left); what the kernel
    says it tried comes off, and a reply that says nothing costs the whole job's bound."""
    from types import SimpleNamespace

    from assignments.grading.judging.judged_execute import examined_in_kernel
    sent = []
    said = iter([[{"tried": 1200}], [{"tried": 500}], [{"tried": "lots"}], [{"tried": 3}], [{"tried": 0}]])
    from assignments.grading.judging.searched import RememberedSearches
    grader = SimpleNamespace(nb=nbformat.v4.new_notebook(), _deadline=float("inf"), _judge=SimpleNamespace(searches=RememberedSearches()),
                             _assignment=A, resources={"metadata": {"path": "sam"}},
                             _ask=lambda job, name, doing: (sent.append(job["tries"]) or next(said), None))
    repair = SimpleNamespace(tries=1200, submission_tries=2000, remember=True)   # not the defaults: the arithmetic
    for name in ("a", "b", "c", "d"):
        examined_in_kernel(grader, repair, name, {"op": "examine"})
    assert sent == [1200, 800, 300, 0]
    grader.nb = nbformat.v4.new_notebook()   # the next submission starts with its whole bound
    examined_in_kernel(grader, repair, "a", {"op": "examine"})
    assert sent[-1] == 1200


def test_the_search_stops_at_its_count_and_says_so():
    from assignments.grading.contract.trace import examined
    from assignments.grading.shipped import repair
    ns = namespace(lstm_cell_backward_source(), "cut")
    job = json.loads(json.dumps(examined(A, "lstm_cell_backward")))
    whole = repair.examine(job["spec"], job["trace"], job["public"], ns["lstm_cell_backward"])
    assert whole["repairs"] and not whole["cut"] and 0 < whole["tried"] < repair.REPAIR_TRIES
    cut = repair.examine(job["spec"], job["trace"], job["public"], ns["lstm_cell_backward"], tries=whole["tried"] - 1)
    assert cut["cut"] and cut["tried"] == whole["tried"] - 1 and cut["found"] == whole["found"]


def test_a_candidate_copies_only_the_statements_own_nodes():
    """IPython's tracebacks (``executing``) hang a ``parent`` on every node of the trees they
    read, the parser's shared ``Load()`` too; a deep copy of any name then copies that other
    tree as well (15 times the search's work in a kernel that had shown a traceback). The
    search's copy takes a node's fields and place only, and shares Load()."""
    import ast

    from assignments.grading.shipped import repair
    stmt = ast.parse("a_next = np.tanh(Wax @ xt + ba)").body[0]
    other = ast.parse("def elsewhere():\n    raise ValueError(x)\n")
    for node in ast.walk(stmt):
        node.parent = other
    copied = repair._copy(stmt)
    assert ast.unparse(copied) == ast.unparse(stmt)
    for mine, theirs in zip(ast.walk(copied), ast.walk(stmt)):
        assert not hasattr(mine, "parent") or isinstance(mine, ast.expr_context)
        assert (mine is theirs) == isinstance(mine, ast.expr_context)


def test_a_candidate_is_the_statement_with_one_node_replaced_and_the_rest_untouched():
    import ast

    from assignments.grading.shipped import repair
    stmt = ast.parse("dWax = np.dot(dtanh, xt.T) + dWax[:, t - 1]").body[0]
    before = ast.dump(stmt, include_attributes=True)
    context = repair.Context(["dtanh", "xt", "dWax", "t"], {"dtanh": (5, 10), "xt": (3, 10), "dWax": (5, 3)}, ["np.tanh"])
    texts = [ast.unparse(e) for e in repair.edits(stmt, context)]
    assert ast.dump(stmt, include_attributes=True) == before   # no candidate changed the original
    assert "dWax = np.dot(dtanh, xt) + dWax[:, t - 1]" in texts        # a transpose taken off, deep down
    assert "dWax = np.dot(dtanh, xt.T) + dWax[:, t]" in texts          # an index
    assert "dWax += np.dot(dtanh, xt.T) + dWax[:, t - 1]" in texts     # = and +=
    assert len(texts) > 40


def test_a_cases_inputs_are_copied_as_deepcopy_copies_them():
    import copy

    import numpy as np

    from assignments.grading.shipped.student_checks import fresh_copy
    shared = np.arange(6.0).reshape(2, 3)
    inputs = [shared, {"W": shared, "b": np.zeros((2, 1)), "n": 3}, (shared, [1.5, None, "x"])]
    mine, theirs = fresh_copy(inputs, {}), copy.deepcopy(inputs)
    assert mine[0] is mine[1]["W"] is mine[2][0] and mine[0] is not shared
    assert type(mine[2]) is tuple and mine[2][1] == theirs[2][1]
    assert all(np.array_equal(a, b) for a, b in zip((mine[0], mine[1]["b"]), (theirs[0], theirs[1]["b"])))


QUICK_CHECKED = ["learners/lstm_cell_backward/expanded_terms_dot.py", "slips/lstm_cell_backward/dc_at_wrong_point.py",
                 "slips/gru_backward/grads_averaged.py", "learners/lstm_forward/returns_a_c_y.py",
                 "learners/lstm_backward/caches_not_indexed.py"]


@pytest.mark.parametrize("fixture", QUICK_CHECKED)
def test_a_candidate_refused_at_once_is_one_the_whole_run_refuses(fixture):
    """The quick check runs a candidate's edited statement alone, on the locals its line first
    saw: it may only refuse candidates that running the whole function would refuse. Repairs
    found late, and a search run to its bound, come out the same with it and without it."""
    from assignments.grading.contract.trace import examined
    from assignments.grading.shipped import repair
    from assignments.gru_step_by_step import ASSIGNMENT as G
    name = fixture.split("/")[1]
    assignment = A if name in A.by_name else G
    with open(os.path.join(REPO, "tests", "fixtures", fixture), encoding="utf-8") as f:
        fn = cell_namespace(assignment, f.read(), "quick " + fixture)[name]
    job = json.loads(json.dumps(examined(assignment, name)))
    refused, stock = [], repair._fails_at_once

    def counted(*args):
        refused.append(stock(*args))
        return refused[-1]

    whole, quick = {}, {}
    slow = repair.mend(job["spec"], job["public"], fn, tries=800, spent=whole, repeatable=False)
    assert not refused
    repair._fails_at_once = counted
    try:
        fast = repair.mend(job["spec"], job["public"], fn, tries=800, spent=quick, repeatable=True)
    finally:
        repair._fails_at_once = stock
    assert fast == slow and quick == whole
    assert sum(refused) > whole["tried"] / 5   # and it did refuse: a fifth of the candidates at least


def test_a_statement_is_replayed_alone_only_where_its_line_is_its_own():
    import ast

    from assignments.grading.shipped import repair
    fdef = ast.parse("def f(x):\n    a = x + 1; b = a * 2\n    for t in range(3): c = t\n"
                     "    for s in range(2):\n        d = (a +\n             s); e = d\n    return e\n").body[0]
    alone = {ast.unparse(s) for s in repair._statements(fdef) if id(s) in repair._first_run_alone(fdef)}
    # not a, b, the first loop or c (two to a line), nor e (its line is where d ends)
    assert alone == {"for s in range(2):\n    d = a + s\n    e = d", "d = a + s", "return e"}
    for guarded in ("    try:\n        y = x.T\n    except ValueError:\n        y = x\n",
                    "    with contextlib.suppress(ValueError):\n        y = x.T\n",
                    "    y = f(x - 1) if x else x\n"):
        fdef = ast.parse("def f(x):\n" + guarded + "    return y\n").body[0]
        assert repair._first_run_alone(fdef) == set()


def test_a_statement_replayed_alone_leaves_the_saved_locals_as_they_were():
    import ast

    import numpy as np

    from assignments.grading.shipped import repair

    def fn(xs, a):
        a[0] = xs.pop()
        return a

    saved = {"xs": [1.0, 2.0], "a": np.zeros(2)}
    stmt = ast.parse("a[0] = xs.pop()").body[0]
    assert not repair._fails_at_once(stmt, "a[0] = xs.pop()", fn, saved)
    assert not repair._fails_at_once(stmt, "a[0] = xs.pop()", fn, saved)
    assert saved["xs"] == [1.0, 2.0] and not saved["a"].any()
    wrong = ast.parse("a[0] = xs.pop() @ a").body[0]
    assert repair._fails_at_once(wrong, "a[0] = xs.pop() @ a", fn, saved)   # a float @ an array
    back = ast.parse("return a @ a.T").body[0]
    assert not repair._fails_at_once(back, "return a @ a.T", fn, saved)
    assert repair._fails_at_once(ast.parse("return a @ xs[0]").body[0], "return a @ xs[0]", fn, saved)


def test_the_rest_of_a_function_is_replayed_after_a_statement_at_its_top_only():
    """A statement at the top of the body runs once: the candidate's first case is that
    statement on the locals its line saw, then the rest of the body. A loop's body, a rest with
    a return of its own before the end, or a loop's header, is not replayed so."""
    import ast

    import numpy as np

    from assignments.grading.shipped import repair
    source = ("def f(x, w):\n    h = x @ w\n    for t in range(2):\n        h = h + t\n"
              "    if h.sum() > 1e9:\n        return h\n    y = np.tanh(h)\n    return {'y': y.T}\n")
    fdef = ast.parse(source).body[0]
    alone = repair._first_run_alone(fdef)
    rests = repair._rests(fdef, alone)
    replayed = {ast.unparse(s) for s in repair._statements(fdef) if id(s) in rests}
    # h = x @ w: its rest returns early inside the if; h = h + t is in a loop; the header is a loop's
    assert replayed == {"y = np.tanh(h)", "return {'y': y.T}"}

    spec = {"name": "f", "outputs": ["y"], "returns_dict": True}
    x, w = np.arange(6.0).reshape(2, 3) / 10, np.ones((3, 2))
    saved = {"x": x, "w": w, "h": x @ w + 1}
    expected = {"y": np.tanh(saved["h"]).T}
    stmt = fdef.body[3]
    rest = rests[id(stmt)]
    assert not repair._fails_at_once(stmt, "y = np.tanh(h)", f_of(source), saved, rest, spec, expected)
    assert repair._fails_at_once(stmt, "y = np.tanh(2 * h)", f_of(source), saved, rest, spec, expected)   # differs
    assert repair._fails_at_once(stmt, "y = np.tanh(x @ h)", f_of(source), saved, rest, spec, expected)   # raises
    assert repair._fails_at_once(stmt, "y = None", f_of(source), saved, rest, spec, expected)   # raises in the rest
    ret = fdef.body[4]
    assert not repair._fails_at_once(ret, "return {'y': np.tanh(h).T}", f_of(source), saved, rests[id(ret)], spec,
                                     expected)
    assert repair._fails_at_once(ret, "return {'y': y}", f_of(source), dict(saved, y=expected["y"].T),
                                 rests[id(ret)], spec, expected)
    assert np.array_equal(saved["h"], x @ w + 1) and "y" not in saved   # the saved locals are left as they were


def f_of(source):
    import numpy as np
    space = {"np": np}
    exec(source, space)
    return space["f"]


def test_a_function_that_calls_a_wrong_one_has_its_located_line_searched_only():
    """A loop's candidates run the learner's own cell function in the kernel, and the hidden
    cases run the reference's: with the cell wrong, a candidate passes both only if the wrong
    part goes unused, and such a repair is at the located line. So only that line is edited:
    a repair there is still found, and a search that finds nothing there ends uncut, where the
    whole search runs to its bound. A function that does not read the wrong one is searched
    as before."""
    from assignments.grading.contract.trace import examined
    from assignments.grading.shipped import repair
    job = json.loads(json.dumps(examined(A, "lstm_backward")))
    for fixture, mendable in (("slips/lstm_backward/hidden_gradient_as_cell.py", True),
                              ("learners/lstm_backward/total_added_to_itself.py", False)):
        with open(os.path.join(REPO, "tests", "fixtures", fixture), encoding="utf-8") as f:
            loop = namespace(f.read(), fixture)["lstm_backward"]
        narrow = repair.examine(job["spec"], job["trace"], job["public"], loop, wrong=["lstm_cell_backward"])
        whole = repair.examine(job["spec"], job["trace"], job["public"], loop, wrong=["rnn_cell_backward"])
        assert narrow["found"] == whole["found"] and narrow["found"]["lineno"]
        assert bool(whole["repairs"]) == mendable and narrow["repairs"] == whole["repairs"]
        if mendable:
            assert narrow["tried"] == whole["tried"] and not whole["cut"]
        else:
            assert whole["cut"] and whole["tried"] == repair.REPAIR_TRIES
            assert not narrow["cut"] and 0 < narrow["tried"] < repair.REPAIR_TRIES / 2


@pytest.mark.sandbox
def test_a_loop_whose_cell_is_wrong_is_searched_at_its_located_line_only(tmp_path):
    """Graded whole: the wrong cell function is repaired; the loop that calls it, wrong too,
    has its located line searched only. Searched whole, it would run to its bound (800
    candidates) for nothing, and be flagged ``repair_cut``."""
    from assignments.grading.run import pipeline
    in_dir = submitted(tmp_path, lstm_cell_backward_source())
    notebook = os.path.join(in_dir, "submitted", "sam", A.id, A.notebook + ".ipynb")
    with open(os.path.join(REPO, "samples", "answers", A.id, "ada.py"), encoding="utf-8") as f:
        answers = answer_cells(f.read())
    with open(os.path.join(REPO, "tests", "fixtures", "slips", "lstm_backward", "hidden_gradient_as_cell.py"),
              encoding="utf-8") as f:
        answers.update(lstm_cell_backward=lstm_cell_backward_source(), lstm_backward=f.read())
    nbformat.write(fill(os.path.join(REPO, "release", A.id, A.notebook + ".ipynb"), answers), notebook)
    entry = pipeline.grade(A, in_dir, str(tmp_path / "out"))["submissions"][0]
    by_id = {e["id"]: e for e in entry["exercises"]}
    assert by_id["lstm_cell_backward"]["repair"]["after"] == RIGHT.strip()
    loop = by_id["lstm_backward"]
    assert loop["score"] < A.by_name["lstm_backward"].points and not loop.get("repair")
    assert entry["flags"] == []
