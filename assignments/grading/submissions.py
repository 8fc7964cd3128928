"""Make submissions the way a learner does: fill the release notebook's answer cells."""
import ast

import nbformat


def functions_in(source):
    """{name: source of the def} for each top-level function in a Python source text."""
    tree = ast.parse(source)
    lines = source.splitlines()
    return {node.name: "\n".join(lines[node.lineno - 1 - len(node.decorator_list):node.end_lineno])
            for node in tree.body if isinstance(node, ast.FunctionDef)}


def fill(release_notebook, answers):
    """A copy of the release notebook whose answer cells (grade_id = function name) hold
    ``answers[name]``; cells without an answer keep their stub."""
    nb = nbformat.read(release_notebook, as_version=4) if isinstance(release_notebook, str) \
        else nbformat.from_dict(release_notebook)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id") in answers:
            cell.source = answers[meta["grade_id"]]
    return nb
