"""At most one booted, unused cold kernel per grading process, for the next submission (a
warm kernel is forked when needed, and needs none). Rule (sandbox/): nothing here judges."""
import multiprocessing.util
import os

from jupyter_core.utils import run_sync


class Spare:
    """At most one booted, unused kernel per grading process, for the next submission.
    It is used only if its scratch folder holds exactly the helper files the next
    notebook's folder holds; it is shut down when the process ends."""

    def __init__(self):
        self.km, self.files, self.pid = None, None, None

    @staticmethod
    def _files(folder, names):
        found = {}
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as f:
                    found[name] = f.read()
        return found

    def ready(self):
        return self.km is not None

    def hold(self, km, folder, names):
        self.discard()
        if self.pid != os.getpid():   # a forked worker: its own clean-up at its exit
            self.pid = os.getpid()
            multiprocessing.util.Finalize(None, self.discard, exitpriority=10)
        self.km, self.files = km, self._files(folder, names)

    def take(self, folder, names):
        km, files = self.km, self.files
        self.km = self.files = None
        if km is None:
            return None
        if os.path.isdir(km.scratch) and files == self._files(folder, names) and run_sync(km.is_alive)():
            return km
        self._stop(km)
        return None

    def discard(self):
        if self.km is not None:
            self._stop(self.km)
        self.km = self.files = None

    @staticmethod
    def _stop(km):
        try:
            run_sync(km.shutdown_kernel)(now=True)
        except Exception:
            pass
        km.cleanup_scratch()


SPARE = Spare()
