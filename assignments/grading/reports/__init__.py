"""What instructors read: the class report (report.html from Jinja templates, report.json),
its charts, the grade files for LMSs, and the templates of the pages. Rule: reads results,
never grades."""


def english(template, **fields):
    """``say`` without a catalog: the template's own English, its {fields} filled in (the
    report's, its charts' and the evidence's words when no language is asked for)."""
    return template.format(**fields) if fields else template


def N_(text):
    """Marks a sentence for the course's catalog (Babel extracts it); said later with ``say``."""
    return text
