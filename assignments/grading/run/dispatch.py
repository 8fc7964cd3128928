"""Where submissions are graded: in this process, in a pool of local worker processes (the
default: one per core), or on a Dask cluster. Every way yields the workers' results as
they finish, and a submission whose worker was lost is retried once, then reported.
Jobs may come from an iterator that stages each submission when it is read: the local
pool reads it as its workers need the next ones (``in_flight``), so they start on the first
submissions while the rest are staged.
Rule (run/): only the grading process writes the class's gradebook and folders."""
import gc
import importlib.util
import itertools
import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

from traitlets import Integer, Unicode
from traitlets.config import Configurable

from ..sandbox.kernel import sandbox_problem
from . import worker


class Dispatch(Configurable):
    workers = Integer(0, help="Submissions graded at once on this machine; 0 means one per "
                              "core.").tag(config=True)
    scheduler = Unicode("", help="Address of a Dask scheduler (e.g. tcp://10.0.0.5:8786): grade "
                                 "on its cluster instead of this machine.").tag(config=True)
    connect_timeout = Integer(30, help="Seconds to wait for the Dask scheduler.").tag(config=True)

    def local_workers(self, jobs):
        wanted = self.workers or len(os.sched_getaffinity(0))
        return max(1, min(wanted, jobs))

    def run(self, course, jobs, parent, count=None):
        """Grade ``jobs`` (a list, or an iterator of ``count`` jobs at most) with ``course``;
        yields one result per job. ``parent``: where local workers unpack the course."""
        count = len(jobs) if count is None else count
        if not count:
            return
        if self.scheduler:
            yield from self._on_dask(course, list(jobs))
        elif self.local_workers(count) == 1:
            jobs = list(jobs)   # staged first: here staging and grading take turns anyway
            w = worker.Worker(course, parent)
            try:
                for job in jobs:
                    yield w.grade(job)
            finally:
                w.close()
        else:
            yield from self._in_pool(course, jobs, parent, count)

    def _in_pool(self, course, jobs, parent, count):
        # fork: the workers start with everything this process already imported. Its objects
        # are moved out of the collector's reach first (Python's advice for forking servers):
        # each worker's collector would otherwise walk them all on its first full collection
        # (a tenth of a second), and write to every page it walks, which the fork shared
        gc.collect()
        gc.freeze()
        context = multiprocessing.get_context("fork")
        pending, workers = jobs, self.local_workers(count)
        for attempt in (1, 2):
            lost = []
            with ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                     initializer=worker.install, initargs=(course, parent)) as pool:
                for future, job in in_flight(pool, worker.grade_installed, pending, ahead=2 * workers):
                    try:
                        yield future.result()
                    except Exception as exc:   # the worker process died: not the submission's fault
                        lost.append((job, exc))
            if not lost:
                return
            if attempt == 2:
                for job, error in lost:
                    yield failed(job, f"the grading worker was lost twice ({type(error).__name__}: {error})")
            pending, workers = [job for job, _ in lost], self.local_workers(len(lost))

    def _on_dask(self, course, jobs):
        from dask.distributed import Client
        from dask.distributed import as_completed as finished

        try:
            client = Client(self.scheduler, timeout=self.connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise ClusterUnfit(f"cannot reach the Dask scheduler at {self.scheduler}: {exc}") from exc
        try:
            check_cluster(client, course)
            remote = client.scatter(course, broadcast=True, hash=False)
            futures = {client.submit(worker.grade_one, remote, job, key=f"grade-{course.key}-{job['student']}",
                                     retries=1, pure=False): job for job in jobs}
            for future in finished(futures):
                try:
                    yield future.result()
                except Exception as exc:
                    yield failed(futures[future], f"the cluster could not grade it ({type(exc).__name__}: {exc})")
        finally:
            client.close()


class ClusterUnfit(RuntimeError):
    """The Dask workers cannot grade: say which and why."""


def check_cluster(client, course):
    workers = client.scheduler_info()["workers"]
    if not workers:
        raise ClusterUnfit("the Dask cluster has no workers")
    found = client.run(importlib.util.find_spec, "assignments")
    missing = sorted(address for address, spec in found.items() if spec is None)
    if missing:
        raise ClusterUnfit(f"Dask workers {', '.join(missing)} cannot import this course's 'assignments' "
                           f"package: install the course there like any package (pip install -r requirements.txt "
                           f"-c constraints.txt, then pip install <a copy of this repository>)")
    if course.config.GradingKernelManager.get("sandbox", True):
        problems = {a: p for a, p in client.run(sandbox_problem).items() if p}
        if problems:
            raise ClusterUnfit("; ".join(f"worker {a}: {p}" for a, p in sorted(problems.items()))
                               + ". Install bubblewrap on every worker, or pass --no-sandbox.")


def in_flight(pool, grade, jobs, ahead):
    """(future, job) for each of ``jobs`` as ``grade(job)`` finishes in ``pool``, with at most
    ``ahead`` submitted and unfinished: the next jobs are read (staged) only as the workers
    finish others, so they start before the last is staged."""
    jobs, running = iter(jobs), {}
    while True:
        for job in itertools.islice(jobs, ahead - len(running)):
            running[pool.submit(grade, job)] = job
        if not running:
            return
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in done:
            yield future, running.pop(future)


def failed(job, message):
    return {"student": job["student"], "ok": False, "message": message, "notebook": None,
            "feedback": None, "worker": "", "seconds": 0.0, "cpu": 0.0, "flags": []}
