"""nbgrader's OverwriteKernelspec (which puts back the source notebook's kernelspec), with that
kernelspec read once per process from a worker's private gradebook.

The stock preprocessor opens the gradebook and looks the notebook up for every submission
(2 ms of a worker's conversion): a row that is the same for every learner. A worker's private
gradebook (``speedups.scratch``) is a copy of the seed, which holds the assignment, and
grading only adds submissions to it, so its notebook's kernelspec is read for the first
submission only; any other gradebook is read each time, as nbgrader does. What the notebook
gets is nbgrader's rule: the source's kernelspec when it has one, else the submission's own.
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json).
"""
import json

from nbgrader.api import Gradebook
from nbgrader.preprocessors import OverwriteKernelspec

from . import speedups

_KEPT: dict = {}   # (db_url, notebook, assignment) -> the notebook row's kernelspec (its JSON text, or None)


def source_kernelspec(db_url, notebook, assignment):
    """The source notebook's kernelspec as the gradebook keeps it (JSON text, or None);
    raises nbgrader's MissingEntry for a notebook it does not have, as OverwriteKernelspec does."""
    key = (db_url, notebook, assignment)
    if key in _KEPT:
        return _KEPT[key]
    with Gradebook(db_url) as gradebook:
        text = gradebook.find_notebook(notebook, assignment).kernelspec
    if speedups.is_scratch(db_url):
        _KEPT[key] = text
    return text


class OverwriteKernelspecAtOnce(OverwriteKernelspec):
    """OverwriteKernelspec reading the source notebook's kernelspec once per worker."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        text = source_kernelspec(info["db_url"], info["notebook"], info["assignment"])
        kernelspec = json.loads(text) if text is not None else None
        if kernelspec:
            nb.metadata["kernelspec"] = kernelspec
        return nb, resources
