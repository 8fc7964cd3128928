"""Seeded inputs as data.

A recipe is a seed and a list of draws made with ``np.random.RandomState(seed).randn`` in
order (the legacy generator, whose stream numpy keeps fixed across releases). ``arguments``
turns the draws into a function's arguments, running the reference forward pass where a
backward pass needs a cache.
Rule (contract/): imports nothing of the engine but shipped/; strictly typed.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from .assignment import Assignment, Exercise

Array: TypeAlias = npt.NDArray[np.float64]
Draw: TypeAlias = tuple[str, tuple[int, ...]]
"""(name, shape) of one input."""
Published: TypeAlias = float | list[float]
"""A published value: one entry, or a row of them."""


@dataclass(frozen=True)
class Recipe:
    """Seeded inputs of one function."""

    function: str
    """The function the inputs are for."""
    seed: int
    """Seed of the legacy RandomState the draws come from."""
    draws: tuple[Draw, ...]
    """(name, shape) in drawing order."""
    zeros: tuple[Draw, ...] = ()
    """(name, shape) set to zeros, not drawn."""
    shows: tuple[str, ...] = ()
    """Entries the notebook prints, e.g. ``"a_next[4][0]"``."""
    published: Mapping[str, Published] = field(default_factory=dict)
    """Entry -> value published for this recipe."""

    @property
    def label(self) -> str:
        return f"seed {self.seed}"


def draw(recipe: Recipe) -> dict[str, Array]:
    rng = np.random.RandomState(recipe.seed)
    values = {name: rng.randn(*shape) for name, shape in recipe.draws}
    values.update({name: np.zeros(shape) for name, shape in recipe.zeros})
    return values


def arguments(assignment: Assignment, function: str, values: Mapping[str, object]) -> tuple[object, ...]:
    """The argument tuple of ``function`` built from named draws."""
    ex = assignment.by_name[function]
    values = dict(values, parameters={k: values[k] for k in ex.parameters})
    if ex.forward:
        out = getattr(assignment.reference, ex.forward)(*arguments(assignment, ex.forward, values))
        values["cache"] = values["caches"] = out[-1]
    return tuple(values[a] for a in ex.args)


def inputs(assignment: Assignment, recipe: Recipe) -> tuple[object, ...]:
    return arguments(assignment, recipe.function, draw(recipe))


_ENTRY = re.compile(r"^(\w+)((?:\[\d+\])+)$")


def entry(exercise: Exercise, outputs: Mapping[str, Array] | Sequence[Array], key: str) -> object:
    """Look up an entry such as ``"dWax[3][1]"`` in a function's outputs (a backward pass's
    dict, a forward pass's tuple)."""
    found = _ENTRY.match(key)
    if found is None:
        raise ValueError(f"not an entry of an output: {key!r}")
    name, index = found.groups()
    value = outputs[name] if isinstance(outputs, Mapping) else outputs[exercise.outputs.index(name)]
    for i in re.findall(r"\d+", index):
        value = value[int(i)]
    return value


@dataclass(frozen=True)
class Shape:
    """A case's sizes; hidden ones make every size different so axis mix-ups show. An
    assignment subclasses it to say what each function draws (``draws``) and in which order
    its functions come (``functions``, for the seeds)."""

    seed: int
    n_x: int
    n_a: int
    n_y: int
    m: int
    T_x: int
    zero: tuple[str, ...] = ()
    """Inputs set to zeros instead of drawn (where the function has them)."""

    functions: ClassVar[tuple[str, ...]] = ()
    """The assignment's functions, in order: each draws with a seed of its own."""
    draw_list: ClassVar[staticmethod[[str, int, int, int, int, int], tuple[Draw, ...]] | None] = None
    """A function (function, n_x, n_a, n_y, m, T_x) -> ((name, shape), ...): what a function's
    case draws, in order, for any sizes (set with staticmethod)."""

    def draws(self, function: str) -> tuple[Draw, ...]:
        """(name, shape) of everything ``function``'s case draws, in order."""
        draw_list = type(self).draw_list
        if draw_list is None:
            raise TypeError(f"{type(self).__name__} sets no draw_list")
        return draw_list(function, self.n_x, self.n_a, self.n_y, self.m, self.T_x)

    def recipe(self, function: str) -> Recipe:
        """Each function draws with its own seed: a backward case's cache must never be a
        forward function's hidden answer."""
        draws = self.draws(function)
        seed = self.seed + 100_000 * (1 + list(self.functions).index(function))
        return Recipe(function, seed, tuple(d for d in draws if d[0] not in self.zero),
                      tuple(d for d in draws if d[0] in self.zero))

    def facts(self, function: str) -> set[str]:
        """Traits that may explain why a case passes or fails (Assignment.case_hints)."""
        found = {"m=1"} if self.m == 1 else set()
        found |= {f"{name}=0" for name, _ in self.recipe(function).zeros}
        return found | ({"T_x=1"} if self.T_x == 1 and "cell" not in function else set())

    def describe(self, function: str) -> str:
        t = "" if "cell" in function else f", T_x={self.T_x}"
        zeros = "".join(f", {name} = 0" for name, _ in self.recipe(function).zeros)
        return f"n_x={self.n_x}, n_a={self.n_a}, n_y={self.n_y}, m={self.m}{t}{zeros}"


class CaseModule(Protocol):
    """What an assignment's cases.py provides (Assignment.cases)."""

    @property
    def HIDDEN_SHAPES(self) -> Sequence[Shape]:
        """The hidden cases' sizes: only the grader draws them."""

    @property
    def PUBLIC_SHAPES(self) -> Sequence[Shape]:
        """The sizes of the public checks' cases, shipped with the release."""

    @property
    def EXAMPLES(self) -> Mapping[str, Recipe]:
        """The notebook's worked example of each function."""
