import hashlib
import importlib.util
import os
import shutil
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from assignments import rnn_step_by_step as A  # noqa: E402
from assignments.grading import pipeline  # noqa: E402

RELEASE = os.path.join(REPO, "release", A.ASSIGNMENT_ID)


@pytest.fixture(scope="session")
def assignment():
    return A


@pytest.fixture(scope="session")
def release_checks_module():
    """The rnn_checks.py that students get, loaded from release/."""
    spec = importlib.util.spec_from_file_location("released_rnn_checks", os.path.join(RELEASE, "rnn_checks.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def reference_functions():
    return {e.name: getattr(A.reference, e.name) for e in A.EXERCISES}


def tree_digest(root):
    """A digest of every file's path, bytes and mode under root."""
    h = hashlib.sha256()
    for d, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(d, f)
            h.update(os.path.relpath(p, root).encode())
            h.update(oct(os.stat(p).st_mode).encode())
            with open(p, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


@pytest.fixture(scope="session")
def sample_class(tmp_path_factory):
    """The bundled sample class graded once into a fresh folder, with its submissions'
    digest taken before and after."""
    out = tmp_path_factory.mktemp("graded")
    subs = os.path.join(REPO, "samples")
    before = tree_digest(os.path.join(subs, "submitted"))
    results = pipeline.grade(A, subs, str(out), workers=2)
    return {"out": str(out), "results": results, "before": before,
            "after": tree_digest(os.path.join(subs, "submitted")), "submissions": subs}


def gradebook_dump(db_url, course_id="rnn-step-by-step"):
    """Everything the gradebook says about the students' submissions, ids aside."""
    from nbgrader.api import Gradebook
    rows = []
    with Gradebook(db_url, course_id) as gb:
        for student in gb.students:
            for sub in student.submissions:
                for nb in sub.notebooks:
                    rows += [(student.id, sub.assignment.name, nb.name, g.name, g.auto_score, g.manual_score,
                              g.needs_manual_grade, g.max_score) for g in nb.grades]
                    rows += [(student.id, sub.assignment.name, nb.name, c.name, c.auto_comment) for c in nb.comments]
    return sorted(rows, key=repr)


def copy_release_notebook(dest):
    shutil.copy(os.path.join(RELEASE, A.NOTEBOOK + ".ipynb"), dest)


@pytest.fixture
def notebook_namespace():
    """The reference functions defined as in a notebook: they look each other up in this
    namespace, so replacing one entry changes what the others call."""
    import inspect
    namespace = {}
    exec(inspect.getsource(A.reference), namespace)
    return namespace


def schema_problems(results):
    """Where ``results`` breaks docs/results.schema.json (the documented contract)."""
    import json

    import jsonschema
    with open(os.path.join(REPO, "docs", "results.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(results)]
