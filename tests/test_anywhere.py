"""The course from a clone anywhere: a private folder (mode 0700, as /root is), a path with
spaces and non-ASCII characters, and a read-only home folder. The grading command writes only
where it is told (--out), and its kernels, run as a user of their own, still find what they
need. Each run here is of a copy of this checkout, made where the test chooses."""
import json
import os
import shutil
import subprocess
import sys

import pytest
from helpers import REPO, build_samples, readable_copy

pytestmark = pytest.mark.sandbox

AID = "rnn_step_by_step"
ODD_FOLDER = "a course folder/课程 Übung"   # spaces, CJK and accented letters


def _read_only(home):
    """A command prefix that runs what follows with ``home`` read-only. Root writes through any
    mode, so as root the folder is bound read-only in a mount namespace of the command's own."""
    if os.geteuid() != 0:
        os.chmod(home, 0o555)
        return []
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, str(home)]


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory):
    """A copy of the checkout in a private folder whose path has spaces and non-ASCII letters,
    and a class of two: Ada (right) and Finn (not a notebook)."""
    root = tmp_path_factory.mktemp("private")
    os.chmod(root, 0o700)
    course = readable_copy(root / ODD_FOLDER)
    os.chmod(root / ODD_FOLDER.split("/")[0], 0o700)
    samples = build_samples(str(root / "samples"))
    for student in ("ada", "finn"):
        shutil.copytree(os.path.join(samples, "submitted", student, AID), root / "class" / student / AID)
    home = root / "home"
    home.mkdir()
    return {"root": root, "course": course, "class": root / "class", "home": home}


def _run(place, *args, cwd=None):
    env = {"PATH": os.path.dirname(sys.executable) + ":/usr/bin:/bin", "HOME": str(place["home"]),
           "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    before = sorted(os.listdir(place["home"]))
    command = [*_read_only(place["home"]), sys.executable, "-m", "assignments", *args]
    run = subprocess.run(command, cwd=str(cwd or place["course"]), env=env, capture_output=True, text=True,
                         timeout=600)
    assert sorted(os.listdir(place["home"])) == before   # nothing written there
    return run


def test_the_copy_is_imported_from_where_it_is(elsewhere):
    """The course's code in the odd folder is what runs (not this checkout's editable install)."""
    code = "import assignments.grading as g, os; print(os.path.dirname(os.path.dirname(os.path.dirname(g.__file__))))"
    run = subprocess.run([sys.executable, "-c", code], cwd=str(elsewhere["course"]), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(elsewhere["course"]) != REPO


def test_grading_from_a_private_odd_folder_with_a_read_only_home(elsewhere):
    out = elsewhere["root"] / "graded out"
    run = _run(elsewhere, "grade", "--submissions", str(elsewhere["class"]), "--out", str(out), "--quiet")
    assert run.returncode == 0, run.stderr[-3000:]
    with open(out / "results" / AID / "results.json", encoding="utf-8") as f:
        found = {s["student"]: s for s in json.load(f)["submissions"]}
    assert found["ada"]["status"] == "graded" and found["ada"]["score"] == 100, found["ada"]
    assert found["finn"]["status"] == "unreadable"
    assert (out / "feedback" / "ada" / AID / (AID + ".html")).is_file()
    assert not any(f.startswith("weakened") or f == "unsandboxed" for f in found["ada"]["flags"])


def test_the_release_is_checked_from_a_private_odd_folder(elsewhere):
    """check-release rebuilds the release from source/ where the copy is, and finds it current."""
    run = _run(elsewhere, "check-release")
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-3000:])
