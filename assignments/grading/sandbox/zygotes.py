"""The grader's end of the zygote (shipped/zygote.py): starting it in its sandbox, its pipes
shared by the local workers, and the kernels it forks as jupyter_client sees them.
Rule (sandbox/): nothing here judges."""
import asyncio
import base64
import contextlib
import fcntl
import itertools
import json
import multiprocessing.util
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from jupyter_client.provisioning import LocalProvisioner

from .. import SHIPPED
from ..measure import steps
from . import seccomp
from .cgroups import Cgroups


class ZygoteProvisioner(LocalProvisioner):
    """jupyter_client's local provisioner, whose kernel the zygote forks."""

    async def launch_kernel(self, cmd, **kwargs):
        km = self.parent
        km.zygote.stash(km.stash)
        self.process = km.zygote.spawn(km.spawn_request())
        km.stashed = frozenset(km.stash)
        self.pid, self.pgid = self.process.pid, None
        self.cwd = km.scratch
        return self.connection_info

    async def wait(self):
        # a killed kernel is gone within milliseconds: the stock 0.1 s poll only waits
        while self.process is not None and await self.poll() is None:
            await asyncio.sleep(0.005)
        self.process = None
        return 0


class ZygoteKernel:
    """A forked kernel as jupyter_client's provisioner handles a Popen."""

    stdin = stdout = stderr = None

    def __init__(self, zygote, pid):
        self.zygote, self.pid, self.returncode = zygote, pid, None

    def poll(self):
        if self.returncode is None:
            try:
                told = self.zygote.request({"op": "poll", "pid": self.pid})
                self.returncode = told["status"]
                if isinstance(told.get("cpu"), (int, float)):
                    steps.add("kernel", told["cpu"])
            except ZygoteError:   # no zygote, no kernel
                self.returncode = -signal.SIGKILL
        return self.returncode

    def used(self):
        """The CPU seconds the kernel's processes have used so far, as the zygote reads them
        from /proc (None once it has exited, or without a zygote)."""
        if self.returncode is not None:
            return None
        try:
            cpu = self.zygote.request({"op": "used", "pid": self.pid}).get("cpu")
        except ZygoteError:
            return None
        return cpu if isinstance(cpu, (int, float)) else None

    def wait(self, timeout=None):
        deadline = time.monotonic() + (timeout if timeout is not None else float("inf"))
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("kernel", timeout)
            time.sleep(0.005)
        return self.returncode

    def send_signal(self, signum):
        if self.returncode is None:
            try:
                self.zygote.request({"op": "signal", "pid": self.pid, "signal": int(signum)})
            except ZygoteError:
                pass

    def kill(self):
        self.send_signal(signal.SIGKILL)

    def terminate(self):
        self.send_signal(signal.SIGTERM)


class ZygoteError(RuntimeError):
    pass


class Zygote:
    """One warm zygote (zygote.py) in its sandbox, and the grader's end of its pipes.

    One zygote can serve the workers of a local pool (``Zygotes.share``): the grading
    process starts it, and the workers it forks inherit this object and take turns on the
    pipes. A request holds a lock for its write and its reply: a thread lock within a
    process, and between processes an flock on a file each process opens for itself (the
    system lets it go if the process dies). Each request carries an id that its reply
    echoes, so a reply that a dead worker left unread is skipped by the next one."""

    SOURCE = os.path.join(SHIPPED, "zygote.py")

    def __init__(self, km, scratch_root, wait=True, cold=False):
        self.own_scratch = not scratch_root
        self.scratch_root = scratch_root or tempfile.mkdtemp(prefix="kernels-")
        os.makedirs(self.scratch_root, exist_ok=True)
        self.sockets_root = tempfile.mkdtemp(prefix="gz-", dir="/tmp" if os.path.isdir("/tmp") else None)
        os.chmod(self.sockets_root, 0o711)
        with open(self.SOURCE, encoding="utf-8") as f:
            source = f.read()
        # a cgroup per kernel where the machine allows it (cgroups.py); why not, otherwise
        self.cgroups, self.cgroup_problem = Cgroups.open()
        folders = self.cgroups.folders() if self.cgroups else []
        cmd = km.bwrap(self.scratch_root, self.sockets_root, root=os.geteuid() == 0, cgroups=folders)
        self.log = os.path.join(self.sockets_root, "zygote.log")
        self.lock_file = self.sockets_root + ".lock"   # outside the folder the sandbox sees
        open(self.lock_file, "wb").close()
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(cmd + ["--", sys.executable, "-c", source] + (["cold"] if cold else []),
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                         cwd=self.scratch_root)
        self.pid, self.stashed, self.ready = os.getpid(), set(), False
        self._ids = itertools.count()
        self._lock = self._flock = self._in_process = None
        self._pending = b""
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout=120):
        """Wait for the zygote's first line (it has imported what kernels import), then give
        it the system-call filter every kernel is forked with (seccomp.py)."""
        if not self.ready:
            with self._locked():
                self._read(None, timeout)
            self.ready = True
            self.request({"op": "filter", "program": base64.b64encode(seccomp.program()).decode()})

    def alive(self):
        if self.pid == os.getpid():
            return self.proc.poll() is None
        try:   # a worker forked from the process that started it: not its child
            with open(f"/proc/{self.proc.pid}/stat", encoding="utf-8") as f:
                return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
        except (OSError, IndexError):
            return False

    @contextlib.contextmanager
    def _locked(self):
        if self._in_process != os.getpid():   # made anew in each process that uses it
            self._in_process, self._lock, self._pending = os.getpid(), threading.Lock(), b""
            self._flock = os.open(self.lock_file, os.O_RDWR)
        with self._lock:
            fcntl.flock(self._flock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self._flock, fcntl.LOCK_UN)

    def _read(self, rid, timeout):
        """The reply to request ``rid`` (None: the first line), skipping others' replies."""
        deadline = time.monotonic() + timeout
        out = self.proc.stdout.fileno()
        while True:
            line, found, rest = self._pending.partition(b"\n")
            if found:
                self._pending = rest
                reply = json.loads(line)
                if reply.get("id") == rid:
                    return reply
                continue
            left = deadline - time.monotonic()
            ready = left > 0 and select.select([out], [], [], left)[0]
            chunk = os.read(out, 1 << 16) if ready else b""
            if not chunk:
                said = ""
                try:
                    with open(self.log, encoding="utf-8", errors="replace") as f:
                        said = f.read().strip().splitlines()[-1:]
                except OSError:
                    pass
                self.stop()
                raise ZygoteError(("the kernel zygote stopped answering" if ready or not self.alive()
                                   else f"the kernel zygote did not answer within {timeout} s")
                                  + (f": {said[0]}" if said else ""))
            self._pending += chunk

    def request(self, obj, timeout=30):
        self.wait_ready()
        with self._locked():
            if not self.alive():
                raise ZygoteError("the kernel zygote is gone")
            rid = f"{os.getpid()}-{next(self._ids)}"
            data = memoryview(json.dumps(dict(obj, id=rid)).encode() + b"\n")
            try:
                while data:   # straight to the pipe: no buffer that a forked process could copy
                    data = data[os.write(self.proc.stdin.fileno(), data):]
            except OSError as exc:
                self.stop()
                raise ZygoteError(f"the kernel zygote is gone: {exc}") from exc
            reply = self._read(rid, timeout)
        if "error" in reply:
            raise ZygoteError(reply["error"])
        return reply

    def spawn(self, request):
        return ZygoteKernel(self, self.request(request)["pid"])

    def stash(self, items):
        """Have the zygote stash these texts (zygote.py's STASH) for the kernels it forks next."""
        for key, item in items.items():
            if key not in self.stashed:
                self.request({"op": "stash", "key": key, "text": item["text"], "filename": item.get("filename", "<stashed>"),
                              **{k: item[k] for k in ("compile", "run", "json", "decode", "cells") if k in item}})
                self.stashed.add(key)

    def stop(self):
        if self.pid != os.getpid():   # a forked copy of the process that started it: not ours
            return
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        shutil.rmtree(self.sockets_root, ignore_errors=True)
        try:
            os.remove(self.lock_file)
        except OSError:
            pass
        if self.own_scratch:
            shutil.rmtree(self.scratch_root, ignore_errors=True)
        if self.cgroups is not None:
            self.cgroups.close()


class Zygotes:
    """At most one zygote per grading process (per scratch root), started with the first
    warm kernel and stopped when the process ends; or one started by the grading process
    for the local workers it forks (``share``), which they all use."""

    def __init__(self):
        self.zygote, self.key, self.pid, self.failed, self.shared = None, None, None, {}, False

    def get(self, km, wait=True):
        key = (km.scratch_root, os.geteuid(), tuple(sorted(km.disabled_protections)))
        if key in self.failed:   # tried once in this process: the kernels boot cold
            raise ZygoteError(self.failed[key])
        if self.zygote is None or self.key != key or not self.zygote.alive():
            self.stop()
            if self.pid != os.getpid():
                self.pid, self.failed = os.getpid(), {}
                multiprocessing.util.Finalize(None, self.stop, exitpriority=10)
            try:
                self.zygote, self.key = Zygote(km, km.scratch_root, wait=wait), key
            except (ZygoteError, OSError) as exc:
                self.failed[key] = str(exc)
                raise
        return self.zygote

    def share(self, config, scratch_root):
        """Start, in this process, the zygote that the local workers it forks next will all
        use (``shared_root``), instead of each booting its own: one boot and one set of
        imports per run. It boots while this process goes on preparing (``ready`` waits for
        it). Nothing when kernels are not warm; None when it cannot start (each worker then
        tries its own)."""
        if self.shared and self.zygote is not None and self.key[0] == scratch_root and self.zygote.alive():
            return self.zygote   # shared already (run/start.py begins it before the pipeline is imported)
        os.makedirs(scratch_root, exist_ok=True)
        from .kernel import GradingKernelManager
        km = GradingKernelManager(config=config, scratch_root=scratch_root, template=True)
        if not (km.sandbox and km.warm):
            return None
        try:
            zygote = self.get(km, wait=False)
        except (ZygoteError, OSError):
            return None
        self.shared = True
        return zygote

    def ready(self, stash=None):
        """Wait for the shared zygote and have it stash ``stash`` (texts for every kernel,
        ``Zygote.stash``), so that the workers forked next find them stashed; False if it failed."""
        if not self.shared or self.zygote is None:
            return False
        try:
            self.zygote.wait_ready()
            self.zygote.stash(stash or {})
        except ZygoteError as exc:
            self.failed[self.key] = str(exc)
            self.stop()
            return False
        return True

    def booting(self):
        """Whether the shared zygote is still booting (has not said it is ready): time this
        process can spend on work it would do anyway, rather than wait."""
        z = self.zygote if self.shared else None
        if z is None or z.ready or b"\n" in z._pending:
            return False
        try:
            return not select.select([z.proc.stdout.fileno()], [], [], 0)[0]
        except (OSError, ValueError):
            return False

    @contextlib.contextmanager
    def sharing(self, config, scratch_root, enabled=True):
        """``share`` for the length of a block (when ``enabled``), stopped at its end."""
        if enabled:
            self.share(config, scratch_root)
        try:
            yield
        finally:
            if self.shared:
                self.stop()

    def shared_root(self):
        """The scratch root of the zygote this process shares with its workers (or a worker
        inherited), while it runs; None otherwise."""
        if self.shared and self.zygote is not None and self.zygote.alive() and os.path.isdir(self.key[0]):
            return self.key[0]
        return None

    def stop(self):
        if self.zygote is not None:
            self.zygote.stop()
        self.zygote = self.key = None
        self.shared = False


ZYGOTES = Zygotes()
