"""Where a slip is, and its repair, on the corpus of uncatalogued slips (tests/fixtures/slips/),
with the time each costs against a right function in the same run.

For every slip: the students' check on the wrong function and on the right one (the file with
its ``# was:`` line put back), the line and the quantity it names against the file's
``# line:`` and ``# quantity:``, and the grader's search for a repair (shipped/repair.py, run
here as the kernel runs it, each candidate verified on the hidden cases): found or not, its
size against the slip's (changed tokens), and its time.

    .venv/bin/python benchmarks/hints.py [--only FUNCTION]
"""
import argparse
import glob
import inspect
import io
import linecache
import os
import re
import statistics
import sys
import time
from contextlib import redirect_stdout

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from assignments.grading.contract.assignment import load  # noqa: E402
from assignments.grading.judging import inprocess as local  # noqa: E402
from assignments.grading.judging import judge as judge_module  # noqa: E402
from assignments.grading.shipped.repair import changed_tokens, written  # noqa: E402

CORPUS = os.path.join(REPO, "tests", "fixtures", "slips")


def header(text, key):
    found = re.search(rf"^# {key}:\s*(.*)$", text, re.M)
    return found.group(1).strip() if found else None


def slips(only=None, corpus=CORPUS):
    """(function, path, text, {slip, quantity, line, was}) for every file of the corpus."""
    for path in sorted(glob.glob(os.path.join(corpus, "*", "*.py"))):
        name = os.path.basename(os.path.dirname(path))
        if only and name != only:
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        yield name, path, text, {k: header(text, k) for k in ("slip", "quantity", "line", "was")}


def namespace(assignment, text, tag):
    ns = {"np": np}
    exec(inspect.getsource(assignment.reference), ns)
    text = re.sub(r"^from \w+_utils import .*$", "", text, flags=re.M)
    path = f"<slip {tag}>"
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)
    exec(compile(text, path, "exec"), ns)
    return ns


def checks_module(assignment):
    import importlib.util
    path = os.path.join(REPO, "release", assignment.id, assignment.checks_module + ".py")
    spec = importlib.util.spec_from_file_location(f"bench_{assignment.checks_module}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed_check(checks, name, ns, runs=3):
    """The students' check's best time of ``runs``, and what it said."""
    best, said = float("inf"), ""
    for _ in range(runs):
        out = io.StringIO()
        start = time.perf_counter()
        try:
            with redirect_stdout(out):
                checks.check(name, ns)
            said = out.getvalue()
        except checks.CheckFailed as exc:
            said = str(exc)
        best = min(best, time.perf_counter() - start)
    return best, said


def size(before, after):
    """Tokens changed between two versions of a line, as the repair search counts them."""
    return changed_tokens(written(before), written(after))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one function's slips")
    parser.add_argument("--corpus", default=CORPUS, help="the corpus's folder (default: tests/fixtures/slips)")
    args = parser.parse_args()
    assignments = {aid: load(aid) for aid in ("rnn_step_by_step", "gru_step_by_step")}
    spent = []
    locate_and_mend = judge_module.locate_and_mend

    def timed(*args):   # the CPU of locating and repairing, apart from judging and diagnosing
        start = time.process_time()
        try:
            return locate_and_mend(*args)
        finally:
            spent.append(time.process_time() - start)
    judge_module.locate_and_mend = timed
    checks = {aid: checks_module(a) for aid, a in assignments.items()}
    rows = []
    for name, path, text, h in slips(args.only, args.corpus):
        aid = next(aid for aid, a in assignments.items() if name in a.by_name)
        a, c = assignments[aid], checks[aid]
        tag = os.path.relpath(path, args.corpus)
        wrong_ns = namespace(a, text, tag)
        right_ns = namespace(a, "\n".join(x.replace(h["line"], h["was"]) if x.strip() == h["line"] else x
                                          for x in text.splitlines()) + "\n", tag + " (right)")
        t_wrong, said = timed_check(c, name, wrong_ns)
        t_right, _ = timed_check(c, name, right_ns)
        found = c.locate(name, wrong_ns[name], wrong_ns) or {}
        line_no = text.splitlines().index(next(x for x in text.splitlines() if x.strip() == h["line"])) + 1
        spent.clear()
        start = time.process_time()
        v = local.judge_all(a, wrong_ns, [name], examine=True)[name]
        cpu_plain = time.process_time() - start - sum(spent)
        cpu = sum(spent)
        rows.append({"slip": tag, "check_wrong": t_wrong, "check_right": t_right,
                     "quantity": found.get("quantity") == h["quantity"],
                     "line": found.get("line") == line_no,
                     "wrong_line": found.get("line") not in (None, line_no),
                     "repaired": v.repair is not None,
                     "repair_size": size(v.repair["before"], v.repair["after"]) if v.repair else None,
                     "slip_size": size(h["was"], h["line"]), "grader_cpu": cpu, "grader_cpu_plain": cpu_plain,
                     "said_where": "first wrong value" in said or "are right, so" in said or "is right, so" in said})
        r = rows[-1]
        print(f"{tag:60s} check {t_wrong * 1000:6.1f} ms (right {t_right * 1000:5.1f})  quantity {'✓' if r['quantity'] else '✗'}"
              f"  line {'✓' if r['line'] else ('WRONG' if r['wrong_line'] else '–')}  repair "
              f"{'✓ ' + str(r['repair_size']) + '/' + str(r['slip_size']) if r['repaired'] else '✗'}  grader {cpu:.2f} s"
              f" (judging and diagnosing {cpu_plain:.2f} s)")
    if not rows:
        print("no slips in", args.corpus)
        return
    n = len(rows)

    def share(key):
        return sum(r[key] for r in rows) / n

    wrong_ms = [r["check_wrong"] * 1000 for r in rows]
    right_ms = [r["check_right"] * 1000 for r in rows]
    extra = [r["grader_cpu"] for r in rows]
    print()
    print(f"slips: {n} in {len({r['slip'].split('/')[0] for r in rows})} functions")
    print(f"quantity named right: {share('quantity'):.1%}   line named right: {share('line'):.1%}   "
          f"a right line named: {sum(r['wrong_line'] for r in rows)}")
    print(f"verified repairs: {share('repaired'):.1%}   no larger than the slip: "
          f"{sum(1 for r in rows if r['repaired'] and r['repair_size'] <= r['slip_size'])} of {sum(r['repaired'] for r in rows)}")
    print(f"students' check, wrong: median {statistics.median(wrong_ms):.1f} ms, max {max(wrong_ms):.1f} ms; "
          f"right: median {statistics.median(right_ms):.1f} ms, max {max(right_ms):.1f} ms; "
          f"ratio of medians {statistics.median(wrong_ms) / statistics.median(right_ms):.1f}x")
    print(f"grader CPU for locating and repairing one wrong function: median {statistics.median(extra):.2f} s, "
          f"max {max(extra):.2f} s; judging and diagnosing it: median "
          f"{statistics.median(r['grader_cpu_plain'] for r in rows):.2f} s, "
          f"ratio {statistics.median(extra) / statistics.median(r['grader_cpu_plain'] for r in rows):.2f}")


if __name__ == "__main__":
    main()
