"""Runs one call of a learner's function, inside the learner's kernel.

The grader sends this file's text into the kernel and executes it in a fresh private
namespace together with the shipped check module (for ``encode``/``decode``), so nothing
a learner rebinds in their notebook's namespace replaces it. It only computes: it never
sees the expected outputs, and it decides nothing.
"""
import contextlib
import io
import json
import warnings

MIME = "application/vnd.rnn-grader+json"
_ABSENT = object()


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
    for module, pristine in globals().get("_pristine", ()):
        current = vars(module)
        for key, value in pristine.items():
            if current.get(key, _ABSENT) is not value:
                current[key] = value


def call(namespace, request):
    """Call ``namespace[request['name']]`` on the request's inputs, with reference
    stand-ins for the functions it calls. Returns a JSON-safe result."""
    name = request["name"]
    fn = namespace.get(name)
    if not callable(fn):
        what = "is not defined" if fn is None else f"is not a function (it is a {type(fn).__name__})"
        return {"status": "missing", "text": f"{name} {what}: was its cell deleted, renamed or not run?"}
    saved = {}
    sink = _Sink()
    try:
        observed = {"reads_globals": data_globals(fn)}  # noqa: F821 (check module)
    except Exception:
        observed = {"reads_globals": []}
    try:
        for callee, source in request.get("callees", {}).items():
            helpers = {}
            exec(compile(source, f"<reference {callee}>", "exec"), helpers)
            saved[callee] = namespace.get(callee, _ABSENT)
            namespace[callee] = helpers[callee]
        args = decode(request["inputs"])  # noqa: F821 (from the check module)
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*args)
        return {"status": "ok", "output": encode(out), "observed": observed}  # noqa: F821
    except NotImplementedError:
        return {"status": "not_implemented", "text": "still raises NotImplementedError"}
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: they cost this function only
        return {"status": "raised", "text": "raised " + exception_text(exc) + student_line(exc),  # noqa: F821
                "observed": observed}
    finally:
        for callee, old in saved.items():
            if old is _ABSENT:
                namespace.pop(callee, None)
            else:
                namespace[callee] = old


def main(payload):
    """Entry point in the kernel: answer with a display_data message the grader reads.
    Uses the shell and publisher captured when the kernel started (see preprocessors.SETUP)."""
    heal()
    request = json.loads(payload)
    result = call(_shell.user_ns, request)  # noqa: F821 (set up by preprocessors.SETUP)
    result["nonce"] = request["nonce"]
    heal()
    _publish({MIME: result})  # noqa: F821
