"""OverwriteCellsAtOnce (grading/upstream/overwritecells.py) against nbgrader's own OverwriteCells:
on a notebook whose learner changed what the release locks, the same notebook comes out,
from a few queries instead of a few per cell."""
import nbformat
from helpers import course_gradebook, graded_release, sql_statements
from nbgrader.preprocessors import OverwriteCells

from assignments.grading.upstream.overwritecells import OverwriteCellsAtOnce


def tampered(config, unknown=False):
    """The release, with what a learner can change and OverwriteCells puts back (and a cell
    whose id the gradebook lacks, when ``unknown``: nbgrader's add_missing_cells cannot
    take that one)."""
    nb = graded_release(config)
    graded = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")]
    locked = [c for c in graded if c.metadata["nbgrader"].get("locked") and not c.metadata["nbgrader"].get("grade")
              and not c.metadata["nbgrader"].get("solution")]
    locked[0].source += "\nprint('changed')"                  # a locked cell edited
    if unknown:
        locked[-1].metadata["nbgrader"]["grade_id"] = "not_in_the_gradebook"
    tests = [c for c in graded if c.metadata["nbgrader"]["grade_id"].startswith("test_")]
    tests[0].metadata["nbgrader"]["points"] = 100             # a test cell's points raised
    tests[1].cell_type = "markdown"                           # a test cell turned into markdown
    del tests[1]["outputs"], tests[1]["execution_count"]
    nb.cells.remove(tests[3])                                 # a test cell deleted
    return nb


def outputs(config, resources, nb):
    return [sql_statements(config.CourseDirectory.db_url,
                           lambda: step(config=config).preprocess(nbformat.from_dict(nb), resources)[0])
            for step in (OverwriteCells, OverwriteCellsAtOnce)]


def test_the_same_notebook_as_nbgraders_own_in_fewer_queries(tmp_path):
    config, resources = course_gradebook(tmp_path / "c")
    config.OverwriteCells.add_missing_cells = True
    nb = tampered(config)
    (stock, stock_sql), (ours, our_sql) = outputs(config, resources, nb)
    assert ours == stock
    assert stock != nb and len(stock.cells) == len(nb.cells) + 1   # it did put things back
    assert our_sql["SELECT"] <= 16 < stock_sql["SELECT"], (our_sql, stock_sql)


def test_a_cell_the_gradebook_lacks_loses_its_id_as_with_nbgrader(tmp_path):
    config, resources = course_gradebook(tmp_path / "c")
    config.OverwriteCells.add_missing_cells = False
    nb = tampered(config, unknown=True)
    (stock, _), (ours, _) = outputs(config, resources, nb)
    assert ours == stock
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in ours.cells]
    assert "not_in_the_gradebook" not in ids and "not_in_the_gradebook" in str(nb)


def test_a_workers_private_gradebook_is_read_once_per_process(tmp_path, monkeypatch):
    """With a scratch gradebook (a worker's private copy of the seed, speedups.scratch), the
    notebook's cells are read for the first submission only; every submission still comes
    out as nbgrader's own OverwriteCells makes it, a cell the gradebook lacks included."""
    from nbgrader.api import Gradebook

    from assignments.grading.upstream import overwritecells, speedups
    config, resources = course_gradebook(tmp_path / "c")
    db_url = config.CourseDirectory.db_url
    monkeypatch.setattr(overwritecells, "_KEPT", {})
    monkeypatch.setattr(speedups, "_SCRATCH", {db_url})
    selects, opening = [], 0
    for nb in (tampered(config), graded_release(config), tampered(config, unknown=True)):
        config.OverwriteCells.add_missing_cells = len(selects) < 2   # nbgrader's own cannot add with an unknown id
        (stock, _), (ours, our_sql) = outputs(config, resources, nb)
        assert ours == stock
        selects.append(our_sql["SELECT"] - opening)
        # what opening the gradebook asks from here on (nothing, but in stock mode)
        opening = sql_statements(db_url, lambda: Gradebook(db_url).close())[1]["SELECT"]
    assert selects[0] >= 4 and selects[1] == 0 and 0 < selects[2] <= 2, selects   # the unknown cell: looked up
    monkeypatch.setattr(speedups, "_SCRATCH", set())   # any other gradebook: read each time
    assert outputs(config, resources, graded_release(config))[1][1]["SELECT"] >= 4
