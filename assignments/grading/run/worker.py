"""Grade one submission wherever a worker runs: in the grading process itself
(``--workers 1``), in a process of the local pool, or on a Dask worker of another machine.

A worker receives the course once (``Course``: the run's nbgrader config, the assignment's
source files, and a gradebook holding only the assignment) and keeps it in a private
folder for every submission it grades. There it runs nbgrader's own Autograde and
GenerateFeedback against that private gradebook, and hands back the autograded notebook
and the feedback page. The grades are not written there: the page's scores come from the
notebook (upstream/getgrades.py's GetGradesFromNotebook), and the grading process writes
them into the class's gradebook. It never touches the class's gradebook or output folder, so
workers cannot race one another: the grading process records the grades, alone
(``record.py``).
Rule (run/): only the grading process writes the class's gradebook and folders.
"""
import copy
import functools
import hashlib
import logging
import multiprocessing.util
import os
import re
import resource
import shutil
import socket
import tempfile
import time
from dataclasses import dataclass

from nbgrader.converters import Autograde, GenerateFeedback

from ..contract.assignment import use_source
from ..judging.classwide import SHARED
from ..measure import steps
from ..sandbox.kernel import take_notes
from ..sandbox.spare import SPARE
from ..sandbox.zygotes import ZYGOTES
from ..upstream import getgrades, is_stock, speedups
from ..upstream.autograde import OnePassAutograde
from .course import coursedir


@dataclass(frozen=True)
class Course:
    config: object        # the run's traitlets Config (paths are reset by each worker)
    assignment_id: str
    notebook: str         # the notebook's name, without .ipynb
    source: dict          # path under source/<assignment>/ -> bytes
    gradebook: bytes      # an SQLite gradebook holding the assignment and nothing else

    @functools.cached_property
    def key(self):
        h = hashlib.sha256(self.gradebook)
        for name in sorted(self.source):
            h.update(name.encode() + b"\0" + self.source[name])
        h.update(repr(sorted(self.config.items(), key=str)).encode())
        return h.hexdigest()[:16]


class Worker:
    """A course unpacked in a private folder, ready to grade submission after submission."""

    def __init__(self, course, parent=None):
        self.course = course
        self.root = tempfile.mkdtemp(prefix=f"worker-{os.getpid()}-", dir=parent)
        aid = course.assignment_id
        for name, data in course.source.items():
            path = os.path.join(self.root, "source", aid, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        with open(os.path.join(self.root, "gradebook.db"), "wb") as f:
            f.write(course.gradebook)
        os.makedirs(os.path.join(self.root, "kernels"))
        self._source = use_source(os.path.join(self.root, "source"))   # the course as received, wherever installed
        config = copy.deepcopy(course.config)
        config.CourseDirectory.root = self.root
        config.CourseDirectory.db_url = "sqlite:///" + os.path.join(self.root, "gradebook.db")
        self.stock = is_stock(config)   # nbgrader's own steps (upstream/__init__.py)
        speedups.use(not self.stock)
        # the page's scores from the notebook, not written into this gradebook and read back; then
        # nothing reads a submission's rows here, and the conversion writes none (autograde.py)
        if not self.stock and getgrades.in_a_worker(config):
            config.OnePassAutograde.rows_elsewhere = True
        speedups.scratch(config.CourseDirectory.db_url)   # deleted with the worker's folder
        for trait, folder in (("source_directory", "source"), ("release_directory", "release"),
                              ("submitted_directory", "submitted"), ("autograded_directory", "autograded"),
                              ("feedback_directory", "feedback")):
            setattr(config.CourseDirectory, trait, folder)
        # the zygote the grading process started for its local workers, if there is one
        config.GradingKernelManager.scratch_root = ZYGOTES.shared_root() or os.path.join(self.root, "kernels")
        self.config = config

    def grade(self, job):
        """``job``: {"student": id, "files": {name: bytes}} (the staged submission), and
        "journal": the path of the grading process's journal of what the class's workers
        learned (judging/classwide.py), if it keeps one.
        Returns what the grading process needs; never raises for a bad submission."""
        started = time.perf_counter()
        cpu = resource.getrusage(resource.RUSAGE_SELF)
        aid, student = self.course.assignment_id, job["student"]
        folders = [os.path.join(self.root, d, student, aid) for d in ("submitted", "autograded", "feedback")]
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)   # left by an earlier, interrupted attempt
        os.makedirs(folders[0])
        for name, data in job["files"].items():
            with open(os.path.join(folders[0], name), "wb") as f:
                f.write(data)
        result = {"student": student, "ok": False, "message": "", "notebook": None, "feedback": None,
                  "worker": f"{socket.gethostname()}:{os.getpid()}", "flags": []}
        take_notes()   # what an earlier submission's kernels left
        steps.take()   # and what they cost
        SHARED.take()   # and what was learned grading it (handed back with that submission)
        SHARED.follow(job.get("journal"))   # what the class's other workers learned so far
        errors = ErrorLog()
        logging.getLogger("traitlets").addHandler(errors)
        autograde = Autograde if self.stock else OnePassAutograde
        try:   # either puts NBGRADER_EXECUTION back, even when autograding fails
            with steps.step("conversion"):
                autograde(coursedir=coursedir(self.config, aid, student), config=self.config).start()
            with open(os.path.join(folders[1], self.course.notebook + ".ipynb"), encoding="utf-8") as f:
                result.update(ok=True, notebook=f.read())
        except Exception as exc:
            result["message"] = f"autograde failed: {errors.cause() or exc}"
        finally:
            logging.getLogger("traitlets").removeHandler(errors)
        if result["ok"]:
            try:
                # only the page is kept: the files beside the notebook need no copy beside it
                pages = coursedir(self.config, aid, student)
                pages.ignore = [*pages.ignore, "*"]
                with steps.step("feedback page"):
                    GenerateFeedback(coursedir=pages, config=self.config).start()
                with open(os.path.join(folders[2], self.course.notebook + ".html"), encoding="utf-8") as f:
                    result["feedback"] = f.read()
            except Exception as exc:
                result["message"] = f"feedback could not be written: {exc}"
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
        result["flags"] = take_notes()   # what the sandbox could not give this submission's kernels
        used = resource.getrusage(resource.RUSAGE_SELF)
        result["seconds"] = round(time.perf_counter() - started, 3)
        result["cpu"] = round(used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime, 3)
        result["steps"] = steps.take()
        result["learned"] = SHARED.take()   # for the class's other workers (judging/classwide.py)
        return result

    def close(self):
        use_source(self._source)
        SPARE.discard()   # its scratch folder is in this worker's folder
        shutil.rmtree(self.root, ignore_errors=True)


class ErrorLog(logging.Handler):
    """nbgrader logs why a submission failed and raises a generic exception: keep the why."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.lines = []

    def emit(self, record):
        self.lines += [line for line in record.getMessage().splitlines() if line.strip()]

    def cause(self):
        found = [line.strip() for line in self.lines if re.match(r"^\w+(\.\w+)*(Error|Exception)\b", line.strip())]
        return found[-1][:300] if found else ""


# --- one worker per process ----------------------------------------------------------------

_worker = None


def install(course, parent=None):
    """Unpack the course in this process (once per course). Local pools call this as their
    initializer; Dask tasks call it through grade_one."""
    global _worker
    if _worker is None or _worker.course.key != course.key:
        if _worker is not None:
            _worker.close()
        _worker = Worker(course, parent)
        # atexit does not run in pool processes; multiprocessing's finalizers do, in each process
        multiprocessing.util.Finalize(None, _worker.close, exitpriority=20)
    return _worker


def grade_installed(job):
    return _worker.grade(job)


def grade_one(course, job):
    """A Dask task: the course arrives once per worker (scattered), the job per submission."""
    return install(course).grade(job)
