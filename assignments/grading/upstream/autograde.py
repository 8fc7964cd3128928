"""nbgrader's Autograde, in one conversion per notebook instead of two.

nbgrader autogrades a notebook in two conversions: the sanitising preprocessors
(``Autograde.sanitize_preprocessors``), whose result it writes to the autograded folder,
then the autograding ones (``Autograde.autograde_preprocessors``) on that file, read back.
Writing and reading the notebook in between costs a few milliseconds per submission and
changes nothing but what a reading changes. Here both lists run in one conversion, in
the same order, with that change made between them (``Handover``): the notebook made of
NotebookNodes and without its transient fields, as a reading gives it, the notebook's
folder in the resources now the autograded one (where the kernel finds the release's
helper files), and NBGRADER_EXECUTION set as nbgrader sets it for the second conversion.
The file written is the autograded notebook nbgrader writes (tests/test_autograde.py).

In a worker (``rows_elsewhere``), its start leaves the gradebook alone: nbgrader's
init_assignment writes the student's and the submission's rows into the worker's private
gradebook, which no step of the worker reads them from any more (getgrades.in_a_worker); the
grading process records them in the class's (run/record.py). It still refuses a gradebook
without the assignment or its notebooks, and copies the files as nbgrader does.
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json).
"""
import functools
import os
import shutil

from nbconvert.preprocessors import Preprocessor
from nbformat import from_dict
from nbformat.v4 import rwbase
from nbgrader import utils
from nbgrader.converters import Autograde
from nbgrader.converters.base import BaseConverter, NbGraderException
from traitlets import Bool

from . import speedups


class Handover(Preprocessor):
    """Between the two lists: what nbgrader's second conversion would start from."""

    def __init__(self, folder, **kwargs):
        super().__init__(**kwargs)
        self.folder = folder

    def preprocess(self, nb, resources):
        nb = rwbase.strip_transient(from_dict(nb))
        resources.setdefault("metadata", {})["path"] = self.folder
        os.environ["NBGRADER_EXECUTION"] = "autograde"
        return nb, resources


class OnePassAutograde(Autograde):
    """nbgrader's Autograde (its gradebook steps, files and preprocessors), converting each
    notebook once."""

    rows_elsewhere = Bool(False, help="The student's and the submission's rows are another process's "
                                      "to write (a worker's: the grading process records them in the "
                                      "class's gradebook). The conversion then writes no row: it checks "
                                      "that the gradebook holds the assignment and its notebooks (read "
                                      "once per process) and copies the files as nbgrader's "
                                      "init_assignment does.").tag(config=True)

    def init_assignment(self, assignment_id, student_id):
        if not self.rows_elsewhere:
            return super().init_assignment(assignment_id, student_id)
        BaseConverter.init_assignment(self, assignment_id, student_id)   # the submission's own files
        names = known_notebooks(self.coursedir.db_url, assignment_id)
        if names is None:
            msg = "No assignment with ID '%s' exists in the database" % assignment_id
            self.log.error(msg)
            raise NbGraderException(msg)
        # the release's files over the learner's, as nbgrader's init_assignment copies them
        dest = self._format_dest(assignment_id, student_id)
        source = self.coursedir.format_path(self.coursedir.source_directory, ".", assignment_id)
        excluded = {os.path.join(source, x) for x in self.exclude_overwriting.get(assignment_id, [])}
        for filename in set(utils.find_all_files(source, self.coursedir.ignore + ["*.ipynb"])) - excluded:
            path = os.path.join(dest, os.path.relpath(filename, source))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.exists(path):
                os.remove(path)
            shutil.copy(filename, path)
        known = [nb for nb in self.notebooks if os.path.splitext(os.path.basename(nb))[0] in names]
        for notebook in sorted(set(self.notebooks) - set(known)):
            self.log.warning("Skipping unknown notebook: %s", notebook)
        self.notebooks = known
        if not self.notebooks:
            msg = "No notebooks found, did you forget to run 'nbgrader generate_assignment'?"
            self.log.error(msg)
            raise NbGraderException(msg)

    def convert_single_notebook(self, notebook_filename):
        self.log.info("Sanitizing and autograding %s", notebook_filename)
        self._sanitizing = True   # the resources and paths of the first conversion
        resources = self.init_single_notebook_resources(notebook_filename)
        folder = self._format_dest(resources["nbgrader"]["assignment"], resources["nbgrader"]["student"])
        self.exporter._preprocessors = []
        for pp in self.sanitize_preprocessors:
            self.exporter.register_preprocessor(pp)
        self.exporter.register_preprocessor(Handover(folder, parent=self.exporter), enabled=True)
        for pp in self.autograde_preprocessors:
            self.exporter.register_preprocessor(pp)
        before = os.environ.get("NBGRADER_EXECUTION")
        try:
            output, resources = self.exporter.from_filename(notebook_filename, resources=resources)
        finally:
            if before is None:
                os.environ.pop("NBGRADER_EXECUTION", None)
            else:
                os.environ["NBGRADER_EXECUTION"] = before
        self.write_single_notebook(output, resources)


@functools.lru_cache(maxsize=8)
def known_notebooks(db_url, assignment_id):
    """The names of the notebooks a gradebook holds for an assignment (None: not the
    assignment), read once per process: a worker's private gradebook never changes them."""
    try:
        return frozenset(name for name, _ in speedups.assignment_rows(db_url, assignment_id)[1])
    except ValueError:
        return None
