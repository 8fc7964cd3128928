"""The data the students' checks run on: public inputs, the reference's outputs, and
fingerprints of every catalogued mistake on those inputs (numbers, never code).

Every number stored is rounded to ``contract.trace.DIGITS`` significant digits (by Python's correctly
rounded decimal conversion), inputs before anything is computed from them and outputs after:
the last bits of a float depend on which BLAS, SIMD and libm kernels the CPU selects, and
the file must come out byte-identical on any machine. The checks compare with a relative
tolerance of 1e-5, far above what the rounding changes.
Rule (authoring/): runs in the course staff's process, never on a learner's code.
"""
import itertools
import json

from ..contract.trace import public_cases, stable, trace

PER_FUNCTION = ("cases", "mistakes", "trace")
"""The sections the checks read one function at a time (most of the file's bytes): the file's
"offsets" say where each function's value is, so that the checks decode only those they read
(student_checks._load)."""


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
            "detectors": {}, "behaviours": {}, "raises": {}, "trace": {}}
    for e in a.exercises:
        public = public_cases(a, e.name)
        data["cases"][e.name] = [{"label": label, "inputs": a.checks.encode(args), "expected": a.checks.encode(ref)}
                                 for label, args, ref in public]
        data["trace"][e.name] = trace(a, e.name, public[0][1])
        data["mistakes"][e.name] = known_mistakes(a, e.name, [(args, ref) for _, args, ref in public])
        data["detectors"][e.name] = [{"detector": m.detector, "codes": [m.code], "feedback": [m.feedback]}
                                     for m in mistakes.for_function(e.name) if m.detector]
        data["behaviours"][e.name] = [{"code": m.code, "aspect": aspect, "label": label, "feedback": m.feedback}
                                      for m in mistakes.for_function(e.name) for aspect, label in m.behaviour]
        data["raises"][e.name] = [{"code": m.code, "pattern": m.raises, "feedback": m.feedback}
                                  for m in mistakes.for_function(e.name) if m.raises]
    return with_offsets(data)


def with_offsets(data):
    """``data`` as one JSON object (ASCII, compact) whose last member, "offsets", gives where in
    the file each section's value starts and ends, and for the PER_FUNCTION sections each
    function's: a check reads the file's bytes and decodes only the values it needs, instead of
    the whole file (most of the first check's time in a fresh kernel)."""
    out, offsets = ["{"], {}
    at = 1

    def put(text):
        nonlocal at
        out.append(text)
        at += len(text)

    for i, (section, value) in enumerate(data.items()):
        put(("," if i else "") + json.dumps(section) + ":")
        if section in PER_FUNCTION:
            offsets[section] = {}
            put("{")
            for j, (name, part) in enumerate(value.items()):
                put(("," if j else "") + json.dumps(name) + ":")
                start = at
                put(json.dumps(part, separators=(",", ":")))
                offsets[section][name] = [start, at]
            put("}")
        else:
            start = at
            put(json.dumps(value, separators=(",", ":")))
            offsets[section] = [start, at]
    put(',"offsets":' + json.dumps(offsets, separators=(",", ":")) + "}\n")
    return "".join(out)
