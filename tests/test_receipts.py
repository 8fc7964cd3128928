"""Receipts (issue 34): a rerun grades only the submissions whose receipt would change and
leaves the others byte for byte; a changed hidden case is reported in changes.json for
exactly the students whose grades moved; `verify` regrades and compares with the receipts."""
import json
import os
import shutil
import subprocess
import sys
import threading

import nbformat
import numpy as np
import pytest
from helpers import REPO, A, gradebook_dump

from assignments.grading.judging.judged_execute import prepared
from assignments.grading.run import pipeline, receipts, verify

CLASS = ["ada", "ben", "chloe", "dev", "eve", "finn"]


def files(folder):
    """{path: bytes} of every file under ``folder``, the run's private .nbgrader folder and the
    SQLite gradebook aside."""
    found = {}
    for d, dirs, names in os.walk(folder):
        dirs[:] = sorted(x for x in dirs if x != pipeline.WORK)
        for name in sorted(names):
            if name != "gradebook.db":
                with open(os.path.join(d, name), "rb") as f:
                    found[os.path.relpath(os.path.join(d, name), folder)] = f.read()
    return found


def snapshot(out):
    """Every file grading leaves in ``out``, and the gradebook's rows."""
    return files(out), gradebook_dump("sqlite:///" + os.path.join(out, "gradebook.db"))


def entries(out):
    with open(os.path.join(out, "results", A.id, "results.json"), encoding="utf-8") as f:
        return {s["student"]: json.dumps(s, indent=2) for s in json.load(f)["submissions"]}


@pytest.fixture(scope="module")
def graded(sample_class, tmp_path_factory):
    """The sample class graded once (conftest's, copied with its times); each test works on
    its own copy (``fresh``)."""
    root = tmp_path_factory.mktemp("receipts")
    shutil.copytree(sample_class["submissions"], root / "class", symlinks=True)
    shutil.copytree(sample_class["out"], root / "out", symlinks=True)
    return root


@pytest.fixture
def fresh(graded, tmp_path):
    """A copy of the graded class (submissions and output folder, times kept) to change."""
    shutil.copytree(graded / "class", tmp_path / "class", symlinks=True)
    shutil.copytree(graded / "out", tmp_path / "out", symlinks=True)
    return str(tmp_path / "class"), str(tmp_path / "out")


@pytest.mark.sandbox
def test_every_entry_has_a_receipt_of_every_input(graded):
    with open(graded / "out" / "results.json", encoding="utf-8") as f:
        found = {s["student"]: s["receipt"] for s in json.load(f)["submissions"]}
    assert sorted(found) == CLASS
    for receipt in found.values():
        assert list(receipt) == list(receipts.INPUTS)
        assert all(v.startswith("sha256:") and len(v) == 71 for v in receipt.values())
    # the class's inputs are shared; each submission's own differs
    assert len({json.dumps({k: v for k, v in r.items() if k != "submission"}) for r in found.values()}) == 1
    assert len({r["submission"] for r in found.values()}) == len(CLASS)


def test_floats_are_hashed_to_forty_bits():
    assert receipts.of(np.array([1.0, -0.0])) == receipts.of(np.array([1.0 + 1e-15, 0.0]))
    assert receipts.of(np.array([1.0, 0.0])) != receipts.of(np.array([1.0 + 1e-9, 0.0]))
    assert receipts.of(1.0) == receipts.of(1.0 + 1e-15) != receipts.of(1.0 + 1e-9)
    assert receipts.of({"a": (1, 2.5)}) != receipts.of({"a": [1, 2.5, 0]})
    # a mantissa that rounds up to the next power of two is that power's
    assert receipts.of(np.nextafter(1.0, 0.0)) == receipts.of(1.0) == receipts.of(np.float32(1.0))
    # NaN and the infinities are told apart from each other and from any number
    special = [receipts.of(np.array([v])) for v in (np.nan, np.inf, -np.inf, 0.0, 2.0 ** 1023)]
    assert len(set(special)) == len(special)
    assert receipts.of(np.array([1 + 2j])) != receipts.of(np.array([1 + 3j])) != receipts.of(np.array([1.0, 3.0]))
    # the floats are hashed together at the end, each value still in its place
    assert receipts.of([1.0, 2.0]) != receipts.of([2.0, 1.0])
    assert receipts.of([np.array([1.0, 2.0])]) != receipts.of([np.array([1.0]), np.array([2.0])])
    assert receipts.of({"a": 1.0, "b": 2.0}) != receipts.of({"a": 2.0, "b": 1.0})
    with pytest.raises(TypeError, match="cannot hash a object"):
        receipts.of(object())


@pytest.mark.sandbox
def test_a_rerun_with_nothing_changed_grades_nothing_and_changes_no_byte(fresh):
    subs, out = fresh
    before = snapshot(out)
    run = pipeline.grade_class(A, subs, out, workers=2)
    assert run.graded == [] and run.kept == CLASS and run.changes == []
    assert snapshot(out) == before


@pytest.mark.sandbox
def test_one_new_submission_alone_is_graded(fresh):
    subs, out = fresh
    shutil.copytree(os.path.join(subs, "submitted", "ben", A.id), os.path.join(subs, "submitted", "zoe", A.id))
    before, rows = entries(out), gradebook_dump("sqlite:///" + os.path.join(out, "gradebook.db"))
    folders = {(kind, s): files(os.path.join(out, kind, s)) for kind in ("autograded", "feedback") for s in CLASS[:5]}
    run = pipeline.grade_class(A, subs, out, workers=2)
    assert run.graded == ["zoe"] and run.kept == CLASS
    after = entries(out)
    assert {s: after[s] for s in CLASS} == before
    assert json.loads(after["zoe"])["exercises"] == json.loads(before["ben"])["exercises"]
    assert {(kind, s): files(os.path.join(out, kind, s)) for kind in ("autograded", "feedback") for s in CLASS[:5]} == folders
    now = gradebook_dump("sqlite:///" + os.path.join(out, "gradebook.db"))
    assert [r for r in now if r[0] != "zoe"] == rows and any(r[0] == "zoe" for r in now)


@pytest.mark.slow   # the whole class graded again
@pytest.mark.sandbox
def test_a_changed_hidden_case_lists_exactly_the_students_whose_grades_moved(fresh, monkeypatch):
    subs, out = fresh
    before = {s: json.loads(e) for s, e in entries(out).items()}
    # the fourth hidden shape is dropped: partly right functions now pass another share of cases
    monkeypatch.setattr(A.cases, "HIDDEN_SHAPES", A.cases.HIDDEN_SHAPES[:3] + A.cases.HIDDEN_SHAPES[4:])
    prepared.cache_clear()
    try:
        run = pipeline.grade_class(A, subs, out, workers=2)
    finally:
        prepared.cache_clear()
    after = {s["student"]: s for s in run.results["submissions"]}
    moved = sorted(s for s in CLASS if [(e["score"], e["diagnoses"]) for e in before[s]["exercises"]]
                   != [(e["score"], e["diagnoses"]) for e in after[s]["exercises"]])
    with open(os.path.join(out, "results", A.id, "changes.json"), encoding="utf-8") as f:
        changes = json.load(f)
    assert moved and "ada" not in moved and "finn" not in moved
    assert [c["student"] for c in changes["students"]] == moved
    for c in changes["students"]:
        assert c["inputs_changed"] == ["hidden_cases", "reference"]
        assert c["old_score"] == before[c["student"]]["score"] and c["new_score"] == after[c["student"]]["score"]
        for f in c["functions"]:
            old = next(e for e in before[c["student"]]["exercises"] if e["id"] == f["id"])
            assert (f["old_score"], f["old_codes"]) == (old["score"], old["diagnoses"])
            assert (f["old_score"], f["old_codes"]) != (f["new_score"], f["new_codes"])
    assert "grades changed for" in receipts.summary(run.changes)


@pytest.mark.slow   # the whole class graded again
@pytest.mark.sandbox
def test_verify_passes_on_the_sample_class_and_names_a_hand_edit(fresh):
    subs, out = fresh
    path = os.path.join(out, "results", A.id, "results.json")
    checked, problems = verify.verify(path, subs, workers=2)
    assert checked == CLASS and problems == []
    with open(path, encoding="utf-8") as f:
        results = json.load(f)
    ben = next(s for s in results["submissions"] if s["student"] == "ben")
    ben["exercises"][5]["score"] += 1.0
    with open(path, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    run = subprocess.run([sys.executable, "-m", "assignments", "verify", path, "--submissions", subs, "--student", "ben"],
                         cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 1, run.stderr[-2000:]
    assert f"ben: exercises.{ben['exercises'][5]['id']}.score: recorded" in run.stdout


def test_verify_refuses_what_it_cannot_check(tmp_path):
    with pytest.raises(verify.BadRequest, match="cannot read"):
        verify.load(str(tmp_path / "nope.json"))
    (tmp_path / "bad.json").write_text('{"assignment": "nope", "submissions": []}')
    with pytest.raises(verify.BadRequest, match="not one of this course's"):
        verify.load(str(tmp_path / "bad.json"))
    with pytest.raises(verify.BadRequest, match="no entry for zed"):
        verify.choose({"ada": {}}, students=["zed"])


@pytest.mark.slow   # the whole class graded again
@pytest.mark.sandbox
def test_force_grades_every_submission_again_to_the_same_results(fresh):
    subs, out = fresh
    before = entries(out)
    run = subprocess.run([sys.executable, "-m", "assignments", "grade", "--submissions", subs, "--out", out,
                          "--assignment", A.id, "--force", "--workers", "2"], cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert f"graded {len(CLASS)}, kept 0" in run.stdout
    assert entries(out) == before


@pytest.mark.sandbox
def test_grades_csv_is_what_nbgraders_export_plugin_writes(graded, tmp_path):
    from nbgrader.api import Gradebook
    from nbgrader.plugins.export import CsvExportPlugin

    from assignments.grading.upstream import export
    shutil.copyfile(graded / "out" / "gradebook.db", tmp_path / "gradebook.db")
    url = "sqlite:///" + str(tmp_path / "gradebook.db")
    with Gradebook(url, "rnn-step-by-step") as gb:
        gb.update_or_create_student("dana", last_name="Doe", first_name="Dana", email="dana@example.org")  # no submission
        CsvExportPlugin(to=str(tmp_path / "theirs.csv"), assignment=[A.id]).export(gb)
        export.export(gb, str(tmp_path / "ours.csv"), [A.id])
    for name in ("theirs.csv", "ours.csv"):
        pipeline.sort_rows(str(tmp_path / name))
    theirs = (tmp_path / "theirs.csv").read_bytes()
    assert (tmp_path / "ours.csv").read_bytes() == theirs and b"dana,Doe,Dana" in theirs and theirs.count(b"\n") == 8


def evidence_outputs(own):
    """{path: bytes} of the copying evidence, the clusters, the pairs' pages and the report."""
    names = ["similarity.json", "clusters.json", "report.json", "report.html"]
    found = {n: open(os.path.join(own, n), "rb").read() for n in names}
    return dict(found, **{os.path.join("pairs", k): v for k, v in files(os.path.join(own, "pairs")).items()})


@pytest.mark.sandbox
def test_a_rerun_reads_only_the_new_cells_and_writes_the_evidence_of_a_run_from_scratch(fresh, monkeypatch):
    from assignments.grading.reports import report, similarity
    from assignments.grading.run import evidence
    subs, out = fresh
    own = os.path.join(out, "results", A.id)
    source = os.path.join(subs, "submitted", "ben", A.id, A.notebook + ".ipynb")
    nb = json.load(open(source, encoding="utf-8"))
    for cell in nb["cells"]:   # ben's answers, each with a comment of zoe's own: a new pair, rarer items for ben
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            cell["source"] = "".join(cell["source"]) + "\n# zoe was here, with a rare note\n"
    os.makedirs(os.path.join(subs, "submitted", "zoe", A.id))
    with open(os.path.join(subs, "submitted", "zoe", A.id, A.notebook + ".ipynb"), "w", encoding="utf-8") as f:
        json.dump(nb, f)
    read, document = [], similarity.document
    monkeypatch.setattr(similarity, "document", lambda src, *a: read.append(src) or document(src, *a))
    counted, rarity = [], similarity._rarity
    monkeypatch.setattr(similarity, "_rarity", lambda *a: counted.append(threading.current_thread().name) or rarity(*a))
    before = json.load(open(os.path.join(own, "similarity.json"), encoding="utf-8"))
    run = pipeline.grade_class(A, subs, out, workers=2)
    assert run.graded == ["zoe"]
    # zoe graded in this process: the rare items were counted while her kernel ran (evidence.foresee),
    # once, from her staged answers, and taken after grading as they were
    assert counted == ["foresee_0"]
    incremental = evidence_outputs(own)
    after = json.loads(incremental["similarity.json"])
    assert ["ben", "zoe"] in [[p["a"], p["b"]] for p in after["pairs"]] and after != before
    code = evidence.class_code(A, pipeline.run_config(out, None, True, None, 2, None), CLASS + ["zoe"])
    others = {src for s, cells in code.items() if s != "zoe" for src in cells.values()}
    assert read and sorted(read) == sorted({src for src in code["zoe"].values() if src.strip() and src not in others})
    # from scratch, into another folder: the same results, no cache
    scratch = os.path.join(out, "scratch")
    os.makedirs(scratch)
    results = json.load(open(os.path.join(own, "results.json"), encoding="utf-8"))
    release_nb = nbformat.read(os.path.join(out, pipeline.WORK, "release", A.id, A.notebook + ".ipynb"), as_version=4)
    config = pipeline.run_config(out, None, True, None, 2, None)
    found = evidence.write(A, results, scratch, config, release_nb, None, evidence.Cache(None, ""), jobs=1)
    report.write(results, scratch, report.catalog_messages(A), report.load_timings(os.path.join(own, "timings.csv")), *found)
    assert evidence_outputs(scratch) == incremental and counted == ["foresee_0", "MainThread"]
    # a foreseen answer from other code (zoe's comment is not in it) is not taken
    code = evidence.class_code(A, config, CLASS + ["zoe"])
    release = evidence.release_code(A, release_nb)
    stale = similarity.rare_items({**code, "zoe": code["ben"]}, release, evidence.reference_code(A))
    assert similarity.rare_items(code, release, evidence.reference_code(A), foreseen=stale)[0] != stale[0]
    assert similarity.rare_items(code, release, evidence.reference_code(A), foreseen=stale)[-2:] != stale[-2:]


def test_a_remembered_submission_digest_is_trusted_only_while_nothing_in_its_folder_changed(tmp_path, monkeypatch):
    folder = tmp_path / "ada"
    folder.mkdir()
    (folder / "a.ipynb").write_text('{"cells": []}')
    (folder / "timestamp.txt").write_text("2026-01-01")
    path = str(tmp_path / "cache" / "submissions.json")
    fresh = receipts.DigestMemo(path)
    fresh.digest(str(folder), 100)
    fresh.save()
    assert not os.path.exists(path)   # just written: not settled, not remembered
    monkeypatch.setattr(receipts.DigestMemo, "RACY", 0.0)
    first = receipts.DigestMemo(path)
    assert first.digest(str(folder), 100) == receipts.submission_digest(str(folder), 100)
    first.save()
    hashed = []
    real = receipts.submission_digest
    monkeypatch.setattr(receipts, "submission_digest", lambda *a: hashed.append(a) or real(*a))
    again = receipts.DigestMemo(path)
    before = again.digest(str(folder), 100)
    assert before == real(str(folder), 100) and hashed == []
    # the same size and modification time, other bytes: its change time tells
    st = os.stat(folder / "a.ipynb")
    (folder / "a.ipynb").write_text('{"cells": [1]}'[:st.st_size])
    os.utime(folder / "a.ipynb", ns=(st.st_atime_ns, st.st_mtime_ns))
    later = receipts.DigestMemo(path)
    assert later.digest(str(folder), 100) == real(str(folder), 100) != before and len(hashed) == 1
    (folder / "extra.txt").write_text("x")   # an entry added
    assert receipts.DigestMemo(path).digest(str(folder), 100) == real(str(folder), 100) and len(hashed) == 2



def test_a_rerun_takes_the_clusters_drafts_from_the_cache(graded, tmp_path, monkeypatch):
    """The evidence cache remembers clusters.drafts' answers: clusters with the cache file of
    an earlier run search no draft again and give the same groups (the sample class, each
    learner twice, so that its wrong behaviours are shared: candidate groups)."""
    from assignments.grading.judging import clusters
    from assignments.grading.run import evidence
    results = json.load(open(os.path.join(str(graded / "out"), "results", A.id, "results.json"), encoding="utf-8"))
    results["submissions"] += [dict(s, student=s["student"] + "2") for s in results["submissions"]]
    searched, search = [], clusters.drafts
    monkeypatch.setattr(clusters, "drafts", lambda *a, **k: searched.append(a[1]) or search(*a, **k))
    path = str(tmp_path / "evidence.json")
    found = []
    for _ in range(2):
        cache = evidence.Cache(path, "key")
        found.append(clusters.clusters(results, None, A, drafter=cache.drafts))
        cache.save([])
    # the first run searched each candidate group's function once, the second none
    assert searched and sorted(searched) == sorted({g["function"] for g in found[0]["groups"] if g["candidate"]})
    assert found[1] == found[0]
    assert json.load(open(path, encoding="utf-8"))["drafts"]


def test_code_read_ahead_is_taken_only_while_its_notebook_is_unchanged(fresh):
    """Cache.read_ahead reads the kept students' code while the zygote boots; class_code then
    takes it, unless the notebook changed in between: then it reads the notebook again."""
    from assignments.grading.run import evidence, folders
    subs, out = fresh
    config = pipeline.run_config(out, None, True, None, 2, None)
    plain = evidence.class_code(A, config, CLASS)
    cache = evidence.Cache(None, "")
    cache.read_ahead(A, config, CLASS)
    assert len(cache.ahead) == len(plain) > 2
    assert evidence.class_code(A, config, CLASS, cache) == plain
    path = os.path.join(folders.folder(config, "autograded", "ben", A.id), A.notebook + ".ipynb")
    nb = nbformat.read(path, as_version=4)
    answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
    answer.source += "\n# changed after it was read ahead\n"
    nbformat.write(nb, path)
    again = evidence.class_code(A, config, CLASS, cache)
    assert again["ben"] != plain["ben"] and "# changed after it was read ahead" in "".join(again["ben"].values())
    assert {s: c for s, c in again.items() if s != "ben"} == {s: c for s, c in plain.items() if s != "ben"}


def test_a_graded_notebooks_code_is_taken_as_it_is_stored_not_read_again(fresh, monkeypatch):
    """The grading process takes each notebook's answers as it stores it (Cache.take): after
    grading, the evidence reads none of the notebooks it graded, and writes the same files."""
    from assignments.grading.run import evidence
    subs, out = fresh
    own = os.path.join(out, "results", A.id)
    before = {k: v for k, v in evidence_outputs(own).items() if not k.startswith("report")}   # the report shows timings
    read, stock = [], evidence.read_code
    monkeypatch.setattr(evidence, "read_code", lambda path, *a, **k: read.append(path) or stock(path, *a, **k))
    run = pipeline.grade_class(A, subs, out, workers=2, force=True)
    assert sorted(run.graded) == sorted(CLASS) and read == []
    assert {k: v for k, v in evidence_outputs(own).items() if not k.startswith("report")} == before


def test_a_rerun_reads_no_autograded_notebook_whose_stat_held(fresh, monkeypatch, tmp_path):
    """The evidence cache remembers each autograded notebook's digest by its stat: the next
    run hashes none of them but one whose stat moved (rewritten, or only touched)."""
    from assignments.grading.run import evidence, folders
    subs, out = fresh
    config = pipeline.run_config(out, None, True, None, 2, None)
    monkeypatch.setattr(evidence.Cache, "RACY", 0.0)   # the fixture's files were written a moment ago
    path = str(tmp_path / "evidence.json")
    first = evidence.Cache(path, "k")
    plain = evidence.class_code(A, config, CLASS, first)
    first.save([src for code in plain.values() for src in code.values()])
    hashed = []
    sha256 = evidence.hashlib.sha256
    monkeypatch.setattr(evidence.hashlib, "sha256", lambda data=b"": hashed.append(len(data)) or sha256(data))
    again = evidence.Cache(path, "k")
    assert evidence.class_code(A, config, CLASS, again) == plain and hashed == []
    ben = os.path.join(folders.folder(config, "autograded", "ben", A.id), A.notebook + ".ipynb")
    os.utime(ben, ns=(os.stat(ben).st_atime_ns, os.stat(ben).st_mtime_ns + 1))
    third = evidence.Cache(path, "k")
    assert evidence.class_code(A, config, CLASS, third) == plain and len(hashed) == 1
    monkeypatch.setattr(evidence.Cache, "RACY", 3600.0)   # just written: not trusted by its stat
    fourth = evidence.Cache(None, "")
    evidence.class_code(A, config, CLASS, fourth)
    assert fourth.used_stats == {}

