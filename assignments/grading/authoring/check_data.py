"""The data the students' checks run on: public inputs, the reference's outputs, and
fingerprints of every catalogued mistake on those inputs (numbers, never code).

Every number stored is rounded to ``DIGITS`` significant digits (by Python's correctly
rounded decimal conversion), inputs before anything is computed from them and outputs after:
the last bits of a float depend on which BLAS, SIMD and libm kernels the CPU selects, and
the file must come out byte-identical on any machine. The checks compare with a relative
tolerance of 1e-5, far above what the rounding changes.
Rule (authoring/): runs in the course staff's process, never on a learner's code.
"""
import ast
import copy
import inspect
import itertools
import json
import re

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


class Parts(ast.NodeTransformer):
    """Reads back every sub-expression of what the reference assigns (``probed``'s
    ``parts``): a learner who splits an equation over two lines computes one of them."""

    owner = ""

    def __init__(self) -> None:
        self.count = 0

    def visit(self, node):
        node = self.generic_visit(node)
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call, ast.Subscript)) \
                or (isinstance(node, ast.Attribute) and node.attr == "T"):
            self.count += 1
            probe = ast.Call(ast.Name(PROBE, ast.Load()),
                             [ast.Constant(node.lineno), ast.Constant(f"{self.owner}#{self.count}"), node], [])
            return ast.copy_location(probe, node)
        return node


PROBE = "__probe__"


def _base(label):
    """The quantity a probe's label is of: dc#3 -> dc, a[:, :, t] -> a, grads['dWf'] -> dWf."""
    label = label.split("#")[0]
    keyed = re.fullmatch(r"\w+\[(['\"])(\w+)\1\]", label)
    return keyed.group(2) if keyed else re.match(r"\w*", label).group(0)


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def dependencies(assignment, name):
    """For each output of the reference ``name`` (and each field of a cache it returns): the
    quantities (the names it assigns) it is computed from; the quantities in order; and for
    each, the quantities it is computed from."""
    fn = getattr(assignment.reference, name)
    tree = ast.parse(inspect.getsource(fn)).body[0]
    direct, order = {}, []
    for stmt in ast.walk(tree):
        if isinstance(stmt, (ast.Assign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                for target in assignment.checks._probe_targets(t):
                    q = _base(ast.unparse(target))
                    reads = _names(stmt.value) | ({q} if not isinstance(t, ast.Name) or isinstance(stmt, ast.AugAssign)
                                                  else set())
                    direct.setdefault(q, set()).update(reads)
                    if q not in order:
                        order.append(q)
    closure = {}
    for q in direct:
        seen, todo = set(), [q]
        while todo:
            n = todo.pop()
            if n in seen or n not in direct:
                continue
            seen.add(n)
            todo += direct[n]
        closure[q] = seen
    ret = next(s for s in ast.walk(tree) if isinstance(s, ast.Return)).value
    ex = assignment.by_name[name]
    parts = dict(zip(ex.outputs, ret.elts)) if isinstance(ret, ast.Tuple) else {}
    if isinstance(ret, ast.Dict):
        spread = [v for k, v in zip(ret.keys, ret.values) if k is None]   # **grads: every other output
        parts = {ast.literal_eval(k): v for k, v in zip(ret.keys, ret.values) if k is not None}
        parts.update({o: spread[0] for o in ex.outputs if o not in parts and spread})
    depends = {}
    for output, node in parts.items():
        depends[output] = sorted(set().union(*[closure.get(n, set()) for n in _names(node)]) if _names(node) else set())
    for field in ex.cache if "cache" in ex.outputs else ():
        depends.setdefault(field, sorted(closure.get(field, set())))
    equations = ex.equations
    order = [q for q in order if (q in equations or q in ex.outputs) and q not in ("cache", "caches")]
    return depends, order, {q: sorted(closure[q] - {q}) for q in order}


def trace(assignment, name, args):
    """The reference's values on ``args`` (the worked example), line by line and inside its
    expressions (7 digits in float32; a value put in place of the learner's is judged with a tolerance of
    1e-4), each distinct value
    once: what the students' check follows a wrong function against (``locate``)."""
    checks = assignment.checks
    fn = getattr(assignment.reference, name)
    space, probed_fn, _ = checks.probed_function(fn, parts=Parts())
    _, seen = checks.run_probed(space, probed_fn, lambda: copy.deepcopy(args), items=True)
    values, index, entries = [], {}, {}
    for line, label, k, value in seen:
        # 7 significant digits, then float32: the same bytes whatever the CPU's last bits
        v = np.array([float(f"{x:.7g}") for x in value.ravel().tolist()], dtype=np.float32).reshape(value.shape)
        key = (v.shape, v.tobytes())
        if key not in index:
            index[key] = len(values)
            values.append(v)
        entries.setdefault((line, label), []).append(index[key])
    depends, order, inputs_of = dependencies(assignment, name)
    return {"values": [checks.encode(v) for v in values],
            "entries": [{"name": _base(label), "part": "#" in label, "values": ids}
                        for (line, label), ids in entries.items()],
            "depends": depends, "order": order, "inputs_of": inputs_of}


def public_cases(a, name):
    """The public cases of ``name`` as [(label, inputs, the reference's outputs)], rounded."""
    public = [(label, stable(cases.inputs(a, r))) for label, r in a.public_cases(name)]
    return [(label, args, stable(a.expected(name, args))) for label, args in public]


def examined(a, name):
    """What the grader sends a wrong function's kernel (shipped/repair.py's ``examine``):
    the function's spec, the reference's trace on the worked example and the public cases,
    all of it what the students' check already ships (no hidden case, no code)."""
    public = public_cases(a, name)
    return {"spec": a.spec(name), "trace": trace(a, name, public[0][1]),
            "public": [{"label": label, "inputs": a.checks.encode(args), "expected": a.checks.encode(ref)}
                       for label, args, ref in public]}


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
    return json.dumps(data, separators=(",", ":")) + "\n"
