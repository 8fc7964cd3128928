"""The kernel a submission runs in, and the sandbox around it.

The kernel is always this interpreter's ipykernel, whatever kernelspecs the machine has.
By default it runs inside bubblewrap: a read-only view of the system and of the Python
environment (the course's own package covered), one writable scratch folder holding a copy
of the release's helper files, and nothing else: not this repository, not the gradebook,
not other submissions. Every sandboxed kernel is forked by a zygote (zygote.py) in such a
sandbox: the grading process's warm one, which its local workers share and which has
imported Python's, numpy's and ipykernel's modules once; or, cold, one of its own that
imports nothing first. Each kernel gets pid, mount, IPC and network namespaces of its own
(without root also a user namespace), a cgroup of its own where the machine allows it
(cgroups.py), the system-call filter (seccomp.py), and a socket folder it cannot write once
it has bound its sockets. Its address space, CPU time, file size and number of processes
are limited (rlimits), and, in its cgroup, its memory and processes as a whole.

The process limit needs an unprivileged user: Linux does not apply RLIMIT_NPROC to root.
When the grader runs as root, each kernel drops to a user id of its own inside the sandbox
(so one kernel's fork bomb cannot starve another's). Otherwise each kernel's user
namespace keeps its own count. PROTECTIONS names what the sandbox gives each kernel; each
has a test in tests/test_sandbox.py. Grading without the sandbox (``sandbox = False``, the
command line's --no-sandbox) boots a plain kernel, with the rlimits alone.
Rule (sandbox/): never judges; each protection is named in kernel.PROTECTIONS and attacked in tests.
"""
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid

from jupyter_client.kernelspec import KernelSpec
from traitlets import Bool, Integer, List, TraitError, Unicode, default, validate

from .. import PACKAGE
from ..upstream.kernel_client import GradingKernelClient
from ..upstream.kernel_manager import QuickKernelManager
from . import seccomp
from .zygotes import ZYGOTES, Zygote, ZygoteError, ZygoteKernel, ZygoteProvisioner

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/passwd", "/etc/group",
                "/etc/nsswitch.conf", "/etc/hosts")

# Kernel options: no history database. And IPython's own cell compiler instead of the
# debugger's, which hashes every cell's text in pure Python (a tenth of a second per
# submission for the judge's requests); ipykernel has no option for it (zygote.py's
# plain_compiler, LAUNCH).
KERNEL_OPTIONS = ["--HistoryManager.enabled=False"]

LAUNCH = ("import os, resource as r, runpy, sys\n"
          "if {uid}: os.setgroups([]); os.setgid({uid}); os.setuid({uid})\n"
          "if {nproc}: r.setrlimit(r.RLIMIT_NPROC, ({nproc}, {nproc}))\n"
          "if {mem}: r.setrlimit(r.RLIMIT_AS, ({mem}, {mem}))\n"
          "if {cpu}: r.setrlimit(r.RLIMIT_CPU, ({cpu}, {cpu} + 5))\n"
          "if {fsize}: r.setrlimit(r.RLIMIT_FSIZE, ({fsize}, {fsize}))\n"
          "if {nofile}: r.setrlimit(r.RLIMIT_NOFILE, ({nofile}, {nofile}))\n"
          "{patch}"
          "sys.argv = ['ipykernel_launcher', '-f'] + sys.argv[1:]\n"
          "runpy.run_module('ipykernel_launcher', run_name='__main__', alter_sys=True)\n")


PLAIN_COMPILER = ("from IPython.core.compilerop import CachingCompiler\n"
                  "from ipykernel.ipkernel import IPythonKernel\n"
                  "IPythonKernel.compiler_class.klass = IPythonKernel.compiler_class.default_value = CachingCompiler\n")


# User ids for kernels when the grader is root: far above any real or subordinate range.
KERNEL_UIDS = 2_000_000_000
_kernels = itertools.count()


def kernel_uid():
    """A user id no other live kernel of this machine holds (worker pids differ)."""
    return KERNEL_UIDS + (os.getpid() % 100_000) * 1000 + next(_kernels) % 1000


def parse_size(text):
    text = str(text).strip().upper()
    units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    return int(float(text[:-1]) * units[text[-1]]) if text and text[-1] in units else int(text or 0)


# The sandbox's protections, by name: each has a test that tries to break it and that would
# succeed without it (tests/test_sandbox.py), and GradingKernelManager.disabled_protections can
# leave one out for that test.
PROTECTIONS = {
    "seccomp": "a system-call filter (seccomp.py): no key store, namespaces, mounts, ptrace, bpf, ...",
    "cgroups": "a cgroup per kernel: memory (shared memory and tmpfs included), processes, CPU weight",
    "network": "a network namespace per kernel, with its loopback alone",
    "seal": "the kernel's socket folder read-only once it has bound its sockets",
    "mask_course": "the course's package (reference, cases, catalog) hidden in the sandbox",
    "user_namespace": "without root, a user namespace per kernel (its own process count)",
    "own_devpts": "a devpts instance per kernel, with few ptys: no pseudo-terminal shared with another kernel",
}


# What the sandbox of the kernels this process started could not give them, as result flags
# (drained by the worker after each submission): "no_kernel_cgroup", "weakened:<protection>".
NOTES: set[str] = set()


def take_notes():
    found = sorted(NOTES)
    NOTES.clear()
    return found


def course_files_under(prefixes):
    """The folders of this course's package (and its installed metadata) inside ``prefixes``
    (a wheel's or a Dask worker's install): the sandbox mounts empty folders over them."""
    import importlib.metadata
    package = PACKAGE
    top = os.path.basename(package)
    found: list[str] = []
    inside = [p for p in prefixes if package.startswith(p.rstrip("/") + "/")]
    if not inside:   # a checkout, as in the course's repository: nothing to hide, no metadata to read
        return found
    # reading every installed distribution's metadata takes a few tenths of a second
    names = {re.sub(r"[-.]+", "_", d).lower() for d in importlib.metadata.packages_distributions().get(top, [])}
    for prefix in inside:
        if package.startswith(prefix.rstrip("/") + "/"):
            found.append(package)
            parent = os.path.dirname(package)
            found += [os.path.join(parent, n) for n in sorted(os.listdir(parent))
                      if n.endswith((".dist-info", ".egg-info")) and n.split("-")[0].lower() in names]
    return sorted(set(found))


def sandbox_problem():
    """Why bubblewrap cannot run here, or None when it can."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    try:
        run = subprocess.run([bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start: {exc}"
    if run.returncode != 0:
        return f"bubblewrap cannot create a sandbox here: {run.stderr.strip()[:300]}"
    return seccomp.problem()


class GradingKernelManager(QuickKernelManager):

    sandbox = Bool(True, help="Run each kernel inside bubblewrap (no network, read-only "
                              "environment, one writable scratch folder).").tag(config=True)
    memory_limit = Unicode("2G", help="Address-space limit of a kernel process (RLIMIT_AS), "
                                      "e.g. 2G; 0 for none.").tag(config=True)
    kernel_memory_limit = Unicode("", help="Memory of a kernel as a whole, all its processes, shared "
                                  "memory and tmpfs included (its cgroup's, where there is one); empty: "
                                  "memory_limit.").tag(config=True)
    cpu_limit = Integer(300, help="CPU seconds one kernel process may use (RLIMIT_CPU); "
                                  "0 for none.").tag(config=True)
    file_limit = Unicode("100M", help="Largest file a kernel may write (RLIMIT_FSIZE); the "
                                      "sandbox's /tmp is a tmpfs of this size too.").tag(config=True)
    process_limit = Integer(128, help="Processes and threads a sandboxed kernel may have at "
                                      "once (RLIMIT_NPROC): a fork bomb stops there. 0 for none.").tag(config=True)
    descriptor_limit = Integer(256, help="Open files and sockets one sandboxed kernel process may have "
                                         "(RLIMIT_NOFILE; Linux bounds the descriptors in flight in Unix "
                                         "sockets by it too): with the filter's fixed socket buffers, what "
                                         "bounds the unix-socket memory no cgroup counts. 0 for none.").tag(config=True)
    scratch_root = Unicode("", help="Where scratch folders are made (grading sets its work "
                                    "folder, which each run wipes).").tag(config=True)
    warm = Bool(True, help="Fork sandboxed kernels from a zygote that has already imported "
                           "numpy and ipykernel (zygote.py), instead of booting each one: the "
                           "same sandbox and limits, each kernel in namespaces of its own.").tag(config=True)
    patched_kernel = Bool(True, help="Apply zygote.py's patches to IPython and ipykernel (the "
                                     "cell compiler, skipped checks, one transform per request): "
                                     "the same kernel, quicker. Off with Upstream.stock.").tag(config=True)
    disabled_protections = List(Unicode(), help="Protections of the sandbox to leave out, by name "
                                "(PROTECTIONS): for the tests that prove each one matters, never for "
                                "grading a class (grading flags every result 'weakened:<name>').").tag(config=True)

    @validate("disabled_protections")
    def _known_protections(self, proposal):
        unknown = sorted(set(proposal["value"]) - set(PROTECTIONS))
        if unknown:
            raise TraitError(f"unknown protections {unknown}: the sandbox's are {sorted(PROTECTIONS)}")
        return proposal["value"]

    def protected(self, name):
        """Whether the sandbox gives this kernel the protection ``name`` (PROTECTIONS)."""
        return self.sandbox and name not in self.disabled_protections

    @default("client_factory")
    def _quick_client(self):
        return GradingKernelClient

    def __init__(self, template=False, **kwargs):
        """``template``: only the traits (how the sandbox is made), no kernel to come."""
        super().__init__(**kwargs)
        self.zygote, self.own_zygote, self.cgroup, self.uid = None, False, None, 0
        if template:
            return
        # as root, the kernel runs as a user of its own (see the module docstring)
        self.uid = kernel_uid() if self.sandbox and os.geteuid() == 0 else 0
        # texts the zygote stashes before it forks this kernel ({key: {"text", "compile",
        # "filename"}}, set by the caller), and those the kernel was forked with
        self.stash, self.stashed = {}, frozenset()
        if self.sandbox:   # every sandboxed kernel is forked by a zygote: a warm one, shared,
            if self.warm:  # or a cold one of its own, which imports nothing first
                try:
                    self.zygote = ZYGOTES.get(self)
                except (ZygoteError, OSError) as exc:   # only an optimisation: boot this kernel cold
                    self.log.warning("no warm kernel (%s): booting a cold one", exc)
            if self.zygote is None:
                self.zygote, self.own_zygote = Zygote(self, self.scratch_root, cold=True), True
        scratch_root = self.zygote.scratch_root if self.zygote else self.scratch_root or None
        self.scratch = tempfile.mkdtemp(prefix="kernel-", dir=scratch_root)
        # Unix socket paths must stay under 108 bytes: keep them in a short private folder
        sockets_root = self.zygote.sockets_root if self.zygote else "/tmp" if os.path.isdir("/tmp") else None
        self.sockets = tempfile.mkdtemp(prefix="gk-", dir=sockets_root)
        # Unix sockets in a folder both can see: a sandboxed kernel has no network to share, and
        # an unsandboxed one no TCP port to race for (jupyter_client picks free ports, then the
        # kernel binds them: a kernel started meanwhile can take one, and this one dies at start)
        self.transport = "ipc"
        self.ip = os.path.join(self.sockets, "kernel")
        self.connection_file = os.path.join(self.sockets, "connection.json")

    @property
    def kernel_spec(self):
        if self._kernel_spec is None:
            launch = LAUNCH.format(patch=PLAIN_COMPILER if self.patched_kernel else "",
                                   mem=parse_size(self.memory_limit), cpu=int(self.cpu_limit),
                                   fsize=parse_size(self.file_limit), uid=self.uid,
                                   nproc=int(self.process_limit) if self.sandbox else 0,
                                   nofile=int(self.descriptor_limit) if self.sandbox else 0)
            self._kernel_spec = KernelSpec(
                argv=[sys.executable, "-c", launch, "{connection_file}", *KERNEL_OPTIONS],
                display_name="Python 3 (grading)", language="python", interrupt_mode="message",
                env={"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                     "MALLOC_ARENA_MAX": "2", "MPLBACKEND": "Agg", "PYTHONNOUSERSITE": "1",
                     "PYDEVD_DISABLE_FILE_VALIDATION": "1",
                     # nbgrader's documented signal that the autograder runs the notebook; the
                     # sandbox clears the environment, so it is passed on here (optional
                     # training cells read it and skip)
                     "NBGRADER_EXECUTION": "autograde"})
        return self._kernel_spec

    def prepare_scratch(self, folder, names):
        """Copy the named helper files from the notebook's folder into the scratch folder:
        the kernel's working directory and the only place it may write."""
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                shutil.copyfile(path, os.path.join(self.scratch, name))

    def format_kernel_cmd(self, extra_arguments=None):
        return super().format_kernel_cmd(extra_arguments)   # unsandboxed; a sandboxed one is forked

    def spawn_request(self):
        """What the zygote needs to fork this kernel (zygote.py's ``spawn``)."""
        request = {"op": "spawn", "connection_file": self.connection_file, "uid": self.uid,
                   "options": KERNEL_OPTIONS, "patch_kernel": self.patched_kernel,
                   "scratch": self.scratch, "scratch_root": self.zygote.scratch_root,
                   "sockets": self.sockets, "sockets_root": self.zygote.sockets_root,
                   "log": self.sockets + ".log",
                   "tmp_size": parse_size(self.file_limit) or 2**30,
                   "env": {"HOME": self.scratch, "TMPDIR": self.scratch},
                   "limits": {"RLIMIT_NPROC": int(self.process_limit), "RLIMIT_AS": parse_size(self.memory_limit),
                              "RLIMIT_CPU": int(self.cpu_limit), "RLIMIT_FSIZE": parse_size(self.file_limit),
                              "RLIMIT_NOFILE": int(self.descriptor_limit)},
                   "seccomp": self.protected("seccomp"), "network": self.protected("network"),
                   "seal": self.protected("seal"), "own_devpts": self.protected("own_devpts"),
                   "user_namespace": not self.uid and self.protected("user_namespace")}
        cgroups = self.zygote.cgroups
        NOTES.update(f"weakened:{name}" for name in self.disabled_protections)
        if cgroups is None and self.protected("cgroups"):
            NOTES.add("no_kernel_cgroup")
        if cgroups is not None and self.protected("cgroups"):
            memory = parse_size(self.kernel_memory_limit or self.memory_limit)
            self.cgroup, procs = cgroups.kernel(memory, int(self.process_limit))
            request.update(cgroups=procs, cgroup_mounts=cgroups.folders())
        elif cgroups is not None:
            request.update(cgroup_mounts=cgroups.folders())
        return request

    def kernel_used(self):
        """(the kernel's pid, the CPU seconds its processes used so far), as its zygote reads
        them from /proc; None for a kernel no zygote forked, or gone (measure/steps.py)."""
        process = getattr(self.provisioner, "process", None)
        used = process.used() if isinstance(process, ZygoteKernel) else None
        return None if used is None else (process.pid, used)

    def oom_killed(self):
        """Whether its memory limit made Linux kill one of the kernel's processes."""
        cgroups = self.zygote.cgroups if self.zygote else None
        return bool(self.cgroup and cgroups and cgroups.oom_kills(self.cgroup))

    def bwrap(self, scratch, sockets, root, cgroups=()):
        """bubblewrap's command line for the zygote that forks this kernel: it keeps what
        making namespaces and mounts needs, and sees the roots of the scratch and socket
        folders and the run's cgroups (``cgroups``, bound at the same paths); each kernel it
        forks sees only its own (zygote.py)."""
        if root:   # root: no user namespace; setuid/setgid to drop to the kernel's user
            unshare = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                       "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:      # a user namespace of the grader's user (no cgroup namespace: the zygote
            # moves kernels between cgroups of the run, which one would hide)
            unshare = ["--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                       "--cap-drop", "ALL"]
        # namespaces and mounts, the kernels' loopback; as root, also signalling a kernel's
        # init, which runs as the kernel's user: without CAP_KILL its parent-death signal is
        # not delivered, and the init, the kernel and what it started would outlive the submission
        unshare += ["--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_NET_ADMIN"] + (["--cap-add", "CAP_KILL"] if root else [])
        args = [shutil.which("bwrap") or "bwrap", *unshare, "--die-with-parent", "--new-session",
                "--proc", "/proc", "--dev", "/dev",
                "--size", str(parse_size(self.file_limit) or 2**30), "--perms", "1777", "--tmpfs", "/tmp",
                "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
                "--setenv", "HOME", scratch, "--setenv", "TMPDIR", scratch,
                "--setenv", "LANG", "C.UTF-8"]
        for d in SYSTEM_DIRS:
            if os.path.islink(d):
                args += ["--symlink", os.readlink(d), d]
            elif os.path.isdir(d):
                args += ["--ro-bind", d, d]
        for f in SYSTEM_FILES:
            if os.path.exists(f):
                args += ["--ro-bind", f, f]
        prefixes = sorted({sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})
        # folders on the way to what is bound below, made traversable for the kernel's user
        # (bubblewrap would make them 0700, and /root-like homes are 0700 on the host)
        ancestors = {os.path.dirname(p) for p in prefixes + [scratch, sockets, *cgroups]}
        ancestors = {a for p in ancestors for a in [p] + [p[:i] for i in range(1, len(p)) if p[i] == "/"]}
        for a in sorted(ancestors, key=lambda a: (a.count("/"), a)):
            if a not in ("", "/", "/tmp") and not a.startswith(SYSTEM_DIRS) and not os.path.islink(a):
                args += ["--perms", "0755", "--dir", a]
        for d in prefixes:
            args += ["--ro-bind", d, d]
        if self.protected("mask_course"):
            for d in course_files_under(prefixes):   # the reference, the cases, the catalog
                args += ["--tmpfs", d, "--remount-ro", d]
        for name, value in self.kernel_spec.env.items():
            args += ["--setenv", name, value]
        for d in cgroups:
            args += ["--bind", d, d]
        args += ["--bind", scratch, scratch, "--bind", sockets, sockets, "--chdir", scratch]
        return args

    async def _async_wait(self, pollinterval=0.01):
        # a killed kernel is gone within milliseconds: the stock 0.1 s poll only waits
        await super()._async_wait(pollinterval=pollinterval)

    async def _async_pre_start_kernel(self, **kw):
        if self.zygote and self.provisioner is None:   # forked by the zygote, not launched
            self.kernel_id = self.kernel_id or str(uuid.uuid4())
            self.provisioner = ZygoteProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self)
        kw.setdefault("stdout", subprocess.DEVNULL)
        kw.setdefault("stderr", subprocess.DEVNULL)
        kw["cwd"] = self.scratch
        cmd, kw = await super()._async_pre_start_kernel(**kw)
        if self.uid:   # the kernel's own user must own its folders and read its connection file
            for folder in (self.sockets,) if self.zygote else (self.scratch, self.sockets):
                os.chmod(folder, 0o711)   # bubblewrap, root without capabilities, must enter it
                for dirpath, _, files in os.walk(folder):
                    for path in [dirpath] + [os.path.join(dirpath, f) for f in files]:
                        os.lchown(path, self.uid, self.uid)
        return cmd, kw

    def setup_log(self):
        """What a forked kernel's set-up wrote before it failed (empty when it did not)."""
        try:
            with open(self.sockets + ".log", encoding="utf-8", errors="replace") as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def cleanup_scratch(self):
        shutil.rmtree(self.scratch, ignore_errors=True)
        shutil.rmtree(self.sockets, ignore_errors=True)
        if os.path.exists(self.sockets + ".log"):
            os.remove(self.sockets + ".log")
        if self.cgroup and self.zygote is not None and self.zygote.cgroups is not None:
            self.zygote.cgroups.remove_kernel(self.cgroup)
            self.cgroup = None
        if self.own_zygote and self.zygote is not None:   # a cold kernel's own zygote ends with it
            self.zygote.stop()
            self.zygote = None


