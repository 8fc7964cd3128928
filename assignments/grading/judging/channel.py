"""The grader's channel to the harness inside a learner's kernel: the code that installs the
harness before any learner code runs, and the socket over which the harness answers the
judge's jobs once the learner's cells have run (only the replies to the job under way, by
nonce and case number, are ever read).

The judged calls do not go through the Jupyter protocol: one request starts the harness's
``serve`` and the jobs and their replies are lines of JSON on a Unix socket of the kernel's
own socket folder, which the harness connected to while it was set up. Eight judged calls
as eight requests cost the kernel and nbclient about ten times what they cost this way
(ipykernel's and nbclient's work per request and per message, on both sides).
Rule (judging/): what a kernel sends back is data to check, never code; expected outputs stay here.
"""
import json
import os
import secrets
import select
import socket
import stat
import time

# Run once in every new kernel, before any of the learner's code: builds the harness in a
# private namespace whose builtins and modules are copies taken now, so that whatever the
# learner rebinds later (builtins, numpy, json, the check module...) the harness keeps its own,
# and registers harness.heal to undo rebound module attributes after every cell. It connects
# to the grader's socket (harness.connect) with the C socket type, taken now: a patched
# socket class changes nothing for it.
SETUP = '''\
def __grader_setup(token, source, key, path):
    import _socket, builtins, functools, json, sys
    import numpy
    from IPython import get_ipython
    stash = getattr(sys.modules.pop("_grader_stash", None), "items", {})
    ns = stash.get(key) if key else None   # built by the zygote, before any learner code anywhere
    if not isinstance(ns, dict):
        ns = {"__name__": "__grader__", "__builtins__": dict(builtins.__dict__)}
        exec(stash[key] if key else compile(source, "<grader>", "exec"), ns)
    ns["_stash"] = dict(stash)
    ns["_shell"], ns["_Socket"] = get_ipython(), _socket.socket
    kernel = get_ipython().kernel
    ns["_publish"] = functools.partial(kernel.session.send, kernel.iopub_socket, "grader_cell")
    ns["_parent"], ns["_streams"], ns["_sys"] = kernel.get_parent, (sys.stdout, sys.stderr), sys
    ns["connect"](path, token)
    ns["_pristine"] = [(m, tuple(vars(m)), tuple(vars(m).values())) for m in (builtins, numpy, json)]
    get_ipython().events.register("post_run_cell", ns["heal"])
    cls = type("Grader_" + token, (), {"serve": staticmethod(ns["serve"]), "connect": staticmethod(ns["connect"])})
    sys.modules["__grader_" + token] = cls   # keeps it alive; found again through object's subclasses
__grader_setup(TOKEN, SOURCE, KEY, PATH)
del __grader_setup
'''
# Reaches the harness without looking up a single name the learner could have rebound:
# ``serve`` with the nonce of its first line, or ``connect`` again with the socket's path and
# the kernel's token.
ENTRY = "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == {cls!r}][0].{entry}({args})"
SOCKET = "judge"   # the listening socket's name in the kernel's socket folder
NO_CALLEE = json.dumps({"type": "RuntimeError", "text": "no callee here"}).encode() + b"\n"
"""The answer to a stand-in's call in a job that stands in for nothing (asked without a Desk)."""


class ChannelClosed(Exception):
    """The harness's end of the socket is gone: the kernel died, or its code closed it."""


class ChannelTimeout(Exception):
    """The harness did not answer in time."""


class Channel:
    """One kernel's harness at a time: a fresh token and socket per kernel, a fresh nonce per
    job. Replies are read here, never as notebook outputs: they are large (every recorded
    call of a loop), and nbformat would convert and validate each. Whatever arrives is
    checked: it comes from the learner's process."""

    def __init__(self, kernel_source, max_reply_bytes):
        self.kernel_source, self.max_reply_bytes = kernel_source, max_reply_bytes
        self.token = self.nonce = self.path = None
        self._listener = self._link = None
        self._pending, self._skipping = b"", False
        self.serving = False
        self.refused = []   # why replies of the job under way were refused (too large, too deep)

    # --- a new kernel ---------------------------------------------------------------------

    def listen(self, folder):
        """Forget the last kernel's socket and listen in this kernel's socket folder (which
        the kernel sees at the same path)."""
        self.close()
        self.path = os.path.join(folder, SOCKET)
        _unlink(self.path)
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.path)
        _open_to_all(self.path)   # a sandboxed kernel may run as a user of its own
        self._listener.listen(1)

    def setup_code(self, stashed=None):
        """The code to run first in a new kernel; ``stashed``: the key under which the kernel
        was forked with the harness's code (zygotes.py's ``stash``), to run that instead."""
        self.token = secrets.token_hex(8)
        source = "" if stashed else self.kernel_source
        return SETUP.replace("TOKEN, SOURCE, KEY, PATH", f"{self.token!r}, {source!r}, {stashed!r}, {self.path!r}")

    def connect(self, timeout=10.0):
        """Once the set-up code ran: take the harness's connection (it says the kernel's token
        first), and stop listening, so that nothing else ever connects."""
        try:
            self._listener.settimeout(timeout)
            link, _ = self._listener.accept()
        except OSError as exc:
            raise RuntimeError(f"the harness did not connect to the grader ({exc})") from None
        finally:
            self._listener.close()
            self._listener = None
            _unlink(self.path)
        self._link = link
        try:
            hello = self._line(time.monotonic() + timeout)
        except (ChannelClosed, ChannelTimeout):
            hello = None
        if hello != {"hello": self.token}:
            self.close()
            raise RuntimeError("the harness did not say the kernel's token")

    # --- judging ----------------------------------------------------------------------------

    def serve_code(self):
        """The code of the one request that runs the harness's ``serve``: ``started`` then
        waits for its first line. What is on the socket before then is dropped (``_drop_stray``)."""
        self._drop_stray()
        self.nonce = secrets.token_hex(8)
        return ENTRY.format(cls="Grader_" + self.token, entry="serve", args=repr(self.nonce))

    def reconnect_code(self):
        """The code that connects the harness again, after ``listen``: the learner's code
        closed its socket, and the kernel lives on."""
        return ENTRY.format(cls="Grader_" + self.token, entry="connect", args=f"{self.path!r}, {self.token!r}")

    def started(self, timeout):
        """Wait until the harness serves (ChannelClosed, ChannelTimeout otherwise)."""
        deadline = time.monotonic() + timeout
        while self._line(deadline, b'{"serving": "' + self.nonce.encode() + b'"') != {"serving": self.nonce}:
            pass
        self.serving = True

    def ask(self, job, timeout, callees=None):
        """Send one job (a dict: the harness's ``answers`` reads it) and return its replies
        in case order, stopping at the first gap. A line with a "callee" is a stand-in's
        call (harness.stand_in): ``callees`` (a callees.Desk) answers it (refused without
        one), read and bounded as every line; a question it remembers, byte for byte, is
        answered without being read again. Raises ChannelTimeout when the job is not over in ``timeout``
        seconds, ChannelClosed when the harness's end is gone: the replies that had arrived
        are the exception's ``replies``."""
        self.nonce = secrets.token_hex(8)
        found, deadline = [], time.monotonic() + timeout
        prefix = b'{"nonce": "' + self.nonce.encode() + b'"'
        asked = prefix + b', "callee": '
        self.refused = []
        try:
            self._link.sendall(json.dumps(dict(job, nonce=self.nonce)).encode() + b"\n")
            while True:
                raw = self._raw_line(deadline, prefix)
                if callees is not None and raw is not None and raw.startswith(asked):
                    line = callees.remembered_line(raw[len(prefix):])
                    if line is not None:
                        self._link.sendall(line)
                        continue
                reply = self._parsed(raw)
                if not isinstance(reply, dict) or reply.get("nonce") != self.nonce:
                    continue
                if reply.get("end") is True:
                    return found
                if "callee" in reply:
                    self._link.sendall(callees.answer_line(reply, raw[len(prefix):]) if callees is not None
                                       else NO_CALLEE)
                    continue
                if reply.get("case") == len(found):
                    found.append(reply)
        except OSError:
            exc = ChannelClosed("the grader could not write to the harness")
            exc.replies = found
            raise exc from None
        except (ChannelClosed, ChannelTimeout) as exc:
            exc.replies = found
            raise

    def send(self, job):
        """Send one job whose replies do not come back on the socket (a learner's cell: its
        end is announced on IOPub). Returns the job's nonce; ChannelClosed when the
        harness's end is gone."""
        nonce = self.nonce = secrets.token_hex(8)
        try:
            self._link.sendall(json.dumps(dict(job, nonce=nonce)).encode() + b"\n")
        except (OSError, AttributeError):   # AttributeError: no socket at all
            raise ChannelClosed("the grader could not write to the harness") from None
        return nonce

    def close(self):
        """Close the socket: a serving harness then returns, and its request ends."""
        for sock in (self._listener, self._link):
            if sock is not None:
                sock.close()
        if self._listener is not None:
            _unlink(self.path)
        self._listener = self._link = None
        self._pending, self._skipping, self.serving = b"", False, False

    def _drop_stray(self):
        """Drop what is on the socket while the harness does not serve: the harness writes
        only while it serves, so these bytes are the learner's. A cell that nbclient ran
        with a request of its own (stock nbgrader, or a cell the harness cannot serve) may
        have written there, and when it was interrupted mid-write, left a line cut short
        that would swallow the harness's next line. At most what is there now, and no more
        than max_reply_bytes: whatever comes later is read as any reply is."""
        self._pending, self._skipping, dropped = b"", False, 0
        while self._link is not None and dropped <= self.max_reply_bytes:
            try:
                if not select.select([self._link], [], [], 0)[0]:
                    return
                chunk = self._link.recv(1 << 20)
            except (OSError, ValueError):   # ValueError: a socket closed meanwhile
                return
            if not chunk:   # the harness's end is gone: ``started`` finds out
                return
            dropped += len(chunk)

    def _line(self, deadline, prefix=b""):
        """The next line from the harness, decoded (None when it is not JSON or longer than
        max_reply_bytes, which are dropped as they arrive, or when it does not begin with
        ``prefix``: the harness writes the nonce first, so a line that is not a reply to the
        grader's request is dropped before it is parsed, and parsing, which costs the worker
        many times a line's size, is spent on at most one line of max_reply_bytes at a time)."""
        return self._parsed(self._raw_line(deadline, prefix))

    def _parsed(self, line):
        """A line of ``_raw_line``, decoded (None when there is none, or it is not JSON)."""
        if line is None:
            return None
        try:
            return json.loads(line)
        except ValueError:
            return None
        except RecursionError:   # nested deeper than the parser goes: refused
            self.refused.append("a reply nested too deeply to be read")
            return None

    def _raw_line(self, deadline, prefix=b""):
        """The next line from the harness, as bytes, as ``_line`` reads it: None when it is
        longer than max_reply_bytes or does not begin with ``prefix``."""
        while True:
            line, found, rest = self._pending.partition(b"\n")
            if found:
                self._pending = rest
                if self._skipping:
                    self._skipping = False
                    return None
                if len(line) > self.max_reply_bytes:   # whole, but too large
                    self.refused.append(f"a reply larger than {self.max_reply_bytes} bytes")
                    return None
                if not line.startswith(prefix):
                    return None
                return line
            if len(self._pending) > self.max_reply_bytes:
                if not self._skipping:
                    self.refused.append(f"a reply larger than {self.max_reply_bytes} bytes")
                self._pending, self._skipping = b"", True
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._link], [], [], left)[0]:
                raise ChannelTimeout()
            try:
                chunk = self._link.recv(1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                raise ChannelClosed()
            self._pending += chunk


def _open_to_all(path):
    """Let every user connect to the socket just bound at ``path``, without following a name
    the kernel could have replaced since (its folder is the kernel's too): the socket file is
    opened by name without following links, checked (a socket this process owns), and changed
    through its descriptor."""
    fd = os.open(path, os.O_PATH | os.O_NOFOLLOW)
    try:
        found = os.fstat(fd)
        if not stat.S_ISSOCK(found.st_mode) or found.st_uid != os.geteuid():
            raise RuntimeError(f"{path} is no longer the grader's socket")
        os.chmod(f"/proc/self/fd/{fd}", 0o666)
    finally:
        os.close(fd)


def _unlink(path):
    """Remove the listening socket's file, if it is still there: the kernel sees the folder,
    and a learner's thread may have removed it first."""
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


class OutputBudget:
    """At most ``limit`` bytes of output kept per cell, dropped as it arrives."""

    def __init__(self, limit):
        self.limit, self.used = limit, {}

    def take(self, index, msg):
        """'keep', 'cut' (the first message over the limit: say so once) or 'drop'."""
        content = msg.get("content", {})
        size = len(json.dumps(content, default=str)) if msg["msg_type"] in (
            "stream", "display_data", "execute_result", "error", "update_display_data") else 0
        used = self.used.get(index, 0)
        self.used[index] = used + size
        if used + size <= self.limit:
            return "keep"
        return "cut" if used <= self.limit else "drop"

    def hold(self, index):
        """Set aside a cell's count while another piece of code runs at its index."""
        return self.used.pop(index, None)

    def restore(self, index, size):
        self.used.pop(index, None)
        if size is not None:
            self.used[index] = size
