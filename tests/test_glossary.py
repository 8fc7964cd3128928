"""The zh-CN edition says each idea with one term (docs/glossary.zh-CN.md): every zh-CN
sentence whose English says a glossary term says its Chinese term, and none uses a word the
glossary says to avoid (更新门 for the LSTM's input gate, 记忆单元 for the cell state...)."""
import os
import re

import pytest
from helpers import REPO

from assignments.grading.contract import messages

GLOSSARY = os.path.join(REPO, "docs", "glossary.zh-CN.md")


def glossary(text=None):
    """[(English regex, Chinese term, [words to avoid])] from the glossary's table."""
    if text is None:
        with open(GLOSSARY, encoding="utf-8") as f:
            text = f.read()
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0] or cells[0] in ("English", "---") or not re.search(r"[\u4e00-\u9fff]", cells[1]):
            continue
        words = r"[- ]".join(map(re.escape, cells[0].split()))
        rows.append((re.compile(rf"\b{words}s?\b", re.I), cells[1], [w.strip() for w in cells[2].split(",") if w.strip()]))
    return rows


def zh_sentences():
    """(English, zh-CN) of every translated sentence of the course's catalogs."""
    from babel.messages.pofile import read_po
    with open(messages.po_path("zh-CN"), "rb") as f:
        catalog = read_po(f, locale="zh_CN")
    found = []
    for m in catalog:
        if m.id:
            english = " / ".join(m.id) if isinstance(m.id, tuple) else m.id
            found.append((english, " / ".join(m.string) if isinstance(m.string, tuple) else m.string))
    return found + notebook_sentences()


def notebook_sentences():
    """(English, zh-CN) of the notebooks' catalogs (translate.py)."""
    from assignments.grading.authoring import translate
    from assignments.grading.contract.assignment import known
    return [pair for aid in known() for pair in translate.pairs(aid, "zh-CN")]


SENSES = ((re.compile(r"\bcandidate mistakes?\b", re.I), "候选错误"),
          (re.compile(r"\b(?:gated )?recurrent units?\b", re.I), "循环单元"))
"""A term's English word in another sense (the glossary's "Terms that depend on their sense"):
a sentence that says it must say this Chinese, and the table's term is not asked of it."""


def breaches(pairs, rows):
    """Sentences that miss a term their English says, or use a word to avoid. A word to avoid
    that is itself another term (更新门, the GRU's update gate, for the LSTM's input gate) is
    wrong only where the English says this term and not that one."""
    terms = {term: pattern for pattern, term, _ in rows}
    found = []
    for english, chinese in pairs:
        # a placeholder ({case}) or a file's name (similarity.json) is not a word
        english = re.sub(r"\{[^{}]*\}|\b[\w-]+\.(?:json|csv|py|ipynb|html)\b", "", english)
        for sense, said in SENSES:
            if sense.search(english) and said not in chinese:
                found.append(f"{said} missing for {sense.pattern!r}: {chinese[:80]}")
            english = sense.sub("", english)
        for pattern, term, avoid in rows:
            says = pattern.search(english)
            if says and term not in chinese:
                found.append(f"{term} missing for {pattern.pattern!r}: {chinese[:80]}")
            for word in avoid:
                # a word to avoid inside a longer term is that term (用例 in 测试用例, 单元 in 循环单元)
                bare = chinese
                for longer in sorted((t for t in terms if word in t and t != word), key=len, reverse=True):
                    bare = bare.replace(longer, "")
                if word in bare and (word not in terms or says and not terms[word].search(english)):
                    found.append(f"{word} (avoid; say {term}): {chinese[:80]}")
    return found


def test_the_glossary_has_the_terms_the_issue_asks_for():
    terms = {term for _, term, _ in glossary()}
    assert {"遗忘门", "输入门", "输出门", "候选值", "细胞状态", "隐藏状态", "更新门", "重置门", "梯度", "时间步"} <= terms


def test_the_glossary_settles_every_term_the_reviews_found_used_two_ways():
    """Issue 43: the zh-CN review found these said two ways; the glossary now says which."""
    rows = {term: avoid for _, term, avoid in glossary()}
    assert {"分量", "预激活值", "示例", "测试用例", "学生", "相似度"} <= set(rows)
    assert "激活前的值" in rows["预激活值"] and "学习者" in rows["学生"] and "抄袭" in rows["代码雷同"]


def test_no_zh_sentence_reads_copying_evidence_as_a_finding():
    """The report's evidence of code in common is to weigh: no sentence may call it plagiarism
    (抄袭证据) in Chinese, or say "plagiarism", "cheating" or "copying evidence" in English."""
    pairs = zh_sentences()
    assert [c for _, c in pairs if "抄袭" in c] == []
    assert [e for e, _ in pairs if re.search(r"plagiari|cheat|copying evidence", e, re.I)] == []


def test_every_zh_sentence_uses_the_glossary_terms():
    pairs = zh_sentences()
    assert len(pairs) > 150
    assert breaches(pairs, glossary()) == []


@pytest.mark.parametrize("english, chinese, caught", [
    ("The input gate is wrong.", "更新门错了。", "输入门 missing"),
    ("The input gate is wrong.", "输入门（更新门）错了。", "更新门 (avoid"),
    ("The update gate is wrong.", "更新门错了。", None),
    ("The cell state is wrong.", "记忆单元错了。", "细胞状态 missing"),
    ("dc_prev is wrong.", "记忆细胞的梯度错了。", "记忆细胞 (avoid"),
    ("Candidate mistake", "候选错误", None),
    ("A unit whose update gate stays near 0.", "更新门接近 0 的单元。", "分量 missing"),
    ("A gated recurrent unit (GRU), unit by unit.", "门控循环单元（GRU），逐个分量。", None),
    ("The pre-activation gradients.", "激活前的值的梯度。", "预激活值 missing"),
    ("On {case}:", "在{case}上：", None),
    ("on one small case", "在一个小用例上", "测试用例 missing"),
    ("on one small case", "在一个小测试用例上", None),
    ("Learners who share a mistake.", "有相同错误的学习者。", "学生 missing"),
    ("Code in common", "抄袭证据", "代码雷同 missing"),
    ("Candidate mistake", "候选值错误", "候选错误 missing"),
    ("The candidate mistake and the candidate are wrong.", "候选错误和c̃都错了。", "候选值 missing"),
])
def test_a_wrong_term_is_caught(english, chinese, caught):
    found = breaches([(english, chinese)], glossary())
    assert any(b.startswith(caught) for b in found) if caught else found == []
