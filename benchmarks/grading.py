"""Benchmark: plain `nbgrader autograde` against `python -m assignments grade`, same
submissions, same run, same machine.

  .venv/bin/python benchmarks/grading.py [--submissions 40] [--workers N] [--floor 5] [--rounds R] [--growth]

Builds N correct submissions from the sample class's correct answers (each learner's cells
with a comment of its own, so no cache sees the same text twice), then times
  1. plain nbgrader: `nbgrader autograde` in a stock course folder (no config of ours:
     its own Execute preprocessor runs every cell, test cells included, one submission
     at a time, no sandbox);
  2. ours: `python -m assignments grade` (sandboxed, judged, feedback pages included);
  3. the floor: each of F submitted notebooks executed once with a bare kernel (nbclient,
     the stock python3 kernel, no grading at all).
CPU is the machine's busy time while each step runs (/proc/stat), so kernels and
sandboxes are counted whichever process reaps them; run it on an otherwise idle machine.
A virtual machine's speed drifts over minutes: with --rounds R, plain and ours take turns
R times on the same submissions, and each round's ratios are printed, then their medians.
With --growth it then grades 10, 40 and 160 submissions with both graders, ours with 1 and
2 workers, and prints how wall time and CPU per submission grow (about 15 minutes).
Exits 1 when the two graders disagree on a grade; the times are printed, never asserted.
"""
import argparse
import glob
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from assignments.grading.authoring.generated import write_generated  # noqa: E402
from assignments.grading.authoring.submissions import answer_cells, fill  # noqa: E402
from assignments.rnn_step_by_step import ASSIGNMENT as assignment  # noqa: E402

AID, NB = assignment.id, assignment.notebook + ".ipynb"
BIN = os.path.dirname(sys.executable)

FLOOR = """
import glob, sys, tempfile, shutil, nbformat
from nbclient import NotebookClient
for path in sys.argv[2:]:
    folder = tempfile.mkdtemp()
    for name in glob.glob(sys.argv[1] + "/*"):
        if not name.endswith(".ipynb"):
            shutil.copy(name, folder)
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, kernel_name="python3", resources={"metadata": {"path": folder}}).execute()
    shutil.rmtree(folder)
"""


def busy_seconds():
    """CPU time the whole machine has spent busy since boot."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]   # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def timed(cmd, cwd=None):
    # NBGRADER_EXECUTION as nbgrader sets it when it executes a notebook: the floor, like a
    # grader, skips the notebook's optional training
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""), NBGRADER_EXECUTION="autograde")
    cpu, wall = busy_seconds(), time.perf_counter()
    run = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - wall, busy_seconds() - cpu
    if run.returncode != 0:
        sys.exit(f"{' '.join(cmd[:4])}... failed ({run.returncode}):\n{run.stderr[-3000:]}")
    return wall, cpu


def build_class(root, n):
    with open(os.path.join(REPO, "samples", "answers", AID, "ada.py"), encoding="utf-8") as f:
        answers = answer_cells(f.read())
    release = os.path.join(REPO, "release", AID, NB)
    import nbformat
    for i in range(n):
        student = f"student{i:04d}"
        folder = os.path.join(root, "submitted", student, AID)
        os.makedirs(folder)
        # each learner's cells differ, as in a real class: nothing one submission renders
        # or compiles is found ready-made for the next
        own = {name: f"{text}\n# written by {student}\n" for name, text in answers.items()}
        nbformat.write(fill(release, own), os.path.join(folder, NB))


def plain_scores(db):
    with sqlite3.connect(db) as con:
        rows = con.execute("""select student.id, sum(coalesce(grade.auto_score, 0)) from grade
            join submitted_notebook on grade.notebook_id = submitted_notebook.id
            join submitted_assignment on submitted_notebook.assignment_id = submitted_assignment.id
            join student on submitted_assignment.student_id = student.id group by student.id""").fetchall()
    return {s: round(float(v), 2) for s, v in rows}


def plain_course(root, n):
    """A stock nbgrader course folder with n correct submissions, assignment generated."""
    shutil.copytree(os.path.join(REPO, "source"), os.path.join(root, "source"), ignore=shutil.ignore_patterns("__pycache__"))
    write_generated(assignment, os.path.join(root, "source", AID))   # the checks students get
    build_class(root, n)
    timed([os.path.join(BIN, "nbgrader"), "generate_assignment", AID, "--log-level=ERROR"], cwd=root)
    return root


def ours_cmd(submissions, out, workers=None):
    cmd = [sys.executable, "-m", "assignments", "grade", "--submissions", submissions, "--out", out, "--quiet"]
    return cmd + (["--workers", str(workers)] if workers else [])


def growth(tmp):
    """Wall time and CPU per submission for 10, 40 and 160 submissions: plain nbgrader,
    and ours with 1 and 2 workers."""
    print("\ngrowth (CPU s per submission; wall s)")
    print(f"{'submissions':>11} | {'plain':>15} | {'ours, 1 worker':>15} | {'ours, 2 workers':>15}")
    for n in (10, 40, 160):
        root = plain_course(os.path.join(tmp, f"growth{n}"), n)
        row = [timed([os.path.join(BIN, "nbgrader"), "autograde", AID, "--log-level=ERROR"], cwd=root)]
        for w in (1, 2):
            row.append(timed(ours_cmd(root, os.path.join(tmp, f"growth{n}-ours{w}"), w), cwd=REPO))
        print(f"{n:>11} | " + " | ".join(f"{cpu / n:5.2f}; {wall:6.1f} s" for wall, cpu in row))
        shutil.rmtree(root, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=40)
    parser.add_argument("--workers", type=int, default=None, help="ours: default one per core")
    parser.add_argument("--floor", type=int, default=5, help="notebooks run with a bare kernel for the floor")
    parser.add_argument("--rounds", type=int, default=1, help="plain and ours take turns this many times")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark's folder")
    parser.add_argument("--growth", action="store_true", help="then 10, 40 and 160 submissions, 1 and 2 workers")
    args = parser.parse_args()
    n = args.submissions
    tmp = tempfile.mkdtemp(prefix="grading-bench-")
    try:
        print(f"{n} correct submissions, {len(os.sched_getaffinity(0))} cores")
        plain = plain_course(os.path.join(tmp, "plain"), n)
        ours = os.path.join(tmp, "ours")
        rounds = []
        for r in range(args.rounds):
            plain_wall, plain_cpu = timed([os.path.join(BIN, "nbgrader"), "autograde", AID, "--log-level=ERROR",
                                           *(["--force"] if r else [])], cwd=plain)
            ours_wall, ours_cpu = timed(ours_cmd(plain, ours, args.workers), cwd=REPO)
            rounds.append((plain_wall, plain_cpu, ours_wall, ours_cpu))
            if args.rounds > 1:
                print(f"round {r + 1}: plain {plain_wall:6.1f} s, {plain_cpu / n:4.2f} CPU s/sub; ours {ours_wall:5.1f} s, "
                      f"{ours_cpu / n:4.2f} CPU s/sub; throughput {plain_wall / ours_wall:.2f}x, CPU ours/plain "
                      f"{ours_cpu / plain_cpu:.2f}x", flush=True)
        notebooks = sorted(glob.glob(os.path.join(plain, "submitted", "*", AID, NB)))[:args.floor]
        floor_cmd = [sys.executable, "-c", FLOOR, os.path.join(REPO, "release", AID)]
        start_wall, start_cpu = timed(floor_cmd)   # the interpreter and its imports alone
        floor_wall, floor_cpu = timed(floor_cmd + notebooks)
        floor_wall, floor_cpu = floor_wall - start_wall, floor_cpu - start_cpu

        theirs = plain_scores(os.path.join(plain, "gradebook.db"))
        with open(os.path.join(ours, "results", AID, "results.json"), encoding="utf-8") as f:
            mine = {s["student"]: s["score"] for s in json.load(f)["submissions"]}
        k = len(notebooks)
        print(f"plain nbgrader autograde: {plain_wall:7.1f} s wall  {plain_cpu / n:5.2f} CPU s/submission")
        print(f"python -m assignments grade: {ours_wall:4.1f} s wall  {ours_cpu / n:5.2f} CPU s/submission")
        print(f"bare-kernel floor ({k} notebooks): {floor_wall / k:4.2f} s wall  {floor_cpu / k:5.2f} CPU s/notebook")
        print(f"throughput ratio (plain wall / ours wall): {plain_wall / ours_wall:.2f}x")
        print(f"CPU per submission, ours / floor: {ours_cpu / n / (floor_cpu / k):.2f}x")
        print(f"CPU per submission, ours / plain: {ours_cpu / plain_cpu:.2f}x")
        if args.rounds > 1:
            print(f"medians over {args.rounds} rounds: throughput "
                  f"{statistics.median(p / o for p, _, o, _ in rounds):.2f}x, CPU ours/plain "
                  f"{statistics.median(o / p for _, p, _, o in rounds):.2f}x")
        same = theirs == mine
        print(f"grades identical: {same} (plain: {sorted(set(theirs.values()))}, ours: {sorted(set(mine.values()))}, "
              f"{len(theirs)} vs {len(mine)} students)")
        if args.growth:
            growth(tmp)
        return 0 if same else 1
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
