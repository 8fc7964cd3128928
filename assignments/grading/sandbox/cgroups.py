"""A cgroup per kernel, where the machine lets the grader make them: the kernel's memory
(shared memory, tmpfs and memfd included, which a per-process address-space limit does not
count), its number of processes and threads, and its share of the CPU hold for the kernel as
a whole, whatever it starts.

Both cgroup versions: v2 (the unified hierarchy, systemd's default) and v1 (one hierarchy per
controller). The grader needs to be root, or to own its cgroup in v2 (systemd delegation:
``systemd-run --user --scope -p Delegate=yes ...``). The run's cgroups are made under the
grading process's own (``grading-kernels-<pid>-<n>``), one per kernel below; the zygote, which sees
them, moves each kernel's handle into its cgroups before the kernel's namespaces are made,
and the kernel itself never sees them (zygote.py). Where none can be made, ``Cgroups.open``
says why, and grading says so and flags the results (pipeline.py).
Rule (sandbox/): never judges; each protection is named in kernel.PROTECTIONS and attacked in tests.
"""
import itertools
import os
import re
import time

RUN_PREFIX = "grading-kernels-"
_names, _runs = itertools.count(), itertools.count()


def _mounts():
    """[(mount point, fs type, super options)] of the cgroup file systems."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            fstype, options = fields[sep + 1], fields[sep + 3]
            if fstype in ("cgroup", "cgroup2"):
                point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
                found.append((point, fstype, set(options.split(","))))
    return found


def _own_paths():
    """{controller or "": this process's cgroup path} from /proc/self/cgroup ("" is v2's)."""
    found = {}
    with open("/proc/self/cgroup", encoding="utf-8") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                found[name] = path
    return found


def _write(path, text):
    with open(path, "w", encoding="ascii") as f:
        f.write(text)


def _read(path):
    try:
        with open(path, encoding="ascii") as f:
            return f.read()
    except OSError:
        return ""


class Cgroups:
    """The run's cgroups: ``roots`` ({controller: the run's folder}, one folder for all in v2)
    and a cgroup per kernel below them."""

    def __init__(self, version, roots):
        self.version, self.roots = version, roots
        self.pid = os.getpid()
        self.leftover = []   # kernels' cgroups not removed yet (remove_kernel)

    @classmethod
    def open(cls):
        """The run's cgroups; (None, why) when the machine does not let this process make them."""
        mounts, own = _mounts(), _own_paths()
        v2 = [point for point, fstype, _ in mounts if fstype == "cgroup2"]
        v1 = {c: point for point, fstype, options in mounts if fstype == "cgroup"
              for c in ("memory", "pids", "cpu") if c in options}
        problems = []
        if "memory" in v1 and "pids" in v1:
            try:
                return cls._open_v1(v1, own), None
            except OSError as exc:
                problems.append(f"cgroup v1: {exc.strerror or exc}")
        for point in v2:
            controllers = _read(os.path.join(point, own.get("", "/").lstrip("/"), "cgroup.controllers")).split()
            if "memory" in controllers and "pids" in controllers:
                try:
                    return cls._open_v2(point, own.get("", "/"), controllers), None
                except OSError as exc:
                    problems.append(f"cgroup v2: {exc.strerror or exc}")
        if not problems:
            problems.append("no cgroup hierarchy has the memory and pids controllers")
        return None, "; ".join(problems)

    @classmethod
    def _open_v1(cls, points, own):
        roots, name = {}, run_name()
        try:
            for controller, point in points.items():
                parent = os.path.join(point, own.get(controller, "/").lstrip("/"))
                _sweep(parent)
                roots[controller] = _make(os.path.join(parent, name))
        except OSError:
            for root in roots.values():
                _remove(root)
            raise
        return cls(1, roots)

    @classmethod
    def _open_v2(cls, point, own_path, controllers):
        parent = os.path.join(point, own_path.lstrip("/"))
        wanted = [c for c in ("memory", "pids", "cpu") if c in controllers]
        enabled = _read(os.path.join(parent, "cgroup.subtree_control")).split()
        if not set(wanted) <= set(enabled):
            # "no internal processes": this process leaves its cgroup for a leaf of its own
            # before the cgroup hands its controllers down
            leaf = os.path.join(parent, f"grader-{os.getpid()}")
            os.makedirs(leaf, exist_ok=True)
            _write(os.path.join(leaf, "cgroup.procs"), str(os.getpid()))
            _write(os.path.join(parent, "cgroup.subtree_control"), " ".join("+" + c for c in wanted))
        _sweep(parent)
        root = _make(os.path.join(parent, run_name()))
        _write(os.path.join(root, "cgroup.subtree_control"), " ".join("+" + c for c in wanted))
        return cls(2, {"": root})

    def folders(self):
        """The folders the zygote must see (bound into its sandbox at the same paths)."""
        return sorted(set(self.roots.values()))

    def kernel(self, memory, pids):
        """A new kernel's cgroups, limited to ``memory`` bytes and ``pids`` processes (0: no
        limit): (its name, the cgroup.procs files that take its handle)."""
        name = f"k{os.getpid()}-{next(_names)}"
        procs = []
        for controller, root in self.roots.items():
            folder = os.path.join(root, name)
            os.mkdir(folder)
            if self.version == 2:
                if memory:
                    _write(os.path.join(folder, "memory.max"), str(memory))
                    if os.path.exists(os.path.join(folder, "memory.swap.max")):
                        _write(os.path.join(folder, "memory.swap.max"), "0")
                if pids:
                    _write(os.path.join(folder, "pids.max"), str(pids))
                if os.path.exists(os.path.join(folder, "cpu.weight")):
                    _write(os.path.join(folder, "cpu.weight"), "100")
            elif controller == "memory" and memory:
                _write(os.path.join(folder, "memory.limit_in_bytes"), str(memory))
                if os.path.exists(os.path.join(folder, "memory.memsw.limit_in_bytes")):   # no way out by swap
                    _write(os.path.join(folder, "memory.memsw.limit_in_bytes"), str(memory))
            elif controller == "pids" and pids:
                _write(os.path.join(folder, "pids.max"), str(pids))
            elif controller == "cpu":
                _write(os.path.join(folder, "cpu.shares"), "1024")
            procs.append(os.path.join(folder, "cgroup.procs"))
        return name, procs

    def oom_kills(self, name):
        """How many times the kernel's memory limit made Linux kill one of its processes."""
        if self.version == 2:
            text = _read(os.path.join(self.roots[""], name, "memory.events"))
        else:
            text = _read(os.path.join(self.roots.get("memory", "/nonexistent"), name, "memory.oom_control"))
        found = re.search(r"^oom_kill (\d+)$", text, re.M)
        return int(found.group(1)) if found else 0

    def memory_peak(self, name):
        """The most memory the kernel's cgroup has held, in bytes (0 if unknown)."""
        if self.version == 2:
            text = _read(os.path.join(self.roots[""], name, "memory.peak"))
        else:
            text = _read(os.path.join(self.roots.get("memory", "/nonexistent"), name, "memory.max_usage_in_bytes"))
        return int(text) if text.strip().isdigit() else 0

    def remove_kernel(self, name):
        """Remove a kernel's cgroups once its processes are gone (they die with its init); those
        still busy are tried again with the next kernel's, and at the run's end."""
        self.leftover.append(name)
        for name in list(self.leftover):
            try:
                for root in self.roots.values():
                    if os.path.isdir(os.path.join(root, name)):
                        os.rmdir(os.path.join(root, name))
            except OSError:
                continue
            self.leftover.remove(name)

    def close(self):
        if os.getpid() == self.pid:
            for root in self.roots.values():
                _remove(root)


def run_name():
    return f"{RUN_PREFIX}{os.getpid()}-{next(_runs)}"


def _make(folder):
    os.mkdir(folder)
    return folder


def _remove(root):
    """Remove a run's cgroups (a cgroup folder goes with rmdir, never with its files)."""
    if not os.path.isdir(root):
        return
    for name in os.listdir(root):
        if os.path.isdir(os.path.join(root, name)):
            _remove(os.path.join(root, name))
    for _ in range(100):
        try:
            os.rmdir(root)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)


def _sweep(parent):
    """Remove what earlier runs that ended without cleaning up left under ``parent``."""
    for name in os.listdir(parent) if os.path.isdir(parent) else ():
        match = re.fullmatch(RUN_PREFIX + r"(\d+)-\d+", name)
        if match and not os.path.exists(f"/proc/{match.group(1)}"):
            _remove(os.path.join(parent, name))

