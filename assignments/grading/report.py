"""A readable summary of results.json for the terminal."""


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
