"""The feedback page, made for a whole class at the cost of a few submissions.

nbgrader's GenerateFeedback builds a new HTML exporter per submission: it compiles the
templates again, highlights and renders every cell again (most are the same teaching
text in every submission), then re-parses the whole page (CSS included) with
BeautifulSoup just to add ``alt`` and ``tabindex`` attributes. This exporter makes the
same page, keeping compiled templates and rendered cells for the whole process, and adds
those attributes without re-parsing. Configured as ``GenerateFeedback.exporter_class``.

Two things differ from nbgrader's page, so that it works offline and says more: the math
is written as MathML when the page is made (nbconvert leaves ``$...$`` for MathJax, which
the page loads from a CDN: with no network a student sees raw TeX), and the summary at the
top names each graded function with its score (templates/judged_feedback/, built on
nbgrader's own feedback template).
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json).
"""
import functools
import hashlib
import html
import importlib
import json
import os
import re
import tempfile
from xml.etree import ElementTree

import nbformat
import nbgrader
from jinja2 import Environment, FileSystemBytecodeCache, pass_context
from latex2mathml.converter import convert as latex_to_mathml
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from traitlets import Unicode

from .. import TEMPLATES, project
from .exporters import ReadOnce

NO_ALT = "No description has been provided for this image"
_IMG_WITHOUT_ALT = re.compile(r"<img(?![^>]*\balt=)", re.I)
_FOCUSABLE = re.compile(r'(<div\b[^>]*\bclass="[^"]*\b(?:jp-Cell-inputWrapper|jp-OutputArea-output)\b[^"]*")')
COURSE_KEY = project("name").replace("-", "_")   # the notebook metadata's course key: its language there words the cells' headings
CACHE_SIZE = 4096   # rendered cells kept: the shared teaching text plus recent answers
TEMPLATE = "judged_feedback"
NBGRADER_TEMPLATES = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates")


MATHML_ELEMENTS = frozenset(
    "math mrow mi mo mn mtext ms mspace msup msub msubsup mfrac msqrt mroot mover munder munderover mtable mtr "
    "mtd mstyle mpadded mphantom menclose merror semantics annotation mmultiscripts mprescripts none".split())
_BARE_AMPERSAND = re.compile(r"&(?!#x?[0-9A-Fa-f]+;|[A-Za-z]+;)")


def _only_mathml(markup):
    """The converter's output if it is MathML and nothing else (it copies \\text{...} as it
    is, so a notebook could slip HTML in); None otherwise."""
    markup = _BARE_AMPERSAND.sub("&amp;", markup)
    try:
        tree = ElementTree.fromstring(markup)
    except ElementTree.ParseError:
        return None
    for element in tree.iter():
        if element.tag.rpartition("}")[2] not in MATHML_ELEMENTS:
            return None
        if any(name.lower().startswith("on") or "href" in name.lower() for name in element.attrib):
            return None
    return markup


def mathml(tex, display):
    """TeX as MathML, which browsers draw with no script; TeX that the converter cannot
    read (or that would not be pure MathML) stays readable as it was typed."""
    try:
        markup = _only_mathml(latex_to_mathml(tex, display="block" if display else "inline"))
    except Exception:  # the converter raises its own errors, and others on odd input
        markup = None
    return markup or f'<code class="tex">{html.escape(tex)}</code>'


class MathMLRenderer(IPythonRenderer):
    """nbconvert's Markdown renderer, except that math becomes MathML instead of being left
    between dollars for MathJax."""

    def block_math(self, body):
        return mathml(body, True)

    def inline_math(self, body):
        return mathml(body, False)

    def latex_environment(self, name, body):
        return mathml(f"\\begin{{{name}}}{body}\\end{{{name}}}", True)


def math_is_mathml(text):
    """A filter whose presence tells the template that the exporter's Markdown renderer
    writes math as MathML (mathjax.html.j2 then adds no MathJax script)."""
    return text


def use_course_page(exporter):
    """Point an HTML exporter at this course's feedback template (nbgrader's, extended),
    with its math written as MathML (by MathMLRenderer)."""
    exporter.filters = {**exporter.filters, "math_is_mathml": math_is_mathml}
    exporter.extra_template_basedirs = [TEMPLATES, NBGRADER_TEMPLATES]
    exporter.extra_template_paths = [*exporter.extra_template_paths, NBGRADER_TEMPLATES]
    exporter.template_name = TEMPLATE
    exporter.template_paths = exporter._template_paths()


def accessible(html):
    """What nbconvert's HTMLExporter does with BeautifulSoup: images get alternative text,
    cell inputs and outputs become focusable."""
    return _FOCUSABLE.sub(r'\1 tabindex="0"', _IMG_WITHOUT_ALT.sub(f'<img alt="{NO_ALT}"', html))


@functools.lru_cache(maxsize=None)
def _highlighter(lexer):
    return Highlight2HTML(pygments_lexer=lexer)


# IPython's lexer is Python's with rules for IPython's own syntax (magics, shell escapes,
# help) tried first at every token, and each of those rules needs one of these characters.
# Code with none of them gets the same tokens from Python's lexer, so the same HTML, in
# half the time: most of a feedback page's cost is highlighting the learner's answers.
IPYTHON_SYNTAX = re.compile(r"[%!?]")


@functools.lru_cache(maxsize=None)
def _python_highlighter(language):
    """Pygments' Python lexer (its tokens, quicker: highlighting.py) and the formatter
    nbconvert makes for ``language``: made once (the formatter builds its style sheet as it
    is made), reused for every cell."""
    from pygments.formatters import HtmlFormatter

    from .highlighting import QuickPythonLexer  # Python's lexer, one pattern per state
    return QuickPythonLexer(), HtmlFormatter(cssclass=html.escape(f" highlight hl-{language}"))


def _python_highlight(source, language):
    """What nbconvert's Highlight2HTML draws for ``language`` (ipython3), lexed as Python."""
    from pygments import highlight
    return highlight(source or " ", *_python_highlighter(language))


@functools.lru_cache(maxsize=CACHE_SIZE)
def _highlight(lexer, source, language, magics_language):
    # of a cell's metadata, the highlighter reads only magics_language (the rest, such as
    # execution times, differs in every submission)
    if (language or lexer) == "ipython3" and not magics_language and not IPYTHON_SYNTAX.search(source):
        return _python_highlight(source, "ipython3")
    metadata = {"magics_language": magics_language} if magics_language else None
    return _highlighter(lexer)(source, language, metadata)


# A cell's HTML is made from the cell and these few switches of the page (nbconvert's
# templates read nothing else while they draw one); outputs drawn with a fresh uuid4 each
# time are never shared.
PAGE_SWITCHES = ("global_content_filter", "should_sanitize_html", "should_not_encode_svg", "raw_mimetypes",
                 "output_mimetype")
UNSHARED_OUTPUTS = ("application/javascript", "application/vnd.jupyter.widget-view+json")
MAX_RENDERED_BYTES = 64 * 2**20
DIGESTS_KEPT = 4096   # cells' texts whose digest one RenderedCells remembers; then it starts again


class RenderedCells:
    """The HTML of the cells drawn so far, by what each was drawn from (``key``), for the
    whole process: most of a class's cells are the same teaching text and the same results
    in every submission, so only a learner's own cells are drawn again (the page's template,
    judged_feedback/index.html.j2, asks here first). The oldest go past MAX_RENDERED_BYTES.

    With a ``folder``, the cells every submission shares (``lasting``) are also kept there,
    one file per key, for the next process: a rerun that grades one late submission then
    draws only that learner's own cells, instead of the whole teaching text again (most of
    a first page's second). The folder's name must change with whatever else a cell's HTML
    is drawn from (the templates, the page's code, the versions in ``DRAWN_BY``): the grading
    run names it after them (seeding.seeded). Writes are atomic; a folder that cannot be
    read or written only means drawing again."""

    def __init__(self, max_bytes=MAX_RENDERED_BYTES, folder=None):
        self.max_bytes, self.size, self.html = max_bytes, 0, {}
        self.folder, self.lasting, self.shared_code = folder, set(), set()
        self._digests = {}

    def key(self, cell, resources, nb):
        """A digest of all that the cell's HTML is drawn from, or None: draw it afresh (also
        when the page embeds images, read from the notebook's own folder)."""
        if not resources.get("share_cells") or cell.get("attachments"):
            return None
        if any(kind in output.get("data", {}) for output in cell.get("outputs", ()) for kind in UNSHARED_OUTPUTS):
            return None
        # of its metadata, the execution times differ in every submission and are not drawn; its
        # text stands in the key as its own digest (``source_digest``)
        drawn = dict(cell, metadata={k: v for k, v in cell.get("metadata", {}).items() if k != "execution"})
        if isinstance(drawn.get("source"), str):
            drawn["source"] = self.source_digest(drawn["source"])
        try:
            text = json.dumps([drawn, [resources.get(k) for k in PAGE_SWITCHES], nb.metadata.get("language_info"),
                               nb.metadata.get("widgets"), nb.metadata.get(COURSE_KEY)], sort_keys=True)
        except (TypeError, ValueError):
            return None
        key = hashlib.sha256(text.encode()).hexdigest()
        if self.folder and self.lasts(cell):
            self.lasting.add(key)
        if self.folder and cell.get("cell_type") == "code" and not self._answer(cell):
            self.shared_code.add(cell.get("source", ""))   # its outputs differ, its code does not
        return key

    def source_digest(self, source):
        """A cell's text as a SHA-256 digest, worked out once per text for the process: the
        teaching text, some sixty kilobytes of a page with its figures, is the same in every
        submission, and writing it into each cell's key as JSON was most of the keys' cost."""
        digest = self._digests.get(source)
        if digest is None:
            if len(self._digests) >= DIGESTS_KEPT:
                self._digests.clear()
            digest = self._digests[source] = "sha256:" + hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
        return digest

    @staticmethod
    def _answer(cell):
        return bool(cell.get("metadata", {}).get("nbgrader", {}).get("solution"))

    def highlighted(self, lexer, source, language, magics_language):
        """``_highlight``'s HTML of a cell's code; for the code every submission shares (a cell
        that is no learner's answer, whatever its outputs), also kept in the folder, so that
        the next process lexes only the learner's own code."""
        if source not in self.shared_code:
            return _highlight(lexer, source, language, magics_language)
        name = "code-" + hashlib.sha256(json.dumps([lexer, source, language, magics_language]).encode()).hexdigest()
        try:
            with open(os.path.join(self.folder, name + ".html"), encoding="utf-8") as f:
                return f.read()
        except OSError:
            pass
        return self._write(name, _highlight(lexer, source, language, magics_language))

    @classmethod
    def lasts(cls, cell):
        """Whether a cell is kept in the folder: Markdown, and code with no outputs, that is no
        answer cell. Those are the assignment's own text, the same in every submission (and the
        few cells a learner adds). Answers and outputs differ from learner to learner: kept on
        disk, they would only pile up. Keys are digests of the whole cell, so a learner's cell
        can only ever stand for itself."""
        return not cls._answer(cell) and (cell.get("cell_type") == "markdown" or not cell.get("outputs"))

    def get(self, key):
        html = self.html.get(key)
        if html is None and key in self.lasting:
            try:
                with open(os.path.join(self.folder, key + ".html"), encoding="utf-8") as f:
                    html = self._keep(key, f.read())
            except OSError:
                return None
        return html

    def remember(self, key, html):
        """Remember a cell's HTML, and give it back."""
        if key in self.lasting:
            self._write(key, html)
        return self._keep(key, html)

    def _write(self, name, html):
        """Keep ``html`` in the folder as ``name``.html (atomically; not at all if it cannot)."""
        try:
            os.makedirs(self.folder, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=self.folder, suffix=".part",
                                             delete=False) as f:
                f.write(html)
            os.replace(f.name, os.path.join(self.folder, name + ".html"))
        except OSError:
            pass
        return html

    def _keep(self, key, html):
        if len(html) <= self.max_bytes // 16:
            self.html[key] = html
            self.size += len(html)
            while self.size > self.max_bytes:
                self.size -= len(self.html.pop(next(iter(self.html))))
        return html


# The packages a cell's HTML is drawn by, besides this engine: their versions name the folder
# a RenderedCells keeps cells in.
DRAWN_BY = ("nbconvert", "mistune", "pygments", "latex2mathml", "jinja2", "nbgrader", "bleach", "nbformat")


@functools.cache
def drawn_by():
    """A short digest of the versions of DRAWN_BY's packages."""
    from importlib.metadata import PackageNotFoundError, version

    def found(name):
        try:
            return version(name)
        except PackageNotFoundError:
            return ""
    return hashlib.sha256(" ".join(f"{n}={found(n)}" for n in DRAWN_BY).encode()).hexdigest()[:16]


def page_words(function):
    """The template's ``say(template, **fields)``: ``function`` given the page's notebook's metadata."""
    @pass_context
    def say(context, template, **fields):
        nb = context.get("nb")
        return function(nb.metadata if nb is not None else {}, template, **fields)
    return say


def render_markdown(source, attachments, embed_images, path, anchor_link_text, exclude_anchor_links, lexer_options):
    """What HTMLExporter.markdown2html draws, with MathMLRenderer as the renderer."""
    renderer = MathMLRenderer(escape=False, attachments=attachments, embed_images=embed_images, path=path,
                              anchor_link_text=anchor_link_text, exclude_anchor_links=exclude_anchor_links,
                              **lexer_options)
    return MarkdownWithMath(renderer=renderer).render(source)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _shared_markdown(source, anchor_link_text, exclude_anchor_links, lexer_options):
    """Markdown with no images of its own, drawn once per process for every page."""
    return render_markdown(source, {}, False, "", anchor_link_text, exclude_anchor_links, json.loads(lexer_options))


def english(metadata, template, **fields):
    """The page's words as the template says them: English, whatever the notebook's language."""
    return template.format(**fields) if fields else template


@functools.lru_cache(maxsize=None)
def words_function(name):
    """The function a dotted ``name`` names (``FeedbackExporter.words``); ``english`` for ""."""
    if not name:
        return english
    module, _, attribute = name.rpartition(".")
    return getattr(importlib.import_module(module), attribute)


class FeedbackExporter(ReadOnce, HTMLExporter):
    _environments: dict[tuple[object, ...], Environment] = {}   # one compiled Jinja environment per template set, for the process

    cache_dir = Unicode("", help="A folder where the page's compiled templates and the cells every "
                                 "submission shares are kept for later processes (RenderedCells); "
                                 "empty: kept for the process only. The grading run sets it to a "
                                 "folder of its cache named after the engine's code and configuration.").tag(config=True)

    words = Unicode("", help="The function (a dotted name) that says the page's fixed words in the "
                             "notebook's language: f(notebook metadata, template, **fields) -> text. "
                             "The page's template calls it as say(\"...\"); by default they stay "
                             "English.").tag(config=True)

    def __init__(self, config=None, **kw):
        super().__init__(config=config, **kw)
        use_course_page(self)

    def _create_environment(self):
        key = (tuple(self.template_paths), self.template_extension, self.enable_async,
               repr(sorted(self.filters.items())), self.template_name, self.words, self.cache_dir)
        if key not in self._environments:
            environment = super()._create_environment()
            folder = None
            if self.cache_dir:
                folder = os.path.join(self.cache_dir, "cells-" + drawn_by())
                try:   # Jinja's own cache of compiled templates, checked against each template's text
                    os.makedirs(os.path.join(self.cache_dir, "templates"), exist_ok=True)
                    environment.bytecode_cache = FileSystemBytecodeCache(os.path.join(self.cache_dir, "templates"))
                except OSError:
                    pass
            cells = RenderedCells(folder=folder)
            environment.rendered_cells = cells   # for from_notebook_node's highlighter
            environment.globals.update(cell_key=cells.key, drawn_cell=cells.get, remember_cell=cells.remember,
                                       say=page_words(words_function(self.words)))
            self._environments[key] = environment
        return self._environments[key]

    def _render_markdown(self, context, source):
        return render_markdown(source, context.get("cell", {}).get("attachments", {}), self.embed_images,
                               context.get("resources", {}).get("metadata", {}).get("path", ""),
                               self.anchor_link_text, self.exclude_anchor_links, self.lexer_options)

    @pass_context
    def markdown2html(self, context, source):
        # attached or embedded images belong to one notebook: nothing to share
        if self.embed_images or context.get("cell", {}).get("attachments"):
            return self._render_markdown(context, source)
        return _shared_markdown(source, self.anchor_link_text, self.exclude_anchor_links,
                                json.dumps(self.lexer_options, sort_keys=True))

    def from_notebook_node(self, nb, resources=None, **kw):
        info = nb.metadata.get("language_info", {})
        lexer = info.get("pygments_lexer", info.get("name", None))

        cells = getattr(self.environment, "rendered_cells", None)

        def highlight_code(source, language=None, metadata=None):
            magics = (metadata or {}).get("magics_language")
            if cells is not None:
                return cells.highlighted(lexer, source, language, magics)
            return _highlight(lexer, source, language, magics)

        resources = self._init_resources(resources)
        resources["share_cells"] = not self.embed_images
        self.register_filter("highlight_code", self.filters.get("highlight_code", highlight_code))
        self.register_filter("filter_data_type", WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources))
        html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        return accessible(html), resources


def warm(config, text, notebook):
    """Draw the page of ``text`` (a submission's bytes, not yet run: the class's teaching
    text and unchanged code) and throw it away. The grading process does this before it
    forks its workers, which then inherit the compiled templates and the drawn Markdown and
    code instead of each paying for them on its first page (about a second of CPU per
    worker). Anything it cannot read or draw, None included, it leaves alone."""
    try:
        nb = nbformat.reads(text, as_version=4)
        # highlighted as the graded pages will be: with the lexer the grading kernel (ipykernel) names
        nb.metadata.setdefault("language_info", {}).setdefault("pygments_lexer", "ipython3")
        for cell in nb.cells:
            grading = cell.metadata.get("nbgrader", {})
            if grading.get("grade") or grading.get("task"):
                grading.update(score=0.0, points=grading.get("points", 0.0))
        resources = {"nbgrader": {"notebook": notebook, "score": 0.0, "max_score": 0.0, "late_penalty": 0.0}}
        from nbgrader.converters import GenerateFeedback
        converter = GenerateFeedback(config=config)   # its exporter, made as its start() makes it
        converter.exporter_class(parent=converter, config=converter.config).from_notebook_node(nb, resources)
    except Exception:   # only an optimisation: each worker draws its first page in full
        pass
