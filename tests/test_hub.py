"""The course on a real JupyterHub, the whole term in a real browser (headless Chromium).

hub/deploy.py sets up the hub of the repository (docs/hub.md) with an instructor and two
students, local users made for the test and removed after it; JupyterHub, its proxy, PAM
logins and each user's JupyterLab are real. Then, as the users would, through their browsers:

1. the instructor generates the assignment in formgrader (the release it makes is the
   committed one) and releases it;
2. two students fetch it from the Assignments panel, write their answers into the
   notebook's cells, run it and read their check cells' words, validate and submit;
3. the instructor collects in formgrader, autogrades one student with formgrader's
   Autograde button and the class with `python -m assignments grade` typed into a terminal
   of their JupyterLab, as docs/hub.md says (both sandboxed: a submission's probe for the
   instructor's files finds nothing; without root or a delegated cgroup, grade says it has
   no cgroup per kernel and flags the results), reads each function's score and the judge's
   words in formgrader, gives one score by hand, which a rerun of `grade` keeps, and
   generates and releases feedback from formgrader;
4. each student fetches their feedback and opens it: their own score and mistake, never the
   other's.

A screenshot of every step is kept in tests/artifacts/hub/ (ignored by git); a failure names
that folder. It must run as root (it makes users and runs the hub): `make test` does, in CI.
"""
import json
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest
from helpers import REPO

from assignments.grading.authoring.submissions import answer_cells

pytestmark = [pytest.mark.hub, pytest.mark.browser, pytest.mark.slow]

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
ARTIFACTS = os.path.join(REPO, "tests", "artifacts", "hub")
PREFIX = "/var/tmp/rnn-course-hub-test"
VENV = "/var/tmp/rnn-course-hub-venv"   # kept between runs: deploy.py rebuilds it when the pins change
AID = "rnn_step_by_step"
INSTRUCTOR, STUDENTS = "rnntest-teacher", ("rnntest-ada", "rnntest-ben")
NAMES = {"rnntest-ada": "Ada Lovelace", "rnntest-ben": "Ben Okafor"}   # given to deploy.py with the user names
# a line a student's answer cell starts with: it looks for the instructor's course folder,
# which nothing a submission runs may see when it is graded (the sandbox), though the
# instructor's own processes can
PROBE = ("import os as _os; print('instructor files visible:', "
         "_os.path.exists({course!r} + '/source/rnn_step_by_step/rnn_step_by_step.ipynb'))\n")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _remove_users():
    for name in (INSTRUCTOR, *STUDENTS):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        subprocess.run(["pkill", "-KILL", "-u", name], check=False)
        subprocess.run(["userdel", name], check=False, capture_output=True)
        subprocess.run(["groupdel", name], check=False, capture_output=True)


@pytest.fixture(scope="module")
def hub():
    if os.geteuid() != 0:
        pytest.fail("the hub test makes local users and runs JupyterHub: run it as root (`make test` and CI do), "
                    "or leave it out with -m 'not hub'")
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(path):
            pytest.fail(f"{path} is missing: apt-get install chromium chromium-driver (`make test` does it as root)")
    _remove_users()
    shutil.rmtree(PREFIX, ignore_errors=True)
    ports = [_free_port() for _ in range(3)]
    deploy = subprocess.run(
        [sys.executable, os.path.join(REPO, "hub", "deploy.py"), "--prefix", PREFIX, "--venv", VENV,
         "--instructor", INSTRUCTOR, "--students", ",".join(f"{s}:{NAMES[s]}" for s in STUDENTS), "--home-root", os.path.join(PREFIX, "home"),
         "--ip", "127.0.0.1", "--port", str(ports[0]), "--hub-port", str(ports[1]), "--proxy-api-port", str(ports[2])],
        capture_output=True, text=True, timeout=1800)
    assert deploy.returncode == 0, deploy.stdout[-3000:] + deploy.stderr[-3000:]
    with open(os.path.join(PREFIX, "hub.json")) as f:
        settings = json.load(f)
    with open(os.path.join(PREFIX, "state", "passwords.json")) as f:
        passwords = json.load(f)
    log = open(os.path.join(PREFIX, "hub.log"), "w")
    server = subprocess.Popen([os.path.join(VENV, "bin", "jupyterhub"), "-f", os.path.join(REPO, "hub", "jupyterhub_config.py")],
                              cwd=settings["state"], env=dict(os.environ, RNN_COURSE_HUB=PREFIX),
                              stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{ports[0]}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{url}/hub/health", timeout=2)
                break
            except OSError:
                if server.poll() is not None:
                    break
                time.sleep(0.25)
        if server.poll() is not None:
            with open(log.name) as f:
                pytest.fail("JupyterHub exited:\n" + f.read()[-3000:])
        yield {"url": url, "passwords": passwords, **settings}
    finally:
        server.terminate()   # it stops the users' servers as it ends
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
        _remove_users()
        shutil.rmtree(PREFIX, ignore_errors=True)


class Browser:
    """One user's browser, and the steps of the term as that user takes them."""

    def __init__(self, hub, user, story):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        # no network but the hub's own address: every name fails to resolve (a CDN's too), as on
        # a machine without internet
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1400,1000", "--force-device-scale-factor=1", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update",
                    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"):
            options.add_argument(arg)
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.driver.set_script_timeout(30)
        self.hub, self.user, self.story = hub, user, story

    # --- generic ------------------------------------------------------------------------
    def by(self, css):
        from selenium.webdriver.common.by import By
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def wait(self, condition, timeout, what):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                value = condition()
            except Exception:   # the page is changing under us: look again
                value = None
            if value:
                return value
            time.sleep(0.25)
        self.shot(f"timeout-{what}")
        raise AssertionError(f"{self.user}: timed out after {timeout} s waiting for {what}; screenshots: {ARTIFACTS}")

    def shot(self, step):
        self.story.append(step)
        name = f"{len(self.story):02d}-{self.user}-{re.sub(r'[^a-z0-9]+', '-', step.lower())[:60]}.png"
        self.driver.save_screenshot(os.path.join(ARTIFACTS, name))

    def text(self, css="body"):
        return " ".join(e.text for e in self.by(css))

    def click_text(self, css, text, timeout=30):
        found = self.wait(lambda: [e for e in self.by(css) if e.text.strip() == text and e.is_displayed()], timeout, text)
        found[0].click()

    # --- JupyterHub and JupyterLab ------------------------------------------------------
    def log_in(self):
        self.driver.get(self.hub["url"] + "/hub/login")
        self.wait(lambda: self.by("#username_input"), 30, "the login form")
        self.by("#username_input")[0].send_keys(self.user)
        self.by("#password_input")[0].send_keys(self.hub["passwords"][self.user])
        self.by("#login_submit")[0].click()
        self.wait(lambda: "/lab" in self.driver.current_url and self.by(".lm-MenuBar-item"), 180, "JupyterLab")
        self.shot("logged in")

    def menu(self, menu, command):
        self.click_text(".lm-MenuBar-item", menu)
        item = self.wait(lambda: [e for e in self.by(f'.lm-Menu-item[data-command="{command}"]') if e.is_displayed()],
                         10, command)
        item[0].click()

    def tab(self, label):
        self.click_text(".lm-DockPanel-tabBar .lm-TabBar-tab", label)

    def notebook(self, css=""):
        return self.by(".jp-NotebookPanel:not(.lm-mod-hidden) " + css)

    def dialog(self, busy):
        """The text of the dialog that appears, once it no longer says ``busy``; it is closed."""
        box = self.wait(lambda: [d for d in self.by(".jp-Dialog") if d.is_displayed()], 60, "a dialog")[0]
        self.wait(lambda: busy not in box.text and box.text.strip(), 300, "the dialog's result")
        text = box.text
        self.shot("dialog")
        box.find_element("css selector", ".jp-Dialog-button.jp-mod-accept, .jp-Dialog-button").click()
        return text

    # --- a student ----------------------------------------------------------------------
    def fetch_and_open(self):
        self.menu("Nbgrader", "nbgrader:open-assignment-list")
        self.wait(lambda: self.by("#released_assignments_list button"), 60, "the released assignment")
        self.shot("assignments panel")
        self.click_text("#released_assignments_list button", "Fetch")
        link = self.wait(lambda: self.by("#fetched_assignments_list a.assignment-notebooks-link"), 60, "the fetched assignment")[0]
        link.click()
        notebook = self.wait(lambda: [a for a in self.by("#fetched_assignments_list .nested_list_item a") if a.is_displayed()],
                             30, "the notebook's link")[0]
        notebook.click()
        release = nbformat.read(os.path.join(REPO, "release", AID, AID + ".ipynb"), as_version=4)
        self.wait(lambda: len(self.notebook(".jp-Cell")) == len(release.cells), 120, "every cell of the notebook")
        self.wait(lambda: self.driver.execute_script(
            "const s = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator');"
            "return s && s.getAttribute('data-status') === 'idle';"), 120, "the kernel")
        self.shot("notebook open")
        return release

    def write_answers(self, release, answers):
        """Each answer into its cell's editor, as a paste (the editor's own input path)."""
        from selenium.webdriver.common.keys import Keys
        cells = self.notebook(".jp-Cell")
        for i, cell in enumerate(release.cells):
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in answers and cell.metadata["nbgrader"].get("solution"):
                self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", cells[i])
                editor = cells[i].find_element("css selector", ".cm-content")
                editor.click()
                editor.send_keys(Keys.CONTROL, "a")
                self.driver.execute_cdp_cmd("Input.insertText", {"text": answers[grade_id]})
        self.shot("answers written")

    def run_all_and_save(self):
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys
        self.menu("Run", "runmenu:run-all")
        time.sleep(1)

        def finished():   # Run All stops at a check cell that fails, as for a learner
            prompts = self.driver.execute_script(
                "return [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell "
                ".jp-InputPrompt')].map(p => p.textContent.trim());")
            busy = self.driver.execute_script(
                "const s = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator');"
                "return !s || s.getAttribute('data-status') !== 'idle';")
            return prompts and prompts[0][1:-2].strip().isdigit() and not any("*" in p for p in prompts) and not busy
        self.wait(finished, 300, "the notebook to run")
        self.notebook(".jp-Notebook")[0].click()
        ActionChains(self.driver).key_down(Keys.CONTROL).send_keys("s").key_up(Keys.CONTROL).perform()
        self.wait(lambda: not self.by(".jp-mod-dirty"), 30, "the notebook to be saved")
        self.shot("ran and saved")
        return self.driver.execute_script(
            "return [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell')].map(c => "
            "[...c.querySelectorAll('.jp-OutputArea-output')].map(o => o.textContent).join('\\n'))")

    def validate_and_submit(self):
        self.tab("Assignments")
        link = self.wait(lambda: self.by("#fetched_assignments_list a.assignment-notebooks-link"), 30, "the assignment")[0]
        if not [b for b in self.by("#fetched_assignments_list button") if b.text == "Validate" and b.is_displayed()]:
            link.click()   # unfold its notebooks
        self.click_text("#fetched_assignments_list button", "Validate")
        said = self.dialog("Validating")
        self.click_text("#fetched_assignments_list button", "Submit")
        self.wait(lambda: re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", self.text("#submitted_assignments_list")), 60,
                  "the submission to be listed")
        self.shot("submitted")
        return said

    def fetch_feedback(self):
        """Fetch feedback in the Assignments panel and click "(view feedback)", which opens the page
        itself (not only its folder in the file browser); its text. Its HTML is kept in
        ``self.feedback_html``, and whether any output's lines run past the page's right edge in
        ``self.feedback_overflow``."""
        self.tab("Assignments")
        self.by("#refresh_assignments_list")[0].click()
        self.click_text("#submitted_assignments_list button", "Fetch Feedback", timeout=60)
        view = self.wait(lambda: [a for a in self.by("#submitted_assignments_list a") if "view feedback" in a.text], 60,
                         "the feedback's link")[0]
        view.click()
        frame = self.wait(lambda: [f for f in self.by(".jp-MainAreaWidget:not(.lm-mod-hidden) iframe") if f.is_displayed()],
                          60, "the feedback page, opened by (view feedback)")[0]
        time.sleep(2)
        self.shot("feedback open")
        self.driver.switch_to.frame(frame)
        try:
            html = self.wait(lambda: self.driver.page_source if "Score" in self.driver.page_source else None, 30,
                             "the page's scores")
            self.feedback_html = html
            self.feedback_overflow = self.driver.execute_script(
                "return [...document.querySelectorAll('div.output_area pre')].filter(p => p.scrollWidth > p.clientWidth + 1)"
                ".map(p => p.textContent.slice(0, 80)).concat(document.documentElement.scrollWidth > "
                "document.documentElement.clientWidth + 1 ? ['the page is wider than its frame'] : []);")
        finally:
            self.driver.switch_to.default_content()
        return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))

    def terminal(self):
        """A terminal of one's own JupyterLab, opened as File › New › Terminal opens it (in one's
        home), focused: what is typed then goes to its shell."""
        from selenium.webdriver.common.action_chains import ActionChains
        self.driver.get(f"{self.hub['url']}/user/{self.user}/lab")
        self.wait(lambda: self.by(".lm-MenuBar-item"), 120, "JupyterLab")
        self.click_text(".lm-MenuBar-item", "File")
        new = self.wait(lambda: [e for e in self.by('.lm-Menu-item[data-type="submenu"]')
                                 if e.is_displayed() and e.text.strip() == "New"], 10, "File › New")[0]
        ActionChains(self.driver).move_to_element(new).click().perform()
        item = self.wait(lambda: [e for e in self.by('.lm-Menu-item[data-command="terminal:create-new"]') if e.is_displayed()],
                         10, "File › New › Terminal")[0]
        item.click()
        screen = self.wait(lambda: [e for e in self.by(".jp-Terminal .xterm-screen") if e.is_displayed()], 60, "the terminal")[0]
        screen.click()
        self.wait(lambda: self.driver.execute_script(
            "return document.activeElement.classList.contains('xterm-helper-textarea');"), 10, "the terminal's focus")
        self.shot("terminal open")

    def type(self, line):
        """A line typed into the focused terminal, key by key (xterm.js reads its helper textarea's keys), and Enter."""
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys
        ActionChains(self.driver).send_keys(line + Keys.ENTER).perform()

    # --- the instructor, in formgrader --------------------------------------------------
    def formgrader(self, page="manage_assignments"):
        self.driver.get(f"{self.hub['url']}/user/{self.user}/formgrader/{page}")

    def assignment_action(self, column):
        """Click an action of the assignment's row in Manage Assignments; the modal's text."""
        self.formgrader()
        row = self.wait(lambda: [r for r in self.by("tr") if r.text.startswith(AID + " ")], 60, "the assignment's row")[0]
        row.find_element("css selector", f"td.{column} a").click()
        return self.modal(column)

    def modal(self, what):
        """The words of the modal formgrader opens when an action ends. They are read from the
        page (innerText) once the title is there: Selenium's visible text lost the title and
        message of a modal whose long log had scrolled it (seen in CI)."""
        box = self.wait(lambda: [m for m in self.by(".modal") if m.is_displayed()
                                 and self.inner_text(m, ".modal-title")], 600, f"{what}'s result")[0]
        time.sleep(0.5)  # bootstrap's fade-in
        text = self.inner_text(box)
        self.shot(what)
        box.find_element("css selector", ".modal-footer button").click()
        self.wait(lambda: not [m for m in self.by(".modal") if m.is_displayed()], 30, "the modal to close")
        return text

    def inner_text(self, element, inside=None):
        if inside:
            found = element.find_elements("css selector", inside)
            if not found:
                return ""
            element = found[0]
        return (self.driver.execute_script("return arguments[0].innerText;", element) or "").strip()

    def folder_links(self):
        """formgrader's links of the assignment's row to its folders (its name: source; Preview:
        the release), followed as the instructor would (they open a new tab: here the same one);
        for each, where it landed and what the page lists."""
        self.formgrader()
        row = self.wait(lambda: [r for r in self.by("tr") if r.text.startswith(AID + " ")], 60, "the assignment's row")[0]
        hrefs = [row.find_element("css selector", f"td.{column} a").get_attribute("href") for column in ("name", "preview")]
        landed = []
        for href in hrefs:
            self.driver.get(href)
            self.wait(lambda: f"{AID}.ipynb" in self.text() or "404" in self.driver.title + self.text("h1"), 60,
                      f"the page of {href}")   # JupyterHub's 404 page says so in its heading
            self.shot("formgrader's link followed")
            landed.append((href, self.driver.current_url, self.driver.title, self.text()))
        return landed

    def rendered_math(self):
        """On an open grading page: how many formulas MathJax drew, once it has drawn them, and
        the TeX still readable as typed (a formula of the notebook's: \\odot)."""
        drawn = self.wait(lambda: self.driver.execute_script(
            "return window.MathJax && MathJax.Hub && MathJax.isReady && !MathJax.Hub.queue.pending && "
            "document.querySelectorAll('.MathJax, .MathJax_CHTML, .MathJax_Display, .MathJax_MathML').length;"),
            60, "MathJax to draw the page's math")
        raw = self.driver.execute_script("return document.querySelector('#notebook-container').innerText;").count("\\odot")
        self.shot("grading page's math")
        return drawn, raw

    def autograde(self, student):
        self.formgrader(f"manage_submissions/{AID}")
        row = self.wait(lambda: [r for r in self.by("tr") if student in r.text], 60, f"{student}'s row")[0]
        row.find_element("css selector", "td.autograde a").click()
        return self.modal("autograde")

    def submissions_page(self):
        """The text of formgrader's list of the assignment's submissions (Manage Submissions)."""
        self.formgrader(f"manage_submissions/{AID}")
        self.wait(lambda: len(self.by("td.autograde a")) >= len(STUDENTS), 60, "the submissions")
        return re.sub(r"\s+", " ", self.text())

    def open_submission(self, student, gradebook):
        """The grading page of a student's submission (formgrader shows them by number)."""
        from nbgrader.api import Gradebook
        with Gradebook(gradebook) as gb:
            submission_id = gb.find_submission_notebook(AID, AID, student).id
        self.formgrader(f"submissions/{submission_id}")
        self.wait(lambda: self.by("input.score"), 60, "the grading page")
        return re.sub(r"\s+", " ", self.text())

    def give_score(self, cell, score):
        from selenium.common.exceptions import ElementClickInterceptedException
        from selenium.webdriver.common.keys import Keys
        box = self.by(f"input#{cell}")[0]
        for attempt in range(20):   # the page reflows while MathJax draws its formulas: aim again
            self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", box)
            try:
                box.click()
                break
            except ElementClickInterceptedException:
                if attempt == 19:
                    raise
                time.sleep(0.5)
        box.send_keys(str(score))
        box.send_keys(Keys.TAB)
        time.sleep(1)
        self.shot(f"score given to {cell}")

    def close(self):
        self.driver.quit()


def as_instructor(hub, *args):
    """A command in the instructor's course folder, as the instructor."""
    entry = pwd.getpwnam(INSTRUCTOR)
    env = {"HOME": entry.pw_dir, "USER": INSTRUCTOR, "LOGNAME": INSTRUCTOR, "LANG": "C.UTF-8",
           "PATH": os.path.join(hub["venv"], "bin") + ":/usr/bin:/bin"}
    return subprocess.run(list(args), cwd=hub["course_folder"], env=env, user=entry.pw_uid, group=entry.pw_gid,
                          extra_groups=[], capture_output=True, text=True, timeout=900)


def sample_answers(*names):
    found = {}
    for name in names:
        with open(os.path.join(REPO, "samples", "answers", AID, name), encoding="utf-8") as f:
            found.update(answer_cells(f.read()))
    return found


def test_a_term_on_the_hub(hub):
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    os.makedirs(ARTIFACTS)
    story = []
    course = hub["course_folder"]
    gradebook = "sqlite:///" + os.path.join(course, "gradebook.db")
    teacher = Browser(hub, INSTRUCTOR, story)
    students = {name: Browser(hub, name, story) for name in STUDENTS}
    ada, ben = STUDENTS
    try:
        # 1. the instructor generates and releases the assignment from formgrader
        teacher.log_in()
        said = teacher.assignment_action("assign")
        assert "Successfully created the student version" in said
        # formgrader's links to the folders land in the instructor's server (issue 41: nbgrader's
        # /tree/... without /user/NAME/ was a 404)
        for href, landed, title, text in teacher.folder_links():
            assert f"/user/{INSTRUCTOR}/tree/rnn-course/" in landed and "404" not in title, (href, landed, title)
            assert f"{AID}.ipynb" in text, (href, landed, text[:300])
        for name in os.listdir(os.path.join(REPO, "release", AID)):
            with open(os.path.join(REPO, "release", AID, name), "rb") as a, \
                    open(os.path.join(course, "release", AID, name), "rb") as b:
                assert a.read() == b.read(), f"formgrader's Generate made another {name}"
        assert "Successfully released" in teacher.assignment_action("release")

        # 2. the students work in JupyterLab and submit from the Assignments panel
        answers = {ada: sample_answers("ada.py"), ben: sample_answers("ada.py", "ben.py")}
        probe = PROBE.format(course=course)
        for name in STUDENTS:
            answers[name]["rnn_cell_forward"] = probe + answers[name]["rnn_cell_forward"]
        checks = {}
        for name, browser in students.items():
            browser.log_in()
            release = browser.fetch_and_open()
            # the freshly fetched notebook, its kernel started, has no unsaved changes (issue 41:
            # JupyterLab wrote the kernel's language_info into it, and showed the dot)
            time.sleep(2)
            assert not browser.by(".jp-mod-dirty"), f"{name}: a fetched, untouched notebook shows unsaved changes"
            browser.write_answers(release, answers[name])
            outputs = browser.run_all_and_save()
            checks[name] = {c.metadata["nbgrader"]["grade_id"][5:]: outputs[i] for i, c in enumerate(release.cells)
                            if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("test_")}
            checks[name]["validate"] = browser.validate_and_submit()
        assert all(f"✓ {f}: all checks passed" in out for f, out in checks[ada].items() if f != "validate"), checks[ada]
        assert "Success! Your notebook passes all the tests." in checks[ada]["validate"]
        assert "[rnn_grads_not_accumulated]" in checks[ben]["rnn_backward"] and "+=" in checks[ben]["rnn_backward"]
        assert "The following cell failed" in checks[ben]["validate"] and "rnn_grads_not_accumulated" in checks[ben]["validate"]

        # 3. the instructor collects and grades: formgrader's Autograde button for one
        # student, `python -m assignments grade` for the class
        assert "Processing 2 submissions" in teacher.assignment_action("collect")
        names = teacher.submissions_page()   # the students by their names, which the deployment knows
        assert "None, None" not in names and all(", ".join(NAMES[s].split()[::-1]) in names for s in STUDENTS), names
        said = teacher.autograde(ada)
        assert "Successfully autograded" in said, said   # in full: formgrader's log and traceback
        # a perfect submission's log has no warning (issue 41: one "Attribute 'checksum' ... has changed!"
        # per test cell, whose hidden tests nbgrader puts back)
        assert "has changed" not in said, said
        from nbgrader.api import Gradebook
        with Gradebook(gradebook) as gb:
            by_button = gb.find_submission(AID, ada).score
        # in a terminal of the instructor's JupyterLab, as docs/hub.md says: what it prints goes to
        # a log too, its exit status to a file, which the test waits for
        home = pwd.getpwnam(INSTRUCTOR).pw_dir
        log, status = os.path.join(home, "term-grade.log"), os.path.join(home, "term-grade.status")
        teacher.terminal()
        teacher.type(f"cd ~/{os.path.relpath(course, home)}")
        teacher.type("python -m assignments grade 2>&1 | tee ~/term-grade.log; echo ${PIPESTATUS[0]} > ~/term-grade.status")
        code = teacher.wait(lambda: open(status).read().strip(), 900, "`python -m assignments grade` in the terminal")
        teacher.shot("graded in the terminal")
        with open(log, encoding="utf-8", errors="replace") as f:
            said = f.read()
        assert code == "0", said[-3000:]   # without the terminal's PATH: "bash: python: command not found", 127
        assert "has changed" not in said, said[-3000:]
        with open(os.path.join(course, "results", AID, "results.json")) as f:
            results = {s["student"]: s for s in json.load(f)["submissions"]}
        assert by_button == results[ada]["score"] == 100.0
        # the instructor is not root and has no delegated cgroup: grade says so, and flags the results
        assert "WARNING: no cgroup per kernel" in said
        assert all("no_kernel_cgroup" in results[name]["flags"] for name in STUDENTS)
        assert results[ben]["score"] < 100 and [e["diagnoses"] for e in results[ben]["exercises"]
                                                 if e["id"] == "rnn_backward"] == [["rnn_grads_not_accumulated"]]
        for name in STUDENTS:   # the probe ran while graded, and found nothing of the instructor's
            nb = nbformat.read(os.path.join(course, "autograded", name, AID, AID + ".ipynb"), as_version=4)
            said = [o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if "instructor files" in o.get("text", "")]
            assert said == ["instructor files visible: False\n"], (name, said)

        # the instructor reads each function's score and the judge's words, and gives a score by hand
        page = teacher.open_submission(ben, gradebook)
        assert "Recognised mistake [rnn_grads_not_accumulated]" in page and "rnn_backward passed 1 of 5 hidden cases" in page
        drawn, raw = teacher.rendered_math()   # with no network: MathJax served by the instructor's server
        assert drawn > 50 and raw == 0, (drawn, raw)
        teacher.give_score("test_rnn_backward", 12)
        with Gradebook(gradebook) as gb:
            assert gb.find_grade("test_rnn_backward", AID, AID, ben).manual_score == 12.0
        graded = as_instructor(hub, "python", "-m", "assignments", "grade")   # a rerun keeps it
        assert graded.returncode == 0, graded.stderr[-3000:]
        with Gradebook(gradebook) as gb:
            assert gb.find_grade("test_rnn_backward", AID, AID, ben).manual_score == 12.0
            scores = {name: gb.find_submission(AID, name).score for name in STUDENTS}
        said = teacher.assignment_action("generate-feedback")
        assert "Successfully generated feedback" in said
        assert "not recognized" not in said, said   # issue 41: "display_data_priority not recognized by ClearHiddenTests"
        assert "Successfully released feedback" in teacher.assignment_action("release-feedback")

        # 4. each student fetches their own feedback and opens it
        pages = {name: browser.fetch_feedback() for name, browser in students.items()}
        for name, page in pages.items():
            assert f"{AID} (Score: {scores[name]:.1f} / 100.0)" in page, (name, page[:500])
            other = scores[ben] if name == ada else scores[ada]
            assert f"(Score: {other:.1f} / 100.0)" not in page
            assert ("rnn_grads_not_accumulated" in page) == (name == ben)
        assert "rnn_backward (Score: 12.0 / 15.0)" in pages[ben]   # the score given by hand
        # the cell scored by hand says that score alone: the autograder's, printed as the cell's
        # result, is gone (issue 41: the header said 12.0, the output below it the autograder's)
        auto = [e["score"] for e in results[ben]["exercises"] if e["id"] == "rnn_backward"][0]
        assert auto != 12.0
        html = students[ben].feedback_html
        cell = html[html.index('<a name="test_rnn_backward">'):]
        cell = cell[:cell.index('class="cell border-box-sizing')]   # up to the next cell: this one's outputs
        assert "Score: 12.0 / 15.0" in cell and "output_execute_result" not in cell, cell[:3000]
        assert "rnn_backward passed 1 of 5 hidden cases" in re.sub(r"<[^>]+>", "", cell)
        assert "output_execute_result" in students[ada].feedback_html   # a cell not scored by hand keeps it
        # the judge's verdicts wrap inside the page (issue 41: one long line ran off to the right)
        for name, browser in students.items():
            assert browser.feedback_overflow == [], (name, browser.feedback_overflow)
    except Exception:
        print(f"\n[artifact] screenshots of every step: {ARTIFACTS}")
        raise
    finally:
        for browser in (teacher, *students.values()):
            browser.close()
