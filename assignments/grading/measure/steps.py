"""Where a submission's CPU goes, step by step (docs/benchmarks.md): this process's CPU time
in each named step (``step``), and its kernels' own, as their zygote reaped them (``add``).
A step inside another counts as itself only: the outer one keeps the rest. Each worker
process has its own count; ``take`` hands a submission's over and starts the next.
Rule (measure/): measures only; nothing here changes what a grade is."""
import collections
import time
from contextlib import contextmanager

KERNEL_PART = "kernel: "
"""The prefix of the steps that are parts of "kernel" (``KernelMeter``): summed with the rest, they count twice."""

STEPS = ("conversion", "kernel start", "learner's cells", "judged calls", "diagnosis", "locate and repair",
         "feedback page", "kernel", "kernel: start", "kernel: learner's cells", "kernel: judged calls",
         "kernel: locate and repair")
"""The steps in the order timings.csv gives them: nbgrader's conversion (what the others leave
of it: reading, preprocessors, writing, the worker's gradebook), the kernel's start, the
learner's cells, the judge's calls on the hidden cases, naming the mistakes, locating and
repairing a wrong function (with its candidates' calls), the feedback page; then the kernels'
own CPU (learner's code, the harness, the sandbox's set-up), whole, then the part of it spent
during the worker's steps that wait on it (``KernelMeter``): from its fork until it was ready,
the learner's cells, the judge's calls, locating and repairing. What is left of the whole
is its end (and a kernel that replaced a dead one before it was read)."""

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


class KernelMeter:
    """The kernel's own CPU, split among the worker's steps that wait on it: each ``lap``
    counts what the kernel used since the last one as ``KERNEL_PART + name``. ``read`` gives
    (the kernel's pid, its CPU seconds so far), read by its zygote from /proc, not the
    kernel's word; None when it cannot be read (a cold kernel), and then nothing is counted,
    as when reading it fails: a measure never stops a grade. A new pid (a kernel that replaced
    a dead one) starts from nothing."""

    def __init__(self, read):
        self.read, self.last = read, None

    def lap(self, name):
        try:
            now = self.read()
        except Exception:
            return
        if now is None:
            return
        before = self.last[1] if self.last is not None and self.last[0] == now[0] else 0.0
        if now[1] >= before:
            add(KERNEL_PART + name, now[1] - before)
        self.last = now
