"""The generated parts of an assignment's source notebook, refreshed by ``python -m assignments release``.

Three kinds of cell are written from the package, never by hand:
- the solution region of each answer cell: the body of the reference function;
- each worked example: code that draws the example's inputs from its recipe;
- each "expected output" block: what that example prints when run with the reference.
So the notebook cannot disagree with the reference, and a test re-checks it. Examples print
values rounded to 8 decimals (as the published values are): the last digits of a float
depend on the CPU's BLAS and SIMD kernels, and a learner comparing digits by eye must see the
same ones on any machine, as must the release build.
Rule (authoring/): runs in the course staff's process, never on a learner's code.
"""
import contextlib
import inspect
import io
import re

import numpy as np

from ..contract.messages import N_

EXAMPLE_MARK = "# Worked example for {name} (generated from the course's recipe; do not edit)"
EXPECTED_MARK = "<!-- expected output of {name}: generated when the release is built -->"
EXPECTED_HEADER = N_("**Expected output** (computed by the course's reference solution; the check below compares for you):")
SOLUTION = re.compile(r"(### BEGIN SOLUTION\n)(.*?)(\n\s*### END SOLUTION)", re.S)


def solution_body(assignment, name):
    lines = inspect.getsource(getattr(assignment.reference, name)).splitlines()
    return "\n".join(lines[1:])


def example_source(assignment, name):
    recipe = assignment.example(name)
    ex = assignment.by_name[name]
    lines = [EXAMPLE_MARK.format(name=name), f"np.random.seed({recipe.seed})"]
    params = ex.parameters
    fwd_args = assignment.by_name[ex.forward].args if ex.forward else ex.args
    if "parameters" in fwd_args:
        lines.append("parameters_tmp = {}")
    for n, shape in recipe.draws:
        target = f'parameters_tmp["{n}"]' if n in params else f"{n}_tmp"
        lines.append(f"{target} = np.random.randn{shape}")
    for n, shape in recipe.zeros:
        lines.append(f'parameters_tmp["{n}"] = np.zeros({shape})')
    call_args = lambda names: ", ".join(f"{a}_tmp" for a in names)  # noqa: E731
    if ex.forward:
        fwd = assignment.by_name[ex.forward]
        lines.append(f"# the cache comes from your {ex.forward}; the check below uses a correct one")
        lines.append(f"{', '.join(o + '_tmp' for o in fwd.outputs)} = {ex.forward}({call_args(fwd.args)})")
    results = f"{ex.name}({call_args(ex.args)})"
    if ex.returns_dict:
        lines.append(f"gradients_tmp = {results}")
    else:
        lines.append(f"{', '.join(o + '_tmp' for o in ex.outputs)} = {results}")
    for key in recipe.shows:
        out, index = re.match(r"(\w+)(.*)", key).groups()
        value = f'gradients_tmp["{out}"]{index}' if ex.returns_dict else f"{out}_tmp{index}"
        lines.append(f'print("{key} =", np.round({value}, 8))')
    for out in ex.outputs[:3] if not ex.returns_dict else ex.outputs[:2]:
        if out.startswith("cache"):
            continue
        value = f'gradients_tmp["{out}"]' if ex.returns_dict else f"{out}_tmp"
        lines.append(f'print("{out}.shape =", {value}.shape)')
    return "\n".join(lines)


def run_example(source, functions):
    """What a worked example's code prints when ``functions`` stand in for the learner's."""
    namespace = {"np": np, **functions}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(source, namespace)
    return out.getvalue()


def reference_functions(assignment):
    return {e.name: getattr(assignment.reference, e.name) for e in assignment.exercises}


def expected_markdown(assignment, name):
    printed = run_example(example_source(assignment, name), reference_functions(assignment)).rstrip("\n")
    return EXPECTED_MARK.format(name=name) + "\n" + EXPECTED_HEADER + "\n\n```\n" + printed + "\n```"


def refresh(assignment, nb):
    """Rewrite the generated parts of the source notebook in place; return it."""
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in assignment.by_name and SOLUTION.search(cell.source):
            body = solution_body(assignment, grade_id)
            cell.source = SOLUTION.sub(lambda m: m.group(1) + body + m.group(3), cell.source)
        for ex in assignment.exercises:
            if cell.source.startswith(EXAMPLE_MARK.format(name=ex.name)):
                cell.source = example_source(assignment, ex.name)
            elif cell.source.startswith(EXPECTED_MARK.format(name=ex.name)):
                cell.source = expected_markdown(assignment, ex.name)
    return nb
