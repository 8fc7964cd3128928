"""The zygote: a Python inside the sandbox that forks a fresh kernel for each submission; a
warm one has imported what kernels import first, so that no learner pays for booting Python,
numpy, IPython and ipykernel (a cold one, started for one kernel, imports nothing first).

The grading process starts one warm zygote and its local workers share it (kernel.py); a Dask
worker starts its own. It runs inside bubblewrap, with the same read-only view of the
system and the Python environment as every kernel, and serves the grader on its stdin and
stdout, one JSON request and one JSON reply per line. It never runs a learner's code itself.

What a learner can leave behind for the next learner, and why nothing passes:

* memory and module state: each kernel is a new fork of the zygote, which only imported;
* processes: each kernel is process 2 of a pid namespace of its own, under an init that
  reaps and that dies with it (or with the zygote); when it dies the kernel of Linux kills
  everything left in the namespace, however detached;
* files: each kernel gets a mount namespace of its own, with new empty tmpfs on /tmp,
  /dev/shm and the scratch root (where it finds a copy of its helper files), and sees only
  its own socket folder, read-only once its sockets are bound; SysV IPC is private too (an
  IPC namespace), and so is the network (a network namespace, its loopback alone);
* pseudo-terminals: each kernel mounts a devpts instance of its own on /dev/pts (a few
  ptys at most), where the zygote's, which every kernel it forks would share, was;
* the kernel key store, which no namespace scopes: the system-call filter refuses it;
* the environment: read-only, as for every kernel.

Each kernel is put into its cgroups (memory, processes, CPU weight) before its namespaces
are made, then drops every privilege: as root, to a user id of its own (kernel.py picks
it); without root, in a user namespace of its own, by clearing its capabilities. Limits are
set as for a cold kernel, then the filter is installed.

This file is sent to the sandbox as text (the repository is not in it): standard library
only, and nothing imported from the package.
Rule (shipped/): the standard library and numpy only; it leaves the grading process as text.
"""
import atexit
import ctypes
import functools
import gc
import hashlib
import importlib.util
import json
import marshal
import os
import re
import resource
import select
import signal
import sys
import traceback
import types

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWUSER = 0x00020000, 0x08000000, 0x20000000, 0x40000000, 0x10000000
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
SIOCSIFFLAGS, IFF_UP, IFF_LOOPBACK, IFF_RUNNING = 0x8914, 0x1, 0x8, 0x40
LOG_BYTES = 1 << 16   # what a kernel's set-up log keeps (its stderr reaches it through a pipe)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
PTYS = 4   # pseudo-terminals a kernel may open (an IPython kernel opens none)
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 1, 24, 38, 47
PRELOAD = ("numpy", "numpy.random", "ipykernel.kernelapp", "IPython.core.logger")   # then what a kernel imports as it starts (learn_imports);
# numpy.random: each kernel seeds it (run_kernel), and numpy imports it only when first used

_libc = ctypes.CDLL(None, use_errno=True)

# Texts the grader sends into every kernel (the harness, the hidden cases), stashed here once
# (``stash``) so that each kernel forked afterwards has them: its set-up code and judged
# calls then name them instead of carrying them, and IPython does not tokenize and compile
# them again in every kernel. The harness takes them and removes this module before any
# learner code runs.
STASH = types.ModuleType("_grader_stash")
STASH.items = {}   # type: ignore[attr-defined]  # a module made here to hold the stash
sys.modules[STASH.__name__] = STASH

# The system-call filter every kernel is forked with (seccomp.py's program, from the grader's
# "filter" request): installed in each kernel's init once its privileges are dropped.
FILTER = {"program": None}

# The helper modules kernels import from their scratch folder (the students' checks, the
# notebook's utilities), compiled here once per distinct text: sha256 of the source -> the
# code, marshalled. Each kernel finds them as checked pycs (``write_bytecode``).
COMPILED: dict[bytes, bytes] = {}
MAX_COMPILED = 1 << 20   # a larger file is left to the kernel, which compiles under its own limits


def _call(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source, target, fstype=None, flags=0, data=None):
    enc = (lambda s: s.encode() if s is not None else None)
    _call(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def fresh_tmpfs(target, size, mode="1777"):
    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode={mode}")


def read_only(target):
    """Make a mount read-only in this namespace only, keeping the flags it has (a user
    namespace may not clear them)."""
    kept = os.statvfs(target).f_flag
    flags = MS_BIND | MS_REMOUNT | MS_RDONLY
    for st, ms in ((2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC), (1024, MS_NOATIME), (2048, MS_NODIRATIME),
                   (4096, MS_RELATIME)):
        if kept & st:
            flags |= ms
    mount(None, target, None, flags)


def mounts_under(folder, skip):
    """The mount points below ``folder`` (outermost only), but those under ``skip``."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        for line in f:
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), line.split()[4])
            if point.startswith(folder + "/") and not any(point == s or point.startswith(s + "/") for s in skip):
                found.append(point)
    outer = []
    for point in sorted(found, key=len):
        if not any(point.startswith(o + "/") for o in outer):
            outer.append(point)
    return outer


def isolate(req):
    """In the new namespaces, as their privileged init: the mounts described above. The
    scratch folder comes back empty: the helper files are written into it once privileges
    are dropped (``child``)."""
    sockets = os.open(req["sockets"], os.O_PATH | os.O_DIRECTORY)   # mounted back below
    # what the sandbox binds under /tmp (a Python environment there, say) stays, read-only
    kept = [(p, os.open(p, os.O_PATH | os.O_DIRECTORY))
            for p in mounts_under("/tmp", (req["sockets_root"], req["scratch_root"])) if os.path.isdir(p)]
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)   # this namespace's processes only
    size = req["tmp_size"]
    fresh_tmpfs("/tmp", size)
    if os.path.isdir("/dev/shm"):
        fresh_tmpfs("/dev/shm", size)
    if req.get("own_devpts") and os.path.isdir("/dev/pts"):   # /dev/ptmx is bubblewrap's link to pts/ptmx
        mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, f"newinstance,ptmxmode=0666,mode=0600,max={PTYS}")
    for path, fd in kept:
        os.makedirs(path, exist_ok=True)
        mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        read_only(path)
        os.close(fd)
    for root in (req["sockets_root"], req["scratch_root"]):   # hide the other kernels' folders
        os.makedirs(root, exist_ok=True)
        fresh_tmpfs(root, "1m", "0755")
    os.mkdir(req["sockets"])
    mount(f"/proc/self/fd/{sockets}", req["sockets"], None, MS_BIND)
    os.close(sockets)
    os.mkdir(req["scratch"])
    owner = f",uid={req['uid']},gid={req['uid']}" if req["uid"] else ""
    fresh_tmpfs(req["scratch"], f"{size}{owner}", "0700")
    for target in ("/", "/dev"):   # in a user namespace, the sandbox's user owns these
        read_only(target)
    for folder in req.get("cgroup_mounts", ()):   # the kernel is in its cgroups: it needs no view of them
        fresh_tmpfs(folder, "4k", "0555")   # (a mount from a more privileged namespace cannot be undone)
        read_only(folder)
    if req.get("network"):
        loopback_up()


def loopback_up():
    """The loopback interface of the kernel's own network namespace (its only one), up."""
    import fcntl
    import socket
    import struct
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", IFF_UP | IFF_LOOPBACK | IFF_RUNNING))


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_filter(program):
    """Every system call of this process, and of whatever it starts, goes through the filter
    from now on (no_new_privs is set: drop_privileges)."""
    buffer = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    _call(_libc.prctl(ctypes.c_int(PR_SET_SECCOMP), ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog),
                      ctypes.c_ulong(0), ctypes.c_ulong(0)), "seccomp")


def join_cgroups(procs):
    """Move this process (and so all it will start) into the kernel's cgroups: the grader made
    them, and they are seen here at the paths it gave (kernel.py's Cgroups)."""
    for path in procs:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)


def own_user_namespace():
    """Without root: a user namespace of the kernel's own, in which it keeps this user's id, so
    that the process limit counts the kernel's processes alone (Linux counts per user and
    namespace)."""
    uid, gid = os.geteuid(), os.getegid()
    _call(_libc.unshare(CLONE_NEWUSER), "unshare (user)")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def helper_files(folder):
    """The helper files the grader copied into a kernel's scratch folder: {name: bytes}.
    Read by the zygote before it forks the kernel, which writes them into its own fresh
    scratch folder."""
    files = {}
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as f:
                files[name] = f.read()
    return files


def drop_privileges(uid):
    """As root: become ``uid`` (which clears every capability). In a user namespace: clear
    the capabilities themselves, bounding and ambient sets included."""
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if uid:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        return
    _libc.prctl(PR_CAP_AMBIENT, 4, 0, 0, 0)   # PR_CAP_AMBIENT_CLEAR_ALL
    for cap in range(64):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)   # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    _call(_libc.capset(header, data), "capset")


def set_limits(limits):
    for name, value in limits.items():
        if value:
            which = getattr(resource, name)
            resource.setrlimit(which, (value, value + 5 if name == "RLIMIT_CPU" else value))


def exit_code(status):
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def enter_namespaces(req):
    """The handle's set-up: its stdio (stderr to the kernel's log), its own session, death
    with the zygote, the kernel's cgroups, and new mount, pid, IPC (and network) namespaces,
    under a user namespace of its own when the zygote is not root."""
    devnull = os.open(os.devnull, os.O_RDWR)
    log = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    for fd, to in ((0, devnull), (1, devnull), (2, log)):
        os.dup2(to, fd)
    os.close(log)
    os.close(devnull)
    os.setsid()
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)   # gone with the zygote
    join_cgroups(req.get("cgroups", ()))
    if req.get("user_namespace"):
        own_user_namespace()
    _call(_libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | (CLONE_NEWNET if req.get("network") else 0)),
          "unshare")


def confine_init(req, files, alive_r):
    """The init's set-up, before it forks the kernel: the sandbox proper (``isolate``), the
    learner's user, the system-call filter, and the helpers written to the scratch folder.
    It exits if the handle is gone, so that no kernel runs unwatched."""
    if select.select([alive_r], [], [], 0)[0]:   # the handle died before that was set
        os._exit(1)
    isolate(req)
    drop_privileges(req["uid"])
    # a change of user cleared it; and a handle running as root may signal this init, now of
    # another user, only with CAP_KILL, which the zygote keeps for it (kernel.py's bwrap)
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if select.select([alive_r], [], [], 0)[0]:
        os._exit(1)
    os.close(alive_r)
    if req.get("seccomp"):
        if FILTER["program"] is None:
            raise RuntimeError("no system-call filter was given to the zygote")
        install_filter(FILTER["program"])
    for name, data in files.items():
        with open(os.path.join(req["scratch"], name), "wb") as f:
            f.write(data)
    try:
        write_bytecode(req["scratch"], files)
    except OSError:
        pass   # only an optimisation: the kernel compiles its helpers itself


def child(req, files):
    """The forked kernel (never returns). This process is the zygote's handle on the kernel:
    it puts itself in the kernel's cgroups, makes the namespaces, and waits for their init,
    which waits for the kernel. It stays privileged, outside the kernel's pid namespace where
    nothing the learner runs can reach it: it keeps the kernel's set-up log (LOG_BYTES at
    most, whatever the kernel writes), and seals the kernel's socket folder (``seal``)."""
    enter_namespaces(req)
    alive_r, alive_w = os.pipe()   # readable (at EOF) once this handle is gone
    log_r, log_w = os.pipe()       # the kernel's stderr, to the log
    bound_r, bound_w = os.pipe()   # the kernel has bound its sockets: seal the folder
    sealed_r, sealed_w = os.pipe()   # sealed: go on
    init = os.fork()
    if init:
        for fd in (alive_r, log_w, bound_w, sealed_r):
            os.close(fd)
        keep_and_seal(req, init, log_r, bound_r, sealed_w)
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)   # pid 1: the namespace dies with it
    os.dup2(log_w, 2)
    for fd in (alive_w, log_r, bound_r, sealed_w, log_w):
        os.close(fd)
    confine_init(req, files, alive_r)
    kernel = os.fork()
    if kernel:
        for fd in (bound_w, sealed_r):
            os.close(fd)
        while True:   # reap orphans until the kernel exits
            try:
                pid, status = os.wait()
            except ChildProcessError:
                os._exit(1)
            if pid == kernel:
                os._exit(exit_code(status))
    run_kernel(req, bound_w, sealed_r)


def keep_and_seal(req, init, log_r, bound_r, sealed_w):
    """The handle's part (never returns): copy the kernel's stderr to its log, up to LOG_BYTES
    (a kernel cannot fill the disk through it); when the kernel says its sockets are bound,
    make its socket folder read-only in its namespace (it has bound all it ever binds, and
    nothing it writes there then reaches the disk); exit with the init."""
    log, left = 2, LOG_BYTES   # the handle's own stderr is the log (``child``)
    pidfd = os.pidfd_open(init)
    watched = [log_r, bound_r, pidfd]
    while True:
        ready = select.select(watched, [], [])[0]
        if log_r in ready:
            data = os.read(log_r, 1 << 16)
            if not data:
                watched.remove(log_r)
            elif left > 0:
                left -= os.write(log, data[:left])
        if bound_r in ready:
            watched.remove(bound_r)
            if os.read(bound_r, 1) and req.get("seal", True):
                read_only(req["sockets"])
            os.close(sealed_w)   # the kernel goes on (its read returns)
        if pidfd in ready:
            _, status = os.waitpid(init, 0)
            os._exit(exit_code(status))


def compile_helpers(folder, files):
    """In the zygote, before it forks a kernel: compile the helper modules among its
    helper files that were not compiled yet (COMPILED)."""
    for name, data in files.items():
        if not name.endswith(".py") or len(data) > MAX_COMPILED or len(COMPILED) >= 256:
            continue
        key = hashlib.sha256(data).digest()
        if key not in COMPILED:
            try:   # as the import system compiles a source file
                COMPILED[key] = marshal.dumps(compile(data, os.path.join(folder, name), "exec", dont_inherit=True))
            except Exception:
                pass   # the kernel compiles it itself, and says why it cannot


def write_bytecode(folder, files):
    """In the kernel's scratch folder, a pyc for each helper module compiled in the zygote:
    hash-based and checked (PEP 552), so the import system compares it with the source
    file's text before using it, and compiles the file itself if they differ."""
    for name, data in files.items():
        code = COMPILED.get(hashlib.sha256(data).digest()) if name.endswith(".py") else None
        if code is None:
            continue
        path = importlib.util.cache_from_source(os.path.join(folder, name))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(importlib.util.MAGIC_NUMBER + (0b11).to_bytes(4, "little")
                    + importlib.util.source_hash(data) + code)


def quick_cells():
    """Two checks IPython makes on every cell, skipped when a cell's text shows they would
    find nothing: the same result, without tokenizing each cell twice and compiling it once
    more. The token transforms (``x = %magic``, ``x = !cmd``, ``%magic``, ``!cmd``, ``obj?``,
    ``/f x``, ``,f x``, ``;f x``) need one of the characters ``%!?`` or a line starting with
    ``,;/``; top-level ``await`` code needs the word ``await`` or ``async``."""
    from IPython.core import inputtransformer2 as it2
    from IPython.core import interactiveshell
    default = [it2.MagicAssign, it2.SystemAssign, it2.EscapedCommand, it2.HelpEnd]
    token_transforms, should_be_async = it2.TransformerManager.do_token_transforms, interactiveshell._should_be_async

    def do_token_transforms(self, lines):
        text = "".join(lines)
        if (self.token_transformers == default and "%" not in text and "!" not in text and "?" not in text
                and not any(line.lstrip()[:1] in (",", ";", "/") for line in lines)):
            return lines
        return token_transforms(self, lines)

    it2.TransformerManager.do_token_transforms = do_token_transforms
    interactiveshell._should_be_async = lambda cell: ("await" in cell or "async" in cell) and should_be_async(cell)


def one_transform_per_request():
    """ipykernel transforms a cell's text (IPython's input transformers and prefilters, line
    by line) to decide how to run it, then IPython transforms it again to run it. Within one
    request nothing runs in between, so the second time takes the first's result: the same
    text, under the same request's header object, since the last transform."""
    from IPython.core.interactiveshell import InteractiveShell
    stock = InteractiveShell.transform_cell
    last = []   # [header, text, result] of the last transform, used once

    def transform_cell(self, raw_cell):
        header = getattr(self, "parent_header", None)
        if last and header and last[0] is header and last[1] == raw_cell:
            result = last[2]
            last.clear()
            return result
        last.clear()
        result = stock(self, raw_cell)
        last.extend((header, raw_cell, result))
        return result

    InteractiveShell.transform_cell = transform_cell


def signatures_once():
    """ipykernel reads IPython's run_cell signature (inspect.signature) at every execute
    request: read it once per function."""
    from ipykernel import ipkernel
    stock, seen = ipkernel._accepts_parameters, {}

    def accepts_parameters(meth, param_names):
        key = (getattr(meth, "__func__", meth), tuple(param_names))
        if key not in seen:
            seen[key] = stock(meth, param_names)
        return dict(seen[key])

    ipkernel._accepts_parameters = accepts_parameters


# The notebook's own code cells (the imports, the worked examples: the same text in every
# submission), parsed and compiled here once as a kernel's shell would (a "cells" stash).
# CELLS: text as IPython transforms it -> (the compiler's flags, the module parsed);
# CODES: (id of one of those modules' statements, mode, flags) -> its code, named PRECOMPILED.
# The modules stay alive here, so no other statement can take one of their ids.
CELLS: dict = {}
CODES: dict = {}
PRECOMPILED = "<precompiled>"


def precompile(texts):
    """In the zygote: parse and compile each cell's text as a kernel's shell does (IPython's
    input transforms; a fresh CachingCompiler; each statement alone, the last one in "single"
    mode when it is an expression, with top-level await allowed as IPython's autoawait allows
    it). A text that warns is left to the kernel, which must show the warning itself; so is
    one that does not compile."""
    import ast
    import warnings

    from IPython.core.compilerop import CachingCompiler
    from IPython.core.inputtransformer2 import TransformerManager
    await_flag = getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
    for raw in texts:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                text = TransformerManager().transform_cell(raw)
                compiler = CachingCompiler()
                flags, module, codes = compiler.flags, compiler.ast_parse(text, filename=PRECOMPILED), {}
                with compiler.extra_flags(await_flag):
                    for i, node in enumerate(module.body):
                        single = i == len(module.body) - 1 and isinstance(node, ast.Expr)
                        mode = "single" if single else "exec"
                        key = (id(node), mode, compiler.flags)
                        codes[key] = compiler(ast.Interactive([node]) if single else ast.Module([node], []),
                                              PRECOMPILED, mode)
        except Exception:
            continue
        # only the compiler's own warnings (it names the text compiled): another's, such as an
        # unclosed file's collected meanwhile, says nothing of the cell
        warned = any(w.filename == PRECOMPILED for w in caught)
        if not warned and text not in CELLS:   # else the module dies here: its ids are not kept
            CELLS[text] = (flags, module)
            CODES.update(codes)


def _named(code, filename):
    """``code`` and the code objects in it, named ``filename`` (as compiling it there names them)."""
    consts = code.co_consts
    if any(type(c) is types.CodeType for c in consts):
        consts = tuple(_named(c, filename) if type(c) is types.CodeType else c for c in consts)
    return code.replace(co_filename=filename, co_consts=consts)


def precompiled_cells():
    """In a kernel: its shell's compiler hands back what the zygote compiled (``precompile``)
    instead of compiling it again. The same text with the same flags gives the module parsed
    (a new list of its statements, which IPython may add to); each of its statements, compiled
    in the same mode with the same flags, gives its code, named as IPython names the cell, and
    sets the same ``__future__`` flags as compiling it would. Anything else is compiled as
    before; so is a copy of the module when the learner's AST transformers would change it."""
    if not CELLS:
        return
    import ast
    import codeop
    import copy

    from IPython.core.compilerop import CachingCompiler
    from IPython.core.interactiveshell import InteractiveShell
    parse, compile_code, transform_ast = CachingCompiler.ast_parse, CachingCompiler.__call__, InteractiveShell.transform_ast
    statements = {key[0] for key in CODES}

    def ast_parse(self, source, filename="<unknown>", symbol="exec"):
        entry = CELLS.get(source) if symbol == "exec" else None
        if entry is None or entry[0] != self.flags:
            return parse(self, source, filename, symbol)
        return ast.Module(body=list(entry[1].body), type_ignores=list(entry[1].type_ignores))

    def compile_cell(self, source, filename, symbol, **kwargs):
        body = getattr(source, "body", None)
        code = None
        if not kwargs and type(source) in (ast.Module, ast.Interactive) and type(body) is list and len(body) == 1 \
                and not getattr(source, "type_ignores", None):
            code = CODES.get((id(body[0]), symbol, self.flags))
        if code is None:
            return compile_code(self, source, filename, symbol, **kwargs)
        code = _named(code, filename)
        for feature in codeop._features:
            if code.co_flags & feature.compiler_flag:
                self.flags |= feature.compiler_flag
        return code

    def transform(self, node):
        if self.ast_transformers and any(id(n) in statements for n in getattr(node, "body", ())):
            node = copy.deepcopy(node)
        return transform_ast(self, node)

    CachingCompiler.ast_parse, CachingCompiler.__call__ = ast_parse, compile_cell
    InteractiveShell.transform_ast = transform


# stack_data, which IPython's tracebacks use, highlights each frame's code with a lexer class
# it makes anew at every call (``_pygmented_with_ranges``), and Pygments compiles a class's
# rules the first time it is used: about 9 ms of a two-frame traceback's 19. One such class per
# Pygments lexer, its rules compiled here in the zygote (``warm_tracebacks``), lexes alike.
FRAME_LEXERS: dict = {}


def frame_lexer(base):
    """stack_data's lexer of a frame's code, over the Pygments lexer class ``base``: made once.
    Its instances mark the tokens inside their ``ranges`` (the node being executed) as
    stack_data's own class does."""
    made = FRAME_LEXERS.get(base)
    if made is None:
        class FrameLexer(base):
            ranges: list = []

            def get_tokens(self, text):
                length = 0
                for ttype, value in super().get_tokens(text):
                    if any(start <= length < end for start, end in self.ranges):
                        ttype = ttype.ExecutingNode
                    length += len(value)
                    yield ttype, value

        made = FRAME_LEXERS[base] = FrameLexer
    return made


def frames_highlighted_once():
    """In a kernel: stack_data highlights a frame's code with ``frame_lexer``'s class instead
    of a new one each time; the same tokens, so the same traceback."""
    from stack_data import core, utils

    def _pygmented_with_ranges(formatter, code, ranges):
        import pygments
        from pygments.lexers import get_lexer_by_name
        lexer = frame_lexer(type(get_lexer_by_name("python3")))(stripnl=False)
        lexer.ranges = ranges
        try:
            highlighted = pygments.highlight(code, lexer, formatter)
        except Exception:   # as stack_data: code without highlighting rather than no traceback
            highlighted = code
        return highlighted.splitlines()

    core._pygmented_with_ranges = utils._pygmented_with_ranges = _pygmented_with_ranges


def plain_compiler():
    """IPython's cell compiler for the kernel, not the debugger's (see kernel.py's KERNEL_OPTIONS)."""
    from ipykernel.ipkernel import IPythonKernel
    from IPython.core.compilerop import CachingCompiler
    IPythonKernel.compiler_class.klass = IPythonKernel.compiler_class.default_value = CachingCompiler


# The kernel application, with the command line that every kernel is given parsed once, in
# the zygote: parsing builds an argparse parser of every configurable trait (about 10 ms of
# each kernel's start). Each forked kernel inherits it and only sets its connection file.
PARSED = {"options": None}


def parse_options(options):
    """In the zygote, before it forks a kernel: IPython's kernel application (a singleton
    the kernel inherits) with ``options`` parsed, unless they already are. Options that do
    not parse are left to the kernel, which says why it cannot start."""
    from ipykernel import kernelapp
    options = list(options)
    if PARSED["options"] == options:
        return
    kernelapp.IPKernelApp.clear_instance()
    PARSED["options"] = None
    try:
        kernelapp.IPKernelApp.instance().parse_command_line(options)
    except BaseException:   # SystemExit too: traitlets exits on a config error
        kernelapp.IPKernelApp.clear_instance()
        return
    PARSED["options"] = options


# The kernel's IPython shell, made in the zygote for the options parsed (``prebuild_shell``):
# making one is about 10 ms of each kernel's start (its configurables, magics, prefilters),
# the same work in every kernel. Each kernel forked afterwards takes its own copy, and
# ``adopt_shell`` gives it what a shell made in the kernel would have read there.
SHELL = {"options": None, "shell": None, "config": None}


def prebuild_shell(options):
    """In the zygote, for patched kernels, once ``options`` are parsed (``parse_options``): the
    shell ipykernel's IPythonKernel makes, made here, with the process left as it was (the
    environment, the builtins, ``sys.modules["__main__"]``, no exit hook, no singleton). Only
    when the configuration is flat (no section nested in another, which a shell made under
    the kernel would read) and turns IPython's history off (its thread would live in the
    zygote); otherwise each kernel makes its own, as before."""
    import builtins
    import copy
    options = list(options)
    if SHELL["options"] == options or PARSED["options"] != options:
        return
    SHELL.update(options=options, shell=None, config=None)
    from ipykernel import kernelapp
    app = kernelapp.IPKernelApp.instance()
    config = app.config
    nested = any(isinstance(value, dict) for section in config.values() if isinstance(section, dict)
                 for value in section.values())
    history = str(config.get("HistoryManager", {}).get("enabled"))   # a command line's values are strings
    if nested or history.lower() not in ("false", "0") or getattr(app, "user_ns", None) is not None:
        return
    from ipykernel.zmqshell import ZMQInteractiveShell
    from IPython.core.compilerop import CachingCompiler
    from IPython.core.profiledir import ProfileDir
    environ, names, main = dict(os.environ), dict(vars(builtins)), sys.modules.get("__main__")
    try:   # as IPythonKernel makes it, under the kernel application (the kernel's parent); its
        # profile folder, user namespace and the rest that a kernel reads are set by adopt_shell
        shell = ZMQInteractiveShell(parent=app, profile_dir=ProfileDir(), user_module=None, user_ns=None,
                                    kernel=None, compiler_class=CachingCompiler)
        atexit.unregister(shell.atexit_operations)
    except Exception:
        return
    finally:
        os.environ.clear()
        os.environ.update(environ)
        space = vars(builtins)
        for name in [name for name in space if name not in names]:
            del space[name]
        space.update(names)
        sys.modules["__main__"] = main
    SHELL.update(shell=shell, config=copy.deepcopy(config))
    gc.freeze()


def adopt_shell(app, init_kernel):
    """In a patched kernel, as its application makes the kernel (``IPKernelApp.init_kernel``):
    the zygote's shell (``prebuild_shell``) becomes the kernel's, when the configuration read
    here (config files included) is the one it was made under; else the kernel makes its own.
    It is given what a shell made now would have read from this process: its parent and
    kernel, the folders (IPython's, the profile's, the current one, the home), the
    environment it sets, the standard streams and ``__main__`` it saves and replaces, the
    builtins it adds, its exit hook. (tests/test_kernel.py compares the two shells.)"""
    from pathlib import Path

    from ipykernel.zmqshell import ZMQInteractiveShell
    from IPython.utils.path import get_home_dir
    shell, made_under = SHELL["shell"], SHELL["config"]
    SHELL["shell"] = SHELL["config"] = None
    if shell is None or app.config != made_under or ZMQInteractiveShell.initialized():
        return init_kernel()
    for klass in type(shell)._walk_mro():   # as SingletonConfigurable.instance records its instance
        klass._instance = shell
    result = init_kernel()   # IPythonKernel's shell_class.instance(...) finds it
    kernel = app.kernel
    shell.parent, shell.kernel = kernel, kernel
    shell.init_ipython_dir(None)
    shell.init_profile_dir(kernel.profile_dir)
    shell.history_manager.hist_file = shell.history_manager._get_hist_file_name()
    shell.history_manager.dir_hist[:] = [Path.cwd()]
    shell.starting_dir, shell.home_dir, shell.dir_stack = os.getcwd(), get_home_dir(), []
    shell.init_environment()
    shell.init_encoding()
    shell.save_sys_module_state()
    shell.init_sys_modules()
    shell.init_builtins()
    atexit.register(shell.atexit_operations)
    return result


def close_inherited(keep):
    """Close every descriptor the kernel was forked with but its standard streams and ``keep``:
    the zygote's (its pipes to the grader among them) are not the kernel's."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass   # the listing's own descriptor, closed already


def run_kernel(req, bound_w=None, sealed_r=None):
    close_inherited({bound_w, sealed_r})
    signal.signal(signal.SIGINT, signal.default_int_handler)   # the zygote ignores it
    set_limits(req["limits"])
    os.environ.update(req["env"])
    os.chdir(req["scratch"])
    import numpy
    numpy.random.seed()   # a fork shares its parent's random state: give each its own
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]   # as ipykernel_launcher does; the kernel puts the cwd back
    sys.argv = ["ipykernel_launcher", "-f", req["connection_file"], *req["options"]]
    patched = req.get("patch_kernel", True)
    if patched:   # IPython and ipykernel, quicker (off for stock nbgrader: upstream/__init__.py)
        plain_compiler()
        quick_cells()
        one_transform_per_request()
        signatures_once()
        precompiled_cells()
        frames_highlighted_once()
    from ipykernel import kernelapp
    app = kernelapp.IPKernelApp.instance()   # what launch_new_instance does, in two steps
    if patched and PARSED["options"] == list(req["options"]):   # parsed in the zygote (parse_options)
        app.connection_file = req["connection_file"]
        app.parse_command_line = lambda argv=None: None
        app.init_kernel = functools.partial(adopt_shell, app, app.init_kernel)
    app.initialize()   # binds the kernel's sockets in its socket folder
    if bound_w is not None:   # the handle seals the folder before any learner code runs
        os.write(bound_w, b"b")
        os.read(sealed_r, 1)
        os.close(bound_w)
        os.close(sealed_r)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)   # the log is for the set-up: from here on,
    app.start()                                     # as a cold kernel's stderr
    os._exit(0)


def learn_imports():
    """The modules a kernel imports as it starts (the debugger's, the history's, the
    classes named in its configuration...): learned from a throwaway kernel, forked,
    initialised on sockets of the zygote's own and never started, so that the list
    follows the installed versions instead of being written down here."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.environ["HOME"] = "/tmp"
            before = set(sys.modules)
            from ipykernel import kernelapp
            kernelapp.IPKernelApp.instance().initialize(
                ["--transport=ipc", "--ip=/tmp/.probe", "-f", "/tmp/.probe.json", "--no-stdout", "--no-stderr"])
            with os.fdopen(write, "w") as f:
                json.dump(sorted(set(sys.modules) - before), f)
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        text = f.read()
    os.waitpid(pid, 0)
    return json.loads(text) if text else []


def preload():
    for name in PRELOAD:
        __import__(name)
    for name in learn_imports():
        try:
            __import__(name)
        except Exception:   # a module only a running kernel can import: it will, itself
            pass
    import io
    import tokenize  # its patterns are compiled on first use: once here, not in each kernel
    list(tokenize.generate_tokens(io.StringIO("x = 1\n").readline))
    warm_tracebacks()
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:   # a fork copies one thread: another one's locks would stay held
        raise RuntimeError(f"the zygote must have one thread before it forks, not {threads}")
    gc.freeze()   # what the kernels share stays shared: the collector will not touch it


def warm_tracebacks():
    """Show one traceback as a kernel shows a learner's error: IPython's first imports stack_data,
    executing and pygments' Python lexer, and compiles the lexer's rules (about 40 ms a kernel,
    in the third of a class's kernels whose learner's code raises); here, once, for all of them."""
    import linecache
    try:
        from IPython.core import ultratb
        from IPython.utils import PyColorize
        from pygments.lexers import get_lexer_by_name
        themes = list(getattr(PyColorize, "theme_table", {})) or [None]
        frame_lexer(type(get_lexer_by_name("python3")))(stripnl=False)   # its rules compiled, for every kernel
    except Exception:
        return
    name, text = "<zygote's traceback>", "def f(x):\n    return 1 / x\n\nf(0)\n"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    try:
        for theme in themes:
            try:
                exec(compile(text, name, "exec"), {})
            except ZeroDivisionError:
                try:
                    shown = ultratb.AutoFormattedTB(mode="Context", **({"theme_name": theme} if theme else {}))
                    shown.text(*sys.exc_info())
                except Exception:
                    pass
    finally:
        linecache.cache.pop(name, None)


def stashed(req):
    """What a ``stash`` request stashes: code compiled; with "run", the namespace it builds when
    run (the grader's harness, built as each kernel would build it before any learner code,
    here where no learner code ever runs); data parsed; with "decode" (the key of a stashed
    harness), a judged request whose cases are also decoded into the arrays the learner's
    function is handed; with "cells" (a JSON list of the notebook's own code cells), those
    cells compiled for every kernel (``precompile``)."""
    text = req["text"]
    if req.get("compile"):
        code = compile(text, req["filename"], "exec")
        if not req.get("run"):
            return code
        import builtins
        space = {"__name__": "__grader__", "__builtins__": dict(builtins.__dict__)}
        exec(code, space)
        return space
    if req.get("cells"):
        precompile(json.loads(text))
        return True
    if not req.get("json"):
        return text
    data = json.loads(text)
    harness = STASH.items.get(req.get("decode"))
    if isinstance(harness, dict) and isinstance(data, dict) and isinstance(data.get("cases"), list):
        data["decoded_cases"] = [harness["decode"](case) for case in data["cases"]]
    return data


def tree_cpu(root):
    """CPU seconds of process ``root`` and every process under it, as /proc tells them now
    (with the children they waited for): a measure of what a kernel cost (timings.csv)."""
    parents, used = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry)] = int(fields[1])
            used[int(entry)] = sum(int(x) for x in fields[11:15])   # utime stime cutime cstime
    inside, grew = {root}, True
    while grew:
        found = {pid for pid, parent in parents.items() if parent in inside} - inside
        inside |= found
        grew = bool(found)
    return round(sum(used.get(pid, 0) for pid in inside) / os.sysconf("SC_CLK_TCK"), 3)


class Kernels:
    """The kernels this zygote forked: alive, or exited with a status not told yet."""

    def __init__(self):
        self.live, self.exited, self.cpu = set(), {}, {}

    def reap(self):
        while True:
            try:
                pid, status, used = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if not pid:
                return
            self.live.discard(pid)
            self.exited[pid] = exit_code(status)
            self.cpu.setdefault(pid, round(used.ru_utime + used.ru_stime, 4))   # with the processes it waited for

    def spawn(self, req):
        files = helper_files(req["scratch"])
        compile_helpers(req["scratch"], files)
        parse_options(req["options"])
        if req.get("patch_kernel", True):
            prebuild_shell(req["options"])
        pid = os.fork()
        if pid == 0:
            try:
                child(req, files)
            except BaseException:
                try:
                    traceback.print_exc()
                finally:
                    os._exit(70)
        self.live.add(pid)
        return {"pid": pid}

    def used(self, req):   # the CPU a live kernel has used so far (measure/steps.py's KernelMeter)
        return {"cpu": tree_cpu(req["pid"]) if req["pid"] in self.live else None}

    def poll(self, req):   # an exit is told once, with the CPU the kernel used
        return {"status": self.exited.pop(req["pid"], None), "cpu": self.cpu.pop(req["pid"], None)}

    def signal(self, req):
        if req["pid"] in self.live:
            if req["signal"] in (signal.SIGKILL, signal.SIGTERM):   # its processes are not waited for
                self.cpu[req["pid"]] = tree_cpu(req["pid"])       # once killed: count them now
            try:
                os.kill(req["pid"], req["signal"])
            except ProcessLookupError:
                pass
            if req["signal"] == signal.SIGKILL:
                self.await_exit(req["pid"], 0.05)
        return {"ok": True}

    def await_exit(self, pid, seconds):
        """Reap a killed kernel before replying (it is gone within milliseconds): the grader's
        next poll then finds it gone, instead of sleeping 10 ms to look again."""
        try:
            fd = os.pidfd_open(pid)
        except (OSError, AttributeError):   # gone already, or no pidfd here
            return
        try:
            select.select([fd], [], [], seconds)
        finally:
            os.close(fd)
        self.reap()


def take_filter(req):
    """The system-call filter for every kernel to come."""
    import base64
    program = base64.b64decode(req["program"])
    if not program or len(program) % 8:
        raise ValueError("a filter is a whole number of BPF instructions")
    FILTER["program"] = program
    return {"ok": True}


def take_stash(req):
    """Made once, here, for every kernel to come."""
    STASH.items[req["key"]] = stashed(req)
    gc.freeze()   # as what the zygote imported: shared, and never touched by a kernel's collector
    return {"ok": True}


def serve(warm=True):
    if warm:
        preload()
    kernels = Kernels()
    ops = {"spawn": kernels.spawn, "poll": kernels.poll, "used": kernels.used, "signal": kernels.signal,
           "filter": take_filter, "stash": take_stash}
    stdin, out = sys.stdin.buffer, sys.stdout.buffer

    def reply(obj, rid=None):   # a reply echoes its request's id: graders sharing a zygote read only their own
        out.write(json.dumps(obj if rid is None else dict(obj, id=rid)).encode() + b"\n")
        out.flush()

    reply({"ready": os.getpid()})
    for line in iter(stdin.readline, b""):
        rid = None
        try:
            req = json.loads(line)
            rid = req.get("id")
            kernels.reap()
            op = ops.get(req["op"])
            reply(op(req) if op else {"error": f"unknown op {req['op']!r}"}, rid)
        except Exception as exc:
            reply({"error": f"{type(exc).__name__}: {exc}"}, rid)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(warm=sys.argv[1:] != ["cold"])   # a cold kernel's own zygote imports nothing first
