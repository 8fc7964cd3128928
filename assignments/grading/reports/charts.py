"""The class report's bar charts, written as SVG text: a histogram and horizontal bars.

They were drawn with matplotlib, whose import and rendering cost the grading process about
0.9 s of CPU at the end of every run, for four small charts. Written by hand they take
milliseconds, are the same bytes on every machine (coordinates rounded, no dates, no ids
drawn from a hash) and need no font to be embedded: the browser sets the text.
Rule (reports/): reads results, never grades.
"""
import html
import math
import unicodedata

from . import english

FONT = 'font-family="system-ui, -apple-system, Segoe UI, Roboto, DejaVu Sans, sans-serif"'
INK, MUTED, LINE = "#1f2328", "#59636e", "#d1d9e0"
WIDTH = 680      # px: the report's column
CHAR = 6.6       # px: the width of a character of 11 px text, to leave room for labels


def columns(text):
    """The width of ``text`` in character cells: a wide (CJK) character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in str(text))


def _f(x):
    """A coordinate or value as short, deterministic text."""
    x = round(float(x), 2)
    return str(int(x)) if x == int(x) else f"{x:g}"


def ticks(top, integer=False, most=6):
    """Round tick values from 0 to at least ``top`` (1, 2 or 5 times a power of ten apart;
    whole numbers only when ``integer``)."""
    top = max(float(top), 1.0 if integer else 1e-9)
    raw = top / (most - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    if integer:
        step = max(1, round(step))
    count = math.ceil(top / step - 1e-9)
    return [round(i * step, 10) for i in range(count + 1)]


def _svg(name, width, height, body):
    return (f'<svg id="chart-{name}" role="img" xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" '
            f'height="{_f(height)}" viewBox="0 0 {_f(width)} {_f(height)}" {FONT} font-size="11">\n'
            + "\n".join(body) + "\n</svg>")


def _text(x, y, text, anchor="middle", size=11, fill=INK, extra=""):
    return (f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}" font-size="{size}" fill="{fill}"{extra}>'
            f"{html.escape(str(text))}</text>")


def histogram(edges, counts, name, xlabel, color, say=english):
    """Vertical bars over equal bins (``edges`` has one more value than ``counts``)."""
    left, right, top, bottom = 48, 16, 10, 42
    height = 230
    plot_w, plot_h = WIDTH - left - right, height - top - bottom
    lo, hi = float(edges[0]), float(edges[-1])
    span = (hi - lo) or 1.0
    yt = ticks(max(counts) if counts else 1, integer=True)

    def x(v):
        return left + (float(v) - lo) / span * plot_w

    def tip(low, high, n):
        return say("{low} to {high}: {n}", low=low, high=high, n=n)

    def y(v):
        return top + plot_h - float(v) / yt[-1] * plot_h

    body = [f'<line x1="{_f(left)}" y1="{_f(y(t))}" x2="{_f(left + plot_w)}" y2="{_f(y(t))}" stroke="{LINE}" '
            f'stroke-width="0.6"/>' for t in yt[1:]]
    for i, n in enumerate(counts):
        if n:
            body.append(f'<rect x="{_f(x(edges[i]))}" y="{_f(y(n))}" width="{_f(x(edges[i + 1]) - x(edges[i]))}" '
                        f'height="{_f(y(0) - y(n))}" fill="{color}" stroke="white" stroke-width="0.6">'
                        f"<title>{html.escape(tip(_f(edges[i]), _f(edges[i + 1]), n))}</title></rect>")
    body.append(f'<line x1="{_f(left)}" y1="{_f(y(0))}" x2="{_f(left + plot_w)}" y2="{_f(y(0))}" stroke="{MUTED}"/>')
    body.append(f'<line x1="{_f(left)}" y1="{_f(top)}" x2="{_f(left)}" y2="{_f(y(0))}" stroke="{MUTED}"/>')
    body += [_text(left - 6, y(t) + 4, _f(t), "end") for t in yt]
    body += [_text(x(lo + t), y(0) + 15, _f(lo + t)) for t in ticks(span) if t <= span + 1e-9]
    body.append(_text(left + plot_w / 2, height - 6, xlabel))
    body.append(_text(12, top + plot_h / 2, say("submissions"), extra=f' transform="rotate(-90 12 {_f(top + plot_h / 2)})"'))
    return _svg(name, WIDTH, height, body)


def hbars(labels, series, name, xlabel, xmax=None, integer=False):
    """Horizontal bars, one row per label (top to bottom in the given order); ``series`` is a
    list of (values, color, legend or None), drawn side by side within a row."""
    label_w = min(260, 12 + CHAR * max((columns(label) for label in labels), default=4))
    legends = [(color, legend) for _, color, legend in series if legend]
    left, right, top, bottom = label_w, 16, 24 if legends else 8, 40
    row = 15 * len(series) + 8
    plot_w, plot_h = WIDTH - left - right, row * len(labels)
    height = top + plot_h + bottom
    largest = max((v for values, _, _ in series for v in values), default=0)
    xt = ticks(xmax if xmax is not None else largest or 1, integer=integer)

    def x(v):
        return left + float(v) / xt[-1] * plot_w

    body = [f'<line x1="{_f(x(t))}" y1="{_f(top)}" x2="{_f(x(t))}" y2="{_f(top + plot_h)}" stroke="{LINE}" '
            f'stroke-width="0.6"/>' for t in xt[1:]]
    bar = 13
    for r, label in enumerate(labels):
        y0 = top + r * row + 4
        for s, (values, color, legend) in enumerate(series):
            v = values[r]
            body.append(f'<rect x="{_f(left)}" y="{_f(y0 + s * (bar + 2))}" width="{_f(x(v) - left)}" height="{bar}" '
                        f'fill="{color}"><title>{html.escape(str(label))}: {_f(v)}'
                        f'{" (" + html.escape(legend) + ")" if legend else ""}</title></rect>')
        body.append(_text(left - 6, y0 + (row - 8) / 2 + 4, label, "end"))
    body.append(f'<line x1="{_f(left)}" y1="{_f(top)}" x2="{_f(left)}" y2="{_f(top + plot_h)}" stroke="{MUTED}"/>')
    body.append(f'<line x1="{_f(left)}" y1="{_f(top + plot_h)}" x2="{_f(left + plot_w)}" y2="{_f(top + plot_h)}" '
                f'stroke="{MUTED}"/>')
    body += [_text(x(t), top + plot_h + 15, _f(t)) for t in xt]
    body.append(_text(left + plot_w / 2, height - 6, xlabel))
    at = WIDTH - right
    for color, legend in reversed(legends):   # right-aligned, above the bars
        at -= CHAR * columns(legend) + 22
        body.append(f'<rect x="{_f(at)}" y="6" width="10" height="10" fill="{color}"/>')
        body.append(_text(at + 14, 15, legend, "start", size=10, fill=MUTED))
    return _svg(name, WIDTH, height, body)
