"""Repair searches remembered across a class: the search for an edit that mends a wrong function
(shipped/repair.py) reads only the function's source, what the names it reads hold, where it
first goes wrong and its bound, and the learner's kernel writes all of that down as a key
(``repair.search_key``). A class repeats whole functions (a shared wrong answer, a common slip),
so a grading process searches once for each: the next kernel with a known key still locates
its own mistake, and skips the search.

A key is a kernel's word, and a kernel runs a learner's code (two learners may collude): a
search is reused only once two different submissions' kernels sent the same key with the same
answer, only when it found a repair, and only where that can be checked: each remembered edit
must turn the learner's own source, as their kernel sent it, into the candidate's, and it is
then run on the learner's hidden cases in their own kernel, as a fresh search's would be
(located.py). A search that found nothing cannot be checked, so it is always run again: no
one can withhold another learner's repair. Otherwise the kernel searches after all.
A local pool's workers each remember their own kernels' searches, and hand them back with each
result; the grading process applies the same rule to the whole class, and the workers read the
searches the class agreed on before each submission (classwide.py), so that two workers do not
each need two submissions of their own before they reuse a search.
Rule (judging/): what a kernel sends back is data to check, never code; expected outputs stay here.
"""
from __future__ import annotations

import json
from typing import Any

from .classwide import SHARED, Shared

SEARCHES_KEPT = 5000   # keys one grading process remembers; then it starts again


class RememberedSearches:
    """Searches by (assignment, function, key): each distinct answer a key got, and from whom."""

    def __init__(self, kept: int = SEARCHES_KEPT, shared: Shared | None = None) -> None:
        self.kept = kept
        self._answers: dict[tuple[str, str, str], dict[str, tuple[dict[str, Any], set[str]]]] = {}
        self.shared = SHARED if shared is None else shared
        """Where this process hands its searches to the class, and reads what the class agreed on."""
        self.searched = self.reused = 0
        """How many searches ran in kernels, and how many were remembered instead (for measures)."""

    def known(self, aid: str, name: str) -> list[str]:
        """The keys whose search can be reused: one answer with a repair, from two submissions or
        more, here or (for a local pool's worker) in the class."""
        keys = {key for (a, n, key) in self._answers if a == aid and n == name}
        keys |= {key for (a, n, key) in self.shared.known["search"] if a == aid and n == name}
        return sorted(key for key in keys if self.entry(aid, name, key) is not None)

    def entry(self, aid: str, name: str, key: str) -> dict[str, Any] | None:
        """The search a key's kernels agreed on, if it can be reused; never when this process
        heard two answers to it, or one that is not the class's."""
        answers = self._answers.get((aid, name, key), {})
        shared = self.shared.known["search"].get((aid, name, key))
        if len(answers) > 1 or (shared is not None and answers and json.dumps(shared, sort_keys=True) not in answers):
            return None
        return _agreed(answers) or shared

    def keep(self, aid: str, name: str, reply: Any, who: str) -> None:
        """Remember a kernel's search (its repairs' lines made relative to the function's first)."""
        entry = _relative(reply)
        if entry is None:
            return
        self.searched += 1
        self.keep_entry(aid, name, reply["key"], entry, who)
        self.shared.tell("search", [aid, name, reply["key"]], entry)

    def keep_entry(self, aid: str, name: str, key: str, entry: dict[str, Any], who: str) -> None:
        """Count ``who``'s answer ``entry`` (as ``_relative`` writes it) to the search ``key`` names."""
        if len(self._answers) >= self.kept:
            self._answers.clear()
        answers = self._answers.setdefault((aid, name, key), {})
        text = json.dumps(entry, sort_keys=True)
        answers.setdefault(text, (entry, set()))[1].add(who)

    def recall(self, aid: str, name: str, reply: Any) -> dict[str, Any] | None:
        """A kernel's "remembered" reply completed with the search its key names, the repairs'
        lines in this learner's cell; None when the key is not known here or an edit does not
        turn this learner's source into its candidate (then the kernel must search)."""
        if not (isinstance(reply, dict) and reply.get("remembered") is True and isinstance(reply.get("key"), str)
                and isinstance(reply.get("source"), str) and type(reply.get("first")) is int):
            return None
        entry = self.entry(aid, name, reply["key"])
        if entry is None:
            return None
        repairs = []
        for r in entry["repairs"]:
            if not edits_into(reply["source"], r):
                return None
            repairs.append({"line": reply["first"] + r["offset"], "before": r["before"], "after": r["after"],
                            "source": r["source"]})
        self.reused += 1
        return {"found": reply.get("found"), "repairs": repairs, "tried": entry["tried"], "cut": entry["cut"]}


def _agreed(answers: dict[str, tuple[dict[str, Any], set[str]]]) -> dict[str, Any] | None:
    """The one answer two submissions or more sent, if it found a repair (one that can be checked)."""
    if len(answers) != 1:
        return None
    entry, who = next(iter(answers.values()))
    return entry if len(who) >= 2 and entry["repairs"] else None


def _relative(reply: Any) -> dict[str, Any] | None:
    """What of a search is the same for every function with its key; None if malformed."""
    if not (isinstance(reply, dict) and isinstance(reply.get("key"), str) and len(reply["key"]) == 64
            and type(reply.get("first")) is int and isinstance(reply.get("repairs"), list)
            and type(reply.get("tried")) is int and type(reply.get("cut")) is bool and not reply.get("remembered")):
        return None
    repairs = []
    for r in reply["repairs"]:
        if not (isinstance(r, dict) and type(r.get("line")) is int
                and all(isinstance(r.get(k), str) for k in ("before", "after", "source"))):
            return None
        repairs.append({"offset": r["line"] - reply["first"], "before": r["before"], "after": r["after"],
                        "source": r["source"]})
    return {"repairs": repairs, "tried": reply["tried"], "cut": reply["cut"]}


def edits_into(source: str, r: dict[str, Any]) -> bool:
    """Does replacing the statement at line ``r["offset"] + 1`` of ``source`` (its text
    ``r["before"]``) by the one line ``r["after"]`` give ``r["source"]``, as repair.mend writes
    a candidate?"""
    mine, theirs = source.splitlines(), r["source"].splitlines()
    at, span = r["offset"], len(mine) - len(theirs) + 1
    if not (0 <= at < len(mine) and span >= 1 and at < len(theirs)):
        return False
    first = mine[at]
    indent = first[:len(first) - len(first.lstrip())]
    return ("\n".join(mine[at:at + span]).strip() == r["before"] and theirs[at] == indent + r["after"]
            and theirs[:at] == mine[:at] and theirs[at + 1:] == mine[at + span:] and r["source"].endswith("\n"))
