"""What an instructor reads after grading: a summary table for the terminal, and the class
report (``report.json``, ``report.html``) written beside ``results.json``.

The report is built from ``results.json`` alone (plus ``timings.csv`` when it is there), so
it can be regenerated at any time (``python -m assignments report``). It knows nothing of
the assignment: function ids come from the results, and the words students were given for
each mistake code from the ``messages`` the caller passes (the assignment's catalog). It is
made for a MOOC: everything is counted in one pass, charts summarise (never one mark per
student), and lists of students are cut at ``SHOWN`` names with the rest counted.
Its words (the page's, the terminal table's, the mistakes' in report.json) are said by the
``say`` function the caller passes (``say(template, **fields)``: run/pipeline.py hands over
the instructor's language's, contract/messages.py), English without one; keys, codes and
numbers never depend on it.
Rule (reports/): reads results, never grades.
"""
import csv
import functools
import json
import os

from .. import TEMPLATES
from . import N_, charts, english

SHOWN = 12          # students named in a list before "and N more"
ROWS = 50           # rows of a table of submissions before "and N more"
TOP_MISTAKES = 15   # bars in the mistakes chart (the table lists them all)
BINS = 20           # bars in the score histogram


# A submission's status (results.json), as the report says it in the instructor's language.
STATUSES = (N_("graded"), N_("unreadable"), N_("incomplete"), N_("error"))

# What the grader's flags mean (docs/grading.md, Flags), grouped as the report shows them.
FAULT_KINDS = ("timeout", "notebook_timeout", "memory", "dead_kernel", "exit", "output_flood",
               "invalid_output", "no_result", "no_judge")
GROUPS = (
    ("unreadable", N_("Unreadable submissions"), N_("not a notebook, or not the expected file: graded 0")),
    ("error", N_("Grader errors"), N_("the grader itself failed on these (never expected): regrade them")),
    ("faults", N_("Faults"), N_("code that timed out, ran out of memory, killed its kernel, exited, flooded "
                                "output or published outputs a notebook cannot hold; only the cell or function at "
                                "fault lost its marks")),
    ("tampering", N_("Tampering"), N_("protected cells edited, deleted, duplicated or re-pointed; "
                                      "they were restored before grading")),
    ("attempts", N_("Attempts on the grader"), N_("code that reaches for files, the network, processes or the "
                                                  "grader's machinery (the sandbox stopped it)")),
    ("other", N_("Other flags"), N_("flags this report does not know")),
)


# ---------------------------------------------------------------- the terminal's table

def _short(name):
    return "".join(part[0] for part in name.split("_"))   # some_cell_forward -> scf


def _pad(text, width, right=False):
    """``text`` padded to ``width`` terminal columns (a CJK character takes two)."""
    fill = " " * max(0, width - charts.columns(text))
    return fill + text if right else text + fill


def summary(results, say=english):
    subs = results["submissions"]
    if not subs:
        return say("No submissions found.")
    ids = [e["id"] for e in subs[0]["exercises"]]
    student, status, score = say("student"), say("status"), say("score")
    width = max(7, charts.columns(student), max(charts.columns(s["student"]) for s in subs))
    head = (f"{_pad(student, width)}  {_pad(status, 10)}  {_pad(score, 6, right=True)}  "
            + " ".join(f"{_short(i):>4}" for i in ids))
    lines = [head, "-" * charts.columns(head)]
    for s in subs:
        cells = []
        for e in s["exercises"]:
            cells.append(f"{'ok':>4}" if e["passed"] else f"{e['score']:>4g}")
        lines.append(f"{_pad(s['student'], width)}  {_pad(say(s['status']), 10)}  {s['score']:>6g}  " + " ".join(cells))
        named = [f"{e['id']}: {', '.join(e['diagnoses'])}" for e in s["exercises"] if e["diagnoses"]]
        if named:
            lines.append(f"{'':<{width}}  " + say("mistakes named: {named}", named="; ".join(named)))
        if s["status"] not in ("graded",) and s["message"]:
            lines.append(f"{'':<{width}}  {s['message'].splitlines()[0]}")
    lines.append("")
    lines.append(say("columns: {columns}; max score {points}", columns=", ".join(f"{_short(i)} = {i}" for i in ids),
                     points=f"{results['max_score']:g}"))
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


def catalog_messages(assignment, say=english):
    """Mistake code -> the words students are given, from the assignment's catalog (said
    with ``say``: in the report's language)."""
    def words(m):   # {outputs}: every value the mistake can affect (the report is of the whole class)
        if "{outputs}" not in m.feedback:
            return say(m.feedback)
        return say(m.feedback, outputs=", ".join(assignment.checks.behaviour_outputs(assignment.spec(m.function),
                                                                                    m.behaviour)))
    return {m.code: words(m) for m in assignment.catalog}


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


def _tally(subs):
    """Per function, per (function, code) and per flag group: what the submissions show."""
    order, functions, mistakes, located, repairs = [], {}, {}, {}, []   # functions in results.json's order
    groups, statuses, unsandboxed = {g: [] for g, _, _ in GROUPS}, {}, 0
    for s in subs:
        statuses[s["status"]] = statuses.get(s["status"], 0) + 1
        for e in s["exercises"]:
            f = functions.get(e["id"])
            if f is None:
                order.append(e["id"])
                f = functions[e["id"]] = {"id": e["id"], "max_score": _r(e["max_score"]), "passed": 0,
                                          "total": 0.0, "failed_unexplained": 0, "named": 0, "repaired": 0}
            f["passed"] += bool(e["passed"])
            f["total"] += float(e["score"])
            if not e["passed"] and s["status"] not in ("unreadable", "error"):
                f["named" if e["diagnoses"] else "failed_unexplained"] += 1
                f["repaired"] += bool(e.get("repair"))
                if e.get("repair"):
                    repairs.append({"student": s["student"], "function": e["id"],
                                    **{k: e["repair"][k] for k in ("line", "before", "after")}})
                quantity = (e.get("location") or {}).get("quantity")
                if not e["diagnoses"] and quantity:   # uncatalogued: grouped by what goes wrong first
                    located.setdefault((e["id"], quantity), []).append(s["student"])
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
    return order, functions, mistakes, located, repairs, groups, statuses, unsandboxed


def _timing(timings):
    seconds = [t["seconds"] for t in timings]
    slowest = sorted(timings, key=lambda t: (-t["seconds"], t["student"]))[:SHOWN]
    top = max(seconds) if seconds else 1.0
    return dict(_stats(seconds), count=len(seconds), total_seconds=_r(sum(seconds)),
                cpu_seconds=_r(sum(t["cpu_seconds"] for t in timings)), workers=len({t["worker"] for t in timings}),
                slowest=[{"student": t["student"], "seconds": _r(t["seconds"])} for t in slowest],
                histogram=_histogram(seconds, top))


def build(results, messages=None, timings=None, clusters=None, similarity=None):
    """The report's numbers (report.json) from results.json. ``messages`` maps a mistake
    code to the words students were given; ``timings`` are timings.csv's rows; ``clusters``
    and ``similarity`` are clusters.json and similarity.json (run/evidence.py), when made."""
    messages, subs = messages or {}, results["submissions"]
    n = len(subs)
    order, functions, mistakes, located, repairs, groups, statuses, unsandboxed = _tally(subs)
    scores = [float(s["score"]) for s in subs]
    report = {
        "assignment": results["assignment"], "max_score": _r(results["max_score"]), "submissions": n,
        "statuses": dict(sorted(statuses.items())),
        "scores": dict(_stats(scores), full_marks=sum(1 for v in scores if v >= results["max_score"]),
                       zero=sum(1 for v in scores if v == 0),
                       histogram=_histogram(scores, float(results["max_score"]))),
        "functions": [], "mistakes": [], "flagged": {}, "unsandboxed": unsandboxed,
        "timing": _timing(timings) if timings else None,
        "clusters": _clusters(clusters), "similarity": _similarity(similarity),
    }
    for fid in order:
        f = functions[fid]
        report["functions"].append({
            "id": fid, "max_score": f["max_score"], "passed": f["passed"],
            "pass_rate": _r(f["passed"] / n) if n else 0.0,
            "mean_score": _r(f["total"] / n) if n else 0.0,
            "failed_with_named_mistake": f["named"], "failed_unexplained": f["failed_unexplained"],
            "repaired": f["repaired"],
            "repair_rate": _r(f["repaired"] / (f["named"] + f["failed_unexplained"]))
            if f["named"] + f["failed_unexplained"] else 0.0})
    rank = {fid: i for i, fid in enumerate(order)}
    for (fid, code), students in sorted(mistakes.items(), key=lambda kv: (-len(kv[1]), rank[kv[0][0]], kv[0][1])):
        report["mistakes"].append({"code": code, "function": fid, "count": len(students),
                                   "share": _r(len(students) / n) if n else 0.0,
                                   "message": messages.get(code, ""), "students": sorted(students)})
    report["repairs"] = sorted(repairs, key=lambda r: (rank[r["function"]], r["student"]))
    report["located"] = [{"function": fid, "quantity": q, "count": len(students), "students": sorted(students)}
                         for (fid, q), students in sorted(located.items(),
                                                          key=lambda kv: (-len(kv[1]), rank[kv[0][0]], kv[0][1]))]
    for group, _, _ in GROUPS:
        if groups[group]:
            report["flagged"][group] = sorted(groups[group], key=lambda r: r["student"])
    return report


def _clusters(found):
    """clusters.json as the report shows it: each group with its students cut at SHOWN."""
    if found is None:
        return None
    groups = [dict(g, students=g["students"][:SHOWN], more=max(0, len(g["students"]) - SHOWN)) for g in found["groups"]]
    return {"groups": groups, "candidates": sum(g["candidate"] for g in groups), "unshared": found["unshared"],
            "once": found.get("once", [])}


def _similarity(found):
    """similarity.json as the report shows it: the flagged pairs, and how many were reported."""
    if found is None:
        return None
    flagged = [p for p in found["pairs"] if p["flagged"]]
    return {"flag_at": found["flag_at"], "note": found["note"], "reported": len(found["pairs"]),
            "flagged": flagged[:ROWS], "more": max(0, len(flagged) - ROWS)}


def _similarity_words(sim, say):
    """The copying evidence's words said with ``say`` (similarity.json keeps them in English);
    an item written before its counts were kept stays as it was written."""
    if sim is None or say is english:
        return sim
    from . import similarity
    said = [dict(p, evidence=[dict(e, detail=similarity.words(e, say)) if "of" in e or e["kind"] == similarity.BEHAVIOUR
                              else e for e in p["evidence"]]) for p in sim["flagged"]]
    written = sim["note"]
    return dict(sim, flagged=said, note=say(similarity.NOTE) if written == similarity.NOTE else written)


# ---------------------------------------------------------------- the charts

def _histogram_chart(hist, name, xlabel, color, say):
    return charts.histogram(hist["edges"], hist["counts"], name, xlabel, color, say)


def _functions_chart(functions, say):
    return charts.hbars([f["id"] for f in functions], [
        ([100 * f["pass_rate"] for f in functions], "#2e7d32", say("full marks (% of class)")),
        ([100 * f["mean_score"] / f["max_score"] if f["max_score"] else 0 for f in functions], "#90caf9",
         say("mean score (% of points)"))], "functions", "%", xmax=100)


def _mistakes_chart(mistakes, say):
    top = mistakes[:TOP_MISTAKES]
    return charts.hbars([m["code"] for m in top], [([m["count"] for m in top], "#c62828", None)], "mistakes",
                        say("submissions"), integer=True)


# ---------------------------------------------------------------- the page

PAGE = os.path.join(TEMPLATES, "report")


@functools.lru_cache(maxsize=None)
def _environment(cache_dir=None):
    """The page's Jinja environment; with ``cache_dir``, its compiled templates are kept there
    for the next process (Jinja checks each against its template's text)."""
    from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader
    from markupsafe import Markup, escape
    bytecode = None
    if cache_dir:
        try:
            os.makedirs(cache_dir, exist_ok=True)
            bytecode = FileSystemBytecodeCache(cache_dir)
        except OSError:
            pass
    env = Environment(loader=FileSystemLoader(PAGE), autoescape=True, keep_trailing_newline=True,
                      bytecode_cache=bytecode)

    def figure(svg, caption):
        caption = caption.unescape() if isinstance(caption, Markup) else caption   # said words, as text
        svg = svg.replace('role="img" ', f'role="img" aria-label="{escape(caption)}" ', 1)
        return Markup(f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>")

    def code(text):
        return Markup("<code>%s</code>") % text

    env.filters.update(num=_num, pct=_pct)
    env.globals.update(figure=figure, code=code, groups=GROUPS, max_rows=ROWS, top_mistakes=TOP_MISTAKES,
                       codes=lambda found: Markup(", ").join(code(c) for c in found))
    return env


def _page_words(say):
    """The template's ``say`` and ``names``: the words are trusted (the code's, the catalog's),
    the fields escaped."""
    from markupsafe import Markup

    def said(template, **fields):
        return Markup(say(template)).format(**fields) if fields else Markup(say(template))

    def names(students):
        shown = Markup(", ").join(students[:SHOWN])
        rest = len(students) - SHOWN
        return shown + (Markup(' <span class="more">%s</span>') % said("and {n} more", n=rest) if rest > 0 else "")
    return said, names


def _pct(x):
    return f"{100 * x:.1f}%"


def _num(x):
    return f"{x:.2f}".rstrip("0").rstrip(".") if x != int(x) else f"{int(x)}"


def render(report, charts=True, say=english, lang="en", cache_dir=None):
    """report.html: one self-contained page (inline CSS and SVG; no script, no network), from
    templates/report/; its words said with ``say``, ``lang`` its language's tag; ``cache_dir``:
    where compiled templates are kept from run to run (``_environment``)."""
    n, sc, flagged = report["submissions"], report["scores"], report["flagged"]
    drawn = {}
    if charts and n:
        drawn["scores"] = _histogram_chart(sc["histogram"], "scores", say("score (out of {points})", points=_num(
            report["max_score"])), "#1565c0", say)
    if charts and report["functions"]:
        drawn["functions"] = _functions_chart(report["functions"], say)
    if charts and report["mistakes"]:
        drawn["mistakes"] = _mistakes_chart(report["mistakes"], say)
    if charts and report["timing"]:
        drawn["timing"] = _histogram_chart(report["timing"]["histogram"], "timing", say("seconds per submission"),
                                           "#6a1b9a", say)
    with open(os.path.join(PAGE, "report.css"), encoding="utf-8") as f:
        css = f.read()
    said, names = _page_words(say)
    return _environment(cache_dir).get_template("report.html.j2").render(
        r=dict(report, similarity=_similarity_words(report["similarity"], say)), n=n, sc=sc, flagged=flagged,
        charts=drawn, css=css, say=said, names=names, lang=lang,
        n_flagged=len({row["student"] for rows in flagged.values() for row in rows}))


def write(results, out, messages=None, timings=None, clusters=None, similarity=None, say=english, lang="en",
          cache_dir=None):
    """report.json and report.html into ``out`` (their words said with ``say``, in ``lang``;
    ``cache_dir``: see ``render``); returns their paths."""
    report = build(results, messages, timings, clusters, similarity)
    os.makedirs(out, exist_ok=True)
    paths = os.path.join(out, "report.json"), os.path.join(out, "report.html")
    with open(paths[0], "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    with open(paths[1], "w", encoding="utf-8") as f:
        f.write(render(report, say=say, lang=lang, cache_dir=cache_dir))
    return paths
