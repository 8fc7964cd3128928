"""This assignment's seeded inputs as data (grading/contract/cases.py): the published cross-checks,
the notebook's examples, the public checks shipped to students and the hidden cases used
only when grading."""
from ..grading.contract import cases
from ..grading.contract.cases import Recipe
from .exercises import BY_NAME


def inputs(recipe):
    from . import ASSIGNMENT
    return cases.inputs(ASSIGNMENT, recipe)


def generic_draws(function, n_x, n_a, n_y, m, T_x):
    """The draw list for any shape: inputs, then parameters, then upstream gradients."""
    ex = BY_NAME[function]
    cell = function.replace("_backward", "_forward") if ex.forward else function
    is_cell = "cell" in cell
    draws = [("xt", (n_x, m)) if is_cell else ("x", (n_x, m, T_x)),
             ("a_prev", (n_a, m)) if is_cell else ("a0", (n_a, m))]
    if cell == "lstm_cell_forward":
        draws.append(("c_prev", (n_a, m)))
    if "Wax" in ex.parameters:
        draws += [("Wax", (n_a, n_x)), ("Waa", (n_a, n_a)), ("Wya", (n_y, n_a)),
                  ("ba", (n_a, 1)), ("by", (n_y, 1))]
    else:
        for gate in "fico":
            draws += [(f"W{gate}", (n_a, n_a + n_x)), (f"b{gate}", (n_a, 1))]
        draws += [("Wy", (n_y, n_a)), ("by", (n_y, 1))]
    if ex.forward:
        if is_cell:
            draws.append(("da_next", (n_a, m)))
            if "c_prev" in BY_NAME[cell].args:
                draws.append(("dc_next", (n_a, m)))
        else:
            draws.append(("da", (n_a, m, T_x)))
    return tuple(draws)


class Shape(cases.Shape):
    """A case's sizes (grading/contract/cases.py), drawing this assignment's inputs."""
    functions = tuple(BY_NAME)
    draw_list = staticmethod(generic_draws)


# Shipped with the release: students' checks run these. The notebook examples come first.
PUBLIC_SHAPES = (Shape(7, n_x=4, n_a=3, n_y=2, m=1, T_x=2),)

# Never shipped: only the grader draws them. All sizes differ; one has m = 1, one T_x = 1.
HIDDEN_SHAPES = (
    Shape(1013, n_x=4, n_a=6, n_y=3, m=5, T_x=7),
    Shape(2027, n_x=7, n_a=3, n_y=5, m=1, T_x=4),
    Shape(3041, n_x=2, n_a=5, n_y=4, m=3, T_x=1),
    Shape(4057, n_x=6, n_a=4, n_y=2, m=8, T_x=9),
    Shape(5081, n_x=3, n_a=7, n_y=6, m=2, T_x=5, zero=("dc_next",)),   # no gradient from the next cell state
)


def _lstm_params(n_a=5, n_x=3, n_y=2, order="fioc"):
    draws = []
    for gate in order:
        draws += [(f"W{gate}", (n_a, n_a + n_x)), (f"b{gate}", (n_a, 1))]
    return tuple(draws)


_RNN_FWD_PARAMS = (("Waa", (5, 5)), ("Wax", (5, 3)), ("Wya", (2, 5)), ("ba", (5, 1)), ("by", (2, 1)))
_RNN_BWD_PARAMS = (("Wax", (5, 3)), ("Waa", (5, 5)), ("Wya", (2, 5)), ("ba", (5, 1)), ("by", (2, 1)))
_LSTM_OUT = (("Wy", (2, 5)), ("by", (2, 1)))

# The widely published recipes (spec, "Cross-check values"), verbatim in draw order and value.
PUBLISHED = {
    "rnn_cell_forward": Recipe(
        "rnn_cell_forward", 1, (("xt", (3, 10)), ("a_prev", (5, 10))) + _RNN_FWD_PARAMS,
        published={"a_next[4][0]": 0.59584544, "a_next[4][9]": 0.82872037, "yt_pred[1][0]": 0.9888161}),
    "rnn_forward": Recipe(
        "rnn_forward", 1, (("x", (3, 10, 4)), ("a0", (5, 10))) + _RNN_FWD_PARAMS,
        published={"a[4][1]": [-0.99999375, 0.77911235, -0.99861469, -0.99833267],
                   "y_pred[1][3]": [0.79560373, 0.86224861, 0.11118257, 0.81515947]}),
    "lstm_cell_forward": Recipe(
        "lstm_cell_forward", 1,
        (("xt", (3, 10)), ("a_prev", (5, 10)), ("c_prev", (5, 10))) + _lstm_params(order="fioc") + _LSTM_OUT,
        published={"a_next[4][0]": -0.66408471, "c_next[2][0]": 0.63267805, "yt_pred[1][0]": 0.79913913}),
    "lstm_forward": Recipe(
        "lstm_forward", 1, (("x", (3, 10, 7)), ("a0", (5, 10))) + _lstm_params(order="fioc") + _LSTM_OUT,
        published={"a[4][3][6]": 0.17211777, "y[1][4][3]": 0.95087346, "c[1][2][1]": -0.85554492}),
    "rnn_cell_backward": Recipe(
        "rnn_cell_backward", 1, (("xt", (3, 10)), ("a_prev", (5, 10))) + _RNN_BWD_PARAMS + (("da_next", (5, 10)),),
        published={"dxt[1][2]": -1.38721305, "da_prev[2][3]": -0.15239949, "dWax[3][1]": 0.41077282,
                   "dWaa[1][2]": 1.15034507, "dba[4]": [0.20023491]}),
    "rnn_backward": Recipe(
        "rnn_backward", 1, (("x", (3, 10, 4)), ("a0", (5, 10))) + _RNN_BWD_PARAMS + (("da", (5, 10, 4)),),
        published={"dx[1][2]": [-2.07101689, -0.59255627, 0.02466855, 0.01483317], "da0[2][3]": -0.31494238,
                   "dWax[3][1]": 11.26410450, "dWaa[1][2]": 2.30333313, "dba[4]": [-0.74747722]}),
    "lstm_cell_backward": Recipe(
        "lstm_cell_backward", 1,
        (("xt", (3, 10)), ("a_prev", (5, 10)), ("c_prev", (5, 10))) + _lstm_params(order="fioc") + _LSTM_OUT
        + (("da_next", (5, 10)), ("dc_next", (5, 10))),
        published={"dxt[1][2]": 3.23055912, "da_prev[2][3]": -0.06396214, "dc_prev[2][3]": 0.79752204,
                   "dWf[3][1]": -0.14795484, "dWi[1][2]": 1.05749806, "dWc[3][1]": 2.30456216,
                   "dWo[1][2]": 0.33131160, "dbf[4]": [0.18864637], "dbi[4]": [-0.40142491],
                   "dbc[4]": [0.25587763], "dbo[4]": [0.13893342]}),
    # The published lstm_backward recipe back-propagates 4 of 7 steps (da is shorter than x).
    "lstm_backward": Recipe(
        "lstm_backward", 1, (("x", (3, 10, 7)), ("a0", (5, 10))) + _lstm_params(order="fioc") + (("da", (5, 10, 4)),),
        zeros=_LSTM_OUT,
        published={"dx[1][2]": [0.00218254, 0.28205375, -0.48292508, -0.43281115], "da0[2][3]": 0.31277031,
                   "dWf[3][1]": -0.08098023, "dWi[1][2]": 0.40512433, "dbf[4]": [-0.15745657],
                   "dbo[4]": [-0.17958196]}),
}


def _example(recipe, **changes):
    draws = tuple((n, changes.get(n, s)) for n, s in recipe.draws)
    return Recipe(recipe.function, recipe.seed, draws, recipe.zeros, tuple(recipe.published))


# The notebook's worked examples: the published recipes, except that lstm_backward's da
# covers all 7 steps, so that every example has consistent shapes.
EXAMPLES = {name: _example(r, **({"da": (5, 10, 7)} if name == "lstm_backward" else {}))
            for name, r in PUBLISHED.items()}
