"""Grading a zh-CN submission end to end (issue 32): the sample class's answers filled into
release-zh-CN/'s notebook, graded by the real pipeline (nbgrader, sandboxed kernels), score
exactly as the English class does, with the judge's words in Chinese."""
import json
import os
import re

import nbformat
import pytest
from helpers import A, build_samples

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
    results = pipeline.grade(A, subs, out, workers=2)
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
    page = feedback_page(zh_class["out"], "ben")
    for words in ("（得分：92.8 / 100.0）", "得分：7.8 / 15.0", "学生的答案", "（回到顶部）", "：识别出的错误",
                  "识别出的错误 [rnn_grads_not_accumulated]", "通过了 5 个隐藏测试用例中的 1 个"):
        assert words in page, words
    assert [w for w in PAGE_WORDS_EN if w in page] == []
    assert "HIDDEN TESTS" not in page and "cases.py" not in page


def test_the_english_page_keeps_its_english_words(sample_class):
    page = feedback_page(sample_class["out"], "ben")
    assert "(Score: 92.8 / 100.0)" in page and "Student's answer" in page and "(Top)" in page
    assert not CJK.search(page)
