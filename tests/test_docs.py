"""The contract users rely on is in the repository (docs/), and it is true."""
import copy
import os
import re

from helpers import REPO, schema_problems

from assignments.grading.authoring import docs


def test_real_results_follow_the_schema(sample_class):
    results = sample_class["results"]
    assert {s["status"] for s in results["submissions"]} >= {"graded", "unreadable"}
    assert schema_problems(results) == []


def test_schema_rejects_what_breaks_the_contract(sample_class):
    broken = copy.deepcopy(sample_class["results"])
    broken["submissions"][0]["status"] = "fine"
    del broken["submissions"][1]["exercises"][0]["diagnoses"]
    broken["submissions"][2]["exercises"][0]["passed"] = "yes"
    problems = schema_problems(broken)
    assert len(problems) == 3, problems


def test_passed_means_full_marks(sample_class):
    for s in sample_class["results"]["submissions"]:
        for e in s["exercises"]:
            assert e["passed"] == (e["score"] == e["max_score"])


def test_every_code_named_in_results_is_documented(sample_class, assignment):
    with open(docs.path(REPO, assignment), encoding="utf-8") as f:
        page = f.read()
    named = {c for s in sample_class["results"]["submissions"] for e in s["exercises"] for c in e["diagnoses"]}
    assert named, "the sample class names no mistake: this test would prove nothing"
    assert all(f"`{code}`" in page for code in named)
    assert all(f"`{m.code}`" in page for m in assignment.catalog)


def test_mistakes_page_is_generated_from_the_catalog(assignment):
    assert docs.drift(assignment, REPO) == []   # the English page and the zh-CN one


def test_the_zh_mistakes_page_explains_every_code_in_chinese(assignment, tmp_path):
    """docs/mistakes/<id>.zh-CN.md: every code of the catalog, each with the Chinese the
    zh-CN learner is told (the course's catalog), none left in English; and a stale page is
    caught."""
    with open(docs.path(REPO, assignment, "zh-CN"), encoding="utf-8") as f:
        page = f.read()
    rows = dict(re.findall(r"^\| `(\w+)` \| (.*) \|$", page, re.M))
    assert set(rows) == {m.code for m in assignment.catalog}
    for m in assignment.catalog:
        assert re.search(r"[\u4e00-\u9fff]", rows[m.code]) and m.feedback[:40] not in rows[m.code], m.code
    assert page.startswith("# 评分程序识别的错误：") and "| 代码 | 给学生的反馈 |" in page
    stale = tmp_path / "docs" / "mistakes"
    stale.mkdir(parents=True)
    (stale / f"{assignment.id}.md").write_text(docs.catalog_markdown(assignment), encoding="utf-8")
    (stale / f"{assignment.id}.zh-CN.md").write_text(page.replace(rows[assignment.catalog[0].code], "旧的说明"),
                                                     encoding="utf-8")
    assert docs.drift(assignment, str(tmp_path)) == [
        f"docs/mistakes/{assignment.id}.zh-CN.md is not what the catalog generates: run "
        "`python -m assignments release --lang zh-CN`"]


def test_readme_and_docs_link_only_to_files_in_the_repository():
    pages = [os.path.join(REPO, "README.md")] + [os.path.join(REPO, "docs", f) for f in os.listdir(os.path.join(REPO, "docs"))
                                                 if f.endswith(".md")]
    broken = []
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = f.read()
        assert "../shared" not in text, f"{page} points outside the repository"
        for target in re.findall(r"\]\(([^)#\s]+)", text):
            if re.match(r"[a-z]+://", target):
                continue
            if not os.path.exists(os.path.join(os.path.dirname(page), target)):
                broken.append((os.path.relpath(page, REPO), target))
    assert broken == []
