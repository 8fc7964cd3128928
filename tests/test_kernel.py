"""kernel.py and zygote.py: warm kernels forked from a zygote, each in namespaces of its own,
and a cold kernel when the zygote cannot start. Real kernels in the real sandbox."""
import json
import os
import sys
import time

import pytest
import zmq
from jupyter_core.utils import run_sync

from assignments.grading.sandbox import kernel
from assignments.grading.sandbox.kernel import GradingKernelManager
from assignments.grading.sandbox.zygotes import ZYGOTES

pytestmark = pytest.mark.sandbox


def start(tmp_path, helper="VALUE = 42\n", **traits):
    km = GradingKernelManager(sandbox=True, scratch_root=str(tmp_path / "kernels"), **traits)
    (tmp_path / "helper.py").write_text(helper)
    km.prepare_scratch(str(tmp_path), ["helper.py"])
    run_sync(km.start_kernel)()
    kc = km.client()
    kc.start_channels()
    run_sync(kc.wait_for_ready)(timeout=60)
    return km, kc


def run(kc, code):
    """What the code prints (and the error's name, if it raised)."""
    msg_id = kc.execute(code)
    said = []
    while True:
        msg = run_sync(kc.get_iopub_msg)(timeout=30)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            said.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            said.append(msg["content"]["ename"])
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return "".join(said).strip()


def stop(km, kc):
    kc.stop_channels()
    run_sync(km.shutdown_kernel)(now=True)
    km.cleanup_scratch()


def processes_with(marker):
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


@pytest.fixture(autouse=True)
def own_zygote():
    ZYGOTES.stop()
    yield
    ZYGOTES.stop()


def test_a_warm_kernel_has_namespaces_and_files_of_its_own(tmp_path):
    km, kc = start(tmp_path)
    try:
        assert km.zygote is not None
        said = json.loads(run(kc, "import json, os, helper; print(json.dumps({'pid': os.getpid(), 'uid': os.getuid(), "
                                  "'home': os.environ['HOME'], 'cwd': os.getcwd(), 'files': sorted(os.listdir('.')), "
                                  "'value': helper.VALUE, 'pids': sorted(p for p in os.listdir('/proc') if p.isdigit()), "
                                  "'in_tmp': [os.path.join(d, f) for d, _, fs in os.walk('/tmp') for f in fs]}))"))
        assert said["pid"] == 2 and said["pids"] == ["1", "2"]   # its own pid namespace, under its init
        assert said["uid"] == km.uid and (km.uid > 0) == (os.geteuid() == 0)
        assert said["cwd"] == said["home"] == km.scratch and "helper.py" in said["files"] and said["value"] == 42
        # a new /tmp: only the folders on the way to its own scratch and sockets (under /tmp
        # here), and the Python environment when it lives under /tmp (bound read-only)
        own = tuple(p + "/" for p in {km.scratch, km.sockets, sys.prefix, sys.base_prefix, sys.exec_prefix})
        assert [f for f in said["in_tmp"] if not f.startswith(own)] == []
        assert run(kc, "open('/planted', 'w')") in ("OSError", "PermissionError")   # / is read-only
    finally:
        stop(km, kc)


def in_namespace(ns):
    """The processes of this machine in the pid namespace ``ns`` (as /proc/PID/ns/pid reads)."""
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            if os.readlink(f"/proc/{pid}/ns/pid") == ns:
                found.append(pid)
        except OSError:
            pass
    return found


def test_ending_a_warm_kernel_ends_everything_it_started(tmp_path):
    """A daemon that forks, leaves the kernel's session and ignores SIGTERM and SIGHUP dies
    with the kernel, and so does every process of the kernel's pid namespace (its init and
    the kernel itself), while the zygote lives on for the next submission. As root the
    kernel runs as a user of its own: its init used to outlive the kernel's handle, because
    the handle (root without CAP_KILL) could not send it the parent-death signal."""
    marker = "a-detached-daemon-of-test-kernel"
    km, kc = start(tmp_path)
    try:
        ns = run(kc, "import os; print(os.readlink('/proc/self/ns/pid'))")
        run(kc, "import subprocess, sys\n"
                f"subprocess.Popen([sys.executable, '-c', 'import os, signal, time  # {marker}\\n"
                "signal.signal(signal.SIGTERM, signal.SIG_IGN); signal.signal(signal.SIGHUP, signal.SIG_IGN)\\n"
                "if os.fork(): os._exit(0)\\nos.setsid()\\ntime.sleep(600)'],"
                " start_new_session=True).wait()")
        deadline = time.monotonic() + 10
        while not processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_with(marker), "the daemon never started"
        assert len(in_namespace(ns)) >= 3   # the kernel's init, the kernel and the daemon
    finally:
        stop(km, kc)
    deadline = time.monotonic() + 10
    while (processes_with(marker) or in_namespace(ns)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker) == [] and in_namespace(ns) == []
    assert km.zygote.alive()


def test_the_client_connects_again_within_milliseconds(tmp_path):
    """The client's sockets connect while the kernel is being forked, before it binds: a
    refused connection is retried after ZeroMQ's RECONNECT_IVL (100 ms by default, which
    each submission waited)."""
    km, kc = start(tmp_path)
    try:
        for channel in (kc.shell_channel, kc.iopub_channel, kc.control_channel):
            assert channel.socket.getsockopt(zmq.RECONNECT_IVL) <= 10
        assert run(kc, "print(6 * 7)") == "42"
        # the reply it waited for is kept: no second request for the kernel's language
        assert kc.kernel_info_reply["content"]["language_info"]["name"] == "python"
    finally:
        stop(km, kc)


def test_each_kernel_is_a_new_fork(tmp_path):
    km, kc = start(tmp_path)
    try:
        run(kc, "import numpy; numpy.left_behind = 1")
    finally:
        stop(km, kc)
    km, kc = start(tmp_path)
    try:
        assert run(kc, "import numpy; print(hasattr(numpy, 'left_behind'))") == "False"
    finally:
        stop(km, kc)


def test_the_zygote_reads_what_a_live_kernel_used_so_far(tmp_path):
    """kernel_used (measure/steps.py's KernelMeter): the CPU of the kernel's processes, read
    from /proc by its zygote, grows with what a cell computes; nothing once the kernel is gone."""
    km, kc = start(tmp_path)
    try:
        pid, before = km.kernel_used()
        run(kc, "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass")
        again, after = km.kernel_used()
        assert again == pid and after - before >= 0.25, (before, after)
    finally:
        stop(km, kc)
    assert km.kernel_used() is None


def test_without_a_warm_zygote_the_kernel_boots_cold(tmp_path, monkeypatch):
    """A warm zygote that cannot start (here its imports fail): the kernel is forked by a cold
    zygote of its own, which imports nothing first, in the same sandbox; it ends with the kernel."""
    with open(kernel.Zygote.SOURCE, encoding="utf-8") as f:
        source = f.read()
    broken = tmp_path / "zygote.py"
    broken.write_text(source.replace("    if warm:\n        preload()", "    if warm:\n        raise SystemExit('cannot import')"))
    assert broken.read_text() != source
    monkeypatch.setattr(kernel.Zygote, "SOURCE", str(broken))
    km, kc = start(tmp_path)
    try:
        assert km.own_zygote and km.zygote is not ZYGOTES.zygote
        assert run(kc, "print(6 * 7)") == "42"
        zygote = km.zygote
    finally:
        stop(km, kc)
    assert not zygote.alive()


def test_a_forked_kernel_that_dies_starting_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel, "KERNEL_OPTIONS", ["--IPKernelApp.kernel_class=no.such.Kernel"])
    with pytest.raises(RuntimeError, match=r"died before replying.*no\.such\.Kernel' could not be imported"):
        start(tmp_path)


def test_helpers_are_imported_from_what_the_zygote_compiled(tmp_path):
    """The zygote compiles each helper module once and hands every kernel a checked pyc: the
    import uses it, and a helper whose text differs (in this kernel or the next) is its own."""
    km, kc = start(tmp_path)
    try:
        said = json.loads(run(kc, "import helper, json, importlib.util\n"
                                  "data = open(helper.__cached__, 'rb').read()\n"
                                  "print(json.dumps({'value': helper.VALUE, 'flags': data[4:8].hex(),"
                                  " 'hash': data[8:16] == importlib.util.source_hash(open('helper.py', 'rb').read())}))"))
        assert said == {"value": 42, "flags": "03000000", "hash": True}
        assert run(kc, "import importlib, helper\nopen('helper.py', 'w').write('VALUE = 7\\n')\n"
                       "print(importlib.reload(helper).VALUE)") == "7"   # the pyc no longer matches
    finally:
        stop(km, kc)
    km, kc = start(tmp_path, helper="VALUE = 43\n")
    try:
        assert run(kc, "import helper; print(helper.VALUE)") == "43"
    finally:
        stop(km, kc)


def test_a_warm_kernel_still_runs_magics_and_top_level_await(tmp_path):
    km, kc = start(tmp_path)
    try:
        assert run(kc, "here = %pwd\nprint(here == __import__('os').getcwd())") == "True"
        assert run(kc, "x = 5\nx?") == ""   # help on an object: no error
        assert run(kc, "import asyncio\nawait asyncio.sleep(0)\nprint('awaited')") == "awaited"
        assert run(kc, "print(3 % 2 != 0)") == "True"
    finally:
        stop(km, kc)


# What a kernel's shell holds that it read from its process as it was made, as JSON: the
# traits, the folders, the environment, what it saved and replaced in sys and builtins, the
# hooks it registered; and whether it was made in this process (gc.freeze's objects, the
# zygote's, are not among gc.get_objects).
SHELL_STATE = """
import atexit, builtins, gc, json, os, sys, threading
sh = get_ipython()
k = sh.kernel
def plain(v):
    if isinstance(v, (str, int, float, bool, type(None))):
        return v
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(a): plain(b) for a, b in v.items()}
    return type(v).__name__
print(json.dumps({
    "made_here": any(o is sh for o in gc.get_objects()),
    "traits": {n: plain(getattr(sh, n)) for n in sorted(sh.trait_names()) if n != "compiler_class"},
    "parent": sh.parent is k, "kernel": k.shell is sh, "singleton": type(sh).instance() is sh,
    "folders": [sh.profile_dir.location, sh.ipython_dir, sh.starting_dir, sh.home_dir, sh.dir_stack,
                [str(p) for p in sh.history_manager.dir_hist], str(sh.history_manager.hist_file)],
    "encoding": sh.stdin_encoding, "saved": {n: s is getattr(sys, n) for n, s in sh._orig_sys_module_state.items()},
    "main": sys.modules["__main__"] is sh.user_module, "module": type(sh.user_module).__name__,
    "ns": sorted(sh.user_ns), "builtins": sorted(vars(builtins)), "env": dict(os.environ),
    "exit_hooks": atexit._ncallbacks(), "threads": threading.active_count(),
    "published": [sh.displayhook.session is k.session, sh.display_pub.pub_socket is k.iopub_socket],
    "configurables": [type(c).__name__ for c in sh.configurables],
    "magics": sorted(sh.magics_manager.lsmagic()["line"]),
    "events": {e: len(c) for e, c in sh.events.callbacks.items()},
}, sort_keys=True))
"""


def test_a_kernel_takes_the_shell_its_zygote_made_as_if_it_had_made_it(tmp_path):
    """zygote.prebuild_shell makes IPython's shell once, in the zygote; each patched kernel
    adopts its copy (adopt_shell). It must hold what a shell made in the kernel holds: the
    unpatched kernel, forked from the same zygote, makes its own, and both are compared."""
    shells = {}
    for patched in (True, False, True):
        km, kc = start(tmp_path, patched_kernel=patched)
        try:
            shells.setdefault(patched, []).append(json.loads(run(kc, SHELL_STATE)))
        finally:
            stop(km, kc)
    for state in shells[True] + shells[False]:   # each kernel's own scratch folder, as HOME and the cwd
        state.update(json.loads(json.dumps(state).replace(json.dumps(state["folders"][2])[1:-1], "<scratch>")))
    adopted, own = shells[True][0], shells[False][0]
    assert [adopted["made_here"], own["made_here"], shells[True][1]["made_here"]] == [False, True, False]
    # an unpatched kernel parses its command line itself: the connection file is in its configuration
    assert own["traits"]["config"]["IPKernelApp"].pop("connection_file").endswith("connection.json")
    adopted["made_here"] = own["made_here"] = None
    assert adopted == own
    assert adopted["main"] and adopted["parent"] and adopted["kernel"] and adopted["singleton"]
    assert adopted["published"] == [True, True] and adopted["threads"] == own["threads"]


def test_the_zygote_makes_no_shell_it_could_not_hand_over_intact():
    """A configuration with nested sections (which a shell made under the kernel reads as
    its parent's) or with IPython's history on (a thread in the zygote) leaves each kernel to
    make its own shell; and making one leaves the zygote's environment, builtins and
    ``__main__`` as they were, and its one thread."""
    import subprocess

    from assignments.grading import shipped
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import zygote, os, builtins, threading, atexit\n"
            "hooks, register, unregister = [], atexit.register, atexit.unregister\n"
            "atexit.register = lambda f, *a, **k: (hooks.append(f), register(f, *a, **k))[1]\n"
            "atexit.unregister = lambda f: (hooks.remove(f), unregister(f))[1]\n"
            "main, env, names = sys.modules['__main__'], dict(os.environ), set(vars(builtins))\n"
            "for options in (['--HistoryManager.enabled=True'], ['--IPKernelApp.IPythonKernel.x=1', "
            "'--HistoryManager.enabled=False'], ['--HistoryManager.enabled=False']):\n"
            "    zygote.parse_options(options); zygote.prebuild_shell(options)\n"
            "    print(zygote.SHELL['shell'] is not None)\n"
            "print(sys.modules['__main__'] is main, dict(os.environ) == env, set(vars(builtins)) == names,\n"
            "      all(getattr(f, '__self__', None) is not zygote.SHELL['shell'] for f in hooks), threading.active_count())\n")
    out = subprocess.run([sys.executable, "-c", code, os.path.dirname(shipped.__file__)], capture_output=True,
                         text=True, check=True, env={**os.environ, "HOME": "/nonexistent"}).stdout
    assert out.split() == ["False", "False", "True", "True", "True", "True", "True", "1"]


def test_quick_cells_transform_every_cell_as_ipython_does(monkeypatch, assignment):
    """zygote.quick_cells skips IPython's token transforms and its await check when a cell's
    text shows they find nothing: on the release's cells and on cells that use IPython's own
    syntax, the patched shell transforms each cell exactly as the stock one does."""
    import nbformat
    from helpers import RELEASE
    from IPython.core import inputtransformer2 as it2
    from IPython.core import interactiveshell

    from assignments.grading.shipped import zygote
    path = os.path.join(RELEASE, assignment.notebook + ".ipynb")
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    cells += ["x = %pwd", "files = !ls", "%time 1", "!ls", "obj?", "obj??", "/print 1", ",f a b", ";f a b",
              "  %matplotlib inline", "print('100%')", "a != b", "if a:\n    !ls", "def f():\n    return 1\nf?",
              "x = (1,\n     2)\n", "y = [1\n, 2]", "await x", "async with a:\n    pass", "print('no await')",
              "", "\n\n", "for i in range(3):\n    pass\n"]
    tm = it2.TransformerManager()
    stock = [tm.transform_cell(c) for c in cells]
    stock_async = [interactiveshell._should_be_async(c) for c in cells]
    original = it2.TransformerManager.do_token_transforms
    monkeypatch.setattr(it2.TransformerManager, "do_token_transforms", original)
    monkeypatch.setattr(interactiveshell, "_should_be_async", interactiveshell._should_be_async)
    zygote.quick_cells()
    assert it2.TransformerManager.do_token_transforms is not original   # patched
    assert [it2.TransformerManager().transform_cell(c) for c in cells] == stock
    assert [interactiveshell._should_be_async(c) for c in cells] == stock_async
    assert stock_async.count(True) == 2


def test_one_transform_per_request_reuses_a_transform_only_within_its_request(monkeypatch):
    """zygote.one_transform_per_request hands IPython's second transform of a request the
    first's result: only for the same text, under the same header object, and only once."""
    from ipykernel import ipkernel
    from IPython.core.interactiveshell import InteractiveShell

    from assignments.grading.shipped import zygote
    calls = []
    monkeypatch.setattr(InteractiveShell, "transform_cell", lambda self, raw: calls.append(raw) or raw.upper())
    monkeypatch.setattr(ipkernel, "_accepts_parameters", ipkernel._accepts_parameters)
    zygote.one_transform_per_request()

    class Shell:
        parent_header = {"msg_id": "1"}

    shell, transform = Shell(), InteractiveShell.transform_cell
    assert [transform(shell, "a"), transform(shell, "a")] == ["A", "A"] and calls == ["a"]   # ipykernel's, then IPython's
    assert transform(shell, "a") == "A" and calls == ["a", "a"]          # a third time: transformed again
    shell.parent_header = {"msg_id": "1"}                                 # the next request, an equal header
    assert transform(shell, "a") == "A" and calls == ["a"] * 3
    assert transform(shell, "b") == "B" and transform(shell, "a") == "A" and calls == ["a"] * 3 + ["b", "a"]
    shell.parent_header = {}                                              # no request: never reused
    transform(shell, "c"), transform(shell, "c")
    assert calls[-2:] == ["c", "c"]

    stock = ipkernel._accepts_parameters
    zygote.signatures_once()

    class Runner:
        def run(self, code, *, cell_id=None):
            pass

    for _ in range(2):
        found = ipkernel._accepts_parameters(Runner().run, ["cell_id", "cell_meta"])
        assert found == stock(Runner().run, ["cell_id", "cell_meta"]) == {"cell_id": True, "cell_meta": False}
        found["cell_meta"] = True   # the caller's copy only


def test_workers_forked_after_share_use_one_zygote_in_turns(tmp_path):
    """The grading process starts one zygote for its local workers (Zygotes.share): workers
    forked afterwards start their kernels from it, at the same time, each kernel its own."""
    import multiprocessing

    from traitlets.config import Config
    config = Config()
    root = str(tmp_path / "kernels")
    assert ZYGOTES.share(config, root) is not None
    zygote_pid = ZYGOTES.zygote.proc.pid
    assert ZYGOTES.share(config, root).proc.pid == zygote_pid   # begun early (run/start.py): shared once
    assert ZYGOTES.ready() and ZYGOTES.shared_root() == root
    assert not ZYGOTES.booting()

    def worker(queue):
        said = []
        try:
            for _ in range(3):
                km = GradingKernelManager(sandbox=True, scratch_root=ZYGOTES.shared_root())
                run_sync(km.start_kernel)()
                kc = km.client()
                kc.start_channels()
                run_sync(kc.wait_for_ready)(timeout=60)
                said.append((km.zygote is ZYGOTES.zygote, km.zygote.proc.pid, km.uid, run(kc, "print(6 * 7)")))
                stop(km, kc)
        except Exception as exc:
            said.append(repr(exc))
        queue.put(said)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    workers = [context.Process(target=worker, args=(queue,)) for _ in range(2)]
    for w in workers:
        w.start()
    found = [queue.get(timeout=120) for _ in workers]
    for w in workers:
        w.join(30)
    kernels = [k for said in found for k in said]
    assert len(kernels) == 6 and all(k[:2] == (True, zygote_pid) and k[3] == "42" for k in kernels), found
    assert len({k[2] for k in kernels}) == (6 if os.geteuid() == 0 else 1)   # as root, a user per kernel


def test_a_reply_left_by_a_dead_worker_is_not_taken_for_the_next(tmp_path):
    """A worker that dies between its request and the zygote's reply leaves the reply in the
    pipe, and may die holding the lock: the next request still gets its own reply."""
    km, kc = start(tmp_path)
    zygote = km.zygote
    stop(km, kc)
    pid = os.fork()
    if pid == 0:   # a worker: takes the lock, asks, and dies holding it, before reading the reply
        try:
            with zygote._locked():
                os.write(zygote.proc.stdin.fileno(), b'{"op": "poll", "pid": 12345, "id": "dead-0"}\n')
                time.sleep(0.2)
                os._exit(0)
        finally:
            os._exit(1)
    os.waitpid(pid, 0)
    reply = zygote.request({"op": "signal", "pid": 54321, "signal": 0})
    assert reply["ok"] is True and reply["id"] != "dead-0"
    assert zygote.request({"op": "poll", "pid": 99999})["status"] is None


def test_the_zygote_has_shown_a_traceback_before_it_forks():
    """IPython's first traceback in a process imports stack_data and pygments' Python lexer and
    compiles the lexer's rules; the zygote shows one before it forks (``warm_tracebacks``), so a
    kernel whose learner's code raises does not pay for it again."""
    import subprocess

    from assignments.grading import shipped
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import zygote; import IPython\n"
            "print('stack_data' in sys.modules)\n"
            "zygote.warm_tracebacks()\n"
            "from pygments.lexers.python import PythonLexer\n"
            "print('stack_data' in sys.modules, '_tokens' in PythonLexer.__dict__)\n")
    out = subprocess.run([sys.executable, "-c", code, os.path.dirname(shipped.__file__)], capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["False", "True", "True"]


def sent_types(km):
    """The types of the messages the manager sends from now on (a list that grows)."""
    sent, send = [], km.session.send

    def recording(stream, msg, *args, **kwargs):
        sent.append(msg["msg_type"] if isinstance(msg, dict) else msg)
        return send(stream, msg, *args, **kwargs)
    km.session.send = recording
    return sent


def test_a_kernel_killed_now_is_not_interrupted_first_and_is_reaped_before_the_kill_returns(tmp_path):
    """upstream/kernel_manager.py: jupyter_client interrupts a kernel before killing it, a
    message that then held the manager's context open; a kernel killed now gets none, and
    ``km.ready`` still settles. zygote.py: a SIGKILL's reply comes once the kernel is reaped,
    so the first poll after it finds the kernel gone."""
    km, kc = start(tmp_path)
    assert km.ready.done() and km.ready.exception() is None
    sent = sent_types(km)
    process = km.provisioner.process
    try:
        process.kill()
        assert process.poll() is not None   # gone, told at once
        run_sync(km.shutdown_kernel)(now=True)
        assert "interrupt_request" not in sent and km.ready.done()
    finally:
        kc.stop_channels()
        km.cleanup_scratch()
    km2, kc2 = start(tmp_path)   # a graceful shutdown still interrupts first, as jupyter_client does
    try:
        sent2 = sent_types(km2)
        run_sync(km2.shutdown_kernel)(now=False)
        assert sent2[:1] == ["interrupt_request"]
    finally:
        kc2.stop_channels()
        km2.cleanup_scratch()


def test_precompiled_cells_compile_and_run_as_ipython_does(monkeypatch, assignment):
    """zygote.precompile compiles the notebook's own cells once (in the zygote); a kernel's
    compiler then hands back the same modules and code objects that compiling them there
    would give (marshalled, byte for byte, under the cell's own name), and the cells print
    the same. A cell that warns is not precompiled (the kernel shows the warning); a cell
    after a ``__future__`` import, another mode, or a tree the learner's AST transformers
    change is compiled as before."""
    import ast
    import contextlib
    import io
    import types

    from IPython.core.compilerop import CachingCompiler
    from IPython.core.interactiveshell import InteractiveShell

    from assignments.grading.judging.judged_execute import own_cells
    from assignments.grading.shipped import zygote
    cells = own_cells(assignment)
    assert len(cells) >= 5 and not any("BEGIN" in c for c in cells)
    extra = ["def f(n):\n    return [i * i for i in range(n)]\nf(3)\n", "x = 2\nx * 21\n", "print(1 + 1)\n",
             "from __future__ import annotations\ndef g(a: Undefined) -> int:\n    return 1\nprint(g(0))\n",
             "import asyncio\nawait asyncio.sleep(0)\nprint('awaited')\n", "y = 1 is 1\n", "print(1 + 1\n"]
    for name in ("ast_parse", "__call__"):
        monkeypatch.setattr(CachingCompiler, name, getattr(CachingCompiler, name))
    monkeypatch.setattr(InteractiveShell, "transform_ast", InteractiveShell.transform_ast)
    monkeypatch.setattr(zygote, "CELLS", {})
    monkeypatch.setattr(zygote, "CODES", {})
    zygote.precompile(cells + extra)
    assert "y = 1 is 1\n" not in zygote.CELLS and "print(1 + 1\n" not in zygote.CELLS   # warns; does not parse
    from IPython.core.inputtransformer2 import TransformerManager
    assert all(TransformerManager().transform_cell(c) in zygote.CELLS for c in cells + extra[:5])
    def compiled(text, count):
        """The code objects a shell's compiler makes of a cell, as IPython runs it."""
        compiler, name = CachingCompiler(), f"<ipython-input-{count}-cafe>"
        nodes = compiler.ast_parse(text, filename=name).body
        out = []
        with compiler.extra_flags(ast.PyCF_ALLOW_TOP_LEVEL_AWAIT):
            for i, node in enumerate(nodes):
                single = i == len(nodes) - 1 and isinstance(node, ast.Expr)
                mod = ast.Interactive([node]) if single else ast.Module([node], [])
                out.append(described(compiler(mod, name, "single" if single else "exec")))
        return out, compiler.flags

    def described(code):
        """Every field of a code object and of those in it (marshal's bytes also show refcounts)."""
        fields = ("co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_filename", "co_name",
                  "co_qualname", "co_firstlineno", "co_linetable", "co_exceptiontable", "co_flags", "co_argcount",
                  "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals", "co_stacksize")
        consts = tuple(described(c) if isinstance(c, types.CodeType) else (type(c), c) for c in code.co_consts)
        return tuple(getattr(code, f) for f in fields) + (consts,)

    from traitlets.config import Config
    config = Config()
    config.HistoryManager.enabled = False   # as the kernels run (kernel.KERNEL_OPTIONS)
    shell = InteractiveShell.instance(config=config)

    def ran(texts):
        shell.execution_count, said = 1, []
        for text in texts:
            with contextlib.redirect_stdout(io.StringIO()) as out:
                shell.run_cell(text, store_history=True)
            said.append(out.getvalue())
        return said

    import warnings
    warnings.simplefilter("ignore", SyntaxWarning)   # this test's own compiling
    stock = [compiled(c, n) for n, c in enumerate(cells + extra[:6])]
    stock_said = ran(extra[:5])
    zygote.precompiled_cells()
    assert [compiled(c, n) for n, c in enumerate(cells + extra[:6])] == stock
    assert ran(extra[:5]) == stock_said
    assert stock_said[:3] == ["Out[1]: [0, 1, 4]\n", "Out[2]: 42\n", "2\n"] and stock_said[4] == "awaited\n"
    parsed = CachingCompiler().ast_parse(extra[2])
    assert parsed.body[0] is zygote.CELLS[extra[2]][1].body[0] and parsed is not zygote.CELLS[extra[2]][1]

    class Three(ast.NodeTransformer):   # the learner's own AST transformer applies as before
        def visit_Constant(self, node):
            return ast.Constant(3) if node.value == 1 else node

    shell.ast_transformers.append(Three())
    try:
        assert ran(["print(1 + 1)\n"]) == ["6\n"]
    finally:
        shell.ast_transformers.pop()
    assert ran(["print(1 + 1)\n"]) == ["2\n"]   # the precompiled module was not changed
    real_parse = CachingCompiler.ast_parse

    def parse_after_another_warning(self, *args, **kwargs):   # an unclosed file collected meanwhile
        import warnings
        warnings.warn("unclosed file", ResourceWarning)
        return real_parse(self, *args, **kwargs)
    monkeypatch.setattr(CachingCompiler, "ast_parse", parse_after_another_warning)
    monkeypatch.setattr(zygote, "CELLS", {})
    zygote.precompile(cells[:2] + ["y = 1 is 1\n"])
    assert len(zygote.CELLS) == 2   # another's warning says nothing of the cell; the compiler's does


TRACEBACKS = """
import json, linecache, sys
from IPython.core import ultratb
from IPython.utils import PyColorize
from assignments.grading.shipped import zygote
if sys.argv[1] == "patched":
    zygote.warm_tracebacks()
    zygote.frames_highlighted_once()
name = "<a learner's cell>"
text = ("import numpy as np\\n\\ndef inner(W, x):\\n    z = np.dot(W, x)\\n    return np.vstack([z, np.ones(4)])\\n\\n"
        "def outer(W, x):\\n    a = inner(W,\\n              x)\\n    return a\\n\\nouter(np.ones((2, 3)), np.ones((3, 1)))\\n")
linecache.cache[name] = (len(text), None, text.splitlines(True), name)
shown = []
for _ in range(2):
    for theme in PyColorize.theme_table:
        for mode in ("Context", "Verbose"):
            try:
                exec(compile(text, name, "exec"), {})
            except ValueError:
                shown.append(ultratb.AutoFormattedTB(mode=mode, theme_name=theme).text(*sys.exc_info()))
print(json.dumps([shown, len(zygote.FRAME_LEXERS)]))
"""


def test_tracebacks_highlight_each_frame_as_stack_data_does():
    """zygote.frames_highlighted_once: stack_data highlights a traceback's frames with one
    lexer class, made once (its rules compiled in the zygote), instead of a new class for
    every frame. In a fresh process each, as kernels are, every theme and mode shows the same
    tracebacks, character for character (but the addresses Verbose mode prints, which differ
    between any two processes), the executing node's marks and a library's frame included."""
    import re
    import subprocess

    def shown(how):
        ran = subprocess.run([sys.executable, "-c", TRACEBACKS, how], capture_output=True, text=True, timeout=120,
                             cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        assert ran.returncode == 0, ran.stderr[-2000:]
        texts, lexers = json.loads(ran.stdout)
        return [re.sub(r"0x[0-9a-f]+", "0x?", t) for t in texts], lexers

    (stock, none), (ours, one) = shown("stock"), shown("patched")
    assert ours == stock and (none, one) == (0, 1)
    assert any("\x1b[" in t and "shape_base.py" in t and "vstack" in t for t in stock)
    assert any("\x1b[30;43m" in t for t in stock)   # the node being executed, marked
