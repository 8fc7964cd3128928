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
    all its numbers as one float64 array), kept for a judge's class."""

    def __init__(self, checks: ModuleType, expected: Callable[[str, int], Any]) -> None:
        self._checks, self._expected = checks, expected
        self._kept: dict[tuple[str, int], tuple[str, np.ndarray] | None] = {}

    def _packed(self, name: str, index: int) -> tuple[str, np.ndarray] | None:
        """None when the reference's outputs are not all float64 arrays (and numbers, or None)."""
        key = (name, index)
        if key not in self._kept:
            node = self._checks.pack(self._expected(name, index))
            floats = all(d == FLOAT for d in re.findall(r'"dtype": "([^"]*)"', node["layout"]))
            self._kept[key] = ((node["layout"], np.frombuffer(base64.b64decode(node["packed"]), FLOAT))
                               if floats and '"other"' not in node["layout"] else None)
        return self._kept[key]

    def right(self, name: str, index: int, packed: tuple[str, bytearray]) -> bool:
        """Whether outputs the harness packed (read_reply's layout and bytes) are right on
        hidden case ``index`` of ``name``. False when they may not be: ``compare`` says."""
        reference = self._packed(name, index)
        if reference is None or packed[0] != reference[0] or len(packed[1]) != reference[1].nbytes:
            return False
        return bool(self._checks.all_close(np.frombuffer(packed[1], FLOAT), reference[1]))
