"""What an instructor reads after grading: a summary table for the terminal, and the class
report (``report.json``, ``report.html``) written beside ``results.json``.

The report is built from ``results.json`` alone (plus ``timings.csv`` when it is there), so
it can be regenerated at any time (``python -m assignments report``). It knows nothing of
the assignment: function ids come from the results, and the words students were given for
each mistake code from the ``messages`` the caller passes (the assignment's catalog). It is
made for a MOOC: everything is counted in one pass, charts summarise (never one mark per
student), and lists of students are cut at ``SHOWN`` names with the rest counted.
"""
import csv
import html
import json
import os
import re

from . import charts

SHOWN = 12          # students named in a list before "and N more"
ROWS = 50           # rows of a table of submissions before "and N more"
TOP_MISTAKES = 15   # bars in the mistakes chart (the table lists them all)
BINS = 20           # bars in the score histogram

# What the grader's flags mean (docs/grading.md, Flags), grouped as the report shows them.
FAULT_KINDS = ("timeout", "notebook_timeout", "memory", "dead_kernel", "exit", "output_flood",
               "invalid_output", "no_result", "no_judge")
GROUPS = (
    ("unreadable", "Unreadable submissions", "not a notebook, or not the expected file: graded 0"),
    ("error", "Grader errors", "the grader itself failed on these (never expected): regrade them"),
    ("faults", "Faults", "code that timed out, ran out of memory, killed its kernel, exited, flooded "
                         "output or published outputs a notebook cannot hold; only the cell or function at "
                         "fault lost its marks"),
    ("tampering", "Tampering", "protected cells edited, deleted, duplicated or re-pointed; "
                               "they were restored before grading"),
    ("attempts", "Attempts on the grader", "code that reaches for files, the network, processes or the "
                                           "grader's machinery (the sandbox stopped it)"),
    ("other", "Other flags", "flags this report does not know"),
)


# ---------------------------------------------------------------- the terminal's table

def _short(name):
    return "".join(part[0] for part in name.split("_"))   # some_cell_forward -> scf


def summary(results):
    subs = results["submissions"]
    if not subs:
        return "No submissions found."
    ids = [e["id"] for e in subs[0]["exercises"]]
    width = max(7, max(len(s["student"]) for s in subs))
    head = f"{'student':<{width}}  {'status':<10}  {'score':>6}  " + " ".join(f"{_short(i):>4}" for i in ids)
    lines = [head, "-" * len(head)]
    for s in subs:
        cells = []
        for e in s["exercises"]:
            cells.append(f"{'ok':>4}" if e["passed"] else f"{e['score']:>4g}")
        lines.append(f"{s['student']:<{width}}  {s['status']:<10}  {s['score']:>6g}  " + " ".join(cells))
        named = [f"{e['id']}: {', '.join(e['diagnoses'])}" for e in s["exercises"] if e["diagnoses"]]
        if named:
            lines.append(f"{'':<{width}}  mistakes named: " + "; ".join(named))
        if s["status"] not in ("graded",) and s["message"]:
            lines.append(f"{'':<{width}}  {s['message'].splitlines()[0]}")
    lines.append("")
    lines.append("columns: " + ", ".join(f"{_short(i)} = {i}" for i in ids) + f"; max score {results['max_score']:g}")
    return "\n".join(lines)


# ---------------------------------------------------------------- the numbers

class BadResults(ValueError):
    """results.json (or timings.csv) is not what `grade` writes."""


def load_results(path):
    try:
        with open(path, encoding="utf-8") as f:
            results = json.load(f)
    except OSError as exc:
        raise BadResults(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise BadResults(f"{path} is not JSON: {exc}") from None
    problem = _shape_problem(results)
    if problem:
        raise BadResults(f"{path} is not a results.json written by `grade`: {problem}")
    return results


def _shape_problem(results):
    if not isinstance(results, dict) or not {"assignment", "max_score", "submissions"} <= set(results):
        return "it needs assignment, max_score and submissions"
    for i, s in enumerate(results["submissions"]):
        if not isinstance(s, dict) or not {"student", "status", "score", "flags", "exercises"} <= set(s):
            return f"submission {i} lacks student, status, score, flags or exercises"
        for e in s["exercises"]:
            if not isinstance(e, dict) or not {"id", "score", "max_score", "passed", "diagnoses"} <= set(e):
                return f"submission {i} ({s.get('student')}) has an exercise without id, score, max_score, passed or diagnoses"
    return None


def catalog_messages(assignment):
    """Mistake code -> the words students are given, from the assignment's catalog."""
    return {m.code: m.feedback for m in assignment.catalog}


def load_timings(path):
    """timings.csv as written by `grade` (student, status, seconds, cpu_seconds, worker), or
    None when there is none."""
    if not os.path.exists(path):
        return None
    try:
        with open(path, newline="", encoding="utf-8") as f:
            return [{"student": r["student"], "seconds": float(r["seconds"]),
                     "cpu_seconds": float(r.get("cpu_seconds") or 0.0), "worker": r.get("worker", "")}
                    for r in csv.DictReader(f)]
    except (KeyError, ValueError, TypeError) as exc:
        raise BadResults(f"{path} is not a timings.csv written by `grade`: {exc}") from None


def _r(x, digits=6):
    """Rounded, so that report.json is the same bytes on any machine."""
    return round(float(x), digits)


def _quantile(ordered, q):
    if not ordered:
        return 0.0
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _stats(values):
    ordered = sorted(values)
    n = len(ordered)
    return {"mean": _r(sum(ordered) / n) if n else 0.0, "median": _r(_quantile(ordered, 0.5)),
            "q1": _r(_quantile(ordered, 0.25)), "q3": _r(_quantile(ordered, 0.75)),
            "p90": _r(_quantile(ordered, 0.9)),
            "min": _r(ordered[0]) if n else 0.0, "max": _r(ordered[-1]) if n else 0.0}


def _histogram(values, top, bins=BINS):
    top = top if top > 0 else 1.0
    width = top / bins
    counts = [0] * bins
    for v in values:
        counts[min(max(int(v / width), 0), bins - 1)] += 1
    return {"edges": [_r(width * i) for i in range(bins + 1)], "counts": counts}


def flag_group(flag):
    kind = flag.split(":", 1)[0]
    if kind in FAULT_KINDS:
        return "faults"
    if kind == "tampered":
        return "tampering"
    if kind == "attempt":
        return "attempts"
    if kind == "unsandboxed":
        return None          # a property of the run, counted once
    return "other"


def build(results, messages=None, timings=None):
    """The report's numbers (report.json) from results.json. ``messages`` maps a mistake
    code to the words students were given; ``timings`` are timings.csv's rows."""
    messages = messages or {}
    subs = results["submissions"]
    n = len(subs)
    order = []                    # function ids, in the order results.json gives them
    functions = {}
    mistakes = {}                 # (function, code) -> students
    groups = {g: [] for g, _, _ in GROUPS}
    statuses = {}
    unsandboxed = 0
    for s in subs:
        statuses[s["status"]] = statuses.get(s["status"], 0) + 1
        for e in s["exercises"]:
            f = functions.get(e["id"])
            if f is None:
                order.append(e["id"])
                f = functions[e["id"]] = {"id": e["id"], "max_score": _r(e["max_score"]), "passed": 0,
                                          "total": 0.0, "failed_unexplained": 0, "named": 0}
            f["passed"] += bool(e["passed"])
            f["total"] += float(e["score"])
            if not e["passed"] and s["status"] not in ("unreadable", "error"):
                if e["diagnoses"]:
                    f["named"] += 1
                else:
                    f["failed_unexplained"] += 1
            for code in e["diagnoses"]:
                mistakes.setdefault((e["id"], code), []).append(s["student"])
        kinds = {}
        for flag in s["flags"]:
            group = flag_group(flag)
            if group is None:
                unsandboxed += 1
            else:
                kinds.setdefault(group, []).append(flag)
        if s["status"] in ("unreadable", "error"):
            kinds.setdefault(s["status"], [])
        if s["status"] == "incomplete":
            kinds.setdefault("faults", [])
        for group, flags in kinds.items():
            groups[group].append({"student": s["student"], "status": s["status"], "score": _r(s["score"]),
                                  "flags": flags, "message": (s.get("message") or "").splitlines()[0] if s.get("message") else ""})

    scores = [float(s["score"]) for s in subs]
    report = {
        "assignment": results["assignment"], "max_score": _r(results["max_score"]), "submissions": n,
        "statuses": dict(sorted(statuses.items())),
        "scores": dict(_stats(scores), full_marks=sum(1 for v in scores if v >= results["max_score"]),
                       zero=sum(1 for v in scores if v == 0),
                       histogram=_histogram(scores, float(results["max_score"]))),
        "functions": [], "mistakes": [], "flagged": {}, "unsandboxed": unsandboxed, "timing": None,
    }
    for fid in order:
        f = functions[fid]
        report["functions"].append({
            "id": fid, "max_score": f["max_score"], "passed": f["passed"],
            "pass_rate": _r(f["passed"] / n) if n else 0.0,
            "mean_score": _r(f["total"] / n) if n else 0.0,
            "failed_with_named_mistake": f["named"], "failed_unexplained": f["failed_unexplained"]})
    rank = {fid: i for i, fid in enumerate(order)}
    for (fid, code), students in sorted(mistakes.items(), key=lambda kv: (-len(kv[1]), rank[kv[0][0]], kv[0][1])):
        report["mistakes"].append({"code": code, "function": fid, "count": len(students),
                                   "share": _r(len(students) / n) if n else 0.0,
                                   "message": messages.get(code, ""), "students": sorted(students)})
    for group, _, _ in GROUPS:
        if groups[group]:
            report["flagged"][group] = sorted(groups[group], key=lambda r: r["student"])
    if timings:
        seconds = [t["seconds"] for t in timings]
        slowest = sorted(timings, key=lambda t: (-t["seconds"], t["student"]))[:SHOWN]
        top = max(seconds) if seconds else 1.0
        report["timing"] = dict(_stats(seconds), count=len(seconds), total_seconds=_r(sum(seconds)),
                                cpu_seconds=_r(sum(t["cpu_seconds"] for t in timings)),
                                workers=len({t["worker"] for t in timings}),
                                slowest=[{"student": t["student"], "seconds": _r(t["seconds"])} for t in slowest],
                                histogram=_histogram(seconds, top))
    return report


# ---------------------------------------------------------------- the charts

def _histogram_chart(hist, name, xlabel, color):
    return charts.histogram(hist["edges"], hist["counts"], name, xlabel, color)


def _functions_chart(functions):
    return charts.hbars([f["id"] for f in functions], [
        ([100 * f["pass_rate"] for f in functions], "#2e7d32", "full marks (% of class)"),
        ([100 * f["mean_score"] / f["max_score"] if f["max_score"] else 0 for f in functions], "#90caf9",
         "mean score (% of points)")], "functions", "%", xmax=100)


def _mistakes_chart(mistakes):
    top = mistakes[:TOP_MISTAKES]
    return charts.hbars([m["code"] for m in top], [([m["count"] for m in top], "#c62828", None)], "mistakes",
                        "submissions", integer=True)


# ---------------------------------------------------------------- the page

CSS = """
:root { --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --bad: #c62828; --good: #2e7d32; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: var(--ink); max-width: 1000px; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.6rem; margin: 0 0 .2rem; } h2 { font-size: 1.2rem; margin: 2rem 0 .5rem;
     border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
.muted, figcaption { color: var(--muted); font-size: .9rem; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(140px, 1fr)); gap: .6rem; margin: 1rem 0; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: .5rem .7rem; }
.card b { display: block; font-size: 1.4rem; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; margin: .4rem 0; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem .45rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code { font-size: .85em; background: #f6f8fa; padding: 0 .2em; border-radius: 3px; }
figure { margin: .6rem 0; } figure svg { max-width: 100%; height: auto; }
.more { color: var(--muted); font-style: italic; }
.words { max-width: 34em; }
@media print {
  body { max-width: none; padding: 0; font-size: 10pt; }
  h2, h3, .muted { break-after: avoid; } figure, tr, .card { break-inside: avoid; }
  section { break-inside: auto; } a { color: inherit; text-decoration: none; }
  th { background: none; }
}
"""


def _e(text):
    return html.escape(str(text), quote=True)


def _pct(x):
    return f"{100 * x:.1f}%"


def _num(x):
    return f"{x:.2f}".rstrip("0").rstrip(".") if x != int(x) else f"{int(x)}"


def _names(students):
    shown = ", ".join(_e(s) for s in students[:SHOWN])
    rest = len(students) - SHOWN
    return shown + (f' <span class="more">and {rest} more</span>' if rest > 0 else "")


def _figure(svg, caption):
    svg = svg.replace('role="img" ', f'role="img" aria-label="{_e(caption)}" ', 1)
    return f"<figure>{svg}<figcaption>{_e(caption)}</figcaption></figure>"


def render(report, charts=True):
    """report.html: one self-contained page (inline CSS and SVG; no script, no network)."""
    n = report["submissions"]
    sc = report["scores"]
    flagged = report["flagged"]
    n_flagged = len({r["student"] for rows in flagged.values() for r in rows})
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Class report: {_e(report['assignment'])}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
        f"<h1>Class report: <code>{_e(report['assignment'])}</code></h1>",
        f'<p class="muted">{n} submissions; scores out of {_num(report["max_score"])}. '
        f"Built from results.json by <code>python -m assignments report</code>.</p>",
        '<div class="cards">',
        f'<div class="card" id="n-submissions"><b>{n}</b>submissions</div>',
        f'<div class="card" id="mean-score"><b>{_num(sc["mean"])}</b>mean score</div>',
        f'<div class="card" id="median-score"><b>{_num(sc["median"])}</b>median score</div>',
        f'<div class="card" id="full-marks"><b>{sc["full_marks"]}</b>full marks</div>',
        f'<div class="card" id="flagged-count"><b>{n_flagged}</b>flagged</div>',
        "</div>",
    ]
    # score distribution
    parts.append('<section id="scores"><h2>Score distribution</h2>')
    if charts and n:
        parts.append(_figure(_histogram_chart(sc["histogram"], "scores", f"score (out of {_num(report['max_score'])})",
                                              "#1565c0"), f"Submissions per score band of {_num(sc['histogram']['edges'][1])} points."))
    statuses = ", ".join(f"{_e(k)}: {v}" for k, v in report["statuses"].items())
    parts.append("<table><tr><th>mean</th><th>min</th><th>first quartile</th><th>median</th><th>third quartile</th>"
                 "<th>max</th><th>zero</th><th>status</th></tr><tr>"
                 + "".join(f'<td class="num">{_num(sc[k])}</td>' for k in ("mean", "min", "q1", "median", "q3", "max"))
                 + f'<td class="num">{sc["zero"]}</td><td>{statuses}</td></tr></table></section>')
    # functions
    parts.append('<section id="functions"><h2>Functions</h2>')
    if charts and report["functions"]:
        parts.append(_figure(_functions_chart(report["functions"]),
                             "Share of the class with full marks, and mean score as a share of the function's points."))
    parts.append('<table><tr><th>function</th><th class="num">full marks</th><th class="num">pass rate</th>'
                 '<th class="num">mean score</th><th class="num">failed, mistake named</th>'
                 '<th class="num">failed, no mistake named</th></tr>')
    for f in report["functions"]:
        parts.append(f'<tr id="fn-{_e(f["id"])}"><td><code>{_e(f["id"])}</code></td><td class="num">{f["passed"]} / {n}</td>'
                     f'<td class="num">{_pct(f["pass_rate"])}</td>'
                     f'<td class="num">{_num(f["mean_score"])} / {_num(f["max_score"])}</td>'
                     f'<td class="num">{f["failed_with_named_mistake"]}</td><td class="num">{f["failed_unexplained"]}</td></tr>')
    parts.append('</table><p class="muted">Pass rate: submissions with full marks on the function, over all '
                 f'{n} submissions (unreadable ones included). "No mistake named": the function lost points but '
                 "matched no catalogued mistake; its feedback describes the wrong outputs instead.</p></section>")
    # mistakes
    parts.append('<section id="mistakes"><h2>Named mistakes</h2>')
    if not report["mistakes"]:
        parts.append("<p>No catalogued mistake was named in this class.</p>")
    else:
        if charts:
            shown = min(TOP_MISTAKES, len(report["mistakes"]))
            parts.append(_figure(_mistakes_chart(report["mistakes"]),
                                 f"The {shown} most common of {len(report['mistakes'])} named mistakes."))
        parts.append('<table><tr><th>mistake</th><th class="num">students</th><th class="num">share</th>'
                     "<th>what students were told</th><th>who</th></tr>")
        for m in report["mistakes"]:
            words = _e(m["message"]) if m["message"] else '<span class="muted">(no catalog entry)</span>'
            parts.append(f'<tr id="mistake-{_e(m["function"])}-{_e(m["code"])}"><td><code>{_e(m["code"])}</code><br>'
                         f'<span class="muted">in <code>{_e(m["function"])}</code></span></td>'
                         f'<td class="num">{m["count"]}</td><td class="num">{_pct(m["share"])}</td>'
                         f'<td class="words">{words}</td><td>{_names(m["students"])}</td></tr>')
        parts.append("</table>")
    parts.append("</section>")
    # flagged
    parts.append('<section id="flagged"><h2>Flagged submissions</h2>')
    if report["unsandboxed"]:
        parts.append(f'<p><b>{report["unsandboxed"]} submissions were graded without the sandbox</b> '
                     "(<code>--no-sandbox</code>).</p>")
    if not flagged:
        parts.append("<p>None: every submission was readable, ran cleanly and left the protected cells alone.</p>")
    for group, title, meaning in GROUPS:
        rows = flagged.get(group)
        if not rows:
            continue
        parts.append(f'<h3 id="flagged-{group}">{_e(title)}: {len(rows)}</h3><p class="muted">{_e(meaning)}</p>')
        parts.append('<table><tr><th>student</th><th>status</th><th class="num">score</th><th>what</th></tr>')
        for r in rows[:ROWS]:
            what = ", ".join(f"<code>{_e(f)}</code>" for f in r["flags"][:6])
            if len(r["flags"]) > 6:
                what += f' <span class="more">and {len(r["flags"]) - 6} more</span>'
            if r["message"]:
                what += (" " if what else "") + _e(r["message"][:300])
            parts.append(f'<tr><td>{_e(r["student"])}</td><td>{_e(r["status"])}</td>'
                         f'<td class="num">{_num(r["score"])}</td><td>{what}</td></tr>')
        parts.append("</table>")
        if len(rows) > ROWS:
            parts.append(f'<p class="more">and {len(rows) - ROWS} more (all in report.json)</p>')
    parts.append("</section>")
    # timing
    parts.append('<section id="timing"><h2>Grading time</h2>')
    t = report["timing"]
    if not t:
        parts.append("<p>No timings.csv beside results.json: grading times are unknown.</p>")
    else:
        if charts:
            parts.append(_figure(_histogram_chart(t["histogram"], "timing", "seconds per submission", "#6a1b9a"),
                                 "Wall-clock seconds per graded submission (kernel start, the learner's cells, "
                                 "the hidden cases, the feedback page)."))
        parts.append(f'<table><tr><th class="num">graded</th><th class="num">mean s</th><th class="num">median s</th>'
                     f'<th class="num">90th percentile s</th><th class="num">max s</th><th class="num">total s</th>'
                     f'<th class="num">CPU s</th><th class="num">workers</th></tr><tr>'
                     f'<td class="num">{t["count"]}</td>'
                     + "".join(f'<td class="num">{t[k]:.2f}</td>' for k in ("mean", "median", "p90", "max",
                                                                            "total_seconds", "cpu_seconds"))
                     + f'<td class="num">{t["workers"]}</td></tr></table>')
        parts.append("<p>Slowest: " + ", ".join(f"{_e(r['student'])} ({r['seconds']:.1f} s)" for r in t["slowest"])
                     + "</p>")
    parts.append("</section></body></html>")
    # header rows in <thead>, so that a printed table repeats them on every page
    return re.sub(r"<table><tr>(.*?)</tr>", r"<table><thead><tr>\1</tr></thead>", "\n".join(parts) + "\n", flags=re.S)


def write(results, out, messages=None, timings=None):
    """report.json and report.html into ``out``; returns their paths."""
    report = build(results, messages, timings)
    os.makedirs(out, exist_ok=True)
    paths = os.path.join(out, "report.json"), os.path.join(out, "report.html")
    with open(paths[0], "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    with open(paths[1], "w", encoding="utf-8") as f:
        f.write(render(report))
    return paths
