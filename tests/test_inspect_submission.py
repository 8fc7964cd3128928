"""run/inspect_submission.py: the flags for code that looks for hidden things, asked of the
regular expressions only when the code holds a text every match must hold."""
import importlib.util
import itertools
import os
import random
import re

import pytest

from assignments.grading.run import inspect_submission
from assignments.grading.run.inspect_submission import ATTEMPTS, _found, _needles

_BUILD = importlib.util.spec_from_file_location(
    "hostile_build", os.path.join(os.path.dirname(__file__), "fixtures", "hostile", "build.py"))
hostile = importlib.util.module_from_spec(_BUILD)
_BUILD.loader.exec_module(hostile)
CHEATS = hostile.CHEATS


def test_every_pattern_has_its_needles():
    """Each flag's pattern is of the shape ``_needles`` reads: none is searched unfiltered."""
    for flag, pattern in ATTEMPTS:
        needles = _needles(pattern)
        assert needles and all(needles), flag


@pytest.mark.parametrize("pattern, needles", [
    (r"\b(abc|de\.f)\b", ("abc", "de.f")),
    (r"(abc|abd)", ("ab",)),               # the parser takes the common start out of the branches
    (r"(x\w+y|zz)", ("x", "zz")),
    (r"(?i)(abc|def)", None),              # a match need not hold the text as written
    (r"(abc|d+)", None),                   # an alternative without a literal character
    (r"x(abc)", None),                     # not one group of alternatives
])
def test_needles_of_a_pattern(pattern, needles):
    assert _needles(pattern) == needles


def _texts():
    """Code as learners write it, the hostile corpus's cells, and each pattern's needles and near
    misses put in at random places."""
    texts = ["def f(x):\n    return np.tanh(x)\n", "", "import numpy as np\nimport os\n"]
    texts += [cell for case in CHEATS.values() for cell in case.get("cells", [])]
    texts += [answer for case in CHEATS.values() for answer in case.get("answers", {}).values()]
    pieces = [n for _, p in ATTEMPTS for n in _needles(p)]
    pieces += ["np.testing.assert_allclose = f", "builtins.print =x", "rnn_checks.check = g", "xsocket ",
               "requestsx", "_socket", "os.forkpty", "socket.socket.send = h", "sub-mitted/", "/rooted",
               "assignmentsx", "the assignments", "gradebooks", "np.testing.x", "a_checks.b\n=c"]
    rng = random.Random(0)
    for _ in range(400):
        base = rng.choice(texts[:3] + ["x = 1\n" * 5])
        for piece in rng.sample(pieces, rng.randint(1, 3)):
            at = rng.randint(0, len(base))
            base = base[:at] + rng.choice(["", " ", "\n", "a", "_"]) + piece + rng.choice(["", " ", "(", "x", "\n"]) + base[at:]
        texts.append(base)
    return texts


def test_found_is_the_search():
    """Filtered or not, the same answer for every pattern and text. (Were a needle left out, a text
    holding only that alternative would be missed.)"""
    texts = _texts()
    for (flag, pattern), text in itertools.product(ATTEMPTS, texts):
        assert _found(pattern, text) == (re.search(pattern, text) is not None), (flag, text)
    assert any(_found(p, t) for (_, p), t in itertools.product(ATTEMPTS, texts))


def test_a_needle_left_out_is_caught(monkeypatch):
    """The check above fails when an alternative's needle is missing."""
    flag, pattern = ATTEMPTS[1]
    monkeypatch.setattr(inspect_submission, "_needles", lambda p: _needles(p)[1:] if p == pattern else _needles(p))
    assert any(_found(pattern, t) != (re.search(pattern, t) is not None) for t in _texts())
