"""The Python files shipped beside a notebook (its utilities, a training script...), in another
language: a copy made at release time whose learner-facing messages are translated.

Why a copy and not gettext in the files: the English files stay exactly as written (release/
does not change by a byte), the learner's copy needs nothing but what it needed (numpy; and
matplotlib for a plot), and a learner who opens the file reads its messages in the notebook's
language. The messages are kept in the notebook's catalog (``<id>.po``), in the context of
their file's name (``translate.update_catalogs`` extracts them).

A message is a string literal (an f-string too, or literals written side by side) that is
printed, raised, returned by a function, or drawn on a plot (``set_xlabel``, ``set_ylabel``,
``set_title``, ``text``: their last positional argument); its catalog entry is its text as written between the quotes, so an
f-string's fields are the code's own expressions (``{label}``, ``{loss:.3f}``), which the
translation must keep exactly. A plot label is drawn on the learner's machine, which may have
no font with Chinese glyphs: in a translated copy it becomes ``*_label(translated, English)``
(the label and the call's next positional argument, its ``fontdict``), and the file gets
``shared/plot_labels.py``'s ``_label``, which gives the English words with one note when no
installed font can draw the translated ones.
Rule (authoring/): runs in the course staff's process, never on a learner's code.
"""
from __future__ import annotations

import ast
import os
import re

from .. import PACKAGE

PLOT_CALLS = {"set_xlabel", "set_ylabel", "set_title", "text"}
SAID_CALLS = {"print"} | PLOT_CALLS
LITERAL = re.compile(r'([rRbBuUfF]{0,2})"((?:[^"\\\n])*)"')
PLOT_LABELS = os.path.join(PACKAGE, "shared", "plot_labels.py")


class Message:
    """One message of a file: where its literals are, its text, whether it is an f-string and
    whether it is a plot's label."""

    def __init__(self, start: int, end: int, text: str, formatted: bool, plot: bool):
        self.start, self.end, self.text, self.formatted, self.plot = start, end, text, formatted, plot

    def literal(self, text: str) -> str:
        return ("f" if self.formatted else "") + '"' + text + '"'


def _said(tree: ast.AST) -> list[tuple[ast.expr, bool]]:
    """The string expressions a module says to its reader, with whether each is a plot's label."""
    found: list[tuple[ast.expr, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name in SAID_CALLS:
                found += [(a, name in PLOT_CALLS and a is node.args[-1]) for a in node.args]
                # print(..., "agree" if ok else "look again"): each branch is said
                found += [(b, False) for a in node.args if isinstance(a, ast.IfExp) and name == "print"
                          for b in (a.body, a.orelse)]
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            found += [(a, False) for a in node.exc.args]
        elif isinstance(node, ast.Return) and node.value is not None:
            found.append((node.value, False))
    return [(e, plot) for e, plot in found if isinstance(e, ast.JoinedStr)
            or (isinstance(e, ast.Constant) and isinstance(e.value, str))]


def messages_of(source: str) -> list[Message]:
    """The messages of a module's source, in the order they are written."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    found = []
    def column(line: int, byte: int) -> int:   # ast counts a line's columns in UTF-8 bytes
        return len(lines[line - 1].encode("utf-8")[:byte].decode("utf-8"))

    for expr, plot in _said(ast.parse(source)):
        start = offsets[expr.lineno - 1] + column(expr.lineno, expr.col_offset)
        end_line, end_col = expr.end_lineno or expr.lineno, expr.end_col_offset or 0
        end = offsets[end_line - 1] + column(end_line, end_col)
        segment = source[start:end]
        parts = LITERAL.findall(segment)
        if LITERAL.sub("", segment).strip() or any(set(prefix.lower()) - {"f"} for prefix, _ in parts):
            raise ValueError(f"a message must be plain or f-string literals without escapes: {segment!r}")
        formatted = any("f" in prefix.lower() for prefix, _ in parts)
        if formatted and any("f" not in prefix.lower() and re.search(r"[{}]", text) for prefix, text in parts):
            raise ValueError(f"a plain literal with braces beside an f-string: {segment!r}")
        found.append(Message(start, end, "".join(text for _, text in parts), formatted, plot))
    return sorted(found, key=lambda m: m.start)


def translated(source: str, words: dict[str, str], helper_words: dict[str, str] | None = None) -> str:
    """``source`` with each message that ``words`` translates replaced; a plot's label becomes
    ``*_label(translated, English)``, and the file then gets ``_label``'s definition (its own
    messages translated by ``helper_words``)."""
    out, done, labels = [], 0, False
    for m in messages_of(source):
        if m.text not in words:
            continue
        text = m.literal(words[m.text])
        if m.plot:
            text, labels = f"*_label({text}, {m.literal(m.text)})", True
        out += [source[done:m.start], text]
        done = m.end
    out.append(source[done:])
    if labels:
        out += ["\n\n", helper_text(helper_words or {})]
    return "".join(out)


def helper_text(words: dict[str, str]) -> str:
    """``_label``'s definition, its own messages translated, as a translated file carries it."""
    with open(PLOT_LABELS, encoding="utf-8") as f:
        helper = f.read()
    body = helper[helper.index("\nimport"):].lstrip("\n")   # without the module's docstring
    return translated(body, words)


FIELD = re.compile(r"\{[^{}]*\}")


def translation_problems(english: str, said: str) -> list[str]:
    """Why ``said`` cannot stand for ``english`` in a file: an f-string's fields are code, to
    be kept exactly; a quote, a backslash or a new line would change the literal."""
    problems = []
    if sorted(FIELD.findall(said)) != sorted(FIELD.findall(english)):
        problems.append(f"the translation of {english[:50]!r} does not keep its fields {sorted(FIELD.findall(english))}")
    if re.search(r'["\\\n]', said):
        problems.append(f"the translation of {english[:50]!r} has a quote, a backslash or a new line")
    return problems


def shipped_sources(assignment, folder: str) -> list[tuple[str, str]]:
    """(file name, text) of the Python files a learner gets beside the notebook and reads:
    the source folder's own modules (``folder``) and the generated utilities; then
    plot_labels.py (as its words are kept) when one of them draws a plot's label."""
    from .generated import utils_text
    made = {assignment.checks_module + ".py", assignment.utils_module + ".py"}
    files = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py") and name not in made:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                files.append((name, f.read()))
    if assignment.utils_module:
        files.append((assignment.utils_module + ".py", utils_text(assignment)))
    if any(m.plot for _, text in files for m in messages_of(text)):
        with open(PLOT_LABELS, encoding="utf-8") as f:
            files.append((os.path.basename(PLOT_LABELS), f.read()))
    return files


def write_translated(assignment, folder: str, table: dict[tuple[str, str], str]) -> None:
    """Rewrite the shipped files in ``folder`` (a copy being released) with the messages that
    ``table`` ({(file name, English): translation}, the notebook's catalog) translates."""
    helper = os.path.basename(PLOT_LABELS)
    words_of = lambda name: {en: text for (where, en), text in table.items() if where == name}  # noqa: E731
    for name, text in shipped_sources(assignment, folder):
        words = words_of(name)
        problems = [p for en, said in words.items() for p in translation_problems(en, said)]
        if problems:
            raise ValueError(f"{name}: " + "; ".join(problems))
        if name == helper:
            continue
        done = translated(text, words, words_of(helper))
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(done)
