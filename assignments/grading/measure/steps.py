"""Where a submission's CPU goes, step by step (docs/benchmarks.md): this process's CPU time
in each named step (``step``), and its kernels' own, as their zygote reaped them (``add``).
A step inside another counts as itself only: the outer one keeps the rest. Each worker
process has its own count; ``take`` hands a submission's over and starts the next.
Rule (measure/): measures only; nothing here changes what a grade is."""
import collections
import time
from contextlib import contextmanager

STEPS = ("conversion", "kernel start", "learner's cells", "judged calls", "diagnosis", "locate and repair",
         "feedback page", "kernel")
"""The steps in the order timings.csv gives them: nbgrader's conversion (what the others leave
of it: reading, preprocessors, writing, the worker's gradebook), the kernel's start, the
learner's cells, the judge's calls on the hidden cases, naming the mistakes, locating and
repairing a wrong function (with its candidates' calls), the feedback page; then the kernels'
own CPU (learner's code, the harness, the sandbox's set-up)."""

_spent: collections.Counter = collections.Counter()
_inner: list[float] = []


@contextmanager
def step(name):
    """Count the CPU this process spends inside as ``name``."""
    started = time.process_time()
    _inner.append(0.0)
    try:
        yield
    finally:
        inner, total = _inner.pop(), time.process_time() - started
        _spent[name] += total - inner
        if _inner:
            _inner[-1] += total


def add(name, seconds):
    """Count ``seconds`` spent elsewhere (a kernel's) as ``name``."""
    _spent[name] += seconds


def take():
    """The seconds counted since the last ``take``, by step, rounded to the millisecond."""
    spent = {name: round(_spent[name], 3) for name in STEPS if _spent[name]}
    _spent.clear()
    return spent
