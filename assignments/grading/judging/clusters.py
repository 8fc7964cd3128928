"""What the class got wrong together: mistake clusters.

Every function a learner got wrong carries a behaviour signature (judge.signature: its wrong
outputs on the hidden cases, rounded and hashed, with the loop protocol it broke). Learners
with the same signature made the same mistake, whatever their code looks like. ``clusters``
groups the class by signature; a group whose functions no catalogued mistake names is a
*candidate mistake*, listed first, with a draft catalog entry when one of the catalog's
mutation operators, applied to the reference, reproduces the signature (checked by running
the mutant through the judge, as a learner's function is run).

An operator is a catalogued edit: each (old, new) replacement of every mistake, applied where
its ``old`` occurs, and its core (the part that differs once the common start and end are
cut), applied at each place it occurs. The draft is a whole-line edit of the reference, so
staff can paste it into the catalog. The search is bounded by counts of mutants run, largest
groups first. Nothing here changes a grade.
Rule (judging/): what a kernel sends back is data to check, never code; expected outputs stay here.
"""
import functools
import inspect
import itertools
from collections import Counter, defaultdict

from . import inprocess
from .judge import Judge

CLASS_TRIES = 120   # mutants run for all the drafts of a class together (about 0.05 to 0.15 s each)
TRIES = 160         # mutants run for one group at most
# Budgets count mutants, not seconds, so that the same class always gives the same clusters.json.
REPRESENTATIVE_LINES = 80


def groups(results, min_size=2):
    """{(function, signature): [student, ...]} of the wrong functions in results.json, and how
    many wrong functions no one else's behaviour matches (by function)."""
    found = defaultdict(list)
    for s in results["submissions"]:
        for e in s["exercises"]:
            if e.get("signature") and not e["passed"]:
                found[(e["id"], e["signature"])].append(s["student"])
    alone = Counter()
    kept = {}
    for key, who in found.items():
        if len(who) >= min_size:
            kept[key] = sorted(who)
        else:
            alone[key[0]] += len(who)
    return kept, dict(alone)


def _wrong_words(feedback):
    """What the feedback says is wrong, less its first line (the count of cases passed)."""
    lines = (feedback or "").splitlines()[1:]
    return [line.strip(" -") for line in lines if line.strip()][:8]


def clusters(results, sources=None, assignment=None, tries=CLASS_TRIES, min_size=2, drafter=None):
    """The class grouped by behaviour signature, candidate mistakes first (then by size).
    ``sources``: {student: {function: code}} for the representatives' code; ``assignment``: to
    search for drafts (none without it); ``drafter``: called as ``draft`` is, instead of it
    (one that remembers an earlier run's drafts, say)."""
    kept, alone = groups(results, min_size)
    entries = {(s["student"], e["id"]): e for s in results["submissions"] for e in s["exercises"]}
    order = {e["id"]: i for s in results["submissions"][:1] for i, e in enumerate(s["exercises"])}
    out = []
    for (fn, sig), who in kept.items():
        codes = Counter(c for w in who for c in entries[(w, fn)]["diagnoses"])
        first = who[0]
        code = ((sources or {}).get(first) or {}).get(fn, "")
        out.append({"function": fn, "signature": sig, "size": len(who), "students": who,
                    "codes": [c for c, _ in codes.most_common()], "candidate": not codes,
                    "wrong": _wrong_words(entries[(first, fn)]["feedback"]),
                    "representative": first, "code": _cut(code), "draft": None})
    out.sort(key=lambda g: (not g["candidate"], -g["size"], order.get(g["function"], 99), g["signature"]))
    budget = [tries]   # what is left of it, spent by draft()
    for g in out:
        if assignment is not None and g["candidate"] and budget[0] > 0:
            g["draft"] = (drafter or draft)(assignment, g["function"], g["signature"], budget=budget)
    return {"groups": out, "unshared": dict(sorted(alone.items(), key=lambda kv: order.get(kv[0], 99)))}


def _cut(code):
    lines = code.splitlines()
    if len(lines) <= REPRESENTATIVE_LINES:
        return code
    return "\n".join(lines[:REPRESENTATIVE_LINES] + [f"# ... {len(lines) - REPRESENTATIVE_LINES} more lines"])


# --- drafts ------------------------------------------------------------------------------

def _core(old, new):
    """The part of an edit that differs, once the start and end they share are cut."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    return old[start:len(old) - end], new[start:len(new) - end]


def operators(catalog):
    """Every distinct (old, new) replacement of the catalog, then each one's core."""
    edits = [pair for m in catalog.mistakes for variant in m.variants for pair in variant]
    whole = list(dict.fromkeys(edits))
    cores = [c for c in dict.fromkeys(_core(old, new) for old, new in whole) if c[0].strip() and c not in whole]
    return whole + cores


def _places(source, old):
    """Each start index of ``old`` in ``source``."""
    at, found = source.find(old), []
    while at >= 0:
        found.append(at)
        at = source.find(old, at + 1)
    return found


def candidates(reference_source, ops):
    """(old line, new line) for each operator at each place it applies: the whole-line edit
    that staff would paste into the catalog (it edits the first place the line occurs)."""
    seen = set()
    for old, new in ops:
        for at in _places(reference_source, old):
            begin = reference_source.rfind("\n", 0, at) + 1
            end = reference_source.find("\n", at + len(old))
            end = len(reference_source) if end < 0 else end
            old_line = reference_source[begin:end].strip()
            new_line = (reference_source[begin:at] + new + reference_source[at + len(old):end]).strip()
            if "\n" in old_line or old_line == new_line or (old_line, new_line) in seen:
                continue
            seen.add((old_line, new_line))
            yield old_line, new_line


@functools.lru_cache(maxsize=4)
def _reference_namespace(module):
    """The reference functions defined as a notebook's cells define them (run once)."""
    namespace = {}
    exec(compile(inspect.getsource(module), "<reference>", "exec"), namespace)
    return namespace


def mutant_signature(assignment, function, source, judge=None):
    """The signature of ``source`` (a version of ``function``), run as a learner's cell is:
    through the harness, in this process, on the hidden cases."""
    namespace = dict(_reference_namespace(assignment.mistakes.reference))
    try:
        exec(compile(source, f"<mutant {function}>", "exec"), namespace)
    except Exception:
        return ""
    judge = judge or Judge(assignment)
    return judge.judge(function, inprocess.caller(assignment, namespace), diagnose=False).signature


def draft(assignment, function, signature, tries=TRIES, budget=None):
    """A draft catalog entry whose mutant reproduces ``signature`` (checked by running it), or
    None. ``budget``: a one-item list, the class's mutants left, decreased as they run."""
    reference_source = inspect.getsource(getattr(assignment.mistakes.reference, function))
    judge = Judge(assignment)
    for old_line, new_line in itertools.islice(candidates(reference_source, operators(assignment.mistakes)), tries):
        if budget is not None:
            if budget[0] <= 0:
                return None
            budget[0] -= 1
        mutated = reference_source.replace(old_line, new_line, 1)
        if mutant_signature(assignment, function, mutated, judge) == signature:
            code = f"{function}_{signature[:6]}"
            text = (f"Mistake({code!r}, {function!r},\n"
                    f"        edits(({old_line!r}, {new_line!r})),\n"
                    f"        \"TODO: what is wrong, why it matters, where to look (never the answer).\"),")
            return {"code": code, "edit": [old_line, new_line], "checked": True, "entry": text}
    return None
