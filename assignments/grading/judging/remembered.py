"""Diagnoses remembered across a class: what the search for a function's catalogued mistakes
found is a function of the function's outcomes alone (statuses, messages, observations,
outputs on the hidden cases), and a class repeats its mistakes output for output, so one
grading process searches once for each distinct wrong behaviour. Exact: a diagnosis is reused
only for outcomes that are the same, byte for byte, so results.json is what a search would give.
A local pool's workers pass their diagnoses to each other through the grading process (classwide.py).
Rule (judging/): what a kernel sends back is data to check, never code; expected outputs stay here.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..measure import steps
from .classwide import SHARED, Shared

if TYPE_CHECKING:
    from .judge import Judge, Outcome

DIAGNOSES_KEPT = 5000   # diagnoses one grading process remembers (each a few codes); then it starts again


def outcomes_key(encode: Callable[[Any], Any], name: str, outcomes: list[Outcome]) -> str | None:
    """A digest of everything ``Judge.diagnose`` reads of a function's outcomes; None when
    they cannot be written down whole (then nothing is remembered)."""
    try:
        text = json.dumps([name, [[o.status, o.text, o.observed, encode(o.got)] for o in outcomes]], sort_keys=True)
    except (TypeError, ValueError):
        return None
    if '"other":' in text:   # an object that encode() describes by its repr alone: not whole
        return None
    return hashlib.sha256(text.encode()).hexdigest()


class RememberedDiagnoses:
    """``Judge.diagnose`` within the judge's budget, remembered by ``outcomes_key``."""

    def __init__(self, kept: int = DIAGNOSES_KEPT, shared: Shared | None = None) -> None:
        self.kept = kept
        self.found: dict[str, tuple[list[str], bool]] = {}
        self.shared = SHARED if shared is None else shared
        """Where this process hands its diagnoses to the class, and reads the other workers' (classwide.py)."""
        self.searched = self.reused = 0
        """How many diagnoses were searched, and how many were remembered (for measures)."""

    @steps.step("diagnosis")
    def run(self, judge: Judge, name: str, outcomes: list[Outcome]) -> tuple[list[str], bool]:
        """(codes, whether the search was cut), as ``judge.budget.run`` would give them."""
        key = outcomes_key(judge.a.checks.encode, name, outcomes)
        if key is not None and key not in self.found and key in self.shared.known["diagnosis"]:
            codes, cut = self.shared.known["diagnosis"][key]   # another worker of the pool searched these outcomes
            self._keep(key, (list(codes), cut))
        if key is None or key not in self.found:
            self.searched += 1
            found, cut = judge.budget.run(lambda: judge.diagnose(name, outcomes))
            if key is None:
                return found, cut
            self._keep(key, (list(found), cut))
            self.shared.tell("diagnosis", key, [list(found), cut])
        else:
            self.reused += 1
        codes, cut = self.found[key]
        return list(codes), cut

    def _keep(self, key: str, diagnosis: tuple[list[str], bool]) -> None:
        if len(self.found) >= self.kept:
            self.found.clear()
        self.found[key] = diagnosis
