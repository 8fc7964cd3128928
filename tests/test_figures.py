"""The figures of both notebooks: drawn into each release, described in words for those who
cannot see them, and the same bytes whichever machine draws them."""
import base64
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import nbformat
import pytest
from helpers import REPO
from test_reproducible import differing, variants

from assignments.gru_step_by_step import figures as gru_figures
from assignments.rnn_step_by_step import figures as rnn_figures

SVG = "{http://www.w3.org/2000/svg}"
CJK = re.compile(r"[\u4e00-\u9fff]")
EMBEDDED = re.compile(r"\]\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)")
# the notebook, its figures module, and how many figures it must have at least (issue 31)
NOTEBOOKS = {"rnn_step_by_step": (rnn_figures, 6), "gru_step_by_step": (gru_figures, 2)}
ALL = [(aid, name) for aid, (module, _) in NOTEBOOKS.items() for name in module.FIGURES]


def markdown(folder, aid):
    nb = nbformat.read(os.path.join(REPO, folder, aid, aid + ".ipynb"), as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def draw(aid, name):
    return NOTEBOOKS[aid][0].draw(name)


@pytest.mark.parametrize("aid", sorted(NOTEBOOKS))
def test_each_release_shows_each_of_its_figures_once(aid):
    module, at_least = NOTEBOOKS[aid]
    named = module.FIGURE_URL.findall(markdown("source", aid))
    assert sorted(named) == sorted(module.FIGURES) and len(named) >= at_least
    release = markdown("release", aid)
    assert "figure:" not in release
    embedded = [base64.b64decode(b).decode("utf-8") for b in EMBEDDED.findall(release)]
    assert embedded == [draw(aid, name) for name in named], "the release holds the figures as drawn now, in order"


def description_problems(aid, name, lang="en"):
    """What is wrong with how figure ``name`` describes itself. Text drawn as outlines says
    nothing to a screen reader: the SVG must name itself an image labelled by its <title>
    and <desc>, and the description must say every word the figure writes in code type (the
    code's names, which the reader will meet in the text)."""
    svg = NOTEBOOKS[aid][0].draw(name, lang=lang)
    root = ET.fromstring(svg.encode("utf-8"))
    title, desc = root[0], root[1]
    problems = []
    if root.get("role") != "img" or (title.tag, desc.tag) != (SVG + "title", SVG + "desc"):
        problems.append("the SVG does not start with its <title> and <desc>, as an image")
    elif root.get("aria-labelledby", "").split() != [title.get("id"), desc.get("id")]:
        problems.append("the SVG is not labelled by its <title> and <desc>")
    elif (lang == "en" and (len(title.text.split()) < 3 or len(desc.text.split()) < 60)) or "  " in desc.text \
            or (lang != "en" and (len(title.text) < 5 or len(desc.text) < 120 or not CJK.search(title.text + desc.text))):
        problems.append("the title or the description is too short, or not one paragraph")
    labels = []
    code = rnn_figures.Canvas.code   # every figure writes code type through this method
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rnn_figures.Canvas, "code", lambda self, x, y, s, **kw: labels.append(s) or code(self, x, y, s, **kw))
        NOTEBOOKS[aid][0].FIGURES[name].draw()
    if lang != "en":   # the code type's words as the figure writes them in that language
        from assignments.grading.contract import messages
        labels = [messages.catalog(lang).gettext(label) for label in labels]
    words = {w for label in labels for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", label) if len(w) > 1}
    missing = sorted(w for w in words if not re.search(rf"(?<![A-Za-z0-9_]){re.escape(w)}(?![A-Za-z0-9_])",
                                                       desc.text))
    if not labels or missing:
        problems.append(f"the description never says {missing}")
    return problems


@pytest.mark.parametrize("aid,name", ALL, ids=[f"{a}:{n}" for a, n in ALL])
def test_figure_is_titled_and_described_in_words(aid, name):
    assert description_problems(aid, name) == []


@pytest.mark.parametrize("aid,name", ALL, ids=[f"{a}:{n}" for a, n in ALL])
def test_zh_figure_is_titled_and_described_in_chinese(aid, name):
    assert description_problems(aid, name, "zh-CN") == []


def test_a_description_that_omits_a_name_is_caught(monkeypatch):
    fig = gru_figures.FIGURES["gru_cell"]
    monkeypatch.setitem(gru_figures.FIGURES, "gru_cell", fig._replace(desc=fig.desc.replace("yt_pred", "the output")))
    assert description_problems("gru_step_by_step", "gru_cell") == ["the description never says ['yt_pred']"]


def test_title_and_description_are_escaped_and_on_one_line():
    svg = rnn_figures._described('<?xml version="1.0"?>\n<svg width="1pt"><g/></svg>', "a < b & c",
                                 "two\n   lines <desc> & more")
    root = ET.fromstring(svg.encode("utf-8"))
    assert (root[0].text, root[1].text) == ("a < b & c", "two lines <desc> & more")
    assert root.get("width") == "1pt" and root[2].tag == "g"


@pytest.mark.parametrize("aid", sorted(NOTEBOOKS))
def test_figures_are_the_same_bytes_when_drawn_again(aid):
    module = NOTEBOOKS[aid][0]
    assert {n: module.draw(n) for n in module.FIGURES} == {n: module.draw(n) for n in module.FIGURES}


BUILD = ("import sys; from assignments.gru_step_by_step import ASSIGNMENT as a; from assignments.grading.authoring import release; "
         "release.build(a, sys.argv[1], sys.argv[2])")


@pytest.mark.slow   # a release built again per CPU, in a new process: in `make test`, as test_reproducible's
@pytest.mark.parametrize("name,env", sorted(variants().items()), ids=sorted(variants()))
def test_gru_release_is_byte_identical_on_another_cpu(tmp_path, name, env):
    """As tests/test_reproducible.py proves for the first notebook: now that the GRU's
    release holds figures too, it is rebuilt as another CPU would compute it."""
    aid = "gru_step_by_step"
    source, release = tmp_path / "source", tmp_path / "release"
    shutil.copytree(os.path.join(REPO, "source", aid), source / aid)
    # PYTHONPATH: nbgrader works in another folder, where the cwd entry of sys.path no longer
    # finds this tree (assignments/ is a namespace package) when the GRU's figures import the RNN's
    run = subprocess.run([sys.executable, "-c", BUILD, str(source), str(release)], cwd=REPO,
                         env=dict(os.environ, PYTHONPATH=REPO, **env), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert differing(str(source / aid), os.path.join(REPO, "source", aid)) == []
    assert differing(str(release / aid), os.path.join(REPO, "release", aid)) == []


# --- the zh-CN figures: labels from the catalog, Chinese drawn from the committed CJK subset -----

def drawable(chars):
    """The characters of ``chars`` that neither matplotlib's DejaVu Sans nor the CJK subset has."""
    from fontTools.ttLib import TTFont
    from matplotlib import font_manager
    have = set(TTFont(rnn_figures.CJK_FONT).getBestCmap())
    for family in ("DejaVu Sans", "DejaVu Sans Mono"):
        have |= set(TTFont(font_manager.findfont(family, fallback_to_default=False)).getBestCmap())
    return sorted(c for c in chars if not c.isspace() and ord(c) not in have)


def test_every_character_of_every_translated_label_is_in_the_fonts():
    from assignments.rnn_step_by_step import figure_font
    chars = figure_font.label_characters()
    assert len(chars) > 20 and any("\u4e00" <= c <= "\u9fff" for c in chars)
    assert drawable(chars) == []


def test_a_character_missing_from_the_subset_is_caught():
    assert drawable("单元龘") == ["龘"]


@pytest.mark.parametrize("aid,name", ALL, ids=[f"{a}:{n}" for a, n in ALL])
def test_zh_figure_is_drawn_with_its_labels_translated_and_no_glyph_missing(aid, name):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # matplotlib warns of a glyph missing from the fonts
        zh = NOTEBOOKS[aid][0].draw(name, lang="zh-CN")
    assert zh != draw(aid, name), "every figure has a label to translate"
    assert zh == NOTEBOOKS[aid][0].draw(name, lang="zh-CN")


@pytest.mark.parametrize("aid", sorted(NOTEBOOKS))
def test_the_zh_release_holds_the_zh_figures(aid):
    module = NOTEBOOKS[aid][0]
    named = module.FIGURE_URL.findall(markdown("source", aid))
    embedded = [base64.b64decode(b).decode("utf-8") for b in EMBEDDED.findall(markdown("release-zh-CN", aid))]
    assert embedded == [module.draw(name, lang="zh-CN") for name in named]


def test_the_committed_subset_is_what_the_pinned_font_gives():
    from assignments.rnn_step_by_step import figure_font
    if not os.path.isfile(figure_font.SOURCE):
        pytest.skip(f"{figure_font.SOURCE_PACKAGE} is not installed (make figure-font installs it)")
    with open(rnn_figures.CJK_FONT, "rb") as f:
        assert f.read() == figure_font.subset(), "rebuild it: make figure-font"


def test_a_font_that_is_not_the_pinned_one_is_refused(tmp_path):
    from assignments.rnn_step_by_step import figure_font
    other = tmp_path / "other.ttc"
    other.write_bytes(b"not the pinned font")
    with pytest.raises(ValueError, match="not the pinned"):
        figure_font.subset(str(other))


DRAW_ZH = ("import hashlib; from assignments.rnn_step_by_step import figures as r; "
           "from assignments.gru_step_by_step import figures as g; "
           "print(hashlib.sha256(''.join([r.draw(n, lang='zh-CN') for n in sorted(r.FIGURES)] "
           "+ [g.draw(n, lang='zh-CN') for n in sorted(g.FIGURES)]).encode()).hexdigest())")


@pytest.mark.slow   # every figure drawn again per CPU, in a new process: in `make test`
@pytest.mark.parametrize("name,env", sorted(variants().items()) + [("fresh-font-list", {})],
                         ids=sorted(variants()) + ["fresh-font-list"])
def test_zh_figures_are_the_same_bytes_on_another_cpu_and_font_list(tmp_path, name, env):
    """The zh-CN figures as another CPU draws them, with a font list matplotlib makes anew
    (in which this machine's own CJK fonts, if any, are listed too)."""
    import hashlib
    here = hashlib.sha256("".join([rnn_figures.draw(n, lang="zh-CN") for n in sorted(rnn_figures.FIGURES)]
                                  + [gru_figures.draw(n, lang="zh-CN") for n in sorted(gru_figures.FIGURES)])
                          .encode()).hexdigest()
    run = subprocess.run([sys.executable, "-c", DRAW_ZH], cwd=REPO, capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=REPO, MPLCONFIGDIR=str(tmp_path), **env))
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == here


def drawn_boxes_and_texts(module, name, lang):
    """Draw a figure and give, in pixels, each box's extent and each text's (issue 43)."""
    from matplotlib import patches
    canvases = []
    original = rnn_figures.Canvas.svg

    def keep(self):
        canvases.append(self)
        return original(self)
    rnn_figures.Canvas.svg = keep
    try:
        module.draw(name, lang=lang)
    finally:
        rnn_figures.Canvas.svg = original
    (canvas,) = canvases
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    renderer = FigureCanvasAgg(canvas.fig).get_renderer()
    boxes = [p.get_window_extent(renderer) for p in canvas.ax.patches if isinstance(p, patches.FancyBboxPatch)]
    texts = [(t.get_text(), t.get_window_extent(renderer)) for t in canvas.ax.texts if t.get_text().strip()]
    return boxes, texts, canvas.ax


def headless_lines_into_boxes(ax):
    """Lines drawn without an arrow head that end on a box's border: a line that enters a box
    is something flowing into it, and says so with a head (issue 43: a_prev and xt into z)."""
    from matplotlib import patches
    boxes = [(p.get_x(), p.get_y(), p.get_x() + p.get_width(), p.get_y() + p.get_height())
             for p in ax.patches if isinstance(p, patches.FancyBboxPatch)]
    found = []
    for p in ax.patches:
        if not isinstance(p, patches.FancyArrowPatch) or p.get_arrowstyle()._endarrow_head:
            continue
        (x, y) = p._posA_posB[1]
        for x0, y0, x1, y1 in boxes:
            on_edge = (abs(y - y0) < 0.02 or abs(y - y1) < 0.02) and x0 <= x <= x1 or \
                (abs(x - x0) < 0.02 or abs(x - x1) < 0.02) and y0 <= y <= y1
            if on_edge:
                found.append(f"a line ends on a box's border at ({x:.2f}, {y:.2f}) without an arrow head")
    return found


def layout_problems(boxes, texts):
    """A label that a box's border runs through (partly inside the box, partly out), and a box
    with no word in it (the reader cannot tell what it holds)."""
    found = []
    for b in boxes:
        for words, t in texts:
            overlap = t.x0 < b.x1 - 1 and t.x1 > b.x0 + 1 and t.y0 < b.y1 - 1 and t.y1 > b.y0 + 1
            inside = t.x0 >= b.x0 - 1 and t.x1 <= b.x1 + 1 and t.y0 >= b.y0 - 1 and t.y1 <= b.y1 + 1
            if overlap and not inside:
                found.append(f"the border of a box runs through {words!r}")
        if not any(b.x0 <= (t.x0 + t.x1) / 2 <= b.x1 and b.y0 <= (t.y0 + t.y1) / 2 <= b.y1 for _, t in texts):
            found.append(f"a box with nothing written in it at {tuple(round(v) for v in b.extents)}")
    return found


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
@pytest.mark.parametrize("aid,name", ALL, ids=[f"{a}:{n}" for a, n in ALL])
def test_no_label_is_crossed_by_a_border_no_box_is_blank_and_lines_into_boxes_have_heads(aid, name, lang):
    module = NOTEBOOKS[aid][0]
    boxes, texts, ax = drawn_boxes_and_texts(module, name, lang)
    assert layout_problems(boxes, texts) + headless_lines_into_boxes(ax) == []
