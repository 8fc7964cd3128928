"""Seeded inputs of the GRU assignment as data (grading/contract/cases.py): the notebook's worked
examples, the public checks shipped to students and the hidden cases used only when grading."""
from ..grading.contract import cases
from ..grading.contract.cases import Recipe, draw  # noqa: F401 (the recipes drawn here)
from .exercises import BY_NAME


def arguments(function, values):
    from . import ASSIGNMENT
    return cases.arguments(ASSIGNMENT, function, values)


def inputs(recipe):
    from . import ASSIGNMENT
    return cases.inputs(ASSIGNMENT, recipe)


def generic_draws(function, n_x, n_a, n_y, m, T_x):
    """The draw list for any shape: inputs, then parameters (gate by gate, weight before
    bias, then the output layer), then the upstream gradient."""
    cell = "cell" in function
    draws = [("xt", (n_x, m)) if cell else ("x", (n_x, m, T_x)),
             ("a_prev", (n_a, m)) if cell else ("a0", (n_a, m))]
    for gate in "rzc":
        draws += [(f"W{gate}", (n_a, n_a + n_x)), (f"b{gate}", (n_a, 1))]
    draws += [("Wy", (n_y, n_a)), ("by", (n_y, 1))]
    if BY_NAME[function].forward:
        draws.append(("da_next", (n_a, m)) if cell else ("da", (n_a, m, T_x)))
    return tuple(draws)


class Shape(cases.Shape):
    """A case's sizes (grading/contract/cases.py), drawing the GRU's inputs."""
    functions = tuple(BY_NAME)
    draw_list = staticmethod(generic_draws)


# Shipped with the release: students' checks run these. The notebook examples come first.
PUBLIC_SHAPES = (Shape(17, n_x=4, n_a=3, n_y=2, m=1, T_x=2),)

# Never shipped: only the grader draws them. All sizes differ within a case; one has m = 1,
# one T_x = 1, one a0 = 0 (a sequence that starts from rest, as in most uses of a GRU).
HIDDEN_SHAPES = (
    Shape(1019, n_x=4, n_a=6, n_y=3, m=5, T_x=7),
    Shape(2039, n_x=7, n_a=3, n_y=5, m=1, T_x=4),
    Shape(3049, n_x=2, n_a=5, n_y=4, m=3, T_x=1),
    Shape(4073, n_x=6, n_a=4, n_y=2, m=8, T_x=9),
    Shape(5099, n_x=3, n_a=7, n_y=6, m=2, T_x=5, zero=("a0",)),
)


def hidden_recipes(function):
    return [s.recipe(function) for s in HIDDEN_SHAPES]


def public_recipes(function):
    return [EXAMPLES[function]] + [s.recipe(function) for s in PUBLIC_SHAPES]


# The notebook's worked examples: the sizes learners know from the RNN and LSTM examples
# (n_x = 3, n_a = 5, n_y = 2, m = 10, T_x = 4), seed 1, and the entries each one prints.
_SHOWS = {
    "gru_cell_forward": ("a_next[4][0]", "a_next[2][9]", "yt_pred[1][0]"),
    "gru_forward": ("a[4][1]", "y_pred[1][3]"),
    "gru_cell_backward": ("dxt[1][2]", "da_prev[2][3]", "dWr[3][1]", "dWz[1][2]", "dWc[3][1]",
                          "dbr[4]", "dbz[4]", "dbc[4]"),
    "gru_backward": ("dx[1][2]", "da0[2][3]", "dWr[3][1]", "dWz[1][2]", "dWc[3][1]", "dbc[4]"),
}
EXAMPLES = {name: Recipe(name, 1, generic_draws(name, n_x=3, n_a=5, n_y=2, m=10, T_x=4), shows=shows)
            for name, shows in _SHOWS.items()}
