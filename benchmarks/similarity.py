"""How long the copying evidence and the mistake clusters take for a large class (issue 33:
at most 30 s for 1,000 submissions on 2 cores), and their ratio to the time grading the
class takes.

The class is synthesised from the corpus: each submission takes each function from a random
independent solution and rewrites its comments (so no two cells are the same text and every
cell is tokenised afresh), and 20 of them are planted copies of another. Behaviour signatures
are synthesised too. It measures time only: every mixed cell is held by some 30 submissions,
so the copies are the class's common stock and are not flagged. The clusters' synthetic
signatures match no mutant, so the search for drafts runs its whole budget of mutants (the
worst case). The grading time is measured on the sample class (or read from a --timings
timings.csv) and scaled to the class: seconds per submission times students over workers.
Run from the repository root:

    python benchmarks/similarity.py [--students 1000] [--jobs 2] [--timings results/<id>/timings.csv]
"""
import argparse
import csv
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "tests")]

import similarity_corpus as corpus  # noqa: E402

from assignments.grading.judging import clusters  # noqa: E402
from assignments.grading.reports import similarity  # noqa: E402
from assignments.rnn_step_by_step import ASSIGNMENT  # noqa: E402


def synthesise(students, seed=1):
    """{student: {function: cell}} and {student: {function: signature}} for a large class."""
    rng = random.Random(seed)
    release = corpus.release_code()
    pool = corpus.independent()
    names = sorted(pool)
    subs, sigs = {}, {}
    for i in range(students):
        cells = {fn: pool[rng.choice(names)][fn] for fn in corpus.FUNCTIONS}
        subs[f"s{i:04d}"] = corpus.with_docstrings(corpus.plant(cells, "comments", rng), release)
        sigs[f"s{i:04d}"] = {fn: f"sig{rng.randrange(40)}" for fn in corpus.FUNCTIONS if rng.random() < 0.2}
    for i in range(20):
        a, b = rng.sample(sorted(subs), 2)
        subs[b], sigs[b] = dict(subs[a]), dict(sigs[a])
    return subs, sigs, release


def results_of(subs, sigs, catalogued):
    """A results.json for the synthetic class: a function with a signature is wrong, named
    when its signature is a catalogued one."""
    out = []
    for student in sorted(subs):
        exercises = []
        for e in ASSIGNMENT.exercises:
            sig = sigs[student].get(e.name, "")
            exercises.append({"id": e.name, "score": 0.0 if sig else e.points, "max_score": e.points,
                              "passed": not sig, "diagnoses": ["named_one"] if sig in catalogued else [],
                              "signature": sig.ljust(16, "0") if sig else "",
                              "feedback": f"{e.name} passed 0 of 5 hidden cases.\nOn case 1:\n  - a_next is wrong"})
        out.append({"student": student, "status": "graded", "score": 0.0, "flags": [], "message": "", "exercises": exercises})
    return {"assignment": ASSIGNMENT.id, "max_score": 100.0, "submissions": out}


def grading_seconds_per_submission(timings):
    """Wall seconds per submission of a graded class, with the workers it ran on: from a
    timings.csv, or by grading the sample class now."""
    if timings is None:
        folder = tempfile.mkdtemp(prefix="bench-grade-")
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
        from helpers import build_samples
        build_samples(os.path.join(folder, "samples"))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "assignments", "grade", "--submissions", os.path.join(folder, "samples"),
                        "--out", os.path.join(folder, "out"), "--quiet"], check=True, cwd=os.path.dirname(HERE))
        wall = time.perf_counter() - start
        timings = os.path.join(folder, "out", "timings.csv")
        print(f"[measure] grading the sample class: {wall:.1f} s in all (kernels, release, gradebook, report)")
    with open(timings, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    workers = len({r.get("worker", "") for r in rows}) or 1
    return sum(float(r["seconds"]) for r in rows) / len(rows), workers


def cpu_seconds():
    """CPU seconds of this process and of its finished children (the similarity's workers):
    under other work's load, wall time says more about the load than about the code."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timings", default=None, help="a timings.csv of a graded class (default: grade the sample class)")
    args = ap.parse_args()
    subs, sigs, release = synthesise(args.students)
    web = {k: corpus.with_docstrings(v, release) for k, v in corpus.known().items()}
    similarity.normalised_code.cache_clear()
    start, cpu = time.perf_counter(), cpu_seconds()
    report = similarity.compare("rnn_step_by_step", subs, release, corpus.reference_code(), known=web,
                                signatures=sigs, catalogued={"sig0", "sig1"}, jobs=args.jobs)
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    flagged = sum(p["flagged"] for p in report["pairs"])
    print(f"[measure] similarity for {len(subs)} submissions ({len(subs) * len(release)} cells, "
          f"{len(web)} known solutions), {args.jobs} jobs: {seconds:.1f} s ({cpu:.1f} s of CPU); "
          f"{len(report['pairs'])} pairs reported, {flagged} flagged")
    results = results_of(subs, sigs, {"sig0", "sig1"})
    start, cpu = time.perf_counter(), cpu_seconds()
    found = clusters.clusters(results, subs, ASSIGNMENT)
    grouped, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    print(f"[measure] clusters for {len(subs)} submissions: {grouped:.1f} s ({cpu:.1f} s of CPU; {len(found['groups'])} groups, "
          f"{sum(g['candidate'] for g in found['groups'])} candidate mistakes; the draft search's budget of "
          f"{clusters.CLASS_TRIES} mutants included)")
    per, workers = grading_seconds_per_submission(args.timings)
    grading = per * len(subs) / workers
    print(f"[measure] load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"[measure] grading {len(subs)} submissions at {per:.2f} s each on {workers} workers: about {grading:.0f} s; "
          f"similarity and clusters take {seconds + grouped:.1f} s, {100 * (seconds + grouped) / grading:.1f}% of it")
    return seconds + grouped


if __name__ == "__main__":
    main()
