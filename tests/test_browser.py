"""The release as students see it: JupyterLab in a real browser (headless Chromium).

A JupyterLab server opens each release notebook (the RNN/LSTM one, then the GRU one) filled
with a correct solution; the test runs every cell from the Run menu, as a student would,
then reads the page: every check cell shows ✓, the figures are drawn (decoded images with a
size on screen, also in the dark theme, where their white panel must still show), and the
learning plot appears.
Screenshots are kept in tests/artifacts/browser/ (ignored by git); their paths are printed.

Needs Debian's chromium and chromium-driver (`make test` and .ci/run install them); the
driver is used as installed, nothing is downloaded.
"""
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import nbformat
import pytest
from helpers import RELEASE, REPO

from assignments.grading.authoring.submissions import answer_cells, fill
from assignments.gru_step_by_step.exercises import EXERCISES as GRU_EXERCISES
from assignments.rnn_step_by_step.exercises import EXERCISES

pytestmark = pytest.mark.browser

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
GRU = "gru_step_by_step"
GRU_RELEASE = os.path.join(REPO, "release", GRU)
ARTIFACTS = os.path.join(REPO, "tests", "artifacts", "browser")
TOKEN = "rnn-course-browser-test"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab():
    """A JupyterLab server on a folder holding the release, filled with Ada's answers (the
    GRU's release in a folder of its own, as students keep each assignment)."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(path):
            pytest.fail(f"{path} is missing: apt-get install chromium chromium-driver "
                        "(`make test` and .ci/run do it as root)")
    root = tempfile.mkdtemp(prefix="lab-")
    for name in os.listdir(RELEASE):
        if not name.endswith(".ipynb"):
            shutil.copy(os.path.join(RELEASE, name), root)
    with open(os.path.join(REPO, "samples", "answers", "rnn_step_by_step", "ada.py"), encoding="utf-8") as f:
        answers = answer_cells(f.read())
    nbformat.write(fill(os.path.join(RELEASE, "rnn_step_by_step.ipynb"), answers),
                   os.path.join(root, "rnn_step_by_step.ipynb"))
    os.makedirs(os.path.join(root, GRU))
    for name in os.listdir(GRU_RELEASE):
        if not name.endswith(".ipynb"):
            shutil.copy(os.path.join(GRU_RELEASE, name), os.path.join(root, GRU))
    with open(os.path.join(REPO, "samples", "answers", GRU, "ada.py"), encoding="utf-8") as f:
        nbformat.write(fill(os.path.join(GRU_RELEASE, GRU + ".ipynb"), answer_cells(f.read())),
                       os.path.join(root, GRU, GRU + ".ipynb"))
    try:
        with serve_lab(root) as url:
            yield url
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def serve_lab(root, settings=None):
    """A JupyterLab server on ``root`` (its user settings, workspaces and runtime files in
    ``root``/.home), with ``settings``: {"@jupyterlab/<package>/<plugin>": {setting: value}}
    written as the user's settings; yields its URL."""
    home = os.path.join(root, ".home")   # settings, workspaces and runtime files stay in here
    settings = {"@jupyterlab/apputils-extension/notification": {"fetchNews": "false"},   # no "news?" toast
                **(settings or {})}
    for plugin, values in settings.items():
        folder, name = os.path.split(os.path.join(home, "settings", plugin))
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, name + ".jupyterlab-settings"), "w", encoding="utf-8") as f:
            json.dump(values, f)
    env = dict(os.environ, HOME=home, JUPYTER_CONFIG_DIR=os.path.join(home, "config"),
               JUPYTER_RUNTIME_DIR=os.path.join(home, "runtime"),
               JUPYTERLAB_SETTINGS_DIR=os.path.join(home, "settings"),
               JUPYTERLAB_WORKSPACES_DIR=os.path.join(home, "workspaces"))
    env.pop("NBGRADER_EXECUTION", None)
    port = _free_port()
    log = open(os.path.join(root, ".home", "lab.log"), "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--ServerApp.root_dir={root}", f"--IdentityProvider.token={TOKEN}",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
        + (["--allow-root"] if os.geteuid() == 0 else []),
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                if server.poll() is not None:
                    break
                time.sleep(0.25)
        else:
            pytest.fail("JupyterLab did not start within 60 s")
        if server.poll() is not None:
            with open(log.name, encoding="utf-8") as f:
                pytest.fail("JupyterLab exited:\n" + f.read()[-3000:])
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(30)
    yield driver
    driver.quit()


def _wait(condition, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.25)
    pytest.fail(f"timed out after {timeout} s waiting for {what}")


def _menu(driver, menu, command):
    """Open a menu of the menu bar and pick the item that runs ``command``, as a user clicks."""
    from selenium.webdriver.common.by import By
    items = driver.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-item")
    next(i for i in items if i.text.strip() == menu).click()
    item = _wait(lambda: [e for e in driver.find_elements(By.CSS_SELECTOR, f'.lm-Menu-item[data-command="{command}"]')
                          if e.is_displayed()], 10, f"the {command} item of the {menu} menu")
    item[0].click()


def _shot(driver, element, name):
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    time.sleep(0.3)
    path = os.path.join(ARTIFACTS, name)
    element.screenshot(path)
    print(f"\n[artifact] {path}")
    return path


def _brightness(path):
    """Mean grey level (0-255) of a screenshot."""
    import numpy as np
    from PIL import Image
    with Image.open(path) as image:
        return float(np.asarray(image.convert("L")).mean())


def _run_all(driver, lab, path, release_notebook, run_menu="Run"):
    """Open ``path`` in JupyterLab, run every cell from the Run menu (``run_menu``: its label),
    and return each code cell's (source, text of its outputs, number of error outputs)."""
    from selenium.webdriver.common.by import By
    driver.get(f"{lab}/lab/tree/{path}?token={TOKEN}&reset")   # reset: no tab of an earlier test restored
    _wait(lambda: driver.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-Cell"), 90, "the notebook to open")
    _wait(lambda: driver.execute_script(
        "const s = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');"
        "return s && s.getAttribute('data-status') === 'idle';"), 90, "the kernel to be ready")

    start = time.monotonic()
    _menu(driver, run_menu, "runmenu:run-all")
    n_code = sum(c.cell_type == "code" for c in nbformat.read(release_notebook, as_version=4).cells)

    def finished():
        prompts = driver.execute_script(
            "return [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt')]"
            ".map(p => p.textContent.trim());")
        done = [p for p in prompts if p.startswith("[") and p[1:-2].strip().isdigit()]
        busy = driver.execute_script(
            "const s = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');"
            "return !s || s.getAttribute('data-status') !== 'idle';")
        return len(prompts) == len(done) == n_code and not busy
    _wait(finished, 240, "every cell to run")
    print(f"\n[measure] JupyterLab ran all {n_code} code cells of {path} in {time.monotonic() - start:.1f} s")

    return driver.execute_script(
        "return [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell')].map(c => "
        "[c.querySelector('.jp-InputArea-editor').textContent, "
        " [...c.querySelectorAll('.jp-OutputArea-output')].map(o => o.textContent).join('\\n'), "
        " c.querySelectorAll('.jp-OutputArea-output[data-mime-type=\"application/vnd.jupyter.stderr\"]').length])")


def _drawn_figures(driver, at_least, prefix):
    """The notebook's SVG figures, each waited for until it is decoded and has a size on
    screen, and shot (light or dark, whichever theme is on)."""
    from selenium.webdriver.common.by import By
    figures = driver.find_elements(By.CSS_SELECTOR, ".jp-MarkdownOutput img")
    figures = [f for f in figures if (f.get_attribute("src") or "").startswith("data:image/svg+xml")]
    assert len(figures) >= at_least, f"{len(figures)} figures in the rendered notebook"
    for i, figure in enumerate(figures):
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", figure)
        _wait(lambda: driver.execute_script("const r = arguments[0].getBoundingClientRect();"
                                            "return arguments[0].complete && arguments[0].naturalWidth > 0 && "
                                            "r.width > 100 && r.height > 50;", figure),
              10, f"figure {i} to be drawn")
        assert figure.get_attribute("alt").strip(), f"figure {i} has no alt text"
        shot = _shot(driver, figure, f"{prefix}_{i}.png")
        assert _brightness(shot) > 180, "a figure should be drawn on its white panel"
    return figures


def test_release_works_in_jupyterlab(lab, browser):
    from selenium.webdriver.common.by import By
    os.makedirs(ARTIFACTS, exist_ok=True)
    driver = browser
    outputs = _run_all(driver, lab, "rnn_step_by_step.ipynb", os.path.join(RELEASE, "rnn_step_by_step.ipynb"))
    errors = [(src[:60], out[:300]) for src, out, n_err in outputs if n_err]
    assert not errors, f"cells with errors: {errors}"
    checks = {e.name: out for src, out, _ in outputs for e in EXERCISES if f'check("{e.name}")' in src}
    assert sorted(checks) == sorted(e.name for e in EXERCISES)
    for name, out in checks.items():
        assert f"✓ {name}: all checks passed" in out, f"check cell of {name} shows: {out[:300]}"
    numerical = [out for src, out, _ in outputs if "relative_error(" in src]
    assert len(numerical) == 2 and all("✗" not in o and o.count("✓ they agree") >= 1 for o in numerical)
    assert sum(o.count("✓ they agree") for o in numerical) == 3   # dWax; dc_prev and da_prev

    # the figures: decoded, with a size on screen (six in this notebook: issue 31)
    figures = _drawn_figures(driver, 6, "figure_light")

    # the learning plot
    training = next(c for c in driver.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-CodeCell")
                    if "rnn_train.train(" in c.find_element(By.CSS_SELECTOR, ".jp-InputArea-editor").text)
    plot = training.find_element(By.CSS_SELECTOR, ".jp-OutputArea-output img")
    assert plot.get_attribute("src").startswith("data:image/png")
    _wait(lambda: driver.execute_script("return arguments[0].naturalWidth > 0 && "
                                        "arguments[0].getBoundingClientRect().width > 200;", plot), 10, "the plot")
    assert "LSTM step  800" in training.text and "RNN step  800" in training.text
    _shot(driver, training, "learning_plot.png")

    # the dark theme: the page turns dark, the figures keep their white panel
    items = driver.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-item")
    next(i for i in items if i.text.strip() == "Settings").click()
    theme = _wait(lambda: [e for e in driver.find_elements(By.CSS_SELECTOR, ".lm-Menu-item")
                           if e.is_displayed() and e.text.strip().startswith("Theme")], 10, "the Theme submenu")
    theme[0].click()
    dark = _wait(lambda: [e for e in driver.find_elements(By.CSS_SELECTOR, ".lm-Menu-item")
                          if e.is_displayed() and e.text.strip() == "JupyterLab Dark"], 10, "JupyterLab Dark")
    dark[0].click()
    _wait(lambda: driver.execute_script("return document.body.dataset.jpThemeLight === 'false';"), 30,
          "the dark theme")
    time.sleep(1)
    background = driver.execute_script(
        "return getComputedStyle(document.querySelector('.jp-NotebookPanel .jp-Notebook')).backgroundColor;")
    r, g, b = (int(v) for v in background[background.index("(") + 1:].rstrip(")").split(",")[:3])
    assert 0.299 * r + 0.587 * g + 0.114 * b < 100, f"the dark theme left the notebook {background}"
    for i, figure in enumerate(figures):
        path = _shot(driver, figure, f"figure_{i}_dark.png")
        assert _brightness(path) > 180, "in the dark theme a figure must still show its white panel"
    _shot(driver, driver.find_element(By.CSS_SELECTOR, ".jp-NotebookPanel"), "notebook_dark.png")


def test_gru_release_works_in_jupyterlab(lab, browser):
    """The second assignment, opened after the first (in the dark theme the first test left
    on): its checks pass, its numerical check gives a verdict, its figures are drawn."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    outputs = _run_all(browser, lab, f"{GRU}/{GRU}.ipynb", os.path.join(GRU_RELEASE, GRU + ".ipynb"))
    errors = [(src[:60], out[:300]) for src, out, n_err in outputs if n_err]
    assert not errors, f"cells with errors: {errors}"
    checks = {e.name: out for src, out, _ in outputs for e in GRU_EXERCISES if f'check("{e.name}")' in src}
    assert sorted(checks) == sorted(e.name for e in GRU_EXERCISES)
    for name, out in checks.items():
        assert f"✓ {name}: all checks passed" in out, f"check cell of {name} shows: {out[:300]}"
    (numerical,) = [out for src, out, _ in outputs if "relative_error(" in src]
    assert "✓ they agree" in numerical and "✗" not in numerical
    _drawn_figures(browser, 2, "gru_figure")
