"""Grade a class: stage the submissions, have workers autograde them with nbgrader (see
worker.py and dispatch.py), record each result in the gradebook as it comes back, then
write grades.csv, results.json, the class report (report.py) and the grades for an LMS
(lms.py), all beside each other in --out/results/<assignment>/ (the latest run's also in --out/).

Submissions are only ever read: each is copied into a private staging area first, so
``submitted/`` is never modified, and a notebook that cannot be read is reported and
skipped without stopping the others. Each entry of results.json carries its receipt
(receipts.py): a rerun grades again only the submissions whose receipt would change, and
keeps the others' entries, gradebook rows and folders as they are, so a rerun is safe and
gives the same results; ``force`` grades every one again.
Rule (run/): only the grading process writes the class's gradebook and folders.
"""
from __future__ import annotations

import csv
import dataclasses
import itertools
import json
import os
import re
import shutil
import sys
from collections.abc import Container, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import nbformat
from nbformat.v4.rwbase import strip_transient
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters import GenerateFeedback
from nbgrader.plugins.export import CsvExportPlugin

from ..authoring.generated import write_generated
from ..contract import messages
from ..judging.classwide import Journal
from ..judging.judged_execute import prepared
from ..reports import lms, report
from ..sandbox.zygotes import ZYGOTES
from ..upstream import export as grades_export
from ..upstream import feedback, is_stock
from ..upstream.saveautogrades import grades_of
from . import evidence, folders, inspect_submission, receipts, record, seeding
from .course import coursedir
from .dispatch import Dispatch
from .progress import Progress

# re-exported: the run's first steps lived here before run/start.py
from .start import CACHE, KERNELS, WORK, SandboxUnavailable, Started, assignments_in, begin, find_students, reset_work, run_config, submitted_root  # noqa: F401
from .worker import Course

if TYPE_CHECKING:
    from nbformat import NotebookNode
    from traitlets.config import Config

    from ..contract.assignment import Assignment

Record: TypeAlias = dict[str, Any]
"""One submission as staging and grading leave it: student, status, message, flags."""
Entry: TypeAlias = dict[str, Any]
"""One submission in results.json."""
Job: TypeAlias = dict[str, Any]
"""What a worker grades: the student and the staged files."""
Verdicts: TypeAlias = tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]
"""What results.json takes from an autograded notebook: verdicts by function, kernel events."""

MAX_FILE_BYTES = 20 * 2**20  # a submission's extra files larger than this are not copied
# written to --out/results/<assignment>/, and copied to --out/ (the latest graded assignment's)
OUTPUTS = ("results.json", "grades.csv", "timings.csv", "report.html", "report.json", "grades_canvas.csv", "grades_moodle.csv",
           "similarity.json", "clusters.json")


# nbgrader globs and matches student ids as patterns: other characters could match others
STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]*$")


def stage(assignment: Assignment, src: str, dest: str, release_nb: NotebookNode) -> tuple[str | None, list[str]]:
    """Copy one submission to ``dest``. Returns (error message or None, flags). A submission
    that is or holds a symbolic link or a special file is refused whole, before anything of it
    is read."""
    odd = [".."] if os.path.islink(os.path.dirname(src)) else inspect_submission.not_regular(src)
    if odd:
        shown = ", ".join(odd[:3]) + (", ..." if len(odd) > 3 else "")
        return (f"the submission holds a symbolic link or a special file ({shown}): a submission may hold "
                "only regular files and folders, so nothing of it was graded"), [f"tampered:link:{n}" for n in odd]
    notebooks = sorted(f for f in os.listdir(src) if f.endswith(".ipynb"))
    expected = assignment.notebook + ".ipynb"
    chosen = expected if expected in notebooks else (notebooks[0] if len(notebooks) == 1 else None)
    if chosen is None:
        found = ", ".join(notebooks) or "no .ipynb file"
        return f"expected {expected} in the submission, found {found}", []
    try:
        invalid: dict[str, Exception] = {}
        nb = nbformat.reads(inspect_submission.read_regular(os.path.join(src, chosen)), as_version=4,
                            capture_validation_error=invalid)
        if invalid:
            raise invalid["ValidationError"]
    except Exception as exc:  # not JSON, not a notebook, a newer format...
        return f"{chosen} is not a readable Jupyter notebook ({type(exc).__name__}: {str(exc)[:200]})", []
    flags = inspect_submission.tampering(nb, release_nb) + inspect_submission.attempts(nb, release_nb)
    flags += [f"tampered:deleted:{g}" for g in inspect_submission.missing_answers(nb, release_nb)]
    os.makedirs(dest)
    with open(os.path.join(dest, expected), "w", encoding="utf-8") as f:   # validated as it was read
        f.write(staged_text(inspect_submission.repair(nb, release_nb)))
    for name in os.listdir(src):
        path = os.path.join(src, name)
        if name.endswith(".ipynb") or not os.path.isfile(path) or os.path.islink(path):
            continue
        if os.path.getsize(path) <= MAX_FILE_BYTES:
            shutil.copyfile(path, os.path.join(dest, name), follow_symlinks=False)
    return None, flags


def staged_text(nb: NotebookNode) -> str:
    """A staged notebook's JSON (``nb`` is staging's own): what nbformat writes, without its
    indentation, which only the pure-Python encoder writes (most of staging's time). Only the
    worker reads it; nbgrader writes the autograded notebook with its own."""
    strip_transient(nb)
    try:
        return json.dumps(nb, sort_keys=True, ensure_ascii=False) + "\n"
    except (TypeError, ValueError):   # what nbformat's own encoder takes (bytes)
        return nbformat.v4.writes(nb) + "\n"


@dataclasses.dataclass
class Run:
    """What one run of ``grade_class`` did: the class's results, the students it graded, those
    whose earlier entry it kept (their receipt would not change), and the grade changes it
    wrote to changes.json (receipts.grade_changes; empty when no grade moved)."""
    results: dict
    graded: list
    kept: list
    changes: list


def grade(assignment: Assignment, submissions: str, out: str, sandbox: bool = True, overrides: Config | None = None,
          workers: int | None = None, scheduler: str | None = None, db_url: str | None = None, progress: bool = False,
          students: Iterable[str] | None = None, force: bool = False,
          known_solutions: str | None = None, lang: str = "en") -> dict[str, Any]:
    """Grade the class (see ``grade_class``) and return its results.json."""
    return grade_class(assignment, submissions, out, sandbox, overrides, workers, scheduler, db_url, progress,
                       students, force, known_solutions, lang).results


def grade_class(assignment: Assignment, submissions: str, out: str, sandbox: bool = True,
                overrides: Config | None = None, workers: int | None = None, scheduler: str | None = None,
                db_url: str | None = None, progress: bool = False, students: Iterable[str] | None = None,
                force: bool = False, known_solutions: str | None = None, lang: str = "en",
                started: Started | None = None) -> Run:
    """Grade every submission whose receipt would change (``force``: every one; ``students``:
    only theirs, the others keep what an earlier run gave them); ``sandbox=False`` runs
    kernels without bubblewrap (flagged). ``overrides`` (a traitlets Config) is laid over
    nbgrader_config.py, e.g. shorter limits. ``workers``/``scheduler`` override Dispatch's
    config; ``db_url`` the gradebook's (default: SQLite in ``out``). ``progress`` shows a
    progress bar on stderr. ``known_solutions``: a folder of solutions collected by the
    instructor, which the copying evidence compares the class with (evidence.py). ``lang``:
    the class report's language (the instructor's; grades never depend on it). ``started``:
    the run as ``start.begin`` began it (with the same ``out``, ``db_url``, ``sandbox``,
    ``overrides``, ``workers`` and ``scheduler``), or None to begin it here. Returns a ``Run``."""
    say = messages.speaker(lang)   # an unknown language fails before any grading
    run = started or begin(out, db_url, sandbox, overrides, workers, scheduler)
    out, config, aid = run.out, run.config, assignment.id
    work = run.work
    dispatch = Dispatch(config=config)
    sweeper = run.sweeper
    # the zygote the local workers share, booting since ``begin`` while this process prepares
    with ZYGOTES.sharing(config, os.path.join(work, KERNELS), run.local):
        warn_without_cgroups(sandbox)
        course, release_nb = prepare_course(config, assignment, work)
        root = submitted_root(os.path.abspath(submissions))
        judge, _, keep = prepared(assignment)   # the judge, with the reference's outputs on the hidden cases
        inputs = receipts.class_inputs(assignment, os.path.join(work, "release", aid), config, sandbox, judge)
        plan = plan_run(config, assignment, out, root, inputs, students, force)
        # staged as the workers ask for them: they start on the first while the rest are staged
        records: dict[str, Record] = {}
        bar = Progress(len(plan.graded), enabled=progress)
        first, jobs = peek(staged(assignment, root, work, release_nb, sandbox, records, set(plan.graded), plan.receipts,
                                  bar.refused))
        workers, foreseen = dispatch.local_workers(bar.total), None   # the jobs still expected, as run_jobs is told
        cache = evidence.Cache(os.path.join(work, CACHE, f"evidence-{aid}.json"), receipts.of(inputs), fresh=force)
        if first is not None and not dispatch.scheduler:   # workers forked from here inherit what these make
            # the pages' templates and teaching text; while the zygote boots, also for a worker that
            # runs here (a rerun's one late submission), and the code of those kept, for the evidence
            if workers > 1 or ZYGOTES.booting():
                feedback.warm(config, first["files"].get(assignment.notebook + ".ipynb"), assignment.notebook)
            if plan.kept and ZYGOTES.booting():
                cache.read_ahead(assignment, config, sorted(plan.kept))
            ZYGOTES.ready(keep)
            if plan.kept and workers == 1:   # graded here: this process waits on kernels
                jobs = list(jobs)
                kept = [s for s, e in plan.kept.items() if e.get("status") != "unreadable"]
                foreseen = evidence.foresee(assignment, config, release_nb, known_solutions, cache, kept,
                                            {j["student"]: j["files"].get(assignment.notebook + ".ipynb", b"") for j in jobs})
        judged = run_jobs(config, assignment, work, dispatch, course, jobs, records, bar, cache, count=bar.total)
    if progress:
        for note in exchange_notes(work, aid, records):
            print(f"note: {note}", file=sys.stderr)
    results = finish(config, assignment, out, records, judged, bar, partial=students is not None, kept=plan.kept,
                     evidence_of=(release_nb, known_solutions, cache, foreseen), say=(say, lang))
    sweeper.join()
    changes = receipts.grade_changes(plan.earlier, results, records)
    if changes:
        receipts.write_changes(os.path.join(out, "results", aid, "changes.json"), aid, changes)
    return Run(results, sorted(records), sorted(plan.kept), changes)


def peek(items):
    """(the first of ``items`` or None, an iterator of all of them, the first included)."""
    items = iter(items)
    first = next(items, None)
    return first, itertools.chain([first], items) if first is not None else iter(())


def warn_without_cgroups(sandbox):
    """Say loudly at start when the shared zygote could make no cgroup per kernel."""
    if sandbox and ZYGOTES.zygote is not None and ZYGOTES.zygote.cgroups is None:
        print(f"WARNING: no cgroup per kernel here ({ZYGOTES.zygote.cgroup_problem}). A kernel's memory and "
              f"processes are limited per process, not as a whole: one submission can hold more memory than "
              f"GradingKernelManager.memory_limit. Grade as root, or with a delegated cgroup (systemd-run "
              f"--user --scope -p Delegate=yes ...), to have them. Results are flagged no_kernel_cgroup.",
              file=sys.stderr)


def run_jobs(config, assignment, work, dispatch, course, jobs, records, bar, cache=None, count=None):
    """Grade the staged submissions (``jobs``: a list, or an iterator of ``count`` at most that
    stages each as it is read) and store each result as it comes back: {student: what
    results.json takes from its autograded notebook} (see ``verdicts``). ``cache``: the
    evidence's, which takes each notebook's code as it is stored."""
    judged = {}
    placer = folders.Placer(os.path.join(work, "files"))
    count = len(jobs) if count is None else count
    journal = classwide_journal(dispatch, work, assignment, count)
    if journal is not None:
        jobs = (dict(job, journal=journal.path) for job in jobs)
    try:
        for result in dispatch.run(course, jobs, parent=work, count=count):
            rec = records[result["student"]]
            if journal is not None:
                journal.add(result.get("learned", []), rec["student"])
            rec["flags"] += [f for f in result.get("flags", []) if f not in rec["flags"]]
            if result["ok"]:
                try:
                    judged[rec["student"]] = store(config, assignment, work, result, placer, cache)
                except Exception as exc:
                    rec.update(status="error", message=f"the grades could not be recorded: {type(exc).__name__}: {exc}")
                else:
                    rec["message"] = "; ".join(m for m in (rec["message"], result["message"]) if m)   # e.g. no feedback page
            else:
                rec.update(status="error", message=result["message"])
            bar.update(result, "graded" if rec["status"] == "pending" else rec["status"])
    finally:
        if journal is not None:
            journal.close()
    return judged


def classwide_journal(dispatch, work, assignment, count):
    """The journal of what a local pool's workers learned that the others can reuse (the
    catalog's diagnoses, the repair searches the class agreed on: judging/classwide.py); None
    for one worker, which keeps its own, and on a cluster."""
    if dispatch.scheduler or dispatch.local_workers(count) < 2:
        return None
    return Journal(os.path.join(work, f"learned-{assignment.id}.jsonl"))


@dataclasses.dataclass
class Plan:
    graded: list     # the students to grade
    kept: dict       # {student: earlier entry} of those whose receipt would not change
    receipts: dict   # {student: receipt now} of every student found
    earlier: dict    # {student: entry} of the earlier results.json


def plan_run(config, assignment, out, root, inputs, students=None, force=False):
    """Who this run grades. Every student found when ``force``, when there is no earlier
    results.json or with ``students`` (only theirs); otherwise those whose receipt would
    change, whose earlier entry is an error, or whose earlier grading the course folder no
    longer holds as this command left it (``current``)."""
    aid = assignment.id
    path = os.path.join(out, "results", aid, "results.json")
    earlier = earlier_results(path, aid)
    found = find_students(root, aid, None if students is None else set(students))
    memo = receipts.DigestMemo(os.path.join(out, WORK, CACHE, "submissions.json"))
    now = {s: receipts.receipt(memo.digest(os.path.join(root, s, aid), MAX_FILE_BYTES), inputs) for s in found}
    memo.save()
    if force or students is not None or not earlier:
        return Plan(found, {}, now, earlier)
    same = [s for s in found if s in earlier and earlier[s].get("receipt") == now[s]]
    held = current(config, assignment, path, {s: earlier[s] for s in same})
    kept = {s: earlier[s] for s in same if s in held}
    return Plan([s for s in found if s not in kept], kept, now, earlier)


def current(config, assignment, results_path, entries):
    """The students of ``entries`` whose grading is still as this command left it: an
    unreadable one, or one whose submission the gradebook holds with nothing given by hand
    and no late penalty (those are graded again, so that their page shows the gradebook's
    scores) and whose autograded notebook is no newer than results.json (nbgrader's
    autograde or formgrader's button has not graded it since)."""
    aid, held = assignment.id, set()
    if not entries:
        return held
    since = os.stat(results_path).st_mtime_ns
    submitted, by_hand = record.submitted_students(config, aid)
    graded = folders.folders(config, "autograded", entries, aid)
    for student, entry in entries.items():
        if entry.get("status") == "unreadable":
            held.add(student)
        elif entry.get("status") in ("graded", "incomplete") and student in submitted and student not in by_hand:
            path = os.path.join(graded[student], assignment.notebook + ".ipynb")
            if os.path.isfile(path) and os.stat(path).st_mtime_ns <= since:
                held.add(student)
    return held


def exchange_notes(work: str, aid: str, records: Mapping[str, Record]) -> list[str]:
    """What to tell the instructor about submissions whose feedback nbgrader's release_feedback
    cannot hand back: those without the files nbgrader's submit writes beside the notebook."""
    lacking: dict[str, list[str]] = {}
    for student, rec in sorted(records.items()):
        staged = os.path.join(work, "submitted", student, aid)
        if rec["status"] == "pending" and os.path.isdir(staged):
            missing = folders.missing_exchange_files(staged)
            if missing:
                lacking.setdefault(" and ".join(missing), []).append(student)
    return [f"no {files} beside the notebook of {', '.join(students)}: nbgrader's release_feedback cannot hand "
            f"{'this page' if len(students) == 1 else 'these pages'} back, and stops at the first such folder. "
            f"Submissions collected by `nbgrader collect` have them; one collected while its student was still "
            f"submitting may not: collect again with `nbgrader collect --update`, then grade again."
            for files, students in lacking.items()]


def prepare_course(config: Config, assignment: Assignment, work: str) -> tuple[Course, NotebookNode]:
    """The assignment's source (with its generated files), the class's gradebook holding it,
    and what every worker receives (``Course``); also the release notebook, which staging
    compares submissions with."""
    aid = assignment.id
    shutil.copytree(assignment.source_dir, os.path.join(work, "source", aid),
                    ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    write_generated(assignment, os.path.join(work, "source", aid), reuse_release=True)
    seed, kept = seeding.seeded(config, aid, work)   # also writes the release, and WORK/seed.db
    # the feedback pages' compiled templates and shared cells, kept with the seed: made by the same code
    config.FeedbackExporter.cache_dir = os.path.join(kept, "pages")
    record.start_from_seed(config, seed)   # a new SQLite gradebook: the seed's copy
    record.prepare(config, aid, like="sqlite:///" + os.path.join(work, "seed.db"))
    course = Course(config=config, assignment_id=aid, notebook=assignment.notebook,
                    source=folders.read_files(os.path.join(work, "source", aid)), gradebook=seed)
    # the run's own release, as nbgrader just wrote or the cache kept it: no need to validate it again
    with open(os.path.join(work, "release", aid, assignment.notebook + ".ipynb"), encoding="utf-8") as f:
        release_nb = nbformat.v4.reads(f.read())   # nbformat.read's notebook, but for validating it
    return course, release_nb


def staged(assignment, root, work, release_nb, sandbox, records, only=None, receipts=None, refused=None):
    """Stage the submissions one at a time (of the students in ``only``, when given), as they
    are read: yields the workers' job for each that can be graded, and puts every student's
    record so far in ``records``, with its receipt from ``receipts``. ``refused()`` is called
    for each that cannot be graded."""
    for student in find_students(root, assignment.id, only):
        records[student], job = stage_one(assignment, root, work, release_nb, sandbox, student)
        if receipts is not None:
            records[student]["receipt"] = receipts[student]
        if job is not None:
            yield job
        elif refused is not None:
            refused()


def stage_one(assignment, root, work, release_nb, sandbox, student):
    """One student's submission staged: (its record so far, its job or None)."""
    if not STUDENT_ID.match(student):
        return {"student": student, "status": "unreadable", "flags": [],
                "message": "the student folder's name may only use letters, digits and . _ @ + -"}, None
    aid = assignment.id
    folder = os.path.join(work, "submitted", student, aid)
    problem, flags = stage(assignment, os.path.join(root, student, aid), folder, release_nb)
    gone = [f.split(":")[-1] for f in flags if f.startswith("tampered:deleted:") and f.split(":")[-1] in assignment.by_name]
    notes = [problem] if problem else []
    if gone and not problem:
        notes.append(f"{len(gone)} of the {len(assignment.exercises)} answer cells were missing "
                     f"({', '.join(gone[:3])}{', ...' if len(gone) > 3 else ''}): they were restored empty and earn nothing")
    record = {"student": student, "status": "unreadable" if problem else "pending",
              "message": "; ".join(notes), "flags": flags + ([] if sandbox else ["unsandboxed"])}
    return record, None if problem else {"student": student, "files": folders.read_files(folder)}


def finish(config, assignment, out, records, judged, bar, partial=False, kept=None, evidence_of=None,
           say=(report.english, "en")):
    """After the workers: the gradebook's view of the run, results.json, grades.csv, the
    report and the LMS files in --out/results/<assignment>/, the latest also in --out/. A
    ``partial`` run (some students only) keeps the earlier results of the others; ``kept``:
    the earlier entries of the students a run did not grade again (their receipts held).
    ``evidence_of``: (the release notebook, the known solutions' folder or None, an
    evidence.Cache, and evidence.foresee's Future or None) for the clusters and the copying
    evidence, written after results.json (they never change it). ``say``: (the report's say function, its language)."""
    aid = assignment.id
    own = os.path.join(out, "results", aid)   # this assignment's own: another assignment never overwrites them
    os.makedirs(own, exist_ok=True)
    timings_path = os.path.join(own, "timings.csv")
    earlier = earlier_results(os.path.join(own, "results.json"), aid) if partial else dict(kept or {})
    bar.write_csv(timings_path, keep=earlier_timings(timings_path, set(earlier) - set(records)) if earlier else ())

    prefix = test_prefix(config)
    with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
        for student, rec in records.items():
            if rec["status"] != "pending":
                forget(gb, config, aid, student)
        entries = {s: collect(assignment, gb, records[s], prefix, *judged.get(s, ({}, []))) for s in records}
        if partial:   # the others, as an earlier run left them, or as nbgrader's autograde did
            others = {s: e for s, e in earlier.items() if s not in entries}
            others.update(graded_elsewhere(config, assignment, gb, prefix, set(entries) | set(others)))
            entries = {**others, **entries}
        elif kept:
            entries = {**kept, **entries}
        if is_stock(config):
            CsvExportPlugin(to=os.path.join(own, "grades.csv"), assignment=[aid]).export(gb)
        else:   # the same file, in a few queries instead of a few per student
            grades_export.export(gb, os.path.join(own, "grades.csv"), [aid])
        sort_rows(os.path.join(own, "grades.csv"))
        people = lms.roster(None, None, aid, sorted(entries), gb)
    results = {"assignment": aid, "max_score": float(assignment.max_score),
               "submissions": [entries[s] for s in sorted(entries)]}
    with open(os.path.join(own, "results.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(results, indent=2) + "\n")   # json.dump's text, written at once
    found = evidence.write(assignment, results, own, config, *evidence_of, jobs=_jobs(config)) if evidence_of else (None, None)
    # the class report and the LMS files live beside results.json and grades.csv
    report.write(results, own, report.catalog_messages(assignment, say[0]), report.load_timings(timings_path), *found,
                 say=say[0], lang=say[1], cache_dir=os.path.join(out, WORK, CACHE, "report"))
    for fmt in lms.FORMATS:
        lms.write(fmt, people, os.path.join(own, lms.FILENAMES[fmt]), aid, assignment.max_score)
    for name in OUTPUTS:   # the latest run's, where the single-assignment layout has them
        if os.path.exists(os.path.join(own, name)):
            shutil.copyfile(os.path.join(own, name), os.path.join(out, name))
    shutil.rmtree(os.path.join(out, evidence.PAGES), ignore_errors=True)   # the report's links to them
    if os.path.isdir(os.path.join(own, evidence.PAGES)):
        shutil.copytree(os.path.join(own, evidence.PAGES), os.path.join(out, evidence.PAGES))
    return results


def _jobs(config: Config) -> int:
    """Processes for reading the class's code: the local workers', at most the cores'."""
    workers = config.Dispatch.get("workers", None) if "Dispatch" in config else None
    return max(1, min(workers or os.cpu_count() or 1, os.cpu_count() or 1))


def graded_elsewhere(config: Config, assignment: Assignment, gb: Gradebook, prefix: str,
                     known: Container[str]) -> dict[str, Entry]:
    """Entries for the submissions autograded in the course folder but not by this command
    (nbgrader's autograde, formgrader's Autograde button), read as ``collect`` reads ours: the
    scores from the gradebook, the verdicts from the autograded notebook's test cells."""
    found: dict[str, Entry] = {}
    for student in folders.students(config, "autograded", assignment.id):
        path = os.path.join(folders.folder(config, "autograded", student, assignment.id), assignment.notebook + ".ipynb")
        if student in known or not STUDENT_ID.match(student) or not os.path.isfile(path):
            continue
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception:   # not ours to judge: it is left out
            continue
        rec = {"student": student, "status": "pending", "message": "", "flags": []}
        found[student] = collect(assignment, gb, rec, prefix, *verdicts(nb, prefix))
    return found


def earlier_results(path: str, assignment_id: str) -> dict[str, Entry]:
    """{student: entry} of an earlier results.json of the assignment (none if unreadable)."""
    try:
        with open(path, encoding="utf-8") as f:
            found = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict) or found.get("assignment") != assignment_id:
        return {}
    return {s["student"]: s for s in found.get("submissions", []) if isinstance(s, dict) and "student" in s}


def earlier_timings(path: str, students: Container[str]) -> list[dict[str, str]]:
    """The rows of an earlier timings.csv for ``students``."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            return [row for row in csv.DictReader(f) if row.get("student") in students]
    except OSError:
        return []


def test_prefix(config: Config) -> str:
    """The grade_id prefix of test cells, as JudgedExecute is configured."""
    from ..judging.judged_execute import JudgedExecute
    return config.JudgedExecute.get("test_prefix", JudgedExecute.test_prefix.default_value)


def sort_rows(path: str) -> None:
    """nbgrader exports rows in the database's order, which differs between SQLite and
    PostgreSQL: sort them, so the same grades always give the same file."""
    with open(path, newline="", encoding="utf-8") as f:
        header, *rows = list(csv.reader(f))
    key = [header.index(c) for c in ("assignment", "student_id") if c in header]
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header] + sorted(rows, key=lambda r: [r[i] for i in key] + r))


def store(config: Config, assignment: Assignment, work: str, result: Mapping[str, Any],
          placer: folders.Placer, cache: evidence.Cache | None = None) -> Verdicts:
    """A worker's result into the class's folders and gradebook (this process alone writes
    them), leaving what nbgrader's autograde and generate_feedback leave (folders.py). Returns
    the notebook's verdicts and events (``verdicts``). ``cache``: the evidence's, given the
    notebook's code now (``Cache.take``)."""
    aid, student, name = assignment.id, result["student"], assignment.notebook
    nb = nbformat.v4.reads(result["notebook"])   # as nbgrader wrote it in the worker: validated there
    found = verdicts(nb, test_prefix(config))
    code = evidence.answer_cells(nb, set(assignment.by_name))
    staged = os.path.join(work, "submitted", student, aid)
    timestamp = coursedir(config, aid, student).get_existing_timestamp(staged)
    scored_otherwise = record.record(config, aid, name, student, nb, timestamp)
    graded = folders.write_autograded(config, aid, student, staged, os.path.join(work, "source", aid), name,
                                      result["notebook"], placer)
    if cache is not None:
        cache.take(os.path.join(graded, name + ".ipynb"), result["notebook"].encode("utf-8"), code)
    if result["feedback"] is None:
        shutil.rmtree(folders.folder(config, "feedback", student, aid), ignore_errors=True)
    elif scored_otherwise:
        # the worker's page shows the notebook's own scores: the class's gradebook scores it
        # otherwise (a score given in formgrader, a late penalty), so the page is made here, by
        # nbgrader, from the class's
        GenerateFeedback(coursedir=coursedir(config, aid, student), config=config).start()
    else:
        folders.write_feedback(config, aid, student, name, result["feedback"], placer)
    return found


def forget(gb: Gradebook, config: Config, aid: str, student: str) -> None:
    """A submission this run could not grade: keep the student (grades.csv shows 0) but
    drop what an earlier run graded, in the gradebook and on disk."""
    gb.update_or_create_student(student)
    try:
        gb.remove_submission(aid, student)
    except MissingEntry:
        pass
    folders.remove(config, student, aid)


def verdicts(nb: NotebookNode, prefix: str) -> Verdicts:
    """What results.json takes from an autograded notebook: the judge's verdicts by function
    (stored in its test cells' metadata), and the kernel's events."""
    found = {c.metadata["judge"]["id"]: c.metadata["judge"] for c in nb.cells
             if "judge" in c.metadata and c.metadata.get("nbgrader", {}).get("grade_id")
             == prefix + c.metadata["judge"].get("id")}
    return found, nb.metadata.get("grader", {}).get("events", [])


def located(v: Mapping[str, Any]) -> dict[str, Any]:
    """A wrong function's location and repair, as results.json keeps them (when there are)."""
    out: dict[str, Any] = {}
    loc = v.get("location")
    if loc and (loc.get("quantity") or loc.get("lineno")):
        out["location"] = {"quantity": loc.get("quantity"), "line": loc.get("line"), "text": loc.get("text"),
                           "part": bool(loc.get("part"))}
    if v.get("repair"):
        out["repair"] = {k: v["repair"][k] for k in ("line", "before", "after", "diff")}
    return out


def collect(assignment: Assignment, gb: Gradebook, rec: Record, prefix: str, verdicts: Mapping[str, Mapping[str, Any]],
            events: Sequence[Mapping[str, Any]]) -> Entry:
    """One submission's entry in results.json, from the gradebook and the verdicts that the
    judge stored in the autograded notebook."""
    aid, student = assignment.id, rec["student"]
    entry = dict({k: v for k, v in rec.items() if k != "receipt"}, score=0.0, flags=list(rec["flags"]), exercises=[])
    scores = {}
    if rec["status"] == "pending":
        try:
            submission = gb.find_submission_notebook(assignment.notebook, aid, student)
            scores = {name: grade.score for name, grade in grades_of(gb, submission).items()}
        except MissingEntry:
            pass
    entry["flags"] += [f"{e['kind']}:{e['where']}" for e in events]
    for ex in assignment.exercises:
        v = verdicts.get(ex.name, {})
        if v.get("diagnosis_cut"):   # not a fault: the score never depends on the diagnosis
            entry["flags"].append(f"diagnosis_cut:{ex.name}")
        if v.get("repair_cut") and not v.get("repair"):   # nor on the repair
            entry["flags"].append(f"repair_cut:{ex.name}")
        score = scores.get(prefix + ex.name) or 0.0
        entry["exercises"].append({
            "id": ex.name, "score": float(score), "max_score": float(ex.points),
            "passed": float(score) == float(ex.points), "diagnoses": v.get("diagnoses", []),
            "signature": v.get("signature", ""),
            "feedback": v.get("feedback", "Not graded: " + ("see the submission's message." if rec["message"] else "no verdict.")),
            **located(v)})
    entry["score"] = round(sum(e["score"] for e in entry["exercises"]), 2)
    if rec["status"] == "pending":
        entry["status"] = "incomplete" if events else "graded"   # every kernel event is a fault
    entry["flags"] = sorted(set(entry["flags"]), key=entry["flags"].index)
    if "receipt" in rec:
        entry["receipt"] = rec["receipt"]
    return entry
