"""The words of a plot's labels on the learner's machine. The release appends ``_label`` to a
translated copy of a file that plots (grading/authoring/shipped_text.py): a label whose
characters no installed font can draw is drawn in English, and the learner is told why once,
instead of seeing empty boxes. Needs matplotlib only when a label is said."""
import os

_FONT = {}
CJK_FAMILIES = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "Source Han Sans CN", "WenQuanYi Zen Hei",
                "WenQuanYi Micro Hei", "Microsoft YaHei", "SimHei", "PingFang SC", "Hiragino Sans GB", "Heiti SC",
                "Noto Sans CJK JP", "Droid Sans Fallback", "Arial Unicode MS")


def _label_font():
    """The file of an installed CJK font, which matplotlib then falls back on (None if none
    is installed, or matplotlib is older than 3.6, which has no fallback between fonts)."""
    import matplotlib
    from matplotlib import font_manager
    if tuple(int(p) for p in matplotlib.__version__.split(".")[:2] if p.isdigit()) < (3, 6):
        return None
    installed = {f.name: f.fname for f in font_manager.fontManager.ttflist if os.path.isfile(f.fname)}
    for name in CJK_FAMILIES:
        if name in installed:
            families = list(matplotlib.rcParams["font.family"])
            if name not in families:
                matplotlib.rcParams["font.family"] = families + [name]
            return installed[name]
    return None


def _label(text, english):
    """``text`` when an installed font can draw every character of it; else ``english``."""
    if all(ord(c) < 0x2E80 for c in text):
        return text
    if "file" not in _FONT:
        _FONT["file"] = _label_font()
    if _FONT["file"] is not None:
        from matplotlib.ft2font import FT2Font
        drawn = FT2Font(_FONT["file"]).get_charmap()
        if all(ord(c) in drawn for c in text if not c.isspace()):
            return text
    if not _FONT.get("said"):
        _FONT["said"] = True
        print("(No font on this computer can draw the plot's labels in this language, so they are in English. "
              "Install a font that can, such as Noto Sans CJK SC, then restart the kernel.)")
    return english
