"""The course's command line.

  python -m assignments release        rebuild release/ from source/
  python -m assignments check-release  prove the release is current, leak-free and gradeable
  python -m assignments grade          autograde submitted/ (or --submissions DIR) into --out DIR
  python -m assignments demo           release, then grade the bundled sample class
"""
import argparse
import logging
import os
import sys
import warnings

# one BLAS thread per process: the grader runs one worker per core, and the arrays are small
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

from .grading import assignment as course  # noqa: E402
from .grading import docs, pipeline, release, release_checks, report  # noqa: E402
from .grading.dispatch import ClusterUnfit  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _sample_class():
    """Build the bundled sample class (samples/build.py) and return its folder."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("samples_build", os.path.join(REPO, "samples", "build.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m assignments", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("release", help="rebuild release/ from source/ (and source/'s generated parts)")
    sub.add_parser("check-release", help="check release/ against source/, leaks, expected values, grading")
    g = sub.add_parser("grade", help="autograde every submission")
    g.add_argument("--submissions", default=REPO,
                   help="folder holding submitted/<student>/<assignment>/ (or that layout itself)")
    g.add_argument("--out", default=REPO, help="where autograded/, feedback/, grades.csv, results.json go")
    g.add_argument("--assignment", action="append", default=None, metavar="ID",
                   help="grade this assignment (repeatable; default: every assignment the submissions hold)")
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
    d = sub.add_parser("demo", help="build the release and grade the sample class in samples/")
    d.add_argument("--out", default=REPO)
    d.add_argument("--quiet", action="store_true", help="no progress, no summary table")
    parser.add_argument("--log-level", default="ERROR",
                        help="nbgrader's log level (default ERROR; WARNING also lists, for every "
                             "submission, the test cells restored to their hidden-test version)")
    args = parser.parse_args(argv)
    # nbgrader 0.9's gradebook trips SQLAlchemy 2's autoflush warnings; the grades are right
    # (the end-to-end tests check them), so keep them out of the instructor's terminal.
    warnings.filterwarnings("ignore", message=".*not in session.*")
    # cells that nbgrader's add_missing_cells restores have no id yet; nbformat warns about it
    warnings.filterwarnings("ignore", message="Cell is missing an id field")
    logging.basicConfig(level=args.log_level, format="%(levelname)s %(name)s: %(message)s")

    assignments = [course.load(aid) for aid in course.known()]
    if args.command == "check-release":
        failed = 0
        for a in assignments:
            for title, problems in release_checks.all_checks(a, REPO).items():
                print(("ok    " if not problems else "FAIL  ") + f"{a.id}: {title}")
                for p in problems:
                    print("      - " + p.replace("\n", "\n        "))
                failed += bool(problems)
        return 1 if failed else 0
    if args.command in ("release", "demo"):
        for a in assignments:
            path = release.build(a, os.path.join(REPO, "source"), os.path.join(REPO, "release"))
            docs.write(a, REPO)
            print(f"release written to {os.path.relpath(path, os.getcwd())}")
    if args.command == "release":
        return 0
    if args.command == "demo":
        submissions = _sample_class()
    else:
        submissions = args.submissions
    if not os.path.isdir(submissions):
        print(f"error: no such folder: {submissions}", file=sys.stderr)
        return 2
    wanted = getattr(args, "assignment", None) or [aid for aid in pipeline.assignments_in(submissions)
                                                   if aid in course.known()]
    if not wanted:
        print(f"error: no submissions of any assignment of this course ({', '.join(course.known())}) "
              f"in {submissions}", file=sys.stderr)
        return 2
    for aid in wanted:
        try:
            a = course.load(aid)
            results = pipeline.grade(a, submissions, args.out, sandbox=not getattr(args, "no_sandbox", False),
                                     workers=getattr(args, "workers", None), scheduler=getattr(args, "scheduler", None),
                                     db_url=getattr(args, "db_url", None), progress=not args.quiet)
        except KeyError as exc:
            print(f"error: {exc.args[0]}", file=sys.stderr)
            return 2
        except (pipeline.SandboxUnavailable, ClusterUnfit) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if not args.quiet:
            print(f"\n{aid}\n" + report.summary(results))
            print(f"\nresults: {os.path.join(args.out, 'results', aid, 'results.json')}; feedback: {os.path.join(args.out, 'feedback')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
