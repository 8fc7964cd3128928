"""Pygments' Python lexer, tokenizing with one regular expression per state.

A RegexLexer tries each rule of its state in turn, one Python call per rule, until one
matches: about forty tries per token for Python's lexer, and highlighting the learner's
own cells was a third of a feedback page's CPU. Python's ``re`` tries the branches of an
alternation in order too, and takes the first that matches, so one pattern per state, its
rules as groups in their order, picks the rule the stock loop picks, in one call; the rule's
own pattern then gives the match its action reads. Each such pattern holds only the rules
that could match at the text's next character (``starts``): ``re`` tries every branch of an
alternation at each token, about fifty in Python's root state, and most cannot start with
that character. The same tokens, so the same HTML (tests/test_highlighting.py compares them
with the stock lexer's).
Rule (upstream/): relies on another package's internals, and says which (RELIED_ON)."""
import functools
import re
from re import _constants as _sre  # type: ignore[attr-defined]  # re's parse of a pattern: ``starts`` reads it
from re import _parser as _sre_parser  # type: ignore[attr-defined]

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
    """Rules (a state's, or those of them that could match at a character) as one pattern: (its
    ``match``, {its group number: the rule}), or None when a rule cannot join the others (the
    state then keeps the stock loop)."""
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


_ASCII = frozenset(map(chr, range(128)))
_REPEATS = (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT)
_ONE_CHARACTER = (_sre.LITERAL, _sre.NOT_LITERAL, _sre.ANY, _sre.IN)
_CATEGORIES = {_sre.CATEGORY_DIGIT: r"\d", _sre.CATEGORY_NOT_DIGIT: r"\D", _sre.CATEGORY_SPACE: r"\s",
               _sre.CATEGORY_NOT_SPACE: r"\S", _sre.CATEGORY_WORD: r"\w", _sre.CATEGORY_NOT_WORD: r"\W"}


@functools.lru_cache(maxsize=None)
def _class_pattern(text, flags):
    return re.compile(text, flags).fullmatch


def _item_text(op, av):
    """A one-character item of a parsed pattern written again as a pattern's text."""
    if op is _sre.LITERAL:
        return re.escape(chr(av))
    if op is _sre.NOT_LITERAL:
        return "[^" + re.escape(chr(av)) + "]"
    if op is _sre.ANY:
        return "."
    parts = []
    for kind, value in av:
        if kind is _sre.NEGATE:
            parts.insert(0, "^")
        elif kind is _sre.LITERAL:
            parts.append(re.escape(chr(value)))
        elif kind in (_sre.RANGE, _sre.RANGE_UNI_IGNORE):
            parts.append(re.escape(chr(value[0])) + "-" + re.escape(chr(value[1])))
        elif kind is _sre.CATEGORY and value in _CATEGORIES:
            parts.append(_CATEGORIES[value])
        else:
            return None
    return "[" + "".join(parts) + "]"


def starts(items, flags):
    """What a pattern (``re``'s parse of it, ``items``, under ``flags``) could match first: the
    ASCII characters a match can start with, and whether a match can be empty (then it can
    match anywhere, the text's end included). Each one-character item is asked of ``re``
    itself, character by character; anything else it cannot tell counts as every character."""
    found, empty = set(), True
    for op, av in items:
        if op in _ONE_CHARACTER:
            text = _item_text(op, av)
            if text is None:
                return _ASCII, True
            fullmatch = _class_pattern(text, flags & ~(re.MULTILINE | re.VERBOSE))
            return frozenset(found | {c for c in _ASCII if fullmatch(c)}), False
        if op is _sre.BRANCH:
            branches = [starts(branch, flags) for branch in av[1]]
            first, empty = set().union(*(b[0] for b in branches)), any(b[1] for b in branches)
        elif op is _sre.SUBPATTERN:
            first, empty = starts(av[3], (flags | av[1]) & ~av[2])
        elif op in _REPEATS:
            first, empty = starts(av[2], flags)
            empty = empty or av[0] == 0
        elif op is _sre.ATOMIC_GROUP:
            first, empty = starts(av, flags)
        elif op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):   # zero width
            first, empty = set(), True
        else:   # a back-reference...: not ruled out
            return _ASCII, True
        found |= first
        if not empty:
            return frozenset(found), False
    return frozenset(found), True


# Characters that share one pattern (the rules any of them could start): each pattern that
# keeps the rule of names compiles its Unicode class again (several milliseconds).
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_KINDS = {c: _LETTERS for c in _LETTERS}


class _ByCharacter(dict):
    """One state's rules: {a character: ``_combined`` of the rules that could match at it
    (``starts``; beyond ASCII, all of them)}, made when the lexer first meets the character in
    the state, and shared by the characters that keep the same rules."""

    def __init__(self, rules, combined):
        super().__init__()
        self.rules = rules
        self.starts = [starts(_sre_parser.parse(rule[0].__self__.pattern, rule[0].__self__.flags),
                              rule[0].__self__.flags) for rule in rules]
        self.by_rules = {tuple(range(len(rules))): combined}   # ``combined``: all of them, as _combined joins them

    def __missing__(self, char):
        if char.isascii():   # "": the text's end, where only a match that can be empty can be
            kind = _KINDS.get(char, char)
            kept = tuple(i for i, (first, empty) in enumerate(self.starts) if empty or not first.isdisjoint(kind))
        else:
            kept = tuple(range(len(self.rules)))
        if kept not in self.by_rules:
            self.by_rules[kept] = _combined([self.rules[i] for i in kept]) if kept else (_no_match, {})
        self[char] = found = self.by_rules[kept]
        return found


def _no_match(text, pos):
    return None


class _States(dict):
    """{state: its ``_ByCharacter``}, each made when the lexer first enters the state: most
    code never enters most of Python's 49 states, and compiling all of them would cost a
    process a tenth of a second. None for a state whose rules cannot all be joined (it keeps
    the stock loop)."""

    def __init__(self, tokens):
        super().__init__()
        self.tokens = tokens

    def __missing__(self, state):
        combined = _combined(self.tokens[state])
        self[state] = found = _ByCharacter(self.tokens[state], combined) if combined else None
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
                match, by_group = table[text[pos:pos + 1]]
                found = match(text, pos)
                rule = by_group[found.lastindex] if found is not None else None
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
