"""A notebook's JSON text as nbformat writes it (``nbformat.v4.writes_json``), in less than half
the time: the autograded notebook of every submission is written this way.

nbformat deep-copies the notebook, splits its texts into lines on the copy, then writes it
with ``json.dumps(indent=1, sort_keys=True)``, which only the standard library's pure-Python
encoder writes, a Python call or two for every line of every cell (5 ms of a submission's
conversion). Here the split texts are laid over the notebook without copying it
(``split_view``), and the same text is written with a list of strings, most of a notebook,
in one call. Anything the writer does not know (a type other than JSON's own, a key that is
not a string, a cycle) goes to nbformat's own writer, which says what it says about it.
tests/test_notebook_json.py compares the two on every notebook of the repository and on
values of every kind.
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json).
"""
from json.encoder import INFINITY
from json.encoder import encode_basestring as _text  # C's, as json.dumps(ensure_ascii=False) uses

import nbformat
from nbformat.notebooknode import NotebookNode
from nbformat.v4.rwbase import _non_text_split_mimes as _SPLIT_MIMES  # besides text/*: written as lines

_TRANSIENT = ("orig_nbformat", "orig_nbformat_minor", "signature")   # strip_transient's metadata keys


class _Unusual(Exception):
    """A value this writer leaves to nbformat's."""


def writes_json(nb):
    """``nbformat.v4.writes_json(nb)``: the same text."""
    try:
        out: list[str] = []
        _write(split_view(nb), 0, out)
        return "".join(out)
    except (_Unusual, RecursionError, AttributeError, KeyError, TypeError):
        return nbformat.v4.writes_json(nb)


def _split_bundle(data):
    """nbformat's _split_mimebundle, on a copy of the bundle's dict."""
    return {key: value.splitlines(True) if isinstance(value, str) and (key.startswith("text/") or key in _SPLIT_MIMES)
            else value for key, value in data.items()}


def split_view(nb):
    """What nbformat's writer writes: the notebook after its ``split_lines`` and
    ``strip_transient``, made of new dicts where those change one and the notebook's own
    values elsewhere (nothing of ``nb`` is changed)."""
    cells = []
    for cell in nb.cells:
        cell = dict(cell)
        if isinstance(cell.get("source"), str):
            cell["source"] = cell["source"].splitlines(True)
        if "attachments" in cell:
            cell["attachments"] = {k: _split_bundle(v) for k, v in cell["attachments"].items()}
        if cell["cell_type"] == "code":
            outputs = []
            for output in cell["outputs"]:
                kind = output["output_type"]
                if kind in ("execute_result", "display_data") and "data" in output:
                    output = dict(output, data=_split_bundle(output["data"]))
                elif kind == "stream" and isinstance(output["text"], str):
                    output = dict(output, text=output["text"].splitlines(True))
                outputs.append(output)
            cell["outputs"] = outputs
        if "trusted" in cell["metadata"]:
            cell["metadata"] = {k: v for k, v in cell["metadata"].items() if k != "trusted"}
        cells.append(cell)
    view = dict(nb, cells=cells)
    view["metadata"] = {k: v for k, v in nb.metadata.items() if k not in _TRANSIENT}
    return view


def _float(value):
    """json's floatstr with allow_nan."""
    if value != value:
        return "NaN"
    if value == INFINITY:
        return "Infinity"
    if value == -INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def _write(value, level, out):
    """json.dumps(value, indent=1, sort_keys=True, separators=(",", ": "), ensure_ascii=False),
    appended to ``out`` at indentation ``level``, for JSON's own types (exactly them: any
    subclass but NotebookNode is _Unusual, as json might write it otherwise)."""
    kind = type(value)
    if kind is str:
        out.append(_text(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is float:
        out.append(_float(value))
    elif kind is list or kind is tuple:
        _write_list(value, level, out)
    elif kind is dict or kind is NotebookNode:
        _write_dict(value, level, out)
    else:
        raise _Unusual(kind)


def _write_list(items, level, out):
    if not items:
        out.append("[]")
        return
    inner, outer = "\n" + " " * (level + 1), "\n" + " " * level
    if all(type(item) is str for item in items):   # a text's lines: one call
        out.append("[" + inner + ("," + inner).join(map(_text, items)) + outer + "]")
        return
    out.append("[" + inner)
    for i, item in enumerate(items):
        if i:
            out.append("," + inner)
        _write(item, level + 1, out)
    out.append(outer + "]")


def _write_dict(mapping, level, out):
    if not mapping:
        out.append("{}")
        return
    keys = list(mapping)
    if not all(type(key) is str for key in keys):
        raise _Unusual("a key that is not a string")
    inner, outer = "\n" + " " * (level + 1), "\n" + " " * level
    out.append("{" + inner)
    for i, key in enumerate(sorted(keys)):
        if i:
            out.append("," + inner)
        out.append(_text(key) + ": ")
        _write(mapping[key], level + 1, out)
    out.append(outer + "}")
