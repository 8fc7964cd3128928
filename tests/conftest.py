"""The tests' fixtures, markers and options; what they share besides is in helpers.py."""
import collections
import fcntl
import importlib.util
import json
import os
import shutil

import pytest
from helpers import RELEASE, A, build_samples, tree_digest

from assignments.grading.authoring.generated import write_generated
from assignments.grading.run import pipeline

COSTS = os.path.join(os.path.dirname(__file__), "costs.json")


def pytest_addoption(parser):
    parser.addoption("--update-fingerprints", action="store_true",
                     help="record the installed upstream code's fingerprints "
                          "(assignments/grading/upstream/fingerprints.json) after checking the "
                          "replacements against it (tests/test_rooms.py)")
    parser.addoption("--update-goldens", action="store_true",
                     help="rewrite the expected files the tests compare with (tests/expected/) from what "
                          "this run produced, instead of failing when they differ")
    parser.addoption("--record-costs", action="store_true",
                     help="write each test module's measured seconds (setup, call and teardown of "
                          "its tests) to tests/costs.json, which orders the modules of a run")


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
    digest taken before and after. Read it, never write to it: on both cores of a run
    (pytest-xdist) the workers share one grading of it (``_once_per_run``)."""
    def grade(folder):
        subs = build_samples(os.path.join(folder, "samples"))
        before = tree_digest(os.path.join(subs, "submitted"))
        pipeline.grade(A, subs, os.path.join(folder, "graded"), workers=2)
        return {"before": before, "after": tree_digest(os.path.join(subs, "submitted"))}
    folder, digests = _once_per_run(tmp_path_factory, "sample_class", grade)
    with open(os.path.join(folder, "graded", "results.json"), encoding="utf-8") as f:
        results = json.load(f)
    return {"out": os.path.join(folder, "graded"), "results": results,
            "submissions": os.path.join(folder, "samples"), **digests}


def _once_per_run(tmp_path_factory, name, build):
    """``build(folder)`` run once in a run, whichever worker asks first; the others wait for it
    and share the folder. What it returns comes back to each (as JSON)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    shared = tmp_path_factory.getbasetemp().parent if worker else tmp_path_factory.getbasetemp()
    folder, done = os.path.join(shared, name), os.path.join(shared, name + ".json")
    with open(os.path.join(shared, name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(done):
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
            with open(done + ".part", "w", encoding="utf-8") as f:
                json.dump(build(folder), f)
            os.replace(done + ".part", done)
    with open(done, encoding="utf-8") as f:
        return folder, json.load(f)


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
# fixtures that grade a whole class once more, or twice to compare two ways of grading it: slow
_CLASS_GRADED_AGAIN = {"graded_with_known", "both", "both_ways"}
_MODULE_MARKS = {"test_cluster": ("postgres", "slow", "sandbox"), "test_hostile": ("slow", "sandbox"),
                 "test_isolation": ("slow", "sandbox"),
                 "test_robustness": ("slow", "sandbox"), "test_reproducible": ("slow",), "test_agreement": ("slow",),
                 "test_parallel": ("sandbox",), "test_mutations": ("slow",), "test_learners": (),
                 "test_browser": ("browser", "slow"), "test_course": ("sandbox",),
                 "test_browser_zh": ("browser", "slow", "sandbox"), "test_grading_zh": ("sandbox",),
                 "test_term": ("slow", "sandbox"), "test_anywhere": ("slow", "sandbox")}


def pytest_collection_modifyitems(items):
    _heaviest_first(items)
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        marks = set(_MODULE_MARKS.get(item.module.__name__.rsplit(".", 1)[-1], ()))
        if names & _SANDBOXED:
            marks.add("sandbox")
        if names & _CLASS_GRADED_AGAIN:
            marks.update(("sandbox", "slow"))
        for mark in sorted(marks):
            item.add_marker(getattr(pytest.mark, mark))


# The order of a run: the modules that cost most first (their measured seconds, tests/costs.json),
# each module's tests in their own order. `make test` runs on both cores with pytest-xdist,
# handing out whole modules (--dist loadscope, so a module's fixtures are built once) in this
# order: the longest start first and the short ones fill in, as a longest-first schedule does.
def _module(item):
    return item.module.__name__.rsplit(".", 1)[-1]


def _heaviest_first(items):
    with open(COSTS, encoding="utf-8") as f:
        costs = json.load(f)
    first_seen = {}
    for item in items:
        first_seen.setdefault(_module(item), len(first_seen))
    items.sort(key=lambda item: (-costs.get(_module(item), 0.0), first_seen[_module(item)]))


_spent = collections.Counter()


def pytest_runtest_logreport(report):
    _spent[report.nodeid.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py")] += report.duration


def pytest_sessionfinish(session):
    if session.config.getoption("--record-costs") and not hasattr(session.config, "workerinput"):
        with open(COSTS, encoding="utf-8") as f:
            costs = json.load(f)   # the modules this run left out keep their last measure
        costs.update({name: round(spent, 1) for name, spent in _spent.items()})
        with open(COSTS, "w", encoding="utf-8") as f:
            json.dump(dict(sorted(costs.items())), f, indent=1)
            f.write("\n")
