"""The student release, built by nbgrader's generate_assignment as the course configures it, so
that ``python -m assignments release`` and formgrader's Generate button (or a plain ``nbgrader
generate_assignment``) make the same release, byte for byte:

* ``refresh_source_hook``, generate_assignment's pre-convert hook, first rewrites what is
  generated in source/<id>/ (the notebook's solutions, worked examples and expected outputs;
  the students' checks, utilities and data beside it: ``generated.refresh_source``);
* ``CourseRelease``, its first preprocessor, adds what only the release carries (figures
  drawn into the notebook, say: ``Assignment.finish_release_notebook``).

Both are named in nbgrader_config.py.
Rule (authoring/): runs in the course staff's process, never on a learner's code.
"""
import logging
import os
import shutil
import tempfile

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from ..contract import messages
from ..contract.messages import N_
from ..run.course import load_config
from . import shipped_text, translate
from .generated import refresh_source

CHECK_MESSAGES = "check_messages.mo"   # the students' checks' catalog (student_checks.MESSAGES_FILE)
CODE_HERE = N_("YOUR CODE HERE")


def _assignment(assignment_id):
    from ..contract.assignment import known, load
    return load(assignment_id) if assignment_id in known() else None


class CourseRelease(NbGraderPreprocessor):
    """generate_assignment's first preprocessor: the assignment's finishing touches on the
    release notebook (none for a notebook that is not one of this course's assignments); in
    a language other than English, its prose first (translate.py)."""

    lang = Unicode("en", help="The language of the release (python -m assignments release --lang)").tag(config=True)

    def preprocess(self, nb, resources):
        assignment = _assignment(resources["nbgrader"]["assignment"])
        if assignment is not None and resources["nbgrader"]["notebook"] == assignment.notebook:
            if self.lang != "en":
                translate.translated_cells(nb, assignment.id, self.lang)
            assignment.finish_release_notebook(nb)
        return nb, resources


def refresh_source_hook(assignment, student, notebooks):
    """generate_assignment's pre-convert hook: refresh the generated parts of the source
    folder being converted (where its notebooks are), as ``python -m assignments release``
    does first. nbgrader only logs a hook's failure, and quietly: it is logged as an error here."""
    found = _assignment(assignment)
    if found is None or not notebooks:
        return
    try:
        refresh_source(found, os.path.dirname(os.path.abspath(notebooks[0])))
    except Exception:
        logging.getLogger(__name__).exception("could not refresh the generated parts of %s: the release may be stale",
                                              assignment)
        raise


def build(assignment, source_root, release_root, lang="en"):
    """Refresh the generated parts of ``source_root/<id>``, then write the student version
    to ``release_root/<id>`` (replacing it), with nbgrader's generate_assignment and a
    throwaway gradebook. In another language than English, the notebook's prose is
    translated, the students' checks get their compiled catalog (check_messages.mo) and the
    Python files beside the notebook are copies with their messages translated (shipped_text.py)."""
    from ..run import record
    aid = assignment.id
    refresh_source(assignment, os.path.join(source_root, aid))
    with tempfile.TemporaryDirectory() as work:
        shutil.copytree(os.path.join(source_root, aid), os.path.join(work, "source", aid),
                        ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        config = load_config(work, "sqlite:///" + os.path.join(work, "gradebook.db"))
        config.GenerateAssignment.force = True
        config.GenerateAssignment.pre_convert_hook = None   # refreshed just above
        if lang != "en":
            config.CourseRelease.lang = lang
            config.ClearSolutions.code_stub = {"python": "# " + messages.catalog(lang).gettext(CODE_HERE)
                                               + "\nraise NotImplementedError()"}
            with open(os.path.join(work, "source", aid, CHECK_MESSAGES), "wb") as f:
                f.write(messages.compiled(lang))
            shipped_text.write_translated(assignment, os.path.join(work, "source", aid), translate.load(aid, lang))
        record.prepare(config, aid)
        target = os.path.join(release_root, aid)
        if os.path.exists(target):
            shutil.rmtree(target)
        shutil.copytree(os.path.join(work, "release", aid), target)
        for dirpath, _, files in os.walk(target):
            for name in files:
                os.chmod(os.path.join(dirpath, name), 0o644)
    return target
