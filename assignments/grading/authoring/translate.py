"""A notebook in another language, made from the English one and a catalog of its prose.

The catalog (``assignments/locale/<locale>/LC_MESSAGES/<id>.po``, kept with Babel like the
course's messages: ``python -m assignments catalogs``) holds, for each cell of the source
notebook by its cell id (the entry's context):
- a markdown cell: its whole text;
- a code cell: each docstring and each comment, as written (code is never translated); and,
  in a cell nbgrader does not grade (an optional check, a demonstration), each message it
  prints (shipped_text.messages_of: a printed string literal or f-string, as written).
The Python files shipped beside the notebook have their messages in the same catalog, in the
context of their file's name (shipped_text.py makes their translated copies).
The generated cells are translated by rule: an "Expected output" cell's header is a sentence
of the course's message catalog, its printed values stay as they are.
``translated_cells`` rewrites a release notebook with it, as ``CourseRelease`` makes a
release in that language. A cell whose English changed since it was translated is left in
English (the catalog's entry is then fuzzy or absent, which tests/test_translation.py reports).
Rule (authoring/): runs in the course staff's process, never on a learner's code.
"""
from __future__ import annotations

import ast
import io
import os
import re

from ..contract import messages
from . import shipped_text
from .notebook import EXPECTED_HEADER

COMMENT = re.compile(r"^(\s*)# (.*\S)\s*$")
TRAILING = re.compile(r"^(\s*[^#\s'\"][^#'\"]*?)(\s+)# ([A-Za-z].*\S)\s*$")
"""A comment after code on its line (code without quotes, so that the # cannot be in a string)."""
WORDS = re.compile(r"(?<![\w.\[])[A-Za-z]{3,}(?=\s|$)")
"""A printed message that reads as words ("they agree"), not as a label of code ("a_next.shape =")."""


def po_path(assignment_id, lang):
    return os.path.join(messages.LOCALE_DIR, messages.LANGUAGES[lang], "LC_MESSAGES", assignment_id + ".po")


def template_path(assignment_id):
    return os.path.join(messages.LOCALE_DIR, assignment_id + ".pot")


def _docstrings(source):
    """The docstrings of a code cell's functions, as written between their quotes."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.body and isinstance(node.body[0], ast.Expr) \
                and isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str):
            segment = ast.get_source_segment(source, node.body[0].value) or ""
            found.append(segment[3:-3] if segment[:3] in ('"""', "'''") else "")
    return [d for d in found if d.strip()]


def _comments(source):
    """A code cell's comments, but those of its solution and hidden tests (no learner reads them)."""
    found, hidden = [], False
    for line in source.splitlines():
        if re.match(r"\s*### BEGIN (SOLUTION|HIDDEN TESTS)", line):
            hidden = True
        elif re.match(r"\s*### END (SOLUTION|HIDDEN TESTS)", line):
            hidden = False
        elif not hidden and COMMENT.match(line) and not COMMENT.match(line).group(2).startswith("#"):
            found.append(COMMENT.match(line).group(2))
        elif not hidden and TRAILING.match(line):
            found.append(TRAILING.match(line).group(3))
    return found


def _printed(cell):
    """The messages an ungraded code cell prints (a graded cell's words are its learner's)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if meta.get("solution") or meta.get("grade"):
        return []
    try:
        said = [m.text for m in shipped_text.messages_of(cell.source)]
    except (SyntaxError, ValueError):
        return []
    return [text for text in said if WORDS.search(shipped_text.FIELD.sub("", text))]


def prose(cell):
    """The translatable texts of a source cell (None for a generated cell, said by rule)."""
    if cell.cell_type == "markdown":
        return None if cell.source.startswith("<!-- expected output of") else [cell.source]
    if cell.cell_type == "code":
        return _docstrings(cell.source) + _comments(cell.source) + _printed(cell)
    return []


def extract(nb, shipped=()):
    """Babel's template of a notebook's prose: a message per text, in the context of its cell;
    then the messages of the Python files ``shipped`` beside it ((file name, text) pairs), in
    the context of their file (shipped_text.py)."""
    from babel.messages.catalog import Catalog
    catalog = Catalog(project=messages.PROJECT, fuzzy=False)
    for index, cell in enumerate(nb.cells):
        for text in prose(cell) or []:
            catalog.add(text, context=cell.get("id"), locations=[("cell", index)])
    for name, source in shipped:
        for m in shipped_text.messages_of(source):
            catalog.add(m.text, context=name, locations=[(name, source.count("\n", 0, m.start) + 1)])
    return catalog


def load(assignment_id, lang):
    """{(cell id, English): translation} from the catalog (untranslated and fuzzy entries left out)."""
    from babel.messages.pofile import read_po
    path = po_path(assignment_id, lang)
    if not os.path.isfile(path):
        return {}
    with open(path, "rb") as f:
        catalog = read_po(f, locale=messages.LANGUAGES[lang])
    return {(m.context, m.id): m.string for m in catalog if m.id and m.string and not m.fuzzy}


def pairs(assignment_id, lang):
    """(English, translation) of every translated text of a notebook's catalog."""
    return [(english, text) for (_, english), text in load(assignment_id, lang).items()]


def _code_cell(source, words):
    try:
        said = {m.text for m in shipped_text.messages_of(source)} & set(words)
    except (SyntaxError, ValueError):
        said = set()
    problems = [p for english in sorted(said) for p in shipped_text.translation_problems(english, words[english])]
    if problems:
        raise ValueError("; ".join(problems))
    if said:
        source = shipped_text.translated(source, {english: words[english] for english in said})
    for doc in _docstrings(source):
        if doc in words:
            source = source.replace(doc, words[doc], 1)
    lines = []
    for line in source.splitlines():
        m, t = COMMENT.match(line), TRAILING.match(line)
        if m and m.group(2) in words:
            line = f"{m.group(1)}# {words[m.group(2)]}"
        elif t and t.group(3) in words:
            line = f"{t.group(1)}{t.group(2)}# {words[t.group(3)]}"
        lines.append(line)
    return "\n".join(lines) + ("\n" if source.endswith("\n") else "")


def translated_cells(nb, assignment_id, lang):
    """Rewrite a source or release notebook's prose in ``lang`` in place; mark the notebook's
    language in its metadata (``messages.METADATA_KEY``). Returns the notebook."""
    table = load(assignment_id, lang)
    tr = messages.catalog(lang)
    for cell in nb.cells:
        words = {english: text for (cid, english), text in table.items() if cid == cell.get("id")}
        if cell.cell_type == "markdown" and cell.source in words:
            cell.source = words[cell.source]
        elif cell.cell_type == "markdown" and cell.source.startswith("<!-- expected output of") and tr is not None:
            cell.source = cell.source.replace(EXPECTED_HEADER, tr.gettext(EXPECTED_HEADER), 1)
        elif cell.cell_type == "code" and words:
            cell.source = _code_cell(cell.source, words)
    nb.metadata[messages.METADATA_KEY] = {"lang": lang}
    return nb


def _visible(text):
    """Prose as it reads: without embedded figures, HTML comments and math."""
    text = re.sub(r"<svg.*?</svg>|<!--.*?-->|\$\$.*?\$\$|\$[^$]*\$|```.*?```", "", text, flags=re.S)
    return re.sub(r"\s+", " ", text).strip()


def write_po(catalog, path):
    from babel.messages.pofile import write_po as babel_write_po
    out = io.BytesIO()
    babel_write_po(out, catalog, width=0, sort_by_file=False, omit_header=path.endswith(".pot"))
    with open(path, "wb") as f:
        f.write(out.getvalue())


def update_catalogs():
    """Extract each assignment's notebook template (<id>.pot) from its source notebook and
    merge it into each language's <id>.po with Babel (``python -m assignments catalogs``)."""
    import nbformat
    from babel.messages.pofile import read_po

    from ..contract.assignment import known, load
    for aid in known():
        a = load(aid)
        template = extract(nbformat.read(os.path.join(a.source_dir, a.notebook + ".ipynb"), as_version=4),
                           shipped_text.shipped_sources(a, a.source_dir))
        write_po(template, template_path(aid))
        for lang, locale in messages.LANGUAGES.items():
            if locale is None:
                continue
            path = po_path(aid, lang)
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    catalog = read_po(f, locale=locale)
                catalog.update(template)
                catalog.obsolete.clear()
            else:
                from babel.messages.catalog import Catalog
                catalog = Catalog(locale=locale, project=messages.PROJECT, version="1", fuzzy=False)
                catalog.update(template)
            write_po(catalog, path)
