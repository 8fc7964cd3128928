"""The files the engine generates beside each source notebook, and the notebook's generated
cells: written by ``python -m assignments release`` (and by generate_assignment's pre-convert
hook), never committed in source/ (the release, which holds them, is).

Beside the notebook: the students' checks (shipped/student_checks.py, as <id>_checks.py),
the notebook's utilities (the assignment's ``utils_template``, as <id>_utils.py, with the
notebook's title in its docstring) and the data the checks run on (check_data.json).
Rule (authoring/): runs in the course staff's process, never on a learner's code.
"""
import os

from .. import REPO
from ..contract.assignment import CHECK_DATA, STUDENT_CHECKS


def utils_text(assignment):
    """The notebook's utilities as the release ships them."""
    with open(assignment.utils_template, encoding="utf-8") as f:
        return f.read().replace("NOTEBOOK_TITLE", assignment.notebook_title, 1)


def write_generated(assignment, folder, reuse_release=False):
    """Write the generated files beside the notebook in ``folder``. With ``reuse_release``,
    the checks' data comes from the committed release when it has it (grading: saves building
    it, about 3 s, on every run)."""
    from . import check_data
    with open(STUDENT_CHECKS, encoding="utf-8") as f:
        checks = f.read()
    released = os.path.join(REPO, "release", assignment.id, CHECK_DATA)
    if reuse_release and os.path.isfile(released):
        with open(released, encoding="utf-8") as f:
            data = f.read()
    else:
        data = check_data.build(assignment)
    files = [(assignment.checks_module + ".py", checks), (CHECK_DATA, data)]
    if assignment.utils_module:
        files.append((assignment.utils_module + ".py", utils_text(assignment)))
    for name, text in files:
        write_if_changed(os.path.join(folder, name), text)


def write_if_changed(path, text):
    """Write ``text`` to ``path`` unless it holds it already, through a temporary file renamed
    over it: a process reading the file meanwhile (another test worker, a kernel) sees the old
    text or the new, never a part."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except (OSError, UnicodeDecodeError):
        pass
    part = f"{path}.{os.getpid()}.part"
    with open(part, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(part, path)


def refresh_source(assignment, folder=None):
    """Rewrite what in source/<id>/ is generated: the notebook's solutions, worked examples
    and expected outputs, and the files beside it."""
    import nbformat

    from . import notebook
    folder = folder or assignment.source_dir
    path = os.path.join(folder, assignment.notebook + ".ipynb")
    nb = notebook.refresh(assignment, nbformat.read(path, as_version=4))
    nbformat.write(nb, path)
    write_generated(assignment, folder)
