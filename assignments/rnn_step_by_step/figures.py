"""The notebook's figures, drawn with matplotlib when the release is built.

Each figure is an SVG whose bytes do not depend on the machine that draws it: text is
drawn as paths from the fonts matplotlib ships (never a system font), the SVG's ids come
from a fixed salt, it carries no date, and every coordinate is rounded to 0.1 pt, so
that a last-bit difference in the arithmetic of another CPU cannot show. Everything sits
on an opaque white rounded panel, so a figure reads the same in a light and a dark theme.

Since the text is drawn as outlines, a screen reader cannot read it: each figure is
registered with a title and a description in words (``@figure``), which the SVG carries as
its <title> and <desc>; the notebook's alt text says the same for the page it sits on.

The source notebook refers to a figure as a Markdown image whose address is
``figure:<name>``; the release build replaces that address with the SVG as a data URI,
which every notebook front end shows without network or side files. The GRU assignment
draws its figures with this module's canvas and registry (gru_step_by_step/figures.py), so
that the course's figures share one look.
"""
import base64
import io
import os
import re
from typing import Callable, NamedTuple
from xml.sax.saxutils import escape

import matplotlib

matplotlib.use("Agg")
from matplotlib import font_manager, patches  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402

from ..grading.contract import messages  # noqa: E402
from ..grading.contract.messages import N_  # noqa: E402

FIGURE_URL = re.compile(r"\]\(figure:([a-z_]+)\)")

STYLE = {
    "svg.fonttype": "path", "svg.hashsalt": "rnn-step-by-step", "svg.image_inline": True,
    "font.family": "DejaVu Sans", "mathtext.fontset": "dejavusans", "font.size": 11,
    "path.simplify": False,
}
INK, MUTED, PANEL, EDGE = "#1b1b1b", "#5f6368", "#ffffff", "#c9ced6"
GRAD = "#c62828"        # gradients: one red for everything that flows backwards
GATES = {"f": "#1565c0", "i": "#2e7d32", "c": "#6a1b9a", "o": "#e65100"}
CELL_FILL = "#eef3fb"
TEXT_SCALE = 1.2        # the sizes below were chosen for reading at 100% zoom, then enlarged

CJK_FONT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fonts", "FiguresCJK-Regular.otf")
CJK_FAMILY = "RNN Course Figures CJK"
"""The Chinese labels' font: a subset of Noto Sans CJK SC (SIL OFL 1.1, fonts/OFL.txt) holding
only the characters the translated labels use, committed and renamed so that no installed
font can stand in for it (fonts/README.md and authoring/figure_font.py rebuild it)."""
CJK = re.compile("[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
_words = {"catalog": None}   # the catalog the figure being drawn speaks (draw: None for English)


def _own_fonts_only():
    """Draw with matplotlib's own DejaVu fonts only: a system font of another version would
    change the glyphs, and so the release's bytes. matplotlib's font list is a cache shared
    by every matplotlib of the same version in the user's home (another environment's, or a
    system one without bundled fonts may have written it), so the DejaVu entries are set
    here from this matplotlib's files; then refuse to draw if another font is still picked."""
    data = os.path.realpath(matplotlib.get_data_path())
    fonts = font_manager.fontManager
    fonts.ttflist = [f for f in fonts.ttflist
                     if not f.name.startswith("DejaVu") or os.path.realpath(f.fname).startswith(data + os.sep)]
    own = os.path.join(data, "fonts", "ttf")
    known = {os.path.realpath(f.fname) for f in fonts.ttflist}
    for name in sorted(os.listdir(own)):
        path = os.path.join(own, name)
        if name.startswith("DejaVu") and name.endswith(".ttf") and os.path.realpath(path) not in known:
            fonts.addfont(path)
    font_manager.FontManager._findfont_cached.cache_clear()
    for family in ("DejaVu Sans", "DejaVu Sans Mono"):
        for style in ("normal", "italic"):
            for weight in ("normal", "bold"):
                found = font_manager.findfont(font_manager.FontProperties(family=family, style=style, weight=weight),
                                              fallback_to_default=False)
                if not os.path.realpath(found).startswith(data):
                    raise RuntimeError(f"matplotlib picked {found} for {family}; the figures must use its own fonts")


class Canvas:
    """A figure in data units (1 unit = 0.5 inch) on a white rounded panel."""

    def __init__(self, width, height):
        self.fig = plt.figure(figsize=(width / 2, height / 2))
        self.fig.patch.set_alpha(0)
        self.ax = self.fig.add_axes([0, 0, 1, 1])
        self.ax.set_xlim(0, width)
        self.ax.set_ylim(0, height)
        self.ax.set_aspect("equal")
        self.ax.axis("off")
        self.ax.add_patch(patches.FancyBboxPatch((0.08, 0.08), width - 0.16, height - 0.16,
                                                 boxstyle="round,pad=0,rounding_size=0.35",
                                                 fc=PANEL, ec=EDGE, lw=1.2, zorder=0))

    def text(self, x, y, s, size=11, color=INK, ha="center", va="center", **kw):
        """A label, said in the language being drawn (English, the code's words, when the
        catalog lacks it); Chinese characters come from the CJK subset."""
        found = _words["catalog"]
        s = found.gettext(s) if found is not None else s
        if CJK.search(s):
            kw["family"] = [kw.get("family", "DejaVu Sans"), CJK_FAMILY]
            if "$" in s:
                return self._mixed(x, y, s, size, color, ha, va, kw)
        self.ax.text(x, y, s, fontsize=size * TEXT_SCALE, color=color, ha=ha, va=va, zorder=6, **kw)

    def _mixed(self, x, y, s, size, color, ha, va, kw):
        """A Chinese label with math: mathtext draws only its own fonts, so the words and the
        formulas are drawn as pieces side by side, on one baseline."""
        pieces = [p for p in re.split(r"(\$[^$]*\$)", s) if p]
        texts = [self.ax.text(0, 0, p, fontsize=size * TEXT_SCALE, color=color, ha="left", va="baseline", zorder=6,
                              **({} if p.startswith("$") else kw)) for p in pieces]
        renderer = self.fig.canvas.get_renderer()
        unit = self.fig.dpi / 2   # pixels per data unit (1 unit = 0.5 inch)
        widths = [t.get_window_extent(renderer).width / unit for t in texts]
        left = x - {"left": 0, "center": 0.5, "right": 1}[ha] * sum(widths)
        baseline = y - {"center": 0.36, "baseline": 0, "bottom": -0.22, "top": 0.86}[va] * size * TEXT_SCALE / 36
        for t, w in zip(texts, widths):
            t.set_position((left, baseline))
            left += w

    def code(self, x, y, s, size=9.5, color=MUTED, **kw):
        self.text(x, y, s, size=size, color=color, family="DejaVu Sans Mono", **kw)

    def box(self, x, y, w, h, label=None, fc=CELL_FILL, ec=INK, lw=1.4, size=11, color=INK, radius=0.18, z=2):
        self.ax.add_patch(patches.FancyBboxPatch((x - w / 2, y - h / 2), w, h,
                                                 boxstyle=f"round,pad=0,rounding_size={radius}",
                                                 fc=fc, ec=ec, lw=lw, zorder=z))
        if label:
            self.text(x, y, label, size=size, color=color)

    def node(self, x, y, symbol, color=INK, r=0.22, fc=PANEL, size=None):
        """An element-wise operation: a small circle holding ×, + or a name."""
        self.ax.add_patch(patches.Circle((x, y), r, fc=fc, ec=color, lw=1.4, zorder=4))
        self.text(x, y - 0.01, symbol, size=size or (12 if len(symbol) == 1 else 10.5), color=color)

    def arrow(self, points, color=INK, lw=1.5, head=True, dashed=False, z=3):
        """A polyline through ``points``, with an arrow head at its end."""
        xs, ys = zip(*points)
        style = (0, (4, 3)) if dashed else "solid"
        if len(points) > 2:
            self.ax.plot(xs[:-1], ys[:-1], color=color, lw=lw, ls=style, solid_capstyle="butt", zorder=z)
        self.ax.add_patch(patches.FancyArrowPatch(points[-2], points[-1], arrowstyle="-|>" if head else "-",
                                                  mutation_scale=13, color=color, lw=lw, ls=style,
                                                  shrinkA=0, shrinkB=0, zorder=z))

    def svg(self):
        out = io.StringIO()
        self.fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(self.fig)
        return _rounded(out.getvalue())


def _rounded(svg):
    """The SVG made small and machine-independent: numbers rounded to 0.1 pt (a fraction of
    a pixel), path data and layout whitespace squeezed, glyph ids shortened, matplotlib's
    comments, metadata, clipping and unused ids dropped."""
    def number(m):
        text = f"{float(m.group(0)):.1f}".rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text

    def path(m):
        d = re.sub(r"\s+", " ", re.sub(r"-?\d+\.\d+", number, m.group(1))).strip()
        return 'd="' + re.sub(r" ?([MLQCZz]) ?", r"\1", d) + '"'
    head, sep, body = svg.partition("<svg ")
    # positions are rounded; scale factors (glyph sizes) are kept as they are
    body = re.sub(r'd="([^"]*)"', path, body)
    body = re.sub(r"(translate|rotate)\(([^)]*)\)", lambda m: m.group(1) + "(" +
                  re.sub(r"-?\d+\.\d+", number, m.group(2)) + ")", body)
    body = re.sub(r"<metadata>.*?</metadata>|<!--.*?-->", "", body, flags=re.S)
    body = re.sub(r' clip-path="url\(#\w+\)"', "", body)   # nothing is clipped: the axes hold the panel
    body = re.sub(r' id="(?:figure|axes|patch|line2d|text|legend)_\d+"', "", body)
    glyphs = {}
    for name in re.findall(r'<path id="([\w-]+)"', body):   # glyphs, in the order they are defined
        glyphs.setdefault(name, f"g{len(glyphs)}")
    body = re.sub(r'(id="|href="#)([\w-]+)"', lambda m: m.group(1) + glyphs.get(m.group(2), m.group(2)) + '"', body)
    body = re.sub(r">\s+<", "><", body)
    return head + sep + body


def _described(svg, title, desc):
    """The SVG with its <title> and <desc> first inside the root element, which is named
    an image labelled by them (what assistive technology reads of an SVG opened alone)."""
    head, sep, rest = svg.partition("<svg ")
    attributes, close, body = rest.partition(">")
    words = lambda text: escape(" ".join(text.split()))  # noqa: E731
    return (head + sep + attributes + ' role="img" aria-labelledby="figure-title figure-desc"' + close
            + f'<title id="figure-title">{words(title)}</title><desc id="figure-desc">{words(desc)}</desc>' + body)


class Figure(NamedTuple):
    draw: Callable[[], str]
    title: str
    desc: str


def registry(figures):
    """A decorator that adds a drawing function to ``figures`` under its own name, with the
    title and the description in words that its SVG carries."""
    def figure(title, desc):
        def add(draw):
            figures[draw.__name__] = Figure(draw, title, desc)
            return draw
        return add
    return figure


FIGURES: dict[str, "Figure"] = {}
figure = registry(FIGURES)


# --- the figures ---------------------------------------------------------------------------------

@figure(N_("The RNN cell: one time step"),
        N_("The cell of rnn_cell_forward, with its arguments and results named as in the code. From the left, "
           "the previous hidden state a_prev enters a box that computes Waa times a_prev plus Wax times xt plus ba; "
           "the input xt enters the same box from below. The box's result goes through tanh and becomes the new "
           "hidden state a_next, which leaves to the right. From a_next a branch goes up: Wya times a_next plus by, "
           "then a softmax, gives the prediction yt_pred at the top. A note says that the same weights and biases "
           "are used at every time step."))
def rnn_cell():
    c = Canvas(14, 7.4)
    c.box(7.05, 3.4, 9.3, 4.8)
    c.code(2.6, 5.5, "rnn_cell_forward", size=10, ha="left")
    y = 2.3
    c.arrow([(0.4, y), (2.75, y)])
    c.text(0.5, y + 0.45, r"$a^{\langle t-1\rangle}$", ha="left", size=13)
    c.code(0.5, y - 0.42, "a_prev", ha="left")
    c.box(5.1, y, 4.7, 0.95, r"$W_{aa}\,a^{\langle t-1\rangle} + W_{ax}\,x^{\langle t\rangle} + b_a$",
          fc=PANEL, size=11)
    c.arrow([(5.1, 0.3), (5.1, y - 0.48)])
    c.text(5.35, 0.65, r"$x^{\langle t\rangle}$", ha="left", size=13)
    c.code(6.15, 0.62, "xt", ha="left")
    c.arrow([(7.45, y), (7.85, y)])
    c.node(8.3, y, "tanh", r=0.45)
    c.arrow([(8.75, y), (13.6, y)])
    c.text(12.7, y + 0.45, r"$a^{\langle t\rangle}$", size=13)
    c.code(12.7, y - 0.42, "a_next")
    c.ax.add_patch(patches.Circle((9.9, y), 0.07, color=INK, zorder=5))
    c.arrow([(9.9, y), (9.9, 3.2)])
    c.box(9.9, 3.55, 2.5, 0.7, r"$W_{ya}\,a^{\langle t\rangle} + b_y$", fc=PANEL, size=10.5)
    c.arrow([(9.9, 3.9), (9.9, 4.35)])
    c.box(9.9, 4.7, 1.8, 0.7, "softmax", fc=PANEL, size=11)
    c.arrow([(9.9, 5.05), (9.9, 7.0)])
    c.text(10.2, 6.55, r"$\hat{y}^{\langle t\rangle}$", ha="left", size=13)
    c.code(11.05, 6.5, "yt_pred", ha="left")
    c.text(5.0, 4.1, N_("the same weights and biases\nat every time step"), size=10, color=MUTED)
    return c.svg()


@figure(N_("The RNN unrolled over time"),
        N_("rnn_forward as a row of identical cells, one per time step, from step 0 on the left to step T_x-1 on "
           "the right, with dots between step 2 and the last step. The initial hidden state a0 enters the first "
           "cell from the left. Each cell passes its hidden state to the next cell: the state after step t is "
           "labelled a with superscript t and, in the code, a[:,:,t]. Below each cell is its input, x with "
           "superscript t, which is x[:,:,t]; above each cell is its prediction, y-hat with superscript t, which is "
           "y_pred[:,:,t]. Steps are counted from 0 in the labels as in the code."))
def rnn_unrolled():
    c = Canvas(16.6, 7.2)
    y = 3.4
    steps = [(3.0, "0"), (6.4, "1"), (9.8, "2"), (14.0, "T_x-1")]
    c.code(0.45, y + 0.42, "a0", size=11, color=INK, ha="left")
    c.text(0.45, y - 0.42, N_("initial"), size=9, color=MUTED, ha="left")
    prev = 0.4
    for k, (x, i) in enumerate(steps):
        n = i.replace("T_x-1", "T_x - 1")
        if k == 3:
            c.arrow([(prev, y), (11.55, y)], head=False)
            c.text(12.1, y, "· · ·", size=15, color=MUTED)
            prev = 12.6
        c.arrow([(prev, y), (x - 0.8, y)])
        c.box(x, y, 1.6, 1.15, N_("cell"), size=11)
        c.arrow([(x, 1.35), (x, y - 0.58)])
        c.text(x, 1.0, rf"$x^{{\langle {n}\rangle}}$", size=12.5)
        c.code(x, 0.45, f"x[:,:,{i}]", size=8.5)
        c.arrow([(x, y + 0.58), (x, 5.3)])
        c.text(x, 5.75, rf"$\hat{{y}}^{{\langle {n}\rangle}}$", size=12.5)
        c.code(x, 6.45, f"y_pred[:,:,{i}]", size=8.5)
        if k < 2:
            c.text(x + 1.7, y + 0.42, rf"$a^{{\langle {n}\rangle}}$", size=12)
            c.code(x + 1.7, y - 0.38, f"a[:,:,{i}]", size=8.5)
        prev = x + 0.8
    c.text(11.15, y + 0.42, r"$a^{\langle 2\rangle}$", size=12)
    c.arrow([(prev, y), (16.2, y)])
    c.text(15.55, y + 0.42, r"$a^{\langle T_x - 1\rangle}$", size=11)
    return c.svg()


@figure(N_("The LSTM cell: one time step"),
        N_("The cell of lstm_cell_forward. Along the top, the cell state runs from c_prev on the left to c_next on "
           "the right through two element-wise steps: first a multiplication by the forget gate f_t, then the "
           "addition of the input gate i_t times the candidate c-tilde_t. At the bottom left, a_prev and xt are "
           "stacked into one column z, which runs along a line that feeds four boxes: a sigmoid for the forget gate "
           "f_t, a sigmoid for the input gate i_t, a tanh for the candidate c-tilde_t and a sigmoid for the output "
           "gate o_t. On the right, tanh of the new cell state is multiplied by the output gate o_t to give the new "
           "hidden state a_next, which leaves at the bottom right; a branch of a_next goes through a softmax, "
           "crosses the cell state and leaves at the top as the prediction yt_pred."))
def lstm_cell():
    c = Canvas(16, 9.0)
    top, bus, low, gate = 6.7, 2.5, 1.75, 3.75
    c.box(7.75, 4.5, 11.7, 6.1)
    c.code(2.05, 7.2, "lstm_cell_forward", size=10, ha="left")
    # the cell state: a straight path with two element-wise steps
    c.text(0.45, top + 0.45, r"$c^{\langle t-1\rangle}$", ha="left", size=13)
    c.code(0.45, top - 0.42, "c_prev", ha="left")
    c.arrow([(0.4, top), (4.08, top)])
    c.node(4.3, top, "×", color=GATES["f"])
    c.arrow([(4.52, top), (7.68, top)])
    c.node(7.9, top, "+", color=GATES["i"])
    c.arrow([(8.12, top), (15.6, top)])
    c.text(14.9, top + 0.45, r"$c^{\langle t\rangle}$", size=13)
    c.code(14.9, top - 0.42, "c_next")
    # the stacked input z = [a_prev; x_t] feeds the four gates
    c.text(0.45, low + 0.45, r"$a^{\langle t-1\rangle}$", ha="left", size=13)
    c.code(0.45, low - 0.42, "a_prev", ha="left")
    c.arrow([(0.4, low), (2.45, low), (2.45, bus - 0.27)])
    c.text(3.05, 0.4, r"$x^{\langle t\rangle}$", size=13, ha="left")
    c.code(3.8, 0.38, "xt", ha="left")
    c.arrow([(2.8, 0.2), (2.8, bus - 0.27)])
    c.box(2.62, bus, 0.8, 0.55, "z", fc=PANEL, size=11, radius=0.12)
    c.arrow([(3.02, bus), (9.7, bus)], head=False)
    gates = [("f", 4.3, r"$\sigma$", r"$f_t$", N_("forget")), ("i", 6.1, r"$\sigma$", r"$i_t$", N_("input")),
             ("c", 7.9, "tanh", r"$\tilde{c}_t$", N_("candidate")), ("o", 9.7, r"$\sigma$", r"$o_t$", N_("output"))]
    for key, x, fn, name, word in gates:
        col = GATES[key]
        c.arrow([(x, bus), (x, gate - 0.4)], color=col)
        c.box(x, gate, 0.95, 0.8, fn, fc=PANEL, ec=col, size=11, color=col)
        c.text(x + 0.55, gate - 0.6, name, size=12, color=col, ha="left")
        c.text(x, bus - 0.45, word, size=9.5, color=col)
    c.arrow([(4.3, gate + 0.4), (4.3, top - 0.22)], color=GATES["f"])
    # the input gate lets a share of the candidate onto the cell state: i * c~
    c.node(7.9, 5.35, "×", color=GATES["i"])
    c.arrow([(6.1, gate + 0.4), (6.1, 5.35), (7.68, 5.35)], color=GATES["i"])
    c.arrow([(7.9, gate + 0.4), (7.9, 5.13)], color=GATES["c"])
    c.arrow([(7.9, 5.57), (7.9, top - 0.22)], color=GATES["i"])
    # the output: a = o * tanh(c)
    c.ax.add_patch(patches.Circle((11.15, top), 0.07, color=INK, zorder=5))
    c.node(11.15, 5.35, "tanh", r=0.42)
    c.arrow([(11.15, top), (11.15, 5.77)])
    c.node(11.15, gate, "×", color=GATES["o"])
    c.arrow([(11.15, 4.93), (11.15, gate + 0.22)])
    c.arrow([(10.18, gate), (10.93, gate)], color=GATES["o"])
    c.arrow([(11.15, gate - 0.22), (11.15, low), (15.6, low)])
    c.text(14.9, low + 0.45, r"$a^{\langle t\rangle}$", size=13)
    c.code(14.9, low - 0.42, "a_next")
    # the prediction, which crosses the cell state on a bridge
    c.ax.add_patch(patches.Circle((12.6, low), 0.07, color=INK, zorder=5))
    c.arrow([(12.6, low), (12.6, gate - 0.35)])
    c.box(12.6, gate, 1.55, 0.7, "softmax", fc=PANEL, size=10.5)
    c.ax.add_patch(patches.Rectangle((12.45, top - 0.16), 0.3, 0.32, fc=CELL_FILL, ec="none", zorder=3.5))
    c.arrow([(12.6, gate + 0.35), (12.6, 8.7)], z=4)
    c.text(12.9, 8.2, r"$\hat{y}^{\langle t\rangle}$", ha="left", size=13)
    c.code(13.75, 8.15, "yt_pred", ha="left")
    return c.svg()


@figure(N_("Backpropagation through time in an RNN"),
        N_("rnn_backward walks the row of cells from right to left, from step T_x-1 back to step 0; every arrow "
           "is a gradient. At each step t, the gradient from above, da[:,:,t], comes down into a plus node, where "
           "it is added to the da_prev that step t+1 sent back; at the last step that carried gradient is zeros, "
           "since no step comes after it. The sum enters the cell (rnn_cell_backward), which sends dx[:,:,t] "
           "down and its own da_prev to the left, to step t-1. What leaves the first step, step 0, is da0. A line "
           "at the bottom says that each step's dWax, dWaa and dba are added to running totals, because the "
           "weights are shared by all steps."))
def rnn_backward():
    c = Canvas(16, 7.6)
    y = 3.5
    steps = [(2.4, "0"), (6.5, "1"), (12.0, "T_x-1")]
    for k, (x, t) in enumerate(steps):
        c.box(x, y, 1.6, 1.25)
        c.text(x, y + 0.2, N_("cell"), size=11)
        c.code(x, y - 0.27, f"t={t}", size=8.5, color=INK)
        plus = x + 1.4
        c.node(plus, y, "+", color=GRAD)
        c.arrow([(plus, 5.55), (plus, y + 0.23)], color=GRAD)
        c.code(plus, 5.85, f"da[:,:,{t}]", size=8.5, color=GRAD)
        c.arrow([(plus - 0.23, y), (x + 0.8, y)], color=GRAD)
        c.arrow([(x, y - 0.63), (x, 1.6)], color=GRAD)
        c.code(x, 1.25, f"dx[:,:,{t}]", size=8.5, color=GRAD)
    c.arrow([(6.5 - 0.8, y), (2.4 + 1.63, y)], color=GRAD)
    c.code(4.85, y - 0.35, "da_prev", size=8.5, color=GRAD)
    c.text(9.75, y, "· · ·", size=15, color=MUTED)
    c.arrow([(9.2, y), (6.5 + 1.63, y)], color=GRAD)
    c.code(8.75, y - 0.35, "da_prev", size=8.5, color=GRAD)
    c.arrow([(12.0 - 0.8, y), (10.3, y)], color=GRAD, head=False)
    c.arrow([(15.6, y), (12.0 + 1.63, y)], color=GRAD)
    c.text(14.7, y + 0.4, "0", size=13, color=GRAD)
    c.code(14.7, y - 0.35, "zeros", size=8.5, color=GRAD)
    c.arrow([(2.4 - 0.8, y), (0.4, y)], color=GRAD)
    c.code(0.5, y + 0.35, "da0", size=9.5, color=GRAD, ha="left")
    c.text(8.0, 6.85, N_("rnn_backward: rnn_cell_backward at every step, from the last one back to the first"),
           size=10, color=INK)
    c.text(8.0, 0.5, N_(r"each step's $dW_{ax},\ dW_{aa},\ db_a$ are added to running totals (the weights are shared)"),
           size=10, color=GRAD)
    return c.svg()


@figure(N_("Inside lstm_cell_backward: the two paths to the cell state"),
        N_("lstm_cell_backward, one step of the LSTM's backward pass; every arrow is a gradient and flows from "
           "right to left. Two gradients arrive from the right: dc_next on the cell state, from step t+1 "
           "(path 1), and da_next on the hidden state, which is da[:,:,t] plus the da_prev of step t+1. Path 2 "
           "takes da_next up through a box that multiplies it by o_t times (1 minus tanh squared of the new cell "
           "state c with superscript t) to a plus node on the cell state, where it is added to dc_next: the sum "
           "is dc, the gradient on the "
           "new cell state from both paths. dc goes on to the left through a multiplication by the forget gate "
           "f_t and leaves as dc_prev, which is dc times ft. A branch of dc goes down into a box that gives the "
           "gradients with respect to the pre-activations delta_f, delta_i and delta_c-tilde from dc, and delta_o "
           "from da_next (a dashed arrow brings da_next to it). The same box forms the stacked gradient "
           "[da_prev; dx_t] as W_f transposed delta_f plus W_i transposed delta_i plus W_c transposed "
           "delta_c-tilde plus W_o transposed delta_o. Its top n_a rows leave to the left as da_prev and its "
           "other n_x rows leave downwards as dx_t."))
def lstm_backward():
    c = Canvas(18.8, 8.0)
    top, low, mid = 6.6, 1.9, 4.25
    c.box(8.55, 4.25, 12.7, 6.2)
    c.code(2.45, 7.0, "lstm_cell_backward", size=10, ha="left")
    # what arrives from step t+1
    c.arrow([(18.6, top), (13.47, top)], color=GRAD)
    c.text(18.5, top + 0.45, r"$dc_{next}$", size=13, color=GRAD, ha="right")
    c.code(18.5, top - 0.42, N_("from step t+1"), size=8.5, color=GRAD, ha="right")
    c.arrow([(18.6, low), (11.3, low)], color=GRAD, head=False)
    c.text(18.5, low + 0.45, r"$da_{next}$", size=13, color=GRAD, ha="right")
    c.code(18.5, low - 0.42, "da[:,:,t] + da_prev", size=8.5, color=GRAD, ha="right")
    # path 2: the hidden state's gradient reaches the cell state, since a = o * tanh(c)
    c.ax.add_patch(patches.Circle((13.25, low), 0.07, color=GRAD, zorder=5))
    c.arrow([(13.25, low), (13.25, mid - 0.42)], color=GRAD)
    c.box(13.25, mid, 2.9, 0.8, r"$\odot\,o_t\,(1-\tanh^2 c^{\langle t\rangle})$", fc=PANEL, ec=GRAD,
          size=9, color=GRAD, lw=1.3)
    c.arrow([(13.25, mid + 0.4), (13.25, top - 0.22)], color=GRAD)
    c.node(13.25, top, "+", color=GRAD)
    c.text(13.45, 5.35, N_("path 2"), size=9.5, color=GRAD, ha="left")
    c.text(15.6, top + 0.32, N_("path 1"), size=9.5, color=GRAD)
    c.text(11.3, top + 0.4, N_(r"$dc$ (both paths)"), size=11, color=GRAD)
    # dc flows back along the cell state through the forget gate
    c.arrow([(13.03, top), (7.28, top)], color=GRAD)
    c.node(7.0, top, "×", color=GATES["f"])
    c.text(7.0, top + 0.5, r"$f_t$", size=12, color=GATES["f"])
    c.arrow([(6.72, top), (0.4, top)], color=GRAD)
    c.text(0.45, top + 0.45, r"$dc_{prev}$", size=13, color=GRAD, ha="left")
    c.code(0.45, top - 0.42, "dc * ft", size=8.5, color=GRAD, ha="left")
    # the gradients of the gates' pre-activations, and the stacked input's through every gate's weights
    c.ax.add_patch(patches.Circle((9.6, top), 0.07, color=GRAD, zorder=5))
    c.arrow([(9.6, top), (9.6, mid + 0.65)], color=GRAD)
    c.arrow([(11.3, low), (11.3, mid), (10.8, mid)], color=GRAD, dashed=True)
    c.box(6.95, mid, 7.7, 1.3, "", fc=PANEL, ec=GRAD, lw=1.3)
    c.text(6.95, mid + 0.3, N_(r"$\delta_f,\ \delta_i,\ \delta_{\tilde{c}}$ from $dc$;   $\delta_o$ from $da_{next}$"),
           size=10.5, color=GRAD)
    c.text(6.95, mid - 0.3, r"$[da_{prev};\,dx_t] = W_f^T \delta_f + W_i^T \delta_i + W_c^T \delta_{\tilde{c}}"
           r" + W_o^T \delta_o$", size=10.5, color=GRAD)
    c.arrow([(4.3, mid - 0.65), (4.3, low), (0.4, low)], color=GRAD)
    c.text(0.45, low + 0.45, r"$da_{prev}$", size=13, color=GRAD, ha="left")
    # two short lines, so that the label ends before the cell's border (x = 2.2)
    c.code(0.45, low - 0.62, N_("the top\nn_a rows"), size=8.5, color=GRAD, ha="left")
    c.arrow([(7.4, mid - 0.65), (7.4, 0.3)], color=GRAD)
    c.text(7.65, 0.7, r"$dx_t$", size=13, color=GRAD, ha="left")
    c.code(8.5, 0.67, N_("the other n_x rows"), size=8.5, color=GRAD, ha="left")
    return c.svg()


@figure(N_("Backpropagation through time in an LSTM: two carried gradients"),
        N_("lstm_backward walks the row of cells from right to left, from step T_x-1 back to step 0; every arrow "
           "is a gradient. Two lanes run through the cells. The upper lane carries the cell-state gradient "
           "dc_prev from each step to the step before it; it starts as zeros at the last step, and nothing is "
           "added to it between steps. The lower lane carries the hidden-state gradient da_prev; it also starts "
           "as zeros at the last step, and before each step t a plus node adds the gradient from above, "
           "da[:,:,t], which comes down across the upper lane. So step t calls lstm_cell_backward with "
           "da[:,:,t] + da_prev, dc_prev and step_caches[t], the step's own cache (step_caches, x = caches). "
           "Each cell sends dx[:,:,t] down. What leaves step 0 on the "
           "lower lane is da0; what leaves it on the upper lane is not returned, because the first cell state "
           "is a constant (zeros). At the bottom, a long box holds the running totals dWf, dbf, dWi, dbi, dWc, "
           "dbc, dWo and dbo, and an arrow marked += from every cell adds that step's gradients to them."))
def lstm_backward_loop():
    c = Canvas(18.8, 10.0)
    yc, ya, above = 6.3, 4.8, 8.25
    cell_y, cell_h = 5.55, 2.3
    first, second, last = 3.9, 8.6, 14.9
    steps = [(first, "0"), (second, "1"), (last, "T_x-1")]
    c.text(9.4, 9.4, N_("lstm_backward: at step t, lstm_cell_backward(da[:,:,t] + da_prev, dc_prev, step_caches[t])"),
           size=10, color=INK)
    for x, t in steps:
        c.box(x, cell_y, 1.9, cell_h)
        c.text(x, cell_y + 0.25, N_("cell"), size=11)
        c.code(x, cell_y - 0.25, f"t={t}", size=8.5, color=INK)
        plus = x + 1.45
        c.node(plus, ya, "+", color=GRAD)
        # the gradient from above crosses the cell-state lane on a bridge
        c.ax.add_patch(patches.Rectangle((plus - 0.14, yc - 0.16), 0.28, 0.32, fc=PANEL, ec="none", zorder=3.5))
        c.arrow([(plus, above - 0.3), (plus, ya + 0.23)], color=GRAD, z=4)
        c.code(plus, above, f"da[:,:,{t}]", size=8.5, color=GRAD)
        c.arrow([(plus - 0.23, ya), (x + 0.95, ya)], color=GRAD)
        # what the step gives: dx below, its parameter gradients into the running totals
        c.arrow([(x - 0.55, cell_y - cell_h / 2), (x - 0.55, 3.05)], color=GRAD)
        c.code(x - 0.55, 2.7, f"dx[:,:,{t}]", size=8.5, color=GRAD)
        c.arrow([(x + 0.7, cell_y - cell_h / 2), (x + 0.7, 1.45)], color=GRAD)
        c.text(x + 0.85, 1.95, "+=", size=9.5, color=GRAD, ha="left")
    # the two carried gradients, from each step to the one before it
    for lane, name in ((yc, "dc_prev"), (ya, "da_prev")):
        c.arrow([(second - 0.95, lane), (first + 0.95, lane)], color=GRAD)
        c.code((first + second) / 2 + 0.6, lane + 0.3, name, size=8.5, color=GRAD)
        c.arrow([(11.6, lane), (second + 0.95, lane)], color=GRAD)
        c.code(11.0, lane + 0.3, name, size=8.5, color=GRAD)
        c.arrow([(last - 0.95, lane), (12.75, lane)], color=GRAD, head=False)
        # both start at zeros: no step comes after the last one
        c.arrow([(18.4, lane), (last + 0.95 if lane == yc else last + 1.68, lane)], color=GRAD)
        c.text(17.8, lane + 0.38, "0", size=13, color=GRAD)
        c.code(17.8, lane - 0.33, "zeros", size=8.5, color=GRAD)
    c.text(12.18, (yc + ya) / 2, "· · ·", size=15, color=MUTED)
    # what leaves the first step: da0 is returned; the first cell state is a constant
    c.arrow([(first - 0.95, yc), (0.45, yc)], color=GRAD, dashed=True)
    c.text(0.5, yc + 0.36, r"$dc_{prev}$", size=11, color=GRAD, ha="left")
    c.code(0.5, yc - 0.33, N_("not returned"), size=8, color=MUTED, ha="left")
    c.arrow([(first - 0.95, ya), (0.45, ya)], color=GRAD)
    c.code(0.5, ya + 0.33, "da0", size=9.5, color=GRAD, ha="left")
    # the running totals
    c.box(9.4, 1.05, 18.0, 0.8, fc=PANEL, ec=GRAD, lw=1.3)
    c.text(9.4, 1.05, N_(r"running totals, summed over the steps: $dW_f,\ db_f,\ dW_i,\ db_i,\ dW_c,\ db_c,\ "
                         r"dW_o,\ db_o$"), size=10, color=GRAD)
    return c.svg()


def _cjk_font():
    """Make the committed CJK subset known to matplotlib under its own name, and refuse to
    draw if any other file answers to that name."""
    if not os.path.isfile(CJK_FONT):
        raise FileNotFoundError(f"{CJK_FONT} is missing: the Chinese figures need it (fonts/README.md)")
    fonts = font_manager.fontManager
    fonts.ttflist = [f for f in fonts.ttflist if f.name != CJK_FAMILY]
    fonts.addfont(CJK_FONT)
    font_manager.FontManager._findfont_cached.cache_clear()
    found = font_manager.findfont(font_manager.FontProperties(family=CJK_FAMILY), fallback_to_default=False)
    if os.path.realpath(found) != os.path.realpath(CJK_FONT):
        raise RuntimeError(f"matplotlib picked {found} for {CJK_FAMILY}; the figures must use {CJK_FONT}")


def draw(name, figures=FIGURES, lang="en"):
    """The SVG text of figure ``name`` of ``figures`` in ``lang``, with its title and description."""
    found = figures[name]
    _own_fonts_only()
    catalog = messages.catalog(lang)
    if catalog is not None:
        _cjk_font()
    _words["catalog"] = catalog
    said = catalog.gettext if catalog is not None else str
    try:
        with matplotlib.rc_context(STYLE):
            return _described(found.draw(), said(found.title), said(found.desc))
    finally:
        _words["catalog"] = None


def data_uri(svg):
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def embed(source, figures=FIGURES, lang="en"):
    """Markdown whose ``figure:<name>`` images are replaced by the drawn figures (in ``lang``)."""
    def sub(m):
        name = m.group(1)
        if name not in figures:
            raise KeyError(f"the notebook asks for figure:{name}; figures.py draws {sorted(figures)}")
        return "](" + data_uri(draw(name, figures, lang)) + ")"
    return FIGURE_URL.sub(sub, source)
