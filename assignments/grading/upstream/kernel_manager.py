"""jupyter_client's kernel manager, without the waits a submission's kernel does not need:
the 10 ms sleep after every start and shutdown (``settled``), and the interrupt sent to a
kernel about to be killed, which then held the control socket open for up to 0.1 s.
Together 30 to 60 ms of a worker's wall time a submission, measured (docs/benchmarks.md).
Rule (upstream/): relies on another package's internals, and says which (RELIED_ON)."""
import functools

from jupyter_client.manager import AsyncKernelManager, KernelManager, _get_future


def settled(method):
    """jupyter_client's ``in_pending_state`` (``km.ready`` pending while ``method`` runs),
    without the sleep it adds after the method so that jupyter_client's own tests can see the
    pending state."""
    method = getattr(method, "__wrapped__", method)   # the method as written, not decorated

    @functools.wraps(method)
    async def wrapper(self, *args, **kwargs):
        if self._attempted_start or not self._ready:
            self._ready = _get_future()
        try:
            out = await method(self, *args, **kwargs)
        except Exception as exc:
            self._ready.set_exception(exc)
            self._ready.exception()   # retrieved: no "never retrieved" warning
            raise
        if self.owns_kernel:
            self._ready.set_result(None)
        return out
    return wrapper


class QuickKernelManager(AsyncKernelManager):
    """An async kernel manager whose start and shutdown return as soon as they are done."""

    start_kernel = _async_start_kernel = settled(KernelManager._async_start_kernel)
    _async_shutdown_kernel = settled(KernelManager._async_shutdown_kernel)
    _killing = False

    async def shutdown_kernel(self, now=False, restart=False):
        self._killing = now
        try:
            await self._async_shutdown_kernel(now=now, restart=restart)
        finally:
            self._killing = False

    async def _async_interrupt_kernel(self):
        # jupyter_client interrupts a kernel before it kills it. With interrupt_mode "message",
        # the interrupt waits in the control socket for a kernel that is gone, and closing the
        # manager's context waits for it, up to the socket's linger. Killed now, it needs none.
        if not self._killing:
            await super()._async_interrupt_kernel()
