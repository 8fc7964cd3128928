"""Symbolic links and special files never carry a grade (run/pipeline.py's ``stage``,
upstream/collect.py): a learner who links their notebook to the course's source notebook
earned every point and was shown the solutions while the grader followed links. Each attack
is also run with the protection left out, where it gets through."""
import os
import shutil

import nbformat
import pytest
from helpers import REPO, build_samples
from test_term import AID, Term

from assignments.grading.run import pipeline

SOURCE_NOTEBOOK = os.path.join(REPO, "source", AID, AID + ".ipynb")


def _solution_line():
    """A line of the reference's code that only the source notebook holds."""
    import inspect

    from assignments.rnn_step_by_step import reference
    return next(line.strip() for line in inspect.getsource(reference.lstm_cell_backward).splitlines()
                if "dot" in line or "@" in line)


ATTACKS = ["notebook", "assignment folder", "student folder", "extra file", "pipe"]


def _plant(folder, samples, how, student):
    """``student``'s submission in ``folder``, which is or holds a link (or a pipe)."""
    mine = folder / student / AID
    if how == "notebook":
        mine.mkdir(parents=True)
        os.symlink(SOURCE_NOTEBOOK, mine / (AID + ".ipynb"))
    elif how == "assignment folder":
        (folder / student).mkdir()
        os.symlink(os.path.dirname(SOURCE_NOTEBOOK), mine)
    elif how == "student folder":
        os.symlink(os.path.join(samples, "submitted", "ada"), folder / student)
    elif how in ("extra file", "pipe"):
        shutil.copytree(os.path.join(samples, "submitted", "ben", AID), mine)
        if how == "pipe":
            os.mkfifo(mine / "notes.txt")
        else:
            os.symlink(os.path.join(REPO, "assignments", "rnn_step_by_step", "reference.py"), mine / "notes.py")


def _class(root, attacks):
    """Ada's class, plus one student per attack (``_student``)."""
    samples = build_samples(str(root / "samples"))
    folder = root / "in"
    shutil.copytree(os.path.join(samples, "submitted", "ada"), folder / "ada")
    for how in attacks:
        _plant(folder, samples, how, _student(how))
    return folder


def _student(how):
    return "mallory_" + how.replace(" ", "_")


@pytest.fixture(scope="module")
def linked(assignment, tmp_path_factory):
    """Every attack in one class, graded once: each is refused and the class goes on."""
    root = tmp_path_factory.mktemp("links")
    results = pipeline.grade(assignment, str(_class(root, ATTACKS)), str(root / "out"))
    return root / "out", {s["student"]: s for s in results["submissions"]}


@pytest.mark.parametrize("how", ATTACKS)
def test_a_submission_that_is_or_holds_a_link_is_refused(linked, how):
    out, found = linked
    assert found["ada"]["status"] == "graded" and found["ada"]["score"] == 100
    mallory = found[_student(how)]
    assert mallory["status"] == "unreadable" and mallory["score"] == 0, mallory
    assert "symbolic link or a special file" in mallory["message"]
    assert any(f.startswith("tampered:link:") for f in mallory["flags"]), mallory["flags"]
    for kind in ("autograded", "feedback"):   # nothing of it reached a page or a graded notebook
        assert not os.path.exists(out / kind / _student(how)), kind


def test_without_the_refusal_a_linked_notebook_earns_every_point(assignment, tmp_path, monkeypatch):
    """The attack itself: with ``stage`` following links as it did, the link to the source
    notebook is graded as the solutions."""
    folder = _class(tmp_path, ["notebook"])
    monkeypatch.setattr(pipeline.inspect_submission, "not_regular", lambda folder: [])
    monkeypatch.setattr(pipeline.inspect_submission, "read_regular",
                        lambda path: open(path, encoding="utf-8").read())
    results = pipeline.grade(assignment, str(folder), str(tmp_path / "out"))
    mallory = next(s for s in results["submissions"] if s["student"] == _student("notebook"))
    assert mallory["status"] == "graded" and mallory["score"] == 100


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("collect", ["course", "nbgrader's own"])
def test_collect_keeps_a_link_in_the_exchange_a_link(tmp_path, collect):
    """A student replaces the notebook they submitted by a link to the course's source notebook,
    in the exchange (every student may write there). The course's collect copies the link as a
    link, and the grader refuses it; nbgrader's own collect copies the solutions."""
    t = Term(str(tmp_path))
    t.nbgrader("release_assignment", AID)
    t.work_on("mallory", "ada.py")
    t.submit("mallory")
    inbound = os.path.join(t.exchange, "rnn-step-by-step", "inbound")
    (submitted,) = os.listdir(inbound)
    planted = os.path.join(inbound, submitted, AID + ".ipynb")
    os.remove(planted)
    os.symlink(os.path.join(t.course, "source", AID, AID + ".ipynb"), planted)
    extra = [] if collect == "course" else ["--ExchangeFactory.collect=nbgrader.exchange.default.collect.ExchangeCollect"]
    t.nbgrader("collect", AID, *extra)
    collected = os.path.join(t.folder("submitted", "mallory"), AID + ".ipynb")
    if collect == "course":
        assert os.path.islink(collected)
        t.grade()
        mallory = t.results()["mallory"]
        assert mallory["status"] == "unreadable" and mallory["score"] == 0
        assert not os.path.exists(t.folder("feedback", "mallory"))
    else:   # the solutions themselves, now the student's "submission"
        assert not os.path.islink(collected)
        nb = nbformat.read(collected, as_version=4)
        assert any(_solution_line() in c.source for c in nb.cells)
