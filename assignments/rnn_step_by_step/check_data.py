"""The data the students' checks run on: public inputs and the reference's outputs."""
import json

from . import cases, checks, expected, spec
from .exercises import EXERCISES


def label(recipe):
    if recipe in cases.EXAMPLES.values():
        return "the worked example above"
    shape = next(s for s in cases.PUBLIC_SHAPES if s.seed == recipe.seed)
    return f"a small example with {shape.describe(recipe.function)}"


def build():
    data = {"functions": {e.name: spec(e.name) for e in EXERCISES}, "cases": {}}
    for e in EXERCISES:
        data["cases"][e.name] = [
            {"label": label(r), "inputs": checks.encode(args), "expected": checks.encode(expected(e.name, args))}
            for r in cases.public_recipes(e.name) for args in [cases.inputs(r)]]
    return json.dumps(data, separators=(",", ":")) + "\n"
