# The course's nbgrader configuration. `python -m assignments ...` loads this file and then
# points the course directories at the run's own folders (see assignments/grading/run/course.py).
import os

c = get_config()  # noqa: F821

c.CourseDirectory.course_id = "rnn-step-by-step"
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", ".nbgrader"]

# Collect copies a submission from the exchange without following a symbolic link: a link a
# student left in the exchange stays a link, and the grader refuses that submission, naming it
# (assignments/grading/upstream/collect.py). Not a speed-up: stock mode keeps it too.
c.ExchangeFactory.collect = "assignments.grading.upstream.collect.LinkKeepingCollect"
# Release puts into the exchange what the students' kernel will write into each notebook's
# metadata when JupyterLab opens it (language_info): a fetched, untouched notebook then shows
# no unsaved changes. The release folder stays as generated (upstream/release.py).
c.ExchangeFactory.release_assignment = "assignments.grading.upstream.release.KernelInfoRelease"

# Stubs that replace the solution regions in the student version.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}

# generate_assignment (formgrader's Generate button, `python -m assignments release`) first
# refreshes what is generated in source/<id>/ (solutions, worked examples, expected outputs, the
# students' checks and their data), then, before nbgrader's own steps, draws the figures into
# the release notebook: any of them makes the same release (assignments/grading/authoring/release.py).
c.GenerateAssignment.pre_convert_hook = "assignments.grading.authoring.release.refresh_source_hook"
# (prepended to nbgrader's own list when GenerateAssignment reads it: this file imports no
# nbgrader, so that a grading run reads it before the heavy imports, see run/start.py)
c.GenerateAssignment.preprocessors.prepend(["assignments.grading.authoring.release.CourseRelease"])

# Autograde first puts back what a learner changed in the release's cells (nbgrader's own
# steps; OverwriteCells reads the gradebook in one query per table, OverwriteKernelspec once
# per worker).
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "assignments.grading.upstream.overwritekernelspec.OverwriteKernelspecAtOnce",
    "assignments.grading.upstream.overwritecells.OverwriteCellsAtOnce",
    "nbgrader.preprocessors.CheckCellMetadata",
]
# Then it runs the learner's cells in a kernel, but judges each graded test cell in the
# grading process (assignments/grading/judging/judged_execute.py) instead of executing its code.
# nbconvert's exporter, without copying each notebook three times or checking it as it is
# read and again as it is written (assignments/grading/upstream/exporters.py)
c.Autograde.exporter_class = "assignments.grading.upstream.exporters.AutogradeExporter"
c.Autograde.autograde_preprocessors = [
    "assignments.grading.judging.judged_execute.JudgedExecute",
    "nbgrader.preprocessors.LimitOutput",
    "assignments.grading.upstream.saveautogrades.SaveAutoGradesAtOnce",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.JudgedExecute.timeout = 60        # seconds for one of the learner's own cells
c.JudgedExecute.call_timeout = 30   # seconds for a graded function on all its hidden cases together
# What a kernel sends is bounded before it is parsed (parsing costs many times the size):
# a message part on any kernel channel (ZeroMQ refuses a larger one as it arrives, and the
# message is lost), and one line of a judged call's replies on the judge's socket.
c.GradingKernelClient.max_message_bytes = 8_000_000
c.JudgedExecute.max_reply_bytes = 4_000_000

# A wrong function is followed on the worked example to the line where its first wrong value is
# computed, and a small edit of the learner's own code that passes every hidden case is searched
# for, inside the learner's sandbox (docs/grading.md, "Where it goes wrong, and a repair"). The
# staff always see the edit (results.json); the learner's feedback says the line ("line"), also
# the quantity that line should compute ("quantity"), or also the edit ("edit").
c.Repair.show = "quantity"

# Restore deleted graded cells, so a deleted test cell still gets judged.
c.OverwriteCells.add_missing_cells = True

# Keep autograded notebooks readable when a submission prints a lot.
c.LimitOutput.max_lines = 200
c.LimitOutput.max_traceback = 50

# Feedback must never show hidden tests: nbgrader's feedback does not strip them by itself.
# The same page as nbgrader's, made without recompiling and re-rendering what every
# submission shares (assignments/grading/upstream/feedback.py).
c.GenerateFeedback.exporter_class = "assignments.grading.upstream.feedback.FeedbackExporter"
# its fixed words (scores, headings) in the notebook's language (docs/translation.md)
c.FeedbackExporter.words = "assignments.grading.contract.messages.page_words"
# nbconvert validates the whole notebook after each preprocessor (about ten times per
# submission); once, after the last, still catches a notebook a preprocessor broke
c.Exporter.optimistic_validation = True
c.GenerateFeedback.preprocessors = [
    "assignments.grading.upstream.getgrades.GetGradesAtOnce",
    # nbgrader's, taking the exporter's configuration (upstream/clearhiddentests.py)
    "assignments.grading.upstream.clearhiddentests.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

# nbgrader's, nbconvert's, nbclient's, jupyter_client's and IPython's own code in place of
# every faster piece above (assignments/grading/upstream/): the same grades, slower. For an
# upgrade of those packages that upstream/fingerprints.json does not know yet (pytest's
# tests/test_rooms.py says what changed). RNN_COURSE_STOCK_NBGRADER=1 sets it too.
STOCK_NBGRADER = os.environ.get("RNN_COURSE_STOCK_NBGRADER", "") == "1"
if STOCK_NBGRADER:
    from assignments.grading.upstream import stock
    stock(c)
