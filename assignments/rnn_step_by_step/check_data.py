"""The data the students' checks run on: public inputs, the reference's outputs, and
fingerprints of every catalogued mistake on those inputs (numbers, never code)."""
import itertools
import json

from . import cases, checks, expected, mistakes, spec
from .exercises import EXERCISES


def label(recipe):
    if recipe in cases.EXAMPLES.values():
        return "the worked example above"
    shape = next(s for s in cases.PUBLIC_SHAPES if s.recipe(recipe.function) == recipe)
    return f"a small example with {shape.describe(recipe.function)}"


def known_mistakes(name, public):
    """Fingerprints of each variant of each mistake, and of the first variants of two
    mistakes together, on the public inputs. Mutants the public inputs cannot tell from
    the reference are left out (the hidden tests still catch them)."""
    singles = [(p,) for p in mistakes.variants(name)]
    firsts = sorted({(code, 0) for code, _ in mistakes.variants(name)})
    combos = singles + list(itertools.combinations(firsts, 2))
    found = []
    for picks in combos:
        try:
            fn = mistakes.mutant(name, picks)
            prints = [checks.fingerprint(mistakes.run(fn, args), ref) for args, ref in public]
        except Exception:   # two edits of one line, or a mutant that raises on these inputs
            continue
        if any(p["paths"] for p in prints):
            codes = sorted({code for code, _ in picks})
            found.append({"codes": codes, "feedback": [mistakes.BY_CODE[c].feedback for c in codes],
                          "cases": prints})
    return found


def build():
    data = {"functions": {e.name: spec(e.name) for e in EXERCISES}, "cases": {}, "mistakes": {}, "detectors": {}}
    for e in EXERCISES:
        public = [(cases.inputs(r), r) for r in cases.public_recipes(e.name)]
        public = [(args, expected(e.name, args), r) for args, r in public]
        data["cases"][e.name] = [{"label": label(r), "inputs": checks.encode(args), "expected": checks.encode(ref)}
                                 for args, ref, r in public]
        data["mistakes"][e.name] = known_mistakes(e.name, [(args, ref) for args, ref, _ in public])
        data["detectors"][e.name] = [{"detector": m.detector, "codes": [m.code], "feedback": [m.feedback]}
                                     for m in mistakes.for_function(e.name) if m.detector]
    return json.dumps(data, separators=(",", ":")) + "\n"
