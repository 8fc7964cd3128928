"""Judge functions in this process, through the same harness and JSON round trip as the
kernel path. For tests and for staff previewing the hidden tests; never for grading
untrusted code.
Rule (judging/): what a kernel sends back is data to check, never code; expected outputs stay here."""
import functools
import json

from ..shipped import harness
from . import judge
from .callees import Desk
from .judge import Judge, read_reply


def kernel_namespace(assignment):
    """The private namespace the harness runs in: check module + harness, as in a kernel."""
    namespace = {"__name__": "__grader__"}
    exec(_compiled(harness.kernel_source(assignment)), namespace)
    return namespace


@functools.lru_cache(maxsize=8)
def _compiled(source):
    """The harness compiled once (clusters.py runs a mutant through it many times)."""
    return compile(source, "<grader>", "exec")


@functools.lru_cache(maxsize=8)
def desk(assignment):
    """The reference callees' desk (callees.py), as a grading process has one."""
    return Desk(assignment)


def caller(assignment, functions):
    """A ``call(name, cases, callees)`` for the Judge that runs ``functions[name]`` here;
    the stand-ins' calls go to a Desk as they would over the kernel's channel (as JSON)."""
    ns = kernel_namespace(assignment)
    answers = desk(assignment)
    ns["_ask_callee"] = lambda question: json.loads(json.dumps(answers.answer(json.loads(json.dumps(question)))))

    def call(name, cases, callees, candidate=None):
        answers.begin(callees)
        req = judge.request(assignment, name, cases, callees)
        space = functions
        if candidate:   # a repair: defined over a copy of the notebook's names, as the harness does
            space = dict(functions)
            exec(compile(candidate, f"<repair of {name}>", "exec"), space)
        return [read_reply(assignment, json.loads(json.dumps(reply)))
                for reply in ns["call"](space, json.loads(json.dumps(req)))]
    return call


def examiner(assignment, functions):
    """An ``examine(name, job)`` for the Judge that runs repair.py's ``examine`` here."""
    ns = kernel_namespace(assignment)

    def examine(name, job):
        fn = functions.get(name)
        if not callable(fn):
            return []
        job = json.loads(json.dumps(job))
        return [json.loads(json.dumps(ns["examine"](job["spec"], job["trace"], job["public"], fn)))]
    return examine


def judge_all(assignment, functions, names=None, lang="en", examine=False, show="quantity"):
    """Verdicts for ``names`` (every exercise by default); ``examine``: locate and mend the wrong ones."""
    j = Judge(assignment, lang)
    j.show = show
    return {n: j.judge(n, caller(assignment, functions), examine=examiner(assignment, functions) if examine else None)
            for n in (names or [e.name for e in assignment.exercises])}
