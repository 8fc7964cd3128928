"""Where a wrong function first goes wrong, and an edit of the learner's own code that mends it.

The learner's kernel does the searching (shipped/repair.py's ``examine``: every candidate is the
learner's code) on the public cases; here, in the grading process, every field it sends back is
checked, and each candidate edit is run on the hidden cases through the same judged call and
compared with the reference: the first that passes them all is the repair. The score is settled
before this runs and never depends on it.
Rule (judging/): what a kernel sends back is data to check, never code; expected outputs stay here.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from ..measure import steps

if TYPE_CHECKING:
    from ..contract.assignment import Exercise
    from .judge import Call, Judge, Outcome, Verdict

Examine: TypeAlias = Callable[[str, dict[str, Any]], list[Any]]
"""``examine(name, job)``: one job for the harness in the learner's kernel (shipped/repair.py's
``examine``); its replies."""

REPAIR_SHOWS = ("line", "quantity", "edit")
"""What a learner's feedback says of a located mistake (``Judge.show``): the line; the line and
the quantity it should compute (with its equation); or also the edit that mends it."""
REPAIRS_TRIED = 3      # candidate edits run on the hidden cases, at most, per wrong function
MAX_SOURCE = 100_000   # characters of a candidate's source, at most


_JOBS: dict[tuple[str, str], dict[str, Any]] = {}   # (assignment, function): its examine job, made once


@steps.step("locate and repair")
def locate_and_mend(judge: Judge, ex: Exercise, v: Verdict, outcomes: list[Outcome], call: Call,
                    examine: Examine) -> None:
    """For a function judged wrong: ask the learner's kernel where ``ex`` first goes wrong on
    the public worked example and for edits that mend it there, then run each edit on the
    hidden cases; set ``v.location`` and ``v.repair``. Nothing is asked otherwise."""
    if v.passed or v.outcome != "judged":
        return
    if (judge.a.id, ex.name) not in _JOBS:
        from ..contract.trace import examined
        _JOBS[(judge.a.id, ex.name)] = {"op": "examine", **examined(judge.a, ex.name)}
    job = _JOBS[(judge.a.id, ex.name)]
    replies = examine(ex.name, job)
    reply = replies[0] if replies and isinstance(replies[0], dict) else {}
    v.location = read_location(job["spec"], job["trace"], reply.get("found"))
    v.repair_cut = reply.get("cut") is True
    candidates: list[Any] = reply["repairs"] if isinstance(reply.get("repairs"), list) else []
    for r in candidates[:REPAIRS_TRIED]:
        if not (isinstance(r, dict) and all(isinstance(r.get(k), str) for k in ("source", "before", "after"))
                and type(r.get("line")) is int and len(r["source"]) < MAX_SOURCE):
            continue
        if passes_hidden_cases(judge, ex, call, r["source"]):
            before, after = r["before"][:500], r["after"][:500]
            v.repair = {"line": r["line"], "before": before, "after": after,
                        "diff": f"@@ line {r['line']} @@\n- {before}\n+ {after}\n"}
            break


def passes_hidden_cases(judge: Judge, ex: Exercise, call: Call, source: str) -> bool:
    """Does the function ``source`` defines (run in the kernel in place of the learner's) give
    the reference's outputs on every hidden case?"""
    cases = judge.cases(ex.name)
    results = list(call(ex.name, [c[1] for c in cases], ex.callees, candidate=source))  # type: ignore[call-arg]
    spec = judge.a.spec(ex.name)
    return len(results) == len(cases) and all(
        status == "ok" and not judge.a.checks.differs(spec, value, judge.expected(ex.name, i))
        for i, (status, value, _) in enumerate(results))


def read_location(spec: Mapping[str, Any], trace: Mapping[str, Any], found: Any) -> dict[str, Any] | None:
    """``locate``'s finding as the kernel sent it, kept only if every field is what it should
    be (it comes from the learner's process): names the trace knows, a line number, short text."""
    if not isinstance(found, dict):
        return None
    names = {e["name"] for e in trace["entries"]} | set(trace["order"])
    outputs = set(trace["depends"]) | set(spec["outputs"])
    q, lineno = found.get("quantity"), found.get("lineno")
    ok = ((q is None or q in names) and (lineno is None or (type(lineno) is int and 0 < lineno < 10_000))
          and all(isinstance(found.get(k), list) and all(isinstance(x, str) and x in outputs | names
                                                        for x in found[k])
                  for k in ("mends", "left", "right", "known", "suspects"))
          and isinstance(found.get("part"), bool) and (lineno is None or isinstance(found.get("text"), str))
          and (found.get("line") is None or type(found.get("line")) is int))
    if not ok or (q is None and lineno is None and not found["right"]):
        return None
    return {"quantity": q, "lineno": lineno, "line": found.get("line"), "text": (found.get("text") or "")[:300] or None,
            "part": found["part"], **{k: list(found[k])[:40] for k in ("mends", "left", "right", "known", "suspects")}}


def where(judge: Judge, ex: Exercise, v: Verdict) -> list[str]:
    """The located mistake in the learner's words, as much as ``judge.show`` allows."""
    words: list[str] = judge.a.checks.where_words(judge.a.spec(ex.name), v.location)
    if judge.show == "line" and v.location and v.location.get("lineno") is not None:
        words = words[:1]
    if judge.show == "edit" and v.repair:
        words.append(judge.a.checks.tr("A change that makes it pass every hidden case: line {line}, `{before}` → "
                                       "`{after}`", **{k: v.repair[k] for k in ("line", "before", "after")}))
    return words
