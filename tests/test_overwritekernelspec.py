"""OverwriteKernelspecAtOnce (grading/upstream/overwritekernelspec.py) against nbgrader's own
OverwriteKernelspec: the same kernelspec put back, the gradebook read once per worker."""
import nbformat
import pytest
from helpers import course_gradebook, graded_release, sql_statements
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import OverwriteKernelspec

from assignments.grading.upstream import overwritekernelspec, speedups
from assignments.grading.upstream.overwritekernelspec import OverwriteKernelspecAtOnce


def outputs(config, resources, nb):
    return [sql_statements(config.CourseDirectory.db_url,
                           lambda: step(config=config).preprocess(nbformat.from_dict(nb), resources)[0])
            for step in (OverwriteKernelspec, OverwriteKernelspecAtOnce)]


def submissions(config):
    """The release with the kernelspec a learner's Jupyter wrote: another kernel, none at all,
    the release's own."""
    other, bare, same = graded_release(config), graded_release(config), graded_release(config)
    other.metadata.kernelspec = {"name": "python2", "display_name": "Python 2", "language": "python"}
    del bare.metadata["kernelspec"]
    return other, bare, same


def set_source_kernelspec(db_url, text):
    with Gradebook(db_url) as gb:
        gb.find_notebook(*NOTEBOOK).kernelspec = text
        gb.db.commit()


NOTEBOOK = ("rnn_step_by_step", "rnn_step_by_step")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course's gradebook, shared by this module's tests (each puts back what it changes)."""
    return course_gradebook(tmp_path_factory.mktemp("course") / "c")


def test_the_same_kernelspec_as_nbgraders_own(course, monkeypatch):
    monkeypatch.setattr(overwritekernelspec, "_KEPT", {})
    config, resources = course
    for nb in submissions(config):
        (stock, _), (ours, _) = outputs(config, resources, nb)
        assert ours == stock and ours.metadata.kernelspec.name == "python3"
    with Gradebook(config.CourseDirectory.db_url) as gb:
        kept = gb.find_notebook(*NOTEBOOK).kernelspec
    set_source_kernelspec(config.CourseDirectory.db_url, None)   # a source without one: the learner's stays
    try:
        for nb in submissions(config):
            (stock, _), (ours, _) = outputs(config, resources, nb)
            assert ours == stock and ours.metadata.get("kernelspec") == nb.metadata.get("kernelspec")
    finally:
        set_source_kernelspec(config.CourseDirectory.db_url, kept)


def test_a_workers_private_gradebook_is_read_once_per_process(course, monkeypatch):
    """With a scratch gradebook (a worker's private copy of the seed, speedups.scratch), the
    notebook's kernelspec is read for the first submission only; any other is read each time."""
    config, resources = course
    db_url = config.CourseDirectory.db_url
    monkeypatch.setattr(overwritekernelspec, "_KEPT", {})
    monkeypatch.setattr(speedups, "_SCRATCH", {db_url})
    selects = []
    for nb in submissions(config):
        (stock, _), (ours, our_sql) = outputs(config, resources, nb)
        assert ours == stock
        selects.append(our_sql["SELECT"])
    assert selects[0] >= 1 and selects[1:] == [0, 0], selects
    monkeypatch.setattr(speedups, "_SCRATCH", set())
    monkeypatch.setattr(overwritekernelspec, "_KEPT", {})
    assert [outputs(config, resources, nb)[1][1]["SELECT"] >= 1 for nb in submissions(config)] == [True] * 3


def test_a_notebook_the_gradebook_lacks_is_refused_as_nbgrader_refuses_it(course, monkeypatch):
    config, resources = course
    monkeypatch.setattr(speedups, "_SCRATCH", {config.CourseDirectory.db_url})
    monkeypatch.setattr(overwritekernelspec, "_KEPT", {})
    unknown = {**resources, "nbgrader": {**resources["nbgrader"], "notebook": "not_a_notebook"}}
    for step in (OverwriteKernelspec, OverwriteKernelspecAtOnce):
        with pytest.raises(MissingEntry):
            step(config=config).preprocess(graded_release(config), unknown)
    assert overwritekernelspec._KEPT == {}
