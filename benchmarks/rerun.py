"""Benchmark: a rerun after one new submission, against the first run of the class.

  .venv/bin/python benchmarks/rerun.py [--submissions 200] [--workers N] [--keep]

Builds N submissions from the sample class of rnn_step_by_step (samples/build.py: each
sample student's notebook in turn, each copy with a comment of its own in its answer cells
and an id of its own; the sample's unreadable text file among them), grades them with
`python -m assignments grade`, adds one more submission, and grades again into the same
folder; then flushes the writes still pending to disk (``os.sync``) and does it again with
another new submission. The first rerun starts the moment the first run ends, while the
system still writes back the quarter gigabyte that run wrote; the second starts as a late
submission's run does, minutes later, once those writes are on disk. Every run is the real
command in a fresh process, so each wall time includes the interpreter's start-up, the
imports and the run's preparation. Prints the wall times and each rerun's ratio to the first
run (the aim: at most 5%), what the start-up and the imports alone take in a fresh process,
and checks that each rerun graded its new submission alone and left every other student's
results.json entry, autograded folder and feedback folder byte for byte as they were.
Exits 1 when one did not; the times are printed, never asserted.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
AID = "rnn_step_by_step"


def sample_class(folder):
    """The sample class built into ``folder``: {student: their rnn_step_by_step folder}."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("samples_build", os.path.join(REPO, "samples", "build.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build(os.path.join(folder, "submitted"))
    root = os.path.join(folder, "submitted")
    return {s: os.path.join(root, s, AID) for s in sorted(os.listdir(root)) if os.path.isdir(os.path.join(root, s, AID))}


def copy_submission(src, dest, student):
    """A copy of a sample submission for ``student``: its answer cells end with a comment
    naming them, so no two notebooks of the class are the same text."""
    os.makedirs(dest)
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if not name.endswith(".ipynb"):
            shutil.copyfile(path, os.path.join(dest, name))
            continue
        try:
            with open(path, encoding="utf-8") as f:
                nb = json.load(f)
        except ValueError:   # the unreadable sample stays unreadable
            shutil.copyfile(path, os.path.join(dest, name))
            continue
        for cell in nb["cells"]:
            if cell["cell_type"] == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
                source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                cell["source"] = source + f"\n# written by {student}\n"
        with open(os.path.join(dest, name), "w", encoding="utf-8") as f:
            json.dump(nb, f, indent=1)
            f.write("\n")


def tree(folder):
    """sha256 of every file's path and bytes under ``folder`` (None when it does not exist)."""
    if not os.path.isdir(folder):
        return None
    h = hashlib.sha256()
    for d, dirs, files in sorted(os.walk(folder)):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(d, name)
            h.update(os.path.relpath(path, folder).encode() + b"\0")
            with open(path, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def state(out):
    """Each student's results.json entry (as text), autograded folder and feedback folder."""
    with open(os.path.join(out, "results", AID, "results.json"), encoding="utf-8") as f:
        entries = {s["student"]: json.dumps(s, indent=2) for s in json.load(f)["submissions"]}
    return {s: (text, tree(os.path.join(out, "autograded", s, AID)), tree(os.path.join(out, "feedback", s, AID)))
            for s, text in entries.items()}


def timed_grade(submissions, out, workers):
    cmd = [sys.executable, "-m", "assignments", "grade", "--submissions", submissions, "--out", out,
           "--assignment", AID, "--quiet"] + (["--workers", str(workers)] if workers else [])
    start = time.perf_counter()
    run = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if run.returncode != 0:
        sys.exit(f"grade failed ({run.returncode}):\n{run.stderr[-3000:]}")
    return wall


def timed_imports():
    """Wall time of a fresh process that starts and imports what `grade` imports before it reads
    any submission: the fixed part of every run."""
    code = "import assignments.__main__, assignments.grading.run.pipeline"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--workers", type=int, default=None, help="default: one per core")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark's folder")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="rerun-bench-")
    try:
        samples = sample_class(os.path.join(tmp, "samples"))
        order = sorted(samples)
        subs, out = os.path.join(tmp, "class"), os.path.join(tmp, "out")
        for i in range(args.submissions):
            student = f"student{i:04d}"
            copy_submission(samples[order[i % len(order)]], os.path.join(subs, "submitted", student, AID), student)
        print(f"{args.submissions} submissions ({', '.join(order)} in turn), {len(os.sched_getaffinity(0))} cores, "
              f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
        first = timed_grade(subs, out, args.workers)
        print(f"first run, {args.submissions} graded: {first:7.2f} s wall")
        ok = True
        for n, settle in ((args.submissions, False), (args.submissions + 1, True)):
            if settle:   # what the minutes before a late submission do: the first run's files reach the disk
                start = time.perf_counter()
                os.sync()
                print(f"(the writes still pending flushed to disk: {time.perf_counter() - start:.2f} s)")
            before = state(out)
            new = f"student{n:04d}"
            copy_submission(samples["ben"], os.path.join(subs, "submitted", new, AID), new)
            again = timed_grade(subs, out, args.workers)
            after = state(out)
            when = "once they were on disk" if settle else "right after the run before"
            print(f"rerun, one new submission, {when}: {again:7.2f} s wall "
                  f"(load average after: {os.getloadavg()[0]:.2f})")
            print(f"  rerun / first run: {100 * again / first:.2f}% (aim: at most 5%)")
            changed = sorted(s for s in before if before[s] != after.get(s))
            added = sorted(set(after) - set(before))
            print(f"  new entries: {added}; entries or folders changed of the others: {changed or 'none'}")
            ok = ok and added == [new] and not changed
        print(f"start-up and imports alone (a fresh process, measured after): {timed_imports():.2f} s")
        return 0 if ok else 1
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
