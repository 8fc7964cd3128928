"""GetGradesAtOnce (grading/upstream/getgrades.py) against nbgrader's own GetGrades: the same
scores, points and comments on the feedback page's cells, from a few queries instead of
a few per cell."""
import nbformat
import pytest
from helpers import course_gradebook, graded_release, sql_statements
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import GetGrades

from assignments.grading.upstream import getgrades
from assignments.grading.upstream.getgrades import GetGradesAtOnce, GetGradesFromNotebook
from assignments.grading.upstream.saveautogrades import SaveAutoGradesAtOnce


def fields(nb, resources):
    cells = [(c.metadata.get("nbgrader", {}).get("grade_id"), c.metadata.get("nbgrader", {}).get("score"),
              c.metadata.get("nbgrader", {}).get("points"), c.metadata.get("nbgrader", {}).get("comment", "-"))
             for c in nb.cells]
    return cells, {k: resources["nbgrader"][k] for k in ("score", "max_score", "late_penalty")}


def test_the_same_fields_as_nbgraders_own_in_fewer_queries(tmp_path):
    config, resources = course_gradebook(tmp_path / "c")
    nb = graded_release(config)
    SaveAutoGradesAtOnce(config=config).preprocess(nbformat.from_dict(nb), resources)
    (stock_nb, stock_res), stock_sql = sql_statements(
        config.CourseDirectory.db_url, lambda: GetGrades(config=config).preprocess(nbformat.from_dict(nb), resources))
    stock = fields(stock_nb, stock_res)
    (our_nb, our_res), our_sql = sql_statements(
        config.CourseDirectory.db_url, lambda: GetGradesAtOnce(config=config).preprocess(nbformat.from_dict(nb), resources))
    assert fields(our_nb, our_res) == stock
    scored = [c for c in stock[0] if c[1] is not None]
    assert len({score for _, score, _, _ in scored}) >= 3 and stock[1]["max_score"] > stock[1]["score"] > 0
    assert any(comment == "No response." for *_, comment in stock[0])
    assert our_sql["SELECT"] <= 10 < stock_sql["SELECT"], (our_sql, stock_sql)


def test_a_cell_the_gradebook_lacks_raises_as_nbgrader_does(tmp_path):
    config, resources = course_gradebook(tmp_path / "c")
    nb = graded_release(config)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("test_"))
    cell.metadata["nbgrader"]["grade_id"] = "test_not_in_the_gradebook"
    for step in (GetGrades, GetGradesAtOnce, GetGradesFromNotebook):
        with pytest.raises(MissingEntry):
            step(config=config).preprocess(nbformat.from_dict(nb), resources)


def test_scores_worked_out_from_the_notebook_are_those_saved_and_read_back(tmp_path):
    """A worker's page (GetGradesFromNotebook): the fields nbgrader's GetGrades reads after
    SaveAutoGrades wrote them, without either writing or reading a grade; a grade cell the
    notebook lacks counts no score and keeps its points, as its empty row does."""
    totals = []
    for case in ("whole", "a test cell missing"):
        config, resources = course_gradebook(tmp_path / case.replace(" ", "_"))
        nb = graded_release(config)
        if case != "whole":
            nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "test_rnn_forward"]
        SaveAutoGradesAtOnce(config=config).preprocess(nbformat.from_dict(nb), resources)
        saved = fields(*GetGrades(config=config).preprocess(nbformat.from_dict(nb), dict(resources)))
        ours = fields(*GetGradesFromNotebook(config=config).preprocess(nbformat.from_dict(nb), dict(resources)))
        assert ours == saved
        totals.append(saved[1])
        _, sql = sql_statements(config.CourseDirectory.db_url,
                                lambda: GetGradesFromNotebook(config=config).preprocess(nbformat.from_dict(nb), dict(resources)))
        assert sql["SELECT"] == 0   # the cells' points are read once per gradebook
    assert totals[1]["score"] < totals[0]["score"] and totals[1]["max_score"] == totals[0]["max_score"]


def test_a_worker_leaves_out_the_grades_steps_only_for_the_courses_lists(monkeypatch):
    from traitlets.config import Config

    from assignments.grading.run.course import load_config
    from assignments.grading.upstream import stock
    monkeypatch.delenv("RNN_COURSE_STOCK_NBGRADER", raising=False)   # the course's own lists, in either mode
    config = load_config("/nonexistent")
    before = list(config.Autograde.autograde_preprocessors)
    assert getgrades.in_a_worker(config)
    assert [p for p in before if p not in getgrades.SCORED_IN_A_WORKER] == config.Autograde.autograde_preprocessors
    assert len(before) == len(config.Autograde.autograde_preprocessors) + 2
    assert "assignments.grading.upstream.getgrades.GetGradesFromNotebook" in config.GenerateFeedback.preprocessors
    other = Config()
    other.Autograde.autograde_preprocessors = list(before)   # a page that reads the gradebook some other way
    other.GenerateFeedback.preprocessors = ["nbgrader.preprocessors.GetGrades"]
    assert not getgrades.in_a_worker(other) and other.Autograde.autograde_preprocessors == before
    stocked = load_config("/nonexistent")
    stock(stocked)   # nbgrader's own SaveAutoGrades and GetGrades: the worker keeps them
    lists = (list(stocked.Autograde.autograde_preprocessors), list(stocked.GenerateFeedback.preprocessors))
    assert not getgrades.in_a_worker(stocked)
    assert (stocked.Autograde.autograde_preprocessors, stocked.GenerateFeedback.preprocessors) == lists


def test_a_workers_cells_are_the_gradebooks_own(tmp_path):
    """The points and commented cells a worker's page reads with the project's plain query are
    those nbgrader's ORM gives; a notebook the gradebook lacks raises MissingEntry as it does."""
    from nbgrader.api import Gradebook

    from assignments.rnn_step_by_step import ASSIGNMENT as A
    config, _ = course_gradebook(tmp_path / "c")
    db = config.CourseDirectory.db_url
    with Gradebook(db) as gb:
        found = gb.find_notebook(A.notebook, A.id)
        points = {c.name: float(c.max_score) for c in [*found.grade_cells, *found.task_cells]}
        commented = {c.name for c in [*found.solution_cells, *found.task_cells]}
    assert getgrades._cells(db, A.id, A.notebook) == (points, commented) and points and commented
    for assignment, notebook in ((A.id, "not_a_notebook"), ("not_an_assignment", A.notebook)):
        with pytest.raises(MissingEntry):
            getgrades._cells(db, assignment, notebook)
