"""nbgrader's GetGrades (the feedback page's scores and comments), with one query per table.

The stock preprocessor looks each grade and comment up with its own query (four joins):
about thirty round trips per feedback page. This one reads them from the submitted
notebook's rows, fetched once (saveautogrades.BatchedGradebook); nbgrader's own code
still fills every cell's fields, and a row that is not among them is looked up as
nbgrader does, so a missing one raises the same MissingEntry.
"""
from nbgrader.api import Gradebook
from nbgrader.preprocessors import GetGrades

from .saveautogrades import BatchedGradebook


class GetGradesAtOnce(GetGrades):
    """GetGrades reading a notebook's grades and comments in one query each."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        self.notebook_id, self.assignment_id = info["notebook"], info["assignment"]
        self.student_id, self.db_url = info["student"], info["db_url"]
        with Gradebook(self.db_url) as gradebook:
            self.gradebook = BatchedGradebook(gradebook, self.notebook_id, self.assignment_id, self.student_id)
            nb, resources = super(GetGrades, self).preprocess(nb, resources)   # cell by cell, as nbgrader's
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
