"""nbgrader's ClearHiddenTests, accepting the configuration its exporter hands it.

An nbconvert exporter configures every preprocessor it runs with its own defaults, among
them ``NbConvertBase.display_data_priority`` (the HTML exporter's order of output types).
nbconvert's preprocessors take it; nbgrader's base preprocessor declares the same trait
again without ``config=True``, so traitlets warns "Config option display_data_priority not
recognized by ClearHiddenTests" each time Generate Feedback makes one (nbgrader's GetGrades
declares it configurable, and is silent). This one declares it configurable, as nbconvert
does; the trait is unused by clearing hidden tests, which stays nbgrader's own code.
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json).
"""
from nbconvert.utils.base import NbConvertBase
from nbgrader.preprocessors import ClearHiddenTests as NbgraderClearHiddenTests
from traitlets import List


class ClearHiddenTests(NbgraderClearHiddenTests):
    """nbgrader's ClearHiddenTests whose ``display_data_priority`` takes configuration."""

    display_data_priority = List(NbConvertBase.display_data_priority.default_value).tag(config=True)
