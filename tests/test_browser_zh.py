"""The zh-CN release as a Chinese-speaking student sees it (issue 32): JupyterLab with its zh-CN
language pack (jupyterlab-language-pack-zh-cn, pinned) and the locale set to zh_CN in the
user's settings, in headless Chromium. JupyterLab's own menus are Chinese, the notebook's
Chinese prose renders, the checks answer in Chinese, and a zh-CN learner's feedback page
reads in Chinese; every Chinese word is drawn with a CJK font's glyphs, not as empty boxes
(`make test` installs Debian's fonts-noto-cjk). Screenshots: tests/artifacts/browser/zh-CN_*.png
(ignored by git)."""
import os
import re
import shutil
import tempfile

import nbformat
import pytest
from helpers import CJK_FONT_MISSING, REPO, A, build_samples, cjk_fonts, glyphs_differ_from_boxes
from test_browser import ARTIFACTS, CHROMEDRIVER, CHROMIUM, _run_all, _shot, _wait, browser, serve_lab

from assignments.grading.authoring.submissions import answer_cells, fill
from assignments.grading.run import pipeline
from assignments.rnn_step_by_step.exercises import EXERCISES

pytestmark = pytest.mark.browser

__all__ = ["browser"]   # the fixture, shared with test_browser.py
RELEASE_ZH = os.path.join(REPO, "release-zh-CN", A.id)
CJK = re.compile(r"[\u4e00-\u9fff]")
LOCALE = {"@jupyterlab/translation-extension/plugin": {"locale": "zh_CN"}}


@pytest.fixture(scope="module")
def zh_lab():
    """JupyterLab in Chinese on a folder holding the zh-CN release, filled with Ada's answers."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(path):
            pytest.fail(f"{path} is missing: apt-get install chromium chromium-driver (`make test` does it as root)")
    try:
        import jupyterlab_language_pack_zh_CN  # noqa: F401
    except ImportError:
        pytest.fail("JupyterLab's zh-CN language pack is missing: pip install -r requirements.txt -c constraints.txt")
    root = tempfile.mkdtemp(prefix="lab-zh-")
    for name in os.listdir(RELEASE_ZH):
        if not name.endswith(".ipynb"):
            shutil.copy(os.path.join(RELEASE_ZH, name), root)
    with open(os.path.join(REPO, "samples", "answers", A.id, "ada.py"), encoding="utf-8") as f:
        answers = answer_cells(f.read())
    nbformat.write(fill(os.path.join(RELEASE_ZH, A.notebook + ".ipynb"), answers), os.path.join(root, A.notebook + ".ipynb"))
    try:
        with serve_lab(root, LOCALE) as url:
            yield url
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_chinese_font_draws_chinese(tmp_path):
    """Without a CJK font Chromium draws every Chinese character as an empty box."""
    assert cjk_fonts(), CJK_FONT_MISSING
    drawn = glyphs_differ_from_boxes(tmp_path, "文件 编辑 运行 全部检查通过")
    print(f"\n[measure] Chinese words vs missing-glyph boxes: {100 * drawn:.2f}% of pixels differ")
    assert drawn > 0.005, CJK_FONT_MISSING


def test_the_zh_release_in_jupyterlab_in_chinese(zh_lab, browser):
    from selenium.webdriver.common.by import By
    os.makedirs(ARTIFACTS, exist_ok=True)
    driver = browser
    outputs = _run_all(driver, zh_lab, A.notebook + ".ipynb", os.path.join(RELEASE_ZH, A.notebook + ".ipynb"),
                       run_menu="运行")   # the Run menu, as the language pack names it
    menus = [m.text.strip() for m in driver.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-item")]
    assert "文件" in menus and "编辑" in menus and "File" not in menus, menus
    _shot(driver, driver.find_element(By.CSS_SELECTOR, "#jp-top-panel, .lm-MenuBar"), "zh-CN_menus.png")

    markdown = driver.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-MarkdownOutput")
    prose = [m for m in markdown if len(CJK.findall(m.text)) > 20]
    assert len(prose) > 10, f"{len(prose)} markdown cells render Chinese prose"
    assert prose[0].find_elements(By.CSS_SELECTOR, "h1, h2"), "the first Chinese cell's heading is rendered"
    _shot(driver, prose[0], "zh-CN_markdown.png")

    errors = [(src[:60], out[:300]) for src, out, n_err in outputs if n_err]
    assert not errors, f"cells with errors: {errors}"
    checks = {e.name: out for src, out, _ in outputs for e in EXERCISES if f'check("{e.name}")' in src}
    assert sorted(checks) == sorted(e.name for e in EXERCISES)
    for name, out in checks.items():
        assert re.search(rf"✓ {name}：全部检查通过（\d+ 个示例）", out), f"check cell of {name} shows: {out[:300]}"
    cell = next(c for c in driver.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-CodeCell")
                if 'check("rnn_cell_forward")' in c.find_element(By.CSS_SELECTOR, ".jp-InputArea-editor").text)
    _shot(driver, cell, "zh-CN_check.png")


@pytest.fixture(scope="module")
def zh_feedback(tmp_path_factory):
    """The feedback page of one zh-CN learner (Ben, who names a catalogued mistake), graded
    by the real pipeline."""
    subs = build_samples(str(tmp_path_factory.mktemp("samples-zh")), lang="zh-CN")
    for student in os.listdir(os.path.join(subs, "submitted")):
        if student != "ben":
            shutil.rmtree(os.path.join(subs, "submitted", student))
    out = str(tmp_path_factory.mktemp("graded-zh"))
    pipeline.grade(A, subs, out, workers=1, lang="zh-CN")
    return os.path.join(out, "feedback", "ben", A.id, A.notebook + ".html")


def test_a_zh_feedback_page_in_chromium(zh_feedback, browser):
    from selenium.webdriver.common.by import By
    driver = browser
    driver.get("file://" + zh_feedback)
    _wait(lambda: driver.find_elements(By.CSS_SELECTOR, "body"), 30, "the feedback page")
    text = driver.find_element(By.CSS_SELECTOR, "body").text
    for words in ("学生的答案", "识别出的错误 [rnn_grads_not_accumulated]", "得分："):
        assert words in text, words
    assert "Student's answer" not in text and len(CJK.findall(text)) > 500
    heading = driver.find_element(By.CSS_SELECTOR, "h4, h1")
    _shot(driver, heading, "zh-CN_feedback_heading.png")
    found = driver.find_element(By.XPATH, "//*[contains(text(), '识别出的错误 [rnn_grads_not_accumulated]')]")
    _shot(driver, found, "zh-CN_feedback_mistake.png")
