"""What one worker learns that the class's other workers can reuse, passed on by the grading
process. A local pool's workers are forked processes: each remembers what it worked out
(remembered.py's diagnoses, searched.py's repair searches) for itself. Each result hands back
what its worker learned grading that submission; the grading process keeps, for the whole
class, what each kind's rule lets it keep, and writes it to a journal in its working folder
(written by it alone, removed at the end of the run, outside every kernel's mounts), which
each worker reads before its next submission.

Kinds, and their rules:
- "diagnosis": the catalog's search for a function's outcomes, worked out in a worker (never in
  a kernel), the same for every submission with those outcomes: journaled as it comes;
- "search": a repair search, a kernel's word: journaled once two submissions sent one answer
  that found a repair, and taken back when another answer comes (searched.py's rule).
Rule (judging/): what a kernel sends back is data to check, never code; expected outputs stay here.
"""
from __future__ import annotations

import json
import os
from typing import Any

KINDS = ("diagnosis", "search")
KNOWN_KEPT = 5000   # entries of each kind a worker keeps from the journal; then it starts again


class Shared:
    """A process's side: what it learned since it last handed it back (``fresh``, taken into
    each result), and what the class's journal said so far (``known``: {kind: {key: entry}}).
    A process without a journal (the grading process's own worker, or a cluster's) knows
    only what it learned itself."""

    def __init__(self) -> None:
        self.fresh: list[dict[str, Any]] = []
        self.known: dict[str, dict[Any, Any]] = {kind: {} for kind in KINDS}
        self._path: str | None = None
        self._offset = 0

    def tell(self, kind: str, key: Any, entry: Any) -> None:
        """Hand ``entry`` (JSON) for ``key`` (a string, or a list of strings) to the class, if
        this process follows a class's journal (else no one would take it)."""
        if self._path is not None:
            self.fresh.append({"kind": kind, "key": key, "entry": entry})

    def take(self) -> list[dict[str, Any]]:
        """What this process learned since the last take."""
        fresh, self.fresh = self.fresh, []
        return fresh

    def follow(self, path: str | None) -> None:
        """Read what the journal at ``path`` gained since the last reading (whole lines only)."""
        if path != self._path:
            self._path, self._offset = path, 0
            self.known = {kind: {} for kind in KINDS}
        if path is None:
            return
        try:
            with open(path, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except OSError:
            return
        whole = data.rfind(b"\n") + 1
        for line in data[:whole].splitlines():
            said = json.loads(line)
            known, key = self.known[said["kind"]], _hashable(said["key"])
            if said["entry"] is None:
                known.pop(key, None)
            else:
                if len(known) >= KNOWN_KEPT:
                    known.clear()
                known[key] = said["entry"]
        self._offset += whole


SHARED = Shared()
"""This process's."""


class Journal:
    """The grading process's side: the class's entries of every kind, by each kind's rule, and
    a line written to ``path`` for each entry that changes. Each line is written whole, in one
    call, at the end of the file."""

    def __init__(self, path: str) -> None:
        from .searched import RememberedSearches
        self.path = path
        self.searches = RememberedSearches(shared=Shared())
        self.diagnoses: set[str] = set()
        with open(path, "wb"):
            pass

    def add(self, learned: list[dict[str, Any]], who: str) -> None:
        """A result's ``learned`` (``Shared.take`` in its worker), from grading the submission ``who``."""
        for said in learned:
            kind, key, entry = said["kind"], said["key"], said["entry"]
            if kind == "diagnosis":
                if key in self.diagnoses:
                    continue
                self.diagnoses.add(key)
                self._write(kind, key, entry)
            elif kind == "search":
                aid, name, k = key
                before = self.searches.entry(aid, name, k)
                self.searches.keep_entry(aid, name, k, entry, who)
                after = self.searches.entry(aid, name, k)
                if after != before:
                    self._write(kind, key, after)

    def _write(self, kind: str, key: Any, entry: Any) -> None:
        with open(self.path, "ab") as f:
            f.write((json.dumps({"kind": kind, "key": key, "entry": entry}) + "\n").encode())

    def close(self) -> None:
        """The run is over: no journal left behind."""
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key
