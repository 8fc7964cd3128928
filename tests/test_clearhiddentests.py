"""The course's ClearHiddenTests (grading/upstream/clearhiddentests.py) against nbgrader's own:
the same cells and the same refusals, with each text's result kept for the process."""
import copy

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell
from nbgrader.preprocessors import ClearHiddenTests as Nbgraders
from traitlets.config import Config

from assignments.grading.upstream import clearhiddentests
from assignments.grading.upstream.clearhiddentests import ClearHiddenTests

GRADED = {"nbgrader": {"grade": True, "grade_id": "test_f", "points": 1, "solution": False, "locked": True,
                       "schema_version": 3}}
TEXTS = [
    "assert f(1) == 1\n### BEGIN HIDDEN TESTS\nassert f(2) == 4\n### END HIDDEN TESTS\nprint('ok')",
    "assert f(1) == 1",
    "### BEGIN HIDDEN TESTS\nx = 1\n### END HIDDEN TESTS\n### BEGIN HIDDEN TESTS\ny = 2\n### END HIDDEN TESTS",
    "#! BEGIN\nhidden\n#! END\nshown",
    "### BEGIN HIDDEN TESTS\nnested\n### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS",   # refused: nested
    "### BEGIN HIDDEN TESTS\nnever closed",                                           # refused: no end
    "",
]


def cleared(step, cell, config):
    try:
        out, _ = step(config=config).preprocess_cell(cell, {}, 0)
        return "cell", out
    except RuntimeError as exc:
        return "refused", str(exc)


@pytest.mark.parametrize("delimiters", [None, ("#! BEGIN", "#! END")])
def test_the_same_cells_and_refusals_as_nbgraders_own_and_again_from_what_is_kept(monkeypatch, delimiters):
    monkeypatch.setattr(clearhiddentests, "_CLEARED", {})
    config = Config()
    if delimiters:
        config.ClearHiddenTests.begin_test_delimeter, config.ClearHiddenTests.end_test_delimeter = delimiters
    makers = [lambda t: new_code_cell(t, metadata=GRADED), new_code_cell, new_markdown_cell]
    for _ in range(2):   # the second time, every text's result is one kept
        for text in TEXTS:
            for make in makers:
                cell = make(text)
                assert cleared(ClearHiddenTests, copy.deepcopy(cell), config) == cleared(Nbgraders, cell, config), text
    assert len(clearhiddentests._CLEARED) == len(TEXTS)
    assert any(isinstance(v, str) for v in clearhiddentests._CLEARED.values()) == (delimiters is None)   # refusals kept


def test_a_kept_result_is_never_another_texts_or_another_delimiters(monkeypatch):
    monkeypatch.setattr(clearhiddentests, "_CLEARED", {})
    config = Config()
    other = Config()
    other.ClearHiddenTests.begin_test_delimeter, other.ClearHiddenTests.end_test_delimeter = "#! BEGIN", "#! END"
    first = cleared(ClearHiddenTests, new_code_cell(TEXTS[3], metadata=GRADED), config)[1].source
    second = cleared(ClearHiddenTests, new_code_cell(TEXTS[3], metadata=GRADED), other)[1].source
    assert first == TEXTS[3] and second == "shown"
