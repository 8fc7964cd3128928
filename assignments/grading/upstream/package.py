"""nbgrader's package without its Jupyter server extensions, for the grading command.

nbgrader/__init__.py imports its four server extensions (formgrader, the Assignments list,
the course list, the validator): Jupyter Server, its metrics, the exchange and its HTTP
client, a fifth of a second of every run that a grading process never uses. ``lean``
registers the package as the import system would, with its ``__path__``, ``__file__`` and
``__version__``, without running that file: every submodule then imports as usual, the
server extensions too if something asks for them. Only the command line's ``grade`` calls
it, before anything has imported nbgrader; stock mode leaves the package alone.
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json)."""
import importlib.util
import sys


def lean(stock: bool = False) -> bool:
    """Register nbgrader's package without running its __init__.py; False when it was not
    (imported already, ``stock``, or not laid out as expected), and nothing is changed."""
    if stock or "nbgrader" in sys.modules:
        return False
    spec = importlib.util.find_spec("nbgrader")
    if spec is None or spec.origin is None or not spec.submodule_search_locations:
        return False
    module = importlib.util.module_from_spec(spec)
    sys.modules["nbgrader"] = module
    try:
        from nbgrader._version import __version__
    except Exception:   # not the layout this was written against: import it whole
        del sys.modules["nbgrader"]
        return False
    setattr(module, "__version__", __version__)
    return True
