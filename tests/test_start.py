"""run/start.py: a grading run begins before nbgrader, nbconvert and SQLAlchemy are imported,
so that the kernels' zygote boots while they are."""
import json
import os
import subprocess
import sys

from helpers import REPO

from assignments.grading.run import start

HEAVY = ("nbgrader", "nbconvert", "nbclient", "sqlalchemy")


def test_the_command_line_begins_a_run_without_the_heavy_imports(tmp_path):
    """The command line, the run's configuration (nbgrader_config.py included) and ``begin``
    import none of HEAVY: each would hold the zygote back by a fraction of a second."""
    code = ("import json, sys; import assignments.__main__; from assignments.grading.run import start; "
            f"began = start.begin({str(tmp_path / 'out')!r}, sandbox=False); "
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.strip().splitlines()[-1]) == []
    assert os.path.isdir(tmp_path / "out" / start.WORK)


def test_the_course_release_step_still_comes_first(tmp_path):
    """nbgrader_config.py prepends CourseRelease to nbgrader's own steps lazily (it imports no
    nbgrader): GenerateAssignment reads CourseRelease first, then every step of its own."""
    from nbgrader.converters import GenerateAssignment
    config = start.run_config(str(tmp_path), None, True, None, None, None)
    steps = GenerateAssignment(config=config).preprocessors
    own = GenerateAssignment.class_traits()["preprocessors"].default()
    assert steps == ["assignments.grading.authoring.release.CourseRelease", *own]


def test_begin_empties_the_work_folder_but_its_cache(tmp_path):
    work = tmp_path / start.WORK
    (work / start.CACHE).mkdir(parents=True)
    (work / start.CACHE / "kept").write_text("x")
    (work / "submitted").mkdir()
    began = start.begin(str(tmp_path), sandbox=False)
    began.sweeper.join()
    assert sorted(os.listdir(work)) == [start.CACHE] and began.work == str(work) and not began.local


def test_a_refused_run_leaves_the_collector_on(tmp_path, monkeypatch, capsys):
    """`grade` turns garbage collection off during its imports: a run refused there (no
    sandbox) must turn it back on, or the calling process would never collect again."""
    import gc

    from helpers import build_samples

    import assignments.__main__ as cli
    subs = build_samples(str(tmp_path / "class"))
    monkeypatch.setattr(start, "sandbox_problem", lambda: "bubblewrap is missing here")
    assert cli.main(["grade", "--submissions", subs, "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert "bubblewrap is missing here" in capsys.readouterr().err
    assert gc.isenabled()
