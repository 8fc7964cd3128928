"""Code that leaves the grading process as text: into every release (student_checks.py, as
<id>_checks.py, and ../../shared/utils.py, as the notebook's <id>_utils.py, which follows
the same rule) or into the sandbox (harness.py, zygote.py). Rule: the standard library and
numpy only, nothing of this package: a release has neither, and the sandbox shows neither
(tests/test_rooms.py imports each module with everything else blocked)."""
