"""Everything that relies on the internals of nbgrader, nbconvert, nbclient, jupyter_client,
IPython or jsonschema: faster or stricter versions of their steps, and code copied from them.

Rule (upstream/): a module here may rely on another package's internals, and says which;
``fingerprints.json`` records the pinned versions and a hash of every upstream body relied
on (``RELIED_ON``), and tests/test_rooms.py names what changed after an upgrade. Nothing
outside this room patches or copies upstream code, except the zygote's kernel patches
(shipped/zygote.py, fingerprinted here too).

One setting, ``Upstream.stock`` (which the course's nbgrader_config.py also sets from an
environment variable), puts nbgrader's own steps back in place of every piece: the same
grades, slower (docs/architecture.md).
"""
import os

from traitlets import Bool
from traitlets.config import Configurable

# Each replacement named by class path in nbgrader_config.py, and nbgrader's own piece.
REPLACEMENTS = {
    "assignments.grading.upstream.overwritecells.OverwriteCellsAtOnce": "nbgrader.preprocessors.OverwriteCells",
    "assignments.grading.upstream.overwritekernelspec.OverwriteKernelspecAtOnce":
        "nbgrader.preprocessors.OverwriteKernelspec",
    "assignments.grading.upstream.saveautogrades.SaveAutoGradesAtOnce": "nbgrader.preprocessors.SaveAutoGrades",
    "assignments.grading.upstream.getgrades.GetGradesAtOnce": "nbgrader.preprocessors.GetGrades",
    "assignments.grading.upstream.clearhiddentests.ClearHiddenTests": "nbgrader.preprocessors.ClearHiddenTests",
    "assignments.grading.upstream.exporters.AutogradeExporter": "nbconvert.exporters.NotebookExporter",
    "assignments.grading.upstream.feedback.FeedbackExporter": "nbconvert.exporters.HTMLExporter",
}
_LISTS = (("Autograde", "sanitize_preprocessors"), ("Autograde", "autograde_preprocessors"),
          ("GenerateFeedback", "preprocessors"))
_CLASSES = (("Autograde", "exporter_class"), ("GenerateFeedback", "exporter_class"))

# The upstream bodies this room (and the zygote) relies on: replaced, copied, overridden,
# skipped by a super(Parent, self) call, or patched. fingerprints.json holds their hashes.
RELIED_ON = {
    "nbclient.client.NotebookClient.async_execute_cell": "served_cells.py copies it",
    "nbclient.client.NotebookClient.output": "served_cells.py copies it",
    "nbclient.client.NotebookClient.process_message": "served_cells.py copies it",
    "nbclient.client.NotebookClient._cleanup_kernel": "judging/harness_kernel.py overrides it",
    "nbclient.client.NotebookClient.async_setup_kernel": "judging/harness_kernel.py relies on it",
    "nbconvert.preprocessors.execute.ExecutePreprocessor._check_assign_resources":
        "judging/judged_execute.py calls it",
    "nbconvert.preprocessors.execute.ExecutePreprocessor.preprocess": "judging/judged_execute.py replaces it",
    "nbformat.validator._get_schema_json": "served_cells.py compiles its schema",
    "nbformat.reader.reads": "exporters.py reads as it does",
    "nbconvert.exporters.exporter.Exporter.from_notebook_node": "exporters.py skips its copy",
    "nbconvert.exporters.notebook.NotebookExporter.from_notebook_node": "exporters.py replaces it",
    "nbformat.v4.nbjson.JSONWriter.writes": "notebook_json.py writes the text it writes",
    "nbformat.v4.rwbase.split_lines": "notebook_json.py's split_view splits what it splits",
    "nbformat.v4.rwbase._split_mimebundle": "notebook_json.py's split_view splits what it splits",
    "nbformat.v4.rwbase.strip_transient": "notebook_json.py's split_view leaves out what it strips",
    "json.encoder._make_iterencode": "notebook_json.py writes what it writes with indent and sorted keys",
    "nbconvert.exporters.html.HTMLExporter.from_notebook_node": "feedback.py replaces it",
    "nbconvert.exporters.html.HTMLExporter.markdown2html": "feedback.py replaces it",
    "nbconvert.exporters.templateexporter.TemplateExporter._create_environment": "feedback.py caches it",
    "nbconvert.exporters.templateexporter.TemplateExporter._template_paths": "feedback.py calls it",
    "jupyter_client.client.KernelClient._async_wait_for_ready": "kernel_client.py overrides it",
    "jupyter_client.client.KernelClient._context_default": "kernel_client.py calls it",
    "jupyter_client.manager.in_pending_state": "kernel_manager.py's settled does what it does, but for its sleep",
    "jupyter_client.manager.KernelManager._async_start_kernel": "kernel_manager.py calls it undecorated",
    "jupyter_client.manager.KernelManager._async_shutdown_kernel":
        "kernel_manager.py calls it undecorated, and skips the interrupt it sends before a kill",
    "jupyter_client.manager.KernelManager._async_interrupt_kernel": "kernel_manager.py skips it before a kill",
    "jupyter_client.channels.AsyncZMQSocketChannel._recv": "kernel_client.py's BoundedChannel replaces it",
    "jupyter_client.session.Session.deserialize": "kernel_client.py's read_bounded calls it on frames",
    "nbgrader.converters.autograde.Autograde.convert_single_notebook": "autograde.py replaces it",
    "nbgrader.converters.autograde.Autograde._init_preprocessors": "autograde.py replaces it",
    "nbgrader.converters.autograde.Autograde.init_assignment":
        "autograde.py does its checks and copies, without its rows, in a worker",
    "nbgrader.preprocessors.latesubmissions.AssignLatePenalties.preprocess":
        "run/record.py does what it does to a submission on time",
    "nbgrader.preprocessors.overwritecells.OverwriteCells.preprocess": "overwritecells.py skips it",
    "nbgrader.preprocessors.overwritecells.OverwriteCells.preprocess_cell":
        "overwritecells.py puts a release's hidden tests back before it",
    "nbgrader.preprocessors.clearhiddentests.ClearHiddenTests.preprocess_cell":
        "overwritecells.py calls it for a test cell's release form",
    "nbgrader.preprocessors.clearhiddentests.ClearHiddenTests._remove_hidden_test_region":
        "clearhiddentests.py keeps its result by the text and the delimiters it reads",
    "nbgrader.preprocessors.overwritekernelspec.OverwriteKernelspec.preprocess":
        "overwritekernelspec.py does what it does, the row read once per worker",
    "nbgrader.preprocessors.base.NbGraderPreprocessor": "clearhiddentests.py declares its display_data_priority again",
    "nbgrader.preprocessors.saveautogrades.SaveAutoGrades.preprocess": "saveautogrades.py skips it",
    "nbgrader.preprocessors.getgrades.GetGrades.preprocess": "getgrades.py skips it",
    "nbgrader.preprocessors.saveautogrades.SaveAutoGrades._add_score":
        "getgrades.py's GetGradesFromNotebook works out the score it saves; first_record.py runs it on stand-in rows",
    "nbgrader.preprocessors.saveautogrades.SaveAutoGrades._add_comment":
        "getgrades.py's GetGradesFromNotebook works out the comment it saves; first_record.py runs it on stand-in rows",
    "nbgrader.preprocessors.getgrades.GetGrades._get_score": "getgrades.py's _Scored answers what it asks",
    "nbgrader.preprocessors.getgrades.GetGrades._get_comment": "getgrades.py's _Scored answers what it asks",
    "nbgrader": "package.py registers the package without running its __init__.py",
    "jsonschema._format": "package.py hides the modules of its optional format checkers",
    "nbgrader.api.Gradebook.__init__": "speedups.py replaces it",
    "nbgrader.api.Gradebook.close": "speedups.py replaces it",
    "nbgrader.api.Gradebook.add_submission": "speedups.py replaces it; first_record.py writes its rows already scored",
    "nbgrader.api.Gradebook.update_or_create_student":
        "saveautogrades.py's one_transaction defers its commit (run/record.py)",
    "nbgrader.api.Gradebook.add_student": "saveautogrades.py's one_transaction defers its commit (run/record.py)",
    "nbgrader.api.Gradebook.update_or_create_submission":
        "saveautogrades.py's one_transaction defers its commit (run/record.py)",
    "nbgrader.api.get_alembic_version": "speedups.py replaces it",
    "nbgrader.plugins.export.CsvExportPlugin.export": "export.py writes what it writes",
    "nbgrader.exchange.default.exchange.Exchange.do_copy": "collect.py replaces it (keeps links as links)",
    "nbgrader.exchange.default.release_assignment.ExchangeReleaseAssignment.copy_files":
        "release.py rewrites what its do_copy copied",
    "nbgrader.nbgraderformat.common.BaseMetadataValidator.validate_cell": "speedups.py replaces its jsonschema",
    "pygments.lexer.RegexLexer.get_tokens_unprocessed": "highlighting.py tokenizes as it does",
    "pygments.lexer.RegexLexerMeta.__call__": "highlighting.py reads the _tokens it builds",
    "re._parser.parse": "highlighting.py's starts reads the tree it builds (re._constants' codes)",
    "ipykernel.ipkernel.IPythonKernel.do_execute": "shipped/harness.py's run_cell replies as it does",
    "ipykernel.iostream.OutStream.write": "shipped/harness.py's _flush reads the _buffers it writes to",
    "ipykernel.iostream.OutStream._rotate_buffers": "shipped/harness.py's _flush: empty _buffers, nothing to send",
    "ipykernel.iostream.OutStream.flush": "shipped/harness.py's _flush skips it when it would only wait",
    "ipykernel.iostream.IOPubThread.send_multipart": "shipped/harness.py's cell end is queued behind the outputs",
    "ipykernel.ipkernel._accepts_parameters": "shipped/zygote.py's signatures_once caches it",
    "IPython.core.interactiveshell._should_be_async": "shipped/zygote.py's quick_cells wraps it",
    "ipykernel.kernelapp.IPKernelApp.initialize": "shipped/zygote.py calls it on a parsed instance",
    "IPython.core.interactiveshell.InteractiveShell.transform_cell": "shipped/zygote.py wraps it",
    "IPython.core.inputtransformer2.TransformerManager.do_token_transforms": "shipped/zygote.py wraps it",
    "IPython.core.compilerop.CachingCompiler.ast_parse": "shipped/zygote.py's precompiled_cells wraps it",
    "stack_data.utils._pygmented_with_ranges":
        "shipped/zygote.py's frames_highlighted_once does what it does, with one lexer class",
    "IPython.core.interactiveshell.InteractiveShell.transform_ast": "shipped/zygote.py's precompiled_cells wraps it",
    "IPython.core.interactiveshell.InteractiveShell.run_ast_nodes":
        "shipped/zygote.py's precompile compiles each statement as it does",
    "IPython.core.interactiveshell.InteractiveShell.run_cell_async":
        "shipped/zygote.py's precompiled_cells expects it to parse, transform, then run the statements",
    "IPython.core.interactiveshell.InteractiveShell.__init__":
        "shipped/zygote.py's adopt_shell redoes what it reads from the process (prebuild_shell)",
    "ipykernel.zmqshell.ZMQInteractiveShell.init_environment": "shipped/zygote.py's adopt_shell redoes it",
    "ipykernel.ipkernel.IPythonKernel.__init__":
        "shipped/zygote.py's prebuild_shell makes the shell as it does; adopt_shell hands it over",
    "ipykernel.kernelapp.IPKernelApp.init_kernel": "shipped/zygote.py's adopt_shell wraps it",
    "IPython.core.history.HistoryManager.__init__": "shipped/zygote.py's adopt_shell resets its dir_hist",
    "traitlets.config.configurable.SingletonConfigurable.instance":
        "shipped/zygote.py's adopt_shell makes the zygote's shell the instance it gives",
    "traitlets.config.configurable.SingletonConfigurable._walk_mro":
        "shipped/zygote.py's adopt_shell records the instance on the classes it walks",
}


class Upstream(Configurable):
    """Which code runs the steps upstream/ replaces: this room's, or the stock packages'."""

    stock = Bool(False, help="Run nbgrader's, nbconvert's, nbclient's, jupyter_client's and "
                             "IPython's own code everywhere this course replaces or patches "
                             "theirs: the same grades, slower (upstream/__init__.py). Set by "
                             "stock() from nbgrader_config.py.").tag(config=True)


def is_stock(config):
    """Whether the run's configuration asks for stock nbgrader (``Upstream.stock``)."""
    return bool(Upstream(config=config).stock)


def stock(c):
    """Point the configuration ``c`` (nbgrader_config.py's) at nbgrader's own steps instead
    of this room's: every class path of REPLACEMENTS, nbclient's own cell execution,
    jupyter_client's own kernel client, kernels left as IPython makes them. The feedback
    page keeps the course's template (through HTMLExporter's public traits, for
    GenerateFeedback alone), which degrades to nbgrader's MathJax page."""
    from .. import TEMPLATES
    from .feedback import NBGRADER_TEMPLATES, TEMPLATE
    c.Upstream.stock = True
    for section, trait in _LISTS:
        if trait in c[section]:
            c[section][trait] = [REPLACEMENTS.get(str(p), p) for p in c[section][trait]]
    for section, trait in _CLASSES:
        if trait in c[section]:
            c[section][trait] = REPLACEMENTS.get(str(c[section][trait]), c[section][trait])
    c.GenerateFeedback.HTMLExporter.template_name = TEMPLATE
    c.GenerateFeedback.HTMLExporter.extra_template_basedirs = [TEMPLATES, NBGRADER_TEMPLATES]
    css = os.path.join(os.path.dirname(NBGRADER_TEMPLATES), "static", "node_modules", "bootstrap", "dist", "css")
    c.GenerateFeedback.HTMLExporter.extra_template_paths = [css, NBGRADER_TEMPLATES]   # as GenerateFeedback's, and ours
    c.JudgedExecute.serve_cells = False
    c.GradingKernelManager.client_factory = "jupyter_client.asynchronous.AsyncKernelClient"
    c.GradingKernelManager.patched_kernel = False
    return c
