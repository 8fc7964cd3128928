"""Pygments' Python lexer, tokenizing with one regular expression per state.

A RegexLexer tries each rule of its state in turn, one Python call per rule, until one
matches: about forty tries per token for Python's lexer, and highlighting the learner's
own cells was a third of a feedback page's CPU. Python's ``re`` tries the branches of an
alternation in order too, and takes the first that matches, so one pattern per state, its
rules as groups in their order, picks the rule the stock loop picks, in one call; the rule's
own pattern then gives the match its action reads. The same tokens, so the same HTML
(tests/test_highlighting.py compares them with the stock lexer's).
Rule (upstream/): relies on another package's internals, and says which (RELIED_ON)."""
import functools
import re

from pygments.lexers.python import PythonLexer
from pygments.token import Error, Whitespace, _TokenType

_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.VERBOSE, "x"))
_LEADING_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")   # (?i) at a pattern's start: its compiled flags say it
_FLAGS_WE_SCOPE = re.UNICODE | sum(flag for flag, _ in _FLAGS)


def _scoped(compiled):
    """A rule's pattern as a branch of a bigger one, its flags scoped to it, then an empty
    group that names the branch that matched (the last group closed: ``lastindex``). A group
    at the start would hide the branch's first character from ``re``, which skips a branch
    that cannot start at the text's next character without trying it. None when it cannot
    be: a back-reference or a named group would change meaning once numbered among other
    rules' groups; ASCII or locale flags cannot be scoped."""
    if compiled.groupindex or compiled.flags & ~_FLAGS_WE_SCOPE or re.search(r"\\[1-9]|\(\?P=", compiled.pattern):
        return None
    body = compiled.pattern
    if body.startswith("(?") and _LEADING_FLAGS.match(body):
        body = body[_LEADING_FLAGS.match(body).end():]
    if compiled.flags & re.VERBOSE:
        body += "\n"   # a comment on its last line must not swallow the closing parentheses
    on = "".join(letter for flag, letter in _FLAGS if compiled.flags & flag)
    off = "".join(letter for flag, letter in _FLAGS if not compiled.flags & flag)
    return f"(?{on}-{off}:{body})()" if off else f"(?{on}:{body})()"


def _combined(rules):
    """One state's rules as one pattern: (its ``match``, {its group number: the rule}), or
    None when a rule cannot join the others (the state then keeps the stock loop)."""
    branches, by_group, group = [], {}, 1
    for rule in rules:
        compiled = rule[0].__self__   # the rule's bound ``match``
        branch = _scoped(compiled)
        if branch is None:
            return None
        branches.append(branch)
        group += compiled.groups + 1
        by_group[group - 1] = rule
    try:
        pattern = re.compile("|".join(branches))
    except re.error:
        return None
    return (pattern.match, by_group) if pattern.groups == group - 1 else None


class _States(dict):
    """{state: ``_combined`` of its rules}, each made when the lexer first enters the state:
    most code never enters most of Python's 49 states, and compiling all of them would cost a
    process a tenth of a second."""

    def __init__(self, tokens):
        super().__init__()
        self.tokens = tokens

    def __missing__(self, state):
        self[state] = found = _combined(self.tokens[state])
        return found


@functools.cache
def combined_states(lexer_class):
    """``_States`` of ``lexer_class`` (its rules as its first instance processes them)."""
    lexer_class()   # RegexLexer's metaclass builds _tokens as the first instance is made
    return _States(lexer_class._tokens)


def _first_rule(rules, text, pos):
    """The stock loop's pick, for a state whose rules could not be joined: the first rule that
    matches at ``pos``, and its match; None when none does."""
    for rule in rules:
        found = rule[0](text, pos)
        if found:
            return rule, found
    return None


class OneRegexPerState:
    """A RegexLexer whose ``get_tokens_unprocessed`` matches one pattern per state
    (``combined_states``); what it yields is what RegexLexer's loop yields."""

    def get_tokens_unprocessed(self, text, stack=("root",)):
        states = combined_states(type(self))
        pos, stack = 0, list(stack)
        table = states[stack[-1]]
        while True:
            if table is not None:
                found = table[0](text, pos)
                rule = table[1][found.lastindex] if found is not None else None
            else:
                hit = _first_rule(states.tokens[stack[-1]], text, pos)
                rule, found = hit if hit is not None else (None, None)
            if rule is None:   # no rule matches here
                if pos >= len(text):
                    return
                if text[pos] == "\n":   # a line's end takes the lexer back to its root state
                    stack = ["root"]
                    table = states["root"]
                    yield pos, Whitespace, "\n"
                else:
                    yield pos, Error, text[pos]
                pos += 1
                continue
            own_match, action, new_state = rule
            if action is not None:
                if type(action) is _TokenType:
                    yield pos, action, found.group()
                else:   # a callback reads the groups of the rule's own pattern
                    yield from action(self, found if table is None else own_match(text, pos))
            pos = found.end()
            if new_state is not None:
                _move(stack, new_state)
                table = states[stack[-1]]


def _move(stack, new_state):
    """A rule's state transition, as RegexLexer makes it."""
    if isinstance(new_state, tuple):
        for state in new_state:
            if state == "#pop":
                if len(stack) > 1:
                    stack.pop()
            elif state == "#push":
                stack.append(stack[-1])
            else:
                stack.append(state)
    elif isinstance(new_state, int):   # pops, but the bottom state stays
        del stack[1 if abs(new_state) >= len(stack) else new_state:]
    elif new_state == "#push":
        stack.append(stack[-1])
    else:
        raise ValueError(f"unknown state transition {new_state!r}")


class QuickPythonLexer(OneRegexPerState, PythonLexer):
    """Pygments' Python lexer, one pattern per state."""
