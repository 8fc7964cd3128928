import hashlib
import importlib.util
import os
import shutil
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from assignments.grading.authoring.generated import write_generated  # noqa: E402
from assignments.grading.run import pipeline  # noqa: E402
from assignments.rnn_step_by_step import ASSIGNMENT as A  # noqa: E402

RELEASE = os.path.join(REPO, "release", A.id)


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
    subs = build_samples(str(tmp_path_factory.mktemp("samples")))
    before = tree_digest(os.path.join(subs, "submitted"))
    results = pipeline.grade(A, subs, str(out), workers=2)
    return {"out": str(out), "results": results, "before": before,
            "after": tree_digest(os.path.join(subs, "submitted")), "submissions": subs}


def build_samples(folder):
    """The bundled sample class built into ``folder``/submitted (samples/build.py); returns ``folder``."""
    spec = importlib.util.spec_from_file_location("samples_build", os.path.join(REPO, "samples", "build.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build(os.path.join(folder, "submitted"))
    return folder


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


def comparable_notebook(nb, known_ids=None):
    """An executed notebook (parsed JSON) without what differs from run to run: nbclient's
    timestamps, where ipykernel's timed flushes happened to split a stream (consecutive
    stream outputs of one name are joined, as nbclient's coalesce_streams joins them) and,
    when ``known_ids`` is given, the random ids of cells that are not among them (a cell
    nbgrader puts back)."""
    for cell in nb["cells"]:
        if known_ids is not None and cell.get("id") not in known_ids:
            cell["id"] = "put back"
        cell.get("metadata", {}).pop("execution", None)
        joined = []
        for out in cell.get("outputs", []):
            if out["output_type"] == "stream":
                text = "".join(out["text"])
                if joined and joined[-1]["output_type"] == "stream" and joined[-1]["name"] == out["name"]:
                    joined[-1]["text"] += text
                    continue
                out = dict(out, text=text)
            joined.append(out)
        if "outputs" in cell:
            cell["outputs"] = joined
    return nb


def course_gradebook(root):
    """A course folder at ``root`` whose gradebook holds the RNN assignment and an empty
    submission by "ada": its config, and the resources nbgrader's preprocessors get for
    that submission."""
    from nbgrader.api import Gradebook

    from assignments.grading.run import record
    from assignments.grading.run.course import load_config
    shutil.copytree(A.source_dir, root / "source" / A.id, ignore=shutil.ignore_patterns("__pycache__"))
    write_generated(A, str(root / "source" / A.id), reuse_release=True)
    config = load_config(str(root))
    config.GenerateAssignment.pre_convert_hook = None   # written just above
    record.prepare(config, A.id)
    with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
        gb.update_or_create_student("ada")
        gb.update_or_create_submission(A.id, "ada")
    resources = {"nbgrader": {"student": "ada", "assignment": A.id, "notebook": A.notebook,
                              "db_url": config.CourseDirectory.db_url, "course_id": config.CourseDirectory.course_id}}
    return config, resources


def graded_release(config):
    """The course's release notebook with its test cells scored as the judge would: full,
    partial and none, and one answer cell left as released (nbgrader's "No response.")."""
    import nbformat

    from assignments.grading.judging.judge import Verdict
    from assignments.grading.judging.judged_execute import verdict_outputs
    nb = nbformat.read(os.path.join(config.CourseDirectory.root, "release", A.id, A.notebook + ".ipynb"), as_version=4)
    scores = iter([1.0, 0.5, 0.0] * 10)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.startswith("test_"):
            points = cell.metadata["nbgrader"]["points"]
            score = next(scores) * points
            cell.outputs = verdict_outputs(Verdict(grade_id[5:], score, points, score == points, feedback="x"))
        elif grade_id == "rnn_forward":
            continue   # unchanged: "No response."
        elif cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source += "\n# answered"
    return nb


def sql_statements(db_url, run):
    """run() while counting the SQL statements sent to the database (by their first word)."""
    import collections

    from sqlalchemy import event

    from assignments.grading.upstream import speedups
    engine, counted = speedups._engine(db_url), collections.Counter()

    def count(conn, cursor, statement, *_):
        counted[statement.split()[0].upper()] += 1
    event.listen(engine, "before_cursor_execute", count)
    try:
        result = run()
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return result, counted


def copy_release_notebook(dest):
    shutil.copy(os.path.join(RELEASE, A.notebook + ".ipynb"), dest)


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


# Markers (pytest.ini) given by what a test needs, so that no module has to remember them.
_SANDBOXED = {"sample_class", "hostile"}
_MODULE_MARKS = {"test_cluster": ("postgres", "slow", "sandbox"), "test_hostile": ("slow", "sandbox"),
                 "test_isolation": ("slow", "sandbox"),
                 "test_robustness": ("slow", "sandbox"), "test_reproducible": ("slow",),
                 "test_parallel": ("sandbox",), "test_mutations": ("slow",), "test_learners": (),
                 "test_browser": ("browser", "slow"), "test_course": ("sandbox",)}


def pytest_collection_modifyitems(items):
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        marks = set(_MODULE_MARKS.get(item.module.__name__.rsplit(".", 1)[-1], ()))
        if names & _SANDBOXED:
            marks.add("sandbox")
        for mark in sorted(marks):
            item.add_marker(getattr(pytest.mark, mark))


def _can_unshare_network():
    try:
        return subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def chromium(tmp_path, *args, timeout=120):
    """Headless Chromium with no network at all (its own empty network namespace when it
    can have one, and every host name unresolvable anyway). Debian's package `chromium`,
    which `make test` installs."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail("Chromium is missing: `make test` installs it (apt-get install chromium)")
    prefix = ["unshare", "-n"] if _can_unshare_network() else []
    profile = tmp_path / "chromium-profile"
    cmd = prefix + [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                    "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={profile}", *args]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def screenshot_ink(path):
    """How much of a screenshot is not background: the share of pixels that differ from the
    most common colour, and the number of distinct colours."""
    from PIL import Image
    im = Image.open(path).convert("RGB")
    colours = im.getcolors(maxcolors=1 << 24)
    background = max(colours)[0]
    total = im.width * im.height
    return 1 - background / total, len(colours)
