"""upstream/package.py: nbgrader's package registered without its server extensions."""
import json
import subprocess
import sys

from helpers import REPO

SERVER = ("jupyter_server", "prometheus_client", "nbgrader.exchange", "nbgrader.server_extensions.formgrader")


def run(code):
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_lean_nbgrader_grades_without_its_server_extensions_and_still_has_them():
    """After ``lean``, the grading pipeline imports none of the server extensions' modules;
    the package keeps its version and file, and a server extension still imports on demand."""
    found = run(
        "import json, sys, importlib.metadata; from assignments.grading.upstream import package; "
        "lean = package.lean(); import assignments.grading.run.pipeline, assignments.grading.reports.report; "
        "import nbgrader; loaded = [m for m in %r if m in sys.modules]; "
        "same = nbgrader.__version__ == importlib.metadata.version('nbgrader') and nbgrader.__file__.endswith('__init__.py'); "
        "import nbgrader.server_extensions.formgrader.handlers; "
        "print(json.dumps([lean, loaded, same]))" % (SERVER,))
    assert found == [True, [], True]
    whole = run("import json, sys; import assignments.grading.run.pipeline; print(json.dumps([m for m in %r if m in sys.modules]))"
                % (SERVER,))
    assert whole, "without lean the package imports its server extensions (else lean is pointless)"


def test_lean_leaves_an_imported_or_stock_nbgrader_alone():
    assert run("import json; import nbgrader; from assignments.grading.upstream import package; "
               "print(json.dumps(package.lean()))") is False
    assert run("import json, sys; from assignments.grading.upstream import package; "
               "print(json.dumps([package.lean(stock=True), 'nbgrader' in sys.modules]))") == [False, False]


def test_jsonschema_comes_without_its_format_checkers_and_still_validates_notebooks():
    """What the command line's ``grade`` does before its imports: jsonschema without the modules
    of its format checkers, which nothing of grading uses; nbformat still rejects a bad
    notebook, and the hidden modules import again afterwards."""
    code = """
import json, sys
import assignments.__main__, assignments.grading.run.start
from assignments.grading.upstream import package
hidden = package.without_format_checkers()
import assignments.grading.run.pipeline, assignments.grading.reports.report, nbformat
loaded = [m for m in package.FORMAT_CHECKERS if sys.modules.get(m) is not None]
nbformat.validate(nbformat.v4.new_notebook())
try:
    nbformat.validate(nbformat.from_dict({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code"}]}))
    rejected = False
except nbformat.ValidationError:
    rejected = True
import jsonpointer
print(json.dumps([hidden, loaded, rejected, package.without_format_checkers()]))
"""
    hidden, loaded, rejected, again = run(code)
    assert hidden and "rfc3986_validator" in hidden and loaded == [] and rejected and again == []
    plain = run("import json, sys; import assignments.grading.run.pipeline; "
                "from assignments.grading.upstream import package; "
                "print(json.dumps([m for m in package.FORMAT_CHECKERS if sys.modules.get(m) is not None]))")
    assert plain, "without it jsonschema imports its format checkers (else hiding them is pointless)"
    assert run("import json; from assignments.grading.upstream import package; "
               "print(json.dumps(package.without_format_checkers(stock=True)))") == []
