"""Mistakes as data, and the mutants made from them.

Each catalogued mistake has one or more variants (the ways learners make it), and each
variant is a few textual edits of the reference function. Compiling an edited source gives a
"mutant". The judge names a mistake when a submission's outputs match a mutant's on every
hidden case (one mistake, or two together), or output by output; the students' checks do the
same against fingerprints of the mutants' outputs on the public inputs; a sequence function's
mistakes are also named from how it drives its cell (``behaviour``); and the tests check that
every mutant fails. A mistake no output comparison reveals reliably is found by a detector
instead: ``reads_globals`` (the function reads the notebook's variables, not its arguments).
It also holds the learners' operators, rewrites of one line of code (a factor, a term or a
statement left out, the other axis, the neighbouring time step, a transpose...) that
judging/clusters.py tries when it drafts a catalog entry for a mistake the catalog lacks.
Rule (contract/): imports nothing of the engine but shipped/; strictly typed.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import keyword
import re
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

    def __init__(self, reference: ModuleType, mistakes: Iterable[Mistake], activations: Sequence[str] = (),
                 normalisers: Sequence[str] = ()) -> None:
        self.reference, self.mistakes = reference, tuple(mistakes)
        self.activations, self.normalisers = tuple(activations), tuple(normalisers)
        """The assignment's calls a draft may swap for np.tanh, or apply over the other axis."""
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
        source = _source_of(getattr(self.reference, function))
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


@functools.lru_cache(maxsize=None)
def _source_of(fn: Callable[..., object]) -> str:
    """A reference function's text, read once: inspect re-reads and re-tokenizes the file each
    time (a class's catalog search asks thousands of times)."""
    return inspect.getsource(fn)


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


# --- mistakes learners make anywhere: rewrites of one line, for drafting catalog entries ------

_OPERAND = re.compile(r"[A-Za-z_][\w.]*(?:\[[^\[\]]*\])?(?:\([^()]*\))?(?:\.T)?")
_NAME = re.compile(r"(?<![\w.\"'])[A-Za-z_]\w*(?![\w(\"'])")
_KEYWORDS = frozenset(keyword.kwlist) | {"np", "range", "reversed", "len", "zip", "self"}


def _each(line: str, old: str, new: str) -> list[str]:
    """``line`` with one occurrence of ``old`` replaced by ``new``, for each occurrence."""
    return [line[:m.start()] + new + line[m.end():] for m in re.finditer(re.escape(old), line)]


def left_out(line: str) -> list[str]:
    """A statement left out (not a block's header, not the return)."""
    return [] if line.endswith(":") or line.startswith(("def ", "return ", "pass")) else ["pass"]


def other_axis(line: str) -> list[str]:
    """A reduction over the other axis, or without ``keepdims``."""
    return _each(line, "axis=1", "axis=0") + _each(line, "axis=0", "axis=1") + _each(line, ", keepdims=True", "")


def off_by_one(line: str) -> list[str]:
    """The neighbouring time step, or a loop that misses its first or last step."""
    found = [line[:m.start()] + step + line[m.end():] for step in ("t - 1]", "t + 1]")
             for m in re.finditer(r"\bt\]", line)]
    for m in re.finditer(r"range\(([^(),]+)\)", line):
        for bounds in (f"1, {m.group(1)}", f"{m.group(1)} - 1"):
            found.append(line[:m.start()] + f"range({bounds})" + line[m.end():])
    return found


def left_out_factor(line: str) -> list[str]:
    """One factor of a product left out."""
    found = []
    for m in re.finditer(r" \* ", line):
        before = [o for o in _OPERAND.finditer(line[:m.start()]) if o.end() == m.start()]
        after = _OPERAND.match(line, m.end())
        if before:
            found.append(line[:before[-1].start()] + line[m.end():])
        if after:
            found.append(line[:m.start()] + line[after.end():])
    return found


def _term_end(line: str, begin: int) -> int:
    """Where the term starting at ``begin`` ends: at a + or - or a closing bracket of its level."""
    depth = 0
    for i in range(begin, len(line)):
        c = line[i]
        depth += c in "([{"
        depth -= c in ")]}"
        if depth < 0 or c == "," and depth == 0 or depth == 0 and line.startswith((" + ", " - "), i):
            return i
    return len(line)


def _closing(line: str, begin: int) -> int:
    """The index of the bracket that closes the one open before ``begin`` (or the line's end)."""
    depth = 0
    for i in range(begin, len(line)):
        depth += line[i] in "([{"
        depth -= line[i] in ")]}"
        if depth < 0:
            return i
    return len(line)


def left_out_term(line: str) -> list[str]:
    """One term of a sum left out (the first one, or one after a + or -)."""
    found = []
    for m in re.finditer(r" [+-] ", line):
        found.append(line[:m.start()] + line[_term_end(line, m.end()):])
        head = max(line.rfind(c, 0, m.start()) for c in ("(", "[", "= ", ", "))
        begin = head + (2 if line.startswith(("= ", ", "), head) else 1)
        if head >= 0 and _term_end(line, begin) == m.start():
            found.append(line[:begin] + line[m.end():])
    return found


def other_activation(line: str, activations: Sequence[str] = (), normalisers: Sequence[str] = ()) -> list[str]:
    """np.tanh for one of the assignment's ``activations`` and back, or one of its
    ``normalisers`` applied over the other axis."""
    found = [r for name in activations for r in _each(line, "np.tanh(", f"{name}(") + _each(line, f"{name}(", "np.tanh(")]
    for m in (m for name in normalisers for m in re.finditer(re.escape(name) + r"\(", line)):
        end = _closing(line, m.end())
        found.append(line[:m.end()] + "(" + line[m.end():end] + ").T).T" + line[end + 1:])
    return found


def transposed(line: str) -> list[str]:
    """A transpose left out or added to the result, or the operands of a matrix product swapped."""
    found = [line[:m.start()] + line[m.end():] for m in re.finditer(r"\.T\b", line)]
    assigned = re.match(r"([\w\[\]:, ]+ = )(.+)$", line)
    if assigned and "," not in assigned.group(1).split("[")[0]:
        whole = _OPERAND.fullmatch(assigned.group(2))
        found.append(assigned.group(1) + (assigned.group(2) if whole else f"({assigned.group(2)})") + ".T")
    for m in re.finditer(r" @ ", line):
        before = [o for o in _OPERAND.finditer(line[:m.start()]) if o.end() == m.start()]
        after = _OPERAND.match(line, m.end())
        if before and after:
            a, b = before[-1], after
            found.append(line[:a.start()] + b.group() + " @ " + a.group() + line[b.end():])
    return found


def accumulated(line: str) -> list[str]:
    """``+=`` for ``=`` and back."""
    if " += " in line:
        return [line.replace(" += ", " = ", 1)]
    target = re.match(r"[\w\[\]:, ]+ = ", line)
    return [line.replace(" = ", " += ", 1)] if target and "," not in target.group().split("[")[0] else []


def sibling_names(source: str, helpers: Iterable[str] = ()) -> dict[str, list[str]]:
    """{name: the names of ``source`` a learner could write for it}: those of its length sharing
    its first letter or its last word (``dft``, ``dit``; ``a_next``, ``c_next``; ``n_x``, ``n_a``);
    never the assignment's ``helpers`` (functions, not variables)."""
    skip = _KEYWORDS | set(helpers)
    names = sorted({n for n in _NAME.findall(source) if n not in skip and not n.isupper()})
    return {n: [o for o in names if o != n and len(o) == len(n)
                and (o[0] == n[0] or o.split("_")[-1] == n.split("_")[-1])] for n in names}


def line_rewrites(line: str, siblings: dict[str, list[str]], activations: Sequence[str] = (),
                  normalisers: Sequence[str] = ()) -> list[list[str]]:
    """The rewrites of one line's code in three tiers, most likely first: by each operator
    above; each name written as a sibling name (a wrong variable); two edits together.
    ``activations``, ``normalisers``: the assignment's (``Catalog``), for other_activation."""
    activation = functools.partial(other_activation, activations=activations, normalisers=normalisers)
    ops = (left_out, other_axis, off_by_one, left_out_factor, left_out_term, activation, transposed, accumulated)
    single = [r for op in ops for r in op(line)]
    read = line.find(" = ") + 1   # a name read, not the one assigned
    wrong_name = [line[:m.start()] + other + line[m.end():] for m in _NAME.finditer(line, read)
                  for other in siblings.get(m.group(), [])]
    twice = (other_axis, transposed, off_by_one, left_out_term)
    double = [r2 for op in ops if op is not left_out for r in op(line) for other in twice if other is not op
              for r2 in other(r)]
    return [list(dict.fromkeys(r for r in tier if r != line)) for tier in (single, wrong_name, double)]
