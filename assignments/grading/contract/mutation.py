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
import functools
import inspect
import itertools
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Mistake:
    """One catalogued mistake."""

    code: str
    """Stable identifier, reported in results.json's ``diagnoses``."""
    function: str
    """The function it is made in."""
    variants: tuple
    """Each a tuple of (old, new) replacements in the reference source."""
    feedback: str
    """What is wrong, why it matters, where to look; never the answer."""
    detector: str = ""
    """A harness observation that also reveals it (see the module docstring)."""
    behaviour: tuple = ()
    """(aspect, label) pairs of student_checks.protocol() that prove it in a loop."""
    also: tuple = ()
    """Other functions where the same mistake is named."""
    raises: str = ""
    """A regular expression: an exception whose text matches proves it."""


def edits(*pairs):
    """One variant made of these replacements."""
    return (tuple(pairs),)


def each(*pairs):
    """One variant per replacement."""
    return tuple((p,) for p in pairs)


class Catalog:
    """An assignment's mistakes, over its reference module."""

    def __init__(self, reference, mistakes):
        self.reference, self.mistakes = reference, tuple(mistakes)
        self.by_code = {m.code: m for m in self.mistakes}
        self.mutant = functools.lru_cache(maxsize=8192)(self._mutant)

    def for_function(self, name):
        return [m for m in self.mistakes if m.function == name or name in m.also]

    def variants(self, name):
        """Every (code, variant index) of ``name``'s mistakes that outputs reveal (those with
        a detector are found another way)."""
        return [(m.code, i) for m in self.for_function(name) if not m.detector for i in range(len(m.variants))]

    def mutant_source(self, function, picks):
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

    def _mutant(self, function, picks):
        """The compiled mutant, its callees being the reference's."""
        namespace = dict(vars(self.reference))
        exec(compile(self.mutant_source(function, picks), f"<mutant {function}>", "exec"), namespace)
        return namespace[function]

    def pairs(self, function, first=None, same_code=False):
        """Pairs of variants of two different mistakes (or, with ``same_code``, also two
        variants of one: the same slip made twice); those involving ``first`` variants first."""
        found = self.variants(function)
        all_pairs = [(a, b) for a, b in itertools.combinations(found, 2) if same_code or a[0] != b[0]]
        first = set(first or ())
        return sorted(all_pairs, key=lambda p: not (p[0] in first or p[1] in first))

    @staticmethod
    def run(fn, args):
        """Call a function on a private copy of its arguments."""
        return fn(*_copy(args))


def _copy(x):
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, tuple):
        return tuple(_copy(v) for v in x)
    if isinstance(x, list):
        return [_copy(v) for v in x]
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    return x
