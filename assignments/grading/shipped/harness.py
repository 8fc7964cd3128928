"""Runs a learner's function on hidden cases, inside the learner's kernel.

The grader sends this file's text into the kernel and executes it in a fresh private
namespace after the students' check module's (for ``encode``/``decode`` and the recorder),
so nothing a learner rebinds in their notebook's namespace replaces it. It only computes: it
never sees the expected outputs, and it decides nothing. It answers the grader's jobs on a
socket (``serve``, see channel.py). In the grading process (tests, ``local.py``) it is an
ordinary module over ``student_checks``.
Rule (shipped/): the standard library and numpy only; it leaves the grading process as text.
"""
import contextlib
import json
import os
import warnings
from collections import defaultdict as _defaultdict
from itertools import repeat
from operator import is_ as _is

from numpy import ndarray as _ndarray

try:   # in the kernel there is no package: the check module's names are already defined
    from .repair import REPAIR_TRIES, _Sink, examine
    from .student_checks import MAX_ITEMS, Recorder, data_globals, decode, encode, encode_calls, exception_text, pack, student_line
except ImportError:
    pass

_ABSENT = object()
_shell = None              # the kernel's shell: set by channel.SETUP
_Socket = None             # the socket type (C, which code cannot patch), taken at set-up (channel.SETUP)
_link = _send = _recv = None   # the grader's socket, its sendall and its recv (``connect``)
_pristine = ()             # (module, its attribute names, their values) taken when the kernel started
_stash: dict[str, object] = {}   # texts the kernel was forked with (zygote.py's STASH), by key
_recorded: dict[int, object] = {}   # the calls recorded by the last judged call, by case, until asked for
_publish = None            # the kernel's session.send on its IOPub socket, taken at set-up (channel.SETUP)
_parent = None             # the kernel's get_parent: the request that runs ``serve``
_streams = ()              # the kernel's stdout and stderr, taken at set-up
_sys = None                # the sys module, taken at set-up
_pending = b""             # what was read from the grader's socket beyond the last whole line
_nonce = None              # the nonce of the grader's job under way (a stand-in's calls carry it)
_ask_callee = None         # in the grading process (inprocess.py): answers a stand-in's call there
_args_written: dict[tuple, str] = {}   # stand-ins' dict arguments as JSON, by their arrays (``_arg_text``)


def kernel_source(assignment):
    """The text run in each kernel (or once in the zygote that forks it): the students' check
    module, then written.py and repair.py, then this module, then ``_own_modules()``."""
    texts = []
    here = os.path.dirname(__file__)
    for path in (assignment.checks_file, os.path.join(here, "written.py"), os.path.join(here, "repair.py"), __file__):
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    return "\n\n".join(texts) + "\n_own_modules()\n"


def _own_modules():
    """Replace the modules this text uses by copies of their attributes taken now, before any
    learner code runs: whatever the learner rebinds in numpy, json... later, the harness keeps
    its own. Run at the end of the text, in its namespace (never on import)."""
    import types
    space = globals()
    for name in ("np", "json", "base64", "contextlib", "io", "warnings", "traceback", "os", "dis", "types", "re", "ast",
                 "copy", "inspect", "textwrap", "time"):
        if isinstance(space.get(name), types.ModuleType):
            space[name] = types.SimpleNamespace(**vars(space[name]))


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
    """Call ``namespace[request['name']]`` on each of the request's cases, with stand-ins
    for the functions it calls (``stand_in``: the reference answers from the grader). Yields one JSON-safe result per case, and stops
    early when the function is missing or not written (every case would say the same).
    The calls a loop makes to its cell go with each case's result, or with ``record["defer"]``
    stay here until a "recorded" job asks for them (``answers``): only a wrong loop's calls
    are ever looked at, and they are most of what a call would send."""
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
        for callee, arg_names in request.get("callees", {}).items():
            saved[callee] = namespace.get(callee, _ABSENT)
            namespace[callee] = stand_in(callee, arg_names)
        decoded = request.get("decoded_cases")   # decoded by the zygote the kernel was forked from
        for index, inputs in enumerate(request["cases"]):
            reply = call_once(namespace, fn, request.get("record"), saved, sink, observed, index,
                              lambda: decoded[index] if decoded is not None else decode(inputs))
            yield reply
            if reply["status"] == "not_implemented":
                return
    finally:
        for callee, old in saved.items():
            if old is _ABSENT:
                namespace.pop(callee, None)
            else:
                namespace[callee] = old


def stand_in(callee, arg_names):
    """In place of the learner's ``callee`` while a caller is judged: each call's arguments go
    to the grader, which runs the reference there and answers (judging/callees.py); no
    reference code is ever in the kernel. Raises what the reference raised, or the grader's
    refusal, as an exception of the same name."""
    def reference_callee(*args, **kwargs):
        named = list(args) + [kwargs[n] for n in arg_names[len(args):] if n in kwargs]
        if _ask_callee is not None:   # the nonce first
            answer = _ask_callee({"nonce": _nonce, "callee": callee, "args": encode(named)})
        else:
            answer = _over_socket(_question_line(callee, named))
        if isinstance(answer, dict) and "output" in answer:
            return _returned(answer["output"], named)
        raise _exception(answer.get("type") if isinstance(answer, dict) else None,
                         answer.get("text", "") if isinstance(answer, dict) else "")
    reference_callee.__name__ = reference_callee.__qualname__ = callee
    return reference_callee


def _returned(node, named):
    """What the grader's reference returned (``decode``), with the caller's own objects
    where it returned one of its arguments as it is (``{"arg": place}``)."""
    if "arg" in node:
        value = named
        for step in node["arg"]:
            value = value[step]
        return value
    if "tuple" in node or "list" in node:
        items = [_returned(x, named) for x in node.get("tuple", node.get("list"))]
        return tuple(items) if "tuple" in node else items
    if "dict" in node:
        return {k: _returned(v, named) for k, v in node["dict"].items()}
    return decode(node)


def _question_line(callee, named):
    """A stand-in's question, the text ``json.dumps({"nonce": ..., "callee": ..., "args":
    encode(named)})`` writes, with each argument that is a dict of arrays written once for as
    long as its arrays stay the same, byte for byte (a loop passes its parameters unchanged at
    every step: they were most of each question's writing)."""
    if len(named) > MAX_ITEMS:
        return json.dumps({"nonce": _nonce, "callee": callee, "args": encode(named)})
    return ('{"nonce": ' + json.dumps(_nonce) + ', "callee": ' + json.dumps(callee) + ', "args": {"list": ['
            + ", ".join(_arg_text(a) for a in named) + "]}}")


def _arg_text(value):
    """``json.dumps(encode(value))``, from ``_args_written`` for a dict of arrays written before."""
    if type(value) is not dict or not 0 < len(value) <= MAX_ITEMS:
        return json.dumps(encode(value, 1))
    try:   # arrays of numbers only (what encode writes as arrays), 64 kB in all: the key holds their bytes
        small = (all(type(k) is str and type(v) is _ndarray and v.dtype.kind in "biuf" for k, v in value.items())
                 and sum(v.nbytes for v in value.values()) <= 1 << 16)
        key = tuple((k, v.dtype.str, v.shape, v.tobytes()) for k, v in value.items()) if small else None
    except Exception:
        key = None
    if key is None:
        return json.dumps(encode(value, 1))
    text = _args_written.get(key)
    if text is None:
        if len(_args_written) >= 64:
            _args_written.clear()
        text = _args_written[key] = json.dumps(encode(value, 1))
    return text


def _over_socket(line):
    """One stand-in call answered by the grader over the socket (its next line)."""
    _send(line.encode() + b"\n")
    answer = _line()
    if answer is None:
        raise ConnectionError("the grader's channel closed")
    return answer


def _exception(name, text):
    """An exception named ``name`` (a builtin one when there is one) saying ``text``."""
    name = name if isinstance(name, str) and name.isidentifier() else "RuntimeError"
    kind = __builtins__.get(name) if isinstance(__builtins__, dict) else getattr(__builtins__, name, None)
    if not (isinstance(kind, type) and issubclass(kind, Exception)):
        kind = type(name, (Exception,), {})
    return kind(text)


def call_once(namespace, fn, record, saved, sink, observed, index, arguments):
    """One case of ``call``: the learner's function on ``arguments()``, its prints swallowed,
    and, if asked, the calls it makes to its cell recorded."""
    recorder = None
    try:
        args = arguments()
        if record and record["callee"] in saved:   # watch the loop drive its cell
            recorder = Recorder(namespace[record["callee"]], record["callee_args"],
                                record["args"], args, limit=record.get("limit", 1000))
            namespace[record["callee"]] = recorder
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*args)
        reply = {"status": "ok", "output": pack(out), "observed": dict(observed)}
    except NotImplementedError:
        return {"status": "not_implemented", "text": "still raises NotImplementedError"}
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
    return reply


def connect(path, token):
    """Connect to the grader's socket and say the kernel's token: at set-up, and again if
    the learner's code closed the socket. Its methods are bound now, on a type no code can
    patch."""
    global _link, _send, _recv, _pending
    _pending = b""
    _link = _Socket(1, 1)   # AF_UNIX, SOCK_STREAM
    _link.connect(path)
    _send, _recv = _link.sendall, _link.recv
    _send(json.dumps({"hello": token}).encode() + b"\n")


def answers(job):
    """The replies to one job of the grader, in case order: a judged call's results (the
    request is the text stashed under ``job["key"]``, or ``job["request"]``, completed by
    ``job["extra"]``: the callees to stand in for, by name), or with ``op`` "recorded" the calls the last
    judged call recorded."""
    if job.get("op") == "recorded":
        for index in sorted(_recorded):
            yield {"case": index, "calls": encode_calls(_recorded[index])}
        return
    if job.get("op") == "examine":   # a wrong function: where, and a small edit that mends it (repair.py)
        fn = _shell.user_ns.get(job["spec"]["name"])
        if callable(fn):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tries = job.get("tries")
                tries = tries if type(tries) is int and tries >= 0 else REPAIR_TRIES
                known = [k for k in job.get("known", ()) if isinstance(k, str)] if isinstance(job.get("known"), list) else []
                wrong = [w for w in job.get("wrong", ()) if isinstance(w, str)] if isinstance(job.get("wrong"), list) else []
                yield {**examine(job["spec"], job["trace"], job["public"], fn, tries, known, wrong), "case": 0}
        heal()
        return
    stashed = _stash.get(job["key"]) if job.get("key") else None   # parsed by the zygote, or sent as text
    request = dict(stashed) if isinstance(stashed, dict) else json.loads(stashed if stashed is not None else job["request"])
    request.update(json.loads(job.get("extra", "{}")))
    namespace = _shell.user_ns
    if request.get("candidate"):   # a repair, run on the hidden cases in a copy of the notebook's names
        namespace = dict(namespace)
        try:
            exec(compile(request["candidate"], f"<repair of {request['name']}>", "exec"), namespace)
        except Exception:
            pass
    for index, result in enumerate(call(namespace, request)):
        result["case"] = index
        heal()
        yield result


def _flush():
    """Send what the learner's cell printed, as ipykernel does before it replies: the
    streams of the moment (a cell may have replaced them) and the kernel's own. A kernel
    stream that holds nothing is left alone: its flush would only wait for the kernel's IOPub
    thread, which sends the message that ends the cell after everything it was given."""
    done = []
    for stream in (_sys.stdout, _sys.stderr) + tuple(_streams):
        if any(stream is d for d in done):   # each flush waits for the kernel's IOPub thread
            continue
        done.append(stream)
        if _holds_nothing(stream):
            continue
        try:
            stream.flush()
        except Exception:
            pass


def _holds_nothing(stream):
    """Is ``stream`` one of the kernel's own, with nothing written since its last flush (its
    buffers, by request, are empty)? Not for any other stream, or if that cannot be told."""
    if not any(stream is s for s in _streams):
        return False
    try:
        buffers = vars(stream).get("_buffers")
        return type(buffers) is _defaultdict and not buffers
    except Exception:
        return False


def run_cell(job, parent):
    """One of the learner's cells, run as ipykernel runs an execute request's code (the
    shell's run_cell, store_history, the same reply), inside the one request that runs
    ``serve``: what the cell displays goes out on IOPub under that request, followed by a
    ``grader_cell`` message with the job's nonce and the reply ipykernel would have sent,
    so that the grader knows every output of the cell has arrived. It costs the kernel and
    the grader none of the per-request work of ipykernel and nbclient."""
    result = _shell.run_cell(job["code"], store_history=True, silent=False)
    err = result.error_before_exec if result.error_before_exec is not None else result.error_in_exec
    if result.success and not getattr(_shell, "_last_traceback_during_displayhook", False):
        reply = {"status": "ok"}
    else:
        try:
            evalue = str(err)
        except Exception:
            evalue = "<the exception's text could not be shown>"
        reply = {"status": "error", "traceback": [str(t) for t in _shell._last_traceback or []],
                 "ename": str(type(err).__name__), "evalue": evalue}
    reply["execution_count"] = _shell.execution_count - 1
    try:
        _shell.payload_manager.clear_payload()   # ipykernel reads and clears them after each request
    except Exception:
        pass
    _flush()
    _publish({"nonce": job["nonce"], "reply": reply}, parent=parent)


def _line():
    """The grader's next line, decoded; None when it closed the socket."""
    global _pending
    while True:
        line, found, rest = _pending.partition(b"\n")
        if found:
            _pending = rest
            return json.loads(line)
        chunk = _recv(1 << 16)
        if not chunk:
            return None
        _pending += chunk


def _lines():
    """The grader's jobs, one JSON object per line, until it closes the socket."""
    while True:
        job = _line()
        if job is None:
            return
        yield job


def serve(nonce):
    """Entry point in the kernel, run as one request: answer the grader's jobs over its
    socket until it closes it or says "stop". A "cell" job runs one of the learner's cells
    (``run_cell``; its outputs and its end go out on IOPub). A judged call's replies are
    lines of JSON sent as soon as each is computed (so a case that hangs costs only the
    cases after it), and each such job ends with ``{"nonce": ..., "end": true}``. The
    socket's methods were taken at set-up, before any learner code (channel.SETUP)."""
    global _nonce
    heal()
    parent = _parent("shell") if _parent else None   # none in the grading process (tests)
    _send(json.dumps({"serving": nonce}).encode() + b"\n")
    for job in _lines():
        heal()
        if job.get("op") == "cell":
            run_cell(job, parent)
            continue
        if job.get("op") == "stop":
            return
        _nonce = job["nonce"]
        for reply in answers(job):   # the nonce first: the grader reads no line that lacks it
            _send(json.dumps({"nonce": job["nonce"], **reply}).encode() + b"\n")
        _send(json.dumps({"nonce": job["nonce"], "end": True}).encode() + b"\n")
