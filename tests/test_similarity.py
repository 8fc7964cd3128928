"""Copying evidence (assignments/grading/reports/similarity.py), measured on the corpus in
tests/fixtures/similarity/ with copies planted at four levels (tests/similarity_corpus.py)."""
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys

import pytest
import similarity_corpus as corpus
from helpers import REPO

from assignments.grading.reports import similarity as S

ASSIGNMENT = "rnn_step_by_step"


@pytest.fixture(scope="module")
def base():
    release = corpus.release_code()
    return {"release": release, "reference": corpus.reference_code(),
            "independent": {k: corpus.with_docstrings(v, release) for k, v in corpus.independent().items()},
            "known": {k: corpus.with_docstrings(v, release) for k, v in corpus.known().items()}}


@pytest.fixture(scope="module")
def catalogued():
    return corpus.catalogued_signatures()


def compare(base, submissions, **kw):
    kw.setdefault("known", base["known"])
    return S.compare(ASSIGNMENT, submissions, base["release"], base["reference"], **kw)


def pair(report, a, b):
    found = [p for p in report["pairs"] if {p["a"], p["b"]} == {a, b}]
    return found[0] if found else None


@pytest.mark.parametrize("level", corpus.LEVELS)
def test_a_planted_copy_is_flagged_against_its_original(base, level):
    rng = random.Random(level)
    subs = dict(base["independent"])
    for name in ("kofi", "quinn", "lena"):
        subs["copy_of_" + name] = corpus.with_docstrings(corpus.plant(corpus.independent()[name], level, rng), base["release"])
    report = compare(base, subs)
    for name in ("kofi", "quinn", "lena"):
        found = pair(report, name, "copy_of_" + name)
        assert found and found["flagged"], (level, name, found)
        assert len(found["functions"]) >= 6
        assert any(e["kind"] == S.CODE for e in found["evidence"])


def test_each_level_changes_what_it_says_and_nothing_else():
    original = corpus.independent()["tara"]
    rng = random.Random(0)
    copies = {level: corpus.plant(original, level, rng) for level in corpus.LEVELS}
    assert copies["verbatim"] == original
    for fn in corpus.FUNCTIONS:
        items = S.text_items(original[fn])
        for level in ("comments", "reformatted"):
            assert S.normalised_code(copies[level][fn]) == S.normalised_code(original[fn]), (level, fn)
        assert S.text_items(copies["comments"][fn])[S.LINES] == items[S.LINES]
        assert S.text_items(copies["reformatted"][fn])[S.COMMENTS] == items[S.COMMENTS]
        assert not S.text_items(copies["renamed"][fn])[S.COMMENTS]
    assert any(S.text_items(copies["comments"][fn])[S.COMMENTS] != S.text_items(original[fn])[S.COMMENTS] for fn in original)
    assert any(S.text_items(copies["reformatted"][fn])[S.LINES] != S.text_items(original[fn])[S.LINES] for fn in original)
    renamed = set().union(*(S.text_items(c)[S.NAMES] for c in copies["renamed"].values()))
    assert len(renamed - set().union(*(S.text_items(c)[S.NAMES] for c in original.values()))) >= 5
    # the same behaviour: tara's wrong rnn_backward stays wrong in the same way
    assert corpus.signatures(copies["renamed"]) == corpus.signatures(original) != {}


def test_a_copy_of_a_known_solution_is_reported_against_the_file(base):
    subs = dict(base["independent"])
    subs["zed"] = corpus.with_docstrings(corpus.plant(corpus.known()["forum_vectorised"], "comments", random.Random(1)),
                                         base["release"])
    report = compare(base, subs)
    found = pair(report, "zed", "known:forum_vectorised")
    assert found and found["flagged"] and found["a"] == "zed" and found["b"] == "known:forum_vectorised"
    assert not any(p["a"].startswith("known:") for p in report["pairs"])


def test_the_release_and_the_reference_never_count_as_evidence(base):
    reference = S.split_functions(base["reference"]["reference"], corpus.FUNCTIONS)
    as_reference = corpus.with_docstrings(reference, base["release"])
    subs = dict(base["independent"], ref_one=as_reference, ref_two=dict(as_reference),
                stub_one=dict(base["release"]), stub_two=dict(base["release"]))
    report = compare(base, subs)
    assert pair(report, "ref_one", "ref_two") is None
    assert pair(report, "stub_one", "stub_two") is None
    assert not any({"stub_one", "stub_two"} & {p["a"], p["b"]} for p in report["pairs"])
    for fn in corpus.FUNCTIONS:
        doc = S.document(as_reference[fn], S.Settings(), S._boilerplate(list(base["release"].values())
                                                                          + [base["reference"]["reference"]], S.Settings()))
        assert all(not items for items in doc.values()), fn
    # the same two submissions without the reference removed would be paired
    bare = S.compare(ASSIGNMENT, subs, {fn: "" for fn in corpus.FUNCTIONS}, {})
    assert pair(bare, "ref_one", "ref_two")["flagged"]


def test_two_independent_correct_solutions_are_not_flagged(base):
    report = compare(base, base["independent"])
    for a, b in (("kofi", "quinn"), ("bilal", "emre"), ("ines", "lena"), ("chen", "xavier")):
        found = pair(report, a, b)
        assert found is None or not found["flagged"], found


def test_identical_rare_wrong_behaviour_counts_and_catalogued_does_not(base, catalogued):
    subs = {k: base["independent"][k] for k in ("kofi", "quinn", "ines", "lena", "bilal", "chen")}
    wrong = corpus.signatures(corpus.independent()["hana"])["rnn_cell_backward"]  # dba lost its column shape
    assert wrong not in catalogued
    listed = next(iter(catalogued))
    sigs = {"kofi": {"rnn_cell_backward": wrong, "lstm_backward": listed},
            "quinn": {"rnn_cell_backward": wrong, "lstm_backward": listed}}
    report = compare(base, subs, signatures=sigs, catalogued=catalogued, known={})
    found = pair(report, "kofi", "quinn")
    kinds = {e["kind"]: e for e in found["evidence"]}
    assert kinds[S.BEHAVIOUR]["functions"] == ["rnn_cell_backward"]
    assert "no catalogued mistake explains it" in kinds[S.BEHAVIOUR]["detail"]
    # a third learner with the same behaviour: no longer rare
    sigs["ines"] = {"rnn_cell_backward": wrong}
    report = compare(base, subs, signatures=sigs, catalogued=catalogued, known={})
    assert all(e["kind"] != S.BEHAVIOUR for p in report["pairs"] for e in p["evidence"])


def test_similarity_json_has_the_contract_shape(base, catalogued):
    subs = dict(base["independent"], copy=dict(base["independent"]["kofi"]))
    sigs = {name: corpus.signatures(corpus.independent()[name]) for name in ("hana", "elif", "farah")}
    report = compare(base, subs, signatures=sigs, catalogued=catalogued)
    assert json.loads(json.dumps(report)) == report
    assert report["assignment"] == ASSIGNMENT and isinstance(report["pairs"], list) and report["pairs"]
    scores = [p["score"] for p in report["pairs"]]
    assert scores == sorted(scores, reverse=True)
    for p in report["pairs"]:
        assert set(p) == {"a", "b", "score", "flagged", "functions", "evidence"}
        assert 0 <= p["score"] <= 1 and p["flagged"] == (p["score"] >= report["flag_at"])
        assert p["a"] != p["b"] and not p["a"].startswith("known:")
        assert set(p["functions"]) <= set(corpus.FUNCTIONS)
        for e in p["evidence"]:
            assert {"kind", "detail"} <= set(e) and e["kind"] in (*S.TEXT_KINDS, S.BEHAVIOUR)
            assert "plagiari" not in e["detail"].lower() and "cheat" not in e["detail"].lower()
    top = pair(report, "copy", "kofi")
    assert top == report["pairs"][0] and top["score"] > 0.9
    assert any(re.search(r"in [678] of 8 functions", e["detail"]) for e in top["evidence"])
    assert compare(base, subs, signatures=sigs, catalogued=catalogued) == report


def test_the_evidence_is_said_in_the_instructors_language(base, catalogued):
    """similarity.json keeps its words in English; the report says each item again, from the
    counts the item keeps, in the instructor's language: in Chinese every sentence is
    translated, with its numbers and functions, and the same items give the English back."""
    from assignments.grading.contract import messages
    from assignments.grading.reports import report as R
    subs = dict(base["independent"], copy=dict(base["independent"]["kofi"]))
    wrong = corpus.signatures(corpus.independent()["hana"])["rnn_cell_backward"]
    sigs = {"kofi": {"rnn_cell_backward": wrong}, "quinn": {"rnn_cell_backward": wrong}}
    found = compare(base, subs, signatures=sigs, catalogued=catalogued)
    items = [e for p in found["pairs"] for e in p["evidence"]]
    assert {e["kind"] for e in items} >= {S.CODE, S.COMMENTS, S.BEHAVIOUR}
    zh = messages.speaker("zh-CN")
    for e in items:
        assert S.words(e) == e["detail"]
        said = S.words(e, zh)
        assert said != e["detail"] and re.search(r"[\u4e00-\u9fff]", said) and "{" not in said
        if e["kind"] == S.BEHAVIOUR:
            assert all(f in said for f in e["functions"])
        else:
            assert f"{len(e['functions'])} 个" in said if e["functions"] else "零散" in said
            assert str(e["items"]) in said or e["kind"] == S.NAMES
    sim = R._similarity(dict(found, pairs=[dict(p, flagged=True) for p in found["pairs"]]))
    page = R._similarity_words(sim, zh)
    assert page["note"] == zh(S.NOTE) != S.NOTE
    shown = found["pairs"][:len(page["flagged"])]
    assert [e["detail"] for p in page["flagged"] for e in p["evidence"]] == [
        S.words(e, zh) for p in shown for e in p["evidence"]]
    assert R._similarity_words(sim, R.english) is sim


def test_fingerprints_do_not_depend_on_the_process(base):
    source = base["independent"]["kofi"]["lstm_cell_backward"]
    here = sorted(S.fingerprints(source, S.Settings()))
    code = ("import json, sys; from assignments.grading.reports import similarity as S; "
            "print(json.dumps(sorted(S.fingerprints(sys.stdin.read(), S.Settings()))))")
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], input=source, capture_output=True, text=True, check=True,
                             env=dict(os.environ, PYTHONHASHSEED=seed), cwd=corpus.REPO)
        assert json.loads(out.stdout) == here


def test_normal_form_and_winnowing_are_copydetects(base):
    """The own tokenising loop and the vectorised winnowing give what copydetect's
    filter_code and winnow give, on every cell of the corpus and on odd text; winnowing
    also on hashes made to tie as floats (where copydetect's own is used)."""
    import numpy as np
    from copydetect import utils as copydetect_utils
    cells = [src for owner in ("independent", "known") for subs in base[owner].values() for src in subs.values()]
    cells += list(base["release"].values()) + list(base["reference"].values())
    cells += ["x = 'a' \"b\" '''c'''\nclass A(B):\n  @dec\n  def f(self): return u'x' + r\"y\"\n#!x\n", "", "\n\n",
              "a@b\r\nc\t= 1  # note", "def f(:\n  '''open", "x = 1\n#!not a hashbang\n", "def\nf(x)\n",
              "from \\\n a import b\n", "s = 'open\nt = \"q\" % (a)\n", "import\n  os\nclass (\nx`y`\n", "\fdef f():\n\treturn 1"]
    for source in list(cells):   # each line alone too, and the lines in another order
        cells += source.splitlines()[1:] + ["\n".join(source.splitlines()[::-1])]
    for source in cells:
        text = S._DOCSTRING.sub(r"\1", source).replace("@", " @ ")
        assert S.normalised_code(source) == copydetect_utils.filter_code(text, "cell.py", language="python2")[0]
        hashes = S._kgram_hashes(S.normalised_code(source), 20)
        for window in (1, 2, 6) if len(hashes) else ():
            assert S.winnowed(hashes, window) == frozenset(int(h) for h in copydetect_utils.winnow(hashes, window)[0])
    rng = np.random.default_rng(0)
    for _ in range(200):
        hashes = rng.integers(0, 30, size=rng.integers(1, 40)).astype(np.uint64) << np.uint64(56)
        hashes[::3] += np.uint64(1)   # differ as integers, equal as floats
        for window in (2, 6):
            assert S.winnowed(hashes, window) == frozenset(int(h) for h in copydetect_utils.winnow(hashes, window)[0])


def test_split_functions_keeps_helpers_with_the_function_after_them():
    source = ("import numpy as np\n\n\ndef helper(x):\n    return x\n\n\n# about f\ndef f(a):\n    return helper(a)\n\n\n"
              "def g(b):\n    # inside\n    return b\n\nprint('test code')\n")
    cells = S.split_functions(source, ["f", "g"])
    assert list(cells) == ["f", "g"]
    assert cells["f"].startswith("def helper") and "# about f" in cells["f"] and "import" not in cells["f"]
    assert "# inside" in cells["g"] and "print" not in cells["g"]
    assert S.split_functions("def f(:\n  x\ndef g():\n  y\n", ["f", "g"]) == {"f": "def f(:\n  x\n", "g": "def g():\n  y\n"}


@pytest.mark.slow
def test_measured_rates_on_the_corpus(base, catalogued, capsys):
    """How many planted pairs are flagged at each level and how many independent pairs are:
    the numbers docs/report.md's thresholds come from."""
    originals = sorted(corpus.independent())
    cache = {}
    planted, independent = {}, {}
    for subs, copies in corpus.planted_classes():
        cells = {s: corpus.with_docstrings(c, base["release"]) for s, c in subs.items()}
        sigs = {}
        for s, c in subs.items():
            key = tuple(sorted(c.items()))
            sigs[s] = cache[key] = cache[key] if key in cache else corpus.signatures(c)
        report = compare(base, cells, signatures=sigs, catalogued=catalogued)
        for level, copy, source in copies:
            found = pair(report, copy, source)
            planted.setdefault((level, source.startswith("known:")), []).append(bool(found and found["flagged"]))
        for a, b in itertools.combinations(originals, 2):
            found = pair(report, a, b)
            independent[(a, b)] = independent.get((a, b), False) or bool(found and found["flagged"])
    flagged = sum(independent.values())
    with capsys.disabled():   # in make test's output
        for level in corpus.LEVELS:
            own, web = planted[(level, False)], planted[(level, True)]
            print(f"\n[measure] planted copies flagged, {level}: {sum(own)}/{len(own)} of learners' solutions, "
                  f"{sum(web)}/{len(web)} of known solutions", end="")
        print(f"\n[measure] independent pairs flagged: {flagged}/{len(independent)} "
              f"({100 * flagged / len(independent):.1f}%), flag_at {S.Settings().flag_at}")
    rate = {level: sum(planted[(level, False)] + planted[(level, True)]) / len(planted[(level, False)] + planted[(level, True)])
            for level in corpus.LEVELS}
    assert rate["verbatim"] >= 0.9 and rate["comments"] >= 0.9 and rate["renamed"] >= 0.5, rate
    assert flagged <= 0.02 * len(independent)


def test_what_more_submissions_share_weighs_less(base):
    """Rarity: the same shared text counts less the more submissions hold it, and nothing once
    it is the class's common stock."""
    kofi = base["independent"]["kofi"]
    scores = []
    for holders in (2, 4, S.Settings().common + 1):
        subs = dict(base["independent"], **{f"kofi{i}": dict(kofi) for i in range(1, holders)})
        found = pair(compare(base, subs), "kofi", "kofi1")
        scores.append(found["score"] if found else 0.0)
    assert scores[0] > 0.9 and scores[0] > scores[1] > scores[2] == 0.0, scores
    assert S.rarity_weight(2, 2.0) == 1.0 and S.rarity_weight(5, 2.0) == 1 / 16


# --- in `grade`: similarity.json, clusters.json, the report's sections and the pairs' pages ---

@pytest.fixture(scope="module")
def graded_with_known(sample_class, tmp_path_factory):
    """The sample class graded again by the command line, with a folder of known solutions
    holding Ada's answers (every sample student's code starts from them)."""
    known = tmp_path_factory.mktemp("known")
    shutil.copy(os.path.join(REPO, "samples", "answers", ASSIGNMENT, "ada.py"), known / "ada_public.py")
    out = tmp_path_factory.mktemp("graded_known")
    cmd = [sys.executable, "-m", "assignments", "grade", "--submissions", sample_class["submissions"],
           "--out", str(out), "--quiet", "--known-solutions", str(known)]
    run = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    own = out / "results" / ASSIGNMENT
    read = lambda name: json.loads((own / name).read_text(encoding="utf-8"))
    return {"out": out, "own": own, "results": read("results.json"), "similarity": read("similarity.json"),
            "clusters": read("clusters.json"), "report": read("report.json")}


def test_evidence_never_changes_a_grade(sample_class, graded_with_known):
    """The same class graded with and without known solutions, and with its copies flagged:
    results.json is the same file."""
    assert graded_with_known["similarity"]["pairs"] and any(p["flagged"] for p in graded_with_known["similarity"]["pairs"])
    assert graded_with_known["results"] == sample_class["results"]


def test_grade_writes_similarity_json_with_known_solutions(graded_with_known):
    data = graded_with_known["similarity"]
    assert data["assignment"] == ASSIGNMENT
    scores = [p["score"] for p in data["pairs"]]
    assert scores == sorted(scores, reverse=True)
    known = [p for p in data["pairs"] if p["b"] == "known:ada_public.py"]
    assert any(p["a"] == "ada" and p["flagged"] for p in known), known
    for p in data["pairs"]:
        assert p["flagged"] == bool(p["page"]) and 0 <= p["score"] <= 1
        assert all(e["kind"] in S.TEXT_KINDS + (S.BEHAVIOUR,) and e["detail"] for e in p["evidence"])
    text = json.dumps(data).lower()
    assert "plagiar" not in text and "cheat" not in text
    report = graded_with_known["report"]
    assert report["similarity"]["reported"] == len(data["pairs"]) and report["clusters"] is not None


@pytest.mark.browser
def test_pair_page_and_report_sections_render_offline_in_chromium(graded_with_known, tmp_path):
    from helpers import chromium
    pair = next(p for p in graded_with_known["similarity"]["pairs"] if p["b"].startswith(S.KNOWN) and p["flagged"])
    page = graded_with_known["own"] / pair["page"]
    assert (graded_with_known["out"] / pair["page"]).read_bytes() == page.read_bytes(), "beside --out's report.html too"
    html = page.read_text(encoding="utf-8")
    assert not re.search(r"(src|href)=\"?(https?:)?//", html) and "<script" not in html and "@import" not in html
    assert "plagiar" not in html.lower() and "never a grade change" in html
    dom = chromium(tmp_path, "--dump-dom", "file://" + str(page))
    assert dom.count('class="same"') >= 10 and 'class="evidence"' in dom
    assert all(f'id="fn-{f}"' in dom for f in pair["functions"])
    shot = tmp_path / "pair.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1300,1600", "file://" + str(page))
    from helpers import screenshot_ink
    ink, colours = screenshot_ink(shot)
    print(f"\n[measure] pair page screenshot: {100 * ink:.1f}% of pixels inked, {colours} colours")
    assert ink > 0.03
    report = chromium(tmp_path, "--dump-dom", "file://" + str(graded_with_known["own"] / "report.html"))
    assert 'id="similarity"' in report and 'id="clusters"' in report and pair["page"] in report
