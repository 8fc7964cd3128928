"""The learner's kernel with the grader's harness in it: made (with the release's helper
files and the texts its zygote stashes), the harness installed before any learner code,
started and stopped as the request that serves the judge, connected again when the learner's
code closes its socket, and the kernel replaced when it hangs or dies (the cells that ran
cleanly are run again). Rule (judging/): what comes back from the kernel is data to check.
"""
import functools
import hashlib
import time

from jupyter_core.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode
from nbformat.corpus.words import generate_corpus_id

from ..sandbox.spare import SPARE
from .channel import ChannelClosed


@functools.lru_cache(maxsize=256)
def stash_key(text):
    """The key of a text stashed in the zygote (the same request texts come back for every
    submission: hashed once)."""
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class HarnessKernel:
    """For JudgedExecute: the kernel's life, and the harness's in it."""

    def create_kernel_manager(self):
        """A kernel whose scratch folder holds the release's helper files, copied from the
        notebook's folder: only those, so a submitted numpy.py cannot shadow numpy. The
        spare kernel started during the previous submission is used when its folder holds
        the same files."""
        path = self.resources.get("metadata", {}).get("path")
        if not path:
            raise ValueError("JudgedExecute needs resources['metadata']['path'], the notebook's folder")
        names = self._assignment.helper_files()
        km = SPARE.take(path, names)
        if km is None:
            km = super().create_kernel_manager()
            km.prepare_scratch(path, names=names)
        km.stash = self._stash   # a warm kernel is forked with these (a cold one ignores them)
        self.km = km
        return km

    def _stashed(self, text):
        """The key of a text this kernel was forked with, or None: then it is sent."""
        key = stash_key(text)
        return key if key in getattr(self.km, "stashed", ()) else None

    def _start_spare(self):
        """Boot the next submission's kernel now, while this one is graded: a fresh process
        in a fresh sandbox and scratch folder, so nothing passes from one learner to the next."""
        if not self.prestart or SPARE.ready() or getattr(self.km, "zygote", None):
            return   # a forked kernel starts in a few hundredths of a second: no spare needed
        own = self.km
        try:
            km = super().create_kernel_manager()
            km.prepare_scratch(self.resources["metadata"]["path"], names=self._assignment.helper_files())
            run_sync(km.start_kernel)()
            SPARE.hold(km, self.resources["metadata"]["path"], self._assignment.helper_files())
        except Exception as exc:   # only an optimisation: grading goes on without it
            self.log.warning("could not start a spare kernel: %s", exc)
        finally:
            self.km = own

    def _ready(self):
        """A fresh kernel: wait for it, then install the harness before any learner code."""
        info = getattr(self.kc, "kernel_info_reply", None) or self.wait_for_reply(self.kc.kernel_info())
        self.nb.metadata["language_info"] = info["content"]["language_info"]
        self._channel.listen(self.km.sockets)
        outputs = self._quiet(self._channel.setup_code(stashed=self._stashed(self._kernel_source)), 0, timeout=60)
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

    def _start_harness(self):
        """The msg id of the request that runs the harness's ``serve``, started now if it is
        not running (ChannelClosed, ChannelTimeout when it cannot start)."""
        if not self._channel.serving:
            self._serving = self.kc.execute(self._channel.serve_code(), silent=True, store_history=False,
                                            allow_stdin=False)
            self._channel.started(self.call_timeout)
        return self._serving

    def _stop_harness(self):
        """End the serving request, so that a cell can have a request of its own."""
        if self._channel.serving:
            try:
                self._channel.send({"op": "stop"})
            except ChannelClosed:
                pass
            self._channel.serving = False

    def _quiet(self, code, index, timeout):
        """Run code in the kernel as a throwaway cell; return its outputs. Raises like
        nbclient on a dead kernel or an unrecoverable timeout, with the outputs that had
        arrived as the exception's ``outputs``."""
        probe = NotebookNode(id=generate_corpus_id(), cell_type="code", metadata=NotebookNode(),
                             execution_count=None, source=code, outputs=[])   # thrown away after the call
        held, saved, size = self.nb.cells[index], self.timeout, self._budget.hold(index)
        self.timeout = int(max(1, timeout))
        try:
            self.execute_cell(probe, index, store_history=False)
        except Exception as exc:
            exc.outputs = probe.outputs
            raise
        finally:
            self.timeout = saved
            self.nb.cells[index] = held   # nbclient stores the executed cell at index
            self._budget.restore(index, size)
        return probe.outputs

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
