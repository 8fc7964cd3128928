"""nbgrader's OverwriteCells (which puts back what a learner changed in the release's
cells), with the assignment's cells read in one query per table.

The stock preprocessor looks every cell up in the gradebook with its own query (three
joins), and every graded cell a second time: about thirty round trips per submission,
for rows that are the same for every learner. This one fetches the notebook's source
cells and graded cells once per submission; nbgrader's own code still decides what to
put back, and a cell that is not among them is looked up as nbgrader does, so a missing
one gives the same warning.

It also knows the release's form of a test cell with hidden tests. The gradebook keeps such a
cell as the source has it, hidden tests included (nbgrader's generate_assignment saves the
cells before it clears the hidden tests), so nbgrader finds every unchanged one "changed",
warns (``Attribute 'checksum' for cell ... has changed!``, once per test cell of a perfect
submission) and puts the source's back. Here a cell that is exactly the release's form of its
source cell is put back quietly, as it is no change of the learner's; any other change is
reported and put back as nbgrader does (nbgrader's issue #1961).
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json).
"""
import copy
import types

from nbgrader.api import Gradebook, GradeCell, MissingEntry, TaskCell
from nbgrader.preprocessors import OverwriteCells

from . import speedups
from .clearhiddentests import ClearHiddenTests


class SourceCells:
    """A gradebook as OverwriteCells uses it: the notebook's source and graded cells from
    rows fetched once. With a worker's private gradebook (``speedups.scratch``), once per
    process: it is a copy of the seed, which holds the assignment, and grading only adds
    submissions to it, so its notebook's cells are the same for every submission."""

    def __init__(self, gradebook, notebook, assignment, db_url=None):
        self._gradebook, self._key = gradebook, (notebook, assignment)
        lasting = speedups.is_scratch(db_url)
        cells = _KEPT.get((db_url, notebook, assignment)) if lasting else None
        if cells is None:
            cells = _read_cells(gradebook, notebook, assignment)
            if lasting:
                _KEPT[(db_url, notebook, assignment)] = cells
        self._source, self._graded, self._notebook = cells

    def find_source_cell(self, name, *key):
        return self._source[name] if name in self._source else self._gradebook.find_source_cell(name, *key)

    def find_graded_cell(self, name, *key):
        return self._graded[name] if name in self._graded else self._gradebook.find_graded_cell(name, *key)

    def find_notebook(self, *key):
        return self._notebook if key == self._key else self._gradebook.find_notebook(*key)


# What OverwriteCells reads of the rows (its cell-by-cell pass and add_missing_cells), copied
# out of the session: copies outlive it, and no commit can expire them.
SOURCE_FIELDS = ("name", "cell_type", "locked", "checksum", "source")
GRADED_FIELDS = ("name", "max_score", "cell_type")
_KEPT: dict = {}   # (db_url, notebook, assignment) -> _read_cells, for scratch gradebooks


def _copy(row, fields):
    return types.SimpleNamespace(**{f: getattr(row, f) for f in fields})


def _read_cells(gradebook, notebook, assignment):
    """({name: source cell}, {name: graded cell}, the notebook's lists of cells): copies."""
    found = gradebook.find_notebook(notebook, assignment)
    source = [_copy(c, SOURCE_FIELDS) for c in found.source_cells]
    graded = {}
    for kind in (TaskCell, GradeCell):   # a grade cell first, as nbgrader looks them up
        # each kind's own table in the same query, not one query per cell as its rows are read
        graded.update((c.name, _copy(c, GRADED_FIELDS)) for c in gradebook.db.query(kind).filter(kind.notebook_id == found.id))
    lists = types.SimpleNamespace(
        source_cells=source, grade_cells=[_copy(c, GRADED_FIELDS) for c in found.grade_cells],
        solution_cells=[_copy(c, ("name",)) for c in found.solution_cells],
        task_cells=[_copy(c, GRADED_FIELDS) for c in found.task_cells])
    return {c.name: c for c in source}, graded, lists


class OverwriteCellsAtOnce(OverwriteCells):
    """OverwriteCells reading the assignment's cells in one query per table."""

    _clear = None   # the ClearHiddenTests that gives a test cell's released form, made once

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        self.notebook_id, self.assignment_id, self.db_url = info["notebook"], info["assignment"], info["db_url"]
        with Gradebook(self.db_url) as gradebook:
            self.gradebook = SourceCells(gradebook, self.notebook_id, self.assignment_id, self.db_url)
            nb, resources = super(OverwriteCells, self).preprocess(nb, resources)   # cell by cell, as nbgrader's
            if self.add_missing_cells:
                nb, resources = self.add_missing_grade_cells(nb, resources)
                nb, resources = self.add_missing_task_cells(nb, resources)
        return nb, resources

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None:
            try:
                source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                source = None   # nbgrader's own pass says so
            if source is not None and source.locked and cell.source != source.source \
                    and cell.source == self.released_source(cell, source.source, resources, cell_index):
                cell.source = source.source   # the hidden tests back: no change of the learner's
        return super().preprocess_cell(cell, resources, cell_index)

    def released_source(self, cell, source, resources, cell_index):
        """What the release has in this cell when its source is ``source``: the source without
        its hidden tests (nbgrader's ClearHiddenTests, as generate_assignment runs it, made once
        per preprocessor; it keeps each text's result for the process)."""
        if self._clear is None:
            self._clear = ClearHiddenTests(parent=self)
        released = copy.deepcopy(cell)
        released.source = source
        try:
            self._clear.preprocess_cell(released, resources, cell_index)
        except Exception:   # a cell it refuses is not a release's cell
            return None
        return released.source
