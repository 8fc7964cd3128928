"""The words of a plot's labels on the learner's machine. The release appends ``_label`` to a
translated copy of a file that plots (grading/authoring/shipped_text.py), where a label
``ax.set_xlabel("...")`` becomes ``ax.set_xlabel(*_label("<translated>", "<English>"))``: the
label and a ``fontdict`` that adds an installed CJK font to fall back on. A label whose
characters no installed font can draw is drawn in English, and the learner is told why once,
instead of seeing empty boxes. Needs matplotlib only when a label is said."""
import os
import re

_FONT: dict = {}
CJK_FAMILIES = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "Source Han Sans CN", "WenQuanYi Zen Hei",
                "WenQuanYi Micro Hei", "Microsoft YaHei", "SimHei", "PingFang SC", "Hiragino Sans GB", "Heiti SC",
                "Noto Sans CJK JP", "Droid Sans Fallback", "Arial Unicode MS")
FILE_HINT = re.compile(r"cjk|sans ?sc|hans|wqy|yahei|msyh|simhei|pingfang|hiragino|heiti|droidsansfallback|unicode", re.I)


def _label_font():
    """(family, file) of an installed CJK font for matplotlib to fall back on; None if none is
    installed, or if matplotlib is older than 3.6 (it has no fallback between fonts)."""
    import matplotlib
    from matplotlib import font_manager
    if tuple(int(p) for p in matplotlib.__version__.split(".")[:2] if p.isdigit()) < (3, 6):
        return None
    installed = {f.name: f.fname for f in font_manager.fontManager.ttflist if os.path.isfile(f.fname)}
    if not installed.keys() & set(CJK_FAMILIES):
        # matplotlib's font list is a cache, written before a font installed since was there
        for path in font_manager.findSystemFonts():
            if FILE_HINT.search(os.path.basename(path)):
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    continue
        installed = {f.name: f.fname for f in font_manager.fontManager.ttflist if os.path.isfile(f.fname)}
    for name in CJK_FAMILIES:
        if name in installed:
            return name, installed[name]
    return None


def _label(text, english):
    """A plot label's words and its font (``fontdict``): ``text``, with an installed CJK font
    to fall back on, when that font can draw every character of it; else ``english``."""
    if all(ord(c) < 0x2E80 for c in text):
        return text, None
    if "font" not in _FONT:
        _FONT["font"] = _label_font()
    if _FONT["font"] is not None:
        import matplotlib
        from matplotlib.ft2font import FT2Font
        name, path = _FONT["font"]
        drawn = FT2Font(path).get_charmap()
        if all(ord(c) in drawn for c in text if not c.isspace()):
            return text, {"family": [*matplotlib.rcParams["font.family"], name]}
    if not _FONT.get("said"):
        _FONT["said"] = True
        print("(No font on this computer can draw the plot's labels in this language, so they are in English. "
              "Install a font that can, such as Noto Sans CJK SC, then restart the kernel.)")
    return english, None
