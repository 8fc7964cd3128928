"""Reusable grading machinery: run a submission in a kernel, judge its outputs outside it,
and drive nbgrader's autograde, feedback and export over a class."""
import sys

# Importing jsonschema (through nbformat) compiles rfc3987-syntax's IRI grammars: ~2.4 s of
# CPU per process, for a string format no notebook schema uses. jsonschema skips that
# format when the package cannot be imported (see benchmarks/grading.py for the effect).
if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)
