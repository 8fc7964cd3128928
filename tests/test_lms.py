"""Grades for an LMS (assignments/grading/reports/lms.py), checked against what Canvas's and
Moodle's gradebook imports do with a CSV file.

The two readers below restate, in Python, the rules of the vendors' importers as published
in their source: Canvas's GradebookImporter (instructure/canvas-lms,
app/models/gradebook_importer.rb) and Moodle's CSV grade import (moodle/moodle,
grade/import/csv/classes/load_data.php with lib/csvlib.class.php), as docs/report.md
describes them. Each returns what the LMS would record, or raises where it would refuse
the file.
"""
import csv
import io
import os
import re
import shutil
import subprocess
import sys

import pytest
from helpers import REPO
from nbgrader.api import Gradebook

from assignments.grading.reports import lms


class Refused(Exception):
    pass


def canvas_import(text, users):
    """What Canvas records from ``text``: {canvas user: (assignment title, points possible,
    {grade})}. ``users`` are the course's students: dicts with id, sis_user_id, login, name."""
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    # header: "Student" then "ID" first, more than three columns, the student block ending in Section
    if not (len(header) > 3 and "Student" in header[0] and "ID" in header[1]):
        raise Refused("Invalid header row")
    student_columns = 3
    sis_user = sis_login = None
    if re.search(r"SIS\s+Login\s+ID", header[2]):
        sis_login, student_columns = 2, 4
    elif re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3]):
        sis_user, sis_login, student_columns = 2, 3, 5
    if "Section" not in header[student_columns - 1]:
        raise Refused("Invalid header row")
    assignments = [(i, h) for i, h in enumerate(header[student_columns:], student_columns)
                   if not re.search(lms.CANVAS_RESERVED.pattern, h)]
    points, grades = {}, {}
    for row in rows[1:]:
        if not row or all(not c.strip() for c in row):
            continue
        if "Points Possible" in row[0]:
            points = {h: row[i] for i, h in assignments}
            continue
        user = None
        if row[1].strip():
            user = next((u for u in users if str(u["id"]) == row[1].strip()), None)
        if user is None and sis_user is not None and row[sis_user]:
            user = next((u for u in users if u.get("sis_user_id") == row[sis_user]), None)
        if user is None and sis_login is not None and row[sis_login]:
            user = next((u for u in users if u.get("login") == row[sis_login]), None)
        if user is None:
            user = next((u for u in users if u["name"] == row[0] or u.get("sortable_name") == row[0]), None)
        if user is None:
            raise Refused(f"no such student: {row[:5]}")
        for i, h in assignments:
            grades.setdefault(h, {})[user["id"]] = float(row[i])
    return {h: (points.get(h), grades.get(h, {})) for _, h in assignments}


def moodle_import(text, users, map_from, map_to):
    """What Moodle records from ``text`` when the import page maps the file's column
    ``map_from`` to the user field ``map_to`` (id, idnumber, email or username) and every
    other numeric column to a new grade item: {item: {moodle user id: grade}}."""
    rows = list(csv.reader(io.StringIO(text)))
    header = [h.strip() for h in rows[0]]
    if len(set(header)) != len(header) or not all(header):
        raise Refused("column names must be present and unique")
    key = header.index(map_from)
    items = {}
    user = None
    for row in rows[1:]:
        if len(row) != len(header):
            raise Refused("csvweirdcolumns: a row has another number of columns than the header")
        if len(row) <= 1:
            continue
        value = row[key].strip()
        if value:   # Moodle skips a blank identifier and keeps the previous row's user
            matches = [u for u in users if str(u[map_to]) == value]
            if not matches:
                raise Refused(f"usermappingerror: no user with {map_to} {value!r}")
            user = matches[0]
        if user is None:
            raise Refused("usermappingerrorusernotfound")
        for i, h in enumerate(header):
            if i == key or h in lms.MOODLE_COLUMNS:
                continue
            grade = row[i].strip()
            if grade in ("", "-"):
                continue
            if not re.fullmatch(r"-?\d+(\.\d+)?", grade):
                raise Refused(f"badgrade: {grade!r}")
            if float(grade) > 100:   # gradepointmax, by default
                raise Refused("gradevaluetoobig")
            items.setdefault(h, {})[user["id"]] = float(grade)
    return items


def grades_csv(out):
    with open(os.path.join(out, "grades.csv"), newline="") as f:
        return {r["student_id"]: float(r["score"]) for r in csv.DictReader(f)}


def read(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


# A course as the LMS knows it: Canvas user ids, SIS ids, logins (= nbgrader ids), names.
ROSTER = {"ada": ("Lovelace", "Ada", "ada@example.edu", "1001"), "ben": ("Okafor", "Ben", "ben@example.edu", "1002"),
          "chloe": ("Durand, Jr.", "Chloé", "chloe@example.edu", ""), "dev": ("", "", "", ""),
          "eve": ("Adams", 'Eve "E."', "eve@example.edu", "1005"), "finn": ("Berg", "Finn", "finn@example.edu", "1006")}


def lms_users():
    users = []
    for i, (sid, (last, first, email, _)) in enumerate(sorted(ROSTER.items())):
        users.append({"id": 1001 + i, "sis_user_id": f"S{i}", "login": sid, "username": sid, "idnumber": f"N{i}",
                      "email": email or f"{sid}@example.edu", "name": f"{first} {last}".strip() or sid,
                      "sortable_name": f"{last}, {first}" if last else sid})
    return users


def test_grade_writes_both_files_beside_grades_csv(sample_class):
    out = sample_class["out"]
    expected = grades_csv(out)
    users = lms_users()
    by_login = {u["login"]: u["id"] for u in users}
    canvas = canvas_import(read(os.path.join(out, "grades_canvas.csv")), users)
    assert list(canvas) == ["rnn_step_by_step"]
    points, grades = canvas["rnn_step_by_step"]
    assert points == "100"
    assert grades == {by_login[s]: score for s, score in expected.items()}
    moodle = moodle_import(read(os.path.join(out, "grades_moodle.csv")), users, "Student ID", "username")
    assert moodle == {"rnn_step_by_step": {by_login[s]: score for s, score in expected.items()}}
    assert set(expected) == {s["student"] for s in sample_class["results"]["submissions"]}


@pytest.fixture
def gradebook_with_roster(sample_class, tmp_path):
    """The sample class's gradebook, with the students' names, emails and LMS ids filled in
    (as `nbgrader db student import` does) and a late penalty for Ben."""
    shutil.copy(os.path.join(sample_class["out"], "results.json"), tmp_path / "results.json")
    shutil.copy(os.path.join(sample_class["out"], "gradebook.db"), tmp_path / "gradebook.db")
    url = "sqlite:///" + str(tmp_path / "gradebook.db")
    with Gradebook(url, "rnn-step-by-step") as gb:
        for sid, (last, first, email, lms_id) in ROSTER.items():
            gb.update_or_create_student(sid, last_name=last or None, first_name=first or None, email=email or None,
                                        lms_user_id=lms_id or None)
        for nb in gb.find_submission("rnn_step_by_step", "ben").notebooks:
            nb.late_submission_penalty = 2.5
        gb.db.commit()
    return tmp_path, url


def export(folder, *args):
    return subprocess.run([sys.executable, "-m", "assignments", "export", str(folder / "results.json"), *args],
                          cwd=REPO, capture_output=True, text=True)


def test_students_are_identified_as_the_gradebook_holds_them(gradebook_with_roster, sample_class):
    folder, url = gradebook_with_roster
    run = export(folder, "--db-url", url, "--out", str(folder / "lms"))
    assert run.returncode == 0, run.stderr
    assert "1 of 6 students have no email address" in run.stderr   # dev has none
    scores = {s["student"]: s["score"] for s in sample_class["results"]["submissions"]}
    scores["ben"] = round(scores["ben"] - 2.5, 2)    # the gradebook's grade: the late penalty applies
    text = read(folder / "lms" / "grades_canvas.csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "rnn_step_by_step"]
    assert rows[1] == ["    Points Possible", "", "", "", "", "100"]
    assert rows[2] == ["Lovelace, Ada", "1001", "", "ada", "", "100"]
    assert rows[4] == ["Durand, Jr., Chloé", "", "", "chloe", "", "88"]   # quoted: the comma stays in the name
    assert rows[5] == ["dev", "", "", "dev", "", "79"]                     # no name: the id
    users = lms_users()
    by_login = {u["login"]: u["id"] for u in users}
    assert canvas_import(text, users)["rnn_step_by_step"][1] == {by_login[s]: v for s, v in scores.items()}
    moodle = read(folder / "lms" / "grades_moodle.csv")
    rows = list(csv.reader(io.StringIO(moodle)))
    assert rows[0] == ["Student ID", "Email address", "LMS user id", "First name", "Last name", "rnn_step_by_step"]
    assert rows[5] == ["eve", "eve@example.edu", "1005", 'Eve "E."', "Adams", "96"]
    # any identifier column the instructor maps on gives the same grades
    expected = {"rnn_step_by_step": {by_login[s]: v for s, v in scores.items()}}
    assert moodle_import(moodle, users, "Student ID", "username") == expected
    # matching on email: Dev has none, and Moodle would give his grade to the row above
    # (Chloé's). That is why export says who lacks an email, and the docs say to map on Student ID.
    wrong = moodle_import(moodle, users, "Email address", "email")["rnn_step_by_step"]
    assert wrong[by_login["chloe"]] == scores["dev"] != scores["chloe"]
    buf = io.StringIO()
    csv.writer(buf).writerows(r for r in rows if r[0] != "dev")
    assert moodle_import(buf.getvalue(), users, "Email address", "email") == {
        "rnn_step_by_step": {by_login[s]: v for s, v in scores.items() if s != "dev"}}


def test_one_format_and_a_canvas_assignment_id(gradebook_with_roster):
    folder, url = gradebook_with_roster
    run = export(folder, "--db-url", url, "--format", "canvas", "--title", "RNN step by step (4321)", "--out",
                 str(folder / "one"))
    assert run.returncode == 0, run.stderr
    assert sorted(os.listdir(folder / "one")) == ["grades_canvas.csv"]
    assert read(folder / "one" / "grades_canvas.csv").splitlines()[0].endswith(",RNN step by step (4321)")


def test_without_a_gradebook_ids_and_scores_from_results(sample_class, tmp_path):
    shutil.copy(os.path.join(sample_class["out"], "results.json"), tmp_path / "results.json")
    run = export(tmp_path)
    assert run.returncode == 0, run.stderr
    assert "no gradebook" in run.stderr
    scores = {s["student"]: s["score"] for s in sample_class["results"]["submissions"]}
    users = lms_users()
    got = canvas_import(read(tmp_path / "grades_canvas.csv"), users)["rnn_step_by_step"][1]
    assert got == {u["id"]: scores[u["login"]] for u in users}


def test_refusals_write_nothing(sample_class, tmp_path):
    shutil.copy(os.path.join(sample_class["out"], "results.json"), tmp_path / "results.json")
    for title in ("Final Score", "Current Grade", "Student", " "):
        run = export(tmp_path, "--format", "canvas", "--title", title)
        assert run.returncode == 2 and "cannot name a Canvas assignment column" in run.stderr, (title, run.stderr)
    assert not (tmp_path / "grades_canvas.csv").exists()
    (tmp_path / "bad.json").write_text("[]")
    run = subprocess.run([sys.executable, "-m", "assignments", "export", str(tmp_path / "bad.json")], cwd=REPO,
                         capture_output=True, text=True)
    assert run.returncode == 2 and "not a results.json" in run.stderr


def test_the_readers_refuse_what_the_lms_refuses():
    """The two readers are strict where the importers are: they would catch a broken file."""
    users = lms_users()
    with pytest.raises(Refused):
        canvas_import("Name,ID,Section,x\nada,1,,3\n", users)             # first column is not Student
    with pytest.raises(Refused):
        canvas_import("Student,ID,SIS Login ID,x\nada,,ada,3\n", users)   # no Section column
    with pytest.raises(Refused):
        moodle_import("Student ID,x,x\nada,1,2\n", users, "Student ID", "username")   # duplicate header
    with pytest.raises(Refused):
        moodle_import("Student ID,x\nada,1,2\n", users, "Student ID", "username")     # ragged row
    with pytest.raises(Refused):
        moodle_import("Student ID,x\nada,1\nzed,2\n", users, "Student ID", "username")  # unknown user
    with pytest.raises(Refused):
        moodle_import("Student ID,x\nada,1;5\n", users, "Student ID", "username")    # not a number


def test_grades_are_written_as_both_lms_parse_them():
    assert [lms._points(x) for x in (100.0, 92.8, 7.75, 0.0, 1 / 3, 99.999)] == ["100", "92.8", "7.75", "0", "0.33", "100"]
