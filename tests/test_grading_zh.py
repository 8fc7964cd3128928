"""Grading a zh-CN submission end to end (issue 32): the sample class's answers filled into
release-zh-CN/'s notebook, graded by the real pipeline (nbgrader, sandboxed kernels), score
exactly as the English class does, with the judge's words in Chinese."""
import json
import os
import re
import subprocess
import sys

import nbformat
import pytest
from helpers import REPO, STOCK_MODE, A, build_samples
from markupsafe import escape as html_escape
from test_report import visible_text

from assignments.grading.contract import messages
from assignments.grading.reports import report
from assignments.grading.run import pipeline

CJK = re.compile(r"[\u4e00-\u9fff]")
BROKEN = "gil"   # a zh-CN learner whose rnn_forward cell does not compile (not in the English class)


@pytest.fixture(scope="module")
def zh_class(tmp_path_factory):
    """The sample class, filled into the zh-CN notebook, graded once; plus one learner whose
    cell does not compile."""
    subs = build_samples(str(tmp_path_factory.mktemp("samples-zh")), lang="zh-CN")
    ada = os.path.join(subs, "submitted", "ada", A.id, A.notebook + ".ipynb")
    nb = nbformat.read(ada, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "rnn_forward":
            cell.source = cell.source.replace("def rnn_forward(", "def rnn_forward(x, a0, parameters:")
    os.makedirs(os.path.join(subs, "submitted", BROKEN, A.id))
    nbformat.write(nb, os.path.join(subs, "submitted", BROKEN, A.id, A.notebook + ".ipynb"))
    out = str(tmp_path_factory.mktemp("graded-zh"))
    results = pipeline.grade(A, subs, out, workers=2, lang="zh-CN")   # the instructor reads Chinese too
    return {"out": out, "results": results}


def by_student(results):
    return {s["student"]: s for s in results["submissions"]}


def test_the_sample_class_is_a_zh_cn_one(zh_class):
    path = os.path.join(zh_class["out"], "autograded", "ben", A.id, A.notebook + ".ipynb")
    assert nbformat.read(path, as_version=4).metadata["rnn_course"]["lang"] == "zh-CN"


def test_zh_and_english_grading_give_the_same_scores_and_codes(zh_class, sample_class):
    en, zh = by_student(sample_class["results"]), by_student(zh_class["results"])
    assert set(zh) == set(en) | {BROKEN}
    for student, e in en.items():
        z = zh[student]
        assert (z["status"], z["score"], z["flags"]) == (e["status"], e["score"], e["flags"]), student
        same = [(x["id"], x["score"], x["max_score"], x["passed"], x["diagnoses"], x["signature"])
                for x in z["exercises"]]
        assert same == [(x["id"], x["score"], x["max_score"], x["passed"], x["diagnoses"], x["signature"])
                        for x in e["exercises"]], student


def test_the_zh_feedback_in_results_json_is_chinese(zh_class, sample_class):
    with open(os.path.join(zh_class["out"], "results.json"), encoding="utf-8") as f:
        zh = by_student(json.load(f))
    en = by_student(sample_class["results"])
    for student, s in zh.items():
        if s["status"] != "graded":
            continue
        for x, e in zip(s["exercises"], en.get(student, s)["exercises"]):
            assert CJK.search(x["feedback"]), (student, x["feedback"])
            if student in en:
                assert not CJK.search(e["feedback"]) and x["feedback"] != e["feedback"]
    ben = {x["id"]: x for x in zh["ben"]["exercises"]}
    assert "识别出的错误 [rnn_grads_not_accumulated]" in ben["rnn_backward"]["feedback"]


def test_a_cell_that_does_not_compile_is_explained_in_chinese(zh_class):
    gil = {x["id"]: x for x in by_student(zh_class["results"])[BROKEN]["exercises"]}
    said = gil["rnn_forward"]["feedback"]
    assert gil["rnn_forward"]["score"] == 0 and "SyntaxError" in said, said
    assert said.startswith("rnn_forward 没有定义：") and not re.search(r"\b(is|does|the|at line)\b", said), said


PAGE_WORDS_EN = ("(Score:", "Score:", "Student's answer", "(Top)", "mistake named", "Test cell", "Grade cell:",
                 "stopped by the grader")   # the notebook's own prose is not these: the RNN notebook's is not all translated yet


def feedback_page(out, student):
    with open(os.path.join(out, "feedback", student, A.id, A.notebook + ".html"), encoding="utf-8") as f:
        return f.read()


def test_the_feedback_page_of_a_zh_submission_is_in_chinese(zh_class):
    """The judge's words are Chinese in both modes; the page's own words only with our
    exporter (stock nbgrader's page keeps its English, docs/translation.md)."""
    page = feedback_page(zh_class["out"], "ben")
    for words in ("识别出的错误 [rnn_grads_not_accumulated]", "通过了 5 个隐藏测试用例中的 1 个"):
        assert words in page, words
    if STOCK_MODE:
        assert [w for w in PAGE_WORDS_EN if w in page] != []
        return
    for words in ("（得分：92.8 / 100.0）", "得分：7.8 / 15.0", "学生的答案", "（回到顶部）", "：识别出的错误"):
        assert words in page, words
    assert [w for w in PAGE_WORDS_EN if w in page] == []
    assert "HIDDEN TESTS" not in page and "cases.py" not in page


def test_the_english_page_keeps_its_english_words(sample_class):
    page = feedback_page(sample_class["out"], "ben")
    assert "(Score: 92.8 / 100.0)" in page and "Student's answer" in page and "(Top)" in page
    assert not CJK.search(page)


REPORT_TEMPLATE = os.path.join(os.path.dirname(report.__file__), "templates", "report", "report.html.j2")


def report_sentences():
    """The English words of the class report's template (its say("...") calls), cut at their
    {fields} into the pieces a reader would see verbatim if one were left untranslated."""
    with open(REPORT_TEMPLATE, encoding="utf-8") as f:
        said = re.findall(r'say\("((?:[^"\\]|\\.)*)"', f.read())
    return said, [p.strip(" .:;,()") for s in said for p in re.split(r"\{\w+\}", s.replace('\\"', '"'))
                  if len(re.findall(r"[A-Za-z]+", p)) >= 2]


def test_the_class_report_is_in_the_instructors_language(zh_class):
    """grade --lang zh-CN: report.html's words are Chinese (the codes, function ids, names and
    numbers stay as they are), none of the template's English sentences is left."""
    with open(os.path.join(zh_class["out"], "report.html"), encoding="utf-8") as f:
        html = f.read()
    said, pieces = report_sentences()
    assert len(said) > 60 and len(pieces) > 30
    text = visible_text(re.sub(r"<code>.*?</code>", " ", html))
    left = [p for p in pieces if p in text]
    assert left == [], left
    # the report's own words: not the learners' code, nor results.json's messages (the run's, in
    # English), nor the copying evidence's sentences (reports/similarity.py: English, not said yet)
    own = re.sub(r'<section id="similarity">.*?</section>|<pre.*?</pre>|<code>.*?</code>', " ", html, flags=re.S)
    for s in zh_class["results"]["submissions"]:
        if s["message"]:
            own = own.replace(html_escape(s["message"].splitlines()[0][:300]), " ")
    words = re.sub(r"\b[\w.-]*\d[\w.-]*\b|\b\w+_\w+\b", " ", visible_text(own))   # without numbers and ids
    words = re.sub(r"\b(%s)\b" % "|".join(s["student"] for s in zh_class["results"]["submissions"]), " ", words)
    cjk, latin = len(CJK.findall(words)), len(re.findall(r"[A-Za-z]", words))
    print(f"\n[measure] zh-CN class report: {cjk} CJK characters, {latin} Latin letters in its own words "
          f"({100 * cjk / (cjk + latin):.0f}% CJK)")
    assert cjk > 5 * latin, re.findall(r"[A-Za-z][A-Za-z ,.'-]{10,}", words)[:10]
    for tag in ("h1", "h2", "h3", "th", "figcaption"):
        for inner in re.findall(rf"<{tag}[^>]*>(.*?)</{tag}>", html, re.S):
            assert CJK.search(re.sub(r"<code>.*?</code>", "", inner)), (tag, inner[:80])
    assert '<html lang="zh-CN">' in html and "提交数" in re.search(r'<svg id="chart-scores".*?</svg>', html, re.S).group(0)


def test_the_class_report_says_the_same_numbers_in_both_languages(zh_class, tmp_path):
    """report --lang en and --lang zh-CN of one results.json: report.json differs only in the
    words students were told for each mistake (the catalog's, in the language), results.json
    and the grades are the run's, whatever the report's language."""
    folder = os.path.join(zh_class["out"], "results", A.id)
    made = {}
    for lang in ("en", "zh-CN"):
        run = subprocess.run([sys.executable, "-m", "assignments", "report", os.path.join(folder, "results.json"),
                              "--out", str(tmp_path / lang), "--lang", lang], cwd=REPO, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        with open(tmp_path / lang / "report.json", encoding="utf-8") as f:
            made[lang] = json.load(f)
    en, zh = made["en"], made["zh-CN"]
    with open(os.path.join(zh_class["out"], "report.json"), encoding="utf-8") as f:
        assert json.load(f) == zh   # grade --lang zh-CN wrote what report --lang zh-CN writes
    said = report.catalog_messages(A)   # the catalog's words, {outputs} filled for the whole class
    assert [m["message"] for m in en["mistakes"]] == [said[m["code"]] for m in en["mistakes"]]
    assert len(zh["mistakes"]) >= 4
    for e, z in zip(en["mistakes"], zh["mistakes"]):
        assert CJK.search(z["message"]) and not CJK.search(e["message"]), z["message"]
        assert dict(e, message=None) == dict(z, message=None)
    assert dict(en, mistakes=None) == dict(zh, mistakes=None)


def test_the_summary_table_in_chinese_keeps_its_columns():
    """The terminal's table: Chinese headings, columns still aligned (a CJK character takes two
    columns of the terminal)."""
    results = {"assignment": A.id, "max_score": 100.0, "submissions": [
        {"student": "ada", "status": "graded", "score": 100.0, "message": "", "flags": [],
         "exercises": [{"id": "rnn_forward", "score": 10.0, "passed": True, "diagnoses": []}]},
        {"student": "李雷", "status": "graded", "score": 42.5, "message": "", "flags": [],
         "exercises": [{"id": "rnn_forward", "score": 4.0, "passed": False, "diagnoses": ["rnn_no_tanh"]}]}]}
    table = report.summary(results, messages.speaker("zh-CN"))
    lines = table.splitlines()
    assert lines[0].startswith("学生") and "状态" in lines[0] and "得分" in lines[0]
    assert "识别出的错误：rnn_forward: rnn_no_tanh" in table and "满分 100" in lines[-1]
    widths = {report.charts.columns(line) for line in lines[:1] + lines[2:4]}
    assert len(widths) == 1, lines[:4]   # heading and rows end in the same column
    assert report.summary(results).splitlines()[0].startswith("student")
