"""The assignment contract: what the engine needs from one assignment of the course.

An assignment is a fixed set of files read by one engine, so a new one always goes in the
same places:

- ``assignments/<id>/``: a package whose ``ASSIGNMENT`` is an instance of a subclass of
  :class:`Assignment` (the exercises as data, the reference solution, the cases, the
  catalog of mistakes);
- ``source/<id>/``: the source notebook ``<id>.ipynb`` (nbgrader markup) and the helper
  files shipped beside it (e.g. a module of activation functions).

Everything else (the judge, the students' checks, mutation and diagnosis, the notebook's
generated cells, the release and its checks, grading) lives in ``assignments/grading`` and
names no assignment.
Rule (contract/): imports nothing of the engine but shipped/; strictly typed.
"""
from __future__ import annotations

import abc
import functools
import importlib
import importlib.util
import inspect
import os
import pkgutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, TypeAlias, TypedDict

from .. import PACKAGE, REPO, SHIPPED
from .messages import N_
from .protocols import LoopProtocol

if TYPE_CHECKING:
    from nbformat import NotebookNode

    from .cases import CaseModule, Recipe
    from .mutation import Catalog, Mistake

# Where each assignment's source folder is read from: the repository's source/, or, in a
# grading worker, the copy of it that the worker received (``use_source``): a worker may have
# the course installed as a package, with no repository beside it (a Dask worker's image).
SOURCE_ROOT: dict[str, str] = {"path": os.path.join(REPO, "source")}


def use_source(root: str) -> str:
    """Read the assignments' source folders (helper files, shipped modules) under ``root``;
    returns the root used until now."""
    before, SOURCE_ROOT["path"] = SOURCE_ROOT["path"], root
    return before
STUDENT_CHECKS = os.path.join(SHIPPED, "student_checks.py")
CHECK_DATA = "check_data.json"


# What the judge tells a learner when a fact about the cases separates the passing ones from
# the failing ones: (when only such cases pass, when only such cases fail). Assignments add
# their own (Assignment.case_hints).
COMMON_CASE_HINTS: dict[str, tuple[str, str]] = {
    "T_x=1": (N_("It is right only when the sequence has a single time step: look at what should "
                 "carry over from one time step to the next."),
              N_("It fails only when the sequence has a single time step (T_x = 1): look for code that "
                 "assumes at least two steps.")),
    "m=1": (N_("It is right only with a single example (m = 1): check how the batch axis (axis 1) is "
               "handled, for instance in sums and in shapes."),
            N_("It fails only with a single example (m = 1): look for code that drops or confuses the "
               "batch axis when it has size 1 (np.squeeze, sums over the wrong axis).")),
}


@dataclass(frozen=True)
class Exercise:
    """One graded function."""

    name: str
    """The function's name; also the grade_id of its answer cell."""
    points: float
    """What it is worth."""
    args: tuple[str, ...]
    """Argument names, in order."""
    outputs: tuple[str, ...]
    """Names of the returned tuple's items, or of the returned dict's keys."""
    returns_dict: bool
    """Backward passes return a dict, forward passes a tuple."""
    weights: Mapping[str, float] = field(default_factory=dict)
    """Output name -> share of the points (default 1 each)."""
    callees: tuple[str, ...] = ()
    """Graded functions this one calls; a caller is judged with the reference callees."""
    forward: str = ""
    """For a backward pass: the forward function that makes its cache."""
    parameters: tuple[str, ...] = ()
    """Keys of the ``parameters`` dict the function (or its forward pass) reads."""
    cache: tuple[str, ...] = ()
    """Names of the fields of one step's cache, in order."""
    protocol: LoopProtocol = field(default_factory=LoopProtocol)
    """For a loop over a cell: how it must drive the cell (see student_checks.protocol)."""
    equations: Mapping[str, str] = field(default_factory=dict)
    """The reference's quantities (names it assigns) -> the equation as the notebook writes
    it: the checks say which quantity a wrong line should compute, and how (student_checks.locate)."""

    def weight(self, output: str) -> float:
        return self.weights.get(output, 1.0)


class Family(TypedDict):
    """What the exercises of one network share: ``Exercise(..., **family)``."""

    parameters: tuple[str, ...]
    cache: tuple[str, ...]


class FunctionSpec(TypedDict):
    """What the comparison (student_checks) needs to know about one function's outputs."""

    name: str
    args: list[str]
    outputs: list[str]
    returns_dict: bool
    callees: list[str]
    cache_fields: list[str]
    protocol: LoopProtocol
    equations: dict[str, str]


HiddenCase: TypeAlias = tuple[str, tuple[object, ...], set[str]]
"""(description, arguments, facts) of one hidden test."""


# The files of an assignment's package the engine reads: attribute -> (module, name in it).
PACKAGE_FILES: dict[str, tuple[str, str]] = {"exercises": ("exercises", "EXERCISES"), "reference": ("reference", ""),
                 "catalog": ("mistakes", "CATALOG"), "cases": ("cases", "")}


class Assignment(abc.ABC):
    """One assignment. Subclasses set the class attributes and implement the abstract
    methods; the engine calls nothing else."""

    id: str = ""
    """Folder name in source/, release/ and submitted/<student>/; also the nbgrader assignment id."""
    short: str = ""
    """The prefix of the files a release ships: ``<short>_checks.py``, ``<short>_utils.py``."""
    notebook: str = ""
    """The notebook's file name, without .ipynb (default: ``id``)."""
    checks_module: str = ""
    """The name the students' checks ship under (``from <name> import check``; default
    ``<short>_checks``)."""
    reference_helpers: tuple[str, ...] = ()
    """Names of the reference's helper functions a stand-in callee needs (e.g. activations)."""
    activations: tuple[str, ...] = ()
    """Calls a learner may write np.tanh for, or the other way round (a draft's operator)."""
    normalisers: tuple[str, ...] = ()
    """Calls a learner may apply over the other axis (a draft's operator)."""
    case_hints: Mapping[str, tuple[str, str]] = {}
    """Fact about a case -> (said when only such cases pass, said when only such cases fail)."""
    utils_module: str = ""
    """The name the notebook's utilities ship under (``from <name> import ...``; default
    ``<short>_utils``), generated from ``utils_template``."""
    utils_template: str = os.path.join(PACKAGE, "shared", "utils.py")
    """The path of the text the notebook's utilities are made from (NOTEBOOK_TITLE in it becomes
    ``notebook_title``)."""
    notebook_title: str = "this notebook"
    """How the generated utilities' docstring names the notebook."""

    # Read from the assignment's package (PACKAGE_FILES) unless the subclass sets them:
    exercises: tuple[Exercise, ...] = ()
    """The graded functions, callees before callers (the judge's order): exercises.EXERCISES."""
    reference: ModuleType = None   # type: ignore[assignment]  # set by __init_subclass__
    """The module holding the reference solution, one function per exercise: reference.py."""
    catalog: tuple[Mistake, ...] = ()
    """The catalogued mistakes (contract.mutation.Mistake), as data: mistakes.CATALOG."""
    cases: CaseModule = None   # type: ignore[assignment]  # set by __init_subclass__
    """The module of the assignment's seeded cases, cases.py: HIDDEN_SHAPES and PUBLIC_SHAPES
    (Shape), and EXAMPLES ({function: Recipe}, the notebook's worked examples)."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        """An assignment is a package of fixed files read by one engine (PACKAGE_FILES): a
        new assignment, or a new exercise, has one place to go."""
        super().__init_subclass__(**kwargs)
        package = cls.__module__
        for attr, (module, name) in PACKAGE_FILES.items():
            if attr not in cls.__dict__:
                found = importlib.import_module(f"{package}.{module}")
                setattr(cls, attr, getattr(found, name) if name else found)
        cls.notebook = cls.notebook or cls.id
        cls.checks_module = cls.checks_module or f"{cls.short}_checks"
        cls.utils_module = cls.utils_module or f"{cls.short}_utils"

    # --- what the engine reads, with defaults from ``cases`` ---------------------------------

    def hidden_cases(self, name: str) -> list[HiddenCase]:
        """The hidden tests of ``name`` as (description, arguments, facts); only for grading."""
        from .cases import inputs
        return [(f"a hidden case with {s.describe(name)}", inputs(self, s.recipe(name)), s.facts(name))
                for s in self.cases.HIDDEN_SHAPES]

    def public_cases(self, name: str) -> list[tuple[str, Recipe]]:
        """The inputs the students' checks run on, as [(label, recipe)]: the notebook's worked
        example first (grading.contract.cases.Recipe)."""
        return ([("the worked example above", self.cases.EXAMPLES[name])]
                + [(f"a small example with {s.describe(name)}", s.recipe(name)) for s in self.cases.PUBLIC_SHAPES])

    def example(self, name: str) -> Recipe:
        """The recipe of the worked example the notebook prints for ``name``."""
        return self.cases.EXAMPLES[name]

    def gradient_check_lines(self, name: str, args: Sequence[object], got: object, wrong: set[str]) -> list[str]:
        """Sentences comparing wrong gradients with a numerical estimate (none by default)."""
        return []

    def finish_release_notebook(self, nb: NotebookNode) -> None:
        """Add to the notebook nbgrader's generate_assignment is making what only the release
        carries (figures drawn now, for instance; release.CourseRelease calls it); nothing by
        default."""

    # --- derived by the engine --------------------------------------------------------------

    @functools.cached_property
    def by_name(self) -> dict[str, Exercise]:
        return {e.name: e for e in self.exercises}

    @property
    def max_score(self) -> float:
        return sum(e.points for e in self.exercises)

    @property
    def source_dir(self) -> str:
        return os.path.join(SOURCE_ROOT["path"], self.id)

    @property
    def checks_file(self) -> str:
        return STUDENT_CHECKS

    @functools.cached_property
    def checks(self) -> ModuleType:
        """The students' check module (the engine's comparison code, numpy only)."""
        return _load_file(f"{self.id}_{self.checks_module}", STUDENT_CHECKS)

    @functools.cached_property
    def mistakes(self) -> Catalog:
        from .mutation import Catalog
        return Catalog(self.reference, self.catalog, self.activations, self.normalisers)

    def shipped_module(self, filename: str) -> ModuleType:
        """A helper module students get, loaded from source/ (never from a submission)."""
        return _load_file(f"{self.id}_{filename[:-3]}", os.path.join(self.source_dir, filename))

    def helper_files(self) -> list[str]:
        """The files that ship beside the notebook (what a grading kernel may see)."""
        own = [f for f in os.listdir(self.source_dir) if not f.endswith(".ipynb") and not f.startswith((".", "__"))]
        generated = {self.checks_module + ".py", CHECK_DATA} | ({self.utils_module + ".py"} if self.utils_module else set())
        return sorted(set(own) | generated)

    def spec(self, name: str) -> FunctionSpec:
        """What the comparison needs to know about one function's outputs."""
        ex = self.by_name[name]
        return {"name": name, "args": list(ex.args), "outputs": list(ex.outputs),
                "returns_dict": ex.returns_dict, "callees": list(ex.callees),
                "cache_fields": list(ex.cache), "protocol": ex.protocol, "equations": dict(ex.equations)}

    def expected(self, name: str, args: Sequence[object]) -> object:
        return self.mistakes.run(getattr(self.reference, name), args)

    def callee_source(self, name: str) -> str:
        """Source text defining the reference ``name`` and its helpers, to stand in for a
        learner's version while a caller of it is judged."""
        functions = [getattr(self.reference, h) for h in self.reference_helpers] + [getattr(self.reference, name)]
        return "\n\n".join(["import numpy as np"] + [inspect.getsource(f) for f in functions])


def _load_file(name: str, path: str) -> ModuleType:
    """The module of the Python file ``path``, run under ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python file", path=path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(assignment_id: str) -> Assignment:
    """The assignment ``assignment_id``: the ASSIGNMENT of package assignments.<id>."""
    try:
        module = importlib.import_module(f"{__package__.split('.')[0]}.{assignment_id}")
    except ImportError as exc:
        raise KeyError(f"no assignment {assignment_id!r} in this course (known: {', '.join(known()) or 'none'})") from exc
    found = getattr(module, "ASSIGNMENT", None)
    if not isinstance(found, Assignment):
        raise KeyError(f"{module.__name__} defines no ASSIGNMENT (an instance of grading.assignment.Assignment)")
    return found


def known() -> list[str]:
    """The ids of the course's assignments: packages next to grading/ with a source/ folder."""
    parent = PACKAGE
    return sorted(m.name for m in pkgutil.iter_modules([parent])
                  if m.ispkg and m.name != "grading" and os.path.isdir(os.path.join(REPO, "source", m.name)))
