"""upstream/highlighting.py: one pattern per state gives Pygments' own tokens."""
import os
import random
import re
from re import _parser as sre_parse

import pytest
from pygments.lexer import RegexLexer, bygroups
from pygments.lexers.python import PythonLexer
from pygments.token import Keyword, Name, String, Text

from assignments.grading.upstream import highlighting
from assignments.grading.upstream.highlighting import OneRegexPerState, QuickPythonLexer, combined_states

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _python_texts():
    texts = []
    for folder in ("tests/fixtures", "assignments"):
        for root, _, files in os.walk(os.path.join(REPO, folder)):
            texts += [open(os.path.join(root, f), encoding="utf-8").read() for f in sorted(files) if f.endswith(".py")]
    return texts


def _tokens(lexer, text):
    return list(lexer.get_tokens_unprocessed(text))


def test_every_state_of_pythons_lexer_is_one_pattern():
    """Else the quick lexer quietly falls back to the stock loop there. Each state's pattern
    is made when the lexer first enters it."""
    states = combined_states(QuickPythonLexer)
    names = set(PythonLexer()._tokens)
    assert set(states.tokens) == names and len(states) < len(names)
    assert all(states[name] is not None for name in names)


def test_the_quick_lexer_gives_pygments_tokens_on_the_courses_code():
    texts = _python_texts()
    assert len(texts) > 200
    stock, quick = PythonLexer(), QuickPythonLexer()
    for text in texts:
        assert _tokens(quick, text) == _tokens(stock, text), text[:200]


def test_the_quick_lexer_gives_pygments_tokens_on_broken_code():
    """Learners' cells are often half-written: cut, doubled and stray characters reach
    Pygments' error and end-of-line paths, and the string and f-string states."""
    rng = random.Random(7)
    stock, quick = PythonLexer(), QuickPythonLexer()
    alphabet = "\n \t'\"{}()[]#\\fbr%:!=.,0x_eé€"
    samples = ['f"{a!r:>{w}}" rb\'\\d\' u"\\N{DASH}" """x\n', "def f(*, a=1, **k) -> None: ...\n",
               "class A(B, metaclass=M):\n    @property\n    def x(self): return 0o17 + 1_0.5e-3j\n",
               "match x:\n    case [a, *_] if a: pass\n", "lambda: (yield)\nasync def g(): await h()\n"]
    texts = samples + _python_texts()[:60]
    checked = 0
    for text in texts:
        for _ in range(8):
            chars = list(text)
            for _ in range(rng.randint(1, 6)):
                at = rng.randrange(len(chars) + 1)
                if chars and rng.random() < 0.5:
                    del chars[min(at, len(chars) - 1)]
                else:
                    chars.insert(at, rng.choice(alphabet))
            broken = "".join(chars)
            assert _tokens(quick, broken) == _tokens(stock, broken), broken[:200]
            checked += 1
    assert checked == 8 * len(texts)


class _Backreference(RegexLexer):
    """A rule whose back-reference would name another rule's group once joined: the
    lexer keeps the stock loop."""
    tokens = {"root": [(r"(['\"])(.*?)\1", bygroups(String, String)), (r"\w+", Name), (r"\s+", Text)]}


class _QuickBackreference(OneRegexPerState, _Backreference):
    pass


class _Flags(RegexLexer):
    """Rules whose flags differ (a leading ``(?i)``, verbose with a trailing comment, the
    lexer's MULTILINE), a state pushed and popped, a callback reading its groups."""
    flags = re.MULTILINE
    tokens = {
        "root": [(r"(?i)select\b", Keyword, "args"), (r"(?x) [a-z]+  # a word, comment last", Name),
                 (r"^#.*$", Text), (r"(\d+)(px)", bygroups(Name, Keyword)), (r"\s+", Text)],
        "args": [(r"\(", Text, "#push"), (r"\)", Text, "#pop"), (r"[^()\n]+", String)],
    }


class _QuickFlags(OneRegexPerState, _Flags):
    pass


def test_a_rule_that_cannot_join_keeps_the_stock_loop():
    assert combined_states(_QuickBackreference)["root"] is None
    text = "say 'it' and \"so\" 'unclosed\n"
    assert _tokens(_QuickBackreference(), text) == _tokens(_Backreference(), text)


def test_scoped_flags_and_transitions_keep_each_rules_meaning():
    assert None not in (combined_states(_QuickFlags)[s] for s in ("root", "args"))
    text = "SELECT (a (b) c) x\n# note\nSelect 12px ) word\n\n12pxx ?? é\n"
    assert _tokens(_QuickFlags(), text) == _tokens(_Flags(), text)


@pytest.mark.parametrize("pattern", [r"(?P<q>')x(?P=q)", r"(?a)\w+"])
def test_named_groups_and_ascii_rules_are_not_joined(pattern):
    assert highlighting._scoped(re.compile(pattern)) is None


def _starts_of(compiled):
    return highlighting.starts(sre_parse.parse(compiled.pattern, compiled.flags), compiled.flags)


def test_a_rule_left_out_at_a_character_could_not_have_matched_there():
    """``starts``: at every position of the course's code and of broken copies, every rule of
    every state of Python's lexer that matches there (not only the one the lexer takes) has the
    position's character among those it can start with, or can match the empty text."""
    rng = random.Random(11)
    rules = [rule for state in PythonLexer()._tokens.values() for rule in state]
    found = [(rule[0], *_starts_of(rule[0].__self__)) for rule in rules]
    texts = _python_texts()[:40]
    texts += ["".join(rng.choice("\n \t'\"{}()[]#\\fbrRBuU%:!=.,0x_eé€1@$`~^|&;<>?*-+/") for _ in range(400))
              for _ in range(40)]
    matched = 0
    for text in texts:
        for pos in range(0, len(text) + 1, 3):
            char = text[pos:pos + 1]
            for match, first, empty in found:
                if match(text, pos):
                    matched += 1
                    assert empty or not char.isascii() or char in first, (match.__self__.pattern[:60], char)
    assert matched > 10_000


@pytest.mark.parametrize("pattern, text, could", [
    (r"(?i)rb", "B", False), (r"(?i)rb", "R", True), (r"[^\S\n]+", " ", True), (r"[^\S\n]+", "\n", False),
    (r"(?<!\.)\bint\b", "i", True), (r"(?<!\.)\bint\b", ".", False), (r"\d*x", "x", True), (r"\d*x", "y", False),
    (r"a?", "z", True), (r"(?:ab|\\)c", "\\", True), (r"(?:ab|\\)c", "b", False), (r"(?s).", "\n", True)])
def test_what_a_pattern_can_start_with(pattern, text, could):
    first, empty = _starts_of(re.compile(pattern))
    assert (empty or text in first) == could
