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
import inspect
import io
import textwrap
import time

import numpy as np

try:   # in the kernel there is no package: the check module's names are already defined
    from .student_checks import decode, differs, fresh_copy, locate_in
    from .written import unparse
except ImportError:
    pass

# The search is bounded by a count, so that the same submission gets the same repair on any
# machine (about 1 ms a candidate); the time is a guard for a function slow per call only, long
# enough that a busy machine does not reach it (a 4-second guard, wall or CPU, was reached in a
# loaded test run and changed a repair), and shorter than the job's call_timeout (30 s).
REPAIR_TRIES = 800       # candidates run, at most, per function: every repair of the slips' and the
# learners' corpora is found within 770 (docs/benchmarks.md), and two thirds of the learners' wrong
# functions have none, so each candidate past the last found is spent in vain
REPAIR_SECONDS = 20.0    # wall time, at most, per function (a function that takes long per call)
REPAIRS_KEPT = 3         # candidates sent back for the grader to verify, the smallest edits first
REPAIRS_FOUND = 8        # candidates passing the public cases compared, at most, for the smallest
NUMPY_ACTIVATIONS = ("np.tanh",)   # the assignment's own (the notebook's helpers) come with the job


def examine(spec, trace, public, fn, tries=REPAIR_TRIES, known=(), wrong=()):
    """What the grader asks of a wrong function: {"found": locate_in's finding or None,
    "repairs": [{"line" (in the learner's cell), "before", "after", "source"}]} (the
    function's source with one statement edited, passing every public case), the first found first;
    "tried": the candidates run (at most ``tries``), "cut": whether the search stopped at its bound;
    "key": a digest of all the search reads (``search_key``; None when it cannot be written down),
    "first": the function's first line in its cell, "source": its text. When "key" is one of
    ``known`` (searches the grader remembers), the search is not run: "remembered" is True.
    ``wrong``: the notebook's functions judged wrong. A function that reads one of them (a loop
    and its cell) has only its located statement edited: its candidates run the learner's wrong
    function, the grader's hidden cases the reference's, and a candidate can pass both only if
    the wrong part goes unused; such repairs are found at the located line."""
    found = None
    try:
        found = locate_in(spec, trace, public[0], fn)
    except Exception:   # code shaped in a way the probes did not foresee
        found = None
    said = {"found": found, "key": None, "first": getattr(getattr(fn, "__code__", None), "co_firstlineno", None),
            "source": None}
    try:
        said["source"] = textwrap.dedent(inspect.getsource(fn))
        said["key"] = search_key(spec, fn, found, tries, said["source"])
    except Exception:
        pass
    if said["key"] is not None and said["key"] in known:
        return {**said, "repairs": [], "tried": 0, "cut": False, "remembered": True}
    repairs, spent = [], {}
    try:
        calls_wrong = bool(set(wrong) & _code_names(fn.__code__))
        repairs = mend(spec, public, fn, found, tries=tries, spent=spent, repeatable=said["key"] is not None,
                       located_only=calls_wrong, source=said["source"])
    except Exception:
        repairs = []
    return {**said, "repairs": repairs, "tried": spent.get("tried", 0), "cut": spent.get("cut", False)}


UNREPEATABLE = frozenset(("random", "default_rng", "time", "perf_counter", "process_time", "monotonic", "urandom",
                          "now", "today", "utcnow", "uuid1", "uuid4", "token_bytes", "randbits",
                          "open", "input", "environ", "getpid", "id", "hash", "globals", "vars", "locals", "exec",
                          "eval", "getattr", "setattr", "__import__", "import_module", "stack", "currentframe"))
"""Names whose reading makes a function's behaviour depend on more than its code and the values
it reads (chance, the clock, files, the process, its own frames): no search key for it."""


class _Unkeyable(Exception):
    pass


def search_key(spec, fn, found, tries, source=None):
    """A digest of everything the repair search reads besides the assignment's cases: the
    function's source, what each global name its code reads (and the assignment's activations)
    holds, the location it starts from and its bound. Two kernels with the same key run the same
    search to the same end. None when the function reads a name of UNREPEATABLE or holds a value
    that cannot be written down whole (an object of its own class). ``source``: the function's
    dedented text, when the caller has read it."""
    import hashlib
    import json as _json
    where = {k: v for k, v in found.items() if k != "line"} if isinstance(found, dict) else found   # line: in the cell
    parts = [spec["name"], str(tries), _json.dumps(where, sort_keys=True, default=str),
             source if source is not None else textwrap.dedent(inspect.getsource(fn))]
    try:
        parts.append(_held(fn, set(spec.get("activations", ())), 0, set()))
    except (_Unkeyable, RecursionError):
        return None
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def _code_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _code_names(const)
    return names


def _code_text(code):
    """A code object's instructions, names and constants: not its file or lines, which differ
    between kernels (a cell's file name carries the kernel's pid)."""
    consts = [_code_text(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts]
    return repr((code.co_code, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars,
                 code.co_argcount, code.co_kwonlyargcount, code.co_flags, consts))


def _held(fn, extra, depth, seen):
    """What the global names ``fn`` reads (and ``extra``) hold, written down."""
    if depth > 4 or getattr(fn, "__closure__", None):
        raise _Unkeyable
    names = _code_names(fn.__code__)
    if names & UNREPEATABLE:
        raise _Unkeyable
    space = getattr(fn, "__globals__", {})
    out = [_code_text(fn.__code__), _written(getattr(fn, "__defaults__", None), depth, seen)]
    for name in sorted((names | extra) & set(space)):
        out.append(f"{name}={_written(space[name], depth, seen)}")
    return ";".join(out)


def _written(value, depth, seen):
    """``value`` written down whole, or _Unkeyable."""
    import sys
    import types
    kind = type(value)
    if value is None or kind in (bool, int, float, complex, str, bytes):
        return f"{kind.__name__}:{value!r}"
    if kind is np.ndarray:
        import hashlib
        if value.dtype.hasobject:
            raise _Unkeyable
        return f"array:{value.dtype.str}:{value.shape}:{hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()}"
    if kind in (tuple, list):
        return f"{kind.__name__}:[" + ",".join(_written(v, depth, seen) for v in value) + "]"
    if kind is dict:
        return "dict:{" + ",".join(f"{_written(k, depth, seen)}:{_written(v, depth, seen)}" for k, v in value.items()) + "}"
    if isinstance(value, types.ModuleType):
        if sys.modules.get(value.__name__) is not value:
            raise _Unkeyable
        return f"module:{value.__name__}"
    if kind is types.FunctionType and getattr(value, "__module__", None) in (None, "__main__"):
        if id(value) in seen:   # recursion: named, not followed again
            return f"function:{value.__name__}"
        return f"function:{value.__name__}:(" + _held(value, set(), depth + 1, seen | {id(value)}) + ")"
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and module in sys.modules:   # a library's own
        found = sys.modules[module]
        for part in qualname.split("."):
            found = getattr(found, part, None)
        if found is value:
            return f"object:{module}.{qualname}"
    raise _Unkeyable


def _statements(fdef):
    """The statements an edit may change: assignments, the return, and loops' ranges."""
    return [s for s in ast.walk(fdef) if isinstance(s, (ast.Assign, ast.AugAssign, ast.For)) or
            (isinstance(s, ast.Return) and s.value is not None)]


def _names(fdef):
    """The names the function can read: its arguments and what it assigns, in order."""
    names = [a.arg for a in fdef.args.args]
    for node in ast.walk(fdef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in names:
            names.append(node.id)
    return names


class Context:
    """What the edits of one function draw from: its names (the arrays among them by shape),
    its dicts' keys, the activations a candidate may put on or take off."""

    def __init__(self, names, shapes, helpers):
        self.names, self.shapes, self.helpers = names, shapes, helpers
        self.arrays = [n for n in names if n in shapes]
        self.scalars = [n for n in names if n not in shapes]
        self.keys = {}
        for text in shapes:
            if "[" in text:
                base, key = text.split("[", 1)
                self.keys.setdefault(base, []).append(key[:-1])

    def alike(self, name):
        """The names a learner may have written for ``name``: arrays of its shape, or, for a
        name that holds no array, the other such names."""
        if name in self.shapes:
            return [n for n in self.arrays if n != name and self.shapes[n] == self.shapes[name]]
        return [n for n in self.scalars if n != name]


def mend(spec, public, fn, found=None, seconds=REPAIR_SECONDS, tries=REPAIR_TRIES, spent=None, repeatable=False,
         located_only=False, source=None):
    """Single-statement edits of ``fn`` that pass every public case, the located line's first.
    ``spent`` (a dict), when given, is told how many candidates ran ("tried") and whether the
    search stopped at its bound of ``tries`` or ``seconds`` ("cut"). ``repeatable``: ``fn``
    does the same on the same inputs every time (it has a ``search_key``), so a candidate whose
    edited statement raises on its first run alone is known to fail without running it whole.
    ``located_only``: edit the located statement only (none when nothing was located).
    ``source``: the function's dedented text, when the caller has read it."""
    spent = {} if spent is None else spent
    spent.update(tried=0, cut=False)
    source = source if source is not None else textwrap.dedent(inspect.getsource(fn))
    lines = source.splitlines()
    tree = ast.parse(source)
    fdef = next(d for d in tree.body if isinstance(d, ast.FunctionDef) and d.name == fn.__name__)
    helpers = list(NUMPY_ACTIVATIONS) + [h for h in spec.get("activations", ()) if h in getattr(fn, "__globals__", {})]
    cases = [(decode(c["inputs"]), decode(c["expected"])) for c in public]
    shapes, first_seen = _watched(fn, cases[0][0], saving=repeatable)
    alone = _first_run_alone(fdef) if repeatable else set()
    rests = _rests(fdef, alone)
    context = Context(_names(fdef), shapes, helpers)
    statements = _in_order(_statements(fdef), found, spec)
    located = [s for s in statements if found and s.lineno == found.get("lineno")]
    # the located statement with every edit; then every statement with the small edits; then
    # every statement with a term or a factor added
    rounds = [(s, _terms(s, shapes)) for s in located] + ([] if located_only else [(s, ((), ())) for s in statements] +
                                                          [(s, _terms(s, shapes)) for s in statements])
    deadline = Deadline(seconds)
    kept, seen, count = [], set(), 0
    with quiet():   # what the candidates print, and numpy's warnings: dropped, for the whole search
        for stmt, terms in rounds:
            first, last = stmt.lineno, (stmt.end_lineno if not isinstance(stmt, ast.For) else stmt.lineno)
            indent = lines[first - 1][:len(lines[first - 1]) - len(lines[first - 1].lstrip())]
            before = "\n".join(lines[first - 1:last])
            for edited in edits(stmt, context, terms):
                if count >= tries or deadline.passed():
                    spent.update(tried=count, cut=True)
                    return kept
                after = indent + (_header(edited) if isinstance(edited, ast.For) else unparse(edited))
                if after in seen or after.strip() == before.strip():
                    continue
                seen.add(after)
                count += 1
                spent["tried"] = count
                candidate = "\n".join(lines[:first - 1] + [after] + lines[last:]) + "\n"
                saved = first_seen.get(first) if id(stmt) in alone else None
                if saved is not None and _fails_at_once(edited, after, fn, saved, rests.get(id(stmt)), spec, cases[0][1]):
                    continue
                if _passes(spec, candidate, fn, cases):
                    kept.append({"line": fn.__code__.co_firstlineno + first - 1, "before": before.strip(),
                                 "after": after.strip(), "source": candidate})
                    if len(kept) >= REPAIRS_FOUND:
                        break
            if kept:   # the first statement that can be mended is the one to mend, by the smallest edit
                return sorted(kept, key=lambda r: (changed_tokens(written(r["before"]), r["after"]), len(r["after"])))[:REPAIRS_KEPT]
    return kept


class _Sink(io.TextIOBase):
    """Where what a learner's code prints goes while it is judged or searched: nowhere (a search
    runs hundreds of candidates). The harness's too."""

    def writable(self):
        return True

    def write(self, text):
        return len(text)


@contextlib.contextmanager
def quiet():
    """What a candidate prints and numpy's warnings, dropped."""
    with contextlib.redirect_stdout(_Sink()), contextlib.redirect_stderr(_Sink()), np.errstate(all="ignore"):
        yield


class Deadline:
    """``seconds`` of wall time from now."""

    def __init__(self, seconds):
        self.at = time.monotonic() + seconds

    def passed(self):
        return time.monotonic() > self.at


def written(line):
    """A statement (or a loop's first line) as ast.unparse writes it, as a repair is written."""
    line = line.strip()
    try:
        return ast.unparse(ast.parse(line.rstrip(":") + (" pass" if line.endswith(":") else "")))
    except SyntaxError:
        return line


def changed_tokens(before, after):
    """How many tokens an edit changes (the fewest insertions, deletions and replacements)."""
    a, b = _tokens(before), _tokens(after)
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def _tokens(text):
    import re
    return re.findall(r"\*\*|\w+|[^\w\s]", text)


def _header(loop):
    """A for loop's first line, as written."""
    return f"for {ast.unparse(loop.target)} in {ast.unparse(loop.iter)}:"


def _in_order(statements, found, spec):
    """The statements to edit, most likely first: the located one; else those that compute a
    wrong output or the suspect quantity (an assignment to it, or the returned dict's item);
    then the rest, top to bottom."""
    located = found.get("lineno") if found else None
    wrong = set(spec["outputs"]) - set(found.get("right", ()) if found else ())
    wrong |= set(found.get("suspects", ())[:1]) if found else set()

    def computes_wrong(stmt):
        if isinstance(stmt, ast.Return):
            return isinstance(stmt.value, ast.Dict) and any(
                isinstance(k, ast.Constant) and k.value in wrong for k in stmt.value.keys)
        return any(isinstance(n, ast.Name) and n.id in wrong for t in _targets(stmt) for n in ast.walk(t))

    return sorted(statements, key=lambda s: (s.lineno != located, not computes_wrong(s), s.lineno))


def _targets(stmt):
    return stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AugAssign) else []


def _watched(fn, inputs, saving=True):
    """One run of ``fn`` on ``inputs``, watched: {expression text: shape} of the arrays it holds
    in its names (and its dicts' items), what a name may be swapped for or a term added; and,
    when ``saving``, {line of its source: a copy of its locals as the line was first reached
    (None when they do not copy)}, where a candidate's edited statement is first run
    (``_fails_at_once``)."""
    import sys
    shapes, before = {}, {}
    code = fn.__code__

    def tracer(frame, event, arg):
        if frame.f_code is not code:
            return None
        values = frame.f_locals
        for name, value in values.items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.ndim >= 2:
                shapes.setdefault(name, value.shape)
            elif isinstance(value, dict) and len(value) < 30:
                for key, item in value.items():
                    if isinstance(key, str) and isinstance(item, np.ndarray) and item.ndim >= 2:
                        shapes.setdefault(f"{name}[{key!r}]", item.shape)
        line = frame.f_lineno - code.co_firstlineno + 1
        if saving and event == "line" and line not in before:
            try:
                before[line] = fresh_copy(dict(values), {})
            except Exception:   # a generator, a module, an open file...: no quick check there
                before[line] = None
        return tracer

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                np.errstate(all="ignore"):
            fn(*fresh_copy(inputs, {}))
    except Exception:
        pass
    finally:
        sys.settrace(old)
    return shapes, before


def _first_run_alone(fdef):
    """The statements of ``fdef`` whose first run can be replayed alone from the locals the
    tracer saw at their line (``_watched``): none of a function that catches exceptions,
    suppresses them in a ``with``, yields or calls itself, and no statement that shares its
    first line with another statement (the line's first event would come before it). The
    caller makes sure the function reads no chance or clock (``search_key``)."""
    nodes = list(ast.walk(fdef))
    if any(isinstance(n, (ast.Try, ast.With, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal))
           for n in nodes) or (getattr(ast, "TryStar", None) and any(isinstance(n, ast.TryStar) for n in nodes)):
        return set()
    if any(isinstance(n, ast.Name) and n.id == fdef.name for n in nodes):
        return set()
    statements = [n for n in nodes if isinstance(n, ast.stmt) and n is not fdef]
    alone = set()
    for stmt in _statements(fdef):
        inside = {id(d) for d in ast.walk(stmt)}
        shared = any(other is not stmt and (other.lineno == stmt.lineno or (
            id(other) not in inside and other.lineno < stmt.lineno <= other.end_lineno
            and not any(c is stmt for c in ast.walk(other)))) for other in statements)
        if not shared:
            alone.add(id(stmt))
    return alone


def _rests(fdef, alone):
    """{id(statement): (the code of the statements after it, the names that code uses)} for
    the statements of ``alone`` at the top of ``fdef``'s body (each runs once, when it runs)
    whose rest can run as a module's code: no return but the last statement, which leaves its
    value in RESULT. What a candidate edits there, run on the locals its line first saw and
    followed by this code, does what the whole candidate does on the same first case, without
    compiling the whole function again."""
    body = fdef.body
    returns = [any(isinstance(n, ast.Return) for n in ast.walk(s)) for s in body]
    last = body[-1] if isinstance(body[-1], ast.Return) else None
    ending = []
    if last is not None:
        value = last.value if last.value is not None else ast.copy_location(ast.Constant(None), last)
        ending = [ast.copy_location(ast.Assign([ast.copy_location(ast.Name(RESULT, ast.Store()), last)], value),
                                    last)]
    rests = {}
    for i, stmt in enumerate(body):
        if id(stmt) not in alone or isinstance(stmt, ast.For) or any(returns[i + 1:len(body) - (last is not None)]):
            continue
        rest = body[i + 1:len(body) - (last is not None)] + (ending if i < len(body) - 1 else [])
        try:
            code = compile(ast.Module(rest, []), "<repair>", "exec")
        except (SyntaxError, ValueError, TypeError):
            continue
        rests[id(stmt)] = (code, _code_names(code))
    return rests


RESULT = "__repair_result__"
"""The name a replayed rest of a function (``_rests``) leaves its return value in."""


def _fails_at_once(edited, after, fn, saved, rest=None, spec=None, expected=None):
    """Whether the edited statement (``after``: its text) raises when run alone on ``saved``,
    the locals its line first saw: then the candidate raises there too, on the same first case,
    and ``_passes`` would say no after compiling and running the whole function (two thirds of
    all candidates fail so, most at once: a shape that does not fit). With ``rest`` (``_rests``),
    the rest of the function runs after it, and a first case that raises or whose outputs differ
    from ``expected`` also says no. False whenever this cannot be told (a statement that only
    runs in a function). The locals are copied first, so that the next candidate finds them as
    they were."""
    whole = rest is not None   # the first case runs to the function's end: its outputs are checked
    if isinstance(edited, ast.For):
        text, mode = f"iter({ast.unparse(edited.iter)})", "eval"
    elif isinstance(edited, ast.Return):   # the function's end: nothing runs after it
        text, mode, rest = after.strip()[len("return"):].strip(), "eval", None
        if whole:
            text, mode = f"{RESULT} = ({text})", "exec"
    else:
        text, mode = after.strip(), "exec"
    try:
        code = compile(text, "<repair>", mode)
    except SyntaxError:   # break, continue, await...
        return False
    space = dict(getattr(fn, "__globals__", {}))
    memo: dict = {}
    read = _code_names(code) | (rest[1] if rest is not None else set())   # a name no code reads needs no copy
    space.update((n, fresh_copy(saved[n], memo)) for n in read if n in saved)
    space.pop(RESULT, None)
    try:   # inside ``quiet``
        eval(code, space)
        if not whole:
            return False
        if rest is not None:
            eval(rest[0], space)
        return bool(differs(spec, space.get(RESULT), expected))
    except Exception:
        return True


def _terms(stmt, shapes):
    """Terms a learner may have left out of ``stmt``: products ``A @ B`` of two of the function's
    arrays whose rows are the target's, arrays of its rows as addends (a bias), and arrays as
    factors (a gate)."""
    target = next((ast.unparse(t) for t in _targets(stmt)), None)
    shape = shapes.get(target) if target else None
    if shape is None or len(shape) != 2:
        return [], []
    matrices = dict(sorted(((a, sa) for a, sa in shapes.items() if len(sa) == 2), key=lambda i: "[" in i[0]))
    products = [ast.BinOp(_expr(a), ast.MatMult(), _expr(b)) for a, sa in matrices.items() for b, sb in matrices.items()
                if a != b and sa[1] == sb[0] and sa[0] == shape[0]]
    addends = [_expr(a) for a, sa in matrices.items() if sa == (shape[0], 1) and a != target]
    factors = [_expr(a) for a, sa in sorted(matrices.items(), key=lambda i: i[1] != shape)
               if a != target and sa[1] != 1]
    return products[:40] + addends[:10], factors[:20]


def _passes(spec, candidate, fn, cases):
    space = dict(getattr(fn, "__globals__", {}))
    try:
        exec(compile(candidate, f"<repair of {fn.__name__}>", "exec"), space)
        new = space[fn.__name__]
        for inputs, expected in cases:   # inside ``quiet``
            if differs(spec, new(*fresh_copy(inputs, {})), expected):
                return False
    except Exception:
        return False
    return True


def _name(text):
    return ast.Name(id=text, ctx=ast.Load())


def _call(func, arg):
    return ast.Call(func=_expr(func), args=[arg], keywords=[])


_PARSED: dict = {}   # expression text -> its tree, parsed once: candidates share it, and none is changed in place


def _expr(text):
    """The tree of a short expression (a name, ``np.tanh``, ``parameters['Wax']``)."""
    if text not in _PARSED:
        _PARSED[text] = ast.parse(text, mode="eval").body
    return _PARSED[text]


VALUES = (ast.Name, ast.BinOp, ast.Call, ast.Subscript, ast.Attribute, ast.IfExp, ast.UnaryOp)


def _replacements(node, context, terms=((), ())):
    """Each node that may stand in place of ``node``: one small edit."""
    out = []
    value = isinstance(node, VALUES) and not (isinstance(node, ast.Name) and node.id == "np") \
        and not (isinstance(node, ast.Attribute) and node.attr != "T")
    if isinstance(node, ast.Name) and node.id != "np":
        out += [_name(n) for n in context.alike(node.id)]
        out += [_call(h, node) for h in context.helpers]
        out += [ast.Attribute(node, "T", ast.Load()), ast.BinOp(node, ast.Pow(), ast.Constant(2))]
    if value and not isinstance(node, ast.Name):   # a whole expression where a name belongs
        out += [_name(n) for n in context.arrays[:30]]
    if value:
        products, factors = terms
        out.append(ast.BinOp(ast.Constant(1), ast.Sub(), node))
        out += [ast.BinOp(p, ast.Add(), node) for p in products]
        out += [ast.BinOp(f, ast.Mult(), node) for f in factors]
        out += [p for p in products if not isinstance(node, ast.Name)]
    if isinstance(node, ast.BinOp):
        out += [node.left, node.right, ast.BinOp(node.right, node.op, node.left)]
        for op in (ast.Add(), ast.Sub(), ast.Mult(), ast.MatMult()):
            if type(op) is not type(node.op):
                out.append(ast.BinOp(node.left, op, node.right))
        out.append(_call("np.tanh", node))
    if isinstance(node, ast.Call):
        out += _call_edits(node, context)
    if isinstance(node, ast.Attribute) and node.attr == "T":
        out.append(node.value)
    if isinstance(node, ast.Subscript):
        out += _subscript_edits(node, context)
    return out


def _call_edits(node, context):
    """An activation taken off or swapped, an axis flipped, keepdims, an argument dropped."""
    out = []
    func = ast.unparse(node.func)
    if func in context.helpers and len(node.args) == 1:
        out.append(node.args[0])
        out += [_call(f, node.args[0]) for f in context.helpers if f != func]
    for k in node.keywords:
        if k.arg == "axis" and isinstance(k.value, ast.Constant) and k.value.value in (0, 1):
            flipped = _copy(node)
            next(w for w in flipped.keywords if w.arg == "axis").value = ast.Constant(1 - k.value.value)
            out.append(flipped)
    if func.split(".")[-1] == "sum":
        keep = _copy(node)
        keep.keywords = [k for k in keep.keywords if k.arg != "keepdims"]
        if len(keep.keywords) == len(node.keywords):
            keep.keywords.append(ast.keyword("keepdims", ast.Constant(True)))
        out.append(keep)
    for i in range(len(node.args) if len(node.args) > 1 else 0):   # range(1, T_x) -> range(T_x)
        fewer = _copy(node)
        del fewer.args[i]
        out.append(fewer)
    return out


def _subscript_edits(node, context):
    """The array itself, another key of a dict, another index."""
    out = [node.value]
    if isinstance(node.slice, ast.Constant) and isinstance(node.value, ast.Name):
        for key in context.keys.get(node.value.id, ()):
            other = _expr(f"{node.value.id}[{key}]")
            if ast.unparse(other) != ast.unparse(node):
                out.append(other)
        return out
    for i, part in enumerate(node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]):
        for new in _index_edits(part, context):
            s = _copy(node)
            if isinstance(s.slice, ast.Tuple):
                s.slice.elts[i] = new
            else:
                s.slice = new
            out.append(s)
    return out


def _index_edits(part, context):
    """t -> t - 1, t + 1, another index name; t - 1 -> t; :n -> n:; n: -> :n."""
    out = []
    if isinstance(part, ast.Name):
        out += [ast.BinOp(part, ast.Sub(), ast.Constant(1)), ast.BinOp(part, ast.Add(), ast.Constant(1))]
    if isinstance(part, ast.BinOp) and isinstance(part.right, ast.Constant):
        out.append(part.left)
    if isinstance(part, (ast.Name, ast.BinOp, ast.Constant)):
        out += [_name(n) for n in context.scalars if not (isinstance(part, ast.Name) and part.id == n)]
    if isinstance(part, ast.Slice) and (part.lower is None) != (part.upper is None):
        out.append(ast.Slice(lower=part.upper, upper=part.lower))
    return out


def _value(stmt):
    return stmt.iter if isinstance(stmt, ast.For) else stmt.value


def edits(stmt, context, terms=((), ())):
    """Copies of ``stmt`` with one small edit each: a node of its value replaced
    (``_replacements``), two of its names exchanged, an index of its target changed, ``=``,
    ``+=`` and ``-=`` exchanged, or its value replaced by zeros."""
    value = _value(stmt)
    nodes, paths = _walked(value)
    for index in range(len(nodes)):
        for new in _replacements(nodes[index], context, terms):
            yield _with(stmt, paths[index], new)
    named = [i for i, n in enumerate(nodes) if isinstance(n, ast.Name) and n.id != "np"]
    for a in range(len(named)):   # two names written in each other's place
        for b in range(a + 1, len(named)):
            if nodes[named[a]].id != nodes[named[b]].id:
                out = _copy(stmt)
                copied = list(ast.walk(_value(out)))
                copied[named[a]].id, copied[named[b]].id = nodes[named[b]].id, nodes[named[a]].id
                yield out
    if isinstance(stmt, ast.For):
        return
    made = []
    for target in _targets(stmt):   # a[:, :, t - 1] = ...: the index written to
        if isinstance(target, ast.Subscript):
            parts = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
            for i, part in enumerate(parts):
                for new in _index_edits(part, context):
                    out = _copy(stmt)
                    t = out.targets[0] if isinstance(out, ast.Assign) else out.target
                    if isinstance(t.slice, ast.Tuple):
                        t.slice.elts[i] = new
                    else:
                        t.slice = new
                    made.append(out)
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        made.append(ast.AugAssign(target=_copy(stmt.targets[0]), op=ast.Add(), value=_copy(value)))
        made.append(ast.Assign(targets=_copy(stmt.targets), value=_call("np.zeros_like", _copy(value))))
        made += [ast.Assign(targets=_copy(stmt.targets), value=ast.BinOp(_name(n), ast.Add(), _copy(value)))
                 for n in context.arrays]   # a term left out
    if isinstance(stmt, ast.AugAssign):
        made.append(ast.Assign(targets=[_copy(stmt.target)], value=_copy(value)))
        made += [ast.AugAssign(target=_copy(stmt.target), op=op, value=_copy(value))
                 for op in (ast.Add(), ast.Sub()) if type(op) is not type(stmt.op)]
    for new in made:   # a statement's place: ast.unparse reads its line for a type comment
        yield ast.copy_location(new, stmt)


def _copy(node):
    """A copy of a syntax tree (a node or a list of nodes): its fields and its place in the
    text, nothing else. ``copy.deepcopy`` also copies what other code hung on a node: IPython's
    tracebacks (``executing``) give each node of the trees they read a ``parent``, the shared
    ``Load()`` and ``Store()`` too, so that in a kernel that has shown a traceback a deep copy
    of one name drags a whole other tree along (15 times the work, measured)."""
    if isinstance(node, list):
        return [_copy(n) for n in node]
    if not isinstance(node, ast.AST) or isinstance(node, ast.expr_context):   # a value, or Load/Store/Del
        return node
    out = type(node)(**{f: _copy(getattr(node, f)) for f in node._fields if hasattr(node, f)})
    for a in node._attributes:
        if hasattr(node, a):
            setattr(out, a, getattr(node, a))
    return out


def _walked(value):
    """The nodes of ``value`` in ast.walk order, and the path to each from ``value``:
    (field, index in the field's list or None) pairs."""
    nodes, paths, path_of = [], [], {id(value): ()}
    for node in ast.walk(value):
        here = path_of.get(id(node), ())   # Load() and the operators are shared: never edited
        nodes.append(node)
        paths.append(here)
        for field, old in ast.iter_fields(node):
            for i, child in (enumerate(old) if isinstance(old, list) else [(None, old)]):
                if isinstance(child, ast.AST):
                    path_of.setdefault(id(child), here + ((field, i),))
    return nodes, paths


def _shallow(node):
    out = type(node).__new__(type(node))
    vars(out).update(vars(node))
    return out


def _with(stmt, path, new):
    """A copy of ``stmt`` whose value's node at ``path`` (see _walked) is ``new``: only the nodes
    on the way down are copied; the rest, and ``new``, are shared with the original (a candidate
    is only written out as text, never changed)."""
    out = _shallow(stmt)
    field = "iter" if isinstance(stmt, ast.For) else "value"
    node, place = out, (field, None)
    for step in path:
        child = getattr(node, place[0]) if place[1] is None else getattr(node, place[0])[place[1]]
        node = _put(node, place, _shallow(child))
        place = step
    _put(node, place, new)
    return out


def _put(node, place, child):
    """Set ``node``'s ``place`` (field, index or None) to ``child``, copying a list field; ``child``."""
    field, i = place
    if i is None:
        setattr(node, field, child)
    else:
        items = list(getattr(node, field))
        items[i] = child
        setattr(node, field, items)
    return child
