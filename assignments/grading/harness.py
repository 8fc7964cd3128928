"""Runs a learner's function on hidden cases, inside the learner's kernel.

The grader sends this file's text into the kernel and executes it in a fresh private
namespace after the students' check module's (for ``encode``/``decode`` and the recorder),
so nothing a learner rebinds in their notebook's namespace replaces it. It only computes: it
never sees the expected outputs, and it decides nothing. In the grading process (tests,
``local.py``) it is an ordinary module over ``student_checks``.
"""
import contextlib
import io
import json
import warnings
from itertools import repeat
from operator import is_ as _is

try:   # in the kernel there is no package: the check module's names are already defined
    from .student_checks import Recorder, data_globals, decode, encode, encode_calls, exception_text, student_line
except ImportError:
    pass

MIME = "application/vnd.course-grader+json"
_ABSENT = object()
_shell = _publish = None   # the kernel's shell, and how a reply is sent: set by channel.SETUP
_pristine = ()             # (module, its attribute names, their values) taken when the kernel started
_kept = {}                 # texts the kernel was forked with (zygote.py's KEPT), by key
_recorded = {}             # the calls recorded by the last judged call, by case, until asked for


def kernel_source(assignment):
    """The text run in each kernel: the students' check module, then this module."""
    with open(assignment.checks_file, encoding="utf-8") as f, open(__file__, encoding="utf-8") as g:
        return f.read() + "\n\n" + g.read()


class _Sink(io.TextIOBase):
    """Swallows what the learner's code prints while it is judged."""

    def writable(self):
        return True

    def write(self, text):
        return len(text)


def heal(*_):
    """Put back what the learner rebound in the builtins, numpy and json modules (copies
    taken when the kernel started). Rebinding a module's attributes is never part of an
    answer, and without exec, compile or json.dumps the kernel cannot even run a cell or
    send a message. Runs after every cell (an IPython post_run_cell hook) and around each
    judged call. Names the learner adds, or shadows in the notebook, are left alone."""
    for module, keys, values in _pristine:
        current = vars(module)
        if all(map(_is, map(current.get, keys, repeat(_ABSENT)), values)):
            continue   # the usual case, checked without a Python-level loop
        for key, value in zip(keys, values):
            if current.get(key, _ABSENT) is not value:
                current[key] = value


def call(namespace, request):
    """Call ``namespace[request['name']]`` on each of the request's cases, with reference
    stand-ins for the functions it calls. Yields one JSON-safe result per case, and stops
    early when the function is missing or not written (every case would say the same).
    The calls a loop makes to its cell go with each case's result, or with ``record["defer"]``
    stay here until ``recorded`` sends them: only a wrong loop's calls are ever looked at,
    and they are most of what a call would send."""
    _recorded.clear()
    name = request["name"]
    fn = namespace.get(name)
    if not callable(fn):
        what = "is not defined" if fn is None else f"is not a function (it is a {type(fn).__name__})"
        yield {"status": "missing", "text": f"{name} {what}: was its cell deleted, renamed or not run?"}
        return
    saved = {}
    sink = _Sink()
    try:
        observed = {"reads_globals": data_globals(fn)}
    except Exception:
        observed = {"reads_globals": []}
    try:
        for callee, source in request.get("callees", {}).items():
            helpers = {}
            exec(compile(source, f"<reference {callee}>", "exec"), helpers)
            saved[callee] = namespace.get(callee, _ABSENT)
            namespace[callee] = helpers[callee]
        record = request.get("record")
        for index, inputs in enumerate(request["cases"]):
            recorder = None
            try:
                args = decode(inputs)
                if record and record["callee"] in saved:   # watch the loop drive its cell
                    recorder = Recorder(namespace[record["callee"]], record["callee_args"],
                                        record["args"], args, limit=record.get("limit", 1000))
                    namespace[record["callee"]] = recorder
                with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = fn(*args)
                reply = {"status": "ok", "output": encode(out), "observed": dict(observed)}
            except NotImplementedError:
                yield {"status": "not_implemented", "text": "still raises NotImplementedError"}
                return
            except BaseException as exc:  # SystemExit and KeyboardInterrupt too: they cost this function only
                reply = {"status": "raised", "text": "raised " + exception_text(exc) + student_line(exc),
                         "observed": dict(observed)}
            finally:
                if recorder is not None:
                    namespace[record["callee"]] = recorder.fn
            if recorder is not None and record.get("defer"):
                _recorded[index] = recorder.calls
                reply["observed"]["calls_recorded"] = len(recorder.calls)
            elif recorder is not None:
                reply["observed"]["calls"] = encode_calls(recorder.calls)
            yield reply
    finally:
        for callee, old in saved.items():
            if old is _ABSENT:
                namespace.pop(callee, None)
            else:
                namespace[callee] = old


def main(payload, nonce=None, extra="{}"):
    """Entry point in the kernel: answer each case with a display_data message the grader
    reads, as soon as it is computed (so a case that hangs costs only the cases after it).
    ``payload`` is the request's JSON text, or with a ``nonce`` the key of a kept one, then
    completed by ``extra`` (the reference callees). Uses the shell and the kernel's session
    and IOPub socket, captured when the kernel started (see channel.SETUP)."""
    heal()
    request = json.loads(_kept[payload] if nonce else payload)
    request.update(json.loads(extra))
    if nonce:
        request["nonce"] = nonce
    for index, result in enumerate(call(_shell.user_ns, request)):
        result["nonce"], result["case"] = request["nonce"], index
        heal()
        _publish({MIME: result})


def recorded(nonce):
    """Entry point in the kernel: send the calls the last judged call recorded, one
    display_data message per case, as ``main`` sends results."""
    heal()
    for index in sorted(_recorded):
        _publish({MIME: {"nonce": nonce, "case": index, "calls": encode_calls(_recorded[index])}})
