"""The reference's values on each worked example, line by line and inside its expressions:
what the students' check and the grader follow a wrong function against (student_checks.locate,
shipped/repair.py). Numbers, the reference's names and its dependencies: never code.

Every number is rounded to ``DIGITS`` significant digits (by Python's correctly rounded
decimal conversion): the last bits of a float depend on which BLAS, SIMD and libm kernels the
CPU selects, and check_data.json must come out byte-identical on any machine.
Rule (contract/): imports nothing of the engine but shipped/; strictly typed.
"""
from __future__ import annotations

import ast
import copy
import inspect
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import cases

if TYPE_CHECKING:
    from .assignment import Assignment

DIGITS = 8
"""Significant digits of every number check_data.json holds (the trace's: 7, in float32)."""
PROBE = "__probe__"
"""The name the probed copy of a function calls (student_checks.probed)."""


def stable(x: Any) -> Any:
    """``x`` (nested tuples, lists and dicts of arrays and numbers) with every float rounded
    to DIGITS significant digits."""
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return np.array([float(f"{v:.{DIGITS}g}") for v in x.ravel().tolist()], dtype=x.dtype).reshape(x.shape)
    if isinstance(x, float):
        return float(f"{x:.{DIGITS}g}")
    if isinstance(x, (tuple, list)):
        return type(x)(stable(v) for v in x)
    if isinstance(x, dict):
        return {k: stable(v) for k, v in x.items()}
    return x


class Parts(ast.NodeTransformer):
    """Reads back every sub-expression of what the reference assigns (``probed``'s
    ``parts``): a learner who splits an equation over two lines computes one of them."""

    owner = ""
    """The assignment's target, as text: the quantity its parts belong to."""

    def __init__(self) -> None:
        self.count = 0

    def visit(self, node: ast.AST) -> ast.AST:
        node = self.generic_visit(node)
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call, ast.Subscript)) \
                or (isinstance(node, ast.Attribute) and node.attr == "T"):
            self.count += 1
            probe = ast.Call(ast.Name(PROBE, ast.Load()),
                             [ast.Constant(node.lineno), ast.Constant(f"{self.owner}#{self.count}"), node], [])
            return ast.copy_location(probe, node)
        return node


def base(label: str) -> str:
    """The quantity a probe's label is of: dc#3 -> dc, a[:, :, t] -> a, grads['dWf'] -> dWf."""
    label = label.split("#")[0]
    keyed = re.fullmatch(r"\w+\[(['\"])(\w+)\1\]", label)
    if keyed:
        return keyed.group(2)
    word = re.match(r"\w*", label)
    return word.group(0) if word else ""


def quantity(label: str, outputs: Sequence[str]) -> str:
    """The quantity a probe's value is of: ``base``, except that an item of a dict the function
    does not return by that key (a cell's gradients at one step) belongs to the dict."""
    name = base(label)
    keyed = re.fullmatch(r"(\w+)\[(['\"])(\w+)\2\]", label.split("#")[0])
    return keyed.group(1) if keyed and name not in outputs else name


def _item(line: int, label: str) -> dict[str, str]:
    """For an item of a dict the reference holds (a cell's gradients): its key, and which dict
    (the same for its siblings), so that a learner's dict can be put right all at once."""
    keyed = re.fullmatch(r"(\w+)\[(['\"])(\w+)\2\]", label)
    return {"dict": f"{line}:{keyed.group(1)}", "key": keyed.group(3)} if keyed else {}


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def dependencies(assignment: Assignment, name: str) -> tuple[dict[str, list[str]], list[str], dict[str, list[str]]]:
    """For each output of the reference ``name`` (and each field of a cache it returns): the
    quantities (the names it assigns) it is computed from; the quantities in order; and for
    each, the quantities it is computed from."""
    fn = getattr(assignment.reference, name)
    tree = ast.parse(inspect.getsource(fn)).body[0]
    direct: dict[str, set[str]] = {}
    order: list[str] = []
    for stmt in ast.walk(tree):
        if isinstance(stmt, (ast.Assign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                for target in assignment.checks._probe_targets(t):
                    q = base(ast.unparse(target))
                    reads = _names(stmt.value) | ({q} if not isinstance(t, ast.Name) or isinstance(stmt, ast.AugAssign)
                                                  else set())
                    direct.setdefault(q, set()).update(reads)
                    if q not in order:
                        order.append(q)
    closure: dict[str, set[str]] = {}
    for q in direct:
        seen: set[str] = set()
        todo = [q]
        while todo:
            n = todo.pop()
            if n in seen or n not in direct:
                continue
            seen.add(n)
            todo += direct[n]
        closure[q] = seen
    ret = next(s for s in ast.walk(tree) if isinstance(s, ast.Return)).value
    ex = assignment.by_name[name]
    parts: dict[str, ast.expr] = dict(zip(ex.outputs, ret.elts)) if isinstance(ret, ast.Tuple) else {}
    if isinstance(ret, ast.Dict):
        spread = [v for k, v in zip(ret.keys, ret.values) if k is None]   # **grads: every other output
        parts = {str(ast.literal_eval(k)): v for k, v in zip(ret.keys, ret.values) if k is not None}
        parts.update({o: spread[0] for o in ex.outputs if o not in parts and spread})
    depends: dict[str, list[str]] = {}
    for output, node in parts.items():
        depends[output] = sorted(set().union(*[closure.get(n, set()) for n in _names(node)]))
    for field in ex.cache if "cache" in ex.outputs else ():
        depends.setdefault(field, sorted(closure.get(field, set())))
    order = [q for q in order if (q in ex.equations or q in ex.outputs) and q not in ("cache", "caches")]
    return depends, order, {q: sorted(closure[q] - {q}) for q in order}


def trace(assignment: Assignment, name: str, args: Sequence[object]) -> dict[str, Any]:
    """The reference's values on ``args`` (the worked example), line by line and inside its
    expressions, each distinct value once: 7 digits in float32 (a value put in place of the
    learner's is judged with a tolerance of 1e-4), with the names and dependencies of
    ``dependencies``."""
    checks = assignment.checks
    fn = getattr(assignment.reference, name)
    space, probed_fn, _ = checks.probed_function(fn, parts=Parts())
    _, seen = checks.run_probed(space, probed_fn, lambda: copy.deepcopy(args), items=True)
    values: list[np.ndarray[Any, Any]] = []
    index: dict[tuple[tuple[int, ...], bytes], int] = {}
    entries: dict[tuple[int, str], list[int]] = {}
    for line, label, _k, value in seen:
        # 7 significant digits, then float32: the same bytes whatever the CPU's last bits
        v = np.array([float(f"{x:.7g}") for x in value.ravel().tolist()], dtype=np.float32).reshape(value.shape)
        key = (v.shape, v.tobytes())
        if key not in index:
            index[key] = len(values)
            values.append(v)
        ids = entries.setdefault((line, label), [])
        if not ids or ids[-1] != index[key]:   # a dict's item read back after its siblings' updates: once per change
            ids.append(index[key])
    for (line, label), ids in entries.items():   # an accumulator's zeros, before its first update
        while len(ids) > 1 and not values[ids[0]].any() and "[" in label:
            ids.pop(0)
    depends, order, inputs_of = dependencies(assignment, name)
    return {"values": [checks.encode(v) for v in values],
            "entries": [{"name": quantity(label, assignment.by_name[name].outputs), "part": "#" in label,
                         "item": "[" in label.split("#")[0], "values": ids, **_item(line, label)}
                        for (line, label), ids in entries.items()],
            "depends": depends, "order": order, "inputs_of": inputs_of}


def public_cases(a: Assignment, name: str) -> list[tuple[str, Any, Any]]:
    """The public cases of ``name`` as [(label, inputs, the reference's outputs)], rounded."""
    public = [(label, stable(cases.inputs(a, r))) for label, r in a.public_cases(name)]
    return [(label, args, stable(a.expected(name, args))) for label, args in public]


def examined(a: Assignment, name: str) -> dict[str, Any]:
    """What the grader sends a wrong function's kernel (shipped/repair.py's ``examine``):
    the function's spec (with the assignment's activations, which a repair may put on or take
    off), the reference's trace on the worked example and the public cases,
    all of it what the students' check already ships (no hidden case, no code)."""
    public = public_cases(a, name)
    return {"spec": dict(a.spec(name), activations=list(a.activations)), "trace": trace(a, name, public[0][1]),
            "public": [{"label": label, "inputs": a.checks.encode(args), "expected": a.checks.encode(ref)}
                       for label, args, ref in public]}
