"""A grading run's first steps, which import neither nbgrader nor nbconvert: where the
submissions are, the run's configuration, its private folder emptied, and the zygote that
its kernels are forked from, set booting.

The command line (``python -m assignments grade``) takes these steps before it imports the
pipeline, so that the zygote imports what kernels import (a second or so, in its own
process) while the grading process imports nbgrader, nbconvert and SQLAlchemy (as long
again). A rerun that grades one late submission among hundreds pays that second once
instead of twice.
Rule (run/): only the grading process writes the class's gradebook and folders."""
from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import threading
from collections.abc import Container
from typing import TYPE_CHECKING

from ..sandbox.kernel import sandbox_problem
from ..sandbox.zygotes import ZYGOTES
from .course import load_config

if TYPE_CHECKING:
    from traitlets.config import Config

WORK = ".nbgrader"          # the run's private course folder, under --out
CACHE = "cache"             # under WORK, kept from run to run: the seed gradebook and release (seeding.seeded)
KERNELS = "kernels"         # under WORK, the kernels' scratch folders


class SandboxUnavailable(RuntimeError):
    """Grading untrusted code needs the sandbox; say why it cannot run and how to opt out."""


def submitted_root(submissions: str) -> str:
    """Accept both DIR/submitted/<student>/... and DIR/<student>/... ."""
    inner = os.path.join(submissions, "submitted")
    return inner if os.path.isdir(inner) else submissions


def find_students(root: str, assignment_id: str, only: Container[str] | None = None) -> list[str]:
    """The students with a folder for the assignment (of ``only``, when given)."""
    return sorted(s for s in os.listdir(root)
                  if os.path.isdir(os.path.join(root, s, assignment_id)) and not s.startswith(".")
                  and (only is None or s in only))


def assignments_in(submissions: str) -> list[str]:
    """The ids of the assignments that some student folder holds."""
    root = submitted_root(os.path.abspath(submissions))
    found: set[str] = set()
    for student in os.listdir(root) if os.path.isdir(root) else ():
        folder = os.path.join(root, student)
        if os.path.isdir(folder) and not student.startswith("."):
            found |= {a for a in os.listdir(folder) if os.path.isdir(os.path.join(folder, a))}
    return sorted(found)


def run_config(out: str, db_url: str | None, sandbox: bool, overrides: Config | None, workers: int | None,
               scheduler: str | None) -> Config:
    """nbgrader's configuration for a run: the course's, its folders those of ``out`` (the
    submissions staged in the run's private folder)."""
    config = load_config(out, db_url, course=True, source_directory=f"{WORK}/source", release_directory=f"{WORK}/release",
                         submitted_directory=f"{WORK}/submitted",
                         autograded_directory="autograded", feedback_directory="feedback")
    for name in ("GenerateAssignment", "Autograde", "GenerateFeedback"):
        config[name].force = True
    # the run's own copy of the release is for the gradebook's rows and for comparing
    # submissions with: its source's generated files are written as it is made (prepare_course),
    # and it needs no figures
    config.GenerateAssignment.pre_convert_hook = None
    config.CourseRelease.enabled = False
    config.GradingKernelManager.sandbox = sandbox
    if overrides is not None:
        config.merge(overrides)
    if workers is not None:
        config.Dispatch.workers = workers
    if scheduler is not None:
        config.Dispatch.scheduler = scheduler
    return config


def reset_work(work: str) -> threading.Thread:
    """Empty the run's private folder, but for the cache of earlier runs. What an earlier run
    left (a whole class staged, after a first run) is moved aside at once and deleted by a
    thread while this run goes on; returns that thread, to be joined before the run ends."""
    os.makedirs(work, exist_ok=True)
    trash = tempfile.mkdtemp(prefix=".old-", dir=work)
    for name in os.listdir(work):
        if name != CACHE and name != os.path.basename(trash):
            os.replace(os.path.join(work, name), os.path.join(trash, name))
    sweeper = threading.Thread(target=shutil.rmtree, args=(trash,), kwargs={"ignore_errors": True}, daemon=True)
    sweeper.start()
    return sweeper


@dataclasses.dataclass
class Started:
    """A run begun by ``begin``, which ``pipeline.grade_class`` goes on with."""
    out: str                  # --out, absolute
    config: Config            # run_config's
    sweeper: threading.Thread  # reset_work's, deleting what an earlier run left
    local: bool               # graded on this machine, in the sandbox: the zygote is shared from here

    @property
    def work(self) -> str:
        return os.path.join(self.out, WORK)


def begin(out: str, db_url: str | None = None, sandbox: bool = True, overrides: Config | None = None,
          workers: int | None = None, scheduler: str | None = None) -> Started:
    """The run's configuration, its private folder emptied, and, when its kernels run here in
    the sandbox, the zygote they are forked from set booting (``Zygotes.share``; the pipeline
    waits for it, and stops it at the end). Raises SandboxUnavailable when the sandbox cannot
    run here."""
    out = os.path.abspath(out)
    config = run_config(out, db_url, sandbox, overrides, workers, scheduler)
    on_cluster = bool(config.Dispatch.get("scheduler", "")) if "Dispatch" in config else False
    if sandbox and not on_cluster:   # a cluster's workers are checked where they run
        problem = sandbox_problem()
        if problem:
            raise SandboxUnavailable(f"{problem}. Submissions are untrusted code: grading refuses to run "
                                     f"them outside the sandbox. To grade anyway, pass --no-sandbox "
                                     f"(every result is then flagged 'unsandboxed').")
    sweeper = reset_work(os.path.join(out, WORK))
    local = sandbox and not on_cluster
    if local:
        ZYGOTES.share(config, os.path.join(out, WORK, KERNELS))
    return Started(out, config, sweeper, local)
