"""Running a learner's cell as a job of the one request that serves the judge: nbclient's
execution of a cell (its ``async_execute_cell``, ``output`` and ``process_message``), copied
and adapted, for a cell that the harness runs instead of a request of its own. The same
hooks, outputs, timing metadata, timeout handling and reply; outputs checked against the
notebook format by a validator compiled once (nbformat's private ``_get_schema_json``).
Rule (upstream/): relies on nbclient's and nbformat's internals; fingerprints.json records
the bodies it copies.
"""
import datetime
import functools
import inspect
import time
from queue import Empty

import zmq
from jupyter_core.utils import run_sync
from nbclient.client import timestamp
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async
from nbformat import NotebookNode, from_dict
from nbformat.v4 import new_output
from nbformat.validator import ValidationError

from ..judging.channel import ChannelClosed, ChannelTimeout
from .kernel_client import read_bounded


class ServedCells:
    """For an nbclient NotebookClient whose kernel runs a harness (judging/harness_kernel.py):
    run a cell as a harness job when it can be (``_can_serve``), else as nbclient does."""

    def _can_serve(self, cell):
        """Whether the harness can run this cell as nbclient would have it run. Not: a cell
        nbclient skips (empty, or tagged to skip: execute_cell skips it without the kernel),
        top-level await (ipykernel awaits it in its own loop), or coalesced streams."""
        return (self.serve_cells and not self.coalesce_streams and cell.source.strip()
                and self.skip_cells_with_tag not in cell.metadata.get("tags", [])
                and "await" not in cell.source and "async" not in cell.source)

    def _run_on_harness(self, cell, index):
        """Run one of the learner's cells as a job of the serving request (harness.run_cell):
        its outputs are processed as nbclient processes them, until the harness says the
        cell is over. Faults are nbclient's: CellTimeoutError, DeadKernelError."""
        for attempt in (1, 2):
            try:
                parent = self._start_harness()
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
        return self._read_cell_messages(cell, index, parent, nonce)

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
        return read_bounded(self.kc.session, socket.recv_multipart(copy=False),
                            getattr(self.kc, "max_message_bytes", None))

    def _read_cell_messages(self, cell, index, parent, nonce):
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
        elif joins_last_stream(outs, out):
            outs[-1]["text"] += out["text"]
            return outs[-1]
        outs.append(out)
        return out


def joins_last_stream(outs, out):
    """Is ``out`` more of the stream the cell's last output is (stdout after stdout)? Where a
    cell's printing is cut into messages depends on when the kernel's IOPub thread wakes (it
    sends what was written every 0.2 s), so two runs of the same cell could keep one output or
    two; kept as one, as a notebook's page shows them, the notebook is the same on every run."""
    return (out["output_type"] == "stream" and bool(outs) and outs[-1].get("output_type") == "stream"
            and outs[-1].get("name") == out["name"])


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
