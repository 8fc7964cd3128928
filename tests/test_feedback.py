"""The feedback page (assignments/grading/upstream/feedback.py and templates/judged_feedback/): math
drawn with no network, and a summary that names each function with its score."""
import json
import os
import re

import nbformat
import nbgrader
import pytest
from helpers import REPO, STOCK_MODE, chromium, course_pieces, screenshot_ink
from nbconvert.exporters import HTMLExporter
from traitlets.config import Config

from assignments.grading.upstream import feedback

# After the page has been laid out: how many <math> elements, how many Chromium drew as
# MathML with a box of their own, and whether TeX is left in the text a student reads.
PROBE = """<script>
addEventListener("load", () => {
  const all = [...document.querySelectorAll("math")];
  const drawn = all.filter(m => m instanceof MathMLElement && m.getBoundingClientRect().width > 0
                                && m.getBoundingClientRect().height > 0);
  const text = document.body.innerText;
  document.body.setAttribute("data-probe", JSON.stringify({
    math: all.length, drawn: drawn.length, dollars: text.includes("$$"),
    tex: /\\\\(tanh|odot|langle|frac|hat|sigma)\\b/.test(text)}));
});
</script>"""


@pytest.fixture(scope="module")
def pages(sample_class, tmp_path_factory):
    """The folder of the sample class's feedback pages drawn by FeedbackExporter: the class's
    own, or in a stock-mode run (whose pages are nbconvert's) drawn again from its graded
    notebooks as the course's config draws them."""
    if not STOCK_MODE:
        return os.path.join(sample_class["out"], "feedback")
    from nbgrader.converters import GenerateFeedback

    from assignments.grading.run.course import coursedir, load_config
    folder = str(tmp_path_factory.mktemp("our_feedback"))
    with course_pieces():
        config = load_config(sample_class["out"], None, autograded_directory="autograded", feedback_directory=folder)
    for student in sorted(os.listdir(os.path.join(sample_class["out"], "autograded"))):
        GenerateFeedback(coursedir=coursedir(config, "rnn_step_by_step", student), config=config).start()
    return folder


def page(folder, student):
    path = os.path.join(folder, student, "rnn_step_by_step", "rnn_step_by_step.html")
    with open(path, encoding="utf-8") as f:
        return path, f.read()


def test_the_class_pages_are_nbconverts_in_stock_mode_alone(sample_class):
    """A stock-mode run (RNN_COURSE_STOCK_NBGRADER=1) draws the class's pages with nbconvert's
    own exporter, which leaves the math to MathJax; a normal run, with FeedbackExporter."""
    _, html = page(os.path.join(sample_class["out"], "feedback"), "ben")
    assert ("MathJax" in html) is STOCK_MODE and ('<math xmlns="http://www.w3.org/1998/Math/MathML"' in html) is not STOCK_MODE


def probe(tmp_path, html, name):
    """Open ``html`` from disk in Chromium with no network, and read what PROBE saw."""
    path = tmp_path / f"{name}.html"
    path.write_text(html.replace("</body>", PROBE + "</body>", 1), encoding="utf-8")
    dom = chromium(tmp_path, "--virtual-time-budget=10000", "--dump-dom", "file://" + str(path))
    found = re.search(r"data-probe=\"([^\"]*)\"", dom)
    assert found, "the probe did not run"
    return json.loads(found.group(1).replace("&quot;", '"'))


def test_page_loads_nothing_and_keeps_no_tex(pages, assignment):
    _, html = page(pages, "ben")
    assert "<script" not in html and "MathJax" not in html and "cdnjs" not in html
    assert not re.search(r'(src|href)="(https?:)?//', html) and "<link" not in html
    assert "$$" not in html
    release = nbformat.read(os.path.join(REPO, "release", assignment.id, assignment.notebook + ".ipynb"), as_version=4)
    displayed = sum(c.source.count("$$") // 2 for c in release.cells if c.cell_type == "markdown")
    assert html.count('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block"') >= displayed > 5


@pytest.mark.parametrize("drawn_by", ["the class's run", "FeedbackExporter"])
def test_summary_names_each_function_with_its_score(sample_class, pages, drawn_by):
    folder = pages if drawn_by == "FeedbackExporter" else os.path.join(sample_class["out"], "feedback")
    for s in sample_class["results"]["submissions"]:
        if s["status"] == "unreadable":
            continue
        _, html = page(folder, s["student"])
        toc = re.search(r'<div id="toc">(.*?)</div>', html, re.S).group(1)
        assert "Test cell" not in toc
        items = re.findall(r"<li>(.*?)</li>", toc, re.S)
        assert len(items) == len(s["exercises"])
        for item, e in zip(items, s["exercises"]):
            assert f'<a href="#test_{e["id"]}"><code>{e["id"]}</code></a> (Score: {round(e["score"], 2)} / ' \
                   f'{round(e["max_score"], 2)})' in item, item
            for code in e["diagnoses"]:
                assert f"<code>{code}</code>" in item


@pytest.mark.browser
def test_math_is_drawn_offline_in_chromium(pages, tmp_path):
    path, html = page(pages, "chloe")
    seen = probe(tmp_path, html, "ours")
    print(f"\n[measure] feedback page offline: {seen['drawn']} of {seen['math']} formulas drawn as MathML")
    assert seen["math"] > 20 and seen["drawn"] == seen["math"] and not seen["dollars"] and not seen["tex"]
    shot = tmp_path / "feedback.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1000,2400", "file://" + path)
    ink, colours = screenshot_ink(shot)
    assert ink > 0.03 and colours > 20


@pytest.mark.browser
def test_the_probe_sees_raw_tex_on_a_page_that_needs_mathjax(sample_class, tmp_path):
    """The same notebook through nbconvert's stock exporter, which leaves the math to MathJax
    from a CDN: offline, the student reads TeX. (So the check above can fail.)"""
    nb = nbformat.read(os.path.join(sample_class["out"], "autograded", "chloe", "rnn_step_by_step",
                                    "rnn_step_by_step.ipynb"), as_version=4)
    stock, _ = HTMLExporter(template_name="classic").from_notebook_node(nb)
    seen = probe(tmp_path, stock, "stock")
    assert seen["math"] == 0 and seen["dollars"] and seen["tex"]


def test_tex_that_is_not_pure_mathml_stays_as_typed():
    assert feedback.mathml(r"\frac{1}{", True) == r'<code class="tex">\frac{1}{</code>'
    sneaky = feedback.mathml(r"\text{<img src=x onerror=alert(1)/>}", False)
    assert sneaky.startswith('<code class="tex">') and "<img" not in sneaky
    assert feedback.mathml(r"\tilde{c}_t \odot i_t", False).startswith("<math ")


def test_cells_drawn_once_give_the_same_pages(sample_class, monkeypatch):
    """Every page comes out byte for byte as when each cell is drawn afresh, though the
    pages share the cells they have in common; a cell drawn with a fresh id each time (a
    javascript output) is never shared, nor is any cell of a page that embeds images."""
    notebooks = []
    for s in sample_class["results"]["submissions"]:
        path = os.path.join(sample_class["out"], "autograded", s["student"], "rnn_step_by_step", "rnn_step_by_step.ipynb")
        if os.path.exists(path):
            notebooks.append(nbformat.read(path, as_version=4))
            for cell in notebooks[-1].cells:   # what nbgrader's GetGrades adds before the page is drawn
                grading = cell.metadata.get("nbgrader", {})
                if grading.get("grade") or grading.get("task"):
                    grading.update(score=grading["points"] / 2, points=grading["points"])
                if grading.get("solution") or grading.get("task"):
                    grading["comment"] = None
    assert len(notebooks) >= 5
    scripted = nbformat.v4.new_code_cell("display(Javascript('1'))", outputs=[nbformat.v4.new_output(
        "display_data", data={"application/javascript": "1", "text/plain": "<Javascript>"})])
    notebooks[0].cells.append(scripted)
    notebooks[1].cells.append(scripted)

    config = Config()   # as nbgrader's GenerateFeedback configures the exporter
    config.HTMLExporter.extra_template_paths = [os.path.join(
        os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "static", "node_modules", "bootstrap", "dist", "css")]

    def pages(**traits):
        feedback.FeedbackExporter._environments.clear()   # a new process's: nothing drawn yet
        exporter = feedback.FeedbackExporter(config=config, **traits)
        resources = {"nbgrader": {"notebook": "rnn_step_by_step", "score": 1.0, "max_score": 2.0, "late_penalty": 0}}
        return [exporter.from_notebook_node(nb, resources=json.loads(json.dumps(resources)))[0] for nb in notebooks]

    drawn = []
    remember = feedback.RenderedCells.remember
    monkeypatch.setattr(feedback.RenderedCells, "remember", lambda self, key, html: drawn.append(key) or remember(self, key, html))
    shared = pages()
    cells = sum(len(nb.cells) for nb in notebooks)
    assert len(drawn) < cells / 2, (len(drawn), cells)   # most were shared
    uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    with monkeypatch.context() as m:
        m.setattr(feedback.RenderedCells, "key", staticmethod(lambda *a: None))
        assert [uuid.sub("<id>", p) for p in pages()] == [uuid.sub("<id>", p) for p in shared]
    ids = re.findall(r'<div id="([0-9a-f-]{36})" class="output_subarea output_javascript', shared[0] + shared[1])
    assert len(ids) == 2 and ids[0] != ids[1]
    drawn.clear()
    pages(embed_images=True)
    assert drawn == []


def test_a_cells_key_stands_for_its_whole_text(monkeypatch):
    """Keys name a cell's text by its digest: the same text in another notebook's cell (a new
    object) gets the same key, any change of a character another, also once the digests kept
    were forgotten."""
    monkeypatch.setattr(feedback, "DIGESTS_KEPT", 2)
    cells = feedback.RenderedCells()
    nb = nbformat.v4.new_notebook()
    resources = {"share_cells": True}
    text = "# Part 1\n" + "<svg>" + "x" * 50000 + "</svg>\n"

    def key(source):
        return cells.key(nbformat.v4.new_markdown_cell("".join(list(source)), id="same"), resources, nb)
    first = key(text)
    assert key(text) == first
    others = {key(text[:-2] + "y\n"), key(text + " "), key("# Part 1\n"), key("é\ud800")}
    assert len(others) == 4 and first not in others
    assert key(text) == first   # the digests were forgotten meanwhile: worked out again, the same


def _code_sources():
    """Code written by others and by us: the sample class's cells, learners' fixtures and the
    opening of each of the course's own Python files (their whole text is lexed in
    tests/test_highlighting.py), plus texts that lean on the lexer's corners."""
    sources = []
    for root, _, files in os.walk(os.path.join(REPO, "tests", "fixtures")):
        sources += [open(os.path.join(root, f), encoding="utf-8").read() for f in files if f.endswith(".py")]
    for root, _, files in os.walk(os.path.join(REPO, "assignments")):
        sources += [open(os.path.join(root, f), encoding="utf-8").read()[:2500] for f in files if f.endswith(".py")]
    for root, _, files in os.walk(os.path.join(REPO, "release")):
        for f in files:
            if f.endswith(".ipynb"):
                nb = nbformat.read(os.path.join(root, f), as_version=4)
                sources += [c.source for c in nb.cells if c.cell_type == "code"]
    sources += ['x = """a\n%matplotlib inline\n"""\nprint(f"{x!r:>10}")\n', "", "   \n", "a = b != c\n",
                "ls -la\n", "%timeit f()\n", "np.sum?\n", "!pip list\n", "y = x % 3\n", "@dec\ndef f(*a, **k):\n  yield\n",
                "s = 'unterminated\n", 'b"\\xff" rb"\\d" u"é"\n', "async def f():\n    await g()\n", "1_000.5e-3j\n"]
    return sources


def test_python_lexer_draws_what_ipythons_draws_when_no_ipython_syntax():
    """feedback._highlight lexes code without IPython's syntax as Python: the HTML must be
    nbconvert's own, byte for byte, on code written by learners and by us."""
    stock = feedback.Highlight2HTML(pygments_lexer="ipython3")
    sources = _code_sources()
    shortcut = [s for s in sources if not feedback.IPYTHON_SYNTAX.search(s)]
    assert len(shortcut) > 50 and len(shortcut) < len(sources)
    for source in sources:
        assert feedback._highlight.__wrapped__("ipython3", source, None, None) == stock(source), source[:200]
    # a cell whose magics_language names another language keeps nbconvert's path
    assert feedback._highlight.__wrapped__("ipython3", "x = 1\n", None, "bash") == stock("x = 1\n", None, {"magics_language": "bash"})


def test_warm_draws_a_submissions_teaching_text_once_and_never_raises(tmp_path, monkeypatch):
    """feedback.warm, run by the grading process before it forks its workers, leaves the
    Markdown and the code of a submission drawn (as graded pages will ask for them), and
    shrugs at a notebook it cannot read."""
    from assignments.grading.run.course import load_config
    with course_pieces():   # FeedbackExporter, even in stock mode (nbconvert's exporter keeps no cache)
        config = load_config(str(tmp_path), None)
    with open(os.path.join(REPO, "release", "rnn_step_by_step", "rnn_step_by_step.ipynb"), "rb") as f:
        text = f.read()
    nb = nbformat.reads(text, as_version=4)
    monkeypatch.setattr(feedback.FeedbackExporter, "_environments", {})   # no cell drawn by earlier tests
    feedback._shared_markdown.cache_clear()
    feedback._highlight.cache_clear()
    feedback.warm(config, text, "rnn_step_by_step")
    markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
    assert feedback._shared_markdown.cache_info().currsize == len(set(markdown))
    code = {c.source for c in nb.cells if c.cell_type == "code"}
    assert feedback._highlight.cache_info().currsize == len(code)
    before = feedback._highlight.cache_info().hits
    feedback._highlight("ipython3", next(iter(code)), None, None)   # as a graded page asks
    assert feedback._highlight.cache_info().hits == before + 1
    feedback.warm(config, b"{not a notebook", "rnn_step_by_step")


def _scored_release():
    """The release notebook, scored as GetGrades leaves a graded one (for drawing its page)."""
    nb = nbformat.read(os.path.join(REPO, "release", "rnn_step_by_step", "rnn_step_by_step.ipynb"), as_version=4)
    nb.metadata.setdefault("language_info", {}).setdefault("pygments_lexer", "ipython3")
    for cell in nb.cells:
        grading = cell.metadata.get("nbgrader", {})
        if grading.get("grade") or grading.get("task"):
            grading.update(score=0.0, points=grading.get("points", 0.0))
    return nb


def test_cells_kept_on_disk_draw_the_same_page_in_a_new_process(tmp_path, monkeypatch):
    """With FeedbackExporter.cache_dir, the teaching text drawn by one process is read back by
    the next (a rerun's one late submission), which then draws none of it again and makes
    the same page byte for byte; learners' answers are not kept there; and a folder that
    cannot be written only means drawing again."""
    nb = _scored_release()
    resources = {"nbgrader": {"notebook": "rnn_step_by_step", "score": 0.0, "max_score": 0.0, "late_penalty": 0}}
    drawn, lexed = [], []
    render, highlight = feedback.render_markdown, feedback._highlight
    monkeypatch.setattr(feedback, "render_markdown", lambda *a: drawn.append(a[0]) or render(*a))
    monkeypatch.setattr(feedback, "_highlight", lambda *a: lexed.append(a[1]) or highlight(*a))

    def page(cache_dir):
        feedback.FeedbackExporter._environments.clear()   # a new process: nothing drawn yet
        feedback._shared_markdown.cache_clear()
        highlight.cache_clear()
        drawn.clear()
        lexed.clear()
        config = Config()   # as nbgrader's GenerateFeedback configures the exporter
        config.HTMLExporter.extra_template_paths = [os.path.join(
            os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "static", "node_modules", "bootstrap",
            "dist", "css")]
        exporter = feedback.FeedbackExporter(config=config, cache_dir=str(cache_dir))
        return exporter.from_notebook_node(nbformat.from_dict(json.loads(json.dumps(nb))),
                                           resources=json.loads(json.dumps(resources)))[0]

    fresh = page("")
    markdown = {c.source for c in nb.cells if c.cell_type == "markdown"}
    assert len(drawn) == len(markdown) > 10
    first = page(tmp_path / "pages")
    assert first == fresh and len(drawn) == len(markdown)
    kept = [p for p in (tmp_path / "pages").rglob("*.html")]
    answers = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
    shared_code = {c.source for c in nb.cells if c.cell_type == "code" and c not in answers}
    cells = [p for p in kept if not p.name.startswith("code-")]
    assert answers and len(markdown) <= len(cells) <= len(nb.cells) - len(answers)
    assert len(kept) - len(cells) == len(shared_code)   # every shared cell's code, highlighted
    assert not any(a.source.strip() and a.source.strip()[:40] in p.read_text() for a in answers for p in kept)
    assert list((tmp_path / "pages").rglob("*.part")) == []
    again = page(tmp_path / "pages")
    assert again == fresh and drawn == []   # every Markdown cell read back from the folder
    assert set(lexed) <= {a.source for a in answers} - shared_code   # only the learners' own code is lexed
    (tmp_path / "file").write_text("not a folder")
    assert page(tmp_path / "file") == fresh and len(drawn) == len(markdown)
