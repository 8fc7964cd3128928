"""nbgrader's ClearHiddenTests, accepting the configuration its exporter hands it.

An nbconvert exporter configures every preprocessor it runs with its own defaults, among
them ``NbConvertBase.display_data_priority`` (the HTML exporter's order of output types).
nbconvert's preprocessors take it; nbgrader's base preprocessor declares the same trait
again without ``config=True``, so traitlets warns "Config option display_data_priority not
recognized by ClearHiddenTests" each time Generate Feedback makes one (nbgrader's GetGrades
declares it configurable, and is silent). This one declares it configurable, as nbconvert
does; the trait is unused by clearing hidden tests, which stays nbgrader's own code.

A cell's text without its hidden tests depends on nothing but the text and the two delimiters,
and most cells are the same in every submission (a page clears all of them, some sixty): each
text's result is kept for the process, and worked out by nbgrader's own code.
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json).
"""
from nbconvert.utils.base import NbConvertBase
from nbgrader.preprocessors import ClearHiddenTests as NbgraderClearHiddenTests
from traitlets import List

CLEARED_KEPT = 4096   # cells' texts whose cleared form is kept (the teaching text, a few classes' answers)
_CLEARED: dict = {}   # (source, begin delimiter, end delimiter) -> (cleared source, removed) or the error's text


class ClearHiddenTests(NbgraderClearHiddenTests):
    """nbgrader's ClearHiddenTests whose ``display_data_priority`` takes configuration, and
    whose result for a cell's text is kept (``_CLEARED``)."""

    display_data_priority = List(NbConvertBase.display_data_priority.default_value).tag(config=True)

    def _remove_hidden_test_region(self, cell):
        if type(cell.get("source")) is not str:
            return super()._remove_hidden_test_region(cell)
        key = (cell.source, self.begin_test_delimeter, self.end_test_delimeter)
        found = _CLEARED.get(key)
        if found is None:
            if len(_CLEARED) >= CLEARED_KEPT:
                _CLEARED.clear()
            try:
                removed = super()._remove_hidden_test_region(cell)
                found = _CLEARED[key] = (cell.source, removed)
            except RuntimeError as exc:   # nested or unclosed delimiters: refused again each time
                _CLEARED[key] = str(exc)
                raise
        if isinstance(found, str):
            raise RuntimeError(found)
        cell.source = found[0]
        return found[1]
