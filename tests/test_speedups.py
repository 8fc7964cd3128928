"""The gradebook speedups replace nbgrader internals: they must match the nbgrader they run on."""
import os
import subprocess
import sys

import nbgrader

from assignments.grading import speedups


def test_written_for_the_pinned_nbgrader():
    assert nbgrader.__version__ == speedups.WRITTEN_FOR


def test_schema_version_is_what_alembic_heads_says(tmp_path):
    """The revision read from nbgrader's files equals the one the real alembic command reports
    (nbgrader's alembic.ini leaves the scripts' folder as a placeholder it fills in itself)."""
    ini = tmp_path / "alembic.ini"
    ini.write_text(f"[alembic]\nscript_location = {os.path.join(os.path.dirname(nbgrader.__file__), 'alembic')}\n")
    alembic = os.path.join(os.path.dirname(sys.executable), "alembic")
    out = subprocess.run([alembic, "-c", str(ini), "heads"], capture_output=True, text=True, check=True).stdout
    assert out.split()[0] == speedups.alembic_head()


def test_not_installed_on_another_nbgrader(monkeypatch):
    import warnings
    stock = nbgrader.api.Gradebook.__init__
    monkeypatch.setattr(nbgrader, "__version__", "9.9.9")
    monkeypatch.setattr(nbgrader.api.Gradebook, "__init__", stock)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert speedups.install() is False
    assert nbgrader.api.Gradebook.__init__ is stock
    assert any("written for nbgrader" in str(w.message) for w in caught)


def test_cached_metadata_validation_raises_what_jsonschema_raises():
    """nbgrader's metadata validator with the cached jsonschema: valid metadata passes, and
    invalid metadata fails with jsonschema.validate's own error."""
    import jsonschema
    import pytest
    from nbgrader.nbgraderformat.v3 import MetadataValidatorV3
    schema = MetadataValidatorV3().schema
    cached = speedups.CachedJsonschema()
    good = {"grade": True, "solution": False, "locked": True, "grade_id": "t", "points": 1, "schema_version": 3}
    cached.validate(good, schema)
    for bad in (dict(good, points="many"), dict(good, grade_id=3), {"grade": True}):
        with pytest.raises(jsonschema.ValidationError) as stock:
            jsonschema.validate(bad, schema)
        with pytest.raises(jsonschema.ValidationError) as ours:
            cached.validate(bad, schema)
        assert ours.value.message == stock.value.message
