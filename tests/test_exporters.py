"""exporters.py: nbconvert's exporters without the copies and the advisory checks, writing
what nbconvert writes, and still refusing a notebook a preprocessor broke."""
import copy
import os

import nbformat
import pytest
from helpers import REPO, A
from nbconvert.exporters import NotebookExporter
from nbconvert.preprocessors import Preprocessor
from nbgrader.preprocessors import ClearOutput, DeduplicateIds

from assignments.grading.upstream.exporters import AutogradeExporter, OwnedNotebook, read_owned


def notebooks(tmp_path):
    """The release notebook, a learner's (Ada's) and one with outputs of every kind."""
    from assignments.grading.authoring.submissions import answer_cells, fill
    release = os.path.join(REPO, "release", A.id, A.notebook + ".ipynb")
    with open(os.path.join(REPO, "samples", "answers", A.id, "ada.py"), encoding="utf-8") as f:
        ada = fill(release, answer_cells(f.read()))
    ada.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="hello\n"),
                            nbformat.v4.new_output("execute_result", data={"text/plain": "42"}, execution_count=3),
                            nbformat.v4.new_output("error", ename="E", evalue="v", traceback=["\x1b[31mE\x1b[0m"])]
    ada.cells[2].execution_count = 3
    path = str(tmp_path / "ada.ipynb")
    nbformat.write(ada, path)
    return [release, path]


class Tag(Preprocessor):
    def preprocess_cell(self, cell, resources, index):
        cell.metadata["seen"] = index
        return cell, resources


@pytest.mark.parametrize("steps", [[], [ClearOutput, DeduplicateIds], [Tag]])
def test_the_autograde_exporter_writes_what_nbconvert_writes(tmp_path, steps):
    for path in notebooks(tmp_path):
        ours, theirs = AutogradeExporter(), NotebookExporter()
        for exporter in (ours, theirs):
            for step in steps:
                exporter.register_preprocessor(step(), enabled=True)
        assert ours.from_filename(path)[0] == theirs.from_filename(path)[0]


def test_an_owned_notebook_is_read_as_nbformat_reads_it_and_never_copied(tmp_path):
    for path in notebooks(tmp_path):
        with open(path, encoding="utf-8") as f:
            owned = read_owned(f)
        assert isinstance(owned, OwnedNotebook) and owned == nbformat.read(path, as_version=4)
        assert copy.deepcopy(owned) is owned


class Break(Preprocessor):
    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code":
            cell.outputs = "not a list of outputs"
        return cell, resources


def test_a_notebook_a_preprocessor_broke_still_fails_its_conversion(tmp_path):
    exporter = AutogradeExporter(optimistic_validation=True)
    exporter.register_preprocessor(Break(), enabled=True)
    with pytest.raises(nbformat.ValidationError):
        exporter.from_filename(notebooks(tmp_path)[1])
