"""The course's message catalogs: the words of the students' checks, of the catalog's mistakes
and hints and of the judge, in each language the course is given in. Kept with Babel
(``make catalogs``: extract from the code, update each language's .po; docs/translation.md).
English is the code's own; another language's words come from
``assignments/locale/<locale>/LC_MESSAGES/course.po``, compiled here (into a release's
``check_messages.mo``, or in memory for the judge).
Rule (contract/): imports nothing of the engine but shipped/.
"""
from __future__ import annotations

import contextlib
import datetime
import functools
import gettext
import io
import os
import re
from collections.abc import Iterator

from .. import PACKAGE, project

LOCALE_DIR = os.path.join(PACKAGE, "locale")
TEMPLATE = os.path.join(LOCALE_DIR, "course.pot")
DOMAIN = "course"
LANGUAGES = {"en": None, "zh-CN": "zh_CN"}
"""The course's languages (as the command line and the notebook's metadata name them) and
their gettext locales; English needs no catalog."""
PROJECT = project("name")
METADATA_KEY = PROJECT.replace("-", "_")
"""The notebook metadata's course key (the project's name): ``metadata[METADATA_KEY]["lang"]``
is the notebook's language."""


def N_(text: str) -> str:
    """Marks a sentence for the catalog (Babel extracts it; whoever says it translates it
    then, with ``tr``). The sentence itself, unchanged."""
    return text


def po_path(lang: str) -> str:
    locale = LANGUAGES[lang]
    if locale is None:
        raise KeyError(f"{lang} is the code's own language: it has no catalog")
    return os.path.join(LOCALE_DIR, locale, "LC_MESSAGES", DOMAIN + ".po")


def compiled(lang: str) -> bytes:
    """The .mo of ``lang``'s catalog, byte for byte the same on every build (untranslated and
    fuzzy entries left out: they fall back on English). Its header carries the translation's
    revision date for both dates, so that re-extracting the template (which moves only
    POT-Creation-Date and line references) leaves the shipped catalog as it was."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    with open(po_path(lang), "rb") as f:
        catalog = read_po(f, locale=LANGUAGES[lang])
    if isinstance(catalog.revision_date, (datetime.datetime, str)):
        catalog.creation_date = catalog.revision_date
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


@functools.cache
def catalog(lang: str) -> gettext.GNUTranslations | None:
    """The translations the students' checks speak ``lang`` with (``use_messages``); None for English."""
    if LANGUAGES.get(lang, None) is None:
        if lang not in LANGUAGES:
            raise KeyError(f"the course is not given in {lang!r} (languages: {', '.join(LANGUAGES)})")
        return None
    return gettext.GNUTranslations(io.BytesIO(compiled(lang)))


def notebook_language(metadata: dict[str, object]) -> str:
    """A notebook's language, from its metadata's course key (English when it has none)."""
    course = metadata.get(METADATA_KEY)
    lang = course.get("lang") if isinstance(course, dict) else None
    return lang if isinstance(lang, str) and lang in LANGUAGES else "en"


def say(lang: str, template: str, **fields: object) -> str:
    """``template`` in ``lang`` (English when the catalog lacks it), its {fields} filled in:
    the words the engine itself writes (the feedback page's, the class report's)."""
    found = catalog(lang)
    text = found.gettext(template) if found is not None else template
    return text.format(**fields) if fields else text


def speaker(lang: str) -> functools.partial[str]:
    """``say`` in ``lang``, as a function of (template, **fields): what the class report is
    handed (reports/ may not import contract/). KeyError for a language the course lacks."""
    catalog(lang)
    return functools.partial(say, lang)


def page_words(metadata: dict[str, object], template: str, **fields: object) -> str:
    """``say`` in the language of the notebook whose ``metadata`` this is (the feedback
    page's words: ``FeedbackExporter.words`` names this function)."""
    return say(notebook_language(metadata), template, **fields)


FIELD = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)[^{}]*\}")


def fields(text: str) -> set[str]:
    """The named placeholders of a template ({name}, {diff:.3g}...)."""
    return set(FIELD.findall(text))


def catalog_problems(template: bytes, po: bytes, locale: str) -> list[str]:
    """What is wrong with a language's catalog against the template: a template sentence it
    lacks or leaves untranslated (or fuzzy), an entry the template no longer has, a
    translation whose placeholders are not the template's."""
    from babel.messages.pofile import read_po
    wanted = {_texts(m.id): m for m in read_po(io.BytesIO(template)) if m.id}
    have = {_texts(m.id): m for m in read_po(io.BytesIO(po), locale=locale) if m.id}
    problems = [f"not in the catalog: {_short(i)}" for i in wanted if i not in have]
    problems += [f"no longer in the template: {_short(i)}" for i in have if i not in wanted]
    for i, m in have.items():
        if i not in wanted:
            continue
        strings = _texts(m.string)
        if m.fuzzy or not all(strings):
            problems.append(f"untranslated{' (fuzzy)' if m.fuzzy else ''}: {_short(i)}")
            continue
        english = set().union(*(fields(t) for t in i))
        for s in strings:
            if fields(s) - english:
                problems.append(f"extra placeholder {sorted(fields(s) - english)} in the translation of {_short(i)}")
            if english - fields(s):
                problems.append(f"missing placeholder {sorted(english - fields(s))} in the translation of {_short(i)}")
    return problems


def _texts(value: object) -> tuple[str, ...]:
    """A catalog entry's id or string as its forms (one, or singular and plural)."""
    return tuple(str(v or "") for v in value) if isinstance(value, (tuple, list)) else (str(value or ""),)


def _short(msgid: tuple[str, ...]) -> str:
    return repr(msgid[0][:70] + ("..." if len(msgid[0]) > 70 else ""))


KEYWORDS = ("tr", "ntr:1,2", "N_", "Mistake:4", "say")
"""What Babel extracts: the checks' templates (tr, ntr), marked sentences (N_), each
catalogued mistake's feedback (Mistake's fourth argument) and the templates' words
(``say("...")`` in the feedback page's and the class report's Jinja templates)."""


def extract_args(output: str) -> list[str]:
    """pybabel's arguments that extract the template from the course's code into ``output``
    (run in the course folder: the template names files by their path from there)."""
    keywords = [a for k in KEYWORDS for a in ("-k", k)]
    return ["pybabel", "-q", "extract", "-F", "babel.cfg", "--no-default-keywords", *keywords, "--sort-by-file",
            "--no-wrap", "--omit-header", f"--project={PROJECT}", "-o", output, "assignments"]


def update_catalogs() -> None:
    """``python -m assignments catalogs``: extract the template, then merge it into each
    language's catalog (new sentences untranslated, changed ones fuzzy: translate them)."""
    from babel.messages.frontend import CommandLineInterface
    here = os.getcwd()
    os.chdir(os.path.dirname(PACKAGE))
    try:
        CommandLineInterface().run(extract_args(TEMPLATE))  # type: ignore[no-untyped-call]
    finally:
        os.chdir(here)
    for locale in filter(None, LANGUAGES.values()):
        update = ["pybabel", "-q", "update", "-i", TEMPLATE, "-d", LOCALE_DIR, "-D", DOMAIN, "--no-wrap", "-l", locale]
        CommandLineInterface().run(update)  # type: ignore[no-untyped-call]


DATED = re.compile(rb'^"POT-Creation-Date: [^"\n]*"\n', re.M)


@contextlib.contextmanager
def steady_dates(folder: str = LOCALE_DIR) -> Iterator[None]:
    """Within it, the catalogs (.pot, .po) under ``folder`` are made again; after it, a catalog
    that differs from its old bytes by its POT-Creation-Date alone gets its old bytes back, so
    that ``make catalogs`` dirties the tree only when a sentence changed."""
    before = {}
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith((".po", ".pot")):
                with open(os.path.join(root, name), "rb") as f:
                    before[os.path.join(root, name)] = f.read()
    yield
    for path, old in before.items():
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            new = f.read()
        if new != old and DATED.sub(b"", new) == DATED.sub(b"", old):
            with open(path, "wb") as f:
                f.write(old)
