"""The tests' fixtures, markers and options; what they share besides is in helpers.py."""
import importlib.util
import os

import pytest
from helpers import RELEASE, A, build_samples, tree_digest

from assignments.grading.authoring.generated import write_generated
from assignments.grading.run import pipeline


def pytest_addoption(parser):
    parser.addoption("--update-fingerprints", action="store_true",
                     help="record the installed upstream code's fingerprints "
                          "(assignments/grading/upstream/fingerprints.json) after checking the "
                          "replacements against it (tests/test_rooms.py)")


@pytest.fixture(scope="session", autouse=True)
def generated_source_files():
    """The files `python -m assignments release` writes beside each source notebook (the
    students' checks, check_data.json) are generated, not committed: build them from their
    sources before any test, as a clean clone has none of them."""
    from assignments.grading.contract import assignment as contract
    for aid in contract.known():
        found = contract.load(aid)
        write_generated(found, found.source_dir)


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
    return {e.name: getattr(A.reference, e.name) for e in A.exercises}


@pytest.fixture(scope="session")
def sample_class(tmp_path_factory):
    """The bundled sample class graded once into a fresh folder, with its submissions'
    digest taken before and after."""
    out = tmp_path_factory.mktemp("graded")
    subs = build_samples(str(tmp_path_factory.mktemp("samples")))
    before = tree_digest(os.path.join(subs, "submitted"))
    results = pipeline.grade(A, subs, str(out), workers=2)
    return {"out": str(out), "results": results, "before": before,
            "after": tree_digest(os.path.join(subs, "submitted")), "submissions": subs}


@pytest.fixture
def notebook_namespace():
    """The reference functions defined as in a notebook: they look each other up in this
    namespace, so replacing one entry changes what the others call."""
    import inspect
    namespace = {}
    exec(inspect.getsource(A.reference), namespace)
    return namespace


# Markers (pytest.ini) given by what a test needs, so that no module has to remember them.
_SANDBOXED = {"sample_class", "hostile"}
_MODULE_MARKS = {"test_cluster": ("postgres", "slow", "sandbox"), "test_hostile": ("slow", "sandbox"),
                 "test_isolation": ("slow", "sandbox"),
                 "test_robustness": ("slow", "sandbox"), "test_reproducible": ("slow",), "test_agreement": ("slow",),
                 "test_parallel": ("sandbox",), "test_mutations": ("slow",), "test_learners": (),
                 "test_browser": ("browser", "slow"), "test_course": ("sandbox",),
                 "test_browser_zh": ("browser", "slow", "sandbox"), "test_grading_zh": ("sandbox",)}


def pytest_collection_modifyitems(items):
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        marks = set(_MODULE_MARKS.get(item.module.__name__.rsplit(".", 1)[-1], ()))
        if names & _SANDBOXED:
            marks.add("sandbox")
        for mark in sorted(marks):
            item.add_marker(getattr(pytest.mark, mark))
