"""Repair searches remembered across a class (judging/searched.py, repair.search_key)."""
import json

import pytest
from helpers import cell_namespace

from assignments.grading.contract.trace import examined
from assignments.grading.judging.classwide import Journal, Shared
from assignments.grading.judging.searched import RememberedSearches, edits_into
from assignments.grading.shipped import repair
from assignments.rnn_step_by_step import ASSIGNMENT as A

SLIP = open(__file__.replace("test_searched.py", "fixtures/slips/rnn_cell_forward/tanh_twice.py"), encoding="utf-8").read()
NAME = "rnn_cell_forward"
JOB = json.loads(json.dumps(examined(A, NAME)))


def fn(source, tag):
    return cell_namespace(A, source, "searched " + tag)[NAME]


def examine(f, known=()):
    return json.loads(json.dumps(repair.examine(JOB["spec"], JOB["trace"], JOB["public"], f, known=known)))


def test_the_key_is_the_functions_and_what_it_reads_not_its_place_in_the_cell():
    ada, ben = fn(SLIP, "ada"), fn("# my answer\n\n\n" + SLIP, "ben")
    assert ada.__code__.co_firstlineno != ben.__code__.co_firstlineno
    key = repair.search_key(JOB["spec"], ada, None, 800)
    assert key is not None and key == repair.search_key(JOB["spec"], ben, None, 800)
    assert key != repair.search_key(JOB["spec"], ada, None, 300)                       # its bound
    assert key != repair.search_key(JOB["spec"], ada, {"lineno": 3}, 800)               # where it starts
    assert key != repair.search_key(JOB["spec"], fn(SLIP.replace("+ by", "+ by * 1.0"), "x"), None, 800)
    other_softmax = cell_namespace(A, SLIP, "searched sm")
    other_softmax["softmax"] = lambda x: x / x.sum(axis=0)   # a helper of the learner's own, read by the function
    assert repair.search_key(JOB["spec"], other_softmax[NAME], None, 800) != key


@pytest.mark.parametrize("line", ["    rng = np.random.rand(1)\n", "    import time\n    t = time.time()\n",
                                  "    from datetime import datetime\n    t = datetime.now()\n"])
def test_a_function_that_reads_chance_or_the_clock_has_no_key(line):
    body = SLIP.replace("    Wax = ", line + "    Wax = ", 1)
    assert repair.search_key(JOB["spec"], fn(body, "rng"), None, 800) is None


def test_a_search_two_submissions_agreed_on_is_the_search_a_third_would_run():
    ada, ben, cat = fn(SLIP, "a"), fn("# hi\n" + SLIP, "b"), fn("# cat's\n#\n#\n#\n" + SLIP, "c")
    searches = RememberedSearches()
    first = examine(ada)
    assert first["repairs"] and first["tried"] > 0 and first["key"]
    searches.keep("rnn", NAME, first, "ada")
    assert searches.known("rnn", NAME) == []            # one submission's word is not enough
    searches.keep("rnn", NAME, examine(ben), "ben")
    assert searches.known("rnn", NAME) == [first["key"]] and (searches.searched, searches.reused) == (2, 0)
    skipped = examine(cat, known=searches.known("rnn", NAME))
    assert skipped["remembered"] and skipped["tried"] == 0 and skipped["repairs"] == []
    recalled = searches.recall("rnn", NAME, skipped)
    fresh = examine(cat)
    assert recalled == {k: fresh[k] for k in ("found", "repairs", "tried", "cut")}
    assert (searches.searched, searches.reused) == (2, 1)
    assert recalled["repairs"][0]["line"] == first["repairs"][0]["line"] + 4


def test_a_search_the_class_agreed_on_reaches_every_worker_through_the_grading_process(tmp_path):
    """Two workers each ran the search once (one submission's word, alone, is not enough to
    either); the grading process hears both, journals the search, and a third worker reuses it,
    as it would one its own kernels agreed on. An answer that differs takes it back."""
    journal = Journal(str(tmp_path / "learned.jsonl"))
    ada_w, ben_w, cat_w = Shared(), Shared(), Shared()
    for w in (ada_w, ben_w):
        w.follow(journal.path)
    on_ada, on_ben = RememberedSearches(shared=ada_w), RememberedSearches(shared=ben_w)
    first = examine(fn(SLIP, "a"))
    on_ada.keep("rnn", NAME, first, "ada")
    on_ben.keep("rnn", NAME, examine(fn("# hi\n" + SLIP, "b")), "ben")
    assert on_ada.known("rnn", NAME) == on_ben.known("rnn", NAME) == []
    journal.add(ada_w.take(), "ada")
    cat_w.follow(journal.path)
    assert RememberedSearches(shared=cat_w).known("rnn", NAME) == []
    journal.add(ben_w.take(), "ben")
    assert ada_w.take() == [] and ben_w.take() == []
    on_cat = RememberedSearches(shared=cat_w)
    cat_w.follow(journal.path)
    assert on_cat.known("rnn", NAME) == [first["key"]]
    cat = fn("# cat's\n#\n" + SLIP, "c")
    skipped = examine(cat, known=on_cat.known("rnn", NAME))
    fresh = examine(cat)
    assert on_cat.recall("rnn", NAME, skipped) == {k: fresh[k] for k in ("found", "repairs", "tried", "cut")}
    journal.add([{"kind": "search", "key": ["rnn", NAME, first["key"]], "entry": {"repairs": [], "tried": 800, "cut": True}}],
                "mallory")
    cat_w.follow(journal.path)
    assert on_cat.known("rnn", NAME) == [] and on_cat.recall("rnn", NAME, skipped) is None
    journal.close()
    assert not (tmp_path / "learned.jsonl").exists()


def test_a_worker_trusts_neither_a_half_written_line_nor_the_class_against_its_own_kernels(tmp_path):
    """The journal is read a whole line at a time; a worker whose own kernel answered a key
    otherwise than the class reuses neither answer; without a journal a worker agrees with itself."""
    ada = examine(fn(SLIP, "a"))
    entry = {"repairs": [dict(r, offset=r["line"] - ada["first"]) for r in ada["repairs"]], "tried": ada["tried"],
             "cut": ada["cut"]}
    for r in entry["repairs"]:
        del r["line"]
    line = json.dumps({"kind": "search", "key": ["rnn", NAME, ada["key"]], "entry": entry}) + "\n"
    path = tmp_path / "searches.jsonl"
    path.write_text(line[:40])
    worker = Shared()
    worker.follow(str(path))
    assert worker.known["search"] == {}
    path.write_text(line)
    worker.follow(str(path))
    on_worker = RememberedSearches(shared=worker)
    assert on_worker.known("rnn", NAME) == [ada["key"]]
    on_worker.keep("rnn", NAME, forged(ada, "scores = 0  # mine"), "dan")
    assert on_worker.known("rnn", NAME) == []
    worker.follow(None)
    assert worker.known["search"] == {} and RememberedSearches(shared=worker).known("rnn", NAME) == []


def forged(reply, after):
    r = dict(reply["repairs"][0], after=after)
    r["source"] = r["source"].replace(reply["repairs"][0]["after"], after)
    return dict(reply, repairs=[r])


def test_two_answers_to_one_key_are_both_searched_again():
    ada = examine(fn(SLIP, "a"))
    searches = RememberedSearches()
    searches.keep("rnn", NAME, ada, "ada")
    searches.keep("rnn", NAME, ada, "ben")
    searches.keep("rnn", NAME, forged(ada, "scores = 0  # you have been hacked"), "mallory")
    assert searches.known("rnn", NAME) == []


def test_a_remembered_edit_that_does_not_edit_this_learners_source_is_not_reused():
    """Two accomplices send a key with an edit of a function other than the key's: the third
    learner's kernel says "remembered", the edit does not turn its source into the candidate,
    and nothing is recalled (the grader asks the kernel to search)."""
    ada = examine(fn(SLIP, "a"))
    lie = dict(ada, repairs=[dict(ada["repairs"][0], source="def rnn_cell_forward(xt, a_prev, parameters):\n"
                                                              "    return reference(xt, a_prev, parameters)\n")])
    searches = RememberedSearches()
    searches.keep("rnn", NAME, lie, "mallory")
    searches.keep("rnn", NAME, lie, "trudy")
    victim = examine(fn("#\n" + SLIP, "v"), known=searches.known("rnn", NAME))
    assert victim["remembered"] and searches.recall("rnn", NAME, victim) is None


def test_an_edit_is_checked_line_for_line():
    source = "def f(a):\n    b = (a +\n         1)\n    return b\n"
    r = {"offset": 1, "before": "b = (a +\n         1)", "after": "b = a - 1",
         "source": "def f(a):\n    b = a - 1\n    return b\n"}
    assert edits_into(source, r)
    assert not edits_into(source, dict(r, offset=2))
    assert not edits_into(source, dict(r, before="b = a"))
    assert not edits_into(source, dict(r, source="def f(a):\n    b = a - 1\n    return b + 1\n"))
    assert not edits_into(source.replace("return b", "return -b"), r)


@pytest.mark.sandbox
@pytest.mark.slow   # the class graded twice, to compare (conftest's _CLASS_GRADED_AGAIN)
def test_a_class_sharing_a_wrong_function_gets_what_each_would_get_alone(tmp_path):
    """Four learners hand in the same wrong lstm_cell_backward, each at another place in their
    cell; graded by one worker, the later ones' searches are remembered (by two, as the class's
    journal has them). Every entry is the one a grading with ``Repair.remember`` off gives, line
    numbers included; and no journal is left behind."""
    import nbformat
    from test_repair import REPO, lstm_cell_backward_source
    from traitlets.config import Config

    from assignments.grading.authoring.submissions import answer_cells, fill
    from assignments.grading.run import pipeline
    with open(f"{REPO}/samples/answers/{A.id}/ada.py", encoding="utf-8") as f:
        answers = answer_cells(f.read())
    for i, student in enumerate(["sam", "tess", "uma", "vic"]):
        folder = tmp_path / "in" / "submitted" / student / A.id
        folder.mkdir(parents=True)
        mine = dict(answers, lstm_cell_backward="#\n" * i + lstm_cell_backward_source())
        nbformat.write(fill(f"{REPO}/release/{A.id}/{A.notebook}.ipynb", mine), str(folder / (A.notebook + ".ipynb")))
    off = Config()
    off.Repair.remember = False
    graded = {}
    for label, config, workers in (("remembered", None, 1), ("two workers", None, 2), ("searched", off, 1)):
        results = pipeline.grade(A, str(tmp_path / "in"), str(tmp_path / label), overrides=config, workers=workers)
        graded[label] = {s["student"]: next(e for e in s["exercises"] if e["id"] == "lstm_cell_backward")
                         for s in results["submissions"]}
    assert graded["remembered"] == graded["two workers"] == graded["searched"]
    assert not list((tmp_path / "two workers").rglob("learned-*"))
    lines = [graded["searched"][s]["repair"]["line"] for s in ("sam", "tess", "uma", "vic")]
    assert lines == [lines[0] + i for i in range(4)]


def test_a_search_that_found_nothing_is_run_again():
    """Nothing can check "no repair": two accomplices who say so of a classmate's function
    (with its key) must not withhold that classmate's repair, so such a search is never reused."""
    ada = examine(fn(SLIP, "a"))
    nothing = dict(ada, repairs=[], tried=800, cut=False)
    searches = RememberedSearches()
    searches.keep("rnn", NAME, nothing, "mallory")
    searches.keep("rnn", NAME, nothing, "trudy")
    assert searches.known("rnn", NAME) == []
    victim = examine(fn("#\n" + SLIP, "v"), known=searches.known("rnn", NAME))
    assert not victim.get("remembered") and victim["repairs"]
