"""Fingerprints of the upstream code this course relies on (RELIED_ON in __init__.py):
the installed versions of the packages, and a hash of the source of each body. After an
upgrade, ``changed()`` names every body that is no longer the one the replacements were
written against; ``pytest --update-fingerprints`` records the new ones once they are
checked (docs/testing.md). Rule (upstream/)."""
import hashlib
import importlib
import importlib.metadata
import inspect
import json
import os
import subprocess
import sys
import textwrap

from . import RELIED_ON

FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fingerprints.json")
PACKAGES = ("nbgrader", "nbconvert", "nbclient", "nbformat", "jupyter_client", "ipykernel", "ipython", "jsonschema", "pygments")


def resolve(qualname):
    """The object a dotted name names: the longest importable module, then attributes (a
    module's name alone names the module: its source is its whole file)."""
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = inspect.getattr_static(obj, attr)
            # a staticmethod's or classmethod's function, a traitlets default's or observer's
            obj = getattr(obj, "__func__", getattr(obj, "func", obj))
        return obj
    raise ImportError(f"no module in {qualname}")


def fingerprint(qualname):
    """A hash of the named body's source, dedented: None when it no longer exists."""
    try:
        source = inspect.getsource(resolve(qualname))
    except (ImportError, AttributeError, TypeError, OSError):
        return None
    return hashlib.sha256(textwrap.dedent(source).encode()).hexdigest()[:16]


def current():
    """The installed versions and the fingerprint of every body relied on, read in a fresh
    Python: in this one, the course's own replacements may already stand in their place."""
    done = subprocess.run([sys.executable, "-c", f"import json; from {__name__} import read_here; "
                           "print(json.dumps(read_here()))"], capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise RuntimeError(f"the upstream code could not be fingerprinted: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def read_here():
    """``current()``, read in this process."""
    return {"versions": {name: importlib.metadata.version(name) for name in PACKAGES},
            "bodies": {name: fingerprint(name) for name in sorted(RELIED_ON)}}


def recorded():
    with open(FILE, encoding="utf-8") as f:
        return json.load(f)


def changed(now=None, then=None):
    """What differs between the recorded fingerprints and the installed code: lines naming
    each changed version and each changed, new or vanished body, with who relies on it."""
    now, then = now or current(), then or recorded()
    lines = [f"{name} {then['versions'].get(name)} -> {version}"
             for name, version in now["versions"].items() if then["versions"].get(name) != version]
    for name, digest in now["bodies"].items():
        if name not in then["bodies"]:
            lines.append(f"{name}: not fingerprinted yet ({RELIED_ON[name]})")
        elif digest is None:
            lines.append(f"{name}: no longer exists ({RELIED_ON[name]})")
        elif digest != then["bodies"][name]:
            lines.append(f"{name}: changed ({RELIED_ON[name]})")
    lines += [f"{name}: recorded but no longer relied on" for name in then["bodies"] if name not in now["bodies"]]
    return lines


def update():
    """Record the installed code's fingerprints (after checking the replacements against it)."""
    with open(FILE, "w", encoding="utf-8") as f:
        json.dump(current(), f, indent=1, sort_keys=True)
        f.write("\n")
