"""nbconvert's exporters as nbgrader's converters use them, without the copies and checks
that protect nothing there.

A converter reads each notebook from its file, runs one exporter over it, writes the result
and forgets the notebook. nbconvert, which cannot know that, copies the notebook three
times per conversion (before preprocessing, before the preprocessors run, and to normalise
it), and validates it twice more than it needs to: as it reads it and as it writes it, two
checks that can only log a message, where the check after the last preprocessor
(``Exporter.optimistic_validation``) raises. Autograde converts a submission twice and
GenerateFeedback once: nine copies and five checks of the whole notebook per submission.

Here a notebook read from a converter's input file is owned by that conversion
(``OwnedNotebook``: copying it gives itself), is not checked as it is read, and a notebook
an AutogradeExporter writes is not checked again as it is written. Every preprocessor still
runs, the check after them still raises, and the files written are byte for byte those
nbconvert writes (tests/test_exporters.py).
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json).
"""
import json

import nbformat
from nbconvert.exporters import Exporter, NotebookExporter
from nbformat import NotebookNode
from nbformat.v4 import rwbase

from . import notebook_json


class OwnedNotebook(NotebookNode):
    """A notebook that one conversion alone holds: a copy made to protect it from the
    preprocessors is the notebook itself."""

    def __deepcopy__(self, memo):
        return self


def read_owned(file_stream):
    """The notebook of a converter's input file, as ``nbformat.read(..., as_version=4)``
    reads it, without the check whose only outcome is a logged message. A version 4 notebook
    is made of NotebookNodes as the JSON parser builds it, instead of by walking the parsed
    dicts again (nbformat's from_dict); then nbformat's reader joins the lines and drops the
    transient fields."""
    text = file_stream.read()
    try:
        nb = json.loads(text, object_hook=NotebookNode)
    except ValueError:
        nb = None   # nbformat's reader says why
    if isinstance(nb, NotebookNode) and nb.get("nbformat") == 4 and isinstance(nb.get("cells"), list):
        nb = rwbase.strip_transient(rwbase.rejoin_lines(nb))
    else:
        nb = nbformat.reader.reads(text)
    return OwnedNotebook(nbformat.convert(nb, 4))


class ReadOnce:
    """An exporter whose input file's notebook belongs to the conversion (``read_owned``)."""

    def from_file(self, file_stream, resources=None, **kw):
        return self.from_notebook_node(read_owned(file_stream), resources=resources, **kw)


class AutogradeExporter(ReadOnce, NotebookExporter):
    """nbconvert's NotebookExporter for nbgrader's Autograde (``Autograde.exporter_class``),
    which writes the notebook that passed the check after its last preprocessor without
    checking it again."""

    def from_notebook_node(self, nb, resources=None, **kw):
        nb_copy, resources = Exporter.from_notebook_node(self, nb, resources, **kw)
        if self.nbformat_version != nb_copy.nbformat:   # another version: nbformat converts it
            resources["output_suffix"] = ".v%i" % self.nbformat_version
            output = nbformat.writes(nb_copy, version=self.nbformat_version)
        else:
            resources["output_suffix"] = ".nbconvert"
            writes = notebook_json.writes_json if nb_copy.nbformat == 4 else nbformat.versions[nb_copy.nbformat].writes_json
            output = writes(nb_copy)
        return (output if output.endswith("\n") else output + "\n"), resources
