"""Seeded inputs as data.

A recipe is a seed and a list of draws made with ``np.random.RandomState(seed).randn`` in
order (the legacy generator, whose stream numpy keeps fixed across releases). ``arguments``
turns the draws into a function's arguments, running the reference forward pass where a
backward pass needs a cache.
Rule (contract/): imports nothing of the engine but shipped/; strictly typed.
"""
import re
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Recipe:
    """Seeded inputs of one function."""

    function: str
    """The function the inputs are for."""
    seed: int
    """Seed of the legacy RandomState the draws come from."""
    draws: tuple
    """(name, shape) in drawing order."""
    zeros: tuple = ()
    """(name, shape) set to zeros, not drawn."""
    shows: tuple = ()
    """Entries the notebook prints, e.g. ``"a_next[4][0]"``."""
    published: dict = field(default_factory=dict)
    """Entry -> value published for this recipe."""

    @property
    def label(self):
        return f"seed {self.seed}"


def draw(recipe):
    rng = np.random.RandomState(recipe.seed)
    values = {name: rng.randn(*shape) for name, shape in recipe.draws}
    values.update({name: np.zeros(shape) for name, shape in recipe.zeros})
    return values


def arguments(assignment, function, values):
    """The argument tuple of ``function`` built from named draws."""
    ex = assignment.by_name[function]
    values = dict(values, parameters={k: values[k] for k in ex.parameters})
    if ex.forward:
        out = getattr(assignment.reference, ex.forward)(*arguments(assignment, ex.forward, values))
        values["cache"] = values["caches"] = out[-1]
    return tuple(values[a] for a in ex.args)


def inputs(assignment, recipe):
    return arguments(assignment, recipe.function, draw(recipe))


_ENTRY = re.compile(r"^(\w+)((?:\[\d+\])+)$")


def entry(exercise, outputs, key):
    """Look up an entry such as ``"dWax[3][1]"`` in a function's outputs."""
    name, index = _ENTRY.match(key).groups()
    value = outputs[name] if exercise.returns_dict else outputs[exercise.outputs.index(name)]
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
    zero: tuple = ()
    """Inputs set to zeros instead of drawn (where the function has them)."""

    functions = ()
    """The assignment's functions, in order: each draws with a seed of its own."""
    draw_list = None
    """A function (function, n_x, n_a, n_y, m, T_x) -> ((name, shape), ...): what a function's
    case draws, in order, for any sizes (set with staticmethod)."""

    def draws(self, function):
        """(name, shape) of everything ``function``'s case draws, in order."""
        return type(self).draw_list(function, self.n_x, self.n_a, self.n_y, self.m, self.T_x)

    def recipe(self, function):
        """Each function draws with its own seed: a backward case's cache must never be a
        forward function's hidden answer."""
        draws = self.draws(function)
        seed = self.seed + 100_000 * (1 + list(self.functions).index(function))
        return Recipe(function, seed, tuple(d for d in draws if d[0] not in self.zero),
                      tuple(d for d in draws if d[0] in self.zero))

    def facts(self, function):
        """Traits that may explain why a case passes or fails (Assignment.case_hints)."""
        found = {"m=1"} if self.m == 1 else set()
        found |= {f"{name}=0" for name, _ in self.recipe(function).zeros}
        return found | ({"T_x=1"} if self.T_x == 1 and "cell" not in function else set())

    def describe(self, function):
        t = "" if "cell" in function else f", T_x={self.T_x}"
        zeros = "".join(f", {name} = 0" for name, _ in self.recipe(function).zeros)
        return f"n_x={self.n_x}, n_a={self.n_a}, n_y={self.n_y}, m={self.m}{t}{zeros}"
