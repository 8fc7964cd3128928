"""Grading a class in parallel gives exactly what one worker gives, with progress shown and
each submission's time kept; the feedback page is nbgrader's, made faster."""
import csv
import os

import nbconvert.exporters.html
import pytest
from bs4 import BeautifulSoup
from helpers import course_pieces, gradebook_dump
from nbconvert.exporters import HTMLExporter
from nbgrader.converters import GenerateFeedback

from assignments.grading.measure import steps
from assignments.grading.run import pipeline
from assignments.grading.run.course import coursedir, load_config
from assignments.grading.upstream import feedback
from assignments.rnn_step_by_step import ASSIGNMENT as A  # noqa: E402


def sqlite(out):
    return "sqlite:///" + os.path.join(out, "gradebook.db")


# grades the sample class again to compare two ways of grading: `make test` only (docs/testing.md)
@pytest.mark.slow
def test_one_worker_gives_what_two_give(sample_class, tmp_path, capsys):
    out = str(tmp_path / "one")
    results = pipeline.grade(A, sample_class["submissions"], out, workers=1, progress=True)
    assert results == sample_class["results"]
    assert gradebook_dump(sqlite(out)) == gradebook_dump(sqlite(sample_class["out"]))
    with open(os.path.join(out, "grades.csv")) as a, open(os.path.join(sample_class["out"], "grades.csv")) as b:
        assert a.read() == b.read()
    graded = [s for s in results["submissions"] if s["status"] != "unreadable"]
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("graded ")]
    assert len(lines) == len(graded) and lines[-1].startswith(f"graded {len(graded)}/{len(graded)} ")


def test_timings_name_each_submission_and_its_worker(sample_class):
    with open(os.path.join(sample_class["out"], "timings.csv")) as f:
        rows = list(csv.DictReader(f))
    graded = sorted(s["student"] for s in sample_class["results"]["submissions"] if s["status"] != "unreadable")
    assert sorted(r["student"] for r in rows) == graded
    assert all(float(r["seconds"]) > 0 for r in rows)
    assert len({r["worker"] for r in rows}) == 2   # both workers of the pool took submissions


def test_timings_say_where_each_submissions_cpu_went(sample_class):
    """measure/steps.py: the worker's CPU by step, within what the worker used, and the
    kernels' own CPU, as their zygote counted it, with its parts during the worker's steps
    within it; wrong work only where a function was wrong."""
    with open(os.path.join(sample_class["out"], "timings.csv")) as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    wrong = {s["student"] for s in sample_class["results"]["submissions"] if any(not e["passed"] for e in s["exercises"])}
    cells = 0.0
    for student, r in rows.items():
        spent = {k[4:]: float(v or 0) for k, v in r.items() if k.startswith("cpu:")}
        assert list(spent) == list(steps.STEPS)
        ours = sum(v for k, v in spent.items() if k != "kernel" and not k.startswith(steps.KERNEL_PART))
        parts = sum(v for k, v in spent.items() if k.startswith(steps.KERNEL_PART))
        assert spent["conversion"] > 0 and spent["kernel"] > 0 and ours <= float(r["cpu_seconds"]) + 0.01, r
        # the kernel's parts, read from /proc in clock ticks as it ran, within its whole
        assert parts <= spent["kernel"] + 0.02, r
        cells += spent[steps.KERNEL_PART + "learner's cells"]
        assert (spent["locate and repair"] > 0) == (student in wrong), r
    assert cells > 0


class StockOnCoursePage(HTMLExporter):
    """nbconvert's stock HTML exporter, given the course's template (nbgrader's, extended)."""

    def __init__(self, config=None, **kw):
        super().__init__(config=config, **kw)
        feedback.use_course_page(self)


# the sample class's pages made again by nbgrader's own exporter, to compare: `make test` only
@pytest.mark.slow
def test_feedback_page_is_nbgraders_own(sample_class, tmp_path, monkeypatch):
    """The same document as nbgrader's stock HTML exporter makes with the course's template
    and math renderer, up to how BeautifulSoup (which the stock exporter runs the page
    through) writes it out: the shortcuts of FeedbackExporter change nothing."""
    out = sample_class["out"]
    pages = {}
    for name, exporter in (("stock", StockOnCoursePage), ("ours", None)):
        with course_pieces():   # ours: FeedbackExporter, even in stock mode
            config = load_config(out, None, autograded_directory="autograded", feedback_directory=str(tmp_path / name))
        config.GenerateFeedback.force = True
        if exporter:
            config.GenerateFeedback.exporter_class = exporter
        with monkeypatch.context() as patch:
            if exporter:   # the stock exporter's Markdown renderer, with math as MathML
                patch.setattr(nbconvert.exporters.html, "IPythonRenderer", feedback.MathMLRenderer)
            for student in ("ada", "ben"):
                GenerateFeedback(coursedir=coursedir(config, A.id, student), config=config).start()
                with open(tmp_path / name / student / A.id / (A.notebook + ".html"), encoding="utf-8") as f:
                    pages[name, student] = f.read()
    for student in ("ada", "ben"):
        assert str(BeautifulSoup(pages["ours", student], features="html.parser")) == pages["stock", student]
    assert pages["ours", "ada"] != pages["ours", "ben"]


def test_the_pool_reads_each_job_only_as_its_workers_need_it():
    """dispatch.in_flight: a job is read from the iterator (staged) only when fewer than
    ``ahead`` are unfinished, so the workers start before the last is staged; every job is
    graded once."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    from assignments.grading.run import dispatch
    read, first_started, lock = [], [], threading.Lock()

    def jobs():
        for i in range(12):
            read.append(i)
            yield i

    def grade(i):
        with lock:
            first_started.append(len(read))
        time.sleep(0.005)
        return i * i

    done = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for future, job in dispatch.in_flight(pool, grade, jobs(), ahead=3):
            assert len(read) <= len(done) + 3   # never more than `ahead` read and not yet given back
            assert future.result() == job * job
            done.append(job)
    assert sorted(done) == list(range(12))
    assert first_started[0] <= 3   # the first ran while most were still unread
