"""The Python files shipped beside a notebook, in Chinese in release-zh-CN (issue 32): their
messages (printed, raised, returned, drawn on a plot) come from the notebook's catalog; the
English release keeps them as written; a plot label needs a CJK font on the learner's machine
and falls back to English, said once, without one."""
import importlib.util
import os
import sys

import pytest
from helpers import REPO

from assignments.grading.authoring import shipped_text, translate

RNN = "rnn_step_by_step"


def load(folder, name, monkeypatch):
    """A shipped module of a release folder, imported as a learner's kernel would (beside its utilities)."""
    path = os.path.join(REPO, folder, RNN)
    monkeypatch.syspath_prepend(path)
    for module in ("rnn_utils", "rnn_train"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    spec = importlib.util.spec_from_file_location(name, os.path.join(path, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_messages_of_rnn_train_are_what_it_says_and_not_its_docstrings():
    with open(os.path.join(REPO, "source", RNN, "rnn_train.py"), encoding="utf-8") as f:
        found = shipped_text.messages_of(f.read())
    texts = [m.text for m in found]
    assert "{label}: not trained while the notebook is graded (training is optional and ungraded)." in texts
    assert "it returns no d{name}" in texts                                     # returned
    assert [m.text for m in found if m.plot] == ["guessing: 1 in {n_symbols}", "training step",
                                                 "accuracy on the training batches",
                                                 "Recalling the first symbol of a sequence"]
    assert not any("Watch it learn" in t or "center right" in t for t in texts)   # a docstring, a legend's place


def test_literals_side_by_side_are_one_message_and_a_plain_one_stays_plain():
    source = 'def f(x):\n    raise ValueError(f"got {x}: "\n                     "fix it")\n\n\nprint("done")\n'
    found = shipped_text.messages_of(source)
    assert [(m.text, m.formatted) for m in found] == [("got {x}: fix it", True), ("done", False)]
    out = shipped_text.translated(source, {"got {x}: fix it": "收到 {x}：请改正", "done": "完成"})
    assert out == 'def f(x):\n    raise ValueError(f"收到 {x}：请改正")\n\n\nprint("完成")\n'


def test_a_message_with_an_escape_is_refused_clearly():
    with pytest.raises(ValueError, match="without escapes"):
        shipped_text.messages_of('print("two\\nlines")\n')


@pytest.mark.parametrize("english,said,problem", [
    ("{label} step {step:4d}", "{label} 第 {step} 步", "does not keep its fields"),
    ("it returns no d{name}", '它没有返回 "d{name}"', "a quote"),
])
def test_a_translation_that_would_break_the_code_is_caught(english, said, problem):
    assert any(problem in p for p in shipped_text.translation_problems(english, said))


def test_every_shipped_message_is_translated_and_keeps_its_fields():
    from assignments.grading.contract.assignment import known
    from assignments.grading.contract.assignment import load as load_assignment
    checked = 0
    for aid in known():
        a = load_assignment(aid)
        table = translate.load(aid, "zh-CN")
        for name, source in shipped_text.shipped_sources(a, a.source_dir):
            for m in shipped_text.messages_of(source):
                said = table.get((name, m.text))
                assert said, f"{aid}: {name}'s message {m.text!r} is not translated"
                assert shipped_text.translation_problems(m.text, said) == []
                checked += 1
    print(f"\n[measure] zh-CN messages of the Python files beside the notebooks, translated: {checked}/{checked}")
    assert checked >= 16


def test_rnn_train_speaks_chinese_in_the_zh_release_and_english_in_the_english_one(monkeypatch, capsys):
    def forward(x, a0, parameters):
        raise NotImplementedError()

    def backward(da, caches):
        raise NotImplementedError()
    for folder, said in (("release-zh-CN", "没有训练：请先写好 forward 和 backward"), ("release", "not trained: write forward")):
        train = load(folder, "rnn_train", monkeypatch)
        monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
        assert train.train("rnn", forward, backward) is None
        assert said in capsys.readouterr().out


def test_the_utilities_raise_in_the_release_language(monkeypatch):
    import numpy as np
    for folder, said in (("release-zh-CN", "比较的是形状相同的数组"), ("release", "compares arrays of the same shape")):
        utils = load(folder, "rnn_utils", monkeypatch)
        with pytest.raises(ValueError, match=said):
            utils.relative_error(np.zeros(5), np.zeros((5, 1)))


def test_a_plot_label_without_a_cjk_font_is_english_with_one_note(monkeypatch, capsys):
    train = load("release-zh-CN", "rnn_train", monkeypatch)
    monkeypatch.setitem(train._FONT, "font", None)
    assert train._label("训练步数", "training step") == ("training step", None)
    assert train._label("回忆序列的第一个符号", "Recalling the first symbol of a sequence")[0].startswith("Recalling")
    assert capsys.readouterr().out.count("Noto Sans CJK SC") == 1, "the note is said once"
    assert train._label("RNN", "RNN") == ("RNN", None)


def test_a_plot_label_with_a_cjk_font_is_chinese_and_falls_back_on_it(monkeypatch, capsys):
    from assignments.rnn_step_by_step import figures
    train = load("release-zh-CN", "rnn_train", monkeypatch)
    # the figures' subset has the glyphs of 单元 (a figure's label) but not of 训练
    monkeypatch.setitem(train._FONT, "font", (figures.CJK_FAMILY, figures.CJK_FONT))
    text, fontdict = train._label("单元", "cell")
    assert text == "单元" and fontdict["family"][-1] == figures.CJK_FAMILY
    assert train._label("训练步数", "training step") == ("training step", None)
    assert capsys.readouterr().out.count("Noto Sans CJK SC") == 1
