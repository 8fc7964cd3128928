"""End to end: `python -m assignments grade` on the sample class, with real nbgrader and
real kernels."""
import csv
import json
import os
import subprocess
import sys

import nbformat
import pytest
from helpers import REPO

EXPECTED = os.path.join(REPO, "tests", "expected", "sample_results.json")

# What each sample student must get: (status, total, {function: diagnoses} for failing ones).
CLASS = {
    "ada": ("graded", 100.0, {}),
    "ben": ("graded", None, {"rnn_backward": ["rnn_grads_not_accumulated"]}),
    "chloe": ("graded", None, {"lstm_backward": ["lstm_grads_not_accumulated", "lstm_stale_dc_prev"]}),
    "dev": ("graded", None, {"rnn_cell_forward": [], "lstm_backward": []}),
    "eve": ("graded", None, {"rnn_cell_forward": ["rnn_output_from_a_prev"]}),
    "finn": ("unreadable", 0.0, None),
}


def by_student(results):
    return {s["student"]: s for s in results["submissions"]}


def test_results_follow_the_class_table(sample_class):
    subs = by_student(sample_class["results"])
    assert set(subs) == set(CLASS)
    for student, (status, total, failing) in CLASS.items():
        s = subs[student]
        assert s["status"] == status, student
        if total is not None:
            assert s["score"] == total, student
        if failing is None:
            continue
        wrong = {e["id"]: e["diagnoses"] for e in s["exercises"] if not e["passed"]}
        assert wrong == failing, student
        for e in s["exercises"]:
            assert e["passed"] == (e["score"] == e["max_score"])
            assert e["feedback"]


def test_results_json_is_the_expected_file(sample_class, request):
    # receipts hash the engine's own code, so they move with every change of it: test_receipts.py checks them
    found = dict(sample_class["results"], submissions=[{k: v for k, v in s.items() if k != "receipt"}
                                                       for s in sample_class["results"]["submissions"]])
    if request.config.getoption("--update-goldens"):
        with open(EXPECTED, "w", encoding="utf-8") as f:
            json.dump(found, f, indent=2, ensure_ascii=False)
            f.write("\n")
    with open(EXPECTED, encoding="utf-8") as f:
        expected = json.load(f)
    assert found == expected, "results changed; if intended: pytest tests/test_grading.py --update-goldens"


def test_results_json_on_disk_matches_schema(sample_class):
    with open(os.path.join(sample_class["out"], "results.json"), encoding="utf-8") as f:
        results = json.load(f)
    assert results["assignment"] == "rnn_step_by_step" and results["max_score"] == 100.0
    for s in results["submissions"]:
        assert set(s) == {"student", "status", "message", "score", "flags", "exercises", "receipt"}
        assert s["status"] in ("graded", "unreadable", "incomplete", "error")
        for e in s["exercises"]:
            assert {"id", "score", "max_score", "passed", "diagnoses", "signature", "feedback"} <= set(e) <= {
                    "id", "score", "max_score", "passed", "diagnoses", "signature", "feedback", "location", "repair"}
            assert not (e["passed"] and e["signature"])


def test_submissions_are_never_modified(sample_class):
    assert sample_class["before"] == sample_class["after"]


def test_stderr_noise_costs_nothing(sample_class):
    dev = {e["id"]: e for e in by_student(sample_class["results"])["dev"]["exercises"]}
    assert dev["rnn_cell_backward"]["passed"]   # warns and prints to stderr, but is right


def test_grades_csv_is_nbgraders_export(sample_class):
    with open(os.path.join(sample_class["out"], "grades.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name",
                             "email", "raw_score", "late_submission_penalty", "score", "max_score"]
    scores = {r["student_id"]: float(r["score"]) for r in rows}
    # every student of the run, the unreadable one with 0
    assert scores == {s["student"]: s["score"] for s in sample_class["results"]["submissions"]}
    assert scores["finn"] == 0


def test_feedback_explains_without_hidden_tests(sample_class):
    folder = os.path.join(sample_class["out"], "feedback")
    for student in ("ada", "ben", "chloe", "dev", "eve"):
        path = os.path.join(folder, student, "rnn_step_by_step", "rnn_step_by_step.html")
        with open(path, encoding="utf-8") as f:
            html = f.read()
        assert "HIDDEN TESTS" not in html and "cases.py" not in html and "Hidden tests of" not in html
        if student == "ben":
            assert "rnn_grads_not_accumulated" in html and "+=" in html


def test_autograded_cells_carry_the_verdicts(sample_class):
    path = os.path.join(sample_class["out"], "autograded", "ben", "rnn_step_by_step", "rnn_step_by_step.ipynb")
    nb = nbformat.read(path, as_version=4)
    verdicts = {c.metadata["judge"]["id"]: c.metadata["judge"] for c in nb.cells if "judge" in c.metadata}
    assert len(verdicts) == 8 and verdicts["rnn_backward"]["diagnoses"] == ["rnn_grads_not_accumulated"]


@pytest.mark.slow   # end to end: `make test` runs it, `make test-quick` does not
def test_command_line_rerun_gives_the_same_results(sample_class, tmp_path):
    """The real command, twice into the same folder: same results.json both times."""
    cmd = [sys.executable, "-m", "assignments", "grade", "--submissions", sample_class["submissions"],
           "--out", str(tmp_path), "--quiet"]
    for _ in range(2):
        run = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        with open(tmp_path / "results.json", encoding="utf-8") as f:
            assert json.load(f) == sample_class["results"]


def test_layout_without_submitted_folder_is_accepted(sample_class, tmp_path):
    """--submissions may also point at the submitted/ folder itself."""
    import shutil

    from assignments.grading.run import pipeline
    from assignments.rnn_step_by_step import ASSIGNMENT as A
    shutil.copytree(os.path.join(sample_class["submissions"], "submitted", "ben"), tmp_path / "in" / "ben")
    results = pipeline.grade(A, str(tmp_path / "in"), str(tmp_path / "out"))
    assert [s["student"] for s in results["submissions"]] == ["ben"]
    assert results["submissions"][0] == by_student(sample_class["results"])["ben"]


def test_a_staged_notebook_reads_back_as_nbformat_writes_it():
    """Staging writes compact JSON (the worker parses it; nbgrader writes the autograded
    notebook with its own encoder): it reads back as nbformat's own text does, transient
    metadata stripped the same way, with text nbformat splits into lines and non-ASCII kept."""
    import copy

    from assignments.grading.run import pipeline
    path = os.path.join(REPO, "release", "rnn_step_by_step", "rnn_step_by_step.ipynb")
    nb = nbformat.read(path, as_version=4)
    nb.metadata["signature"] = "sha256:transient"
    nb.cells[0].metadata["trusted"] = True
    nb.cells[0].source += "\n第二行 é\n"
    theirs = nbformat.reads(nbformat.v4.writes(copy.deepcopy(nb)), as_version=4)
    text = pipeline.staged_text(copy.deepcopy(nb))
    assert nbformat.reads(text, as_version=4) == theirs and text.endswith("}\n") and "第二行" in text
    assert "signature" not in theirs.metadata and "trusted" not in theirs.cells[0].metadata
