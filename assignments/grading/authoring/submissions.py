"""Make submissions the way a learner does: fill the release notebook's answer cells.
Rule (authoring/): runs in the course staff's process, never on a learner's code."""
import ast

import nbformat


def answer_cells(source):
    """{function: answer cell} for each public top-level function of a Python file, as a
    learner would write it in that function's cell: the file's imports, constants and
    private helpers first, then the function."""
    tree = ast.parse(source)
    lines = source.splitlines()

    def text(node):
        return "\n".join(lines[node.lineno - 1:node.end_lineno])

    public = [n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
    shared = "\n".join(text(n) for n in tree.body if n not in public and not isinstance(n, ast.Expr))
    return {n.name: (shared + "\n\n\n" if shared else "") + text(n) for n in public}


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
