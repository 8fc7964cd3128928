"""The side-by-side page of a flagged pair (similarity.json's ``pairs``): both submissions'
code, function by function, with what they share marked.

A line is marked *same* when both hold it, spacing aside, and *alike* when both hold it once
names, strings and comments are set aside (copydetect's normal form); lines the release or
the reference hold are never marked, as they say nothing. One self-contained page: inline
CSS, no script, no font, no network, so it opens offline and prints.
Rule (reports/): reads results and code, never grades.
"""
import functools
import os
import re

from .. import TEMPLATES
from . import similarity

PAGES = "pairs"   # the pages' folder beside similarity.json


def page_name(a, b):
    """The file name of a pair's page (a known solution's name made safe for a path)."""
    safe = lambda s: re.sub(r"[^A-Za-z0-9._@+-]", "_", s.replace(similarity.KNOWN, "known-"))
    return f"{safe(a)}--{safe(b)}.html"


def _plain(line):
    return " ".join(line.split())


def _normal(line):
    code = line.split("#")[0].strip()
    if len(code) < 4:
        return ""
    try:
        return similarity.normalised_code(code)
    except Exception:
        return ""


def _keys(source):
    plain = {_plain(line) for line in source.splitlines() if len(_plain(line)) > 3}
    normal = {_normal(line) for line in source.splitlines()} - {""}
    return plain, normal


def _marked(source, other, stock):
    """Each line of ``source`` with its mark: "same", "alike" or ""."""
    plain, normal = _keys(other)
    rows = []
    for line in source.splitlines():
        p, n = _plain(line), _normal(line)
        if len(p) > 3 and p in plain and p not in stock[0]:
            rows.append((line, "same"))
        elif n and n in normal and n not in stock[1] and p not in stock[0]:
            rows.append((line, "alike"))
        else:
            rows.append((line, ""))
    return rows


def sides(pair, code, boilerplate):
    """[{function, a: [(line, mark)], b: [...]}] for the functions the pair names (all the
    functions both wrote when it names none). ``code``: {owner: {function: source}};
    ``boilerplate``: the release's and the reference's sources."""
    stock = (set(), set())
    for source in boilerplate:
        plain, normal = _keys(source)
        stock[0].update(plain)
        stock[1].update(normal)
    a, b = code.get(pair["a"], {}), code.get(pair["b"], {})
    names = pair["functions"] or [f for f in a if f in b]
    return [{"function": f, "a": _marked(a.get(f, ""), b.get(f, ""), stock),
             "b": _marked(b.get(f, ""), a.get(f, ""), stock)} for f in names]


@functools.lru_cache(maxsize=None)
def _template():
    from jinja2 import Environment, FileSystemLoader
    env = Environment(loader=FileSystemLoader(os.path.join(TEMPLATES, "similarity")), autoescape=True,
                      keep_trailing_newline=True)
    return env.get_template("pair.html.j2")


def render(assignment, pair, code, boilerplate):
    with open(os.path.join(TEMPLATES, "report", "report.css"), encoding="utf-8") as f:
        css = f.read()
    return _template().render(assignment=assignment, p=pair, functions=sides(pair, code, boilerplate),
                              css=css, note=similarity.NOTE)


def write(folder, data, code, boilerplate):
    """A page per flagged pair into ``folder``/pairs/; returns {(a, b): relative path}."""
    out = os.path.join(folder, PAGES)
    written = {}
    for pair in data["pairs"]:
        if not pair["flagged"]:
            continue
        os.makedirs(out, exist_ok=True)
        name = page_name(pair["a"], pair["b"])
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(render(data["assignment"], pair, code, boilerplate))
        written[(pair["a"], pair["b"])] = f"{PAGES}/{name}"
    return written
