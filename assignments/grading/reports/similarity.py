"""Evidence that two submissions share more than the assignment makes them share.

Correct solutions of a step-by-step exercise are alike by design: the template dictates most
of their lines, so plain text similarity would pair up the whole class. Nothing here measures
plain similarity. Each item of evidence (a winnowed fingerprint of normalised code, a comment,
a name, a line, a wrong behaviour) counts by how rare it is among the class and the known
solutions, and whatever the release's own code or the reference contains is removed first.

The result never changes a grade: it says what two submissions share and how rare it is, for
a person to weigh. The engine is data in, data out: it names no assignment, no function and
reads no file; ``compare`` takes sources and returns the ``similarity.json`` structure.

Normalised code comes from copydetect (its pygments tokeniser replaces names, strings and
comments, and its winnowing picks the fingerprints). Its k-gram hash is Python's salted
``hash()``, which changes from one process to the next, so the k-grams are hashed here with
a fixed polynomial instead: the same class gives the same report every time.
Rule (reports/): reads results and code, never grades.
"""
import ast
import builtins
import functools
import hashlib
import importlib
import importlib.util
import itertools
import keyword
import multiprocessing
import re
import sys
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pygments.lexers
from pygments import token

from . import N_, english


def _copydetect_utils():
    """copydetect's tokeniser and winnowing (its ``utils`` module), imported without its
    package's ``__init__``, which imports its report maker and so matplotlib.pyplot (the
    larger part of a rerun's imports) for pages this engine never makes. The package stands
    in ``sys.modules`` empty while ``utils`` is imported, then is taken out: a later ``import
    copydetect`` runs its ``__init__`` as usual and finds this same ``utils``."""
    if "copydetect.utils" not in sys.modules and "copydetect" not in sys.modules:
        package = importlib.util.module_from_spec(importlib.util.find_spec("copydetect"))
        sys.modules["copydetect"] = package
        try:
            importlib.import_module("copydetect.utils")
        finally:
            del sys.modules["copydetect"]
    return importlib.import_module("copydetect.utils")


copydetect_utils = _copydetect_utils()

CODE = "shared rare code"
COMMENTS = "identical comments"
NAMES = "identical rare names"
LINES = "identical lines"
BEHAVIOUR = "identical rare wrong behaviour"
TEXT_KINDS = (CODE, COMMENTS, NAMES, LINES)
KNOWN = "known:"


NOTE = N_("Evidence for a person to weigh, never a grade change: each item says what two submissions share "
          "and how rare it is in this class; what the release and the reference contain is left out.")

_COMMON_NAMES = frozenset(keyword.kwlist) | frozenset(dir(builtins))


@dataclass(frozen=True)
class Settings:
    """The knobs, chosen from the measurements in docs/report.md."""

    k: int = 20
    """Characters of normalised code in one fingerprinted k-gram (a name is one character)."""
    window: int = 6
    """Winnowing window: any run of k + window - 1 shared characters yields a fingerprint."""
    common: int = 12
    """An item more submissions than this hold is the class's common stock and never pairs anyone."""
    power: float = 2.0
    """How steeply an item's weight falls with the number of submissions holding it."""
    prior: dict = field(default_factory=lambda: {CODE: 20.0, COMMENTS: 3.0, NAMES: 3.0, LINES: 6.0})
    """Rare mass a pair must exceed before a kind's score nears 1 (in exclusive items)."""
    weight: dict = field(default_factory=lambda: {CODE: 1.0, COMMENTS: 0.7, NAMES: 0.4, LINES: 0.7, BEHAVIOUR: 0.6})
    """How far one kind alone can raise the score."""
    least: dict = field(default_factory=lambda: {CODE: 3.0, COMMENTS: 1.0, NAMES: 1.0, LINES: 2.0})
    """Rare mass a single function must share to be named under a kind."""
    flag_at: float = 0.5
    report_at: float = 0.1


def split_functions(source: str, names) -> dict:
    """Cut a .py file into the cells a notebook would hold: each named top-level function with
    the helpers and statements written between it and the previous named one."""
    lines = source.splitlines(keepends=True)
    out, begin = {}, None
    for name, first, end in _top_level(source, lines):
        begin = first if begin is None else begin
        if name in names and name not in out:
            out[name] = "".join(lines[begin:end])
            begin = None
    return out


def _top_level(source, lines):
    """(name, first line, end line) of each top-level statement after the imports; a file
    Python cannot parse is cut at its ``def`` lines."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        starts = [i for i, text in enumerate(lines) if text.startswith("def ")] + [len(lines)]
        return [(lines[s][4:].split("(")[0].strip(), s, e) for s, e in zip(starts, starts[1:])]
    body = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the module's docstring
    first = lambda n: min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]) - 1
    # a statement's cell begins where the previous statement ended (comments between them go
    # with what follows); the first one's begins at its own first line, after the file's header
    begins = [first(n) for n in body[:1]] + [n.end_lineno for n in body[:-1]]
    return [(getattr(n, "name", ""), b, n.end_lineno) for n, b in zip(body, begins)]


# --- what one source holds -----------------------------------------------------------------

def _kgram_hashes(text: str, k: int) -> np.ndarray:
    """A fixed polynomial hash of every k characters of ``text`` (vectorised, unsalted)."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    n = len(codes) - k + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    h = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(k):
            h = h * np.uint64(1099511628211) + codes[j:j + n]
        h ^= h >> np.uint64(29)
        h *= np.uint64(0x9E3779B97F4A7C15)
        h ^= h >> np.uint64(32)
    return h


# a def line's docstring: the release's text, which would join the body's first k-grams
_DOCSTRING = re.compile(r"""(def [^\n]*:[ \t]*\n)[ \t]*(\"\"\"|\'\'\')(?:.|\n)*?\2[ \t]*\n""")


@functools.lru_cache(maxsize=None)
def _lexer():
    return pygments.lexers.get_lexer_by_name("python2")


_VARIABLES = frozenset({token.Name, token.Name.Variable, token.Name.Attribute})
_QUOTE = object()   # a string token: '"' for a lone quote, S for the rest


@functools.lru_cache(maxsize=None)
def _written_as(kind):
    """What copydetect's ``filter_code`` writes for a token of this type, decided in its
    order: a letter, "" for nothing, _QUOTE for a string part, None for the token's text."""
    if kind in _VARIABLES:
        return "V"
    if kind in token.Name.Function:
        return "F"
    if kind in token.Name.Class:
        return "O"
    if kind == token.Comment.Preproc or kind == token.Comment.Hashbang:
        return "P"
    if kind in token.Text or kind in token.Comment:
        return ""
    return _QUOTE if kind in token.Literal.String else None


# What makes pygments' reading of a line depend on the lines before it: a triple-quoted string,
# a backslash, a backtick, a hashbang (which it only sees at the very start), a def, class,
# from or import whose following blanks run to the next line. Without any of them every line
# starts in the lexer's root state and no token runs past its newline, so lexing line by line
# gives the tokens of lexing the whole.
_ACROSS_LINES = re.compile("|".join([r'"""', r"'''", r"\\", "`", r"\n#!", r"(?:def|class|from|import)\s*\n"]))


@functools.lru_cache(maxsize=1 << 16)
def normalised_code(source: str) -> str:
    """copydetect's normal form: names V, functions F, strings S; comments and spaces gone.

    Through pygments' Python 2 lexer, which gives Python 3 code of this kind the same normal
    form as the Python 3 lexer at under half the cost, except that it reads ``a@b`` as a
    decorator: spacing every ``@`` first makes it the operator again. Docstrings go first.
    copydetect's ``filter_code`` writes the same text (tests/test_similarity.py compares them);
    this skips the offsets it also computes, decides each token type once, and reads a line
    the class has seen before from a cache (lines repeat across a class: the template's, the
    common idioms), unless the source has something that carries across lines."""
    source = _DOCSTRING.sub(r"\1", source).replace("@", " @ ")
    text = _lexer()._preprocess_lexer_input(source)   # what get_tokens lexes: ends with a newline
    if _ACROSS_LINES.search(text):
        return _normal(text)
    return "".join(_normal_line(line + "\n") for line in text.split("\n")[:-1])


def _normal(text):
    out = []
    for _, kind, value in _lexer().get_tokens_unprocessed(text):
        written = _written_as(kind)
        out.append(value if written is None else ('"' if value in ("'", '"') else "S") if written is _QUOTE else written)
    return "".join(out)


_normal_line = functools.lru_cache(maxsize=1 << 17)(_normal)


def winnowed(hashes: np.ndarray, window: int) -> frozenset:
    """The hashes copydetect's robust winnowing picks (its ``winnow``, duplicates removed).

    It keeps, for each window of ``window`` hashes (the first ones shorter), the smallest as a
    float64; when two hashes of a window are equal as float64 which one it keeps depends on
    its history, so such an array goes through copydetect itself. Otherwise each window's
    smallest is unique and is what it keeps: a vectorised minimum over the windows."""
    as_float = hashes.astype(np.float64)
    if any(np.any(as_float[d:] == as_float[:-d]) for d in range(1, min(window, len(hashes)))):
        return frozenset(int(h) for h in copydetect_utils.winnow(hashes, window)[0])
    padded = np.concatenate([np.full(window - 1, np.inf), as_float])
    lowest = np.lib.stride_tricks.sliding_window_view(padded, window).argmin(axis=1)
    return frozenset(int(h) for h in np.unique(hashes[lowest + np.arange(len(hashes)) - (window - 1)]))


def fingerprints(source: str, settings: Settings, boilerplate=None) -> frozenset:
    """The winnowed fingerprints of a source's normalised code, less the boilerplate's."""
    hashes = _kgram_hashes(normalised_code(source), settings.k)
    if len(hashes) == 0:
        return frozenset()
    found = winnowed(hashes, settings.window)
    return found - boilerplate if boilerplate else found


def all_kgrams(source: str, settings: Settings) -> frozenset:
    """Every k-gram hash of a source (what boilerplate removal takes away)."""
    return frozenset(int(h) for h in _kgram_hashes(normalised_code(source), settings.k))


_COMMENT = re.compile(r"""^((?:[^#'"\n]|'[^'\n]*'|"[^"\n]*")*)(#.*)?$""")
_NAME = re.compile(r"[A-Za-z_]\w*")
_STRING = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")


def _comment_text(text):
    words = " ".join(text.lstrip("#").split()).lower()
    return words if sum(c.isalnum() for c in words) >= 3 else ""


def text_items(source: str) -> dict:
    """Comments (normalised), names and code lines (comments cut, spacing kept) of a source.
    Read line by line with regular expressions: a tokeniser would cost more than all the
    rest, and a cell that does not parse still has its comments and names."""
    comments, names, lines = set(), set(), set()
    for line in source.splitlines():
        found = _COMMENT.match(line)
        code, comment = (found.group(1), found.group(2)) if found else (line, None)
        if comment:
            comments.add(_comment_text(comment))
        code = code.rstrip()
        if len(code.strip()) > 1:
            lines.add(code)
        names.update(_NAME.findall(_STRING.sub("", code)))
    return {COMMENTS: frozenset(comments - {""}), NAMES: frozenset(names - _COMMON_NAMES), LINES: frozenset(lines)}


def _boilerplate(sources, settings):
    """Everything the release's code and the reference hold, under each kind."""
    out = {CODE: set(), COMMENTS: set(), NAMES: set(), LINES: set()}
    for source in sources:
        out[CODE] |= all_kgrams(source, settings)
        items = text_items(source)
        out[COMMENTS] |= items[COMMENTS]
        out[NAMES] |= items[NAMES]
        out[LINES] |= {line.strip() for line in items[LINES]}
    return {kind: frozenset(v) for kind, v in out.items()}


def document(source: str, settings: Settings, boilerplate: dict) -> dict:
    """One function's evidence items by kind, with the release's and reference's removed."""
    items = text_items(source)
    return {CODE: fingerprints(source, settings, boilerplate[CODE]),
            COMMENTS: items[COMMENTS] - boilerplate[COMMENTS],
            NAMES: items[NAMES] - boilerplate[NAMES],
            LINES: frozenset(line for line in items[LINES] if line.strip() not in boilerplate[LINES])}


# --- the class -----------------------------------------------------------------------------

def compare(assignment: str, submissions: dict, release: dict, reference: dict, known: dict | None = None,
            signatures: dict | None = None, catalogued=(), settings: Settings | None = None, jobs: int = 1,
            cache: dict | None = None, foreseen: tuple | None = None) -> dict:
    """The ``similarity.json`` structure for a class.

    submissions: {student: {function: source}}; release: {function: the release's code of it
    (stub, docstring, hints)}, whose order is the report's; reference: {name: source}; known:
    {file: {function: source}}, solutions collected from the web; signatures: {student:
    {function: behaviour signature}} of wrong functions; catalogued: the signatures that
    catalogued mistakes produce. jobs: processes that read the cells (tokenising is most of
    the time). cache: {``source_key(source)``: its evidence items}, the cells read by an
    earlier call with the same settings, release and reference (the caller keys it by
    those): the cells it holds are not read again, and those read are added to it. foreseen:
    what ``rare_items`` returned earlier (while a rerun grades its one new submission), taken
    when it was computed from these very arguments, else computed again.
    """
    settings = settings or Settings()
    functions = list(release) + sorted({f for subs in submissions.values() for f in subs} - set(release))
    shared, mass = rare_items(submissions, release, reference, known, settings, jobs, cache, foreseen)[-2:]
    behaviour = _rare_behaviour(signatures or {}, frozenset(catalogued))
    pairs = []
    for pair in sorted(set(shared) | set(behaviour)):
        entry = _pair(pair, shared.get(pair, {}), mass, behaviour.get(pair, ()), functions, settings)
        if entry["score"] >= settings.report_at:
            pairs.append(entry)
    pairs.sort(key=lambda p: (-p["score"], p["a"], p["b"]))
    return {"assignment": assignment, "flag_at": settings.flag_at, "note": NOTE, "pairs": pairs}


def rare_items(submissions: dict, release: dict, reference: dict, known: dict | None = None,
               settings: Settings | None = None, jobs: int = 1, cache: dict | None = None,
               foreseen: tuple | None = None) -> tuple:
    """What ``compare`` computes from the code alone, before any grade is known: its
    arguments, then each pair's shared rare mass and each submission's own (``_rarity``).
    ``foreseen``, an earlier answer, is returned as it is when its arguments are these."""
    settings = settings or Settings()
    owners = dict(submissions)
    owners.update({KNOWN + name: subs for name, subs in (known or {}).items()})
    cells = [((owner, fn), src) for owner, subs in owners.items() for fn, src in subs.items() if src and src.strip()]
    asked = (cells, release, reference, settings)
    if foreseen is not None and foreseen[:4] == asked:   # the same cells in the same order: the same sums
        return foreseen
    boilerplate = _boilerplate(list(release.values()) + list(reference.values()), settings)
    docs = _documents(cells, settings, boilerplate, jobs, {} if cache is None else cache)
    return (*asked, *_rarity(docs, settings))


def source_key(source: str) -> str:
    """The key of a cell's evidence items in ``compare``'s cache: the digest of its text."""
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def _read(cells, settings, boilerplate):
    """Each cell's items, each kind's set built in sorted order: a set's order of iteration
    (which orders the sums of weights) is then the same whether the items were read now or
    taken from a cache."""
    return [(key, {kind: frozenset(sorted(items)) for kind, items in document(src, settings, boilerplate).items()})
            for key, src in cells]


def _documents(cells, settings, boilerplate, jobs, cache):
    """Every cell's evidence items, in the cells' order: those of a text ``cache`` holds
    taken from it, the others read (by ``jobs`` processes when they are many) and added."""
    keys = [source_key(src) for _, src in cells]
    missing = list({k: src for k, (_, src) in zip(keys, cells) if k not in cache}.items())
    if jobs <= 1 or len(missing) < 400:
        cache.update(_read(missing, settings, boilerplate))
    else:
        chunks = [missing[i::jobs * 4] for i in range(jobs * 4)]
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            parts = pool.map(_read, chunks, itertools.repeat(settings), itertools.repeat(boilerplate))
            cache.update(item for part in parts for item in part)
    return {key: cache[k] for (key, _), k in zip(cells, keys)}


def _order(owner):
    return (owner.startswith(KNOWN), owner)


def rarity_weight(holders: int, power: float = 2.0) -> float:
    """What one item counts for when ``holders`` submissions have it: fully when at most two
    do, then 1/(holders - 1)**power, so the class's common stock weighs next to nothing."""
    return 1.0 if holders <= 2 else 1.0 / (holders - 1) ** power


def _rarity(docs, settings):
    """Each pair's shared rare mass by (kind, function), and each submission's own rare mass."""
    holders = defaultdict(list)
    for (owner, fn), items in docs.items():
        for kind, found in items.items():
            for item in found:
                holders[(kind, fn, item)].append(owner)
    mass = Counter()
    shared = defaultdict(dict)
    for (kind, fn, item), who in holders.items():
        w = rarity_weight(len(who), settings.power)
        for owner in who:
            mass[(owner, kind, fn)] += w
        if len(who) < 2 or len(who) > settings.common:
            continue
        for a, b in itertools.combinations(sorted(who, key=_order), 2):
            if a.startswith(KNOWN):
                continue  # two known solutions: not anyone's submission
            cell = shared[(a, b)].setdefault((kind, fn), [0.0, 0, 0, []])
            cell[0] += w
            cell[1] += 1
            cell[2] += len(who) == 2
            if kind != CODE and len(cell[3]) < 40:
                cell[3].append(item)
    return shared, mass


def _rare_behaviour(signatures, catalogued):
    """Pairs of students who alone share a wrong behaviour no catalogued mistake explains."""
    by_signature = defaultdict(list)
    for student, found in signatures.items():
        for fn, signature in found.items():
            if signature and signature not in catalogued:
                by_signature[(fn, signature)].append(student)
    pairs = defaultdict(list)
    for (fn, _), who in sorted(by_signature.items()):
        if len(who) == 2:
            pairs[tuple(sorted(who, key=_order))].append(fn)
    return pairs


def _kind(kind, a, b, cells, mass, functions, settings):
    """A kind's score for a pair (shared rare mass over the rare mass they could share, damped
    by a prior), the functions that show it, and the counts its words need."""
    shared = room = items = exclusive = 0
    named, sample = [], []
    for fn in functions:
        low = min(mass[(a, kind, fn)], mass[(b, kind, fn)])
        room += low
        cell = cells.get((kind, fn))
        if not cell:
            continue
        shared, items, exclusive = shared + cell[0], items + cell[1], exclusive + cell[2]
        sample += cell[3]
        if cell[0] >= max(settings.least[kind], 0.5 * low):
            named.append(fn)
    if shared < settings.least[kind]:
        return None
    return {"score": shared / (room + settings.prior[kind]), "functions": named,
            "items": items, "exclusive": exclusive, "sample": sample}


def _pair(pair, cells, mass, behaviour, functions, settings):
    a, b = pair
    evidence, keep = [], 1.0
    for kind in TEXT_KINDS:
        found = _kind(kind, a, b, cells, mass, functions, settings)
        if found is None:
            continue
        keep *= 1.0 - settings.weight[kind] * found["score"]
        evidence.append(_evidence(kind, found, len(functions)))
    if behaviour:
        strength = 1.0 - 0.5 ** len(behaviour)
        keep *= 1.0 - settings.weight[BEHAVIOUR] * strength
        item = {"kind": BEHAVIOUR, "functions": [f for f in functions if f in behaviour],
                "strength": round(strength, 3)}
        evidence.append(dict(item, detail=words(item)))
    score = round(1.0 - keep, 3)
    named = {f for e in evidence for f in e["functions"]}
    evidence.sort(key=lambda e: (-e["strength"], e["kind"]))
    return {"a": a, "b": b, "score": score, "flagged": score >= settings.flag_at,
            "functions": [f for f in functions if f in named], "evidence": evidence}


def _evidence(kind, found, total):
    """One kind's evidence: what was counted (``items`` shared, ``exclusive`` of them in no
    other submission, ``names`` shown, ``of`` the assignment's functions) and, in ``detail``,
    the English of ``words``."""
    item = {"kind": kind, "functions": found["functions"], "strength": round(found["score"], 3),
            "items": found["items"], "exclusive": found["exclusive"], "of": total}
    if kind == NAMES:
        item["names"] = sorted(set(found["sample"]))[:8]
    item["detail"] = words(item)
    return item


def words(item: dict, say=english) -> str:
    """One item of evidence in words that say what it is and what it is not, said with
    ``say`` (``say(template, **fields)``; the report hands over the instructor's language's)."""
    named = item["functions"]
    if item["kind"] == BEHAVIOUR:
        return say(N_("identical wrong outputs in {functions}: no other submission behaves so and no catalogued "
                      "mistake explains it (the same wrong behaviour, not necessarily the same code)"),
                   functions=", ".join(named))
    where = (say(N_("in {n} of {total} functions"), n=len(named), total=item["of"]) if named
             else say(N_("spread thinly over several functions")))
    n, only = item["items"], item["exclusive"]
    rest = (say(N_("none of them in any other submission")) if only == n
            else say(N_("{only} of them in no other submission"), only=only) if only
            else say(N_("each also in a few other submissions, which lowers its weight")))
    if item["kind"] == CODE:
        return say(N_("shared rare code {where}: {n} winnowed fingerprints of normalised code (names, comments and "
                      "layout ignored), {rest}; the release's code and the reference's are left out"),
                   where=where, n=n, rest=rest)
    if item["kind"] == COMMENTS:
        return say(N_("identical comments {where}: {n} comments, {rest}; the release's hints are left out"),
                   where=where, n=n, rest=rest)
    if item["kind"] == NAMES:
        return say(N_("identical rare names {where}: {names}; names the release or the reference use are left out"),
                   where=where, names=", ".join(item["names"]))
    return say(N_("identical lines, spacing included, {where}: {n} lines, {rest}; lines of the release and the "
                  "reference are left out"), where=where, n=n, rest=rest)
