"""Right outputs recognised in one comparison. The harness packs each hidden case's outputs
(student_checks.pack: their layout, then the bytes of all their arrays in one text); a right
function's outputs are laid out as the reference's, so they are right when the layout is the
reference's, text for text, and every number of the bytes is close to the reference's: one
array operation, where ``compare`` walks the thousand arrays of a submission one by one.
Exact: outputs laid out otherwise (another nesting, key, dtype or shape) or with one number
off go to ``compare``, which says what differs; the verdict is the same either way.
Rule (judging/): what a kernel sends back is data to check, never code; expected outputs stay here.
"""
from __future__ import annotations

import base64
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

FLOAT = "<f8"   # the dtype of the reference's arrays, as ``encode`` writes it


class PackedReference:
    """The reference's outputs on each hidden case as the harness packs them (its layout, and
    all its numbers as one float64 array), kept for a judge's class, with each number's
    tolerance (``_Kept``)."""

    def __init__(self, checks: ModuleType, expected: Callable[[str, int], Any]) -> None:
        self._checks, self._expected = checks, expected
        self._kept: dict[tuple[str, int], _Kept | None] = {}

    def _packed(self, name: str, index: int) -> _Kept | None:
        """None when the reference's outputs are not all float64 arrays (and numbers, or None)."""
        key = (name, index)
        if key not in self._kept:
            node = self._checks.pack(self._expected(name, index))
            floats = all(d == FLOAT for d in re.findall(r'"dtype": "([^"]*)"', node["layout"]))
            self._kept[key] = (_Kept(self._checks, node["layout"], np.frombuffer(base64.b64decode(node["packed"]), FLOAT))
                               if floats and '"other"' not in node["layout"] else None)
        return self._kept[key]

    def right(self, name: str, index: int, packed: tuple[str, bytearray]) -> bool:
        """Whether outputs the harness packed (read_reply's layout and bytes) are right on
        hidden case ``index`` of ``name``. False when they may not be: ``compare`` says."""
        reference = self._packed(name, index)
        if reference is None or packed[0] != reference.layout or len(packed[1]) != reference.numbers.nbytes:
            return False
        return reference.close(np.frombuffer(packed[1], FLOAT))


class _Kept:
    """A case's packed reference: its layout, its numbers and, when they are all finite, how far
    each may be from the learner's (``ATOL + RTOL * |expected|``), worked out once for the class.
    Then a number is close exactly when it is within that distance (``student_checks._isclose``:
    where the expected number is finite, being equal is being within it), three array
    operations instead of ten."""

    def __init__(self, checks: ModuleType, layout: str, numbers: np.ndarray) -> None:
        self._checks, self.layout, self.numbers = checks, layout, numbers
        finite = bool(np.isfinite(numbers).all())
        self._within = checks.ATOL + checks.RTOL * np.abs(numbers) if finite else None

    def close(self, got: np.ndarray) -> bool:
        """``student_checks.all_close(got, numbers)``."""
        if self._within is None:
            return bool(self._checks.all_close(got, self.numbers))
        with np.errstate(invalid="ignore", over="ignore"):
            return bool((np.abs(got - self.numbers) <= self._within).all())
