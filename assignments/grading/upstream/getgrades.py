"""nbgrader's GetGrades (the feedback page's scores and comments), with one query per table.

The stock preprocessor looks each grade and comment up with its own query (four joins):
about thirty round trips per feedback page. This one reads them from the submitted
notebook's rows, fetched once (saveautogrades.BatchedGradebook); nbgrader's own code
still fills every cell's fields, and a row that is not among them is looked up as
nbgrader does, so a missing one raises the same MissingEntry.

One thing it does that nbgrader does not: a test cell scored by hand no longer prints the
autograder's score. The judge writes a test cell's score as the cell's result (``12.6``,
which nbgrader's autograde reads); once a grader has given another score in formgrader, the
page's heading says that one, and the result below it would contradict it. That result is
dropped from the page; the judge's words stay.

``GetGradesFromNotebook``, a worker's, works the scores out from the notebook itself
(``in_a_worker``): the worker no longer writes them into its private gradebook to read them back.
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json).
"""
import functools
import math
from types import SimpleNamespace

from nbgrader import utils
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import GetGrades

from . import speedups
from .saveautogrades import batched


class GetGradesAtOnce(GetGrades):
    """GetGrades reading a notebook's grades and comments in one query each."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with batched(self, resources):
            nb, resources = super(GetGrades, self).preprocess(nb, resources)   # cell by cell, as nbgrader's
            for cell in nb.cells:
                if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade") and cell.outputs \
                        and overridden(self.gradebook.find_grade(cell.metadata.nbgrader.grade_id, self.notebook_id,
                                                                 self.assignment_id, self.student_id)):
                    cell.outputs = [o for o in cell.outputs if o.output_type != "execute_result"]
            notebook = self.gradebook.submission
            late_penalty = notebook.late_submission_penalty
            if late_penalty is None:
                late_penalty = 0
            else:
                self.log.warning("Late submission penalty: {}".format(late_penalty))
            info["score"] = notebook.score - late_penalty
            info["max_score"] = notebook.max_score
            info["late_penalty"] = late_penalty
        return nb, resources


def overridden(grade):
    """Whether a grader's score stands in place of a different one of the autograder's."""
    return grade.manual_score is not None and grade.auto_score is not None and grade.manual_score != grade.auto_score


class GetGradesFromNotebook(GetGrades):
    """GetGrades for a worker's page: each cell's score and comment as nbgrader's SaveAutoGrades
    would have written them into the worker's private gradebook (``utils.determine_grade``, and
    "No response." for an answer left as released), worked out from the autograded notebook
    instead of written there and read back; the notebook's cells and their points are read from
    the gradebook once per worker. The sums are the gradebook's: each cell's score, those that
    have one, and every cell's points. A worker's gradebook holds no grader's score and no late
    penalty; a submission that has either in the class's gradebook gets its page drawn from that
    one (pipeline.store), with GetGradesAtOnce."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        self.notebook_id, self.assignment_id = info["notebook"], info["assignment"]
        self.student_id, self.db_url = info["student"], info["db_url"]
        points, commented = _cells(self.db_url, self.assignment_id, self.notebook_id)
        self.gradebook = _Scored(nb, points, commented, self.log)
        nb, resources = super(GetGrades, self).preprocess(nb, resources)   # cell by cell, as nbgrader's
        info["score"] = math.fsum(s for name in points if (s := self.gradebook.scores.get(name)) is not None)
        info["max_score"] = math.fsum(points.values())
        info["late_penalty"] = 0
        return nb, resources


@functools.lru_cache(maxsize=8)
def _cells(db_url, assignment, notebook):
    """({the notebook's grade and task cells: their points}, the names of its cells that take a
    comment, its solution and task cells), as the gradebook holds them (``speedups.assignment_rows``);
    MissingEntry when it does not hold the notebook, as nbgrader's find_notebook raises."""
    try:
        _, notebooks, cells, _ = speedups.assignment_rows(db_url, assignment)
    except ValueError:
        raise MissingEntry() from None
    if notebook not in {name for name, _ in notebooks}:
        raise MissingEntry()
    mine = [(name, kind, points) for nb, name, kind, points, _ in cells if nb == notebook]
    return ({name: float(points) for name, kind, points in mine if kind in ("GradeCell", "TaskCell")},
            frozenset(name for name, kind, _ in mine if kind in ("SolutionCell", "TaskCell")))


class _Scored:
    """What GetGrades asks of a gradebook, answered from the notebook."""

    def __init__(self, nb, points, commented, log):
        self.points, self.commented, self.scores, self.comments = points, commented, {}, {}
        for cell in nb.cells:
            name = cell.metadata.get("nbgrader", {}).get("grade_id")
            if utils.is_grade(cell):
                score = utils.determine_grade(cell, log)[0]
                self.scores[name] = None if score is None else float(score)
            if utils.is_solution(cell) or utils.is_task(cell):
                unchanged = cell.metadata.nbgrader.get("checksum", None) == utils.compute_checksum(cell)
                self.comments[name] = "No response." if unchanged and not utils.is_task(cell) else None

    def find_grade(self, name, *key):
        if name not in self.points:
            raise MissingEntry()
        return SimpleNamespace(score=self.scores.get(name), max_score=self.points[name])

    def find_comment(self, name, *key):
        if name not in self.commented:
            raise MissingEntry()
        return SimpleNamespace(comment=self.comments.get(name))


SCORED_IN_A_WORKER = ("assignments.grading.upstream.saveautogrades.SaveAutoGradesAtOnce",
                      "nbgrader.preprocessors.AssignLatePenalties")
"""The steps a worker leaves out when its page's scores come from the notebook (``in_a_worker``)."""


def in_a_worker(config):
    """A worker's configuration, its private gradebook no longer written with grades: its
    Autograde leaves out SaveAutoGradesAtOnce and AssignLatePenalties, and its GenerateFeedback
    runs GetGradesFromNotebook in place of GetGradesAtOnce. Only when both lists name them (the
    course's nbgrader_config.py does): another configuration is left as it is."""
    autograde = config.Autograde.get("autograde_preprocessors")
    feedback = config.GenerateFeedback.get("preprocessors")
    ours = f"{__name__}.GetGradesAtOnce"
    if not (isinstance(autograde, list) and isinstance(feedback, list)
            and SCORED_IN_A_WORKER[0] in map(_name, autograde) and ours in map(_name, feedback)):
        return False
    config.Autograde.autograde_preprocessors = [p for p in autograde if _name(p) not in SCORED_IN_A_WORKER]
    config.GenerateFeedback.preprocessors = [f"{__name__}.GetGradesFromNotebook" if _name(p) == ours else p
                                             for p in feedback]
    return True


def _name(step):
    return step if isinstance(step, str) else f"{step.__module__}.{step.__qualname__}"
