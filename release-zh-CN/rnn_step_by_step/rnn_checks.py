"""The checks under each exercise, and the words they use.

Run ``check("<function name>")`` under your function: it calls your code on worked
examples and tells you what is wrong, if anything. You never need to compare numbers by
eye. The autograder describes mistakes with this same module (on hidden inputs), so what
you read here is what your feedback will say.

Everything here needs numpy alone. The expected outputs live in ``check_data.json``,
computed from the course's reference solution when this release was built. (This file is
the course's grading engine's: every assignment ships it under its own name.) A release in
another language ships ``check_messages.mo`` beside it, the course's message catalog compiled
for that language (standard gettext): every sentence here is a template looked up in it.
Rule (shipped/): the standard library and numpy only, so that it runs wherever the notebook runs.
"""
import ast
import base64
import contextlib
import copy
import dis
import gettext
import inspect
import io
import json
import math
import os
import re
import sys
import textwrap
import time
import traceback
import types
from collections.abc import Mapping

import numpy as np

RTOL, ATOL = 1e-5, 1e-7
# The grader also runs this text inside a kernel with no __file__ (see assignments/grading).
_HERE = os.path.abspath(globals().get("__file__", "checks.py"))
DATA_FILE = os.path.join(os.path.dirname(_HERE), "check_data.json")
MAX_DEPTH = 8
MAX_ITEMS = 10_000
MESSAGES_FILE = os.path.join(os.path.dirname(_HERE), "check_messages.mo")


# --- Words in the learner's language ----------------------------------------------------
#
# Every sentence is a template with named fields, looked up in the compiled catalog when the
# release ships one (English otherwise). The course's catalogs are extracted from the calls of
# tr and ntr (see docs/translation.md).

_catalog = None


def use_messages(catalog):
    """Speak the language of ``catalog`` (a gettext.GNUTranslations; None for English).
    Returns the catalog used until now, so that a caller can put it back."""
    global _catalog
    previous, _catalog = _catalog, catalog
    return previous


def load_messages(path=MESSAGES_FILE):
    """Use the compiled catalog at ``path`` when there is one."""
    if os.path.isfile(path):
        with open(path, "rb") as f:
            use_messages(gettext.GNUTranslations(f))


def tr(template, **fields):
    """``template`` in the learner's language, its {fields} filled in."""
    text = _catalog.gettext(template) if _catalog is not None else template
    return text.format(**fields) if fields else text


def ntr(singular, plural, n, **fields):
    """The form of a template that agrees with the number ``n`` ({n} in it)."""
    text = _catalog.ngettext(singular, plural, n) if _catalog is not None else (singular if n == 1 else plural)
    return text.format(n=n, **fields)


CASE_LABELS = (re.compile(r"a small example with (?P<shape>.+)"), re.compile(r"a hidden case with (?P<shape>.+)"))


def case_label(label):
    """A case's label (check_data.json and the judge keep them in English) in the learner's language."""
    if label == "the worked example above":
        return tr("the worked example above")
    if CASE_LABELS[0].fullmatch(label):
        return tr("a small example with {shape}", shape=CASE_LABELS[0].fullmatch(label).group("shape"))
    if CASE_LABELS[1].fullmatch(label):
        return tr("a hidden case with {shape}", shape=CASE_LABELS[1].fullmatch(label).group("shape"))
    return tr(label)


# --- Turning nested outputs into JSON and back ---------------------------------------

def encode(obj, _depth=0, _arrays=None):
    """A JSON-safe description of a nested tuple/list/dict of arrays (no pickle). With
    ``_arrays`` (``pack``): each array's bytes appended there instead of written in its node,
    and a dict's items in the order of their keys."""
    if _depth > MAX_DEPTH:
        return {"other": "nesting too deep", "repr": "..."}
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "biuf" and obj.size <= 10**7:
        arr = np.ascontiguousarray(obj, dtype=obj.dtype.newbyteorder("<"))
        if _arrays is not None:
            _arrays.append(arr.tobytes())
            return {"dtype": arr.dtype.str, "shape": list(arr.shape)}
        return {"array": base64.b64encode(arr.tobytes()).decode("ascii"),
                "dtype": arr.dtype.str, "shape": list(arr.shape)}
    if isinstance(obj, (bool, int, float, np.bool_, np.integer, np.floating)):
        return {"number": float(obj)}
    if obj is None:
        return {"none": True}
    if isinstance(obj, (tuple, list)) and len(obj) <= MAX_ITEMS:
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {kind: [encode(x, _depth + 1, _arrays) for x in obj]}
    if isinstance(obj, dict) and len(obj) <= MAX_ITEMS and all(isinstance(k, str) for k in obj):
        items = sorted(obj.items()) if _arrays is not None else obj.items()
        return {"dict": {k: encode(v, _depth + 1, _arrays) for k, v in items}}
    try:
        text = repr(obj)[:200]
    except Exception:
        text = "?"
    return {"other": type(obj).__name__, "repr": text}


def pack(obj):
    """``encode``'s description of ``obj`` in two texts: its layout (the JSON of encode's
    nodes, an array's without its bytes) and the bytes of all its arrays, one after another, in
    base64. The harness packs its replies: the grader decodes one text instead of one per
    array, and compares an output laid out as the reference's in one operation."""
    arrays = []
    layout = json.dumps(encode(obj, 0, arrays))
    return {"layout": layout, "packed": base64.b64encode(b"".join(arrays)).decode("ascii")}


def unpack(node):
    """``pack``'s value back, with the bytes of its arrays (which its arrays are views of)."""
    raw = bytearray(base64.b64decode(node["packed"]))
    return decode(json.loads(node["layout"]), [raw, 0]), raw


def _next_array(packed, node):
    """The array a packed layout's ``node`` describes: the next bytes of ``packed`` ([bytes,
    where the next array starts])."""
    raw, start = packed
    dtype, shape = np.dtype(node["dtype"]), node["shape"]
    count = math.prod(shape)
    if count < 0:
        raise ValueError("negative dimension")
    packed[1] = start + count * dtype.itemsize
    return np.frombuffer(raw, dtype, count, start).reshape(shape)


class Other:
    """Stands for a returned value the codec does not carry (a string, an object...)."""

    def __init__(self, type_name, text):
        self.type_name, self.text = type_name, text

    def __repr__(self):
        return self.text


def decode(node, _packed=None):
    """``encode``'s or ``pack``'s value back. ``_packed``: the bytes of a packed layout's
    arrays, and where the next one starts (``unpack``)."""
    if "packed" in node:
        return unpack(node)[0]
    if "array" in node:
        raw = base64.b64decode(node["array"])
        return np.frombuffer(raw, dtype=np.dtype(node["dtype"])).reshape(node["shape"]).copy()
    if _packed is not None and "shape" in node:
        return _next_array(_packed, node)
    if "number" in node:
        return node["number"]
    if "none" in node:
        return None
    if "tuple" in node:
        return tuple(decode(x, _packed) for x in node["tuple"])
    if "list" in node:
        return [decode(x, _packed) for x in node["list"]]
    if "dict" in node:
        return {k: decode(v, _packed) for k, v in node["dict"].items()}
    return Other(node.get("other", "?"), node.get("repr", "?"))


# --- Comparing outputs, in words -------------------------------------------------------

def _kind(x):
    if isinstance(x, np.ndarray):
        return tr("an array of shape {shape}", shape=x.shape)
    if isinstance(x, Other):
        return tr("a {type} ({text})", type=x.type_name, text=x.text[:60])
    if isinstance(x, (tuple, list, dict)) or x is None:
        return {tuple: tr("a tuple"), list: tr("a list"), dict: tr("a dict")}.get(type(x), "None")
    return tr("a {type}", type=type(x).__name__)


def _join(names):
    return ", ".join(names)


def _schema(spec, output):
    """Labels for the items of nested outputs: cache fields, one cache per time step."""
    fields = tuple((f, None) for f in spec.get("cache_fields", ()))
    if output == "cache":
        return ("tuple", fields)
    if output == "caches":
        return ("tuple", ((tr("one cache per time step"), ("steps", ("tuple", fields))), ("x", None)))
    return None


def _where(at, index, schema):
    """Where item ``index`` of the value at ``at`` is, and its schema. A place is (its indices,
    e.g. "caches[0][1][0]", the label of what is there or None, its time step or None): the
    words name the indices once and what they hold once, "caches[0][1][0] (a_next of time step 1)"."""
    path, label, step = at
    path = f"{path}[{index}]"
    if schema and schema[0] == "tuple" and index < len(schema[1]):
        field, child = schema[1][index]
        return (path, field if step is None else tr("{field} of time step {t}", field=field, t=step), step), child
    if schema and schema[0] == "steps":
        return (path, tr("time step {t}", t=index), index), schema[1]
    return (path, label, step), None


def _shown(at):
    """A place (see _where) as the words name it."""
    path, label, _ = at
    return tr("{path} ({label})", path=path, label=label) if label else path


def _isclose(got, exp):
    """np.isclose(got, exp, rtol=RTOL, atol=ATOL) for float arrays, in a few array operations
    instead of its dozen (the judge compares thousands of arrays per class)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return ((np.abs(got - exp) <= ATOL + RTOL * np.abs(exp)) & np.isfinite(exp)) | (got == exp)


def all_close(got, exp):
    """Whether every number of the float arrays ``got`` and ``exp`` (of one shape) is close
    to the other, as ``compare`` judges them."""
    return bool(_isclose(got, exp).all())


def _describe_values(at, got, exp, show_values, hints=True, dtype=None):
    """What differs between the values ``got`` and ``exp`` at the place ``at``; ``hints``: with
    a guess at the cause (not when a catalogued mistake already says it); ``dtype``: the
    learner's array's, when it was not a float one."""
    path, plain = _shown(at), at[0]
    bad = ~_isclose(got, exp)
    if not bad.any():
        return None
    if not np.all(np.isfinite(got)):
        return tr("{path} contains NaN or infinity: look for an overflow or a division by zero", path=path)
    diff = np.abs(got - exp)
    worst = np.unravel_index(np.argmax(np.where(bad, diff, -1)), got.shape)
    where = "".join(f"[{i}]" for i in worst)
    text = tr("{path} is wrong in {bad} of {size} entries", path=path, bad=int(bad.sum()), size=bad.size)
    if got.ndim == 3 and got.shape[2] > 1:
        steps = [int(t) for t in np.flatnonzero(bad.any(axis=(0, 1)))]
        shown = ", ".join(map(str, steps[:12])) + (", ..." if len(steps) > 12 else "")
        text += ntr(", at time step t = {steps} (of 0..{last})", ", at time steps t = {steps} (of 0..{last})",
                    len(steps), steps=shown, last=got.shape[2] - 1)
    text += tr("; the largest difference is {diff}, at {path}{where}", diff=f"{diff[worst]:.3g}", path=plain, where=where)
    if show_values:
        text += tr(" (yours {got}, expected {expected})", got=f"{got[worst]:.6g}", expected=f"{exp[worst]:.6g}")
    if dtype is not None and dtype.kind in "biu" and exp.dtype.kind == "f":
        text += tr(". It is an array of integers ({dtype}): every value written into it is cut to a whole number; "
                   "make it an array of floats", dtype=dtype)
    elif hints and not np.any(got) and np.any(exp):
        text += tr(". It is all zeros: is it ever filled in?")
    return text


def _compare(got, exp, at, schema, show_values, out, hints=True):
    """Append to ``out`` what differs between ``got`` and ``exp`` at the place ``at`` (see
    _where; or a path alone); recurse into containers."""
    at = (at, None, None) if isinstance(at, str) else at
    path = _shown(at)
    if isinstance(exp, np.ndarray):
        if isinstance(got, (int, float)) and exp.shape == ():
            got = np.asarray(got)
        if not isinstance(got, np.ndarray):
            out.append(tr("{path} is {kind}; expected a numpy array of shape {shape}", path=path, kind=_kind(got),
                          shape=exp.shape))
        elif got.dtype.kind not in "biuf":
            out.append(tr("{path} has dtype {dtype}; expected numbers", path=path, dtype=got.dtype))
        elif got.shape != exp.shape:
            hint = ""
            if sorted(got.shape) == sorted(exp.shape):
                hint = tr(": the same sizes in another order; check which axis is which")
            elif tuple(s for s in exp.shape if s != 1) == tuple(s for s in got.shape if s != 1):
                hint = tr(": keep the column shape, e.g. np.sum(..., axis=1, keepdims=True)")
            out.append(tr("{path} has shape {shape}; expected {expected}{hint}", path=path, shape=got.shape,
                          expected=exp.shape, hint=hint))
        elif isinstance(out, _FirstDifference):   # whether, not what: _describe_values's first test
            if not _isclose(got.astype(float), exp).all():
                out.append(None)
        else:
            text = _describe_values(at, got.astype(float), exp, show_values, hints, got.dtype)
            if text:
                out.append(text)
    elif isinstance(exp, (tuple, list)):
        if not isinstance(got, (tuple, list)):
            out.append(ntr("{path} is {kind}; expected {n} item", "{path} is {kind}; expected {n} items", len(exp),
                           path=path, kind=_kind(got)))
        elif len(got) != len(exp):
            if schema and schema[0] == "steps":
                out.append(tr("{path} has {got} items; expected {expected} (one per time step)", path=path,
                              got=len(got), expected=len(exp)))
            else:
                out.append(tr("{path} has {got} items; expected {expected}", path=path, got=len(got), expected=len(exp)))
        else:
            for i, (g, e) in enumerate(zip(got, exp)):
                where, child = _where(at, i, schema)
                _compare(g, e, where, child, show_values, out, hints)
    elif isinstance(exp, dict):
        if not isinstance(got, dict):
            out.append(tr("{path} is {kind}; expected a dict with keys {keys}", path=path, kind=_kind(got), keys=_join(exp)))
        else:
            for k, e in exp.items():
                if k not in got:
                    out.append(tr("{path} has no key '{key}'", path=path, key=k))
                else:
                    _compare(got[k], e, (f"{at[0]}['{k}']", at[1], at[2]), None, show_values, out, hints)
    elif isinstance(exp, float):
        if not isinstance(got, (int, float)) or not np.isclose(got, exp, rtol=RTOL, atol=ATOL):
            out.append(tr("{path} is {got}; expected {expected}", path=path, got=repr(got), expected=repr(exp))
                       if show_values else tr("{path} is wrong", path=path))
    elif exp is None and got is not None:
        out.append(tr("{path} is {kind}; expected None", path=path, kind=_kind(got)))


def _all_close(got, exp):
    """True when _compare would find nothing, checked in one array operation for all the
    arrays inside (the judge compares about a thousand per submission, almost all right).
    False when it might find something: _compare then says what."""
    gots, exps, stack = [], [], [(got, exp)]
    while stack:
        g, e = stack.pop()
        if isinstance(e, np.ndarray):
            if isinstance(g, (int, float)) and e.shape == ():
                g = np.asarray(g)
            if (not isinstance(g, np.ndarray) or g.dtype.kind not in "biuf" or g.shape != e.shape
                    or e.dtype != np.float64):
                return False
            gots.append(g.astype(float).ravel())
            exps.append(e.ravel())
        elif isinstance(e, (tuple, list)):
            if not isinstance(g, (tuple, list)) or len(g) != len(e):
                return False
            stack.extend(zip(g, e))
        elif isinstance(e, dict):
            if not isinstance(g, dict) or any(k not in g for k in e):
                return False
            stack.extend((g[k], v) for k, v in e.items())
        elif isinstance(e, float) or (e is None and g is not None):
            return False
    return not gots or bool(_isclose(np.concatenate(gots), np.concatenate(exps)).all())


class _Differs(Exception):
    """Raised by _FirstDifference at the first thing _compare finds."""


class _FirstDifference(list):
    """What _compare appends to when only whether an output differs is asked: it stops at the
    first difference, so the words of the others are never made."""

    def append(self, item):
        raise _Differs


def _same(got, exp):
    try:
        _all_close(got, exp) or _compare(got, exp, "", None, False, _FirstDifference(), False)
    except _Differs:
        return False
    return True


def differs(spec, got, expected):
    """Whether one call's outputs differ from ``expected`` anywhere: what
    ``bool(compare(spec, got, expected, words=False)[1])`` says, stopping at the first output
    that differs (a repair's candidates and the catalog's mutants ask only this)."""
    names = list(spec["outputs"])
    if spec["returns_dict"]:
        if not isinstance(got, dict):
            return True
        pairs, exp = ((n, got.get(n, _MISSING)) for n in names), expected
    else:
        if not isinstance(got, (tuple, list)) or len(got) != len(names):
            return True
        pairs, exp = zip(names, got), dict(zip(names, expected))
    return any(value is _MISSING or not _same(value, exp[name]) for name, value in pairs)


def compare(spec, got, expected, show_values=True, hints=True, words=True):
    """Compare one call's outputs. Returns (problems in words, names of wrong outputs).
    ``hints``: with guesses at a cause (left out when a catalogued mistake is named).
    ``words=False``: each output compared only up to its first difference, and described in no
    words (the catalog's search compares thousands of outputs): the names are compare's; the
    problems are empty unless the call returned the wrong kind or number of values, or a dict
    without one of its keys. ``differs`` says whether there is a wrong output at all."""
    names = list(spec["outputs"])
    if spec["returns_dict"]:
        if not isinstance(got, dict):
            return [tr("{name} returned {kind}; expected a dict with keys {keys}", name=spec["name"], kind=_kind(got),
                       keys=_join(names))], set(names)
        pairs = [(n, got.get(n, _MISSING)) for n in names]
    else:
        if not isinstance(got, (tuple, list)):
            return [tr("{name} returned {kind}; expected {count} values: {names}", name=spec["name"], kind=_kind(got),
                       count=len(names), names=_join(names))], set(names)
        if len(got) != len(names):
            return [tr("{name} returned {got} values; expected {count}: {names}", name=spec["name"], got=len(got),
                       count=len(names), names=_join(names))], set(names)
        pairs = list(zip(names, got))
    exp = dict(zip(names, expected)) if not spec["returns_dict"] else expected
    problems, wrong = [], set()
    for position, (name, value) in enumerate(pairs, 1):
        found = []
        if value is _MISSING:
            found.append(tr("the returned dict has no key '{key}'", key=name))
        elif not words:   # only whether it differs
            if not _same(value, exp[name]):
                wrong.add(name)
            continue
        elif not _all_close(value, exp[name]):
            _compare(value, exp[name], name, _schema(spec, name), show_values, found, hints)
        if found and not spec["returns_dict"] and found[0].startswith(name + " "):
            found[0] = tr("{name} (returned value {position} of {count})", name=name, position=position,
                          count=len(names)) + found[0][len(name):]
        if found:
            wrong.add(name)
            swapped = [o for o in names if o != name and value is not _MISSING and _same(value, exp[o])]
            if swapped:
                found.append(tr("{name} holds what {other} should: check the order ({names}) and the keys", name=name,
                                other=swapped[0], names=_join(names)) if spec["returns_dict"] else
                             tr("{name} holds what {other} should: check the order ({names})", name=name,
                                other=swapped[0], names=_join(names)))
            problems += found[:4] + ([tr("... and {more} more differences in {name}", more=len(found) - 4, name=name)]
                                     if len(found) > 4 else [])
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
    for p in paths[:16]:
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
    return _same_print(a, sorted(p for p in set(a) | set(b) if _differs(a.get(p), b.get(p))), print_)


def _same_print(a, paths, print_):
    if paths != print_["paths"]:
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
    # how each output differs from the expected one, worked out once for every known mistake
    seen = []
    for got, case in zip(outputs, data["cases"][name]):
        a, b = dict(leaves(got)), dict(leaves(decode(case["expected"])))
        seen.append((a, sorted(p for p in set(a) | set(b) if _differs(a.get(p), b.get(p)))))
    for known in data.get("mistakes", {}).get(name, []) if outputs else []:
        if all(_same_print(a, paths, p) for (a, paths), p in zip(seen, known["cases"])):
            named.append(known)
    if named:
        fewest = min(len(k["codes"]) for k in named)
        named = [k for k in named if len(k["codes"]) == fewest]
    elif outputs:
        named = _output_by_output(seen, data.get("mistakes", {}).get(name, []))
    if fn is not None:
        for d in data.get("detectors", {}).get(name, []):
            if d["detector"] == "reads_globals" and data_globals(fn):
                named.append({"codes": d["codes"], "feedback": d["feedback"]})
    feedback = {}
    for k in named:
        for code, text in zip(k["codes"], k["feedback"]):
            feedback[code] = text
    return feedback


def _top(path):
    """The returned value a leaf path belongs to: "[2]" of "[2][0]", "['dWf']" of "['dWf']"."""
    found = re.match(r"\[[^\]]*\]", path)
    return found.group(0) if found else path


def _output_by_output(seen, known):
    """Single mistakes that each reproduce some of the wrong returned values exactly (and
    change none that is right), when together they account for all of them."""
    wrong = {_top(p) for _, paths in seen for p in paths}
    explained, found = set(), []
    for k in known:
        if len(k["codes"]) != 1:
            continue
        changed = {_top(p) for c in k["cases"] for p in c["paths"]}
        if not changed or not changed <= wrong:
            continue
        same = set(changed)
        for (a, paths), print_ in zip(seen, k["cases"]):
            for out in list(same):
                mine = [p for p in paths if _top(p) == out]
                theirs = [p for p in print_["paths"] if _top(p) == out]
                samples = [x for x in print_["samples"] if _top(x["path"]) == out]
                if mine != theirs or not _same_print(a, [], {"paths": [], "samples": samples}):
                    same.discard(out)
        if same:
            explained |= same
            found.append(k)
    return found if found and explained == wrong else []


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
    return tr(" (in {function}, line {line}:{code})", function=f.name, line=f.lineno, code=code)


def exception_text(exc):
    message = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    text = f"{type(exc).__name__}" + (f": {message}" if message else "")
    removed = re.match(r"module 'numpy' has no attribute '(\w+)'", message)
    if isinstance(exc, AttributeError) and removed and removed.group(1) in REMOVED:
        alias = removed.group(1)
        text += (tr(" (np.{alias} was removed from NumPy in version 1.24: write {builtin}, or np.{builtin}64 for a "
                    "numpy type)", alias=alias, builtin=REMOVED[alias])
                 if alias in ("float", "int", "complex") else
                 tr(" (np.{alias} was removed from NumPy in version 1.24: write {builtin})", alias=alias,
                    builtin=REMOVED[alias]))
    return text


def syntax_problem(source, name):
    """Where ``source`` (the cell that should define ``name``) fails to compile, with the line
    and a caret under the place, or "" when it compiles."""
    try:
        compile(source, f"<cell of {name}>", "exec")
    except SyntaxError as exc:
        line = (exc.text or "").rstrip("\n")
        caret = " " * max(0, (exc.offset or 1) - 1 - (len(line) - len(line.lstrip()))) + "^"
        return tr("the cell that defines {name} does not compile: {error}: {message}, at line {line}:\n"
                  "    {code}\n    {caret}", name=name, error=type(exc).__name__, message=exc.msg, line=exc.lineno,
                  code=line.strip(), caret=caret)
    return ""


def _cell_of(name, namespace):
    """The last cell this session ran that defines ``name`` (IPython keeps them in ``In``)."""
    for source in reversed(namespace.get("In", []) or []):
        if isinstance(source, str) and re.search(rf"^\s*def\s+{name}\s*\(", source, re.M):
            return source
    return None


def data_globals(fn):
    """Names the function reads from its module's globals that hold weights-like data
    (dicts, arrays): a function that depends on the notebook's variables instead of its
    arguments. Constants (numbers, tuples of names) are fine."""
    scope = getattr(fn, "__globals__", {})
    codes, stack = [], [getattr(fn, "__code__", None)]
    while stack:
        code = stack.pop()
        if code is not None:
            codes.append(code)
            stack += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    # every name an instruction loads is in co_names: most functions name no such global at
    # all, and then need no disassembly (the grader asks this of every function it judges)
    if not any(n in scope and isinstance(scope[n], (dict, np.ndarray)) for c in codes for n in c.co_names):
        return []
    names = {i.argval for c in codes for i in dis.get_instructions(c) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    return sorted(n for n in names if n in scope and isinstance(scope[n], (dict, np.ndarray))
                  and not n.startswith("__"))


# --- The student-side check ---------------------------------------------------------------

class CheckFailed(Exception):
    """Raised by a failing check; shows its message without a long traceback."""

    def _render_traceback_(self):
        return ["\x1b[0;31m" + "✗ " + str(self) + "\x1b[0m"]


_data = None


class _ByFunction(Mapping):
    """A section of check_data.json read one function at a time (the file's "offsets" say
    where each function's value is): a check decodes its own function's cases only, and the
    known mistakes and the trace only when the function is wrong."""

    def __init__(self, raw, where):
        self._raw, self._where, self._read = raw, where, {}

    def __getitem__(self, name):
        if name not in self._read:
            start, end = self._where[name]
            self._read[name] = json.loads(self._raw[start:end])
        return self._read[name]

    def __iter__(self):
        return iter(self._where)

    def __len__(self):
        return len(self._where)


def _load():
    """check_data.json, its sections decoded as they are read: the file's last member says where
    each value is, so a check never decodes the whole file (authoring/check_data.py)."""
    global _data
    if _data is None:
        with open(DATA_FILE, "rb") as f:
            raw = f.read()
        offsets = json.loads(raw[raw.rindex(b',"offsets":') + len(b',"offsets":'):raw.rindex(b"}")])
        _data = {section: _ByFunction(raw, where) if isinstance(where, dict) else json.loads(raw[where[0]:where[1]])
                 for section, where in offsets.items()}
    return _data


def _user_namespace():
    frame = sys._getframe(2)
    return frame.f_globals


def check(name, namespace=None):
    """Check your ``name`` function on the worked examples; say what is wrong, in words.
    It looks the function up among your notebook's names (or in ``namespace``)."""
    namespace = _user_namespace() if namespace is None else namespace
    data = _load()
    fn = _function_to_check(name, namespace, data)
    spec, cases = data["functions"][name], data["cases"][name]
    outputs, failed, findings = [], None, []
    callee = _failing_callee(spec, namespace)
    for case in cases:
        inputs = decode(case["inputs"])
        recorder = _watch(spec, data, namespace, inputs)
        try:
            got = fn(*inputs)
        except Exception as exc:
            raise CheckFailed(_raised(name, fn, exc, case, data, spec, inputs, recorder, callee)) from None
        finally:
            if recorder is not None:
                namespace[recorder.callee_name] = recorder.fn
        outputs.append(got)
        findings.append(_findings(spec, data, inputs, got, recorder) if recorder is not None else None)
        problems, _ = compare(spec, got, decode(case["expected"]))
        if problems and failed is None:
            failed = (case, problems, got)
    if failed:
        raise CheckFailed(_wrong(name, fn, data, failed, outputs, findings, callee))
    print("✓ " + ntr("{name}: all checks passed ({n} example).", "{name}: all checks passed ({n} examples).",
                     len(cases), name=name))


def _function_to_check(name, namespace, data):
    """The learner's function ``name``, or CheckFailed saying why there is none to check."""
    fn = namespace.get(name)
    if name not in data["functions"]:
        raise CheckFailed(tr("there is no exercise called {name}", name=repr(name)))
    source = _cell_of(name, namespace)
    problem = syntax_problem(source, name) if source is not None and (fn is None or callable(fn)) else ""
    if problem:
        raise CheckFailed(problem[0].upper() + problem[1:] + (tr("\n(The {name} you are checking is an older version, "
                                                                 "from before this edit.)", name=name)
                                                              if fn is not None else ""))
    if fn is None:
        raise CheckFailed(tr("{name} is not defined yet: run the cell where you wrote it, and check that the def line "
                             "still says `def {name}(...)`.", name=name))
    if not callable(fn):
        raise CheckFailed(tr("{name} is {kind}, not a function: was the name reused for a variable?", name=name,
                             kind=_kind(fn)))
    return fn


def _raised(name, fn, exc, case, data, spec, inputs, recorder, callee):
    """What to say when the function raised ``exc`` on a case."""
    if isinstance(exc, NotImplementedError):
        unwritten = _unwritten_callee(exc, name, spec.get("callees", ()))
        if unwritten:
            return tr("{name} calls {callee}, which is not written yet: write {callee} first (replace its "
                      "`raise NotImplementedError()` with your code), then check {name} again.", name=name, callee=unwritten)
        return tr("{name} is not written yet: replace `raise NotImplementedError()` with your code.", name=name)
    text = exception_text(exc)
    known = recognise(name, [], fn)
    known.update(_by_exception(data, name, text))
    if recorder is not None:
        known.update(_by_loop(data, name, [_findings(spec, data, inputs, None, recorder)]))
    lines = [tr("{name} raised {error}{where}, on {case}.", name=name, error=text, where=student_line(exc),
                case=case_label(case["label"]))]
    if callee and not known:
        lines = [tr("{name} calls {callee}, which does not pass its own check yet: fix {callee} first ({name} may "
                    "already be right).", name=name, callee=callee)] + lines
    findings = [_findings(spec, data, inputs, None, recorder)] if recorder is not None else []
    return "\n".join(lines + [f"  [{c}] {_said(data, name, c, t, findings)}" for c, t in known.items()])


def _unwritten_callee(exc, name, callees):
    """The callee of ``name`` that raised ``exc`` (its stub's NotImplementedError), if the
    error came from below ``name``'s own frame; None if ``name`` itself raised it."""
    frames = [f.name for f in traceback.extract_tb(exc.__traceback__)]
    if not callees or name not in frames or frames[-1] == name:
        return None
    below = frames[len(frames) - frames[::-1].index(name):]
    return next((c for c in callees if c in below), callees[0])


def _wrong(name, fn, data, failed, outputs, findings, callee):
    """What to say when the function's outputs differ from the expected ones."""
    case, problems, got = failed
    known = _by_loop(data, name, findings)
    if not known and callee:
        return tr("{name} does not give the expected values, but it calls {callee}, which does not pass its own "
                  "check yet. Fix {callee} first: {name} may already be right (the way it drives {callee} looks "
                  "right).", name=name, callee=callee)
    if not known:
        known = recognise(name, outputs, fn)
    lines = [tr("{name} is not right yet.", name=name)]
    if known:   # the mistake's words say the cause: no guess at it on every line
        problems, _ = compare(data["functions"][name], got, decode(case["expected"]), hints=False)
        lines.append(tr("This looks like a mistake many learners make:"))
        lines += [f"  [{code}] {_said(data, name, code, text, findings)}" for code, text in known.items()]
    elif not callee:
        try:
            lines += where_words(data["functions"][name], locate(name, fn))
        except Exception:   # code shaped in a way the probes did not foresee: say nothing of it
            pass
    most = 4 if known else 8
    lines.append(tr("What differs, on {case}:", case=case_label(case["label"])))
    lines += [f"  - {p}" for p in problems[:most]]
    if len(problems) > most:
        lines.append("  " + tr("... and {more} more.", more=len(problems) - most))
    loop = unexplained(findings) if not known else []
    if loop:
        lines.append(tr("How it drives its cell:"))
        lines += [f"  - {t}" for t in loop[:3]]
    if callee:
        lines.append("  " + tr("Note: {name} calls {callee}, which does not pass its own check yet. Fix {callee} "
                               "first.", name=name, callee=callee))
    return "\n".join(lines)


def _watch(spec, data, namespace, inputs):
    """Put a Recorder in place of the cell a sequence function calls (the learner's own)."""
    p = spec.get("protocol")
    cell = namespace.get(p["callee"]) if p else None
    if not callable(cell) or isinstance(cell, Recorder):
        return None
    recorder = Recorder(cell, data["functions"][p["callee"]]["args"], spec["args"], inputs)
    recorder.callee_name = p["callee"]
    namespace[p["callee"]] = recorder
    return recorder


def _findings(spec, data, inputs, got, recorder):
    try:
        return protocol(spec, data["functions"], dict(zip(spec["args"], inputs)), got, recorder.calls)
    except Exception:   # a loop shaped in a way the analysis did not foresee: say nothing of it
        return None


def _by_loop(data, name, findings):
    behaviours = data.get("behaviours", {}).get(name, [])
    codes = by_protocol(data["functions"][name], behaviours, findings)
    words = {b["code"]: b["feedback"] for b in behaviours}
    return {code: words[code] for code in codes}


def _said(data, name, code, text, findings=()):
    """A catalogued mistake's words, in the learner's language, for the function ``name``."""
    behaviour = [(b["aspect"], b["label"]) for b in data.get("behaviours", {}).get(name, []) if b["code"] == code]
    return mistake_words(text, behaviour_outputs(data["functions"][name], behaviour, findings))


def mistake_words(text, outputs=()):
    """A catalogued mistake's words in the learner's language, ``{outputs}`` in them (the
    returned values it was seen in) filled in."""
    return tr(text, outputs=_join(outputs)) if "{outputs}" in text else tr(text)


def behaviour_outputs(spec, behaviour, findings=()):
    """The returned values a mistake's words name where they say {outputs}: those in which
    ``findings`` (one protocol() per case) show a label of its ``behaviour`` ((aspect, label)
    pairs), in the order the function returns them; every value its aspects stand for when
    none does (words said without a run, or a mistake named from its outputs)."""
    labels = {}
    for aspect, label in behaviour:
        for name in _aspect_of(spec, aspect):
            labels.setdefault(name, set()).add(label)
    seen = set()
    for f in findings:
        for name, wanted in labels.items():
            label = (f or {}).get(name, ("ok", ""))[0]
            if label != "ok" and (label in wanted or "*" in wanted):
                seen.add(name)
    order = list(spec.get("outputs", ()))
    return sorted(seen or labels, key=lambda n: (order.index(n) if n in order else len(order), n))


REMOVED = {"float": "float", "int": "int", "bool": "bool", "object": "object", "complex": "complex",
           "str": "str", "long": "int", "unicode": "str"}


def _by_exception(data, name, text):
    """Known mistakes an exception's text proves (a weight read from the notebook's variables)."""
    import re
    return {r["code"]: r["feedback"] for r in data.get("raises", {}).get(name, []) if re.search(r["pattern"], text)}


def _failing_callee(spec, namespace):
    """The first function this one calls that fails its own check (learners chase the
    wrong bug for days when a correct function calls a broken one)."""
    data = _load()
    for callee in spec.get("callees", ()):
        fn = namespace.get(callee)
        if fn is None:
            return callee
        try:
            if any(differs(data["functions"][callee], fn(*decode(c["inputs"])), decode(c["expected"]))
                   for c in data["cases"][callee]):
                return callee
        except Exception:
            return callee
    return None



# --- Watching a sequence function call its cell ---------------------------------------------
#
# A sequence function (a forward or backward pass through time) is a loop around a cell. Handing it a
# recording cell shows what it does at each step, whatever its code looks like: which slice
# and which state it passes, in which order the steps run, and how what it returns relates to
# what the cell returned. The cell is the course's own in the grader, the learner's own in the
# checks: either way the loop is judged against what the cell really returned.

class Ref:
    """An argument that is one of the function's own inputs (or an item of one), by identity."""

    def __init__(self, path):
        self.path = path

    def __repr__(self):
        return self.path


def _identities(names, inputs):
    """id -> path for each input and the items of its tuples and lists (two levels)."""
    known = {}
    for name, value in zip(names, inputs):
        stack = [(name, value, 0)]
        while stack:
            path, obj, depth = stack.pop()
            known.setdefault(id(obj), path)
            if isinstance(obj, (tuple, list)) and depth < 2 and len(obj) <= 1000:
                stack += [(f"{path}[{i}]", item, depth + 1) for i, item in enumerate(obj)]
    return known


def _snapshot(x, _depth=0):
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, (tuple, list)) and _depth < 4 and len(x) <= 1000:
        return type(x)(_snapshot(v, _depth + 1) for v in x)
    if isinstance(x, dict) and _depth < 4:
        return {k: _snapshot(v, _depth + 1) for k, v in x.items()}
    return x


class Recorder:
    """Stands in for the cell ``fn``: passes every call on and keeps a copy of its arguments
    (or, for the function's own inputs, a Ref) and of what it returned, at that moment."""

    def __init__(self, fn, arg_names, input_names, inputs, limit=1000):
        self.fn, self.arg_names, self.limit, self.calls = fn, list(arg_names), limit, []
        self.known = _identities(input_names, inputs)
        self.__name__ = getattr(fn, "__name__", "cell")

    def __call__(self, *args, **kwargs):
        named = list(args) + [kwargs[n] for n in self.arg_names[len(args):] if n in kwargs]
        entry = {"args": [Ref(self.known[id(a)]) if id(a) in self.known and not isinstance(a, dict)
                          else _snapshot(a) for a in named]}
        if len(self.calls) < self.limit:
            self.calls.append(entry)
        result = self.fn(*args, **kwargs)
        entry["result"] = _snapshot(result)
        return result


def encode_calls(calls):
    return [{"args": [{"ref": a.path} if isinstance(a, Ref) else encode(a) for a in c["args"]],
             "result": encode(c.get("result"))} for c in calls]


def decode_calls(nodes):
    return [{"args": [Ref(str(a["ref"])) if "ref" in a else decode(a) for a in c["args"]],
             "result": decode(c["result"])} for c in nodes]


def _close(a, b):
    """np.allclose(a, b, rtol=RTOL, atol=ATOL) for two arrays of numbers of one shape, in a few
    array operations (the loop's protocol compares each recorded call with its neighbours')."""
    return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
            and a.dtype.kind in "biuf" and b.dtype.kind in "biuf"
            and bool(_isclose(a.astype(float), b.astype(float)).all()))


def _field(result, spec_out, name):
    """A named item of a cell's result (a tuple in order, or a dict)."""
    if isinstance(result, dict):
        return result.get(name)
    if isinstance(result, (tuple, list)) and name in spec_out and len(result) == len(spec_out):
        return result[spec_out.index(name)]
    return None


def _resolve(ref, inputs):
    """The value a Ref path such as ``caches[0][3]`` names among the inputs."""
    head, *index = ref.path.replace("]", "").split("[")
    value = inputs.get(head)
    for i in index:
        value = value[int(i)]
    return value


def protocol(spec, cells, inputs, got, calls):
    """What the loop did, aspect by aspect: {aspect: (label, detail)}. Labels: "ok", a named
    behaviour (e.g. "upstream_only", "last"), or "unknown". ``spec`` is the sequence
    function's, ``cells`` maps a function's name to its spec, ``inputs`` maps argument names
    to values. None when the function never called its cell."""
    p = spec.get("protocol")
    if not p or not calls:
        return None
    cell = cells[p["callee"]]
    source, axis = p["steps_from"]
    T = np.shape(inputs[source])[axis]
    found = {}
    steps = []
    for call in calls:
        args = dict(zip(cell["args"], call["args"]))
        steps.append(_which_step(p, args, inputs, T))
    if any(s == "whole" for s in steps):
        found["cache"] = ("whole", tr("{callee} was given the whole list of caches, not the cache of one step",
                                      callee=p["callee"]))
        return found
    expected = list(reversed(range(T))) if p["reverse"] else list(range(T))
    if steps == expected:
        found["order"] = ("ok", "")
    elif steps == expected[::-1] and T > 1:
        found["order"] = ("reversed", tr("the steps ran in the order t = {steps}", steps=", ".join(map(str, steps[:6]))))
    elif len(steps) != T:
        found["order"] = ("count", tr("{callee} was called {calls} times for {steps} time steps", callee=p["callee"],
                                      calls=len(steps), steps=T))
    else:
        found["order"] = ("unknown", tr("the calls handled the steps t = {steps}", steps=", ".join(map(str, steps[:8]))))
    for role in p["args"]:
        if "carry" in role:
            found[role["name"]] = _carried(role, cell, inputs, calls, steps, T)
    if got is not None:
        for name, (how, field) in p["outputs"].items():
            value = _field(got, spec["outputs"], name)
            if value is not None:
                found[name] = _returned(how, field, value, cell, inputs, calls, steps, p, name)
                # a final value of zeros is what a carried gradient never updated leaves behind
                stale = [r["name"] for r in p["args"] if r.get("carry") == field
                         and found.get(r["name"], ("ok",))[0] in ("upstream_only", "init")]
                if how == "final" and found[name][0] == "zeros" and stale:
                    found[name] = ("ok", "")
    return found


def _which_step(p, args, inputs, T):
    for role in p["args"]:
        value = args.get(role["name"])
        if "slice" in role:
            whole = inputs[role["slice"]]
            for t in range(T):
                if _close(value, whole[:, :, t]):
                    return t
            return None
        if "item" in role:
            if isinstance(value, Ref):
                parts = value.path.replace("]", "").split("[")
                if parts[0] == role["item"] and len(parts) == 3 and parts[1] == "0":
                    return int(parts[2])
                if parts[0] == role["item"]:
                    return "whole"
                return None
            steps = inputs[role["item"]][0]
            for t, cache in enumerate(steps):
                if _same(value, cache):
                    return t
            return "whole" if isinstance(value, (tuple, list)) and len(value) in (2, len(steps)) \
                and not isinstance(value[0], np.ndarray) else None
    return None


def _carried(role, cell, inputs, calls, steps, T):
    """How an argument carried from step to step was formed, e.g. ("upstream_only", ""):
    the label that explains every call; "first:<label>" when only the first call is off."""
    name, carry = role["name"], role["carry"]
    init = inputs.get(role["init"])
    first, later = None, []
    for k, call in enumerate(calls):
        value = dict(zip(cell["args"], call["args"])).get(name)
        if isinstance(value, Ref):
            value = _resolve(value, inputs)
        t = steps[k] if isinstance(steps[k], int) else None
        if not isinstance(value, np.ndarray):
            return ("unknown", tr("the {name} passed at step {t} is not an array", name=name, t=t))
        up = inputs[role["upstream"]][:, :, t] if role.get("upstream") and t is not None else None
        base = up if up is not None else 0
        start = init if init is not None else np.zeros(value.shape)
        prev = start if k == 0 else _field(calls[k - 1].get("result"), cell["outputs"], carry)
        if not isinstance(prev, np.ndarray):
            return ("unknown", "")
        if k == 0:
            options = {"ok": base + start, "zeros": base + np.zeros(value.shape)}
            if role.get("alt_init") in inputs:
                options[role["alt_init"]] = base + inputs[role["alt_init"]]
            if up is not None:
                options["carry_only"] = start
        else:
            options = {"ok": base + prev, "init": base + start, "twice": base + 2 * prev}
            if up is not None:
                options.update(upstream_only=up, carry_only=prev)
        matching = {label for label, v in options.items() if _close(value, np.asarray(v, dtype=float))}
        if k == 0:
            first = "ok" if "ok" in matching else (sorted(matching)[0] if matching else "unknown")
        else:
            later.append(matching)
    if later and not all("ok" in m for m in later):
        common = set.intersection(*later) - {"ok"}
        for label in ("upstream_only", "carry_only", "init", "twice"):
            if label in common:
                return (label, "")
        bad = [steps[k + 1] for k, m in enumerate(later) if "ok" not in m][:6]
        at = ", ".join(map(str, bad))
        if role.get("upstream"):
            return ("unknown", tr("the {name} passed at step t = {steps} is not {upstream}[:, :, t] plus the {carry} the "
                                  "previous call returned", name=name, steps=at, upstream=role["upstream"], carry=carry))
        return ("unknown", tr("the {name} passed at step t = {steps} is not the {carry} the previous call returned",
                              name=name, steps=at, carry=carry))
    if first == "carry_only" and not later:   # what the later calls would show, seen on the only call
        return (first, "")
    if first not in (None, "ok"):
        # only the first call is off (the later ones are right): a behaviour of every step,
        # such as carry_only, would be false for all but this one
        return ("first:" + first, "" if first not in ("unknown", "carry_only") else
                tr("the {name} passed at the first step is not {expected}", name=name,
                   expected=_first_expected(role, steps[0], T)))
    return ("ok", "")


def _first_expected(role, t, T):
    """What the first call should be given, in words. An argument that also receives an
    upstream gradient starts from that step's upstream gradient plus the initial value, not
    from the initial value alone: a hint naming only the latter would have the learner drop
    the upstream gradient."""
    up = role.get("upstream")
    if not up:
        return role["init"]
    step = "T_x-1" if t == T - 1 or not isinstance(t, int) else t
    return tr("{upstream}[:, :, {step}] (the upstream gradient {upstream} of that step) plus {init}", upstream=up,
              step=step, init=role["init"])


def _returned(how, field, value, cell, inputs, calls, steps, p, name):
    """How a returned value relates to what the cell returned at each step."""
    results = [c.get("result") for c in calls]
    if any(r is None for r in results):
        return ("unknown", "")
    per = [_field(r, cell["outputs"], field) for r in results]
    if how == "caches":
        return _returned_caches(value, per, p, name)
    if any(not isinstance(v, np.ndarray) for v in per):
        return ("unknown", "")
    if how == "stack":
        return _returned_stack(field, value, cell, results, per, steps, name)
    if how == "final":
        return _returned_final(field, value, inputs, per, steps, p, name)
    if how == "sum":
        return _returned_sum(field, value, per, name)
    return ("unknown", "")


def _returned_stack(field, value, cell, results, per, steps, name):
    """A value stacked over the steps: each slice is what the cell returned at that step."""
    if not isinstance(value, np.ndarray) or value.ndim != 3 or any(not isinstance(s, int) for s in steps) \
            or value.shape[2] <= max(steps):
        return ("unknown", "")
    for other in [field] + [o for o in cell["outputs"] if o != field]:
        vals = [_field(r, cell["outputs"], other) for r in results]
        if all(isinstance(v, np.ndarray) and v.shape == value.shape[:2] for v in vals) and \
                all(_close(value[:, :, t], v) for t, v in zip(steps, vals)):
            return ("ok", "") if other == field else (
                "from:" + other, tr("{name}[:, :, t] holds the {other} of step t, not its {field}", name=name,
                                    other=other, field=field))
    if value.shape[:2] != per[0].shape:
        return ("unknown", "")
    bad = [t for t, v in zip(steps, per) if not _close(value[:, :, t], v)]
    return ("unknown", tr("{name}[:, :, t] is not the {field} returned for step t, at t = {steps}", name=name,
                          field=field, steps=", ".join(map(str, sorted(bad)[:8]))))


def _returned_final(field, value, inputs, per, steps, p, name):
    """A value the last call returned (a gradient carried back to the first step)."""
    options = {"ok": per[-1], "first_call": per[0]}
    up = p["args"][0].get("upstream")
    if up and all(isinstance(s, int) for s in steps):
        first_step = inputs[up][:, :, min(steps)]
        options["upstream"] = first_step
        options["plus_upstream"] = per[-1] + first_step
    options["zeros"] = np.zeros_like(per[-1])
    for label, v in options.items():
        if _close(value, v) and (label == "ok" or not _close(v, per[-1])):
            return (label, "")
    return ("unknown", tr("{name} is not the {field} returned by the last call", name=name, field=field))


def _returned_sum(field, value, per, name):
    """A value summed over the steps (a weight's gradient), and the usual wrong totals."""
    total = sum(per)
    doubling = per[0]   # the running total added to itself as well as the step: t = 2 t + g
    for g in per[1:]:
        doubling = 2 * doubling + g
    options = {"ok": total, "last": per[-1], "first": per[0], "twice": 2 * total,
               "twice_last": total + per[-1], "doubling": doubling, "mean": total / len(per)}
    for label, v in options.items():
        if _close(value, v) and (label == "ok" or not _close(v, total)):
            return (label, "")
    return ("unknown", tr("{name} is not the sum over the steps of the {field} the calls returned", name=name,
                          field=field))


def _returned_caches(value, caches, p, name):
    """The caches a sequence's forward returns: the cell's own, one per step, unchanged."""
    if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], list)):
        return ("layout", tr("{name} should be a tuple (list of the caches of every step, x)", name=name))
    items = value[0]
    if len(items) != len(caches):
        return ("layout", tr("{name}[0] holds {caches} caches for {steps} steps", name=name, caches=len(items),
                             steps=len(caches)))
    if all(_same(a, b) for a, b in zip(items, caches)):
        return ("ok", "")
    if all(isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) for a, b in zip(items, caches)):
        return ("changed", tr("the caches in {name} no longer hold what {callee} returned: a value stored in them was "
                              "changed afterwards", name=name, callee=p["callee"]))
    return ("layout", tr("{name}[0] does not hold the caches {callee} returned, one per step", name=name,
                         callee=p["callee"]))


def _aspect_of(spec, aspect):
    """The aspects a behaviour's aspect names: "sum" and "final" stand for every returned value
    of that kind, anything else for itself."""
    outputs = spec.get("protocol", {}).get("outputs", {})
    if aspect in ("sum", "final", "stack"):
        return [name for name, (how, _) in outputs.items() if how == aspect]
    return [aspect]


def by_protocol(spec, behaviours, findings):
    """Codes whose behaviour every case agrees with: seen in at least one case, and in no case
    contradicted by another wrong label of the same aspect. ``behaviours`` are
    {"code", "aspect", "label"} ("*" for any wrong label); ``findings`` one protocol() per case."""
    findings = [f for f in findings if f]
    p = spec.get("protocol", {})
    # a carried gradient never updated leaves zeros in what is returned from it, in every case
    for role in p.get("args", ()):
        if role.get("carry") and any(f.get(role["name"], ("ok",))[0] in ("upstream_only", "init") for f in findings):
            for name, (how, field) in p.get("outputs", {}).items():
                if how == "final" and field == role["carry"]:
                    findings = [dict(f, **{name: ("ok", "")}) if f.get(name, ("ok",))[0] == "zeros" else f
                                for f in findings]
    named = []
    for b in behaviours:
        seen = contradicted = False
        # the labels of one code's aspect all agree with it (a case may not tell them apart)
        labels = {c["label"] for c in behaviours if c["code"] == b["code"] and c["aspect"] == b["aspect"]}
        for f in findings:
            for aspect in _aspect_of(spec, b["aspect"]):
                label = f.get(aspect, ("ok", ""))[0]
                if label == "ok":
                    continue
                if label in labels and b["label"] != label and b["label"] != "*":
                    continue
                if b["label"] in (label, "*"):   # "first:x" (the first call alone) is not x
                    seen = True
                elif label != "unknown":
                    contradicted = True
        if seen and not contradicted and b["code"] not in named:
            named.append(b["code"])
    return named


def unexplained(findings, explained_aspects=()):
    """Sentences for the aspects that are wrong in a way no behaviour names: one an aspect,
    from the first case where it is wrong (the others' would repeat it with their own steps)."""
    lines, said = [], set(explained_aspects)
    for f in findings:
        for aspect, (label, detail) in (f or {}).items():
            if label != "ok" and aspect not in said and detail:
                said.add(aspect)
                lines.append(detail)
    return lines


# --- Where the first wrong value is computed -----------------------------------------------
#
# For a wrong function whose mistake the catalog does not name. Its own code runs again on
# the worked example with a probe after every statement that assigns a value (``probed``),
# and each value is compared with the values the reference computes on the same inputs
# (check_data.json's "trace": numbers, no code). A line whose value is none of them, and whose
# value replaced by one of them makes wrong outputs right and no right output wrong, is where
# the first wrong value is computed; the value that mends it names the quantity the line
# should compute. Where no line can be followed (one long expression, a stacked layout whose
# blocks are never assigned), the pattern of right and wrong outputs says what is known.

PROBE = "__probe__"
LOCATE_TRIES = 300     # re-runs of the learner's function, at most, to follow it (counted: the same on any machine)
LOCATE_SECONDS = 3.0   # and a guard for a function that takes long per call: CPU time (a busy machine
# does not stretch it), or three times as long of wall time (a function that sleeps)


def _probe_targets(target):
    """The expressions to read back after an assignment to ``target``."""
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [p for t in target.elts for p in _probe_targets(t)]
    if isinstance(target, ast.Starred):
        return _probe_targets(target.value)
    if isinstance(target, ast.Subscript):
        if isinstance(target.slice, ast.Constant) and isinstance(target.value, ast.Name):
            return [target]          # grads["dWax"] += ...: that item
        base = target.value
        while isinstance(base, ast.Subscript):
            base = base.value
        return [ast.Starred(base)] if isinstance(base, ast.Name) else []   # a[:, :, t] = ...: the array, in place
    return []


def _assigned(stmt):
    if isinstance(stmt, ast.Assign):
        return stmt.targets
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
        return [stmt.target]
    return []


def probed(statements, parts=None):
    """``statements`` with ``x = __probe__(line, "x", x)`` after each one that assigns x
    (in loops and branches too). ``parts``, an ast.NodeTransformer, may rewrite what is
    assigned (the course's build uses it to see inside the reference's expressions)."""
    out = []
    for stmt in statements:
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                setattr(stmt, field, probed(inner, parts))
        for handler in getattr(stmt, "handlers", ()):
            handler.body = probed(handler.body, parts)
        if parts is not None and _assigned(stmt) and not (isinstance(stmt.value, ast.Tuple) and
                                                         isinstance(_assigned(stmt)[0], (ast.Tuple, ast.List))):
            owner = _assigned(stmt)[0]   # a, b = f(...): the parts belong to the first
            parts.owner = ast.unparse(owner.elts[0] if isinstance(owner, (ast.Tuple, ast.List)) else owner)
            stmt.value = parts.visit(stmt.value)
        if parts is None and isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Dict):
            # a returned dict's items, each under its key: {"dbo": dit} computes dbo on that line
            stmt.value.values = [v if not (isinstance(k, ast.Constant) and isinstance(k.value, str)) else
                                 ast.copy_location(ast.Call(ast.Name(PROBE, ast.Load()),
                                                            [ast.Constant(v.lineno), ast.Constant(k.value), v], []), v)
                                 for k, v in zip(stmt.value.keys, stmt.value.values)]
        out.append(stmt)
        for target in _assigned(stmt):
            for p in _probe_targets(target):
                in_place = isinstance(p, ast.Starred)   # the array another name may share: written, not rebound
                text = ast.unparse(p.value if in_place else p)
                probe = ast.parse(f"{text} = {PROBE}({stmt.lineno}, {text!r}, {text}, {in_place})").body[0]
                for node in ast.walk(probe):
                    node.lineno = node.end_lineno = stmt.lineno
                    node.col_offset = node.end_col_offset = 0
                out.append(probe)
    return out


def probed_function(fn, parts=None):
    """(a copy of ``fn`` compiled from its source with probes, its source's lines), or None
    when its source cannot be read. The copy reads the same globals as ``fn``; it looks up
    ``__probe__`` among them, in a dict of its own."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
    except Exception:
        return None
    defs = [d for d in tree.body if isinstance(d, ast.FunctionDef) and d.name == fn.__name__]
    if not defs:
        return None
    d = defs[0]
    d.decorator_list = []
    d.body = probed(d.body, parts)
    space = dict(getattr(fn, "__globals__", {}))
    try:
        module = ast.fix_missing_locations(ast.Module(body=[d], type_ignores=[]))
        exec(compile(module, f"<probed {fn.__name__}>", "exec"), space)
    except Exception:
        return None
    return space, space[fn.__name__], source.splitlines()


def _arrays(x):
    """The float arrays in a value: itself, or a dict's items (one level)."""
    if isinstance(x, np.ndarray):
        return [("", x)] if x.dtype.kind == "f" else []
    if isinstance(x, dict):
        return [(f"[{k!r}]", v) for k, v in x.items() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
    return []


def run_probed(space, fn, arguments, replace=None, items=False):
    """Run a probed copy: returns (what it returned or None if it raised, the values it
    assigned as [(line, label, execution, array)]; with ``items``, a dict's arrays too, as
    label['key']). ``replace`` maps (line, label) to {execution: value} put in place of what
    that line computed."""
    seen, counts = [], {}

    def probe(line, label, value, in_place=False):
        k = counts.get((line, label), 0)
        counts[(line, label)] = k + 1
        if replace is not None and isinstance(value, dict):   # an item of a dict: put in a copy
            put = {key: replace[(line, label + f"[{key!r}]")].get(k) for key in value
                   if (line, label + f"[{key!r}]") in replace}
            put = {key: v.astype(float) for key, v in put.items() if v is not None}
            return {**value, **put} if put else value
        if replace is not None:
            new = replace.get((line, label), {}).get(k)
            if new is not None and isinstance(value, np.ndarray):
                if in_place:
                    if value.flags.writeable and new.shape == value.shape:
                        value[...] = new
                    return value
                return new.astype(value.dtype if value.dtype.kind == "f" else float)
        elif isinstance(value, np.ndarray) and value.dtype.kind == "f":
            seen.append((line, label, k, value.copy()))
        elif items and isinstance(value, dict):
            seen.extend((line, label + key, k, a.copy()) for key, a in _arrays(value))
        return value

    space[PROBE] = probe
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), np.errstate(all="ignore"):
            got = fn(*arguments())
    except Exception:
        got = None
    return got, seen


def _near(value, ref):
    """``value`` is the reference's float32 ``ref``, within the checks' tolerance (as _Known)."""
    return value.shape == ref.shape and bool(np.all(np.abs(value - ref) <= ATOL * 10 + RTOL * np.abs(ref)))


class _Known:
    """The reference's values on the worked example, by shape, to ask whether a value is one."""

    def __init__(self, values, inputs, entries=()):
        by_shape = {}
        for v in list(values) + [a for _, a in leaves(inputs) if a.dtype.kind == "f"]:
            by_shape.setdefault(v.shape, []).append(v.ravel())
            if v.ndim == 2:
                by_shape.setdefault(v.T.shape, []).append(v.T.ravel())
        self.by_shape = {s: np.array(vs, dtype=float) for s, vs in by_shape.items()}
        at = {}
        for i, e in enumerate(entries):
            for k, a in enumerate(e["arrays"]):
                at.setdefault(a.shape, []).append((i, k, a.ravel()))
        self.at = {s: ([item[:2] for item in items], np.array([item[2] for item in items], dtype=float))
                   for s, items in at.items()}

    def where(self, value):
        """[(entry, execution)] whose value ``value`` is."""
        keys, m = self.at.get(value.shape, ((), None))
        if m is None or not np.all(np.isfinite(value)):
            return []
        hits = np.all(np.abs(m - value.ravel().astype(float)) <= ATOL * 10 + RTOL * np.abs(m), axis=1)
        return [keys[j] for j in np.nonzero(hits)[0]]

    def stacked(self, value):
        """Is ``value`` the reference's values stacked one over another (a fused layout, such as
        two gates computed at once, [ft; it]), each block one of them?"""
        if value.ndim != 2 or not np.all(np.isfinite(value)):
            return False
        rows, cols = value.shape
        heights = sorted({s[0] for s in self.by_shape if len(s) == 2 and s[1] == cols and s[0] < rows}, reverse=True)

        def fits(top, depth=0):
            return top == rows or depth < 8 and any(
                top + h <= rows and value[top:top + h] in self and fits(top + h, depth + 1) for h in heights)
        return bool(heights) and fits(0)

    def __contains__(self, value):
        m = self.by_shape.get(value.shape)
        if m is None or not np.all(np.isfinite(value)):
            return False
        v = value.ravel().astype(float)
        return bool(np.any(np.all(np.abs(m - v) <= ATOL * 10 + RTOL * np.abs(m), axis=1)))


def _trace(trace):
    """check_data.json's trace of one function, decoded: (values, entries)."""
    values = [decode(v) for v in trace["values"]]
    return values, [dict(e, arrays=[values[i] for i in e["values"]]) for e in trace["entries"]]


def _wrong_outputs(spec, got, expected, loose=False):
    """The outputs (and the cache's fields, one by one) that differ from the expected ones;
    ``loose``: with a tolerance of 1e-4, for outputs made from the trace's float32 values."""
    if got is None:
        return None
    global RTOL, ATOL
    saved = RTOL, ATOL
    if loose:
        RTOL, ATOL = 1e-4, 1e-5
    try:
        _, wrong = compare(spec, got, expected, words=False)
    finally:
        RTOL, ATOL = saved
    fields = spec.get("cache_fields") or []
    if "cache" in wrong and not spec["returns_dict"] and isinstance(got, (tuple, list)) \
            and len(got) == len(spec["outputs"]):
        mine, right = got[spec["outputs"].index("cache")], expected[spec["outputs"].index("cache")]
        if isinstance(mine, (tuple, list)) and len(mine) == len(fields):
            wrong.discard("cache")
            wrong |= {f for f, a, b in zip(fields, mine, right) if not _same(a, b)}
    return wrong


def locate(name, fn, namespace=None):
    """Where ``fn`` (the learner's ``name``) first computes a wrong value on the worked
    example, as a dict: "quantity" (the reference's name for what the line should compute,
    or None), "lineno" (the line in the function's own source, its def being 1, or None),
    "line" (that line in the learner's cell), "text", "part" (the line computes a part of
    the quantity), "mends" (the outputs the right value there makes right), "right" (the
    outputs that are right), "known" (quantities proven right). None when it is right there."""
    data = _load()
    return locate_in(data["functions"][name], data.get("trace", {}).get(name), data["cases"][name][0], fn)


def fresh_copy(value, memo):
    """A deep copy of a case's inputs (arrays in dicts, lists and tuples; an array met twice is
    copied once, as copy.deepcopy does), at a fraction of deepcopy's cost and far below decoding
    them again: a function run many times (locate's probes, repair's candidates) may change its
    arguments, and the next run must get them as they were."""
    if id(value) in memo:
        return memo[id(value)]
    kind = type(value)
    if kind is np.ndarray:
        out = value.copy()
    elif kind is dict:
        out = {k: fresh_copy(v, memo) for k, v in value.items()}
    elif kind is list or kind is tuple:
        out = kind(fresh_copy(v, memo) for v in value)
    elif kind in (int, float, str, bool) or value is None:
        return value
    else:
        out = copy.deepcopy(value)
    memo[id(value)] = out
    return out


def locate_in(spec, trace, case, fn):
    """``locate`` with its data given (the grader's kernel has no check_data.json)."""
    if not trace:
        return None
    expected = decode(case["expected"])

    inputs = decode(case["inputs"])

    def arguments():
        return fresh_copy(inputs, {})

    made = probed_function(fn)
    got, seen = run_probed(*made[:2], arguments, items=True) if made else (None, [])
    if made is None or got is None:
        try:
            with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
                got = fn(*arguments())
        except Exception:
            return None
    wrong = _wrong_outputs(spec, got, expected)
    if not wrong:
        return None
    found = {"quantity": None, "lineno": None, "line": None, "text": None, "part": False, "mends": [], "left": [],
             **_outputs_known(spec, trace, wrong)}
    if made is not None:
        found.update(_first_wrong_line(spec, trace, case, made, seen, wrong, expected, arguments) or {})
    if found["lineno"] is None and len(found["suspects"]) == 1:
        found["quantity"] = found["suspects"][0]
    if found["lineno"] is not None:
        found["line"] = fn.__code__.co_firstlineno + found["lineno"] - 1   # in the learner's cell
    return found


def where_words(spec, found):
    """``locate``'s finding in words: the line and what it should compute, or what the right
    outputs prove; nothing when the evidence singles out no place."""
    if not found:
        return []
    equations = spec.get("equations", {})
    q = found["quantity"]
    equation = equations.get(q, q or "")
    left = equation.split(" = ")[0] if " = " in equation else ""
    if q and left and not re.search(rf"(?<!\w){re.escape(q)}(?!\w)", equation):
        q = left   # the notebook's name for it (v for the code's z, δa for g)
    if found["lineno"] is not None:
        lines = [tr("Where the first wrong value is computed, on the worked example: line {line}, `{code}`.",
                    line=found["line"], code=found["text"]),
                 "  " + (tr("That line should compute a part of {quantity}: {equation}", quantity=q, equation=equation)
                         if found["part"] else
                         tr("That line should compute {quantity}: {equation}", quantity=q, equation=equation))]
        outputs = [o for o in spec["outputs"] if o in found["mends"]]
        if outputs:
            lines.append("  " + (tr("With the right value there, every wrong output comes out right.")
                                 if not found.get("left") else
                                 tr("With the right value there, {outputs} come out right.",
                                    outputs=_join(outputs))))
        return lines
    if not found["right"] or not found["known"]:
        return []
    lines = [ntr("{outputs} is right, so what it is computed from is right too: {quantities}.",
                 "{outputs} are right, so what they are computed from is right too: {quantities}.",
                 len(found["right"]), outputs=_join(found["right"]), quantities=_join(found["known"][:8]))]
    if q is not None:
        lines.append("  " + tr("Every wrong output depends on {quantity}, and no right one does: look at how you "
                               "compute {quantity}: {equation}", quantity=q, equation=equation))
    return lines


def _replacing(line, label, e, entries):
    """What to put in place of the values a learner's line computed: ``e``'s; for an item of a
    dict (a cell's gradients), every item of the dict ``e`` belongs to, each under its key."""
    mine = re.fullmatch(r"(\w+)\[(['\"])\w+\2\]", label)
    if mine and e.get("dict"):
        return {(line, f"{mine.group(1)}[{x['key']!r}]"): dict(enumerate(x["arrays"]))
                for x in entries if x.get("dict") == e["dict"]}
    return {(line, label): dict(enumerate(e["arrays"]))}


def _reads_known(space, fn, arguments, line, label, k0, lines, known, entries=()):
    """Is every array the statement at ``line`` reads (its names, and a dict's items) one of the
    reference's values (or an input) when it computes its first wrong value? Read from the
    function's frame at the probe of that execution."""
    try:
        tree = ast.parse(textwrap.dedent("\n".join(lines)))
    except SyntaxError:
        return False
    stmt = next((s for s in ast.walk(tree) if isinstance(s, ast.stmt) and getattr(s, "lineno", 0) == line
                 and _assigned(s)), None)
    if stmt is not None:
        read = stmt.value
    else:   # an item of the returned dict, on its own line
        read = next((v for s in ast.walk(tree) if isinstance(s, ast.Return) and isinstance(s.value, ast.Dict)
                     for k, v in zip(s.value.keys, s.value.values)
                     if isinstance(k, ast.Constant) and k.value == label and v.lineno == line), None)
        if read is None:
            return False
    names = {n.id for n in ast.walk(read) if isinstance(n, ast.Name)}
    found = {}
    counts = {}

    def probe(at, what, value, in_place=False):
        k = counts.get((at, what), 0)
        counts[(at, what)] = k + 1
        if at == line and (what == label or label.startswith(what + "[")) and k == k0 and not found:
            frame = sys._getframe(1)
            found.update({n: frame.f_locals[n] for n in names if n in frame.f_locals})
        return value

    space[PROBE] = probe
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                np.errstate(all="ignore"):
            fn(*arguments())
    except Exception:
        pass
    if not found:
        return False
    # the value before the statement ran is gone (a += changes it): a name the statement assigns is
    # judged by what it reads besides
    mine = {n.id for t in (_assigned(stmt) if stmt is not None else ()) for n in ast.walk(t) if isinstance(n, ast.Name)}
    for name, value in found.items():
        if name in mine:
            continue
        if any(a not in known and not known.stacked(a) for _, a in _arrays(value)):
            return False
        # a name the reference also carries through its loop: the value of this step or the last
        steps = [e for e in entries if e["name"] == name and not e["part"] and len(e["arrays"]) > 1]
        if steps and isinstance(value, np.ndarray) and not any(
                _near(value, e["arrays"][j]) for e in steps for j in (k0, k0 - 1) if 0 <= j < len(e["arrays"])):
            return False
    return True


def _outputs_known(spec, trace, wrong):
    """What the pattern of right and wrong outputs proves: the quantities that feed a right
    output are right; a quantity every wrong output depends on, and no right one, is a suspect."""
    depends = trace["depends"]
    outputs = [o for o in depends if o not in ("cache", "caches")]
    right = [o for o in outputs if o not in wrong and depends[o]]
    proven = {q for o in right for q in depends[o]}
    wrong_known = [o for o in wrong if o in depends]
    if proven & set(wrong):   # a wrong output that right ones are computed from: a layout or a return, not a value
        return {"right": [], "known": [], "suspects": []}
    suspects = [q for q in trace["order"] if q not in proven and wrong_known
                and all(q in depends[o] for o in wrong_known)]
    if not suspects and len(wrong_known) == 1 and wrong_known[0] not in ("cache", "caches"):
        suspects = list(wrong_known)   # one output wrong, every other right: that output is where to look
    return {"right": right, "known": [q for q in trace["order"] if q in proven], "suspects": suspects}


def _first_wrong_line(spec, trace, case, made, seen, wrong, expected, arguments):
    space, fn, lines = made
    values, entries = _trace(trace)
    known = _Known(values, arguments(), entries)
    first, wrong_at = {}, {}   # each line and label: its first wrong execution, and when that was
    for at, (line, label, k, value) in enumerate(seen):
        if (line, label) in first:
            continue
        if value not in known:
            first[(line, label)], wrong_at[(line, label)] = (k, value.shape), at
            continue
        hits = known.where(value)   # a value the reference computes, but at another step (a stale slice)
        if hits and all(kk != k and len(entries[i]["arrays"]) > k for i, kk in hits):
            first[(line, label)], wrong_at[(line, label)] = (k, value.shape, [entries[i] for i in
                                                                               dict.fromkeys(i for i, _ in hits)]), at
    for at, (line, label, k, value) in enumerate(seen):   # a value the reference computes, not as the quantity named alike
        alike = [e for e in entries if e["name"] == label and not e["part"] and len(e["arrays"]) > k]
        if alike and not any(_near(value, e["arrays"][k]) for e in alike) \
                and at < wrong_at.get((line, label), len(seen)):
            first[(line, label)], wrong_at[(line, label)] = (k, value.shape, alike), at
    first = dict(sorted(first.items(), key=lambda item: wrong_at[item[0]]))
    tries, cpu, wall = 0, time.process_time() + LOCATE_SECONDS, time.monotonic() + 3 * LOCATE_SECONDS
    for (line, label), (k0, shape, *named) in first.items():
        best = None
        for order, e in enumerate(named[0] if named else entries):
            if tries >= LOCATE_TRIES or time.process_time() > cpu or time.monotonic() > wall:
                return None
            if len(e["arrays"]) <= k0 or (
                    e["arrays"][k0].shape != shape and (e["name"] != label or e["part"])):
                continue
            tries += 1
            got, _ = run_probed(space, fn, arguments, _replacing(line, label, e, entries))
            left = _wrong_outputs(spec, got, expected, loose=True)
            if left is None or not left < wrong:
                continue
            rank = (len(left), e["part"], e.get("item", False), order)
            if best is None or rank < best[0]:
                best = (rank, e, left)
        if best is not None:
            _, e, left = best
            if set(left) & set(trace["inputs_of"].get(e["name"], ())) \
                    or not _reads_known(space, fn, arguments, line, label, k0, lines, known, entries):
                return None   # what the line reads is wrong too: it is not where the first wrong value is
            text = lines[line - 1].strip() if line <= len(lines) else ""
            return {"quantity": e["name"], "lineno": line, "text": text, "part": e["part"],
                    "mends": sorted(wrong - left), "left": sorted(left)}
    return None


load_messages()
