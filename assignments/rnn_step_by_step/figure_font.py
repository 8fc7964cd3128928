"""The CJK font of the figures' Chinese labels: a subset of Noto Sans CJK SC, rebuilt from a
pinned source over exactly the characters the translated labels use.

Why a committed subset: a figure's SVG draws its text as outlines, so its bytes are the font's
glyphs. Whatever CJK font a machine has installed (another version, another family, none at
all) would change the zh-CN release, which must be the same bytes on every machine. The subset
is committed (assignments/rnn_step_by_step/fonts/, with the font's licence, the SIL Open Font
License 1.1), so building the release needs neither apt nor the network; it is renamed
(``figures.CJK_FAMILY``) so that no installed font can answer for it. This module rebuilds it
(``make figure-font``: ``python -m assignments.rnn_step_by_step.figure_font``) when a label changes, from Debian's fonts-noto-cjk
at the version whose file's SHA-256 is ``SOURCE_SHA256`` (make figure-font installs it), with
fontTools' subsetter (fontTools is pinned in constraints.txt); tests/test_figures.py checks that
every character of every translated label is in the subset. A PyPI package carrying a whole
CJK font was the alternative: tens of megabytes in every environment for a few dozen glyphs.
It runs in the course staff's process when the labels change, never in a learner's.
"""
from __future__ import annotations

import hashlib
import io
import os

from ..grading.contract import messages
from .figures import CJK_FAMILY, CJK_FONT

SOURCE = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
SOURCE_PACKAGE = "fonts-noto-cjk 1:20220127+repack1-1"
SOURCE_SHA256 = "b76b0433203017ca80401b2ee0dd69350349871c4b19d504c34dbdd80541690a"
SOURCE_INDEX = 2   # Noto Sans CJK SC in the collection
FIGURES_FILES = ("rnn_step_by_step/figures.py", "gru_step_by_step/figures.py")


def label_characters(lang: str = "zh-CN") -> str:
    """Every character the translated labels of the figures write (sorted), but ASCII, which
    the DejaVu fonts draw (a figure's title and description are words of its SVG, not drawn)."""
    from babel.messages.pofile import read_po
    with open(messages.po_path(lang), "rb") as f:
        catalog = read_po(f, locale=messages.LANGUAGES[lang])
    from ..gru_step_by_step.figures import FIGURES as GRU_FIGURES
    from .figures import FIGURES
    described = {text for f in [*FIGURES.values(), *GRU_FIGURES.values()] for text in (f.title, f.desc)}
    found: set[str] = set()
    for m in catalog:
        if m.id and m.string and m.id not in described and any(path.endswith(FIGURES_FILES) for path, _ in m.locations):
            found.update(c for c in str(m.string) if ord(c) > 127 and not c.isspace())
    return "".join(sorted(found))


def subset(source: str = SOURCE) -> bytes:
    """The subset's bytes, from ``source`` (the pinned file: refused when its SHA-256 differs)."""
    from fontTools import subset as ft_subset
    from fontTools.ttLib import TTFont
    if not os.path.isfile(source):
        raise FileNotFoundError(f"{source} is missing: install Debian's {SOURCE_PACKAGE} (make figure-font)")
    with open(source, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != SOURCE_SHA256:
        raise ValueError(f"{source} is not the pinned {SOURCE_PACKAGE} (SHA-256 {digest}, not {SOURCE_SHA256})")
    font = TTFont(source, fontNumber=SOURCE_INDEX, recalcTimestamp=False, lazy=False)
    options = ft_subset.Options()
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 7, 13, 14]
    options.name_languages = [0x409]
    options.hinting = False
    options.desubroutinize = True
    options.notdef_outline = True
    options.layout_features = []
    options.glyph_names = False
    subsetter = ft_subset.Subsetter(options)
    subsetter.populate(text=label_characters())
    subsetter.subset(font)
    _rename(font)
    out = io.BytesIO()
    font.save(out)
    return out.getvalue()


def _rename(font) -> None:
    """Give the subset its own family name (a modified version, as the licence asks)."""
    names = font["name"]
    postscript = CJK_FAMILY.replace(" ", "") + "-Regular"
    for record in list(names.names):
        if record.nameID in (1, 4, 16):
            names.setName(CJK_FAMILY, record.nameID, record.platformID, record.platEncID, record.langID)
        elif record.nameID in (3, 6):
            names.setName(postscript, record.nameID, record.platformID, record.platEncID, record.langID)
    cff = font["CFF "].cff
    cff.fontNames = [postscript]
    top = cff.topDictIndex[0]
    top.FullName, top.FamilyName = CJK_FAMILY, CJK_FAMILY


def write() -> str:
    """Rebuild the committed subset (``make figure-font``)."""
    data = subset()
    with open(CJK_FONT, "wb") as f:
        f.write(data)
    return CJK_FONT


if __name__ == "__main__":
    print(f"wrote {write()} ({len(label_characters())} characters)")
