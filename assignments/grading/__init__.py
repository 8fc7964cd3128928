"""Reusable grading machinery: run a submission in a kernel, judge its outputs outside it,
and drive nbgrader's autograde, feedback and export over a class."""
