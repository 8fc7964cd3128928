"""The course's message catalogs (issue 32): the template is what the code says, the zh-CN
catalog translates every sentence with the same placeholders, the students' checks speak
Chinese with the compiled catalog beside them, and the judge gives the same scores and codes
in both languages (only its words differ)."""
import contextlib
import importlib.util
import inspect
import io
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from helpers import REPO

from assignments.grading.contract import messages
from assignments.grading.contract.assignment import STUDENT_CHECKS, known, load
from assignments.grading.judging import inprocess

CJK = re.compile(r"[\u4e00-\u9fff]")
ZH_PO = messages.po_path("zh-CN")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def msgids(path):
    from babel.messages.pofile import read_po
    with open(path, "rb") as f:
        return {m.id for m in read_po(f) if m.id}


def test_the_template_is_what_the_code_says(tmp_path):
    out = tmp_path / "course.pot"
    args = messages.extract_args(str(out))
    done = subprocess.run([sys.executable, "-m", "babel.messages.frontend", *args[1:]], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert msgids(out) == msgids(messages.TEMPLATE), "run `make catalogs` (python -m assignments catalogs)"


def test_the_zh_catalog_translates_every_sentence_with_its_placeholders():
    assert messages.catalog_problems(read(messages.TEMPLATE), read(ZH_PO), "zh_CN") == []


def test_the_catalog_check_catches_a_lost_placeholder_and_an_untranslated_sentence():
    po = read(ZH_PO).decode("utf-8")
    lost = po.replace('msgstr "{name} 还不对。"', 'msgstr "还不对。"', 1)
    empty = po.replace('msgstr "{name} 还不对。"', 'msgstr ""', 1)
    extra = po.replace('msgstr "{name} 还不对。"', 'msgstr "{name} {case} 还不对。"', 1)
    assert lost != po and empty != po
    template = read(messages.TEMPLATE)
    assert any("missing placeholder ['name']" in p for p in messages.catalog_problems(template, lost.encode(), "zh_CN"))
    assert any(p.startswith("untranslated") for p in messages.catalog_problems(template, empty.encode(), "zh_CN"))
    assert any("extra placeholder ['case']" in p for p in messages.catalog_problems(template, extra.encode(), "zh_CN"))


@pytest.mark.parametrize("aid", known())
def test_every_sentence_said_at_run_time_is_in_the_catalog(aid):
    """Mistakes' feedback and case hints are data: each must be a catalog entry, word for word."""
    a = load(aid)
    said = {m.feedback for m in a.catalog} | {h for pair in a.case_hints.values() for h in pair}
    zh = messages.catalog("zh-CN")
    untranslated = [s[:60] for s in said if zh.gettext(s) == s]
    assert untranslated == []


def zh_checks(assignment, tmp_path):
    """The students' checks as a zh-CN release ships them: with check_messages.mo beside them."""
    from assignments.grading.authoring import check_data
    shutil.copy(STUDENT_CHECKS, tmp_path / "checks.py")
    (tmp_path / "check_data.json").write_text(check_data.build(assignment), encoding="utf-8")
    (tmp_path / "check_messages.mo").write_bytes(messages.compiled("zh-CN"))
    spec = importlib.util.spec_from_file_location(f"zh_checks_{assignment.short}", tmp_path / "checks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def learner(assignment, code, index=0):
    m = next(m for m in assignment.catalog if m.code == code)
    ns = {"np": np}
    exec(inspect.getsource(assignment.reference), ns)
    exec(assignment.mistakes.mutant_source(m.function, ((code, index),)), ns)
    return m, ns


def test_the_checks_speak_chinese_in_a_zh_release(tmp_path):
    a = load("rnn_step_by_step")
    checks = zh_checks(a, tmp_path)
    m, ns = learner(a, "lstm_output_uses_c_prev")
    with pytest.raises(checks.CheckFailed) as info:
        checks.check(m.function, ns)
    said = str(info.value)
    assert "还不对" in said and "输出门" in said and m.code in said, said
    assert messages.catalog("zh-CN").gettext(m.feedback) in said
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        checks.check("rnn_cell_forward", {n: getattr(a.reference, n) for n in a.by_name})
    assert "全部检查通过" in out.getvalue()


def sample(assignment, per_function=3):
    """A few catalogued variants of every function, and each reference."""
    rows = [(e.name, None) for e in assignment.exercises]
    for e in assignment.exercises:
        rows += [(e.name, m.code) for m in assignment.catalog if m.function == e.name][:per_function]
    return rows


@pytest.mark.parametrize("aid", known())
def test_the_judge_gives_the_same_scores_and_codes_in_both_languages(aid):
    a = load(aid)
    for function, code in sample(a):
        ns = {"np": np}
        exec(inspect.getsource(a.reference), ns)
        if code:
            exec(a.mistakes.mutant_source(function, ((code, 0),)), ns)
        en = inprocess.judge_all(a, ns, [function])[function]
        zh = inprocess.judge_all(a, ns, [function], lang="zh-CN")[function]
        assert (zh.score, zh.passed, zh.diagnoses, zh.cases_passed, zh.outcome) == \
            (en.score, en.passed, en.diagnoses, en.cases_passed, en.outcome), (function, code)
        assert CJK.search(zh.feedback) and not CJK.search(en.feedback), zh.feedback
        for line in zh.feedback.splitlines():   # what remains in Latin letters is code, never English prose
            assert not re.search(r"\b(the|is|of|and|should|passed|hidden)\b", line), line


def test_making_the_catalogs_twice_changes_nothing(tmp_path, monkeypatch):
    """`make catalogs` on catalogs already up to date leaves every byte as it was: Babel stamps
    each template and catalog with a new POT-Creation-Date, which alone is no change."""
    from assignments.grading.authoring import translate
    locale = tmp_path / "locale"
    shutil.copytree(messages.LOCALE_DIR, locale)
    monkeypatch.setattr(messages, "LOCALE_DIR", str(locale))
    monkeypatch.setattr(messages, "TEMPLATE", str(locale / "course.pot"))

    def make():
        with messages.steady_dates(str(locale)):
            messages.update_catalogs()
            translate.update_catalogs()
        return {p.relative_to(locale): p.read_bytes() for p in sorted(locale.rglob("*.po*"))}

    first = make()
    old = {}
    for path in locale.rglob("*.po*"):   # as if made long ago
        old[path] = messages.DATED.sub(lambda _: b'"POT-Creation-Date: 2000-01-01 00:00+0000\\n"\n', path.read_bytes())
        path.write_bytes(old[path])
    assert sum(b"2000-01-01" in data for data in old.values()) >= 3, "the catalogs carry no creation date"
    make()
    assert {p: p.read_bytes() for p in old} == old
    po = locale / "zh_CN" / "LC_MESSAGES" / "course.po"   # a real change is written, with its date
    lost = re.sub(rb'\nmsgid "Faults"\nmsgstr "[^"]*"\n', b"\n", po.read_bytes())
    assert lost != first[po.relative_to(locale)]
    po.write_bytes(lost)
    made = make()[po.relative_to(locale)]
    assert b'msgid "Faults"\nmsgstr ""\n' in made and b"2000-01-01" not in made


def test_the_shipped_catalog_ignores_the_template_creation_date(tmp_path, monkeypatch):
    """Re-extracting the template moves POT-Creation-Date (and line references) only; the
    compiled catalog in release-zh-CN/ must not change with it, or every such commit leaves
    the committed release stale."""
    before = messages.compiled("zh-CN")
    po = tmp_path / "course.po"
    dated = b'"POT-Creation-Date: 2000-01-01 00:00+0000\\n"\n'
    po.write_bytes(messages.DATED.sub(lambda _: dated, open(messages.po_path("zh-CN"), "rb").read()))
    assert b"2000-01-01" in po.read_bytes()
    monkeypatch.setattr(messages, "po_path", lambda lang: str(po))
    assert messages.compiled("zh-CN") == before


# The Chinese as a reader sees it (issue 43): every zh-CN sentence of every catalog (the course's
# messages, the figures' labels, the report's words; the notebooks' prose, comments, docstrings
# and printed messages; the shipped files' messages) is held to the typography of Simplified
# Chinese and says no English word outside code.

CJKISH = "\u2e80-\u9fff\u3000-\u303f\uff00-\uffef“”‘’—…"
CODE_SPANS = re.compile(r"```.*?```|<svg.*?</svg>|<!--.*?-->|\$\$.*?\$\$|\$[^$\n]*\$|``.+?``|`[^`\n]*`"
                        r"|\]\(figure:[^)]*\)|https?://\S+", re.S)
FIELDS = re.compile(r"\{[^{}]*\}|%\([a-z_]+\)[sd]|%[sd]")


def zh_catalogs(locale_dir=None):
    """{file name: Babel catalog} of the zh-CN catalogs: the course's and each notebook's."""
    from babel.messages.pofile import read_po
    folder = os.path.join(locale_dir or messages.LOCALE_DIR, "zh_CN", "LC_MESSAGES")
    found = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".po"):
            with open(os.path.join(folder, name), "rb") as f:
                found[name] = read_po(f, locale="zh_CN")
    return found


def zh_texts(locale_dir=None):
    """(where, kind, English, Chinese) of every translated text of the zh-CN catalogs. kind:
    "prose" (a notebook's markdown), "comment" and "docstring" (inside a code cell, read as
    code), "message" (everything else: printed, raised, shown on a page or drawn in a figure)."""
    import nbformat

    from assignments.grading.authoring import translate
    kinds = {}
    for aid in known():
        a = load(aid)
        nb = nbformat.read(os.path.join(a.source_dir, a.notebook + ".ipynb"), as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                kinds[(cell.get("id"), cell.source)] = "prose"
            elif cell.cell_type == "code":
                kinds.update({(cell.get("id"), d): "docstring" for d in translate._docstrings(cell.source)})
                kinds.update({(cell.get("id"), c): "comment" for c in translate._comments(cell.source)})
    found = []
    for name, catalog in zh_catalogs(locale_dir).items():
        for m in catalog:
            if not m.id or m.fuzzy:
                continue
            ids = m.id if isinstance(m.id, tuple) else (m.id,)
            strings = m.string if isinstance(m.string, tuple) else (m.string,)
            for english, chinese in zip(ids, strings):
                if chinese:
                    found.append((f"{name} {m.context or ''}".strip(), kinds.get((m.context, english), "message"),
                                  english, chinese))
    return found


def _as_read(text):
    """A text with its code, math and placeholders each replaced by a mark (⌘, neither a word
    nor Chinese), so that what remains is the words a reader reads around them."""
    return FIELDS.sub("⌘", CODE_SPANS.sub("⌘", text))


def typography_problems(kind, chinese):
    """What breaks Simplified Chinese typography in a text: a space or a line break between two
    Chinese characters (a browser renders a wrapped line's break as a space), ASCII quotes around
    Chinese (say “ ”), half-width , ; : ? ! . ( ) inside a Chinese sentence, a lone dash (——)."""
    c = f"[{CJKISH}]"
    text = _as_read(chinese)
    if kind == "prose":   # markdown's emphasis marks are not read: "**每一个**\n时间步" shows a space too
        text = re.sub(r"\*+", "", text)
    found = []
    gap = r"[ \t]*\n[ \t]*| " if kind in ("prose", "message") else r" "
    for m in re.finditer(rf"{c}(?:{gap}){c}", text):
        if kind in ("comment", "docstring") and text[m.end():m.end() + 1] == " ":
            continue
        found.append(f"a space between Chinese characters: {text[max(0, m.start() - 12):m.end() + 12]!r}")
    for m in re.finditer(rf'"[^"\n]*{c}[^"\n]*"', text):
        found.append(f"ASCII quotes around Chinese (use “ ”): {m.group()[:40]!r}")
    for m in re.finditer(rf"{c}[,;:?!]|{c}\.(?=\s|$)|[,;:?!]\s*(?={c}[^{CJKISH}]*{c})", text):
        found.append(f"half-width punctuation in a Chinese sentence: {text[max(0, m.start() - 10):m.end() + 10]!r}")
    for m in re.finditer(rf"\([^()\n]*{c}[^()\n]*\)", text):
        found.append(f"half-width parentheses around Chinese (use （ ）): {m.group()[:40]!r}")
    for m in re.finditer(r"(?<!—)—(?!—)", text):
        if re.search(c, text[max(0, m.start() - 6):m.end() + 6]):
            found.append(f"a lone dash in Chinese (use ——): {text[max(0, m.start() - 10):m.end() + 10]!r}")
    return found


def test_the_chinese_is_set_as_chinese_is_set():
    texts = zh_texts()
    assert len(texts) > 400
    found = [f"{where}: {p}" for where, kind, _, chinese in texts for p in typography_problems(kind, chinese)]
    assert found == []


@pytest.mark.parametrize("kind, chinese, caught", [
    ("prose", "检查会告诉你哪里不对——\n哪个输出不对。", "a space between"),
    ("prose", "用一个正确的 单元来评分。", "a space between"),
    ("message", "第一个时间步\n的梯度", "a space between"),
    ("prose", "它读取 `a_prev`\n并返回。", None),
    ("prose", "通过**每一个**\n时间步", "a space between"),
    ("comment", "从 parameters 中取出。          （约 2 行）", None),
    ("comment", "四个门的 梯度", "a space between"),
    ("prose", '叫作"时间步"。', "ASCII quotes"),
    ("prose", "叫作“时间步”。", None),
    ("prose", '把 `params["Wax"]` 传入。', None),
    ("message", "最慢的：dev（1.5 秒）, ben", "half-width punctuation"),
    ("message", "无法读取的提交: 1", "half-width punctuation"),
    ("docstring", "caches -- (各时间步缓存的列表, x)", "half-width"),
    ("message", "形状 (n_a, m)，与 a_prev 相同。", None),
    ("prose", "# 第一部分 — 基础 RNN", "a lone dash"),
    ("prose", "# 第一部分——基础 RNN", None),
])
def test_a_typography_slip_is_caught(kind, chinese, caught):
    found = typography_problems(kind, chinese)
    assert any(p.startswith(caught) for p in found) if caught else found == [], found


# Latin words a zh-CN text may say outside code: names (of the networks, libraries, tools, people,
# algorithms), math functions, words in a UI the course does not translate (nbgrader's
# extension has no Chinese: its buttons read as written here).
ALLOWED_WORDS = {
    "notebook", "numpy", "NumPy", "RNN", "LSTM", "GRU", "BPTT", "tanh", "sigmoid", "softmax", "Adam", "Python",
    "Keras", "PyTorch", "cuDNN", "TensorFlow", "Jupyter", "JupyterLab", "JupyterHub", "Colab", "VS", "Code",
    "nbgrader", "matplotlib", "Babel", "CPU", "NaN", "Noto", "Sans", "CJK", "SC", "Cho", "Winnowing", "winnowing",
    "LMS", "Canvas", "Moodle", "CSV", "JSON", "HTML", "SVG", "PNG", "ok", "tilde", "hat",
    "dW", "db",   # any weight's and any bias's gradient, as the English says them
}
UI_PHRASES = ("Nbgrader", "Assignment List", "Validate", "Success! Your notebook passes all the tests")


def course_names():
    """The names a learner reads as code without backticks: every name in the course's reference
    solutions, utilities and shipped files, and Python's own (keywords, builtins)."""
    import builtins
    import keyword
    names = set(keyword.kwlist) | set(dir(builtins))
    for aid in known():
        a = load(aid)
        sources = [inspect.getsource(a.reference)] + [text for _, text in _shipped(a)]
        for text in sources:
            names |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text.split('"""', 2)[-1] if text.startswith('"""') else text))
    return names


def _shipped(a):
    from assignments.grading.authoring import shipped_text
    return shipped_text.shipped_sources(a, a.source_dir)


def english_words(chinese, names):
    """The Latin words of a zh-CN text that are neither code, a name of the course, nor allowed."""
    text = _as_read(chinese)
    for phrase in UI_PHRASES:
        text = text.replace(phrase, "⌘")
    text = re.sub(r"\b[\w-]+\.(?:json|csv|py|ipynb|html|mo|po|md|svg)\b|--[a-z-]+|\w+\s*=\s*\"[^\"]*\"", "⌘", text)
    maths = re.findall(r"\\(?:text|mathrm|operatorname)\{([^{}]*)\}", chinese)
    words = re.findall(r"(?<![\w\[.])[A-Za-z][A-Za-z']+(?![\w(\[])", text) + \
        [w for m in maths for w in re.findall(r"[A-Za-z]{2,}", m)]
    in_math = {w for m in maths for w in re.findall(r"[A-Za-z]{2,}", m)}   # a formula's words are prose, never code
    return [w for w in words if w not in ALLOWED_WORDS and (w in in_math or w not in names)]


def test_no_english_word_is_left_in_the_chinese():
    names = course_names()
    found = [f"{where}: {w!r} in {chinese[:60]!r}" for where, _, _, chinese in zh_texts()
             for w in english_words(chinese, names)]
    assert found == []


@pytest.mark.parametrize("chinese, caught", [
    ("在最后一步它是零（zeros）。", ["zeros"]),
    (r"$$da_{prev} \text{ (returned by step } t+1\text{)}$$", ["returned", "by", "step"]),
    (r"$$\sum_{\text{batch}} \delta$$", ["batch"]),
    ("在 notebook 中用 `np.zeros` 创建 a，返回 a_next 与 cache。", []),
    ("状态：graded", ["graded"]),
    ("点击 **Validate**，见 results.json。", []),
])
def test_an_english_word_is_caught(chinese, caught):
    assert english_words(chinese, {"a", "a_next", "cache", "np"}) == caught


def zh_report(tmp_path):
    """The class report of a small class (every status, flags, timings) in Chinese: the page's
    visible text outside code, and the printed table."""
    from test_report import synthetic_class

    from assignments.grading.reports import report
    results, words, timings = synthetic_class(400, seed=7)
    words = {code: "学生看到的说明" for code in words}   # the mistakes' words come from the catalog (tested above)
    statuses = {s["status"] for s in results["submissions"]}
    assert {"graded", "unreadable", "incomplete"} <= statuses
    say = messages.speaker("zh-CN")
    page = report.render(report.build(results, words, timings), say=say, lang="zh-CN", cache_dir=str(tmp_path))
    page = re.sub(r"<svg.*?</svg>|<style.*?</style>|<code>.*?</code>", "⌘", page, flags=re.S)
    texts = [t for t in re.split(r"<[^>]+>", page) if t.strip()]
    return texts, report.summary(results, say=say)


def test_the_chinese_report_says_every_word_in_chinese(tmp_path):
    """The instructor's report in Chinese: the statuses too (状态：已评分…), Chinese punctuation
    between its parts, and no English word but names, codes and the allowed ones."""
    texts, table = zh_report(tmp_path)
    students = {w for t in texts + [table] for w in re.findall(r"learner\d+", t)}
    names = course_names() | students | {"synthetic"}   # the assignment's id, as the title says it
    found = [f"{p} in {t[:60]!r}" for t in texts if CJK.search(t) for p in typography_problems("message", t)]
    found += [f"{w!r} in {t[:60]!r}" for t in texts for w in english_words(t, names)]
    assert found == []
    for line in table.splitlines()[2:]:
        assert not re.search(r"\b(graded|unreadable|incomplete|error)\b", line), line
