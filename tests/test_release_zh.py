"""The zh-CN release (issue 32): `python -m assignments release --lang zh-CN` builds
release-zh-CN/<id>/, byte for byte what is committed; its notebooks differ from the English
ones in prose only, say their language in their metadata, and ship the students' checks with
their compiled catalog. Prints the share of learner-facing prose that reads in Chinese."""
import ast
import io
import os
import re
import tokenize

import nbformat
import pytest
from helpers import REPO, tree_digest

from assignments.grading.authoring import release, shipped_text, translate
from assignments.grading.contract import messages
from assignments.grading.contract.assignment import known, load

CJK = re.compile(r"[\u4e00-\u9fff]")
ZH = os.path.join(REPO, "release-zh-CN")
FLOOR = 0.95   # the share of the notebooks' prose in Chinese may only grow (docs/translation.md)


def notebooks(aid):
    a = load(aid)
    name = a.notebook + ".ipynb"
    return (nbformat.read(os.path.join(REPO, "release", aid, name), as_version=4),
            nbformat.read(os.path.join(ZH, aid, name), as_version=4))


def code_only(source):
    """A code cell's code: its tokens without comments, docstrings and printed messages replaced
    by a marker (an ungraded cell's messages are translated: translate._printed)."""
    try:
        for m in reversed(shipped_text.messages_of(source)):
            source = source[:m.start] + '"<message>"' + source[m.end:]
    except (SyntaxError, ValueError):
        pass
    try:
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.body and isinstance(node.body[0], ast.Expr) \
                    and isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str):
                node.body[0].value.value = "<docstring>"
        return ast.dump(tree)
    except SyntaxError:
        return [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type != tokenize.COMMENT]


@pytest.mark.parametrize("aid", known())
def test_the_zh_release_is_what_the_command_builds(aid, tmp_path):
    built = release.build(load(aid), os.path.join(REPO, "source"), str(tmp_path), "zh-CN")
    assert tree_digest(built) == tree_digest(os.path.join(ZH, aid)), "run python -m assignments release --lang zh-CN"


@pytest.mark.parametrize("aid", known())
def test_the_zh_notebook_differs_in_prose_only(aid):
    en, zh = notebooks(aid)
    assert [c.cell_type for c in en.cells] == [c.cell_type for c in zh.cells]
    # the same cells, as nbgrader knows them (a checksum is of the cell's text: it differs with the prose)
    unsummed = lambda c: {**c.metadata, "nbgrader": {k: v for k, v in c.metadata.get("nbgrader", {}).items()  # noqa: E731
                                                     if k != "checksum"}}
    assert [unsummed(c) for c in en.cells] == [unsummed(c) for c in zh.cells]
    for e, z in zip(en.cells, zh.cells):
        if e.cell_type == "code":
            assert code_only(e.source) == code_only(z.source), z.source[:200]
    assert zh.metadata[messages.METADATA_KEY] == {"lang": "zh-CN"} and messages.METADATA_KEY not in en.metadata
    headers = [c.source.splitlines()[1] for c in zh.cells if c.source.startswith("<!-- expected output of")]
    assert headers and all(h.startswith("**期望输出**") for h in headers)
    assert any("在这里写你的代码" in c.source for c in zh.cells if c.cell_type == "code")


@pytest.mark.parametrize("aid", known())
def test_the_zh_release_ships_the_compiled_catalog_and_the_english_one_does_not(aid):
    assert open(os.path.join(ZH, aid, release.CHECK_MESSAGES), "rb").read() == messages.compiled("zh-CN")
    assert not os.path.exists(os.path.join(REPO, "release", aid, release.CHECK_MESSAGES))


def prose_share(aid):
    """(characters of the English notebook's prose now said in Chinese, all of them)."""
    table = translate.load(aid, "zh-CN")
    src = nbformat.read(os.path.join(load(aid).source_dir, load(aid).notebook + ".ipynb"), as_version=4)
    done = total = 0
    for cell in src.cells:
        texts = translate.prose(cell)
        if texts is None:   # an expected output: its header is said by rule, its numbers are numbers
            texts = []
            done += len(translate.EXPECTED_HEADER)
            total += len(translate.EXPECTED_HEADER)
        for text in texts:
            size = len(translate._visible(text))
            total += size
            said = table.get((cell.get("id"), text))
            done += size if said and CJK.search(said) else 0
    return done, total


def test_the_share_of_prose_in_chinese(capsys):
    done = total = 0
    for aid in known():
        d, t = prose_share(aid)
        done, total = done + d, total + t
        with capsys.disabled():
            print(f"\n[measure] zh-CN notebook prose in Chinese, {aid}: {d}/{t} characters ({d / t:.0%})")
    assert done / total >= FLOOR


WORDS = re.compile(r"(?<![\w.\[])[A-Za-z]{3,}(?=\s|$)")   # words, not a label of code ("a_next.shape =")


def printed_texts(source):
    """The literal text of everything a code cell prints: print()'s string arguments, an
    f-string's literal parts, each branch of a conditional."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            found += [text for arg in node.args for text in _said(arg)]
    return found


def _said(expr):
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [expr.value]
    if isinstance(expr, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else "{}" for v in expr.values)]
    if isinstance(expr, ast.IfExp):
        return _said(expr.body) + _said(expr.orelse)
    return []


@pytest.mark.parametrize("aid", known())
def test_every_message_a_zh_notebook_prints_is_chinese(aid):
    """Issue 43: what a cell of the zh-CN notebook prints for the learner to read (an optional
    check's verdict, a demonstration's sentence) comes from the catalog: no text a code cell
    prints reads as English words."""
    _, zh = notebooks(aid)
    english = [text for cell in zh.cells if cell.cell_type == "code" for text in printed_texts(cell.source)
               if WORDS.search(text) and not CJK.search(text)]
    assert english == []
