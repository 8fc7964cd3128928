"""What the class got wrong together: mistake clusters.

Every function a learner got wrong carries a behaviour signature (judge.signature: its wrong
outputs on the hidden cases, rounded and hashed, with the loop protocol it broke). Learners
with the same signature made the same mistake, whatever their code looks like. ``clusters``
groups the class by signature; a group whose functions no catalogued mistake names is a
*candidate mistake*, listed first, with a draft catalog entry when an edit of the reference
reproduces the signature (checked by running the mutant through the judge, as a learner's
function is run). A wrong behaviour one learner alone has is listed apart ("seen once").

The edits tried (``search_order``): the learners' operators of contract/mutation.py on each
line (a statement left out, the other axis, the neighbouring time step, a factor or term left
out, the other activation, a transpose, += for =), each catalogued edit's core (the part that
differs once the common start and end are cut) at each place it occurs, a name replaced by a
sibling name, two operators on one line, and the catalogued edits last. The draft is a
whole-line edit of the reference, so staff can paste it into the catalog. The search is
bounded by counts of mutants run, one pass per function for all its groups. Nothing here
changes a grade.
Rule (judging/): what a kernel sends back is data to check, never code; expected outputs stay here.
"""
import functools
import inspect
import itertools
from collections import Counter, defaultdict

from ..contract import mutation
from . import inprocess
from .judge import Judge

CLASS_TRIES = 120   # mutants run for all the drafts of a class together (about 0.03 s of CPU each)
TRIES = 240         # mutants run for one function at most (all its groups together)
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
    search for drafts (none without it); ``drafter``: called as ``drafts`` is, instead of it
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
    if assignment is not None:
        budget = [tries]   # what is left of it, spent by drafts(): functions in the order of their first group
        wanted = defaultdict(list)
        for g in out:
            if g["candidate"]:
                wanted[g["function"]].append(g["signature"])
        found = {fn: (drafter or drafts)(assignment, fn, sigs, budget=budget) for fn, sigs in wanted.items()}
        for g in out:
            g["draft"] = found.get(g["function"], {}).get(g["signature"]) if g["candidate"] else None
    return {"groups": out, "unshared": dict(sorted(alone.items(), key=lambda kv: order.get(kv[0], 99))),
            "once": seen_once(results, entries, order, min_size)}


def seen_once(results, entries, order, min_size=2):
    """The wrong behaviours one learner alone has and no catalogued mistake names: candidate
    mistakes too, but a single learner's may be a slip of their own, so they are listed apart
    and without drafts. [{function, signature, student, wrong}] in the functions' order."""
    if min_size < 2:
        return []
    alone = [(fn, sig, who[0]) for (fn, sig), who in groups(results, 1)[0].items()
             if len(who) == 1 and not entries[(who[0], fn)]["diagnoses"]]
    alone.sort(key=lambda k: (order.get(k[0], 99), k[2], k[1]))
    return [{"function": fn, "signature": sig, "student": student,
             "wrong": _wrong_words(entries[(student, fn)]["feedback"])} for fn, sig, student in alone]


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


def _rewrites(reference_source, tier, catalog):
    """(old line, new line) of the learners' operators (contract/mutation.py) of one tier,
    line by line (the def line apart)."""
    siblings = mutation.sibling_names(reference_source, (*catalog.activations, *catalog.normalisers))
    for line in reference_source.splitlines()[1:]:
        code = line.strip()
        if code and not code.startswith("#"):
            yield from ((code, new) for new in
                        mutation.line_rewrites(code, siblings, catalog.activations, catalog.normalisers)[tier])


def search_order(reference_source, catalog):
    """Every edit the draft search tries, in its order: one learner's operator; a catalogued
    edit's core; a name written for a sibling; two operators on one line; a whole catalogued
    edit (whose behaviour the catalog already names, so last). Each edit once."""
    ops = operators(catalog)
    whole = {pair for m in catalog.mistakes for variant in m.variants for pair in variant}
    found = itertools.chain(_rewrites(reference_source, 0, catalog),
                            candidates(reference_source, [op for op in ops if op not in whole]),
                            _rewrites(reference_source, 1, catalog), _rewrites(reference_source, 2, catalog),
                            candidates(reference_source, [op for op in ops if op in whole]))
    return list(dict.fromkeys(edit for edit in found if edit[0] != edit[1] and edit[0] in reference_source))


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
    return drafts(assignment, function, [signature], tries, budget).get(signature)


def drafts(assignment, function, signatures, tries=TRIES, budget=None):
    """{signature: draft catalog entry} for the ``signatures`` of ``function`` that a mutant
    reproduces: one pass over the search order, each mutant run once for all of them, until
    each has its draft or ``tries`` mutants (or the class's ``budget``) are spent."""
    reference_source = inspect.getsource(getattr(assignment.mistakes.reference, function))
    judge = Judge(assignment)
    wanted, found = set(signatures), {}
    for old_line, new_line in search_order(reference_source, assignment.mistakes)[:tries]:
        if not wanted or (budget is not None and budget[0] <= 0):
            break
        if budget is not None:
            budget[0] -= 1
        sig = mutant_signature(assignment, function, reference_source.replace(old_line, new_line, 1), judge)
        if sig in wanted:
            wanted.discard(sig)
            code = f"{function}_{sig[:6]}"
            text = (f"Mistake({code!r}, {function!r},\n"
                    f"        edits(({old_line!r}, {new_line!r})),\n"
                    f"        \"TODO: what is wrong, why it matters, where to look (never the answer).\"),")
            found[sig] = {"code": code, "edit": [old_line, new_line], "checked": True, "entry": text}
    return found
