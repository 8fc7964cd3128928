"""The course's command line.

  python -m assignments release        rebuild release/ from source/
  python -m assignments catalogs       extract the message template, update each language's catalog
  python -m assignments check-release  prove the release is current, leak-free and gradeable
  python -m assignments grade          autograde submitted/ (or --submissions DIR) into --out DIR
  python -m assignments verify         grade a results.json's submissions again and check them against it
  python -m assignments report         rebuild report.html and report.json from a results.json
  python -m assignments export         grades for Canvas's or Moodle's gradebook import
  python -m assignments demo           release, then grade the bundled sample class
"""
import argparse
import gc
import logging
import os
import sys
import warnings

# one BLAS thread per process: the grader runs one worker per core, and the arrays are small
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

# nbgrader, nbconvert and SQLAlchemy are imported where a command needs them: `grade` first sets
# the kernels' zygote booting (run/start.py), so that its imports and these run side by side
from .grading.contract import assignment as course  # noqa: E402
from .grading.contract import messages  # noqa: E402
from .grading.reports import lms  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _sample_class():
    """Build the bundled sample class (samples/build.py) and return its folder."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("samples_build", os.path.join(REPO, "samples", "build.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()


def _parser():
    parser = argparse.ArgumentParser(prog="python -m assignments", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rel = sub.add_parser("release", help="rebuild release/ from source/ (and source/'s generated parts)")
    rel.add_argument("--lang", default="en", choices=("en", "zh-CN"),
                     help="the language of the release: en (release/, the default) or zh-CN (release-zh-CN/)")
    sub.add_parser("catalogs", help="extract the message template from the code and update each language's catalog")
    sub.add_parser("check-release", help="check release/ against source/, leaks, expected values, grading")
    _grade_options(sub.add_parser("grade", help="autograde every submission"))
    v = sub.add_parser("verify", help="grade submissions of a results.json again and check that their entries "
                                      "match byte for byte (an appeal's answer)")
    v.add_argument("results", help="the results.json to check (e.g. OUT/results/<assignment>/results.json)")
    v.add_argument("--submissions", default=REPO,
                   help="folder holding submitted/<student>/<assignment>/ (or that layout itself), as given to grade")
    v.add_argument("--student", action="append", default=None, metavar="ID", help="check this student (repeatable)")
    v.add_argument("--sample", type=int, default=None, metavar="N",
                   help="check N students drawn at random (default: every student of the results)")
    v.add_argument("--seed", type=int, default=None, help="make the --sample draw repeatable")
    v.add_argument("--workers", type=int, default=None, help="submissions graded at once (default: one per core)")
    v.add_argument("--no-sandbox", action="store_true", help="for results graded with --no-sandbox")
    r = sub.add_parser("report", help="rebuild report.html and report.json from a results.json")
    r.add_argument("results", nargs="?", default=os.path.join(REPO, "results.json"),
                   help="the results.json to report on (default: ./results.json); timings.csv is read beside it")
    r.add_argument("--out", default=None, help="where report.html and report.json go (default: beside results.json)")
    _lang_option(r)
    x = sub.add_parser("export", help="write grades as Canvas's or Moodle's gradebook import reads them")
    x.add_argument("results", nargs="?", default=os.path.join(REPO, "results.json"),
                   help="the results.json whose students are exported (default: ./results.json)")
    x.add_argument("--format", choices=lms.FORMATS + ("all",), default="all")
    x.add_argument("--out", default=None, help="where grades_canvas.csv / grades_moodle.csv go (default: beside results.json)")
    x.add_argument("--title", default=None,
                   help="the grade column's header (default: the assignment id); for Canvas, 'Name (1234)' "
                        "targets the existing assignment 1234")
    x.add_argument("--db-url", default=None,
                   help="nbgrader's gradebook with the students' names, emails and LMS ids (default: "
                        "CourseDirectory.db_url, else gradebook.db beside results.json)")
    d = sub.add_parser("demo", help="build the release and grade the sample class in samples/")
    d.add_argument("--out", default=REPO)
    d.add_argument("--quiet", action="store_true", help="no progress, no summary table")
    parser.add_argument("--log-level", default="ERROR",
                        help="nbgrader's log level (default ERROR; WARNING also lists, for every "
                             "submission, the test cells restored to their hidden-test version)")
    return parser


def _lang_option(p):
    p.add_argument("--lang", default="en", choices=("en", "zh-CN"),
                   help="the language of the class report and the summary table: en (the default) or zh-CN; "
                        "results.json and the grades are the same in every language")


def _grade_options(g):
    g.add_argument("--submissions", default=REPO,
                   help="folder holding submitted/<student>/<assignment>/ (or that layout itself)")
    g.add_argument("--out", default=REPO, help="where autograded/, feedback/, grades.csv, results.json go")
    g.add_argument("--assignment", action="append", default=None, metavar="ID",
                   help="grade this assignment (repeatable; default: every assignment the submissions hold)")
    g.add_argument("--student", action="append", default=None, metavar="ID",
                   help="regrade only this student (repeatable); the others keep what an earlier run gave them")
    g.add_argument("--force", action="store_true",
                   help="grade every submission again, even those whose receipt would not change")
    g.add_argument("--quiet", action="store_true", help="no progress, no summary table")
    g.add_argument("--no-sandbox", action="store_true",
                   help="run submissions without bubblewrap (unsafe; every result is flagged 'unsandboxed')")
    g.add_argument("--workers", type=int, default=None,
                   help="submissions graded at once on this machine (default: one per core; "
                        "Dispatch.workers in nbgrader_config.py)")
    g.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="grade on the Dask cluster of this scheduler, e.g. tcp://10.0.0.5:8786 "
                        "(use with a server gradebook: --db-url postgresql://...)")
    g.add_argument("--db-url", default=None,
                   help="the gradebook (default: CourseDirectory.db_url, else SQLite gradebook.db in --out)")
    g.add_argument("--known-solutions", default=None, metavar="DIR",
                   help="a folder of solutions you collected (notebooks or .py files, e.g. public ones): the "
                        "copying evidence (similarity.json) reports a submission that matches one against "
                        "known:FILE. Evidence for you to weigh; it never changes a grade")
    _lang_option(g)


def main(argv=None):
    args = _parser().parse_args(argv)
    # nbgrader 0.9's gradebook trips SQLAlchemy 2's autoflush warnings; the grades are right
    # (the end-to-end tests check them), so keep them out of the instructor's terminal.
    warnings.filterwarnings("ignore", message=".*not in session.*")
    # cells that nbgrader's add_missing_cells restores have no id yet; nbformat warns about it
    warnings.filterwarnings("ignore", message="Cell is missing an id field")
    logging.basicConfig(level=args.log_level, format="%(levelname)s %(name)s: %(message)s")
    if args.command == "report":
        return make_report(args.results, args.out, args.lang)
    if args.command == "export":
        return export(args.results, args.format, args.out, args.title, args.db_url)
    if args.command == "verify":
        return check_results(args)
    if args.command == "check-release":
        return check_release()
    if args.command == "catalogs":
        from .grading.authoring import translate
        with messages.steady_dates():   # a new date alone is no change
            messages.update_catalogs()
            translate.update_catalogs()
        return 0
    if args.command in ("release", "demo"):
        build_release(getattr(args, "lang", "en"))
    if args.command == "release":
        return 0
    return grade(args, _sample_class() if args.command == "demo" else args.submissions)


def check_release():
    failed = 0
    from .grading.authoring import staff_checks
    for a in (course.load(aid) for aid in course.known()):
        for title, problems in staff_checks.all_checks(a, REPO).items():
            print(("ok    " if not problems else "FAIL  ") + f"{a.id}: {title}")
            for p in problems:
                print("      - " + p.replace("\n", "\n        "))
            failed += bool(problems)
    return 1 if failed else 0


def build_release(lang="en"):
    """release/ (English), or release-<lang>/ for another language."""
    root = os.path.join(REPO, "release" if lang == "en" else f"release-{lang}")
    from .grading.authoring import docs, release  # not on grading's path: they import nbgrader's preprocessors
    for a in (course.load(aid) for aid in course.known()):
        path = release.build(a, os.path.join(REPO, "source"), root, lang)
        docs.write(a, REPO, lang)   # docs/mistakes/<id>[.<lang>].md
        print(f"release written to {os.path.relpath(path, os.getcwd())}")


def _wanted(args, submissions):
    """The assignments to grade (and an error message, or None)."""
    # the run's light part finds the submissions
    from .grading.run import start
    wanted = getattr(args, "assignment", None) or [aid for aid in start.assignments_in(submissions)
                                                   if aid in course.known()]
    if not wanted:
        return [], (f"no submissions of any assignment of this course ({', '.join(course.known())}) in {submissions}")
    only = getattr(args, "student", None)
    if only:
        root = start.submitted_root(os.path.abspath(submissions))
        found = {aid: start.find_students(root, aid, set(only)) for aid in wanted}
        absent = sorted(set(only) - {s for students in found.values() for s in students})
        if absent:
            return [], f"no submission by {', '.join(absent)} in {root} (of {', '.join(wanted)})"
        wanted = [aid for aid in wanted if found[aid]]
    return wanted, None


def grade(args, submissions):
    if not os.path.isdir(submissions):
        print(f"error: no such folder: {submissions}", file=sys.stderr)
        return 2
    wanted, problem = _wanted(args, submissions)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    from .grading.run import start
    sandbox, lang = not getattr(args, "no_sandbox", False), getattr(args, "lang", "en")
    for aid in wanted:
        gc.disable()   # no collections while the imports below build their hundred thousand objects
        try:
            began = start.begin(args.out, getattr(args, "db_url", None), sandbox, None, getattr(args, "workers", None),
                                getattr(args, "scheduler", None))   # the zygote boots while the pipeline is imported
            from .grading.upstream import is_stock, package
            package.lean(is_stock(began.config))   # nbgrader without its server extensions
            package.without_format_checkers(is_stock(began.config))   # checks no schema of ours asks for
            from .grading.reports import report
            from .grading.run import pipeline, receipts
            from .grading.run.dispatch import ClusterUnfit
            gc.freeze()   # what the imports made lives until the end: the collector need not walk it again
        except start.SandboxUnavailable as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        finally:
            gc.enable()
        try:
            run = pipeline.grade_class(course.load(aid), submissions, args.out, sandbox=sandbox,
                                       workers=getattr(args, "workers", None), scheduler=getattr(args, "scheduler", None),
                                       db_url=getattr(args, "db_url", None), progress=not args.quiet,
                                       students=getattr(args, "student", None), force=getattr(args, "force", False),
                                       known_solutions=getattr(args, "known_solutions", None),
                                       lang=lang, started=began)
        except KeyError as exc:
            print(f"error: {exc.args[0]}", file=sys.stderr)
            return 2
        except (start.SandboxUnavailable, ClusterUnfit) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        own = os.path.join(args.out, "results", aid)
        if run.changes:   # said even with --quiet: grades moved
            print(f"{aid}: {receipts.summary(run.changes)}\nchanges: {os.path.join(own, 'changes.json')}")
        if not args.quiet:
            say = messages.speaker(getattr(args, "lang", "en"))   # the instructor's language
            print("\n" + say("{assignment}: graded {graded}, kept {kept} whose receipts held", assignment=aid,
                              graded=len(run.graded), kept=len(run.kept)) + "\n" + report.summary(run.results, say))
            print("\n" + say("results: {results}; report: {report}; feedback: {feedback}",
                              results=os.path.join(own, "results.json"), report=os.path.join(own, "report.html"),
                              feedback=os.path.join(args.out, "feedback")))
    return 0


def check_results(args):
    """verify: exit 0 when every entry checked came out as recorded, 1 naming what differs,
    2 when it cannot start."""
    from .grading.run import pipeline, verify
    try:
        checked, problems = verify.verify(args.results, args.submissions, args.student, args.sample, args.seed,
                                          sandbox=not args.no_sandbox, workers=args.workers)
    except (verify.BadRequest, pipeline.SandboxUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for line in problems:
        print(f"DIFFERS  {line}")
    print(f"{len(checked)} checked ({', '.join(checked)}): "
          + ("every entry matches its receipt, byte for byte" if not problems else f"{len(problems)} difference(s)"))
    return 1 if problems else 0


def make_report(results_path, out=None, lang="en"):
    """report.html and report.json from a results.json (and the timings.csv beside it), in ``lang``."""
    from .grading.reports import report
    from .grading.run import evidence
    folder = os.path.dirname(os.path.abspath(results_path))
    try:
        results = report.load_results(results_path)
        timings = report.load_timings(os.path.join(folder, "timings.csv"))
    except report.BadResults as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    say = messages.speaker(lang)
    told = report.catalog_messages(course.load(results["assignment"]), say) if results["assignment"] in course.known() else {}
    paths = report.write(results, out or folder, told, timings, *evidence.load(folder), say=say, lang=lang)
    print("written: " + ", ".join(paths))
    return 0


def export(results_path, fmt, out=None, title=None, db_url=None):
    """Canvas and/or Moodle import files for the students of a results.json."""
    from .grading.reports import report
    from .grading.run.course import load_config
    folder = os.path.dirname(os.path.abspath(results_path))
    try:
        results = report.load_results(results_path)
    except report.BadResults as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    config = load_config(folder, db_url, course=True)
    url = config.CourseDirectory.db_url
    students = [s["student"] for s in results["submissions"]]
    if url.startswith("sqlite:///") and not os.path.exists(url[len("sqlite:///"):]):
        print(f"note: no gradebook at {url[len('sqlite:///'):]}: exporting the ids and scores of results.json, "
              f"without names, emails or LMS ids", file=sys.stderr)
        people = lms.roster_from_results(results)
    else:
        people = lms.roster(url, config.CourseDirectory.course_id, results["assignment"], students)
    for note in lms.notes(people):
        print(f"note: {note}", file=sys.stderr)
    out = out or folder
    os.makedirs(out, exist_ok=True)
    written = []
    try:
        for f in (lms.FORMATS if fmt == "all" else (fmt,)):
            written.append(lms.write(f, people, os.path.join(out, lms.FILENAMES[f]), title or results["assignment"],
                                     results["max_score"]))
    except lms.ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("written: " + ", ".join(written))
    return 0


if __name__ == "__main__":
    status = main()
    gc.freeze()   # no collection at exit either: walking nbconvert's and SQLAlchemy's objects takes half a second
    sys.exit(status)
