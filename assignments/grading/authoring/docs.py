"""The catalog of mistakes as a page of docs/, generated from the assignment's catalog so
that the codes users read in results.json are documented exactly as the grader knows them:
``docs/mistakes/<id>.md`` in English, ``docs/mistakes/<id>.<lang>.md`` in each other language
of the course (its words and the mistakes' explanations from the course's message catalog).
Rule (authoring/): runs in the course staff's process, never on a learner's code."""
import os

from ..contract import messages


def catalog_markdown(assignment, lang="en"):
    """docs/mistakes/<id>[.<lang>].md for ``assignment``: every code, its function, and what it
    means, in ``lang``."""
    say = messages.speaker(lang)
    lines = [say("# The mistakes the grader names: `{assignment}`", assignment=assignment.id), "",
             say("Generated from the assignment's catalog by `python -m assignments release`; do not edit.\n"
                 "A code appears in `results.json` (`diagnoses`) only when the submission's behaviour\n"
                 "shows that mistake. Codes are stable: new ones may be added, none is renamed."), ""]
    head = "| %s | %s |" % (say("code"), say("what the student is told"))
    for ex in assignment.exercises:
        found = assignment.mistakes.for_function(ex.name)
        if not found:
            continue
        lines += [f"## `{ex.name}`", "", head, "|---|---|"]
        lines += ["| `%s` | %s |" % (m.code, words(say, assignment, ex.name, m).replace("|", "\\|")) for m in found]
        lines.append("")
    return "\n".join(lines)


def words(say, assignment, function, mistake):
    """What the student is told of ``mistake`` in ``function``, said with ``say``; its
    {outputs} (the values it was seen in, when graded) are every value it can affect."""
    if "{outputs}" not in mistake.feedback:
        return say(mistake.feedback)
    outputs = assignment.checks.behaviour_outputs(assignment.spec(function), mistake.behaviour)
    return say(mistake.feedback, outputs=", ".join(outputs))


def path(repo, assignment, lang="en"):
    name = assignment.id + ("" if lang == "en" else f".{lang}") + ".md"
    return os.path.join(repo, "docs", "mistakes", name)


def write(assignment, repo, lang="en"):
    os.makedirs(os.path.dirname(path(repo, assignment, lang)), exist_ok=True)
    with open(path(repo, assignment, lang), "w", encoding="utf-8") as f:
        f.write(catalog_markdown(assignment, lang))


def drift(assignment, repo):
    """Problems if a page of docs/mistakes/ is not what the catalog generates (one per language)."""
    problems = []
    for lang in messages.LANGUAGES:
        try:
            with open(path(repo, assignment, lang), encoding="utf-8") as f:
                current = f.read()
        except OSError:
            current = None
        if current != catalog_markdown(assignment, lang):
            name = os.path.relpath(path(repo, assignment, lang), repo)
            problems.append(f"{name} is not what the catalog generates: run `python -m assignments release"
                            + ("`" if lang == "en" else f" --lang {lang}`"))
    return problems
