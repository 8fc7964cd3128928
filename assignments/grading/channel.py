"""The grader's channel to the harness inside a learner's kernel: the code that installs the
harness before any learner code runs, the code of one judged call, and the reading of its
replies (only the reply to this request, by nonce and case number, is ever read)."""
import json
import secrets

from . import harness

# Run once in every new kernel, before any of the learner's code: builds the harness in a
# private namespace whose builtins and modules are copies taken now, so that whatever the
# learner rebinds later (builtins, numpy, json, the check module...) the harness keeps its own,
# and registers harness.heal to undo rebound module attributes after every cell. Replies go
# out through the kernel's session and IOPub socket, taken now: the message IPython's display
# publisher sends, without its display hooks and patches (the learner's to make) and without
# its flush of stdout and stderr before each reply (two waits on the IOPub thread; a judged
# call's own output goes nowhere).
SETUP = '''\
def __grader_setup(token, source, key):
    import builtins, json, sys, types
    import numpy
    from IPython import get_ipython
    kept = getattr(sys.modules.pop("_grader_kept", None), "items", {})
    ns = {"__name__": "__grader__", "__builtins__": dict(builtins.__dict__)}
    exec(kept[key] if key else compile(source, "<grader>", "exec"), ns)
    ns["_kept"] = dict(kept)
    for name in ("np", "json", "base64", "contextlib", "io", "warnings", "traceback", "os", "dis", "types", "re"):
        if isinstance(ns.get(name), types.ModuleType):
            ns[name] = types.SimpleNamespace(**vars(ns[name]))
    pub = get_ipython().display_pub

    def publish(data, send=pub.session.send, socket=pub.pub_socket, topic=pub.topic):
        send(socket, "display_data", {"data": data, "metadata": {}, "transient": {}},
             parent=pub.parent_header, ident=topic)
    ns["_shell"], ns["_publish"] = get_ipython(), publish
    ns["_pristine"] = [(m, tuple(vars(m)), tuple(vars(m).values())) for m in (builtins, numpy, json)]
    get_ipython().events.register("post_run_cell", ns["heal"])
    cls = type("Grader_" + token, (), {"call": staticmethod(ns["main"]), "recorded": staticmethod(ns["recorded"])})
    sys.modules["__grader_" + token] = cls   # keeps it alive; found again through object's subclasses
__grader_setup(TOKEN, SOURCE, KEY)
del __grader_setup
'''
# Reaches the harness without looking up a single name the learner could have rebound. Its
# arguments: the request's JSON text, or the key of a text the kernel was forked with, the
# call's nonce and the rest of the request (the reference callees, sent with each call).
# The same way to ``recorded``, with a nonce.
ENTRY = "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == {cls!r}][0].{entry}({args})"


class Channel:
    """One kernel's harness: a fresh token per kernel, a fresh nonce per call. The replies
    to the call under way are kept here as they arrive, never as notebook outputs: they are
    large (every recorded call of a loop), and nbformat would convert and validate each."""

    def __init__(self, kernel_source, max_reply_bytes):
        self.kernel_source, self.max_reply_bytes = kernel_source, max_reply_bytes
        self.token, self.nonce, self.received = None, None, []

    def setup_code(self, kept=None):
        """The code to run first in a new kernel; ``kept``: the key under which the kernel
        was forked with the harness's code (kernel.py's ``keep``), to run that instead."""
        self.token = secrets.token_hex(8)
        source = "" if kept else self.kernel_source
        return SETUP.replace("TOKEN, SOURCE, KEY", f"{self.token!r}, {source!r}, {kept!r}")

    def call_code(self, request, kept=None, extra="{}"):
        """The code of one judged call; while it runs, only its replies are accepted.
        ``request`` is a dict or its JSON text, ``extra`` the JSON text of more of its
        fields, always sent; ``kept``: the key under which the kernel was forked with the
        request's text, to name it instead of sending it."""
        self.nonce, self.received = secrets.token_hex(8), []
        cls = "Grader_" + self.token
        if kept:
            return ENTRY.format(cls=cls, entry="call", args=f"{kept!r}, {self.nonce!r}, {extra!r}")
        text = request if isinstance(request, str) else json.dumps(request)
        payload = _merged(text, extra, json.dumps({"nonce": self.nonce}))
        return ENTRY.format(cls=cls, entry="call", args=repr(payload))

    def recorded_code(self):
        """The code that has the harness send the calls the last judged call recorded (a
        request with ``record["defer"]``); while it runs, only its replies are accepted."""
        self.nonce, self.received = secrets.token_hex(8), []
        return ENTRY.format(cls="Grader_" + self.token, entry="recorded", args=repr(self.nonce))

    def done(self):
        self.nonce = None

    def accepts(self, data):
        """Whether a display message's data is a reply to the call under way."""
        reply = data.get(harness.MIME) if isinstance(data, dict) else None
        return (self.nonce is not None and isinstance(reply, dict) and reply.get("nonce") == self.nonce
                and len(json.dumps(reply)) <= self.max_reply_bytes)

    def keep(self, data):
        """Keep a display message's data if it is a reply to the call under way; True if kept."""
        if not self.accepts(data):
            return False
        self.received.append(data[harness.MIME])
        return True

    def replies(self, nonce):
        """The replies kept for the call with this nonce, in case order, stopping at the first gap."""
        found = []
        for data in self.received:
            if data.get("nonce") == nonce and data.get("case") == len(found):
                found.append(data)
        return found


def _merged(*texts):
    """The JSON objects' texts merged into one, without decoding them (they are large)."""
    inner = []
    for text in texts:
        if not text.startswith("{") or not text.endswith("}"):
            raise ValueError("a request is a JSON object")
        if text[1:-1].strip():
            inner.append(text[1:-1])
    return "{" + ", ".join(inner) + "}"


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
