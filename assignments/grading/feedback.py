"""The feedback page, made for a whole class at the cost of a few submissions.

nbgrader's GenerateFeedback builds a new HTML exporter per submission: it compiles the
templates again, highlights and renders every cell again (most are the same teaching
text in every submission), then re-parses the whole page (CSS included) with
BeautifulSoup just to add ``alt`` and ``tabindex`` attributes. This exporter makes the
same page, keeping compiled templates and rendered cells for the whole process, and adds
those attributes without re-parsing. Configured as ``GenerateFeedback.exporter_class``.
"""
import functools
import re

from jinja2 import pass_context
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

NO_ALT = "No description has been provided for this image"
_IMG_WITHOUT_ALT = re.compile(r"<img(?![^>]*\balt=)", re.I)
_FOCUSABLE = re.compile(r'(<div\b[^>]*\bclass="[^"]*\b(?:jp-Cell-inputWrapper|jp-OutputArea-output)\b[^"]*")')
CACHE_SIZE = 4096   # rendered cells kept: the shared teaching text plus recent answers


def accessible(html):
    """What nbconvert's HTMLExporter does with BeautifulSoup: images get alternative text,
    cell inputs and outputs become focusable."""
    return _FOCUSABLE.sub(r'\1 tabindex="0"', _IMG_WITHOUT_ALT.sub(f'<img alt="{NO_ALT}"', html))


@functools.lru_cache(maxsize=None)
def _highlighter(lexer):
    return Highlight2HTML(pygments_lexer=lexer)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _highlight(lexer, source, language, magics_language):
    # of a cell's metadata, the highlighter reads only magics_language (the rest, such as
    # execution times, differs in every submission)
    metadata = {"magics_language": magics_language} if magics_language else None
    return _highlighter(lexer)(source, language, metadata)


class FeedbackExporter(HTMLExporter):
    _environments = {}   # one compiled Jinja environment per template set, for the process

    def _create_environment(self):
        key = (tuple(self.template_paths), self.template_extension, self.enable_async,
               repr(sorted(self.filters.items())), self.template_name)
        if key not in self._environments:
            self._environments[key] = super()._create_environment()
        return self._environments[key]

    @functools.lru_cache(maxsize=CACHE_SIZE)
    def _markdown(self, source):
        return super().markdown2html({}, source)

    @pass_context
    def markdown2html(self, context, source):
        # attached or embedded images belong to one notebook: nothing to share
        if self.embed_images or context.get("cell", {}).get("attachments"):
            return super().markdown2html(context, source)
        return self._markdown(source)

    def from_notebook_node(self, nb, resources=None, **kw):
        info = nb.metadata.get("language_info", {})
        lexer = info.get("pygments_lexer", info.get("name", None))

        def highlight_code(source, language=None, metadata=None):
            return _highlight(lexer, source, language, (metadata or {}).get("magics_language"))

        resources = self._init_resources(resources)
        self.register_filter("highlight_code", self.filters.get("highlight_code", highlight_code))
        self.register_filter("filter_data_type", WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources))
        html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        return accessible(html), resources
