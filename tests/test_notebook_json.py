"""notebook_json.writes_json (grading/upstream/notebook_json.py) against nbformat's own writer:
the same text for every notebook of the repository, for values of every kind a notebook can
hold, and for those it hands back to nbformat; the notebook itself left as it was."""
import copy
import glob
import math
import os
import random

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

from assignments.grading.upstream import notebook_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def same(nb, monkeypatch=None):
    """Our text is nbformat's, and the notebook is left as it was; with ``monkeypatch``, it is
    written without nbformat's writer (which then raises)."""
    before, theirs = copy.deepcopy(nb), nbformat.v4.writes_json(nb)
    if monkeypatch is not None:
        monkeypatch.setattr(nbformat.v4, "writes_json", lambda nb: pytest.fail("left to nbformat"))
    ours = notebook_json.writes_json(nb)
    if monkeypatch is not None:
        monkeypatch.undo()
    assert nb == before   # nothing of the notebook changed
    assert ours == theirs
    return ours


def repository_notebooks():
    """Every notebook under the repository that nbformat reads (the release, the learners'
    corpora, the classes graded so far); the hostile corpus's files that are no notebook are
    left out."""
    found = []
    for path in glob.glob(os.path.join(ROOT, "**", "*.ipynb"), recursive=True):
        if "/.venv/" in path or "/node_modules/" in path:
            continue
        try:
            found.append(nbformat.read(path, as_version=4))
        except Exception:   # not JSON, not a notebook, not valid: nothing nbformat would write
            continue
    assert len(found) >= 5, len(found)
    return found


def test_every_notebook_of_the_repository_written_as_nbformat_writes_it(monkeypatch):
    for nb in repository_notebooks():
        same(nb, monkeypatch)


def values(rng, depth=0):
    """A value of any kind JSON has, nested, and of the kinds nbformat hands json that json
    writes its own way (floats that are not finite, ints past 64 bits, unicode, escapes)."""
    leaves = [None, True, False, 0, -7, 2**70, 1.5, -0.0, 1e300, 5e-324, math.inf, -math.inf, math.nan,
              "", "plain", "tab\tquote\"back\\slash\nnew", "日本語 ünïcödé \u2028 \x00 \ud83d", "line\r\n"]
    if depth > 3 or rng.random() < 0.4:
        return rng.choice(leaves)
    if rng.random() < 0.5:
        return [values(rng, depth + 1) for _ in range(rng.randrange(0, 5))] + \
            ([rng.choice(["a\n", "b"]) for _ in range(3)] if rng.random() < 0.3 else [])
    return {rng.choice(["z", "a", "B", "é", "a b", "_", "10", "9"]) + str(i): values(rng, depth + 1)
            for i in range(rng.randrange(0, 5))}


def test_values_of_every_kind_in_every_place_a_notebook_holds_them(monkeypatch):
    rng = random.Random(7)
    for _ in range(200):
        nb = new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
        nb.metadata.update(extra=values(rng), orig_nbformat=3, signature="sha256:x")
        code = new_code_cell("x = 1\nprint(x)\n", metadata={"trusted": True, "tags": ["a"], "k": values(rng)},
                             execution_count=rng.choice([None, 3]))
        code.outputs = [new_output("stream", name="stdout", text="1\n2\n"),
                        new_output("execute_result", data={"text/plain": "3\n4", "image/svg+xml": "<svg>\n</svg>",
                                                           "application/json": {"a": values(rng)},
                                                           "application/javascript": "f()\ng()"},
                                   execution_count=3, metadata={"v": values(rng)} if rng.random() < 0.5 else {}),
                        new_output("display_data", data={"text/html": ["<b>", "x</b>"]}),
                        new_output("error", ename="E", evalue="v", traceback=["a", "b\nc"])]
        markdown = new_markdown_cell("# T\n\nsome *text*\n", attachments={"a.png": {"image/png": "iVBOR\nw0K"}})
        cells = [code, markdown, new_raw_cell("raw\n"), new_code_cell("")]
        rng.shuffle(cells)
        nb.cells = cells
        same(nb, monkeypatch)


@pytest.mark.parametrize("unusual", [
    b"bytes",                       # nbformat's BytesEncoder writes them as text
    {1: "a key that is not a string"},
    (1, 2),                         # a tuple: written as a list
    float.__new__(type("F", (float,), {}), 2.5),   # a float subclass
])
def test_what_it_leaves_to_nbformat_comes_out_as_nbformat_writes_it(unusual):
    nb = new_notebook(cells=[new_code_cell("x")], metadata={"odd": unusual})
    assert same(nb)


def test_a_notebook_nbformat_refuses_is_refused_the_same_way():
    nb = new_notebook(cells=[new_code_cell("x")])
    nb.metadata["self"] = nb.metadata          # a cycle
    with pytest.raises(ValueError, match="Circular"):
        nbformat.v4.writes_json(nb)
    with pytest.raises(ValueError, match="Circular"):
        notebook_json.writes_json(nb)
    broken = nbformat.from_dict({"cells": [{"source": "no cell_type", "metadata": {}}], "metadata": {},
                                 "nbformat": 4, "nbformat_minor": 5})
    with pytest.raises(AttributeError):
        nbformat.v4.writes_json(broken)
    with pytest.raises(AttributeError):
        notebook_json.writes_json(broken)
