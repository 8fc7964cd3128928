"""The hidden tests' judge. It runs in the grading process, never in the student's kernel.

The kernel only computes: ``call(name, args, callees)`` runs the learner's function on
hidden inputs there and hands back its outputs. Comparing them with the reference, naming
the mistake and scoring all happen here, where the learner's code cannot reach.
"""
from dataclasses import asdict, dataclass, field


@dataclass
class Verdict:
    id: str
    score: float
    max_score: float
    passed: bool
    diagnoses: list = field(default_factory=list)
    feedback: str = ""
    outcome: str = "judged"   # judged | missing | not_implemented | raised | fault
    cases_passed: int = 0
    cases: int = 0

    def to_json(self):
        return asdict(self)


@dataclass
class Outcome:
    """One hidden case: what happened and which outputs were wrong."""
    label: str
    args: tuple
    facts: set
    status: str                       # ok | missing | not_implemented | raised | fault
    text: str = ""
    got: object = None
    problems: list = field(default_factory=list)
    wrong: set = field(default_factory=set)
    fraction: float = 0.0


class Judge:
    def __init__(self, assignment):
        self.a = assignment
        self._cases = {}

    def cases(self, name):
        if name not in self._cases:
            self._cases[name] = self.a.hidden_cases(name)
        return self._cases[name]

    def judge(self, name, call):
        ex = self.a.BY_NAME[name]
        spec = self.a.spec(name)
        total = sum(ex.weight(o) for o in ex.outputs)
        outcomes = []
        cases = self.cases(name)
        for label, args, facts in cases:
            status, value = call(name, args, ex.callees)
            o = Outcome(label, args, facts, status)
            if status == "ok":
                o.got = value
                o.problems, o.wrong = self.a.checks.compare(
                    spec, value, self.a.expected(name, args), show_values=False)
                o.fraction = 1 - sum(ex.weight(w) for w in o.wrong) / total
            else:
                o.text = value
            outcomes.append(o)
            if status in ("missing", "not_implemented"):
                break   # the same on every case
        return self._verdict(ex, outcomes, len(cases))

    def _verdict(self, ex, outcomes, n):
        passed_cases = sum(o.status == "ok" and not o.wrong for o in outcomes)
        passed = passed_cases == n
        score = ex.points if passed else min(
            round(ex.points * sum(o.fraction for o in outcomes) / n, 2), ex.points - 0.01)
        diagnoses = [] if passed else self.diagnose(ex.name, outcomes)
        first = outcomes[0].status if outcomes else "missing"
        outcome = "judged" if first == "ok" else first
        v = Verdict(ex.name, float(score), float(ex.points), passed, diagnoses,
                    outcome=outcome, cases_passed=passed_cases, cases=n)
        v.feedback = self._feedback(ex, v, outcomes)
        return v

    def diagnose(self, name, outcomes):
        """Codes of the catalogued mistakes (alone or two together) whose outputs match the
        learner's on every hidden case. Smallest explanation first."""
        if not outcomes or any(o.status != "ok" for o in outcomes):
            return []
        spec = self.a.spec(name)
        for size in (1, 2):
            found = []
            for codes in self.a.mistakes.candidates(name):
                if len(codes) != size:
                    continue
                fn = self.a.mistakes.mutant(name, codes)
                if all(not self.a.checks.compare(spec, o.got, self.a.mistakes.run(fn, o.args),
                                                 show_values=False)[0] for o in outcomes):
                    found.append(codes)
            if found:
                return sorted({c for codes in found for c in codes})
        return []

    def _hints(self, right, wrong):
        """Say so when a fact (one time step, one example) separates passing from failing cases."""
        hints = []
        for fact, (only_right, only_wrong) in getattr(self.a, "CASE_HINTS", {}).items():
            has = [fact in o.facts for o in right], [fact in o.facts for o in wrong]
            if right and all(has[0]) and not any(has[1]):
                hints.append(only_right)
            elif right and all(has[1]) and not any(has[0]):
                hints.append(only_wrong)
        return hints

    def _feedback(self, ex, v, outcomes):
        if v.passed:
            return f"{ex.name} is correct: it passed all {v.cases} hidden cases."
        if v.outcome == "missing":
            return outcomes[0].text
        if v.outcome == "not_implemented":
            return f"{ex.name} is not written yet: it still raises NotImplementedError."
        lines = [f"{ex.name} passed {v.cases_passed} of {v.cases} hidden cases."]
        for code in v.diagnoses:
            lines.append(f"Recognised mistake [{code}]: {self.a.mistakes.BY_CODE[code].feedback}")
        failing = [o for o in outcomes if o.status != "ok" or o.wrong]
        first = failing[0]
        if first.status in ("raised", "fault"):
            lines.append(f"On {first.label}, it {first.text}.")
        elif not v.diagnoses:
            lines.append(f"On {first.label}:")
            lines += [f"  - {p}" for p in first.problems[:6]]
        lines += self._hints([o for o in outcomes if o.status == "ok" and not o.wrong], failing)
        return "\n".join(lines)
