"""The hidden tests' judge. It runs in the grading process, never in the student's kernel.

The kernel only computes: ``call(name, cases, callees)`` runs the learner's function on
the hidden inputs there and hands back its outputs (and what the harness observed); the
reference callees it calls are answered here (callees.py). Comparing
them with the reference, naming the mistake and scoring all happen here, where the
learner's code cannot reach.
Rule (judging/): what a kernel sends back is data to check, never code; expected outputs stay here.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from ..contract import messages
from ..contract.messages import N_
from .located import Examine, locate_and_mend, where
from .packed import PackedReference
from .remembered import RememberedDiagnoses
from .searched import RememberedSearches

if TYPE_CHECKING:
    from ..contract.assignment import Assignment, Exercise, HiddenCase
    from ..contract.mutation import Pick

Reply: TypeAlias = tuple[str, Any, dict[str, Any]]
"""(status, outputs or message, observations): one hidden case as the harness answered it."""
Call: TypeAlias = Callable[[str, list[tuple[object, ...]], Sequence[str]], Iterable[Reply]]
"""``call(name, [args, ...], callees)``: runs the learner's function on the hidden cases."""

PAIR_BUDGET = 4000   # pairs of mistake variants tried before giving up on naming one
CHANGED_KEPT = 200_000   # mutants' changed outputs (by function, case and variants) one judge keeps; then it starts again
PAIRS_KEPT = 10_000   # pairs of mistakes' outputs on a hidden case (about 5 kB each) one judge keeps; then it starts again
# Steps the search for a function's catalogued mistakes may take: a step is one variant (or
# pair) of the catalog tried on every hidden case. Counted, not timed, so that a cut search
# is the same on every machine and every run (docs/architecture.md gives its CPU time).
DIAGNOSIS_BUDGET = 1500


class DiagnosisCut(Exception):
    """The search for a function's mistakes used up its budget of steps."""


class StepBudget:
    """The steps one search may take (``limit``; <= 0: no limit), and the codes it had proved
    when it was cut. ``most``: the most steps one search took (for measures)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.most = limit, 0
        self._left: int | None = None
        self._found: set[str] = set()

    def run(self, search: Callable[[], list[str]]) -> tuple[list[str], bool]:
        """``search()`` within the budget: (codes, whether it was cut)."""
        self._left, self._found = (self.limit if self.limit > 0 else None), set()
        try:
            return search(), False
        except DiagnosisCut:
            return sorted(self._found), True
        finally:
            if self._left is not None:
                self.most = max(self.most, self.limit - self._left)
            self._left = None

    def spend(self, found: Iterable[str] = ()) -> None:
        """One step; ``found``: the codes proved so far, kept if the search is cut here."""
        self._found |= set(found)
        if self._left is not None:
            if self._left <= 0:
                raise DiagnosisCut()
            self._left -= 1


STATUSES = ("ok", "missing", "not_implemented", "raised")


def read_reply(assignment: Assignment, data: Mapping[str, Any]) -> Reply:
    """(status, outputs or message, observations) from the harness's reply. The reply comes
    from the learner's process, so it is checked, and its text cut to one short line. Packed
    outputs (``pack``) leave their layout and bytes in the observations' "packed"."""
    try:
        status, observed = data["status"], data.get("observed", {})
        if status not in STATUSES or not isinstance(observed, dict):
            raise ValueError(status)
        calls, deferred = observed.get("calls"), observed.get("calls_recorded")
        observed = {"reads_globals": [str(n)[:40] for n in observed.get("reads_globals", [])][:10]}
        if isinstance(calls, list):
            observed["calls"] = assignment.checks.decode_calls(calls[:1000])
        elif isinstance(deferred, int) and not isinstance(deferred, bool):
            observed["calls_recorded"] = True   # kept in the kernel: see DeferredCalls
        if status == "ok" and "packed" in data["output"]:   # as the harness sends outputs (pack)
            value, raw = assignment.checks.unpack(data["output"])
            observed["packed"] = (str(data["output"]["layout"]), raw)   # for PackedReference.right
            return "ok", value, observed
        if status == "ok":
            return "ok", assignment.checks.decode(data["output"]), observed
        return status, str(data["text"]).splitlines()[0][:240] if str(data["text"]) else status, observed
    except Exception:
        return "fault", "returned a reply the grader could not read", {}   # said again in words by harness_words


def _item(outputs, ex, name):
    return outputs[name] if ex.returns_dict else outputs[ex.outputs.index(name)]


def _all_zero(x):
    if isinstance(x, np.ndarray):
        return x.size > 0 and not np.any(x)
    if isinstance(x, (tuple, list)):
        return bool(x) and all(_all_zero(v) for v in x)
    if isinstance(x, dict):
        return bool(x) and all(_all_zero(v) for v in x.values())
    return False


def request(assignment: Assignment, name: str, cases: Sequence[Sequence[object]], callees: Iterable[str],
            defer_calls: bool = False) -> dict[str, Any]:
    """What the harness is asked: run ``name`` on ``cases`` with stand-ins for ``callees``
    (by name, with their arguments' names: the reference answers from the grading process,
    callees.py), and, for a loop over a cell, record every call it makes to that cell
    (``defer_calls``: keep them in the kernel until asked for, see DeferredCalls)."""
    spec = assignment.spec(name)
    req: dict[str, Any] = {"name": name, "cases": [assignment.checks.encode(args) for args in cases],
                           "callees": {c: assignment.spec(c)["args"] for c in callees}}
    p = spec.get("protocol")
    if p and p["callee"] in callees:
        req["record"] = {"callee": p["callee"], "callee_args": assignment.spec(p["callee"])["args"],
                         "args": spec["args"]}
        if defer_calls:
            req["record"]["defer"] = True
    return req


class DeferredCalls:
    """The calls a loop made to its cell on each hidden case, left in the kernel by the call
    and fetched, all cases at once, the first time the judge looks at one. Only a wrong
    loop's calls are looked at, so a correct one never pays for sending them (they are most
    of what judging a loop would send). ``fetch()`` returns {case: calls} ({} on failure)."""

    def __init__(self, fetch: Callable[[], dict[int, Any]]) -> None:
        self._fetch: Callable[[], dict[int, Any]] = fetch
        self._calls: dict[int, Any] | None = None

    def case(self, index: int) -> Any:
        if self._calls is None:
            try:
                self._calls = self._fetch()
            except Exception:
                self._calls = {}
        return self._calls.get(index)


@dataclass
class Verdict:
    id: str
    score: float
    max_score: float
    passed: bool
    diagnoses: list[str] = field(default_factory=list)
    feedback: str = ""
    outcome: str = "judged"   # judged | missing | not_implemented | raised | fault
    cases_passed: int = 0
    cases: int = 0
    signature: str = ""
    """The wrong behaviour's fingerprint (``signature``): the same for two learners whose
    function goes wrong the same way; empty when it passed or was not written."""
    diagnosis_cut: bool = False
    """The search for catalogued mistakes stopped at ``Judge.budget``: the codes
    found by then are kept (the score never depends on them)."""
    location: dict[str, Any] | None = None
    """Where the function first computes a wrong value on the public worked example
    (student_checks.locate: "quantity", "lineno", "line", "text"...), or None."""
    repair_cut: bool = False
    """The search for a repair stopped at its bound (``Repair.tries``, what was left of
    ``Repair.submission_tries``, or its time guard) before it found one."""
    repair: dict[str, Any] | None = None
    """A small edit of the learner's own function that passes every hidden case: "line",
    "before", "after" (the statement), "diff" (a unified diff). For the staff; the learner
    sees it only when ``Judge.show`` is "edit". None when none was found."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Outcome:
    """One hidden case: what happened and which outputs were wrong."""
    label: str
    args: tuple[object, ...]
    facts: set[str]
    status: str                       # ok | missing | not_implemented | raised | fault
    text: str = ""
    got: object = None
    observed: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    wrong: set[str] = field(default_factory=set)
    fraction: float = 0.0

    @property
    def right(self) -> bool:
        return self.status == "ok" and not self.wrong


Judged: TypeAlias = "tuple[Verdict, list[Outcome]]"
"""A verdict and the hidden cases' outcomes it was made from."""
SIGNATURE_DECIMALS = 4   # wrong outputs are rounded to this many decimals before hashing


def _rounded(x):
    """A JSON-able, rounded copy of an output: what makes two wrong outputs the same."""
    if isinstance(x, dict):
        return {str(k): _rounded(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (tuple, list)):
        return [_rounded(v) for v in x]
    if isinstance(x, (np.ndarray, float, int, np.number)) and not isinstance(x, bool):
        a = np.asarray(x)
        if a.dtype.kind in "biuf":
            a = np.round(a.astype(float), SIGNATURE_DECIMALS) + 0.0   # + 0.0: no -0.0
            return [list(a.shape), hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]]
    return repr(x)[:80]


def _wrong_items(ex, o):
    try:
        return [[name, _rounded(_item(o.got, ex, name))] for name in sorted(o.wrong)]
    except Exception:   # not the shape asked for: the whole of it
        return [["returned", _rounded(o.got)]]


def signature(ex, outcomes, findings=()):
    """A wrong function's behaviour signature: a hash of its wrong outputs on the hidden cases
    (rounded), of how the others failed (the status, an exception's type) and of the loop
    protocol aspects it broke. Empty for a function that passed or was never written."""
    if not outcomes or all(o.right for o in outcomes) or outcomes[0].status in ("missing", "not_implemented"):
        return ""
    seen = []
    for o in outcomes:
        if o.status == "ok":
            seen.append(["ok", _wrong_items(ex, o)])
        else:
            seen.append([o.status, o.text.split(":")[0][:60] if o.status == "raised" else ""])
    broken = sorted({f"{aspect}:{label}" for f in findings if f for aspect, (label, _) in f.items() if label != "ok"})
    text = json.dumps([ex.name, seen, broken], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _score(o: Outcome, ex: Exercise, counted: list[str], found: tuple[Any, Any], total: float) -> None:
    """A case's problems, wrong outputs and the share of it earned. ``counted``: the outputs
    that count (``_counted``)."""
    o.problems, o.wrong = found
    weight = sum(ex.weight(out) for out in counted) or total
    o.fraction = sum(ex.weight(out) for out in counted if out not in o.wrong) / weight


def _words_of_first_failing(judge: Judge, spec: Any, name: str, outcomes: list[Outcome]) -> None:
    """What differs, in words, on the one case the feedback shows: the first that failed (the
    others' wrong outputs are named without words, as ``compare`` names them)."""
    index, first = next(((i, o) for i, o in enumerate(outcomes) if not o.right), (0, None))
    if first is not None and first.status == "ok":
        first.problems = judge.a.checks.compare(spec, first.got, judge.expected(name, index), show_values=False)[0]


def _counted(judge: Judge, name: str, index: int) -> list[str]:
    """The outputs that count on a hidden case (kept for the class): an output that should be
    all zeros earns nothing, so that a stub returning zeros does not earn it."""
    key = (name, index)
    if key not in judge._counted:
        ex, expected = judge.a.by_name[name], judge.expected(name, index)
        judge._counted[key] = [out for out in ex.outputs if not _all_zero(_item(expected, ex, out))]
    return judge._counted[key]


def _explains(judge, name, pick, outcomes):
    """Does this variant alone reproduce at least one wrong output on the first case?"""
    o = next((o for o in outcomes if o.wrong), None)
    if o is None:
        return False
    mutant = judge.expected(name, outcomes.index(o), (pick,))
    if mutant is None:
        return False
    _, still_wrong = judge.a.checks.compare(judge.a.spec(name), o.got, mutant, words=False)
    return bool(o.wrong - still_wrong)


def _changed(judge: Judge, name: str, index: int, picks: tuple[Pick, ...]) -> set[str]:
    """The outputs a mutant changes on a hidden case: the same for every submission, so they
    are kept for the class, a pair's too (a few names, where a pair's outputs, which are not
    kept, are arrays): comparing a pair's outputs with the reference's was most of naming a
    mistake in two outputs."""
    key = (name, index, picks)
    if key in judge._changed:
        return judge._changed[key]
    changed = judge.a.checks.compare(judge.a.spec(name), judge.expected(name, index, picks),
                                     judge.expected(name, index), words=False)[1]
    if len(judge._changed) >= CHANGED_KEPT:
        judge._changed.clear()
    judge._changed[key] = changed
    return changed


class Judge:
    def __init__(self, assignment: Assignment, lang: str = "en") -> None:
        self.a = assignment
        self.lang = lang
        """The language of the words (feedback); scores and codes are the same in every one."""
        self._cases: dict[str, list[HiddenCase]] = {}
        self._expected: dict[tuple[str, int, tuple[Pick, ...]], Any] = {}
        self._pairs: dict[tuple[str, int, tuple[Pick, ...]], Any] = {}
        self._changed: dict[tuple[str, int, tuple[Pick, ...]], set[str]] = {}
        self._counted: dict[tuple[str, int], list[str]] = {}
        self._packed = PackedReference(assignment.checks, self.expected)   # right outputs in one comparison
        self._requests: dict[tuple[str, tuple[str, ...]], tuple[str, str]] = {}
        self.budget = StepBudget(DIAGNOSIS_BUDGET)
        """The steps that naming one function's mistakes may take."""
        self.diagnoses = RememberedDiagnoses()
        """The diagnoses this judge made, by what they read (remembered.py)."""
        self.searches = RememberedSearches()
        """The repair searches the kernels of this judge's class ran, by their keys (searched.py)."""
        self.show = "quantity"
        """What the learner's feedback says of a located mistake (REPAIR_SHOWS)."""
        self._findings: tuple[list[Outcome], str, list[Any]] | None = None   # the last outcomes' (``findings``)

    def cases(self, name: str) -> list[HiddenCase]:
        if name not in self._cases:
            self._cases[name] = self.a.hidden_cases(name)
        return self._cases[name]

    def request_text(self, name: str, callees: Iterable[str]) -> tuple[str, str]:
        """``request`` on this judge's hidden cases for ``name`` as two JSON texts: the
        request without its callees, and ``{"callees": ...}`` (names only: no reference code
        enters a kernel). The same for every submission, so they are encoded once per grading
        process; the first is what a warm kernel is forked with. A loop's recorded calls stay
        in the kernel until asked for (DeferredCalls)."""
        key = (name, tuple(callees))
        if key not in self._requests:
            req = request(self.a, name, [c[1] for c in self.cases(name)], callees, defer_calls=True)
            callees_text = json.dumps({"callees": req.pop("callees")})
            self._requests[key] = json.dumps(req), callees_text
        return self._requests[key]

    def expected(self, name: str, index: int, picks: tuple[Pick, ...] = ()) -> Any:
        """The reference's outputs on a hidden case, or a mutant's (cached). None when the
        mutant cannot be built (two edits of the same line) or does not return."""
        key = (name, index, picks)
        # one judge grades a whole class: keep the reference's and the mistakes' outputs (a
        # class's wrong functions try about 1,500 pairs of mistakes, each about 15 times)
        cache = self._expected if len(picks) < 2 else self._pairs
        if key not in cache:
            if cache is self._pairs and len(cache) >= PAIRS_KEPT:
                cache.clear()
            args = self.cases(name)[index][1]
            if not picks:
                cache[key] = self.a.expected(name, args)
            else:
                try:
                    cache[key] = self.a.mistakes.run(self.a.mistakes.mutant(name, picks), args)
                except Exception:
                    cache[key] = None
        return cache[key]

    def judge(self, name: str, call: Call, diagnose: bool = True, lang: str | None = None, examine: Examine | None = None) -> Verdict:
        """``call(name, [args, ...], callees)`` runs the learner's function on all the hidden
        cases at once and returns (status, outputs or message, observations) per case; it may
        return fewer, when the function is missing, not written or stopped by a fault. Its words
        are in ``lang`` (by default the judge's own language); its score and codes in none.
        ``diagnose=False``: the score and the signature alone (clusters.py tries mutants)."""
        self._findings = None
        ex = self.a.by_name[name]
        spec = self.a.spec(name)
        total = sum(ex.weight(o) for o in ex.outputs)
        cases = self.cases(name)
        previous = self.a.checks.use_messages(messages.catalog(lang or self.lang))
        try:
            v, outcomes = self._judge(ex, spec, total, cases, call, diagnose)
            if diagnose:   # the words once, after the search for the located line and its edit
                if examine is not None:
                    locate_and_mend(self, ex, v, outcomes, call, examine)
                v.feedback = self._feedback(ex, v, outcomes)
            return v
        finally:
            self.a.checks.use_messages(previous)

    def _judge(self, ex: Exercise, spec: Any, total: float, cases: list[HiddenCase], call: Call, diagnose: bool) -> Judged:
        name = ex.name
        outcomes: list[Outcome] = []
        for (label, args, facts), (status, value, observed) in zip(cases, call(name, [c[1] for c in cases], ex.callees)):
            packed = observed.pop("packed", None)
            o = Outcome(label, args, facts, status, observed=observed)
            if status == "ok":
                o.got, index = value, len(outcomes)
                found = (([], set()) if packed and self._packed.right(name, index, packed)
                         else self.a.checks.compare(spec, value, self.expected(name, index), words=False))
                _score(o, ex, _counted(self, name, index), found, total)
            else:
                o.text = value
            outcomes.append(o)
            if status in ("missing", "not_implemented", "fault"):
                break   # the same on every case; a function that hung or crashed is not run again
        if diagnose:
            _words_of_first_failing(self, spec, name, outcomes)
        return self._verdict(ex, outcomes, len(cases), diagnose), outcomes

    def _verdict(self, ex: Exercise, outcomes: list[Outcome], n: int, diagnose: bool = True) -> Verdict:
        passed_cases = sum(o.right for o in outcomes)
        passed = passed_cases == n
        score = ex.points if passed else min(
            round(ex.points * sum(o.fraction for o in outcomes) / n, 2), ex.points - 0.01)
        diagnoses, cut = ([], False) if passed or not diagnose else self.diagnoses.run(self, ex.name, outcomes)
        first = outcomes[0].status if outcomes else "missing"
        outcome = "judged" if first == "ok" else first
        v = Verdict(ex.name, float(score), float(ex.points), passed, diagnoses,
                    outcome=outcome, cases_passed=passed_cases, cases=n, diagnosis_cut=cut)
        if not passed:
            v.signature = signature(ex, outcomes, self.findings(ex.name, outcomes))
        return v

    # --- naming the mistake -------------------------------------------------------------

    def _matches(self, name, picks, outcomes):
        self.budget.spend()
        spec = self.a.spec(name)
        for i, o in enumerate(outcomes):
            mutant = self.expected(name, i, picks)
            if mutant is None or self.a.checks.differs(spec, o.got, mutant):
                return False
        return True

    def diagnose(self, name: str, outcomes: list[Outcome]) -> list[str]:
        """Codes of catalogued mistakes: those whose variant (or pair of variants of two
        mistakes) reproduces the learner's outputs on every hidden case, smallest
        explanation first; plus those a detector observed in the kernel."""
        codes: set[str] = set()
        for m in self.a.mistakes.for_function(name):
            if m.detector and any(o.observed.get(m.detector) for o in outcomes):
                codes.add(m.code)
            if m.raises and any(o.status == "raised" and re.search(m.raises, o.text) for o in outcomes):
                codes.add(m.code)
        self.budget.spend(codes)
        findings = self.findings(name, outcomes)
        if any(findings):
            behaviours = [{"code": m.code, "aspect": aspect, "label": label}
                          for m in self.a.mistakes.for_function(name) for aspect, label in m.behaviour]
            by_loop = self.a.checks.by_protocol(self.a.spec(name), behaviours, findings)
            if by_loop:   # the loop's own behaviour explains it: nothing to guess from outputs
                return sorted(codes | set(by_loop))
        if not outcomes or any(o.status != "ok" for o in outcomes):
            return sorted(codes)
        singles = [p for p in self.a.mistakes.variants(name) if self._matches(name, (p,), outcomes)]
        if singles:
            return sorted(codes | {code for code, _ in singles})
        # output by output: mistakes in different outputs (one gate here, a bias there) are
        # each proved by the outputs they reproduce exactly
        wrong: set[str] = set().union(*(o.wrong for o in outcomes))
        explained: set[str] = set()
        found: set[str] = set()
        for p in self.a.mistakes.variants(name):
            shown = self._explained_outputs(name, (p,), outcomes, wrong)
            if shown:
                explained |= shown
                found.add(p[0])
            self.budget.spend(codes | found)
        if explained == wrong:
            return sorted(codes | found)
        partial = [p for p in self.a.mistakes.variants(name) if _explains(self, name, p, outcomes)]
        for pair in self.a.mistakes.pairs(name, first=partial, same_code=True)[:PAIR_BUDGET]:
            if self._matches(name, pair, outcomes):
                return sorted(codes | {code for code, _ in pair})
            shown = self._explained_outputs(name, pair, outcomes, wrong - explained)
            if shown:
                explained |= shown
                found |= {code for code, _ in pair}
            if explained == wrong:
                break
            self.budget.spend(codes | found)
        return sorted(codes | found)

    def _explained_outputs(self, name, picks, outcomes, wrong):
        """The wrong outputs that these variants reproduce exactly on every case, provided the
        variants change no output the learner got right (and reproduce something non-zero)."""
        spec, ex = self.a.spec(name), self.a.by_name[name]
        same, nonzero = set(wrong), set()
        for i, o in enumerate(outcomes):
            mutant = self.expected(name, i, picks)
            if mutant is None:
                return set()
            changed = _changed(self, name, i, picks)
            if not changed <= wrong:
                return set()
            differs = self.a.checks.compare(spec, o.got, mutant, words=False)[1]
            same &= changed - differs
            nonzero |= {out for out in same if not _all_zero(_item(mutant, ex, out))}
            if not same:
                return set()
        return same & nonzero

    def findings(self, name: str, outcomes: list[Outcome]) -> list[Any]:
        """What each case's recorded calls show about the loop (student_checks.protocol), or [];
        worked out once for a function's outcomes (its diagnosis, signature and words read them)."""
        if self._findings is not None and self._findings[0] is outcomes and self._findings[1] == name:
            return self._findings[2]
        found = loop_findings(self.a, name, outcomes)
        self._findings = (outcomes, name, found)
        return found

    # --- words ------------------------------------------------------------------------------

    def _feedback(self, ex, v, outcomes):
        tr, ntr = self.a.checks.tr, self.a.checks.ntr
        if v.passed:
            return ntr("{name} is correct: it passed the {n} hidden case.", "{name} is correct: it passed all {n} hidden "
                       "cases.", v.cases, name=ex.name)
        if v.outcome == "missing":
            return harness_words(tr, outcomes[0].text)
        if v.outcome == "not_implemented":
            return tr("{name} is not written yet: it still raises NotImplementedError.", name=ex.name)
        lines = [ntr("{name} passed {passed} of {n} hidden case.", "{name} passed {passed} of {n} hidden cases.", v.cases,
                     name=ex.name, passed=v.cases_passed)]
        findings = self.findings(ex.name, outcomes) if v.diagnoses else []
        for code in v.diagnoses:
            m = self.a.mistakes.by_code[code]
            outputs = self.a.checks.behaviour_outputs(self.a.spec(ex.name), m.behaviour, findings)
            lines.append(tr("Recognised mistake [{code}]: {feedback}", code=code,
                            feedback=self.a.checks.mistake_words(m.feedback, outputs)))
        failing = [o for o in outcomes if not o.right]
        first = failing[0]
        label = self.a.checks.case_label(first.label)
        if first.status in ("raised", "fault"):
            lines.append(tr("On {case}, it {what}.", case=label, what=harness_words(tr, first.text)))
        elif not v.diagnoses:
            lines.append(tr("On {case}:", case=label))
            lines += [f"  - {p}" for p in first.problems[:6]]
            if v.location:
                lines += where(self, ex, v)
            loop = self.a.checks.unexplained(self.findings(ex.name, outcomes))
            if loop:
                lines.append(tr("How the loop drives its cell:"))
                lines += [f"  - {text}" for text in loop[:4]]
            else:
                lines += self.a.gradient_check_lines(ex.name, first.args, first.got, first.wrong)
        readers = sorted({n for o in outcomes for n in o.observed.get("reads_globals", [])})
        if readers and not v.diagnoses:
            lines.append(tr("It reads the notebook variable(s) {names} instead of using only its arguments: results "
                            "then depend on what else ran in the notebook.", names=", ".join(readers)))
        lines += [tr(h) for h in case_hints(self.a.case_hints, [o for o in outcomes if o.right], failing,
                                            complete=len(outcomes) == v.cases)]
        return "\n".join(lines)


def loop_findings(assignment: Assignment, name: str, outcomes: list[Outcome]) -> list[Any]:
    """What each case's recorded calls show about the loop (student_checks.protocol), or []."""
    spec = assignment.spec(name)
    if not spec.get("protocol"):
        return []
    cells = {n: assignment.spec(n) for n in assignment.by_name}
    found: list[Any] = []
    for o in outcomes:
        calls = o.observed.get("calls")
        if callable(calls):   # left in the kernel (DeferredCalls): fetched now
            calls = calls()
        try:
            found.append(assignment.checks.protocol(spec, cells, dict(zip(spec["args"], o.args)),
                                                    o.got if o.status == "ok" else None, calls) if calls else None)
        except Exception:   # a reply shaped in a way the analysis did not foresee: say nothing
            found.append(None)
    return found


def case_hints(hints: dict[str, tuple[str, str]], right: list[Outcome], wrong: list[Outcome],
               complete: bool = True) -> list[str]:
    """Say so when a fact (one time step, one example) separates passing from failing cases:
    ``hints`` maps each fact to (its sentence when only such cases pass, when only they fail)."""
    said: list[str] = []
    if not complete:   # judging stopped early: the cases not run say nothing
        return said
    for fact, (only_right, only_wrong) in hints.items():
        has = [fact in o.facts for o in right], [fact in o.facts for o in wrong]
        if right and all(has[0]) and not any(has[1]):
            said.append(only_right)
        elif right and all(has[1]) and not any(has[0]):
            said.append(only_wrong)
    return said


HARNESS_WORDS = (
    (re.compile(r"raised (?P<error>.*?)(?: \(in (?P<function>\w+), line (?P<line>\d+):(?P<code>.*)\))?", re.S),
     N_("raised {error}")),
    (re.compile(r"still raises NotImplementedError"), N_("still raises NotImplementedError")),
    (re.compile(r"returned a reply the grader could not read"), N_("returned a reply the grader could not read")),
    (re.compile(r"(?P<name>\w+) is not defined: was its cell deleted, renamed or not run\?"),
     N_("{name} is not defined: was its cell deleted, renamed or not run?")),
    (re.compile(r"(?P<name>\w+) is not a function \(it is a (?P<type>\w+)\): was its cell deleted, renamed or not run\?"),
     N_("{name} is not a function (it is a {type}): was its cell deleted, renamed or not run?")),
)


def harness_words(tr: Callable[..., str], text: str) -> str:
    """What the harness (in the learner's kernel, which knows no language) said, in the
    judge's language: its few fixed sentences are recognised and said again."""
    for pattern, template in HARNESS_WORDS:
        found = pattern.fullmatch(text)
        if found:
            fields = {k: v for k, v in found.groupdict().items() if v is not None}
            words: str = tr(template, **{k: fields[k] for k in fields if k in ("error", "name", "type")})
            if "line" in fields:
                words += tr(" (in {function}, line {line}:{code})", function=fields["function"],
                            line=fields["line"], code=fields["code"])
            return words
    return text
