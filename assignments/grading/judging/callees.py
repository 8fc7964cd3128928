"""The reference callees, answered in the grading process. While a caller (a loop over its
cell, such as a forward pass over a sequence) is judged, the learner's kernel holds no reference code: the
harness puts a stand-in in place of the cell that sends each call's arguments over the
channel, and the ``Desk`` here computes the reference cell on them and answers.

What the desk refuses (the stand-in then raises, so the learner's function raised):
- a callee the job under way does not stand in for, or more than ``MAX_CALLS`` calls in one job;
- arguments it cannot read, or arrays with more than ``MAX_NDIM`` axes or an axis longer than
  ``MAX_DIM`` (the reference's work and memory in this process stay small whatever is sent:
  every intermediate array of a cell is at most MAX_DIM ** MAX_NDIM numbers);
- arguments carrying most of the values of one of the callee's hidden cases (``oracle``): the
  kernel saw those inputs when the callee itself was judged, and the reference's answer on
  them is what a later submission would need to pass a wrong callee. A loop's own calls are
  made on its own hidden inputs, which share none of them.
Rule (judging/): what a kernel sends back is data to check, never code; expected outputs stay here.
"""
from __future__ import annotations

import json
import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..contract.assignment import Assignment

MAX_CALLS = 5000   # calls of the stand-ins in one judged job (a loop makes one per step: 26 for 5 cases)
MAX_DIM, MAX_NDIM = 64, 3   # the hidden cases' arrays have at most 3 axes of at most 10
ORACLE_TOLERANCE = 1e-4   # relative: ten times the comparison's rtol, so a nudge that escapes it fails the case
ORACLE_SHARE = 0.25   # the share of a hidden case's values that makes a call a replay of it (a loop's
# own calls hold at most 6% of any, by chance within the tolerance; one example of a case with all its
# parameters holds 70 to 94%)
ANSWERS_KEPT = 20_000   # answers remembered by one grading process (a right class's loops ask a few hundred)
LINES_KEPT = 2_000   # answers remembered as the lines sent, by the question's text (``Desk.remembered_line``)
REFUSED = "the grader refused this call of the reference {callee}: {why}"


def _values(x: object, out: list[np.ndarray], depth: int = 0) -> list[np.ndarray]:
    """The float values of the arrays and numbers in ``x`` (nested tuples, lists, dicts)."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "biuf":
            out.append(x.astype(float).ravel())
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        out.append(np.array([float(x)]))
    elif isinstance(x, dict) and depth < 8:
        for v in x.values():
            _values(v, out, depth + 1)
    elif isinstance(x, (tuple, list)) and depth < 8:
        for v in x:
            _values(v, out, depth + 1)
    return out


def telling(x: object) -> np.ndarray:
    """The distinct values of ``x`` that identify it: finite, neither 0 nor +-1 (a tanh or a
    mask gives those to any input), sorted."""
    found = _values(x, [])
    v = np.concatenate(found) if found else np.zeros(0)
    v = v[np.isfinite(v) & (v != 0) & (np.abs(v) != 1)]
    return np.unique(v)


def share_found(hidden: np.ndarray, sent: np.ndarray, tolerance: float = ORACLE_TOLERANCE) -> float:
    """The share of ``hidden``'s values (sorted) that ``sent`` (sorted) holds within
    ``tolerance``, relative."""
    if not len(hidden) or not len(sent):
        return 0.0
    at = np.clip(np.searchsorted(sent, hidden), 1, len(sent) - 1) if len(sent) > 1 else np.zeros(len(hidden), int)
    nearest = np.minimum(np.abs(sent[at] - hidden), np.abs(sent[at - 1] - hidden)) if len(sent) > 1 \
        else np.abs(sent[0] - hidden)
    return float(np.mean(nearest <= tolerance * np.abs(hidden)))


def _shape_problem(x: object, depth: int = 0) -> str:
    if isinstance(x, np.ndarray):
        if x.ndim > MAX_NDIM or any(n > MAX_DIM for n in x.shape):
            return f"an array of shape {x.shape} (at most {MAX_NDIM} axes of at most {MAX_DIM})"
        return ""
    if depth > 8:
        return "arguments nested too deeply"
    items: Iterable[object] = x.values() if isinstance(x, dict) else x if isinstance(x, (tuple, list)) else ()
    return next((p for p in (_shape_problem(v, depth + 1) for v in items) if p), "")


def _places(args: list[Any]) -> dict[int, list[Any]]:
    """id -> place ([argument, item, ...]) of each argument and the items of its tuples,
    lists and dicts (two levels), as the harness's Recorder follows a loop's own inputs."""
    places: dict[int, list[Any]] = {}
    stack: list[tuple[list[Any], object]] = [([i], a) for i, a in enumerate(args)]
    while stack:
        place, obj = stack.pop()
        places.setdefault(id(obj), place)
        if len(place) < 3 and isinstance(obj, (tuple, list)):
            stack += [(place + [i], v) for i, v in enumerate(obj)]
        elif len(place) < 3 and isinstance(obj, dict):
            stack += [(place + [k], v) for k, v in obj.items()]
    return places


class Desk:
    """The reference callees of one assignment, answered here (one per grading process: the
    hidden cases' values are indexed once). ``begin(callees)`` before each judged job."""

    def __init__(self, assignment: Assignment) -> None:
        self.a = assignment
        names = {c for ex in assignment.exercises for c in ex.callees}
        self.hidden = {c: [telling(case[1]) for case in assignment.hidden_cases(c)] for c in names}
        self.allowed: frozenset[str] = frozenset()
        self.calls = 0
        self.refused: list[str] = []   # why calls of the job under way were refused
        self._answers: dict[tuple[str, str], tuple[dict[str, Any], list[str]]] = {}
        self._lines: dict[bytes, tuple[str, bytes, list[str]]] = {}

    def begin(self, callees: Iterable[str]) -> None:
        self.allowed, self.calls, self.refused = frozenset(callees), 0, []

    def oracle(self, callee: str, args: object) -> bool:
        """Do ``args`` carry most of the values of one of the callee's hidden cases?"""
        sent = telling(args)
        return any(share_found(h, sent) >= ORACLE_SHARE for h in self.hidden.get(callee, ()))

    def answer(self, question: Any) -> dict[str, Any]:
        """The answer to one stand-in call ``{"callee": name, "args": encoded}`` (from the
        learner's kernel: checked): ``{"output": encoded}``, or ``{"type", "text"}`` of the
        exception the stand-in raises (the reference's own, or the refusal)."""
        callee = question.get("callee") if isinstance(question, dict) else None
        if not isinstance(callee, str) or callee not in self.allowed:
            return self._refuse(str(callee)[:40], "it stands in for no function of this job")
        self.calls += 1
        if self.calls > MAX_CALLS:
            return self._refuse(callee, f"more than {MAX_CALLS} calls in one judged call")
        return self._answered(callee, question.get("args"))

    def answer_line(self, question: Any, tail: bytes | None = None) -> bytes:
        """``answer``, as the line sent back to the stand-in. ``tail``: the question's line as
        the kernel wrote it, after its nonce; the answer's line is then remembered by those
        bytes (``remembered_line``), when it is a function of them alone: a call counted
        against the job's limit, of a callee the job stands in for, and a line with no other
        "nonce" or "end" that would make the channel read it otherwise."""
        before, calls = len(self.refused), self.calls
        line = json.dumps(self.answer(question)).encode() + b"\n"
        callee = question.get("callee") if isinstance(question, dict) else None
        if (tail is not None and self.calls == calls + 1 <= MAX_CALLS and callee in self.allowed
                and b'"nonce"' not in tail and b'"end"' not in tail):
            if len(self._lines) >= LINES_KEPT:
                self._lines.clear()
            self._lines[tail] = callee, line, self.refused[before:]
        return line

    def remembered_line(self, tail: bytes) -> bytes | None:
        """What ``answer_line`` sent for the same bytes, without reading them again (a class's
        right loops ask the same questions, step for step, in every kernel), counted as
        ``answer`` counts it; None when they are not remembered, or when the job's callees or
        its limit would make the answer another (then the question is read)."""
        hit = self._lines.get(tail)
        if hit is None or hit[0] not in self.allowed or self.calls >= MAX_CALLS:
            return None
        self.calls += 1
        self.refused += hit[2]
        return hit[1]

    def _answered(self, callee: str, encoded: Any) -> dict[str, Any]:
        """The answer to ``callee`` on these encoded arguments, remembered (``ANSWERS_KEPT``):
        a class's right loops send the same arguments, step for step, submission after
        submission, and the answer (a refusal too) is a function of them alone."""
        try:
            key = (callee, json.dumps(encoded, sort_keys=True))
        except (TypeError, ValueError):
            return self._answer(callee, encoded)
        if key not in self._answers:
            if len(self._answers) >= ANSWERS_KEPT:
                self._answers.clear()
            before = len(self.refused)
            answer = self._answer(callee, encoded)
            self._answers[key] = answer, self.refused[before:]
            return answer
        answer, refused = self._answers[key]
        self.refused += refused
        return answer

    def _answer(self, callee: str, encoded: Any) -> dict[str, Any]:
        try:
            args = self.a.checks.decode(encoded)
            if not isinstance(args, list):
                raise ValueError(type(args).__name__)
        except Exception:
            return self._refuse(callee, "its arguments could not be read")
        problem = _shape_problem(args)
        if problem:
            return self._refuse(callee, problem)
        if self.oracle(callee, args):
            return self._refuse(callee, "its arguments are those of one of its hidden cases")
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                out = getattr(self.a.reference, callee)(*args)   # on arrays decoded for it alone
        except Exception as exc:   # as the reference would have raised in the kernel
            text = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
            return {"type": type(exc).__name__, "text": text}
        return {"output": self._encode(out, _places(args))}

    def _encode(self, x: object, places: dict[int, list[Any]], depth: int = 0) -> Any:
        """``checks.encode``, but an argument the reference returned as it is (a cache holds
        a_prev, parameters...) is named by its place among the arguments: the stand-in
        returns the caller's own object there, as the reference does (a loop that aliases
        its state is then judged as before)."""
        if id(x) in places:
            return {"arg": places[id(x)]}
        if depth < 8 and isinstance(x, (tuple, list)):
            return {type(x).__name__: [self._encode(v, places, depth + 1) for v in x]}
        if depth < 8 and isinstance(x, dict) and all(isinstance(k, str) for k in x):
            return {"dict": {k: self._encode(v, places, depth + 1) for k, v in x.items()}}
        return self.a.checks.encode(x)

    def _refuse(self, callee: str, why: str) -> dict[str, Any]:
        self.refused.append(f"{callee}: {why}")
        return {"type": "RuntimeError", "text": REFUSED.format(callee=callee, why=why)}
