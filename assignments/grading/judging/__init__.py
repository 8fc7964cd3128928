"""Judging a submission's functions: the judge (in the grading process), its channel to the
harness in the kernel, and JudgedExecute, the nbgrader preprocessor that ties the judge to
a served-cells executor. Rule: what comes back from a kernel is data to check, never code;
expected outputs never leave the grading process."""
