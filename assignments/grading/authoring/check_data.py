"""The data the students' checks run on: public inputs, the reference's outputs, and
fingerprints of every catalogued mistake on those inputs (numbers, never code).

Every number stored is rounded to ``DIGITS`` significant digits (by Python's correctly
rounded decimal conversion), inputs before anything is computed from them and outputs after:
the last bits of a float depend on which BLAS, SIMD and libm kernels the CPU selects, and
the file must come out byte-identical on any machine. The checks compare with a relative
tolerance of 1e-5, far above what the rounding changes.
Rule (authoring/): runs in the course staff's process, never on a learner's code.
"""
import itertools
import json

import numpy as np

from ..contract import cases

DIGITS = 8


def stable(x):
    """``x`` (nested tuples, lists and dicts of arrays and numbers) with every float rounded
    to DIGITS significant digits."""
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return np.array([float(f"{v:.{DIGITS}g}") for v in x.ravel().tolist()], dtype=x.dtype).reshape(x.shape)
    if isinstance(x, float):
        return float(f"{x:.{DIGITS}g}")
    if isinstance(x, (tuple, list)):
        return type(x)(stable(v) for v in x)
    if isinstance(x, dict):
        return {k: stable(v) for k, v in x.items()}
    return x


def known_mistakes(assignment, name, public):
    """Fingerprints of each variant of each mistake, and of the first variants of two
    mistakes together, on the public inputs. Mutants the public inputs cannot tell from
    the reference are left out (the hidden tests still catch them)."""
    mistakes, checks = assignment.mistakes, assignment.checks
    singles = [(p,) for p in mistakes.variants(name)]
    firsts = sorted({(code, 0) for code, _ in mistakes.variants(name)})
    combos = singles + list(itertools.combinations(firsts, 2))
    found = []
    for picks in combos:
        try:
            fn = mistakes.mutant(name, picks)
            prints = [checks.fingerprint(stable(mistakes.run(fn, args)), ref) for args, ref in public]
        except Exception:   # two edits of one line, or a mutant that raises on these inputs
            continue
        if any(p["paths"] for p in prints):
            codes = sorted({code for code, _ in picks})
            found.append({"codes": codes, "feedback": [mistakes.by_code[c].feedback for c in codes],
                          "cases": prints})
    return found


def build(assignment):
    """The whole data file, as text."""
    a, mistakes = assignment, assignment.mistakes
    data = {"functions": {e.name: a.spec(e.name) for e in a.exercises}, "cases": {}, "mistakes": {},
            "detectors": {}, "behaviours": {}, "raises": {}}
    for e in a.exercises:
        public = [(label, stable(cases.inputs(a, r))) for label, r in a.public_cases(e.name)]
        public = [(label, args, stable(a.expected(e.name, args))) for label, args in public]
        data["cases"][e.name] = [{"label": label, "inputs": a.checks.encode(args), "expected": a.checks.encode(ref)}
                                 for label, args, ref in public]
        data["mistakes"][e.name] = known_mistakes(a, e.name, [(args, ref) for _, args, ref in public])
        data["detectors"][e.name] = [{"detector": m.detector, "codes": [m.code], "feedback": [m.feedback]}
                                     for m in mistakes.for_function(e.name) if m.detector]
        data["behaviours"][e.name] = [{"code": m.code, "aspect": aspect, "label": label, "feedback": m.feedback}
                                      for m in mistakes.for_function(e.name) for aspect, label in m.behaviour]
        data["raises"][e.name] = [{"code": m.code, "pattern": m.raises, "feedback": m.feedback}
                                  for m in mistakes.for_function(e.name) if m.raises]
    return json.dumps(data, separators=(",", ":")) + "\n"
