"""Building the course from its sources: the generated cells of a source notebook, the
data the students' checks run on, the release (through nbgrader's generate_assignment), the
pages listing the mistakes, the staff's checks of a release, submissions made as a learner
makes them. Rule: runs in the course staff's process, never on a learner's code."""
