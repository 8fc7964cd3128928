"""The course's message catalogs (issue 32): the template is what the code says, the zh-CN
catalog translates every sentence with the same placeholders, the students' checks speak
Chinese with the compiled catalog beside them, and the judge gives the same scores and codes
in both languages (only its words differ)."""
import contextlib
import importlib.util
import inspect
import io
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
