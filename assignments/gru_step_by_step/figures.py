"""The GRU notebook's figures, drawn with matplotlib when the release is built.

They are drawn on the RNN notebook's canvas, in its colours, and kept machine-independent
in the same way (rnn_step_by_step/figures.py says how): the course's figures look alike, and
a figure of one notebook can be compared with a figure of the other. Each one is registered
with a title and a description in words, which its SVG carries as <title> and <desc>.
"""
import functools

from matplotlib import patches

from ..grading.contract.messages import N_
from ..rnn_step_by_step import figures as course
from ..rnn_step_by_step.figures import CELL_FILL, GRAD, INK, MUTED, PANEL, Canvas

FIGURE_URL = course.FIGURE_URL
GATES = {"r": "#1565c0", "z": "#2e7d32", "c": "#6a1b9a"}   # reset, update, candidate

FIGURES: dict[str, course.Figure] = {}
figure = course.registry(FIGURES)


def _bridge(c, x, y, vertical, fill=CELL_FILL):
    """A gap in a line, where another line passes over it."""
    w, h = (0.3, 0.34) if vertical else (0.34, 0.3)
    c.ax.add_patch(patches.Rectangle((x - w / 2, y - h / 2), w, h, fc=fill, ec="none", zorder=3.5))


@figure(N_("The GRU cell: one time step"),
        N_("The cell of gru_cell_forward. Along the top, the previous hidden state a_prev runs from the left to the "
           "new hidden state a_next on the right, through two element-wise steps: a multiplication by 1 minus the "
           "update gate z_t (the share of the old state that is kept), then the addition of the update gate z_t "
           "times the candidate c-tilde_t. At the bottom left, a_prev and xt are stacked into one column v, which "
           "runs along a line that feeds two sigmoid boxes: the reset gate r_t on the left and the update gate z_t "
           "on the right. The reset gate multiplies a_prev element by element; that product is stacked on top of "
           "xt (a branch of xt comes up from below, passing under the line of v) into a box labelled [r⊙a; x], and goes into the tanh of the "
           "candidate c-tilde_t. The candidate's line passes over the update gate's line to reach the "
           "multiplication by z_t. From a_next, a branch goes up through a softmax and leaves at the top as the "
           "prediction yt_pred."))
def gru_cell():
    c = Canvas(17.4, 9.6)
    _cell_state_and_gates(c)
    _cell_candidate_and_output(c)
    return c.svg()


# where gru_cell's parts sit: rows, then columns
TOP, MID, GATE, BUS, LOW = 6.9, 5.3, 3.6, 2.3, 1.2
RESET, UPDATE, STACK, CAND, BLEND = 4.8, 11.4, 7.3, 8.8, 13.0
ZX, ZY = 2.9, 3.1              # the stack z, and where xt comes up


def _cell_state_and_gates(c):
    """The hidden state's line along the top, and the stack v feeding the two gates."""
    top, gate, bus = TOP, GATE, BUS
    reset, update, blend, zx, zy = RESET, UPDATE, BLEND, ZX, ZY
    c.box(8.6, 4.7, 13.8, 7.8)
    c.code(2.0, 8.2, "gru_cell_forward", size=10, ha="left")
    # the hidden state: kept in part (1 - z), then the candidate's share (z) added
    c.text(0.45, top + 0.45, r"$a^{\langle t-1\rangle}$", ha="left", size=13)
    c.code(0.45, top - 0.42, "a_prev", ha="left")
    c.arrow([(0.4, top), (update - 0.22, top)])
    c.node(update, top, "×", color=GATES["z"])
    c.arrow([(update + 0.22, top), (blend - 0.22, top)])
    c.node(blend, top, "+", color=GATES["z"])
    c.arrow([(blend + 0.22, top), (17.0, top)])
    c.text(16.4, top + 0.45, r"$a^{\langle t\rangle}$", size=13)
    c.code(16.4, top - 0.42, "a_next")
    # v = [a_prev; xt] feeds both gates (the stacked column; z_t is the update gate)
    c.ax.add_patch(patches.Circle((2.0, top), 0.07, color=INK, zorder=5))
    c.arrow([(2.0, top), (2.0, bus), (zx - 0.4, bus)])
    c.box(zx, bus, 0.8, 0.55, "v", fc=PANEL, size=11, radius=0.12)
    c.arrow([(zy, 0.2), (zy, bus - 0.27)])
    c.text(zy + 0.3, 0.45, r"$x^{\langle t\rangle}$", size=13, ha="left")
    c.code(zy + 1.05, 0.42, "xt", ha="left")
    c.arrow([(zx + 0.4, bus), (update, bus)], head=False)
    for key, x, name, word in (("r", reset, r"$r_t$", N_("reset")), ("z", update, r"$z_t$", N_("update"))):
        col = GATES[key]
        c.arrow([(x, bus), (x, gate - 0.4)], color=col)
        c.box(x, gate, 0.95, 0.8, r"$\sigma$", fc=PANEL, ec=col, size=11, color=col)
        c.text(x + 0.55, gate - 0.6, name, size=12, color=col, ha="left")
        c.text(x, bus - 0.45, word, size=9.5, color=col)


def _cell_candidate_and_output(c):
    """The candidate, read through the reset gate; the update gate's blend; the prediction."""
    top, mid, gate, bus, low = TOP, MID, GATE, BUS, LOW
    reset, update, stack, cand, blend, zy = RESET, UPDATE, STACK, CAND, BLEND, ZY
    # the reset gate scales the old state before the candidate reads it
    c.ax.add_patch(patches.Circle((reset, top), 0.07, color=INK, zorder=5))
    c.arrow([(reset, top), (reset, mid + 0.22)])
    c.node(reset, mid, "×", color=GATES["r"])
    c.arrow([(reset, gate + 0.4), (reset, mid - 0.22)], color=GATES["r"])
    c.arrow([(reset + 0.22, mid), (stack - 0.35, mid)])
    c.text((reset + stack) / 2 - 0.1, mid + 0.42, r"$r_t \odot a^{\langle t-1\rangle}$", size=10.5)
    # ... stacked on top of xt, whose branch passes under the line of z
    c.ax.add_patch(patches.Circle((zy, low), 0.07, color=INK, zorder=5))
    c.arrow([(zy, low), (stack, low), (stack, mid - 0.5)])
    _bridge(c, stack, bus, vertical=False)
    c.box(stack, mid, 0.7, 1.0, fc=PANEL, radius=0.1)
    # what it stacks, [r⊙a; x]: the top part over the bottom one, as the column is
    c.text(stack, mid + 0.22, r"$r{\odot}a$", size=9.5)
    c.ax.plot([stack - 0.25, stack + 0.25], [mid, mid], color=INK, lw=0.6, zorder=3)
    c.text(stack, mid - 0.25, r"$x$", size=10)
    c.arrow([(stack + 0.35, mid), (cand - 0.48, mid)])
    c.box(cand, mid, 0.95, 0.8, "tanh", fc=PANEL, ec=GATES["c"], size=11, color=GATES["c"])
    c.text(cand, mid + 0.7, N_("candidate"), size=9.5, color=GATES["c"])
    c.text(cand + 0.75, mid - 0.32, r"$\tilde{c}_t$", size=12, color=GATES["c"], ha="left")
    # the update gate: 1 - z_t keeps the old state, z_t lets the candidate in
    c.arrow([(update, gate + 0.4), (update, 4.5)], color=GATES["z"], head=False)
    c.ax.add_patch(patches.Circle((update, 4.5), 0.07, color=GATES["z"], zorder=5))
    c.arrow([(update, 4.5), (update, 5.8)], color=GATES["z"])
    c.node(update, 6.1, "1−", color=GATES["z"], r=0.3)
    c.arrow([(update, 6.4), (update, top - 0.22)], color=GATES["z"])
    c.arrow([(update, 4.5), (blend, 4.5), (blend, mid - 0.22)], color=GATES["z"])
    _bridge(c, update, mid, vertical=True)
    c.arrow([(cand + 0.48, mid), (blend - 0.22, mid)], color=GATES["c"], z=4)
    c.node(blend, mid, "×", color=GATES["z"])
    c.arrow([(blend, mid + 0.22), (blend, top - 0.22)], color=GATES["z"])
    # the prediction
    c.ax.add_patch(patches.Circle((14.5, top), 0.07, color=INK, zorder=5))
    c.arrow([(14.5, top), (14.5, 7.65)])
    c.box(14.5, 8.0, 1.55, 0.7, "softmax", fc=PANEL, size=10.5)
    c.arrow([(14.5, 8.35), (14.5, 9.4)])
    c.text(14.8, 9.0, r"$\hat{y}^{\langle t\rangle}$", ha="left", size=13)
    c.code(15.6, 8.95, "yt_pred", ha="left")


@figure(N_("Inside gru_cell_backward: the three paths into da_prev"),
        N_("How the gradient da_next, which arrives from the right, reaches da_prev, which leaves on the left; "
           "every arrow is a gradient. da_next splits three ways, and the three paths meet again in a plus node "
           "on the left, whose sum is da_prev. Path 1, along the top, goes straight back through the blend: "
           "da_next times (1 minus z_t). Path 2, in the middle, goes through the candidate: da_next times z_t times "
           "(1 minus c-tilde_t squared) gives delta_c-tilde, the gradient of the candidate's pre-activation, code "
           "name dcct; multiplied by the first n_a columns of W_c, transposed (Wc[:, :n_a].T in the code), it gives "
           "the gradient of r_t times a_prev, code name dra; multiplied by the reset gate r_t, it reaches the plus node. Path 3, at the "
           "bottom, goes through the two gates. For the update gate, da_next times (c-tilde_t minus a_prev) times "
           "z_t (1 minus z_t) gives delta_z, code name dzt, which goes through the first n_a columns of W_z, "
           "transposed (Wz[:, :n_a].T). For the reset gate, a branch of dra from path 2 goes down: dra times a_prev times r_t "
           "(1 minus r_t) gives delta_r, code name drt, which goes through the first n_a columns of W_r, "
           "transposed (Wr[:, :n_a].T). The two gate terms are added, and their sum joins the plus node. A note at the bottom says "
           "that the same delta_r, delta_z and delta_c-tilde, through the last n_x columns of the three weights, "
           "give dx_t."))
def gru_backward_paths():
    c = Canvas(18.8, 9.8)
    top, mid = 7.6, 4.8
    split, join = PATH_SPLIT, PATH_JOIN
    step, value = functools.partial(_step, c), functools.partial(_value, c)
    c.text(9.4, 9.2, N_("gru_cell_backward: the three paths from da_next to da_prev"), size=10, color=INK)
    c.arrow([(18.4, mid), (split, mid)], color=GRAD, head=False)
    c.text(18.3, mid + 0.45, r"$da_{next}$", size=13, color=GRAD, ha="right")
    c.ax.add_patch(patches.Circle((split, mid), 0.07, color=GRAD, zorder=5))
    c.node(join, mid, "+", color=GRAD)
    c.arrow([(join - 0.22, mid), (0.4, mid)], color=GRAD)
    c.text(0.45, mid + 0.45, r"$da_{prev}$", size=13, color=GRAD, ha="left")
    # path 1: straight through the blend, the share 1 - z_t that kept the old state
    c.arrow([(split, mid), (split, top), (11.25, top)], color=GRAD)
    step(10.1, top, 2.3, r"$\odot\,(1 - z_t)$", "z")
    c.arrow([(8.95, top), (join, top), (join, mid + 0.22)], color=GRAD)
    c.text(10.1, top + 0.68, N_("path 1: directly"), size=10, color=GRAD)
    # path 2: through the candidate, which read r_t * a_prev
    c.arrow([(split, mid), (16.05, mid)], color=GRAD)
    step(14.6, mid, 2.9, r"$\odot\,z_t \odot (1 - \tilde{c}_t^2)$", "c")
    c.arrow([(13.15, mid), (12.1, mid)], color=GRAD)
    value(12.6, mid, r"$\delta_{\tilde{c}}$", "dcct")
    step(10.5, mid, 3.2, _weights("c"), "c")
    c.arrow([(8.9, mid), (5.0, mid)], color=GRAD)
    c.text(7.5, mid + 0.42, r"$d(r_t \odot a^{\langle t-1\rangle})$", size=11.5, color=GRAD)
    c.code(7.2, mid - 0.33, "dra", size=8.5, color=GRAD, ha="left")
    step(4.3, mid, 1.4, r"$\odot\,r_t$", "r")
    c.arrow([(3.6, mid), (join + 0.22, mid)], color=GRAD)
    c.text(13.9, mid - 0.75, N_("path 2: through the candidate"), size=10, color=GRAD)
    _through_the_gates(c, mid, low=1.65, reset_x=6.6)
    return c.svg()


PATH_SPLIT, PATH_JOIN = 16.9, 2.3   # where gru_backward_paths' da_next splits, and da_prev is summed


def _step(c, x, y, w, label, gate):
    """A box that multiplies the gradient passing through it."""
    c.box(x, y, w, 0.72, None if label.startswith("W") else label, fc=PANEL, ec=GATES[gate], lw=1.3, size=10, color=GRAD)
    if label.startswith("W"):   # the code's words: the weights' first n_a columns, transposed
        c.code(x, y, label, size=9, color=GRAD)


def _value(c, x, y, symbol, name):
    """A gradient named on its line: the symbol above, the code's name below."""
    c.text(x, y + 0.36, symbol, size=11.5, color=GRAD)
    c.code(x, y - 0.33, name, size=8.5, color=GRAD)


def _weights(gate):
    """The code's words for a gate's weights acting on a_prev: its first n_a columns, transposed."""
    return f"W{gate}[:, :n_a].T @"


def _through_the_gates(c, mid, low, reset_x):
    """Path 3 of gru_backward_paths: through the two gates; the reset gate's gradient starts
    from path 2's dra."""
    split, join = PATH_SPLIT, PATH_JOIN
    step, value = functools.partial(_step, c), functools.partial(_value, c)
    c.arrow([(split, mid), (split, low), (16.3, low)], color=GRAD)
    step(14.2, low, 4.2, r"$\odot\,(\tilde{c}_t - a^{\langle t-1\rangle}) \odot z_t (1 - z_t)$", "z")
    c.arrow([(12.1, low), (11.2, low)], color=GRAD)
    value(11.65, low, r"$\delta_z$", "dzt")
    step(9.6, low, 3.2, _weights("z"), "z")
    c.arrow([(8.0, low), (reset_x + 0.22, low)], color=GRAD)
    c.ax.add_patch(patches.Circle((reset_x, mid), 0.07, color=GRAD, zorder=5))
    c.arrow([(reset_x, mid), (reset_x, 4.0)], color=GRAD)
    step(reset_x, 3.64, 3.6, r"$\odot\,a^{\langle t-1\rangle} \odot r_t (1 - r_t)$", "r")
    c.arrow([(reset_x, 3.28), (reset_x, 2.92)], color=GRAD)
    c.text(reset_x + 0.2, 3.1, r"$\delta_r$", size=11.5, color=GRAD, ha="left")
    c.code(reset_x + 0.75, 3.08, "drt", size=8.5, color=GRAD, ha="left")
    step(reset_x, 2.56, 3.2, _weights("r"), "r")
    c.arrow([(reset_x, 2.2), (reset_x, low + 0.22)], color=GRAD)
    c.node(reset_x, low, "+", color=GRAD)
    c.arrow([(reset_x - 0.22, low), (join, low), (join, mid - 0.22)], color=GRAD)
    c.text(14.2, low - 0.68, N_("path 3: through the two gates"), size=10, color=GRAD)
    c.text(9.4, 0.45, N_(r"the same $\delta_r,\ \delta_z,\ \delta_{\tilde{c}}$ through the last n_x columns of "
                         r"$W_r,\ W_z,\ W_c$ give $dx_t$"), size=9.5, color=MUTED)


def draw(name, lang="en"):
    """The SVG text of figure ``name`` in ``lang``, with its title and description."""
    return course.draw(name, FIGURES, lang)


def embed(source, lang="en"):
    """Markdown whose ``figure:<name>`` images are replaced by the drawn figures (in ``lang``)."""
    return course.embed(source, FIGURES, lang)
