"""Mistakes as data, and the mutants made from them.

Each catalogued mistake has one or more variants (the ways learners make it), and each
variant is a few textual edits of the reference function. Compiling an edited source gives a
"mutant". The judge names a mistake when a submission's outputs match a mutant's on every
hidden case (one mistake, or two together), or output by output; the students' checks do the
same against fingerprints of the mutants' outputs on the public inputs; a sequence function's
mistakes are also named from how it drives its cell (``behaviour``); and the tests check that
every mutant fails. A mistake no output comparison reveals reliably is found by a detector
instead: ``reads_globals`` (the function reads the notebook's variables, not its arguments).
Rule (contract/): imports nothing of the engine but shipped/; strictly typed.
"""
from __future__ import annotations

import functools
import inspect
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TypeAlias, TypeVar, cast

import numpy as np

Edit: TypeAlias = tuple[str, str]
"""(old, new): one replacement in the reference source."""
Variant: TypeAlias = tuple[Edit, ...]
"""One way of making a mistake: edits applied together."""
VariantId: TypeAlias = tuple[str, int]
"""(code, variant index)."""
Pick: TypeAlias = str | VariantId
"""A variant to apply; a code alone stands for its first variant."""
Mutant: TypeAlias = Callable[..., object]
R = TypeVar("R")
T = TypeVar("T")


@dataclass(frozen=True)
class Mistake:
    """One catalogued mistake."""

    code: str
    """Stable identifier, reported in results.json's ``diagnoses``."""
    function: str
    """The function it is made in."""
    variants: tuple[Variant, ...]
    """Each a tuple of (old, new) replacements in the reference source."""
    feedback: str
    """What is wrong, why it matters, where to look; never the answer."""
    detector: str = ""
    """A harness observation that also reveals it (see the module docstring)."""
    behaviour: tuple[tuple[str, str], ...] = ()
    """(aspect, label) pairs of student_checks.protocol() that prove it in a loop."""
    also: tuple[str, ...] = ()
    """Other functions where the same mistake is named."""
    raises: str = ""
    """A regular expression: an exception whose text matches proves it."""


def edits(*pairs: Edit) -> tuple[Variant]:
    """One variant made of these replacements."""
    return (tuple(pairs),)


def each(*pairs: Edit) -> tuple[Variant, ...]:
    """One variant per replacement."""
    return tuple((p,) for p in pairs)


class Catalog:
    """An assignment's mistakes, over its reference module."""

    def __init__(self, reference: ModuleType, mistakes: Iterable[Mistake]) -> None:
        self.reference, self.mistakes = reference, tuple(mistakes)
        self.by_code = {m.code: m for m in self.mistakes}
        self.mutant = functools.lru_cache(maxsize=8192)(self._mutant)
        """``mutant(function, picks)``: the compiled mutant (picks a tuple), cached."""

    def for_function(self, name: str) -> list[Mistake]:
        return [m for m in self.mistakes if m.function == name or name in m.also]

    def variants(self, name: str) -> list[VariantId]:
        """Every (code, variant index) of ``name``'s mistakes that outputs reveal (those with
        a detector are found another way)."""
        return [(m.code, i) for m in self.for_function(name) if not m.detector for i in range(len(m.variants))]

    def mutant_source(self, function: str, picks: Iterable[Pick]) -> str:
        """The reference ``function``'s source with the given (code, variant index) picks
        applied. A code alone stands for its first variant."""
        source = inspect.getsource(getattr(self.reference, function))
        for pick in picks:
            code, index = (pick, 0) if isinstance(pick, str) else pick
            for old, new in self.by_code[code].variants[index]:
                if old not in source:
                    raise ValueError(f"mistake {code}[{index}]: {old!r} is not in {function}")
                source = source.replace(old, new, 1)
        return source

    def _mutant(self, function: str, picks: tuple[Pick, ...]) -> Mutant:
        """The compiled mutant, its callees being the reference's."""
        namespace = dict(vars(self.reference))
        exec(compile(self.mutant_source(function, picks), f"<mutant {function}>", "exec"), namespace)
        return cast(Mutant, namespace[function])   # the edited reference function

    def pairs(self, function: str, first: Iterable[VariantId] | None = None,
              same_code: bool = False) -> list[tuple[VariantId, VariantId]]:
        """Pairs of variants of two different mistakes (or, with ``same_code``, also two
        variants of one: the same slip made twice); those involving ``first`` variants first."""
        found = self.variants(function)
        all_pairs = [(a, b) for a, b in itertools.combinations(found, 2) if same_code or a[0] != b[0]]
        firsts = set(first or ())
        return sorted(all_pairs, key=lambda p: not (p[0] in firsts or p[1] in firsts))

    @staticmethod
    def run(fn: Callable[..., R], args: Sequence[object]) -> R:
        """Call a function on a private copy of its arguments."""
        return fn(*_copy(args))


def _copy(x: T) -> T:
    """A deep copy of arrays in tuples, lists and dicts (other values are shared)."""
    return cast(T, _copied(x))


def _copied(x: object) -> object:
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, tuple):
        return tuple(_copied(v) for v in x)
    if isinstance(x, list):
        return [_copied(v) for v in x]
    if isinstance(x, dict):
        return {k: _copied(v) for k, v in x.items()}
    return x
