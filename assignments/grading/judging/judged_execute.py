"""nbgrader preprocessors of the grading pipeline (configured in nbgrader_config.py)."""
import datetime
import functools
import hashlib
import inspect
import time
from queue import Empty

import zmq
from jupyter_core.utils import run_sync
from nbclient.client import timestamp
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async
from nbformat import NotebookNode, from_dict
from nbformat.corpus.words import generate_corpus_id
from nbformat.v4 import new_output
from nbformat.validator import ValidationError
from nbgrader import utils
from nbgrader.preprocessors import Execute
from traitlets import Bool, Float, Integer, Unicode, default

from ..contract.assignment import load as load_assignment
from ..sandbox.kernel import SPARE, GradingKernelManager
from ..shipped import harness
from .channel import Channel, ChannelClosed, ChannelTimeout, OutputBudget
from .judge import Judge, Recorded, read_reply


@functools.lru_cache(maxsize=None)
def prepared(assignment):
    """The judge, the harness's text and what a warm kernel is forked with, made once per
    grading process and reused for every submission (local workers inherit it: the pipeline
    makes it before they fork): the hidden cases and the reference's outputs on them are
    the same for all. A warm kernel's zygote keeps the harness's code
    (compiled once) and every judged call's request, under keys (kernel.py's ``keep``)."""
    output_validator()   # compiled here too, so that forked workers inherit it
    judge, source = Judge(assignment), harness.kernel_source(assignment)
    # the harness, run once in the zygote; each request parsed there, its cases decoded there
    keep = {kept_key(source): {"text": source, "compile": True, "run": True, "filename": "<grader>"}}
    for ex in assignment.exercises:
        text, _ = judge.request_text(ex.name, ex.callees)   # never the callees' reference source
        keep[kept_key(text)] = {"text": text, "json": True, "decode": kept_key(source)}
    return judge, source, keep


@functools.lru_cache(maxsize=256)
def kept_key(text):
    """The key of a text kept in the zygote (the same request texts come back for every
    submission: hashed once)."""
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class JudgedExecute(Execute):
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
    max_reply_bytes = Integer(50_000_000, help="Largest reply one judged call may send back.").tag(config=True)
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
        from nbclient import NotebookClient
        self._a = load_assignment(self.assignment or resources.get("nbgrader", {}).get("assignment", ""))
        self._judge, self._kernel_source, self._keep = prepared(self._a)
        NotebookClient.__init__(self, nb, km)
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        self._events, self._clean, self._deadline = [], [], time.monotonic() + self.notebook_timeout
        self._kernels = 0   # kernels replaced so far: what one recorded, the next does not have
        self._budget = OutputBudget(self.max_output_bytes)
        self._channel = Channel(self._kernel_source, self.max_reply_bytes)
        tests = {}
        with self.setup_kernel():
            self._ready()
            self._start_spare()
            for index, cell in enumerate(self.nb.cells):
                name = self.exercise_of(cell)
                if name:
                    tests[name] = index
                elif utils.is_grade(cell) and cell.cell_type == "code" and not utils.is_solution(cell):
                    self._no_judge(cell)   # hidden tests never run in the learner's kernel
                elif cell.cell_type == "code":
                    self._run_learner_cell(cell, index)
            try:
                for ex in self._a.exercises:          # callees before callers
                    if ex.name in tests:
                        self._judge_cell(ex.name, tests[ex.name])
            finally:
                self._channel.close()   # the harness's request ends
        self.set_widgets_metadata()
        self.nb.metadata.setdefault("grader", {})["events"] = self._events
        return self.nb, self.resources

    def create_kernel_manager(self):
        """A kernel whose scratch folder holds the release's helper files, copied from the
        notebook's folder: only those, so a submitted numpy.py cannot shadow numpy. The
        spare kernel started during the previous submission is used when its folder holds
        the same files."""
        path = self.resources.get("metadata", {}).get("path")
        if not path:
            raise ValueError("JudgedExecute needs resources['metadata']['path'], the notebook's folder")
        names = self._a.helper_files()
        km = SPARE.take(path, names)
        if km is None:
            km = super().create_kernel_manager()
            km.prepare_scratch(path, names=names)
        km.keep = self._keep   # a warm kernel is forked with these (a cold one ignores them)
        self.km = km
        return km

    def _kept(self, text):
        """The key of a text this kernel was forked with, or None: then it is sent."""
        key = kept_key(text)
        return key if key in getattr(self.km, "kept", ()) else None

    def _start_spare(self):
        """Boot the next submission's kernel now, while this one is graded: a fresh process
        in a fresh sandbox and scratch folder, so nothing passes from one learner to the next."""
        if not self.prestart or SPARE.ready() or getattr(self.km, "zygote", None):
            return   # a forked kernel starts in a few hundredths of a second: no spare needed
        own = self.km
        try:
            km = super().create_kernel_manager()
            km.prepare_scratch(self.resources["metadata"]["path"], names=self._a.helper_files())
            run_sync(km.start_kernel)()
            SPARE.keep(km, self.resources["metadata"]["path"], self._a.helper_files())
        except Exception as exc:   # only an optimisation: grading goes on without it
            self.log.warning("could not start a spare kernel: %s", exc)
        finally:
            self.km = own

    def _no_judge(self, cell):
        self._event("no_judge", cell.metadata["nbgrader"].get("grade_id", "?"), "a graded cell with no judge")
        cell.outputs = [new_output("error", ename="NoJudge", evalue="no judge for this cell",
                                   traceback=["The grader has no judge for this graded cell."])]

    def _ready(self):
        """A fresh kernel: wait for it, then install the harness before any learner code."""
        info = getattr(self.kc, "kernel_info_reply", None) or self.wait_for_reply(self.kc.kernel_info())
        self.nb.metadata["language_info"] = info["content"]["language_info"]
        self._channel.listen(self.km.sockets)
        outputs = self._quiet(self._channel.setup_code(kept=self._kept(self._kernel_source)), 0, timeout=60)
        for o in outputs:   # without its harness, the kernel cannot be judged: say so, and stop
            if o.get("output_type") == "error":
                self._channel.close()
                raise RuntimeError(f"the grader's harness could not be set up in the kernel: {o.get('ename')}: "
                                   f"{str(o.get('evalue'))[:200]}")
        self._channel.connect()

    def _replace_kernel(self):
        """Throw the kernel away and start another, replaying the cells that ran cleanly."""
        self._kernels += 1
        self._cleanup_kernel()
        self.km = self.create_kernel_manager()
        self.start_new_kernel()
        self.start_new_kernel_client()
        self._ready()
        for index in list(self._clean):
            if time.monotonic() > self._deadline:
                break
            try:
                self._quiet(self.nb.cells[index].source, index, timeout=self.timeout)
            except Exception:
                self._clean.remove(index)

    def _cleanup_kernel(self):
        km = self.km
        try:
            super()._cleanup_kernel()
        finally:
            if km is not None:
                km.cleanup_scratch()

    def _event(self, kind, where, detail=""):
        if kind == "dead_kernel" and getattr(self.km, "oom_killed", lambda: False)():
            # its cgroup's memory limit made Linux kill it (kernel.py's Cgroups)
            kind, detail = "memory", "used more memory than a kernel may, and was killed"
        self._events.append({"kind": kind, "where": where, "detail": detail})

    # --- the learner's cells -------------------------------------------------------------------

    def _run_learner_cell(self, cell, index):
        if time.monotonic() > self._deadline:
            self._event("notebook_timeout", f"cell {index}", "not run: the notebook's time was up")
            return
        try:
            if self._servable(cell):
                self._run_served(cell, index)
            else:
                self._stop_serving()
                self.execute_cell(cell, index, store_history=True)
        except (CellTimeoutError, DeadKernelError, RuntimeError) as exc:
            kind = "dead_kernel" if isinstance(exc, DeadKernelError) else "timeout"
            self._event(kind, f"cell {index}", str(exc).splitlines()[0][:200] if str(exc) else "")
            cell.outputs.append(new_output("error", ename=type(exc).__name__, evalue="stopped by the grader",
                                           traceback=[f"The grader stopped this cell ({kind}) and restarted the kernel."]))
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

    def _servable(self, cell):
        """Whether the harness can run this cell as nbclient would have it run. Not: a cell
        nbclient skips (empty, or tagged to skip: execute_cell skips it without the kernel),
        top-level await (ipykernel awaits it in its own loop), or coalesced streams."""
        return (self.serve_cells and not self.coalesce_streams and cell.source.strip()
                and self.skip_cells_with_tag not in cell.metadata.get("tags", [])
                and "await" not in cell.source and "async" not in cell.source)

    def _run_served(self, cell, index):
        """Run one of the learner's cells as a job of the serving request (harness.run_cell):
        its outputs are processed as nbclient processes them, until the harness says the
        cell is over. Faults are nbclient's: CellTimeoutError, DeadKernelError."""
        for attempt in (1, 2):
            try:
                parent = self._serve()
                nonce = self._channel.send({"op": "cell", "code": cell.source})
                break
            except ChannelTimeout:
                raise RuntimeError("the grader's harness did not start in time") from None
            except ChannelClosed:
                if self._died():
                    raise DeadKernelError("Kernel died") from None
                if attempt == 2:
                    raise RuntimeError("the grader's harness could not be reached") from None
                self._reconnect()   # the learner's code closed its socket (or the kernel is replaced)
        return self._served(cell, index, parent, nonce)

    def _hook(self, hook, **kwargs):
        """nbclient's run_hook, from synchronous code."""
        if hook is not None:
            result = hook(**kwargs)
            if inspect.isawaitable(result):
                run_sync(ensure_async)(result)

    def _iopub(self):
        """The IOPub socket of this kernel's client, read synchronously: each message costs
        a poll and a receive, instead of an asyncio task and loop turn or more."""
        if getattr(self, "_iopub_of", None) is not self.kc:
            self._iopub_of, self._iopub_socket = self.kc, zmq.Socket.shadow(self.kc.iopub_channel.socket.underlying)
        return self._iopub_socket

    def _next_iopub(self, timeout):
        """The next IOPub message within ``timeout`` seconds, deserialised as the client does."""
        socket = self._iopub()
        if not socket.poll(int(timeout * 1000)):
            raise Empty
        _, parts = self.kc.session.feed_identities(socket.recv_multipart())
        return self.kc.session.deserialize(parts)

    def _served(self, cell, index, parent, nonce):
        """nbclient's async_execute_cell, for a cell the harness runs: the same hooks,
        outputs, timing metadata, timeout handling and reply (the harness's ``grader_cell``
        message carries the reply ipykernel would have sent)."""
        self._hook(self.on_cell_start, cell=cell, cell_index=index)
        if self.record_timing:
            cell["metadata"]["execution"] = {}
        self._hook(self.on_cell_execute, cell=cell, cell_index=index)
        self._hook(self.on_cell_complete, cell=cell, cell_index=index)
        self.code_cells_executed += 1
        timeout = self._get_timeout(cell)
        cell.outputs = []
        self.clear_before_next_output = False
        if self.record_timing:   # sent just now; the serving request has long been busy
            sent = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            cell["metadata"]["execution"].update({"iopub.status.busy": sent, "iopub.execute_input": sent})
        deadline = time.monotonic() + timeout if timeout else None
        reply, interrupted = None, False
        while True:
            wait = 1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
            try:
                msg = self._next_iopub(wait)
            except Empty:
                if not run_sync(self.kc.is_alive)():
                    raise DeadKernelError("Kernel died") from None
                if deadline is not None and time.monotonic() >= deadline:
                    if interrupted or not self.interrupt_on_timeout:
                        raise CellTimeoutError.error_from_timeout_and_cell(
                            "Timeout waiting for IOPub output" if interrupted else "Cell execution timed out",
                            self.iopub_timeout if interrupted else timeout, cell)
                    run_sync(self.km.interrupt_kernel)()   # as nbclient does: the cell then ends
                    interrupted, deadline = True, time.monotonic() + self.iopub_timeout
                    if self.error_on_timeout:
                        reply = {"content": {**self.error_on_timeout, "status": "error"}}
                continue
            if msg["parent_header"].get("msg_id") != parent:
                continue
            kind = msg["msg_type"]
            if kind == "grader_cell":
                if msg["content"].get("nonce") != nonce:
                    continue
                # ipykernel announces the count in execute_input; the reply says the same
                cell["execution_count"] = msg["content"]["reply"].get("execution_count")
                reply = reply or {"header": msg["header"], "parent_header": msg["parent_header"],
                                  "content": msg["content"]["reply"]}
                if self.record_timing:
                    done = timestamp(msg)
                    cell["metadata"]["execution"].update({"iopub.status.idle": done, "shell.execute_reply": done})
                break
            if kind == "status":
                if msg["content"].get("execution_state") == "idle":   # the serving request ended early
                    self._channel.serving = False
                    raise RuntimeError("the kernel stopped running the grader's cells")
                continue
            self.process_message(msg, cell, index)
        self._hook(self.on_cell_executed, cell=cell, cell_index=index, execute_reply=reply)
        if reply["content"].get("status") == "error":   # nbclient's check: raises unless errors are allowed
            run_sync(self._check_raise_for_error)(cell, index, reply)
        self.nb["cells"][index] = cell
        return cell

    def _serve(self):
        """The msg id of the request that runs the harness's ``serve``, started now if it is
        not running (ChannelClosed, ChannelTimeout when it cannot start)."""
        if not self._channel.serving:
            self._serving = self.kc.execute(self._channel.serve_code(), silent=True, store_history=False,
                                            allow_stdin=False)
            self._channel.started(self.call_timeout)
        return self._serving

    def _stop_serving(self):
        """End the serving request, so that a cell can have a request of its own."""
        if self._channel.serving:
            try:
                self._channel.send({"op": "stop"})
            except ChannelClosed:
                pass
            self._channel.serving = False

    def process_message(self, msg, cell, cell_index):
        """nbclient's, except that an output the notebook format does not allow (only the
        learner's own code can publish one) is dropped with a note and a flag, instead of
        failing the whole submission when the notebook is validated."""
        try:
            return super().process_message(msg, cell, cell_index)
        except ValidationError as exc:
            why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            self._event("invalid_output", f"cell {cell_index}", why)
            cell.outputs.append(NotebookNode(output_type="stream", name="stderr", text=(
                f"[the grader dropped an output that a notebook cannot hold: {why}]\n")))
            return None

    def output(self, outs, msg, display_id, cell_index):
        """nbclient's, keeping at most max_output_bytes of each cell's output (the rest is
        dropped as it arrives), and checking each output against the notebook format with a
        validator compiled once (``output_node``) instead of nbformat's per-call one."""
        verdict = self._budget.take(cell_index, msg)
        if verdict == "cut":
            self._event("output_flood", f"cell {cell_index}", f"more than {self.max_output_bytes} bytes of output")
            outs.append(new_output("stream", name="stdout",
                                   text=f"\n[the grader dropped the rest of this output: over {self.max_output_bytes} bytes]\n"))
        if verdict != "keep":
            return None
        if self.output_hook_stack[msg["parent_header"].get("msg_id")]:   # a widget's: nbclient's way
            return super().output(outs, msg, display_id, cell_index)
        out = output_node(msg)
        if out is None:
            self.log.error(f"unhandled iopub msg: {msg['msg_type']}")
            return None
        if self.clear_before_next_output:
            outs[:] = []
            self.clear_display_id_mapping(cell_index)
            self.clear_before_next_output = False
        if display_id:
            self._display_id_map.setdefault(display_id, {}).setdefault(cell_index, []).append(len(outs))
        outs.append(out)
        return out

    # --- judging --------------------------------------------------------------------------------

    def exercise_of(self, cell):
        if cell.cell_type != "code" or not utils.is_grade(cell) or utils.is_solution(cell):
            return None
        grade_id = cell.metadata["nbgrader"].get("grade_id", "")
        name = grade_id[len(self.test_prefix):] if grade_id.startswith(self.test_prefix) else None
        return name if name in self._a.by_name else None

    def _judge_cell(self, name, index):
        verdict = self._judge.judge(name, self._call)
        if verdict.outcome == "missing":   # say why, when its cell does not even compile
            for cell in self.nb.cells:
                if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade_id") == name:
                    problem = self._a.checks.syntax_problem(cell.source, name)
                    if problem:
                        verdict.feedback = f"{name} is not defined: " + problem
        cell = self.nb.cells[index]
        cell.outputs = verdict_outputs(verdict)
        cell.execution_count = None
        cell.metadata["judge"] = verdict.to_json()

    def _quiet(self, code, index, timeout):
        """Run code in the kernel as a throwaway cell; return its outputs. Raises like
        nbclient on a dead kernel or an unrecoverable timeout, with the outputs that had
        arrived as the exception's ``outputs``."""
        probe = NotebookNode(id=generate_corpus_id(), cell_type="code", metadata=NotebookNode(),
                             execution_count=None, source=code, outputs=[])   # thrown away after the call
        kept, saved, size = self.nb.cells[index], self.timeout, self._budget.hold(index)
        self.timeout = int(max(1, timeout))
        try:
            self.execute_cell(probe, index, store_history=False)
        except Exception as exc:
            exc.outputs = probe.outputs
            raise
        finally:
            self.timeout = saved
            self.nb.cells[index] = kept   # nbclient stores the executed cell at index
            self._budget.restore(index, size)
        return probe.outputs

    def _call(self, name, cases, callees):
        """Run the function on all its hidden cases in one job (call_timeout seconds for
        them all): one (status, outputs or message, observations) per case answered, then a
        fault for the case that hung or killed the kernel, if one did."""
        if time.monotonic() > self._deadline:
            self._event("notebook_timeout", name, "not judged: the notebook's time was up")
            return [("fault", "was not run: the notebook used up its time", {})]
        # the judge's own hidden cases: ``cases`` are those, as Judge.judge hands them
        text, callees_text = self._judge.request_text(name, callees)
        key = self._kept(text)
        job = {"op": "call", "extra": callees_text, **({"key": key} if key else {"request": text})}
        kernel = self._kernels
        replies, fault = self._ask(job, name, "while called on a hidden case")
        for why in sorted(set(self._channel.refused)):   # what the learner's process sent, refused
            self._event("refused_reply", name, why)
        results = []
        for data in replies:
            status, value, observed = read_reply(self._a, data)
            if status == "fault":
                self._event("no_result", name, value)
            elif status == "raised" and "MemoryError" in value:
                self._event("memory", name, "ran out of memory on a hidden case")
            elif status == "raised" and value.startswith(("raised SystemExit", "raised KeyboardInterrupt")):
                self._event("exit", name, value[:200])
            results.append((status, value, observed))
        if any([observed.pop("calls_recorded", False) for _, _, observed in results]):
            recorded = Recorded(functools.partial(self._recorded, name, kernel))
            for case, (_, _, observed) in enumerate(results):
                observed["calls"] = functools.partial(recorded.case, case)
        finished = len(results) == len(cases) or (results and results[-1][0] in ("missing", "not_implemented", "fault"))
        if fault is None and not finished:
            self._event("no_result", name, "the kernel answered nothing the grader could read")
            fault = "returned no result the grader could read"
        return results[:len(cases)] + ([("fault", fault, {})] if fault and not finished else [])

    def _ask(self, job, name, doing):
        """One job for the harness, which is started on its first one: (its replies, None),
        or (the replies that had arrived, why it stopped) after replacing a kernel that hung
        or died. If the learner's code closed the harness's socket and the kernel lives, the
        socket is connected again: a cell that did it costs nothing more (the harness is
        started again), a function that did it costs only that function."""
        for attempt in (1, 2):
            started = self._channel.serving
            try:
                self._serve()
                return self._channel.ask(job, self.call_timeout), None
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

    def _died(self, wait=2.0):
        """Whether the kernel is gone (its end of the channel closed just now: give it a moment)."""
        deadline = time.monotonic() + wait
        while run_sync(self.km.is_alive)():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def _reconnect(self):
        """Connect the harness to a new socket (the learner's code closed the last one), or
        replace the kernel if that fails."""
        self._channel.listen(self.km.sockets)
        try:
            outputs = self._quiet(self._channel.reconnect_code(), 0, timeout=10)
            if any(o.get("output_type") == "error" for o in outputs):
                raise RuntimeError("the harness could not connect again")
            self._channel.connect()
        except (CellTimeoutError, DeadKernelError, RuntimeError):
            self._replace_kernel()

    def _recorded(self, name, kernel):
        """{case: calls} that the last judged call of this kernel recorded (see Recorded);
        {} when the kernel was replaced since, or the harness does not answer in time."""
        if kernel != self._kernels or time.monotonic() > self._deadline:
            return {}
        replies, fault = self._ask({"op": "recorded"}, name, "while sending the calls its loop made")
        found = {}
        for data in [] if fault else replies:
            try:
                found[data["case"]] = self._a.checks.decode_calls(data["calls"][:1000])
            except Exception:   # it comes from the learner's process: unreadable means unknown
                pass
        return found


OUTPUT_FIELDS = {"execute_result": ("metadata", "data", "execution_count"), "stream": ("name", "text"),
                 "display_data": ("metadata", "data"), "error": ("ename", "evalue", "traceback")}


@functools.lru_cache(maxsize=None)
def output_validator():
    """The notebook format's schema for one output, compiled once per process (fastjsonschema,
    as nbformat itself uses for whole notebooks)."""
    import fastjsonschema
    import nbformat.v4
    from nbformat.validator import _get_schema_json
    schema = _get_schema_json(nbformat.v4, 4, nbformat.v4.nbformat_minor)
    return fastjsonschema.compile({"$schema": schema["$schema"], "definitions": schema["definitions"],
                                   "$ref": "#/definitions/output"})


def output_node(msg):
    """The notebook output of an IOPub message, as nbformat's output_from_msg makes it, or
    None for a message that is not an output. Raises ValidationError, as nbformat does, for
    one the notebook format does not allow."""
    import fastjsonschema
    fields = OUTPUT_FIELDS.get(msg["msg_type"])
    if fields is None:
        return None
    content = msg["content"]
    missing = [f for f in fields if f not in content]
    if missing:
        raise ValidationError(f"a {msg['msg_type']} output without {', '.join(missing)}")
    out = NotebookNode(output_type=msg["msg_type"], **{f: from_dict(content[f]) for f in fields})
    try:
        output_validator()(out)
    except fastjsonschema.JsonSchemaException as exc:
        raise ValidationError(str(exc)) from None
    return out


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
