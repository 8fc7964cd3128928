"""The kernel a submission runs in.

Always this interpreter's ipykernel, whatever kernelspecs the machine has installed, with
the kernel process's own stdout/stderr discarded (what the learner's code prints still
reaches the notebook through Jupyter's messages). This is also the one place that decides
how the kernel process is started.
"""
import subprocess
import sys

from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager


class GradingKernelManager(AsyncKernelManager):

    @property
    def kernel_spec(self):
        if self._kernel_spec is None:
            self._kernel_spec = KernelSpec(
                argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                display_name="Python 3 (grading)", language="python")
        return self._kernel_spec

    async def _async_pre_start_kernel(self, **kw):
        kw.setdefault("stdout", subprocess.DEVNULL)
        kw.setdefault("stderr", subprocess.DEVNULL)
        return await super()._async_pre_start_kernel(**kw)
