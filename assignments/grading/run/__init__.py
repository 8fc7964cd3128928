"""Grading a class: staging submissions, dispatching them to workers (this process, a local
pool, Dask), each worker's autograde and feedback, recording grades in the class's
gradebook, and leaving the course folder as nbgrader's commands leave it. Rule: only the
grading process writes the class's gradebook and folders."""
