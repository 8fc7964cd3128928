"""The class report (assignments/grading/reports/report.py): on the sample class graded for real, on
a synthetic class of 10,000, from the command line, and drawn by headless Chromium."""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

import pytest
from helpers import CJK_FONT_MISSING, REPO, chromium, cjk_fonts, glyphs_differ_from_boxes, screenshot_ink

from assignments.grading.reports import report


def mistake_counts(results):
    """(function, code) -> submissions naming it, counted straight from results.json."""
    counts = {}
    for s in results["submissions"]:
        for e in s["exercises"]:
            for code in e["diagnoses"]:
                counts[e["id"], code] = counts.get((e["id"], code), 0) + 1
    return counts


def page_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def visible_text(html):
    """The page's words without tags or inline SVG (what a reader sees as text)."""
    html = re.sub(r"<svg.*?</svg>", " ", html, flags=re.S)
    html = re.sub(r"<style.*?</style>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_grade_writes_the_report_beside_results(sample_class, assignment):
    out = sample_class["out"]
    results = sample_class["results"]
    with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
        data = json.load(f)
    html = page_text(os.path.join(out, "report.html"))
    assert data["submissions"] == len(results["submissions"]) == 6
    # every function, with the pass rate and mean score results.json gives
    assert [f["id"] for f in data["functions"]] == [ex.name for ex in assignment.exercises]
    for f in data["functions"]:
        got = [e for s in results["submissions"] for e in s["exercises"] if e["id"] == f["id"]]
        assert f["passed"] == sum(e["passed"] for e in got)
        assert f["pass_rate"] == round(f["passed"] / 6, 6)
        assert f["mean_score"] == round(sum(e["score"] for e in got) / 6, 6)
        assert f'id="fn-{f["id"]}"' in html and f"{f['passed']} / 6" in html
    # every named mistake, with its count, its catalog words and who made it
    counts = mistake_counts(results)
    assert len(counts) == 4, counts   # the sample class names four (tests/test_grading.py)
    assert {(m["function"], m["code"]): m["count"] for m in data["mistakes"]} == counts
    for m in data["mistakes"]:
        words = re.escape(assignment.mistakes.by_code[m["code"]].feedback)   # {outputs}: the values it names
        assert re.fullmatch(words.replace(re.escape("{outputs}"), r"\w+(, \w+)*"), m["message"]), m["message"]
        row = re.search(rf'<tr id="mistake-{m["function"]}-{m["code"]}">(.*?)</tr>', html, re.S).group(1)
        assert f'<td class="num">{m["count"]}</td>' in row and m["students"][0] in row
    assert data["mistakes"][0]["students"] in (["ben"], ["chloe"], ["eve"])
    # Finn's text file is flagged as unreadable, and timings.csv was read
    assert [r["student"] for r in data["flagged"]["unreadable"]] == ["finn"]
    assert data["timing"]["count"] == 5 and data["timing"]["max"] > 0
    # at least two charts, inline; nothing loaded from anywhere
    assert html.count("<svg ") >= 4 and "<img" not in html and "<script" not in html and "<link" not in html
    assert not re.search(r'(src|href)="(https?:)?//', html) and "@import" not in html and "url(http" not in html
    assert "@media print" in html


def test_report_command_regenerates_the_same_files(sample_class, tmp_path):
    """From results.json (and the timings.csv, clusters.json and similarity.json beside it)
    alone, the same bytes as grade wrote: the report is deterministic, charts included."""
    for name in ("results.json", "timings.csv", "clusters.json", "similarity.json"):
        shutil.copy(os.path.join(sample_class["out"], name), tmp_path / name)
    run = subprocess.run([sys.executable, "-m", "assignments", "report", str(tmp_path / "results.json"),
                          "--out", str(tmp_path / "again")], cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    for name in ("report.json", "report.html"):
        assert page_text(tmp_path / "again" / name) == page_text(os.path.join(sample_class["out"], name)), name


def test_report_command_refuses_bad_input_clearly(tmp_path, capsys):
    """`python -m assignments report` on a file that is not a class's results: exit status 2,
    a sentence naming what is wrong, no page. The command's own entry point, in this process
    (a new process each time cost a second of imports apiece; test_course runs the command line)."""
    import assignments.__main__ as cli
    bad = tmp_path / "results.json"
    for content, says in (("{not json", "is not JSON"), ('{"assignment": "a"}', "needs assignment, max_score"),
                          ('{"assignment": "a", "max_score": 1, "submissions": [{"student": "x"}]}', "submission 0")):
        bad.write_text(content)
        assert cli.main(["report", str(bad)]) == 2
        assert says in capsys.readouterr().err
        assert not (tmp_path / "report.html").exists()
    assert cli.main(["report", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def synthetic_class(n, seed=13):
    """n results shaped like the sample class's, with mistakes, faults, tampering and
    attempts spread at random (seeded), and their timings."""
    rng = random.Random(seed)
    functions = [("rnn_cell_forward", 10.0), ("rnn_forward", 10.0), ("lstm_cell_forward", 15.0), ("lstm_forward", 10.0),
                 ("rnn_cell_backward", 10.0), ("rnn_backward", 15.0), ("lstm_cell_backward", 15.0), ("lstm_backward", 15.0)]
    codes = {f: [f"{f}_mistake_{k}" for k in range(6)] for f, _ in functions}
    subs, timings = [], []
    for i in range(n):
        student = f"learner{i:05d}"
        status = "unreadable" if rng.random() < 0.01 else "graded"
        flags = []
        if status == "graded":
            r = rng.random()
            if r < 0.02:
                flags, status = ["timeout:rnn_forward"], "incomplete"
            elif r < 0.03:
                flags = ["tampered:edited:test_rnn_forward"]
            elif r < 0.035:
                flags = ["attempt:network"]
        exercises = []
        for f, points in functions:
            ok = status != "unreadable" and rng.random() < 0.75
            named = [] if ok or status == "unreadable" or rng.random() < 0.4 else [rng.choice(codes[f][:rng.randint(1, 6)])]
            score = points if ok else (0.0 if status == "unreadable" else round(rng.random() * points, 2))
            exercises.append({"id": f, "score": score, "max_score": points, "passed": ok, "diagnoses": named,
                              "feedback": "..."})
        subs.append({"student": student, "status": status, "message": "not a notebook" if status == "unreadable" else "",
                     "score": round(sum(e["score"] for e in exercises), 2), "flags": flags, "exercises": exercises})
        if status != "unreadable":
            timings.append({"student": student, "seconds": round(rng.uniform(1.0, 9.0), 3), "cpu_seconds": 1.5,
                            "worker": f"node{i % 64}"})
    messages = {c: f"what students are told about {c}" for cs in codes.values() for c in cs}
    return {"assignment": "synthetic", "max_score": 100.0, "submissions": subs}, messages, timings


def test_a_mooc_of_ten_thousand(tmp_path):
    results, messages, timings = synthetic_class(10_000)
    started = time.perf_counter()
    html_path = report.write(results, str(tmp_path), messages, timings)[1]
    seconds = time.perf_counter() - started
    print(f"\n[measure] class report for 10,000 submissions: {seconds:.2f} s "
          f"(report.html {os.path.getsize(html_path) / 1e3:.0f} kB)")
    with open(tmp_path / "report.json", encoding="utf-8") as f:
        data = json.load(f)
    html = page_text(html_path)
    counts = mistake_counts(results)
    assert {(m["function"], m["code"]): m["count"] for m in data["mistakes"]} == counts
    assert len(data["mistakes"]) == 48 and all(len(m["students"]) == m["count"] for m in data["mistakes"])
    # lists are cut and counted: a mistake made by hundreds shows SHOWN names and "and N more"
    top = data["mistakes"][0]
    assert top["count"] > 100
    row = re.search(rf'<tr id="mistake-{top["function"]}-{top["code"]}">(.*?)</tr>', html, re.S).group(1)
    assert row.count("learner") == report.SHOWN and f"and {top['count'] - report.SHOWN} more" in row
    faults = data["flagged"]["faults"]
    assert len(faults) == sum(s["status"] == "incomplete" for s in results["submissions"]) > report.ROWS
    assert f"and {len(faults) - report.ROWS} more" in html
    assert {"unreadable", "faults", "tampering", "attempts"} <= set(data["flagged"])
    # the page stays small: no per-student mark anywhere (the charts are four, whatever n)
    assert html.count("<svg ") == 4 and len(html) < 1_500_000
    assert len(re.findall(r"learner\d{5}", html)) < 1500
    assert data["timing"]["count"] == len(timings)


def test_flags_are_grouped_as_documented():
    assert [report.flag_group(f) for f in ("timeout:cell 3", "memory:lstm_forward", "dead_kernel:cell 12",
                                           "output_flood:cell 3", "exit:cell 4", "notebook_timeout:cell 9",
                                           "no_result:rnn_forward", "no_judge:test_x")] == ["faults"] * 8
    assert report.flag_group("tampered:deleted:test_rnn_forward") == "tampering"
    assert report.flag_group("attempt:grader_machinery") == "attempts"
    assert report.flag_group("unsandboxed") is None and report.flag_group("something_new:x") == "other"


@pytest.mark.browser
def test_report_renders_in_headless_chromium(sample_class, tmp_path):
    """Opened from disk with no network: a picture with ink on it, and the key numbers in the
    text Chromium lays out."""
    page = os.path.join(sample_class["out"], "report.html")
    shot = tmp_path / "report.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1100,2600", "file://" + page)
    ink, colours = screenshot_ink(shot)
    print(f"\n[measure] report screenshot: {100 * ink:.1f}% of pixels inked, {colours} colours")
    assert ink > 0.03 and colours > 20
    dom = chromium(tmp_path, "--dump-dom", "file://" + page)
    text = visible_text(dom)
    data = report.build(sample_class["results"])
    assert "6 submissions" in text and f"{report._num(data['scores']['mean'])} mean score" in text
    for f in data["functions"]:
        assert f"{f['id']} {f['passed']} / 6 {100 * f['pass_rate']:.1f}%" in text, f["id"]
    for m in data["mistakes"]:
        assert f"{m['code']} in {m['function']} {m['count']} {100 * m['share']:.1f}%" in text, m["code"]
    assert "Unreadable submissions: 1" in text and "finn" in text
    assert dom.count("<svg") >= 4


ARTIFACTS = os.path.join(REPO, "tests", "artifacts", "report")


@pytest.mark.browser
def test_the_chinese_report_renders_in_headless_chromium(sample_class, tmp_path):
    """report --lang zh-CN, opened from disk: Chromium lays out the Chinese words, and draws
    them with a CJK font's glyphs, not as empty boxes (a machine without one would show tofu:
    the same check with only DejaVu's fonts finds the boxes). The screenshot is kept in
    tests/artifacts/report/ (ignored by git)."""
    assert cjk_fonts(), CJK_FONT_MISSING
    for name in ("results.json", "timings.csv", "clusters.json", "similarity.json"):
        shutil.copy(os.path.join(sample_class["out"], name), tmp_path / name)
    run = subprocess.run([sys.executable, "-m", "assignments", "report", str(tmp_path / "results.json"), "--lang",
                          "zh-CN"], cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    page = str(tmp_path / "report.html")
    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = os.path.join(ARTIFACTS, "report_zh-CN.png")
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1100,2600", "file://" + page)
    print(f"\n[artifact] {shot}")
    ink, colours = screenshot_ink(shot)
    assert ink > 0.03 and colours > 20
    text = visible_text(chromium(tmp_path, "--dump-dom", "file://" + page))
    data = report.build(sample_class["results"])
    assert "共 6 份提交" in text and f"{report._num(data['scores']['mean'])} 平均得分" in text
    for m in data["mistakes"]:
        assert f"{m['code']} 位于 {m['function']} {m['count']} {100 * m['share']:.1f}%" in text, m["code"]
    assert "无法读取：1" in text and "已评分：5" in text and "得分分布" in text   # statuses in Chinese (issue 43)
    drawn = glyphs_differ_from_boxes(tmp_path, "全班报告：得分分布")
    print(f"\n[measure] Chinese words vs missing-glyph boxes: {100 * drawn:.2f}% of pixels differ")
    assert drawn > 0.005, "Chinese is drawn as empty boxes (tofu): " + CJK_FONT_MISSING
    bare = tmp_path / "latin-only"
    bare.mkdir()
    (bare / "fonts.conf").write_text('<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
                                     f'<dir>/usr/share/fonts/truetype/dejavu</dir><cachedir>{bare}/cache</cachedir>'
                                     '</fontconfig>', encoding="utf-8")
    env = dict(os.environ, FONTCONFIG_FILE=str(bare / "fonts.conf"))
    assert glyphs_differ_from_boxes(bare, "全班报告：得分分布", env=env) < 0.001   # the check sees tofu


@pytest.mark.browser
def test_report_survives_print(sample_class, tmp_path):
    """Printed to PDF by Chromium (what "print" does): pages come out, with the charts."""
    pdf = tmp_path / "report.pdf"
    chromium(tmp_path, f"--print-to-pdf={pdf}", "--no-pdf-header-footer",
             "file://" + os.path.join(sample_class["out"], "report.html"))
    data = pdf.read_bytes()
    pages = len(re.findall(rb"/Type\s*/Page\b", data))
    print(f"\n[measure] report printed: {pages} pages, {len(data) / 1e3:.0f} kB")
    assert data.startswith(b"%PDF") and 1 <= pages <= 6


@pytest.mark.parametrize("n", [0, 1])
def test_tiny_classes(tmp_path, n):
    results, messages, timings = synthetic_class(n)
    report.write(results, str(tmp_path), messages, timings)
    html = page_text(tmp_path / "report.html")
    assert f"{n} submissions" in visible_text(html)


def test_charts_are_well_formed_svg_that_show_every_value():
    """charts.py draws the bars itself (matplotlib cost each run about 0.9 s of CPU): the SVG
    parses, every bar is drawn with its value in its tooltip, and the axis reaches the data."""
    import xml.etree.ElementTree as ET

    from assignments.grading.reports import charts
    assert charts.ticks(7, integer=True) == [0, 2, 4, 6, 8] and charts.ticks(100) == [0, 20, 40, 60, 80, 100]
    assert charts.ticks(0, integer=True) == [0, 1] and charts.ticks(0.37) == [0, 0.1, 0.2, 0.3, 0.4]
    ns = "{http://www.w3.org/2000/svg}"
    hist = charts.histogram([0, 25, 50, 75, 100], [3, 0, 1, 12], "scores", "score", "#1565c0")
    root = ET.fromstring(hist)
    assert root.get("id") == "chart-scores" and root.get("role") == "img"
    assert [r.find(f"{ns}title").text for r in root.iter(f"{ns}rect")] == ["0 to 25: 3", "50 to 75: 1", "75 to 100: 12"]
    assert "15" in [t.text for t in root.iter(f"{ns}text")]   # the count axis reaches past 12
    bars = charts.hbars(["a<b", "c"], [([1, 40], "#111", "first"), ([2, 0], "#222", None)], "fns", "%", xmax=100)
    root = ET.fromstring(bars)
    titles = [r.find(f"{ns}title").text for r in root.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]
    assert titles == ["a<b: 1 (first)", "a<b: 2", "c: 40 (first)", "c: 0"]
    assert {"a<b", "c", "first", "100", "%"} <= {t.text for t in root.iter(f"{ns}text")}
    assert bars == charts.hbars(["a<b", "c"], [([1, 40], "#111", "first"), ([2, 0], "#222", None)], "fns", "%", xmax=100)


def test_compiled_templates_kept_for_the_next_process_make_the_same_page(tmp_path):
    """report.write's ``cache_dir`` keeps the page's compiled templates (Jinja's bytecode cache)
    for the next run, which then draws the same page byte for byte; a cache_dir that cannot
    be used only means compiling again."""
    results, messages, timings = synthetic_class(12)
    report.write(results, str(tmp_path / "plain"), messages, timings)
    report._environment.cache_clear()   # as in a new process
    report.write(results, str(tmp_path / "first"), messages, timings, cache_dir=str(tmp_path / "cache"))
    assert list((tmp_path / "cache").iterdir())
    report._environment.cache_clear()
    report.write(results, str(tmp_path / "again"), messages, timings, cache_dir=str(tmp_path / "cache"))
    (tmp_path / "file").write_text("not a folder")
    report.write(results, str(tmp_path / "broken"), messages, timings, cache_dir=str(tmp_path / "file"))
    pages = {name: (tmp_path / name / "report.html").read_bytes() for name in ("plain", "first", "again", "broken")}
    assert len(set(pages.values())) == 1
