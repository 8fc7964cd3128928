"""How a sequence function must drive its cell, as data the checks and the judge read
(student_checks.protocol): where the number of steps comes from and in which order they run;
for each argument of the cell, where it comes from (a slice of an input, an item of an input,
or carried from what the previous call returned, starting from ``init``, plus an ``upstream``
slice); and how each returned value relates to what the cell returned ("stack": one step per
slice, "final": the last call's, "sum": over all calls, "caches").

These builders describe the usual loops of a recurrent network over time; an assignment may
also write its protocol out by hand.
Rule (contract/): imports nothing of the engine but shipped/; strictly typed.
"""


def forward_loop(callee, outputs, memory=False):
    """A forward pass over time: ``xt`` sliced from ``x``, the hidden state carried from
    ``a0``; with ``memory``, a second state ``c_prev`` carried from zeros."""
    args = [{"name": "xt", "slice": "x"}, {"name": "a_prev", "carry": "a_next", "init": "a0"}]
    if memory:
        args.append({"name": "c_prev", "carry": "c_next", "init": "zeros", "alt_init": "a0"})
    return {"callee": callee, "steps_from": ["x", 2], "reverse": False, "args": args, "outputs": outputs}


def backward_loop(callee, grads, memory=False):
    """Backpropagation through time: the step's ``da`` plus the carried ``da_prev`` (zeros at
    the last step), each step's own cache, ``dx`` stacked, ``da0`` the last ``da_prev``, and
    the parameter gradients ``grads`` summed over the steps."""
    args = [{"name": "da_next", "carry": "da_prev", "init": "zeros", "upstream": "da"}]
    if memory:
        args.append({"name": "dc_next", "carry": "dc_prev", "init": "zeros"})
    args.append({"name": "cache", "item": "caches"})
    outputs = {"dx": ["stack", "dxt"], "da0": ["final", "da_prev"], **{g: ["sum", g] for g in grads}}
    return {"callee": callee, "steps_from": ["da", 2], "reverse": True, "args": args, "outputs": outputs}
