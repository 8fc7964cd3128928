"""A term through nbgrader's own workflow, on the command line, with nbgrader's exchange in a
folder: the instructor releases, students fetch, submit (some twice, some late, one while
being collected), the instructor collects and grades with ``python -m assignments grade`` or
nbgrader's own commands in any order, gives a score by hand, releases feedback, and each
student fetches their own page. Everything is nbgrader's real command line; students are told
apart by their home folder and by the id nbgrader's submit and fetch_feedback take
(``--student``; on a hub it is the login name).
"""
import csv
import json
import os
import shutil
import subprocess
import sys

import pytest
from helpers import REPO, comparable_notebook, gradebook_dump
from nbgrader.api import Gradebook

from assignments.grading.authoring.submissions import answer_cells, fill

pytestmark = pytest.mark.sandbox

AID = "rnn_step_by_step"
COURSE_ID = "rnn-step-by-step"
ANSWERS = os.path.join(REPO, "samples", "answers", AID)
BIN = os.path.dirname(sys.executable)


def answers(*names):
    found = {}
    for name in names:
        with open(os.path.join(ANSWERS, name), encoding="utf-8") as f:
            found.update(answer_cells(f.read()))
    return found


class Term:
    """A course folder (this repository's config, source and release), an exchange and a home
    folder per student, and nbgrader's commands run in them."""

    def __init__(self, root):
        self.root = root
        self.course = os.path.join(root, "course")
        self.exchange = os.path.join(root, "exchange")
        os.makedirs(self.exchange)
        os.chmod(self.exchange, 0o777)
        os.makedirs(self.course)
        for name in ("source", "release"):
            shutil.copytree(os.path.join(REPO, name), os.path.join(self.course, name),
                            ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        with open(os.path.join(REPO, "nbgrader_config.py"), encoding="utf-8") as f:
            config = f.read()
        with open(os.path.join(self.course, "nbgrader_config.py"), "w", encoding="utf-8") as f:
            f.write(config + f"\nc.Exchange.root = {self.exchange!r}\n")

    def env(self, user=None):
        # the course folder is on the path, for plugins kept beside its nbgrader_config.py
        env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""),
                   PYTHONPATH=os.pathsep.join(p for p in (self.course, os.environ.get("PYTHONPATH")) if p))
        env.pop("NBGRADER_EXECUTION", None)
        if user:
            home = self.home(user)
            env.update(HOME=home)
        return env

    def home(self, user):
        home = os.path.join(self.root, "home", user)
        os.makedirs(home, exist_ok=True)
        return home

    def nbgrader(self, *args, user=None, check=True):
        """nbgrader's command line: the instructor's in the course folder, a student's in
        their home."""
        cwd = self.home(user) if user else self.course
        extra = [f"--course={COURSE_ID}", f"--Exchange.root={self.exchange}"] if user else []
        if user and args[0] in ("submit", "fetch_feedback"):   # as a hub's user is told apart
            extra.append(f"--student={user}")
        run = subprocess.run([os.path.join(BIN, "nbgrader"), *args, *extra], cwd=cwd, env=self.env(user),
                             capture_output=True, text=True, timeout=600)
        if check:
            assert run.returncode == 0, (args, user, run.stdout[-2000:], run.stderr[-3000:])
        return run

    def grade(self, *args, check=True):
        run = subprocess.run([sys.executable, "-m", "assignments", "grade", "--submissions", self.course,
                              "--out", self.course, "--quiet", *args], cwd=REPO, env=self.env(),
                             capture_output=True, text=True, timeout=600)
        if check:
            assert run.returncode == 0, (args, run.stdout[-2000:], run.stderr[-3000:])
        return run

    def work_on(self, user, *answer_files):
        """A student fetches the assignment (once) and writes these answers into it."""
        folder = os.path.join(self.home(user), AID)
        if not os.path.isdir(folder):
            self.nbgrader("fetch_assignment", AID, user=user)
        path = os.path.join(folder, AID + ".ipynb")
        import nbformat
        nbformat.write(fill(path, answers(*answer_files)), path)

    def submit(self, user):
        return self.nbgrader("submit", AID, user=user)

    def results(self):
        with open(os.path.join(self.course, "results", AID, "results.json"), encoding="utf-8") as f:
            return {s["student"]: s for s in json.load(f)["submissions"]}

    def grades_csv(self):
        with open(os.path.join(self.course, "results", AID, "grades.csv"), newline="", encoding="utf-8") as f:
            return {r["student_id"]: r for r in csv.DictReader(f)}

    def gradebook(self):
        return Gradebook("sqlite:///" + os.path.join(self.course, "gradebook.db"), COURSE_ID)

    def feedback_pages(self, user):
        """The feedback pages a student has fetched: {timestamp folder: html}."""
        folder = os.path.join(self.home(user), AID, "feedback")
        found = {}
        for stamp in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
            with open(os.path.join(folder, stamp, AID + ".html"), encoding="utf-8") as f:
                found[stamp] = f.read()
        return found

    def folder(self, kind, student):
        return os.path.join(self.course, kind, student, AID)


def page_text(html):
    """A feedback page's words: tags dropped, white space collapsed."""
    import re
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def files_and_modes(folder):
    return {name: (oct(os.stat(os.path.join(folder, name)).st_mode & 0o7777), os.path.getsize(os.path.join(folder, name)))
            for name in sorted(os.listdir(folder))}


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    """Ada answers right, Ben sums no gradients over time; both submit and are graded."""
    t = Term(str(tmp_path_factory.mktemp("term")))
    t.nbgrader("release_assignment", AID)
    t.work_on("ada", "ada.py")
    t.work_on("ben", "ada.py", "ben.py")
    t.submit("ada")
    t.submit("ben")
    t.nbgrader("collect", AID)
    t.grade()
    return t


def test_feedback_reaches_each_student_through_the_exchange(term):
    """The loop that broke: grade, then nbgrader's release_feedback and fetch_feedback."""
    term.nbgrader("release_feedback", AID)
    for user in ("ada", "ben"):
        term.nbgrader("fetch_feedback", AID, user=user)
    ada, ben = (list(term.feedback_pages(u).values()) for u in ("ada", "ben"))
    assert len(ada) == 1 and len(ben) == 1
    assert "rnn_grads_not_accumulated" in ben[0] and "rnn_grads_not_accumulated" not in ada[0]
    results = term.results()
    assert results["ada"]["score"] == 100 and results["ben"]["score"] < 100
    # each page is its own student's: its score, never the other's
    assert f"{results['ben']['score']:g}" in ben[0].replace(".0 ", " ")
    assert ada[0] != ben[0]


def test_grade_leaves_what_nbgraders_autograde_and_generate_feedback_leave(term, tmp_path):
    """The same submissions graded by nbgrader's own autograde and generate_feedback, in a copy
    of the course: the same files with the same modes, the same gradebook, the same notebooks."""
    plain = Term(str(tmp_path))
    shutil.copytree(os.path.join(term.course, "submitted"), os.path.join(plain.course, "submitted"))
    plain.nbgrader("generate_assignment", AID, "--force")
    plain.nbgrader("autograde", AID)
    plain.nbgrader("generate_feedback", AID)
    for student in ("ada", "ben"):
        for kind in ("autograded", "feedback"):
            ours, theirs = term.folder(kind, student), plain.folder(kind, student)
            assert set(os.listdir(ours)) == set(os.listdir(theirs)), (kind, student)
            mine, nbg = files_and_modes(ours), files_and_modes(theirs)
            for name in mine:
                assert mine[name][0] == nbg[name][0], (kind, student, name, "mode")
                if not name.endswith((".ipynb", ".html")):
                    with open(os.path.join(ours, name), "rb") as a, open(os.path.join(theirs, name), "rb") as b:
                        assert a.read() == b.read(), (kind, student, name)
        import nbformat
        ours = nbformat.read(os.path.join(term.folder("autograded", student), AID + ".ipynb"), as_version=4)
        theirs = nbformat.read(os.path.join(plain.folder("autograded", student), AID + ".ipynb"), as_version=4)
        ids = {c.get("id") for c in ours.cells}
        assert comparable_notebook(ours, ids) == comparable_notebook(theirs, ids), student
    ours = gradebook_dump("sqlite:///" + os.path.join(term.course, "gradebook.db"))
    theirs = gradebook_dump("sqlite:///" + os.path.join(plain.course, "gradebook.db"))
    assert ours == theirs


def test_nbgraders_commands_and_grade_mix_in_any_order(term):
    """grade's folders read by nbgrader's autograde (which skips what is graded, as after its
    own run), its forced regrade and generate_feedback, then grade for one student: no error,
    and the grades stay what they were."""
    before = gradebook_dump("sqlite:///" + os.path.join(term.course, "gradebook.db"))
    skipped = term.nbgrader("autograde", AID)   # nothing newer was collected
    assert "Skipping existing assignment" in skipped.stdout + skipped.stderr
    term.nbgrader("autograde", AID, "--force", "--student=ben")
    term.nbgrader("generate_feedback", AID, "--force", "--student=ben")
    assert gradebook_dump("sqlite:///" + os.path.join(term.course, "gradebook.db")) == before
    ada_page = os.path.join(term.folder("feedback", "ada"), AID + ".html")
    stamp = os.stat(ada_page).st_mtime_ns
    term.grade("--student", "ben")
    assert os.stat(ada_page).st_mtime_ns == stamp   # ada was not regraded
    assert set(term.results()) == {"ada", "ben"}   # but kept in results.json
    assert gradebook_dump("sqlite:///" + os.path.join(term.course, "gradebook.db")) == before
    term.nbgrader("release_feedback", AID)
    run = term.nbgrader("export")
    with open(os.path.join(term.course, "grades.csv"), newline="", encoding="utf-8") as f:
        exported = {r["student_id"]: float(r["score"]) for r in csv.DictReader(f) if r["assignment"] == AID}
    assert exported == {s: float(r["score"]) for s, r in term.grades_csv().items()}, run.stdout


def test_grade_refuses_a_student_with_no_submission(term):
    run = term.grade("--student", "nobody", check=False)
    assert run.returncode == 2 and "no submission by nobody" in run.stderr


def test_a_score_given_by_hand_survives_a_regrade(term, tmp_path):
    """A score given in formgrader (its API sets the grade's manual_score) stays through a
    rerun of grade, which marks it for review as nbgrader's autograde does, and the page the
    student gets shows it."""
    with term.gradebook() as gb:
        grade = gb.find_grade("test_rnn_backward", AID, AID, "ben")
        grade.manual_score = 12.0
        gb.db.commit()
    term.grade()
    with term.gradebook() as gb:
        grade = gb.find_grade("test_rnn_backward", AID, AID, "ben")
        assert (grade.manual_score, grade.score, grade.needs_manual_grade) == (12.0, 12.0, True)
        ben_total = gb.find_submission(AID, "ben").score
    assert float(term.grades_csv()["ben"]["score"]) == ben_total
    with open(os.path.join(term.folder("feedback", "ben"), AID + ".html"), encoding="utf-8") as f:
        page = page_text(f.read())
    assert "rnn_backward (Score: 12.0 / 15.0)" in page and f"Score: {ben_total} / 100.0" in page
    # nbgrader's own forced regrade treats the hand-given score the same way
    plain = Term(str(tmp_path))
    shutil.copytree(os.path.join(term.course, "submitted"), os.path.join(plain.course, "submitted"))
    shutil.copy(os.path.join(term.course, "gradebook.db"), os.path.join(plain.course, "gradebook.db"))
    plain.nbgrader("autograde", AID, "--force")
    assert gradebook_dump("sqlite:///" + os.path.join(plain.course, "gradebook.db")) == \
        gradebook_dump("sqlite:///" + os.path.join(term.course, "gradebook.db"))
    with term.gradebook() as gb:   # back as it was, for the tests that follow
        gb.find_grade("test_rnn_backward", AID, AID, "ben").manual_score = None
        gb.db.commit()
    term.grade("--student", "ben")


LATE_PLUGIN = '''
from nbgrader.plugins import BasePlugin


class TenPerHour(BasePlugin):
    """Ten points off per hour late (or part of one), as nbgrader's documentation shows."""

    def late_submission_penalty(self, student_id, score, total_seconds):
        import math
        return min(score, 10.0 * math.ceil(total_seconds / 3600))
'''


def late_course(root):
    """A term whose assignment is due before its submissions, with a late-penalty plugin."""
    t = Term(root)
    with open(os.path.join(t.course, "late_penalties.py"), "w", encoding="utf-8") as f:
        f.write(LATE_PLUGIN)
    with open(os.path.join(t.course, "nbgrader_config.py"), "a", encoding="utf-8") as f:
        f.write('c.AssignLatePenalties.plugin_class = "late_penalties.TenPerHour"\n')
    return t


def test_late_submissions_get_nbgraders_penalties(term, tmp_path):
    """A due date in the gradebook and a late-penalty plugin: grade gives the penalties that
    nbgrader's autograde gives, and the feedback page shows them."""
    runs = {}
    for how in ("grade", "nbgrader"):
        t = late_course(str(tmp_path / how))
        shutil.copytree(os.path.join(term.course, "submitted"), os.path.join(t.course, "submitted"))
        for student in ("ada", "ben"):   # submitted two and a half hours after the due date
            with open(os.path.join(t.course, "submitted", student, AID, "timestamp.txt"), "w") as f:
                f.write("2026-10-01 14:30:00.000000 UTC")
        t.nbgrader("db", "assignment", "add", AID, "--duedate=2026-10-01 12:00:00 UTC")
        if how == "grade":
            t.grade()
        else:
            t.nbgrader("generate_assignment", AID, "--force")
            t.nbgrader("autograde", AID)
            t.nbgrader("generate_feedback", AID)
        t.nbgrader("export")
        with open(os.path.join(t.course, "grades.csv"), newline="", encoding="utf-8") as f:
            runs[how] = {r["student_id"]: (float(r["late_submission_penalty"]), float(r["score"]))
                         for r in csv.DictReader(f)}
        with open(os.path.join(t.folder("feedback", "ada"), AID + ".html"), encoding="utf-8") as f:
            runs[how + " page"] = f.read()
    assert runs["grade"] == runs["nbgrader"]
    assert runs["grade"]["ada"] == (30.0, 70.0)
    for page in (runs["grade page"], runs["nbgrader page"]):
        assert "Late submission penalty (Score: -30.0)" in page_text(page)


def inbound(t, student):
    """A student's submissions in the exchange, oldest first."""
    folder = os.path.join(t.exchange, COURSE_ID, "inbound")
    return sorted((os.path.join(folder, name) for name in os.listdir(folder) if name.startswith(student + "+")),
                  key=lambda p: p.split("+")[2])


def test_the_terms_edge_cases(tmp_path):
    """A student who submits twice, one with no submission, one collected while submitting
    again: each as nbgrader documents it, and feedback still reaches everyone who submitted."""
    t = Term(str(tmp_path))
    t.nbgrader("release_assignment", AID)
    t.nbgrader("db", "student", "add", "dana", "--last-name=Doe", "--first-name=Dana")   # never submits
    t.work_on("cleo", "ada.py", "ben.py")
    t.submit("cleo")
    t.work_on("cleo", "ada.py")   # she fixes her mistake and submits again: the later one counts
    t.submit("cleo")
    t.work_on("ben", "ada.py", "ben.py")
    t.submit("ben")
    t.nbgrader("collect", AID)
    run = t.grade("--workers", "1")
    assert t.results()["cleo"]["score"] == 100 and t.results()["ben"]["score"] < 100
    assert set(t.results()) == {"ben", "cleo"}
    rows = t.grades_csv()
    assert float(rows["dana"]["score"]) == 0 and rows["dana"]["last_name"] == "Doe"   # as nbgrader's export
    assert "no timestamp" not in run.stderr

    # ben submits again, fixed; collect runs while his submit has copied the notebook but not yet
    # written timestamp.txt and submission_secret.txt (the last thing nbgrader's submit does)
    t.work_on("ben", "ada.py")
    t.submit("ben")
    latest = inbound(t, "ben")[-1]
    held = {name: open(os.path.join(latest, name)).read() for name in ("timestamp.txt", "submission_secret.txt")}
    for name in held:
        os.remove(os.path.join(latest, name))
    t.nbgrader("collect", "--update", AID)
    run = subprocess.run([sys.executable, "-m", "assignments", "grade", "--submissions", t.course, "--out", t.course,
                          "--workers", "1"], cwd=REPO, env=t.env(), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "no timestamp.txt and submission_secret.txt beside the notebook of ben" in run.stderr
    assert "nbgrader collect --update" in run.stderr
    assert t.results()["ben"]["score"] == 100   # his notebook was complete: graded

    for name, text in held.items():   # his submit finishes
        with open(os.path.join(latest, name), "w") as f:
            f.write(text)
    t.nbgrader("collect", "--update", AID)   # a submission without timestamp.txt is taken again
    t.grade("--student", "ben")
    t.nbgrader("release_feedback", AID)
    for student in ("ben", "cleo"):
        t.nbgrader("fetch_feedback", AID, user=student)
    ben_pages, cleo_pages = t.feedback_pages("ben"), t.feedback_pages("cleo")
    # feedback for the submission that was graded: ben's latest, cleo's latest
    assert list(ben_pages) == [held["timestamp.txt"]]
    assert len(cleo_pages) == 1 and "Score: 100.0 / 100.0" in page_text(next(iter(cleo_pages.values())))
    assert "Score: 100.0 / 100.0" in page_text(ben_pages[held["timestamp.txt"]])
    assert not os.path.exists(os.path.join(t.home("dana"), AID))


def test_nbgraders_generate_assignment_makes_the_course_release(tmp_path):
    """formgrader's Generate button (nbgrader's generate_assignment with the course's config)
    makes the release `python -m assignments release` makes, figures and students' checks
    included, byte for byte, from a source folder whose generated files are missing."""
    t = Term(str(tmp_path))
    shutil.rmtree(os.path.join(t.course, "release"))
    for aid in ("rnn_step_by_step", "gru_step_by_step"):
        folder = os.path.join(t.course, "source", aid)
        for name in os.listdir(folder):
            if name.endswith("_checks.py") or name == "check_data.json":
                os.remove(os.path.join(folder, name))
        t.nbgrader("generate_assignment", aid)
        ours, theirs = os.path.join(REPO, "release", aid), os.path.join(t.course, "release", aid)
        assert files_and_modes(ours) == files_and_modes(theirs), aid
        for name in os.listdir(ours):
            with open(os.path.join(ours, name), "rb") as a, open(os.path.join(theirs, name), "rb") as b:
                assert a.read() == b.read(), (aid, name)
