"""The similarity corpus, and planted copies of it at four levels (used by
tests/test_similarity.py and benchmarks/similarity.py).

Independent solutions live in tests/fixtures/similarity/independent/, solutions "collected from
the web" in .../known/. A planted copy takes one solution's cells and changes them the way a
copier would: not at all (verbatim), its comments rewritten (comments), its layout changed
with the same tokens (reformatted), or its variables renamed through the ast module and the
code printed anew (renamed; this also drops the comments and the layout). Everything is
seeded, so every run plants the same copies.
"""
import ast
import copy
import hashlib
import inspect
import io
import json
import os
import random
import tokenize

import numpy as np

from assignments.grading.reports.similarity import split_functions
from assignments.rnn_step_by_step import ASSIGNMENT as A
from assignments.rnn_step_by_step import reference as R

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "fixtures", "similarity")
REPO = os.path.dirname(HERE)
FUNCTIONS = tuple(e.name for e in A.exercises)
LEVELS = ("verbatim", "comments", "reformatted", "renamed")


def _read_folder(folder):
    out = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name)) as fh:
                out[name[:-3]] = split_functions(fh.read(), FUNCTIONS)
    return out


def independent():
    """{learner: {function: cell source}} of the independent solutions."""
    return _read_folder(os.path.join(CORPUS, "independent"))


def known():
    """{file: {function: source}} of the known (web) solutions."""
    return _read_folder(os.path.join(CORPUS, "known"))


def release_code():
    """{function: the release's code cell} (def line, docstring, hints, stub)."""
    path = os.path.join(REPO, "release", A.id, A.notebook + ".ipynb")
    with open(path) as fh:
        nb = json.load(fh)
    cells = {}
    for cell in nb["cells"]:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in FUNCTIONS and cell["cell_type"] == "code":
            cells[gid] = "".join(cell["source"])
    return {f: cells[f] for f in FUNCTIONS}


def reference_code():
    return {"reference": inspect.getsource(R)}


def with_docstrings(cells, release):
    """Each cell as a notebook holds it: the release's docstring under the def line when the
    learner's code has none (learners type below it)."""
    out = {}
    for fn, src in cells.items():
        doc = _docstring(release[fn])
        lines = src.splitlines(keepends=True)
        at = next((i for i, line in enumerate(lines) if line.startswith(f"def {fn}(")), None)
        if at is None or (at + 1 < len(lines) and lines[at + 1].strip().startswith(('"""', "'''"))):
            out[fn] = src
            continue
        out[fn] = "".join(lines[:at + 1]) + doc + "".join(lines[at + 1:])
    return out


def _docstring(release_cell):
    lines = release_cell.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip().startswith('"""'))
    end = next(i for i in range(start, len(lines)) if lines[i].rstrip().endswith('"""') and (i > start or lines[i].count('"""') == 2))
    return "".join(lines[start:end + 1])


# --- planting ------------------------------------------------------------------------------

_PHRASES = ("work out the new state", "keep what the backward pass needs", "sizes first", "loop over the time steps",
            "walk back in time", "add up this step", "gradient through the activation", "stack the inputs",
            "the four gates", "store the results", "zeros to start with", "carry the gradient to the step before",
            "bias gradient: sum over the examples", "prediction for this step", "unpack what was saved",
            "chain rule through the product", "cell state update", "read the weights", "done", "step output")


def plant(cells, level, rng):
    """A copy of one solution's cells at ``level``."""
    if level == "verbatim":
        return dict(cells)
    if level == "comments":
        return {fn: _recomment(src, rng) for fn, src in cells.items()}
    if level == "reformatted":
        style = {"indent": rng.choice([2, 3, 8]), "loose": rng.random() < 0.5,
                 "blank": rng.choice([0.0, 0.25]), "wrap": rng.choice([60, 80, 200])}
        return {fn: _reformat(src, style, rng) for fn, src in cells.items()}
    if level == "renamed":
        return _rename(cells, rng)
    raise ValueError(level)


def _comment_positions(src):
    found = {}
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            found[tok.start[0] - 1] = tok.start[1]
    return found


def _recomment(src, rng):
    """Every comment rewritten or dropped, and a few new ones written in."""
    at = _comment_positions(src)
    out = []
    for i, line in enumerate(src.splitlines()):
        if i in at:
            code = line[:at[i]].rstrip()
            if rng.random() < 0.4:
                if code.strip():
                    out.append(code)
                continue
            text = "# " + rng.choice(_PHRASES)
            out.append(f"{code}  {text}" if code.strip() else " " * at[i] + text)
            continue
        if line.strip() and line.startswith("    ") and not line.strip().startswith(('"""', "def ")) and rng.random() < 0.12:
            indent = len(line) - len(line.lstrip())
            out.append(" " * indent + "# " + rng.choice(_PHRASES))
        out.append(line)
    return "\n".join(out) + "\n"


_TIGHT = {"(", "[", "{", ".", "~"}
_NO_SPACE_BEFORE = {")", "]", "}", ",", ":", ".", ";"}


def _reformat(src, style, rng):
    """The same tokens laid out anew: indentation, spaces, blank lines, line breaks."""
    toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    lines, line, depth, level, prev = [], "", 0, 0, None
    unit = " " * style["indent"]
    for tok in toks:
        kind, text = tok.type, tok.string
        if kind == tokenize.INDENT:
            level += 1
            continue
        if kind == tokenize.DEDENT:
            level -= 1
            continue
        if kind in (tokenize.NEWLINE, tokenize.NL):
            if depth == 0 and line.strip():
                lines.append(line.rstrip())
                if level and style["blank"] and rng.random() < style["blank"]:
                    lines.append("")
                line, prev = "", None
            elif depth == 0 and not line.strip() and level == 0 and lines and lines[-1] != "":
                lines.append("")
            continue
        if kind == tokenize.COMMENT:
            if line.strip():
                line += "  " + text
                if depth:
                    lines.append(line)
                    line = unit * (level + 2)
            else:
                lines.append(unit * level + text)
            continue
        if kind == tokenize.ENDMARKER:
            break
        if not line:
            line = unit * level
        line += _gap(prev, tok, style) + text
        depth += text in "([{" and kind == tokenize.OP
        depth -= text in ")]}" and kind == tokenize.OP
        prev = tok
        if depth and text == "," and len(line) > style["wrap"]:
            lines.append(line)
            line, prev = unit * (level + 2), None
    new = "\n".join(lines).rstrip() + "\n"
    assert ast.dump(ast.parse(new)) == ast.dump(ast.parse(src)), "reformatting changed the program"
    return new


def _gap(prev, tok, style):
    if prev is None:
        return ""
    a, b = prev.string, tok.string
    word = lambda t: t.type in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING)
    if word(prev) and word(tok):
        return " "
    if b in _NO_SPACE_BEFORE or a in _TIGHT or b in ("(", "[") and (word(prev) or a in ")]"):
        return ""
    if a == "," or a == ":" and b not in ("]", ","):
        return " " if style["loose"] or a == "," else ""
    if prev.type == tokenize.OP or tok.type == tokenize.OP:
        return " " if style["loose"] else ""
    return " "


_WORDS = ("h", "state", "mem", "grad", "acc", "tmp", "val", "out", "buf", "step", "cur", "nxt", "res", "w", "v", "q")


def _rename(cells, rng):
    """Local names and helpers renamed consistently across the cells; the code printed by
    ast.unparse (which also drops comments and changes the layout)."""
    trees = {fn: ast.parse(src) for fn, src in cells.items()}
    keep = set(FUNCTIONS) | {"np", "sigmoid", "softmax", "self"}
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in FUNCTIONS:
                keep |= {a.arg for a in node.args.args}
    local = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local.add(node.id)
            elif isinstance(node, ast.arg):
                local.add(node.arg)
            elif isinstance(node, ast.FunctionDef):
                local.add(node.name)
    names = sorted(local - keep)
    fresh = rng.sample([f"{w}{i}" for w in _WORDS for i in range(1, 40)], len(names))
    mapping = dict(zip(names, fresh))

    class Renamer(ast.NodeTransformer):
        def visit_Name(self, node):
            node.id = mapping.get(node.id, node.id)
            return node

        def visit_arg(self, node):
            node.arg = mapping.get(node.arg, node.arg)
            return node

        def visit_FunctionDef(self, node):
            node.name = mapping.get(node.name, node.name)
            self.generic_visit(node)
            return node

    return {fn: ast.unparse(Renamer().visit(copy.deepcopy(tree))) + "\n" for fn, tree in trees.items()}


# --- behaviour -----------------------------------------------------------------------------

def _utils():
    return {"np": np, "sigmoid": R.sigmoid, "softmax": R.softmax}


def _inputs(fn):
    return [args for _, args, _ in A.hidden_cases(fn)[:2]]


def _signature(outputs):
    h = hashlib.sha256()
    for out in outputs:
        h.update(_flat(out).encode())
    return h.hexdigest()[:16]


def _flat(x):
    if isinstance(x, dict):
        return "{" + ",".join(f"{k}:{_flat(x[k])}" for k in sorted(x)) + "}"
    if isinstance(x, (tuple, list)):
        return "(" + ",".join(_flat(v) for v in x) + ")"
    if isinstance(x, np.ndarray):
        return f"{x.shape}:" + ",".join(f"{v:.6f}" for v in np.asarray(x, dtype=float).ravel())
    return type(x).__name__


def _run(fn, func):
    outs = []
    for args in _inputs(fn):
        try:
            outs.append(func(*copy.deepcopy(args)))
        except Exception as e:  # a wrong function may raise: that is its behaviour
            outs.append(type(e).__name__)
    return outs


def signatures(cells):
    """{function: signature} of the functions that are wrong on the hidden cases, each judged on
    its own (the functions it calls are the reference's)."""
    out = {}
    for fn in cells:
        ns = _utils()
        try:
            for src in cells.values():
                exec(compile(src, "<cell>", "exec"), ns)
        except Exception:
            continue
        for other in FUNCTIONS:
            if other != fn:
                ns[other] = getattr(R, other)
        got, want = _run(fn, ns[fn]), _run(fn, getattr(R, fn))
        if _flat(got) != _flat(want):
            out[fn] = _signature(got)
    return out


def catalogued_signatures():
    """The signatures the catalogue's mutants produce."""
    found = set()
    catalog = A.mistakes
    for fn in FUNCTIONS:
        for code, i in catalog.variants(fn):
            found.add(_signature(_run(fn, catalog.mutant(fn, ((code, i),)))))
    return found


# --- classes with planted copies -----------------------------------------------------------

def planted_classes(seed=33, per_class=8):
    """Classes made of every independent solution plus a few planted copies each (copies of
    originals and of known solutions), so that every original is copied once at every level.
    Yields (submissions, planted) with planted = [(level, copy, original or "known:FILE")]."""
    rng = random.Random(seed)
    originals, web = independent(), known()
    jobs = [(level, name) for level in LEVELS for name in originals]
    jobs += [(level, KNOWN_PREFIX + name) for level in LEVELS for name in web]
    rng.shuffle(jobs)
    while jobs:
        batch, seen, rest = [], set(), []
        for job in jobs:
            if len(batch) < per_class and job[1] not in seen:
                batch.append(job)
                seen.add(job[1])
            else:
                rest.append(job)
        jobs = rest
        submissions, planted = dict(originals), []
        for k, (level, source) in enumerate(batch):
            cells = web[source[len(KNOWN_PREFIX):]] if source.startswith(KNOWN_PREFIX) else originals[source]
            name = f"zz_{level}_{k}"
            submissions[name] = plant(cells, level, rng)
            planted.append((level, name, source))
        yield submissions, planted


KNOWN_PREFIX = "known:"
