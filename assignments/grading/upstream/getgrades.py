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
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json).
"""
from nbgrader.preprocessors import GetGrades

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
