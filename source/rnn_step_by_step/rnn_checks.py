"""The checks under each exercise, and the words they use.

Run ``check("rnn_cell_forward")`` under your function: it calls your code on worked
examples and tells you what is wrong, if anything. You never need to compare numbers by
eye. The autograder describes mistakes with this same module (on hidden inputs), so what
you read here is what your feedback will say.

Everything here needs numpy alone. The expected outputs live in ``check_data.json``,
computed from the course's reference solution when this release was built.
"""
import base64
import dis
import json
import os
import sys
import traceback
import types

import numpy as np

RTOL, ATOL = 1e-5, 1e-7
# The grader also runs this text inside a kernel with no __file__ (see assignments/grading).
_HERE = os.path.abspath(globals().get("__file__", "rnn_checks.py"))
DATA_FILE = os.path.join(os.path.dirname(_HERE), "check_data.json")
MAX_DEPTH = 8
MAX_ITEMS = 10_000


# --- Turning nested outputs into JSON and back ---------------------------------------

def encode(obj, _depth=0):
    """A JSON-safe description of a nested tuple/list/dict of arrays (no pickle)."""
    if _depth > MAX_DEPTH:
        return {"other": "nesting too deep", "repr": "..."}
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "biuf" and obj.size <= 10**7:
        arr = np.ascontiguousarray(obj, dtype=obj.dtype.newbyteorder("<"))
        return {"array": base64.b64encode(arr.tobytes()).decode("ascii"),
                "dtype": arr.dtype.str, "shape": list(arr.shape)}
    if isinstance(obj, (bool, int, float, np.bool_, np.integer, np.floating)):
        return {"number": float(obj)}
    if obj is None:
        return {"none": True}
    if isinstance(obj, (tuple, list)) and len(obj) <= MAX_ITEMS:
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {kind: [encode(x, _depth + 1) for x in obj]}
    if isinstance(obj, dict) and len(obj) <= MAX_ITEMS and all(isinstance(k, str) for k in obj):
        return {"dict": {k: encode(v, _depth + 1) for k, v in obj.items()}}
    try:
        text = repr(obj)[:200]
    except Exception:
        text = "?"
    return {"other": type(obj).__name__, "repr": text}


class Other:
    """Stands for a returned value the codec does not carry (a string, an object...)."""

    def __init__(self, type_name, text):
        self.type_name, self.text = type_name, text

    def __repr__(self):
        return self.text


def decode(node):
    if "array" in node:
        raw = base64.b64decode(node["array"])
        return np.frombuffer(raw, dtype=np.dtype(node["dtype"])).reshape(node["shape"]).copy()
    if "number" in node:
        return node["number"]
    if "none" in node:
        return None
    if "tuple" in node:
        return tuple(decode(x) for x in node["tuple"])
    if "list" in node:
        return [decode(x) for x in node["list"]]
    if "dict" in node:
        return {k: decode(v) for k, v in node["dict"].items()}
    return Other(node.get("other", "?"), node.get("repr", "?"))


# --- Comparing outputs, in words -------------------------------------------------------

def _kind(x):
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape}"
    if isinstance(x, Other):
        return f"a {x.type_name} ({x.text[:60]})"
    return {tuple: "a tuple", list: "a list", dict: "a dict", type(None): "None"}.get(
        type(x), f"a {type(x).__name__}")


def _join(names):
    return ", ".join(names)


def _schema(spec, output):
    """Labels for the items of nested outputs: cache fields, one cache per time step."""
    fields = tuple((f, None) for f in spec.get("cache_fields", ()))
    if output == "cache":
        return ("tuple", fields)
    if output == "caches":
        return ("tuple", (("one cache per time step", ("steps", ("tuple", fields))), ("x", None)))
    return None


def _where(path, index, schema):
    if schema and schema[0] == "tuple" and index < len(schema[1]):
        label, child = schema[1][index]
        return f"{path}[{index}] ({label})", child
    if schema and schema[0] == "steps":
        return f"{path}[{index}] (time step {index})", schema[1]
    return f"{path}[{index}]", None


def _describe_values(path, got, exp, show_values):
    bad = ~np.isclose(got, exp, rtol=RTOL, atol=ATOL)
    if not bad.any():
        return None
    if not np.all(np.isfinite(got)):
        return f"{path} contains NaN or infinity: look for an overflow or a division by zero"
    diff = np.abs(got - exp)
    worst = np.unravel_index(np.argmax(np.where(bad, diff, -1)), got.shape)
    where = "".join(f"[{i}]" for i in worst)
    text = f"{path} is wrong in {int(bad.sum())} of {bad.size} entries"
    if got.ndim == 3 and got.shape[2] > 1:
        steps = [int(t) for t in np.flatnonzero(bad.any(axis=(0, 1)))]
        shown = ", ".join(map(str, steps[:12])) + (", ..." if len(steps) > 12 else "")
        text += f", at time step{'s' if len(steps) > 1 else ''} t = {shown} (of 0..{got.shape[2] - 1})"
    text += f"; the largest difference is {diff[worst]:.3g}, at {path}{where}"
    if show_values:
        text += f" (yours {got[worst]:.6g}, expected {exp[worst]:.6g})"
    if not np.any(got) and np.any(exp):
        text += ". It is all zeros: is it ever filled in?"
    return text


def _compare(got, exp, path, schema, show_values, out):
    """Append to ``out`` what differs between ``got`` and ``exp``; recurse into containers."""
    if isinstance(exp, np.ndarray):
        if isinstance(got, (int, float)) and exp.shape == ():
            got = np.asarray(got)
        if not isinstance(got, np.ndarray):
            out.append(f"{path} is {_kind(got)}; expected a numpy array of shape {exp.shape}")
        elif got.dtype.kind not in "biuf":
            out.append(f"{path} has dtype {got.dtype}; expected numbers")
        elif got.shape != exp.shape:
            hint = ""
            if sorted(got.shape) == sorted(exp.shape):
                hint = ": the same sizes in another order; check which axis is which"
            elif tuple(s for s in exp.shape if s != 1) == tuple(s for s in got.shape if s != 1):
                hint = ": keep the column shape, e.g. np.sum(..., axis=1, keepdims=True)"
            out.append(f"{path} has shape {got.shape}; expected {exp.shape}{hint}")
        else:
            text = _describe_values(path, got.astype(float), exp, show_values)
            if text:
                out.append(text)
    elif isinstance(exp, (tuple, list)):
        if not isinstance(got, (tuple, list)):
            out.append(f"{path} is {_kind(got)}; expected {len(exp)} items")
        elif len(got) != len(exp):
            per_step = schema and schema[0] == "steps"
            unit = " (one per time step)" if per_step else ""
            out.append(f"{path} has {len(got)} items; expected {len(exp)}{unit}")
        else:
            for i, (g, e) in enumerate(zip(got, exp)):
                where, child = _where(path, i, schema)
                _compare(g, e, where, child, show_values, out)
    elif isinstance(exp, dict):
        if not isinstance(got, dict):
            out.append(f"{path} is {_kind(got)}; expected a dict with keys {_join(exp)}")
        else:
            for k, e in exp.items():
                if k not in got:
                    out.append(f"{path} has no key '{k}'")
                else:
                    _compare(got[k], e, f"{path}['{k}']", None, show_values, out)
    elif isinstance(exp, float):
        if not isinstance(got, (int, float)) or not np.isclose(got, exp, rtol=RTOL, atol=ATOL):
            out.append(f"{path} is {got!r}; expected {exp!r}" if show_values else f"{path} is wrong")
    elif exp is None and got is not None:
        out.append(f"{path} is {_kind(got)}; expected None")


def _same(got, exp):
    found = []
    _compare(got, exp, "", None, False, found)
    return not found


def compare(spec, got, expected, show_values=True):
    """Compare one call's outputs. Returns (problems in words, names of wrong outputs)."""
    names = list(spec["outputs"])
    if spec["returns_dict"]:
        if not isinstance(got, dict):
            return [f"{spec['name']} returned {_kind(got)}; expected a dict with keys {_join(names)}"], set(names)
        pairs = [(n, got.get(n, _MISSING)) for n in names]
    else:
        if not isinstance(got, (tuple, list)):
            return [f"{spec['name']} returned {_kind(got)}; expected {len(names)} values: {_join(names)}"], set(names)
        if len(got) != len(names):
            return [f"{spec['name']} returned {len(got)} values; expected {len(names)}: {_join(names)}"], set(names)
        pairs = list(zip(names, got))
    exp = dict(zip(names, expected)) if not spec["returns_dict"] else expected
    problems, wrong = [], set()
    for position, (name, value) in enumerate(pairs, 1):
        found = []
        if value is _MISSING:
            found.append(f"the returned dict has no key '{name}'")
        else:
            _compare(value, exp[name], name, _schema(spec, name), show_values, found)
        if found and not spec["returns_dict"] and found[0].startswith(name + " "):
            found[0] = f"{name} (returned value {position} of {len(names)})" + found[0][len(name):]
        if found:
            wrong.add(name)
            swapped = [o for o in names if o != name and value is not _MISSING and _same(value, exp[o])]
            if swapped:
                found.append(f"{name} holds what {swapped[0]} should: check the order "
                             f"({_join(names)})" + (" and the keys" if spec["returns_dict"] else ""))
            problems += found[:4] + ([f"... and {len(found) - 4} more differences in {name}"] if len(found) > 4 else [])
    return problems, wrong


_MISSING = object()


# --- Known mistakes, recognised by fingerprints -------------------------------------------

SAMPLES = 3   # values kept per differing array in a fingerprint


def leaves(x, path=""):
    """(path, array) for every array inside a nested output."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        x = np.asarray(float(x))
    if isinstance(x, np.ndarray):
        yield path, x
    elif isinstance(x, (tuple, list)):
        for i, v in enumerate(x):
            yield from leaves(v, f"{path}[{i}]")
    elif isinstance(x, dict):
        for k, v in x.items():
            yield from leaves(v, f"{path}[{k!r}]")


def _differs(a, b):
    return a is None or b is None or a.shape != b.shape or a.dtype.kind not in "biuf" \
        or not np.allclose(a, b, rtol=RTOL, atol=ATOL)


def fingerprint(wrong, right):
    """How an output ``wrong`` differs from ``right``: every differing array's path, and for
    a few, its shape and the values at the entries that differ most. Numbers, no code."""
    a, b = dict(leaves(wrong)), dict(leaves(right))
    paths = sorted(p for p in set(a) | set(b) if _differs(a.get(p), b.get(p)))
    samples = []
    for p in paths[:6]:
        if p not in a:
            continue
        w = a[p].astype(float).ravel()
        r = b[p].astype(float).ravel() if p in b and b[p].shape == a[p].shape else np.zeros_like(w)
        at = [int(i) for i in np.argsort(-np.abs(w - r), kind="stable")[:SAMPLES]]
        samples.append({"path": p, "shape": list(a[p].shape), "at": at, "values": [float(w[i]) for i in at]})
    return {"paths": paths, "samples": samples}


def matches(got, right, print_):
    """Does ``got`` differ from ``right`` exactly as the fingerprint ``print_`` says?"""
    a, b = dict(leaves(got)), dict(leaves(right))
    if sorted(p for p in set(a) | set(b) if _differs(a.get(p), b.get(p))) != print_["paths"]:
        return False
    for s in print_["samples"]:
        v = a.get(s["path"])
        if v is None or list(v.shape) != s["shape"] or v.dtype.kind not in "biuf":
            return False
        if not np.allclose(v.astype(float).ravel()[s["at"]], s["values"], rtol=RTOL, atol=ATOL):
            return False
    return True


def recognise(name, outputs, fn=None):
    """Known mistakes that explain ``outputs`` (one per stored case), fewest codes first."""
    data = _load()
    named = []
    for known in data.get("mistakes", {}).get(name, []) if outputs else []:
        if all(matches(got, decode(case["expected"]), p)
               for got, case, p in zip(outputs, data["cases"][name], known["cases"])):
            named.append(known)
    if named:
        fewest = min(len(k["codes"]) for k in named)
        named = [k for k in named if len(k["codes"]) == fewest]
    if fn is not None:
        for d in data.get("detectors", {}).get(name, []):
            if d["detector"] == "reads_globals" and data_globals(fn):
                named.append({"codes": d["codes"], "feedback": d["feedback"]})
    feedback = {}
    for k in named:
        for code, text in zip(k["codes"], k["feedback"]):
            feedback[code] = text
    return feedback


# --- Where an exception came from -------------------------------------------------------

def student_line(exc):
    """'line 7: a_next = ...' for the innermost frame of the learner's own code."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if os.path.abspath(f.filename) != _HERE and "site-packages" not in f.filename
              and not f.filename.startswith(("<grader", "<reference", "<mutant", "<string"))]
    if not frames:
        return ""
    f = frames[-1]
    code = f" `{f.line.strip()}`" if f.line else ""
    return f" (in {f.name}, line {f.lineno}:{code})"


def exception_text(exc):
    message = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    return f"{type(exc).__name__}" + (f": {message}" if message else "")


def data_globals(fn):
    """Names the function reads from its module's globals that hold weights-like data
    (dicts, arrays): a function that depends on the notebook's variables instead of its
    arguments. Constants (numbers, tuples of names) are fine."""
    names, stack = set(), [getattr(fn, "__code__", None)]
    while stack:
        code = stack.pop()
        if code is None:
            continue
        names.update(i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME"))
        stack += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    scope = getattr(fn, "__globals__", {})
    return sorted(n for n in names if n in scope and isinstance(scope[n], (dict, np.ndarray))
                  and not n.startswith("__"))


# --- The student-side check ---------------------------------------------------------------

class CheckFailed(Exception):
    """Raised by a failing check; shows its message without a long traceback."""

    def _render_traceback_(self):
        return ["\x1b[0;31m" + "✗ " + str(self) + "\x1b[0m"]


_data = None


def _load():
    global _data
    if _data is None:
        with open(DATA_FILE, encoding="utf-8") as f:
            _data = json.load(f)
    return _data


def _user_namespace():
    frame = sys._getframe(2)
    return frame.f_globals


def check(name, namespace=None):
    """Check your ``name`` function on the worked examples; say what is wrong, in words.
    It looks the function up among your notebook's names (or in ``namespace``)."""
    namespace = _user_namespace() if namespace is None else namespace
    fn = namespace.get(name)
    data = _load()
    if name not in data["functions"]:
        raise CheckFailed(f"there is no exercise called {name!r}")
    if fn is None:
        raise CheckFailed(f"{name} is not defined yet: run the cell where you wrote it, "
                          f"and check that the def line still says `def {name}(...)`.")
    if not callable(fn):
        raise CheckFailed(f"{name} is {_kind(fn)}, not a function: was the name reused for a variable?")
    spec = data["functions"][name]
    cases = data["cases"][name]
    outputs, failed = [], None
    for case in cases:
        try:
            got = fn(*decode(case["inputs"]))
        except NotImplementedError:
            raise CheckFailed(f"{name} is not written yet: replace `raise NotImplementedError()` "
                              f"with your code.") from None
        except Exception as exc:
            known = recognise(name, [], fn)
            lines = [f"{name} raised {exception_text(exc)}{student_line(exc)}, on {case['label']}."]
            raise CheckFailed("\n".join(lines + [f"  [{c}] {t}" for c, t in known.items()])) from None
        outputs.append(got)
        problems, _ = compare(spec, got, decode(case["expected"]))
        if problems and failed is None:
            failed = (case, problems)
    if failed:
        case, problems = failed
        known = recognise(name, outputs, fn)
        lines = [f"{name} is not right yet."]
        if known:
            lines.append("This looks like a mistake many learners make:")
            lines += [f"  [{code}] {text}" for code, text in known.items()]
        most = 4 if known else 8
        lines.append(f"What differs, on {case['label']}:")
        lines += [f"  - {p}" for p in problems[:most]]
        if len(problems) > most:
            lines.append(f"  ... and {len(problems) - most} more.")
        callee = _failing_callee(spec, namespace)
        if callee:
            lines.append(f"  Note: {name} calls {callee}, which does not pass its own check yet. "
                         f"Fix {callee} first: {name} may already be right.")
        raise CheckFailed("\n".join(lines))
    print(f"✓ {name}: all checks passed ({len(cases)} examples).")


def _failing_callee(spec, namespace):
    """The first function this one calls that fails its own check (learners chase the
    wrong bug for days when a correct function calls a broken one)."""
    data = _load()
    for callee in spec.get("callees", ()):
        fn = namespace.get(callee)
        if fn is None:
            return callee
        try:
            if any(compare(data["functions"][callee], fn(*decode(c["inputs"])), decode(c["expected"]))[0]
                   for c in data["cases"][callee]):
                return callee
        except Exception:
            return callee
    return None

