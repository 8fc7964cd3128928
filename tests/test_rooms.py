"""The engine's rooms keep their rules (assignments/grading/__init__.py names them).

Each rule is checked by reading or running the code as it is, and each check has a
companion proving it would catch a breach."""
import ast
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest
from helpers import REPO

from assignments.grading.upstream import RELIED_ON, fingerprints

GRADING = pathlib.Path(REPO, "assignments", "grading")
ROOMS = sorted(p.name for p in GRADING.iterdir() if (p / "__init__.py").exists())
MODULES = sorted(p for p in GRADING.rglob("*.py"))
CONSTANTS = {"GRADING", "PACKAGE", "REPO", "SHIPPED", "TEMPLATES", "project"}  # the package root's names

# Which rooms each room may import. The root (the constants above) is open to every room.
MAY_IMPORT = {
    "shipped": set(),
    "measure": set(),
    "contract": {"shipped"},
    "reports": set(),
    "sandbox": {"shipped", "upstream", "measure"},
    "upstream": {"judging.channel"},  # the two errors a served cell may end with
    "judging": {"contract", "sandbox", "shipped", "upstream", "measure"},
    "authoring": {"contract", "run"},
    "run": set(ROOMS),
}

# What code sent out of the grading process as text may import: a student has numpy alone.
SHIPPED_CODE = sorted(GRADING.glob("shipped/[!_]*.py")) + [pathlib.Path(REPO, "assignments", "shared", "utils.py")]

BLOCKER = textwrap.dedent("""
    import importlib.abc, importlib.util, sys
    allowed = set(sys.stdlib_module_names) | {"numpy"}

    class Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] not in allowed:
                raise ImportError(f"blocked: {name}")

    sys.meta_path.insert(0, Blocker())
    spec = importlib.util.spec_from_file_location("shipped_under_test", sys.argv[1])
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    print("imported")
""")


def imports_of(path):
    """(line, dotted name) of every import in a module, relative ones made absolute."""
    parts = ["assignments"] + list(path.relative_to(pathlib.Path(REPO, "assignments")).parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = parts[: len(parts) - node.level + 1] if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            found += [(node.lineno, ".".join(module + [alias.name])) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def room_of(path):
    parts = path.relative_to(GRADING).parts
    return parts[0] if len(parts) > 1 else None


def breaches(path):
    """The imports of a module that its room's rule does not allow."""
    room, wrong = room_of(path), []
    for line, name in imports_of(path):
        parts = name.split(".")
        if room == "shipped" and parts[0] == "assignments" and parts[:3] != ["assignments", "grading", "shipped"]:
            wrong.append(f"{line}: {name}")
        if parts[:2] != ["assignments", "grading"] or len(parts) < 3 or parts[2] in CONSTANTS:
            continue
        target = parts[2]
        if room is None or target == room:
            continue
        allowed = MAY_IMPORT[room]
        if target not in allowed and ".".join(parts[2:4]) not in allowed:
            wrong.append(f"{line}: {name}")
    return wrong


@pytest.mark.parametrize("path", SHIPPED_CODE, ids=lambda p: p.name)
def test_shipped_code_imports_with_only_the_standard_library_and_numpy(path):
    done = subprocess.run([sys.executable, "-c", BLOCKER, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "imported", done.stderr[-2000:]


def test_the_blocker_stops_a_module_that_imports_more(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy\nimport nbformat\n")
    done = subprocess.run([sys.executable, "-c", BLOCKER, str(bad)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "blocked: nbformat" in done.stderr


def test_every_module_is_in_a_room_that_has_a_rule():
    assert set(MAY_IMPORT) == set(ROOMS), "a new room needs its line in MAY_IMPORT"
    loose = [p.name for p in GRADING.glob("*.py") if p.name != "__init__.py"]
    assert not loose, f"modules outside the rooms: {loose}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(GRADING)))
def test_rooms_import_only_what_their_rule_allows(path):
    assert not breaches(path), f"{path.relative_to(GRADING)} imports across its room's rule"


def test_a_breach_is_caught(tmp_path, monkeypatch):
    for room, line in [("shipped", "from ..contract import assignment\n"),
                       ("contract", "from ..run import pipeline\n"),
                       ("reports", "from assignments.grading.judging import judge\n")]:
        fake = GRADING / room / f"_breach_{room}.py"
        monkeypatch.setattr(pathlib.Path, "read_text", lambda self, encoding=None, _l=line: _l)
        assert breaches(fake), room


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(GRADING)))
def test_every_module_says_its_rule(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    room = room_of(path)
    if room is None:
        assert all(f"{r}/" in doc for r in ROOMS), "the package's docstring names every room"
    elif path.name == "__init__.py":
        assert "Rule:" in doc or f"Rule ({room}/)" in doc, "a room's docstring states its rule"
    else:
        assert f"Rule ({room}/)" in " ".join(doc.split()), "the docstring ends with its room's rule"


def test_units_stay_small_enough_to_hold_in_the_head():
    """No function over 60 lines, no class over 250, anywhere in the engine or assignments."""
    big = []
    for path in pathlib.Path(REPO, "assignments").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            size = getattr(node, "end_lineno", 0) - getattr(node, "lineno", 0) + 1
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and size > 60 \
                    or isinstance(node, ast.ClassDef) and size > 250:
                big.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({size} lines)")
    assert not big, big


def test_the_upstream_code_relied_on_is_the_code_fingerprinted(request):
    """After an upgrade of nbgrader, nbconvert, nbclient, jupyter_client, ipykernel or
    IPython, this names each body the replacements were written against that changed. Check
    the replacements against the new code, then run `pytest --update-fingerprints`."""
    if request.config.getoption("--update-fingerprints"):
        fingerprints.update()
    assert not fingerprints.changed(), "\n".join(fingerprints.changed())


def test_a_changed_upstream_body_is_named():
    then = json.loads(json.dumps(fingerprints.recorded()))
    name = sorted(RELIED_ON)[0]
    then["bodies"][name] = "0" * 16
    then["versions"]["nbgrader"] = "0.0"
    lines = fingerprints.changed(then=then)
    assert any(line.startswith(f"{name}: changed ({RELIED_ON[name]})") for line in lines), lines
    assert any(line.startswith("nbgrader 0.0 -> ") for line in lines), lines


def test_every_body_relied_on_exists():
    missing = [name for name in RELIED_ON if fingerprints.fingerprint(name) is None]
    assert not missing, missing


@pytest.mark.slow
@pytest.mark.sandbox
def test_stock_nbgrader_grades_the_sample_class_alike(tmp_path, monkeypatch):
    """One setting (RNN_COURSE_STOCK_NBGRADER=1, read by nbgrader_config.py) swaps every
    replacement of upstream code back for stock nbgrader: the results must not move."""
    from helpers import A, build_samples

    from assignments.grading.run import pipeline
    submissions = os.path.join(build_samples(str(tmp_path / "class")), "submitted")

    def results(name):
        pipeline.grade(A, submissions, str(tmp_path / name), workers=2)
        with open(tmp_path / name / "results.json", encoding="utf-8") as f:
            return json.load(f)["submissions"]

    def without_receipts(entries):
        return [{k: v for k, v in s.items() if k != "receipt"} for s in entries]

    monkeypatch.delenv("RNN_COURSE_STOCK_NBGRADER", raising=False)   # ours, even in a stock-mode run
    ours = results("ours")
    monkeypatch.setenv("RNN_COURSE_STOCK_NBGRADER", "1")
    stock = results("stock")
    assert without_receipts(stock) == without_receipts(ours)
    # the switch is a setting of nbgrader's steps: the receipts say so, and only that
    assert {k for s, o in zip(stock, ours) for k in s["receipt"] if s["receipt"][k] != o["receipt"][k]} == {"sandbox"}
