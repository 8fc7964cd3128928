"""nbgrader's GetGrades (the feedback page's scores and comments), with one query per table.

The stock preprocessor looks each grade and comment up with its own query (four joins):
about thirty round trips per feedback page. This one reads them from the submitted
notebook's rows, fetched once (saveautogrades.BatchedGradebook); nbgrader's own code
still fills every cell's fields, and a row that is not among them is looked up as
nbgrader does, so a missing one raises the same MissingEntry.
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
