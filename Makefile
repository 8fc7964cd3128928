# The two commands a fresh machine needs (see README.md):
#   make demo   set up, build the release and grade the bundled sample class
#   make test   set up and run the tests
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python

.PHONY: setup sandbox postgres browser demo test test-quick test-stock release grade hub clean catalogs figure-font

setup: $(VENV)/.installed sandbox
	@# bytecode for the course's own modules, as pip leaves it for installed packages (an editable
	@# install is compiled only when imported, and not at all under PYTHONDONTWRITEBYTECODE)
	@$(PY) -m compileall -q assignments

# Grading runs submissions inside bubblewrap, with a system-call filter built by libseccomp
# (Debian packages bubblewrap and libseccomp2).
sandbox:
	@{ command -v bwrap >/dev/null 2>&1 && ls /usr/lib/*/libseccomp.so.2 >/dev/null 2>&1; } || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap libseccomp2 >/dev/null; \
	  else echo "bubblewrap or libseccomp2 is missing: sudo apt-get install bubblewrap libseccomp2 (or grade with --no-sandbox)"; fi; }

# The cluster tests start their own PostgreSQL server (Debian package postgresql).
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	  else echo "PostgreSQL is missing: sudo apt-get install postgresql (the cluster tests need it)"; fi; }

# The browser tests use headless Chromium (Debian packages chromium and chromium-driver; the
# driver is used as installed, nothing is downloaded): JupyterLab, the report, the feedback pages.
# The zh-CN pages need a font with Chinese glyphs (fonts-noto-cjk), or they show empty boxes.
browser:
	@{ [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; } || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else echo "Chromium is missing: sudo apt-get install chromium chromium-driver (the browser test needs it)"; fi; }
	@[ -n "$$(fc-list :lang=zh 2>/dev/null)" ] || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk >/dev/null; \
	  else echo "No font for Chinese: sudo apt-get install fonts-noto-cjk (the zh-CN browser tests need it)"; fi; }

$(VENV)/.installed: requirements.txt constraints.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -c constraints.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

demo: setup
	$(PY) -m assignments demo

# Stock nbgrader in place of every piece of assignments/grading/upstream/ (docs/testing.md):
# `make test` runs the quick tests of those pieces that way too, `make test-stock` the suite.
STOCK := RNN_COURSE_STOCK_NBGRADER=1
STOCK_QUICK := tests/test_getgrades.py tests/test_overwritecells.py tests/test_overwritekernelspec.py \
               tests/test_saveautogrades.py

# Both cores (pytest-xdist): whole modules handed out, the costliest first (tests/conftest.py).
PARALLEL := -n 2 --dist loadscope --no-loadscope-reorder
# The inner loop: every room's unit tests in under 3 minutes, without the browser, the hub,
# PostgreSQL or the slow end-to-end tests (docs/testing.md), handed out as `make test`'s are:
# a module's fixture that grades a class is then built once.
QUICK := -m "not slow and not browser and not hub and not postgres"

test: setup postgres browser
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy assignments
	$(PY) -m pytest $(PARALLEL)
	$(STOCK) $(PY) -m pytest -q $(STOCK_QUICK)

test-quick: setup
	$(VENV)/bin/ruff check .
	$(PY) -m pytest $(PARALLEL) $(QUICK)

test-stock: setup postgres
	$(STOCK) $(PY) -m pytest -m "not browser" --ignore=tests/test_hub.py

release: setup
	$(PY) -m assignments release

# The message catalogs (docs/translation.md): Babel extracts the English templates from the code
# into assignments/locale/course.pot and merges them into each language's course.po; translate
# what is new or fuzzy there (tests/test_translation.py says what). The release compiles them.
catalogs: setup
	$(PY) -m assignments catalogs

# The zh-CN figures' CJK font (assignments/rnn_step_by_step/fonts/README.md): rebuild the committed
# subset from Debian's fonts-noto-cjk after a figure's label or its translation changed. Building
# the release does not need this: it uses the committed subset.
figure-font: setup
	@[ -f /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ] || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk >/dev/null; \
	  else echo "fonts-noto-cjk is missing: sudo apt-get install fonts-noto-cjk (the figures' CJK subset is built from it)"; exit 1; fi; }
	$(PY) -m assignments.rnn_step_by_step.figure_font

grade: setup
	$(PY) -m assignments grade

# The course on JupyterHub (docs/hub.md): as root, sets this machine up (users, the exchange,
# the instructor's course folder, JupyterHub and its proxy) and starts the hub on port 8000.
# HUB_ARGS passes options to hub/deploy.py, e.g. HUB_ARGS="--students ana,bo --port 8443".
HUB_PYTHON ?= /usr/bin/python3
hub:
	@[ "$$(id -u)" = 0 ] || { echo "make hub makes users and runs their servers: run it as root (sudo make hub)"; exit 2; }
	@[ -x $(HUB_PYTHON) ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null; }
	$(HUB_PYTHON) hub/deploy.py --start $(HUB_ARGS)

clean:
	rm -rf $(VENV) .nbgrader gradebook.db grades.csv grades_canvas.csv grades_moodle.csv results.json \
	  report.html report.json timings.csv clusters.json similarity.json pairs feedback samples/submitted results
	find autograded -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} +
