"""The sandbox, attacked: each protection a kernel has (kernel.PROTECTIONS) meets what a learner
who studied the grader would try, in real sandboxed kernels, and holds; the same attack with
that protection left out (GradingKernelManager.disabled_protections) gets through, so each test
can fail. docs/architecture.md's threat model names these tests.
"""
import contextlib
import ctypes
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time

import pytest
from helpers import REPO, course_files, readable_copy
from jupyter_core.utils import run_sync

from assignments.grading.judging import channel
from assignments.grading.sandbox import kernel
from assignments.grading.sandbox.kernel import GradingKernelManager
from assignments.grading.sandbox.zygotes import ZYGOTES

pytestmark = pytest.mark.sandbox


@pytest.fixture(autouse=True)
def own_zygote():
    ZYGOTES.stop()
    yield
    ZYGOTES.stop()


@contextlib.contextmanager
def kernel_(tmp_path, **traits):
    """A real sandboxed kernel, forked by the shared warm zygote (or a cold one of its own)."""
    km = GradingKernelManager(sandbox=True, scratch_root=str(tmp_path / "kernels"), **traits)
    run_sync(km.start_kernel)()
    kc = km.client()
    kc.start_channels()
    try:
        run_sync(kc.wait_for_ready)(timeout=60)
        yield km, kc
    finally:
        kc.stop_channels()
        run_sync(km.shutdown_kernel)(now=True)
        km.cleanup_scratch()


def run(kc, code, timeout=60, km=None):
    """What the code prints (and the error's name, if it raised); None if the kernel died."""
    msg_id = kc.execute(code)
    said = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            msg = run_sync(kc.get_iopub_msg)(timeout=0.5)
        except Exception:   # nothing yet: is the kernel still there?
            if km is not None and not run_sync(km.is_alive)():
                return None
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            said.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            said.append(msg["content"]["ename"])
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return "".join(said).strip()
    return None


# --- seccomp: the kernel key store, namespaces, ptrace ... --------------------------------

LEAVE_KEY = r'''
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
key = libc.syscall(248, b"user", b"rnn-course-collusion-TOKEN", b"dWf += dft @ z.T", 16, ctypes.c_long(-4))  # add_key
if key > 0:
    libc.syscall(250, 5, key, 0x3f3f3f3f)   # KEYCTL_SETPERM: every user may view and read it
print("left" if key > 0 else errno.errorcode[ctypes.get_errno()])
'''
FIND_KEY = r'''
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
found = "nothing"
for line in open("/proc/keys"):
    if "rnn-course-collusion-TOKEN" in line:
        buf = ctypes.create_string_buffer(64)
        n = libc.syscall(250, 11, int(line.split()[0], 16), buf, 64)   # KEYCTL_READ
        found = buf.raw[:n].decode() if n > 0 else errno.errorcode[ctypes.get_errno()]
print(found)
'''


def _revoke_test_keys():
    libc = ctypes.CDLL(None, use_errno=True)
    with open("/proc/keys") as f:
        for line in f:
            if "rnn-course-collusion" in line:
                libc.syscall(250, 3, int(line.split()[0], 16))   # KEYCTL_REVOKE


@pytest.mark.parametrize("protected", [True, False], ids=["sandboxed", "without seccomp"])
def test_a_key_left_by_one_kernel_reaches_no_other(tmp_path, protected):
    """Keys outlive every namespace: a submission that leaves one in the kernel's key store for
    a colluding submission graded later (another user id, another run) raises its score. The
    filter refuses add_key, keyctl and request_key."""
    disabled = [] if protected else ["seccomp"]
    token = os.urandom(6).hex()   # this test's own key: a revoked one lingers in /proc/keys a while
    try:
        with kernel_(tmp_path, disabled_protections=disabled) as (_, kc):
            left = run(kc, LEAVE_KEY.replace("TOKEN", token))
        with kernel_(tmp_path, disabled_protections=disabled) as (_, kc):
            found = run(kc, FIND_KEY.replace("TOKEN", token))
    finally:
        _revoke_test_keys()
    if protected:
        assert (left, found) == ("EPERM", "nothing")
    else:
        assert (left, found) == ("left", "dWf += dft @ z.T")


# --- pseudo-terminals: a devpts instance of each kernel's own ----------------------------

LEAVE_IN_PTY = r'''
import os
master, slave = os.openpty()
os.chmod(os.ttyname(slave), 0o666)   # its owner may open it to everybody
os.write(master, b"dWf += dft @ z.T\n")
print("left")
'''
READ_PTYS = r'''
import os
found = "nothing"
for name in sorted(os.listdir("/dev/pts")):
    if name.isdigit():
        try:
            fd = os.open("/dev/pts/" + name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
            found = os.read(fd, 100).decode().strip() or found
        except OSError:
            pass
print(found)
'''


@pytest.mark.parametrize("protected", [True, False], ids=["sandboxed", "one devpts for all"])
def test_a_pseudo_terminal_of_one_kernel_reaches_no_other(tmp_path, protected):
    """Kernels forked by one zygote shared its /dev/pts: one submission opened a pty, let
    everybody read it and typed a line of code into it; a colluding submission graded at the
    same time read it back. Each kernel now mounts a devpts instance of its own."""
    disabled = [] if protected else ["own_devpts"]
    with kernel_(tmp_path, disabled_protections=disabled) as (_, a):
        left = run(a, LEAVE_IN_PTY)
        with kernel_(tmp_path, disabled_protections=disabled) as (_, b):
            found = run(b, READ_PTYS)
    assert left == "left"
    assert found == ("nothing" if protected else "dWf += dft @ z.T")


# --- locks on shared files, and socket families past the network namespace ------------------

LOCK_SHARED_FILE = r'''
import errno, fcntl, os, struct, json
fd = os.open(json.__file__, os.O_RDONLY)   # a standard-library file every kernel may read
try:   # an open-file-description read lock on byte 4242: one bit, seen by every process
    fcntl.fcntl(fd, 37, struct.pack("hhqqi4x", fcntl.F_RDLCK, 0, 4242, 1, 0))   # F_OFD_SETLK
    print("locked")
except OSError as exc:
    print(errno.errorcode[exc.errno])
'''
SEE_LOCK = r'''
import errno, fcntl, os, struct, json
fd = os.open(json.__file__, os.O_RDONLY)
try:   # would a write lock on byte 4242 conflict? F_OFD_GETLK answers with the lock in the way
    got = fcntl.fcntl(fd, 36, struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 4242, 1, 0))
    print("seen" if struct.unpack("hhqqi4x", got)[0] == fcntl.F_RDLCK else "nothing")
except OSError as exc:
    print(errno.errorcode[exc.errno])
'''


@pytest.mark.parametrize("protected", [True, False], ids=["sandboxed", "without seccomp"])
def test_a_lock_on_a_shared_file_reaches_no_other_kernel(tmp_path, protected):
    """File locks live on the file, which every kernel shares read-only: a submission locks a
    byte of a standard-library file, and a colluding one graded at the same time sees the lock
    (a bit per byte). The filter allows no lock command of fcntl, nor flock."""
    disabled = [] if protected else ["seccomp"]
    with kernel_(tmp_path, disabled_protections=disabled) as (_, a):
        locked = run(a, LOCK_SHARED_FILE)
        with kernel_(tmp_path, disabled_protections=disabled) as (_, b):
            seen = run(b, SEE_LOCK)
    assert (locked, seen) == (("EPERM", "EPERM") if protected else ("locked", "seen"))


VSOCK = r'''
import errno, socket
try:
    socket.socket(40, socket.SOCK_STREAM).close()   # AF_VSOCK: the host of a virtual machine
    print("made")
except OSError as exc:
    print(errno.errorcode[exc.errno])
'''


@pytest.mark.skipif(not hasattr(socket, "AF_VSOCK"), reason="no vsock on this platform")
@pytest.mark.parametrize("protected", [True, False], ids=["sandboxed", "without seccomp"])
def test_no_socket_reaches_past_the_network_namespace(tmp_path, protected):
    """A vsock socket is no part of a network namespace: on a grading host that is a virtual
    machine, a kernel could listen for, or reach, the hypervisor. The filter allows the Unix,
    IPv4, IPv6 and netlink families alone."""
    with kernel_(tmp_path, disabled_protections=[] if protected else ["seccomp"]) as (_, kc):
        made = run(kc, VSOCK)
    if protected:
        assert made == "EPERM"
    else:   # this machine has vsock: the grader's own process can make one
        socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM).close()
        assert made == "made"


# --- what a kernel sends is bounded before it is parsed ------------------------------------

HUGE_MESSAGE = r'''
kernel = get_ipython().kernel
kernel.session.send(kernel.iopub_socket, "stream", {"name": "stdout", "text": "x" * 42_000_000},
                    parent=kernel.get_parent("shell"), ident=b"stream.stdout")
print("sent")
'''


@pytest.mark.parametrize("protected", [True, False], ids=["bounded", "unbounded"])
def test_a_huge_message_from_a_kernel_is_refused_before_it_is_parsed(tmp_path, protected):
    """One 42 MB IOPub message grew a grading worker by 1 GB while it was read and parsed whole.
    The kernel client reads a message over ``max_message_bytes`` as ZeroMQ's frames and parses
    none of it (upstream/kernel_client.py's read_bounded): nothing of its size is allocated in
    Python, and the cell goes on."""
    import tracemalloc
    limit = {} if protected else {"max_message_bytes": -1}
    with kernel_(tmp_path) as (km, kc):
        if limit:   # the same kernel, read by a client without the bound
            kc.stop_channels()
            kc = km.client(**limit)
            kc.start_channels()
            run_sync(kc.wait_for_ready)(timeout=60)
        tracemalloc.start()
        try:
            said = run(kc, HUGE_MESSAGE, timeout=60)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            if limit:
                kc.stop_channels()
    if protected:   # the cell goes on; what it sent is a note
        assert said.startswith("[a message of 420") and "refused unread" in said and said.endswith("sent"), said[:300]
        assert peak < 5_000_000, peak
    else:
        assert said.startswith("x" * 1000) and peak > 42_000_000, peak


DENIED = {   # system calls the filter refuses, and x86-64's numbers for them
    "ptrace": 101, "mount": 165, "unshare": 272, "setns": 308, "bpf": 321, "perf_event_open": 298,
    "userfaultfd": 323, "keyctl": 250, "request_key": 249, "kexec_load": 246, "init_module": 175,
    "io_uring_setup": 425, "personality": 135, "process_vm_readv": 310, "open_by_handle_at": 304,
}


def _probe(names):
    """Code that makes each system call in ``names`` (harmless arguments, or arguments that would
    change nothing dangerous if allowed), then what every kernel needs, and prints what it got."""
    calls = {name: DENIED[name] for name in names}
    return ("import ctypes, errno, json, os\nlibc = ctypes.CDLL(None, use_errno=True)\nfound = {}\n"
            f"for name, number in {calls!r}.items():\n"
            "    args = [0x0400000, 0, 0, 0] if name == 'personality' else [0, 0, 0, 0]   # READ_IMPLIES_EXEC\n"
            "    r = libc.syscall(number, *args)\n"
            "    found[name] = errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno())) if r == -1 else r\n"
            "pid = os.fork()\nif pid == 0:\n    os._exit(7)\nfound['fork'] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])\n"
            "import threading; t = threading.Thread(target=lambda: None); t.start(); t.join(); found['thread'] = 'ok'\n"
            "import subprocess; found['subprocess'] = subprocess.run(['true']).returncode\n"
            "import numpy; found['numpy'] = float(numpy.linalg.norm(numpy.ones(4)))\n"
            "print(json.dumps(found))")


def test_the_filter_refuses_what_no_kernel_needs_and_keeps_what_it_does(tmp_path):
    if os.uname().machine != "x86_64":
        pytest.skip("the numbers below are x86-64's")
    with kernel_(tmp_path) as (km, kc):
        found = json.loads(run(kc, _probe(DENIED), km=km))
    assert {name: found[name] for name in DENIED} == {name: "EPERM" for name in DENIED}
    assert (found["fork"], found["thread"], found["subprocess"], found["numpy"]) == (7, "ok", 0, 2.0)
    with kernel_(tmp_path, disabled_protections=["seccomp"]) as (km, kc):   # these two are safe to let through
        unfiltered = json.loads(run(kc, _probe(["personality", "keyctl"]), km=km))
    assert unfiltered["personality"] != "EPERM" and unfiltered["keyctl"] != "EPERM", unfiltered


# --- the host's disk ---------------------------------------------------------------------

FILL_SOCKET_FOLDER = r'''
import os, ipykernel
folder = os.path.dirname(ipykernel.get_connection_file())
written = 0
try:
    for i in range(50):
        with open(os.path.join(folder, f"junk{i}"), "wb") as f:
            f.write(b"x" * 100_000)
        written += 1
except OSError as exc:
    print(written, type(exc).__name__, exc.errno)
else:
    print(written)
'''


@pytest.mark.parametrize("protected", [True, False], ids=["sandboxed", "unsealed"])
def test_the_socket_folder_takes_nothing_once_the_kernel_is_up(tmp_path, protected):
    """The socket folder is a host folder both sides see; once the kernel has bound its sockets
    it is read-only in the kernel's namespace: no files, no disk."""
    with kernel_(tmp_path, disabled_protections=[] if protected else ["seal"]) as (km, kc):
        said = run(kc, FILL_SOCKET_FOLDER)
        on_host = [n for n in os.listdir(km.sockets) if n.startswith("junk")]
    if protected:
        assert said == f"0 OSError {30}" and on_host == []   # EROFS
    else:
        assert said == "50" and len(on_host) == 50


WRITE_EVERYWHERE = r'''
import fcntl, os, stat
fds = {}
for name in os.listdir("/proc/self/fd"):
    try:
        fds[int(name)] = (os.fstat(int(name)), fcntl.fcntl(int(name), fcntl.F_GETFL) & os.O_ACCMODE)
    except OSError:
        pass
# a pipe this process also reads (ipykernel's capture of its output) would only echo back
read_here = {st.st_ino for st, mode in fds.values() if stat.S_ISFIFO(st.st_mode) and mode == os.O_RDONLY}
wrote = []
for fd, (st, mode) in sorted(fds.items()):
    if fd > 2 and mode != os.O_RDONLY and (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)) \
            and st.st_ino not in read_here:
        try:
            for _ in range(80):
                os.write(fd, b"y" * 65536)
            wrote.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass
print(len(wrote), all(w.startswith("pipe:") for w in wrote))
'''


def test_no_descriptor_reaches_a_host_file(tmp_path):
    """The kernel holds no descriptor on a host file: its set-up log is reached through a pipe,
    whose far end keeps LOG_BYTES at most, whatever the kernel writes into it (before, a copy
    of the log's descriptor let a submission write 40 MB there)."""
    with kernel_(tmp_path) as (km, kc):
        fds = run(kc, "import os\nprint(sorted(os.readlink(f'/proc/self/fd/{n}') for n in os.listdir('/proc/self/fd')"
                      " if os.path.exists(f'/proc/self/fd/{n}')))")
        wrote = run(kc, WRITE_EVERYWHERE)
        time.sleep(0.5)
        log = os.path.getsize(km.sockets + ".log")
    targets = [t for t in eval(fds) if t.startswith("/")]
    assert all(t == "/dev/null" or t.startswith(km.scratch) for t in targets), targets
    count, pipes_only = wrote.split()
    assert int(count) >= 1 and pipes_only == "True", wrote   # 5 MB went into the log's pipe, at least
    assert log <= 1 << 16


def test_the_grader_never_changes_a_file_by_a_name_the_kernel_controls(tmp_path):
    """The judge's socket is bound in the kernel's socket folder, then opened to all users. A
    kernel that swaps it for a symbolic link in between (renameat2 with RENAME_EXCHANGE, a race
    it can win) made the grader, as root, chmod any host file. Here the swap always wins: the
    old chmod by name follows the link, the grader's check refuses it."""
    folder = tmp_path / "sockets"
    folder.mkdir()
    secret = tmp_path / "secret"
    secret.write_text("the instructor's")
    secret.chmod(0o600)
    for stock in (True, False):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(folder / "judge"))
        os.remove(folder / "judge")
        os.symlink(secret, folder / "judge")   # the kernel's swap, won
        try:
            if stock:
                os.chmod(folder / "judge", 0o666)
            else:
                with pytest.raises(RuntimeError, match="no longer the grader's socket"):
                    channel._open_to_all(str(folder / "judge"))
        finally:
            listener.close()
            os.remove(folder / "judge")
        assert stat.S_IMODE(os.stat(secret).st_mode) == (0o666 if stock else 0o600)
        secret.chmod(0o600)


# --- memory ---------------------------------------------------------------------------------

HOLD_MEMORY = r'''
import os
chunk, held = b"m" * (1 << 20), []
for _ in range({mb} // 75):   # files under the size limit, written, never mapped: no address space used
    fd = os.memfd_create("held")
    for _ in range(75):
        os.write(fd, chunk)
    held.append(fd)
print("held", sum(os.fstat(fd).st_size for fd in held) >> 20, "MB")
'''
HOLD_IN_CHILDREN = r'''
import os, select
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
pids = []
for _ in range({n}):
    pid = os.fork()
    if pid == 0:
        try:
            os.close(go_w)   # the parent's end alone: its closing lets every child go
            block = bytearray({mb} << 20)   # each child stays under the address-space limit
            for i in range(0, len(block), 4096):
                block[i] = 1
            os.read(os.open("/dev/zero", os.O_RDONLY), 1)
            os.write(ready_w, b"x")
            os.read(go_r, 1)   # every child holds its block at once, until the parent lets go
        finally:
            os._exit(0)
    pids.append(pid)
os.close(ready_w)
ready, ended = 0, set()
while ready + len(ended) < len(pids):   # each child holds its block, or was stopped
    if select.select([ready_r], [], [], 0.05)[0]:
        ready += len(os.read(ready_r, 64))
    for p in pids:
        if p not in ended and os.waitpid(p, os.WNOHANG)[0]:
            ended.add(p)
os.close(go_w)
print("children", sum(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) == 0 for p in pids if p not in ended))
'''


def _cgroups_or_fail(km):
    if km.zygote.cgroups is None:
        if os.geteuid() == 0:
            pytest.fail(f"no cgroup per kernel as root: {km.zygote.cgroup_problem}")
        assert "no_kernel_cgroup" in kernel.take_notes()
        pytest.skip("not root and no delegated cgroup here: memory holds per process (the results say so)")


@pytest.mark.parametrize("protected", [True, False], ids=["sandboxed", "without cgroups"])
@pytest.mark.parametrize("attack", ["memfd", "children"])
def test_a_kernel_holds_no_more_memory_than_its_limit(tmp_path, protected, attack):
    """A kernel's address-space limit is per process and counts no memory file: 600 MB in a
    memfd, or in three children of 200 MB each, against a kernel limit of 300 MB. Its cgroup
    counts them all: the memory is refused (the write fails) or Linux stops what asked for it
    (the grader then knows why: oom_killed), and the kernel never holds more than its limit."""
    code = HOLD_MEMORY.format(mb=600) if attack == "memfd" else HOLD_IN_CHILDREN.format(n=3, mb=200)
    with kernel_(tmp_path, kernel_memory_limit="300M", disabled_protections=[] if protected else ["cgroups"]) as (km, kc):
        if protected:
            _cgroups_or_fail(km)
        said = run(kc, code, timeout=60, km=km)
        peak = km.zygote.cgroups.memory_peak(km.cgroup) if protected else 0
    if protected:
        assert said not in ("held 600 MB", "children 3"), said
        assert 0 < peak <= 300 * 2**20, peak
    else:
        assert said in ("held 600 MB", "children 3"), said


# --- the network ------------------------------------------------------------------------------

LISTEN = r'''
import socket
tcp = socket.socket(); tcp.bind(("127.0.0.1", 0)); tcp.listen(1)
unix = socket.socket(socket.AF_UNIX); unix.bind("\0rnn-course-rendezvous"); unix.listen(1)
print(tcp.getsockname()[1])
'''
CALL = r'''
import socket
found = []
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close(); found.append("tcp")
except OSError:
    pass
try:
    s = socket.socket(socket.AF_UNIX); s.connect("\0rnn-course-rendezvous"); s.close(); found.append("unix")
except OSError:
    pass
found += ["listed"] * ("rnn-course-rendezvous" in open("/proc/net/unix").read())
print(found)
'''


@pytest.mark.parametrize("protected", [True, False], ids=["sandboxed", "shared network"])
def test_two_kernels_cannot_talk(tmp_path, protected):
    """Concurrent kernels each have a network namespace of their own, its loopback alone: no
    connection over loopback or an abstract Unix socket, nor a look at another's sockets."""
    disabled = [] if protected else ["network"]
    with kernel_(tmp_path, disabled_protections=disabled) as (_, a), kernel_(tmp_path, disabled_protections=disabled) as (_, b):
        port = int(run(a, LISTEN))
        found = run(b, CALL.replace("{port}", str(port)))
    assert found == ("[]" if protected else "['tcp', 'unix', 'listed']")


# --- the channel ------------------------------------------------------------------------------

def test_the_channel_refuses_what_it_cannot_read(tmp_path):
    """A reply nested past what the parser goes (before: RecursionError, and the submission
    failed) and one over the size limit are refused, and the job says so (refused)."""
    a, b = socket.socketpair()
    link = channel.Channel("", max_reply_bytes=300_000)
    link._link = a
    link.nonce = "n"
    deep, large = b"[" * 100_000 + b"]" * 100_000, b'{"x": "' + b"y" * 400_000 + b'"}'
    threading.Thread(target=b.sendall, args=(b"\n".join([deep, large, json.dumps({"nonce": "n", "end": True}).encode()])
                                              + b"\n",), daemon=True).start()
    assert link._line(time.monotonic() + 5) is None
    assert link._line(time.monotonic() + 5) is None
    assert link._line(time.monotonic() + 5) == {"nonce": "n", "end": True}
    assert link.refused == ["a reply nested too deeply to be read", "a reply larger than 300000 bytes"]
    a.close()
    b.close()


# --- the course's own package ---------------------------------------------------------------

IMPORT_REFERENCE = r'''
import json, os, sys
found = []
try:
    from assignments.rnn_step_by_step import reference
    found.append("imported " + reference.__name__)
except Exception as exc:
    found.append(type(exc).__name__)
for entry in sys.path:
    for dirpath, dirs, files in os.walk(entry) if os.path.isdir(entry) else ():
        found += [os.path.join(dirpath, f) for f in files if f in ("reference.py", "mistakes.py", "cases.py")
                  and "assignments" in dirpath]
print(json.dumps(found))
'''
PROBE_SCRIPT = r'''
import json, os, sys
sys.path.insert(0, sys.argv[1])   # tests/, for its kernel helpers; the course comes from this environment
import assignments.grading, test_sandbox
where = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(assignments.grading.__file__))))
with test_sandbox.kernel_(__import__("pathlib").Path(sys.argv[2]), disabled_protections=json.loads(sys.argv[3])) as (km, kc):
    print(json.dumps({"installed": where, "found": json.loads(test_sandbox.run(kc, test_sandbox.IMPORT_REFERENCE))}))
'''


def _copy_environment(dest):
    """A copy of this environment, the course installed in it as a wheel instead of editable."""
    shutil.copytree(sys.prefix, dest, symlinks=True)
    site = next(p for p in (dest / "lib").glob("python3*/site-packages"))
    for path in list(site.iterdir()):
        if "rnn_course" in path.name:   # the editable install's finder, .pth and metadata
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    wheels, tree = dest.parent / "wheels", dest.parent / "tree"   # built from a copy: the repository stays clean
    for rel in course_files():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.join(REPO, rel), tree / rel)
    build = subprocess.run([str(dest / "bin" / "python"), "-m", "pip", "wheel", "--quiet", "--no-deps",
                            "--no-build-isolation", "-w", str(wheels), str(tree)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    install = subprocess.run([str(dest / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                              *map(str, wheels.glob("rnn_course-*.whl"))], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-2000:]
    return dest


@pytest.fixture(scope="module")
def wheel_environment(tmp_path_factory):
    return _copy_environment(tmp_path_factory.mktemp("wheel") / "venv")


@pytest.mark.slow   # a copy of the whole environment, and a wheel built into it
@pytest.mark.parametrize("protected", [True, False], ids=["sandboxed", "unmasked"])
@pytest.mark.parametrize("install", ["editable", "wheel"])
def test_the_course_is_hidden_in_a_kernel_however_installed(tmp_path, wheel_environment, install, protected):
    """Installed as a wheel (or in a Dask worker's image), the course's package lies inside the
    environment the sandbox shows read-only: its reference, cases and catalog would be there to
    import. The sandbox mounts an empty folder over it."""
    python = str(wheel_environment / "bin" / "python") if install == "wheel" else sys.executable
    (tmp_path / "probe.py").write_text(PROBE_SCRIPT)
    run_probe = subprocess.run([python, str(tmp_path / "probe.py"), os.path.join(REPO, "tests"), str(tmp_path),
                                json.dumps([] if protected else ["mask_course"])],
                               cwd=str(tmp_path), capture_output=True, text=True, timeout=300,
                               env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert run_probe.returncode == 0, run_probe.stderr[-3000:]
    said = json.loads(run_probe.stdout.strip().splitlines()[-1])
    inside = said["installed"].startswith(str(wheel_environment))
    assert inside == (install == "wheel"), said["installed"]
    if protected or install == "editable":   # an editable install's package is outside the environment
        assert said["found"] == ["ModuleNotFoundError"], said
    else:
        assert said["found"][0] == "imported assignments.rnn_step_by_step.reference" and len(said["found"]) >= 4


CLUSTER_SCRIPT = r'''
import sys
from dask.distributed import LocalCluster
with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
    print(cluster.scheduler_address, flush=True)
    sys.stdin.read()   # until the test closes it
'''
BORROWS_THE_REFERENCE = """
import importlib


def lstm_cell_backward(da_next, dc_next, cache):
    reference = importlib.import_module("assignments.rnn_step_by_step.reference")
    return reference.lstm_cell_backward(da_next, dc_next, cache)
"""


@pytest.mark.slow   # the environment's copy, and a Dask cluster
@pytest.mark.parametrize("protected", [True, False], ids=["sandboxed", "unmasked"])
def test_a_dask_worker_with_the_course_installed_hides_it(tmp_path, wheel_environment, protected):
    """Dask workers run from an environment where the course is installed like any package
    (a wheel): a submission that imports the reference's function in its kernel earns nothing."""
    from traitlets.config import Config

    from assignments.grading.authoring.submissions import answer_cells, fill
    from assignments.grading.run import pipeline
    from assignments.rnn_step_by_step import ASSIGNMENT as A
    with open(os.path.join(REPO, "samples", "answers", A.id, "ada.py"), encoding="utf-8") as f:
        answers = answer_cells(f.read())
    answers.update(answer_cells(BORROWS_THE_REFERENCE))
    folder = tmp_path / "submitted" / "cheat" / A.id
    folder.mkdir(parents=True)
    import nbformat
    nbformat.write(fill(os.path.join(REPO, "release", A.id, A.notebook + ".ipynb"), answers), folder / (A.notebook + ".ipynb"))
    cluster = subprocess.Popen([str(wheel_environment / "bin" / "python"), "-c", CLUSTER_SCRIPT], cwd=str(tmp_path),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                               env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    try:
        address = cluster.stdout.readline().strip()
        assert address.startswith("tcp://"), address
        overrides = Config()
        if not protected:
            overrides.GradingKernelManager.disabled_protections = ["mask_course"]
        results = pipeline.grade(A, str(tmp_path), str(tmp_path / "out"), scheduler=address, overrides=overrides)
    finally:
        cluster.stdin.close()
        cluster.wait(timeout=60)
    (entry,) = results["submissions"]
    scores = {e["id"]: e["score"] for e in entry["exercises"]}
    assert scores["lstm_cell_backward"] == (0.0 if protected else 15.0), entry
    assert ("weakened:mask_course" in entry["flags"]) == (not protected)


# --- without root --------------------------------------------------------------------------

TAKE_ALL_PROCESSES = r'''
import os, signal, time
children = []
while True:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(120)
        os._exit(0)
    children.append(pid)
print(len(children))
'''
START_TEN = r'''
import os
started = 0
for _ in range(10):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    started += 1
print(started)
'''
UNPRIVILEGED_SCRIPT = r'''
import json, pathlib, sys
sys.path.insert(0, sys.argv[1])
import test_sandbox
from assignments.grading.sandbox import kernel
folder = pathlib.Path(sys.argv[2])
traits = dict(process_limit=24, disabled_protections=json.loads(sys.argv[3]))
with test_sandbox.kernel_(folder, **traits) as (_, a):
    key = test_sandbox.run(a, test_sandbox.LEAVE_KEY.replace("TOKEN", "unprivileged"))   # filtered too
    taken = test_sandbox.run(a, test_sandbox.TAKE_ALL_PROCESSES)
    try:   # a kernel of the next submission, while that one still holds its processes
        with test_sandbox.kernel_(folder, **traits) as (_, b):
            started = test_sandbox.run(b, test_sandbox.START_TEN)
    except RuntimeError as exc:
        started = "no kernel: " + str(exc)[:200]
print(json.dumps({"key": key, "taken": taken, "started": started, "notes": kernel.take_notes()}))
'''


def _unprivileged_python():
    """A Python every user can run, with the course's packages: the hub's environment
    (hub/deploy.py makes it from Debian's python3, or finds it made)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("hub_deploy", os.path.join(REPO, "hub", "deploy.py"))
    deploy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(deploy)
    venv = "/var/tmp/rnn-course-hub-venv"
    deploy.environment(venv, "/usr/bin/python3")
    return os.path.join(venv, "bin", "python")


@pytest.mark.slow   # it builds the hub's environment (/var/tmp) when it is not there yet: minutes
@pytest.mark.parametrize("protected", [True, False], ids=["sandboxed", "one user namespace"])
def test_without_root_one_kernels_fork_bomb_leaves_another_its_processes(tmp_path, protected):
    """Without root every kernel runs as the grader's user, and Linux counts processes per user
    and user namespace: in the zygote's namespace, one kernel holding all it may have leaves
    the next none. Each kernel in a user namespace of its own counts only its own."""
    if os.geteuid() != 0:
        pytest.skip("the test runs the grader as another user: it needs root to switch to it")
    python = _unprivileged_python()
    import pathlib
    import tempfile
    nobody = __import__("pwd").getpwnam("nobody")
    home = pathlib.Path(tempfile.mkdtemp(prefix="rnn-course-nobody-", dir="/var/tmp"))   # /tmp/pytest-of-root is private
    # the course and these tests, where `nobody` may read them: the checkout may be private (0700)
    course = readable_copy(home / "course")
    os.chown(home, nobody.pw_uid, nobody.pw_gid)
    (home / "probe.py").write_text(UNPRIVILEGED_SCRIPT)
    try:
        run_probe = subprocess.run([python, str(home / "probe.py"), str(course / "tests"), str(home),
                                    json.dumps([] if protected else ["user_namespace"])],
                                   cwd=str(home), capture_output=True, text=True, timeout=300, user=nobody.pw_uid,
                                   group=nobody.pw_gid, extra_groups=[],
                                   env={"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(course),
                                        "LANG": "C.UTF-8"})
    finally:
        shutil.rmtree(home, ignore_errors=True)
    assert run_probe.returncode == 0, run_probe.stderr[-3000:]
    said = json.loads(run_probe.stdout.strip().splitlines()[-1])
    assert "no_kernel_cgroup" in said["notes"]   # without root and without delegation: said so
    assert said["key"] == "EPERM"
    assert int(said["taken"]) >= 5, said   # up to the limit, threads counted
    if protected:
        assert said["started"] == "10", said
    else:   # the next kernel cannot even start its threads, or has no process left to start
        assert said["started"] in ("0", None) or said["started"].startswith("no kernel:"), said


SOCKET_BUFFERS = r'''
import errno, resource, socket
a, b = socket.socketpair()
try:
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)   # up to net.core.wmem_max
    said = "set"
except OSError as exc:
    said = errno.errorcode[exc.errno]
a.setblocking(False)
queued = 0
try:
    while True:
        queued += a.send(b"x" * 65536)
except OSError:
    pass
print(said, queued, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
'''


@pytest.mark.parametrize("protected", [True, False], ids=["sandboxed", "without seccomp"])
def test_a_unix_socket_holds_no_more_than_the_default_buffer(tmp_path, protected):
    """Unix-socket buffers are charged to no cgroup: a kernel that raised its sockets' buffers
    to net.core.wmem_max (4 MB here, often more) could hold that much per descriptor outside
    its memory limit. The filter refuses SO_SNDBUF and SO_RCVBUF (and their FORCE forms), so a
    socket holds at most net.core.wmem_default, and RLIMIT_NOFILE bounds a process's sockets."""
    with open("/proc/sys/net/core/wmem_default") as f:
        default = int(f.read())
    with open("/proc/sys/net/core/wmem_max") as f:
        most = int(f.read())
    with kernel_(tmp_path, disabled_protections=[] if protected else ["seccomp"]) as (_, kc):
        said, queued, nofile = run(kc, SOCKET_BUFFERS).split()
    assert nofile == "256"
    if protected:
        assert said == "EPERM" and int(queued) <= 2 * default   # the payload, a little over its accounted size
    else:
        assert most > 4 * default, "this host's wmem_max is its default: the attack has nothing to gain here"
        assert said == "set" and int(queued) > 4 * default


MANY_SOCKETS = r'''
import socket
held = []
try:
    while len(held) < 2000:
        held += socket.socketpair()
except OSError:
    pass
count = len(held)
for s in held:   # the kernel's own sockets need descriptors too (ZeroMQ aborts without one)
    s.close()
print(count)
'''


@pytest.mark.parametrize("protected", [True, False], ids=["bounded", "unbounded"])
def test_a_kernel_process_holds_a_bounded_number_of_sockets(tmp_path, protected):
    """Each socket holds at most about 2 x net.core.wmem_default (above) outside every cgroup:
    RLIMIT_NOFILE (GradingKernelManager.descriptor_limit) bounds how many one process holds."""
    with kernel_(tmp_path, descriptor_limit=256 if protected else 0) as (_, kc):
        held = int(run(kc, MANY_SOCKETS))
    assert held < 256 if protected else held == 2000
