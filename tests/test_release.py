"""What course staff rely on: release/ is current, leak-free, and shows the reference's values."""
import os
import re

import nbformat
import pytest
from helpers import RELEASE, REPO

from assignments.grading.authoring import staff_checks as release_checks
from assignments.rnn_step_by_step.exercises import EXERCISES

SOURCE = os.path.join(REPO, "source", "rnn_step_by_step")


def test_release_is_what_the_command_builds(assignment):
    assert release_checks.drift(assignment, REPO) == []


def test_release_leaks_nothing(assignment):
    assert release_checks.leaks(assignment, RELEASE) == []


def test_leak_check_would_catch_the_source(assignment):
    problems = release_checks.leaks(assignment, SOURCE)
    assert any("BEGIN SOLUTION" in p for p in problems)
    assert any("BEGIN HIDDEN TESTS" in p for p in problems)
    assert any("statements of the reference" in p for p in problems)


@pytest.mark.parametrize("folder", [SOURCE, RELEASE], ids=["source", "release"])
def test_expected_values_are_what_the_reference_prints(assignment, folder):
    assert release_checks.expected_values(assignment, os.path.join(folder, "rnn_step_by_step.ipynb")) == []


def test_expected_value_check_catches_a_typed_number(assignment, tmp_path):
    nb = nbformat.read(os.path.join(RELEASE, "rnn_step_by_step.ipynb"), as_version=4)
    cell = next(c for c in nb.cells if c.source.startswith("<!-- expected output of rnn_forward"))
    cell.source = re.sub(r"0\.79560373", "0.79560374", cell.source)
    nbformat.write(nb, tmp_path / "nb.ipynb")
    assert release_checks.expected_values(assignment, str(tmp_path / "nb.ipynb"))


def test_solution_earns_everything_and_stub_nothing(assignment):
    assert release_checks.solution_and_stub(assignment, REPO) == []


def test_graded_cells_follow_the_contract():
    nb = nbformat.read(os.path.join(RELEASE, "rnn_step_by_step.ipynb"), as_version=4)
    meta = [(c, c.metadata.get("nbgrader", {})) for c in nb.cells]
    answers = {m["grade_id"]: c for c, m in meta if m.get("solution")}
    tests = {m["grade_id"]: m for c, m in meta if m.get("grade")}
    assert list(answers) == [e.name for e in EXERCISES]
    for e in EXERCISES:
        src = answers[e.name].source
        assert src.startswith(f"def {e.name}({', '.join(e.args)}):\n    \"\"\"")
        assert "raise NotImplementedError()" in src
        assert tests[f"test_{e.name}"]["points"] == e.points and tests[f"test_{e.name}"]["locked"]
    assert sum(m["points"] for m in tests.values()) == 100
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
