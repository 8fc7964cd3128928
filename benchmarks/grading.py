"""Benchmark: plain `nbgrader autograde` against `python -m assignments grade`, same
submissions, same run, same machine.

  .venv/bin/python benchmarks/grading.py [--submissions 40] [--workers N] [--floor 5] [--rounds R] [--growth]
  .venv/bin/python benchmarks/grading.py --class N [--plain 40] [--seed 0] [--workers N]

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
A virtual machine's steal (its cores ready, the hypervisor running another machine) is
left out of it, and printed for the class.
A virtual machine's speed drifts over minutes: with --rounds R, plain and ours take turns
R times on the same submissions, and each round's ratios are printed, then their medians.
With --growth it then grades 10, 40 and 160 submissions with both graders, ours with 1 and
2 workers, and prints how wall time and CPU per submission grow (about 15 minutes).
Exits 1 when the two graders disagree on a grade; the times are printed, never asserted.

With --class N (issue 42) it grades a class of N submissions with a realistic share of wrong
work instead: each learner starts from a correct base (Ada's answers, or one of the correct
styles of tests/fixtures/correct/ laid over them), some correct functions swapped for the
correct variants real learners wrote (tests/fixtures/learners/<function>/, "# expect:
correct"), then exactly a sixth of all the class's functions (N x 8 / 6, rounded) replaced by
wrong ones: the learners' wrong patterns of tests/fixtures/learners/ and the one-slip
functions of tests/fixtures/slips/, drawn with random.Random(--seed), weaker learners and the
backward passes more often, so the class is the same on every run (build_mixed_class). It
times ours' first `grade` of the class (fresh --out), then, in the same run, plain nbgrader
and ours on --plain K correct submissions (those of the default mode), and prints: the class's
wall time (against the issue's 120 s for 1,000) and CPU per submission, the wrong functions
graded wrong (and the correct ones graded wrong), the diagnoses cut short, the longest
submission (timings.csv), CPU per correct submission ours / plain (the issue's target: at most
0.15x), and an estimate of the CPU a wrong function costs: (class CPU - N x ours' CPU per
correct submission) / the wrong functions. Exits 1 when plain and ours disagree on the K.
"""
import argparse
import csv
import glob
import json
import os
import random
import re
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
from assignments.grading.measure.steps import KERNEL_PART  # noqa: E402
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
    """CPU time the whole machine has spent busy since boot, not counting steal: the time its
    virtual cores were ready to run but the hypervisor ran another machine (it swings with
    the neighbours' load, and no process here used it)."""
    fields = _cpu_fields()
    idle = fields[3] + fields[4]   # idle + iowait
    return (sum(fields[:7]) - idle) / os.sysconf("SC_CLK_TCK")


def steal_seconds():
    """The hypervisor's steal since boot (busy_seconds leaves it out)."""
    return _cpu_fields()[7] / os.sysconf("SC_CLK_TCK")


def _cpu_fields():
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]] + [0] * 8


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


# --class: the corpus a realistic class is drawn from (all of it this repository's own)
FIXTURES = os.path.join(REPO, "tests", "fixtures")
ADA = os.path.join(REPO, "samples", "answers", AID, "ada.py")
# how often a function is the one a learner gets wrong, relative to the others: the
# backward passes, the LSTM's above all, are where most of the learners' mistakes are
DIFFICULTY = {"rnn_cell_forward": 0.5, "rnn_forward": 0.7, "lstm_cell_forward": 0.9, "lstm_forward": 0.9,
              "rnn_cell_backward": 1.0, "rnn_backward": 1.2, "lstm_cell_backward": 1.6, "lstm_backward": 1.6}
WRONG_SHARE = 1 / 6
LEARNER_VARIANT_SHARE = 0.25   # of a learner's correct functions, those written as a learner did


def _cell(path, function):
    with open(path, encoding="utf-8") as f:
        return answer_cells(f.read())[function]


def _expectation(path):
    """A learner file's '# expect:' line: "correct", or what is wrong with it."""
    with open(path, encoding="utf-8") as f:
        found = re.search(r"^# expect:\s*(.+)$", f.read(2000), re.M)
    return found.group(1).strip() if found else None


def class_corpus():
    """What a class is drawn from: (bases, {function: [(label, cell)] correct variants},
    {function: [(label, cell)] wrong}), each list in a fixed order. A base is
    (label, {function: cell}) for all the functions; labels are paths under tests/fixtures/
    (or samples/)."""
    functions = [e.name for e in assignment.exercises]
    with open(ADA, encoding="utf-8") as f:
        ada = answer_cells(f.read())
    bases = [("samples/answers/ada.py", ada)]
    for path in sorted(glob.glob(os.path.join(FIXTURES, "correct", "*.py"))):
        with open(path, encoding="utf-8") as f:
            bases.append((os.path.relpath(path, FIXTURES), dict(ada, **answer_cells(f.read()))))
    correct, wrong = {fn: [] for fn in functions}, {fn: [] for fn in functions}
    for fn in functions:
        for path in sorted(glob.glob(os.path.join(FIXTURES, "learners", fn, "*.py"))):
            expect = _expectation(path)
            if expect is None:
                continue   # not labelled: neither
            (correct if expect == "correct" else wrong)[fn].append((os.path.relpath(path, FIXTURES), _cell(path, fn)))
        for path in sorted(glob.glob(os.path.join(FIXTURES, "slips", fn, "*.py"))):
            wrong[fn].append((os.path.relpath(path, FIXTURES), _cell(path, fn)))
    return bases, correct, wrong


def class_plan(n, seed=0):
    """N learners, the same for a given seed: [(student, {function: cell}, {function: label},
    set of the functions written wrong)]. Exactly round(N x 8 x WRONG_SHARE) functions are
    wrong, drawn without replacement with a weight of the learner's weakness times the
    function's DIFFICULTY (so some learners have everything right, a few nearly nothing)."""
    rng = random.Random(seed)
    bases, correct, wrong = class_corpus()
    functions = list(DIFFICULTY)
    assert set(functions) == {e.name for e in assignment.exercises}
    students = [f"learner{i:04d}" for i in range(n)]
    weakness = {s: (0.15 if rng.random() < 0.4 else rng.uniform(0.5, 3.0)) for s in students}
    # weighted sampling without replacement (Efraimidis-Spirakis: the largest u ** (1 / w))
    keys = {(s, fn): rng.random() ** (1 / (weakness[s] * DIFFICULTY[fn])) for s in students for fn in functions}
    count = round(n * len(functions) * WRONG_SHARE)
    chosen = set(sorted(keys, key=lambda k: (-keys[k], k))[:count])
    plan = []
    for s in students:
        label, base = rng.choice(bases)
        cells, labels, bad = {}, {}, set()
        for fn in functions:
            if (s, fn) in chosen:
                labels[fn], cells[fn] = rng.choice(wrong[fn])
                bad.add(fn)
            elif correct[fn] and rng.random() < LEARNER_VARIANT_SHARE:
                labels[fn], cells[fn] = rng.choice(correct[fn])
            else:
                labels[fn], cells[fn] = label, base[fn]
        # each learner's cells differ, as in a real class (see build_class)
        cells = {fn: f"{text}\n# written by {s}\n" for fn, text in cells.items()}
        plan.append((s, cells, labels, bad))
    return plan


def build_mixed_class(root, n, seed=0):
    """The class of class_plan(n, seed) as root/submitted/<student>/<assignment>/<notebook>;
    returns the plan."""
    import nbformat
    release = nbformat.read(os.path.join(REPO, "release", AID, NB), as_version=4)   # read once, filled as a copy
    plan = class_plan(n, seed)
    for student, cells, _, _ in plan:
        folder = os.path.join(root, "submitted", student, AID)
        os.makedirs(folder)
        nbformat.write(fill(release, cells), os.path.join(folder, NB))
    return plan


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


def read_results(out):
    with open(os.path.join(out, "results", AID, "results.json"), encoding="utf-8") as f:
        return json.load(f)


def print_steps(rows, wrong):
    """Where the submissions' CPU went (timings.csv's cpu:<step> columns, measure/steps.py):
    the mean CPU seconds of each step, by how many functions of the submission were wrong."""
    steps = [k for k in rows[0] if k.startswith("cpu:")]
    groups = {}
    for r in rows:
        groups.setdefault(min(wrong.get(r["student"], 0), 3), []).append(r)
    print("CPU s per submission by step (the worker's, then the kernels', then the kernel's part"
          " in the worker's steps that wait on it, k: ...), by wrong functions:")
    print(f"{'wrong':>6} {'n':>5} " + " ".join(f"{k[4:].replace(KERNEL_PART, 'k: ')[:13]:>13}" for k in steps))
    for w in sorted(groups):
        rs = groups[w]
        print(f"{str(w) + ('+' if w == 3 else ''):>6} {len(rs):>5} "
              + " ".join(f"{sum(float(r[k] or 0) for r in rs) / len(rs):13.3f}" for k in steps))


def class_benchmark(tmp, n, k, seed, workers):
    """--class: ours' first grade of a realistic class of n, then plain and ours on k correct
    submissions for the ratio. Returns the exit status."""
    print(f"a class of {n} (seed {seed}), {k} correct submissions for the ratio, {len(os.sched_getaffinity(0))} cores", flush=True)
    root = os.path.join(tmp, "class")
    plan = build_mixed_class(root, n, seed)
    wrong_count = sum(len(bad) for *_, bad in plan)
    functions = len(assignment.exercises)
    print(f"built: {wrong_count} of {n * functions} functions wrong ({wrong_count / (n * functions):.1%}); "
          f"{sum(not bad for *_, bad in plan)} learners with everything right, "
          f"{sum(len(bad) == functions for *_, bad in plan)} with everything wrong", flush=True)
    out = os.path.join(tmp, "class-ours")
    steal = steal_seconds()
    class_wall, class_cpu = timed(ours_cmd(root, out, workers), cwd=REPO)
    print(f"class graded: {class_wall:.1f} s wall (steal, not counted as CPU: {steal_seconds() - steal:.1f} s)",
          flush=True)

    plain = plain_course(os.path.join(tmp, "plain"), k)
    steal = steal_seconds()
    plain_wall, plain_cpu = timed([os.path.join(BIN, "nbgrader"), "autograde", AID, "--log-level=ERROR"], cwd=plain)
    ours_k = os.path.join(tmp, "correct-ours")
    ours_wall, ours_cpu = timed(ours_cmd(plain, ours_k, workers), cwd=REPO)
    print(f"plain and ours on {k}: steal, not counted as CPU: {steal_seconds() - steal:.1f} s", flush=True)

    graded = {s["student"]: s for s in read_results(out)["submissions"]}
    caught = missed = false_wrong = cut = 0
    not_graded = []
    for student, _, labels, bad in plan:
        entry = graded.get(student)
        if entry is None or entry["status"] != "graded":
            not_graded.append((student, entry and entry["status"]))
            continue
        # a diagnosis cut short: flagged on the submission (diagnosis_cut:<function>), or on the exercise
        cut += len({f.split(":", 1)[1] for f in entry.get("flags", []) if f.startswith("diagnosis_cut:")}
                   | {ex["id"] for ex in entry["exercises"] if ex.get("diagnosis_cut")})
        for ex in entry["exercises"]:
            if ex["id"] in bad:
                caught += not ex["passed"]
                missed += ex["passed"]
            elif not ex["passed"]:
                false_wrong += 1
                print(f"  a correct function graded wrong: {student} {ex['id']} ({labels[ex['id']]})")
    with open(os.path.join(out, "results", AID, "timings.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    longest = max(rows, key=lambda r: float(r["seconds"]))
    longest_bad = next(len(bad) for s, _, _, bad in plan if s == longest["student"])

    mine = {s["student"]: s["score"] for s in read_results(ours_k)["submissions"]}
    theirs = plain_scores(os.path.join(plain, "gradebook.db"))
    per_correct = ours_cpu / k
    print(f"class of {n}, first grade: {class_wall:7.1f} s wall ({class_wall / n * 1000:.1f} s per 1,000 at this rate; "
          f"target 120 s for 1,000)   {class_cpu / n:5.2f} CPU s/submission")
    print(f"wrong functions graded wrong: {caught}/{wrong_count} ({caught / max(wrong_count, 1):.1%}); "
          f"graded right: {missed}; correct functions graded wrong: {false_wrong}"
          + (f"; not graded: {not_graded}" if not_graded else ""))
    print(f"diagnoses cut short: {cut}")
    print(f"longest submission: {float(longest['seconds']):.2f} s wall, {float(longest.get('cpu_seconds') or 0):.2f} CPU s "
          f"({longest['student']}, {longest_bad} wrong functions)")
    print(f"{k} correct submissions: plain {plain_cpu / k:5.2f}, ours {per_correct:5.2f} CPU s/submission; "
          f"ours / plain {ours_cpu / plain_cpu:.2f}x (target at most 0.15x); wall plain {plain_wall:.1f} s, ours {ours_wall:.1f} s")
    print_steps(rows, {s: len(bad) for s, _, _, bad in plan})
    right = [r for r in rows if not any(s == r["student"] and bad for s, _, _, bad in plan)]
    if right:   # the same ratio without our fixed start: a right submission's steps within the class
        each = sum(map(steps_cpu, right)) / len(right)
        print(f"CPU per wrong function (estimate): {(sum(map(steps_cpu, rows)) - each * len(rows)) / max(wrong_count, 1):5.3f} s "
              f"(the class's steps beyond {len(rows)} right submissions' at {each:.3f}, over {wrong_count} wrong functions)")
        print(f"a right submission within the class: {each:.3f} CPU s (its worker's steps and its kernel), "
              f"{each / (plain_cpu / k):.2f}x plain's {plain_cpu / k:.2f} (target at most 0.15x; plain's figure "
              f"carries its own start over {k} submissions, ours here none)")
    same = theirs == mine
    print(f"grades identical on the {k}: {same} (plain: {sorted(set(theirs.values()))}, ours: {sorted(set(mine.values()))})")
    return 0 if same else 1


def steps_cpu(row):
    """A submission's CPU in timings.csv: its worker's steps and its kernel (the kernel's parts,
    which the kernel's whole already counts, left out)."""
    return sum(float(row[c] or 0) for c in row if c.startswith("cpu:") and not c.startswith("cpu:" + KERNEL_PART))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=40)
    parser.add_argument("--workers", type=int, default=None, help="ours: default one per core")
    parser.add_argument("--floor", type=int, default=5, help="notebooks run with a bare kernel for the floor")
    parser.add_argument("--rounds", type=int, default=1, help="plain and ours take turns this many times")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark's folder")
    parser.add_argument("--growth", action="store_true", help="then 10, 40 and 160 submissions, 1 and 2 workers")
    parser.add_argument("--class", dest="klass", type=int, default=None, metavar="N",
                        help="grade a class of N with a sixth of its functions wrong instead (see above)")
    parser.add_argument("--plain", type=int, default=40, metavar="K", help="--class: correct submissions for the ratio")
    parser.add_argument("--seed", type=int, default=0, help="--class: the class drawn")
    args = parser.parse_args()
    n = args.submissions
    tmp = tempfile.mkdtemp(prefix="grading-bench-")
    try:
        if args.klass:
            return class_benchmark(tmp, args.klass, args.plain, args.seed, args.workers)
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
