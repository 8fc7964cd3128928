"""What the tests share that is not a fixture: the course's paths, building the sample
class, comparing notebooks and gradebooks, a browser. Imported as ``from helpers import ...``
(conftest.py keeps the fixtures and the markers)."""
import contextlib
import hashlib
import importlib.util
import os
import shutil
import subprocess

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from assignments.grading.authoring.generated import write_generated  # noqa: E402
from assignments.rnn_step_by_step import ASSIGNMENT as A  # noqa: E402

RELEASE = os.path.join(REPO, "release", A.id)

# The setting that puts stock nbgrader in place of every piece of grading/upstream/
# (nbgrader_config.py reads it): the whole suite passes with it on too (docs/testing.md).
STOCK_SETTING = "RNN_COURSE_STOCK_NBGRADER"
STOCK_MODE = os.environ.get(STOCK_SETTING, "") == "1"


@contextlib.contextmanager
def gradebook_savings():
    """The course's savings in nbgrader's gradebook (upstream/speedups.py) installed within
    the block, as the course's own config has them, even in a stock-mode run (where grading
    takes them out); the state found is put back afterwards."""
    import nbgrader.api

    from assignments.grading.upstream import speedups
    had = nbgrader.api.Gradebook.__init__ is speedups._gradebook_init
    assert speedups.install()
    try:
        yield
    finally:
        speedups.use(had)


@contextlib.contextmanager
def course_pieces():
    """The course's own pieces (grading/upstream/) configured within the block, even in a
    stock-mode run: for the tests that compare one of them with nbgrader's own, which
    would otherwise compare nbgrader with itself."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(STOCK_SETTING, raising=False)
        yield


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


def course_files():
    """The repository's files as a clean clone has them with its generated files built: what
    git tracks and what it would track (not what it ignores)."""
    listed = subprocess.run(["git", "-C", REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    return [rel for rel in listed if rel and os.path.isfile(os.path.join(REPO, rel))]


def readable_copy(dest):
    """A copy of the course's files that every user may read, for a test that runs something
    as another user: the checkout itself may be in a private folder (as /root is). Returns
    ``dest`` (a pathlib.Path)."""
    import pathlib
    dest = pathlib.Path(dest)
    for rel in course_files():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(os.path.join(REPO, rel), dest / rel)
    for folder, _, files in os.walk(dest):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    return dest


def build_samples(folder, lang="en"):
    """The bundled sample class built into ``folder``/submitted (samples/build.py), from the
    ``lang`` edition's release notebooks; returns ``folder``."""
    spec = importlib.util.spec_from_file_location("samples_build", os.path.join(REPO, "samples", "build.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build(os.path.join(folder, "submitted"), lang)
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
    """run() while counting the SQL statements sent to the database ``db_url`` (by their
    first word), through any engine: the course's shared one (upstream/speedups.py) or
    one nbgrader builds itself (stock mode, RNN_COURSE_STOCK_NBGRADER=1)."""
    import collections

    from sqlalchemy import event
    from sqlalchemy.engine import Engine, make_url
    database, counted = make_url(db_url).database, collections.Counter()

    def count(conn, cursor, statement, *_):
        if conn.engine.url.database == database:
            counted[statement.split()[0].upper()] += 1
    event.listen(Engine, "before_cursor_execute", count)
    try:
        result = run()
    finally:
        event.remove(Engine, "before_cursor_execute", count)
    return result, counted


def commits_made(db_url, run):
    """run() while counting the commits made to the database ``db_url``, through any engine
    (as ``sql_statements``): (its result, the count)."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine, make_url
    database, counted = make_url(db_url).database, [0]

    def count(conn):
        counted[0] += conn.engine.url.database == database
    event.listen(Engine, "commit", count)
    try:
        result = run()
    finally:
        event.remove(Engine, "commit", count)
    return result, counted[0]


def copy_release_notebook(dest):
    shutil.copy(os.path.join(RELEASE, A.notebook + ".ipynb"), dest)


def schema_problems(results):
    """Where ``results`` breaks docs/results.schema.json (the documented contract)."""
    import json

    import jsonschema
    with open(os.path.join(REPO, "docs", "results.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(results)]


def _can_unshare_network():
    try:
        return subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def chromium(tmp_path, *args, timeout=120, env=None):
    """Headless Chromium with no network at all (its own empty network namespace when it
    can have one, and every host name unresolvable anyway). Debian's package `chromium`,
    which `make test` installs. ``env``: its environment (default: this process's)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail("Chromium is missing: `make test` installs it (apt-get install chromium)")
    prefix = ["unshare", "-n"] if _can_unshare_network() else []
    profile = tmp_path / "chromium-profile"
    cmd = prefix + [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                    "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={profile}", *args]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


CJK_FONT_MISSING = ("no font for Chinese on this machine (`fc-list :lang=zh` lists none): Chinese text would be "
                    "drawn as empty boxes. Install Debian's fonts-noto-cjk (`make test` does it as root)")


def cjk_fonts():
    """The font families fontconfig offers for Chinese (`fc-list :lang=zh family`)."""
    exe = shutil.which("fc-list")
    if exe is None:
        pytest.fail("fc-list is missing (Debian's fontconfig): the Chinese fonts cannot be listed")
    run = subprocess.run([exe, ":lang=zh", "family"], capture_output=True, text=True, timeout=60)
    return sorted({line.strip() for line in run.stdout.splitlines() if line.strip()})


def glyphs_differ_from_boxes(tmp_path, text, env=None):
    """Chromium draws ``text`` and, in the same place, as many unassigned code points (which
    no font has: the missing-glyph box, "tofu"); returns the share of pixels that differ
    between the two pictures: about 0 when ``text`` is drawn as boxes too."""
    import numpy as np
    from PIL import Image
    pictures = []
    for name, shown in (("text", text), ("boxes", "\ue000" * len(text))):
        page = tmp_path / f"glyphs-{name}.html"
        page.write_text('<!DOCTYPE html><html><body style="margin:0;background:#fff"><p style="font: 48px '
                        f'sans-serif;margin:8px">{shown}</p></body></html>', encoding="utf-8")
        shot = tmp_path / f"glyphs-{name}.png"
        chromium(tmp_path, f"--screenshot={shot}", "--window-size=1000,300", page.as_uri(), env=env)
        with Image.open(shot) as image:
            pictures.append(np.asarray(image.convert("L"), dtype=np.int16))
    return float((np.abs(pictures[0] - pictures[1]) > 40).mean())


def screenshot_ink(path):
    """How much of a screenshot is not background: the share of pixels that differ from the
    most common colour, and the number of distinct colours."""
    from PIL import Image
    im = Image.open(path).convert("RGB")
    colours = im.getcolors(maxcolors=1 << 24)
    background = max(colours)[0]
    total = im.width * im.height
    return 1 - background / total, len(colours)



def numerical_gradient(f, x, h=1e-6):
    """Central differences of the scalar f() with respect to the array x (nudged in place)."""
    grad = np.zeros_like(x)
    for ix in np.ndindex(*x.shape):
        old = x[ix]
        x[ix] = old + h
        plus = f()
        x[ix] = old - h
        minus = f()
        x[ix] = old
        grad[ix] = (plus - minus) / (2 * h)
    return grad


def check_says(module, name, ns):
    """What the students' check of ``name`` says about the notebook namespace ``ns``."""
    try:
        module.check(name, ns)
    except module.CheckFailed as exc:
        return str(exc)
    return "passed"


def cell_namespace(assignment, source, tag):
    """The reference's functions as a notebook's other cells, ``source`` run over them as a
    learner's cell, its text where inspect finds it (as IPython registers a cell's)."""
    import inspect
    import linecache
    ns = {"np": np}
    exec(inspect.getsource(assignment.reference), ns)
    path = f"<cell {tag}>"
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    exec(compile(source, path, "exec"), ns)
    return ns
