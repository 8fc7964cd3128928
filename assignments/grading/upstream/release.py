"""nbgrader's release_assignment (`nbgrader release_assignment`, formgrader's Release button),
handing out notebooks that JupyterLab opens unchanged.

When JupyterLab opens a notebook and its kernel starts, it writes the kernel's
``language_info`` into the notebook's metadata (the Python version, the lexer, ...). The
release notebook carries only ``{"name": "python"}``, the same on every machine (it is
committed and must be rebuilt byte for byte anywhere), so every student's freshly fetched,
untouched notebook showed unsaved changes. The copy that goes into the exchange gets what
the students' kernel will say, asked of that kernel (its kernelspec, started once per
release); the release folder itself is left as generated.
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json):
extends ``nbgrader.exchange.default.release_assignment.ExchangeReleaseAssignment.do_copy``
(``Exchange.do_copy``).
"""
import json
import os
import subprocess
import sys

import nbformat
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment

# run in a Python of its own: the release may run inside a Jupyter server's request, whose
# thread has an event loop that jupyter_client's blocking client must not share
ASK_KERNEL = """
import json, sys
from jupyter_client.manager import start_new_kernel
manager, client = start_new_kernel(kernel_name=sys.argv[1], startup_timeout=60)
try:
    reply = client.kernel_info(reply=True, timeout=60)
    print(json.dumps(reply["content"]["language_info"]))
finally:
    client.stop_channels()
    manager.shutdown_kernel(now=True)
"""


def kernel_language_info(kernel_name, timeout=120):
    """The ``language_info`` that the kernel named ``kernel_name`` reports; None if it cannot be asked."""
    try:
        done = subprocess.run([sys.executable, "-c", ASK_KERNEL, kernel_name], capture_output=True, text=True,
                              timeout=timeout)
        return json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


class KernelInfoRelease(ExchangeReleaseAssignment):
    """ExchangeReleaseAssignment whose notebooks carry their kernel's ``language_info``."""

    def do_copy(self, src, dest, log=None):
        super().do_copy(src, dest, log=log)
        asked = {}
        for folder, _, names in os.walk(dest):
            for name in sorted(n for n in names if n.endswith(".ipynb")):
                path = os.path.join(folder, name)
                nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
                kernel = nb.metadata.get("kernelspec", {}).get("name")
                if not kernel:
                    continue
                if kernel not in asked:
                    asked[kernel] = kernel_language_info(kernel)
                    if asked[kernel] is None:
                        self.log.warning("kernel %s did not say its language_info: %s is released as it is "
                                         "(JupyterLab will mark it changed when it opens)", kernel, name)
                info = asked[kernel]
                if info and nb.metadata.get("language_info") != info:
                    nb.metadata["language_info"] = info
                    nbformat.write(nb, path)
