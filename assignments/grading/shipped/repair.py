"""A small edit of a learner's own function that makes it right: searched inside the learner's
kernel, because every candidate is the learner's code.

``examine`` follows the wrong function on the public cases (``locate_in``), then tries single
edits of its statements, the located one first: a name swapped for another of the function's
names, an operand dropped or swapped, an operator changed, an activation added or taken off,
a transpose, an axis, a time index, ``=`` and ``+=``. A candidate that gives the expected
outputs on every public case is sent back as source text; the grader runs it on the hidden
cases and compares there, so no expected value of a hidden case enters the kernel. Words and
numbers only come back: the grader decides.
Rule (shipped/): the standard library and numpy only; it leaves the grading process as text.
"""
import ast
import contextlib
import copy
import inspect
import io
import textwrap
import time

import numpy as np

try:   # in the kernel there is no package: the check module's names are already defined
    from .student_checks import compare, decode, locate_in
except ImportError:
    pass

REPAIR_SECONDS = 1.5     # the search's wall time, per function
REPAIR_TRIES = 1500      # candidates run, at most, per function
REPAIRS_KEPT = 3         # candidates sent back for the grader to verify
ACTIVATIONS = ("tanh", "sigmoid", "exp")


def examine(spec, trace, public, fn):
    """What the grader asks of a wrong function: {"found": locate_in's finding or None,
    "repairs": [{"line" (in the learner's cell), "before", "after", "source"}]} (the
    function's source with one statement edited, passing every public case), the first found first."""
    found = None
    try:
        found = locate_in(spec, trace, public[0], fn)
    except Exception:   # code shaped in a way the probes did not foresee
        found = None
    repairs = []
    try:
        repairs = mend(spec, public, fn, found)
    except Exception:
        repairs = []
    return {"found": found, "repairs": repairs}


def _statements(fdef):
    return [s for s in ast.walk(fdef) if isinstance(s, (ast.Assign, ast.AugAssign)) or
            (isinstance(s, ast.Return) and s.value is not None)]


def _names(fdef):
    """The names the function can read: its arguments and what it assigns, in order."""
    names = [a.arg for a in fdef.args.args]
    for node in ast.walk(fdef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in names:
            names.append(node.id)
    return names


def mend(spec, public, fn, found=None, seconds=REPAIR_SECONDS, tries=REPAIR_TRIES):
    """Single-statement edits of ``fn`` that pass every public case, the located line's first."""
    source = textwrap.dedent(inspect.getsource(fn))
    lines = source.splitlines()
    tree = ast.parse(source)
    fdef = next(d for d in tree.body if isinstance(d, ast.FunctionDef) and d.name == fn.__name__)
    names = _names(fdef)
    helpers = [h for h in ACTIVATIONS if h in getattr(fn, "__globals__", {})]
    located = found.get("lineno") if found else None
    statements = sorted(_statements(fdef), key=lambda s: (s.lineno != located, s.lineno))
    cases = [(decode(c["inputs"]), decode(c["expected"])) for c in public]
    deadline = time.monotonic() + seconds
    kept, seen, count = [], set(), 0
    for stmt in statements:
        indent = lines[stmt.lineno - 1][:len(lines[stmt.lineno - 1]) - len(lines[stmt.lineno - 1].lstrip())]
        before = "\n".join(lines[stmt.lineno - 1:stmt.end_lineno])
        for edited in edits(stmt, names, helpers):
            if count >= tries or time.monotonic() > deadline:
                return kept
            after = indent + ast.unparse(edited)
            if after in seen or after.strip() == before.strip():
                continue
            seen.add(after)
            count += 1
            candidate = "\n".join(lines[:stmt.lineno - 1] + [after] + lines[stmt.end_lineno:]) + "\n"
            if _passes(spec, candidate, fn, cases):
                kept.append({"line": fn.__code__.co_firstlineno + stmt.lineno - 1, "before": before.strip(),
                             "after": after.strip(),
                             "source": candidate})
                if len(kept) >= REPAIRS_KEPT:
                    return kept
        if kept:   # the first statement that can be mended is the one to mend
            return kept
    return kept


def _passes(spec, candidate, fn, cases):
    space = dict(getattr(fn, "__globals__", {}))
    try:
        exec(compile(candidate, f"<repair of {fn.__name__}>", "exec"), space)
        new = space[fn.__name__]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                np.errstate(all="ignore"):
            for inputs, expected in cases:
                if compare(spec, new(*copy.deepcopy(inputs)), expected, show_values=False)[1]:
                    return False
    except Exception:
        return False
    return True


def _name(text):
    return ast.Name(id=text, ctx=ast.Load())


def _call(func, arg):
    return ast.Call(func=ast.parse(func, mode="eval").body, args=[arg], keywords=[])


def _replacements(node, names, helpers):
    """Each node that may stand in place of ``node``: one small edit."""
    out = []
    if isinstance(node, ast.Name) and node.id not in ("np",):
        out += [_name(n) for n in names if n != node.id]
        out += [_call("np.tanh" if h == "tanh" else "np.exp" if h == "exp" else h, node) for h in ("tanh",) + tuple(helpers)
                if h != "exp"]
        out += [ast.BinOp(ast.Constant(1), ast.Sub(), node), ast.Attribute(node, "T", ast.Load()),
                ast.BinOp(node, ast.Pow(), ast.Constant(2))]
    if isinstance(node, ast.BinOp):
        out += [node.left, node.right, ast.BinOp(node.right, node.op, node.left)]
        for op in (ast.Add(), ast.Sub(), ast.Mult(), ast.MatMult()):
            if type(op) is not type(node.op):
                out.append(ast.BinOp(node.left, op, node.right))
        out.append(_call("np.tanh", node))
    if isinstance(node, ast.Call):
        func = ast.unparse(node.func)
        if func.split(".")[-1] in ACTIVATIONS and len(node.args) == 1:
            out.append(node.args[0])
            out += [_call(f, node.args[0]) for f in ("np.tanh", "sigmoid" if "sigmoid" in helpers else "np.tanh")
                    if f != func]
        for k in node.keywords:
            if k.arg == "axis" and isinstance(k.value, ast.Constant) and k.value.value in (0, 1):
                flipped = copy.deepcopy(node)
                next(w for w in flipped.keywords if w.arg == "axis").value = ast.Constant(1 - k.value.value)
                out.append(flipped)
        if func.split(".")[-1] == "sum":
            keep = copy.deepcopy(node)
            keep.keywords = [k for k in keep.keywords if k.arg != "keepdims"]
            if len(keep.keywords) == len(node.keywords):
                keep.keywords.append(ast.keyword("keepdims", ast.Constant(True)))
            out.append(keep)
    if isinstance(node, ast.Attribute) and node.attr == "T":
        out.append(node.value)
    if isinstance(node, ast.Subscript):
        out.append(node.value)
        for i, part in enumerate(node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]):
            for new in _index_edits(part, names):
                s = copy.deepcopy(node)
                if isinstance(s.slice, ast.Tuple):
                    s.slice.elts[i] = new
                else:
                    s.slice = new
                out.append(s)
    return out


def _index_edits(part, names):
    """t -> t - 1, t + 1; t - 1 -> t; :n -> n:; n: -> :n."""
    out = []
    if isinstance(part, ast.Name):
        out += [ast.BinOp(part, ast.Sub(), ast.Constant(1)), ast.BinOp(part, ast.Add(), ast.Constant(1))]
    if isinstance(part, ast.BinOp) and isinstance(part.right, ast.Constant):
        out.append(part.left)
    if isinstance(part, ast.Slice) and (part.lower is None) != (part.upper is None):
        out.append(ast.Slice(lower=part.upper, upper=part.lower))
    return out


def edits(stmt, names, helpers=()):
    """Copies of ``stmt`` with one small edit each: a node of its value replaced
    (``_replacements``), a term added to it, or ``=`` and ``+=`` exchanged."""
    value = stmt.value
    nodes = list(ast.walk(value))
    for index in range(len(nodes)):
        for new in _replacements(nodes[index], names, helpers):
            yield _with(stmt, index, new)
    made = []
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        made.append(ast.AugAssign(target=copy.deepcopy(stmt.targets[0]), op=ast.Add(), value=copy.deepcopy(value)))
        made += [ast.Assign(targets=copy.deepcopy(stmt.targets), value=ast.BinOp(_name(n), ast.Add(), copy.deepcopy(value)))
                 for n in names]   # a term left out
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
        made.append(ast.Assign(targets=[copy.deepcopy(stmt.target)], value=copy.deepcopy(value)))
    for new in made:
        yield ast.fix_missing_locations(ast.copy_location(new, stmt))


def _with(stmt, index, new):
    """A copy of ``stmt`` whose value's ``index``-th node (in ast.walk order) is ``new``."""
    out = copy.deepcopy(stmt)
    nodes = list(ast.walk(out.value))
    if index == 0:
        out.value = copy.deepcopy(new)
        return ast.fix_missing_locations(out)
    target = nodes[index]
    for parent in nodes:
        for field, old in ast.iter_fields(parent):
            if old is target:
                setattr(parent, field, copy.deepcopy(new))
                return ast.fix_missing_locations(out)
            if isinstance(old, list) and any(o is target for o in old):
                old[[i for i, o in enumerate(old) if o is target][0]] = copy.deepcopy(new)
                return ast.fix_missing_locations(out)
    return out
