"""Measures of the engine itself: where a submission's CPU goes (timings.csv, the benchmarks).

Rule: measures only. Nothing here is an input of a grade, and this room imports nothing else
of the engine."""
