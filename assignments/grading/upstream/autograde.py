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
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json).
"""
import os

from nbconvert.preprocessors import Preprocessor
from nbformat import from_dict
from nbformat.v4 import rwbase
from nbgrader.converters import Autograde


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
