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
