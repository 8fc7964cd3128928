"""JudgedExecute, the nbgrader preprocessor that executes the learner's cells (served by the
harness: upstream/served_cells.py) and judges each graded function (judge.py) in a kernel
with the harness in it (harness_kernel.py); configured in nbgrader_config.py.
Rule (judging/): what comes back from the kernel is data to check; expected outputs never
leave the grading process."""
import asyncio
import contextlib
import functools
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

import nbformat
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader import utils
from nbgrader.preprocessors import Execute
from traitlets import Bool, Enum, Float, Integer, Unicode, default
from traitlets.config import Configurable

from ..contract import messages
from ..contract.assignment import load as load_assignment
from ..contract.messages import N_
from ..measure import steps
from ..sandbox.kernel import GradingKernelManager
from ..shipped import harness
from ..shipped.repair import REPAIR_TRIES
from ..upstream.served_cells import ServedCells, output_validator
from .callees import Desk
from .channel import Channel, ChannelClosed, ChannelTimeout, OutputBudget
from .harness_kernel import HarnessKernel, stash_key
from .judge import DeferredCalls, Judge, read_reply
from .located import REPAIR_SHOWS

# what the judge writes into a cell's outputs (in the notebook's language: messages.say)
STOPPED = N_("stopped by the grader")
RESTARTED = {"timeout": N_("The grader stopped this cell (timeout) and restarted the kernel."),
             "dead_kernel": N_("The grader stopped this cell (dead_kernel) and restarted the kernel.")}
NO_JUDGE = (N_("no judge for this cell"), N_("The grader has no judge for this graded cell."))


@functools.lru_cache(maxsize=None)
def grader_thread():
    """The thread that runs every judged notebook of a process whose own thread runs an event
    loop (``JudgedExecute.preprocess``). It lives as long as the process: the zygote and the
    kernels it starts are bound to it (bubblewrap's --die-with-parent ends them with it)."""
    return ThreadPoolExecutor(1, thread_name_prefix="grader")


@functools.lru_cache(maxsize=None)
def prepared(assignment):
    """The judge, the harness's text and what a warm kernel is forked with, made once per
    grading process and reused for every submission (local workers inherit it: the pipeline
    makes it before they fork): the hidden cases and the reference's outputs on them are
    the same for all. A warm kernel's zygote stashes the harness's code (compiled once) and
    every judged call's request, under keys (zygotes.py's ``stash``)."""
    output_validator()   # compiled here too, so that forked workers inherit it
    judge, source = Judge(assignment), harness.kernel_source(assignment)
    desk(assignment)   # the reference callees, answered in this process (indexed before the fork)
    # the harness, run once in the zygote; each request parsed there, its cases decoded there
    stash = {stash_key(source): {"text": source, "compile": True, "run": True, "filename": "<grader>"}}
    for ex in assignment.exercises:
        text, _ = judge.request_text(ex.name, ex.callees)   # never the callees' reference source
        stash[stash_key(text)] = {"text": text, "json": True, "decode": stash_key(source)}
    cells = json.dumps(own_cells(assignment))   # compiled once there, for every kernel
    stash[stash_key(cells)] = {"text": cells, "cells": True}
    return judge, source, stash


def own_cells(assignment):
    """The texts of the notebook's code cells that are the same in every submission as
    released: no answer, no test, nothing nbgrader's release would change (no delimiter).
    A test cell's text never goes into a kernel: its hidden tests are in it."""
    try:
        nb = nbformat.read(os.path.join(assignment.source_dir, assignment.notebook + ".ipynb"), as_version=4)
    except (OSError, ValueError):   # no notebook here: each kernel compiles them
        return []
    return [cell.source for cell in nb.cells
            if cell.cell_type == "code" and not utils.is_solution(cell) and not utils.is_grade(cell)
            and "BEGIN" not in cell.source and "END" not in cell.source]


@functools.lru_cache(maxsize=None)
def desk(assignment):
    """The reference callees of ``assignment``, answered in the grading process (callees.py)."""
    return Desk(assignment)


class Repair(Configurable):
    """Where a wrong function first goes wrong, and a small edit of the learner's own code that
    mends it (shipped/repair.py, inside the learner's sandboxed kernel; verified here on every
    hidden case). Only wrong functions pay for it; the score never depends on it."""

    search = Bool(True, help="Locate and search for a repair for every wrong function (under a second "
                             "of the learner's kernel each).").tag(config=True)
    tries = Integer(REPAIR_TRIES, help="Candidate edits run in the learner's kernel, at most, for one "
                                       "wrong function (counted, so the same repair on any machine; about "
                                       "1 ms each).").tag(config=True)
    submission_tries = Integer(2 * REPAIR_TRIES, help="Candidate edits run, at most, for all the wrong "
                                                      "functions of one submission together. A search cut "
                                                      "short says so (flag repair_cut:<function>)."
                               ).tag(config=True)
    remember = Bool(True, help="Reuse a search that two other submissions' kernels ran on the same function, "
                               "reading the same values (the same key, the same answer), instead of running "
                               "it again: the same repair, checked against this learner's own source and "
                               "hidden cases (judging/searched.py).").tag(config=True)
    show = Enum(list(REPAIR_SHOWS), default_value="quantity",
                help="What the learner's feedback says: 'line' (the line where the first wrong value is "
                     "computed), 'quantity' (and the quantity it should compute, with its equation), or "
                     "'edit' (and the edit that mends it). The staff always see the repair: report.json and "
                     "the verdict's metadata.").tag(config=True)


class JudgedExecute(ServedCells, HarnessKernel, Execute):
    """Execute the learner's cells as nbgrader does, then judge every graded function in the
    grading process: the kernel runs the learner's function on hidden inputs and hands back
    its outputs, and each test cell's outputs become the verdict (feedback and score).

    Test cells are never executed, so nothing the learner prints, warns or rebinds reaches
    them: stderr cannot zero a passing test and a patched ``np.testing`` cannot pass a
    failing one. Functions are judged after all cells ran, callees first, whatever the order
    of the cells. A cell or call that hangs, kills the kernel or floods output costs only
    itself: the kernel is replaced, the cells that ran cleanly are replayed, and grading goes on.
    """

    assignment = Unicode(
        "", help="The id of the assignment to judge (its package assignments.<id>); by default "
                 "the one nbgrader is grading, from the notebook's resources.",
    ).tag(config=True)
    test_prefix = Unicode(
        "test_", help="A graded test cell with grade_id test_<name> judges the function <name>."
    ).tag(config=True)
    call_timeout = Float(30, help="Seconds a learner's function may take on all its hidden "
                                  "cases together.").tag(config=True)
    notebook_timeout = Float(900, help="Seconds a whole notebook may take; then what is left "
                                       "is not run and scores nothing.").tag(config=True)
    max_output_bytes = Integer(100_000, help="Output kept from one cell; the rest is dropped "
                                             "while it arrives.").tag(config=True)
    max_reply_bytes = Integer(4_000_000, help="Largest line (one case's reply) a judged call may send back: a line "
                              "is parsed whole, at up to about 25 times its size in the worker's memory. "
                              "The largest the sample class sends is about 70 kB.").tag(config=True)
    store_widget_state = Bool(False)   # widget messages would pile up in memory unchecked
    prestart = Bool(True, help="While a submission is graded, boot the kernel for the next one "
                               "(each submission still gets a fresh kernel and sandbox). Only for "
                               "cold kernels: a warm one is forked when needed.").tag(config=True)
    serve_cells = Bool(True, help="Run the learner's cells as jobs of the one request that serves "
                                  "the judge (the harness runs each as ipykernel runs an execute "
                                  "request, and its outputs arrive on IOPub as usual) instead of one "
                                  "execute request per cell: the same notebook, without ipykernel's "
                                  "and nbclient's work per request. Cells with top-level await, and "
                                  "every cell when streams are coalesced, still get a request of "
                                  "their own.").tag(config=True)

    @default("shutdown_kernel")
    def _kill_when_done(self):
        return "immediate"   # nothing in the kernel is worth a graceful goodbye: saves ~0.2 s

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", GradingKernelManager)
        super().__init__(*args, **kwargs)

    # --- the run ------------------------------------------------------------------------------

    def preprocess(self, nb, resources, km=None):
        """Execute and judge the notebook. When an event loop runs in this thread, as when
        formgrader's Autograde button runs nbgrader inside the Jupyter server's request, the
        run moves to one thread of the engine's own: nbclient would otherwise run its
        coroutines on a helper thread of jupyter_core's while this one reads the same kernel
        sockets, and ZeroMQ's sockets are not thread-safe (measured in that setting: 1.6 to
        10.5 s an Autograde instead of 0.6, and once libzmq aborting the process)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._preprocess(nb, resources, km)
        return grader_thread().submit(self._preprocess, nb, resources, km).result()

    def _preprocess(self, nb, resources, km=None):
        from nbclient import NotebookClient
        self._assignment = load_assignment(self.assignment or resources.get("nbgrader", {}).get("assignment", ""))
        self._judge, self._kernel_source, self._stash = prepared(self._assignment)
        self._lang = messages.notebook_language(nb.metadata)   # the words of the feedback, never the score
        NotebookClient.__init__(self, nb, km)
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        self._events, self._clean, self._deadline = [], [], time.monotonic() + self.notebook_timeout
        self._kernels = 0   # kernels replaced so far: what one recorded, the next does not have
        self._budget = OutputBudget(self.max_output_bytes)
        self._channel = Channel(self._kernel_source, self.max_reply_bytes)
        tests = {}
        with started_kernel(self):
            for index, cell in enumerate(self.nb.cells):
                name = self.exercise_of(cell)
                if name:
                    tests[name] = index
                elif utils.is_grade(cell) and cell.cell_type == "code" and not utils.is_solution(cell):
                    self._no_judge(cell)   # hidden tests never run in the learner's kernel
                elif cell.cell_type == "code":
                    self._run_learner_cell(cell, index)
            lap(self, "learner's cells")
            try:
                for name in [ex.name for ex in self._assignment.exercises if ex.name in tests]:   # callees first
                    self._judge_cell(name, tests[name])
                lap(self, "judged calls")
            finally:
                self._channel.close()   # the harness's request ends
        self.set_widgets_metadata()
        self.nb.metadata.setdefault("grader", {})["events"] = self._events
        return self.nb, self.resources

    def _no_judge(self, cell):
        self._event("no_judge", cell.metadata["nbgrader"].get("grade_id", "?"), "a graded cell with no judge")
        cell.outputs = [new_output("error", ename="NoJudge", evalue=messages.say(self._lang, NO_JUDGE[0]),
                                   traceback=[messages.say(self._lang, NO_JUDGE[1])])]

    def _event(self, kind, where, detail=""):
        if kind == "dead_kernel" and getattr(self.km, "oom_killed", lambda: False)():
            # its cgroup's memory limit made Linux kill it (kernel.py's Cgroups)
            kind, detail = "memory", "used more memory than a kernel may, and was killed"
        self._events.append({"kind": kind, "where": where, "detail": detail})

    # --- the learner's cells -------------------------------------------------------------------

    @steps.step("learner's cells")
    def _run_learner_cell(self, cell, index):
        if time.monotonic() > self._deadline:
            self._event("notebook_timeout", f"cell {index}", "not run: the notebook's time was up")
            return
        try:
            if self._can_serve(cell):
                self._run_on_harness(cell, index)
            else:
                self._stop_harness()
                self.execute_cell(cell, index, store_history=True)
        except (CellTimeoutError, DeadKernelError, RuntimeError) as exc:
            kind = "dead_kernel" if isinstance(exc, DeadKernelError) else "timeout"
            self._event(kind, f"cell {index}", str(exc).splitlines()[0][:200] if str(exc) else "")
            cell.outputs.append(new_output("error", ename=type(exc).__name__, evalue=messages.say(self._lang, STOPPED),
                                           traceback=[messages.say(self._lang, RESTARTED[kind])]))
            self._replace_kernel()
            return
        names = [o.get("ename") for o in cell.outputs if o.output_type == "error"]
        if "CellTimeoutError" in names:
            self._event("timeout", f"cell {index}", f"stopped after {self.timeout} s")
        elif "MemoryError" in names:
            self._event("memory", f"cell {index}", "ran out of memory")
        elif "SystemExit" in names:
            self._event("exit", f"cell {index}", "raised SystemExit")
        else:
            self._clean.append(index)

    # --- judging --------------------------------------------------------------------------------

    def exercise_of(self, cell):
        if cell.cell_type != "code" or not utils.is_grade(cell) or utils.is_solution(cell):
            return None
        grade_id = cell.metadata["nbgrader"].get("grade_id", "")
        name = grade_id[len(self.test_prefix):] if grade_id.startswith(self.test_prefix) else None
        return name if name in self._assignment.by_name else None

    def _judge_cell(self, name, index):
        repair = Repair(parent=self)   # a candidate repair runs in place of the learner's function (_call)
        self._judge.show, examine = repair.show, functools.partial(examined_in_kernel, self, repair) if repair.search else None
        verdict = self._judge.judge(name, self._call, lang=self._lang, examine=examine)
        if verdict.outcome == "missing":   # say why, when its cell does not even compile
            verdict.feedback = self._why_missing(name) or verdict.feedback
        cell = self.nb.cells[index]
        cell.outputs = verdict_outputs(verdict)
        cell.execution_count = None
        cell.metadata["judge"] = verdict.to_json()

    def _why_missing(self, name):
        """Why ``name`` is not defined when its cell does not compile, in the notebook's
        language; "" when it compiles."""
        checks = self._assignment.checks
        previous = checks.use_messages(messages.catalog(self._lang))
        try:
            for cell in self.nb.cells:
                if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade_id") == name:
                    problem = checks.syntax_problem(cell.source, name)
                    if problem:
                        return checks.tr("{name} is not defined: {problem}", name=name, problem=problem)
            return ""
        finally:
            checks.use_messages(previous)

    @steps.step("judged calls")
    def _call(self, name, cases, callees, candidate=None):
        """Run the function on all its hidden cases in one job (call_timeout seconds for
        them all): one (status, outputs or message, observations) per case answered, then a
        fault for the case that hung or killed the kernel, if one did."""
        if time.monotonic() > self._deadline:
            self._event("notebook_timeout", name, "not judged: the notebook's time was up")
            return [("fault", "was not run: the notebook used up its time", {})]
        # the judge's own hidden cases: ``cases`` are those, as Judge.judge hands them
        text, callees_text = self._judge.request_text(name, callees)
        key = self._stashed(text)
        callees_text = callees_text if candidate is None else json.dumps({**json.loads(callees_text), "candidate": candidate})
        job = {"op": "call", "extra": callees_text, **({"key": key} if key else {"request": text})}
        kernel = self._kernels
        answers = desk(self._assignment)
        answers.begin(callees)
        replies, fault = self._ask(job, name, "while called on a hidden case", answers)
        for kind, whys in (("refused_reply", self._channel.refused), ("refused_callee", answers.refused)):
            for why in sorted(set(whys)):   # what the learner's process sent, or a callee's call, refused
                self._event(kind, name, why)
        results = []
        for data in replies:
            status, value, observed = read_reply(self._assignment, data)
            if status == "fault":
                self._event("no_result", name, value)
            elif status == "raised" and "MemoryError" in value:
                self._event("memory", name, "ran out of memory on a hidden case")
            elif status == "raised" and value.startswith(("raised SystemExit", "raised KeyboardInterrupt")):
                self._event("exit", name, value[:200])
            results.append((status, value, observed))
        if any([observed.pop("calls_recorded", False) for _, _, observed in results]):
            recorded = DeferredCalls(functools.partial(self._recorded, name, kernel))
            for case, (_, _, observed) in enumerate(results):
                observed["calls"] = functools.partial(recorded.case, case)
        finished = len(results) == len(cases) or (results and results[-1][0] in ("missing", "not_implemented", "fault"))
        if fault is None and not finished:
            self._event("no_result", name, "the kernel answered nothing the grader could read")
            fault = "returned no result the grader could read"
        return results[:len(cases)] + ([("fault", fault, {})] if fault and not finished else [])

    def _ask(self, job, name, doing, callees=None):
        """One job for the harness, which is started on its first one: (its replies, None),
        or (the replies that had arrived, why it stopped) after replacing a kernel that hung
        or died. If the learner's code closed the harness's socket and the kernel lives, the
        socket is connected again: a cell that did it costs nothing more (the harness is
        started again), a function that did it costs only that function."""
        for attempt in (1, 2):
            started = self._channel.serving
            try:
                self._start_harness()
                return self._channel.ask(job, self.call_timeout, callees), None
            except ChannelTimeout as exc:
                self._event("timeout", name, doing)
                self._replace_kernel()
                return getattr(exc, "replies", []), f"did not finish within {self.call_timeout:g} s and had to be stopped"
            except ChannelClosed as exc:
                if self._died():
                    self._event("dead_kernel", name, doing)
                    self._replace_kernel()
                    return getattr(exc, "replies", []), "made the kernel die (os._exit, a crash or a kill)"
                self._reconnect()
                if started or attempt == 2:
                    self._event("no_result", name, "its code closed the grader's channel to the kernel")
                    return getattr(exc, "replies", []), "closed the grader's channel to the kernel"

    def _recorded(self, name, kernel):
        """{case: calls} that the last judged call of this kernel recorded (see DeferredCalls);
        {} when the kernel was replaced since, or the harness does not answer in time."""
        if kernel != self._kernels or time.monotonic() > self._deadline:
            return {}
        replies, fault = self._ask({"op": "recorded"}, name, "while sending the calls its loop made")
        found = {}
        for data in [] if fault else replies:
            try:
                found[data["case"]] = self._assignment.checks.decode_calls(data["calls"][:1000])
            except Exception:   # it comes from the learner's process: unreadable means unknown
                pass
        return found


@contextlib.contextmanager
def started_kernel(grader):
    """The grader's kernel for the notebook, ready, with the spare for the next one booting;
    what starting them costs this process counts as "kernel start" (measure/steps.py)."""
    with contextlib.ExitStack() as kernel:
        with steps.step("kernel start"):
            kernel.enter_context(grader.setup_kernel())
            grader._ready()
            grader._meter = steps.KernelMeter(lambda: getattr(grader.km, "kernel_used", lambda: None)())
            lap(grader, "start")
            grader._start_spare()
        yield


def lap(grader, name):
    """Count what the grader's kernel used since the last lap as its part of step ``name``."""
    meter = getattr(grader, "_meter", None)
    if meter is not None:
        meter.lap(name)


def judged_wrong(grader):
    """The functions of the notebook being graded that were judged wrong so far: their test
    cells' verdicts, as ``_judge_cell`` keeps them (as pipeline.verdicts reads them)."""
    judged = [(c.metadata.get("judge"), c.metadata.get("nbgrader", {}).get("grade_id")) for c in grader.nb.cells]
    return {j["id"] for j, grade_id in judged if isinstance(j, dict) and isinstance(j.get("id"), str)
            and grade_id == grader.test_prefix + j["id"] and j.get("passed") is False}


def examined_in_kernel(grader, repair, name, job):
    """One "examine" job in the learner's kernel (repair.py), its candidates bounded by what is
    left of the submission's (``Repair.submission_tries``); [] when it did not answer in time.
    A search that the class's kernels already ran is not run again (searched.py). A function
    that calls one of the learner's functions judged wrong has only its located line searched
    (repair.examine's ``wrong``)."""
    if getattr(grader, "_tries_for", None) is not grader.nb:   # the notebook's first examine job
        grader._tries_left, grader._tries_for = repair.submission_tries, grader.nb
    searches, aid = grader._judge.searches, grader._assignment.id
    job = dict(job, tries=max(0, min(repair.tries, grader._tries_left)),
               known=searches.known(aid, name) if repair.remember else [],
               wrong=sorted(judged_wrong(grader) & set(getattr(grader._assignment.by_name.get(name), "callees", ()))))
    lap(grader, "judged calls")
    replies, fault = _examine(grader, job, name)
    if replies and replies[0].get("remembered") is True:
        recalled = searches.recall(aid, name, replies[0])
        replies, fault = ([recalled], None) if recalled is not None else _examine(grader, dict(job, known=[]), name)
    elif replies and not fault:
        searches.keep(aid, name, replies[0], grader.resources["metadata"]["path"])
    tried = replies[0].get("tried") if replies else None
    grader._tries_left -= min(tried, job["tries"]) if type(tried) is int and tried >= 0 else job["tries"]
    lap(grader, "locate and repair")
    return [] if fault else replies


def _examine(grader, job, name):
    """The kernel's replies to an examine job (the first a dict, or none), and its fault."""
    replies, fault = grader._ask(job, name, "while its mistake was located") if time.monotonic() < grader._deadline \
        else ([], "late")
    return (replies[:1] if replies and isinstance(replies[0], dict) else []), fault


def verdict_outputs(v):
    """A test cell's outputs that nbgrader's determine_grade scores as ``v.score``:
    an error for no credit, otherwise the feedback and the score as the cell's result.
    Built as nodes, as nbformat's new_output builds them but without checking each against
    the schema (0.2 ms apiece, for outputs that are valid by construction); nbgrader
    validates the whole notebook when it writes it."""
    if v.score == 0:
        lines = v.feedback.splitlines() or ["Failed."]
        return [NotebookNode(output_type="error", ename="HiddenTestsFailed", evalue=lines[0],
                             traceback=["\x1b[0;31m✗ " + lines[0] + "\x1b[0m"] + lines[1:])]
    mark = "✓" if v.passed else "✗"
    return [NotebookNode(output_type="stream", name="stdout", text=f"{mark} {v.feedback}\n"),
            NotebookNode(output_type="execute_result", data={"text/plain": repr(v.score)}, execution_count=None,
                         metadata={})]
