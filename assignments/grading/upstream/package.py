"""nbgrader's package without its Jupyter server extensions, and jsonschema without its
optional format checkers, for the grading command.

nbgrader/__init__.py imports its four server extensions (formgrader, the Assignments list,
the course list, the validator): Jupyter Server, its metrics, the exchange and its HTTP
client, a fifth of a second of every run that a grading process never uses. ``lean``
registers the package as the import system would, with its ``__path__``, ``__file__`` and
``__version__``, without running that file: every submodule then imports as usual, the
server extensions too if something asks for them. Only the command line's ``grade`` calls
it, before anything has imported nbgrader; stock mode leaves the package alone.

jsonschema imports a module for each string format it can check (URIs, IRIs, dates,
colours, durations...) when that module is installed, and Jupyter's own packages install
them, for checks no schema of a grading run asks for (nbformat's and nbgrader's have no
``format`` keyword). The costliest, rfc3987-syntax's grammar, is hidden from every process
that imports the engine (grading/__init__.py); ``without_format_checkers`` hides the others
while the grading command imports jsonschema, a tenth of a second more. Its validators work
as before, with a FormatChecker that knows fewer formats.
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


# the optional modules jsonschema/_format.py imports for its format checkers (jsonschema 4.x)
FORMAT_CHECKERS = ("fqdn", "rfc3986_validator", "rfc3987", "rfc3987_syntax", "rfc3339_validator", "webcolors",
                   "jsonpointer", "uri_template", "isoduration")


def without_format_checkers(stock: bool = False) -> list[str]:
    """Import jsonschema with its optional format checkers' modules hidden; return those
    hidden (none when jsonschema was imported already, or ``stock``). They are importable
    again afterwards, by anything that wants them."""
    if stock or "jsonschema" in sys.modules:
        return []
    hidden = [name for name in FORMAT_CHECKERS if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None   # type: ignore[assignment]  # the import system's "not here"
    try:
        import jsonschema  # noqa: F401
    finally:
        for name in hidden:
            if sys.modules.get(name, False) is None:
                del sys.modules[name]
    return hidden
