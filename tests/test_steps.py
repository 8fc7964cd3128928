"""measure/steps.py: a step inside another counts as itself only."""
import time

from assignments.grading.measure import steps


def busy(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_a_step_inside_another_counts_as_itself_only():
    steps.take()
    with steps.step("conversion"):
        busy(0.05)
        with steps.step("judged calls"):
            busy(0.1)
    steps.add("kernel", 0.25)
    spent = steps.take()
    assert list(spent) == ["conversion", "judged calls", "kernel"]
    assert 0.05 <= spent["conversion"] < 0.09 and 0.1 <= spent["judged calls"] < 0.14 and spent["kernel"] == 0.25
    assert steps.take() == {}   # taken: the next submission starts from nothing


def test_a_step_that_raises_is_counted_and_lets_the_error_through():
    steps.take()

    @steps.step("diagnosis")
    def fails():
        busy(0.02)
        raise ValueError("kept")
    try:
        fails()
    except ValueError as exc:
        assert str(exc) == "kept"
    assert steps.take()["diagnosis"] >= 0.02


def test_a_kernel_meter_splits_a_kernels_cpu_among_the_steps_that_wait_on_it():
    """KernelMeter: each lap counts what the kernel used since the last; a kernel that replaced
    a dead one (another pid) starts from nothing; a kernel that cannot be read, or whose
    reading fails, counts nothing and stops nothing."""
    steps.take()
    readings = iter([(7, 0.03), (7, 0.08), None, OSError("the zygote is gone"), (7, 0.09), (9, 0.02), (9, 0.05)])

    def read():
        now = next(readings)
        if isinstance(now, Exception):
            raise now
        return now
    meter = steps.KernelMeter(read)
    for name in ("start", "learner's cells", "judged calls", "judged calls", "judged calls", "learner's cells",
                 "locate and repair"):
        meter.lap(name)
    spent = steps.take()
    assert spent == {"kernel: start": 0.03, "kernel: learner's cells": 0.07, "kernel: judged calls": 0.01,
                     "kernel: locate and repair": 0.03}
    assert all(name in steps.STEPS for name in spent)
